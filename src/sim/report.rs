//! Results of a run: per node and for the tail node, with the columns of
//! the paper's Table 7, rendered as an aligned text table, JSON and CSV.
//!
//! Definitions (per node; the *tail node* of a mode is the node with the
//! longest communication time, ties to the lowest id):
//!
//! * **time**: the node's communication time in that mode.
//! * **rx / tx bytes**: bytes on the node's link into / out of the node,
//!   split into header bytes (everything but property payload) and payload.
//! * **goodput**: property payload bytes received ÷ (time × line rate).
//! * **line utilisation**: all bytes received ÷ (time × line rate).
//! * **F+C rate**: fraction of the node's remote nonzeros that did not
//!   become a PR (filtered or coalesced).
//! * **PRs per packet**: response PRs received ÷ response packets received.
//! * **cache hit rate**: Property Cache hits ÷ lookups (NetSparse only).
//! * **−traffic vs SU**: SU's bytes received by the same node ÷ this mode's.
//! * **−#PR vs SA**: SA's PRs issued by the same node ÷ this mode's
//!   (NetSparse modes only).
//! * **speedup vs SU**: SU's tail time ÷ this mode's tail time.
//!
//! Columns that only the NetSparse modes can fill are `Option`s. Times are
//! picoseconds in JSON and CSV; rates are fractions (0.5 = 50%).

use super::compute::{evaluate, ComputeResult};
use super::hostmodel::HostResult;
use super::linkflows::LinkFlows;
use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use netsparse_externs::Time;

use super::config::SimConfig;

/// Bytes split into headers and property payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Bytes {
    /// Header bytes (Ethernet to concatenation header, PR headers, padding).
    pub header: u64,
    /// Property payload bytes.
    pub payload: u64,
}

impl Bytes {
    /// Header + payload.
    pub fn total(&self) -> u64 {
        self.header + self.payload
    }
    /// Add another count.
    pub fn add(&mut self, o: Bytes) {
        self.header += o.header;
        self.payload += o.payload;
    }
}

/// One node's results in one mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeResult {
    /// The node.
    pub node: u32,
    /// Communication time.
    pub time: Time,
    /// Time the node's busier link direction needs for its bytes.
    pub wire_time: Time,
    /// Software time (SAOpt), if the mode has one.
    pub software_time: Option<Time>,
    /// Bytes received.
    pub rx: Bytes,
    /// Bytes sent.
    pub tx: Bytes,
    /// Packets received.
    pub rx_packets: Option<u64>,
    /// Packets sent.
    pub tx_packets: Option<u64>,
    /// Nonzeros of the node whose property is remote.
    pub remote_nnz: u64,
    /// Read PRs the node issued.
    pub prs: Option<u64>,
    /// Goodput as a fraction of the line rate.
    pub goodput: f64,
    /// Line utilisation as a fraction of the line rate.
    pub line_util: f64,
    /// Filtered-or-coalesced fraction of the remote nonzeros.
    pub fc_rate: Option<f64>,
    /// Response PRs per response packet received.
    pub prs_per_packet: Option<f64>,
    /// Property Cache hit rate (NetSparse).
    pub cache_hit_rate: Option<f64>,
    /// Whether the gathered properties matched the source array.
    pub verified: Option<bool>,
}

impl NodeResult {
    /// A result with the given time and bytes; rates computed from them for
    /// a `gbps` line, every optional column empty.
    pub fn new(
        node: u32,
        time: Time,
        wire_time: Time,
        rx: Bytes,
        tx: Bytes,
        gbps: u64,
    ) -> NodeResult {
        let cap = capacity_bytes(time, gbps);
        NodeResult {
            node,
            time,
            wire_time,
            software_time: None,
            rx,
            tx,
            rx_packets: None,
            tx_packets: None,
            remote_nnz: 0,
            prs: None,
            goodput: ratio(rx.payload as f64, cap),
            line_util: ratio(rx.total() as f64, cap),
            fc_rate: None,
            prs_per_packet: None,
            cache_hit_rate: None,
            verified: None,
        }
    }
}

