//! Reports (table, JSON, CSV) of real SU/SA runs, and the SVG plots.

use netsparse::sim::config::SimConfig;
use netsparse::sim::matrix::gen::GenSpec;
use netsparse::sim::partition::Partition;
use netsparse::sim::plot::{ablation_chart, bar_chart, line_chart, speedup_chart, Line, Series};
use netsparse::sim::report::MatrixSummary;
use netsparse::sim::{simulate, Mode};
use netsparse_externs::Time;

fn run(spec: &str, cfg: &SimConfig) -> netsparse::sim::report::Report {
    let spec: GenSpec = spec.parse().unwrap();
    let (m, info) = spec.generate(cfg.seed).unwrap();
    let part = Partition::equal(&m, cfg.nodes).unwrap();
    let summary = MatrixSummary {
        name: spec.kind().to_string(),
        rows: m.rows(),
        cols: m.cols(),
        nnz: m.nnz(),
        duplicates: info.duplicates,
    };
    simulate(&m, summary, &part, cfg, &[Mode::Su, Mode::Sa], &mut |_| {
        true
    })
    .unwrap()
}

#[test]
fn su_and_sa_tail_statistics() {
    let cfg = SimConfig {
        nodes: 16,
        racks: 2,
        ..SimConfig::default()
    };
    let r = run("banded:n=16384,width=64,density=0.25", &cfg);
    let su = r.mode("su").unwrap();
    let sa = r.mode("sa").unwrap();
    // SU: each node owns 1024 columns and receives the other 15,360 x 64 B
    // at 400 Gb/s: 983,040 B = 19,660,800 ps.
    let t = su.tail_node().unwrap();
    assert_eq!(t.rx.payload, 15_360 * 64);
    assert_eq!(t.time, Time::from_ps(19_660_800));
    assert!((t.goodput - 1.0).abs() < 1e-9 && (t.line_util - 1.0).abs() < 1e-9);
    assert_eq!(su.speedup_vs_su, Some(1.0));
    // SA: software time dominates (K = 16), goodput well below line rate,
    // a real filtering rate, PRs packed 17 per response packet at most.
    let s = sa.tail_node().unwrap();
    assert!(s.software_time.unwrap() > s.wire_time);
    assert_eq!(s.time, s.software_time.unwrap());
    assert!(s.goodput > 0.0 && s.goodput < 0.2, "{}", s.goodput);
    assert!(s.line_util > s.goodput);
    assert!(s.fc_rate.unwrap() > 0.0 && s.fc_rate.unwrap() < 1.0);
    assert!(s.prs_per_packet.unwrap() <= 17.0);
    // Only 16 nodes and a narrow band: SU's volume is small and SAOpt's
    // boundary cores are the bottleneck, so SA is slower here.
    let want = su.time().as_ps() as f64 / sa.time().as_ps() as f64;
    assert!((sa.speedup_vs_su.unwrap() - want).abs() < 1e-12);
    assert!(want < 1.0, "{want}");
    assert!(sa.traffic_reduction_vs_su.unwrap() > 1.0);
    assert_eq!(sa.pr_reduction_vs_sa, None);
    let table = r.table();
    assert!(table.contains("su ") && table.contains("sa "), "{table}");
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["modes"][1]["mode"], "sa");
    assert_eq!(json["modes"][0]["nodes"][0]["time"], 19_660_800);
}

#[test]
fn sa_goodput_lands_in_table7_range() {
    // The default per-PR overhead is calibrated so that SAOpt's goodput
    // on stand-ins without intra-node imbalance lands in Table 7's range.
    let cfg = SimConfig::default();
    for spec in [
        "banded:n=32768,width=512,density=0.05",
        "grid3d:nx=64,ny=64,nz=64",
    ] {
        let r = run(spec, &cfg);
        let g = r.mode("sa").unwrap().tail_node().unwrap().goodput;
        assert!((0.07..=0.115).contains(&g), "{spec}: SA goodput {g}");
    }
}

#[test]
fn plots_are_svg_with_series_names() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SimConfig {
        nodes: 8,
        racks: 2,
        ..SimConfig::default()
    };
    let a = run("grid2d:nx=64,ny=64", &cfg);
    let b = run("uniform:rows=4096,cols=4096,nnz=40000", &cfg);
    let p = dir.path().join("speedup.svg");
    speedup_chart(&p, &[&a, &b]).unwrap();
    let svg = std::fs::read_to_string(&p).unwrap();
    assert!(svg.starts_with("<svg"));
    for name in ["su", "sa", "grid2d", "uniform"] {
        assert!(has_text(&svg, name), "{name} missing");
    }
    let p = dir.path().join("ablation.svg");
    let steps: Vec<String> = ["RIG", "Filter", "Coalesce", "ConcNIC", "Switch"]
        .map(String::from)
        .to_vec();
    ablation_chart(
        &p,
        "arabic K=16",
        &steps,
        &[
            Series {
                name: "Spd".into(),
                values: vec![1.8, 34.2, 88.0, 129.1, 184.1],
            },
            Series {
                name: "-Trfc".into(),
                values: vec![5.3, 63.2, 118.5, 191.2, 283.4],
            },
        ],
    )
    .unwrap();
    let svg = std::fs::read_to_string(&p).unwrap();
    for name in ["Spd", "-Trfc", "Coalesce", "ConcNIC"] {
        assert!(has_text(&svg, name), "{name} missing");
    }
    let p = dir.path().join("sweep.svg");
    line_chart(
        &p,
        "delay cycles",
        "cycles",
        "speedup",
        &[
            Line {
                name: "queen".into(),
                points: vec![(10.0, 1.1), (100.0, 1.4), (1000.0, 1.6), (50000.0, 0.8)],
            },
            Line {
                name: "europe".into(),
                points: vec![(10.0, 1.0), (100.0, 1.05), (1000.0, 1.1), (50000.0, 0.7)],
            },
        ],
        true,
    )
    .unwrap();
    let svg = std::fs::read_to_string(&p).unwrap();
    assert!(has_text(&svg, "queen") && has_text(&svg, "europe"));
    // Nothing plottable is an error, not a panic or an empty file.
    let e = bar_chart(
        &dir.path().join("x.svg"),
        "empty",
        "y",
        &["a".into()],
        &[Series {
            name: "s".into(),
            values: vec![f64::NAN],
        }],
    )
    .unwrap_err();
    assert!(e.to_string().contains("nothing to plot"));
    let e = line_chart(&dir.path().join("y.svg"), "t", "x", "y", &[], false).unwrap_err();
    assert!(e.to_string().contains("nothing to plot"));
}

