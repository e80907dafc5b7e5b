//! The NetSparse modes: the leaf-spine cluster running the compiled
//! programs in the event loop, with a host model per node, and the
//! end-of-run verification.
//!
//! # Devices
//!
//! * every node: a [`Nic`] running `netsparse_nic.p4` (without the Idx
//!   Filter for `rig`, without coalescing for `rig` and `+filter`) with
//!   [`SimMemory`] as host memory, the partition installed in its
//!   destination solver and its property slice served;
//! * every ToR: for `netsparse`, the NetSparse multi-pipe switch
//!   ([`NsSwitch`]) running `netsparse_tor.p4`, H host ports + S uplinks in
//!   [`Topology::tor_pipes`] pipes, Property Cache in K × 4-byte mode;
//!   before that step a v1model [`Switch`] running `netsparse_spine.p4`
//!   (plain forwarding by destination node);
//! * every spine: a v1model [`Switch`] running `netsparse_spine.p4`.
//!
//! Switch tables come from [`Topology::control_plane`] with the default
//! [`TableTemplates`] (`node_port` / `ipv4_port`, action `set_port`: the
//! names both switch programs use), applied as BMv2 command files. Each
//! program variant is compiled once per run ([`ProgramCache`]).
//!
//! # Host model
//!
//! Node `n`'s host posts one RIG command per `rig-batch`
//! consecutive entries of its idx list, from one core, command `j` at
//! `j × host-post-ns` (the cost of building a work request and ringing the
//! doorbell; 0 posts them all at time 0) — its nonzeros whose column another
//! node owns, in row order (local nonzeros need no communication and are
//! never posted). The NIC queues each command on the client unit with the
//! fewest commands (ties to the lowest unit), i.e. round-robin over the
//! `rig-clients` client units; each unit works through its commands in
//! order. The node finishes when its last command completes (the
//! completion's time, one PCIe latency after the last property write); the
//! mode's communication time is the last finish (the tail node). A node
//! without remote nonzeros finishes at 0 (it still serves reads).
//!
//! That is the `post-at-zero` host model. Under `triggered` the same
//! commands are registered as triggered operations ahead of time and fired
//! by the node's compute kernel as its chunks complete (see
//! [`hostmodel`]); with a compute time either way, each
//! mode also gets the kernel/gather overlap ([`HostResult`]).
//!
//! # Verification
//!
//! Every destination write is checked as it happens ([`SimMemory`]); at the
//! end every node must have gathered the right property for every distinct
//! remote idx it needed, no command may have failed or been rejected, and
//! with `spmm` one SpMM iteration over the node's rows with the gathered
//! plus local properties must equal the direct computation. Any failure is
//! recorded in the mode's [`Verification`]; [`crate::sim::report::Report::check`]
//! turns it into an error.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use netsparse_bmv2::{NsConfig, NsSwitch, Switch, SwitchConfig};
use netsparse_engine::control::commands;
use netsparse_externs::artifact::Artifact;
use netsparse_externs::cache::{CacheCapacity, CacheMode};
use netsparse_externs::time::serialization_time;
use netsparse_externs::wire::DeviceAddr;
use netsparse_externs::{Clock, Datapath, Outputs, Time};
use netsparse_nic::{
    property_word, CompletionStatus, Nic, NicConfig, PropertySlice, RigCommand, TriggerError,
    TriggeredOp,
};

use super::build::map_on_threads;
use super::config::{ConfigError, FilterBit, SimConfig};
use super::engine::{DeviceId, Engine, Outcome};
use super::hostmem::{SimMemory, DEST_BASE, IDX_BASE, PROP_BASE};
use super::hostmodel::{self, Chunk, HostModel, HostNode, HostResult};
use super::linkflows::{self, FlowTap};
use super::matrix::CsrMatrix;
use super::partition::{OwnerNeeds, Partition};
use super::report::{
    Bytes, CacheUse, MemoryAccount, MiddlePipeUse, ModeResult, NodeResult, RunStats, Verification,
};
use super::topology::{Device, Endpoint, PairCosts, Routing, TableTemplates, Topology};
use super::{Mode, Progress, SimError};
use crate::programs::{Bundled, ProgramCache};

/// The cluster's engine: its devices, and the `--link-flows` tap if any.
pub(crate) type ClusterEngine = Engine<ClusterDevice, Option<FlowTap>>;

/// Options of a NetSparse run beyond the parameters.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Also compute one SpMM iteration with the gathered properties and
    /// compare it with a direct computation (stores the gathered bytes).
    pub spmm: bool,
    /// Test hook: the owner of this idx serves a wrong property for it.
    pub corrupt_idx: Option<u64>,
    /// Stop flag (Ctrl-C).
    pub stop: Option<Arc<AtomicBool>>,
    /// Threads for the event loop: 0 the serial loop, 1 windows of
    /// simulated time on this thread, more: windows spread over threads.
    /// Results are byte-identical for every value ([`Engine::run_parallel`]).
    pub threads: usize,
    /// Link directions whose flows to count (`--link-flows`), by device
    /// name: (from, to).
    pub link_flows: Vec<(String, String)>,
    /// The partition's per-(node, owner) needs, when the caller already
    /// counted them (`owner-load` routing places its pairs by them; counted
    /// here when absent or counted for another partition or matrix).
    pub owner_needs: Option<Arc<OwnerNeeds>>,
    /// Simulated runs (a mode at a sweep point) at once on worker threads,
    /// each with its event loop on `threads` threads
    /// ([`super::points::simulate_points`]); 0 or 1: one after another on
    /// the calling thread. Results are the same for every value.
    pub jobs: usize,
}