/// Bytes a `gbps` line carries in `t`.
pub fn capacity_bytes(t: Time, gbps: u64) -> f64 {
    // gbps Gb/s = gbps / 8 bytes per ns = gbps / 8000 bytes per ps.
    t.as_ps() as f64 * gbps as f64 / 8000.0
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// All nodes' results in one mode.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModeResult {
    /// The mode's name (`su`, `sa`, ...).
    pub mode: String,
    /// One line on what it models.
    pub description: String,
    /// Per node, in node order.
    pub nodes: Vec<NodeResult>,
    /// Index in `nodes` of the tail node.
    pub tail: usize,
    /// SU tail time ÷ this mode's tail time.
    pub speedup_vs_su: Option<f64>,
    /// SU bytes received by the tail node ÷ this mode's.
    pub traffic_reduction_vs_su: Option<f64>,
    /// SA PRs of the tail node ÷ this mode's (NetSparse modes).
    pub pr_reduction_vs_sa: Option<f64>,
    /// The run was stopped early: some nodes are missing or incomplete.
    pub partial: bool,
    /// Property Cache hit rate over every ToR (NetSparse with switches).
    pub cache_hit_rate: Option<f64>,
    /// The end-of-run check (NetSparse modes; `None` when stopped early).
    pub verification: Option<Verification>,
    /// The simulator's own performance (NetSparse modes).
    pub run: Option<RunStats>,
    /// End-to-end figures under the configured compute model (none without one).
    pub compute: Option<ComputeResult>,
    /// How busy the NetSparse ToRs' middle pipes were (NetSparse with switches).
    pub middle_pipes: Option<MiddlePipeUse>,
    /// What the ToRs' Property Caches held at the end of the run (NetSparse
    /// with switches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property_caches: Option<CacheUse>,
    /// Buffers and flow control over the run (simulated modes).
    pub fabric: Option<FabricUse>,
    /// Computation/communication overlap under the host model (simulated
    /// modes with a compute time: `compute` or `compute-rate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostResult>,
    /// What the links named by `--link-flows` carried (none without it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub link_flows: Vec<LinkFlows>,
}

/// Buffers and lossless flow control over a run (`fabric` in the report).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FabricUse {
    /// Each switch's buffer, bytes (`None`: unbounded, no flow control).
    pub switch_buffer: Option<u64>,
    /// Each SmartNIC's RX buffer, bytes (`None`: unbounded).
    pub nic_buffer: Option<u64>,
    /// The fullest any switch's buffer got, bytes (tracked when modelled;
    /// its input buffers and the frames of its own timers).
    pub peak_switch_bytes: u64,
    /// The fullest any one input buffer of a switch got, bytes.
    pub peak_switch_port_bytes: u64,
    /// The fullest any SmartNIC's RX buffer got, bytes.
    pub peak_nic_rx_bytes: u64,
    /// The most bytes queued at any SmartNIC's output (its TX queue).
    pub peak_nic_tx_bytes: u64,
    /// Link directions that were paused at some point.
    pub paused_links: u32,
    /// Time summed over link directions that they were paused.
    pub paused: Time,
    /// The longest any one link direction was paused in all.
    pub max_link_paused: Time,
    /// That link direction, sender to receiver (`tor2 -> spine5`): its
    /// receiver's input buffer for it was full that long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_link_paused_at: Option<String>,
    /// Frames that waited for room in a buffer.
    pub paused_frames: u64,
    /// Packets the switches dropped: their programs' drops, failed
    /// `assert`s, malformed frames, packets a middle pipe dropped. A
    /// gather that loses PRs fails by the SmartNICs' watchdogs.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub switch_drops: u64,
    /// PRs the NetSparse switches' middle pipes dropped or refused out of
    /// packets that went on (not counted in `switch_drops`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub switch_pr_drops: u64,
    /// The switch that dropped the most packets and PRs together, its
    /// counts and its main reason (`spine0: 812 packet(s) (assert)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub most_drops_at: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the NetSparse ToRs' Property Caches held at the end of a run. A
/// cache only fills during a run (it is invalidated before the kernel, never
/// during it), so this is also the most it held: with `--cache-bytes
/// unbounded` it is the memory Figure 18's last point really needs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheUse {
    /// ToRs counted.
    pub tors: u32,
    /// Properties held, over every ToR.
    pub entries: u64,
    /// Their bytes (entries × the property size; tags and indexes not
    /// counted).
    pub bytes: u64,
    /// The most any one ToR held.
    pub fullest: u64,
    /// That ToR's rack.
    pub fullest_rack: u32,
    /// Each ToR's capacity in properties (`None`: unbounded).
    pub capacity: Option<u64>,
}

