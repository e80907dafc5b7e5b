//! The behavioural SmartNIC: RIG client and server units around the
//! compiled NIC program, on the clocked-core design of the switch.
//!
//! # Timing model
//!
//! * **Commands.** `post_rig` validates a command against the registered
//!   host memory and queues it on a client unit: the one with the fewest
//!   commands queued or active (ties: lowest unit id). The unit sees it one
//!   PCIe latency later (the doorbell), starts it when it has finished
//!   generating PRs for the commands before it, and arms its watchdog.
//! * **Idx Buffer.** A client unit fetches idxs by DMA in Idx-Buffer-sized
//!   chunks (default 4 KiB = 512 idxs), double-buffered: the next chunk is
//!   requested as soon as at most one chunk is buffered. A chunk arrives
//!   after a DMA read (two PCIe latencies plus the transfer).
//! * **Client units** process one idx per NIC cycle, in batches of
//!   `batch_idxs` per timer event: the batch starting at `t` runs
//!   host_to_net for each of its idxs, stamps every read PR with `t`, and the
//!   unit's next batch starts `batch × cycle` later. So PR times are exact to
//!   within one batch (64 cycles ≈ 29 ns at 2.2 GHz by default). A unit
//!   stalls — never drops — when PendingInsert finds its Pending PR Table
//!   full (until a response frees an entry) or when the TX buffer is full
//!   (until the link drains it); stall cycles are counted.
//! * **Concatenation.** Issued PRs join the NIC's Concatenator (one CQ per
//!   type and destination, DelayCycles 500 at 2.2 GHz by default; 0 sends
//!   every PR in its own packet).
//! * **TX.** A flushed CQ becomes one frame in the TX buffer; the NIC paces
//!   the link at its line rate and emits each frame (on port 0) when its
//!   transmission starts.
//! * **RX.** A received NetSparse packet is validated by the
//!   Deconcatenator, then net_to_host runs once for the packet and once per
//!   PR. Reads are handed to server units round-robin (the Q Control); a
//!   served read's response joins the Concatenator after the DMA read of the
//!   property, each server unit issuing one read per cycle. Responses retire
//!   their pending entry and are written to host memory (a DMA write:
//!   one PCIe latency plus the transfer).
//! * **Triggered operations.** `post_triggered` registers a RIG command or
//!   a put on a tag with a threshold; `trigger` stores a tag. Both reach
//!   the NIC one PCIe latency after the host issues them; triggers in
//!   flight are timed events. A fired RIG command is queued like a posted
//!   one but visible at once (no doorbell). See `triggered.rs`.
//! * **Completion.** A command completes when all its idxs went through
//!   host_to_net and every PR it issued was answered and written; the
//!   completion reaches the host's completion queue one PCIe latency after
//!   its last write. A command whose watchdog expires first fails, and so
//!   does a command with a write outside its destination buffer or with
//!   idxs no node owns; a failed command's destination buffer is reported
//!   invalid (§7.1).

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};

use netsparse_engine::{ControlPlane, ControlPlaneError, EntryHandle, LoadError, PacketState};
use netsparse_externs::artifact::{Artifact, KeyMatch};
use netsparse_externs::concat::{ConcatConfig, Concatenator};
use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
use netsparse_externs::framer::Framer;
use netsparse_externs::rig::IdxFilter;
use netsparse_externs::time::Clock;
use netsparse_externs::{Datapath, Outputs, Time};
use thiserror::Error;

use crate::config::{ConfigError, NicConfig};
use crate::core::{Core, PrCtx, PropertySlice, UnitPending};
use crate::filtermem::FilterMemory;
use crate::memory::{DenseMemory, HostMemory, RegionKind};
use crate::program::NicProgram;

mod client;
mod commands;
mod rx;
mod server;
#[cfg(test)]
mod test_support;
mod triggered;
mod tx;

use crate::stats::{CommandStats, NicStats};
use crate::verbs::{CommandId, Completion};
use client::ClientUnit;
use server::ServerUnit;
use triggered::TriggerTable;
use tx::Tx;

/// `rig.outcome` values of `netsparse.p4` (`NS_ISSUED` is 0).
const NS_FILTERED: u64 = 1;
const NS_COALESCED: u64 = 2;
const NS_LOCAL: u64 = 3;
const NS_UNROUTABLE: u64 = 4;

