//! The missing runs of the evaluation on up to `jobs` worker threads at
//! once (`netsparse paper --jobs N`), stand-in after stand-in. The calling
//! thread is the dispatcher: it hands each idle worker the next run (in
//! the order of its stand-in's [`Group`]: the caller puts the longest
//! first), starts generating each stand-in on a thread of its own, and it
//! alone talks to the observer, writes the cache and records the results,
//! so a stop (Ctrl-C, or an observer that sets the flag) is seen before any
//! further run is handed out, exactly as with one job.
//!
//! What happens when is decided by [`Schedule`], a synchronous state
//! machine the dispatcher feeds with events. Once every run of a stand-in
//! has been handed out and a worker is idle, the next stand-in is generated
//! on that worker's core while the last runs go on, if the memory check
//! allows both stand-ins at once (`overlap`); at most two are ever held.
//! With one job this is the plain sequence: generate, run, run, ..., drop,
//! generate. A run's result does not depend on which worker ran it or on
//! what ran beside it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use crate::programs::ProgramCache;
use crate::sim::matrix::paper::PaperMatrix;
use crate::sim::SimError;

use super::cache::Cache;
use super::plan::Planned;
use super::progress::Observer;
use super::runs::{self, Outcome, Prepared};
use super::{PaperError, PaperOptions, Results, Summary};

/// The missing runs of one stand-in, in the order they are handed out.
pub struct Group<'p> {
    /// The stand-in.
    pub matrix: PaperMatrix,
    /// Its runs.
    pub runs: Vec<&'p Planned>,
}

/// What the dispatcher should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Hand run `index` of group `group` to worker `slot`.
    Run {
        /// The idle worker.
        slot: usize,
        /// The group.
        group: usize,
        /// The run's index in the group.
        index: usize,
    },
    /// Start generating group `group`'s stand-in, in place of idle worker
    /// `slot` (whose bar shows it).
    Generate {
        /// The group.
        group: usize,
        /// The idle worker whose core it uses.
        slot: usize,
    },
}

/// The memory estimates the dispatcher admits runs by: a run is handed out
/// only while the stand-ins held and the runs in flight, with it, stay
/// within `limit`, or when it would run alone (the memory check before
/// anything is generated made sure the largest run fits alone).
#[derive(Clone, Debug, Default)]
pub struct Budget {
    /// The memory the runs may use, bytes.
    pub limit: u64,
    /// Per group: its stand-in's matrix, bytes.
    pub matrix: Vec<u64>,
    /// Per group, per run: the run's own memory, bytes.
    pub runs: Vec<Vec<u64>>,
}

/// The dispatcher's decisions, without threads: which worker runs what,
/// and when each stand-in is generated and may be dropped.
#[derive(Debug)]
pub struct Schedule {
    /// Runs per group.
    sizes: Vec<usize>,
    /// Memory admission, if any.
    budget: Option<Budget>,
    /// Runs of the current group not yet handed out, in order.
    pending: Vec<usize>,
    /// Per worker: the memory estimate of its run (0 when idle).
    run_bytes: Vec<u64>,
    /// The most the admitted runs and held stand-ins were estimated to need
    /// at once, bytes.
    peak: u64,
    /// `overlap[g]`: group g + 1's stand-in may be generated (and its runs
    /// started) while group g's runs still go.
    overlap: Vec<bool>,
    /// The group being handed out, generated or waited for.
    cur: usize,
    /// Its stand-in exists.
    ready: bool,
    /// Its stand-in is being generated.
    generating: bool,
    /// Runs in flight per group.
    in_flight: Vec<usize>,
    /// Per worker: the group of the run it is on, if any.
    running: Vec<Option<usize>>,
    /// Workers lost (a panic): never handed work again.
    lost: Vec<bool>,
    /// Stand-ins generated while an earlier stand-in's runs still went.
    beside: usize,
}