/// Whether running `modes` under `cfg` needs the partition's
/// [`OwnerNeeds`]: a NetSparse mode with `owner-load` routing.
pub fn needs_owner_loads(cfg: &SimConfig, modes: &[Mode]) -> bool {
    cfg.routing == Routing::OwnerLoad && modes.iter().any(|m| m.ablation().is_some())
}

/// One device of the simulated cluster.
#[allow(clippy::large_enum_variant)]
pub enum ClusterDevice {
    /// A node's SmartNIC.
    Nic(Box<Nic<SimMemory>>),
    /// A NetSparse ToR.
    NetSparse(Box<NsSwitch>),
    /// A v1model switch (spines; ToRs before the `+switch` step).
    V1(Box<Switch>),
}

impl Datapath for ClusterDevice {
    #[inline]
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        match self {
            ClusterDevice::Nic(d) => d.on_packet(now, port, frame, out),
            ClusterDevice::NetSparse(d) => d.on_packet(now, port, frame, out),
            ClusterDevice::V1(d) => d.on_packet(now, port, frame, out),
        }
    }
    #[inline]
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        match self {
            ClusterDevice::Nic(d) => d.on_timer(now, out),
            ClusterDevice::NetSparse(d) => d.on_timer(now, out),
            ClusterDevice::V1(d) => d.on_timer(now, out),
        }
    }
    #[inline]
    fn next_deadline(&self) -> Option<Time> {
        match self {
            ClusterDevice::Nic(d) => d.next_deadline(),
            ClusterDevice::NetSparse(d) => d.next_deadline(),
            ClusterDevice::V1(d) => d.next_deadline(),
        }
    }
}

/// The Property Cache mode for `prop_len`-byte properties: the length
/// itself (16..=512, a power of two) or, for K < 4, the 16-byte mode with
/// one padded segment per property.
fn cache_mode(prop_len: u32) -> Option<CacheMode> {
    CacheMode::for_property(prop_len).ok()
}

/// Check the parameters a NetSparse mode needs beyond [`SimConfig::validate`].
pub fn check_mode(cfg: &SimConfig, mode: Mode) -> Result<(), ConfigError> {
    let Some(ab) = mode.ablation() else {
        return Ok(());
    };
    if ab.switch && cache_mode(cfg.prop_bytes()).is_none() {
        return Err(ConfigError::OutOfRange {
            name: "k",
            value: cfg.k.to_string(),
            range: "1, 2, 3, 4, 8, 16, 32, 64 or 128 for the netsparse mode (the ToR's \
                    Property Cache holds properties of K x 4 = 16..=512 bytes, a power of two, \
                    and shorter ones in one 16-byte segment each; the ablation steps \
                    rig..+nic-concat run with any K)"
                .into(),
        });
    }
    Ok(())
}

/// The programs NetSparse mode `mode` runs, with each one's defines: the
/// NIC program (`-D NS_NO_FILTER`, `-D NS_NO_COALESCE` for Table 8's first
/// steps), the spine program (also every ToR before `+switch`), and from
/// `+switch` on the ToR program. Empty for SU and SA.
pub fn mode_programs(mode: Mode) -> Vec<(Bundled, Vec<&'static str>)> {
    let Some(ab) = mode.ablation() else {
        return Vec::new();
    };
    let mut defines: Vec<&'static str> = Vec::new();
    if !ab.filter {
        defines.push("NS_NO_FILTER");
    }
    if !ab.coalesce {
        defines.push("NS_NO_COALESCE");
    }
    let mut v = vec![(Bundled::Nic, defines), (Bundled::Spine, Vec::new())];
    if ab.switch {
        v.push((Bundled::Tor, Vec::new()));
    }
    v
}

pub use super::user_commands::{check_commands, check_commands_on_control_plane};

