//! `netsparse sim`: simulate the gather of one SpMM iteration on a
//! partitioned matrix in a leaf-spine cluster, and report Table 7's columns.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use netsparse::programs::Bundled;
use netsparse::sim::cluster::{check_commands_on_control_plane, check_mode, RunOptions};
use netsparse::sim::compute::ComputeModel;
use netsparse::sim::config::SimConfig;
use netsparse::sim::matrix::{self, CsrMatrix, GenSpec, ReadOptions};
use netsparse::sim::memory;
use netsparse::sim::partition::Partition;
use netsparse::sim::plot;
use netsparse::sim::points::{simulate_points, Point};
use netsparse::sim::report::MatrixSummary;
use netsparse::sim::topology::TableTemplates;
use netsparse::sim::{Mode, Progress};

/// Arguments of `netsparse sim`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Modes: su (SUOpt) and sa (SAOpt) of the paper's section 8.1 (analytic), and\n\
the cumulative ablation steps of Table 8 on the simulated cluster running the\n\
compiled programs: rig (RIG units only), +filter, +coalesce, +nic-concat, and\n\
netsparse (= +switch: NetSparse ToRs with Property Cache and concatenation).\n\
Every NetSparse run verifies each node's gathered properties (--spmm also\n\
checks one SpMM iteration); a mismatch or failed command exits with 1.\n\
\n\
Parameters: Table 5's values are the defaults; --config FILE.toml sets any\n\
of them (kebab-case keys: nodes, racks, spines, k, mtu, link-gbps,\n\
link-latency-ns, switch-latency-ns, rig-batch, rig-units, rig-clients,\n\
pending-entries, nic-delay-cycles, switch-delay-cycles, nic-clock-mhz,\n\
switch-clock-mhz, cache-bytes, cache-unbounded, cache-ways,\n\
cache-latency-cycles, sa-cores, sa-pr-overhead-ns, seed, max-events,\n\
max-sim-time-ms, switch-pr-cycles, host-post-ns, compute, compute-gflops, compute-gbps,\n\
host-model, compute-rate, chunk-nnz, trigger-table); command-line flags\n\
override the file. --sweep also takes\n\
delay-cycles=V (NIC V, switch V/4, as Figure 17) and cache-bytes=unbounded.\n\
\n\
Exit status: 0 done, 1 verification failed, 2 usage or input error, 130\n\
stopped by Ctrl-C (the partial statistics are still printed and written).\n\
\n\
Collectives: --collective allreduce runs ring, omnireduce and omniccl (the\n\
OmNICCL aggregator, programs/omniccl_agg.p4 on a SmartNIC, or with\n\
--agg-at switch programs/omniccl_switch.p4 in the ToR's middle pipes) on\n\
workers' seeded block-sparse tensors, each result verified against the\n\
direct sum: --algo, --bytes, --block, --depth, --density, --workers,\n\
--window, --agg-gbps, --agg-at (with --racks, --link-gbps,\n\
--link-latency-ns, --switch-latency-ns, --seed, --json).\n\
\n\
2D SpMM: --kernel spmm2d runs Brock et al.'s RDMA SpMM (--alg s-c, s-a,\n\
ws-rand, ws-la) on a sqrt(p) x sqrt(p) tile grid of --nodes (a perfect\n\
square) with one-sided READ/WRITE/FETCH_ADD PRs, C verified exactly; with\n\
--matrix/--gen, --k, --racks, --compute(-gflops/-gbps), --link-gbps, --seed,\n\
--json, --plot-dir (spmm2d.svg, spmm2d-breakdown.svg); --compare also runs\n\
--mode's 1D gather modes. An alpha-beta + roofline cost model is printed\n\
beside the simulated breakdown.\n\
\n\
Example: netsparse sim --gen rmat:scale=16,ef=16 --nodes 32 --racks 4 --k 16\n\
         netsparse sim --matrix queen.mtx --mode su,sa,netsparse --json out.json --plot-dir plots\n\
         netsparse sim --gen grid2d:nx=512,ny=512 --mode su,rig,+filter,+coalesce,+nic-concat,netsparse\n\
         netsparse sim --gen rmat:scale=16 --mode netsparse --sweep rig-batch=1024,4096,16384\n\
         netsparse sim --collective allreduce --bytes 4194304 --block 1024 --depth 256 --density 0.25\n\
         netsparse sim --kernel spmm2d --alg s-c,s-a,ws-rand,ws-la --gen rmat:scale=12,ef=8 --nodes 16 --k 16")]
pub struct Args {
    /// A Matrix Market file.
    #[arg(
        long,
        value_name = "FILE.mtx",
        conflicts_with = "gen",
        required_unless_present_any = ["gen", "workload", "collective"]
    )]
    pub matrix: Option<PathBuf>,
    /// A sPIN workload instead of an SpMM gather: `pingpong`, `bcast` or
    /// `strided` (see README, "sPIN on the NIC"), sPIN against an RDMA
    /// baseline with sPIN's parameters.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["matrix", "gen"])]
    pub workload: Option<String>,
    /// sPIN workloads: message sizes in bytes (pingpong, bcast) or block
    /// sizes (strided), comma-separated; default 64,...,1 MiB (block sizes 4,...,64 KiB).
    #[arg(
        long,
        value_name = "LIST",
        requires = "workload",
        value_delimiter = ','
    )]
    pub sizes: Option<Vec<u64>>,
    /// sPIN workloads: DMA latency in ns (250 a discrete NIC, 50 an integrated one).
    #[arg(long, value_name = "NS", requires = "workload", default_value_t = 250)]
    pub dma_ns: u64,
    /// A generated matrix, e.g. `rmat:scale=16,ef=16`, `grid2d:nx=512,ny=512`,
    /// `grid3d:nx=64,ny=64,nz=64`, `banded:n=65536,width=64,density=0.25`,
    /// `uniform:rows=65536,cols=65536,nnz=1000000`.
    #[arg(long, value_name = "SPEC")]
    pub gen: Option<String>,
    /// A partition file (N lines `start end`); default: equal contiguous rows.
    #[arg(long, value_name = "FILE")]
    pub partition: Option<PathBuf>,
    /// Modes to run, comma-separated: su, sa, rig, +filter, +coalesce,
    /// +nic-concat, netsparse.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "su,sa,netsparse",
        allow_hyphen_values = true
    )]
    pub mode: Vec<Mode>,
    /// Also check one SpMM iteration with the gathered properties against a
    /// direct computation (stores the gathered properties: more memory).
    #[arg(long)]
    pub spmm: bool,
    /// Test hook: the owner of this idx serves a corrupted property, so the
    /// verification must fail.
    #[arg(long, hide = true)]
    pub corrupt_idx: Option<u64>,
    /// TOML file with parameters.
    #[arg(long, value_name = "FILE.toml")]
    pub config: Option<PathBuf>,
    /// Compute nodes.
    #[arg(long)]
    pub nodes: Option<u32>,
    /// Racks (nodes must divide by racks).
    #[arg(long)]
    pub racks: Option<u32>,
    /// Spine switches (default: nodes per rack).
    #[arg(long)]
    pub spines: Option<u32>,
    /// Property elements (4 bytes each).
    #[arg(long)]
    pub k: Option<u32>,
    /// IP MTU, bytes.
    #[arg(long)]
    pub mtu: Option<u32>,
    /// Link bandwidth, Gb/s.
    #[arg(long)]
    pub link_gbps: Option<u64>,
    /// One-way link latency, ns.
    #[arg(long)]
    pub link_latency_ns: Option<u64>,
    /// Switch pipeline latency, ns.
    #[arg(long)]
    pub switch_latency_ns: Option<u64>,
    /// Nonzeros per RIG command.
    #[arg(long)]
    pub rig_batch: Option<u32>,
    /// RIG Units per SNIC.
    #[arg(long)]
    pub rig_units: Option<u32>,
    /// Client RIG Units per SNIC (default: half of them).
    #[arg(long)]
    pub rig_clients: Option<u32>,
    /// Pending PR Table entries per RIG Unit.
    #[arg(long)]
    pub pending_entries: Option<u32>,
    /// NIC concatenation delay cycles.
    #[arg(long)]
    pub nic_delay_cycles: Option<u64>,
    /// Switch concatenation delay cycles.
    #[arg(long)]
    pub switch_delay_cycles: Option<u64>,
    /// Property Cache bytes per switch (or with K, M, G: powers of 1024).
    #[arg(long, value_name = "BYTES", value_parser = netsparse::sim::memory::parse_bytes)]
    pub cache_bytes: Option<u64>,
    /// An unbounded Property Cache (overrides --cache-bytes).
    #[arg(long)]
    pub cache_unbounded: bool,
    /// Property Cache ways.
    #[arg(long)]
    pub cache_ways: Option<u32>,
    /// Property Cache latency, switch cycles.
    #[arg(long)]
    pub cache_latency_cycles: Option<u64>,
    /// SmartNIC clock, MHz.
    #[arg(long)]
    pub nic_clock_mhz: Option<u64>,
    /// Switch clock, MHz.
    #[arg(long)]
    pub switch_clock_mhz: Option<u64>,
    /// SAOpt cores per node.
    #[arg(long)]
    pub sa_cores: Option<u32>,
    /// SAOpt software overhead per PR per core, ns.
    #[arg(long)]
    pub sa_pr_overhead_ns: Option<f64>,
    /// Cycles each PR occupies a ToR middle pipe (1: one PR per cycle, §6.2; 0: no limit).
    #[arg(long)]
    pub switch_pr_cycles: Option<u64>,
    /// Host cost of posting one RIG command (one core posts them in turn), ns.
    #[arg(long)]
    pub host_post_ns: Option<u64>,
    /// Each switch's shared packet buffer in bytes, guarded by lossless
    /// credit-based flow control (Table 5: 96 MiB, i.e. 96M; 0: unbounded
    /// queues).
    #[arg(long, value_name = "BYTES", value_parser = netsparse::sim::memory::parse_bytes)]
    pub switch_buffer_bytes: Option<u64>,
    /// Each SmartNIC's RX buffer in bytes (Table 5: 2 MiB, i.e. 2M; 0:
    /// unbounded).
    #[arg(long, value_name = "BYTES", value_parser = netsparse::sim::memory::parse_bytes)]
    pub nic_buffer_bytes: Option<u64>,
    /// When a SmartNIC sets an idx's filter bit: write (when the property's
    /// DMA write to host memory completes, §5.2; default) or response (as
    /// soon as the response is processed).
    #[arg(long, value_name = "WHEN")]
    pub filter_bit: Option<netsparse::sim::config::FilterBit>,
    /// Idx Filter lookups cost nothing (default: they go through the
    /// SmartNIC's L1/L2/LLC/DRAM model of Table 5).
    #[arg(long)]
    pub no_filter_memory: bool,
    /// How ToRs pick the spine between racks: rack-pair (default; keeps the
    /// Property Cache's port condition for the whole rack), node-pair
    /// (every uplink; the condition per node pair only), owner (every
    /// uplink; the condition for the whole rack, less concatenation; what
    /// `netsparse paper` uses: at the paper's size it is 1.3–3x faster),
    /// owner-load (as owner, but each (rack, owner) pair's spine is chosen
    /// from the matrix's needs: pairs leave owner's spine while that
    /// lowers the load on their response links and their ToR's middle
    /// pipe).
    #[arg(long, value_name = "ROUTING")]
    pub routing: Option<netsparse::sim::topology::Routing>,
    /// The network: leaf-spine (default; --racks, --spines, --routing),
    /// hyperx[:DxDxD][,width=W] (default 4x4x2, width 4) or
    /// dragonfly[:groups=G,switches=A,global=H] (default 4, 8, 4): Figure
    /// 22's configurations. Every HyperX and Dragonfly switch has hosts and
    /// runs the ToR program.
    #[arg(long, value_name = "SPEC")]
    pub topology: Option<netsparse::sim::topology::TopologySpec>,
    /// Header sizes charged per NetSparse packet: wire (what the frames
    /// carry: 54 + 14 B) or paper (Table 5: 50 + 12 B; the frames are
    /// unchanged, only serialisation time and byte counts).
    #[arg(long, value_name = "ACCOUNTING")]
    pub headers: Option<netsparse::sim::config::Headers>,
    /// In-node compute engine for end-to-end time and strong scaling:
    /// none, spade, cpu-ddr, cpu-hbm.
    #[arg(long, value_name = "MODEL")]
    pub compute: Option<ComputeModel>,
    /// Override the compute engine's sustained GFLOP/s.
    #[arg(long)]
    pub compute_gflops: Option<f64>,
    /// Override the compute engine's sustained memory bandwidth, GB/s.
    #[arg(long)]
    pub compute_gbps: Option<f64>,
    /// When the hosts hand RIG commands to their SmartNICs: post-at-zero
    /// (default: every command from time 0, one per --host-post-ns) or
    /// triggered (registered as triggered operations and fired as the
    /// compute kernel's chunks complete; needs --compute or --compute-rate).
    #[arg(long, value_name = "MODEL")]
    pub host_model: Option<netsparse::sim::hostmodel::HostModel>,
    /// The compute kernel's rate for the host model, nonzeros per second
    /// per node (1e3..=1e15; default: the --compute model's roofline time).
    #[arg(long, value_name = "NNZ_PER_S")]
    pub compute_rate: Option<f64>,
    /// Nonzeros per kernel chunk (triggered: each chunk's completion fires
    /// its remote nonzeros' RIG commands; 1..=2^32, default 4096).
    #[arg(long, value_name = "N")]
    pub chunk_nnz: Option<u64>,
    /// Each SmartNIC's trigger table: operations waiting and tags with a
    /// counter (each; 1..=2^24, default 1024). Registrations beyond it are
    /// counted and posted when the kernel ends.
    #[arg(long, value_name = "N")]
    pub trigger_table: Option<u64>,
    /// Seed of the generators.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Repeat the run for each value of one parameter, e.g. `k=1,16,128`.
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub sweep: Option<String>,
    /// Write the report (or the list of sweep reports) as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write per-node results as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write SVG plots into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot_dir: Option<PathBuf>,
    /// Write the topology (tutorials' topology.json) and each switch's
    /// control-plane commands into this directory.
    #[arg(long, value_name = "DIR")]
    pub topology_out: Option<PathBuf>,
    /// Users' programs in place of the bundled ones.
    #[command(flatten)]
    pub programs: super::user_programs::ProgramArgs,
    /// Users' control-plane commands.
    #[command(flatten)]
    pub commands: super::user_programs::CommandArgs,
    /// Threads for the event loop (default: the machine's cores); the
    /// results are the same for every value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Simulated runs (a mode at a sweep point) at once, each on its own
    /// devices (default: with --threads unset, as many as the machine has
    /// cores, up to the runs and as memory allows, each run's event loop
    /// on cores / jobs threads; with --threads, cores / threads); the
    /// results are the same for every value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
    /// Count what crosses these link directions, per flow (PR type,
    /// requester, owner), and print the heaviest flows, per node and per
    /// requesting rack (NetSparse modes; in the JSON report as
    /// `link_flows`). Comma-separated `FROM->TO` of device names, e.g.
    /// `tor5->spine15` (the link flow control names as paused longest).
    /// Watching changes no result.
    #[arg(long, value_name = "LINKS")]
    pub link_flows: Option<String>,
    /// Refuse to start when the estimated peak memory of the run exceeds
    /// this (bytes, or with K, M, G, T: powers of 1024). Default: the
    /// machine's physical memory. Checked before the matrix is read or
    /// generated.
    #[arg(
        long,
        value_name = "SIZE",
        visible_alias = "memory-limit",
        value_parser = netsparse::sim::memory::parse_size
    )]
    pub mem_limit: Option<u64>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// `--collective allreduce` and its flags.
    #[command(flatten)]
    pub coll: super::collective::CollectiveArgs,
    /// `--kernel spmm2d` and its flags.
    #[command(flatten)]
    pub spmm2d: super::spmm2d::Spmm2dArgs,
}

