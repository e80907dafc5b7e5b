//! `topo up` and `topo down`.
//!
//! `up` validates everything first (the topology file, that every program
//! compiles and its entries apply, that no name of the run exists yet),
//! then creates, recording each resource in `state.json` *before* creating
//! it: one namespace per host and per switch, the veth links (created
//! directly inside their namespaces, MTU set on both ends), host addresses,
//! static neighbours and commands, then one `netsparse switch` process per
//! switch inside its namespace, and waits until every process reports that
//! it is running. A process that exits meanwhile makes `up` fail and undo
//! everything. `down` reads the state file and removes, in reverse order,
//! exactly what it lists (processes only if pid *and* start time match,
//! plus any process left inside the run's namespaces); it is idempotent.
//!
//! Run directory layout:
//!
//! ```text
//! DIR/state.json            what exists (see state)
//! DIR/<switch>/program.json the compiled program
//! DIR/<switch>/switch.log   the process's stdout and stderr
//! DIR/<switch>/stats.json   counters (on SIGUSR1 and at exit)
//! DIR/<switch>/pcap/        <iface>_in.pcap / <iface>_out.pcap per port
//! ```

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_engine::control::{commands, runtime_json};
use netsparse_externs::artifact::Artifact;

use super::net;
use super::plan::{fresh_run_id, Plan};
use super::spec::{fmt_mac, Topology};
use super::state::{Resource, RunState, STATE_VERSION};
use super::TopoError;

/// The start of the line a `netsparse switch` process prints once its ports
/// are open (`switch running on …` for v1model programs, `switch running`
/// for the NetSparse multi-pipe switch).
pub const SWITCH_READY: &str = "switch running";

/// Options of [`up`].
#[derive(Clone, Debug)]
pub struct UpOptions {
    /// The run directory (default: [`default_run_dir`]).
    pub run_dir: Option<PathBuf>,
    /// The run id (default: a fresh one that collides with nothing).
    pub run_id: Option<String>,
    /// The `netsparse` executable started in the namespaces.
    pub exe: PathBuf,
    /// How long a process may take to report it is running.
    pub ready_timeout: Duration,
    /// Record every switch port to `DIR/<switch>/pcap/` (default true; the
    /// forwarding benchmark turns it off).
    pub pcap: bool,
}

impl UpOptions {
    /// Defaults, starting `exe`.
    pub fn new(exe: PathBuf) -> UpOptions {
        UpOptions {
            run_dir: None,
            run_id: None,
            exe,
            ready_timeout: Duration::from_secs(60),
            pcap: true,
        }
    }
}

/// The default run directory of a topology file: `TOPO.run/` next to it
/// (`topo.json` → `topo.run`).
pub fn default_run_dir(topo_file: &Path) -> PathBuf {
    topo_file.with_extension("run")
}

/// Interpret `down`'s argument: a run directory, or a topology file whose
/// default run directory is used.
pub fn run_dir_of(arg: &Path) -> PathBuf {
    if arg.is_dir() {
        arg.to_owned()
    } else {
        default_run_dir(arg)
    }
}

fn io_err(path: &Path, e: std::io::Error) -> TopoError {
    TopoError::Io {
        path: path.to_owned(),
        detail: e.to_string(),
    }
}

/// Check that this machine can run topologies (root, `ip`).
pub fn check_environment() -> Result<(), TopoError> {
    if !net::is_root() {
        return Err(TopoError::Unsupported(
            "network namespaces need root (run as root or with CAP_SYS_ADMIN + CAP_NET_ADMIN)"
                .into(),
        ));
    }
    if !net::have_ip() {
        return Err(TopoError::Unsupported(
            "`ip` (iproute2) is not installed".into(),
        ));
    }
    Ok(())
}

/// Compile (or load) a program, writing the artifact to `out`.
pub fn prepare_program(key: &str, program: &Path, out: &Path) -> Result<Artifact, TopoError> {
    let perr = |detail: String| TopoError::Program {
        key: key.to_owned(),
        detail,
    };
    let artifact = if program.extension().and_then(|e| e.to_str()) == Some("p4") {
        let mut sources = SourceMap::new();
        match compile_file(&mut sources, program, &CompileOptions::default()) {
            Ok(c) => c.artifact,
            Err(d) => {
                return Err(perr(format!(
                    "{} does not compile:\n{}",
                    program.display(),
                    netsparse_compiler::diag::render_all(&d, &sources)
                )))
            }
        }
    } else {
        let text = std::fs::read_to_string(program).map_err(|e| io_err(program, e))?;
        Artifact::from_json(&text).map_err(|e| perr(format!("{}: {e}", program.display())))?
    };
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    }
    std::fs::write(out, artifact.to_json()).map_err(|e| io_err(out, e))?;
    Ok(artifact)
}

