//! Native code in the simulator: the same runs with the interpreter and
//! with every device's programs compiled to native code give byte-identical
//! reports (every mode of the ablation ladder, the triggered host model,
//! K = 1), and the CLI's `--engine` does what it says when there is no
//! compiler: `native` is an error naming the cause, `auto` runs the
//! interpreter and gives the same report.
//!
//! Needs the Rust compiler that built the tests; each test uses its own
//! cache directory under the target directory.

use std::path::PathBuf;
use std::process::Command;

use netsparse::programs::ProgramCache;
use netsparse::sim::cluster::RunOptions;
use netsparse::sim::config::SimConfig;
use netsparse::sim::hostmodel::HostModel;
use netsparse::sim::matrix::GenSpec;
use netsparse::sim::partition::Partition;
use netsparse::sim::report::MatrixSummary;
use netsparse::sim::{simulate_with, Mode};
use netsparse_engine::native::{self, EngineMode};

mod sim_support;
use sim_support::first_difference;

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The JSON report of `modes` on R-MAT scale 12 under `cfg`, wall-clock
/// fields zeroed, on 2 threads.
fn report(cfg: &SimConfig, modes: &[Mode]) -> String {
    let spec: GenSpec = "rmat:scale=12,ef=4".parse().unwrap();
    let (m, _) = spec.generate(3).unwrap();
    let part = Partition::equal(&m, cfg.nodes).unwrap();
    let mut r = simulate_with(
        &m,
        MatrixSummary {
            name: "t".into(),
            rows: m.rows(),
            cols: m.cols(),
            nnz: m.nnz(),
            duplicates: 0,
        },
        &part,
        cfg,
        modes,
        &RunOptions {
            spmm: true,
            threads: 2,
            ..RunOptions::default()
        },
        &mut ProgramCache::new(),
        &mut |_| true,
    )
    .unwrap();
    r.check().unwrap();
    for mr in &mut r.modes {
        if let Some(s) = mr.run.as_mut() {
            s.clear_wall_clock();
        }
    }
    serde_json::to_string_pretty(&r).unwrap()
}

#[test]
fn native_and_interpreted_runs_give_identical_reports() {
    // The only test of this binary that loads programs in-process (the
    // other runs the CLI in child processes with their own directory).
    std::env::set_var("NETSPARSE_NATIVE_DIR", scratch("native-sim"));
    let configs = [
        (
            SimConfig {
                nodes: 16,
                racks: 4,
                ..SimConfig::default()
            },
            Mode::ALL,
        ),
        (
            SimConfig {
                nodes: 16,
                racks: 4,
                rig_batch: 256,
                host_model: HostModel::Triggered,
                compute_rate: Some(4e8),
                chunk_nnz: 1024,
                ..SimConfig::default()
            },
            &[Mode::Rig, Mode::NetSparse][..],
        ),
        (
            SimConfig {
                nodes: 16,
                racks: 4,
                k: 1,
                ..SimConfig::default()
            },
            &[Mode::Coalesce, Mode::NetSparse][..],
        ),
    ];
    for (cfg, modes) in configs {
        native::set_mode(EngineMode::Interp);
        let before = native::status().attached;
        let interp = report(&cfg, modes);
        assert_eq!(
            native::status().attached,
            before,
            "the interpreter run attached native code"
        );
        native::set_mode(EngineMode::Native);
        let native_json = report(&cfg, modes);
        let s = native::status();
        assert!(s.first_error.is_none(), "{:?}", s.first_error);
        assert!(
            s.attached > before,
            "the native run attached no native code"
        );
        assert!(
            interp == native_json,
            "K = {}, {:?}: reports differ at {}",
            cfg.k,
            modes,
            first_difference(&interp, &native_json)
        );
    }
}

fn sim(engine: &str, rustc: &str, dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args([
            "sim",
            "--gen",
            "rmat:scale=10,ef=4",
            "--nodes",
            "8",
            "--racks",
            "2",
            "--mode",
            "netsparse",
            "--json",
        ])
        .arg(dir.join(format!("{engine}.json")))
        .args(["--engine", engine])
        .env("NETSPARSE_RUSTC", rustc)
        .env("NETSPARSE_NATIVE_DIR", dir.join("cache"))
        .env("NETSPARSE_HUGEPAGES", "0")
        .output()
        .unwrap()
}

