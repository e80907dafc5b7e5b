//! `netsparse bench`: in-process throughput measurements.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use netsparse::programs::{compile_bundled, Bundled};
use netsparse_bmv2::workload::{install_routes, ipv4_workload};
use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_externs::time::thread_cpu_time;
use netsparse_externs::{Datapath, Outputs, Time};

/// Arguments of `netsparse bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to measure.
    #[command(subcommand)]
    pub what: What,
}

/// Benchmarks.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Replay ipv4_forward packets through the v1model switch in-process.
    Switch(SwitchArgs),
    /// Idxs per second through one RIG client unit of the NIC, in-process.
    Nic(NicArgs),
    /// PRs per second through one middle pipe of the NetSparse switch, in-process.
    MiddlePipe(MiddlePipeArgs),
    /// The switch workload replayed from a pcap file (`netsparse switch
    /// --use-files`'s driver) beside the same packets in-process.
    Pcap(PcapArgs),
    /// Simulated idxs + PRs per second of the cluster simulator, and its
    /// peak memory, on one mode of one generated matrix.
    Sim(SimBenchArgs),
}

/// Arguments of `netsparse bench sim`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Generates the matrix (not measured), then simulates one gather in MODE on the\n\
leaf-spine cluster with Table 5's defaults, verifying every gathered property.\n\
Reports the simulated idxs + PRs per second of wall-clock time and of the\n\
process's CPU time (all threads), and its peak resident memory (VmHWM): after\n\
generating the matrix and over the whole run, in bytes per nonzero too, beside\n\
the estimate checked before generating (--mem-limit).\n\
\n\
With --runs N the same simulation runs N times on the one matrix: each run's\n\
wall time and rate are printed, the runs must agree on every simulated figure,\n\
and the details are those of the median run. Wall times on a shared VM vary by\n\
up to 2x between runs; compare binaries with the medians of alternated runs.\n\
\n\
Example: cargo run --release -- bench sim --gen paper:uk/16 --mode rig")]
pub struct SimBenchArgs {
    /// Matrix generator spec (as `netsparse sim --gen`).
    #[arg(long, default_value = "rmat:scale=21,ef=5")]
    pub gen: String,
    /// Nodes.
    #[arg(long, default_value_t = 128)]
    pub nodes: u32,
    /// Racks.
    #[arg(long, default_value_t = 8)]
    pub racks: u32,
    /// Property elements (4 bytes each).
    #[arg(long, default_value_t = 16)]
    pub k: u32,
    /// The mode (one of `netsparse sim --mode`'s).
    #[arg(long, default_value = "netsparse")]
    pub mode: String,
    /// Generator seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Threads for the event loop (default: the machine's cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Refuse to start when the estimated peak memory exceeds this (as
    /// `netsparse sim --mem-limit`; default: physical memory).
    #[arg(
        long,
        value_name = "SIZE",
        visible_alias = "memory-limit",
        value_parser = netsparse::sim::memory::parse_size
    )]
    pub mem_limit: Option<u64>,
    /// Run the simulation this many times on the one matrix and report the
    /// median (the runs must give the same simulated figures).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=100))]
    pub runs: u16,
}