impl Schedule {
    /// A schedule of groups of `sizes` runs on `workers` workers.
    pub fn new(sizes: Vec<usize>, overlap: Vec<bool>, workers: usize) -> Schedule {
        let n = sizes.len();
        Schedule {
            sizes,
            budget: None,
            pending: Vec::new(),
            run_bytes: vec![0; workers.max(1)],
            peak: 0,
            overlap,
            cur: 0,
            ready: false,
            generating: false,
            in_flight: vec![0; n],
            running: vec![None; workers.max(1)],
            lost: vec![false; workers.max(1)],
            beside: 0,
        }
    }

    /// Admit runs by their memory estimates ([`Budget`]).
    pub fn with_budget(mut self, budget: Budget) -> Schedule {
        self.budget = Some(budget);
        self
    }

    /// The estimate of what is held now: the stand-ins of groups with runs
    /// in flight or ready to be handed out, and the runs in flight.
    fn held(&self, b: &Budget) -> u64 {
        let matrices: u64 = (0..self.sizes.len())
            .filter(|&g| self.in_flight[g] > 0 || (g == self.cur && self.ready))
            .map(|g| b.matrix.get(g).copied().unwrap_or(0))
            .sum();
        matrices + self.run_bytes.iter().sum::<u64>()
    }

    /// Which pending run of the current group to hand out (its position in
    /// `pending`): the first whose estimate fits beside what is held, or
    /// the first when nothing is running; `None`: wait for a run to end.
    fn pick(&self) -> Option<(usize, u64)> {
        let Some(b) = &self.budget else {
            return Some((0, 0));
        };
        let bytes = |i: usize| b.runs.get(self.cur).and_then(|r| r.get(i)).copied();
        let held = self.held(b);
        let fits = self
            .pending
            .iter()
            .position(|&i| held.saturating_add(bytes(i).unwrap_or(0)) <= b.limit);
        match fits {
            Some(k) => Some((k, bytes(self.pending[k]).unwrap_or(0))),
            None if !self.in_flight.iter().any(|&n| n > 0) => {
                Some((0, bytes(self.pending[0]).unwrap_or(0)))
            }
            None => None,
        }
    }

    /// The most the admitted runs and held stand-ins were estimated to
    /// need at once (0 without a [`Budget`] or before any run), bytes.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    fn idle(&self) -> Option<usize> {
        (0..self.running.len()).find(|&s| self.running[s].is_none() && !self.lost[s])
    }

    /// The next thing to do now, or `None` to wait for an event (or, when
    /// nothing is [`busy`](Self::busy), because everything is done or
    /// `halted`).
    pub fn next(&mut self, halted: bool) -> Option<Action> {
        if halted {
            return None;
        }
        while self.cur < self.sizes.len() {
            if self.ready {
                if !self.pending.is_empty() {
                    let slot = self.idle()?;
                    let (k, bytes) = self.pick()?;
                    let (group, index) = (self.cur, self.pending.remove(k));
                    self.in_flight[group] += 1;
                    self.running[slot] = Some(group);
                    self.run_bytes[slot] = bytes;
                    if let Some(b) = &self.budget {
                        self.peak = self.peak.max(self.held(b));
                    }
                    return Some(Action::Run { slot, group, index });
                }
                // Every run of this group is out: on to the next stand-in.
                (self.cur, self.ready) = (self.cur + 1, false);
                continue;
            }
            if self.generating {
                return None;
            }
            let slot = self.idle()?;
            // Earlier stand-ins whose runs still go: none, or only the
            // previous one if both may be held.
            let mut busy = (0..self.cur).filter(|&g| self.in_flight[g] > 0);
            match (busy.next(), busy.next()) {
                (None, _) => {}
                (Some(g), None)
                    if g + 1 == self.cur && self.overlap.get(g).copied().unwrap_or(false) =>
                {
                    self.beside += 1;
                }
                _ => return None,
            }
            self.generating = true;
            return Some(Action::Generate {
                group: self.cur,
                slot,
            });
        }
        None
    }

    /// The stand-in being generated is ready.
    pub fn generated(&mut self) {
        self.generating = false;
        self.ready = true;
        self.pending = (0..self.sizes.get(self.cur).copied().unwrap_or(0)).collect();
    }

    /// Its generation failed: nothing more is generated or handed out.
    pub fn generation_failed(&mut self) {
        self.generating = false;
        self.cur = self.sizes.len();
    }

    /// Worker `slot`'s run ended; it is idle.
    pub fn done(&mut self, slot: usize) {
        if let Some(g) = self.running.get_mut(slot).and_then(Option::take) {
            self.in_flight[g] -= 1;
            self.run_bytes[slot] = 0;
        }
    }

    /// Worker `slot` is gone (it panicked): its run, if any, ended.
    pub fn lose(&mut self, slot: usize) {
        self.done(slot);
        if let Some(l) = self.lost.get_mut(slot) {
            *l = true;
        }
    }

    /// Whether a run is in flight or a stand-in is being generated.
    pub fn busy(&self) -> bool {
        self.generating || self.in_flight.iter().any(|&n| n > 0)
    }

    /// Whether group `g`'s stand-in is no longer needed: all its runs were
    /// handed out and have ended.
    pub fn finished(&self, g: usize) -> bool {
        g < self.cur && self.in_flight[g] == 0
    }

    /// Stand-ins generated while an earlier stand-in's runs still went.
    pub fn beside(&self) -> usize {
        self.beside
    }
}

