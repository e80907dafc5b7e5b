//! `netsparse paper`: the paper's evaluation on the calibrated stand-ins in
//! one call — Figure 12 (K = 1, 16, 128: NetSparse and SAOpt vs SUOpt),
//! Table 7 (K = 16), Table 8 (arabic and europe, every ablation step) and
//! the sweeps of Figures 15 (RIG batch), 17 (concatenation delay) and 18
//! (Property Cache size) — with a report that puts each of our numbers
//! beside the paper's.
//!
//! This module owns the options ([`PaperOptions`], checked with errors
//! naming the parameter and its range), the plan (which runs each section
//! needs, deduplicated: Table 7's runs are Figure 12's at K = 16), the
//! memory check made before anything is generated, and the loop that
//! executes the runs missing from the cache, matrix by matrix.
//!
//! * [`data`]: the paper's published numbers, by table and figure;
//! * [`plan`]: the configuration of every run and the list of runs;
//! * [`runs`]: one run's key, record, execution and memory estimate;
//! * [`jobs`]: a stand-in's runs, up to `jobs` at once on worker threads;
//! * [`cache`]: finished runs on disk (resume after Ctrl-C);
//! * [`report`]: the results beside the paper's, written as Markdown
//!   ([`render`]), JSON and CSV; [`plots`]: its SVG figures;
//! * [`progress`]: progress callbacks and the terminal's progress bars.
//!
//! # Scale
//!
//! `scale` S divides the stand-ins' rows and nonzeros (`paper:NAME/S`).
//! The per-node sizes that grow with the matrix are divided alike, so a
//! smaller run keeps the full run's proportions: the RIG batch (nonzeros
//! per command, so each node posts as many commands as at full scale) and
//! the Property Cache (so it holds the same share of the properties a rack
//! reads), rounded to the nearest size the cache can take. Everything else
//! is Table 5's.

pub mod cache;
pub mod data;
pub mod e2e;
pub mod jobs;
pub mod plan;
pub mod plots;
pub mod progress;
pub mod render;
pub mod report;
pub mod runs;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::programs::{Bundled, ProgramCache, UserCommands, UserProgram};
use crate::sim::config::ConfigError;
use crate::sim::matrix::paper::PaperMatrix;
use crate::sim::plot::PlotError;
use crate::sim::topology::Routing;
use crate::sim::SimError;

use cache::{Cache, CacheError, Lookup};
pub use plan::{key_id, Planned, Setup};
use progress::Observer;
use runs::{MemoryEstimate, RunKey, RunRecord};

pub use crate::sim::memory::{available_memory, gib, peak_rss};

/// One part of the evaluation (`--only`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    /// Figure 12: NetSparse and SAOpt vs SUOpt, K = 1, 16, 128.
    Fig12,
    /// Table 7: the tail node under NetSparse, K = 16.
    Table7,
    /// Figures 13 and 14: end-to-end strong scaling with SPADE, and the
    /// communication/computation breakdown (K = 16, 128).
    Fig13,
    /// Table 8: the ablation steps on arabic and europe.
    Table8,
    /// Figure 15: RIG batch size.
    Fig15,
    /// Figure 17: concatenation delay cycles.
    Fig17,
    /// Figure 18: Property Cache size.
    Fig18,
    /// Figure 19: active nodes over time (NetSparse, K = 16).
    Fig19,
    /// Figure 21: end-to-end strong scaling with CPUs (DDR, HBM).
    Fig21,
    /// Figure 22: NetSparse vs SUOpt on leaf-spine, HyperX and Dragonfly,
    /// K = 16.
    Fig22,
    /// The model ablation: each part of the system model off in turn
    /// (not in the default set: `--model-ablation` or `--only model`).
    Model,
}

impl Section {
    /// Every section, in report order.
    pub const ALL: [Section; 10] = [
        Section::Fig12,
        Section::Table7,
        Section::Fig13,
        Section::Table8,
        Section::Fig15,
        Section::Fig17,
        Section::Fig18,
        Section::Fig19,
        Section::Fig21,
        Section::Fig22,
    ];

    /// Every section `--only` accepts: the default ones and the model
    /// ablation.
    pub const EVERY: [Section; 11] = [
        Section::Fig12,
        Section::Table7,
        Section::Fig13,
        Section::Table8,
        Section::Fig15,
        Section::Fig17,
        Section::Fig18,
        Section::Fig19,
        Section::Fig21,
        Section::Fig22,
        Section::Model,
    ];

