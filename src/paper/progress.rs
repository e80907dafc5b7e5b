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
    /// A stand-in is being generated.
    fn matrix(&mut self, spec: &str) {
        let _ = spec;
    }
    /// A run starts; `work` is its estimated work.
    fn run_start(&mut self, label: &str, work: u64) {
        let _ = (label, work);
    }
    /// The run's own progress (remote idxs done of total).
    fn run_progress(&mut self, done: u64, total: u64) {
        let _ = (done, total);
    }
    /// A run finished.
    fn run_done(&mut self, label: &str, wall_secs: f64, verified: bool) {
        let _ = (label, wall_secs, verified);
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

/// Two progress bars on stderr (hidden when stderr is not a terminal or
/// `quiet`): the evaluation's work with an ETA, and the current run; one
/// line per finished run when not quiet.
pub struct Bars {
    multi: MultiProgress,
    total: ProgressBar,
    current: ProgressBar,
    quiet: bool,
    run_work: u64,
    run_base: u64,
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
        let current = multi.add(ProgressBar::new(0));
        if let Ok(s) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}") {
            current.set_style(s.progress_chars("=> "));
        }
        total.enable_steady_tick(Duration::from_millis(500));
        Bars {
            multi,
            total,
            current,
            quiet,
            run_work: 0,
            run_base: 0,
            runs_done: 0,
            runs_todo: 0,
        }
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

    fn matrix(&mut self, spec: &str) {
        self.current.set_message(format!("generating {spec}"));
        self.current.set_length(0);
        self.current.set_position(0);
    }

    fn run_start(&mut self, label: &str, work: u64) {
        self.run_work = work;
        self.run_base = self.total.position();
        self.current.set_message(label.to_string());
        self.current.set_length(0);
        self.current.set_position(0);
    }

    fn run_progress(&mut self, done: u64, total: u64) {
        self.current.set_length(total);
        self.current.set_position(done);
        if total > 0 {
            let part = (self.run_work as f64 * done as f64 / total as f64) as u64;
            self.total
                .set_position(self.run_base + part.min(self.run_work));
        }
    }

    fn run_done(&mut self, label: &str, wall_secs: f64, verified: bool) {
        self.runs_done += 1;
        self.total.set_position(self.run_base + self.run_work);
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
        self.current.finish_and_clear();
        self.total.finish_and_clear();
    }
}
