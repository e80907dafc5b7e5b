//! `netsparse matrix` and `netsparse sim` end to end: outputs, and errors
//! naming the bad value (never a panic).

use std::path::PathBuf;
use std::process::Command;

mod sim_support;
use sim_support::{refused, run, text};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn matrix_gen_takes_a_generator_spec_as_sim_does() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mtx");
    let b = dir.path().join("b.mtx");
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = run(&[
        "matrix",
        "gen",
        "rmat:scale=9,ef=4",
        "-o",
        a_s,
        "--seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = run(&[
        "matrix",
        "gen",
        "rmat",
        "--scale",
        "9",
        "--edge-factor",
        "4",
        "-o",
        b_s,
        "--seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let (fa, fb) = (
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap(),
    );
    assert!(fa.lines().count() > 100, "{fa}");
    assert_eq!(fa, fb, "the spec and the subcommand give the same file");
    // The global --engine is taken after a spec as after any other command.
    let o = run(&[
        "matrix",
        "gen",
        "rmat:scale=9,ef=4",
        "-o",
        b_s,
        "--seed",
        "3",
        "--engine",
        "interp",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert_eq!(std::fs::read_to_string(&b).unwrap(), fa);
    for (args, needle) in [
        (
            vec!["matrix", "gen", "paper:arabic/0", "-o", a_s],
            "matrix gen paper:arabic/0: paper: scale=0 is out of range",
        ),
        (
            vec!["matrix", "gen", "torus:n=3", "-o", a_s],
            "unknown generator \"torus\"",
        ),
        (vec!["matrix", "gen", "rmat:scale=9"], "--output <FILE.mtx>"),
        (
            vec![
                "matrix",
                "gen",
                "rmat:scale=9",
                "-o",
                a_s,
                "--engine",
                "fast",
            ],
            "invalid value 'fast' for '--engine <MODE>'",
        ),
    ] {
        refused(&args, needle);
    }
}

#[test]
fn matrix_info_puts_the_papers_values_beside_a_stand_ins_own() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("arabic.mtx");
    let fs = f.to_str().unwrap();
    let o = run(&["matrix", "gen", "paper:arabic/4096", "-o", fs]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    // From the file's header comment, and from a --gen spec.
    let from_file = ["matrix", "info", fs, "--nodes", "128", "--racks", "8", "-q"];
    let from_gen = [
        "matrix",
        "info",
        "--gen",
        "paper:arabic/4096",
        "--nodes",
        "128",
        "--racks",
        "8",
        "-q",
    ];
    for args in [&from_file[..], &from_gen[..]] {
        let o = run(args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        for n in ["stand-in for arabic", "(paper: 1:1947)", "(paper: 2.51)"] {
            assert!(out.contains(n), "{args:?}: no {n:?} in\n{out}");
        }
    }
    // Another matrix has no paper values beside its own.
    let r = dir.path().join("r.mtx");
    let rs = r.to_str().unwrap();
    let o = run(&["matrix", "gen", "rmat:scale=9", "-o", rs]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = run(&["matrix", "info", rs, "--nodes", "16", "--racks", "2", "-q"]);
    let (out, _) = text(&o);
    assert!(out.contains("paper statistics"), "{out}");
    assert!(
        !out.contains("stand-in for") && !out.contains("(paper:"),
        "{out}"
    );
}

#[test]
fn matrix_gen_then_info() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("g.mtx");
    let fs = f.to_str().unwrap();
    let o = run(&[
        "matrix", "gen", "grid2d", "--nx", "3", "--ny", "3", "-o", fs,
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("3 x 3") || out.contains("9 x 9"), "{out}");
    let file = std::fs::read_to_string(&f).unwrap();
    assert!(
        file.starts_with("%%MatrixMarket matrix coordinate pattern general\n%"),
        "{file}"
    );
    assert!(file.contains("\n9 9 33\n"), "{file}");
    let o = run(&["matrix", "info", fs, "--nodes", "3", "--per-node"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("9 x 9, 33 nonzeros"), "{out}");
    // Rows 0..3 of the 3x3 grid need column 3, 4, 5 from node 1.
    assert!(out.contains("distinct remote idxs"), "{out}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("0 "))
        .unwrap();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols, vec!["0", "3", "10", "3", "3", "1"], "{out}");
    // Every generator kind writes a readable file, deterministically.
    for args in [
        vec!["rmat", "--scale", "8", "--edge-factor", "4"],
        vec!["grid3d", "--nx", "3", "--ny", "3", "--nz", "3"],
        vec!["banded", "--n", "100", "--width", "4"],
        vec!["uniform", "--rows", "50", "--cols", "40", "--nnz", "300"],
    ] {
        let a = dir.path().join("a.mtx");
        let b = dir.path().join("b.mtx");
        for p in [&a, &b] {
            let mut full = vec!["matrix", "gen"];
            full.extend(&args);
            full.extend(["--seed", "3", "-o", p.to_str().unwrap()]);
            let o = run(&full);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o).1);
        }
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{args:?}"
        );
        let o = run(&["matrix", "info", a.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o).1);
    }
}

#[test]
fn sim_writes_table_json_csv_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let plots = dir.path().join("plots");
    let topo = dir.path().join("topo");
    let o = run(&[
        "sim",
        "--gen",
        "banded:n=4096,width=40,density=0.3",
        "--nodes",
        "8",
        "--racks",
        "2",
        "--k",
        "16",
        "--mode",
        "su,sa",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--plot-dir",
        plots.to_str().unwrap(),
        "--topology-out",
        topo.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("8 nodes in 2 racks, K = 16"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("su ")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("sa ")), "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["modes"].as_array().unwrap().len(), 2);
    assert_eq!(j["modes"][0]["mode"], "su");
    assert_eq!(j["modes"][0]["nodes"].as_array().unwrap().len(), 8);
    assert_eq!(j["config"]["nodes"], 8);
    let sa_speedup = j["modes"][1]["speedup_vs_su"].as_f64().unwrap();
    assert!(sa_speedup > 0.0);
    let c = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(c.lines().count(), 1 + 2 * 8);
    assert_eq!(c.lines().filter(|l| l.contains(",true,")).count(), 2);
    let svg = std::fs::read_to_string(plots.join("speedup.svg")).unwrap();
    assert!(
        svg.contains("<svg") && has_text(&svg, "su") && has_text(&svg, "sa"),
        "{svg}"
    );
    let tj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(topo.join("topology.json")).unwrap())
            .unwrap();
    assert_eq!(tj["hosts"].as_object().unwrap().len(), 8);
    let cmds = std::fs::read_to_string(topo.join("tor1-commands.txt")).unwrap();
    assert!(
        cmds.contains("table_add node_port set_port 4 => 0"),
        "{cmds}"
    );
}

#[test]
fn sim_sweep_and_partition_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let plots = dir.path().join("p");
    let part = dir.path().join("part.txt");
    std::fs::write(&part, "0 2\n2 4\n4 5\n5 6\n").unwrap();
    let o = run(&[
        "sim",
        "--matrix",
        data("general_real.mtx").to_str().unwrap(),
        "--partition",
        part.to_str().unwrap(),
        "--nodes",
        "4",
        "--racks",
        "2",
        "--mode",
        "su,sa",
        "--sweep",
        "k=1,16,128",
        "--json",
        json.to_str().unwrap(),
        "--plot-dir",
        plots.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(out.matches("== k = ").count(), 3, "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ks: Vec<u64> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["config"]["k"].as_u64().unwrap())
        .collect();
    assert_eq!(ks, vec![1, 16, 128]);
    // SU volume of the tail: 6 columns, the smallest owned share is 1
    // column (rows 4..5), so 5 remote properties of K x 4 bytes.
    let su_tail = &j[1]["modes"][0];
    let tail = su_tail["tail"].as_u64().unwrap() as usize;
    assert_eq!(su_tail["nodes"][tail]["rx"]["payload"], 5 * 64);
    let svg = std::fs::read_to_string(plots.join("sweep.svg")).unwrap();
    assert!(has_text(&svg, "su") && has_text(&svg, "sa"));
}

/// Bad input: exit status 2, a message naming the value, no panic.
#[test]
fn bad_input_names_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("c.toml");
    std::fs::write(&toml, "k = 16\nlink-gbps = 0\n").unwrap();
    let bad_toml = dir.path().join("bad.toml");
    std::fs::write(&bad_toml, "nodez = 4\n").unwrap();
    let g = "grid2d:nx=8,ny=8";
    let zero_based = data("bad/zero_based.mtx");
    let too_few = data("bad/too_few.mtx");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["sim", "--gen", g, "--nodes", "16", "--racks", "3"],
            "nodes = 16 is not divisible by racks = 3",
        ),
        (
            vec!["sim", "--gen", g, "--nodes", "16", "--racks", "0"],
            "racks = 0 is out of range",
        ),
        (
            vec!["sim", "--gen", g, "--nodes", "1"],
            "nodes = 1 is out of range: 2..=",
        ),
        (vec!["sim", "--gen", g, "--k", "0"], "k = 0 is out of range"),
        (
            vec!["sim", "--gen", g, "--k", "400"],
            "k = 400 is out of range",
        ),
        (
            vec!["sim", "--gen", g, "--mtu", "64"],
            "mtu = 64 is out of range",
        ),
        (
            vec!["sim", "--gen", g, "--link-gbps", "0"],
            "link-gbps = 0 is out of range",
        ),
        (
            vec!["sim", "--gen", g, "--spines", "0"],
            "spines = 0 is out of range",
        ),
        (
            vec!["sim", "--gen", g, "--sa-pr-overhead-ns=-1"],
            "sa-pr-overhead-ns = -1",
        ),
        (
            vec!["sim", "--gen", g, "--config", toml.to_str().unwrap()],
            "link-gbps = 0 is out of range",
        ),
        (
            vec!["sim", "--gen", g, "--config", bad_toml.to_str().unwrap()],
            "nodez",
        ),
        (vec!["sim", "--gen", "rmat:a=0.9"], "must be 1"),
        (vec!["sim", "--gen", "grid2d:nx=0"], "nx=0"),
        (vec!["sim", "--gen", "torus"], "unknown generator \"torus\""),
        (
            vec!["sim", "--gen", g, "--mode", "warp"],
            "unknown mode \"warp\"",
        ),
        (vec!["sim", "--gen", g, "--sweep", "warp=1,2"], "warp"),
        (vec!["sim", "--gen", g, "--sweep", "k=1,9999"], "k = 9999"),
        (
            vec!["sim", "--matrix", "/nonexistent/x.mtx"],
            "cannot open /nonexistent/x.mtx",
        ),
        (
            vec!["sim", "--matrix", zero_based.to_str().unwrap()],
            "line 3: row index 0",
        ),
        (
            vec!["matrix", "info", too_few.to_str().unwrap()],
            "file ends after 2 entries",
        ),
        (
            vec![
                "matrix",
                "gen",
                "rmat",
                "--abcd",
                "0.5,0.5,0.5,0.5",
                "-o",
                "/tmp/never.mtx",
            ],
            "must be 1",
        ),
        (
            vec![
                "matrix",
                "gen",
                "uniform",
                "--rows",
                "2",
                "--cols",
                "2",
                "--nnz",
                "9",
                "-o",
                "/tmp/never.mtx",
            ],
            "nnz=9",
        ),
    ];
    for (args, needle) in cases {
        refused(&args, needle);
    }
    let part = dir.path().join("p.txt");
    std::fs::write(&part, "0 3\n4 6\n").unwrap();
    let o = run(&[
        "sim",
        "--matrix",
        data("general_real.mtx").to_str().unwrap(),
        "--partition",
        part.to_str().unwrap(),
        "--nodes",
        "2",
        "--racks",
        "1",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("p.txt:2: range starts at 4, expected 3"),
        "{err}"
    );
}

/// Whether the SVG has a text element reading exactly `t`.
fn has_text(svg: &str, t: &str) -> bool {
    svg.contains(&format!(">\n{t}\n</text>")) || svg.contains(&format!(">{t}</text>"))
}

#[test]
fn ctrl_c_stops_cleanly_with_partial_statistics() {
    let child = bin()
        .args([
            "sim",
            "--gen",
            "rmat:scale=19,ef=16",
            "--nodes",
            "16",
            "--racks",
            "2",
            "-q",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let k = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(k.success());
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(130), "stdout: {out}\nstderr: {err}");
    assert!(out.contains("partial statistics"), "{out}");
    assert!(err.contains("stopped by Ctrl-C"), "{err}");
}

/// `matrix info --racks` prints the paper's statistics, hand-counted here on
/// the 3x3 grid, with the paper's values beside them on request; bad racks
/// name the value.
#[test]
fn matrix_info_paper_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("g.mtx");
    let fs = f.to_str().unwrap();
    let o = run(&[
        "matrix", "gen", "grid2d", "--nx", "3", "--ny", "3", "-o", fs,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let o = run(&[
        "matrix", "info", fs, "--nodes", "3", "--racks", "1", "--paper", "queen",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // Node 0 and node 2 each need columns 3, 4, 5; node 1 needs 0-2 and
    // 6-8: 12 useful transfers; SU sends 6 to each node (18), SA one per
    // remote nonzero (12); nodes 0 and 2 share their 6.
    assert!(
        out.contains("SU (Table 1)      1:0.50   (paper: 1:74)"),
        "{out}"
    );
    assert!(
        out.contains("SA (Table 1)      1:0.00   (paper: 1:25)"),
        "{out}"
    );
    assert!(out.contains("0.00 of 2   (paper: 1.00)"), "{out}");
    assert!(out.contains("rack     50.0%"), "{out}");
    assert!(
        out.contains("(12 useful PRs, 18 SU and 12 SA transfers, 0 windows of 64)"),
        "{out}"
    );
    for (racks, needle) in [
        ("2", "--racks 2: must divide --nodes 3"),
        ("0", "--racks 0"),
    ] {
        let o = run(&["matrix", "info", fs, "--nodes", "3", "--racks", racks]);
        let (_, err) = text(&o);
        assert_ne!(o.status.code(), Some(0));
        assert!(err.contains(needle), "{err}");
    }
    let o = run(&[
        "matrix", "info", fs, "--nodes", "3", "--racks", "1", "--paper", "nope",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
}

#[test]
fn sim_spin_workloads() {
    let dir = std::env::temp_dir().join(format!("sim-spin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("pp.json");
    let o = run(&[
        "sim",
        "--workload",
        "pingpong",
        "--sizes",
        "64,4096",
        "--json",
        json.to_str().unwrap(),
        "--plot-dir",
        dir.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("half round trip"), "{out}");
    let svg = std::fs::read_to_string(dir.join("spin_pingpong.svg")).expect("the plot");
    assert!(svg.contains("<svg") && svg.contains("sPIN") && svg.contains("RDMA"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert!(r["spin_ns"].as_f64().unwrap() < r["rdma_ns"].as_f64().unwrap());
    }
    assert_eq!(doc["params"]["o_ns"].as_f64(), Some(65.0));
    // Bad input: a clear error and exit status 2, never a panic.
    for (args, want) in [
        (&["sim", "--workload", "nope"][..], "unknown workload"),
        (
            &["sim", "--workload", "bcast", "--nodes", "40"][..],
            "2 to 16 nodes",
        ),
        (
            &["sim", "--workload", "strided", "--sizes", "0"][..],
            "at least 1 byte",
        ),
        (&["sim", "--sizes", "64"][..], "--workload"),
    ] {
        refused(args, want);
    }
}