    /// The name `--only` takes.
    pub fn name(self) -> &'static str {
        match self {
            Section::Fig12 => "fig12",
            Section::Table7 => "table7",
            Section::Fig13 => "fig13",
            Section::Table8 => "table8",
            Section::Fig15 => "fig15",
            Section::Fig17 => "fig17",
            Section::Fig18 => "fig18",
            Section::Fig19 => "fig19",
            Section::Fig21 => "fig21",
            Section::Fig22 => "fig22",
            Section::Model => "model",
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The names `--only` accepts, for errors.
pub const SECTION_NAMES: &str =
    "fig12, table7, fig13, table8, fig15, fig17, fig18, fig19, fig21, fig22, model";

impl FromStr for Section {
    type Err = PaperError;
    fn from_str(s: &str) -> Result<Section, PaperError> {
        let t = s.trim().to_ascii_lowercase();
        Section::EVERY
            .into_iter()
            .find(|x| x.name() == t || x.name().replace("fig", "figure") == t)
            .ok_or_else(|| PaperError::Option {
                name: "--only",
                value: s.to_string(),
                range: format!("a comma-separated list of {SECTION_NAMES}"),
            })
    }
}

/// Parse a stand-in name for `--matrices`.
pub fn parse_matrix(s: &str) -> Result<PaperMatrix, PaperError> {
    PaperMatrix::from_name(&s.trim().to_ascii_lowercase()).ok_or_else(|| PaperError::Option {
        name: "--matrices",
        value: s.to_string(),
        range: "a comma-separated list of arabic, europe, queen, stokes, uk".into(),
    })
}

/// The scale `--quick` uses unless `--scale` is given.
pub const QUICK_SCALE: u32 = 8;

/// What to run and where to write it.
#[derive(Clone, Debug)]
pub struct PaperOptions {
    /// Stand-in scale divisor S (1 = the paper's size).
    pub scale: u32,
    /// Fewer sweep points (the caller also picks [`QUICK_SCALE`]).
    pub quick: bool,
    /// Sections to run (empty: all).
    pub only: Vec<Section>,
    /// Stand-ins to run (empty: all five; Table 8 uses arabic and europe
    /// of these).
    pub matrices: Vec<PaperMatrix>,
    /// Output directory (report, plots, and the run cache in `cache/`).
    pub out: PathBuf,
    /// Compute nodes (Table 5: 128).
    pub nodes: u32,
    /// Racks (Table 5: 8).
    pub racks: u32,
    /// Threads for each run's event loop (0: the serial loop); results
    /// are identical for every value, so it is not part of a run's key.
    pub threads: usize,
    /// Runs executed at once at most (1..=64), each on its own thread
    /// (plus its event loop's `threads`); fewer go while their memory
    /// estimates do not fit beside each other within the limit. Results do
    /// not depend on it.
    pub jobs: usize,
    /// Seed of the generators.
    pub seed: u64,
    /// How the leaf-spine's ToRs pick a spine (default `owner`, the
    /// reading of §8.2's "routed deterministically" that keeps §6.2.1's cache
    /// condition for a whole rack and uses every uplink); Figure 22's
    /// HyperX and Dragonfly runs use their own routing.
    pub routing: Routing,
    /// Memory the runs may use, bytes (`None`: what the system has available).
    pub memory_limit: Option<u64>,
    /// The program version that keys the cache ([`binary_version`]).
    pub version: String,
    /// Build the report from the cached runs of `version` alone: nothing
    /// is generated or executed and no memory is checked; refused, with
    /// nothing written, when a planned run is not in the cache. Rebuilds a
    /// report with a newer binary's text from the runs an older one made.
    pub report_only: bool,
    /// Set by Ctrl-C: finish nothing more, keep what is finished.
    pub stop: Option<Arc<AtomicBool>>,
    /// Users' programs in place of bundled ones (`--nic-program`, ...):
    /// part of every simulated run's key, by role and digest, and named in
    /// the report. Read back from a report for `report_only`, without
    /// their text (nothing is compiled then).
    pub programs: Vec<(Bundled, UserProgram)>,
    /// Users' control-plane commands for the devices that run a program
    /// (`--nic-commands`, ...): keyed, named and read back as `programs`.
    pub commands: Vec<(Bundled, UserCommands)>,
}

impl PaperOptions {
    /// A program cache for a worker: the users' programs and commands in
    /// place.
    fn program_cache(&self) -> ProgramCache {
        let mut c = ProgramCache::new();
        for (which, u) in &self.programs {
            c.set_user(*which, u.clone());
        }
        for (which, u) in &self.commands {
            c.set_commands(*which, u.clone());
        }
        c
    }
}

impl Default for PaperOptions {
    fn default() -> PaperOptions {
        PaperOptions {
            scale: 1,
            quick: false,
            only: Vec::new(),
            matrices: Vec::new(),
            out: PathBuf::from("netsparse-paper"),
            nodes: 128,
            racks: 8,
            threads: 1,
            jobs: 1,
            seed: 1,
            routing: Routing::Owner,
            memory_limit: None,
            version: String::new(),
            report_only: false,
            stop: None,
            programs: Vec::new(),
            commands: Vec::new(),
        }
    }
}

/// Why `netsparse paper` cannot run or finish.
#[derive(Debug, Error)]
pub enum PaperError {
    /// A bad option: names it and its valid range.
    #[error("{name} = {value} is out of range: {range}")]
    Option {
        /// The option.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it may be.
        range: String,
    },
    /// The cluster parameters do not validate.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The runs would not fit in memory.
    #[error(transparent)]
    Memory(Box<MemoryShortfall>),
    /// The cache could not be written.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// A run failed (not a verification failure: that is reported in the
    /// summary and the report).
    #[error("{run}: {source}")]
    Sim {
        /// The run.
        run: String,
        /// The simulator's error.
        source: Box<SimError>,
    },
    /// A report file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A plot could not be drawn.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A user's program (`--nic-program`, ...) that cannot run.
    #[error(transparent)]
    Program(#[from] crate::programs::ProgramError),
    /// A user's commands (`--nic-commands`, ...) that do not fit their
    /// program.
    #[error("{0}")]
    Commands(String),
    /// A `report.json` to rebuild that cannot be read as one.
    #[error("{path}: not a report of `netsparse paper`: {detail}")]
    Report {
        /// The file.
        path: String,
        /// What is wrong.
        detail: String,
    },
    /// `report_only`, but runs are not in the cache.
    #[error(
        "{missing} of {planned} runs are not in {cache} for version {version} (the first: {first}); \
         nothing written (run without --report-only to execute them)"
    )]
    NotCached {
        /// Runs missing.
        missing: usize,
        /// Runs planned.
        planned: usize,
        /// The cache directory.
        cache: String,
        /// The version looked up.
        version: String,
        /// The first missing run.
        first: String,
    },
}

/// Why a plan does not fit in memory: the estimate of its largest run
/// against the limit, with a scale that would fit.
#[derive(Debug, Error)]
#[error(
    "not enough memory: the largest run ({largest}) needs about {need} (matrix {matrix}, run {run}) \
     but {available} is available{hint}"
)]
pub struct MemoryShortfall {
    /// The estimate, human-readable.
    pub need: String,
    /// The matrix's part.
    pub matrix: String,
    /// The run's part.
    pub run: String,
    /// The limit.
    pub available: String,
    /// Which run.
    pub largest: String,
    /// A scale that fits, if one does (`; --scale S would need about ...`).
    pub hint: String,
}