/// Why a NIC could not be built or configured.
#[derive(Debug, Error)]
pub enum NicError {
    /// A bad configuration value.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The program cannot run on the NIC.
    #[error("cannot load the NIC program: {0}")]
    Load(#[from] LoadError),
    /// A unit could not be built (Concatenator, Idx Filter, Pending PR Table).
    #[error("cannot build the NIC's {unit}: {detail}")]
    Unit {
        /// Which unit.
        unit: &'static str,
        /// Why.
        detail: String,
    },
    /// A control-plane operation failed (e.g. installing the partition).
    #[error("control plane: {0}")]
    ControlPlane(#[from] ControlPlaneError),
    /// A partition that is not `N + 1` non-decreasing bounds.
    #[error("bad partition: {0}")]
    Partition(String),
    /// The property slice is not a registered property region.
    #[error("property slice {base:#x}+{len} bytes is not inside a registered property region")]
    Slice {
        /// Its address.
        base: u64,
        /// Its length.
        len: u64,
    },
}

/// Which kind of event comes next (in priority order at equal times).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Trigger,
    Unit(usize),
    Server(usize),
    Concat,
    Tx,
    Watchdog,
    Completion,
}

/// The behavioural NetSparse SmartNIC (one network port, 0).
pub struct Nic<M: HostMemory = DenseMemory> {
    cfg: NicConfig,
    clock: Clock,
    prog: NicProgram,
    st: PacketState,
    core: Core<M>,
    units: Vec<ClientUnit>,
    /// `unit_next(u)` of every client unit, refreshed whenever unit `u`
    /// changes, so picking the next event does not rescan every unit.
    unit_at: Vec<Option<Time>>,
    /// The least (time, unit) of `unit_at`, kept as units change, so the
    /// event scan does not walk every unit.
    unit_min: Option<(Time, usize)>,
    /// The earliest internal event as of the end of the last `run_events`
    /// (`None` once anything else may have changed the state).
    next_cached: Option<Option<(Time, Event)>>,
    servers: Vec<ServerUnit>,
    /// The ready time of each server unit's first queued response, kept as
    /// the queues change (`refresh_server`).
    server_at: Vec<Option<Time>>,
    /// The least (time, server unit) of `server_at`, kept as it changes, so
    /// the event scan reads one value rather than every server unit's.
    server_min: Option<(Time, usize)>,
    next_server: usize,
    concat: Concatenator,
    deconcat: Deconcatenator,
    tx: Tx,
    frame: Vec<u8>,
    idx_bytes: Vec<u8>,
    scratch: Vec<(u32, u32, u64)>,
    /// Frames flushed Concatenation Queues (this node's addresses and PSN).
    framer: Framer,
    watchdogs: BTreeSet<(Time, u32)>,
    completions: BTreeMap<(Time, u32), Completion>,
    cq: VecDeque<Completion>,
    /// Triggered operations (GPU-TN): counters, waiting operations,
    /// triggers on their way.
    trig: TriggerTable,
    now: Time,
}

impl<M: HostMemory> std::fmt::Debug for Nic<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nic")
            .field("node", &self.cfg.node)
            .field("commands", &self.core.cmds.len())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<M: HostMemory> Nic<M> {
    /// A NIC running `artifact` (a compiled `NetSparseNic` program) with
    /// `cfg`, reaching `memory` by DMA.
    pub fn new(artifact: &Artifact, cfg: NicConfig, memory: M) -> Result<Nic<M>, NicError> {
        cfg.validate()?;
        let prog = NicProgram::load(artifact, cfg.seed)?;
        let st = prog.program.new_state();
        let clock = cfg.clock();
        let concat = Concatenator::new(ConcatConfig {
            mtu: cfg.mtu,
            delay: clock.cycles(cfg.delay_cycles),
            max_queues: ConcatConfig::DEFAULT_MAX_QUEUES,
            virtual_cqs: None,
        })
        .map_err(|e| NicError::Unit {
            unit: "Concatenator",
            detail: e.to_string(),
        })?;
        let deconcat = Deconcatenator::new(DeconcatConfig {
            max_prop_len: cfg.max_prop_len(),
            verify_ipv4_checksum: true,
        });
        let filter = IdxFilter::new(cfg.filter_columns).map_err(|e| NicError::Unit {
            unit: "Idx Filter",
            detail: e.to_string(),
        })?;
        let clients = cfg.client_units as usize;
        let mut pending = Vec::with_capacity(clients);
        for _ in 0..clients {
            pending.push(
                UnitPending::new(cfg.pending_entries).map_err(|e| NicError::Unit {
                    unit: "Pending PR Table",
                    detail: e.to_string(),
                })?,
            );
        }
        let units = (0..clients)
            .map(|_| ClientUnit {
                queue: VecDeque::new(),
                active: None,
                requested: 0,
                dma: None,
                buf: VecDeque::with_capacity(2 * cfg.chunk_idxs()),
                t: Time::ZERO,
                stall: None,
            })
            .collect();
        let servers: Vec<ServerUnit> = (0..cfg.server_units())
            .map(|_| ServerUnit::default())
            .collect();
        let server_at = vec![None; servers.len()];
        Ok(Nic {
            clock,
            prog,
            st,
            core: Core {
                cfg: cfg.clone(),
                mem: memory,
                filter,
                pending,
                cmds: Vec::new(),
                stats: NicStats::default(),
                slice: None,
                ctx: PrCtx::default(),
                payload: Vec::with_capacity(2048),
                woken: Vec::new(),
                to_fail: Vec::new(),
                touched: Vec::new(),
                filter_pending: BinaryHeap::new(),
                fmem: FilterMemory::new(
                    cfg.filter_memory,
                    clients,
                    cfg.filter_columns,
                    cfg.clock_mhz,
                ),
            },
            unit_at: vec![None; clients],
            unit_min: None,
            server_min: None,
            next_cached: None,
            units,
            servers,
            server_at,
            next_server: 0,
            concat,
            deconcat,
            tx: Tx::default(),
            frame: Vec::with_capacity(2048),
            idx_bytes: Vec::with_capacity(cfg.idx_buffer_bytes),
            scratch: Vec::new(),
            framer: Framer::new(cfg.addr()),
            watchdogs: BTreeSet::new(),
            completions: BTreeMap::new(),
            cq: VecDeque::new(),
            trig: TriggerTable::default(),
            now: Time::ZERO,
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &NicConfig {
        &self.cfg
    }

    /// The host memory.
    pub fn memory(&self) -> &M {
        &self.core.mem
    }

    /// The host memory, mutably (e.g. to register buffers).
    pub fn memory_mut(&mut self) -> &mut M {
        &mut self.core.mem
    }

    /// The loaded program (control plane: tables, entries).
    pub fn program(&self) -> &netsparse_engine::program::Program {
        &self.prog.program
    }

    /// The loaded program, mutably (add table entries).
    pub fn program_mut(&mut self) -> &mut netsparse_engine::program::Program {
        &mut self.prog.program
    }

    /// Whether host_to_net's and net_to_host's per-PR parts run without
    /// their copy-in/copy-out (a plain sub-control apply; see
    /// [`netsparse_engine::prpath`]).
    pub fn per_pr_copies_elided(&self) -> [bool; 2] {
        [self.prog.h2n.copies_elided(), self.prog.n2h.copies_elided()]
    }

    /// Log every statement of every packet (tracing at info level).
    pub fn set_trace(&mut self, on: bool) {
        self.prog.program.set_trace(on);
    }

    /// Install the 1D partition in the destination solver: `bounds` has
    /// `N + 1` non-decreasing values from 0; node `n` owns idxs
    /// `bounds[n]..bounds[n + 1]` (table `dest_solver`, one range entry per
    /// non-empty node, action `set_dst(n)`). Earlier entries are removed.
    pub fn install_partition(&mut self, bounds: &[u64]) -> Result<Vec<EntryHandle>, NicError> {
        if bounds.len() < 2 || bounds[0] != 0 || bounds.windows(2).any(|w| w[1] < w[0]) {
            return Err(NicError::Partition(format!(
                "{} bounds: need N + 1 non-decreasing values starting at 0",
                bounds.len()
            )));
        }
        let p = &mut self.prog.program;
        p.clear_table("dest_solver")?;
        let mut handles = Vec::new();
        for (n, w) in bounds.windows(2).enumerate() {
            if w[1] == w[0] {
                continue;
            }
            let h = p.add_entry(
                "dest_solver",
                &[KeyMatch::Range {
                    lo: u128::from(w[0]),
                    hi: u128::from(w[1] - 1),
                }],
                "set_dst",
                &[n as u128],
                Some(1),
            )?;
            handles.push(h);
        }
        Ok(handles)
    }

    /// Serve reads for `slice` of the property array (a registered
    /// [`RegionKind::Properties`] region).
    pub fn serve_properties(&mut self, slice: PropertySlice) -> Result<(), NicError> {
        let len = slice.count.saturating_mul(u64::from(slice.prop_len));
        let ok = len == 0
            || self
                .core
                .mem
                .region(slice.base_addr, len)
                .is_some_and(|r| r.kind == RegionKind::Properties);
        if !ok {
            return Err(NicError::Slice {
                base: slice.base_addr,
                len,
            });
        }
        self.core.slice = Some(slice);
        Ok(())
    }

    /// Clear the Idx Filter (before a new kernel: properties change).
    pub fn clear_filter(&mut self) {
        self.core.filter.clear_all();
        self.core.filter_pending.clear();
        self.core.stats.filter_clears += 1;
    }

    /// Counters.
    pub fn stats(&self) -> NicStats {
        let mut s = self.core.stats.clone();
        s.filter_memory = self.core.fmem.stats;
        let d = self.deconcat.stats();
        s.rx_malformed = d.malformed();
        s.rx_foreign = d.foreign;
        s
    }

    /// The live counters kept by the RIG units (without the Deconcatenator's
    /// malformed/foreign counts, which [`Nic::stats`] adds).
    pub fn stats_ref(&self) -> &NicStats {
        &self.core.stats
    }

    /// The counters of command `id` so far.
    pub fn command_stats(&self, id: CommandId) -> Option<&CommandStats> {
        self.core.cmds.get(id.0 as usize).map(|c| &c.stats)
    }

    /// Whether nothing is in progress: no command unfinished, no frame or
    /// response waiting, no completion not yet polled-visible.
    pub fn is_idle(&self) -> bool {
        self.core.cmds.iter().all(|c| c.done) && self.next_event().is_none()
    }

    /// Take the next completion the host can see.
    pub fn poll_cq(&mut self) -> Option<Completion> {
        self.cq.pop_front()
    }

    /// Recompute unit `u`'s entry of `unit_at` after it changed.
    fn refresh_unit(&mut self, u: usize) {
        let t = self.unit_next(u);
        let Some(slot) = self.unit_at.get_mut(u) else {
            return;
        };
        if *slot == t {
            return;
        }
        *slot = t;
        self.unit_min = least_after_change(self.unit_min, &self.unit_at, u, t);
    }

    /// Recompute server unit `s`'s entry of `server_at` after its queue
    /// changed.
    fn refresh_server(&mut self, s: usize) {
        let t = self.servers[s].queue.front().map(|r| r.ready);
        if self.server_at[s] == t {
            // A response queued behind the first: nothing moved.
            return;
        }
        self.server_at[s] = t;
        self.server_min = least_after_change(self.server_min, &self.server_at, s, t);
    }

    fn unit_next(&self, u: usize) -> Option<Time> {
        let unit = &self.units[u];
        let mut next = unit.dma.map(|d| d.0);
        if unit.stall.is_none() {
            let t = match unit.active {
                Some(_) if !unit.buf.is_empty() => Some(unit.t),
                Some(_) => None,
                None => unit
                    .queue
                    .front()
                    .map(|&c| unit.t.max(self.core.cmds[c as usize].visible_at)),
            };
            next = min_opt(next, t);
        }
        next
    }

    /// The earliest internal event and its kind.
    fn next_event_kind(&self) -> Option<(Time, Event)> {
        let mut best: Option<(Time, Event)> = None;
        let mut consider = |t: Option<Time>, e: Event| {
            if let Some(t) = t {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, e));
                }
            }
        };
        consider(self.trig.next_arrival(), Event::Trigger);
        debug_assert!((0..self.units.len()).all(|u| self.unit_at[u] == self.unit_next(u)));
        debug_assert_eq!(self.unit_min, least(&self.unit_at));
        if let Some((t, u)) = self.unit_min {
            consider(Some(t), Event::Unit(u));
        }
        debug_assert!(self.servers.iter().zip(&self.server_at).all(|(su, &t)| su
            .queue
            .front()
            .map(|r| r.ready)
            == t));
        debug_assert_eq!(self.server_min, least(&self.server_at));
        if let Some((t, s)) = self.server_min {
            consider(Some(t), Event::Server(s));
        }
        consider(self.concat.next_deadline(), Event::Concat);
        consider(self.tx.frames.front().map(|f| f.start), Event::Tx);
        consider(self.watchdogs.first().map(|w| w.0), Event::Watchdog);
        consider(
            self.completions.keys().next().map(|k| k.0),
            Event::Completion,
        );
        best
    }

    fn next_event(&self) -> Option<Time> {
        match self.next_cached {
            Some(cached) => {
                debug_assert_eq!(cached, self.next_event_kind());
                cached.map(|(t, _)| t)
            }
            None => self.next_event_kind().map(|(t, _)| t),
        }
    }

    /// Process every internal event up to `now`, in time order.
    fn run_events(&mut self, now: Time, out: &mut Outputs) {
        self.next_cached = None;
        loop {
            let next = self.next_event_kind();
            let Some((e, kind)) = next.filter(|&(e, _)| e <= now) else {
                self.next_cached = Some(next);
                break;
            };
            match kind {
                Event::Trigger => self.deliver_triggers(e),
                Event::Unit(u) => self.unit_step(u, e),
                Event::Server(s) => self.server_step(s, e),
                Event::Concat => self.concat_expire(e),
                Event::Tx => self.tx_step(e, out),
                Event::Watchdog => {
                    if let Some((t, c)) = self.watchdogs.pop_first() {
                        self.fire_watchdog(c, t);
                    }
                }
                Event::Completion => {
                    if let Some((_, c)) = self.completions.pop_first() {
                        self.cq.push_back(c);
                    }
                }
            }
            self.apply_effects(e);
        }
        self.now = self.now.max(now);
    }
}

fn min_opt(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

impl<M: HostMemory> Datapath for Nic<M> {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.run_events(now, out);
        self.prog.program.set_now(now);
        self.rx(now, port, frame);
        self.run_events(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.prog.program.set_now(now);
        self.run_events(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        self.next_event()
    }
}

/// The control plane of a running NIC (`netsparse nic --grpc-server-addr`,
/// entry files): its program's tables, counters and registers, plus the
/// command `filter_clear` (forget the Idx Filter, as NetSparse's control
/// plane does between kernels).
impl<M: HostMemory> netsparse_engine::ControlPlane for Nic<M> {
    fn engine(&self) -> &netsparse_engine::Engine {
        netsparse_engine::ControlPlane::engine(&self.prog.program)
    }

    fn engine_mut(&mut self) -> &mut netsparse_engine::Engine {
        netsparse_engine::ControlPlane::engine_mut(&mut self.prog.program)
    }

    fn command(
        &mut self,
        cmd: &str,
        args: &[&str],
    ) -> Option<Result<bool, netsparse_engine::control::commands::LineError>> {
        use netsparse_engine::control::commands::LineError;
        match cmd {
            "filter_clear" => Some(if args.is_empty() {
                self.clear_filter();
                Ok(false)
            } else {
                Err(LineError::Syntax("usage: filter_clear".into()))
            }),
            _ => None,
        }
    }
}

/// The least (time, index) of `at`'s times, if any.
fn least(at: &[Option<Time>]) -> Option<(Time, usize)> {
    at.iter()
        .enumerate()
        .filter_map(|(i, t)| t.map(|t| (t, i)))
        .min()
}

/// The least of `at` after its entry `i` changed to `t`, given the least
/// `min` before: the new entry if it is earlier, a scan only when the
/// least entry itself moved later or went idle.
fn least_after_change(
    min: Option<(Time, usize)>,
    at: &[Option<Time>],
    i: usize,
    t: Option<Time>,
) -> Option<(Time, usize)> {
    match (min, t.map(|t| (t, i))) {
        // Earlier than the least: the new least.
        (Some(m), Some(n)) if n < m => Some(n),
        (None, n) => n,
        // The least entry moved later or went idle: scan.
        (Some((_, mi)), _) if mi == i => least(at),
        (m, _) => m,
    }
}

#[cfg(test)]
mod least_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The least kept through any sequence of changes is the least a
        /// scan finds, ties going to the lower index.
        #[test]
        fn the_kept_least_is_the_scanned_least(
            changes in prop::collection::vec((0usize..8, prop::option::of(0u64..20)), 0..200),
        ) {
            let mut at = vec![None; 8];
            let mut min = None;
            for (i, t) in changes {
                let t = t.map(Time::from_ns);
                at[i] = t;
                min = least_after_change(min, &at, i, t);
                prop_assert_eq!(min, least(&at));
            }
        }
    }
}