/// Switch `d` of `t` as a run builds it: with `tor` (the ToR program and
/// the property length) a ToR is the NetSparse switch running it, every
/// other switch a v1model switch running `spine_art`; then its share of
/// the simulator's control plane and the user's commands for its program.
/// `cache`: the ToR's Property Cache as `cfg` sizes it (else off, for a
/// check that runs nothing).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_switch(
    t: &Topology,
    d: Device,
    cfg: &SimConfig,
    tor: Option<(&Artifact, u32)>,
    spine_art: &Artifact,
    programs: &ProgramCache,
    templates: &TableTemplates,
    cache: bool,
) -> Result<ClusterDevice, SimError> {
    let entries = t.control_plane(d, templates);
    let file = format!("{d}-commands.txt");
    let users = |which: Bundled| programs.commands(which);
    let user_err = |which: Bundled, e: String| {
        SimError::Commands(format!(
            "{d}: the {} commands after the simulator's own entries \
             (`--topology-out DIR` writes them): {e}",
            which.role()
        ))
    };
    match (d, tor) {
        (Device::Tor(r), Some((art, prop_len))) => {
            let mut ns = tor_config(t, cfg, r, prop_len)?;
            if !cache {
                ns.cache.capacity = CacheCapacity::Disabled;
            }
            let mut sw = NsSwitch::new(art, ns).map_err(|e| cp_err(format!("{d}: {e}")))?;
            commands::apply(&mut sw, &entries, &file).map_err(|e| control_plane_err(d, e))?;
            if let Some(c) = users(Bundled::Tor) {
                commands::apply(&mut sw, &c.text, &c.name())
                    .map_err(|e| user_err(Bundled::Tor, e.to_string()))?;
            }
            sw.cache_invalidate();
            Ok(ClusterDevice::NetSparse(Box::new(sw)))
        }
        _ => {
            let mut sw = Switch::new(
                spine_art,
                SwitchConfig {
                    seed: cfg.seed,
                    ..SwitchConfig::default()
                },
            )
            .map_err(|e| cp_err(format!("{d}: {e}")))?;
            commands::apply(&mut sw, &entries, &file).map_err(|e| control_plane_err(d, e))?;
            if let Some(c) = users(Bundled::Spine) {
                commands::apply(&mut sw, &c.text, &c.name())
                    .map_err(|e| user_err(Bundled::Spine, e.to_string()))?;
            }
            Ok(ClusterDevice::V1(Box::new(sw)))
        }
    }
}

/// A control-plane command the simulator sends `d` that its program
/// refuses (a user's program without the bundled one's tables, say).
fn control_plane_err(d: Device, e: impl std::fmt::Display) -> SimError {
    cp_err(format!(
        "{d}: the control plane the simulator installs (the bundled programs' tables; \
         `--topology-out DIR` writes it) does not fit its program: {e}"
    ))
}

pub(crate) fn cp_err(what: String) -> SimError {
    SimError::Cluster(what)
}

