//! Several simulated runs at once: [`simulate_points`] runs the selected
//! modes at every point of a sweep (one point without `--sweep`) and, with
//! [`RunOptions::jobs`] above 1, hands the simulated (point, mode) runs to
//! that many worker threads, each run on its own devices with its event
//! loop on [`RunOptions::threads`] threads. A run's result depends on
//! nothing but its point, its mode and the matrix, so the reports are those
//! of running one after the other (a test compares them).
//!
//! Why: a run's event loop leaves part of its windows to one thread (the
//! serial merge, about a third on two threads), so on a machine with few
//! cores two runs of one thread each finish sooner than the same two runs
//! one after the other on two threads each. `netsparse demo`, `sim --mode
//! rig,...,netsparse` (Table 8's steps) and `sim --sweep` have several.
//!
//! The calling thread runs the analytic modes (SU, SA) first, in order,
//! then dispatches: it alone calls `progress` (with the simulated runs'
//! idxs summed) and, when that returns `false`, stops every run in flight
//! and hands out no more. Each worker has its own clone of the program
//! cache, filled beforehand with every variant the runs need, so nothing
//! is compiled on a worker.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use crate::programs::ProgramCache;

use super::cluster::{self, RunOptions};
use super::config::SimConfig;
use super::matrix::CsrMatrix;
use super::partition::{self, Partition};
use super::report::{MatrixSummary, ModeResult, Report};
use super::{analytic, compute, hostmodel, Mode, Progress, SimError};

/// The progress phase while several simulated runs go on at once.
pub const PHASE_CONCURRENT: &str = "simulating, several runs at once";

/// One point of a sweep: a configuration and the matrix's partition under
/// it.
#[derive(Clone, Copy, Debug)]
pub struct Point<'a> {
    /// The configuration.
    pub cfg: &'a SimConfig,
    /// The partition (its node count is the configuration's).
    pub part: &'a Partition,
}

/// What fills one place of a point's report.
enum Slot {
    /// An analytic mode's result, or a simulated run done on this thread.
    Done(Box<ModeResult>),
    /// Simulated run `i` of the job list.
    Job(usize),
}

/// A worker's message to the dispatcher.
enum Msg {
    Progress {
        job: usize,
        done: u64,
        total: u64,
    },
    /// Worker `.0` finished job `.1`.
    Done(usize, usize, Box<Result<ModeResult, SimError>>),
}