impl CacheUse {
    /// Count one ToR in `rack` holding `entries` properties of `prop`
    /// bytes, out of `capacity` (`None`: unbounded).
    pub fn add(&mut self, rack: u32, entries: u64, prop: u32, capacity: Option<u64>) {
        if self.tors == 0 || entries > self.fullest {
            self.fullest = entries;
            self.fullest_rack = rack;
        }
        self.tors += 1;
        self.entries += entries;
        self.bytes += entries * u64::from(prop);
        self.capacity = capacity;
    }
}

/// The load of the NetSparse ToRs' middle pipes over a run: each pipe's
/// utilisation is the time it spent accepting PRs over the run's length.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MiddlePipeUse {
    /// Middle pipes counted (every pipe of every NetSparse ToR).
    pub pipes: u32,
    /// The busiest pipe's utilisation (0..=1).
    pub busiest: f64,
    /// Where the busiest pipe is: its switch, pipe and the ports it
    /// serves (`ToR 7 pipe 1 (ports 4–7: nodes 116–119)`).
    pub busiest_at: String,
    /// The mean utilisation.
    pub mean: f64,
    /// The longest a packet waited for its middle pipe.
    pub max_wait: Time,
}

impl MiddlePipeUse {
    /// Count one pipe that was busy `busy_ps` of a run lasting `run`, with
    /// a longest wait of `max_wait_ps`; `at` says where it is (called only
    /// when it is the busiest so far, so the name is not built per pipe).
    pub fn add(&mut self, busy_ps: u64, max_wait_ps: u64, run: Time, at: impl FnOnce() -> String) {
        let u = if run.as_ps() == 0 {
            0.0
        } else {
            busy_ps as f64 / run.as_ps() as f64
        };
        let n = f64::from(self.pipes);
        self.mean = (self.mean * n + u) / (n + 1.0);
        self.pipes += 1;
        if u > self.busiest || self.busiest_at.is_empty() {
            self.busiest = u;
            self.busiest_at = at();
        }
        self.max_wait = self.max_wait.max(Time::from_ps(max_wait_ps));
    }
}

impl ModeResult {
    /// A mode's results; finds the tail node.
    pub fn new(mode: &str, description: &str, nodes: Vec<NodeResult>, partial: bool) -> ModeResult {
        let mut tail = 0;
        for (i, n) in nodes.iter().enumerate() {
            if n.time > nodes[tail].time {
                tail = i;
            }
        }
        ModeResult {
            mode: mode.to_string(),
            description: description.to_string(),
            nodes,
            tail,
            speedup_vs_su: None,
            traffic_reduction_vs_su: None,
            pr_reduction_vs_sa: None,
            partial,
            cache_hit_rate: None,
            verification: None,
            run: None,
            compute: None,
            middle_pipes: None,
            property_caches: None,
            fabric: None,
            link_flows: Vec::new(),
            host: None,
        }
    }

    /// The tail node's results (`None` if no node was simulated).
    pub fn tail_node(&self) -> Option<&NodeResult> {
        self.nodes.get(self.tail)
    }

    /// The tail node's communication time (zero if no node).
    pub fn time(&self) -> Time {
        self.tail_node().map_or(Time::ZERO, |n| n.time)
    }

    /// Node `n`'s results.
    pub fn node(&self, n: u32) -> Option<&NodeResult> {
        self.nodes.iter().find(|r| r.node == n)
    }
}

/// A run whose gathered data did not check out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("verification failed in mode {mode}: {summary}\n{details}")]
pub struct VerifyError {
    /// The first failing mode.
    pub mode: String,
    /// Counts.
    pub summary: String,
    /// The first problems, one per line.
    pub details: String,
}

/// The matrix a run used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MatrixSummary {
    /// File name or generator spec.
    pub name: String,
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// Nonzeros (after merging duplicates).
    pub nnz: u64,
    /// Duplicate coordinates merged.
    pub duplicates: u64,
}

