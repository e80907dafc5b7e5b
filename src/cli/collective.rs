//! `netsparse sim --collective allreduce`: the flags of the block-sparse
//! AllReduce runs (flattened into `netsparse sim`'s arguments) and their
//! table / JSON output. The simulation is `netsparse::sim::collective`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context as _};

use netsparse::programs::ProgramCache;
use netsparse::sim::collective::{run, AggAt, Algo, CollectiveParams};

/// The collective flags of `netsparse sim`.
#[derive(clap::Args, Debug, Default)]
pub struct CollectiveArgs {
    /// A collective instead of an SpMM gather: `allreduce` (ring against
    /// the OmNICCL aggregator; see README, "Block-sparse AllReduce").
    #[arg(long, value_name = "NAME", conflicts_with_all = ["matrix", "gen", "workload"])]
    pub collective: Option<String>,
    /// Collective: algorithms, comma-separated: ring, omnireduce, omniccl.
    #[arg(
        long,
        value_delimiter = ',',
        requires = "collective",
        value_name = "LIST"
    )]
    pub algo: Option<Vec<Algo>>,
    /// Collective: tensor size in bytes (a multiple of --block).
    #[arg(long, requires = "collective")]
    pub bytes: Option<u64>,
    /// Collective: block size in bytes (a multiple of 4, 4..=1428).
    #[arg(long, requires = "collective")]
    pub block: Option<u32>,
    /// Collective: blocks per OmNICCL round, d (1..=4096); omnireduce runs
    /// d streams of one block per round.
    #[arg(long, requires = "collective")]
    pub depth: Option<u32>,
    /// Collective: fraction of each worker's blocks that are nonzero, [0, 1].
    #[arg(long, requires = "collective")]
    pub density: Option<f64>,
    /// Collective: fraction of blocks whose nonzero pattern every worker
    /// shares, [0, 1] (0: independent patterns, the default; 1: the same
    /// nonzero blocks at every worker).
    #[arg(long, requires = "collective")]
    pub overlap: Option<f64>,
    /// Collective: workers, n (2..=256); the aggregator is one more node.
    #[arg(long, requires = "collective")]
    pub workers: Option<u32>,
    /// Collective: rounds in flight at the aggregator (2..=64).
    #[arg(long, requires = "collective")]
    pub window: Option<u32>,
    /// Collective: the aggregator's link rate, Gb/s (default: --link-gbps;
    /// --agg-at nic only).
    #[arg(long, requires = "collective")]
    pub agg_gbps: Option<u64>,
    /// Collective: where omniccl's and omnireduce's aggregator runs: `nic`
    /// (a SmartNIC of its own, programs/omniccl_agg.p4) or `switch` (the
    /// middle pipes of its ToR, programs/omniccl_switch.p4).
    #[arg(long, requires = "collective", value_name = "nic|switch")]
    pub agg_at: Option<AggAt>,
}

