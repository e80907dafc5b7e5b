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
//! * **Completion.** A command completes when all its idxs went through
//!   host_to_net and every PR it issued was answered and written; the
//!   completion reaches the host's completion queue one PCIe latency after
//!   its last write. A command whose watchdog expires first fails, and so
//!   does a command with a write outside its destination buffer or with
//!   idxs no node owns; a failed command's destination buffer is reported
//!   invalid (§7.1).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use netsparse_engine::program::RunEnd;
use netsparse_engine::{ControlPlane, ControlPlaneError, EntryHandle, LoadError, PacketState};
use netsparse_externs::artifact::{Artifact, KeyMatch};
use netsparse_externs::concat::{ConcatConfig, Concatenator, CqKey, Flushed};
use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
use netsparse_externs::rig::IdxFilter;
use netsparse_externs::time::{serialization_time, Clock};
use netsparse_externs::wire::{PrRepr, PrType, MAX_NODE_ID};
use netsparse_externs::{Datapath, Outputs, Time};
use thiserror::Error;

use crate::config::{ConfigError, NicConfig};
use crate::core::{CmdState, Core, PrCtx, PropertySlice, UnitPending};
use crate::memory::{DenseMemory, HostMemory, RegionKind};
use crate::program::NicProgram;
use crate::stats::{CommandStats, NicStats};
use crate::verbs::{CommandId, Completion, CompletionStatus, FailReason, PostError, RigCommand};

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

/// Why a client unit is stalled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    PendingFull,
    TxFull,
}

/// A client RIG unit.
#[derive(Clone, Debug)]
struct ClientUnit {
    queue: VecDeque<u32>,
    active: Option<u32>,
    /// Idxs of the active command requested by DMA (arrived or in flight).
    requested: u64,
    /// In-flight chunk: (arrival, command, first idx position, count).
    dma: Option<(Time, u32, u64, u64)>,
    /// Fetched, not yet processed idxs.
    buf: VecDeque<u64>,
    /// When the next batch may start.
    t: Time,
    stall: Option<(Stall, Time)>,
}

/// A response waiting for its property's DMA read.
#[derive(Clone, Copy, Debug)]
struct PendingResponse {
    ready: Time,
    pr: PrRepr,
    dst: u32,
    prop_len: u32,
}

/// A server RIG unit.
#[derive(Clone, Debug, Default)]
struct ServerUnit {
    free_at: Time,
    queue: VecDeque<PendingResponse>,
    payloads: VecDeque<u8>,
}

/// One frame in the TX buffer.
#[derive(Clone, Copy, Debug)]
struct TxFrame {
    start: Time,
    len: usize,
}

/// The TX buffer and the link pacing: frame bytes queued back to back in
/// `bytes[head..]`.
#[derive(Clone, Debug, Default)]
struct Tx {
    frames: VecDeque<TxFrame>,
    bytes: Vec<u8>,
    head: usize,
    link_free: Time,
}

impl Tx {
    /// Bytes waiting in the TX buffer.
    fn queued(&self) -> usize {
        self.bytes.len() - self.head
    }
}

/// Which kind of event comes next (in priority order at equal times).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Unit(usize),
    Server(usize),
    Concat,
    Tx,
    Watchdog,
    Completion,
}