/// Everything a run produced.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The tool's version.
    pub version: String,
    /// The matrix.
    pub matrix: MatrixSummary,
    /// The parameters.
    pub config: SimConfig,
    /// One entry per mode, in the order run.
    pub modes: Vec<ModeResult>,
    /// The run was stopped (Ctrl-C): results are partial.
    pub stopped: bool,
    /// Users' programs that ran in place of bundled ones (none: the
    /// bundled programs ran).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramUse>,
    /// Users' control-plane commands applied after the simulator's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandsUse>,
}

/// A user's command file applied to every device of a role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CommandsUse {
    /// The devices' role: `NIC`, `ToR` or `spine`.
    pub role: String,
    /// The file, as given.
    pub file: String,
    /// 64-bit FNV-1a of its text, hex.
    pub digest: String,
}

impl std::fmt::Display for CommandsUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} commands: {} (digest {}) after the simulator's control plane",
            self.role, self.file, self.digest
        )
    }
}

/// A user's program that ran in place of a bundled one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ProgramUse {
    /// Its role: `NIC`, `ToR` or `spine`.
    pub role: String,
    /// The file, as given.
    pub file: String,
    /// The bundled program it stood in for (`programs/...`).
    pub bundled: String,
    /// 64-bit FNV-1a of its text, hex: which version of the file ran.
    pub digest: String,
}

impl std::fmt::Display for ProgramUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} program: {} (digest {}) in place of {}",
            self.role, self.file, self.digest, self.bundled
        )
    }
}

impl Report {
    /// A report without modes yet.
    pub fn new(matrix: MatrixSummary, config: SimConfig) -> Report {
        Report {
            version: env!("CARGO_PKG_VERSION").to_string(),
            matrix,
            config,
            modes: Vec::new(),
            stopped: false,
            programs: Vec::new(),
            commands: Vec::new(),
        }
    }

    /// The results of mode `name`.
    pub fn mode(&self, name: &str) -> Option<&ModeResult> {
        self.modes.iter().find(|m| m.mode == name)
    }