/// Apply an entries file to a scratch switch running `artifact`, so bad
/// entries are reported before anything is created. Programs the v1model
/// switch cannot load (other architectures) are left to the process.
fn check_entries(key: &str, artifact: &Artifact, entries: &Path) -> Result<(), TopoError> {
    let Ok(mut sw) = Switch::new(artifact, SwitchConfig::default()) else {
        return Ok(());
    };
    let text = std::fs::read_to_string(entries).map_err(|e| io_err(entries, e))?;
    let name = entries.display().to_string();
    let r = if entries.extension().and_then(|e| e.to_str()) == Some("json") {
        runtime_json::apply(&mut sw, &text, &name).map(|_| ())
    } else {
        commands::apply(&mut sw, &text, &name).map(|_| ())
    };
    r.map_err(|e| TopoError::Program {
        key: key.to_owned(),
        detail: e.to_string(),
    })
}

/// The last `n` lines of a log file.
pub fn log_tail(path: &Path, n: usize) -> String {
    let mut s = String::new();
    if let Ok(mut f) = File::open(path) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(8192)));
        let _ = f.read_to_string(&mut s);
    }
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A process being started by `up` (or `gather`).
pub struct Starting {
    /// Index of its resource in the state.
    pub resource: usize,
    /// The node.
    pub node: String,
    /// `"switch"` or `"nic"`.
    pub what: &'static str,
    /// The child.
    pub child: Child,
    /// Its log.
    pub log: PathBuf,
    /// The line that says it is running.
    pub ready: &'static str,
}

/// Record, then spawn `argv` inside `netns` with output to `log`.
#[allow(clippy::too_many_arguments)]
pub fn spawn_recorded(
    st: &mut RunState,
    dir: &Path,
    node: &str,
    what: &'static str,
    netns: &str,
    argv: &[std::ffi::OsString],
    log: &Path,
    ready: &'static str,
    grpc_addr: Option<String>,
) -> Result<Starting, TopoError> {
    let resource = st.record(
        dir,
        Resource::Process {
            node: node.to_owned(),
            what: what.to_owned(),
            netns: netns.to_owned(),
            pid: None,
            start_time: None,
            log: log.to_owned(),
            grpc_addr,
        },
    )?;
    let out = File::create(log).map_err(|e| io_err(log, e))?;
    let err = out.try_clone().map_err(|e| io_err(log, e))?;
    let (prog, args) = argv.split_first().ok_or_else(|| TopoError::Command {
        command: String::new(),
        detail: "empty command".into(),
    })?;
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err));
    let child = net::in_netns(&mut cmd, netns)?
        .spawn()
        .map_err(|e| TopoError::Command {
            command: format!("(in {netns}) {}", prog.to_string_lossy()),
            detail: e.to_string(),
        })?;
    let pid = child.id();
    if let Some(Resource::Process {
        pid: p, start_time, ..
    }) = st.resources.get_mut(resource)
    {
        *p = Some(pid);
        *start_time = net::start_time(pid);
    }
    st.save(dir)?;
    Ok(Starting {
        resource,
        node: node.to_owned(),
        what,
        child,
        log: log.to_owned(),
        ready,
    })
}