/// The flags `netsparse sim` shares with the collective runs.
#[derive(Debug, Default)]
pub struct Shared {
    /// `--racks`.
    pub racks: Option<u32>,
    /// `--link-gbps`.
    pub link_gbps: Option<u64>,
    /// `--link-latency-ns`.
    pub link_latency_ns: Option<u64>,
    /// `--switch-latency-ns`.
    pub switch_latency_ns: Option<u64>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--json`.
    pub json: Option<PathBuf>,
    /// `--quiet`.
    pub quiet: bool,
}

/// The parameters the flags give (unset ones keep the defaults).
pub fn params(a: &CollectiveArgs, s: &Shared) -> CollectiveParams {
    let d = CollectiveParams::default();
    let link = s.link_gbps.unwrap_or(d.link_gbps);
    CollectiveParams {
        algos: a.algo.clone().unwrap_or(d.algos),
        bytes: a.bytes.unwrap_or(d.bytes),
        block: a.block.unwrap_or(d.block),
        depth: a.depth.unwrap_or(d.depth),
        density: a.density.unwrap_or(d.density),
        overlap: a.overlap.unwrap_or(d.overlap),
        workers: a.workers.unwrap_or(d.workers),
        seed: s.seed.unwrap_or(d.seed),
        window: a.window.unwrap_or(d.window),
        racks: s.racks.unwrap_or(d.racks),
        link_gbps: link,
        agg_gbps: a.agg_gbps.unwrap_or(link),
        agg_at: a.agg_at.unwrap_or(d.agg_at),
        link_latency_ns: s.link_latency_ns.unwrap_or(d.link_latency_ns),
        switch_latency_ns: s.switch_latency_ns.unwrap_or(d.switch_latency_ns),
        max_sim_time_ms: d.max_sim_time_ms,
        drop_frame: None,
    }
}

/// Run `--collective NAME`; exit 1 if a result is wrong.
/// `programs` holds the user's `--spine-program` and `--spine-commands`, if
/// any.
pub fn run_cli(
    a: &CollectiveArgs,
    s: &Shared,
    mut programs: ProgramCache,
) -> anyhow::Result<ExitCode> {
    let name = a.collective.as_deref().unwrap_or("");
    if name != "allreduce" {
        bail!("--collective {name}: the only collective is allreduce");
    }
    let p = params(a, s);
    p.validate()?;
    let start = Instant::now();
    let rep = run(&p, &mut programs)?;
    let wall = start.elapsed().as_secs_f64();
    if let Some(path) = &s.json {
        let text = serde_json::to_string_pretty(&rep)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    if !s.quiet {
        let nz: u64 = rep.nonzero_blocks.iter().sum();
        println!(
            "AllReduce of {} bytes ({} blocks of {} B) over {} workers, density {}, overlap {} ({} nonzero blocks per worker on average, union {}), {} Gb/s links (aggregator {}), seed {}",
            p.bytes,
            rep.blocks,
            p.block,
            p.workers,
            p.density,
            p.overlap,
            nz / u64::from(p.workers),
            rep.union_blocks,
            p.link_gbps,
            match p.agg_at {
                AggAt::Nic => format!("on a NIC at {} Gb/s", p.agg_gbps),
                AggAt::Switch => "in the ToR's middle pipes".into(),
            },
            p.seed
        );
        for u in &rep.programs {
            println!("{u}");
        }
        for u in &rep.commands {
            println!("{u}");
        }
        println!(
            "bounds: dense ring 2(n-1)/n*N/B = {:.1} us; sparse per worker max(|S_w|, |U_-w|)*b/B = {:.1} us; one aggregator max(sum|S_w|, n|U|)*b/B = {:.1} us",
            rep.bounds.dense_ring_ns / 1e3,
            rep.bounds.sparse_worker_ns / 1e3,
            rep.bounds.sparse_aggregator_ns / 1e3
        );
        println!(
            "{:<11} {:>5} {:>7} {:>12} {:>12} {:>8} {:>14} {:>10} {:>9}",
            "algo",
            "depth",
            "streams",
            "time (us)",
            "bound (us)",
            "eff.",
            "max sent (B)",
            "agg. mem",
            "verified"
        );
        for r in &rep.results {
            let mem = r
                .aggregator
                .map(|s| s.state_bytes)
                .or(r.switch_aggregator.map(|s| s.unit.state_bytes))
                .map(|b| b.to_string())
                .unwrap_or_else(|| "-".into());
            println!(
                "{:<11} {:>5} {:>7} {:>12.2} {:>12.2} {:>8.3} {:>14} {:>10} {:>9}",
                r.algo.name(),
                r.depth,
                r.streams,
                r.time_ns / 1e3,
                r.bound_ns / 1e3,
                r.efficiency,
                r.max_node_bytes_sent,
                mem,
                if r.verified { "yes" } else { "NO" }
            );
            if let (Some(busy), Some(a)) = (r.agg_link_busy, r.aggregator) {
                println!(
                    "  {}: aggregator link busy {:.0} % of the run ({} frame bytes out), {} rounds",
                    r.algo,
                    busy * 100.0,
                    a.tx.bytes,
                    a.rounds
                );
            }
            if let Some(s) = r.switch_aggregator {
                println!(
                    "  {}: switch aggregator sent {} PRs, {} rounds",
                    r.algo, s.prs_sent, s.unit.rounds
                );
            }
            for pr in &r.problems {
                println!("  {}: {pr}", r.algo);
            }
        }
        let blocks = rep.blocks * u64::from(p.workers) * rep.results.len() as u64;
        println!(
            "wall {wall:.2} s ({:.2} M simulated worker blocks per second)",
            blocks as f64 / wall.max(1e-9) / 1e6
        );
    }
    Ok(if rep.verified() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