/// Arguments of `netsparse bench pcap`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The `bench switch` workload (ipv4_forward, LPM routes, frames of 64-128 bytes,\n\
100 ns apart) is written to DIR/p1_in.pcap; then the same packets run twice on\n\
fresh switches in the same process: once handed to the switch directly, once\n\
through the pcap driver (reading the input, writing DIR/p1_out.pcap ..\n\
DIR/p8_out.pcap), as `netsparse switch --use-files` runs them. Both figures and\n\
their ratio (the driver's cost) are printed; wall-clock and thread CPU time.\n\
\n\
Example: cargo run --release -- bench pcap --packets 1000000")]
pub struct PcapArgs {
    /// Packets to replay.
    #[arg(long, default_value_t = 1_000_000)]
    pub packets: usize,
    /// LPM routes to install.
    #[arg(long, default_value_t = 300)]
    pub routes: usize,
    /// Directory for the pcap files (default: a fresh one under the
    /// system's temporary directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Arguments of `netsparse bench middle-pipe`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The NetSparse switch in Table 5's shape (32 ports in 8 pipes, 2 GHz, a 32 MiB\n\
16-way Property Cache, DelayCycles 125) runs the compiled ToR program on full\n\
K = 16 packets (64-byte properties) that all meet in middle pipe 0: responses\n\
from remote owners (inserts) alternating with reads from the rack's hosts (half\n\
of them for idxs a response carried: hits become responses to the requester).\n\
Every packet goes through the whole switch (ingress, crossbar, the middle pipe's\n\
Deconcatenator, per-PR program, Property Cache and Concatenator, egress), with\n\
the Concatenator's timers serviced. PRs/s is reported against wall-clock time\n\
and against the thread's CPU time (the per-core figure).\n\
\n\
Example: cargo run --release -- bench middle-pipe --prs 20000000")]
pub struct MiddlePipeArgs {
    /// PRs to replay (rounded up to whole passes over the packets).
    #[arg(long, default_value_t = 10_000_000)]
    pub prs: u64,
    /// Distinct packets in the workload.
    #[arg(long, default_value_t = 2048)]
    pub packets: usize,
    /// Idxs are drawn from 0..RANGE.
    #[arg(long, default_value_t = 1 << 22)]
    pub range: u64,
    /// Nanoseconds between packets.
    #[arg(long, default_value_t = 50)]
    pub gap_ns: u64,
    /// The program (`.p4` or artifact `.json`; a NetSparseSwitch program with
    /// the tables of programs/netsparse_tor.p4). Default: the bundled
    /// programs/netsparse_tor.p4.
    #[arg(long, value_name = "FILE")]
    pub program: Option<PathBuf>,
    /// The switch's shape (TOML, as `netsparse switch --config`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Arguments of `netsparse bench nic`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
One client RIG unit (Table 5's 256-entry Pending PR Table) runs one RIG command\n\
of IDXS idxs through the compiled NIC program: idx DMA, host_to_net per idx (Idx\n\
Filter, Pending PR Table, destination solver over 16 nodes, PendingInsert),\n\
concatenation, framing and TX pacing. No responder runs: outstanding PRs are\n\
retired as if answered at once (entry freed, Idx Filter bit set). The idx\n\
stream: 7/8 from a 16K hot set, 1/8 spread over the columns. idxs/s is reported\n\
against wall-clock time and against the thread's CPU time (the per-core figure).\n\
\n\
Example: cargo run --release -- bench nic --idxs 2000000")]
pub struct NicArgs {
    /// Idxs per run.
    #[arg(long, default_value_t = 1_000_000)]
    pub idxs: usize,
    /// Runs (each on a fresh NIC).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Columns of the property array.
    #[arg(long, default_value_t = 1 << 20)]
    pub columns: u64,
    /// The NIC program (`.p4` or artifact `.json`). Default: the bundled
    /// programs/netsparse_nic.p4.
    #[arg(long, value_name = "FILE")]
    pub program: Option<PathBuf>,
}

/// Arguments of `netsparse bench switch`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The workload: LPM routes (/8, /16, /24, /32 mixed) in MyIngress.ipv4_lpm and\n\
4096 pre-built Ethernet/IPv4/UDP frames of 64-128 bytes addressed into them\n\
(one in 16 misses and is dropped), replayed in a loop. packets/s is reported\n\
against wall-clock time and against the thread's CPU time (the per-core\n\
figure, independent of other load on the machine).\n\
\n\
Example: cargo run --release -- bench switch --packets 1000000")]
pub struct SwitchArgs {
    /// Packets to replay.
    #[arg(long, default_value_t = 1_000_000)]
    pub packets: usize,
    /// The program (`.p4` or artifact `.json`; its ingress must have
    /// `MyIngress.ipv4_lpm` with `MyIngress.ipv4_forward(dstAddr, port)`).
    /// Default: the bundled programs/ipv4_forward.p4.
    #[arg(long, value_name = "FILE")]
    pub program: Option<PathBuf>,
    /// LPM routes to install.
    #[arg(long, default_value_t = 300)]
    pub routes: usize,
}

/// Run a benchmark.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Switch(a) => switch(a),
        What::Nic(a) => nic(a),
        What::MiddlePipe(a) => middle_pipe(a),
        What::Pcap(a) => pcap(a),
        What::Sim(a) => sim(a),
    }
}

