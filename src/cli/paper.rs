//! `netsparse paper`: the paper's evaluation on the stand-ins in one
//! command. The work is in `netsparse::paper`; this file parses the
//! options, installs the Ctrl-C handler and prints the outcome.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use netsparse::paper::{self, progress::Bars, PaperOptions, Section};
use netsparse::sim::matrix::paper::PaperMatrix;

/// Arguments of `netsparse paper`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Runs the paper's evaluation on the calibrated stand-ins (paper:NAME/S):\n\
Figure 12 (K = 1, 16, 128: NetSparse and SAOpt vs SUOpt per matrix and gmean),\n\
Table 7 (tail node, K = 16), Table 8 (arabic and europe, every ablation step,\n\
K = 1, 16, 128), and the sweeps of Figure 15 (RIG batch), 17 (concatenation\n\
delay) and 18 (Property Cache size), Figure 22 (leaf-spine, HyperX and\n\
Dragonfly, K = 16), and from Figure 12's runs with the compute model the\n\
end-to-end Figures 13/14 (SPADE), 19 (active nodes) and 21 (CPUs). Every\n\
NetSparse run verifies each\n\
gathered property. Writes report.md (with SVG plots), report.json and\n\
report.csv into --out, each of our numbers beside the paper's.\n\
\n\
Finished runs are cached in OUT/cache/ (keyed by the full configuration and\n\
the binary's version): Ctrl-C keeps them, and the same command resumes.\n\
--report-only rebuilds OUT's report from them without running anything.\n\
\n\
Exit status: 0 done, 1 a verification failed, 2 usage or input error,\n\
130 stopped by Ctrl-C (the report holds what finished).\n\
\n\
Example: netsparse paper --quick\n\
         netsparse paper --scale 4 --only fig12,table7 --out paper-s4")]
pub struct Args {
    /// Stand-in scale divisor S: the matrices have Table 6's size ÷ S
    /// (default 1, the paper's size; 8 with --quick).
    #[arg(long, value_name = "S")]
    pub scale: Option<u32>,
    /// The 1/8-scale version with fewer sweep points.
    #[arg(long)]
    pub quick: bool,
    /// Sections to run, comma-separated: fig12, table7, fig13 (with 14),
    /// table8, fig15, fig17, fig18, fig19, fig21, fig22, model (default:
    /// all but model).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Add the model ablation: NetSparse vs SUOpt at K = 16 with each part
    /// of the system model (flow control, the middle pipes' PR rate, the
    /// host's posting cost, routing, header sizes) off or changed in turn.
    #[arg(long)]
    pub model_ablation: bool,
    /// Stand-ins to run, comma-separated: arabic, europe, queen, stokes,
    /// uk (default: all five).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub matrices: Vec<String>,
    /// Output directory (report, plots and the run cache).
    #[arg(long, value_name = "DIR", default_value = "netsparse-paper")]
    pub out: PathBuf,
    /// Compute nodes (Table 5: 128).
    #[arg(long, default_value_t = 128)]
    pub nodes: u32,
    /// Racks (Table 5: 8).
    #[arg(long, default_value_t = 8)]
    pub racks: u32,
    /// Threads for each run's event loop (default: the machine's cores
    /// divided among the --jobs); the results, and so the cache, are the
    /// same for every value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Runs at once at most, each on its own thread (default: the
    /// machine's cores). Each holds its own run memory: a run waits while
    /// its memory estimate does not fit beside those running; the next
    /// stand-in is generated beside the last runs of the previous one when
    /// both fit. The results, and so the cache, are the same for every
    /// value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
    /// Seed of the generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How the leaf-spine's ToRs pick a spine for traffic between racks:
    /// owner (default), rack-pair, node-pair or owner-load (see `netsparse sim
    /// --routing`); part of every run's configuration and cache key.
    #[arg(long, value_name = "ROUTING", default_value_t = PaperOptions::default().routing)]
    pub routing: netsparse::sim::topology::Routing,
    /// Memory the runs may use, GiB (default: what the system has available).
    #[arg(long, value_name = "GIB")]
    pub memory_limit: Option<f64>,
    /// Users' programs in place of the bundled ones (as `sim`'s).
    #[command(flatten)]
    pub programs: super::user_programs::ProgramArgs,
    /// Users' control-plane commands (as `sim`'s).
    #[command(flatten)]
    pub commands: super::user_programs::CommandArgs,
    /// Rebuild the report in --out from its cached runs, executing
    /// nothing: for a report's text or plots changed by a newer binary
    /// without running again. The setup (scale, sections, stand-ins,
    /// cluster, seed, routing) and the runs' version come from
    /// OUT/report.json (--runs-version overrides the version); every
    /// planned run must be cached, or nothing is written.
    #[arg(long, conflicts_with_all = [
        "scale", "quick", "only", "model_ablation", "matrices", "nodes", "racks", "seed", "routing",
        "nic_program", "tor_program", "spine_program", "nic_commands", "tor_commands",
        "spine_commands",
    ])]
    pub report_only: bool,
    /// List the planned runs with each one's memory estimate and whether
    /// OUT's cache holds it, make the memory check, and exit: nothing is
    /// generated, executed or written (status 2 if the plan does not fit).
    #[arg(long, conflicts_with = "report_only")]
    pub plan: bool,
    /// With --report-only: the version whose cached runs to use (a
    /// report's `setup.version`, e.g. 0.1.0+342bf106f387d489).
    #[arg(long, value_name = "VERSION", requires = "report_only")]
    pub runs_version: Option<String>,
    /// No progress bars.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// The options from the arguments; without `--jobs`, up to a run per core