/// What an invocation did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Distinct runs the selected sections need.
    pub runs_planned: usize,
    /// Runs executed by this invocation.
    pub runs_executed: usize,
    /// Runs taken from the cache.
    pub runs_cached: usize,
    /// Runs still missing (stopped by Ctrl-C).
    pub runs_missing: usize,
    /// Cache files that could not be trusted (their runs were executed again).
    pub corrupt: Vec<String>,
    /// Runs whose verification failed.
    pub failed: Vec<String>,
    /// Stand-ins generated while the previous stand-in's last runs still
    /// went (`--jobs` > 1, when the memory check allows two at once).
    pub stand_ins_beside_runs: usize,
    /// Estimated peak while a stand-in is generated beside the previous
    /// one's runs, bytes: the largest of the pairs allowed to (0 if none
    /// is). The peak estimate is the larger of this and `memory_estimate`.
    pub memory_overlap: u64,
    /// Stopped by Ctrl-C before every run finished.
    pub interrupted: bool,
    /// Built from the cache alone ([`PaperOptions::report_only`]).
    pub report_only: bool,
    /// Estimated peak memory of the largest run alone, bytes.
    pub memory_estimate: u64,
    /// The most the runs handed out at once and the stand-ins held beside
    /// them were estimated to need, bytes (runs wait while more would not
    /// fit the limit; 0 if nothing was executed).
    pub memory_admitted: u64,
    /// The memory limit it was checked against, bytes.
    pub memory_limit: u64,
    /// Wall time of this invocation, seconds.
    pub wall_secs: f64,
    /// Peak resident memory of the process when the report was written
    /// (`VmHWM`, or the highest sample of a run executed here where that
    /// is higher), bytes.
    pub peak_rss: Option<u64>,
    /// Files written.
    pub files: Vec<PathBuf>,
}

impl Summary {
    /// The estimated peak memory, bytes: the largest run alone, the most
    /// the runs at once were estimated to hold, or a stand-in generated
    /// beside the previous one's runs, whichever is more.
    pub fn peak_estimate(&self) -> u64 {
        self.memory_estimate
            .max(self.memory_overlap)
            .max(self.memory_admitted)
    }
}

/// The version that keys the cache: the crate version, a hash of the
/// running executable (any change to the simulator or the programs makes a
/// new binary) and of the bundled P4 programs.
pub fn binary_version() -> String {
    let mut bytes = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        if let Ok(b) = std::fs::read(exe) {
            bytes = b;
        }
    }
    for b in [Bundled::Nic, Bundled::Tor, Bundled::Spine] {
        bytes.extend_from_slice(b.source().as_bytes());
    }
    format!("{}+{}", env!("CARGO_PKG_VERSION"), cache::hash_hex(&bytes))
}

