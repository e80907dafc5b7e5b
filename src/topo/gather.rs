//! `topo gather`: the RIG gather of one SpMM iteration over a live topology.
//!
//! The matrix is partitioned over the hosts with the simulator's 1D
//! partition ([`Partition::equal`]): host node `n` owns rows and properties
//! `bounds[n]..bounds[n + 1]`. A host's node id is `hosts.NAME.nic.node`, or
//! else the one its IPv4 address encodes (node n ↔ 10.0.0.0 + n + 1, the
//! wire module's convention, which is also how the switches route).
//!
//! Each host's NIC endpoint is a [`Nic`] running the NIC program, driven by
//! the fast live driver ([`netsparse_bmv2::drivers::tpacket`]) on the
//! host's interface *inside the host's namespace*: one thread per host in
//! this process (rather than one `netsparse nic` process per host) so that
//! every endpoint is serving before any starts gathering — a read sent to a
//! NIC that is not listening yet would be lost — and so the run stops as
//! soon as the last gather completes. On the wire nothing differs from NIC
//! processes. The endpoint's host memory holds its property slice (values
//! from [`netsparse_nic::property_word`]), its idx list (the column idxs of
//! its rows' nonzeros, in row order) and a destination array; the idxs are
//! posted as RIG commands of `batch` idxs.
//!
//! When every command completed (or the timeout passed), each destination
//! array is checked against `property_word` for every distinct remote idx,
//! and the switches are asked for their counters: SIGUSR1 makes a
//! `netsparse switch` write `stats.json` in the run directory (its
//! `dump_seq` increases); the difference between the dumps before and after
//! the gather is reported, including every counter whose name ends in
//! `hits`/`misses` (the Property Cache of a NetSparse ToR).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use netsparse_bmv2::drivers::live::LiveOptions;
use netsparse_bmv2::drivers::tpacket::{self, RingOptions, RingPort};
use netsparse_bmv2::drivers::PortSpec;
use netsparse_externs::artifact::Artifact;
use netsparse_externs::wire::DeviceAddr;
use netsparse_nic::workload::{batch_commands, gather_memory, DEST_BASE};
use netsparse_nic::{
    is_property, Completion, CompletionStatus, Datapath, DenseMemory, Nic, NicConfig, NicStats,
    Outputs, RigCommand, Time,
};

use crate::sim::matrix::CsrMatrix;
use crate::sim::partition::Partition;

use super::net;
use super::spec::Topology;
use super::state::{Resource, RunState};
use super::TopoError;

/// The RIG watchdog of a live gather (1 s): veth hops through software
/// switches on a shared machine take tens to hundreds of microseconds each,
/// far more than Table 5's hardware latencies the NIC's default assumes.
pub const LIVE_WATCHDOG_US: u64 = 1_000_000;

/// Options of [`gather`].
#[derive(Clone, Debug)]
pub struct GatherOptions {
    /// Property size in four-byte values (properties are 4·K bytes).
    pub k: u32,
    /// Idxs per RIG command.
    pub batch: u64,
    /// The NIC program (default: the hosts' `nic.program`).
    pub nic_program: Option<PathBuf>,
    /// NIC parameters (node and filter columns are set per host).
    pub nic_config: NicConfig,
    /// Give up after this long.
    pub timeout: Duration,
    /// Invalidate the switches' Property Caches over P4Runtime before the
    /// gather (the control plane's job between two kernels); `false`
    /// gathers on warm caches.
    pub invalidate_caches: bool,
}

impl Default for GatherOptions {
    fn default() -> Self {
        GatherOptions {
            k: 16,
            batch: 8192,
            nic_program: None,
            nic_config: NicConfig {
                watchdog_us: LIVE_WATCHDOG_US,
                ..NicConfig::default()
            },
            timeout: Duration::from_secs(60),
            invalidate_caches: true,
        }
    }
}

