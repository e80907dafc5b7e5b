//! `netsparse sim --kernel spmm2d`: the flags of Brock et al.'s RDMA SpMM
//! runs (flattened into `netsparse sim`'s arguments), their Table 2-style
//! output and JSON, and the optional comparison with the 1D gather modes
//! on the same matrix. The simulation is `netsparse::sim::spmm2d`.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context as _};

use netsparse::programs::Bundled;
use netsparse::sim::cluster::mode_programs;
use netsparse::sim::compute::{ComputeModel, Rates};
use netsparse::sim::partition::Partition;
use netsparse::sim::spmm2d::{run, Alg, Spmm2dParams};

use super::sim::{load_matrix, Args, DelayedBar};
use super::user_programs::programs_for;

/// The 2D SpMM flags of `netsparse sim`.
#[derive(clap::Args, Debug, Default)]
pub struct Spmm2dArgs {
    /// A 2D SpMM kernel instead of the 1D gather: `spmm2d` (Brock, Buluç,
    /// Yelick's RDMA SpMM on a √p×√p tile grid; see README, "RDMA SpMM").
    #[arg(long, value_name = "NAME", conflicts_with_all = ["workload", "collective"])]
    pub kernel: Option<String>,
    /// spmm2d: algorithms, comma-separated: s-c, s-a, ws-rand, ws-la.
    #[arg(long, value_delimiter = ',', requires = "kernel", value_name = "LIST")]
    pub alg: Option<Vec<Alg>>,
    /// spmm2d: relabel the matrix first with the seeded random symmetric
    /// permutation of `matrix info --tiles` (rows and columns alike).
    #[arg(long, value_name = "SEED", requires = "kernel")]
    pub relabel: Option<u64>,
    /// spmm2d: also run the 1D gather modes of --mode on the same matrix and
    /// nodes, and print their communication time beside.
    #[arg(long, requires = "kernel")]
    pub compare: bool,
}

/// The parameters the flags give (unset ones keep the defaults).
fn params(a: &Spmm2dArgs, s: &Args) -> anyhow::Result<Spmm2dParams> {
    let d = Spmm2dParams::default();
    let model = s.compute.unwrap_or(ComputeModel::Spade);
    let base = model.rates().unwrap_or(d.rates);
    Ok(Spmm2dParams {
        algs: a.alg.clone().unwrap_or(d.algs),
        nodes: s.nodes.unwrap_or(d.nodes),
        racks: s.racks.unwrap_or(d.racks),
        k: s.k.unwrap_or(d.k),
        seed: s.seed.unwrap_or(d.seed),
        rates: Rates {
            gflops: s.compute_gflops.unwrap_or(base.gflops),
            gbps: s.compute_gbps.unwrap_or(base.gbps),
        },
        link_gbps: s.link_gbps.unwrap_or(d.link_gbps),
        link_latency_ns: s.link_latency_ns.unwrap_or(d.link_latency_ns),
        switch_latency_ns: s.switch_latency_ns.unwrap_or(d.switch_latency_ns),
        max_sim_time_ms: d.max_sim_time_ms,
    })
}

