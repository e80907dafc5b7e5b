//! `netsparse switch`: run a v1model program, or a NetSparse switch program
//! on the multi-pipe NetSparse switch (chosen from the artifact's
//! architecture), on pcap files or live interfaces.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context as _;
use netsparse_bmv2::drivers::{self, live, pcap, PortSpec};
use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_engine::control::{commands, runtime_json, ControlPlane};
use netsparse_externs::artifact::{Arch, Artifact};
use netsparse_externs::Datapath;

/// Arguments of `netsparse switch`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Modes: with --use-files DIR, each -i PORT@NAME reads DIR/NAME_in.pcap (if present)\n\
and writes DIR/NAME_out.pcap; inputs are merged by timestamp and the run ends when\n\
they are exhausted (deterministic: the same inputs give the same bytes). Without\n\
--use-files, NAME is a Linux interface (AF_PACKET, needs CAP_NET_RAW) and the\n\
switch runs until SIGINT/SIGTERM, on TPACKET memory-mapped rings (falling back to\n\
plain sockets, with a note, if the rings cannot be set up). With --stats-json,\n\
SIGUSR1 writes the counters to that file while running (field dump_seq counts).\n\
\n\
--entries: a .json file is the p4lang tutorials' runtime JSON (table_entries,\n\
multicast_group_entries, clone_session_entries); anything else is a BMv2\n\
simple_switch_CLI command file (table_add t a k... => p... [prio], ...).\n\
\n\
NetSparse switch programs (NetSparseSwitch(...) main;, e.g. programs/netsparse_tor.p4)\n\
run on the multi-pipe NetSparse switch: --config FILE gives its shape (TOML: ports,\n\
pipes, clock_mhz, delay_cycles, mtu, [switch] id, [cache] size/ways/latency_cycles/\n\
mode; Table 5 defaults), command files also take cache_mode <bytes> and\n\
cache_invalidate, and the summary and --stats-json are per pipe.\n\
\n\
Exit status: 0 ok; 1 bad input (program errors, bad entries, a corrupt pcap);\n\
2 usage or I/O errors.\n\
\n\
Example: netsparse switch programs/ipv4_forward.p4 -i 1@s1 -i 2@s2 \\\n\
           --entries s1-runtime.json --use-files pcaps/")]
pub struct Args {
    /// The program: a pipeline artifact (`.json`) or a P4 source (`.p4`,
    /// compiled on the fly).
    pub program: PathBuf,
    /// Bind switch port PORT to NAME (an interface, or a pcap file stem with
    /// --use-files). Repeatable.
    #[arg(
        short = 'i',
        long = "interface",
        value_name = "PORT@NAME",
        required = true
    )]
    pub interfaces: Vec<PortSpec>,
    /// Table entries: runtime JSON (`.json`) or a BMv2 command file.
    #[arg(long, value_name = "FILE")]
    pub entries: Option<PathBuf>,
    /// Replay DIR/<NAME>_in.pcap into DIR/<NAME>_out.pcap instead of using interfaces.
    #[arg(long, value_name = "DIR")]
    pub use_files: Option<PathBuf>,
    /// Live mode: record every port's input and output to DIR/<NAME>_{in,out}.pcap.
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
    /// Trace every packet (parser states, headers, tables, egress decision) on stderr.
    #[arg(long)]
    pub log_console: bool,
    /// Print the first N bytes of every packet in and out (hex).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub dump_packet_data: usize,
    /// Seed of `random()` and the random hash.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Write the counters as JSON to FILE at the end.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Drop frames longer than N bytes (counted as malformed).
    #[arg(long, value_name = "N", default_value_t = 9216)]
    pub max_frame: usize,
    /// NetSparse switch programs: the switch's shape (TOML: ports, pipes,
    /// clock, DelayCycles, MTU, Property Cache, the switch's address);
    /// keys left out take Table 5's values.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Serve P4Runtime (gRPC) on ADDR (`127.0.0.1:9559`; port 0 picks a
    /// free port, printed at start). Off by default. Live interfaces only.
    /// A non-loopback address is served as given, with a warning.
    #[arg(long, value_name = "ADDR")]
    pub grpc_server_addr: Option<String>,
    /// The P4Runtime device id controllers must send.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub device_id: u64,
    /// The CPU port (simple_switch_grpc's flag): frames the program sends
    /// to port N go to the P4Runtime controller as PacketIn, PacketOut
    /// arrives on port N. Needs --grpc-server-addr; N must not be bound to
    /// an interface.
    #[arg(long, value_name = "N")]
    pub cpu_port: Option<u32>,
}

