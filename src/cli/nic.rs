//! `netsparse nic`: one NetSparse SmartNIC endpoint on a live interface or
//! on pcap files, serving reads for its slice of the property array and,
//! given a gather job, issuing RIG commands and writing what it gathered.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context as _};
use netsparse_bmv2::drivers::{self, live, pcap, PortSpec};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::artifact::{Arch, Artifact};
use netsparse_nic::workload::{batch_commands, gather_memory, DEST_BASE};
use netsparse_nic::{
    is_property, Completion, CompletionStatus, Datapath, DenseMemory, Nic, NicConfig, Outputs,
    RigCommand, Time, IBV_WR_RIG,
};

use netsparse::sim::matrix::CooBuilder;
use netsparse::sim::partition::Partition;

/// Arguments of `netsparse nic`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The partition file is the simulator's: N lines `start end` (half-open, from 0,\n\
contiguous); node n owns properties start..end of the array. Property values\n\
are netsparse_nic::property_word(idx, j) (K four-byte words per property), so\n\
every endpoint serves the same array and gathers can be checked.\n\
\n\
--gather FILE: the idxs to gather, one per line (`#` comments). They are split\n\
into RIG commands of --batch idxs (IBV_WR_RIG work requests), posted at start.\n\
--out FILE: every distinct remote idx of the job with its gathered property, as\n\
`idx hex` lines (text) or, with --out-format bin, records of a little-endian\n\
u64 idx followed by the property bytes. Gathered properties are checked\n\
against property_word; a mismatch or a failed command exits 1.\n\
\n\
Modes: with --use-files DIR, -i 0@NAME reads DIR/NAME_in.pcap (if present) and\n\
writes DIR/NAME_out.pcap (NAME defaults to node<ID>). Replay is deterministic,\n\
so a gather can be completed in passes: run the peers on this node's output,\n\
then this node again on their outputs. The replay clock starts at the first\n\
input record, so a gathering node's input must start at time 0: when it has\n\
none, an anchor record (time 0, nanosecond pcap, ignored as foreign) is\n\
written to NAME_in.pcap; keep it first when adding the peers' outputs.\n\
Without --use-files, NAME is a Linux\n\
interface (AF_PACKET, needs CAP_NET_RAW) and the NIC runs until SIGINT/SIGTERM\n\
(or until the gather completes, with --exit-when-done).\n\
--grpc-server-addr ADDR (live only): a P4Runtime server for the running NIC\n\
(tables, counters, registers, the NIC's counters as the NetSparse statistics\n\
extern); its program cannot be replaced while it runs.\n\
\n\
--entries FILE: extra BMv2-style commands for the program's tables\n\
(table_add T A K... => P... [prio], table_set_default T A P..., table_clear T).\n\
--config FILE: NIC parameters (TOML, keys of netsparse_nic::NicConfig; Table 5\n\
defaults). --node and the partition's size override `node`/`filter_columns`.\n\
\n\
Exit status: 0 ok; 1 bad input, failed command or wrong property; 2 usage or\n\
I/O errors.\n\
\n\
Example: netsparse nic programs/netsparse_nic.p4 --node 0 --partition parts.txt \\\n\
           --use-files pcaps/ --gather node0.idx --out node0.props")]