/// One host's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct NodeGather {
    /// The host.
    pub host: String,
    /// Its node id.
    pub node: u32,
    /// Idxs it gathered (its nonzeros).
    pub idxs: u64,
    /// Distinct remote idxs.
    pub remote: u64,
    /// Of which gathered correctly.
    pub verified: u64,
    /// RIG commands posted / completed / failed.
    pub commands: (u64, u64, u64),
    /// Failure reasons of failed or rejected commands.
    pub failures: Vec<String>,
    /// Gather time (first post to last completion), nanoseconds.
    pub time_ns: u64,
    /// The NIC's counters.
    pub nic: NicStats,
    /// Frames the live driver received and sent.
    pub frames: (u64, u64),
    /// Frames the kernel dropped (receive ring full).
    pub kernel_drops: u64,
}

/// One switch's counters over the gather (after − before).
#[derive(Clone, Debug, Serialize)]
pub struct SwitchGather {
    /// The switch.
    pub name: String,
    /// Frames received and sent by its ports.
    pub frames: (u64, u64),
    /// Sum of its counters named `*hits` (Property Cache hits).
    pub cache_hits: u64,
    /// Sum of its counters named `*misses`.
    pub cache_misses: u64,
    /// Every numeric counter that changed, flattened (`a.b.c`).
    pub counters: std::collections::BTreeMap<String, i64>,
}

/// The outcome of a gather.
#[derive(Clone, Debug, Serialize)]
pub struct GatherReport {
    /// The run id.
    pub run_id: String,
    /// Matrix rows, columns, nonzeros.
    pub matrix: (u32, u32, u64),
    /// Property length in bytes.
    pub prop_len: u32,
    /// Per host, by node id.
    pub nodes: Vec<NodeGather>,
    /// Per switch, by name.
    pub switches: Vec<SwitchGather>,
    /// Property Caches invalidated over P4Runtime before the gather, per
    /// switch that has any.
    pub caches_invalidated: Vec<(String, usize)>,
    /// Wall-clock time from the start signal to the last completion.
    pub seconds: f64,
    /// Every command completed and every property is right.
    pub ok: bool,
}

impl GatherReport {
    /// Distinct remote idxs over all nodes.
    pub fn remote(&self) -> u64 {
        self.nodes.iter().map(|n| n.remote).sum()
    }
    /// Of which verified.
    pub fn verified(&self) -> u64 {
        self.nodes.iter().map(|n| n.verified).sum()
    }
    /// Response PRs per response packet received by the NICs.
    pub fn prs_per_packet_in(&self) -> f64 {
        let (p, k) = self.nodes.iter().fold((0u64, 0u64), |(p, k), n| {
            (p + n.nic.rx_prs, k + n.nic.rx_packets)
        });
        p as f64 / k.max(1) as f64
    }
    /// PRs per packet the NICs sent.
    pub fn prs_per_packet_out(&self) -> f64 {
        let (p, k) = self.nodes.iter().fold((0u64, 0u64), |(p, k), n| {
            (p + n.nic.tx_prs, k + n.nic.tx_packets)
        });
        p as f64 / k.max(1) as f64
    }
    /// Property Cache hits over all switches.
    pub fn cache_hits(&self) -> u64 {
        self.switches.iter().map(|s| s.cache_hits).sum()
    }

