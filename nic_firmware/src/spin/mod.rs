//! A behavioural sPIN SmartNIC (Hoefler et al., SC17): message handlers of
//! a compiled `SpinNic` program (`<spin.p4>`) run on a pool of handler
//! processing units (HPUs), on the same engine as every other target.
//!
//! # Model
//!
//! * **Message table.** The first packet of a message that arrives (any
//!   packet: each carries the message header) installs the message's
//!   channel — its header, per-message handler state (the package's `S`,
//!   zeroed), and byte accounting. A full table drops the packet (counted).
//! * **HPUs.** `hpus` units, each busy until a time. A handler starts on a
//!   free HPU; its busy time is its operation count (the engine's count of
//!   statements run) × `cycles_per_op`, plus the cycles of its externs
//!   (blocking DMA waits the DMA latency; element-wise externs pay per
//!   element or per DMA command), at `hpu_clock_mhz`.
//! * **Order.** The header handler runs once per message before any of its
//!   payload handlers: a payload job becomes eligible when the header
//!   handler has finished. Payload handlers run one per packet, on any free
//!   HPU, in arrival order of their packets (which may be out of message
//!   order). The completion handler runs once every byte of the message is
//!   accounted for (processed or dropped), after the last payload handler
//!   finished, with `md.dropped_bytes` and `md.flow_control`.
//! * **Flow control.** Jobs wait in a queue of `buffer_packets` packets; a
//!   packet that finds neither a free HPU nor buffer room is dropped, its
//!   bytes count as dropped and its message's completion sees
//!   `flow_control = 1`. Header and completion jobs live in the message
//!   table and never drop.
//! * **Budget.** A handler run gets `budget_cycles + budget_cycles_per_byte
//!   × payload bytes`; the engine stops it when its operations exceed the
//!   budget and an extern call that would exceed it stops it too. It is
//!   counted; a stopped payload handler's packet counts as dropped, a
//!   stopped header handler drops its message.
//! * **Timeout.** A message not complete `timeout_ns` after its first
//!   packet completes with `md.timed_out = 1` (its missing bytes dropped);
//!   packets arriving later are counted as late and dropped.
//! * **Sends.** `PutFromDevice`/`PutFromHost` frames leave on port 0 when
//!   the handler ends (`PutFromHost` one DMA latency later), paced at
//!   `link_gbps` in the order they were issued.
//!
//! Handler code runs when the handler starts; its effects on host memory
//! are visible from then on. The NIC is a clocked state machine
//! ([`Datapath`]): the driver delivers frames and wakes it at
//! [`Datapath::next_deadline`].

mod config;
mod prims;
mod program;
pub mod wire;

use std::collections::{HashMap, VecDeque};

use netsparse_engine::{ControlPlane, LoadError, PacketState};
use netsparse_externs::artifact::{spin_rc as rc, Artifact};
use netsparse_externs::time::{serialization_time, Clock};
use netsparse_externs::{Datapath, Outputs, Time};

pub use config::{SpinConfig, SpinConfigError, SpinStats};
use prims::{DmaEngine, Env, Send};
use program::SpinProgram;
use wire::{SpinHeader, SPIN_FRAME_HEADERS};

/// Which handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HandlerKind {
    /// Once per message, first.
    Header,
    /// Once per packet.
    Payload,
    /// Once per message, last.
    Completion,
}

/// One handler run, recorded when tracing is on ([`SpinNicDev::set_trace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HandlerRun {
    /// Which handler.
    pub kind: HandlerKind,
    /// The message's sender and id.
    pub src: u32,
    /// Message id.
    pub msg_id: u32,
    /// Payload handlers: the packet's sequence number.
    pub seq: u32,
    /// The HPU.
    pub hpu: u32,
    /// Start time.
    pub start: Time,
    /// End time.
    pub end: Time,
    /// Operations counted.
    pub ops: u64,
    /// Cycles charged.
    pub cycles: u64,
    /// The return code it left.
    pub rc: u64,
    /// Stopped at its budget.
    pub stopped: bool,
}