/// The largest scale any stand-in accepts (queen's rows / 512).
pub fn max_scale() -> u32 {
    PaperMatrix::ALL
        .iter()
        .map(|m| (m.stats().rows / (crate::sim::matrix::paper::NODES * 4)) as u32)
        .min()
        .unwrap_or(1)
}

/// Finished runs by key.
#[derive(Debug, Default)]
pub struct Results {
    records: HashMap<String, (RunRecord, bool)>,
    /// Every planned run, in plan order: what it was, whether it came
    /// from the cache, its wall time, whether it verified.
    pub log: Vec<RunLog>,
}

/// One line of the runs table.
#[derive(Clone, Debug, Serialize)]
pub struct RunLog {
    /// What ran.
    pub label: String,
    /// Finished (`false`: missing after an interruption).
    pub finished: bool,
    /// Taken from the cache.
    pub cached: bool,
    /// Wall time of the run when it was executed, seconds.
    pub wall_secs: f64,
    /// It verified (SU and SA: true).
    pub verified: bool,
    /// The process's resident memory at its highest while the run went,
    /// sampled (see [`RunRecord::peak_rss`]), bytes.
    pub peak_rss: Option<u64>,
}

impl Results {
    /// The record of `key`, if finished.
    pub fn get(&self, key: &RunKey) -> Option<&RunRecord> {
        self.records.get(&key_id(key)).map(|(r, _)| r)
    }

    fn insert(&mut self, p: &Planned, rec: RunRecord, cached: bool) {
        self.records.insert(key_id(&p.key), (rec, cached));
    }

    /// Fill [`Results::log`] in plan order.
    fn make_log(&mut self, plan: &[Planned]) {
        self.log = plan
            .iter()
            .map(|p| match self.records.get(&key_id(&p.key)) {
                Some((r, cached)) => RunLog {
                    label: p.label.clone(),
                    finished: true,
                    cached: *cached,
                    wall_secs: r.wall_secs,
                    verified: r.verified(),
                    peak_rss: r.peak_rss,
                },
                None => RunLog {
                    label: p.label.clone(),
                    finished: false,
                    cached: false,
                    wall_secs: 0.0,
                    verified: false,
                    peak_rss: None,
                },
            })
            .collect();
    }
}

/// The peak of estimate `e` with `jobs` such runs at once on one matrix
/// (each holds its own run memory; the matrix is shared, and is built
/// while no run is going).
fn with_jobs(e: &MemoryEstimate, jobs: usize) -> u64 {
    e.build_bytes
        .max(e.matrix_bytes + e.run_bytes.saturating_mul(jobs as u64))
}

/// The run of `plan` under `setup` that needs the most memory alone: its
/// estimate and label.
fn largest_run(setup: &Setup, plan: &[Planned]) -> (MemoryEstimate, String) {
    let mut best = (MemoryEstimate::default(), String::new());
    for p in plan {
        let e = runs::estimate(p.matrix, setup.opts.scale, &p.key.config, p.mode);
        if e.total() > best.0.total() {
            best = (e, p.label.clone());
        }
    }
    best
}

/// The largest need of each kind among `runs` (all on one stand-in).
fn group_estimate(setup: &Setup, runs: &[&Planned]) -> MemoryEstimate {
    let mut e = MemoryEstimate::default();
    for p in runs {
        let r = runs::estimate(p.matrix, setup.opts.scale, &p.key.config, p.mode);
        e.build_bytes = e.build_bytes.max(r.build_bytes);
        e.matrix_bytes = e.matrix_bytes.max(r.matrix_bytes);
        e.run_bytes = e.run_bytes.max(r.run_bytes);
    }
    e
}

/// The peak while stand-in `b` is generated beside the last runs of `a`
/// and then runs beside them, with `jobs` workers: `a`'s matrix, plus
/// `b`'s build beside `jobs - 1` of `a`'s runs, or both matrices beside
/// `jobs` runs.
fn overlap_need(a: &MemoryEstimate, b: &MemoryEstimate, jobs: usize) -> u64 {
    let runs = |n: usize| a.run_bytes.max(b.run_bytes).saturating_mul(n as u64);
    let generating = a.matrix_bytes + b.build_bytes + runs(jobs.saturating_sub(1));
    let running = a.matrix_bytes + b.matrix_bytes + runs(jobs);
    generating.max(running)
}

