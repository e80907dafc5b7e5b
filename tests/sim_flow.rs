//! Lossless flow control in the cluster simulator: small switch buffers
//! pause links yet every property still arrives and verifies, parallel and
//! serial runs stay identical under flow control, Table 5's default
//! buffers change nothing at a scale where they never fill, and buffers too
//! small for a frame are refused with the parameter and its range. Also
//! the other NIC-side timing of the model: the Idx Filter bit set when the
//! property's host write completes rather than when its response arrives.

use netsparse::programs::ProgramCache;
use netsparse::sim::cluster::RunOptions;
use netsparse::sim::config::SimConfig;
use netsparse::sim::matrix::{CsrMatrix, GenSpec};
use netsparse::sim::partition::Partition;
use netsparse::sim::report::{MatrixSummary, Report};
use netsparse::sim::{simulate_with, Mode};

mod sim_support;
use sim_support::first_difference;

fn matrix() -> CsrMatrix {
    let spec: GenSpec = "rmat:scale=11,ef=4".parse().unwrap();
    spec.generate(7).unwrap().0
}

fn run(m: &CsrMatrix, cfg: &SimConfig, modes: &[Mode], threads: usize) -> Report {
    let part = Partition::equal(m, cfg.nodes).unwrap();
    let summary = MatrixSummary {
        name: "t".into(),
        rows: m.rows(),
        cols: m.cols(),
        nnz: m.nnz(),
        duplicates: 0,
    };
    let r = simulate_with(
        m,
        summary,
        &part,
        cfg,
        modes,
        &RunOptions {
            threads,
            ..RunOptions::default()
        },
        &mut ProgramCache::new(),
        &mut |_| true,
    )
    .unwrap();
    r.check().unwrap();
    r
}

fn cfg(switch_buffer_bytes: u64) -> SimConfig {
    SimConfig {
        nodes: 16,
        racks: 4,
        switch_buffer_bytes,
        ..SimConfig::default()
    }
}

/// The JSON of a report without the wall-clock figures.
fn json(r: &Report) -> String {
    let mut r = r.clone();
    for mr in &mut r.modes {
        if let Some(s) = mr.run.as_mut() {
            s.clear_wall_clock();
            s.windows = (0, 0);
        }
    }
    serde_json::to_string_pretty(&r).unwrap()
}

#[test]
fn small_switch_buffers_pause_links_and_lose_nothing() {
    let m = matrix();
    let modes = [Mode::Rig, Mode::NetSparse];
    // 8 ports per ToR (4 hosts, 4 spines): 3,000 B, two frames, each;
    // 4 per spine: 6,000 B.
    let small = run(&m, &cfg(24_000), &modes, 0);
    let unbounded = run(&m, &cfg(0), &modes, 0);
    for (s, u) in small.modes.iter().zip(&unbounded.modes) {
        let f = s.fabric.clone().expect("simulated modes report the fabric");
        assert_eq!(f.switch_buffer, Some(24_000));
        assert!(f.paused_frames > 0, "{}: nothing paused: {f:?}", s.mode);
        assert!(f.paused_links > 0 && f.paused.as_ps() > 0, "{f:?}");
        // The longest-paused link direction is named by its two ends, and
        // its receiver is a switch (only switch input buffers are bounded
        // here).
        let at = f
            .max_link_paused_at
            .as_deref()
            .expect("a paused link is named");
        let (from, to) = at.split_once(" -> ").expect(at);
        assert!(
            !from.is_empty() && (to.starts_with("tor") || to.starts_with("spine")),
            "{at}"
        );
        assert!(
            f.max_link_paused.as_ps() > 0 && f.max_link_paused <= f.paused,
            "{f:?}"
        );
        // Every property arrived (r.check() above) and was verified.
        let v = s.verification.as_ref().unwrap();
        assert_eq!(v.ok, v.needed);
        assert!(v.needed > 0);
        // Unbounded queues never pause; bounded ones cannot be faster.
        let fu = u.fabric.clone().unwrap();
        assert_eq!(
            (fu.switch_buffer, fu.paused_frames, fu.paused_links),
            (None, 0, 0)
        );
        assert_eq!(fu.max_link_paused_at, None);
        assert!(
            s.time() >= u.time(),
            "{}: {} < {}",
            s.mode,
            s.time(),
            u.time()
        );
    }
    // In rig mode the switches forward frame for frame: no input buffer
    // ever holds more than its share (3,000 B at a ToR, 6,000 B at a
    // spine's 4 ports), though the buffers fill.
    let rig = small.modes[0].fabric.clone().unwrap();
    assert!(rig.peak_switch_port_bytes <= 6_000, "{rig:?}");
    assert!(rig.peak_switch_port_bytes > 3_000, "{rig:?}");
}