pub struct Args {
    /// The NIC program: a pipeline artifact (`.json`) or a P4 source (`.p4`).
    pub program: PathBuf,
    /// This NIC's node id (required for NetSparse NIC programs; a sPIN
    /// NIC's defaults to 0).
    #[arg(long, value_name = "ID")]
    pub node: Option<u32>,
    /// The 1D partition of the property array (N lines `start end`;
    /// NetSparse NIC programs only).
    #[arg(long, value_name = "FILE")]
    pub partition: Option<PathBuf>,
    /// sPIN NIC programs: write host memory (or --host-range of it) to
    /// FILE at the end.
    #[arg(long, value_name = "FILE")]
    pub host_out: Option<PathBuf>,
    /// sPIN NIC programs: the bytes of host memory --host-out writes,
    /// `START..END` (decimal or 0x hex; default: all of it).
    #[arg(long, value_name = "START..END", requires = "host_out")]
    pub host_range: Option<String>,
    /// Bind NIC port 0 to NAME (an interface, or a pcap stem with --use-files).
    #[arg(short = 'i', long = "interface", value_name = "0@NAME")]
    pub interfaces: Vec<PortSpec>,
    /// Replay DIR/<NAME>_in.pcap into DIR/<NAME>_out.pcap instead of an interface.
    #[arg(long, value_name = "DIR")]
    pub use_files: Option<PathBuf>,
    /// Live mode: record the port's input and output to DIR/<NAME>_{in,out}.pcap.
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
    /// Property size in four-byte values (K): properties are 4·K bytes.
    #[arg(long, value_name = "K", default_value_t = 16)]
    pub k: u32,
    /// Idxs to gather, one per line.
    #[arg(long, value_name = "IDXFILE")]
    pub gather: Option<PathBuf>,
    /// Write the gathered properties here.
    #[arg(long, value_name = "FILE", requires = "gather")]
    pub out: Option<PathBuf>,
    /// Format of --out.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub out_format: OutFormat,
    /// Idxs per RIG command (the RIG batch size).
    #[arg(long, value_name = "N", default_value_t = 8192)]
    pub batch: u64,
    /// Post each command when the previous one completes (default: all at once).
    #[arg(long)]
    pub serial: bool,
    /// Live mode: stop once the gather completed.
    #[arg(long)]
    pub exit_when_done: bool,
    /// Extra table entries: runtime JSON (`.json`) or a BMv2 command file.
    #[arg(long, value_name = "FILE")]
    pub entries: Option<PathBuf>,
    /// NIC parameters (TOML).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Preprocessor definitions for a `.p4` program (the ablations:
    /// `-D NS_NO_FILTER`, `-D NS_NO_COALESCE`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Trace every PR (statements, tables, externs) on stderr.
    #[arg(long)]
    pub log_console: bool,
    /// Write the counters (NIC and per command) as JSON to FILE at the end.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Serve P4Runtime (gRPC) on ADDR while the NIC runs (as `netsparse
    /// switch`): the program's tables, counters and registers, and the
    /// NIC's counters. Live interfaces only; off by default.
    #[arg(long, value_name = "ADDR")]
    pub grpc_server_addr: Option<String>,
    /// The P4Runtime device id controllers must send.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub device_id: u64,
}

/// Formats of `--out`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    /// `idx hex` lines.
    Text,
    /// Little-endian u64 idx + property bytes per record.
    Bin,
}

fn parse_define(d: &str) -> anyhow::Result<(String, String)> {
    let (name, value) = match d.split_once('=') {
        Some((n, v)) => (n.to_string(), v.to_string()),
        None => (d.to_string(), "1".to_string()),
    };
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        bail!("-D {d:?}: {name:?} is not a valid macro name");
    }
    Ok((name, value))
}

/// Load a `.json` artifact or compile a `.p4` source with `defines`.
fn load_program(path: &Path, defines: &[String]) -> anyhow::Result<Result<Artifact, ExitCode>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().and_then(|e| e.to_str()) == Some("p4") {
        let opts = CompileOptions {
            defines: defines
                .iter()
                .map(|d| parse_define(d))
                .collect::<anyhow::Result<_>>()?,
            ..CompileOptions::default()
        };
        let mut sources = SourceMap::new();
        return Ok(match compile_file(&mut sources, path, &opts) {
            Ok(c) => Ok(c.artifact),
            Err(diags) => {
                let color = std::io::stderr().is_terminal();
                for d in &diags {
                    d.emit(&sources, color);
                }
                eprintln!("error: {} does not compile", path.display());
                Err(ExitCode::from(1))
            }
        });
    }
    if !defines.is_empty() {
        eprintln!("note: -D is ignored for a compiled artifact");
    }
    Ok(match Artifact::from_json(&text) {
        Ok(a) => Ok(a),
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            Err(ExitCode::from(1))
        }
    })
}