    /// The report as text, in the simulator's terms.
    pub fn render(&self) -> String {
        let mut s = format!(
            "gather over run {}: matrix {}x{} with {} nonzeros, {} nodes, {}-byte properties, {:.3} s\n",
            self.run_id,
            self.matrix.0,
            self.matrix.1,
            self.matrix.2,
            self.nodes.len(),
            self.prop_len,
            self.seconds
        );
        s.push_str(
            "node host      idxs  remote  issued filtered coalesced  pkts out  PRs/pkt out  pkts in  PRs/pkt in  bytes in (hdr/payload)   time(us)  verified\n",
        );
        for n in &self.nodes {
            let ppo = n.nic.tx_prs as f64 / n.nic.tx_packets.max(1) as f64;
            let ppi = n.nic.rx_prs as f64 / n.nic.rx_packets.max(1) as f64;
            s.push_str(&format!(
                "{:>4} {:<8} {:>6} {:>7} {:>7} {:>8} {:>9} {:>9} {:>12.2} {:>8} {:>11.2} {:>10}/{:<12} {:>9.1}  {}/{}\n",
                n.node,
                n.host,
                n.idxs,
                n.remote,
                n.nic.prs_issued,
                n.nic.prs_filtered,
                n.nic.prs_coalesced,
                n.nic.tx_packets,
                ppo,
                n.nic.rx_packets,
                ppi,
                n.nic.rx_bytes - n.nic.rx_payload_bytes.min(n.nic.rx_bytes),
                n.nic.rx_payload_bytes,
                n.time_ns as f64 / 1e3,
                n.verified,
                n.remote,
            ));
            for f in &n.failures {
                s.push_str(&format!("     error: {f}\n"));
            }
        }
        if !self.caches_invalidated.is_empty() {
            let list: Vec<String> = self
                .caches_invalidated
                .iter()
                .map(|(n, c)| format!("{n} ({c})"))
                .collect();
            s.push_str(&format!(
                "Property Caches invalidated over P4Runtime before the gather: {}\n",
                list.join(", ")
            ));
        }
        s.push_str("switch        frames in  frames out  cache hits  cache misses\n");
        for w in &self.switches {
            s.push_str(&format!(
                "{:<12} {:>10} {:>11} {:>11} {:>13}\n",
                w.name, w.frames.0, w.frames.1, w.cache_hits, w.cache_misses
            ));
        }
        s.push_str(&format!(
            "total: {} of {} remote properties verified; PRs per packet: {:.2} out of the NICs, {:.2} into them; {} Property Cache hits\n",
            self.verified(),
            self.remote(),
            self.prs_per_packet_out(),
            self.prs_per_packet_in(),
            self.cache_hits()
        ));
        s
    }
}

/// A NIC endpoint that starts its gather when `go` is raised.
struct Endpoint {
    nic: Nic<DenseMemory>,
    commands: Vec<RigCommand>,
    go: Arc<AtomicBool>,
    started: Option<Time>,
    finished: Option<Time>,
    completions: Vec<Completion>,
    rejected: Vec<String>,
    done: Arc<AtomicUsize>,
}

impl Endpoint {
    fn before(&mut self, now: Time) {
        if self.started.is_none() && self.go.load(Ordering::Relaxed) {
            self.started = Some(now);
            for c in std::mem::take(&mut self.commands) {
                if let Err(e) = self.nic.post_rig(now, c) {
                    self.rejected.push(e.to_string());
                }
            }
            self.commands.clear();
            self.check_done(now);
        }
    }

    fn posted(&self) -> usize {
        self.completions.len() + self.rejected.len()
    }

