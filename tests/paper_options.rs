//! `netsparse paper` refuses bad options, naming the parameter and its
//! valid range, and refuses runs that will not fit in memory before
//! anything is generated or written.

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use netsparse::paper::{self, progress::Silent, PaperError, PaperOptions};

fn err(o: PaperOptions) -> String {
    match paper::run(&o, &mut Silent) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_options_name_the_parameter_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let base = PaperOptions {
        out: out.clone(),
        version: "test".into(),
        ..PaperOptions::default()
    };
    let max = paper::max_scale();
    let e = err(PaperOptions {
        scale: 0,
        ..base.clone()
    });
    assert!(e.starts_with("--scale = 0 is out of range: 1..="), "{e}");
    let e = err(PaperOptions {
        scale: max + 1,
        ..base.clone()
    });
    assert!(
        e.contains(&format!("--scale = {} is out of range: 1..={max}", max + 1)),
        "{e}"
    );
    let e = err(PaperOptions {
        nodes: 1,
        ..base.clone()
    });
    assert!(
        e.starts_with("--nodes = 1 is out of range: 2..=1024"),
        "{e}"
    );
    let e = err(PaperOptions {
        racks: 7,
        ..base.clone()
    });
    assert!(
        e.starts_with("--racks = 7 is out of range: a divisor of --nodes 128"),
        "{e}"
    );
    for jobs in [0, 65] {
        let e = err(PaperOptions {
            jobs,
            ..base.clone()
        });
        assert!(
            e.starts_with(&format!("--jobs = {jobs} is out of range: 1..=64")),
            "{e}"
        );
    }
    let e = "fig99".parse::<paper::Section>().unwrap_err().to_string();
    assert!(
        e.contains("--only = fig99") && e.contains("fig12, table7"),
        "{e}"
    );
    let e = paper::parse_matrix("queen2").unwrap_err().to_string();
    assert!(
        e.contains("--matrices = queen2") && e.contains("arabic, europe"),
        "{e}"
    );
    // Nothing was written for any of them.
    assert!(!out.exists());
}

#[test]
fn runs_that_do_not_fit_are_refused_before_anything_is_generated() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // The paper's full size in 4 GiB: arabic's 640 M nonzeros (3.2 GiB
    // held) with a run's memory beside them need more.
    let o = PaperOptions {
        out: out.clone(),
        memory_limit: Some(4 << 30),
        version: "test".into(),
        ..PaperOptions::default()
    };
    // Checked with `plan_only`, which makes the same check and runs
    // nothing even if the estimate ever falls below the limit.
    let e = paper::plan_only(&o, &mut Silent).unwrap_err();
    assert!(matches!(e, PaperError::Memory(_)), "{e:?}");
    let e = e.to_string();
    assert!(
        e.starts_with("not enough memory: the largest run (paper:"),
        "{e}"
    );
    assert!(
        e.contains("but 4.00 GiB is available; --scale ") && e.contains(" would need about"),
        "{e}"
    );
    assert!(!out.exists(), "wrote before refusing");
    // The same plan fits in 1 TiB: listed, nothing written.
    let p = paper::plan_only(
        &PaperOptions {
            memory_limit: Some(1 << 40),
            ..o.clone()
        },
        &mut Silent,
    )
    .unwrap();
    assert!(
        p.runs.len() > 100 && p.to_run().count() == p.runs.len(),
        "{p:?}"
    );
    assert!(p.memory_estimate > 4 << 30, "{p:?}");
    assert_eq!(
        p.runs.iter().map(|r| r.memory).max(),
        Some(p.memory_estimate)
    );
    assert!(p.runs.iter().any(|r| r.label == p.largest));
    assert!(!out.exists(), "the plan wrote");
    // Nothing fits in 1 MiB: no scale to suggest; `run` refuses as the
    // plan does.
    let tiny = PaperOptions {
        memory_limit: Some(1 << 20),
        scale: 64,
        ..o.clone()
    };
    let e = err(tiny.clone());
    assert!(
        e.contains("but 0.00 GiB is available") && !e.contains("--scale"),
        "{e}"
    );
    assert_eq!(
        paper::plan_only(&tiny, &mut Silent)
            .unwrap_err()
            .to_string(),
        e
    );
    assert!(!out.exists(), "wrote before refusing");
}