#[test]
fn parallel_runs_match_the_serial_one_under_flow_control() {
    let m = matrix();
    let modes = [Mode::Rig, Mode::NetSparse];
    let serial = run(&m, &cfg(24_000), &modes, 0);
    assert!(serial.modes[0].fabric.as_ref().unwrap().paused_frames > 0);
    let serial = json(&serial);
    for threads in [1, 2] {
        let parallel = json(&run(&m, &cfg(24_000), &modes, threads));
        if parallel != serial {
            panic!(
                "{threads} thread(s): reports differ at {}",
                first_difference(&serial, &parallel)
            );
        }
    }
}

#[test]
fn table5_buffers_change_nothing_where_they_never_fill() {
    let m = matrix();
    let modes = [Mode::Rig, Mode::NetSparse];
    let default = run(
        &m,
        &SimConfig {
            nodes: 16,
            racks: 4,
            ..SimConfig::default()
        },
        &modes,
        0,
    );
    let mut off = cfg(0);
    off.nic_buffer_bytes = 0;
    let unbounded = run(&m, &off, &modes, 0);
    for (d, u) in default.modes.iter().zip(&unbounded.modes) {
        let f = d.fabric.clone().unwrap();
        assert_eq!(f.switch_buffer, Some(96 << 20));
        assert_eq!(f.nic_buffer, Some(2 << 20));
        assert_eq!(f.paused_frames, 0);
        assert!(f.peak_switch_bytes > 0 && f.peak_nic_rx_bytes > 0, "{f:?}");
        assert_eq!(
            serde_json::to_string(&d.nodes).unwrap(),
            serde_json::to_string(&u.nodes).unwrap()
        );
        assert_eq!(d.time(), u.time());
    }
}

#[test]
fn buffers_smaller_than_a_frame_per_port_are_refused() {
    for (key, v) in [
        ("switch-buffer-bytes", 12_000u64),
        ("nic-buffer-bytes", 1_000),
    ] {
        let mut c = cfg(96 << 20);
        c.set(key, &v.to_string()).unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(&v.to_string()), "{e}");
        assert!(e.contains("0 (unbounded), or"), "{e}");
    }
    let mut c = cfg(96 << 20);
    assert!(c.set("switch-buffer-bytes", "lots").is_err());
    c.set("switch-buffer-bytes", "0").unwrap();
    c.validate().unwrap();
}

/// Set at write completion, the filter bit is missing for about one DMA
/// write after each response: a few idxs read again in that window are
/// requested again. Every property still verifies, and the PRs only grow.
#[test]
fn the_filter_bit_set_at_host_write_costs_a_few_prs() {
    use netsparse::sim::config::FilterBit;
    let spec: GenSpec = "rmat:scale=14,ef=4".parse().unwrap();
    let m = spec.generate(3).unwrap().0;
    let prs = |filter_bit| {
        let cfg = SimConfig {
            nodes: 32,
            racks: 4,
            filter_bit,
            ..SimConfig::default()
        };
        let r = run(&m, &cfg, &[Mode::Filter, Mode::NetSparse], 0);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["config"]["filter-bit"], filter_bit.name());
        r.modes
            .iter()
            .map(|mr| mr.run.as_ref().unwrap().prs_issued)
            .collect::<Vec<u64>>()
    };
    let (write, response) = (prs(FilterBit::Write), prs(FilterBit::Response));
    for (w, r) in write.iter().zip(&response) {
        assert!(w > r, "write {w} vs response {r}");
        assert!(
            *w < r + r / 20,
            "write {w} vs response {r}: more than 5% apart"
        );
    }
}