    fn check_done(&mut self, now: Time) {
        while let Some(c) = self.nic.poll_cq() {
            self.completions.push(c);
        }
        if self.finished.is_none()
            && self.started.is_some()
            && self.nic.stats_ref().commands_posted as usize + self.rejected.len() == self.posted()
        {
            self.finished = Some(now);
            self.done.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Datapath for Endpoint {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.before(now);
        self.nic.on_packet(now, port, frame, out);
        self.check_done(now);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.before(now);
        self.nic.on_timer(now, out);
        self.check_done(now);
    }

    fn next_deadline(&self) -> Option<Time> {
        if self.started.is_none() && self.go.load(Ordering::Relaxed) {
            return Some(Time::ZERO);
        }
        self.nic.next_deadline()
    }
}

/// What one host thread needs.
struct HostJob {
    host: String,
    node: u32,
    netns: PathBuf,
    iface: String,
    idxs: Vec<u64>,
}

/// The node id of every host with a NIC, in node order.
fn host_nodes(topo: &Topology, st: &RunState) -> Result<Vec<(u32, String)>, TopoError> {
    let mut v = Vec::new();
    for (name, h) in &topo.hosts {
        let node = match (&h.nic, h.ip) {
            (Some(n), _) => n.node,
            (None, Some((ip, _))) => match DeviceAddr::from_ipv4(ip.octets()) {
                Some(DeviceAddr::Node(n)) => n,
                _ => {
                    return Err(TopoError::Schema {
                        file: topo.file.display().to_string(),
                        key: format!("hosts.{name}.ip"),
                        detail: format!(
                            "{ip} is not a NetSparse node address (10.0.0.0 + n + 1); give hosts.{name}.nic.node"
                        ),
                    })
                }
            },
            (None, None) => {
                return Err(TopoError::Schema {
                    file: topo.file.display().to_string(),
                    key: format!("hosts.{name}"),
                    detail: "no nic.node and no ip: cannot tell its node id".into(),
                })
            }
        };
        if !st.plan.nodes.contains_key(name) {
            return Err(TopoError::State {
                path: st.topology.clone(),
                detail: format!("host {name} is not part of run {}", st.run_id),
            });
        }
        v.push((node, name.clone()));
    }
    v.sort();
    for (i, (n, name)) in v.iter().enumerate() {
        if *n as usize != i {
            return Err(TopoError::Schema {
                file: topo.file.display().to_string(),
                key: format!("hosts.{name}"),
                detail: format!(
                    "node ids must be 0..{} without gaps (got {n} as the {i}th)",
                    v.len()
                ),
            });
        }
    }
    Ok(v)
}

/// A switch process whose counters the gather reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SwitchEndpoint {
    /// Its name in the report.
    pub name: String,
    /// The `netsparse switch` process.
    pub pid: u32,
    /// Its start time (`/proc/PID/stat` field 22), checked before each
    /// signal; `None` takes the current one.
    #[serde(default)]
    pub start_time: Option<u64>,
    /// Its `--stats-json` file.
    pub stats: PathBuf,
    /// Its P4Runtime address inside its network namespace (that of the
    /// process, `/proc/PID/ns/net`): the gather invalidates its Property
    /// Caches through it first.
    #[serde(default)]
    pub grpc_addr: Option<String>,
}

/// A host whose NIC endpoint the gather runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct HostEndpoint {
    /// Its name in the report.
    pub name: String,
    /// Its NetSparse node id (0..N).
    pub node: u32,
    /// A network namespace handle: `/var/run/netns/NAME`, or
    /// `/proc/PID/ns/net` of any process in it (e.g. a Mininet host's shell).
    pub netns: PathBuf,
    /// The host's interface (NIC port 0).
    pub iface: String,
}

/// Everything a gather runs on: from a `topo up` run ([`Endpoints::from_run`])
/// or from an attach file (`topo gather --attach FILE`, e.g. written by the
/// Mininet example), whose JSON has these fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Endpoints {
    /// A label for the report.
    pub run_id: String,
    /// The hosts.
    pub hosts: Vec<HostEndpoint>,
    /// The switches.
    #[serde(default)]
    pub switches: Vec<SwitchEndpoint>,
    /// The NIC program (`.p4` or artifact).
    pub nic_program: Option<PathBuf>,
    /// Where the compiled NIC program is written.
    pub work_dir: PathBuf,
}