/// More runs at once than fit in memory are not refused: the memory check
/// counts the largest run alone, and the dispatcher hands runs out only
/// while their estimates fit beside each other.
#[test]
fn runs_at_once_are_limited_by_memory_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let base = PaperOptions {
        out: out.clone(),
        scale: 64,
        only: vec![paper::Section::Table7],
        version: "test".into(),
        ..PaperOptions::default()
    };
    // One run's need, from the refusal of a tiny limit ("needs about X GiB").
    let e = err(PaperOptions {
        memory_limit: Some(1 << 20),
        jobs: 64,
        ..base.clone()
    });
    assert!(!e.contains("runs at once"), "{e}");
    let gib: f64 = e
        .split("needs about ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no need in {e:?}"));
    // A limit that holds one run but not sixty-four at once is accepted,
    // with a note; the stop flag, set before, keeps anything from running.
    let limit = ((gib + 0.01) * 1.5 * f64::from(1u32 << 30)) as u64;
    let mut notes = Notes(Vec::new());
    let s = paper::run(
        &PaperOptions {
            memory_limit: Some(limit),
            jobs: 64,
            stop: Some(Arc::new(AtomicBool::new(true))),
            ..base.clone()
        },
        &mut notes,
    )
    .unwrap();
    assert!(s.interrupted && s.runs_executed == 0, "{s:?}");
    assert!(s.peak_estimate() <= limit, "{s:?}");
    assert!(
        notes
            .0
            .iter()
            .any(|n| n.starts_with("64 of the largest run")
                && n.ends_with(
                    "runs wait while their memory estimates do not fit beside the others'"
                )),
        "{:?}",
        notes.0
    );
}

/// Collects the notes.
struct Notes(Vec<String>);

impl paper::progress::Observer for Notes {
    fn note(&mut self, msg: &str) {
        self.0.push(msg.to_owned());
    }
}

#[test]
fn cli_refuses_bad_options_with_status_2() {
    let bin = env!("CARGO_BIN_EXE_netsparse");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (args, want) in [
        (vec!["--scale", "0"], "--scale = 0 is out of range"),
        (
            vec!["--only", "fig12,fig99"],
            "--only = fig99 is out of range",
        ),
        (
            vec!["--matrices", "queen,nope"],
            "--matrices = nope is out of range",
        ),
        (vec!["--racks", "5"], "--racks = 5 is out of range"),
        (vec!["--jobs", "0"], "'0' for '--jobs <N>': 0 is not in 1..=64"),
        (
            vec!["--memory-limit=-1"],
            "--memory-limit = -1 is out of range",
        ),
        (
            vec!["--routing", "spray"],
            "'spray' for '--routing <ROUTING>': unknown routing \"spray\" (one of rack-pair, node-pair, owner, owner-load)",
        ),
    ] {
        let o = Command::new(bin)
            .arg("paper")
            .args(&args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    assert!(!out.exists());
}

/// `netsparse paper --plan` lists the runs with their memory and exits
/// without writing; a plan that does not fit exits with status 2.
#[test]
fn cli_plan_lists_the_runs_and_writes_nothing() {
    let bin = env!("CARGO_BIN_EXE_netsparse");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scale = paper::max_scale().to_string();
    let plan = |extra: &[&str]| {
        Command::new(bin)
            .args(["paper", "--plan", "-q", "--scale", &scale])
            .args(["--only", "table7", "--matrices", "europe,uk"])
            .args(["--nodes", "16", "--racks", "2", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = plan(&[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A header, six runs (SU, SA and NetSparse on each), three totals.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 10, "{stdout}");
    for m in ["europe", "uk"] {
        for mode in ["su", "sa", "netsparse"] {
            let label = format!("paper:{m}/{scale} K=16 {mode}");
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&label) && l.ends_with("to run")),
                "{label}: {stdout}"
            );
        }
    }
    assert!(
        lines[7].starts_with("6 runs planned: 0 in ")
            && lines[7].contains(", 6 to run (")
            && lines[7].ends_with("nothing was run or written"),
        "{stdout}"
    );
    assert!(
        lines[8].starts_with("the largest run alone, paper:"),
        "{stdout}"
    );
    assert!(
        lines[9].starts_with("about ") && lines[9].contains("at the reference rate"),
        "{stdout}"
    );
    assert!(!out.exists(), "--plan wrote");
    // Refused as a run would be, with status 2.
    let o = plan(&["--memory-limit", "0.0001"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not enough memory"), "{stderr}");
    assert!(!out.exists(), "--plan wrote");
    // --plan with --report-only is a usage error.
    let o = Command::new(bin)
        .args(["paper", "--plan", "--report-only", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}