/// Start the P4Runtime server if `--grpc-server-addr` was given: the
/// mailbox the datapath drains between packets, or `Ok(None)`.
/// `Err(code)` after printing the error (a bad address, a port in use, or
/// pcap replay, which ends with its inputs).
fn start_server<T: netsparse_p4rt::target::Target>(
    args: &Args,
    artifact: &Artifact,
    packet_in: Option<netsparse_p4rt::packetio::PacketInQueue>,
) -> Result<Option<netsparse_p4rt::mailbox::Mailbox<T>>, ExitCode> {
    start_p4runtime(
        args.grpc_server_addr.as_deref(),
        args.use_files.is_some(),
        args.device_id,
        artifact,
        packet_in,
    )
}

/// Start a P4Runtime server on `addr` (if given) for a datapath of type
/// `T` running `artifact` (`netsparse switch` and `netsparse nic`); see
/// [`start_server`]. `replay`: the datapath runs on pcap files.
pub(crate) fn start_p4runtime<T: netsparse_p4rt::target::Target>(
    addr: Option<&str>,
    replay: bool,
    device_id: u64,
    artifact: &Artifact,
    packet_in: Option<netsparse_p4rt::packetio::PacketInQueue>,
) -> Result<Option<netsparse_p4rt::mailbox::Mailbox<T>>, ExitCode> {
    use std::net::ToSocketAddrs as _;
    let Some(addr) = addr else {
        return Ok(None);
    };
    if replay {
        eprintln!(
            "error: --grpc-server-addr needs live interfaces (a --use-files replay ends when its pcaps do)"
        );
        return Err(ExitCode::from(2));
    }
    let sock = match addr.to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(a)) => a,
        Ok(None) | Err(_) => {
            eprintln!("error: --grpc-server-addr {addr}: not an address (HOST:PORT)");
            return Err(ExitCode::from(2));
        }
    };
    if !sock.ip().is_loopback() {
        eprintln!(
            "warning: --grpc-server-addr {sock}: not a loopback address; whoever reaches it controls the device"
        );
    }
    let (poster, mailbox) = netsparse_p4rt::mailbox::mailbox::<T>();
    match netsparse_p4rt::server::spawn_with_cpu_port(
        sock,
        poster,
        artifact.clone(),
        artifact.to_json().into_bytes(),
        device_id,
        packet_in,
    ) {
        Ok(h) => {
            eprintln!(
                "P4Runtime server listening on {} (device id {device_id})",
                h.addr
            );
            Ok(Some(mailbox))
        }
        Err(e) => {
            eprintln!("error: --grpc-server-addr {sock}: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// Load `.json` artifacts or compile `.p4` sources. `Ok(Err(code))` means
/// the program was rejected (diagnostics already printed).
pub fn load_program(path: &Path) -> anyhow::Result<Result<Artifact, ExitCode>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().and_then(|e| e.to_str()) == Some("p4") {
        let mut sources = SourceMap::new();
        return Ok(
            match compile_file(&mut sources, path, &CompileOptions::default()) {
                Ok(c) => Ok(c.artifact),
                Err(diags) => {
                    let color = std::io::stderr().is_terminal();
                    for d in &diags {
                        d.emit(&sources, color);
                    }
                    eprintln!("error: {} does not compile", path.display());
                    Err(ExitCode::from(1))
                }
            },
        );
    }
    Ok(match Artifact::from_json(&text) {
        Ok(a) => Ok(a),
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            Err(ExitCode::from(1))
        }
    })
}

/// Run the switch.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::init_logging(args.log_console || args.dump_packet_data > 0, true);
    drivers::check_unique(&args.interfaces)?;
    let artifact = match load_program(&args.program)? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    if artifact.arch == Arch::NetSparseSwitch {
        return run_netsparse(&args, &artifact);
    }
    if args.config.is_some() {
        eprintln!(
            "error: --config shapes NetSparse switch programs; {} is a {:?} program",
            args.program.display(),
            artifact.arch
        );
        return Ok(ExitCode::from(2));
    }
    let cfg = SwitchConfig {
        seed: args.seed,
        max_frame: args.max_frame,
        trace: args.log_console,
        dump_bytes: args.dump_packet_data,
        ..SwitchConfig::default()
    };
    if artifact.arch == Arch::Psa {
        return run_psa(&args, &artifact, cfg);
    }
    let mut sw = match Switch::new(&artifact, cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", args.program.display());
            return Ok(ExitCode::from(1));
        }
    };
    if !apply_entries(&mut sw, args.entries.as_deref())? {
        return Ok(ExitCode::from(1));
    }
    serve(
        sw,
        &args,
        &artifact,
        netsparse_bmv2::v1model::DROP_PORT - 1,
        &|sw: &Switch| {
            let mut m = serde_json::Map::new();
            m.insert("switch".into(), serde_json::json!(sw.stats()));
            m
        },
        &print_stats,
    )
}