impl Endpoints {
    /// The endpoints of run directory `dir` of `topo`.
    pub fn from_run(topo: &Topology, dir: &Path) -> Result<Endpoints, TopoError> {
        let st = RunState::load(dir)?.ok_or_else(|| TopoError::State {
            path: dir.to_owned(),
            detail: "no run here: `netsparse topo up` first".into(),
        })?;
        if st.status != "up" {
            return Err(TopoError::State {
                path: dir.to_owned(),
                detail: format!("run {} is {}, not up", st.run_id, st.status),
            });
        }
        let hosts = host_nodes(topo, &st)?
            .into_iter()
            .map(|(node, host)| {
                let names = &st.plan.nodes[&host];
                HostEndpoint {
                    name: host.clone(),
                    node,
                    netns: net::netns_path(&names.netns),
                    iface: names.ifaces.get(&0).cloned().unwrap_or_default(),
                }
            })
            .collect();
        let mut switches = Vec::new();
        for name in topo.switches.keys() {
            let (pid, t, grpc) = st
                .resources
                .iter()
                .find_map(|r| match r {
                    Resource::Process {
                        node: n,
                        what,
                        pid: Some(p),
                        start_time: Some(t),
                        grpc_addr,
                        ..
                    } if n == name && what == "switch" => Some((*p, *t, grpc_addr.clone())),
                    _ => None,
                })
                .ok_or_else(|| TopoError::State {
                    path: dir.to_owned(),
                    detail: format!("no switch process for {name}"),
                })?;
            switches.push(SwitchEndpoint {
                name: name.clone(),
                pid,
                start_time: Some(t),
                stats: dir.join(name).join("stats.json"),
                grpc_addr: grpc,
            });
        }
        Ok(Endpoints {
            run_id: st.run_id,
            hosts,
            switches,
            nic_program: topo
                .hosts
                .values()
                .find_map(|h| h.nic.as_ref())
                .map(|n| n.program.clone()),
            work_dir: dir.to_owned(),
        })
    }

    /// Read an attach file.
    pub fn read(path: &Path) -> Result<Endpoints, TopoError> {
        let text = std::fs::read_to_string(path).map_err(|e| TopoError::Io {
            path: path.to_owned(),
            detail: e.to_string(),
        })?;
        let mut e: Endpoints = serde_json::from_str(&text).map_err(|e| TopoError::Json {
            file: path.display().to_string(),
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        })?;
        e.hosts.sort_by_key(|h| h.node);
        for (i, h) in e.hosts.iter().enumerate() {
            if h.node as usize != i {
                return Err(TopoError::Schema {
                    file: path.display().to_string(),
                    key: format!("hosts[{i}].node"),
                    detail: format!("node ids must be 0..{} without gaps", e.hosts.len()),
                });
            }
        }
        Ok(e)
    }
}

/// Ask switch `sw` for its counters (SIGUSR1) and read them.
fn switch_stats(sw: &SwitchEndpoint) -> Result<Value, TopoError> {
    let file = &sw.stats;
    let seq_of = |v: &Value| v["dump_seq"].as_u64().unwrap_or(0);
    let before = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .map(|v| seq_of(&v))
        .unwrap_or(0);
    let t = sw.start_time.or_else(|| net::start_time(sw.pid));
    if !t.is_some_and(|t| net::signal(sw.pid, t, netsparse_bmv2::drivers::Sig::Usr1)) {
        return Err(TopoError::State {
            path: file.clone(),
            detail: format!(
                "the switch process of {} (pid {}) is not running",
                sw.name, sw.pid
            ),
        });
    }
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        {
            if seq_of(&v) > before {
                return Ok(v);
            }
        }
        if Instant::now() > end {
            return Err(TopoError::State {
                path: file.clone(),
                detail: format!(
                    "{} did not write its counters within 10 s of SIGUSR1",
                    sw.name
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Flatten numeric leaves of `v` into `out` as `a.b.c` (arrays by index).
fn flatten(prefix: &str, v: &Value, out: &mut std::collections::BTreeMap<String, i64>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), x, out);
            }
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.insert(prefix.to_owned(), i);
            }
        }
        _ => {}
    }
}