/// at once (each run's event loop then gets the cores left to it); with
/// `--report-only`, the setup and runs' version of OUT/report.json.
fn options(a: &Args) -> anyhow::Result<PaperOptions> {
    let mut opts = parse(a)?;
    if a.report_only {
        opts = paper::report::options_of(&a.out.join("report.json"), &opts)?;
        if let Some(v) = &a.runs_version {
            opts.version = v.clone();
        }
        eprintln!(
            "report only: the setup of {} and the cached runs of version {} in {}",
            a.out.join("report.json").display(),
            opts.version,
            a.out.join("cache").display()
        );
    }
    Ok(opts)
}

/// Each run's event-loop threads: `--threads`, or the machine's cores
/// divided among `jobs` runs at once.
fn threads(a: &Args, jobs: usize) -> usize {
    match a.threads {
        Some(_) => super::sim::sim_threads(a.threads),
        None => (super::sim::sim_threads(None) / jobs.max(1)).max(1),
    }
}

fn parse(a: &Args) -> anyhow::Result<PaperOptions> {
    let mut only = a
        .only
        .iter()
        .map(|s| s.parse::<Section>())
        .collect::<Result<Vec<_>, _>>()?;
    if a.model_ablation {
        if only.is_empty() {
            only = Section::ALL.to_vec();
        }
        only.push(Section::Model);
    }
    let matrices = a
        .matrices
        .iter()
        .map(|s| paper::parse_matrix(s))
        .collect::<Result<Vec<PaperMatrix>, _>>()?;
    let memory_limit = match a.memory_limit {
        None => None,
        Some(g) if g.is_finite() && g > 0.0 && g <= 1e6 => Some((g * f64::from(1u32 << 30)) as u64),
        Some(g) => anyhow::bail!("--memory-limit = {g} is out of range: 0 < GiB <= 1000000"),
    };
    // Without --jobs: up to a run per core (the dispatcher admits runs by
    // their memory estimates).
    let cores = super::sim::sim_threads(None).min(64);
    let jobs = a.jobs.map_or(cores, usize::from);
    let programs = a.programs.read()?;
    let commands = a.commands.read()?;
    Ok(PaperOptions {
        programs,
        commands,
        scale: a
            .scale
            .unwrap_or(if a.quick { paper::QUICK_SCALE } else { 1 }),
        quick: a.quick,
        only,
        matrices,
        out: a.out.clone(),
        nodes: a.nodes,
        racks: a.racks,
        threads: threads(a, jobs),
        jobs,
        seed: a.seed,
        routing: a.routing,
        memory_limit,
        version: paper::binary_version(),
        report_only: a.report_only,
        stop: None,
    })
}