/// Read a partition file with the simulator's parser: the bounds `0 = b0 ≤
/// … ≤ bN`.
pub fn read_partition(path: &Path) -> anyhow::Result<Vec<u64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read partition file {}", path.display()))?;
    // The parser checks the ranges against a square matrix of as many rows
    // as the last range ends at: an empty pattern matrix of that size.
    let rows = text
        .lines()
        .filter_map(|l| {
            l.split('#')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    if rows > u64::from(u32::MAX) {
        bail!(
            "{}: ranges beyond 2^32 properties are not supported",
            path.display()
        );
    }
    let (m, _) = CooBuilder::new(rows, rows, false)
        .context("building the partition's matrix")?
        .build();
    let p = Partition::from_text(&text, &path.display().to_string(), &m, None)?;
    Ok(p.rows.bounds().iter().map(|b| u64::from(*b)).collect())
}

/// Read a gather job: one idx per line, `#` comments and blank lines ignored.
pub fn read_idxs(path: &Path) -> anyhow::Result<Vec<u64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read gather job {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let v: u64 = body.parse().with_context(|| {
            format!(
                "{}:{}: expected an idx (a non-negative integer), found {body:?}",
                path.display(),
                i + 1
            )
        })?;
        out.push(v);
    }
    Ok(out)
}

/// The NIC as the drivers see it: posts the gather's commands at the first
/// call (in the driver's time base) and collects completions.
struct Endpoint<'a> {
    nic: &'a mut Nic<DenseMemory>,
    commands: Vec<RigCommand>,
    next: usize,
    serial: bool,
    started: bool,
    completions: Vec<Completion>,
    rejected: Vec<String>,
    stop: Option<Arc<AtomicBool>>,
}

impl Endpoint<'_> {
    fn post(&mut self, now: Time) {
        while let Some(c) = self.commands.get(self.next).copied() {
            self.next += 1;
            match self.nic.post_rig(now, c) {
                Ok(_) => {
                    if self.serial {
                        return;
                    }
                }
                Err(e) => self.rejected.push(e.to_string()),
            }
        }
    }

    fn done(&self) -> bool {
        self.next == self.commands.len()
            && self.completions.len() + self.rejected.len() == self.commands.len()
    }

    fn after(&mut self, now: Time) {
        if !self.started {
            self.started = true;
            self.post(now);
        }
        while let Some(c) = self.nic.poll_cq() {
            tracing::info!(command = c.id.0, status = ?c.status, "RIG completion");
            self.completions.push(c);
            if self.serial {
                self.post(now);
            }
        }
        if self.done() {
            if let Some(s) = &self.stop {
                s.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl Datapath for Endpoint<'_> {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        if !self.started {
            self.after(now);
        }
        self.nic.on_packet(now, port, frame, out);
        self.after(now);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        if !self.started {
            self.after(now);
        }
        self.nic.on_timer(now, out);
        self.after(now);
    }

    fn next_deadline(&self) -> Option<Time> {
        if !self.started && !self.commands.is_empty() {
            return Some(Time::ZERO);
        }
        self.nic.next_deadline()
    }
}

