//! `netsparse paper` resumes from its cache: a second invocation executes
//! nothing, an interrupted one (Ctrl-C, or a cache holding only some runs)
//! executes only the missing runs, and a corrupt cache file is reported
//! and its run executed again, never trusted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use netsparse::paper::progress::{Observer, Silent};
use netsparse::paper::{self, PaperOptions, Section};
use netsparse::sim::matrix::paper::PaperMatrix;

/// Table 7 on the two smallest web-graph stand-ins: 6 runs (SU, SA,
/// NetSparse each), on 16 nodes in 2 racks.
fn small(out: &Path) -> PaperOptions {
    PaperOptions {
        scale: paper::max_scale(),
        only: vec![Section::Table7],
        matrices: vec![PaperMatrix::Europe, PaperMatrix::Uk],
        out: out.to_path_buf(),
        nodes: 16,
        racks: 2,
        version: "test".into(),
        ..PaperOptions::default()
    }
}

fn cache_files(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

/// The report's sections without the invocation's summary and run log
/// (which say what was cached and how long it took).
fn results(out: &Path) -> serde_json::Value {
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let o = j.as_object_mut().unwrap();
    o.remove("summary");
    o.remove("runs");
    o.remove("setup");
    j
}

/// Each run's label and the memory sampled while it ran, from the run log
/// of `report.json`.
fn run_memory(out: &Path) -> Vec<(String, Option<u64>)> {
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    j["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_owned(),
                r["peak_rss"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn second_invocation_reuses_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small(dir.path());
    let first = paper::run(&opts, &mut Silent).unwrap();
    assert_eq!(first.runs_planned, 6);
    assert_eq!((first.runs_executed, first.runs_cached), (6, 0));
    assert_eq!(cache_files(dir.path()).len(), 6);
    let before = results(dir.path());
    let memory = run_memory(dir.path());
    if std::path::Path::new("/proc/self/status").exists() {
        // Each run's sample is the process's resident memory in bytes
        // (this test process holds more than a MiB), at most the peak the
        // summary reports.
        let peak = first.peak_rss.expect("VmHWM is readable");
        for (label, m) in &memory {
            let m = m.unwrap_or_else(|| panic!("{label}: no memory sampled"));
            assert!(m >= 1 << 20 && m <= peak, "{label}: {m} of {peak}");
        }
    } else {
        eprintln!("skipping the per-run memory check: no /proc/self/status here");
    }
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| process memory at its highest while it ran |"));

    let second = paper::run(&opts, &mut Silent).unwrap();
    assert_eq!(second.runs_executed, 0, "{second:?}");
    assert_eq!(second.runs_cached, 6);
    assert!(second.corrupt.is_empty());
    // The same numbers, from the cache, and each run's memory as measured
    // when it ran.
    assert_eq!(results(dir.path()), before);
    assert_eq!(run_memory(dir.path()), memory);

    // Another binary version is another key: everything runs again, here
    // with the event loop on two threads, which gives the same numbers.
    let mut other = opts.clone();
    other.version = "test-2".into();
    other.threads = 2;
    let third = paper::run(&other, &mut Silent).unwrap();
    assert_eq!(third.runs_executed, 6);
    assert_eq!(results(dir.path()), before);
}

/// Sets the stop flag (as Ctrl-C does) once `after` runs have finished.
struct StopAfter {
    after: usize,
    done: usize,
    stop: Arc<AtomicBool>,
}

impl Observer for StopAfter {
    fn run_done(&mut self, _slot: usize, _label: &str, _wall: f64, _verified: bool) {
        self.done += 1;
        if self.done >= self.after {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// [`small`] with `jobs` at once, stopped (as by Ctrl-C) once two runs
/// have finished: its options, the stop flag and the invocation's summary.
fn stopped_after_two(out: &Path, jobs: usize) -> (PaperOptions, Arc<AtomicBool>, paper::Summary) {
    let stop = Arc::new(AtomicBool::new(false));
    let mut opts = small(out);
    opts.jobs = jobs;
    opts.stop = Some(stop.clone());
    let mut obs = StopAfter {
        after: 2,
        done: 0,
        stop: stop.clone(),
    };
    let s = paper::run(&opts, &mut obs).unwrap();
    (opts, stop, s)
}

#[test]
fn interrupted_run_resumes_only_the_missing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (opts, stop, s) = stopped_after_two(dir.path(), 1);
    assert!(s.interrupted);
    assert_eq!((s.runs_executed, s.runs_missing), (2, 4), "{s:?}");
    assert_eq!(cache_files(dir.path()).len(), 2);
    // The partial report is written, with the missing cells empty.
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("interrupted"), "{md}");

    stop.store(false, Ordering::Relaxed);
    let s = paper::run(&opts, &mut Silent).unwrap();
    assert!(!s.interrupted);
    assert_eq!(
        (s.runs_executed, s.runs_cached, s.runs_missing),
        (4, 2, 0),
        "{s:?}"
    );

    // A cache holding only some runs (files deleted): only those run again.
    let files = cache_files(dir.path());
    std::fs::remove_file(&files[0]).unwrap();
    std::fs::remove_file(&files[3]).unwrap();
    let s = paper::run(&opts, &mut Silent).unwrap();
    assert_eq!((s.runs_executed, s.runs_cached), (2, 4), "{s:?}");
}

#[test]
fn corrupt_cache_files_are_reported_and_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small(dir.path());
    paper::run(&opts, &mut Silent).unwrap();
    let before = results(dir.path());
    let files = cache_files(dir.path());
    // Half a file (as a crash mid-write would leave without the rename).
    let text = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[1], &text[..text.len() / 2]).unwrap();
    // A well-formed file holding another run's key and result.
    std::fs::copy(&files[4], &files[2]).unwrap();

    let s = paper::run(&opts, &mut Silent).unwrap();
    assert_eq!(s.corrupt.len(), 2, "{s:?}");
    assert!(
        s.corrupt.iter().any(|c| c.contains("not a cached run")),
        "{:?}",
        s.corrupt
    );
    assert!(
        s.corrupt
            .iter()
            .any(|c| c.contains("holds a different run")),
        "{:?}",
        s.corrupt
    );
    assert_eq!((s.runs_executed, s.runs_cached), (2, 4));
    assert_eq!(results(dir.path()), before);
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("Corrupt cache file"), "{md}");

    // Rewritten: the next invocation trusts them again.
    let s = paper::run(&opts, &mut Silent).unwrap();
    assert_eq!((s.runs_executed, s.corrupt.len()), (0, 0));
}

/// Runs started and finished per worker slot, the stand-ins generated
/// and the notes.
#[derive(Default)]
struct Slots {
    started: std::collections::BTreeMap<usize, usize>,
    done: std::collections::BTreeMap<usize, usize>,
    generated: Vec<String>,
    notes: Vec<String>,
    /// (label, work) of each run, in the order they started.
    starts: Vec<(String, u64)>,
}

impl Observer for Slots {
    fn matrix(&mut self, _slot: usize, spec: &str) {
        self.generated.push(spec.to_string());
    }
    fn note(&mut self, msg: &str) {
        self.notes.push(msg.to_string());
    }
    fn run_start(&mut self, slot: usize, label: &str, work: u64) {
        *self.started.entry(slot).or_default() += 1;
        self.starts.push((label.to_string(), work));
    }
    fn run_done(&mut self, slot: usize, _label: &str, _wall: f64, _verified: bool) {
        *self.done.entry(slot).or_default() += 1;
    }
}

/// `--jobs 2` executes the runs two at a time and writes the same report
/// as one at a time; a stop while two are running keeps every run that
/// finished (in the cache) and the next invocation runs only the rest.
#[test]
fn two_jobs_at_once_give_the_same_report_and_resume() {
    let one = tempfile::tempdir().unwrap();
    paper::run(&small(one.path()), &mut Silent).unwrap();
    let before = results(one.path());

    let two = tempfile::tempdir().unwrap();
    let mut opts = small(two.path());
    opts.jobs = 2;
    let mut seen = Slots::default();
    let s = paper::run(&opts, &mut seen).unwrap();
    assert_eq!((s.runs_executed, s.runs_cached), (6, 0), "{s:?}");
    assert_eq!(results(two.path()), before);
    // Both workers ran, and each run started and ended on one.
    assert_eq!(seen.started.keys().copied().collect::<Vec<_>>(), [0, 1]);
    assert_eq!(seen.started, seen.done);
    // uk was generated while europe's last run still went: once its
    // three runs are out, the first worker to end is idle and the other
    // is still on a run.
    assert_eq!(s.stand_ins_beside_runs, 1, "{s:?}");
    let spec = |m: &str| format!("paper:{m}/{}", paper::max_scale());
    assert_eq!(seen.generated, [spec("europe"), spec("uk")]);
    assert!(seen.notes.is_empty(), "{:?}", seen.notes);
    // Each stand-in's longest run is handed out first (starts are reported
    // as runs are handed out, so in that order).
    for m in ["europe", "uk"] {
        let runs: Vec<&(String, u64)> = seen
            .starts
            .iter()
            .filter(|(l, _)| l.starts_with(&spec(m)))
            .collect();
        let longest = runs.iter().map(|r| r.1).max().unwrap();
        assert_eq!(runs[0].1, longest, "{m}: {runs:?}");
        assert!(runs.iter().skip(1).all(|r| r.1 < longest), "{m}: {runs:?}");
    }

    // With two at once the estimate held is more than the largest run's.
    assert!(s.memory_admitted > s.memory_estimate, "{s:?}");

    // A memory limit that holds the largest run alone: two runs go at once
    // only where their estimates fit together, uk waits for europe's runs
    // to end, notes say both, and the numbers are the same.
    let tight = tempfile::tempdir().unwrap();
    let mut opts = small(tight.path());
    opts.jobs = 2;
    opts.memory_limit = Some(s.memory_estimate);
    let mut seen = Slots::default();
    let t = paper::run(&opts, &mut seen).unwrap();
    assert_eq!((t.runs_executed, t.stand_ins_beside_runs), (6, 0), "{t:?}");
    assert!(t.memory_admitted <= s.memory_estimate, "{t:?}");
    assert_eq!(results(tight.path()), before);
    assert_eq!(seen.notes.len(), 2, "{:?}", seen.notes);
    assert!(
        seen.notes[0].starts_with("2 of the largest run"),
        "{:?}",
        seen.notes
    );
    assert!(
        seen.notes[1].contains(&format!(
            "generating {} beside the runs of {}",
            spec("uk"),
            spec("europe")
        )),
        "{:?}",
        seen.notes
    );

    let dir = tempfile::tempdir().unwrap();
    let (opts, stop, s) = stopped_after_two(dir.path(), 2);
    assert!(s.interrupted, "{s:?}");
    // The run beside the second may have finished before it saw the stop.
    assert!((2..=3).contains(&s.runs_executed), "{s:?}");
    assert_eq!(s.runs_executed + s.runs_missing, 6, "{s:?}");
    assert_eq!(cache_files(dir.path()).len(), s.runs_executed);
    let kept = s.runs_executed;
    stop.store(false, Ordering::Relaxed);
    let s = paper::run(&opts, &mut Silent).unwrap();
    assert_eq!((s.runs_executed, s.runs_cached), (6 - kept, kept), "{s:?}");
    assert_eq!(results(dir.path()), before);
}

/// `--report-only` rebuilds the report from the cache alone: the same
/// numbers, nothing executed; the CLI finds the runs' version in the old
/// `report.json`. Runs missing from the cache (another version, a deleted
/// file, no cache at all) are refused with nothing written.
#[test]
fn report_only_rebuilds_from_the_cache_alone() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small(dir.path());
    paper::run(&opts, &mut Silent).unwrap();
    let before = results(dir.path());
    let md_path = dir.path().join("report.md");
    std::fs::remove_file(&md_path).unwrap();

    let mut only = opts.clone();
    only.report_only = true;
    let s = paper::run(&only, &mut Silent).unwrap();
    assert!(s.report_only);
    assert_eq!((s.runs_executed, s.runs_cached, s.runs_missing), (0, 6, 0));
    assert_eq!(results(dir.path()), before);
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(
        md.contains("rebuilt from them by `netsparse paper --report-only`"),
        "{md}"
    );
    assert_eq!(cache_files(dir.path()).len(), 6);

    // Another version's runs are not there: refused, the report untouched.
    let mut other = only.clone();
    other.version = "test-2".into();
    let e = paper::run(&other, &mut Silent).unwrap_err().to_string();
    assert!(e.contains("6 of 6 runs are not in"), "{e}");
    assert!(e.contains("version test-2"), "{e}");
    assert_eq!(std::fs::read_to_string(&md_path).unwrap(), md);
    // One run's file deleted: refused, naming one missing run.
    let files = cache_files(dir.path());
    std::fs::remove_file(&files[2]).unwrap();
    let e = paper::run(&only, &mut Silent).unwrap_err().to_string();
    assert!(e.contains("1 of 6 runs are not in"), "{e}");
    assert_eq!(std::fs::read_to_string(&md_path).unwrap(), md);
    assert_eq!(
        cache_files(dir.path()).len(),
        5,
        "report-only executed a run"
    );
    // No cache at all: refused before anything is created.
    let none = dir.path().join("none");
    let mut empty = only.clone();
    empty.out = none.clone();
    let e = paper::run(&empty, &mut Silent).unwrap_err().to_string();
    assert!(e.contains("6 of 6 runs are not in"), "{e}");
    assert!(!none.exists());

    // The setup and the runs' version ("test") read back from report.json
    // plan exactly its runs.
    paper::run(&opts, &mut Silent).unwrap(); // the deleted run again
    let back = paper::report::options_of(
        &dir.path().join("report.json"),
        &PaperOptions {
            out: dir.path().to_path_buf(),
            report_only: true,
            ..PaperOptions::default()
        },
    )
    .unwrap();
    assert_eq!(back.version, "test");
    assert_eq!((back.scale, back.nodes, back.racks), (opts.scale, 16, 2));
    let s = paper::run(&back, &mut Silent).unwrap();
    assert_eq!((s.runs_planned, s.runs_cached, s.runs_executed), (6, 6, 0));
    assert_eq!(results(dir.path()), before);

    // So the CLI needs only --out; setup flags beside --report-only are a
    // usage error, and --runs-version picks other runs.
    let bin = env!("CARGO_BIN_EXE_netsparse");
    let cli = |extra: &[&str]| {
        std::process::Command::new(bin)
            .args(["paper", "--report-only", "-q", "--out"])
            .arg(dir.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let o = cli(&[]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}{err}");
    assert!(err.contains("the cached runs of version test in"), "{err}");
    assert!(
        out.contains("6 runs from the cache of version test"),
        "{out}"
    );
    assert_eq!(results(dir.path()), before);
    let o = cli(&["--runs-version", "nope"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("6 of 6 runs are not in"), "{err}");
    let o = cli(&["--scale", "4"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
    // A file that is not a report: named, and nothing else is written.
    let md = std::fs::read_to_string(&md_path).unwrap();
    std::fs::write(dir.path().join("report.json"), "{}").unwrap();
    let o = cli(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("report.json: not a report of `netsparse paper`: missing field"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&md_path).unwrap(), md);
}

/// `plan_only` says which runs the cache holds, in the order the run log
/// has them, and creates nothing: before a run all six are to run, after
/// it none is, and with one file deleted and one corrupted those two are.
#[test]
fn plan_only_reports_what_the_cache_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let opts = small(&out);
    let before = paper::plan_only(&opts, &mut Silent).unwrap();
    assert_eq!(before.runs.len(), 6);
    assert_eq!(before.to_run().count(), 6);
    assert!(before.runs.iter().all(|r| r.memory > 0 && r.work > 0));
    assert!(!out.exists(), "the plan created {}", out.display());

    paper::run(&opts, &mut Silent).unwrap();
    let labels: Vec<String> = run_memory(&out).into_iter().map(|(l, _)| l).collect();
    let after = paper::plan_only(&opts, &mut Silent).unwrap();
    assert_eq!(
        after
            .runs
            .iter()
            .map(|r| r.label.clone())
            .collect::<Vec<_>>(),
        labels
    );
    assert_eq!(after.to_run().count(), 0, "{after:?}");
    assert!(
        after.runs.iter().all(|r| r.wall_secs.is_some()),
        "{after:?}"
    );
    assert_eq!(after.eta_secs, 0.0);
    assert!(before.eta_secs > 0.0, "{before:?}");

    let files = cache_files(&out);
    std::fs::remove_file(&files[0]).unwrap();
    std::fs::write(&files[3], b"{not json").unwrap();
    let mut notes = Notes::default();
    let later = paper::plan_only(&opts, &mut notes).unwrap();
    assert_eq!(later.to_run().count(), 2, "{later:?}");
    assert_eq!(later.corrupt.len(), 1, "{later:?}");
    assert!(later.corrupt[0].contains("not a cached run"), "{later:?}");
    assert!(
        notes.0.iter().any(|n| n.contains("would be repeated")),
        "{:?}",
        notes.0
    );
    // Nothing was repaired or executed.
    assert_eq!(cache_files(&out).len(), 5);
    assert_eq!(std::fs::read(&files[3]).unwrap(), b"{not json");
}

/// Collects the notes.
#[derive(Default)]
struct Notes(Vec<String>);

impl Observer for Notes {
    fn note(&mut self, msg: &str) {
        self.0.push(msg.to_owned());
    }
}

/// A user's program is part of a run's key by its text: the runs that use
/// it execute again (the analytic SU and SA runs do not), a second
/// invocation takes them from the cache, an edited file runs again, a
/// program that does not compile stops the invocation before any run, and
/// the report names the program.
#[test]
fn a_users_program_keys_its_runs_by_its_text() {
    use netsparse::programs::{Bundled, UserProgram};
    let dir = tempfile::tempdir().unwrap();
    let mut opts = small(dir.path());
    opts.matrices = vec![PaperMatrix::Europe];
    let first = paper::run(&opts, &mut Silent).unwrap();
    assert_eq!(first.runs_executed, 3);
    let bundled = results(dir.path());

    let tor_text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/netsparse_tor.p4"),
    )
    .unwrap();
    let tor = dir.path().join("my_tor.p4");
    let mut user = opts.clone();
    user.programs = vec![(Bundled::Tor, UserProgram::new(&tor, tor_text.clone()))];
    let second = paper::run(&user, &mut Silent).unwrap();
    // SU and SA from the cache; NetSparse runs the user's ToR program.
    assert_eq!((second.runs_executed, second.runs_cached), (1, 2));
    // The bundled text under another name: the same numbers.
    assert_eq!(results(dir.path()), bundled);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(j["setup"]["programs"][0]["role"], "ToR");
    assert_eq!(j["setup"]["programs"][0]["file"], tor.display().to_string());
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("Users' programs: the ToR program is"), "{md}");
    assert_eq!(paper::run(&user, &mut Silent).unwrap().runs_executed, 0);

    // An edit is another key.
    let edited = tor_text.replacen("            Insert(pr, md);", "", 1);
    assert_ne!(edited, tor_text);
    user.programs = vec![(Bundled::Tor, UserProgram::new(&tor, edited))];
    assert_eq!(paper::run(&user, &mut Silent).unwrap().runs_executed, 1);
    assert_ne!(results(dir.path()), bundled);

    // One that does not compile: refused before any run.
    user.programs = vec![(Bundled::Tor, UserProgram::new(&tor, "control X( {".into()))];
    let e = paper::run(&user, &mut Silent).unwrap_err().to_string();
    assert!(
        e.contains("(the ToR program, in place of programs/netsparse_tor.p4) does not compile"),
        "{e}"
    );
}

#[test]
fn a_users_commands_key_their_runs_by_their_text() {
    use netsparse::programs::{Bundled, UserCommands};
    let dir = tempfile::tempdir().unwrap();
    let mut opts = small(dir.path());
    opts.matrices = vec![PaperMatrix::Europe];
    assert_eq!(paper::run(&opts, &mut Silent).unwrap().runs_executed, 3);
    let bundled = results(dir.path());

    // The solver's default action set again: the same numbers.
    let file = dir.path().join("nic.txt");
    let same = "table_set_default HostToNet.dest_solver unroutable\n";
    let mut user = opts.clone();
    user.commands = vec![(Bundled::Nic, UserCommands::new(&file, same.into()))];
    let second = paper::run(&user, &mut Silent).unwrap();
    // SU and SA from the cache (they run no NIC program); NetSparse again.
    assert_eq!((second.runs_executed, second.runs_cached), (1, 2));
    assert_eq!(results(dir.path()), bundled);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(j["setup"]["commands"][0]["role"], "NIC");
    assert_eq!(
        j["setup"]["commands"][0]["file"],
        file.display().to_string()
    );
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("Users' commands: `"), "{md}");
    assert_eq!(paper::run(&user, &mut Silent).unwrap().runs_executed, 0);

    // Another text is another key, even a comment.
    let commented = format!("# again\n{same}");
    user.commands = vec![(Bundled::Nic, UserCommands::new(&file, commented))];
    assert_eq!(paper::run(&user, &mut Silent).unwrap().runs_executed, 1);

    // Commands the program refuses: stopped before any run.
    user.commands = vec![(
        Bundled::Nic,
        UserCommands::new(
            &file,
            "table_add HostToNet.no_such unroutable 1 =>\n".into(),
        ),
    )];
    let e = paper::run(&user, &mut Silent).unwrap_err().to_string();
    assert!(
        e.contains("the NIC commands do not fit the NIC program")
            && e.contains("nic.txt:1: no table named `HostToNet.no_such`"),
        "{e}"
    );

    // Spine commands that repeat a key of the simulator's own entries:
    // stopped before any run, naming the spine.
    let spine = dir.path().join("spine.txt");
    user.commands = vec![(
        Bundled::Spine,
        UserCommands::new(&spine, "table_add node_port set_port 0 => 1\n".into()),
    )];
    let e = paper::run(&user, &mut Silent).unwrap_err().to_string();
    assert!(
        e.contains("spine0: the spine commands after the simulator's own entries")
            && e.contains("spine.txt:1: table `SpineIngress.node_port` already has an entry"),
        "{e}"
    );
}