/// Per group but the last: whether the next stand-in may be generated
/// while this one's last runs go (`--jobs` > 1 and both fit in `limit`),
/// and the largest need of those that may. Says once when some may not.
fn overlaps(
    setup: &Setup,
    groups: &[jobs::Group],
    limit: u64,
    obs: &mut dyn Observer,
) -> (Vec<bool>, u64) {
    let jobs = setup.opts.jobs.max(1);
    if jobs == 1 {
        return (vec![false; groups.len().saturating_sub(1)], 0);
    }
    let est: Vec<MemoryEstimate> = groups
        .iter()
        .map(|g| group_estimate(setup, &g.runs))
        .collect();
    let mut worst: Option<(u64, usize)> = None;
    let mut largest = 0;
    let ok = est
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let need = overlap_need(&w[0], &w[1], jobs);
            if need > limit && worst.is_none_or(|(n, _)| need > n) {
                worst = Some((need, i));
            }
            if need <= limit {
                largest = largest.max(need);
            }
            need <= limit
        })
        .collect();
    if let Some((need, i)) = worst {
        let spec = |g: &jobs::Group| runs::spec(g.matrix, setup.opts.scale);
        obs.note(&format!(
            "some stand-ins are generated only after the previous one's runs have ended: \
             generating {} beside the runs of {} would need about {} of {}",
            spec(&groups[i + 1]),
            spec(&groups[i]),
            gib(need),
            gib(limit)
        ));
    }
    (ok, largest)
}

/// Refuse before anything is generated if the largest run will not fit
/// alone (more runs go at once only while their estimates fit beside each
/// other: [`jobs::Budget`]). Returns the largest run's need and the limit,
/// and says when `jobs` of the largest would not fit at once.
fn check_memory(
    setup: &Setup,
    plan: &[Planned],
    obs: &mut dyn Observer,
) -> Result<(u64, u64), PaperError> {
    let (need, largest) = largest_run(setup, plan);
    let limit = memory_limit(&setup.opts);
    let total = need.total();
    if total <= limit {
        let jobs = setup.opts.jobs.max(1);
        if jobs > 1 && with_jobs(&need, jobs) > limit {
            obs.note(&format!(
                "{jobs} of the largest run ({largest}) at once would need about {} of {}: \
                 runs wait while their memory estimates do not fit beside the others'",
                gib(with_jobs(&need, jobs)),
                gib(limit)
            ));
        }
        return Ok((total, limit));
    }
    // The smallest larger scale that fits.
    let mut hint = String::new();
    let mut s = setup.opts.scale;
    while hint.is_empty() && s < max_scale() {
        s = (s * 2).min(max_scale());
        let mut o = setup.opts.clone();
        o.scale = s;
        if let Ok(st) = Setup::new(&o) {
            let (e, _) = largest_run(&st, &st.plan());
            if e.total() <= limit {
                hint = format!("; --scale {s} would need about {}", gib(e.total()));
                break;
            }
        }
    }
    Err(PaperError::Memory(Box::new(MemoryShortfall {
        need: gib(total),
        matrix: gib(need.matrix_bytes),
        run: gib(need.run_bytes),
        available: gib(limit),
        largest,
        hint,
    })))
}

/// The memory the runs may use: `--memory-limit`, or what the system has
/// available.
fn memory_limit(opts: &PaperOptions) -> u64 {
    opts.memory_limit
        .or_else(available_memory)
        .unwrap_or(u64::MAX)
}

/// `--report-only`'s refusal: `missing` of `plan` are not in the cache.
fn not_cached(opts: &PaperOptions, plan: &[Planned], missing: &[&Planned]) -> PaperError {
    PaperError::NotCached {
        missing: missing.len(),
        planned: plan.len(),
        cache: opts.out.join("cache").display().to_string(),
        version: opts.version.clone(),
        first: missing.first().map_or(String::new(), |p| p.label.clone()),
    }
}

/// One planned run as [`plan_only`] lists it.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedRun {
    /// What it is.
    pub label: String,
    /// Estimated peak memory of the run alone with its matrix, bytes.
    pub memory: u64,
    /// Estimated work, in the ETA's units ([`runs::work_units`]).
    pub work: u64,
    /// Its wall time when it was executed, seconds, if its finished
    /// record is in the cache (then it would not run again).
    pub wall_secs: Option<f64>,
    /// Its stand-in (`paper:NAME/S`).
    pub matrix: String,
}

impl PlannedRun {
    /// Its finished record is in the cache.
    pub fn cached(&self) -> bool {
        self.wall_secs.is_some()
    }
}

/// Work units ([`runs::work_units`]) one job executes per second of wall
/// time at the reference: `netsparse paper --quick` on the README's 2-core
/// VM on the afternoon of 2026-12-03 (two jobs of one thread each, 10 min
/// 9 s in all), 2,530.0 M units in 1,197.8 s of the runs' own wall time
/// (2.11 M/s). The same command took 7 min 28 s that morning (847 s of
/// runs, 2.99 M/s in these units): the VM's own spread. Each group of
/// runs of one stand-in and mode went at 1.45–4.1 M/s (SA aside); before
/// the stand-ins' weights (`runs::matrix_weight`) the spread was
/// 0.32–16. The evaluations committed under `docs/` ran at 0.91 (full
/// size) and 0.81 M/s (`--quick --model-ablation`) in the units before
/// those weights, with the binaries of 2026-11-26/27; the full size has
/// not been timed since.
pub const REFERENCE_UNITS_PER_SEC: f64 = 2.1e6;