fn switch_delta(name: &str, before: &Value, after: &Value) -> SwitchGather {
    let (mut a, mut b) = Default::default();
    flatten("", before, &mut a);
    flatten("", after, &mut b);
    let mut counters = std::collections::BTreeMap::new();
    for (k, v) in &b {
        if k == "dump_seq" {
            continue;
        }
        let d = v - a.get(k).copied().unwrap_or(0);
        if d != 0 {
            counters.insert(k.clone(), d);
        }
    }
    let leaf = |k: &str| k.rsplit('.').next().unwrap_or(k).to_owned();
    let sum_if = |f: &dyn Fn(&str) -> bool| -> u64 {
        counters
            .iter()
            .filter(|(k, _)| f(&leaf(k)))
            .map(|(_, v)| (*v).max(0) as u64)
            .sum()
    };
    let driver = |what: &str| -> u64 {
        counters
            .iter()
            .filter(|(k, _)| k.starts_with("driver.") && leaf(k) == what)
            .map(|(_, v)| (*v).max(0) as u64)
            .sum()
    };
    SwitchGather {
        name: name.to_owned(),
        frames: (driver("rx_frames"), driver("tx_frames")),
        cache_hits: sum_if(&|k| k.ends_with("hits") && !k.starts_with("driver")),
        cache_misses: sum_if(&|k| k.ends_with("misses")),
        counters,
    }
}

/// Run the gather of `m` over the topology that run directory `dir` holds.
pub fn gather(
    topo: &Topology,
    dir: &Path,
    m: &CsrMatrix,
    opts: &GatherOptions,
) -> Result<GatherReport, TopoError> {
    gather_on(&Endpoints::from_run(topo, dir)?, m, opts)
}