/// How a run of host_to_net for one idx ended.
enum H2n {
    /// The idx was processed (issued or dropped).
    Done,
    /// PendingInsert found the table full: the idx must be run again.
    Stalled,
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
    /// The earliest internal event as of the end of the last `run_events`
    /// (`None` once anything else may have changed the state).
    next_cached: Option<Option<(Time, Event)>>,
    servers: Vec<ServerUnit>,
    next_server: usize,
    concat: Concatenator,
    deconcat: Deconcatenator,
    tx: Tx,
    frame: Vec<u8>,
    idx_bytes: Vec<u8>,
    scratch: Vec<(u32, u32, u64)>,
    psn: u32,
    watchdogs: BTreeSet<(Time, u32)>,
    completions: BTreeMap<(Time, u32), Completion>,
    cq: VecDeque<Completion>,
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
        let servers = (0..cfg.server_units())
            .map(|_| ServerUnit::default())
            .collect();
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
            },
            unit_at: vec![None; clients],
            next_cached: None,
            units,
            servers,
            next_server: 0,
            concat,
            deconcat,
            tx: Tx::default(),
            frame: Vec::with_capacity(2048),
            idx_bytes: Vec::with_capacity(cfg.idx_buffer_bytes),
            scratch: Vec::new(),
            psn: 0,
            watchdogs: BTreeSet::new(),
            completions: BTreeMap::new(),
            cq: VecDeque::new(),
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
    }

    /// Counters.
    pub fn stats(&self) -> NicStats {
        let mut s = self.core.stats.clone();
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

    /// Post a RIG command (`ibv_post_send` with `IBV_WR_RIG`) at `now`.
    pub fn post_rig(&mut self, now: Time, cmd: RigCommand) -> Result<CommandId, PostError> {
        let r = self.check_command(&cmd);
        let dest = match r {
            Ok(d) => d,
            Err(e) => {
                self.core.stats.commands_rejected += 1;
                return Err(e);
            }
        };
        let id = self.core.cmds.len() as u32;
        let unit = (0..self.units.len())
            .min_by_key(|&u| {
                (
                    self.units[u].queue.len() + usize::from(self.units[u].active.is_some()),
                    u,
                )
            })
            .unwrap_or(0);
        let now = now.max(self.now);
        self.core.cmds.push(CmdState {
            cmd,
            dest,
            unit: unit as u16,
            visible_at: now + self.cfg.dma_one_way(),
            processed: 0,
            outstanding: 0,
            done: false,
            last_write: Time::ZERO,
            first_unroutable: None,
            stats: CommandStats {
                unit: unit as u16,
                posted_at: now,
                ..CommandStats::default()
            },
        });
        self.units[unit].queue.push_back(id);
        self.refresh_unit(unit);
        self.next_cached = None;
        self.core.stats.commands_posted += 1;
        Ok(CommandId(id))
    }

    fn check_command(&self, cmd: &RigCommand) -> Result<crate::memory::Region, PostError> {
        let max = self.cfg.max_prop_len();
        if cmd.property_size == 0 || cmd.property_size > max {
            return Err(PostError::BadPropertySize {
                size: cmd.property_size,
                max,
            });
        }
        let len = cmd
            .count
            .checked_mul(8)
            .ok_or(PostError::TooManyIdxs { count: cmd.count })?;
        if len > 0 {
            match self.core.mem.region(cmd.idx_addr, len) {
                Some(r) if r.kind == RegionKind::Idxs => {}
                Some(r) => {
                    return Err(PostError::BadIdxArray {
                        addr: cmd.idx_addr,
                        len,
                        source: crate::memory::MemError::WrongKind {
                            addr: cmd.idx_addr,
                            len,
                            kind: r.kind,
                            want: RegionKind::Idxs,
                        },
                    })
                }
                None => {
                    return Err(PostError::BadIdxArray {
                        addr: cmd.idx_addr,
                        len,
                        source: crate::memory::MemError::Unmapped {
                            addr: cmd.idx_addr,
                            len,
                        },
                    })
                }
            }
        }
        let plen = u64::from(cmd.property_size);
        match self.core.mem.region(cmd.dest_addr, plen) {
            Some(r) if r.kind == RegionKind::Destination => Ok(r),
            Some(r) => Err(PostError::BadDestination {
                addr: cmd.dest_addr,
                source: crate::memory::MemError::WrongKind {
                    addr: cmd.dest_addr,
                    len: plen,
                    kind: r.kind,
                    want: RegionKind::Destination,
                },
            }),
            None => Err(PostError::BadDestination {
                addr: cmd.dest_addr,
                source: crate::memory::MemError::Unmapped {
                    addr: cmd.dest_addr,
                    len: plen,
                },
            }),
        }
    }

    /// Retire every outstanding PR as if its response had arrived at `now`
    /// (the Pending PR Table entry is completed and the Idx Filter bit set;
    /// nothing is written to host memory). For benchmarks and tests that
    /// leave the responders out; returns how many were retired.
    pub fn answer_all_pending(&mut self, now: Time) -> u64 {
        self.next_cached = None;
        let mut n = 0;
        let mut list = std::mem::take(&mut self.scratch);
        for u in 0..self.core.pending.len() {
            list.clear();
            list.extend(
                self.core.pending[u]
                    .table
                    .iter()
                    .map(|(r, _, e)| (r, e.cmd, e.idx)),
            );
            for &(req, cmd, idx) in &list {
                self.core.pending[u].table.remove_by_req_id(req);
                let _ = self.core.filter.set(idx);
                let cs = &mut self.core.cmds[cmd as usize];
                cs.outstanding = cs.outstanding.saturating_sub(1);
                self.core.touched.push(cmd);
                n += 1;
            }
            if !list.is_empty() {
                self.core.woken.push(u as u16);
            }
        }
        self.scratch = list;
        self.apply_effects(now.max(self.now));
        n as u64
    }

    /// Take the next completion the host can see.
    pub fn poll_cq(&mut self) -> Option<Completion> {
        self.cq.pop_front()
    }

    // ----- events -----------------------------------------------------------------------

    /// Recompute unit `u`'s entry of `unit_at` after it changed.
    fn refresh_unit(&mut self, u: usize) {
        let t = self.unit_next(u);
        if let Some(slot) = self.unit_at.get_mut(u) {
            *slot = t;
        }
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
        debug_assert!((0..self.units.len()).all(|u| self.unit_at[u] == self.unit_next(u)));
        for (u, &t) in self.unit_at.iter().enumerate() {
            consider(t, Event::Unit(u));
        }
        for (s, su) in self.servers.iter().enumerate() {
            consider(su.queue.front().map(|r| r.ready), Event::Server(s));
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

    // ----- client units ------------------------------------------------------------------

    fn unit_step(&mut self, u: usize, e: Time) {
        // 1. An Idx Buffer chunk arrives.
        if let Some((done, cmd, first, count)) = self.units[u].dma {
            if done <= e {
                self.units[u].dma = None;
                if self.units[u].active == Some(cmd) {
                    self.fetch_arrived(u, cmd, first, count, done);
                }
            }
        }
        if self.units[u].stall.is_none() {
            // 2. Start the next command.
            let unit = &self.units[u];
            if unit.active.is_none() {
                if let Some(&c) = unit.queue.front() {
                    let at = unit.t.max(self.core.cmds[c as usize].visible_at);
                    if at <= e {
                        self.units[u].queue.pop_front();
                        self.start_command(u, c, at);
                    }
                }
            }
            // 3. A batch of idxs.
            let unit = &self.units[u];
            if unit.active.is_some() && !unit.buf.is_empty() && unit.t <= e {
                if self.tx_full() {
                    self.units[u].stall = Some((Stall::TxFull, e));
                } else {
                    self.process_batch(u, e);
                }
            }
        }
        // 4. Keep the Idx Buffer fed.
        self.maybe_fetch(u, e);
        self.refresh_unit(u);
    }

    fn start_command(&mut self, u: usize, c: u32, at: Time) {
        let unit = &mut self.units[u];
        unit.active = Some(c);
        unit.requested = 0;
        unit.buf.clear();
        unit.t = unit.t.max(at);
        let cs = &mut self.core.cmds[c as usize];
        cs.stats.started_at = at;
        self.watchdogs.insert((at + self.cfg.watchdog(), c));
        if cs.cmd.count == 0 {
            self.units[u].active = None;
            self.core.touched.push(c);
        } else {
            self.maybe_fetch(u, at);
        }
    }

    fn maybe_fetch(&mut self, u: usize, e: Time) {
        let chunk = self.cfg.chunk_idxs() as u64;
        let unit = &self.units[u];
        let Some(c) = unit.active else { return };
        let count = self.core.cmds[c as usize].cmd.count;
        if unit.dma.is_some() || unit.requested >= count || unit.buf.len() as u64 > chunk {
            return;
        }
        let n = chunk.min(count - unit.requested);
        let done = e + self.cfg.dma_read(n * 8);
        let first = unit.requested;
        let unit = &mut self.units[u];
        unit.dma = Some((done, c, first, n));
        unit.requested += n;
    }

    fn fetch_arrived(&mut self, u: usize, cmd: u32, first: u64, count: u64, at: Time) {
        let addr = self.core.cmds[cmd as usize]
            .cmd
            .idx_addr
            .saturating_add(first.saturating_mul(8));
        self.idx_bytes.clear();
        self.idx_bytes.resize((count * 8) as usize, 0);
        if self.core.mem.read(addr, &mut self.idx_bytes).is_err() {
            self.core.to_fail.push((
                cmd,
                FailReason::BadAddress {
                    addr,
                    len: count * 8,
                    what: "the idx array could not be read by DMA".into(),
                },
            ));
            return;
        }
        let unit = &mut self.units[u];
        for c in self.idx_bytes.chunks_exact(8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            unit.buf.push_back(u64::from_le_bytes(w));
        }
        unit.t = unit.t.max(at);
    }

    fn tx_full(&self) -> bool {
        self.tx.queued() + self.cfg.mtu + 14 > self.cfg.tx_buffer_bytes
    }

    fn process_batch(&mut self, u: usize, e: Time) {
        let Some(cmd) = self.units[u].active else {
            return;
        };
        let n = (self.cfg.batch_idxs as usize).min(self.units[u].buf.len());
        let mut done = 0u64;
        for i in 0..n {
            if i > 0 && self.tx_full() {
                self.units[u].stall = Some((Stall::TxFull, e + self.clock.cycles(i as u64)));
                break;
            }
            let Some(&idx) = self.units[u].buf.front() else {
                break;
            };
            match self.run_h2n(u as u16, cmd, idx, e) {
                H2n::Done => {
                    self.units[u].buf.pop_front();
                    done += 1;
                }
                H2n::Stalled => {
                    self.units[u].stall =
                        Some((Stall::PendingFull, e + self.clock.cycles(i as u64)));
                    break;
                }
            }
            if !self.core.to_fail.is_empty() {
                break;
            }
        }
        let unit = &mut self.units[u];
        unit.t = e + self.clock.cycles(done.max(1));
        let cs = &mut self.core.cmds[cmd as usize];
        if !cs.done && cs.processed >= cs.cmd.count {
            // Every idx went through host_to_net: the unit moves on.
            self.units[u].active = None;
            self.core.touched.push(cmd);
        }
    }

    /// Run host_to_net for one idx at time `e`.
    fn run_h2n(&mut self, unit: u16, cmd: u32, idx: u64, e: Time) -> H2n {
        let s = self.prog.h2n_slots;
        let node = u128::from(self.cfg.node);
        let prop_size = self.core.cmds[cmd as usize].cmd.property_size;
        let st = &mut self.st;
        self.prog.program.reset(st);
        if let Some(h) = s.pr_header {
            self.prog.program.set_header_valid(st, h, true);
        }
        st.set(s.src, node);
        st.set(s.tid, u128::from(unit));
        st.set(s.idx, u128::from(idx));
        st.set(s.pr_type, u128::from(PrType::Read.as_u16()));
        st.set(s.prop_len, u128::from(prop_size));
        st.set(s.node, node);
        st.set(s.unit, u128::from(unit));
        st.set(s.command, u128::from(cmd));
        self.core.ctx = PrCtx {
            now: e,
            unit,
            cmd,
            ..PrCtx::default()
        };
        let end = self
            .prog
            .program
            .run(&mut self.st, self.prog.h2n, &mut self.core);
        let ctx = self.core.ctx;
        if ctx.stalled {
            return H2n::Stalled;
        }
        let st = &self.st;
        let outcome = st.get(s.outcome) as u64;
        let dropped = end == RunEnd::Exited || st.get(s.drop) != 0;
        let pr_type = st.get(s.pr_type) as u16;
        let dst = st.get(s.dst) as u64;
        let prop_len = st.get(s.prop_len) as u32;
        let pr = PrRepr {
            src: st.get(s.src) as u32,
            tid: st.get(s.tid) as u16,
            idx: st.get(s.idx) as u64,
            req_id: st.get(s.req_id) as u32,
        };
        let core = &mut self.core;
        let cs = &mut core.cmds[cmd as usize];
        cs.processed += 1;
        cs.stats.idxs_read += 1;
        core.stats.idxs_read += 1;
        let mut issued = false;
        if !dropped {
            let ok = pr_type == PrType::Read.as_u16()
                && ctx.inserted.is_some_and(|r| r == pr.req_id)
                && dst <= u64::from(MAX_NODE_ID)
                && prop_len == prop_size;
            if ok {
                let key = CqKey {
                    pr_type: PrType::Read,
                    dst: dst as u32,
                    port: 0,
                };
                let pushed = push_pr(
                    &mut self.concat,
                    &mut self.tx,
                    &mut self.frame,
                    &mut self.psn,
                    &mut core.stats,
                    &self.cfg,
                    e,
                    key,
                    prop_len,
                    &pr,
                    &[],
                );
                issued = pushed;
            }
            if !issued {
                core.stats.program_errors += 1;
            }
        }
        let cs = &mut core.cmds[cmd as usize];
        if issued {
            cs.outstanding += 1;
            cs.stats.issued += 1;
            core.stats.prs_issued += 1;
        } else {
            if let Some(r) = ctx.inserted {
                // Registered but not sent: take it back.
                if let Some(p) = core.pending.get_mut(usize::from(unit)) {
                    p.table.remove_by_req_id(r);
                }
            }
            let (c, n) = match (dropped, outcome) {
                (true, NS_FILTERED) => (&mut cs.stats.filtered, &mut core.stats.prs_filtered),
                (true, NS_COALESCED) => (&mut cs.stats.coalesced, &mut core.stats.prs_coalesced),
                (true, NS_LOCAL) => (&mut cs.stats.local, &mut core.stats.prs_local),
                (true, NS_UNROUTABLE) => {
                    cs.first_unroutable.get_or_insert(idx);
                    (&mut cs.stats.unroutable, &mut core.stats.prs_unroutable)
                }
                _ => (
                    &mut cs.stats.dropped_other,
                    &mut core.stats.prs_dropped_other,
                ),
            };
            *c += 1;
            *n += 1;
        }
        H2n::Done
    }

    /// Wake units that got a Pending PR Table entry back at `e`.
    fn wake_pending(&mut self, u: u16, e: Time) {
        let Some(unit) = self.units.get_mut(usize::from(u)) else {
            return;
        };
        if let Some((Stall::PendingFull, since)) = unit.stall {
            let cycles = self.clock.to_cycles(e.saturating_sub(since));
            unit.stall = None;
            unit.t = unit.t.max(e);
            self.core.stats.stall_cycles_pending += cycles;
            if let Some(c) = unit.active {
                self.core.cmds[c as usize].stats.stall_cycles_pending += cycles;
            }
            self.refresh_unit(usize::from(u));
        }
    }

    fn wake_tx(&mut self, e: Time) {
        if self.tx_full() {
            return;
        }
        for u in 0..self.units.len() {
            let unit = &mut self.units[u];
            if let Some((Stall::TxFull, since)) = unit.stall {
                let cycles = self.clock.to_cycles(e.saturating_sub(since));
                unit.stall = None;
                unit.t = unit.t.max(e);
                self.core.stats.stall_cycles_tx += cycles;
                if let Some(c) = unit.active {
                    self.core.cmds[c as usize].stats.stall_cycles_tx += cycles;
                }
                self.refresh_unit(u);
            }
        }
    }

    /// Apply what the RIG externs queued: wake units, fail and complete commands.
    fn apply_effects(&mut self, e: Time) {
        while let Some(u) = self.core.woken.pop() {
            self.wake_pending(u, e);
        }
        while let Some((c, reason)) = self.core.to_fail.pop() {
            self.fail_command(c, reason, e);
        }
        while let Some(c) = self.core.touched.pop() {
            self.maybe_complete(c, e);
        }
    }

    fn maybe_complete(&mut self, c: u32, e: Time) {
        let unit = self.core.cmds[c as usize].unit;
        let generating = self.units[usize::from(unit)].active == Some(c);
        let cs = &mut self.core.cmds[c as usize];
        if cs.done || generating || cs.processed < cs.cmd.count || cs.outstanding > 0 {
            return;
        }
        let status = match cs.first_unroutable {
            Some(first) => CompletionStatus::Failed(FailReason::Unroutable {
                count: cs.stats.unroutable,
                first,
            }),
            None => CompletionStatus::Success,
        };
        self.finish(c, status, e);
    }

    fn finish(&mut self, c: u32, status: CompletionStatus, e: Time) {
        let one_way = self.cfg.dma_one_way();
        let cs = &mut self.core.cmds[c as usize];
        cs.done = true;
        let at = e.max(cs.last_write) + one_way;
        cs.stats.finished_at = at;
        let failed = status != CompletionStatus::Success;
        if failed {
            self.core.stats.commands_failed += 1;
        } else {
            self.core.stats.commands_completed += 1;
        }
        let wd = cs.stats.started_at + self.cfg.watchdog();
        self.watchdogs.remove(&(wd, c));
        self.completions.insert(
            (at, c),
            Completion {
                id: CommandId(c),
                status,
                at,
                dest_invalid: failed,
                stats: cs.stats.clone(),
            },
        );
    }

    fn fire_watchdog(&mut self, c: u32, e: Time) {
        let cs = &self.core.cmds[c as usize];
        if cs.done {
            return;
        }
        let outstanding = cs.outstanding + (cs.cmd.count - cs.processed.min(cs.cmd.count));
        self.core.stats.watchdog_failures += 1;
        tracing::warn!(
            node = self.cfg.node,
            command = c,
            outstanding,
            "RIG command failed by watchdog"
        );
        self.fail_command(
            c,
            FailReason::Watchdog {
                timeout_us: self.cfg.watchdog_us,
                outstanding,
            },
            e,
        );
    }

    fn fail_command(&mut self, c: u32, reason: FailReason, e: Time) {
        if self.core.cmds[c as usize].done {
            return;
        }
        let u = usize::from(self.core.cmds[c as usize].unit);
        let freed = self.core.pending[u].release_command(c);
        let unit = &mut self.units[u];
        if unit.active == Some(c) {
            unit.active = None;
            unit.buf.clear();
            unit.dma = None;
            unit.t = unit.t.max(e);
        }
        unit.queue.retain(|&q| q != c);
        let pending_stall = unit.stall.is_some_and(|s| s.0 == Stall::PendingFull);
        self.refresh_unit(u);
        if freed > 0 || pending_stall {
            self.wake_pending(u as u16, e);
        }
        self.finish(c, CompletionStatus::Failed(reason), e);
    }

    // ----- server units, concatenation, TX ----------------------------------------------

    /// Responses of server unit `s` whose property has been read by `e`
    /// join the Concatenator (each at its own ready time).
    fn server_step(&mut self, s: usize, e: Time) {
        while let Some(r) = self.servers[s].queue.front().copied() {
            if r.ready > e {
                break;
            }
            let su = &mut self.servers[s];
            su.queue.pop_front();
            self.core.payload.clear();
            let n = (r.prop_len as usize).min(su.payloads.len());
            self.core.payload.extend(su.payloads.drain(..n));
            let key = CqKey {
                pr_type: PrType::Response,
                dst: r.dst,
                port: 0,
            };
            push_pr(
                &mut self.concat,
                &mut self.tx,
                &mut self.frame,
                &mut self.psn,
                &mut self.core.stats,
                &self.cfg,
                r.ready,
                key,
                r.prop_len,
                &r.pr,
                &self.core.payload,
            );
        }
    }

    fn concat_expire(&mut self, e: Time) {
        let (tx, frame, psn, stats, cfg) = (
            &mut self.tx,
            &mut self.frame,
            &mut self.psn,
            &mut self.core.stats,
            &self.cfg,
        );
        self.concat
            .on_timer(e, |f| enqueue_frame(tx, frame, psn, stats, cfg, &f));
    }

    fn tx_step(&mut self, e: Time, out: &mut Outputs) {
        while let Some(f) = self.tx.frames.front().copied() {
            if f.start > e {
                break;
            }
            self.tx.frames.pop_front();
            let tx = &mut self.tx;
            let end = (tx.head + f.len).min(tx.bytes.len());
            out.push(0, &tx.bytes[tx.head..end]);
            tx.head = end;
            if tx.frames.is_empty() {
                tx.bytes.clear();
                tx.head = 0;
            } else if tx.head > 1 << 20 && tx.head * 2 > tx.bytes.len() {
                tx.bytes.drain(..tx.head);
                tx.head = 0;
            }
        }
        self.wake_tx(e);
    }

    // ----- receive path ------------------------------------------------------------------

    fn rx(&mut self, now: Time, port: u32, frame: &[u8]) {
        let d = match self.deconcat.frame(frame) {
            Ok(d) => d,
            Err(e) => {
                tracing::debug!(node = self.cfg.node, "dropped a received frame: {e}");
                return;
            }
        };
        let concat = d.concat;
        let stats = &mut self.core.stats;
        stats.rx_packets += 1;
        stats.rx_prs += u64::from(concat.num_prs);
        stats.rx_bytes += frame.len() as u64;
        if concat.pr_type == PrType::Response {
            stats.rx_payload_bytes += u64::from(concat.num_prs) * u64::from(concat.prop_len);
        }
        let s = self.prog.n2h_slots;
        let node = u128::from(self.cfg.node);
        let st = &mut self.st;
        self.prog.program.reset(st);
        let md = [
            (s.pr_type, u128::from(concat.pr_type.as_u16())),
            (s.dst, u128::from(concat.dst)),
            (s.prop_len, u128::from(concat.prop_len)),
            (s.ingress_port, u128::from(port)),
            (s.egress_port, 0),
            (s.drop, 0),
        ];
        for (slot, v) in md {
            st.set(slot, v);
        }
        st.set(s.node, node);
        self.core.ctx = PrCtx {
            now,
            ..PrCtx::default()
        };
        if !self.prog.n2h_packet_empty {
            let end = self
                .prog
                .program
                .run(&mut self.st, self.prog.n2h_packet, &mut self.core);
            if end == RunEnd::Exited || self.st.get(s.drop) != 0 {
                self.core.stats.packets_dropped += 1;
                return;
            }
        }
        // The per-PR metadata starts from the packet's, as the per-packet part left it.
        let md = [
            (s.pr_type, self.st.get(s.pr_type)),
            (s.dst, self.st.get(s.dst)),
            (s.prop_len, self.st.get(s.prop_len)),
            (s.ingress_port, self.st.get(s.ingress_port)),
            (s.egress_port, self.st.get(s.egress_port)),
            (s.drop, 0),
        ];
        let clients = self.cfg.client_units;
        if let Some(h) = s.pr_header {
            self.prog.program.set_header_valid(&mut self.st, h, true);
        }
        for v in d.prs {
            let st = &mut self.st;
            for (slot, x) in md {
                st.set(slot, x);
            }
            st.set(s.src, u128::from(v.src));
            st.set(s.tid, u128::from(v.tid));
            st.set(s.idx, u128::from(v.idx));
            st.set(s.req_id, u128::from(v.req_id));
            st.set(s.node, node);
            st.set(s.command, 0);
            st.set(s.outcome, 0);
            let server = if concat.pr_type == PrType::Read {
                let sv = self.next_server;
                self.next_server = (self.next_server + 1) % self.servers.len().max(1);
                Some(sv)
            } else {
                None
            };
            let unit = match server {
                Some(sv) => clients as usize + sv,
                None => usize::from(v.tid),
            };
            st.set(s.unit, unit as u128);
            self.core.payload.clear();
            self.core.payload.extend_from_slice(v.payload);
            self.core.ctx = PrCtx {
                now,
                unit: if server.is_some() { u16::MAX } else { v.tid },
                ..PrCtx::default()
            };
            let end = self
                .prog
                .program
                .run(&mut self.st, self.prog.n2h_pr, &mut self.core);
            self.after_n2h(now, end, server);
            self.apply_effects(now);
        }
    }

    /// net_to_host's Concatenate for the PR just processed.
    fn after_n2h(&mut self, now: Time, end: RunEnd, server: Option<usize>) {
        let s = self.prog.n2h_slots;
        let st = &self.st;
        if end == RunEnd::Exited || st.get(s.drop) != 0 {
            return;
        }
        let pr = PrRepr {
            src: st.get(s.src) as u32,
            tid: st.get(s.tid) as u16,
            idx: st.get(s.idx) as u64,
            req_id: st.get(s.req_id) as u32,
        };
        let dst = st.get(s.dst) as u64;
        let prop_len = st.get(s.prop_len) as u32;
        let ty = PrType::from_u16(st.get(s.pr_type) as u16);
        let served = self.core.ctx.served;
        let plen = self.core.payload.len();
        let ok = dst <= u64::from(MAX_NODE_ID)
            && match ty {
                Ok(PrType::Read) => plen == 0 && !served,
                Ok(PrType::Response) => plen == prop_len as usize,
                Err(_) => false,
            };
        if !ok {
            self.core.stats.program_errors += 1;
            return;
        }
        let Ok(ty) = ty else { return };
        if served {
            // The response leaves once its property has been read by DMA.
            let sv = server
                .unwrap_or(0)
                .min(self.servers.len().saturating_sub(1));
            let su = &mut self.servers[sv];
            let start = now.max(su.free_at);
            su.free_at = start + self.clock.cycles(1);
            su.queue.push_back(PendingResponse {
                ready: start + self.cfg.dma_read(u64::from(prop_len)),
                pr,
                dst: dst as u32,
                prop_len,
            });
            su.payloads.extend(self.core.payload.iter());
            return;
        }
        let key = CqKey {
            pr_type: ty,
            dst: dst as u32,
            port: 0,
        };
        push_pr(
            &mut self.concat,
            &mut self.tx,
            &mut self.frame,
            &mut self.psn,
            &mut self.core.stats,
            &self.cfg,
            now,
            key,
            prop_len,
            &pr,
            &self.core.payload,
        );
    }
}

fn min_opt(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Queue a PR in the Concatenator at `e`; flushed CQs go to the TX buffer.
/// With DelayCycles 0 the PR's CQ leaves at once. False if the PR was refused.
#[allow(clippy::too_many_arguments)]
fn push_pr(
    concat: &mut Concatenator,
    tx: &mut Tx,
    frame: &mut Vec<u8>,
    psn: &mut u32,
    stats: &mut NicStats,
    cfg: &NicConfig,
    e: Time,
    key: CqKey,
    prop_len: u32,
    pr: &PrRepr,
    payload: &[u8],
) -> bool {
    let r = concat.push(e, key, prop_len, pr, payload, |f| {
        enqueue_frame(tx, frame, psn, stats, cfg, &f)
    });
    if r.is_err() {
        return false;
    }
    if cfg.delay_cycles == 0 {
        concat.on_timer(e, |f| enqueue_frame(tx, frame, psn, stats, cfg, &f));
    }
    true
}

/// A flushed CQ becomes a frame in the TX buffer, paced at line rate.
fn enqueue_frame(
    tx: &mut Tx,
    frame: &mut Vec<u8>,
    psn: &mut u32,
    stats: &mut NicStats,
    cfg: &NicConfig,
    f: &Flushed<'_>,
) {
    frame.clear();
    let len = match f.write_frame(frame, cfg.addr(), *psn & 0x00FF_FFFF) {
        Ok(n) => n,
        Err(e) => {
            stats.program_errors += u64::from(f.num_prs);
            tracing::warn!(node = cfg.node, "could not build a frame: {e}");
            return;
        }
    };
    *psn = psn.wrapping_add(1);
    let start = f.at.max(tx.link_free);
    tx.link_free = start + serialization_time(len as u64, cfg.link_gbps);
    tx.frames.push_back(TxFrame { start, len });
    tx.bytes.extend_from_slice(&frame[..len]);
    stats.tx_packets += 1;
    stats.tx_prs += u64::from(f.num_prs);
    stats.tx_bytes += len as u64;
    if f.key.pr_type == PrType::Response {
        stats.tx_payload_bytes += u64::from(f.num_prs) * u64::from(f.prop_len);
    }
    stats.tx_buffer_peak = stats.tx_buffer_peak.max(tx.queued() as u64);
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