fn sim(a: SimBenchArgs) -> anyhow::Result<ExitCode> {
    use anyhow::Context as _;
    use netsparse::programs::ProgramCache;
    use netsparse::sim::cluster::RunOptions;
    use netsparse::sim::config::SimConfig;
    use netsparse::sim::matrix::GenSpec;
    use netsparse::sim::memory;
    use netsparse::sim::partition::Partition;
    use netsparse::sim::report::{MatrixSummary, RunStats};
    use netsparse::sim::{simulate_with, Mode};

    let spec: GenSpec = a.gen.parse().with_context(|| format!("--gen {}", a.gen))?;
    let mode: Mode = a
        .mode
        .parse()
        .with_context(|| format!("--mode {}", a.mode))?;
    let cfg = SimConfig {
        nodes: a.nodes,
        racks: a.racks,
        k: a.k,
        seed: a.seed,
        ..SimConfig::default()
    };
    cfg.validate()?;
    let workload = spec.workload(cfg.nodes);
    let estimate = memory::estimate(&workload, &cfg, &[mode], false);
    memory::check(
        &estimate,
        a.mem_limit,
        &format!("{spec} on {} nodes, mode {}", cfg.nodes, mode.name()),
    )?;
    let t_gen = Instant::now();
    let (m, info) = spec.generate(a.seed)?;
    let gen_secs = t_gen.elapsed().as_secs_f64();
    let gen_peak = memory::peak_rss();
    let part = Partition::equal(&m, cfg.nodes)?;
    let summary = MatrixSummary {
        name: spec.to_string(),
        rows: m.rows(),
        cols: m.cols(),
        nnz: m.nnz(),
        duplicates: info.duplicates,
    };
    let threads = super::sim::sim_threads(a.threads);
    let opts = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let runs = usize::from(a.runs.max(1));
    // (wall, CPU, the run's statistics) of each run.
    let mut done: Vec<(f64, f64, RunStats)> = Vec::with_capacity(runs);
    for i in 0..runs {
        let cpu0 = netsparse_externs::time::process_cpu_time();
        let t0 = Instant::now();
        let report = simulate_with(
            &m,
            summary.clone(),
            &part,
            &cfg,
            &[mode],
            &opts,
            &mut ProgramCache::new(),
            &mut |_| true,
        )?;
        let (wall, cpu) = (
            t0.elapsed().as_secs_f64(),
            netsparse_externs::time::process_cpu_time() - cpu0,
        );
        report.check()?;
        let run = report
            .mode(mode.name())
            .and_then(|r| r.run.clone())
            .context("the run reported no statistics")?;
        if let Some((_, _, first)) = done.first() {
            let figures = |r: &RunStats| {
                (
                    r.events,
                    r.sim_time,
                    r.idxs,
                    r.prs_issued,
                    r.responses,
                    r.frames,
                )
            };
            anyhow::ensure!(
                figures(first) == figures(&run),
                "run {} of the same simulation differs from run 1 (events, simulated time, idxs, \
                 PRs, responses, frames): {:?} against {:?}",
                i + 1,
                figures(&run),
                figures(first)
            );
        }
        if runs > 1 {
            let w = run.window_times;
            let serial = w.serial.as_secs_f64();
            let all = (serial + w.devices.as_secs_f64()).max(1e-9);
            println!(
                "run {}/{runs}: wall {wall:.2} s (set-up {:.2} s), {:.3} M idxs+PRs/s, cpu {cpu:.2} \
                 s, serial part {serial:.2} s ({:.0} %)",
                i + 1,
                run.setup_secs,
                (run.idxs + run.prs_issued) as f64 / wall.max(1e-9) / 1e6,
                100.0 * serial / all
            );
        }
        done.push((wall, cpu, run));
    }
    // The median run by wall time (the lower middle one of an even count).
    let mut order: Vec<usize> = (0..runs).collect();
    order.sort_by(|&x, &y| done[x].0.total_cmp(&done[y].0));
    let (wall, cpu, run) = &done[order[(runs - 1) / 2]];
    let (wall, cpu) = (*wall, *cpu);
    let work = (run.idxs + run.prs_issued) as f64;
    if runs > 1 {
        let rate = |w: f64| work / w.max(1e-9) / 1e6;
        let (fast, slow) = (done[order[0]].0, done[order[runs - 1]].0);
        println!(
            "{runs} runs, every one verified and simulating the same: wall min {fast:.2} s, median \
             {wall:.2} s, max {slow:.2} s ({:.3} / {:.3} / {:.3} M idxs+PRs/s); the rest is the \
             median run's",
            rate(fast),
            rate(wall),
            rate(slow)
        );
    }
    println!(
        "{spec}: {} nonzeros on {} nodes in {} racks, K = {}, mode {}, {threads} thread(s)",
        m.nnz(),
        cfg.nodes,
        cfg.racks,
        cfg.k,
        mode.name()
    );
    println!(
        "{} idxs + {} PRs issued, {} events, every gathered property verified",
        run.idxs, run.prs_issued, run.events
    );
    if run.windows.0 > 0 {
        println!(
            "event loop: {} windows of simulated time, {} of them on more than one thread",
            run.windows.0, run.windows.1
        );
        let t = run.window_times;
        if let Some(bound) = t.speedup_bound() {
            let serial = t.serial.as_secs_f64();
            let all = serial + t.devices.as_secs_f64();
            println!(
                "windows: {:.2} s in the devices' part ({threads} thread(s)), {serial:.2} s in the \
                 serial gather and merge ({:.0} %)",
                t.devices.as_secs_f64(),
                100.0 * serial / all
            );
            println!(
                "  with unlimited cores the windows would be at most {bound:.1}x faster: the \
                 serial part alone allows {:.3} M idxs+PRs/s",
                work / serial / 1e6
            );
        }
    }
    println!("{}", super::engine::summary());
    println!(
        "wall: {wall:.2} s, {:.3} M idxs+PRs/s (of it: set-up {:.2} s building the cluster, event \
         loop {:.2} s)",
        work / wall.max(1e-9) / 1e6,
        run.setup_secs,
        run.wall_secs
    );
    println!(
        "cpu:  {cpu:.2} s (all threads), {:.3} M idxs+PRs/s per CPU second",
        work / cpu.max(1e-9) / 1e6
    );
    if run.events > 0 {
        // What the CPU time of the events allows on this machine's cores,
        // however the work were divided among them (the waiting of the
        // threads counts as CPU time too, so a one-thread run's figure is
        // the one to read).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!(
            "cpu per event: {:.0} ns; at that cost {cores} core(s) allow at most {:.3} M \
             idxs+PRs/s, however the events are divided among them{}",
            cpu / run.events as f64 * 1e9,
            work * cores as f64 / cpu.max(1e-9) / 1e6,
            if threads > 1 {
                " (this CPU time includes the threads' waiting: --threads 1 measures the cost itself)"
            } else {
                ""
            }
        );
    }
    let per_nnz = |b: u64| b as f64 / m.nnz().max(1) as f64;
    if let Some(b) = gen_peak {
        println!(
            "generation: {gen_secs:.2} s, peak resident memory {} ({:.1} B per nonzero)",
            memory::gib(b),
            per_nnz(b)
        );
    }
    let acc = run.memory;
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    println!(
        "set-up: matrix {:.1} MiB held (CSR), host tables {:.1} MiB, Idx Filters {:.1} MiB; \
         resident {} when the event loop started",
        mib(m.nnz() * 4 + (u64::from(m.rows()) + 1) * 8),
        mib(acc.host_bytes),
        mib(acc.filter_bytes),
        memory::gib(acc.rss_after_setup)
    );
    match memory::peak_rss() {
        Some(b) => println!(
            "peak resident memory: {} ({:.1} B per nonzero; estimated before generating: {})",
            memory::gib(b),
            per_nnz(b),
            estimate.describe()
        ),
        None => println!("peak resident memory: unknown (no /proc/self/status)"),
    }
    Ok(ExitCode::SUCCESS)
}