/// A message's completion, as the host sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MessageDone {
    /// Sender.
    pub src: u32,
    /// Message id.
    pub msg_id: u32,
    /// Match bits.
    pub match_bits: u64,
    /// Message length.
    pub length: u32,
    /// The completion handler's return code (`SPIN_SUCCESS`, `SPIN_FAIL`...).
    pub rc: u64,
    /// Bytes not processed.
    pub dropped_bytes: u32,
    /// Packets were dropped for want of an HPU.
    pub flow_control: bool,
    /// The message timed out.
    pub timed_out: bool,
    /// When the completion handler ended.
    pub at: Time,
    /// When the NIC's DMA engine had written everything queued before the
    /// completion to host memory (the data is visible to the host one DMA
    /// latency after the later of `at` and this).
    pub dma_done: Time,
}

/// Why a sPIN NIC cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SpinNicError {
    /// The program does not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A configuration value is out of range.
    #[error(transparent)]
    Config(#[from] SpinConfigError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Header handler not run yet.
    New,
    /// Header handler ran (until `header_end`) and returned PROCESS_DATA.
    Process,
    /// Proceed: payload deposited without handlers.
    Proceed,
    /// Dropped by the header handler.
    Dropped,
}

#[derive(Clone, Debug)]
struct Channel {
    hdr: SpinHeader,
    phase: Phase,
    header_queued: bool,
    header_end: Time,
    state: Vec<u128>,
    /// Bytes processed or dropped (each packet once).
    accounted: u64,
    dropped: u64,
    flow_control: bool,
    /// End of the last handler of the message.
    last_end: Time,
    deadline: Time,
    /// Packets seen, by seq bit (duplicates), up to 64 Ki packets.
    seen: Vec<u64>,
    completion_queued: bool,
    timed_out: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    Header { ch: u32 },
    Payload { ch: u32, buf: u32 },
    Completion { ch: u32, at: Time },
}

#[derive(Clone, Debug, Default)]
struct Buf {
    bytes: Vec<u8>,
    offset: u32,
    seq: u32,
}

/// The sPIN NIC device.
#[derive(Debug)]
pub struct SpinNicDev {
    cfg: SpinConfig,
    prog: SpinProgram,
    st: PacketState,
    clock: Clock,
    hpus: Vec<Time>,
    channels: Vec<Option<Channel>>,
    free_channels: Vec<u32>,
    by_key: HashMap<(u32, u32), u32>,
    /// Recently completed messages (late packets), bounded by `max_messages`.
    done_keys: VecDeque<(u32, u32)>,
    queue: VecDeque<Job>,
    queued_packets: u32,
    bufs: Vec<Buf>,
    free_bufs: Vec<u32>,
    host: Vec<u8>,
    hpu_mem: Vec<u64>,
    counters: Vec<u64>,
    sends: Vec<Send>,
    tx: VecDeque<(Time, Vec<u8>)>,
    tx_pool: Vec<Vec<u8>>,
    tx_free_at: Time,
    dma: DmaEngine,
    next_msg_id: u32,
    completions: VecDeque<MessageDone>,
    /// No open message expires before this (the table is scanned then).
    next_expiry: Option<Time>,
    trace: Option<Vec<HandlerRun>>,
    stats: SpinStats,
}

