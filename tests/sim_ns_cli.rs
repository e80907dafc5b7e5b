//! `netsparse sim` with the NetSparse modes and `netsparse demo`, end to
//! end through the binary: outputs, plots, exit statuses, bad input.

mod sim_support;
use sim_support::{refused, run, text};

const GEN: &str = "rmat:scale=8,ef=8";

#[test]
fn ablation_modes_with_outputs_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let plots = dir.path().join("plots");
    let o = run(&[
        "sim",
        "--gen",
        "rmat:scale=12,ef=8",
        "--nodes",
        "8",
        "--racks",
        "2",
        "--rig-units",
        "4",
        "--rig-batch",
        "512",
        "--mode",
        "su,sa,rig,+filter,+coalesce,+nic-concat,netsparse",
        "--spmm",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--plot-dir",
        plots.to_str().unwrap(),
        "-q",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    for m in ["rig", "+filter", "+coalesce", "+nic-concat", "netsparse"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{m} "))),
            "{out}"
        );
        assert!(out.contains(&format!("{m}: verified")), "{out}");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let modes = j["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 7);
    let ns = &modes[6];
    assert_eq!(ns["mode"], "netsparse");
    assert!(ns["speedup_vs_su"].as_f64().unwrap() > 0.0);
    assert!(ns["cache_hit_rate"].as_f64().unwrap() > 0.0);
    assert!(ns["verification"]["spmm_rows"].as_u64().unwrap() > 0);
    assert!(ns["run"]["idxs"].as_u64().unwrap() > 0);
    let c = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(c.lines().count(), 1 + 7 * 8);
    for f in ["speedup.svg", "ablation.svg"] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(svg.contains("<svg"), "{f}");
    }
    let ab = std::fs::read_to_string(plots.join("ablation.svg")).unwrap();
    assert!(ab.contains("Conc_NIC") && ab.contains("Switch"), "{ab}");
}

#[test]
fn sweep_of_delay_cycles_plots_relative_speedups() {
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("p");
    let o = run(&[
        "sim",
        "--gen",
        GEN,
        "--nodes",
        "8",
        "--racks",
        "2",
        "--rig-batch",
        "64",
        "--mode",
        "netsparse",
        "--sweep",
        "delay-cycles=0,500,2000",
        "--plot-dir",
        plots.to_str().unwrap(),
        "-q",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert_eq!(out.matches("== delay-cycles = ").count(), 3);
    let svg = std::fs::read_to_string(plots.join("sweep-relative.svg")).unwrap();
    assert!(svg.contains("delay-cycles"));
    // No SU in the run: the vs-SU sweep plot is skipped, saying so.
    assert!(err.contains("not writing"), "{err}");
}

#[test]
fn a_corrupted_property_exits_1_listing_the_mismatch() {
    let o = run(&[
        "sim",
        "--gen",
        GEN,
        "--nodes",
        "8",
        "--racks",
        "2",
        "--mode",
        "netsparse",
        "--corrupt-idx",
        "0",
        "-q",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(out.contains("VERIFICATION FAILED"), "{out}");
    assert!(
        err.contains("verification failed in mode netsparse"),
        "{err}"
    );
    assert!(err.contains("idx 0: gathered property differs"), "{err}");
}

#[test]
fn bad_parameters_name_the_value() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--mode", "netsparse", "--k", "5"],
            "k = 5 is out of range",
        ),
        (vec!["--k", "6"], "k = 6 is out of range"),
        (
            vec!["--cache-bytes", "1000"],
            "cache-bytes = 1000 is out of range",
        ),
        (
            vec!["--rig-clients", "32"],
            "rig-clients = 32 is out of range",
        ),
        (vec!["--rig-units", "1"], "rig-units = 1 is out of range"),
        (
            vec!["--pending-entries", "0"],
            "pending-entries = 0 is out of range",
        ),
        (vec!["--cache-ways", "0"], "cache-ways = 0 is out of range"),
        (vec!["--mode", "+bogus"], "unknown mode \"+bogus\""),
        (
            vec!["--sweep", "k=16,12", "--mode", "netsparse"],
            "k = 12 is out of range",
        ),
        (vec!["--sweep", "cache-bytes=lots"], "cache-bytes = lots"),
        (
            vec!["--cache-bytes", "2Q"],
            "unknown unit \"q\" (use K, M, G or T",
        ),
        (
            vec!["--nic-buffer-bytes", "2..5M"],
            "expected a size such as",
        ),
        (
            vec!["--host-model", "triggered"],
            "host-model = triggered is out of range",
        ),
        (
            vec!["--host-model", "eager"],
            "unknown host model \"eager\" (one of post-at-zero, triggered)",
        ),
        (
            vec!["--host-model", "triggered", "--compute-rate", "1e20"],
            "compute-rate = 100000000000000000000 is out of range: 1e3..=1e15",
        ),
        (
            vec!["--compute", "spade", "--chunk-nnz", "0"],
            "chunk-nnz = 0 is out of range: 1..=4294967296",
        ),
        (
            vec!["--trigger-table", "0"],
            "trigger-table = 0 is out of range: 1..=16777216",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["sim", "--gen", GEN, "--nodes", "8", "--racks", "2"];
        args.extend(extra.iter());
        refused(&args, needle);
    }
}

#[test]
fn demo_quick_runs_verifies_and_writes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let o = run(&["demo", "--quick", "-q", "--out", out.to_str().unwrap()]);
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{err}");
    assert!(stdout.contains("faster than SUOpt"), "{stdout}");
    assert!(stdout.contains("verification: passed"), "{stdout}");
    for f in ["report.json", "report.csv", "speedup.svg"] {
        assert!(out.join(f).exists(), "{f}");
    }
}

#[test]
fn demo_with_an_unusable_output_directory_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let out = file.join("sub");
    let o = run(&["demo", "-q", "--out", out.to_str().unwrap()]);
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{err}");
    assert!(err.contains("cannot create"), "{err}");
    assert!(err.contains("sub"), "{err}");
    // Nothing was simulated.
    assert!(stdout.is_empty(), "{stdout}");
}

/// `netsparse bench sim` runs one verified mode and reports throughput and
/// peak memory; a bad mode or node count is refused naming the value.
#[test]
fn bench_sim_reports_throughput_and_memory() {
    let base = [
        "bench",
        "sim",
        "--gen",
        "paper:europe/2048",
        "--nodes",
        "16",
        "--racks",
        "2",
    ];
    let o = run(&[&base[..], &["--mode", "rig"]].concat());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("mode rig"), "{out}");
    assert!(out.contains("every gathered property verified"), "{out}");
    assert!(out.contains("M idxs+PRs/s per CPU second"), "{out}");
    assert!(out.contains("peak resident memory"), "{out}");
    // Two threads: the windows are reported.
    let o = run(&[&base[..], &["--mode", "rig", "--threads", "2"]].concat());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("2 thread(s)"), "{out}");
    assert!(out.contains("windows of simulated time"), "{out}");
    // And how their wall time divided, with Amdahl's bound.
    assert!(out.contains("serial gather and merge"), "{out}");
    assert!(out.contains("the serial part alone allows"), "{out}");
    // CPU per event, and what it allows on the machine's cores.
    assert!(out.contains("cpu per event: "), "{out}");
    // The wall time's two parts: building the cluster and the event loop,
    // which together cannot exceed it.
    let wall = out
        .lines()
        .find(|l| l.starts_with("wall: "))
        .unwrap_or_else(|| panic!("no wall line in {out}"));
    let secs_after = |tag: &str| -> f64 {
        let rest = &wall[wall
            .find(tag)
            .unwrap_or_else(|| panic!("{tag:?} in {wall}"))
            + tag.len()..];
        rest.split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("a number after {tag:?} in {wall}"))
    };
    let (total, setup, looped) = (
        secs_after("wall: "),
        secs_after("set-up "),
        secs_after("event loop "),
    );
    assert!(setup >= 0.0 && looped > 0.0, "{wall}");
    assert!(setup + looped <= total + 0.011, "{wall}");
    // Repeated runs: each one's figures, their agreement, the median's.
    let o = run(&[&base[..], &["--mode", "rig", "--runs", "2"]].concat());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(
        out.contains("run 1/2: wall ")
            && out.contains("run 2/2: wall ")
            && out.contains("(set-up "),
        "{out}"
    );
    assert!(
        out.contains("2 runs, every one verified and simulating the same: wall min "),
        "{out}"
    );
    refused(&[&base[..], &["--runs", "0"]].concat(), "--runs");
    refused(&[&base[..], &["--threads", "0"]].concat(), "--threads");
    refused(
        &[&base[..], &["--mode", "bogus"]].concat(),
        "unknown mode \"bogus\"",
    );
}