/// Build and run one NetSparse mode. `programs` is shared by the modes of
/// a run, so each program variant is compiled once.
#[allow(clippy::too_many_arguments)]
pub fn run_mode(
    m: &CsrMatrix,
    part: &Partition,
    cfg: &SimConfig,
    mode: Mode,
    programs: &mut ProgramCache,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<ModeResult, SimError> {
    let Some(ab) = mode.ablation() else {
        return Err(cp_err(format!("{mode} is not a NetSparse mode")));
    };
    check_mode(cfg, mode)?;
    let setup_start = Instant::now();
    let mut t = cfg.topology().map_err(ConfigError::from)?;
    if t.routing() == Routing::OwnerLoad {
        let needs = OwnerNeeds::reuse_or_count(opts.owner_needs.as_ref(), m, part);
        let prs = pair_prs(&needs, &t);
        t = t.with_pair_loads(pair_costs(cfg), prs);
    }
    let tap = if opts.link_flows.is_empty() {
        None
    } else {
        let links = linkflows::resolve(&t, &opts.link_flows).map_err(cp_err)?;
        Some(FlowTap::new(&t, &links, part.cols.clone()))
    };
    let prop_len = cfg.prop_bytes();
    let compiled_before = programs.compilations();
    let mut nic_art = None;
    let mut spine_art = None;
    let mut tor_art = None;
    for (which, defines) in mode_programs(mode) {
        let art = Some(programs.get(which, &defines)?);
        match which {
            Bundled::Nic => nic_art = art,
            Bundled::Spine => spine_art = art,
            _ => tor_art = art,
        }
    }
    let (Some(nic_art), Some(spine_art)) = (nic_art, spine_art) else {
        return Err(cp_err(format!("{mode}: no NIC or spine program")));
    };
    let compilations = programs.compilations() - compiled_before;

    // Devices, in Topology::device_index order.
    let nodes = t.nodes();
    let cols = u64::from(m.cols());
    let bounds: Vec<u64> = part.cols.bounds().iter().map(|&b| u64::from(b)).collect();
    // Each node's host memory and NIC, and then each switch, depend only
    // on their own inputs: they are built on the event loop's threads, in
    // device order ([`map_on_threads`]).
    let all_cols = m.shared_col_idx();
    let node_list: Vec<u32> = (0..nodes).collect();
    let nics = map_on_threads(&node_list, opts.threads, |&n| {
        // `scratch` finds the node's distinct remote idxs.
        let mut scratch: Vec<u32> = Vec::new();
        let rows = part.rows.range(n);
        let owned = part.cols.range(n);
        let mut mem = SimMemory::from_columns(
            all_cols.clone(),
            m.entry_range(rows.start, rows.end),
            owned.clone(),
            cols,
            prop_len,
            u64::from(owned.start),
            u64::from(owned.end - owned.start),
            opts.spmm,
            &mut scratch,
        );
        let idxs = mem.idx_count();
        let heap = mem.heap_bytes();
        if let Some(i) = opts.corrupt_idx {
            if u64::from(owned.start) <= i && i < u64::from(owned.end) {
                mem.corrupt(Some(i));
            }
        }
        let nic_cfg = NicConfig {
            node: n,
            rig_units: cfg.rig_units,
            client_units: cfg.client_units(),
            pending_entries: cfg.pending_entries as usize,
            filter_columns: cols.max(1),
            clock_mhz: cfg.nic_clock_mhz,
            delay_cycles: if ab.nic_concat {
                cfg.nic_delay_cycles
            } else {
                0
            },
            mtu: cfg.mtu as usize,
            link_gbps: cfg.link_gbps,
            // Half the time limit: a command whose PRs were lost (a switch
            // dropped them) fails by its watchdog and the run ends with a
            // report saying so, before the limit would stop it unreported.
            watchdog_us: (cfg.max_sim_time_ms.saturating_mul(1000) / 2).clamp(1, 3_600_000_000),
            seed: cfg.seed ^ u64::from(n),
            filter_set_at_write: cfg.filter_bit == FilterBit::Write,
            filter_memory: netsparse_nic::FilterMemoryConfig {
                enabled: cfg.filter_memory,
                ..netsparse_nic::FilterMemoryConfig::default()
            },
            trigger_ops: cfg.trigger_table as usize,
            trigger_tags: cfg.trigger_table as usize,
            ..NicConfig::default()
        };
        let mut nic =
            Nic::new(&nic_art, nic_cfg, mem).map_err(|e| cp_err(format!("node {n}'s NIC: {e}")))?;
        nic.install_partition(&bounds)
            .map_err(|e| cp_err(format!("node {n}'s destination solver: {e}")))?;
        nic.serve_properties(PropertySlice {
            base_addr: PROP_BASE,
            first_idx: u64::from(owned.start),
            count: u64::from(owned.end - owned.start),
            prop_len,
        })
        .map_err(|e| cp_err(format!("node {n}'s property slice: {e}")))?;
        if let Some(c) = programs.commands(Bundled::Nic) {
            commands::apply(nic.program_mut(), &c.text, &c.name())
                .map_err(|e| cp_err(format!("node {n}'s NIC: {e}")))?;
        }
        Ok::<_, SimError>((Box::new(nic), idxs, heap))
    });
    let mut devices: Vec<ClusterDevice> = Vec::with_capacity(t.device_count());
    let mut remote_nnz = vec![0u64; nodes as usize];
    let mut host_bytes = 0u64;
    for (n, built) in nics.into_iter().enumerate() {
        let (nic, idxs, heap) = built?;
        remote_nnz[n] = idxs;
        host_bytes += heap;
        devices.push(ClusterDevice::Nic(nic));
    }
    let templates = TableTemplates::default();
    let tor = tor_art.as_deref().map(|art| (art, prop_len));
    let switches: Vec<Device> = t
        .devices()
        .filter(|d| !matches!(d, Device::Node(_)))
        .collect();
    let built = map_on_threads(&switches, opts.threads, |&d| {
        build_switch(&t, d, cfg, tor, &spine_art, programs, &templates, true)
    });
    for sw in built {
        devices.push(sw?);
    }
    let mut engine: ClusterEngine = Engine::with_tap(cfg.engine_config(opts.stop.clone()), tap);
    for (d, dev) in t.devices().zip(devices) {
        let latency = match d {
            Device::Node(_) => Time::ZERO,
            _ => cfg.switch_latency(),
        };
        let id = engine.add_device(Box::new(dev), latency, d.to_string());
        let buffer = match d {
            Device::Node(_) => cfg.nic_buffer(),
            _ => cfg.switch_buffer(),
        };
        engine.set_buffer(id, buffer).map_err(SimError::Engine)?;
    }
    for l in t.links() {
        let a = t.device_index(l.a.device) as DeviceId;
        let b = t.device_index(l.b.device) as DeviceId;
        engine
            .connect(a, l.a.port, b, l.b.port, cfg.link())
            .map_err(SimError::Engine)?;
    }

    // The hosts post their commands (see `hostmodel`): one host core per
    // node, one command (or registration) after another, each
    // `host-post-ns` after the previous.
    let kernels = hostmodel::kernels(m, part, cfg);
    let mut posted = vec![0u64; nodes as usize];
    let mut table_full = 0u64;
    let mut ver = Verification {
        nodes,
        ..Verification::default()
    };
    for n in 0..nodes {
        let Some(ClusterDevice::Nic(nic)) = engine.device_mut(n) else {
            continue;
        };
        let count = remote_nnz[n as usize];
        let host = Host {
            batch: u64::from(cfg.rig_batch),
            post_cost: Time::from_ns(cfg.host_post_ns),
            prop_len,
        };
        let kernel = kernels.as_ref().and_then(|k| k.get(n as usize));
        match (cfg.host_model, kernel) {
            (HostModel::Triggered, Some(k)) => {
                let chunks = hostmodel::chunks(m, part, n, k, cfg.chunk_nnz);
                let r = host.register(nic, n, &chunks, count, k.time, &mut ver);
                posted[n as usize] = r.0;
                table_full += r.1;
            }
            _ => posted[n as usize] = host.post(nic, n, 0, count, Time::ZERO, 0, &mut ver),
        }
    }
    let setup_secs = setup_start.elapsed().as_secs_f64();
    let mut account = MemoryAccount {
        host_bytes,
        filter_bytes: u64::from(nodes) * cols.div_ceil(64) * 8,
        rss_after_setup: super::memory::current_rss().unwrap_or(0),
        peak_after_run: 0,
    };

    // Run.
    let total: u64 = remote_nnz.iter().sum();
    let phase = phase_name(mode);
    let start = Instant::now();
    let outcome = engine.run_parallel(opts.threads, &mut |e: &ClusterEngine| {
        let done = (0..nodes)
            .filter_map(|n| match e.device(n) {
                Some(ClusterDevice::Nic(nic)) => Some(nic.stats_ref().idxs_read),
                _ => None,
            })
            .sum();
        progress(Progress { phase, done, total })
    });
    let outcome = outcome.map_err(SimError::Engine)?;
    let wall_secs = start.elapsed().as_secs_f64();
    account.peak_after_run = super::memory::peak_rss().unwrap_or(0);
    let stopped = outcome == Outcome::Stopped;
    let now = engine.now();

    // Results.
    let mut tor_rates = Vec::new();
    let (mut hits, mut lookups) = (0u64, 0u64);
    let mut pipes: Option<MiddlePipeUse> = None;
    let mut held: Option<CacheUse> = None;
    for r in 0..t.racks() {
        let id = t.device_index(Device::Tor(r)) as DeviceId;
        match engine.device(id) {
            Some(ClusterDevice::NetSparse(sw)) => {
                let s = sw.stats();
                let c = s.total.cache;
                hits += c.hits;
                lookups += c.lookups;
                tor_rates.push(Some(ratio(c.hits, c.lookups)));
                let cap = sw.cache_capacity();
                held.get_or_insert_with(CacheUse::default).add(
                    r,
                    c.occupancy,
                    cfg.prop_bytes(),
                    cap,
                );
                let u = pipes.get_or_insert_with(MiddlePipeUse::default);
                let per = sw.config().ports_per_pipe().max(1);
                for (i, p) in s.pipes.iter().enumerate() {
                    u.add(p.busy_ps, p.max_wait_ps, now, || {
                        pipe_name(&t, r, i as u32, per)
                    });
                }
            }
            _ => tor_rates.push(None),
        }
    }
    let mut results = Vec::with_capacity(nodes as usize);
    let mut stats = RunStats {
        wall_secs,
        setup_secs,
        events: engine.stats().events,
        windows: engine.window_counts(),
        window_times: engine.window_times(),
        sim_time: now,
        compilations,
        memory: account,
        ..RunStats::default()
    };
    let mut host_nodes = Vec::new();
    let mut trig = (0u64, 0u64, 0u64);
    for n in 0..nodes {
        let rx = engine.rx_counters(n, 0).unwrap_or_default();
        let tx = engine.tx_counters(n, 0).unwrap_or_default();
        stats.frames += rx.packets;
        let Some(ClusterDevice::Nic(nic)) = engine.device_mut(n) else {
            continue;
        };
        let mut finish = Time::ZERO;
        let mut first_post: Option<Time> = None;
        let mut completed = 0u64;
        while let Some(c) = nic.poll_cq() {
            completed += 1;
            finish = finish.max(c.at);
            first_post = Some(first_post.map_or(c.stats.posted_at, |f| f.min(c.stats.posted_at)));
            if let CompletionStatus::Failed(reason) = &c.status {
                ver.failed_commands += 1;
                ver.note(format!("node {n}: RIG command {} failed: {reason}", c.id.0));
            }
        }
        let unfinished = posted[n as usize].saturating_sub(completed);
        if unfinished > 0 {
            if stopped {
                finish = now;
            } else {
                ver.unfinished_commands += unfinished;
                ver.note(format!(
                    "node {n}: {unfinished} RIG command(s) never completed"
                ));
            }
        }
        let s = nic.stats_ref();
        trig.0 += s.triggered_registered;
        trig.1 += s.triggered_fired;
        trig.2 += s.triggered_early;
        if let Some(k) = kernels.as_ref().and_then(|k| k.get(n as usize)) {
            host_nodes.push(HostNode::new(cfg.host_model, k.time, first_post, finish));
        }
        stats.idxs += s.idxs_read;
        stats.prs_issued += s.prs_issued;
        stats.responses += s.responses_received;
        let rx_b = Bytes {
            header: rx.header_bytes + rx.other_bytes,
            payload: rx.payload_bytes,
        };
        let tx_b = Bytes {
            header: tx.header_bytes + tx.other_bytes,
            payload: tx.payload_bytes,
        };
        let wire = serialization_time(rx_b.total().max(tx_b.total()), cfg.link_gbps);
        let mut r = NodeResult::new(n, finish, wire, rx_b, tx_b, cfg.link_gbps);
        r.rx_packets = Some(rx.packets);
        r.tx_packets = Some(tx.packets);
        r.remote_nnz = remote_nnz[n as usize];
        r.prs = Some(s.prs_issued);
        r.fc_rate = (r.remote_nnz > 0).then(|| 1.0 - s.prs_issued as f64 / r.remote_nnz as f64);
        r.prs_per_packet =
            (rx.response_packets > 0).then(|| rx.response_prs as f64 / rx.response_packets as f64);
        r.cache_hit_rate = tor_rates.get(t.rack_of(n) as usize).copied().flatten();
        if !stopped {
            let c = nic.memory_mut().check();
            ver.needed += c.needed;
            ver.ok += c.ok;
            ver.missing += c.missing;
            ver.wrong += c.wrong;
            ver.unexpected += c.unexpected;
            for (idx, what) in &c.first {
                ver.note(format!("node {n}: idx {idx}: {what}"));
            }
            let mut passed = c.passed() && unfinished == 0;
            if opts.spmm {
                let (rows, wrong, first) = spmm_check(m, part, n, nic.memory(), cfg.k);
                *ver.spmm_rows.get_or_insert(0) += rows;
                ver.spmm_wrong_rows += wrong;
                if let Some(row) = first {
                    passed = false;
                    ver.note(format!(
                        "node {n}: SpMM row {row} differs from the direct computation"
                    ));
                }
            }
            r.verified = Some(passed);
        }
        results.push(r);
    }
    if stats.wall_secs > 0.0 {
        stats.idxs_per_sec = stats.idxs as f64 / stats.wall_secs;
        stats.prs_per_sec = (stats.idxs + stats.prs_issued) as f64 / stats.wall_secs;
    }
    let mut mr = ModeResult::new(mode.name(), description(mode), results, stopped);
    mr.cache_hit_rate = (lookups > 0).then(|| ratio(hits, lookups));
    mr.middle_pipes = pipes;
    mr.property_caches = held;
    mr.fabric = Some(super::fabric_use::of(&engine, cfg, &t));
    if let Some(tap) = engine.tap() {
        mr.link_flows = tap.report(&t);
    }
    mr.verification = (!stopped).then_some(ver);
    mr.run = Some(stats);
    if kernels.is_some() && !stopped {
        let mut h = HostResult::new(cfg.host_model, cfg, host_nodes);
        (h.registered, h.fired, h.early, h.table_full) = (trig.0, trig.1, trig.2, table_full);
        mr.host = Some(h);
    }
    Ok(mr)
}

/// A node's host core posting or registering RIG commands over its idx
/// array.
struct Host {
    batch: u64,
    post_cost: Time,
    prop_len: u32,
}

impl Host {
    /// The command over idx positions `first..first + count` (at most one batch).
    fn command(&self, first: u64, count: u64) -> RigCommand {
        RigCommand {
            idx_addr: IDX_BASE + first * 8,
            dest_addr: DEST_BASE,
            count: self.batch.min(count),
            property_size: self.prop_len,
        }
    }

    /// When the host's `k`-th command goes out, starting at `start`.
    fn slot(&self, start: Time, k: u64) -> Time {
        start + Time::from_ps(self.post_cost.as_ps().saturating_mul(k))
    }

    /// Post commands over positions `first..first + count`, one per batch,
    /// the host's `k0`-th onwards from `start`. Returns how many were
    /// accepted (refusals noted in `ver`).
    #[allow(clippy::too_many_arguments)]
    fn post(
        &self,
        nic: &mut Nic<SimMemory>,
        n: u32,
        first: u64,
        count: u64,
        start: Time,
        k0: u64,
        ver: &mut Verification,
    ) -> u64 {
        let mut k = 0;
        let mut i = 0;
        while i < count {
            let c = self.command(first + i, count - i);
            match nic.post_rig(self.slot(start, k0 + k), c) {
                Ok(_) => k += 1,
                Err(e) => {
                    ver.rejected_commands += 1;
                    ver.note(format!(
                        "node {n}: RIG command at idx {} rejected: {e}",
                        first + i
                    ));
                }
            }
            i += self.batch;
        }
        k
    }

    /// The triggered model (see `hostmodel`): the kernel's stores of the
    /// node's tag (0), one per chunk, are queued first (they count in time
    /// order whatever the order of the calls), then each command is
    /// registered on the tag with the number of chunks its idxs need as
    /// threshold. A registration the full trigger table refuses is posted
    /// when the kernel ends (`kernel_end`). Returns (commands accepted,
    /// registrations refused for a full table).
    fn register(
        &self,
        nic: &mut Nic<SimMemory>,
        n: u32,
        chunks: &[Chunk],
        count: u64,
        kernel_end: Time,
        ver: &mut Verification,
    ) -> (u64, u64) {
        const TAG: u64 = 0;
        for c in chunks {
            nic.trigger(c.done, TAG);
        }
        let mut accepted = 0u64;
        let mut fallback: Vec<(u64, u64)> = Vec::new();
        let mut i = 0;
        while i < count {
            let c = self.command(i, count - i);
            let threshold = hostmodel::chunks_needed(chunks, i + c.count);
            let op = TriggeredOp::Rig(c);
            // Registered ahead of time: before the kernel starts, off the
            // iteration's critical path.
            match nic.post_triggered(Time::ZERO, TAG, threshold, op) {
                Ok(_) => accepted += 1,
                Err(TriggerError::TableFull { .. } | TriggerError::TagsFull { .. }) => {
                    fallback.push((i, c.count));
                }
                Err(e) => {
                    ver.rejected_commands += 1;
                    ver.note(format!(
                        "node {n}: triggered RIG command at idx {i} rejected: {e}"
                    ));
                }
            }
            i += self.batch;
        }
        let start = kernel_end;
        for (j, &(first, count)) in fallback.iter().enumerate() {
            accepted += self.post(nic, n, first, count, start, j as u64, ver);
        }
        (accepted, fallback.len() as u64)
    }
}

/// `owner-load` routing's loads: the PRs each (requester rack, owner)
/// pair is expected to carry, from the distinct remote idxs each node of
/// the rack needs from the owner (the partition's needs; what the Idx
/// Filters and the Property Cache remove is not known in advance).
fn pair_prs(needs: &OwnerNeeds, t: &Topology) -> impl Fn(u32, u32) -> u64 {
    let (nodes, racks) = (t.nodes() as usize, t.racks() as usize);
    let mut load = vec![0u64; racks * nodes];
    for node in 0..needs.nodes().min(t.nodes()) {
        let rack = t.rack_of(node) as usize;
        for owner in 0..needs.nodes().min(t.nodes()) {
            if let Some(slot) = load.get_mut(rack * nodes + owner as usize) {
                *slot += needs.get(node, owner);
            }
        }
    }
    move |rack, owner| {
        load.get(rack as usize * nodes + owner as usize)
            .copied()
            .unwrap_or(0)
    }
}

/// What one PR costs `owner-load`'s resources, from the configuration: its
/// response (property and PR header) at the link rate, and a read plus its
/// response at a middle pipe's PR rate.
fn pair_costs(cfg: &SimConfig) -> PairCosts {
    let bytes = u64::from(cfg.prop_bytes()) + netsparse_externs::wire::PR_HEADER_LEN as u64;
    PairCosts {
        link_ps: (bytes * 8_000).div_ceil(cfg.link_gbps.max(1)),
        pipe_ps: (2 * cfg.switch_pr_cycles * 1_000_000).div_ceil(cfg.switch_clock_mhz.max(1)),
    }
}

/// A NetSparse ToR's middle pipe by place: `ToR r pipe i (ports a–b:
/// nodes x–y, spines u–v, n switch links)`, naming what its ports face.
fn pipe_name(t: &Topology, r: u32, pipe: u32, per: u32) -> String {
    let first = pipe * per;
    let last = (first + per - 1).min(t.tor_ports().saturating_sub(1));
    let (mut nodes, mut spines, mut others) = (None::<(u32, u32)>, None::<(u32, u32)>, 0);
    let widen = |range: &mut Option<(u32, u32)>, x: u32| {
        *range = Some(range.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))));
    };
    for port in first..=last {
        let end = Endpoint {
            device: Device::Tor(r),
            port,
        };
        match t.peer(end).map(|e| e.device) {
            Some(Device::Node(n)) => widen(&mut nodes, n),
            Some(Device::Spine(s)) => widen(&mut spines, s),
            Some(Device::Tor(_)) => others += 1,
            None => {}
        }
    }
    let span = |what: &str, (lo, hi): (u32, u32)| {
        if lo == hi {
            format!("{what} {lo}")
        } else {
            format!("{what}s {lo}–{hi}")
        }
    };
    let mut faces: Vec<String> = Vec::new();
    faces.extend(nodes.map(|n| span("node", n)));
    faces.extend(spines.map(|s| span("spine", s)));
    if others > 0 {
        faces.push(format!(
            "{others} switch link{}",
            if others == 1 { "" } else { "s" }
        ));
    }
    if faces.is_empty() {
        faces.push("unconnected".into());
    }
    format!(
        "ToR {r} pipe {pipe} (ports {first}–{last}: {})",
        faces.join(", ")
    )
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn phase_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Rig => "rig: idxs through the RIG units",
        Mode::Filter => "+filter: idxs through the RIG units",
        Mode::Coalesce => "+coalesce: idxs through the RIG units",
        Mode::NicConcat => "+nic-concat: idxs through the RIG units",
        _ => "netsparse: idxs through the RIG units",
    }
}