fn nic(a: NicArgs) -> anyhow::Result<ExitCode> {
    use netsparse_nic::workload::{bench_idxs, ClientUnitBench};
    let (artifact, name) = match &a.program {
        Some(p) => match super::switch::load_program(p)? {
            Ok(art) => (art, p.display().to_string()),
            Err(code) => return Ok(code),
        },
        None => (
            compile_bundled(Bundled::Nic, &[])?,
            "programs/netsparse_nic.p4 (bundled)".to_owned(),
        ),
    };
    let columns = a.columns.max(16);
    let idxs = bench_idxs(a.idxs, columns, 42);
    let (mut wall, mut cpu, mut total) = (0.0f64, 0.0f64, 0u64);
    let mut last = None;
    for _ in 0..a.runs.max(1) {
        let mut w = match ClientUnitBench::new(&artifact, &idxs, columns, 16) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("error: {name}: {e}");
                return Ok(ExitCode::from(1));
            }
        };
        let cpu0 = thread_cpu_time();
        let t0 = Instant::now();
        total += w.run();
        wall += t0.elapsed().as_secs_f64();
        cpu += thread_cpu_time() - cpu0;
        last = Some(w);
    }
    println!(
        "program: {name}, {} idxs x {} runs, {columns} columns, 16 nodes",
        a.idxs,
        a.runs.max(1)
    );
    if let Some(w) = &last {
        let s = w.nic().stats();
        println!(
            "per run: {} filtered, {} coalesced, {} local, {} issued in {} packets ({:.1} PRs/packet)",
            s.prs_filtered,
            s.prs_coalesced,
            s.prs_local,
            s.prs_issued,
            s.tx_packets,
            s.prs_per_packet_out()
        );
    }
    let n = total as f64;
    println!("{}", super::engine::summary());
    println!("wall: {wall:.3} s, {:.0} idxs/s", n / wall.max(1e-9));
    println!("cpu:  {cpu:.3} s, {:.0} idxs/s per core", n / cpu.max(1e-9));
    Ok(ExitCode::SUCCESS)
}