/// Run `modes` at every point of `points` on matrix `m`; one report per
/// point, in order. A stop (`progress` returned `false`, or the stop flag)
/// ends the run early: the reports then hold what had finished, partial
/// results marked as such, and points not started are left out (the first
/// point always has a report).
#[allow(clippy::too_many_arguments)]
pub fn simulate_points(
    m: &CsrMatrix,
    summary: &MatrixSummary,
    points: &[Point<'_>],
    modes: &[Mode],
    opts: &RunOptions,
    programs: &mut ProgramCache,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<Report>, SimError> {
    if modes.is_empty() {
        return Err(SimError::NoModes);
    }
    let mut unique: Vec<Mode> = Vec::new();
    for &mode in modes {
        if !unique.contains(&mode) {
            unique.push(mode);
        }
    }
    for p in points {
        p.cfg.validate()?;
        if p.part.nodes() != p.cfg.nodes {
            return Err(SimError::NodeMismatch {
                partition: p.part.nodes(),
                nodes: p.cfg.nodes,
            });
        }
        for &mode in &unique {
            cluster::check_mode(p.cfg, mode)?;
        }
    }
    let simulated = points.len() * unique.iter().filter(|m| m.ablation().is_some()).count();
    let work = Work {
        m,
        summary,
        points,
        modes: &unique,
    };
    if opts.jobs <= 1 || simulated <= 1 {
        return one_after_another(work, opts, programs, progress);
    }
    at_once(work, opts, programs, progress)
}

/// What every way of running the points reads: the matrix, its summary,
/// the points and the modes (each once).
#[derive(Clone, Copy)]
struct Work<'a, 'p> {
    m: &'a CsrMatrix,
    summary: &'a MatrixSummary,
    points: &'a [Point<'p>],
    modes: &'a [Mode],
}

/// The runs in order on this thread.
fn one_after_another(
    w: Work<'_, '_>,
    opts: &RunOptions,
    programs: &mut ProgramCache,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<Report>, SimError> {
    let Work {
        m,
        summary,
        points,
        modes,
    } = w;
    let mut reports = Vec::new();
    let mut opts = Cow::Borrowed(opts);
    for p in points {
        let mut report = Report::new(summary.clone(), p.cfg.clone());
        for &mode in modes {
            let r = match mode {
                Mode::Su | Mode::Sa => analytic_mode(m, p, modes, mode, &mut opts, progress),
                _ => {
                    note_owner_needs(m, p, &[mode], &mut opts);
                    let r = cluster::run_mode(m, p.part, p.cfg, mode, programs, &opts, progress)?;
                    (r, true)
                }
            };
            let (r, go_on) = r;
            let partial = r.partial || !go_on;
            report.modes.push(r);
            if partial {
                report.stopped = true;
                break;
            }
        }
        let stopped = report.stopped || stop_set(&opts);
        reports.push(finish(report, m, p));
        if stopped {
            break;
        }
    }
    Ok(reports)
}

/// SU or SA at point `p` (SA's analysis also gives the partition's
/// per-owner needs when a later simulated mode wants them), and whether
/// `progress` let it go on.
fn analytic_mode(
    m: &CsrMatrix,
    p: &Point<'_>,
    modes: &[Mode],
    mode: Mode,
    opts: &mut Cow<'_, RunOptions>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> (ModeResult, bool) {
    if mode == Mode::Su {
        return (analytic::su(p.part, p.cfg), true);
    }
    let total = u64::from(p.part.nodes());
    let mut go_on = true;
    let a = partition::analyze(m, p.part, p.cfg.sa_cores, &mut |done| {
        go_on = progress(Progress {
            phase: "SAOpt: per-core remote idxs",
            done: u64::from(done),
            total,
        });
        go_on
    });
    let partial = a.nodes.len() < p.part.nodes() as usize;
    if !partial && cluster::needs_owner_loads(p.cfg, modes) {
        let fresh = opts.owner_needs.as_ref().is_none_or(|n| !n.fits(m, p.part));
        if fresh {
            opts.to_mut().owner_needs = Some(Arc::new(partition::OwnerNeeds::of(&a, p.part)));
        }
    }
    (analytic::sa(&a, p.cfg, partial), go_on)
}

/// Count the partition's per-owner needs for `modes` at `p` when they need
/// them and `opts` has none for this partition.
fn note_owner_needs(m: &CsrMatrix, p: &Point<'_>, modes: &[Mode], opts: &mut Cow<'_, RunOptions>) {
    if cluster::needs_owner_loads(p.cfg, modes) {
        let needs = partition::OwnerNeeds::reuse_or_count(opts.owner_needs.as_ref(), m, p.part);
        opts.to_mut().owner_needs = Some(needs);
    }
}

fn stop_set(opts: &RunOptions) -> bool {
    opts.stop
        .as_ref()
        .is_some_and(|s| s.load(Ordering::Relaxed))
}

/// A point's report once its modes are in: the comparisons, and the
/// end-to-end figures of the compute model.
fn finish(mut report: Report, m: &CsrMatrix, p: &Point<'_>) -> Report {
    report.compare();
    // The triggered model's node times already include the kernel: its
    // end-to-end figures are in each mode's `host` block instead.
    if p.cfg.compute != compute::ComputeModel::None
        && p.cfg.host_model != hostmodel::HostModel::Triggered
    {
        let work = compute::node_work(m, p.part);
        report.apply_compute(&work, (m.nnz(), u64::from(m.rows())));
    }
    report
}

/// The simulated runs on `opts.jobs` worker threads.
fn at_once(
    w: Work<'_, '_>,
    opts: &RunOptions,
    programs: &mut ProgramCache,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Vec<Report>, SimError> {
    let Work {
        m,
        summary,
        points,
        modes,
    } = w;
    // The analytic modes, and each point's options (its owner needs).
    let mut jobs: Vec<(usize, Mode)> = Vec::new();
    let mut slots: Vec<Vec<Slot>> = Vec::new();
    let mut point_opts: Vec<RunOptions> = Vec::new();
    let mut stopped = false;
    let mut shared = Cow::Borrowed(opts);
    for (i, p) in points.iter().enumerate() {
        let mut row = Vec::new();
        for &mode in modes {
            if mode.ablation().is_some() {
                row.push(Slot::Job(jobs.len()));
                jobs.push((i, mode));
                continue;
            }
            let (r, go_on) = analytic_mode(m, p, modes, mode, &mut shared, progress);
            stopped |= r.partial || !go_on;
            row.push(Slot::Done(Box::new(r)));
        }
        note_owner_needs(m, p, modes, &mut shared);
        point_opts.push(shared.as_ref().clone());
        slots.push(row);
    }
    // Every program variant first, in the runs' order: a compile error
    // ends the run before any simulation, the workers' caches compile
    // nothing, and each run's report counts the compilations it would
    // have run one after another.
    let mut compiled = Vec::with_capacity(jobs.len());
    for &(_, mode) in &jobs {
        let before = programs.compilations();
        for (which, defines) in cluster::mode_programs(mode) {
            programs.get(which, &defines)?;
        }
        compiled.push(programs.compilations() - before);
    }
    let stop = AtomicBool::new(stopped || stop_set(opts));
    let workers = opts.jobs.min(jobs.len());
    let mut results: Vec<Option<Result<ModeResult, SimError>>> =
        std::iter::repeat_with(|| None).take(jobs.len()).collect();
    let (tx, rx) = mpsc::channel::<Msg>();
    std::thread::scope(|s| {
        // The dispatcher hands out each job, so a stop it sees is seen
        // before the next job starts.
        let mut hand = Vec::with_capacity(workers);
        for w in 0..workers {
            let (jtx, jrx) = mpsc::channel::<usize>();
            hand.push(Some(jtx));
            let mut cache = programs.clone();
            let tx = tx.clone();
            let (jobs, point_opts, stop) = (&jobs, &point_opts, &stop);
            s.spawn(move || {
                for j in jrx {
                    let (i, mode) = jobs[j];
                    let p = &points[i];
                    let r = cluster::run_mode(
                        m,
                        p.part,
                        p.cfg,
                        mode,
                        &mut cache,
                        &point_opts[i],
                        &mut |pr: Progress| {
                            let _ = tx.send(Msg::Progress {
                                job: j,
                                done: pr.done,
                                total: pr.total,
                            });
                            !stop.load(Ordering::Relaxed)
                        },
                    );
                    if tx.send(Msg::Done(w, j, Box::new(r))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut next = 0;
        let mut busy = 0;
        let mut hand_out = |w: usize, next: &mut usize, busy: &mut usize, stop: bool| {
            if !stop && *next < jobs.len() {
                if let Some(h) = &hand[w] {
                    if h.send(*next).is_ok() {
                        *next += 1;
                        *busy += 1;
                        return;
                    }
                }
            }
            // Nothing more for this worker: its loop ends.
            hand[w] = None;
        };
        for w in 0..workers {
            hand_out(w, &mut next, &mut busy, stop.load(Ordering::Relaxed));
        }
        // The dispatcher: the one caller of `progress`.
        let mut seen: Vec<(u64, u64)> = vec![(0, 0); jobs.len()];
        while busy > 0 {
            let Ok(msg) = rx.recv() else { break };
            let mut free = None;
            match msg {
                Msg::Progress { job, done, total } => seen[job] = (done, total),
                Msg::Done(w, job, mut r) => {
                    busy -= 1;
                    free = Some(w);
                    if let Ok(mr) = r.as_mut() {
                        if let Some(run) = mr.run.as_mut() {
                            run.compilations = compiled[job];
                        }
                        let t = seen[job].1.max(seen[job].0);
                        seen[job] = (t, t);
                        if mr.partial {
                            stop.store(true, Ordering::Relaxed);
                        }
                    } else {
                        // An error ends the run: nothing more is handed out.
                        stop.store(true, Ordering::Relaxed);
                    }
                    results[job] = Some(*r);
                }
            }
            let (done, total) = seen.iter().fold((0, 0), |(d, t), &(a, b)| (d + a, t + b));
            let go = progress(Progress {
                phase: PHASE_CONCURRENT,
                done,
                total,
            });
            if !go || stop_set(opts) {
                stop.store(true, Ordering::Relaxed);
            }
            if let Some(w) = free {
                hand_out(w, &mut next, &mut busy, stop.load(Ordering::Relaxed));
            }
        }
        // Every worker's job channel is closed by now (a worker given
        // nothing more drops its sender), so every worker's loop ends.
    });
    // The first error in the runs' order is the run's error.
    for r in &mut results {
        if let Some(Err(_)) = r {
            if let Some(Err(e)) = r.take() {
                return Err(e);
            }
        }
    }
    let mut reports = Vec::new();
    for (p, row) in points.iter().zip(slots) {
        let mut report = Report::new(summary.clone(), p.cfg.clone());
        let mut ran_any = false;
        for slot in row {
            let r = match slot {
                Slot::Done(r) => Some(*r),
                Slot::Job(j) => {
                    let r = results[j].take().and_then(Result::ok);
                    ran_any |= r.is_some();
                    r
                }
            };
            match r {
                Some(r) => {
                    report.stopped |= r.partial;
                    report.modes.push(r);
                }
                None => report.stopped = true,
            }
        }
        if !reports.is_empty() && !ran_any && report.stopped {
            break;
        }
        reports.push(finish(report, m, p));
    }
    Ok(reports)
}