/// Run the gather of `m` on `eps`.
pub fn gather_on(
    eps: &Endpoints,
    m: &CsrMatrix,
    opts: &GatherOptions,
) -> Result<GatherReport, TopoError> {
    if opts.k == 0 {
        return Err(TopoError::Schema {
            file: "(options)".into(),
            key: "k".into(),
            detail: "properties need at least one four-byte value".into(),
        });
    }
    let prop_len = opts.k.checked_mul(4).ok_or_else(|| TopoError::Schema {
        file: "(options)".into(),
        key: "k".into(),
        detail: "too large".into(),
    })?;
    if eps.hosts.is_empty() {
        return Err(TopoError::Schema {
            file: "(endpoints)".into(),
            key: "hosts".into(),
            detail: "no hosts to gather on".into(),
        });
    }
    let part = Partition::equal(m, eps.hosts.len() as u32).map_err(|e| TopoError::Schema {
        file: "(matrix)".into(),
        key: "partition".into(),
        detail: e.to_string(),
    })?;
    let bounds: Vec<u64> = part.cols.bounds().iter().map(|&b| u64::from(b)).collect();
    // The NIC program, compiled once.
    let program = opts
        .nic_program
        .clone()
        .or_else(|| eps.nic_program.clone())
        .ok_or_else(|| TopoError::Schema {
            file: "(endpoints)".into(),
            key: "hosts.*.nic.program".into(),
            detail: "no NIC program: give --nic-program or hosts.NAME.nic".into(),
        })?;
    let artifact: Artifact = super::run::prepare_program(
        "nic program",
        &program,
        &eps.work_dir.join("nic-program.json"),
    )?;
    let jobs: Vec<HostJob> = eps
        .hosts
        .iter()
        .map(|h| HostJob {
            host: h.name.clone(),
            node: h.node,
            netns: h.netns.clone(),
            iface: h.iface.clone(),
            idxs: part
                .node(m, h.node)
                .cols
                .iter()
                .map(|&c| u64::from(c))
                .collect(),
        })
        .collect();
    let caches_invalidated = if opts.invalidate_caches {
        invalidate_caches(&eps.switches)?
    } else {
        Vec::new()
    };
    // Switch counters before.
    let mut before = Vec::new();
    for s in &eps.switches {
        before.push(switch_stats(s)?);
    }
    let go = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
    let mut handles = Vec::new();
    for job in jobs {
        let (go, stop, done, ready_tx, artifact, bounds) = (
            Arc::clone(&go),
            Arc::clone(&stop),
            Arc::clone(&done),
            ready_tx.clone(),
            artifact.clone(),
            bounds.clone(),
        );
        let mut cfg = opts.nic_config.clone();
        cfg.node = job.node;
        cfg.filter_columns = bounds.last().copied().unwrap_or(0);
        let batch = opts.batch;
        let h = std::thread::Builder::new()
            .name(format!("nic-{}", job.host))
            .spawn(move || -> Result<NodeGather, String> {
                let setup = || -> Result<(Endpoint, RingPort), String> {
                    let (mem, slice) =
                        gather_memory(&bounds, job.node as usize, prop_len, &job.idxs)
                            .map_err(|e| e.to_string())?;
                    let mut nic = Nic::new(&artifact, cfg, mem).map_err(|e| e.to_string())?;
                    nic.install_partition(&bounds).map_err(|e| e.to_string())?;
                    nic.serve_properties(slice).map_err(|e| e.to_string())?;
                    let port = RingPort::open_in_netns(
                        &job.iface,
                        &job.netns,
                        &RingOptions {
                            ring_bytes: 2 << 20,
                        },
                    )
                    .map_err(|e| format!("{}: {e}", job.iface))?;
                    Ok((
                        Endpoint {
                            nic,
                            commands: batch_commands(job.idxs.len() as u64, batch, prop_len),
                            go,
                            started: None,
                            finished: None,
                            completions: Vec::new(),
                            rejected: Vec::new(),
                            done,
                        },
                        port,
                    ))
                };
                let (mut ep, port) = match setup() {
                    Ok(x) => {
                        let _ = ready_tx.send(Ok(()));
                        x
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("{}: {e}", job.host)));
                        return Err(e);
                    }
                };
                let spec = PortSpec {
                    port: 0,
                    name: job.iface.clone(),
                };
                let lopts = LiveOptions {
                    poll: Duration::from_millis(2),
                    ..LiveOptions::default()
                };
                let rep =
                    tpacket::run(&mut ep, vec![(spec, port)], stop, &lopts, &mut |_, _, _| {})
                        .map_err(|e| e.to_string())?;
                let own = bounds[job.node as usize]..bounds[job.node as usize + 1];
                let mut remote: Vec<u64> = job
                    .idxs
                    .iter()
                    .copied()
                    .filter(|i| !own.contains(i))
                    .collect();
                remote.sort_unstable();
                remote.dedup();
                let p = prop_len as usize;
                let dest = ep.nic.memory().data(DEST_BASE).unwrap_or(&[]);
                let verified = remote
                    .iter()
                    .filter(|&&i| {
                        dest.get(i as usize * p..(i as usize + 1) * p)
                            .is_some_and(|s| is_property(i, s))
                    })
                    .count() as u64;
                let mut failures = ep.rejected.clone();
                let mut failed = 0;
                for c in &ep.completions {
                    if let CompletionStatus::Failed(r) = &c.status {
                        failed += 1;
                        failures.push(format!("command {} failed: {r}", c.id.0));
                    }
                }
                if ep.finished.is_none() {
                    failures.push(format!(
                        "{} of {} commands did not complete",
                        ep.nic.stats_ref().commands_posted as usize - ep.completions.len(),
                        ep.nic.stats_ref().commands_posted
                    ));
                }
                let port_stats = rep.ports.first().cloned().unwrap_or_default();
                Ok(NodeGather {
                    host: job.host,
                    node: job.node,
                    idxs: job.idxs.len() as u64,
                    remote: remote.len() as u64,
                    verified,
                    commands: (
                        ep.nic.stats_ref().commands_posted,
                        ep.completions.len() as u64 - failed,
                        failed + ep.rejected.len() as u64,
                    ),
                    failures,
                    time_ns: match (ep.started, ep.finished) {
                        (Some(a), Some(b)) => b.saturating_sub(a).as_ns(),
                        _ => 0,
                    },
                    nic: ep.nic.stats(),
                    frames: (port_stats.rx_frames, port_stats.tx_frames),
                    kernel_drops: port_stats.rx_kernel_drops,
                })
            })
            .map_err(|e| TopoError::Io {
                path: eps.work_dir.clone(),
                detail: format!("cannot start a NIC thread: {e}"),
            })?;
        handles.push(h);
    }
    drop(ready_tx);
    let mut setup_error = None;
    for _ in 0..handles.len() {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                setup_error = Some(e);
                break;
            }
            Err(_) => {
                setup_error = Some("a NIC thread ended during setup".into());
                break;
            }
        }
    }
    let t0 = Instant::now();
    if setup_error.is_none() {
        go.store(true, Ordering::SeqCst);
        let end = t0 + opts.timeout;
        while done.load(Ordering::SeqCst) < handles.len() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    let mut nodes = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok(n)) => nodes.push(n),
            Ok(Err(e)) => setup_error = setup_error.or(Some(e)),
            Err(_) => setup_error = setup_error.or(Some("a NIC thread panicked".into())),
        }
    }
    if let Some(e) = setup_error {
        return Err(TopoError::Command {
            command: "topo gather".into(),
            detail: e,
        });
    }
    nodes.sort_by_key(|n| n.node);
    let mut sw = Vec::new();
    for (s, b) in eps.switches.iter().zip(&before) {
        let after = switch_stats(s)?;
        sw.push(switch_delta(&s.name, b, &after));
    }
    let ok = nodes
        .iter()
        .all(|n| n.failures.is_empty() && n.verified == n.remote);
    Ok(GatherReport {
        run_id: eps.run_id.clone(),
        matrix: (m.rows(), m.cols(), m.nnz()),
        prop_len,
        nodes,
        switches: sw,
        caches_invalidated,
        seconds,
        ok,
    })
}