type Head<'a, T> = &'a dyn Fn(&T) -> serde_json::Map<String, serde_json::Value>;

/// Start the P4Runtime server (if asked) and run `sw`: wrapped with a CPU
/// port when `--cpu-port` is given (checked here: it needs the server, must
/// be at most `max_port`, and must not be bound to an interface).
fn serve<T: netsparse_p4rt::target::Target + Datapath>(
    mut sw: T,
    args: &Args,
    artifact: &Artifact,
    max_port: u32,
    head: Head<'_, T>,
    summary: &dyn Fn(&T),
) -> anyhow::Result<ExitCode> {
    use netsparse_p4rt::packetio::CpuPort;
    let Some(port) = args.cpu_port else {
        let mailbox = match start_server::<T>(args, artifact, None) {
            Ok(m) => m,
            Err(code) => return Ok(code),
        };
        return drive(&mut sw, args, mailbox.as_ref(), head, summary);
    };
    if args.grpc_server_addr.is_none() {
        eprintln!("error: --cpu-port {port}: needs --grpc-server-addr (PacketIn/PacketOut go through P4Runtime)");
        return Ok(ExitCode::from(2));
    }
    if port > max_port {
        eprintln!("error: --cpu-port {port}: the switch has ports 0..={max_port}");
        return Ok(ExitCode::from(2));
    }
    if let Some(p) = args.interfaces.iter().find(|p| p.port == port) {
        eprintln!("error: --cpu-port {port}: port {port} is bound to an interface (-i {p})");
        return Ok(ExitCode::from(2));
    }
    let (mut cp, queue) = CpuPort::new(sw, port);
    let mailbox = match start_server::<CpuPort<T>>(args, artifact, Some(queue)) {
        Ok(m) => m,
        Err(code) => return Ok(code),
    };
    drive(
        &mut cp,
        args,
        mailbox.as_ref(),
        &|c: &CpuPort<T>| {
            let mut m = head(&c.inner);
            m.insert("cpu_port".into(), serde_json::json!(c.stats()));
            m
        },
        &|c: &CpuPort<T>| {
            summary(&c.inner);
            let s = c.stats();
            eprintln!(
                "cpu port {}: {} frames to the CPU, {} PacketIn delivered ({} without a controller, {} queue full, {} stream full, {} too short); {} PacketOut injected, {} refused",
                s.port,
                s.to_cpu,
                s.packet_in,
                s.packet_in_no_controller,
                s.packet_in_queue_full,
                s.packet_in_stream_full,
                s.packet_in_too_short,
                s.packet_out,
                s.packet_out_refused
            );
        },
    )
}

/// Apply `--entries` (runtime JSON if `.json`, else a BMv2 command file) to
/// any target with a control plane: the v1model switch, the NetSparse
/// switch, the NIC's program. Prints what was loaded; `Ok(false)` (after
/// printing the error, which names the file and line) if an entry was bad.
pub(crate) fn apply_entries<T: ControlPlane + ?Sized>(
    target: &mut T,
    file: Option<&Path>,
) -> anyhow::Result<bool> {
    let Some(file) = file else { return Ok(true) };
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let name = file.display().to_string();
    let loaded = if file.extension().and_then(|e| e.to_str()) == Some("json") {
        runtime_json::apply(target, &text, &name).map(|l| {
            let mut what = format!("{} entries, {} default actions", l.entries, l.defaults);
            if l.mc_groups + l.clone_sessions > 0 {
                what += &format!(
                    ", {} multicast groups, {} clone sessions",
                    l.mc_groups, l.clone_sessions
                );
            }
            what
        })
    } else {
        commands::apply(target, &text, &name)
            .map(|a| format!("{} commands, {} entries", a.commands, a.entries))
    };
    match loaded {
        Ok(what) => {
            eprintln!("{name}: {what}");
            Ok(true)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(false)
        }
    }
}