/// One line on what a NetSparse mode runs.
pub fn description(mode: Mode) -> &'static str {
    match mode {
        Mode::Rig => "RIG units only: no filter, no coalescing, NIC DelayCycles 0, plain ToRs",
        Mode::Filter => "RIG + Idx Filter (no coalescing, NIC DelayCycles 0, plain ToRs)",
        Mode::Coalesce => "RIG + filter + coalescing (NIC DelayCycles 0, plain ToRs)",
        Mode::NicConcat => "RIG + filter + coalescing + NIC concatenation, plain ToRs",
        _ => "full NetSparse: + NetSparse ToRs (Property Cache, switch concatenation)",
    }
}

/// The NetSparse ToR shape of rack `r`.
fn tor_config(t: &Topology, cfg: &SimConfig, r: u32, prop_len: u32) -> Result<NsConfig, SimError> {
    let mode = cache_mode(prop_len).ok_or_else(|| {
        SimError::Config(ConfigError::OutOfRange {
            name: "k",
            value: cfg.k.to_string(),
            range: "1, 2, 3, or 4..=128 a power of two, for the netsparse mode".into(),
        })
    })?;
    let addr = DeviceAddr::Switch(r);
    let mut ns = NsConfig {
        ports: t.tor_ports(),
        pipes: t.tor_pipes(),
        clock: Clock::from_mhz(cfg.switch_clock_mhz),
        delay_cycles: cfg.switch_delay_cycles,
        pr_cycles: cfg.switch_pr_cycles,
        mtu: cfg.mtu as usize,
        switch_id: r,
        mac: addr.mac().map_err(|e| cp_err(format!("tor{r}: {e}")))?,
        ipv4: addr.ipv4().map_err(|e| cp_err(format!("tor{r}: {e}")))?,
        seed: cfg.seed,
        ..NsConfig::default()
    };
    ns.cache.capacity = if cfg.cache_unbounded {
        CacheCapacity::Unbounded
    } else if cfg.cache_bytes == 0 {
        CacheCapacity::Disabled
    } else {
        CacheCapacity::Bytes(cfg.cache_bytes)
    };
    ns.cache.ways = cfg.cache_ways;
    ns.cache.latency_cycles = cfg.cache_latency_cycles;
    ns.cache.mode = mode;
    ns.validate()
        .map_err(|e| cp_err(format!("tor{r} ({}): {e}", ns.describe())))?;
    Ok(ns)
}

