//! `netsparse sim --kernel spmm2d`: every algorithm's C equals the direct
//! product on 4 and 16 nodes (one rack and two); the READ, WRITE and
//! FETCH_ADD volumes of stationary C and stationary A equal an independent
//! count of the tiles they move; work stealing takes units off an
//! overloaded row; verbs to unregistered memory are counted and reported,
//! not a hang or a wrong C; bad arguments are refused naming the value
//! (and `matrix info --tiles` refuses a P that is not a perfect square).

use std::process::Command;

use netsparse::programs::ProgramCache;
use netsparse::sim::compute::Rates;
use netsparse::sim::matrix::{CooBuilder, CsrMatrix, GenSpec};
use netsparse::sim::spmm2d::data::Operands;
use netsparse::sim::spmm2d::{run, Alg, Spmm2dParams, Spmm2dReport, CHUNK};

fn rmat(scale: u32) -> CsrMatrix {
    let spec: GenSpec = format!("rmat:scale={scale},ef=8").parse().unwrap();
    spec.generate(3).unwrap().0
}

fn params(nodes: u32, racks: u32, k: u32) -> Spmm2dParams {
    Spmm2dParams {
        nodes,
        racks,
        k,
        seed: 5,
        ..Spmm2dParams::default()
    }
}

fn run_ok(m: &CsrMatrix, p: &Spmm2dParams) -> Spmm2dReport {
    let rep = run(m, p, &mut ProgramCache::new()).expect("runs");
    assert_eq!(rep.results.len(), p.algs.len());
    for r in &rep.results {
        assert!(r.verified, "{}: {:?}", r.alg, r.problems);
        assert!(r.time_ns > 0.0 && r.compute_ns > 0.0, "{r:?}");
        assert!(r.procs.iter().all(|s| s.finish_ps > 0), "{r:?}");
    }
    rep
}

fn pad(bytes: u64) -> u64 {
    bytes.div_ceil(u64::from(CHUNK)).max(1) * u64::from(CHUNK)
}

#[test]
fn every_algorithm_computes_c_exactly_on_4_and_16_nodes() {
    let m = rmat(8);
    // K = 2 on a 4 x 4 grid: half the C tiles have no columns.
    for (nodes, racks, k) in [(4, 1, 8), (16, 2, 5), (16, 4, 16), (16, 1, 2)] {
        let rep = run_ok(&m, &params(nodes, racks, k));
        // Every unit (i, j, k) is computed exactly once somewhere.
        let g = u64::from(rep.grid);
        for r in &rep.results {
            let units: u64 = r.procs.iter().map(|s| s.units).sum();
            assert_eq!(units, g * g * g, "{} on {nodes}", r.alg);
        }
    }
}

#[test]
fn read_and_write_volumes_match_an_independent_tile_count() {
    let m = rmat(9);
    let p = Spmm2dParams {
        algs: vec![Alg::StationaryC, Alg::StationaryA],
        ..params(16, 1, 12)
    };
    let rep = run_ok(&m, &p);
    let g = rep.grid;
    let ops = Operands::new(&m, p.k, g, p.seed);
    // Stationary C: (i, j) reads A(i, k) unless k = j, B(k, j) unless k = i.
    let (mut sc_bytes, mut sc_reads) = (0, 0);
    // Stationary A: (i, k) reads B(k, j) unless (k, j) = (i, k) and
    // pushes C(i, j) for every j != k.
    let (mut sa_bytes, mut sa_reads, mut sa_writes) = (0, 0, 0);
    for i in 0..g {
        for j in 0..g {
            for k in 0..g {
                if k != j {
                    sc_bytes += pad(ops.a_bytes(i, k));
                    sc_reads += 1;
                }
                if k != i {
                    sc_bytes += pad(ops.b_bytes(k, j));
                    sc_reads += 1;
                }
                // Process (i, j) holding A(i, j) at stage with column k:
                if (j, k) != (i, j) {
                    sa_bytes += pad(ops.b_bytes(j, k));
                    sa_reads += 1;
                }
                if k != j {
                    sa_writes += pad(ops.c_bytes(i, k));
                }
            }
        }
    }
    let (sc, sa) = (&rep.results[0], &rep.results[1]);
    assert_eq!((sc.read_bytes, sc.reads), (sc_bytes, sc_reads));
    assert_eq!((sc.write_bytes, sc.fetch_adds), (0, 0));
    assert_eq!((sa.read_bytes, sa.reads), (sa_bytes, sa_reads));
    assert_eq!(sa.write_bytes, sa_writes);
    assert_eq!(sa.fetch_adds, u64::from(g * g * (g - 1)));
    assert!(sc.accumulate_ns == 0.0 && sa.accumulate_ns > 0.0);
}

