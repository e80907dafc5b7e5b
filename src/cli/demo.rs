//! `netsparse demo`: the tool's main job in one command, on embedded
//! defaults — compile the bundled programs, simulate a small leaf-spine
//! cluster gathering a generated power-law matrix under SUOpt, SAOpt and
//! every NetSparse ablation step, verify every gathered property, and
//! report the headline comparison with plots and JSON.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;

use netsparse::programs::{Bundled, ProgramCache};
use netsparse::sim::cluster::RunOptions;
use netsparse::sim::config::SimConfig;
use netsparse::sim::matrix::GenSpec;
use netsparse::sim::partition::Partition;
use netsparse::sim::plot;
use netsparse::sim::report::{fmt_bytes, pct, MatrixSummary, Report};
use netsparse::sim::{simulate_with, Mode, Progress};

use super::sim::DelayedBar;

/// The demo's matrix: R-MAT (a power-law web-like graph, the paper's
/// arabic/uk stand-in) with hub columns many nodes read, so filtering,
/// coalescing, concatenation and the Property Cache all show. Sparse
/// enough (2 nonzeros per column) that a node needs a small share of the
/// property vector, as in the paper's large graphs, so gathering only the
/// needed properties pays off against SUOpt's full broadcast.
pub const DEMO_MATRIX: &str = "rmat:scale=18,ef=2";
/// Nodes and racks of the demo cluster.
pub const DEMO_NODES: u32 = 32;
/// Racks of the demo cluster.
pub const DEMO_RACKS: u32 = 4;
/// Nonzeros per RIG command in the demo: the matrix is ~2,000 times
/// smaller than the paper's, so the batch is scaled down to keep every
/// client unit of a node busy (the paper uses 8k–32k).
pub const DEMO_RIG_BATCH: u32 = 512;