/// Weight of nonzero `(r, c)` in the SpMM check (the simulator reads the
/// pattern only): small, deterministic, never zero.
fn weight(r: u32, c: u32) -> u32 {
    1 + ((r.wrapping_mul(31) ^ c) & 7)
}

/// One SpMM iteration over node `n`'s rows, `y[r] = Σ w(r, c) · x[c]` in
/// wrapping `u32` arithmetic per element, with `x[c]` the gathered property
/// (remote) or the source (local), compared with `x[c]` always the source.
/// Returns (rows, wrong rows, first wrong row).
fn spmm_check(
    m: &CsrMatrix,
    part: &Partition,
    n: u32,
    mem: &SimMemory,
    k: u32,
) -> (u64, u64, Option<u32>) {
    let view = part.node(m, n);
    let k = k as usize;
    let mut got = vec![0u32; k];
    let mut want = vec![0u32; k];
    let (mut rows, mut wrong, mut first) = (0u64, 0u64, None);
    for r in view.rows.clone() {
        got.iter_mut().for_each(|v| *v = 0);
        want.iter_mut().for_each(|v| *v = 0);
        for &c in view.row(r) {
            let w = weight(r, c);
            let gathered = if view.is_remote(c) {
                mem.gathered(c)
            } else {
                None
            };
            for j in 0..k {
                let src = property_word(u64::from(c), j as u32);
                let x = match (view.is_remote(c), gathered) {
                    (false, _) => src,
                    (true, Some(b)) => {
                        let mut w4 = [0u8; 4];
                        w4.copy_from_slice(&b[4 * j..4 * j + 4]);
                        u32::from_le_bytes(w4)
                    }
                    (true, None) => 0,
                };
                got[j] = got[j].wrapping_add(w.wrapping_mul(x));
                want[j] = want[j].wrapping_add(w.wrapping_mul(src));
            }
        }
        rows += 1;
        if got != want {
            wrong += 1;
            first.get_or_insert(r);
        }
    }
    (rows, wrong, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middle_pipes_are_named_by_what_their_ports_face() {
        // Table 5's cluster: 16 nodes and 16 uplinks per ToR, 8 pipes of 4.
        let t = Topology::new(128, 8, None).unwrap();
        assert_eq!(
            pipe_name(&t, 7, 0, 4),
            "ToR 7 pipe 0 (ports 0–3: nodes 112–115)"
        );
        assert_eq!(
            pipe_name(&t, 7, 5, 4),
            "ToR 7 pipe 5 (ports 20–23: spines 4–7)"
        );
        // 6 nodes and 2 spines per ToR in one pipe of 8 ports.
        let t = Topology::new(12, 2, Some(2)).unwrap();
        assert_eq!(
            pipe_name(&t, 1, 0, 8),
            "ToR 1 pipe 0 (ports 0–7: nodes 6–11, spines 0–1)"
        );
        // HyperX 4x4x2 of width 4: 4 hosts per switch, then fabric links.
        let spec: crate::sim::topology::TopologySpec = "hyperx".parse().unwrap();
        let t = Topology::build(spec, 128, 32, None).unwrap();
        assert_eq!(
            pipe_name(&t, 3, 0, 4),
            "ToR 3 pipe 0 (ports 0–3: nodes 12–15)"
        );
        assert!(
            pipe_name(&t, 3, 1, 4).ends_with(": 4 switch links)"),
            "{}",
            pipe_name(&t, 3, 1, 4)
        );
    }
}