/// A run whose estimated memory exceeds `--mem-limit` is refused at once,
/// before the matrix is generated or read, naming the estimate and the
/// limit; the same run under a large enough limit goes ahead.
#[test]
fn an_oversize_run_is_refused_before_anything_large_is_allocated() {
    // R-MAT scale 27, edge factor 16: 2.1 G coordinates, over 20 GiB.
    let t0 = std::time::Instant::now();
    let o = run(&[
        "sim",
        "--gen",
        "rmat:scale=27,ef=16",
        "--nodes",
        "128",
        "--racks",
        "8",
        "--mem-limit",
        "16G",
        "-q",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(err.contains("not enough memory for rmat:scale=27"), "{err}");
    assert!(err.contains("on 128 nodes"), "{err}");
    assert!(err.contains("the estimated peak is"), "{err}");
    assert!(err.contains("while building the matrix"), "{err}");
    assert!(
        err.contains("the limit is 16.00 GiB (--mem-limit)"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
    // Generating 2.1 G coordinates would take minutes.
    assert!(t0.elapsed().as_secs() < 20, "{:?}", t0.elapsed());

    // A Matrix Market file is estimated from its size line alone; without
    // --mem-limit the machine's physical memory is the limit (a file
    // declaring 10^12 entries exceeds any machine's).
    let dir = std::env::temp_dir().join(format!("ns-memlimit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vast = dir.join("vast.mtx");
    std::fs::write(
        &vast,
        "%%MatrixMarket matrix coordinate pattern general\n1000000 1000000 1000000000000\n1 1\n",
    )
    .unwrap();
    let o = run(&[
        "sim",
        "--matrix",
        vast.to_str().unwrap(),
        "--mode",
        "su",
        "-q",
    ]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("physical memory, MemTotal of /proc/meminfo"),
        "{err}"
    );
    // `matrix info` checks the matrix alone, from the size line too.
    let o = run(&["matrix", "info", vast.to_str().unwrap(), "--nodes", "4"]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not enough memory for"), "{err}");
    assert!(err.contains("while building the matrix"), "{err}");
    let mtx = dir.join("huge.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate pattern symmetric\n1000000 1000000 900000000\n1 1\n",
    )
    .unwrap();
    let o = run(&[
        "sim",
        "--matrix",
        mtx.to_str().unwrap(),
        "--mem-limit",
        "2G",
        "-q",
    ]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not enough memory for"), "{err}");
    assert!(err.contains("up to 1800000000 nonzeros"), "{err}");
    std::fs::remove_dir_all(&dir).ok();

    // A bad limit names the value; a small run fits a modest limit.
    let o = run(&["sim", "--gen", GEN, "--mem-limit", "lots", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("expected a size"), "{}", text(&o).1);
    let o = run(&[
        "sim",
        "--gen",
        GEN,
        "--nodes",
        "4",
        "--racks",
        "2",
        "--mem-limit",
        "8G",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);

    // `bench sim` checks the same estimate.
    let o = run(&["bench", "sim", "--gen", "paper:arabic", "--mem-limit", "1G"]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not enough memory for paper:arabic"), "{err}");
}

/// `--host-model triggered` through the binary: the text report and the
/// JSON carry the overlap, and the iteration ends before post-at-zero's.
#[test]
fn triggered_host_model_reports_the_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let mut e2e = Vec::new();
    for model in ["post-at-zero", "triggered"] {
        let json = dir.path().join(format!("{model}.json"));
        let o = run(&[
            "sim",
            "--gen",
            "rmat:scale=11,ef=8",
            "--nodes",
            "8",
            "--racks",
            "2",
            "--mode",
            "netsparse",
            "--rig-batch",
            "256",
            "--compute-rate",
            "2e8",
            "--chunk-nnz",
            "1024",
            "--host-model",
            model,
            "--json",
            json.to_str().unwrap(),
            "--plot-dir",
            dir.path().join(model).to_str().unwrap(),
            "-q",
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        assert!(out.contains(&format!("host model {model}")), "{out}");
        let svg = std::fs::read_to_string(dir.path().join(model).join("host.svg")).unwrap();
        assert!(svg.contains(&format!("netsparse {model}")), "{svg}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let h = &v["modes"][0]["host"];
        assert_eq!(h["model"], model);
        assert_eq!(v["config"]["host-model"], model);
        let ps = |k: &str| h[k].as_u64().unwrap_or_else(|| panic!("{k}: {h}"));
        if model == "triggered" {
            assert!(ps("overlapped") > 0, "{h}");
        } else {
            assert_eq!(ps("overlapped"), 0, "{h}");
        }
        e2e.push(ps("end_to_end"));
    }
    assert!(e2e[1] < e2e[0], "{e2e:?}");
}

#[test]
fn link_flows_count_what_crosses_a_link_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let args = |json: &std::path::Path, extra: &[&'static str]| {
        let mut a: Vec<String> = [
            "sim",
            "--gen",
            "rmat:scale=11,ef=8",
            "--nodes",
            "8",
            "--racks",
            "2",
            "--mode",
            "netsparse",
            "-q",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.push(json.to_str().unwrap().to_string());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let a = args(
        &with,
        &[
            "--link-flows",
            "h3->tor0, tor1 -> spine0,tor1->spine1,tor1->spine2,tor1->spine3",
        ],
    );
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("netsparse: link h3 -> tor0: "), "{out}");
    assert!(out.contains("netsparse: link tor1 -> spine3: "), "{out}");
    let b = args(&without, &["--threads", "1"]);
    let o = run(&b.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let read = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let (ja, jb) = (read(&with), read(&without));
    let (ma, mb) = (&ja["modes"][0], &jb["modes"][0]);
    // Watching changes no result.
    assert_eq!(ma["nodes"], mb["nodes"]);
    assert_eq!(ma["fabric"], mb["fabric"]);
    assert_eq!(ma["verification"], mb["verification"]);
    assert!(mb.get("link_flows").is_none(), "{mb}");
    // Node 3's uplink carries what node 3 sent, all of it.
    let up = &ma["link_flows"][0];
    assert_eq!(up["link"], "h3 -> tor0");
    let n3 = &ma["nodes"][3];
    assert_eq!(up["frames"], n3["tx_packets"], "{up}");
    let sent = n3["tx"]["header"].as_u64().unwrap() + n3["tx"]["payload"].as_u64().unwrap();
    assert_eq!(up["bytes"].as_u64(), Some(sent), "{up}");
    assert_eq!(up["other_frames"], 0);
    // Its flows: reads from rack 0 to the other 7 nodes, responses from h3
    // to the two racks; all of them listed, adding up to the link's bytes.
    let by_rack = up["by_rack"].as_array().unwrap();
    assert!(by_rack.len() <= 9, "{up}");
    let total: u64 = by_rack.iter().map(|f| f["bytes"].as_u64().unwrap()).sum();
    assert_eq!(total, sent, "{up}");
    for f in by_rack {
        match f["pr_type"].as_str().unwrap() {
            "read" => assert_eq!(f["requester"], "rack 0", "{f}"),
            "response" => assert_eq!(f["owner"], "h3", "{f}"),
            other => panic!("{other}"),
        }
    }
    // Rack 1's uplinks carry its traffic to rack 0 (whichever spines the
    // routing picks).
    let spines = &ma["link_flows"].as_array().unwrap()[1..];
    assert_eq!(spines[2]["link"], "tor1 -> spine2");
    let frames: u64 = spines.iter().map(|l| l["frames"].as_u64().unwrap()).sum();
    assert!(frames > 0, "{spines:?}");
    // Names that are not there, before anything is generated; and a
    // run with nothing to watch.
    for (bad, mode, why) in [
        ("tor0->tor1", "netsparse", "no link from tor0 to tor1"),
        ("tor2->spine0", "netsparse", "no device named \"tor2\""),
        ("h3", "netsparse", "expected a link direction FROM->TO"),
        ("h3->tor0", "su,sa", "needs a simulated mode"),
    ] {
        let o = run(&[
            "sim",
            "--gen",
            GEN,
            "--nodes",
            "8",
            "--racks",
            "2",
            "--mode",
            mode,
            "--link-flows",
            bad,
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {out}\n{err}");
        assert!(err.contains(why), "{bad}: {err}");
    }
    // A link of the base topology that one point of a sweep does not have
    // is named with that point.
    let o = run(&[
        "sim",
        "--gen",
        GEN,
        "--nodes",
        "16",
        "--racks",
        "2",
        "--mode",
        "netsparse",
        "--link-flows",
        "h12->tor1",
        "--sweep",
        "nodes=16,8",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(
        err.contains("--sweep nodes=8: --link-flows: no device named \"h12\""),
        "{err}"
    );
}