/// Arguments of `netsparse demo`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Runs, with no arguments: compile the bundled programs/netsparse_nic.p4,\n\
netsparse_tor.p4 and netsparse_spine.p4 (embedded in the binary); generate\n\
an R-MAT matrix (rmat:scale=18,ef=2, ~500k nonzeros); simulate 32 nodes in\n\
4 racks (Table 5's links, switches and SmartNICs, K = 16) under SUOpt,\n\
SAOpt and the NetSparse ablation steps rig, +filter, +coalesce, +nic-concat\n\
and netsparse; verify every gathered property; print the comparison and\n\
write report.json, report.csv, speedup.svg and ablation.svg.\n\
\n\
Exit status: 0 done, 1 verification failed, 2 error, 130 Ctrl-C.")]
pub struct Args {
    /// Where to write the JSON, CSV and plots.
    #[arg(long, value_name = "DIR", default_value = "netsparse-demo")]
    pub out: PathBuf,
    /// Only SU, SA and full NetSparse (skip the ablation steps).
    #[arg(long)]
    pub quick: bool,
    /// Threads for the event loop (default: the machine's cores); the
    /// results are the same for every value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Run `netsparse demo`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    {
        let s = stop.clone();
        let _ = ctrlc::set_handler(move || s.store(true, Ordering::Relaxed));
    }
    let say = |s: String| {
        if !args.quiet {
            eprintln!("{s}");
        }
    };

    // The output directory first: fail before minutes of simulation.
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;

    // 1. The bundled programs.
    let mut programs = ProgramCache::new();
    let t = Instant::now();
    for (which, defines) in [
        (Bundled::Nic, &[][..]),
        (Bundled::Tor, &[][..]),
        (Bundled::Spine, &[][..]),
    ] {
        programs.get(which, defines)?;
    }
    say(format!(
        "compiled the bundled programs/{}, {} and {} in {:.2} s",
        Bundled::Nic.file(),
        Bundled::Tor.file(),
        Bundled::Spine.file(),
        t.elapsed().as_secs_f64()
    ));

    // 2. The matrix and the cluster.
    let spec: GenSpec = DEMO_MATRIX.parse()?;
    let cfg = SimConfig {
        nodes: DEMO_NODES,
        racks: DEMO_RACKS,
        rig_batch: DEMO_RIG_BATCH,
        ..SimConfig::default()
    };
    cfg.validate()?;
    let (m, info) = spec.generate(cfg.seed)?;
    let summary = MatrixSummary {
        name: spec.to_string(),
        rows: m.rows(),
        cols: m.cols(),
        nnz: m.nnz(),
        duplicates: info.duplicates,
    };
    let part = Partition::equal(&m, cfg.nodes)?;
    say(format!(
        "matrix {} ({} x {}, {} nonzeros) on {} nodes in {} racks of {} (ToRs: {} ports in {} pipes), K = {}",
        summary.name,
        summary.rows,
        summary.cols,
        summary.nnz,
        cfg.nodes,
        cfg.racks,
        cfg.nodes / cfg.racks,
        cfg.topology()?.tor_ports(),
        cfg.topology()?.tor_pipes(),
        cfg.k
    ));

    // 3. Simulate.
    let modes: Vec<Mode> = if args.quick {
        vec![Mode::Su, Mode::Sa, Mode::NetSparse]
    } else {
        Mode::ALL.to_vec()
    };
    // The simulated modes at once on the machine's cores (the same
    // results as one after another).
    let simulated = modes.iter().filter(|m| m.ablation().is_some()).count();
    let (jobs, threads) = super::sim::parallelism(None, args.threads, simulated);
    let opts = RunOptions {
        spmm: true,
        corrupt_idx: None,
        stop: Some(stop.clone()),
        threads,
        jobs,
        link_flows: Vec::new(),
        owner_needs: None,
    };
    let mut bar = DelayedBar::new(!args.quiet && std::io::stderr().is_terminal());
    let report = simulate_with(
        &m,
        summary,
        &part,
        &cfg,
        &modes,
        &opts,
        &mut programs,
        &mut |p: Progress| {
            bar.update(p.phase, p.done, p.total);
            !stop.load(Ordering::Relaxed)
        },
    )?;
    bar.finish();

    // 4. Report.
    print!("{}", report.table());
    println!();
    print!("{}", headline(&report));
    let json = args.out.join("report.json");
    std::fs::write(&json, report.to_json())
        .with_context(|| format!("cannot write {}", json.display()))?;
    let csv = args.out.join("report.csv");
    let f =
        std::fs::File::create(&csv).with_context(|| format!("cannot write {}", csv.display()))?;
    report
        .write_csv(f)
        .with_context(|| format!("cannot write {}", csv.display()))?;
    let mut written = vec![json, csv];
    let sp = args.out.join("speedup.svg");
    plot::speedup_chart(&sp, &[&report])?;
    written.push(sp);
    if !args.quick && !report.stopped {
        let ab = args.out.join("ablation.svg");
        plot::ablation_report_chart(&ab, &report)?;
        written.push(ab);
    }
    println!();
    println!("wrote:");
    for p in &written {
        println!("  {}", p.display());
    }
    let at_once = if opts.jobs > 1 {
        format!(", {} runs at once", opts.jobs)
    } else {
        String::new()
    };
    println!(
        "done in {:.1} s (simulator{at_once}: {})",
        started.elapsed().as_secs_f64(),
        report
            .modes
            .iter()
            .filter_map(|m| m
                .run
                .as_ref()
                .map(|r| format!("{} {:.1} s", m.mode, r.wall_secs)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Err(e) = report.check() {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    if report.stopped {
        eprintln!("stopped by Ctrl-C: the statistics above are partial");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// The headline lines: NetSparse vs SU and SA, and its mechanisms at work.
fn headline(r: &Report) -> String {
    let mut s = String::new();
    let (Some(su), Some(ns)) = (r.mode("su"), r.mode("netsparse")) else {
        return s;
    };
    let sa = r.mode("sa");
    s.push_str("NetSparse on this cluster:\n");
    s.push_str(&format!(
        "  communication time {} vs SUOpt {}{}: {} SUOpt{}\n",
        ns.time(),
        su.time(),
        sa.map_or(String::new(), |a| format!(" and SAOpt {}", a.time())),
        faster(ns.speedup_vs_su.unwrap_or(f64::NAN)),
        sa.map_or(String::new(), |a| format!(
            ", {} SAOpt",
            faster(a.time().as_ps() as f64 / ns.time().as_ps().max(1) as f64)
        )),
    ));
    if let Some(t) = ns.tail_node() {
        s.push_str(&format!(
            "  tail node n{}: {} received ({} payload) vs {} under SUOpt: {:.1}x less traffic\n",
            t.node,
            fmt_bytes(t.rx.total()),
            fmt_bytes(t.rx.payload),
            fmt_bytes(su.node(t.node).map_or(0, |n| n.rx.total())),
            ns.traffic_reduction_vs_su.unwrap_or(f64::NAN)
        ));
        s.push_str(&format!(
            "  filtered or coalesced {} of its remote nonzeros; {:.1} PRs per response packet; goodput {}, line utilisation {}\n",
            t.fc_rate.map_or("-".into(), pct),
            t.prs_per_packet.unwrap_or(f64::NAN),
            pct(t.goodput),
            pct(t.line_util)
        ));
        s.push_str(&format!(
            "  Property Cache hit rate: {} at its ToR, {} over all ToRs{}\n",
            t.cache_hit_rate.map_or("-".into(), pct),
            ns.cache_hit_rate.map_or("-".into(), pct),
            ns.pr_reduction_vs_sa
                .map_or(String::new(), |x| format!("; {x:.1}x fewer PRs than SAOpt"))
        ));
    }
    if let Some(v) = &ns.verification {
        s.push_str(&format!(
            "  verification: {} ({} remote properties on {} nodes, SpMM rows {})\n",
            if v.passed() { "passed" } else { "FAILED" },
            v.needed,
            v.nodes,
            v.spmm_rows.unwrap_or(0)
        ));
    }
    s
}

/// "3.2x faster than" or, below 1, "1.3x slower than".
fn faster(speedup: f64) -> String {
    if speedup.is_finite() && speedup > 0.0 && speedup < 1.0 {
        format!("{:.1}x slower than", 1.0 / speedup)
    } else {
        format!("{speedup:.1}x faster than")
    }
}