/// A stand-in's cached runs' wall time below which their rate is not
/// trusted for an ETA, seconds.
pub const MIN_MEASURED_SECS: f64 = 10.0;

/// What [`plan_only`] found: every planned run, and the memory check that
/// [`run`] would make first. Nothing was generated, executed or written.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PlanReport {
    /// The runs, in plan order.
    pub runs: Vec<PlannedRun>,
    /// The run that needs the most memory alone (the first such).
    pub largest: String,
    /// Its estimated peak, bytes: the memory check's figure.
    pub memory_estimate: u64,
    /// The limit it was checked against, bytes.
    pub memory_limit: u64,
    /// Cache files that could not be trusted (their runs would run again).
    pub corrupt: Vec<String>,
    /// Roughly how long the runs not cached would take with `jobs` at
    /// once, seconds: each run's work at its stand-in's cached runs' rate
    /// (work over wall time) when they took at least
    /// [`MIN_MEASURED_SECS`], else at [`REFERENCE_UNITS_PER_SEC`]; handed
    /// to the jobs in the order [`run`] hands them out (stand-in after
    /// stand-in, with more than one job each one's longest first), each to
    /// the job that is free first, so one long run bounds it from below.
    /// Runs that wait for memory or a stand-in's generation make it longer.
    pub eta_secs: f64,
    /// Runs not cached that the ETA times at their stand-in's measured rate
    /// (the others at the reference rate).
    pub eta_measured: usize,
}

impl PlanReport {
    /// The runs not in the cache.
    pub fn to_run(&self) -> impl Iterator<Item = &PlannedRun> {
        self.runs.iter().filter(|r| !r.cached())
    }

    /// Set [`PlanReport::eta_secs`] for `jobs` at once.
    fn eta(&mut self, jobs: usize) {
        // (work units, seconds) of each stand-in's cached runs.
        let mut cached: HashMap<&str, (u64, f64)> = HashMap::new();
        for r in &self.runs {
            if let Some(w) = r.wall_secs {
                let e = cached.entry(r.matrix.as_str()).or_default();
                *e = (e.0 + r.work, e.1 + w);
            }
        }
        let mut measured = 0;
        // (stand-in, work, estimated seconds) of each run to do, in plan order.
        let mut todo: Vec<(&str, u64, f64)> = Vec::new();
        for r in self.to_run() {
            let rate = match cached.get(r.matrix.as_str()) {
                Some(&(units, s)) if s >= MIN_MEASURED_SECS && units > 0 => {
                    measured += 1;
                    units as f64 / s
                }
                _ => REFERENCE_UNITS_PER_SEC,
            };
            todo.push((r.matrix.as_str(), r.work, r.work as f64 / rate));
        }
        hand_out_order(&mut todo, jobs, |r| r.0, |r| r.1);
        self.eta_secs = makespan(todo.iter().map(|r| r.2), jobs);
        self.eta_measured = measured;
    }
}

/// Put the runs to do (stand-in after stand-in, each one's consecutive in
/// the plan) in the order [`run`] hands them out: with more than one job,
/// each stand-in's longest first, so its last runs (beside which the next
/// stand-in is generated and started) are short ones. The ETA orders its
/// estimates the same way.
fn hand_out_order<T, M: PartialEq>(
    runs: &mut [T],
    jobs: usize,
    stand_in: impl Fn(&T) -> M,
    work: impl Fn(&T) -> u64,
) {
    if jobs > 1 {
        for same in runs.chunk_by_mut(|a, b| stand_in(a) == stand_in(b)) {
            same.sort_by_key(|r| std::cmp::Reverse(work(r)));
        }
    }
}

/// When the last of `secs` (run durations, in the order they are handed
/// out) ends, each handed to whichever of `jobs` workers is free first.
fn makespan(secs: impl IntoIterator<Item = f64>, jobs: usize) -> f64 {
    let mut free = vec![0.0f64; jobs.max(1)];
    for s in secs {
        // The first worker to be free (`min_by` keeps the first of equals).
        if let Some(t) = free.iter_mut().min_by(|a, b| a.total_cmp(b)) {
            *t += s;
        }
    }
    free.into_iter().fold(0.0, f64::max)
}

/// What [`run`] with `opts` would do, without doing it: the planned runs
/// with their memory estimates and whether the cache in `opts.out` holds
/// each, after the same option and memory checks (a plan that does not fit
/// is refused with the same error). Reads the cache, creates nothing.
pub fn plan_only(opts: &PaperOptions, obs: &mut dyn Observer) -> Result<PlanReport, PaperError> {
    let setup = Setup::new(opts)?;
    let plan = setup.plan();
    let (memory_estimate, memory_limit) = check_memory(&setup, &plan, obs)?;
    let cache = Cache::reader(&opts.out.join("cache"));
    let mut report = PlanReport {
        memory_estimate,
        memory_limit,
        ..PlanReport::default()
    };
    let mut top = 0;
    for p in &plan {
        let wall_secs = match cache.get(&p.key) {
            Lookup::Hit(rec) => Some(rec.wall_secs),
            Lookup::Miss => None,
            Lookup::Corrupt(why) => {
                obs.note(&format!(
                    "a corrupt cache file, its run would be repeated: {why}"
                ));
                report.corrupt.push(why);
                None
            }
        };
        let memory = runs::estimate(p.matrix, opts.scale, &p.key.config, p.mode).total();
        // As `largest_run` (the memory check's) picks: the first largest.
        if memory > top {
            top = memory;
            report.largest = p.label.clone();
        }
        report.runs.push(PlannedRun {
            label: p.label.clone(),
            memory,
            work: p.work,
            wall_secs,
            matrix: p.key.matrix.clone(),
        });
    }
    report.eta(opts.jobs);
    Ok(report)
}