/// Run `--kernel NAME`; exit 1 if a result is wrong.
pub fn run_cli(s: &Args) -> anyhow::Result<ExitCode> {
    let a = &s.spmm2d;
    let name = a.kernel.as_deref().unwrap_or("");
    if name != "spmm2d" {
        bail!("--kernel {name}: the only kernel is spmm2d");
    }
    let p = params(a, s)?;
    // The user's ToR and spine programs and commands, read, compiled and
    // checked before the matrix; with --compare the gather modes' too.
    let mut needed = vec![(Bundled::Tor, Vec::new()), (Bundled::Spine, Vec::new())];
    if a.compare {
        needed.extend(s.mode.iter().flat_map(|&m| mode_programs(m)));
    }
    let mut programs = programs_for(&s.programs, &s.commands, &needed, &|role| {
        format!(
            "--kernel spmm2d runs no {role} program: its switches run the ToR and spine programs, its nodes are RDMA endpoints without a P4 program (the NIC program runs in --compare's gather modes)"
        )
    })?;
    netsparse::sim::spmm2d::check_switch_commands(&p, &mut programs)?;
    let mut bar = DelayedBar::new(!s.quiet);
    let (m, mut summary) = load_matrix(s.matrix.as_deref(), s.gen.as_deref(), p.seed, &mut bar)?;
    bar.finish();
    let m = match a.relabel {
        Some(seed) => {
            summary.name = format!("{} relabelled (seed {seed})", summary.name);
            netsparse::sim::tiling::relabel(&m, seed).context("--relabel")?
        }
        None => m,
    };
    p.validate(&m)?;
    let start = Instant::now();
    let mut rep = run(&m, &p, &mut programs)?;
    let wall = start.elapsed().as_secs_f64();
    let gather = if a.compare {
        let mut cfg = super::sim::config(s)?;
        // The same nodes, racks and K as the 2D run (their defaults differ).
        cfg.nodes = p.nodes;
        cfg.racks = p.racks;
        cfg.k = p.k;
        cfg.validate().context("--compare")?;
        let part = Partition::equal(&m, p.nodes)?;
        let opts = netsparse::sim::cluster::RunOptions::default();
        let r = netsparse::sim::simulate_with(
            &m,
            summary.clone(),
            &part,
            &cfg,
            &s.mode,
            &opts,
            &mut programs,
            &mut |_| true,
        )?;
        r.modes
            .iter()
            .map(|x| (x.mode.clone(), x.time().as_ps() as f64 / 1e3))
            .collect()
    } else {
        Vec::new()
    };
    // With --compare the gather modes may have run the user's NIC program too.
    rep.programs = programs.uses();
    rep.commands = programs.command_uses();
    if let Some(path) = &s.json {
        let doc =
            serde_json::json!({ "matrix": summary, "spmm2d": rep, "gather_modes_ns": gather });
        std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let g = rep.grid;
    println!(
        "RDMA SpMM of {} ({} x {}, {} nonzeros) times B ({} x {}) on a {g}x{g} grid of {} nodes in {} racks, {} Gb/s links, compute {} GFLOP/s / {} GB/s, seed {}",
        summary.name,
        summary.rows,
        summary.cols,
        summary.nnz,
        summary.cols,
        p.k,
        p.nodes,
        p.racks,
        p.link_gbps,
        p.rates.gflops,
        p.rates.gbps,
        p.seed
    );
    for u in &rep.programs {
        println!("{u}");
    }
    for u in &rep.commands {
        println!("{u}");
    }
    println!(
        "{:<8} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>12} {:>7} {:>10} {:>9}",
        "alg",
        "time (us)",
        "compute",
        "comm",
        "accum",
        "imbalance",
        "READ (B)",
        "WRITE (B)",
        "FADDs",
        "comp. imb.",
        "verified"
    );
    for r in &rep.results {
        println!(
            "{:<8} {:>11.2} {:>11.2} {:>11.2} {:>11.2} {:>11.2} {:>12} {:>12} {:>7} {:>10.2} {:>9}",
            r.alg.name(),
            r.time_ns / 1e3,
            r.compute_ns / 1e3,
            r.communication_ns / 1e3,
            r.accumulate_ns / 1e3,
            r.imbalance_ns / 1e3,
            r.read_bytes,
            r.write_bytes,
            r.fetch_adds,
            r.compute_imbalance,
            if r.verified { "yes" } else { "NO" }
        );
        for pr in &r.problems {
            println!("  {}: {pr}", r.alg);
        }
    }
    println!("(compute, comm, accum, imbalance: means over processes, us; comp. imb.: max/mean compute time over processes)");
    if let Some(m) = rep.results.iter().find_map(|r| r.model.as_ref()) {
        println!(
            "cost model (alpha-beta + roofline, no link contention; alpha = {:.0} ns READ round trip in a rack, beta = {:.1} B/ns; ws-* as s-c, steals not modelled):",
            m.alpha_ns, m.beta_bytes_per_ns
        );
        println!(
            "{:<8} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
            "alg", "time (us)", "compute", "comm", "accum", "imbalance", "sim/model"
        );
        for r in &rep.results {
            let Some(m) = &r.model else { continue };
            println!(
                "{:<8} {:>11.2} {:>11.2} {:>11.2} {:>11.2} {:>11.2} {:>11.2}",
                r.alg.name(),
                m.time_ns / 1e3,
                m.compute_ns / 1e3,
                m.communication_ns / 1e3,
                m.accumulate_ns / 1e3,
                m.imbalance_ns / 1e3,
                r.time_ns / m.time_ns.max(1e-9)
            );
        }
    }
    if !gather.is_empty() {
        println!(
            "1D gather on the same matrix and {} nodes (communication only):",
            p.nodes
        );
        for (mode, ns) in &gather {
            println!("{mode:<8} {:>11.2}", ns / 1e3);
        }
    }
    if let Some(dir) = &s.plot_dir {
        plots(dir, &rep, &gather)?;
    }
    if !s.quiet {
        eprintln!("wall {wall:.2} s");
    }
    Ok(if rep.verified() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--plot-dir`: `spmm2d.svg` (each algorithm's simulated and modelled
/// time and its communication, beside `--compare`'s 1D gather modes) and
/// `spmm2d-breakdown.svg` (Table 2's breakdown per algorithm).
fn plots(
    dir: &std::path::Path,
    rep: &netsparse::sim::spmm2d::Spmm2dReport,
    gather: &[(String, f64)],
) -> anyhow::Result<()> {
    use netsparse::sim::plot::{bar_chart, Series};
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let us = |ns: f64| ns / 1e3;
    let mut cats: Vec<String> = rep
        .results
        .iter()
        .map(|r| r.alg.name().to_owned())
        .collect();
    let n2 = cats.len();
    cats.extend(gather.iter().map(|(m, _)| format!("{m} (1D)")));
    let pad = |mut v: Vec<f64>| {
        v.resize(cats.len(), f64::NAN);
        v
    };
    let time = pad(rep.results.iter().map(|r| us(r.time_ns)).collect());
    let model = pad(rep
        .results
        .iter()
        .map(|r| r.model.as_ref().map_or(f64::NAN, |m| us(m.time_ns)))
        .collect());
    let mut comm: Vec<f64> = rep.results.iter().map(|r| us(r.communication_ns)).collect();
    comm.extend(gather.iter().map(|(_, ns)| us(*ns)));
    let series = [
        Series {
            name: "simulated time".into(),
            values: time,
        },
        Series {
            name: "cost model time".into(),
            values: model,
        },
        Series {
            name: "communication (2D: mean per process; 1D: gather)".into(),
            values: comm,
        },
    ];
    let p = dir.join("spmm2d.svg");
    bar_chart(&p, "RDMA SpMM and the 1D gather", "us", &cats, &series)
        .with_context(|| format!("writing {}", p.display()))?;
    let part = |f: &dyn Fn(&netsparse::sim::spmm2d::AlgResult) -> f64| -> Vec<f64> {
        rep.results.iter().map(|r| us(f(r))).collect()
    };
    let series = [
        Series {
            name: "compute".into(),
            values: part(&|r| r.compute_ns),
        },
        Series {
            name: "communication".into(),
            values: part(&|r| r.communication_ns),
        },
        Series {
            name: "accumulation".into(),
            values: part(&|r| r.accumulate_ns),
        },
        Series {
            name: "load imbalance".into(),
            values: part(&|r| r.imbalance_ns),
        },
    ];
    let p = dir.join("spmm2d-breakdown.svg");
    bar_chart(
        &p,
        "RDMA SpMM breakdown (means over processes)",
        "us",
        &cats[..n2],
        &series,
    )
    .with_context(|| format!("writing {}", p.display()))?;
    println!(
        "plots: {}, {}",
        dir.join("spmm2d.svg").display(),
        p.display()
    );
    Ok(())
}