/// Run `netsparse paper`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut opts = options(&args)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let s = stop.clone();
        // The first Ctrl-C stops after abandoning the current run (finished
        // runs are already on disk); a second one exits at once.
        let _ = ctrlc::set_handler(move || {
            if s.swap(true, Ordering::Relaxed) {
                std::process::exit(130);
            }
        });
    }
    opts.stop = Some(stop.clone());
    let mut bars = Bars::new(args.quiet);
    if args.plan {
        print_plan(&paper::plan_only(&opts, &mut bars)?, &opts);
        return Ok(ExitCode::SUCCESS);
    }
    let s = paper::run(&opts, &mut bars)?;
    if s.report_only {
        println!(
            "{} runs from the cache of version {}; report rebuilt, nothing executed",
            s.runs_cached, opts.version
        );
    } else {
        println!(
            "{} runs: {} executed, {} from the cache, {} missing; {:.1} s; peak memory {} (estimated {})",
            s.runs_planned,
            s.runs_executed,
            s.runs_cached,
            s.runs_missing,
            s.wall_secs,
            s.peak_rss.map_or("?".into(), paper::gib),
            paper::gib(s.peak_estimate())
        );
    }
    if let Some(md) = s.files.first() {
        println!("report: {}", md.display());
    }
    if !s.failed.is_empty() {
        eprintln!("error: verification failed in {}", s.failed.join(", "));
        return Ok(ExitCode::from(1));
    }
    if s.interrupted || stop.load(Ordering::Relaxed) {
        eprintln!(
            "stopped by Ctrl-C: {} finished runs are cached; run the same command again to resume",
            s.runs_executed + s.runs_cached
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--plan`'s listing: a line per run (its work in [`paper::runs::work_units`],
/// about one remote idx of the NetSparse mode at K = 1 each), then the
/// totals and the memory check.
fn print_plan(p: &paper::PlanReport, opts: &PaperOptions) {
    let width = p.runs.iter().map(|r| r.label.len()).max().unwrap_or(0);
    println!("{:width$}  {:>10}  {:>12}  state", "run", "memory", "work");
    for r in &p.runs {
        println!(
            "{:width$}  {:>10}  {:>12}  {}",
            r.label,
            paper::gib(r.memory),
            r.work,
            if r.cached() { "cached" } else { "to run" }
        );
    }
    let to_run = p.to_run().count();
    let work: u64 = p.to_run().map(|r| r.work).sum();
    println!(
        "{} runs planned: {} in {}, {to_run} to run ({:.1} M work units); nothing was run or written",
        p.runs.len(),
        p.runs.len() - to_run,
        opts.out.join("cache").display(),
        work as f64 / 1e6,
    );
    println!(
        "the largest run alone, {}, needs about {} of the {} limit",
        p.largest,
        paper::gib(p.memory_estimate),
        paper::gib(p.memory_limit)
    );
    let reference = format!(
        "the reference rate ({:.2} M units/s per job on the README's 2-core VM; yours may differ by 2x)",
        paper::REFERENCE_UNITS_PER_SEC / 1e6
    );
    let rate = match p.eta_measured {
        0 => format!("at {reference}"),
        n if n == to_run => "at their stand-ins' cached runs' own rates".to_owned(),
        n => format!(
            "{n} of the {to_run} runs at their stand-ins' cached runs' own rates, the rest at {reference}"
        ),
    };
    println!(
        "about {} with {} job(s) at once, {rate}",
        duration(p.eta_secs),
        opts.jobs
    );
}

/// `s` seconds as `1 h 05 min`, `12 min` or `40 s`.
fn duration(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=119 => format!("{s} s"),
        120..=3599 => format!("{} min", (s + 30) / 60),
        _ => {
            let m = (s + 30) / 60;
            format!("{} h {:02} min", m / 60, m % 60)
        }
    }
}