/// Run the evaluation: check the options and memory, take finished runs
/// from the cache, execute the missing ones (matrix by matrix, each
/// stand-in generated once), and write the report into `opts.out`. Returns
/// what was done; a Ctrl-C (`opts.stop`) ends the loop after the current
/// run is abandoned, keeps the finished ones and still writes a (partial)
/// report.
pub fn run(opts: &PaperOptions, obs: &mut dyn Observer) -> Result<Summary, PaperError> {
    let started = Instant::now();
    let setup = Setup::new(opts)?;
    let plan = setup.plan();
    let (estimate, limit) = if opts.report_only {
        (0, memory_limit(opts))
    } else {
        check_memory(&setup, &plan, obs)?
    };
    let users = !opts.programs.is_empty() || !opts.commands.is_empty();
    if !opts.report_only && users {
        // Every variant of the users' programs the plan needs compiles,
        // and the users' commands fit their programs, before anything is
        // generated.
        let mut c = opts.program_cache();
        c.compile_users(
            plan.iter()
                .flat_map(|p| crate::sim::cluster::mode_programs(p.mode)),
        )?;
        for w in c.take_warnings() {
            obs.note(w.trim_end());
        }
        for (which, _) in &opts.commands {
            crate::sim::cluster::check_commands(&mut c, *which)
                .map_err(|e| PaperError::Commands(e.to_string()))?;
        }
        // And on every switch after the simulator's entries, once per
        // network the plan's simulated runs use.
        let mut networks = Vec::new();
        for p in &plan {
            let Some(ab) = p.mode.ablation() else {
                continue;
            };
            let cfg = &p.key.config;
            let net = (
                cfg.nodes,
                cfg.racks,
                cfg.topology.to_string(),
                cfg.routing.to_string(),
                ab.switch,
            );
            if networks.contains(&net) {
                continue;
            }
            networks.push(net);
            crate::sim::cluster::check_commands_on_control_plane(&mut c, cfg, !ab.switch)
                .map_err(|e| PaperError::Commands(e.to_string()))?;
        }
    }
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| PaperError::Io { path, source }
    };
    // `--report-only` without a cache: refused before anything is created.
    if opts.report_only && !opts.out.join("cache").is_dir() {
        return Err(not_cached(opts, &plan, &plan.iter().collect::<Vec<_>>()));
    }
    std::fs::create_dir_all(&opts.out).map_err(io(&opts.out))?;
    let cache = Cache::open(&opts.out.join("cache"))?;
    let mut summary = Summary {
        runs_planned: plan.len(),
        memory_estimate: estimate,
        memory_limit: limit,
        report_only: opts.report_only,
        ..Summary::default()
    };

    // 1. What the cache already holds.
    let mut results = Results::default();
    let mut todo: Vec<&Planned> = Vec::new();
    for p in &plan {
        match cache.get(&p.key) {
            Lookup::Hit(rec) => {
                results.insert(p, *rec, true);
                summary.runs_cached += 1;
            }
            Lookup::Miss => todo.push(p),
            Lookup::Corrupt(why) => {
                let then = if opts.report_only {
                    ""
                } else {
                    ", the run is repeated"
                };
                obs.note(&format!("ignoring a corrupt cache file{then}: {why}"));
                summary.corrupt.push(why);
                todo.push(p);
            }
        }
    }
    if opts.report_only && !todo.is_empty() {
        return Err(not_cached(opts, &plan, &todo));
    }
    let work: u64 = todo.iter().map(|p| p.work).sum();
    obs.plan(plan.len(), summary.runs_cached, todo.len(), work);

    // 2. The missing runs, stand-in after stand-in (see `jobs`).
    // One program cache per worker, kept across stand-ins.
    let mut programs: Vec<ProgramCache> = (0..opts.jobs.max(1))
        .map(|_| opts.program_cache())
        .collect();
    hand_out_order(&mut todo, opts.jobs, |p| p.matrix, |p| p.work);
    let mut groups: Vec<jobs::Group> = Vec::new();
    for p in todo {
        match groups.last_mut() {
            Some(g) if g.matrix == p.matrix => g.runs.push(p),
            _ => groups.push(jobs::Group {
                matrix: p.matrix,
                runs: vec![p],
            }),
        }
    }
    let (overlap, need) = overlaps(&setup, &groups, limit, obs);
    summary.memory_overlap = need;
    let ended = jobs::run_all(
        &groups,
        overlap,
        opts,
        &mut programs,
        &cache,
        &mut results,
        &mut summary,
        obs,
    )?;
    if matches!(ended, jobs::Ended::Stopped) {
        summary.interrupted = true;
    }
    obs.finish();
    for p in &plan {
        if let Some(rec) = results.get(&p.key) {
            if !rec.verified() && !summary.failed.contains(&p.label) {
                summary.failed.push(p.label.clone());
            }
        }
    }
    summary.runs_missing = plan.len() - summary.runs_executed - summary.runs_cached;
    results.make_log(&plan);

    // 3. The report (partial if interrupted).
    summary.wall_secs = started.elapsed().as_secs_f64();
    // VmHWM, or a run's sample where it is higher: the kernel's RSS
    // counters are approximate and its high-water mark is not updated on
    // every path, so a sample can pass it by a little.
    let sampled = results
        .log
        .iter()
        .filter(|r| r.finished && !r.cached)
        .filter_map(|r| r.peak_rss)
        .max();
    summary.peak_rss = peak_rss().max(sampled);
    let rep = report::build(&setup, &results, &summary);
    summary.files = report::write(&rep, &opts.out)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(matrix: &str, work: u64, wall_secs: Option<f64>) -> PlannedRun {
        PlannedRun {
            label: String::new(),
            memory: 1,
            work,
            wall_secs,
            matrix: matrix.to_owned(),
        }
    }

    #[test]
    fn the_eta_uses_each_stand_ins_cached_rate_once_it_took_long_enough() {
        // a: 40 M units in 20 s cached, 2 M/s per job; b: 1 M in 5 s, too
        // little to trust. To run: 10 M on a, and 1.7 M on b at the
        // reference rate.
        let b_work = (REFERENCE_UNITS_PER_SEC * 2.0) as u64;
        let mut p = PlanReport {
            runs: vec![
                run("a", 30_000_000, Some(12.0)),
                run("a", 10_000_000, Some(8.0)),
                run("b", 1_000_000, Some(5.0)),
                run("a", 6_000_000, None),
                run("a", 4_000_000, None),
                run("b", b_work, None),
            ],
            ..PlanReport::default()
        };
        p.eta(1);
        assert_eq!(p.eta_measured, 2);
        assert!((p.eta_secs - 7.0).abs() < 1e-6, "{}", p.eta_secs);
        // Two jobs: a's 3 s and 2 s runs at once, then b's 2 s after the
        // 2 s one. Eight: no run waits, so the longest decides.
        p.eta(2);
        assert!((p.eta_secs - 4.0).abs() < 1e-6, "{}", p.eta_secs);
        p.eta(8);
        assert!((p.eta_secs - 3.0).abs() < 1e-6, "{}", p.eta_secs);
        // b's cached runs long enough: its own rate, 0.1 M/s.
        p.runs[2].wall_secs = Some(10.0);
        p.eta(1);
        assert_eq!(p.eta_measured, 3);
        assert!((p.eta_secs - (5.0 + b_work as f64 / 0.1e6)).abs() < 1e-6);
        // Nothing to run: no time.
        p.runs.truncate(3);
        p.eta(2);
        assert_eq!((p.eta_secs, p.eta_measured), (0.0, 0));
    }

    #[test]
    fn one_long_run_bounds_the_eta_and_each_stand_ins_longest_go_first() {
        // At the reference rate: a 1 s, a 1 s, a 10 s, then b 1 s and b 1 s.
        let units = |s: f64| (REFERENCE_UNITS_PER_SEC * s) as u64;
        let mut p = PlanReport {
            runs: vec![
                run("a", units(1.0), None),
                run("a", units(1.0), None),
                run("a", units(10.0), None),
                run("b", units(1.0), None),
                run("b", units(1.0), None),
            ],
            ..PlanReport::default()
        };
        let close = |got: f64, want: f64| assert!((got - want).abs() < 1e-3, "{got} != {want}");
        p.eta(1);
        close(p.eta_secs, 14.0);
        // a's 10 s run first (in plan order it would start after 1 s, and
        // end at 11 s) on one job; the other four, 4 s, on the other while
        // it runs. Dividing the 14 s by two would say 7 s.
        p.eta(2);
        close(p.eta_secs, 10.0);
        p.eta(4);
        close(p.eta_secs, 10.0);
        // Handed out last, a long run starts only when a job is free.
        close(makespan([1.0, 1.0, 10.0], 2), 11.0);
        close(makespan([10.0, 1.0, 1.0], 2), 10.0);
        close(makespan([2.0, 2.0, 2.0, 2.0], 2), 4.0);
        close(makespan(std::iter::empty(), 3), 0.0);
    }
}