/// A run handed to a worker.
struct Work<'p> {
    p: &'p Planned,
    prepared: Arc<Prepared>,
}

/// What a worker or the generator tells the dispatcher.
enum Event<'p> {
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
    /// when the threads are joined.
    Died { slot: usize },
    /// The stand-in of group `group` was generated (or failed).
    Generated {
        group: usize,
        result: Result<Prepared, SimError>,
    },
    /// The generator panicked (a bug).
    GeneratorDied,
}

/// Sends its event if its thread unwinds.
struct Obituary<'p> {
    /// `Some(slot)` for a worker, `None` for the generator.
    slot: Option<usize>,
    events: mpsc::Sender<Event<'p>>,
}

impl Drop for Obituary<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.events.send(match self.slot {
                Some(slot) => Event::Died { slot },
                None => Event::GeneratorDied,
            });
        }
    }
}

/// Why the loop ended.
pub enum Ended {
    /// Every run finished.
    All,
    /// A stop was requested: some runs are missing.
    Stopped,
}

/// Each group's matrix and each run's own memory, by the estimates of the
/// memory check, against the limit it used.
fn budget(groups: &[Group<'_>], opts: &PaperOptions) -> Budget {
    let mut b = Budget {
        limit: super::memory_limit(opts),
        ..Budget::default()
    };
    for g in groups {
        let est: Vec<_> = g
            .runs
            .iter()
            .map(|p| runs::estimate(p.matrix, opts.scale, &p.key.config, p.mode))
            .collect();
        b.matrix
            .push(est.iter().map(|e| e.matrix_bytes).max().unwrap_or(0));
        b.runs.push(est.iter().map(|e| e.run_bytes).collect());
    }
    b
}

/// Execute `groups` with up to `opts.jobs` runs at once, fewer while the
/// memory estimates of more do not fit beside each other ([`Budget`]);
/// `overlap[g]` says whether group g + 1's stand-in may be generated while
/// group g's runs still go (the memory check's call). `programs` holds one program cache
/// per worker. Finished runs go to the cache, `results` and `summary` as
/// they end. A simulator or generator error ends the loop once the runs
/// beside it have stopped, and is returned.
#[allow(clippy::too_many_arguments)]
pub fn run_all<'p>(
    groups: &[Group<'p>],
    overlap: Vec<bool>,
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
    let total_runs: usize = groups.iter().map(|g| g.runs.len()).sum();
    let workers = programs.len().min(total_runs).max(1);
    let mut sched = Schedule::new(
        groups.iter().map(|g| g.runs.len()).collect(),
        overlap,
        workers,
    )
    .with_budget(budget(groups, opts));
    let mut first_error: Option<PaperError> = None;
    std::thread::scope(|s| {
        let (events, inbox) = mpsc::channel::<Event<'p>>();
        let mut hands: Vec<Option<mpsc::Sender<Work<'p>>>> = Vec::with_capacity(workers);
        for (slot, programs) in programs.iter_mut().take(workers).enumerate() {
            let (hand, work) = mpsc::channel::<Work<'p>>();
            let events = events.clone();
            let halted = &halted;
            let spawned = std::thread::Builder::new()
                .name(format!("paper-job-{slot}"))
                .stack_size(64 << 20)
                .spawn_scoped(s, move || {
                    let _obituary = Obituary {
                        slot: Some(slot),
                        events: events.clone(),
                    };
                    for Work { p, prepared } in work {
                        let outcome = runs::execute(
                            &prepared,
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
                        // The stand-in may be dropped once its runs are done.
                        drop(prepared);
                        // What the run freed goes back to the system before
                        // the next one is admitted by its estimate.
                        crate::sim::memory::release_free_memory();
                        if events.send(Event::Done { slot, p, outcome }).is_err() {
                            return;
                        }
                    }
                });
            match spawned {
                Ok(_) => hands.push(Some(hand)),
                Err(e) => {
                    if hands.is_empty() {
                        first_error = Some(PaperError::Io {
                            path: "a worker thread".into(),
                            source: e,
                        });
                    }
                    break;
                }
            }
        }
        // Workers that could not be started are never handed work.
        for slot in hands.len()..workers {
            sched.lose(slot);
        }
        if hands.is_empty() {
            abort.store(true, Ordering::Relaxed);
        }
        let mut live: Vec<Option<Arc<Prepared>>> = (0..groups.len()).map(|_| None).collect();
        loop {
            while let Some(action) = sched.next(halted()) {
                match action {
                    Action::Run { slot, group, index } => {
                        let p = groups[group].runs[index];
                        let prepared = live[group]
                            .clone()
                            .expect("a group's runs are handed out once its stand-in is ready");
                        let sent = hands[slot]
                            .as_ref()
                            .is_some_and(|h| h.send(Work { p, prepared }).is_ok());
                        if sent {
                            // Said here, in the order runs are handed out
                            // (a worker's own report could come after a
                            // faster worker's next run).
                            obs.run_start(slot, &p.label, p.work);
                        } else {
                            // The worker is gone; its Died event says why.
                            sched.lose(slot);
                            abort.store(true, Ordering::Relaxed);
                        }
                    }
                    Action::Generate { group, slot } => {
                        let m = groups[group].matrix;
                        obs.matrix(slot, &runs::spec(m, opts.scale));
                        let events = events.clone();
                        let spawned = std::thread::Builder::new()
                            .name("paper-generate".into())
                            .spawn_scoped(s, move || {
                                let _obituary = Obituary {
                                    slot: None,
                                    events: events.clone(),
                                };
                                let result = runs::prepare(m, opts.scale, opts.seed, opts.nodes);
                                let _ = events.send(Event::Generated { group, result });
                            });
                        if let Err(e) = spawned {
                            sched.generation_failed();
                            abort.store(true, Ordering::Relaxed);
                            first_error.get_or_insert(PaperError::Io {
                                path: "the generator thread".into(),
                                source: e,
                            });
                        }
                    }
                }
            }
            if !sched.busy() {
                break;
            }
            let Ok(ev) = inbox.recv() else { break };
            match ev {
                Event::Progress { slot, done, total } => obs.run_progress(slot, done, total),
                Event::Died { slot } => {
                    sched.lose(slot);
                    abort.store(true, Ordering::Relaxed);
                    if let Some(hand) = hands.get_mut(slot) {
                        *hand = None;
                    }
                }
                Event::GeneratorDied => {
                    sched.generation_failed();
                    abort.store(true, Ordering::Relaxed);
                }
                Event::Generated { group, result } => match result {
                    Ok(prepared) => {
                        live[group] = Some(Arc::new(prepared));
                        sched.generated();
                    }
                    Err(source) => {
                        sched.generation_failed();
                        abort.store(true, Ordering::Relaxed);
                        first_error.get_or_insert(PaperError::Sim {
                            run: runs::spec(groups[group].matrix, opts.scale),
                            source: Box::new(source),
                        });
                    }
                },
                Event::Done { slot, p, outcome } => {
                    sched.done(slot);
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
                        // Its result is missing: the loop ends Stopped.
                        Ok(Outcome::Stopped) => {}
                        Err(source) => {
                            abort.store(true, Ordering::Relaxed);
                            first_error.get_or_insert(PaperError::Sim {
                                run: p.label.clone(),
                                source: Box::new(source),
                            });
                        }
                    }
                }
            }
            // Drop every stand-in whose runs are all done, before anything
            // new is generated.
            for (g, l) in live.iter_mut().enumerate() {
                if l.is_some() && sched.finished(g) {
                    *l = None;
                }
            }
        }
        // Dropping the hands ends the workers' loops.
        hands.clear();
    });
    summary.stand_ins_beside_runs += sched.beside();
    summary.memory_admitted = summary.memory_admitted.max(sched.peak());
    if let Some(e) = first_error {
        return Err(e);
    }
    let missing = groups
        .iter()
        .flat_map(|g| &g.runs)
        .any(|p| results.get(&p.key).is_none());
    if user_stop() || missing {
        return Ok(Ended::Stopped);
    }
    Ok(Ended::All)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive `sched` to its next wait: every action it gives now.
    fn drain(sched: &mut Schedule) -> Vec<Action> {
        std::iter::from_fn(|| sched.next(false)).collect()
    }

    fn run(slot: usize, group: usize, index: usize) -> Action {
        Action::Run { slot, group, index }
    }

    #[test]
    fn one_job_is_generate_run_drop_in_sequence() {
        let mut s = Schedule::new(vec![2, 1], vec![true], 1);
        assert_eq!(drain(&mut s), [Action::Generate { group: 0, slot: 0 }]);
        s.generated();
        assert_eq!(drain(&mut s), [run(0, 0, 0)]);
        s.done(0);
        assert_eq!(drain(&mut s), [run(0, 0, 1)]);
        assert!(!s.finished(0));
        s.done(0);
        // The first stand-in is dropped before the next is generated.
        assert_eq!(drain(&mut s), [Action::Generate { group: 1, slot: 0 }]);
        assert!(s.finished(0));
        s.generated();
        assert_eq!(drain(&mut s), [run(0, 1, 0)]);
        s.done(0);
        assert_eq!(drain(&mut s), []);
        assert!(!s.busy() && s.finished(1));
        assert_eq!(s.beside(), 0);
    }

    #[test]
    fn the_next_stand_in_is_generated_beside_the_last_runs_when_both_fit() {
        let mut s = Schedule::new(vec![3, 2, 2], vec![true, true], 2);
        assert_eq!(drain(&mut s), [Action::Generate { group: 0, slot: 0 }]);
        s.generated();
        assert_eq!(drain(&mut s), [run(0, 0, 0), run(1, 0, 1)]);
        s.done(1);
        assert_eq!(drain(&mut s), [run(1, 0, 2)]);
        // Every run of group 0 is out; worker 0 ends and its core
        // generates group 1 while worker 1's run goes on.
        s.done(0);
        assert_eq!(drain(&mut s), [Action::Generate { group: 1, slot: 0 }]);
        assert!(!s.finished(0));
        s.generated();
        assert_eq!(drain(&mut s), [run(0, 1, 0)]);
        // Group 1 is all out while group 0 still runs: group 2 waits, as a
        // third stand-in would be held.
        s.done(0);
        assert_eq!(drain(&mut s), [run(0, 1, 1)]);
        assert_eq!(drain(&mut s), []);
        s.done(1);
        assert!(s.finished(0));
        assert_eq!(drain(&mut s), [Action::Generate { group: 2, slot: 1 }]);
        s.generated();
        assert_eq!(drain(&mut s), [run(1, 2, 0)]);
        s.done(0);
        s.done(1);
        assert_eq!(drain(&mut s), [run(0, 2, 1)]);
        s.done(0);
        assert_eq!(drain(&mut s), []);
        assert!(!s.busy());
        assert_eq!(s.beside(), 2);
    }

    #[test]
    fn without_room_for_two_stand_ins_the_next_waits_for_the_last_run() {
        let mut s = Schedule::new(vec![2, 1], vec![false], 2);
        assert_eq!(drain(&mut s), [Action::Generate { group: 0, slot: 0 }]);
        s.generated();
        assert_eq!(drain(&mut s), [run(0, 0, 0), run(1, 0, 1)]);
        s.done(0);
        assert_eq!(drain(&mut s), []);
        s.done(1);
        assert_eq!(drain(&mut s), [Action::Generate { group: 1, slot: 0 }]);
        assert_eq!(s.beside(), 0);
    }

    #[test]
    fn runs_wait_while_their_memory_does_not_fit_beside_the_others() {
        // Limit 10; each stand-in 2; runs of 6, 5 and 1, then one of 9.
        let budget = Budget {
            limit: 10,
            matrix: vec![2, 2],
            runs: vec![vec![6, 5, 1], vec![9]],
        };
        let mut s = Schedule::new(vec![3, 1], vec![true], 2).with_budget(budget);
        assert_eq!(drain(&mut s), [Action::Generate { group: 0, slot: 0 }]);
        s.generated();
        // 2 + 6 fits; the 5 does not beside it, the 1 does: it goes first.
        assert_eq!(drain(&mut s), [run(0, 0, 0), run(1, 0, 2)]);
        assert_eq!(s.peak(), 9);
        // The 1 ends: 2 + 6 + 5 is still too much, so worker 1 waits.
        s.done(1);
        assert_eq!(drain(&mut s), []);
        // Worker 0 takes the 5; group 1 may be generated beside it
        // (overlap), but its run of 9 does not fit beside group 0's
        // stand-in and run: it waits, then goes once it would run alone.
        s.done(0);
        assert_eq!(
            drain(&mut s),
            [run(0, 0, 1), Action::Generate { group: 1, slot: 1 }]
        );
        s.generated();
        assert_eq!(drain(&mut s), []);
        s.done(0);
        assert_eq!(drain(&mut s), [run(0, 1, 0)]);
        assert_eq!(s.peak(), 11, "a run alone is admitted past the limit");
        s.done(0);
        assert!(!s.busy());

        // A run too large for the limit still runs, alone.
        let budget = Budget {
            limit: 4,
            matrix: vec![1],
            runs: vec![vec![5, 5]],
        };
        let mut s = Schedule::new(vec![2], vec![], 2).with_budget(budget);
        drain(&mut s);
        s.generated();
        assert_eq!(drain(&mut s), [run(0, 0, 0)]);
        s.done(0);
        assert_eq!(drain(&mut s), [run(0, 0, 1)]);
    }

    #[test]
    fn a_halt_or_a_lost_worker_hands_out_nothing_more() {
        let mut s = Schedule::new(vec![3], vec![], 2);
        assert_eq!(drain(&mut s), [Action::Generate { group: 0, slot: 0 }]);
        s.generated();
        assert_eq!(s.next(true), None);
        assert_eq!(drain(&mut s), [run(0, 0, 0), run(1, 0, 1)]);
        s.lose(1);
        s.done(0);
        assert_eq!(drain(&mut s), [run(0, 0, 2)]);
        s.done(0);
        assert!(!s.busy());

        // A failed generation leaves nothing busy.
        let mut s = Schedule::new(vec![1], vec![], 1);
        assert_eq!(drain(&mut s), [Action::Generate { group: 0, slot: 0 }]);
        s.generation_failed();
        assert!(!s.busy());
    }
}