/// The driver half of `netsparse switch`, shared by the v1model and the
/// NetSparse switch: pcap replay or live interfaces, the per-port report,
/// SIGUSR1 dumps and `--stats-json`. `head` gives the target's part of the
/// JSON document (its counters), `summary` prints its counter table.
/// With a P4Runtime `mailbox`, the live driver runs its jobs between two
/// packets whenever the server raises the mailbox's flag.
fn drive<D: Datapath>(
    sw: &mut D,
    args: &Args,
    mailbox: Option<&netsparse_p4rt::mailbox::Mailbox<D>>,
    head: &dyn Fn(&D) -> serde_json::Map<String, serde_json::Value>,
    summary: &dyn Fn(&D),
) -> anyhow::Result<ExitCode> {
    let driver_json;
    let code = if let Some(dir) = &args.use_files {
        if args.pcap.is_some() {
            eprintln!("note: --pcap is ignored with --use-files (the outputs are pcaps already)");
        }
        let rep = match pcap::run(sw, &args.interfaces, dir, &pcap::PcapOptions::default()) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                summary(sw);
                return Ok(ExitCode::from(if matches!(e, pcap::PcapError::Io { .. }) {
                    2
                } else {
                    1
                }));
            }
        };
        let mut failed = false;
        for p in &rep.ports {
            let name = p.spec.as_ref().map(ToString::to_string).unwrap_or_default();
            eprintln!("{name}: {} packets in, {} out", p.packets_in, p.packets_out);
            if let Some(e) = &p.error {
                eprintln!("error: {e}");
                failed = true;
            }
        }
        if rep.unbound_port_frames > 0 {
            eprintln!(
                "{} frames sent to ports without a binding (dropped)",
                rep.unbound_port_frames
            );
        }
        driver_json = serde_json::json!({
            "mode": "pcap",
            "unbound_port_frames": rep.unbound_port_frames,
            "ports": rep.ports.iter().map(|p| serde_json::json!({
                "port": p.spec.as_ref().map(|s| s.port),
                "name": p.spec.as_ref().map(|s| s.name.clone()),
                "packets_in": p.packets_in,
                "packets_out": p.packets_out,
                "error": p.error.as_ref().map(ToString::to_string),
            })).collect::<Vec<_>>(),
        });
        if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    } else {
        let stop = Arc::new(AtomicBool::new(false));
        live::stop_on_signals(Arc::clone(&stop))
            .context("cannot install the SIGINT/SIGTERM handlers")?;
        let dump = Arc::new(AtomicBool::new(false));
        if args.stats_json.is_some() {
            live::dump_on_sigusr1(Arc::clone(&dump))
                .context("cannot install the SIGUSR1 handler")?;
        }
        let mut opts = live::LiveOptions {
            record_dir: args.pcap.clone(),
            dump: Some(dump),
            control: mailbox.map(|m| m.wake_flag()),
            ..live::LiveOptions::default()
        };
        if mailbox.is_some() {
            // An idle switch checks for control-plane work this often.
            opts.poll = opts.poll.min(std::time::Duration::from_millis(2));
        }
        let ports = match live::open_best(&args.interfaces, &opts) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        };
        eprintln!(
            "switch running on {} (Ctrl-C to stop)",
            args.interfaces
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        // SIGUSR1 writes the counters to --stats-json while running.
        let mut seq = 0u64;
        let stats_file = args.stats_json.clone();
        let mut hook = |sw: &mut D, ports: &[live::LivePortStats], why: live::Wake| {
            if why == live::Wake::Control {
                if let Some(m) = mailbox {
                    m.drain(sw);
                }
                return;
            }
            let Some(file) = &stats_file else { return };
            seq += 1;
            let mut doc = head(&*sw);
            doc.insert("dump_seq".into(), seq.into());
            doc.insert("driver".into(), live_ports_json(ports));
            if let Err(e) = write_atomically(file, &doc.into()) {
                eprintln!("warning: {e:#}");
            }
        };
        let rep = match live::serve_ports(sw, ports, stop, &opts, &mut hook) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                summary(sw);
                return Ok(ExitCode::from(2));
            }
        };
        for p in &rep.ports {
            eprintln!(
                "{}: rx {} frames ({} truncated, {} dropped by the kernel), tx {} frames ({} send errors)",
                p.spec.as_ref().map(ToString::to_string).unwrap_or_default(),
                p.rx_frames,
                p.rx_truncated,
                p.rx_kernel_drops,
                p.tx_frames,
                p.tx_errors
            );
        }
        if rep.unbound_port_frames > 0 {
            eprintln!(
                "{} frames sent to ports without a binding (dropped)",
                rep.unbound_port_frames
            );
        }
        driver_json = serde_json::json!({
            "mode": "live",
            "driver": rep.driver,
            "seconds": rep.duration.as_secs_f64(),
            "unbound_port_frames": rep.unbound_port_frames,
            "ports": live_ports_json(&rep.ports)["ports"],
        });
        match rep.receiver_error {
            Some(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
            None => ExitCode::SUCCESS,
        }
    };
    summary(sw);
    if let Some(file) = &args.stats_json {
        let mut doc = head(sw);
        doc.insert("driver".into(), driver_json);
        let text = serde_json::to_string_pretty(&serde_json::Value::from(doc)).unwrap_or_default();
        std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(code)
}