impl SpinNicDev {
    /// A sPIN NIC running `artifact` (a `SpinNic` program).
    pub fn new(artifact: &Artifact, cfg: SpinConfig) -> Result<SpinNicDev, SpinNicError> {
        cfg.validate()?;
        let prog = SpinProgram::load(artifact, u64::from(cfg.node) + 1)?;
        let st = prog.program.new_state();
        let nbuf = cfg.buffer_packets as usize + cfg.hpus as usize + 1;
        Ok(SpinNicDev {
            clock: Clock::from_mhz(cfg.hpu_clock_mhz),
            hpus: vec![Time::ZERO; cfg.hpus as usize],
            channels: vec![None; cfg.max_messages as usize],
            free_channels: (0..cfg.max_messages).rev().collect(),
            by_key: HashMap::with_capacity(cfg.max_messages as usize),
            done_keys: VecDeque::with_capacity(cfg.max_messages as usize),
            queue: VecDeque::with_capacity(nbuf * 2),
            queued_packets: 0,
            bufs: (0..nbuf)
                .map(|_| Buf {
                    bytes: Vec::with_capacity(9000),
                    ..Buf::default()
                })
                .collect(),
            free_bufs: (0..nbuf as u32).rev().collect(),
            host: vec![0; cfg.host_mem_bytes as usize],
            hpu_mem: vec![0; cfg.hpu_mem_words as usize],
            counters: vec![0; cfg.counters as usize],
            sends: Vec::with_capacity(16),
            tx: VecDeque::new(),
            tx_pool: Vec::new(),
            tx_free_at: Time::ZERO,
            dma: DmaEngine {
                free_at: Time::ZERO,
                bytes_per_ns: cfg.dma_bytes_per_ns,
                overhead: cfg.dma_overhead_bytes,
            },
            next_msg_id: 1,
            completions: VecDeque::new(),
            next_expiry: None,
            trace: None,
            stats: SpinStats::default(),
            st,
            prog,
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SpinConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &SpinStats {
        &self.stats
    }

    /// The `SpinCount` counters.
    pub fn counters(&self) -> &[u64] {
        &self.counters
    }

    /// Host memory.
    pub fn host(&self) -> &[u8] {
        &self.host
    }

    /// Host memory, for the host to fill.
    pub fn host_mut(&mut self) -> &mut [u8] {
        &mut self.host
    }

    /// HPU memory.
    pub fn hpu_mem(&self) -> &[u64] {
        &self.hpu_mem
    }

    /// Record every handler run (off by default).
    pub fn set_trace(&mut self, on: bool) {
        self.trace = on.then(Vec::new);
    }

    /// The handler runs recorded so far.
    pub fn trace(&self) -> &[HandlerRun] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// Take the completed messages.
    pub fn poll_completions(&mut self) -> impl Iterator<Item = MessageDone> + '_ {
        self.completions.drain(..)
    }

    /// The control plane (the match table's entries).
    pub fn control(&mut self) -> &mut dyn ControlPlane {
        &mut self.prog.program
    }

    /// Send `len` bytes of host memory at `addr` to `dst` as a new message
    /// (the host's own put: the RDMA baseline and the start of a ping-pong).
    /// The frames leave from `now` on. False if the range is outside host memory.
    pub fn post_put(&mut self, now: Time, dst: u32, match_bits: u64, addr: u64, len: u32) -> bool {
        if addr
            .checked_add(u64::from(len))
            .is_none_or(|e| e > self.host.len() as u64)
        {
            return false;
        }
        self.put_from_host(now, dst, match_bits, addr, len);
        true
    }

    fn put_from_host(&mut self, at: Time, dst: u32, match_bits: u64, addr: u64, len: u32) {
        let msg_id = self.next_msg_id;
        self.next_msg_id = self.next_msg_id.wrapping_add(1);
        let per = self.cfg.mtu_payload as usize;
        let n = (len as usize).div_ceil(per).max(1);
        for i in 0..n {
            let off = i * per;
            let end = (off + per).min(len as usize);
            let hdr = SpinHeader {
                src: self.cfg.node,
                dst,
                msg_id,
                match_bits,
                msg_len: len,
                offset: off as u32,
                seq: i as u32,
                user: addr,
            };
            let a = addr as usize;
            let mut f = self.tx_pool.pop().unwrap_or_default();
            f.clear();
            if wire::emit(&hdr, &self.host[a + off..a + end], &mut f).is_some() {
                self.push_tx(at, f);
            } else {
                self.stats.extern_errors += 1;
            }
        }
        self.stats.puts_from_host += 1;
    }

    fn push_tx(&mut self, ready: Time, f: Vec<u8>) {
        let depart = ready.max(self.tx_free_at);
        let ser = serialization_time(f.len() as u64, self.cfg.link_gbps);
        self.tx_free_at = depart + ser.max(Time::from_ps(self.cfg.tx_gap_ps));
        self.tx.push_back((depart, f));
    }

    fn free_hpu(&self, now: Time) -> Option<usize> {
        self.hpus.iter().position(|t| *t <= now)
    }

    fn eligible(&self, j: &Job, now: Time) -> bool {
        match *j {
            Job::Header { .. } => true,
            // A payload job waits for its header handler; orphans start (and are discarded) at once.
            Job::Payload { ch, .. } => self.channels[ch as usize].as_ref().is_none_or(|c| {
                c.completion_queued || (c.phase != Phase::New && c.header_end <= now)
            }),
            Job::Completion { at, .. } => at <= now,
        }
    }

    /// Start every eligible job that has a free HPU.
    fn pump(&mut self, now: Time) {
        while let Some(h) = self.free_hpu(now) {
            let Some(i) = (0..self.queue.len()).find(|&i| self.eligible(&self.queue[i], now))
            else {
                break;
            };
            let Some(job) = self.queue.remove(i) else {
                break;
            };
            if let Job::Payload { .. } = job {
                self.queued_packets -= 1;
            }
            self.start(job, h, now);
        }
    }

    fn install(&mut self, hdr: &SpinHeader, now: Time) -> Option<u32> {
        let key = (hdr.src, hdr.msg_id);
        if let Some(&c) = self.by_key.get(&key) {
            return Some(c);
        }
        if self.done_keys.contains(&key) {
            self.stats.late_packets += 1;
            return None;
        }
        let Some(c) = self.free_channels.pop() else {
            self.stats.message_table_full += 1;
            return None;
        };
        // Duplicate detection by seq, sized for packets of at least 64 bytes.
        let words = (hdr.msg_len as usize / 64).div_ceil(64).clamp(1, 1024);
        self.channels[c as usize] = Some(Channel {
            hdr: *hdr,
            phase: Phase::New,
            header_queued: false,
            header_end: Time::ZERO,
            state: vec![0; self.prog.slots.state.len()],
            accounted: 0,
            dropped: 0,
            flow_control: false,
            last_end: now,
            deadline: now + Time::from_ns(self.cfg.timeout_ns),
            seen: vec![0; words],
            completion_queued: false,
            timed_out: false,
        });
        self.by_key.insert(key, c);
        self.stats.messages += 1;
        let deadline = now + Time::from_ns(self.cfg.timeout_ns);
        self.next_expiry = Some(self.next_expiry.map_or(deadline, |t| t.min(deadline)));
        Some(c)
    }

    fn on_spin_packet(&mut self, now: Time, frame: &[u8]) {
        let p = match wire::parse(frame) {
            Ok(p) => p,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        if p.hdr.dst != self.cfg.node {
            self.stats.not_for_us += 1;
            return;
        }
        self.stats.payload_bytes_in += u64::from(p.len);
        let Some(ch) = self.install(&p.hdr, now) else {
            return;
        };
        let len = u64::from(p.len);
        let c = self.channels[ch as usize].as_mut().expect("installed");
        if c.hdr.msg_len != p.hdr.msg_len || c.hdr.match_bits != p.hdr.match_bits {
            // A packet whose message header disagrees with its message's.
            self.stats.inconsistent_packets += 1;
            return;
        }
        // Duplicates (by seq, for the first 64 Ki packets).
        let (w, b) = ((p.hdr.seq / 64) as usize, p.hdr.seq % 64);
        if let Some(word) = c.seen.get_mut(w) {
            if *word & (1 << b) != 0 {
                self.stats.duplicate_packets += 1;
                return;
            }
            *word |= 1 << b;
        }
        match c.phase {
            Phase::Dropped => {
                c.accounted += len;
                c.dropped += len;
                self.maybe_complete(ch, now);
                return;
            }
            Phase::Proceed => {
                let addr = c.hdr.user.wrapping_add(u64::from(p.hdr.offset));
                c.accounted += len;
                self.deposit(now, addr, wire::payload(frame, &p));
                self.maybe_complete(ch, now);
                return;
            }
            Phase::New | Phase::Process => {}
        }
        if !c.header_queued {
            c.header_queued = true;
            self.queue.push_back(Job::Header { ch });
        }
        // The packet waits in a buffer (or runs at once).
        let Some(buf) = self.free_bufs.pop() else {
            self.flow_drop(ch, len, now);
            return;
        };
        let b = &mut self.bufs[buf as usize];
        b.bytes.clear();
        b.bytes.extend_from_slice(wire::payload(frame, &p));
        b.offset = p.hdr.offset;
        b.seq = p.hdr.seq;
        self.queue.push_back(Job::Payload { ch, buf });
        self.queued_packets += 1;
        self.pump(now);
        if self.queued_packets > self.cfg.buffer_packets {
            // No HPU took it and there is no room: drop this packet.
            if let Some(i) = self
                .queue
                .iter()
                .rposition(|j| *j == Job::Payload { ch, buf })
            {
                self.queue.remove(i);
                self.queued_packets -= 1;
                self.free_bufs.push(buf);
                self.flow_drop(ch, len, now);
            }
        }
    }

    fn flow_drop(&mut self, ch: u32, len: u64, now: Time) {
        self.stats.flow_control_drops += 1;
        self.stats.flow_control_bytes += len;
        if let Some(c) = self.channels[ch as usize].as_mut() {
            c.accounted += len;
            c.dropped += len;
            c.flow_control = true;
        }
        self.maybe_complete(ch, now);
    }

    fn deposit(&mut self, now: Time, addr: u64, data: &[u8]) {
        let end = addr.checked_add(data.len() as u64);
        match end {
            Some(e) if e <= self.host.len() as u64 => {
                self.host[addr as usize..e as usize].copy_from_slice(data);
                self.stats.dma_writes += 1;
                self.stats.dma_write_bytes += data.len() as u64;
                self.dma.write(now, data.len() as u64);
            }
            _ => self.stats.extern_errors += 1,
        }
    }

    /// Queue the completion once every byte is accounted for and the header ran.
    fn maybe_complete(&mut self, ch: u32, now: Time) {
        let Some(c) = self.channels[ch as usize].as_mut() else {
            return;
        };
        if c.completion_queued || c.accounted < u64::from(c.hdr.msg_len) {
            return;
        }
        if c.phase == Phase::New && c.header_queued {
            // The header handler has not run yet; it queues the completion.
            return;
        }
        c.completion_queued = true;
        let at = c.last_end.max(c.header_end).max(now);
        self.queue.push_back(Job::Completion { ch, at });
    }

    fn start(&mut self, job: Job, hpu: usize, now: Time) {
        let (ch, kind) = match job {
            Job::Header { ch } => (ch, HandlerKind::Header),
            Job::Payload { ch, .. } => (ch, HandlerKind::Payload),
            Job::Completion { ch, .. } => (ch, HandlerKind::Completion),
        };
        let Some(c) = self.channels[ch as usize].as_ref() else {
            if let Job::Payload { buf, .. } = job {
                self.free_bufs.push(buf);
            }
            return;
        };
        if kind == HandlerKind::Header && c.phase != Phase::New {
            return; // the message timed out first
        }
        // A payload job of a message the header dropped or proceeded, or
        // that timed out: no handler.
        if let Job::Payload { buf, .. } = job {
            if c.phase != Phase::Process || c.completion_queued {
                self.no_handler(ch, buf, now);
                return;
            }
        }
        let (hdr, dropped, flow, timed_out) = (c.hdr, c.dropped, c.flow_control, c.timed_out);
        let s = &self.prog.slots;
        let st = &mut self.st;
        st.reset();
        st.set(s.src, u128::from(hdr.src));
        st.set(s.msg_id, u128::from(hdr.msg_id));
        st.set(s.match_bits, u128::from(hdr.match_bits));
        st.set(s.length, u128::from(hdr.msg_len));
        st.set(s.user, u128::from(hdr.user));
        st.set(s.node, u128::from(self.cfg.node));
        st.set(s.hpu, hpu as u128);
        let first_rc = if kind == HandlerKind::Header {
            rc::PROCESS_DATA
        } else {
            rc::SUCCESS
        };
        st.set(s.rc, u128::from(first_rc));
        if kind == HandlerKind::Completion {
            st.set(
                s.dropped_bytes,
                u128::from(dropped.min(u64::from(u32::MAX)) as u32),
            );
            st.set(s.flow_control, u128::from(flow));
            st.set(s.timed_out, u128::from(timed_out));
        }
        for (slot, v) in s.state.iter().zip(&c.state) {
            st.set(*slot, *v);
        }
        let (payload, seq, pl_len) = match job {
            Job::Payload { buf, .. } => {
                let b = &self.bufs[buf as usize];
                st.set(s.offset, u128::from(b.offset));
                st.set(s.pkt_len, b.bytes.len() as u128);
                st.set(s.seq, u128::from(b.seq));
                (Some(buf), b.seq, b.bytes.len() as u64)
            }
            _ => (None, 0, 0),
        };
        let budget = self
            .cfg
            .budget_cycles
            .saturating_add(self.cfg.budget_cycles_per_byte.saturating_mul(pl_len));
        let block = match kind {
            HandlerKind::Header => self.prog.header,
            HandlerKind::Payload => self.prog.payload,
            HandlerKind::Completion => self.prog.completion,
        };
        self.prog.program.reset_ops(budget / self.cfg.cycles_per_op);
        self.prog.program.set_now(now);
        self.sends.clear();
        let pl_bytes = payload.map(|b| std::mem::take(&mut self.bufs[b as usize].bytes));
        let mut env = Env {
            cfg: &self.cfg,
            host: &mut self.host,
            hpu_mem: &mut self.hpu_mem,
            counters: &mut self.counters,
            stats: &mut self.stats,
            payload: pl_bytes.as_deref(),
            sends: &mut self.sends,
            ext_cycles: 0,
            budget,
            dma: &mut self.dma,
            now,
            stopped: false,
        };
        self.prog.program.run(&mut self.st, block, &mut env);
        let (ext, ext_stopped) = (env.ext_cycles, env.stopped);
        let ops = self.prog.program.ops();
        let stopped = ext_stopped || ops.saturating_mul(self.cfg.cycles_per_op) > budget;
        let cycles = if stopped {
            budget
        } else {
            ops * self.cfg.cycles_per_op + ext
        }
        .max(1);
        let end = now + self.clock.cycles(cycles);
        self.hpus[hpu] = end;
        self.stats.handler_ops += ops;
        self.stats.hpu_cycles += cycles;
        if stopped {
            self.stats.budget_exceeded += 1;
        }
        let s = &self.prog.slots;
        let mut rcv = self.st.get(s.rc) as u64;
        if stopped {
            rcv = if kind == HandlerKind::Completion {
                rc::FAIL
            } else {
                rc::DROP
            };
        }
        let c = self.channels[ch as usize].as_mut().expect("checked");
        for (slot, v) in s.state.iter().zip(c.state.iter_mut()) {
            *v = self.st.get(*slot);
        }
        c.last_end = c.last_end.max(end);
        if let Some(t) = self.trace.as_mut() {
            t.push(HandlerRun {
                kind,
                src: hdr.src,
                msg_id: hdr.msg_id,
                seq,
                hpu: hpu as u32,
                start: now,
                end,
                ops,
                cycles,
                rc: rcv,
                stopped,
            });
        }
        // Sends leave when the handler ends.
        for i in 0..self.sends.len() {
            match self.sends[i] {
                Send::FromDevice { dst, match_bits } => {
                    let (Some(b), Some(pl)) = (payload, pl_bytes.as_deref()) else {
                        continue;
                    };
                    let h = SpinHeader {
                        src: self.cfg.node,
                        dst,
                        msg_id: hdr.msg_id,
                        match_bits,
                        msg_len: hdr.msg_len,
                        offset: self.bufs[b as usize].offset,
                        seq,
                        user: hdr.user,
                    };
                    let mut f = self.tx_pool.pop().unwrap_or_default();
                    f.clear();
                    if wire::emit(&h, pl, &mut f).is_some() {
                        self.stats.puts_from_device += 1;
                        self.push_tx(end, f);
                    } else {
                        self.stats.extern_errors += 1;
                    }
                }
                Send::FromHost {
                    dst,
                    match_bits,
                    addr,
                    len,
                } => {
                    let at = end + Time::from_ns(self.cfg.dma_latency_ns);
                    self.put_from_host(at, dst, match_bits, addr, len);
                }
            }
        }
        if let (Some(b), Some(bytes)) = (payload, pl_bytes) {
            self.bufs[b as usize].bytes = bytes;
            self.free_bufs.push(b);
        }
        match kind {
            HandlerKind::Header => {
                self.stats.header_handlers += 1;
                let c = self.channels[ch as usize].as_mut().expect("checked");
                c.header_end = end;
                c.phase = match rcv {
                    rc::DROP => Phase::Dropped,
                    rc::PROCEED => Phase::Proceed,
                    _ => Phase::Process,
                };
                match c.phase {
                    Phase::Dropped => self.stats.messages_dropped += 1,
                    Phase::Proceed => self.stats.messages_proceeded += 1,
                    _ => {}
                }
                // Its queued payload jobs follow the header's verdict when they start.
                self.maybe_complete(ch, now);
            }
            HandlerKind::Payload => {
                self.stats.payload_handlers += 1;
                let c = self.channels[ch as usize].as_mut().expect("checked");
                c.accounted += pl_len;
                if rcv == rc::DROP {
                    c.dropped += pl_len;
                    self.stats.handler_drops += 1;
                }
                self.maybe_complete(ch, now);
            }
            HandlerKind::Completion => {
                self.stats.completion_handlers += 1;
                self.stats.messages_completed += 1;
                if rcv == rc::FAIL {
                    self.stats.messages_failed += 1;
                }
                let c = self.channels[ch as usize].take().expect("checked");
                if c.timed_out {
                    self.stats.messages_timed_out += 1;
                }
                let key = (c.hdr.src, c.hdr.msg_id);
                self.by_key.remove(&key);
                if self.done_keys.len() == self.cfg.max_messages as usize {
                    self.done_keys.pop_front();
                }
                self.done_keys.push_back(key);
                self.free_channels.push(ch);
                self.completions.push_back(MessageDone {
                    src: c.hdr.src,
                    msg_id: c.hdr.msg_id,
                    match_bits: c.hdr.match_bits,
                    length: c.hdr.msg_len,
                    rc: rcv,
                    dropped_bytes: c.dropped.min(u64::from(u32::MAX)) as u32,
                    flow_control: c.flow_control,
                    timed_out: c.timed_out,
                    at: end,
                    dma_done: self.dma.free_at,
                });
            }
        }
    }

    /// A queued packet whose message needs no payload handler: deposited
    /// (PROCEED), dropped (DROP), or already accounted for (timed out).
    fn no_handler(&mut self, ch: u32, buf: u32, now: Time) {
        self.free_bufs.push(buf);
        let Some(c) = self.channels[ch as usize].as_mut() else {
            return;
        };
        if c.completion_queued {
            return;
        }
        let b = &self.bufs[buf as usize];
        let len = b.bytes.len() as u64;
        c.accounted += len;
        if c.phase == Phase::Proceed {
            let addr = c.hdr.user.wrapping_add(u64::from(b.offset));
            let data = std::mem::take(&mut self.bufs[buf as usize].bytes);
            self.deposit(now, addr, &data);
            self.bufs[buf as usize].bytes = data;
        } else {
            c.dropped += len;
        }
        self.maybe_complete(ch, now);
    }

    /// Complete messages whose deadline passed (a scan of the table only
    /// when the earliest deadline is due).
    fn expire(&mut self, now: Time) {
        if self.next_expiry.is_none_or(|t| t > now) {
            return;
        }
        let mut next: Option<Time> = None;
        for ch in 0..self.channels.len() {
            let Some(c) = self.channels[ch].as_mut() else {
                continue;
            };
            if c.completion_queued {
                continue;
            }
            if c.deadline > now {
                next = Some(next.map_or(c.deadline, |t| t.min(c.deadline)));
                continue;
            }
            c.timed_out = true;
            let missing = u64::from(c.hdr.msg_len).saturating_sub(c.accounted);
            c.dropped += missing;
            c.accounted += missing;
            if c.phase == Phase::New {
                // Never got an HPU for the header: the completion still runs.
                c.phase = Phase::Dropped;
            }
            c.completion_queued = true;
            let at = c.last_end.max(c.header_end).max(now);
            self.queue.push_back(Job::Completion { ch: ch as u32, at });
        }
        self.next_expiry = next;
    }

    fn drain_tx(&mut self, now: Time, out: &mut Outputs) {
        while self.tx.front().is_some_and(|(t, _)| *t <= now) {
            let Some((_, f)) = self.tx.pop_front() else {
                break;
            };
            self.stats.frames_out += 1;
            self.stats.bytes_out += f.len() as u64;
            out.push(0, &f);
            self.tx_pool.push(f);
        }
    }

    /// Run until nothing is left to do (for tests and the simulator's
    /// single-NIC experiments), sending frames to `sink` with their times.
    pub fn run_until_idle(&mut self, mut sink: impl FnMut(Time, &[u8])) {
        let mut out = Outputs::new();
        while let Some(t) = self.next_deadline() {
            out.clear();
            self.on_timer(t, &mut out);
            for (_, f) in out.iter() {
                sink(t, f);
            }
        }
    }
}

impl Datapath for SpinNicDev {
    fn on_packet(&mut self, now: Time, _port: u32, frame: &[u8], out: &mut Outputs) {
        self.stats.packets_in += 1;
        if frame.len() > SPIN_FRAME_HEADERS + 9000 {
            self.stats.malformed += 1;
            return;
        }
        self.on_spin_packet(now, frame);
        self.on_timer(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.expire(now);
        self.pump(now);
        self.drain_tx(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        let mut best: Option<Time> = self.tx.front().map(|(t, _)| *t);
        let mut consider = |t: Time| best = Some(best.map_or(t, |b| b.min(t)));
        if !self.queue.is_empty() {
            let hpu_free = self.hpus.iter().copied().min().unwrap_or(Time::ZERO);
            for j in &self.queue {
                let ready = match *j {
                    Job::Header { .. } => Time::ZERO,
                    Job::Payload { ch, .. } => match self.channels[ch as usize].as_ref() {
                        None => Time::ZERO,
                        Some(c) if c.completion_queued => Time::ZERO,
                        Some(c) if c.phase != Phase::New => c.header_end,
                        // Waits for the header job: covered by it.
                        Some(_) => continue,
                    },
                    Job::Completion { at, .. } => at,
                };
                consider(ready.max(hpu_free));
            }
        }
        if let Some(t) = self.next_expiry {
            consider(t);
        }
        best
    }
}