/// Run `dp` on `specs`: replayed from pcap files with `--use-files`,
/// else on live interfaces until SIGINT/SIGTERM or `stop` (with `control`
/// and `hook` serving a P4Runtime mailbox). `Ok(Ok(failed))` when it ran
/// (`failed`: a port reported an error, printed), `Ok(Err(code))` when the
/// driver could not start.
pub(crate) fn drive<D: Datapath>(
    dp: &mut D,
    specs: &[PortSpec],
    args: &Args,
    stop: Arc<AtomicBool>,
    control: Option<Arc<AtomicBool>>,
    hook: &mut dyn FnMut(&mut D, &[live::LivePortStats], live::Wake),
) -> anyhow::Result<Result<bool, ExitCode>> {
    let mut failed = false;
    if let Some(dir) = &args.use_files {
        match pcap::run(dp, specs, dir, &pcap::PcapOptions::default()) {
            Ok(rep) => {
                for p in &rep.ports {
                    let name = p.spec.as_ref().map(ToString::to_string).unwrap_or_default();
                    eprintln!("{name}: {} packets in, {} out", p.packets_in, p.packets_out);
                    if let Some(e) = &p.error {
                        eprintln!("error: {e}");
                        failed = true;
                    }
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(Err(ExitCode::from(2)));
            }
        }
        return Ok(Ok(failed));
    }
    live::stop_on_signals(Arc::clone(&stop)).context("cannot install the signal handlers")?;
    let opts = live::LiveOptions {
        record_dir: args.pcap.clone(),
        control,
        ..live::LiveOptions::default()
    };
    eprintln!("NIC running on {} (Ctrl-C to stop)", specs[0]);
    match live::serve(dp, specs, stop, &opts, hook) {
        Ok(rep) => {
            if let Some(e) = rep.receiver_error {
                eprintln!("error: {e}");
                failed = true;
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Err(ExitCode::from(2)));
        }
    }
    Ok(Ok(failed))
}

/// An EtherType no NIC or switch handles (IEEE local experimental): the
/// anchor record is counted as foreign and ignored.
const ANCHOR_ETHERTYPE: [u8; 2] = [0x88, 0xb5];

/// A nanosecond pcap with one minimal frame at time 0. The pcap driver's
/// clock starts at the first input record and its outputs keep the inputs'
/// timestamp resolution, so a gathering node replays from time 0 with
/// nanosecond outputs.
fn write_anchor(path: &Path) -> anyhow::Result<()> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::{Endianness, TsResolution};
    let f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let header = PcapHeader {
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(std::io::BufWriter::new(f), header)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let mut frame = vec![0u8; 60];
    frame[12..14].copy_from_slice(&ANCHOR_ETHERTYPE);
    w.write_packet(&PcapPacket::new(
        std::time::Duration::ZERO,
        frame.len() as u32,
        &frame,
    ))
    .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Run one NIC endpoint.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::init_logging(args.log_console, true);
    let artifact = match load_program(&args.program, &args.defines)? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    if artifact.arch == Arch::SpinNic {
        return super::nic_spin::run(&args, &artifact);
    }
    if args.host_out.is_some() {
        bail!(
            "--host-out: only for sPIN NIC programs (a NetSparse NIC writes its gather with --out)"
        );
    }
    let (Some(node), Some(partition)) = (args.node, args.partition.as_deref()) else {
        bail!("a NetSparse NIC program needs --node ID and --partition FILE");
    };
    let bounds = read_partition(partition)?;
    let nodes = bounds.len() - 1;
    if node as usize >= nodes {
        bail!("--node {node}: the partition has {nodes} nodes");
    }
    if args.k == 0 {
        bail!("--k 0: properties need at least one four-byte value");
    }
    let prop_len = args.k.checked_mul(4).context("--k is too large")?;
    let mut cfg = match &args.config {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("cannot read {}", f.display()))?;
            toml::from_str::<NicConfig>(&text)
                .with_context(|| format!("{}: bad NIC config", f.display()))?
        }
        None => NicConfig::default(),
    };
    cfg.node = node;
    cfg.filter_columns = bounds.last().copied().unwrap_or(0);
    let idxs = match &args.gather {
        Some(f) => read_idxs(f)?,
        None => Vec::new(),
    };
    let (mem, slice) = gather_memory(&bounds, node as usize, prop_len, &idxs)?;
    let mut nic = match Nic::new(&artifact, cfg, mem) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    nic.set_trace(args.log_console);
    if let Err(e) = nic.install_partition(&bounds) {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(1));
    }
    nic.serve_properties(slice)?;
    if !super::switch::apply_entries(nic.program_mut(), args.entries.as_deref())? {
        return Ok(ExitCode::from(1));
    }
    let commands = batch_commands(idxs.len() as u64, args.batch, prop_len);
    eprintln!(
        "node {} of {nodes}: serving properties {}..{} (K={}), gathering {} idxs in {} RIG commands (opcode {IBV_WR_RIG:#x})",
        node,
        bounds[node as usize],
        bounds[node as usize + 1],
        args.k,
        idxs.len(),
        commands.len()
    );
    let mailbox = match super::switch::start_p4runtime::<Nic<DenseMemory>>(
        args.grpc_server_addr.as_deref(),
        args.use_files.is_some(),
        args.device_id,
        &artifact,
        None,
    ) {
        Ok(m) => m,
        Err(code) => return Ok(code),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut ep = Endpoint {
        nic: &mut nic,
        commands,
        next: 0,
        serial: args.serial,
        started: false,
        completions: Vec::new(),
        rejected: Vec::new(),
        stop: args.exit_when_done.then(|| Arc::clone(&stop)),
    };
    let specs = if args.interfaces.is_empty() {
        if args.use_files.is_none() {
            bail!("give -i 0@IFACE (live) or --use-files DIR");
        }
        vec![format!("0@node{node}")
            .parse::<PortSpec>()
            .map_err(|e| anyhow::anyhow!("{e}"))?]
    } else {
        args.interfaces.clone()
    };
    drivers::check_unique(&specs)?;
    if let (Some(dir), true) = (&args.use_files, !idxs.is_empty()) {
        let input = pcap::input_path(dir, &specs[0]);
        if !input.exists() {
            write_anchor(&input)?;
            eprintln!(
                "note: wrote {} (one record at time 0, nanosecond timestamps) to anchor the replay's clock",
                input.display()
            );
        }
    }
    if specs.iter().any(|s| s.port != 0) {
        bail!(
            "the NIC has one port, 0 (got {})",
            specs
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut hook = |ep: &mut Endpoint<'_>, _: &[live::LivePortStats], why: live::Wake| {
        if let (live::Wake::Control, Some(m)) = (why, &mailbox) {
            m.drain(&mut *ep.nic);
        }
    };
    let driver_failed = match drive(
        &mut ep,
        &specs,
        &args,
        Arc::clone(&stop),
        mailbox.as_ref().map(|m| m.wake_flag()),
        &mut hook,
    )? {
        Ok(failed) => failed,
        Err(code) => return Ok(code),
    };
    let Endpoint {
        completions,
        rejected,
        next,
        commands,
        ..
    } = ep;
    let mut failed = driver_failed || !rejected.is_empty();
    for r in &rejected {
        eprintln!("error: RIG command rejected: {r}");
    }
    for c in &completions {
        if let CompletionStatus::Failed(reason) = &c.status {
            eprintln!(
                "error: RIG command {} failed: {reason} (its destination buffer is invalid)",
                c.id.0
            );
            failed = true;
        }
    }
    let unfinished = commands.len() - completions.len() - rejected.len().min(commands.len());
    if next > 0 && unfinished > 0 {
        eprintln!("error: {unfinished} RIG command(s) did not complete (no answer before the input ended)");
        failed = true;
    }
    eprint!("{}", nic.stats().summary());
    // The gathered properties: every distinct remote idx of the job.
    let own = bounds[node as usize]..bounds[node as usize + 1];
    let mut remote: Vec<u64> = idxs.iter().copied().filter(|i| !own.contains(i)).collect();
    remote.sort_unstable();
    remote.dedup();
    let dest = nic.memory().data(DEST_BASE).unwrap_or(&[]);
    let p = prop_len as usize;
    let slot = |i: u64| dest.get(i as usize * p..(i as usize + 1) * p);
    let wrong: Vec<u64> = remote
        .iter()
        .copied()
        .filter(|i| !slot(*i).is_some_and(|s| is_property(*i, s)))
        .collect();
    if args.gather.is_some() {
        if wrong.is_empty() {
            eprintln!("gathered {} remote properties, all verified", remote.len());
        } else if !failed {
            eprintln!(
                "error: {} of {} gathered properties are wrong or missing (first idx {})",
                wrong.len(),
                remote.len(),
                wrong[0]
            );
            failed = true;
        }
    }
    if let (Some(out), false) = (&args.out, failed) {
        let bytes = match args.out_format {
            OutFormat::Text => {
                let mut s = format!(
                    "# netsparse nic: node {} gathered {} properties of {prop_len} bytes\n",
                    node,
                    remote.len()
                );
                for i in &remote {
                    s.push_str(&i.to_string());
                    s.push(' ');
                    for b in slot(*i).unwrap_or(&[]) {
                        s.push_str(&format!("{b:02x}"));
                    }
                    s.push('\n');
                }
                s.into_bytes()
            }
            OutFormat::Bin => {
                let mut v = Vec::with_capacity(remote.len() * (8 + p));
                for i in &remote {
                    v.extend_from_slice(&i.to_le_bytes());
                    v.extend_from_slice(slot(*i).unwrap_or(&[]));
                }
                v
            }
        };
        std::fs::write(out, bytes).with_context(|| format!("cannot write {}", out.display()))?;
    }
    if let Some(file) = &args.stats_json {
        let doc = serde_json::json!({
            "node": node,
            "nic": nic.stats(),
            "commands": completions,
            "rejected": rejected,
            "gathered": remote.len(),
            "wrong": wrong.len(),
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