/// Invalidate every Property Cache of every switch that serves P4Runtime,
/// connecting from inside the switch process's network namespace.
/// Switches whose program has no cache are skipped; the count per switch
/// that had some.
fn invalidate_caches(switches: &[SwitchEndpoint]) -> Result<Vec<(String, usize)>, TopoError> {
    let mut out = Vec::new();
    for sw in switches {
        let Some(addr) = sw.grpc_addr.clone() else {
            continue;
        };
        let netns = PathBuf::from(format!("/proc/{}/ns/net", sw.pid));
        let fail = |detail: String| TopoError::Command {
            command: format!("P4Runtime {addr} of {} (pid {})", sw.name, sw.pid),
            detail: format!("cannot invalidate the Property Caches: {detail}"),
        };
        let target = addr.clone();
        let n = netsparse_bmv2::drivers::in_netns(&netns, move || {
            let addr = target;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async {
                let wait = Duration::from_secs(10);
                let mut c = netsparse_p4rt::client::Client::connect(&addr, 1, wait).await?;
                let ids = c.property_caches();
                if !ids.is_empty() {
                    c.invalidate_caches(&ids, 1).await?;
                }
                Ok::<usize, netsparse_p4rt::client::ClientError>(ids.len())
            })
            .map_err(std::io::Error::other)
        })
        .map_err(|e| fail(e.to_string()))?;
        if n > 0 {
            out.push((sw.name.clone(), n));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_delta_sums_hits() {
        let a = serde_json::json!({"dump_seq": 1, "switch": {"pipes": [{"cache_hits": 2, "cache_misses": 1}]},
                                   "driver": {"ports": [{"rx_frames": 5, "tx_frames": 4}]}});
        let b = serde_json::json!({"dump_seq": 2, "switch": {"pipes": [{"cache_hits": 7, "cache_misses": 1}], "hit_rate": 0.5},
                                   "driver": {"ports": [{"rx_frames": 9, "tx_frames": 10}]}});
        let d = switch_delta("tor0", &a, &b);
        assert_eq!(d.cache_hits, 5);
        assert_eq!(d.cache_misses, 0);
        assert_eq!(d.frames, (4, 6));
        assert!(!d.counters.contains_key("dump_seq"));
    }
}