fn switch(a: SwitchArgs) -> anyhow::Result<ExitCode> {
    let (artifact, name) = match &a.program {
        Some(p) => match super::switch::load_program(p)? {
            Ok(art) => (art, p.display().to_string()),
            Err(code) => return Ok(code),
        },
        None => (
            compile_bundled(Bundled::Ipv4Forward, &[])?,
            "programs/ipv4_forward.p4 (bundled)".to_owned(),
        ),
    };
    let mut sw = match Switch::new(&artifact, SwitchConfig::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {name}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let w = ipv4_workload(a.routes.max(1), 4096, 1);
    if let Err(e) = install_routes(&mut sw, &w) {
        eprintln!("error: {name}: {e}");
        return Ok(ExitCode::from(1));
    }
    let mut out = Outputs::new();
    // Warm up (caches, pools) outside the measurement.
    for f in w.frames.iter().take(a.packets.min(w.frames.len())) {
        sw.on_packet(Time::ZERO, 1, f, &mut out);
        out.clear();
    }
    sw.reset_stats();
    let cpu0 = thread_cpu_time();
    let t0 = Instant::now();
    let mut sent = 0usize;
    for (i, f) in w.frames.iter().cycle().take(a.packets).enumerate() {
        sw.on_packet(Time::from_ns(i as u64 * 100), 1, f, &mut out);
        sent += out.len();
        out.clear();
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_time() - cpu0;
    let n = a.packets as f64;
    println!("program: {name}, {} LPM routes", w.routes.len());
    println!(
        "replayed {} packets ({} forwarded, {} dropped by the program)",
        a.packets,
        sent,
        a.packets - sent
    );
    println!("{}", super::engine::summary());
    println!("wall: {wall:.3} s, {:.0} packets/s", n / wall.max(1e-9));
    println!(
        "cpu:  {cpu:.3} s, {:.0} packets/s per core",
        n / cpu.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// A v1model switch running the bundled ipv4_forward with `routes` routes
/// of the seeded workload installed, and the workload.
fn ipv4_switch(routes: usize) -> anyhow::Result<(Switch, netsparse_bmv2::workload::Workload)> {
    let artifact = compile_bundled(Bundled::Ipv4Forward, &[])?;
    let mut sw = Switch::new(&artifact, SwitchConfig::default())?;
    let w = ipv4_workload(routes.max(1), 4096, 1);
    install_routes(&mut sw, &w)?;
    Ok((sw, w))
}

fn pcap(a: PcapArgs) -> anyhow::Result<ExitCode> {
    use anyhow::Context as _;
    use netsparse_bmv2::drivers::pcap::{run, PcapOptions};
    use netsparse_bmv2::drivers::PortSpec;
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::TsResolution;

    let (dir, temporary) = match &a.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("netsparse-bench-pcap-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let (_, w) = ipv4_switch(a.routes)?;
    let at = |i: usize| Time::from_ns(1_000 + i as u64 * 100);
    {
        let input = dir.join("p1_in.pcap");
        let f = std::fs::File::create(&input)
            .with_context(|| format!("creating {}", input.display()))?;
        let header = PcapHeader {
            ts_resolution: TsResolution::NanoSecond,
            ..PcapHeader::default()
        };
        let mut pw = PcapWriter::with_header(std::io::BufWriter::new(f), header)?;
        for (i, f) in w.frames.iter().cycle().take(a.packets).enumerate() {
            let ts = std::time::Duration::from_nanos(at(i).as_ps() / 1000);
            pw.write_packet(&PcapPacket::new(ts, f.len() as u32, f))?;
        }
    }
    // In-process: the same packets, the same times.
    let (mut sw, _) = ipv4_switch(a.routes)?;
    let mut out = Outputs::new();
    let cpu0 = thread_cpu_time();
    let t0 = Instant::now();
    let mut sent = 0usize;
    for (i, f) in w.frames.iter().cycle().take(a.packets).enumerate() {
        sw.on_packet(at(i), 1, f, &mut out);
        sent += out.len();
        out.clear();
    }
    let (wall_in, cpu_in) = (t0.elapsed().as_secs_f64(), thread_cpu_time() - cpu0);
    // Through the pcap driver.
    let (mut sw, _) = ipv4_switch(a.routes)?;
    let specs: Vec<PortSpec> = (1..=8)
        .map(|p| PortSpec {
            port: p,
            name: format!("p{p}"),
        })
        .collect();
    let cpu0 = thread_cpu_time();
    let t0 = Instant::now();
    let report = run(&mut sw, &specs, &dir, &PcapOptions::default())?;
    let (wall_pc, cpu_pc) = (t0.elapsed().as_secs_f64(), thread_cpu_time() - cpu0);
    let written: u64 = report.ports.iter().map(|p| p.packets_out).sum();
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if written != sent as u64 {
        eprintln!(
            "error: the pcap run wrote {written} packets, the in-process run forwarded {sent}"
        );
        return Ok(ExitCode::from(1));
    }
    let n = a.packets as f64;
    println!(
        "programs/ipv4_forward.p4 (bundled), {} LPM routes, {} packets ({sent} forwarded)",
        w.routes.len(),
        a.packets
    );
    println!(
        "in-process: wall {wall_in:.3} s, {:.0} packets/s; cpu {cpu_in:.3} s, {:.0} packets/s per core",
        n / wall_in.max(1e-9),
        n / cpu_in.max(1e-9)
    );
    println!(
        "pcap:       wall {wall_pc:.3} s, {:.0} packets/s; cpu {cpu_pc:.3} s, {:.0} packets/s per core",
        n / wall_pc.max(1e-9),
        n / cpu_pc.max(1e-9)
    );
    println!(
        "pcap / in-process: {:.2}x wall, {:.2}x cpu",
        wall_pc / wall_in.max(1e-9),
        cpu_pc / cpu_in.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

fn middle_pipe(a: MiddlePipeArgs) -> anyhow::Result<ExitCode> {
    use netsparse_bmv2::nsswitch::workload::{install_tor_routes, middle_workload};
    use netsparse_bmv2::nsswitch::{NsConfig, NsSwitch};
    let (artifact, name) = match &a.program {
        Some(p) => match super::switch::load_program(p)? {
            Ok(art) => (art, p.display().to_string()),
            Err(code) => return Ok(code),
        },
        None => (
            compile_bundled(Bundled::Tor, &[])?,
            "programs/netsparse_tor.p4 (bundled)".to_owned(),
        ),
    };
    let cfg = match &a.config {
        Some(f) => {
            let text = std::fs::read_to_string(f)?;
            match NsConfig::from_toml(&text) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {}: {e}", f.display());
                    return Ok(ExitCode::from(1));
                }
            }
        }
        None => NsConfig::default(),
    };
    let w = middle_workload(
        a.packets.max(2),
        64,
        a.range.max(1),
        cfg.ports_per_pipe(),
        1,
    )?;
    let shape = cfg.describe();
    let mut sw = match NsSwitch::new(&artifact, cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {name}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Err(e) = install_tor_routes(&mut sw, &w.routes) {
        eprintln!("error: {name}: {e}");
        return Ok(ExitCode::from(1));
    }
    let mut out = Outputs::new();
    let mut now = Time::ZERO;
    let gap = Time::from_ns(a.gap_ns);
    let mut pass = |sw: &mut NsSwitch, now: &mut Time| {
        for (port, f) in &w.frames {
            *now += gap;
            while let Some(d) = sw.next_deadline().filter(|d| *d <= *now) {
                sw.on_timer(d, &mut out);
                out.clear();
            }
            sw.on_packet(*now, *port, f, &mut out);
            out.clear();
        }
    };
    // Warm up (caches, pools, queues) outside the measurement.
    pass(&mut sw, &mut now);
    sw.reset_stats();
    let passes = a.prs.div_ceil(w.prs.max(1)).max(1);
    let cpu0 = thread_cpu_time();
    let t0 = Instant::now();
    for _ in 0..passes {
        pass(&mut sw, &mut now);
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_time() - cpu0;
    let s = sw.stats();
    let p = &s.pipes[0];
    println!("program: {name}");
    println!("switch: {shape}");
    println!(
        "middle pipe 0: {} PRs in {} packets; {} hits, {} misses, {} inserts ({} already cached); {} PRs out in {} packets ({:.1} PRs/packet)",
        p.prs_in,
        p.netsparse_packets,
        p.cache.hits,
        p.cache.misses,
        p.cache.inserts,
        p.cache.present,
        p.prs_out,
        p.concat_packets,
        p.prs_per_packet
    );
    let n = p.prs_in as f64;
    println!("{}", super::engine::summary());
    println!("wall: {wall:.3} s, {:.0} PRs/s", n / wall.max(1e-9));
    println!("cpu:  {cpu:.3} s, {:.0} PRs/s per core", n / cpu.max(1e-9));
    Ok(ExitCode::SUCCESS)
}
