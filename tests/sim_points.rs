//! Several simulated runs at once (`RunOptions::jobs`, `sim --jobs`): the
//! reports of a sweep's points run two or three at a time equal, byte for
//! byte (wall-clock fields aside), those of running them one after another;
//! a stop ends every run in flight and hands out no more; the CLI's
//! `--jobs` gives the same JSON as `--jobs 1` and refuses 0.

use std::process::Command;

use netsparse::programs::ProgramCache;
use netsparse::sim::cluster::RunOptions;
use netsparse::sim::config::SimConfig;
use netsparse::sim::matrix::{CsrMatrix, GenSpec};
use netsparse::sim::partition::Partition;
use netsparse::sim::points::{simulate_points, Point, PHASE_CONCURRENT};
use netsparse::sim::report::{MatrixSummary, Report};
use netsparse::sim::{Mode, Progress};

mod sim_support;
use sim_support::first_difference;

fn matrix() -> (CsrMatrix, MatrixSummary) {
    let spec: GenSpec = "rmat:scale=10,ef=6".parse().unwrap();
    let (m, _) = spec.generate(5).unwrap();
    let s = MatrixSummary {
        name: "t".into(),
        rows: m.rows(),
        cols: m.cols(),
        nnz: m.nnz(),
        duplicates: 0,
    };
    (m, s)
}

/// Two points (K = 1 and K = 16) on 8 nodes in 2 racks.
fn configs() -> Vec<SimConfig> {
    [1u32, 16]
        .iter()
        .map(|&k| SimConfig {
            nodes: 8,
            racks: 2,
            k,
            ..SimConfig::default()
        })
        .collect()
}

const MODES: [Mode; 5] = [Mode::Su, Mode::Sa, Mode::Rig, Mode::Filter, Mode::NetSparse];

fn run(
    jobs: usize,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<Report>, netsparse::sim::SimError> {
    let (m, summary) = matrix();
    let cfgs = configs();
    let parts: Vec<Partition> = cfgs
        .iter()
        .map(|c| Partition::equal(&m, c.nodes).unwrap())
        .collect();
    let points: Vec<Point<'_>> = cfgs
        .iter()
        .zip(&parts)
        .map(|(cfg, part)| Point { cfg, part })
        .collect();
    simulate_points(
        &m,
        &summary,
        &points,
        &MODES,
        &RunOptions {
            threads: 1,
            jobs,
            ..RunOptions::default()
        },
        &mut ProgramCache::new(),
        progress,
    )
}

/// The reports as JSON, wall-clock figures zeroed.
fn json(mut reports: Vec<Report>) -> String {
    for r in &mut reports {
        for mr in &mut r.modes {
            if let Some(s) = mr.run.as_mut() {
                s.clear_wall_clock();
            }
        }
    }
    serde_json::to_string_pretty(&reports).unwrap()
}

#[test]
fn runs_at_once_give_the_reports_of_runs_one_after_another() {
    let one = run(1, &mut |_| true).unwrap();
    assert_eq!(one.len(), 2);
    for r in &one {
        assert_eq!(r.modes.len(), MODES.len());
        assert!(!r.stopped);
        r.check().unwrap();
    }
    // The first point's first simulated mode compiled the programs.
    let compiled = |r: &Report, i: usize| r.modes[i].run.as_ref().unwrap().compilations;
    assert!(compiled(&one[0], 2) > 0);
    let one = json(one);
    for jobs in [2, 3] {
        let mut phases = Vec::new();
        let at_once = run(jobs, &mut |p| {
            phases.push(p.phase);
            true
        })
        .unwrap();
        assert!(
            phases.contains(&PHASE_CONCURRENT),
            "the simulated runs report progress together: {phases:?}"
        );
        let at_once = json(at_once);
        if at_once != one {
            panic!("jobs = {jobs}: {}", first_difference(&one, &at_once));
        }
    }
}

#[test]
fn a_stop_ends_the_runs_in_flight_and_starts_no_more() {
    let mut calls = 0;
    let reports = run(2, &mut |p| {
        calls += 1;
        // Stop at the first progress of the simulated runs.
        p.phase != PHASE_CONCURRENT
    })
    .unwrap();
    assert!(calls > 0);
    assert!(!reports.is_empty());
    assert!(
        reports[0].stopped,
        "the first point's report says it stopped"
    );
    // At most the two runs handed out before the stop ran; each ended
    // early or finished.
    let simulated: usize = reports
        .iter()
        .map(|r| r.modes.iter().filter(|m| m.run.is_some()).count())
        .sum();
    assert!(simulated <= 2, "{simulated} simulated runs in the reports");
}

fn netsparse() -> Command {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
}

#[test]
fn the_cli_jobs_flag_changes_no_result_and_refuses_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = |jobs: &str| {
        let p = dir.path().join(format!("j{jobs}.json"));
        let o = netsparse()
            .args([
                "sim",
                "--gen",
                "rmat:scale=9,ef=6",
                "--nodes",
                "8",
                "--racks",
                "2",
                "--mode",
                "su,rig,netsparse",
                "--sweep",
                "k=1,4",
                "-q",
                "--threads",
                "1",
                "--jobs",
                jobs,
                "--json",
            ])
            .arg(&p)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "--jobs {jobs}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        for r in v.as_array_mut().unwrap() {
            for m in r["modes"].as_array_mut().unwrap() {
                if let Some(run) = m.get_mut("run").and_then(|r| r.as_object_mut()) {
                    for k in ["wall_secs", "setup_secs", "idxs_per_sec", "prs_per_sec"] {
                        run.remove(k);
                    }
                }
            }
        }
        v
    };
    let (a, b) = (out("1"), out("2"));
    assert_eq!(a.as_array().unwrap().len(), 2);
    assert_eq!(a, b);
    let o = netsparse()
        .args(["sim", "--gen", "rmat:scale=9", "--jobs", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "--jobs 0 is refused");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--jobs"), "{err}");
}
