//! Progress of `netsparse paper`: the [`Observer`] callbacks the run loop
//! makes, a silent observer for tests and scripts, and [`Bars`], the
//! terminal's two indicatif bars — the whole evaluation, in estimated work
//! units with an ETA, and the run in progress, in remote idxs.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// What the run loop reports as it goes.
pub trait Observer {
    /// The plan: `total` runs, of which `cached` come from the cache and
    /// `todo` will run, with `work` estimated work units.
    fn plan(&mut self, total: usize, cached: usize, todo: usize, work: u64) {
        let _ = (total, cached, todo, work);
    }
    /// A stand-in is being generated, on the core of idle worker `slot`
    /// (other workers may still be running the previous stand-in's runs).
    fn matrix(&mut self, slot: usize, spec: &str) {
        let _ = (slot, spec);
    }
    /// A run is handed to worker `slot` (0..jobs), where it starts; `work`
    /// is its estimated work. Called in the order runs are handed out.
    fn run_start(&mut self, slot: usize, label: &str, work: u64) {
        let _ = (slot, label, work);
    }
    /// The progress of worker `slot`'s run (remote idxs done of total).
    fn run_progress(&mut self, slot: usize, done: u64, total: u64) {
        let _ = (slot, done, total);
    }
    /// Worker `slot`'s run finished.
    fn run_done(&mut self, slot: usize, label: &str, wall_secs: f64, verified: bool) {
        let _ = (slot, label, wall_secs, verified);
    }
    /// Something the user should know (a corrupt cache file).
    fn note(&mut self, msg: &str) {
        let _ = msg;
    }
    /// The loop is over.
    fn finish(&mut self) {}
}

/// An observer that shows nothing.
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {}

/// Progress bars on stderr (hidden when stderr is not a terminal or
/// `quiet`): the evaluation's work with an ETA, and one per worker for its
/// current run; one line per finished run when not quiet.
pub struct Bars {
    multi: MultiProgress,
    total: ProgressBar,
    /// Per worker: its bar, its run's estimated work and the part done.
    slots: Vec<(ProgressBar, u64, u64)>,
    quiet: bool,
    /// Estimated work of the finished runs.
    work_done: u64,
    runs_done: usize,
    runs_todo: usize,
}

impl Bars {
    /// Bars on stderr; `quiet` shows nothing but notes.
    pub fn new(quiet: bool) -> Bars {
        let target = if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let multi = MultiProgress::with_draw_target(target);
        let total = multi.add(ProgressBar::new(0));
        if let Ok(s) = ProgressStyle::with_template(
            "{prefix:>9} [{wide_bar}] {percent:>3}% elapsed {elapsed_precise}, ETA {eta_precise}",
        ) {
            total.set_style(s.progress_chars("=> "));
        }
        total.enable_steady_tick(Duration::from_millis(500));
        let mut bars = Bars {
            multi,
            total,
            slots: Vec::new(),
            quiet,
            work_done: 0,
            runs_done: 0,
            runs_todo: 0,
        };
        bars.slot(0);
        bars
    }

    /// Worker `i`'s bar and work, added on first use.
    fn slot(&mut self, i: usize) -> &mut (ProgressBar, u64, u64) {
        while self.slots.len() <= i {
            let bar = self.multi.add(ProgressBar::new(0));
            if let Ok(s) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}") {
                bar.set_style(s.progress_chars("=> "));
            }
            self.slots.push((bar, 0, 0));
        }
        &mut self.slots[i]
    }

    /// The evaluation's bar: finished runs plus the running ones' parts.
    fn update_total(&self) {
        let running: u64 = self.slots.iter().map(|s| s.2).sum();
        self.total.set_position(self.work_done + running);
    }

    fn say(&self, s: &str) {
        if self.quiet {
            return;
        }
        if self.multi.is_hidden() {
            eprintln!("{s}");
        } else {
            let _ = self.multi.println(s);
        }
    }
}

impl Observer for Bars {
    fn plan(&mut self, total: usize, cached: usize, todo: usize, work: u64) {
        self.runs_todo = todo;
        self.total.set_length(work.max(1));
        self.total.set_prefix(format!("0/{todo} runs"));
        self.say(&format!(
            "{total} runs: {cached} from the cache, {todo} to run"
        ));
    }

    fn matrix(&mut self, slot: usize, spec: &str) {
        let s = self.slot(slot);
        s.0.set_message(format!("generating {spec}"));
        s.0.set_length(0);
        s.0.set_position(0);
    }

    fn run_start(&mut self, slot: usize, label: &str, work: u64) {
        let s = self.slot(slot);
        s.1 = work;
        s.2 = 0;
        s.0.set_message(label.to_string());
        s.0.set_length(0);
        s.0.set_position(0);
    }

    fn run_progress(&mut self, slot: usize, done: u64, total: u64) {
        let s = self.slot(slot);
        s.0.set_length(total);
        s.0.set_position(done);
        if total > 0 {
            s.2 = ((s.1 as f64 * done as f64 / total as f64) as u64).min(s.1);
        }
        self.update_total();
    }

    fn run_done(&mut self, slot: usize, label: &str, wall_secs: f64, verified: bool) {
        self.runs_done += 1;
        let s = self.slot(slot);
        let work = s.1;
        (s.1, s.2) = (0, 0);
        self.work_done += work;
        self.update_total();
        self.total
            .set_prefix(format!("{}/{} runs", self.runs_done, self.runs_todo));
        self.say(&format!(
            "  {label}: {:.1} s{}",
            wall_secs,
            if verified { "" } else { " VERIFICATION FAILED" }
        ));
    }

    fn note(&mut self, msg: &str) {
        if self.multi.is_hidden() {
            eprintln!("warning: {msg}");
        } else {
            let _ = self.multi.println(format!("warning: {msg}"));
        }
    }

    fn finish(&mut self) {
        for (bar, _, _) in &self.slots {
            bar.finish_and_clear();
        }
        self.total.finish_and_clear();
    }
}