/// The event loop's threads: `requested`, or the machine's cores.
pub fn sim_threads(requested: Option<u16>) -> usize {
    match requested {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// A progress bar that appears only after a second, and only on a terminal.
pub struct DelayedBar {
    pb: ProgressBar,
    start: Instant,
    enabled: bool,
    shown: bool,
}

impl DelayedBar {
    /// A hidden bar; `enabled` is false for `--quiet`.
    pub fn new(enabled: bool) -> DelayedBar {
        let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{msg} [{wide_bar}] {pos}/{len} ({eta})") {
            pb.set_style(style.progress_chars("=> "));
        }
        DelayedBar {
            pb,
            start: Instant::now(),
            enabled: enabled && std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    /// Report progress.
    pub fn update(&mut self, msg: &'static str, done: u64, total: u64) {
        if !self.shown && self.enabled && self.start.elapsed() > Duration::from_secs(1) {
            self.pb.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        self.pb.set_length(total);
        self.pb.set_position(done);
        self.pb.set_message(msg);
    }

    /// Remove the bar.
    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}

/// The simulator's configuration from `--config` and the flags.
pub(super) fn config(args: &Args) -> anyhow::Result<SimConfig> {
    let mut c = match &args.config {
        Some(p) => SimConfig::from_toml_file(p)?,
        None => SimConfig::default(),
    };
    macro_rules! set {
        ($($f:ident),*) => { $( if let Some(v) = args.$f { c.$f = v; } )* };
    }
    set!(
        nodes,
        racks,
        k,
        mtu,
        link_gbps,
        link_latency_ns,
        switch_latency_ns,
        rig_batch,
        rig_units,
        pending_entries,
        nic_delay_cycles,
        switch_delay_cycles,
        cache_bytes,
        cache_ways,
        cache_latency_cycles,
        nic_clock_mhz,
        switch_clock_mhz,
        sa_cores,
        sa_pr_overhead_ns,
        host_post_ns,
        switch_pr_cycles,
        switch_buffer_bytes,
        nic_buffer_bytes,
        chunk_nnz,
        trigger_table,
        seed
    );
    if let Some(h) = args.host_model {
        c.host_model = h;
    }
    if args.compute_rate.is_some() {
        c.compute_rate = args.compute_rate;
    }
    if args.spines.is_some() {
        c.spines = args.spines;
    }
    if args.rig_clients.is_some() {
        c.rig_clients = args.rig_clients;
    }
    if args.cache_unbounded {
        c.cache_unbounded = true;
    }
    if let Some(m) = args.compute {
        c.compute = m;
    }
    if let Some(r) = args.routing {
        c.routing = r;
    }
    if let Some(t) = args.topology {
        c.topology = t;
    }
    if let Some(h) = args.headers {
        c.headers = h;
    }
    if let Some(f) = args.filter_bit {
        c.filter_bit = f;
    }
    if args.no_filter_memory {
        c.filter_memory = false;
    }
    if args.compute_gflops.is_some() {
        c.compute_gflops = args.compute_gflops;
    }
    if args.compute_gbps.is_some() {
        c.compute_gbps = args.compute_gbps;
    }
    c.validate()?;
    Ok(c)
}

/// Load `--matrix` or generate `--gen` (pattern only: the simulator needs
/// the structure).
pub fn load_matrix(
    file: Option<&Path>,
    gen: Option<&str>,
    seed: u64,
    bar: &mut DelayedBar,
) -> anyhow::Result<(CsrMatrix, MatrixSummary)> {
    match (file, gen) {
        (Some(path), _) => {
            let f = std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            let (m, info) = matrix::mtx::read_mtx_with_progress(
                std::io::BufReader::with_capacity(1 << 20, f),
                ReadOptions { values: false },
                &mut |done, total| bar.update("reading matrix", done, total),
            )
            .with_context(|| format!("{}", path.display()))?;
            let name = path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
            let summary = MatrixSummary {
                name,
                rows: m.rows(),
                cols: m.cols(),
                nnz: m.nnz(),
                duplicates: info.build.duplicates,
            };
            Ok((m, summary))
        }
        (None, Some(spec)) => {
            let spec: GenSpec = spec.parse().with_context(|| format!("--gen {spec}"))?;
            let (m, info) = spec.generate(seed)?;
            let summary = MatrixSummary {
                name: spec.to_string(),
                rows: m.rows(),
                cols: m.cols(),
                nnz: m.nnz(),
                duplicates: info.duplicates,
            };
            Ok((m, summary))
        }
        (None, None) => bail!("give --matrix FILE.mtx or --gen SPEC"),
    }
}

/// The event loop's threads and the simulated runs at once: `--jobs` and
/// `--threads` as given; unset, as many runs at once as the machine has
/// cores (up to `runs`), sharing the cores.
pub fn parallelism(jobs: Option<u16>, threads: Option<u16>, runs: usize) -> (usize, usize) {
    let cores = sim_threads(None);
    let jobs = match (jobs, threads) {
        (Some(j), _) => usize::from(j),
        (None, Some(t)) => cores / usize::from(t).max(1),
        (None, None) => cores,
    }
    .min(runs)
    .max(1);
    let threads = match threads {
        Some(t) => usize::from(t),
        None => (cores / jobs).max(1),
    };
    (jobs, threads)
}

/// Each simulated run's own estimated memory (a mode at a point), for how
/// many may go at once; empty when the workload cannot be estimated.
fn simulated_runs(args: &Args, cfgs: &[SimConfig]) -> Vec<u64> {
    let mut runs = Vec::new();
    for c in cfgs {
        let Some((w, _)) = workload(args.matrix.as_deref(), args.gen.as_deref(), c.nodes) else {
            continue;
        };
        for &mode in &args.mode {
            if mode.ablation().is_some() {
                runs.push(memory::mode_bytes(&w, c, mode, args.spmm));
            }
        }
    }
    runs
}

/// The matrix's bytes as the runs hold it, with the estimates' quarter
/// margin.
fn matrix_held(m: &CsrMatrix) -> u64 {
    let b = 4 * m.nnz() + 8 * (u64::from(m.rows()) + 1);
    b + b / 4
}

fn write_topology(dir: &Path, cfg: &SimConfig) -> anyhow::Result<()> {
    let t = cfg.topology()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let json = t.tutorial_json("{switch}-commands.txt", 0);
    let path = dir.join("topology.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let tpl = TableTemplates::default();
    for d in t.devices() {
        let text = t.control_plane(d, &tpl);
        if text.is_empty() {
            continue;
        }
        let p = dir.join(format!("{d}-commands.txt"));
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}

/// The size of the matrix `--matrix` or `--gen` names, from the spec or
/// the file's size line, and a description; `None` when it cannot be known
/// (a bad spec or file: reading it reports the error).
pub fn workload(
    file: Option<&Path>,
    gen: Option<&str>,
    nodes: u32,
) -> Option<(memory::Workload, String)> {
    match (file, gen) {
        (Some(path), _) => {
            let f = std::fs::File::open(path).ok()?;
            let h = matrix::read_mtx_header(std::io::BufReader::new(f)).ok()?;
            let w = memory::Workload::new(h.rows, h.cols, h.max_coordinates(), memory::UNORDERED);
            Some((w, path.display().to_string()))
        }
        (None, Some(spec)) => {
            let g: GenSpec = spec.parse().ok()?;
            g.validate().ok()?;
            Some((g.workload(nodes), g.to_string()))
        }
        (None, None) => None,
    }
}

/// Refuse a run whose estimated peak memory exceeds `--mem-limit` (default:
/// physical memory) before anything large is allocated; every point of a
/// `--sweep` is estimated, and the largest counts.
fn check_memory(args: &Args, cfgs: &[SimConfig]) -> anyhow::Result<()> {
    let mut worst: Option<(memory::MemoryEstimate, String)> = None;
    for c in cfgs {
        let Some((w, name)) = workload(args.matrix.as_deref(), args.gen.as_deref(), c.nodes) else {
            return Ok(());
        };
        let e = memory::estimate(&w, c, &args.mode, args.spmm);
        if worst.as_ref().is_none_or(|(b, _)| e.total() > b.total()) {
            let modes: Vec<&str> = args.mode.iter().map(|m| m.name()).collect();
            let what = format!(
                "{name} ({} x {}, up to {} nonzeros) on {} nodes, modes {}",
                w.rows,
                w.cols,
                w.nnz,
                c.nodes,
                modes.join(",")
            );
            worst = Some((e, what));
        }
    }
    if let Some((e, what)) = worst {
        memory::check(&e, args.mem_limit, &what)?;
    }
    Ok(())
}

/// `--sweep KEY=V1,V2,...` split into its key and values.
fn parse_sweep(s: &str) -> anyhow::Result<(String, Vec<String>)> {
    let (key, values) = s
        .split_once('=')
        .with_context(|| format!("--sweep {s:?}: expected KEY=V1,V2,..."))?;
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if key.trim().is_empty() {
        bail!("--sweep {s:?}: no parameter before '=' (expected KEY=V1,V2,...)");
    }
    if values.is_empty() {
        bail!("--sweep {s:?}: no values");
    }
    Ok((key.trim().to_string(), values))
}

/// Every point's configuration (the base alone without a sweep):
/// range-checked first, then against the selected modes, so the error names
/// the value that is out of range for any mode before one that only some
/// modes reject. Done before the matrix, so a bad value costs no generation.
fn point_configs(
    cfg: &SimConfig,
    sweep: Option<&(String, Vec<String>)>,
    modes: &[Mode],
) -> anyhow::Result<Vec<SimConfig>> {
    let Some((key, values)) = sweep else {
        return Ok(vec![cfg.clone()]);
    };
    let mut cfgs = Vec::new();
    for v in values {
        let mut c = cfg.clone();
        c.set(key, v)
            .with_context(|| format!("--sweep {key}={v}"))?;
        c.validate().with_context(|| format!("--sweep {key}={v}"))?;
        cfgs.push(c);
    }
    for (c, v) in cfgs.iter().zip(values) {
        for &mode in modes {
            check_mode(c, mode).with_context(|| format!("--sweep {key}={v}"))?;
        }
    }
    Ok(cfgs)
}

/// Run `netsparse sim`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.link_flows.is_some() {
        // A flag that would do nothing is refused, not ignored.
        if args.workload.is_some() || args.spmm2d.kernel.is_some() || args.coll.collective.is_some()
        {
            bail!("--link-flows watches the gather modes' links; it does not apply to --workload, --kernel or --collective");
        }
        if args.mode.iter().all(|m| m.ablation().is_none()) {
            bail!("--link-flows needs a simulated mode (rig ... netsparse); su and sa are analytic models without links");
        }
    }
    if let Some(flag) = super::user_programs::first_flag(&args.programs, &args.commands) {
        if args.workload.is_some() {
            bail!("{flag} is for the programs of the gather modes, --kernel spmm2d and --collective; a --workload runs its sPIN handlers' own programs");
        }
    }
    if let Some(w) = &args.workload {
        return spin_workload(w, &args);
    }
    if args.spmm2d.kernel.is_some() {
        return super::spmm2d::run_cli(&args);
    }
    if args.coll.collective.is_some() {
        let shared = super::collective::Shared {
            racks: args.racks,
            link_gbps: args.link_gbps,
            link_latency_ns: args.link_latency_ns,
            switch_latency_ns: args.switch_latency_ns,
            seed: args.seed,
            json: args.json.clone(),
            quiet: args.quiet,
        };
        let programs = super::user_programs::programs_for(
            &args.programs,
            &args.commands,
            &[(Bundled::Spine, Vec::new())],
            &|role| {
                format!(
                    "--collective runs no {role} program: its v1model switches run the spine program, the aggregator programs/omniccl_agg.p4 or omniccl_switch.p4"
                )
            },
        )?;
        return super::collective::run_cli(&args.coll, &shared, programs);
    }
    let cfg = config(&args)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let s = stop.clone();
        // A second handler cannot be installed (e.g. in tests): then Ctrl-C
        // simply kills the process, as without this.
        let _ = ctrlc::set_handler(move || s.store(true, Ordering::Relaxed));
    }
    let sweep = args.sweep.as_deref().map(parse_sweep).transpose()?;
    let cfgs = point_configs(&cfg, sweep.as_ref(), &args.mode)?;
    check_memory(&args, &cfgs)?;
    // Users' programs are read and compiled, every variant the modes need,
    // before the matrix: an error in one costs no generation time.
    let mut programs =
        super::user_programs::program_cache(&args.programs, &args.commands, &args.mode)?;
    // The users' switch commands after the simulator's own entries on
    // every switch (a key it already installs), still before the matrix.
    // (Once for the modes whose ToRs are v1model switches, once for
    // `netsparse`'s, as the selected modes have them; on every point of a
    // sweep, whose nodes, racks or spines may change the entries.)
    for (i, c) in cfgs.iter().enumerate() {
        for v1_tors in [true, false] {
            let used = args
                .mode
                .iter()
                .any(|m| m.ablation().is_some_and(|a| a.switch != v1_tors));
            if !used {
                continue;
            }
            let checked = check_commands_on_control_plane(&mut programs, c, v1_tors);
            match &sweep {
                Some((key, values)) => {
                    checked.with_context(|| format!("--sweep {key}={}", values[i]))?
                }
                None => checked?,
            }
        }
    }
    let link_flows = match &args.link_flows {
        Some(s) => {
            netsparse::sim::linkflows::parse(s).map_err(|e| anyhow::anyhow!("--link-flows {e}"))?
        }
        None => Vec::new(),
    };
    if !link_flows.is_empty() {
        // Name errors before the matrix is read or generated, on every
        // point of a sweep (a link of 32 nodes is not one of 16).
        for (i, c) in cfgs.iter().enumerate() {
            let t = c.topology()?;
            let resolved = netsparse::sim::linkflows::resolve(&t, &link_flows);
            match (&sweep, resolved) {
                (_, Ok(_)) => {}
                (Some((key, values)), Err(e)) => bail!("--sweep {key}={}: {e}", values[i]),
                (None, Err(e)) => bail!("{e}"),
            }
        }
    }
    let mut bar = DelayedBar::new(!args.quiet);
    let (m, summary) = load_matrix(
        args.matrix.as_deref(),
        args.gen.as_deref(),
        cfg.seed,
        &mut bar,
    )?;
    if let Some(dir) = &args.topology_out {
        write_topology(dir, &cfg)?;
    }

    let mut parts = Vec::new();
    for c in &cfgs {
        parts.push(match &args.partition {
            Some(p) => Partition::read_file(p, &m, Some(c.nodes))?,
            None => Partition::equal(&m, c.nodes)?,
        });
    }
    let points: Vec<Point<'_>> = cfgs
        .iter()
        .zip(&parts)
        .map(|(cfg, part)| Point { cfg, part })
        .collect();
    let runs = simulated_runs(&args, &cfgs);
    let (jobs, threads) = parallelism(args.jobs, args.threads, runs.len());
    let jobs = memory::runs_at_once(matrix_held(&m), &runs, jobs, args.mem_limit);
    let opts = RunOptions {
        spmm: args.spmm,
        corrupt_idx: args.corrupt_idx,
        stop: Some(stop.clone()),
        threads,
        jobs,
        link_flows,
        owner_needs: None,
    };
    let mut reports = simulate_points(
        &m,
        &summary,
        &points,
        &args.mode,
        &opts,
        &mut programs,
        &mut |p: Progress| {
            bar.update(p.phase, p.done, p.total);
            !stop.load(Ordering::Relaxed)
        },
    )?;
    for r in &mut reports {
        r.programs = programs.uses();
        r.commands = programs.command_uses();
    }
    bar.finish();

    for (i, r) in reports.iter().enumerate() {
        if let Some((key, values)) = &sweep {
            println!("== {key} = {}", values[i]);
        }
        print!("{}", r.table());
        if !args.quiet {
            eprint!("{}", r.perf_lines());
        }
    }
    if let Some(r) = reports.first() {
        for p in &r.programs {
            println!("{p}");
        }
        for c in &r.commands {
            println!("{c}");
        }
    }
    if let Some(p) = &args.json {
        let text = if sweep.is_some() {
            serde_json::to_string_pretty(&reports)?
        } else {
            reports[0].to_json()
        };
        std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(p) = &args.csv {
        let f =
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?;
        let mut w = std::io::BufWriter::new(f);
        for r in &reports {
            r.write_csv(&mut w)
                .with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    if let Some(dir) = &args.plot_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let last = &reports[reports.len() - 1];
        let mut plots: Vec<(PathBuf, Result<(), plot::PlotError>)> = Vec::new();
        let p = dir.join("speedup.svg");
        plots.push((p.clone(), plot::speedup_chart(&p, &[last])));
        if args.mode.iter().any(|m| Mode::ABLATION.contains(m)) {
            let p = dir.join("ablation.svg");
            plots.push((p.clone(), plot::ablation_report_chart(&p, last)));
        }
        if reports
            .iter()
            .any(|r| r.modes.iter().any(|m| m.host.is_some()))
        {
            let p = dir.join("host.svg");
            plots.push((p.clone(), plot::host_chart(&p, &reports)));
        }
        if let Some((key, values)) = &sweep {
            let p = dir.join("sweep.svg");
            let r = plot::sweep_chart(&p, key, values, &reports, &args.mode, false);
            plots.push((p, r));
            let p = dir.join("sweep-relative.svg");
            let r = plot::sweep_chart(&p, key, values, &reports, &args.mode, true);
            plots.push((p, r));
        }
        for (p, r) in plots {
            match r {
                Ok(()) => eprintln!("wrote {}", p.display()),
                Err(e @ plot::PlotError::Empty(_)) => {
                    eprintln!("not writing {}: {e}", p.display())
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    let mut failed = false;
    for r in &reports {
        if let Err(e) = r.check() {
            eprintln!("error: {e}");
            failed = true;
        }
    }
    if failed {
        return Ok(ExitCode::from(1));
    }
    if stop.load(Ordering::Relaxed) || reports.iter().any(|r| r.stopped) {
        eprintln!("stopped by Ctrl-C: the statistics above are partial");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--plot-dir` of a sPIN workload: `spin_<w>.svg`, sPIN and RDMA against
/// the size (log x): time for pingpong and bcast, receive bandwidth for
/// strided (Figure 7a's shape).
fn spin_plot(
    dir: &std::path::Path,
    w: &str,
    what: &str,
    rows: &[netsparse::sim::spin::SpinRow],
) -> anyhow::Result<()> {
    use netsparse::sim::plot::{line_chart, Line};
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let strided = w == "strided";
    let line = |name: &str, f: &dyn Fn(&netsparse::sim::spin::SpinRow) -> Option<f64>| Line {
        name: name.to_owned(),
        points: rows
            .iter()
            .filter_map(|r| Some((r.size as f64, f(r)?)))
            .collect(),
    };
    let (lines, y) = if strided {
        (
            vec![
                line("sPIN", &|r| r.spin_gbps),
                line("RDMA", &|r| r.rdma_gbps),
            ],
            "receive bandwidth, Gbit/s",
        )
    } else {
        (
            vec![
                line("sPIN", &|r| Some(r.spin_ns / 1e3)),
                line("RDMA", &|r| Some(r.rdma_ns / 1e3)),
            ],
            "time, µs",
        )
    };
    let path = dir.join(format!("spin_{w}.svg"));
    let x = if strided {
        "block size, bytes (log)"
    } else {
        "message size, bytes (log)"
    };
    line_chart(&path, &format!("sPIN {w}: {what}"), x, y, &lines, true)
        .with_context(|| format!("plotting {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// `--workload pingpong|bcast|strided`: the sPIN workloads.
fn spin_workload(w: &str, args: &Args) -> anyhow::Result<ExitCode> {
    use netsparse::sim::spin::{run_workload, SpinParams};
    let p = SpinParams {
        dma_ns: args.dma_ns,
        ..SpinParams::default()
    };
    let sizes: Vec<u64> = match (&args.sizes, w) {
        (Some(s), _) => s.clone(),
        (None, "strided") => (2..=16).map(|k| 1u64 << k).collect(),
        (None, _) => (6..=20).step_by(2).map(|k| 1u64 << k).collect(),
    };
    let nodes = args.nodes.unwrap_or(8);
    let rows = run_workload(w, &p, nodes, &sizes)?;
    let what = match w {
        "pingpong" => "half round trip, ns".to_string(),
        "bcast" => format!("broadcast to {nodes} nodes, ns"),
        _ => "4 MiB strided receive (stride = 2 x block), ns".to_string(),
    };
    println!(
        "sPIN workload {w} ({what}); o = {} ns, g = {} ns, L = {} ns, {} Gb/s, {} HPUs at {} MHz, DMA {} ns",
        p.o_ns, p.g_ns, p.switch_ns, p.link_gbps, p.hpus, p.hpu_mhz, p.dma_ns
    );
    let strided = w == "strided";
    println!(
        "{:>10} {:>14} {:>14} {:>8}{}",
        if strided { "block" } else { "size" },
        "sPIN",
        "RDMA",
        "speedup",
        if strided {
            "  sPIN Gb/s  RDMA Gb/s"
        } else {
            ""
        }
    );
    for r in &rows {
        let bw = match (r.spin_gbps, r.rdma_gbps) {
            (Some(a), Some(b)) => format!("  {a:>9.1}  {b:>9.1}"),
            _ => String::new(),
        };
        println!(
            "{:>10} {:>14.1} {:>14.1} {:>7.2}x{bw}",
            r.size,
            r.spin_ns,
            r.rdma_ns,
            r.rdma_ns / r.spin_ns
        );
    }
    if let Some(dir) = &args.plot_dir {
        spin_plot(dir, w, &what, &rows)?;
    }
    if let Some(path) = &args.json {
        let doc = serde_json::json!({ "workload": w, "nodes": nodes, "params": p, "rows": rows });
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