    /// `Err` naming the first mode whose verification failed (mismatching
    /// or missing properties, failed commands, SpMM rows).
    pub fn check(&self) -> Result<(), VerifyError> {
        for m in &self.modes {
            let Some(v) = &m.verification else { continue };
            if v.passed() {
                continue;
            }
            return Err(VerifyError {
                mode: m.mode.clone(),
                summary: format!(
                    "{} of {} needed properties right ({} missing, {} wrong, {} unexpected writes), \
                     {} failed / {} rejected / {} unfinished RIG commands, {} wrong SpMM rows",
                    v.ok,
                    v.needed,
                    v.missing,
                    v.wrong,
                    v.unexpected,
                    v.failed_commands,
                    v.rejected_commands,
                    v.unfinished_commands,
                    v.spmm_wrong_rows
                ),
                details: v
                    .first
                    .iter()
                    .map(|l| format!("  {l}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            });
        }
        Ok(())
    }

    /// Fill the comparison columns (vs SU, vs SA) of every mode.
    pub fn compare(&mut self) {
        let su = self.mode("su").cloned();
        let sa = self.mode("sa").cloned();
        for m in &mut self.modes {
            let Some(t) = m.tail_node().cloned() else {
                continue;
            };
            if let Some(su) = &su {
                let mt = m.time().as_ps();
                m.speedup_vs_su = (mt > 0).then(|| su.time().as_ps() as f64 / mt as f64);
                m.traffic_reduction_vs_su = su
                    .node(t.node)
                    .filter(|_| t.rx.total() > 0)
                    .map(|s| s.rx.total() as f64 / t.rx.total() as f64);
            }
            if let (Some(sa), Some(prs)) = (&sa, t.prs) {
                if m.mode != "sa" && prs > 0 {
                    m.pr_reduction_vs_sa = sa
                        .node(t.node)
                        .and_then(|s| s.prs)
                        .map(|s| s as f64 / prs as f64);
                }
            }
        }
    }

    /// The tail-node table (one row per mode), aligned for a terminal.
    pub fn table(&self) -> String {
        let head = [
            "mode",
            "tail",
            "time",
            "speedup",
            "rx hdr",
            "rx payload",
            "Gput",
            "Line",
            "F+C",
            "PR/pkt",
            "P$ hit",
            "-Trfc/SU",
            "-#PR/SA",
        ];
        let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
        for m in &self.modes {
            let Some(t) = m.tail_node() else {
                continue;
            };
            rows.push(vec![
                if m.partial {
                    format!("{} (partial)", m.mode)
                } else {
                    m.mode.clone()
                },
                format!("n{}", t.node),
                t.time.to_string(),
                opt(m.speedup_vs_su, |v| format!("{v:.2}x")),
                fmt_bytes(t.rx.header),
                fmt_bytes(t.rx.payload),
                pct(t.goodput),
                pct(t.line_util),
                opt(t.fc_rate, pct),
                opt(t.prs_per_packet, |v| format!("{v:.1}")),
                opt(t.cache_hit_rate, pct),
                opt(m.traffic_reduction_vs_su, |v| format!("{v:.1}x")),
                opt(m.pr_reduction_vs_sa, |v| format!("{v:.1}x")),
            ]);
        }
        let cols = head.len();
        let width: Vec<usize> = (0..cols)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut s = String::new();
        let network = match self.config.topology.kind() {
            "leaf-spine" => format!("in {} racks", self.config.racks),
            _ => format!("on {}", self.config.topology),
        };
        let _ = writeln!(
            s,
            "matrix {} ({} x {}, {} nonzeros); {} nodes {network}, K = {} ({} B properties)",
            self.matrix.name,
            self.matrix.rows,
            self.matrix.cols,
            self.matrix.nnz,
            self.config.nodes,
            self.config.k,
            self.config.prop_bytes()
        );
        for (i, r) in rows.iter().enumerate() {
            let mut line = String::new();
            for c in 0..cols {
                let pad = width[c] - r[c].chars().count();
                if c == 0 {
                    line.push_str(&r[c]);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str("  ");
                    line.push_str(&" ".repeat(pad));
                    line.push_str(&r[c]);
                }
            }
            s.push_str(line.trim_end());
            s.push('\n');
            if i == 0 {
                let total: usize = width.iter().sum::<usize>() + 2 * (cols - 1);
                s.push_str(&"-".repeat(total));
                s.push('\n');
            }
        }
        for m in &self.modes {
            if let Some(v) = &m.verification {
                let spmm = v
                    .spmm_rows
                    .map_or(String::new(), |r| format!(", SpMM {r} rows compared"));
                let _ = writeln!(
                    s,
                    "{}: {} ({} of {} remote properties verified on {} nodes{spmm})",
                    m.mode,
                    if v.passed() {
                        "verified"
                    } else {
                        "VERIFICATION FAILED"
                    },
                    v.ok,
                    v.needed,
                    v.nodes
                );
            }
            if let Some(f) = m
                .fabric
                .as_ref()
                .filter(|f| f.switch_drops + f.switch_pr_drops > 0)
            {
                let _ = writeln!(
                    s,
                    "{}: the switches dropped {} packet(s) and {} PR(s) of packets that went on; the most: {}",
                    m.mode,
                    f.switch_drops,
                    f.switch_pr_drops,
                    f.most_drops_at.as_deref().unwrap_or("?")
                );
            }
            if let Some(h) = m.cache_hit_rate {
                let _ = writeln!(
                    s,
                    "{}: Property Cache hit rate over all ToRs {}",
                    m.mode,
                    pct(h)
                );
            }
            if let Some(c) = &m.property_caches {
                let full = match c.capacity {
                    Some(cap) if cap > 0 => format!(
                        " ({} of its {} entries)",
                        pct(c.fullest as f64 / cap as f64),
                        cap
                    ),
                    _ => String::new(),
                };
                let _ = writeln!(
                    s,
                    "{}: Property Caches hold {} properties ({}) over {} ToR(s) at the end; the fullest, ToR {}, {}{}",
                    m.mode,
                    c.entries,
                    fmt_bytes(c.bytes),
                    c.tors,
                    c.fullest_rack,
                    c.fullest,
                    full
                );
            }
            if let Some(f) = &m.fabric {
                if f.paused_frames > 0 {
                    let _ = writeln!(
                        s,
                        "{}: flow control paused {} link direction(s) for {} in all ({} frames waited); fullest switch {} B, fullest switch input buffer {} B",
                        m.mode, f.paused_links, f.paused, f.paused_frames, f.peak_switch_bytes, f.peak_switch_port_bytes
                    );
                    if let Some(at) = &f.max_link_paused_at {
                        let _ = writeln!(
                            s,
                            "{}: the longest paused: {at}, {} in all",
                            m.mode, f.max_link_paused
                        );
                    }
                }
            }
            s.push_str(&super::linkflows::describe(&m.mode, &m.link_flows));
            if let Some(u) = &m.middle_pipes {
                if u.busiest > 0.0 {
                    let _ = writeln!(
                        s,
                        "{}: ToR middle pipes busy {} on average, {} the busiest ({}); longest wait {}",
                        m.mode,
                        pct(u.mean),
                        pct(u.busiest),
                        u.busiest_at,
                        u.max_wait
                    );
                }
            }
        }
        for m in &self.modes {
            if let Some(c) = &m.compute {
                let _ = writeln!(
                    s,
                    "{}: with {} computation ({:.0} GFLOP/s, {:.0} GB/s): end-to-end {} (no overlap) .. {} (full overlap); \
                     computation {} on the slowest node, communication {:.0}% of its time; \
                     {:.1}x .. {:.1}x over one node ({}), ideal {:.1}x",
                    m.mode,
                    c.model,
                    c.rates.gflops,
                    c.rates.gbps,
                    c.end_to_end,
                    c.end_to_end_overlapped,
                    c.comp_max,
                    100.0 * c.comm_fraction,
                    c.speedup_vs_single,
                    c.speedup_vs_single_overlapped,
                    c.single_node,
                    c.ideal_speedup
                );
            }
        }
        for m in &self.modes {
            if let Some(h) = &m.host {
                let _ = writeln!(
                    s,
                    "{}: host model {} ({}{}): end-to-end {} on node {} (computation {}, communication {}, overlapped {}); \
                     {:.0}% of all communication overlaps computation",
                    m.mode,
                    h.model,
                    h.compute_source,
                    if h.model == crate::sim::hostmodel::HostModel::Triggered {
                        format!(
                            ", chunks of {} nonzeros; {} triggered, {} fired, {} early, {} table full",
                            h.chunk_nnz, h.registered, h.fired, h.early, h.table_full
                        )
                    } else {
                        String::new()
                    },
                    h.end_to_end,
                    h.tail,
                    h.compute,
                    h.communication,
                    h.overlapped,
                    100.0 * h.overlap_fraction
                );
            }
        }
        if self.stopped {
            s.push_str("(stopped early: partial statistics)\n");
        }
        s
    }

    /// Fill every mode's end-to-end figures under the configured compute
    /// model (nothing without one); `work` is each node's (nonzeros, rows)
    /// and `total` the whole matrix's.
    pub fn apply_compute(&mut self, work: &[(u64, u64)], total: (u64, u64)) {
        let Some(rates) = self.config.compute_rates() else {
            return;
        };
        let (model, k) = (self.config.compute, self.config.k);
        for m in &mut self.modes {
            m.compute = Some(evaluate(m, model, rates, work, k, total));
        }
    }

    /// One line per NetSparse mode on the simulator's own speed.
    pub fn perf_lines(&self) -> String {
        let mut s = String::new();
        for m in &self.modes {
            if let Some(r) = &m.run {
                let _ = writeln!(
                    s,
                    "{}: {} idxs, {} PRs issued, {} events, {} simulated in {:.2} s wall ({:.2} M idxs/s, {:.2} M PRs/s; setup {:.2} s)",
                    m.mode,
                    r.idxs,
                    r.prs_issued,
                    r.events,
                    r.sim_time,
                    r.wall_secs,
                    r.idxs_per_sec / 1e6,
                    r.prs_per_sec / 1e6,
                    r.setup_secs
                );
            }
        }
        s
    }

    /// The whole report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Per-node CSV: one row per (mode, node), the mode-level comparisons
    /// repeated on each row, `is_tail` marking the tail node. Empty fields
    /// for columns a mode does not have.
    pub fn write_csv<W: Write>(&self, w: W) -> io::Result<()> {
        let mut w = io::BufWriter::new(w);
        writeln!(
            w,
            "mode,node,is_tail,time_ps,wire_time_ps,software_time_ps,rx_header_bytes,rx_payload_bytes,\
             tx_header_bytes,tx_payload_bytes,rx_packets,tx_packets,remote_nnz,prs,goodput,line_util,\
             fc_rate,prs_per_packet,cache_hit_rate,verified,speedup_vs_su,traffic_reduction_vs_su,\
             pr_reduction_vs_sa,partial"
        )?;
        for m in &self.modes {
            for (i, n) in m.nodes.iter().enumerate() {
                let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
                let u = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
                writeln!(
                    w,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    m.mode,
                    n.node,
                    i == m.tail,
                    n.time.as_ps(),
                    n.wire_time.as_ps(),
                    u(n.software_time.map(Time::as_ps)),
                    n.rx.header,
                    n.rx.payload,
                    n.tx.header,
                    n.tx.payload,
                    u(n.rx_packets),
                    u(n.tx_packets),
                    n.remote_nnz,
                    u(n.prs),
                    n.goodput,
                    n.line_util,
                    f(n.fc_rate),
                    f(n.prs_per_packet),
                    f(n.cache_hit_rate),
                    n.verified.map_or(String::new(), |v| v.to_string()),
                    f(m.speedup_vs_su),
                    f(m.traffic_reduction_vs_su),
                    f(m.pr_reduction_vs_sa),
                    m.partial,
                )?;
            }
        }
        w.flush()
    }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

/// A fraction as a percentage with one decimal.
pub fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// Bytes with a decimal SI suffix (B, kB, MB, GB, TB).
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// The end-of-run check of one mode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Nodes checked.
    pub nodes: u32,
    /// Distinct remote idxs needed, summed over nodes.
    pub needed: u64,
    /// Of which gathered with the right property.
    pub ok: u64,
    /// Never gathered.
    pub missing: u64,
    /// Gathered with a wrong property.
    pub wrong: u64,
    /// Writes of properties nobody asked for.
    pub unexpected: u64,
    /// RIG commands that failed (watchdog, bad address, unroutable).
    pub failed_commands: u64,
    /// RIG commands `post_rig` rejected.
    pub rejected_commands: u64,
    /// Commands that never completed although the cluster went idle.
    pub unfinished_commands: u64,
    /// SpMM rows compared (with `spmm`).
    pub spmm_rows: Option<u64>,
    /// SpMM rows that differ from the direct computation.
    pub spmm_wrong_rows: u64,
    /// The first problems, one line each.
    pub first: Vec<String>,
}

impl Verification {
    /// Whether everything checked out.
    pub fn passed(&self) -> bool {
        self.ok == self.needed
            && self.unexpected == 0
            && self.failed_commands == 0
            && self.rejected_commands == 0
            && self.unfinished_commands == 0
            && self.spmm_wrong_rows == 0
    }

    pub(crate) fn note(&mut self, line: String) {
        if self.first.len() < 20 {
            self.first.push(line);
        }
    }
}

/// How the simulator itself performed on one mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunStats {
    /// Wall-clock time of the event loop, seconds.
    pub wall_secs: f64,
    /// Wall-clock time of building the cluster (devices, tables), seconds.
    pub setup_secs: f64,
    /// Events processed.
    pub events: u64,
    /// Simulated time at the end.
    pub sim_time: Time,
    /// Idxs the RIG client units ran through host_to_net (every remote
    /// nonzero: each a PR generated, then filtered, coalesced or issued).
    pub idxs: u64,
    /// Read PRs issued by the NICs.
    pub prs_issued: u64,
    /// Response PRs the NICs received.
    pub responses: u64,
    /// Frames delivered over links.
    pub frames: u64,
    /// `idxs` per second of wall time.
    pub idxs_per_sec: f64,
    /// PR transits per second of wall time: (idxs + issued reads, each
    /// answered by one response) / wall time.
    pub prs_per_sec: f64,
    /// Program variants compiled for this mode (0 when cached).
    pub compilations: u32,
    /// Windows of the parallel event loop, and how many of them ran on
    /// more than one thread (0 and 0 for the serial loop). How a run was
    /// executed, not what it simulated: not in the JSON report, which is
    /// the same for every thread count.
    #[serde(skip)]
    pub windows: (u64, u64),
    /// The windows' wall-clock time, devices' part and serial part (not in
    /// the JSON report: how the run was executed).
    #[serde(skip)]
    pub window_times: netsparse_netsim::WindowTimes,
    /// Where the mode's memory went (machine-dependent: not in the JSON
    /// report either).
    #[serde(skip)]
    pub memory: MemoryAccount,
}

impl RunStats {
    /// Zero the figures of the JSON report that depend on the wall clock
    /// (wall and set-up time, the rates per second), so that two runs of
    /// the same simulation compare equal.
    pub fn clear_wall_clock(&mut self) {
        self.wall_secs = 0.0;
        self.setup_secs = 0.0;
        self.idxs_per_sec = 0.0;
        self.prs_per_sec = 0.0;
    }
}

/// The memory of one NetSparse mode beyond the matrix, by structure, and
/// the process's resident memory around its event loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryAccount {
    /// The hosts' needed-idx tables, bucket indexes and idx-stream marks
    /// (and gathered values with the SpMM check), bytes.
    pub host_bytes: u64,
    /// The NICs' Idx Filters, bytes.
    pub filter_bytes: u64,
    /// Resident memory once the cluster was built, bytes (0: unknown).
    pub rss_after_setup: u64,
    /// Peak resident memory of the process at the end of the run, bytes
    /// (0: unknown).
    pub peak_after_run: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_middle_pipe_is_named_once_per_new_maximum() {
        let mut u = MiddlePipeUse::default();
        let run = Time::from_ns(1000);
        let mut named = Vec::new();
        for (i, busy_ns) in [100u64, 700, 300, 700, 50].into_iter().enumerate() {
            u.add(busy_ns * 1000, 0, run, || {
                named.push(i);
                format!("pipe {i}")
            });
        }
        assert_eq!(u.pipes, 5);
        assert_eq!(u.busiest, 0.7);
        // The first pipe at the maximum keeps the name; ties do not rename.
        assert_eq!(u.busiest_at, "pipe 1");
        assert_eq!(named, [0, 1]);
        assert!((u.mean - 0.37).abs() < 1e-12, "{}", u.mean);
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_bytes(999), "999 B");
        assert_eq!(fmt_bytes(1_234_567), "1.23 MB");
        assert_eq!(pct(0.1234), "12.3%");
        // 400 Gb/s for 1 us = 50,000 bytes.
        assert_eq!(capacity_bytes(Time::from_us(1), 400), 50_000.0);
    }

    #[test]
    fn tail_and_comparisons() {
        let b = |p| Bytes {
            header: 0,
            payload: p,
        };
        let su = ModeResult::new(
            "su",
            "",
            vec![
                NodeResult::new(0, Time(100), Time(100), b(1000), b(0), 400),
                NodeResult::new(1, Time(300), Time(300), b(3000), b(0), 400),
            ],
            false,
        );
        assert_eq!(su.tail, 1);
        let mut x = NodeResult::new(1, Time(50), Time(50), b(100), b(0), 400);
        x.prs = Some(10);
        let mut y = NodeResult::new(0, Time(60), Time(60), b(200), b(0), 400);
        y.prs = Some(20);
        let other = ModeResult::new("other", "", vec![y, x], false);
        let mut r = Report::new(
            MatrixSummary {
                name: "t".into(),
                rows: 1,
                cols: 1,
                nnz: 1,
                duplicates: 0,
            },
            SimConfig::default(),
        );
        r.modes = vec![su, other];
        r.compare();
        let o = r.mode("other").unwrap();
        assert_eq!(o.tail_node().unwrap().node, 0);
        assert_eq!(o.speedup_vs_su, Some(5.0));
        // SU node 0 received 1000 bytes; the mode's tail (node 0) 200.
        assert_eq!(o.traffic_reduction_vs_su, Some(5.0));
        assert_eq!(o.pr_reduction_vs_sa, None);
        let t = r.table();
        assert!(t.contains("5.00x"), "{t}");
        let mut csv = Vec::new();
        r.write_csv(&mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert_eq!(csv.lines().count(), 5);
        assert!(
            csv.lines().nth(2).unwrap().starts_with("su,1,true,300,"),
            "{csv}"
        );
    }
}