/// A matrix whose first row block is dense: under stationary C the row-0
/// processes do far more work than the others.
fn heavy_first_rows() -> CsrMatrix {
    let mut b = CooBuilder::new(64, 64, false).unwrap();
    for r in 0..64u64 {
        b.push(r, r, 1.0).unwrap();
        if r < 16 {
            for c in 0..64 {
                if c != r {
                    b.push(r, c, 1.0).unwrap();
                }
            }
        }
    }
    b.build().0
}

#[test]
fn work_stealing_moves_units_off_the_overloaded_row() {
    let m = heavy_first_rows();
    let p = Spmm2dParams {
        // Slow compute, so that the work dominates the network.
        rates: Rates {
            gflops: 0.05,
            gbps: 0.5,
        },
        ..params(16, 1, 16)
    };
    let rep = run_ok(&m, &p);
    let g = rep.grid as usize;
    let sc = &rep.results[0];
    assert!(sc.compute_imbalance > 2.0, "{}", sc.compute_imbalance);
    for r in &rep.results[2..] {
        // Row 0's processes computed fewer than their g units each; the
        // others stole them, and the run is faster and better balanced.
        let row0: u64 = r.procs[..g].iter().map(|s| s.units).sum();
        assert!(row0 < (g * g) as u64, "{}: row 0 computed {row0}", r.alg);
        assert!(
            r.time_ns < sc.time_ns,
            "{}: {} vs {}",
            r.alg,
            r.time_ns,
            sc.time_ns
        );
        assert!(r.compute_imbalance < sc.compute_imbalance, "{}", r.alg);
        assert!(r.write_bytes > 0 && r.failed_steals > 0, "{r:?}");
    }
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let m = rmat(7);
    let p = params(4, 1, 4);
    let a = run(&m, &p, &mut ProgramCache::new()).unwrap();
    let b = run(&m, &p, &mut ProgramCache::new()).unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn bad_parameters_name_the_value() {
    let m = rmat(6);
    for (p, want) in [
        (params(8, 1, 4), "--nodes 8"),
        (params(2, 1, 4), "--nodes 2"),
        (params(4, 1, 0), "--k 0"),
        (params(4, 3, 4), "--racks 3"),
        (
            Spmm2dParams {
                algs: vec![],
                ..params(4, 1, 4)
            },
            "s-c, s-a, ws-rand, ws-la",
        ),
    ] {
        let e = p.validate(&m).expect_err(want).to_string();
        assert!(e.contains(want), "{e}");
    }
    // A grid finer than the matrix.
    let mut b = CooBuilder::new(3, 3, false).unwrap();
    b.push(0, 0, 1.0).unwrap();
    let tiny = b.build().0;
    let e = params(16, 1, 4).validate(&tiny).unwrap_err().to_string();
    assert!(e.contains("--nodes 16") && e.contains("3 x 3"), "{e}");
}

fn cli(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn cli_runs_and_refuses_bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let base = [
        "sim",
        "--kernel",
        "spmm2d",
        "--gen",
        "rmat:scale=7,ef=4",
        "-q",
    ];
    let mut args = base.to_vec();
    let plots = dir.path().join("plots");
    args.extend(["--nodes", "4", "--k", "4", "--json", json.to_str().unwrap()]);
    args.extend(["--plot-dir", plots.to_str().unwrap()]);
    let (code, out, err) = cli(&args);
    assert_eq!(code, Some(0), "{out}{err}");
    // The cost model beside the simulation, and the plots.
    assert!(out.contains("cost model (alpha-beta + roofline"), "{out}");
    for f in ["spmm2d.svg", "spmm2d-breakdown.svg"] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("s-c"), "{f}");
    }
    let mut relabelled = base.to_vec();
    relabelled.extend([
        "--nodes",
        "4",
        "--k",
        "3",
        "--relabel",
        "9",
        "--alg",
        "s-c,ws-la",
    ]);
    let (code, out2, err) = cli(&relabelled);
    assert_eq!(code, Some(0), "{out2}{err}");
    assert!(out2.contains("relabelled (seed 9)"), "{out2}");
    assert_eq!(
        out2.lines().filter(|l| l.ends_with("yes")).count(),
        2,
        "{out2}"
    );
    for alg in ["s-c", "s-a", "ws-rand", "ws-la"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(alg) && l.ends_with("yes")),
            "{out}"
        );
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        doc["spmm2d"]["results"].as_array().map(|a| a.len()),
        Some(4)
    );
    for (extra, want) in [
        (vec!["--nodes", "8"], "--nodes 8"),
        (vec!["--nodes", "4", "--k", "0"], "--k 0"),
        (vec!["--alg", "s-c,s-b"], "\"s-b\""),
    ] {
        let mut a = base.to_vec();
        a.extend(extra);
        let (code, out, err) = cli(&a);
        assert_eq!(code, Some(2), "{want}: {out}{err}");
        assert!(err.contains(want), "{want}: {err}");
        if want.contains("s-b") {
            assert!(err.contains("s-c, s-a, ws-rand, ws-la"), "{err}");
        }
    }
    // matrix info --tiles: a perfect square only, named in the error.
    let (code, out, err) = cli(&["matrix", "info", "--gen", "rmat:scale=6", "--tiles", "16"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("4 x 4 tiles") && out.contains("relabelled (seed 1)"),
        "{out}"
    );
    let (code, _, err) = cli(&["matrix", "info", "--gen", "rmat:scale=6", "--tiles", "12"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--tiles 12") && err.contains("perfect square"),
        "{err}"
    );
    let (code, _, err) = cli(&["sim", "--kernel", "spmm3d", "--gen", "rmat:scale=6"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("spmm3d") && err.contains("spmm2d"), "{err}");
}

/// The verbs of stationary A on a 4 x 4 matrix over 4 nodes in one rack:
/// every frame on every link (each crosses the ToR, the NetSparse switch
/// running the compiled `netsparse_tor.p4`, whose middle pipes rebuild
/// it), as a pcap golden in `tests/pcap/spmm2d_verbs/` (timestamps:
/// simulated ns), checked against a fresh run and for its verbs: each
/// request a node sends reaches its target through the ToR and is answered
/// the same way — READs with their chunks, FETCH_ADDs with the old value,
/// each pushed partial tile's WRITE with one acknowledgement.
///
/// To regenerate after an intended change:
/// `NETSPARSE_BLESS=1 cargo test --test sim_spmm2d verbs`
#[test]
fn verbs_round_trips_through_the_tor_match_the_golden() {
    use netsparse::sim::spmm2d::proc::{
        FADD_REQ, FADD_RESP, NAK, READ_REQ, READ_RESP, WRITE, WRITE_ACK,
    };
    use netsparse::sim::spmm2d::trace;
    use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
    use netsparse_externs::wire::DeviceAddr;
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};

    let mut b = CooBuilder::new(4, 4, false).unwrap();
    for (r, c) in [(0, 0), (0, 3), (1, 2), (2, 1), (3, 0), (3, 3)] {
        b.push(r, c, 1.0).unwrap();
    }
    let m = b.build().0;
    let p = params(4, 1, 2);
    let (r, frames) = trace(&m, &p, Alg::StationaryA, &mut ProgramCache::new()).unwrap();
    assert!(r.verified, "{:?}", r.problems);
    // Count the verbs on node -> ToR links and on ToR -> node links.
    let mut up = std::collections::BTreeMap::<u16, u64>::new();
    let mut down = std::collections::BTreeMap::<u16, u64>::new();
    let mut dc = Deconcatenator::new(DeconcatConfig::default());
    let tor_mac = DeviceAddr::Switch(0).mac().unwrap();
    for f in &frames {
        let d = dc.frame(&f.bytes).expect("well-formed");
        let side = if f.from.starts_with('h') {
            &mut up
        } else {
            assert!(f.to.starts_with('h'), "{} -> {}", f.from, f.to);
            // Rebuilt by the ToR's Concatenator: its own source address.
            assert_eq!(f.bytes[6..12], tor_mac[..], "{} -> {}", f.from, f.to);
            &mut down
        };
        for v in d.prs {
            *side.entry(v.tid).or_default() += 1;
        }
    }
    assert_eq!(up, down, "every PR a node sends leaves the ToR");
    // Stationary A on a 2 x 2 grid: every process pushes one partial C
    // tile (one FETCH_ADD, answered, then its WRITE chunks); the READs
    // and their chunks are those the run counted.
    assert_eq!(up[&READ_REQ], r.reads);
    assert_eq!(up[&READ_RESP], r.read_bytes / u64::from(CHUNK));
    assert_eq!(up[&FADD_REQ], 4);
    assert_eq!(up[&FADD_RESP], 4);
    assert_eq!(up[&WRITE], r.write_bytes / u64::from(CHUNK));
    assert_eq!(up[&WRITE_ACK], 4);
    assert!(!up.contains_key(&NAK), "{up:?}");
    let acks: u64 = r.procs.iter().map(|s| s.write_acks).sum();
    assert_eq!(acks, 4);
    let header = PcapHeader {
        ts_resolution: pcap_file::TsResolution::NanoSecond,
        endianness: pcap_file::Endianness::Little,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for f in &frames {
        let pkt = PcapPacket::new(
            std::time::Duration::from_nanos(f.at_ns),
            f.bytes.len() as u32,
            &f.bytes,
        );
        w.write_packet(&pkt).unwrap();
    }
    let got = w.into_writer();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pcap/spmm2d_verbs");
    let path = dir.join("s-a.pcap");
    if std::env::var_os("NETSPARSE_BLESS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (NETSPARSE_BLESS=1 cargo test --test sim_spmm2d verbs)",
            path.display()
        )
    });
    assert!(want == got, "{} differs from this run", path.display());
}

/// The cost model printed beside the simulation: the same roofline (so
/// stationary C's and stationary A's mean compute times agree with the
/// simulated ones) and no link contention (so it never predicts a later
/// finish than the simulation).
#[test]
fn the_cost_model_shares_the_roofline_and_leaves_out_contention() {
    let m = rmat(8);
    let rep = run_ok(&m, &params(16, 2, 16));
    for r in &rep.results {
        let md = r.model.as_ref().expect("modelled");
        if matches!(r.alg, Alg::StationaryC | Alg::StationaryA) {
            let d = (md.compute_ns - r.compute_ns).abs();
            assert!(d < 1e-6 * r.compute_ns, "{}: {md:?} vs {r:?}", r.alg);
            assert_eq!(md.accumulate_ns > 0.0, r.accumulate_ns > 0.0, "{}", r.alg);
        }
        assert!(md.alpha_ns > 0.0 && md.beta_bytes_per_ns > 0.0);
        assert!(
            md.time_ns > 0.0 && md.time_ns <= r.time_ns * 1.01,
            "{}: model {} ns, simulated {} ns",
            r.alg,
            md.time_ns,
            r.time_ns
        );
    }
}