/// Zero the timing fields of a CLI report.
fn untimed(path: &std::path::Path) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    for m in v["modes"].as_array_mut().unwrap() {
        if let Some(run) = m.get_mut("run").and_then(|r| r.as_object_mut()) {
            for k in ["wall_secs", "setup_secs", "idxs_per_sec", "prs_per_sec"] {
                run.insert(k.into(), serde_json::json!(0));
            }
        }
    }
    v
}

#[test]
fn without_a_compiler_native_is_an_error_and_auto_runs_the_interpreter() {
    let dir = scratch("native-cli");
    let missing = dir.join("no-such-rustc");
    let missing = missing.to_str().unwrap();

    let o = sim("native", missing, &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(
        err.contains("--engine native") && err.contains("no-such-rustc"),
        "the error names the engine and the compiler: {err}"
    );

    // A mode that is not one names what it expected.
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args([
            "sim",
            "--gen",
            "rmat:scale=8,ef=4",
            "--nodes",
            "4",
            "--racks",
            "1",
        ])
        .env("NETSPARSE_ENGINE", "fast")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(
        err.contains("NETSPARSE_ENGINE=\"fast\"") && err.contains("auto, native or interp"),
        "{err}"
    );

    let o = sim("auto", missing, &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = sim("interp", "rustc", &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = sim("native", "rustc", &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let interp = untimed(&dir.join("interp.json"));
    assert_eq!(untimed(&dir.join("auto.json")), interp);
    assert_eq!(untimed(&dir.join("native.json")), interp);
    // The native run built its libraries in its own cache.
    let libs = std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "so"))
        })
        .count();
    assert!(libs >= 2, "{libs} libraries in the cache");
}

/// Run the CLI with `args` and `--engine engine`, writing `--json` to
/// `dir/name-engine.json`; the report with its timing fields zeroed.
fn cli_report(args: &[&str], engine: &str, dir: &std::path::Path, name: &str) -> serde_json::Value {
    let out = dir.join(format!("{name}-{engine}.json"));
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(args)
        .arg("--json")
        .arg(&out)
        .args(["--engine", engine])
        .env("NETSPARSE_NATIVE_DIR", dir.join("cache"))
        .env("NETSPARSE_HUGEPAGES", "0")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{name} ({engine}): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    fn zero(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if k.contains("wall") || k.ends_with("_per_sec") || k == "setup_secs" {
                        *x = serde_json::json!(0);
                    } else {
                        zero(x);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(zero),
            _ => {}
        }
    }
    zero(&mut v);
    v
}

/// The other workloads whose devices run compiled programs — sPIN
/// handlers (their statement counts are handler time), the OmNICCL
/// aggregators in a SmartNIC and in a NetSparse switch's middle pipes,
/// RDMA SpMM through NetSparse ToRs — give the same reports natively.
#[test]
fn spin_collectives_and_spmm2d_are_the_same_natively() {
    let dir = scratch("native-workloads");
    let runs: [(&str, &[&str]); 5] = [
        ("pingpong", &["sim", "--workload", "pingpong"]),
        ("strided", &["sim", "--workload", "strided"]),
        (
            "allreduce",
            &[
                "sim",
                "--collective",
                "allreduce",
                "--algo",
                "ring,omnireduce,omniccl",
                "--bytes",
                "262144",
                "--block",
                "1024",
                "--depth",
                "16",
                "--density",
                "0.25",
                "--workers",
                "4",
            ],
        ),
        (
            "allreduce-switch",
            &[
                "sim",
                "--collective",
                "allreduce",
                "--algo",
                "omniccl",
                "--agg-at",
                "switch",
                "--bytes",
                "262144",
                "--block",
                "1024",
                "--depth",
                "16",
                "--density",
                "0.25",
                "--workers",
                "4",
            ],
        ),
        (
            "spmm2d",
            &[
                "sim",
                "--kernel",
                "spmm2d",
                "--gen",
                "rmat:scale=9,ef=8",
                "--nodes",
                "16",
                "--racks",
                "1",
                "--k",
                "16",
            ],
        ),
    ];
    for (name, args) in runs {
        let interp = cli_report(args, "interp", &dir, name);
        let native_json = cli_report(args, "native", &dir, name);
        assert_eq!(interp, native_json, "{name}: the reports differ");
    }
}
