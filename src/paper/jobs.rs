//! The runs of one stand-in on up to `jobs` worker threads at once
//! (`netsparse paper --jobs N`). The calling thread is the dispatcher: it
//! hands each idle worker the next run in plan order, and it alone talks to
//! the observer, writes the cache and records the results, so a stop (Ctrl-C,
//! or an observer that sets the flag) is seen before any further run is
//! handed out, exactly as with one job. A run's result does not depend on
//! which worker ran it or on what ran beside it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use crate::programs::ProgramCache;
use crate::sim::SimError;

use super::cache::Cache;
use super::plan::Planned;
use super::progress::Observer;
use super::runs::{self, Outcome, Prepared};
use super::{PaperError, PaperOptions, Results, Summary};

/// What a worker tells the dispatcher.
enum Event<'p> {
    /// Run `p` started on worker `slot`.
    Start { slot: usize, p: &'p Planned },
    /// Its progress (remote idxs done of total).
    Progress { slot: usize, done: u64, total: u64 },
    /// It ended.
    Done {
        slot: usize,
        p: &'p Planned,
        outcome: Result<Outcome, SimError>,
    },
    /// Worker `slot` panicked (a bug): the dispatcher stops handing out
    /// runs instead of waiting for it, and the panic reaches the caller
    /// when the workers are joined.
    Died { slot: usize },
}

/// Sends [`Event::Died`] if its worker unwinds.
struct Obituary<'p> {
    slot: usize,
    events: mpsc::Sender<Event<'p>>,
}

impl Drop for Obituary<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.events.send(Event::Died { slot: self.slot });
        }
    }
}

/// Why the group's loop ended early.
pub enum Ended {
    /// Every run of the group finished.
    All,
    /// A stop was requested: some runs are missing.
    Stopped,
}

/// Execute `group` (runs on `prepared`'s matrix, in plan order) with up to
/// `opts.jobs` at once; `programs` holds one program cache per worker,
/// kept across groups. Finished runs go to the cache, `results` and
/// `summary` as they end. A simulator error ends the group once the runs
/// beside it have stopped, and is returned.
#[allow(clippy::too_many_arguments)]
pub fn run_group<'p>(
    group: &[&'p Planned],
    prepared: &Prepared,
    opts: &PaperOptions,
    programs: &mut [ProgramCache],
    cache: &Cache,
    results: &mut Results,
    summary: &mut Summary,
    obs: &mut dyn Observer,
) -> Result<Ended, PaperError> {
    let user_stop = || {
        opts.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    };
    // Set when a run failed: the others stop at their next progress call.
    let abort = AtomicBool::new(false);
    let halted = || user_stop() || abort.load(Ordering::Relaxed);
    let workers = programs.len().min(group.len()).max(1);
    let mut first_error: Option<PaperError> = None;
    std::thread::scope(|s| {
        let (events, inbox) = mpsc::channel::<Event<'p>>();
        let mut hands = Vec::with_capacity(workers);
        for (slot, programs) in programs.iter_mut().take(workers).enumerate() {
            let (hand, work) = mpsc::channel::<&'p Planned>();
            hands.push(Some(hand));
            let events = events.clone();
            let halted = &halted;
            let spawned = std::thread::Builder::new()
                .name(format!("paper-job-{slot}"))
                .stack_size(64 << 20)
                .spawn_scoped(s, move || {
                    let _obituary = Obituary {
                        slot,
                        events: events.clone(),
                    };
                    for p in work {
                        if events.send(Event::Start { slot, p }).is_err() {
                            return;
                        }
                        let outcome = runs::execute(
                            prepared,
                            &p.key.config,
                            p.mode,
                            programs,
                            opts.threads,
                            opts.stop.clone(),
                            &mut |done, total| {
                                let _ = events.send(Event::Progress { slot, done, total });
                                !halted()
                            },
                        );
                        if events.send(Event::Done { slot, p, outcome }).is_err() {
                            return;
                        }
                    }
                });
            if let Err(e) = spawned {
                hands.pop();
                if hands.is_empty() {
                    first_error = Some(PaperError::Io {
                        path: "a worker thread".into(),
                        source: e,
                    });
                }
                break;
            }
        }
        drop(events);
        // Hand out the first runs, then one more each time a run ends.
        let mut next = 0;
        let mut busy = 0;
        for hand in hands.iter_mut() {
            if !give(hand, group, &mut next, halted()) {
                break;
            }
            busy += 1;
        }
        while busy > 0 {
            let Ok(ev) = inbox.recv() else { break };
            match ev {
                Event::Start { slot, p } => obs.run_start(slot, &p.label, p.work),
                Event::Progress { slot, done, total } => obs.run_progress(slot, done, total),
                Event::Died { slot } => {
                    busy -= 1;
                    abort.store(true, Ordering::Relaxed);
                    if let Some(hand) = hands.get_mut(slot) {
                        *hand = None;
                    }
                }
                Event::Done { slot, p, outcome } => {
                    busy -= 1;
                    match outcome {
                        Ok(Outcome::Done(rec)) => {
                            let rec = *rec;
                            if let Err(e) = cache.put(&p.key, &rec) {
                                abort.store(true, Ordering::Relaxed);
                                first_error.get_or_insert(e.into());
                            }
                            if !rec.verified() {
                                summary.failed.push(p.label.clone());
                            }
                            obs.run_done(slot, &p.label, rec.wall_secs, rec.verified());
                            results.insert(p, rec, false);
                            summary.runs_executed += 1;
                        }
                        // Its result is missing: the group ends Stopped.
                        Ok(Outcome::Stopped) => {}
                        Err(source) => {
                            abort.store(true, Ordering::Relaxed);
                            first_error.get_or_insert(PaperError::Sim {
                                run: p.label.clone(),
                                source: Box::new(source),
                            });
                        }
                    }
                    if let Some(hand) = hands.get_mut(slot) {
                        if give(hand, group, &mut next, halted()) {
                            busy += 1;
                        }
                    }
                }
            }
        }
        // Dropping the hands ends the workers' loops.
        hands.clear();
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    if user_stop() || group.iter().any(|p| results.get(&p.key).is_none()) {
        return Ok(Ended::Stopped);
    }
    Ok(Ended::All)
}

/// Give worker `hand` the next run, unless the loop is halted or the
/// group is done; then its hand is dropped and it exits. Returns whether it
/// got one.
fn give<'p>(
    hand: &mut Option<mpsc::Sender<&'p Planned>>,
    group: &[&'p Planned],
    next: &mut usize,
    halted: bool,
) -> bool {
    let Some(h) = hand.as_ref() else {
        return false;
    };
    match group.get(*next) {
        Some(&p) if !halted && h.send(p).is_ok() => {
            *next += 1;
            true
        }
        _ => {
            *hand = None;
            false
        }
    }
}