/// Whether the SVG has a text element reading exactly `t`.
fn has_text(svg: &str, t: &str) -> bool {
    svg.contains(&format!(">\n{t}\n</text>")) || svg.contains(&format!(">{t}</text>"))
}

#[test]
fn a_stopped_run_reports_partial_results() {
    let cfg = SimConfig {
        nodes: 8,
        racks: 2,
        ..SimConfig::default()
    };
    let (m, _) = GenSpec::Grid2d { nx: 32, ny: 32 }.generate(1).unwrap();
    let part = Partition::equal(&m, 8).unwrap();
    let summary = MatrixSummary {
        name: "g".into(),
        rows: m.rows(),
        cols: m.cols(),
        nnz: m.nnz(),
        duplicates: 0,
    };
    let mut calls = 0;
    let r = simulate(&m, summary, &part, &cfg, &[Mode::Su, Mode::Sa], &mut |p| {
        calls += 1;
        p.done < 3
    })
    .unwrap();
    assert!(r.stopped);
    assert_eq!(calls, 3);
    let sa = r.mode("sa").unwrap();
    assert!(sa.partial);
    assert_eq!(sa.nodes.len(), 3);
    assert!(r.table().contains("sa (partial)"), "{}", r.table());
    assert!(r.table().contains("partial statistics"));
    assert!(!r.mode("su").unwrap().partial);
}

#[test]
fn the_compute_model_adds_end_to_end_time_and_strong_scaling() {
    use netsparse::sim::compute::ComputeModel;
    // banded:n=16384,width=64,density=0.25 on 16 nodes: an even matrix, so
    // every node computes about 1/16 of it.
    let spec = "banded:n=16384,width=64,density=0.25";
    let base = SimConfig {
        nodes: 16,
        racks: 2,
        ..SimConfig::default()
    };
    let none = run(spec, &base);
    assert!(none.modes.iter().all(|m| m.compute.is_none()));
    let cfg = SimConfig {
        compute: ComputeModel::Spade,
        ..base.clone()
    };
    let r = run(spec, &cfg);
    let su = r.mode("su").unwrap();
    let c = su
        .compute
        .as_ref()
        .expect("compute figures with --compute spade");
    // One node computes the whole matrix: nnz * (8 + 64) + rows * (8 + 64)
    // bytes at 800 GB/s (memory bound at K = 16).
    let nnz = r.matrix.nnz;
    let bytes = nnz * 72 + 16_384 * 72;
    assert_eq!(
        c.single_node,
        Time::from_ps((bytes as f64 / 800e9 * 1e12).round() as u64)
    );
    // Communication is unchanged; end-to-end brackets it.
    assert_eq!(c.comm_max, none.mode("su").unwrap().time());
    assert!(c.end_to_end >= c.end_to_end_overlapped);
    assert!(c.end_to_end_overlapped >= c.comm_max.max(c.comp_max));
    assert!(c.end_to_end <= c.comm_max + c.comp_max);
    // An even matrix on 16 nodes: ideal scaling close to 16.
    assert!(
        c.ideal_speedup > 14.0 && c.ideal_speedup <= 16.5,
        "{}",
        c.ideal_speedup
    );
    assert!(c.speedup_vs_single < c.ideal_speedup);
    // SAOpt's software time makes it slower end to end than SUOpt here.
    let sa = r.mode("sa").unwrap().compute.as_ref().unwrap();
    assert!(sa.end_to_end > c.end_to_end);
    assert!(r.table().contains("with spade computation"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"speedup_vs_single\""), "{json:.200}");
    // A doubled bandwidth halves a memory-bound computation.
    let fast = SimConfig {
        compute_gbps: Some(1600.0),
        ..cfg.clone()
    };
    let f = run(spec, &fast);
    let fc = f.mode("su").unwrap().compute.as_ref().unwrap();
    let half = c.single_node.as_ps() as f64 / 2.0;
    assert!((fc.single_node.as_ps() as f64 - half).abs() <= 1.0);
}

#[test]
fn bad_compute_parameters_name_the_parameter() {
    let mut c = SimConfig::default();
    let e = c.set("compute", "gpu").unwrap_err().to_string();
    assert!(e.contains("compute") && e.contains("cpu-hbm"), "{e}");
    c.compute_gbps = Some(0.0);
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("compute-gbps"), "{e}");
    c.compute_gbps = None;
    c.set("compute-gflops", "x").unwrap_err();
    c.set("compute", "cpu-ddr").unwrap();
    c.validate().unwrap();
}