/// The live driver's per-port counters as JSON (`{"ports": [...]}`).
fn live_ports_json(ports: &[live::LivePortStats]) -> serde_json::Value {
    serde_json::json!({
        "ports": ports.iter().map(|p| serde_json::json!({
            "port": p.spec.as_ref().map(|s| s.port),
            "name": p.spec.as_ref().map(|s| s.name.clone()),
            "rx_frames": p.rx_frames, "rx_bytes": p.rx_bytes, "rx_truncated": p.rx_truncated,
            "rx_kernel_drops": p.rx_kernel_drops,
            "tx_frames": p.tx_frames, "tx_bytes": p.tx_bytes, "tx_errors": p.tx_errors,
        })).collect::<Vec<_>>(),
    })
}

/// Write JSON to `file` through a temporary file and a rename, so a reader
/// never sees a half-written document.
fn write_atomically(file: &Path, doc: &serde_json::Value) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(doc)?;
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("cannot rename to {}", file.display()))?;
    Ok(())
}

fn print_stats(sw: &Switch) {
    eprint!("{}", sw.stats().summary());
}

// ----- the PSA switch ---------------------------------------------------------------------

/// `netsparse switch` for `PSA_Switch` programs: BMv2 psa_switch semantics,
/// the same drivers, entries (with multicast groups and clone sessions),
/// P4Runtime server and `--stats-json` as the v1model switch.
fn run_psa(args: &Args, artifact: &Artifact, cfg: SwitchConfig) -> anyhow::Result<ExitCode> {
    use netsparse_bmv2::PsaSwitch;
    let mut sw = match PsaSwitch::new(artifact, cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", args.program.display());
            return Ok(ExitCode::from(1));
        }
    };
    if !apply_entries(&mut sw, args.entries.as_deref())? {
        return Ok(ExitCode::from(1));
    }
    serve(
        sw,
        args,
        artifact,
        netsparse_bmv2::psa::PORT_LIMIT - 1,
        &|sw: &PsaSwitch| {
            let mut m = serde_json::Map::new();
            m.insert("arch".into(), "psa".into());
            m.insert("switch".into(), serde_json::json!(sw.stats()));
            m
        },
        &|sw: &PsaSwitch| eprint!("{}", sw.stats().summary()),
    )
}

// ----- the NetSparse multi-pipe switch ---------------------------------------------------

/// `netsparse switch` for `NetSparseSwitch` programs: the multi-pipe switch
/// shaped by `--config`, the same drivers, entries (plus `cache_mode` and
/// `cache_invalidate` in command files), a per-pipe summary at the end and
/// `--stats-json`.
fn run_netsparse(args: &Args, artifact: &Artifact) -> anyhow::Result<ExitCode> {
    use netsparse_bmv2::nsswitch::{NsConfig, NsSwitch};
    let mut cfg = match &args.config {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            match NsConfig::from_toml(&text) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {}: {e}", file.display());
                    return Ok(ExitCode::from(1));
                }
            }
        }
        None => NsConfig::default(),
    };
    cfg.seed = args.seed;
    cfg.max_frame = args.max_frame;
    cfg.trace = args.log_console;
    cfg.dump_bytes = args.dump_packet_data;
    if let Some(p) = args.interfaces.iter().find(|p| p.port >= cfg.ports) {
        eprintln!(
            "error: -i {p}: the switch has ports 0..{} (see --config)",
            cfg.ports
        );
        return Ok(ExitCode::from(2));
    }
    let mut sw = match NsSwitch::new(artifact, cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", args.program.display());
            return Ok(ExitCode::from(1));
        }
    };
    eprintln!("NetSparse switch: {}", sw.config().describe());
    if !apply_entries(&mut sw, args.entries.as_deref())? {
        return Ok(ExitCode::from(1));
    }
    let max_port = sw.config().ports.saturating_sub(1);
    serve(
        sw,
        args,
        artifact,
        max_port,
        &|sw: &NsSwitch| {
            let mut m = serde_json::Map::new();
            m.insert("arch".into(), "netsparse_switch".into());
            m.insert("config".into(), sw.config().describe().into());
            m.insert("switch".into(), serde_json::json!(sw.stats()));
            if let Some(c) = sw.collective_stats() {
                m.insert("collective".into(), serde_json::json!(c));
            }
            m
        },
        &|sw: &NsSwitch| eprint!("{}", sw.stats().summary()),
    )
}