/// Wait until every process printed its ready line; fail on the first one
/// that exits or times out.
pub fn wait_ready(starting: &mut [Starting], timeout: Duration) -> Result<(), TopoError> {
    let end = Instant::now() + timeout;
    let mut ready = vec![false; starting.len()];
    loop {
        for (s, r) in starting.iter_mut().zip(ready.iter_mut()) {
            if *r {
                continue;
            }
            if let Ok(Some(status)) = s.child.try_wait() {
                return Err(TopoError::ProcessDied {
                    node: s.node.clone(),
                    what: s.what,
                    status: status.to_string(),
                    log: s.log.clone(),
                    tail: log_tail(&s.log, 15),
                });
            }
            if std::fs::read_to_string(&s.log).is_ok_and(|t| t.contains(s.ready)) {
                *r = true;
            }
        }
        if ready.iter().all(|&r| r) {
            // Still alive right after saying so (a late failure to start).
            for s in starting.iter_mut() {
                if let Ok(Some(status)) = s.child.try_wait() {
                    return Err(TopoError::ProcessDied {
                        node: s.node.clone(),
                        what: s.what,
                        status: status.to_string(),
                        log: s.log.clone(),
                        tail: log_tail(&s.log, 15),
                    });
                }
            }
            return Ok(());
        }
        if Instant::now() >= end {
            let i = ready.iter().position(|&r| !r).unwrap_or(0);
            let s = &starting[i];
            return Err(TopoError::NotReady {
                node: s.node.clone(),
                what: s.what,
                seconds: timeout.as_secs(),
                log: s.log.clone(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Bring `topo` up. Returns the run state (status `"up"`) and directory.
pub fn up(topo: &Topology, opts: &UpOptions) -> Result<(RunState, PathBuf), TopoError> {
    check_environment()?;
    let dir = opts
        .run_dir
        .clone()
        .unwrap_or_else(|| default_run_dir(&topo.file));
    std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    let dir = dir.canonicalize().map_err(|e| io_err(&dir, e))?;
    if let Some(old) = RunState::load(&dir)? {
        if !old.resources.is_empty() {
            return Err(TopoError::State {
                path: dir.clone(),
                detail: format!(
                    "holds run {} (status {}) with {} resources: `netsparse topo down {}` first",
                    old.run_id,
                    old.status,
                    old.resources.len(),
                    dir.display()
                ),
            });
        }
    }
    // Names.
    let plan = match &opts.run_id {
        Some(id) => {
            let p = Plan::new(topo, id)?;
            if let Some((what, name)) = p.first_existing() {
                return Err(TopoError::Exists {
                    what,
                    name,
                    run_id: id.clone(),
                });
            }
            p
        }
        None => {
            let mut found = None;
            for attempt in 0..32 {
                let p = Plan::new(topo, &fresh_run_id(attempt))?;
                if p.first_existing().is_none() {
                    found = Some(p);
                    break;
                }
            }
            found
                .ok_or_else(|| TopoError::Unsupported("no free run id after 32 attempts".into()))?
        }
    };
    // Programs and entries, once per distinct program file.
    let mut compiled: BTreeMap<PathBuf, (PathBuf, Artifact)> = BTreeMap::new();
    let mut artifact_of: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (name, s) in &topo.switches {
        let key = format!("switches.{name}.program");
        let node_dir = dir.join(name);
        let out = node_dir.join("program.json");
        let art = match compiled.get(&s.program) {
            Some((first, a)) => {
                std::fs::create_dir_all(&node_dir).map_err(|e| io_err(&node_dir, e))?;
                std::fs::copy(first, &out).map_err(|e| io_err(&out, e))?;
                a.clone()
            }
            None => {
                let a = prepare_program(&key, &s.program, &out)?;
                compiled.insert(s.program.clone(), (out.clone(), a.clone()));
                a
            }
        };
        if let Some(e) = &s.entries {
            check_entries(&format!("switches.{name}.entries"), &art, e)?;
        }
        artifact_of.insert(name.clone(), out);
    }
    let mut st = RunState {
        version: STATE_VERSION,
        run_id: plan.run_id.clone(),
        status: "creating".into(),
        topology: topo.file.clone(),
        plan: plan.clone(),
        resources: Vec::new(),
    };
    st.save(&dir)?;
    match create(topo, opts, &dir, &plan, &artifact_of, &mut st) {
        Ok(()) => {
            st.status = "up".into();
            st.save(&dir)?;
            Ok((st, dir))
        }
        Err(cause) => {
            let undo = teardown(&dir, &mut st);
            st.status = "failed".into();
            let _ = st.save(&dir);
            match undo {
                Ok(_) => Err(cause),
                Err(u) => Err(TopoError::UndoFailed {
                    cause: Box::new(cause),
                    undo: u,
                }),
            }
        }
    }
}

fn create(
    topo: &Topology,
    opts: &UpOptions,
    dir: &Path,
    plan: &Plan,
    artifact_of: &BTreeMap<String, PathBuf>,
    st: &mut RunState,
) -> Result<(), TopoError> {
    let mtu = topo.mtu.to_string();
    for names in plan.nodes.values() {
        st.record(
            dir,
            Resource::Netns {
                name: names.netns.clone(),
            },
        )?;
        net::ip(&["netns", "add", &names.netns])?;
        // No IPv6 chatter (router solicitations, MLD) on the links.
        let _ = net::sh_in(
            &names.netns,
            "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; \
             echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6",
            &[],
        );
        net::ip(&["-n", &names.netns, "link", "set", "lo", "up"])?;
    }
    for l in &topo.links {
        let missing = |e: &super::spec::End| TopoError::Name {
            what: e.to_string(),
            detail: "no name planned".into(),
        };
        let (ans, aif) = (
            plan.netns(&l.a.node).ok_or_else(|| missing(&l.a))?,
            plan.iface(&l.a.node, l.a.port)
                .ok_or_else(|| missing(&l.a))?,
        );
        let (bns, bif) = (
            plan.netns(&l.b.node).ok_or_else(|| missing(&l.b))?,
            plan.iface(&l.b.node, l.b.port)
                .ok_or_else(|| missing(&l.b))?,
        );
        st.record(
            dir,
            Resource::Veth {
                netns: ans.to_owned(),
                name: aif.to_owned(),
                peer_netns: bns.to_owned(),
                peer: bif.to_owned(),
            },
        )?;
        let mac_of = |e: &super::spec::End| {
            topo.hosts
                .get(&e.node)
                .filter(|_| e.port == 0)
                .and_then(|h| h.mac)
                .map(fmt_mac)
        };
        let (amac, bmac) = (mac_of(&l.a), mac_of(&l.b));
        let mut args: Vec<&str> = vec!["link", "add", "name", aif, "netns", ans, "mtu", &mtu];
        if let Some(m) = &amac {
            args.extend(["address", m.as_str()]);
        }
        args.extend([
            "type", "veth", "peer", "name", bif, "netns", bns, "mtu", &mtu,
        ]);
        if let Some(m) = &bmac {
            args.extend(["address", m.as_str()]);
        }
        net::ip(&args)?;
        net::ip(&["-n", ans, "link", "set", aif, "up"])?;
        net::ip(&["-n", bns, "link", "set", bif, "up"])?;
    }
    // Hosts: checksums in software, addresses, neighbours, commands.
    for (name, h) in &topo.hosts {
        let Some(names) = plan.nodes.get(name) else {
            continue;
        };
        for ifc in names.ifaces.values() {
            net::disable_tx_checksum(&names.netns, ifc)?;
        }
        let (Some(ns), Some(ifc)) = (plan.netns(name), plan.iface(name, 0)) else {
            continue;
        };
        if let Some((ip, len)) = h.ip {
            net::ip(&["-n", ns, "addr", "add", &format!("{ip}/{len}"), "dev", ifc])?;
        }
        if topo.static_arp {
            for (other, o) in &topo.hosts {
                if other == name {
                    continue;
                }
                if let (Some((ip, _)), Some(mac)) = (o.ip, o.mac) {
                    net::ip(&[
                        "-n",
                        ns,
                        "neigh",
                        "replace",
                        &ip.to_string(),
                        "lladdr",
                        &fmt_mac(mac),
                        "dev",
                        ifc,
                        "nud",
                        "permanent",
                    ])?;
                }
            }
        }
        for c in &h.commands {
            net::sh_in(ns, c, &[("IFACE", ifc)])?;
        }
    }
    // Switch processes.
    let mut starting = Vec::new();
    for (name, s) in &topo.switches {
        let (Some(ns), Some(names)) = (plan.netns(name), plan.nodes.get(name)) else {
            continue;
        };
        let node_dir = dir.join(name);
        std::fs::create_dir_all(&node_dir).map_err(|e| io_err(&node_dir, e))?;
        let mut argv: Vec<std::ffi::OsString> = vec![opts.exe.clone().into(), "switch".into()];
        argv.push(artifact_of.get(name).cloned().unwrap_or_default().into());
        for (port, ifc) in &names.ifaces {
            argv.push("-i".into());
            argv.push(format!("{port}@{ifc}").into());
        }
        if let Some(e) = &s.entries {
            argv.push("--entries".into());
            argv.push(e.into());
        }
        if let Some(c) = &s.config {
            argv.push("--config".into());
            argv.push(c.into());
        }
        if opts.pcap {
            let pcap = node_dir.join("pcap");
            std::fs::create_dir_all(&pcap).map_err(|e| io_err(&pcap, e))?;
            argv.push("--pcap".into());
            argv.push(pcap.into());
        }
        argv.push("--stats-json".into());
        argv.push(node_dir.join("stats.json").into());
        // Every switch serves P4Runtime in its own namespace (the same
        // address in each), unless the topology's args choose one.
        let grpc = match user_grpc_addr(&s.args) {
            Some(a) => Some(a),
            None => {
                argv.push("--grpc-server-addr".into());
                argv.push(TOPO_GRPC_ADDR.into());
                Some(TOPO_GRPC_ADDR.to_owned())
            }
        };
        argv.extend(s.args.iter().map(Into::into));
        let log = node_dir.join("switch.log");
        starting.push(spawn_recorded(
            st,
            dir,
            name,
            "switch",
            ns,
            &argv,
            &log,
            SWITCH_READY,
            grpc,
        )?);
    }
    wait_ready(&mut starting, opts.ready_timeout)?;
    Ok(())
}

/// The P4Runtime address `topo up` gives every switch, inside the
/// switch's own network namespace (so the same one in each).
pub const TOPO_GRPC_ADDR: &str = "127.0.0.1:9559";

/// The `--grpc-server-addr` a topology's switch `args` give, if any.
fn user_grpc_addr(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--grpc-server-addr" {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix("--grpc-server-addr=") {
            return Some(v.to_owned());
        }
    }
    None
}

/// What `down` removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DownReport {
    /// Processes stopped.
    pub processes: usize,
    /// Links removed.
    pub links: usize,
    /// Namespaces removed.
    pub namespaces: usize,
}

/// Remove everything `dir`'s state lists. Idempotent: a run that is down
/// already (or a directory without state) is a no-op.
pub fn down(dir: &Path) -> Result<DownReport, TopoError> {
    let Some(mut st) = RunState::load(dir)? else {
        return Ok(DownReport::default());
    };
    if !st.resources.is_empty() {
        check_environment()?;
    }
    let rep = teardown(dir, &mut st).map_err(|detail| TopoError::State {
        path: dir.to_owned(),
        detail: format!("could not remove everything: {detail}"),
    })?;
    st.status = "down".into();
    st.save(dir)?;
    Ok(rep)
}

/// Undo `st`'s resources in reverse order; on success the list is emptied
/// (and saved). Errors are collected, not fatal: everything removable is
/// removed.
fn teardown(dir: &Path, st: &mut RunState) -> Result<DownReport, String> {
    let mut rep = DownReport::default();
    let mut errors = Vec::new();
    let grace = Duration::from_secs(3);
    // 1. Processes we started (pid + start time must match).
    for r in st.resources.iter().rev() {
        if let Resource::Process {
            pid: Some(pid),
            start_time: Some(t),
            node,
            ..
        } = r
        {
            if net::same_process(*pid, *t) {
                if net::stop_process(*pid, *t, grace, None) {
                    rep.processes += 1;
                } else {
                    errors.push(format!("{node}: process {pid} did not stop"));
                }
            }
        }
    }
    // 2. Anything else running inside the run's namespaces is ours too
    //    (e.g. started between a crash's fork and its state write).
    for r in st.resources.iter().rev() {
        if let Resource::Netns { name } = r {
            for pid in net::pids_in_netns(name) {
                if let Some(t) = net::start_time(pid) {
                    if net::stop_process(pid, t, grace, None) {
                        rep.processes += 1;
                    } else {
                        errors.push(format!("{name}: process {pid} did not stop"));
                    }
                }
            }
        }
    }
    // 3. Links (a veth whose namespace is gone is gone with it).
    for r in st.resources.iter().rev() {
        if let Resource::Veth { netns, name, .. } = r {
            if net::netns_exists(netns) {
                let exists = net::ip(&["-n", netns, "link", "show", name]).is_ok();
                if exists {
                    match net::ip(&["-n", netns, "link", "del", name]) {
                        Ok(()) => rep.links += 1,
                        Err(e) => errors.push(e.to_string()),
                    }
                }
            }
        }
    }
    // 4. Namespaces.
    for r in st.resources.iter().rev() {
        if let Resource::Netns { name } = r {
            if net::netns_exists(name) {
                match net::ip(&["netns", "del", name]) {
                    Ok(()) => rep.namespaces += 1,
                    Err(e) => errors.push(e.to_string()),
                }
            }
        }
    }
    if errors.is_empty() {
        st.resources.clear();
        let _ = st.save(dir);
        Ok(rep)
    } else {
        let _ = st.save(dir);
        Err(errors.join("; "))
    }
}
