//! One process of the simulated 2D SpMM: a node holding its tiles of A, B
//! and C in memory registered with its NIC's RDMA responder
//! ([`netsparse_nic::rdma::Responder`], which serves one-sided READ, WRITE
//! and FETCH_ADD against it), and a CPU that runs one task at a time (a
//! tile multiplication or the accumulation of a received partial tile) for
//! the roofline time of [`crate::sim::compute::Rates`].
//!
//! The algorithms share one pipeline of work units: a unit (t, u, k) is
//! C(t, u) += A(t, k)·B(k, u). A unit is *acquired* (from a fixed list, or
//! reserved with a FETCH_ADD on a tile's work counter under work stealing)
//! into one of two slots, its remote tiles are READ into the slot, and the
//! CPU computes it when the data are in. When a computation starts, the
//! next unit is acquired into the other slot, so the next fetches overlap
//! the current computation. A unit whose C tile is another process's is
//! pushed when its computation ends: FETCH_ADD on the owner's queue tail,
//! then WRITE of the partial
//! tile into the queue slot it returned (the last chunk asks for an
//! acknowledgement; the push is complete when it arrives); the owner
//! accumulates a slot once all its bytes arrived.
//!
//! Verbs are PRs (the wire format of [`netsparse_nic::rdma`]); every frame
//! goes through the node's [`PrSender`] and the switches like any other.
//! The responder serves requests at line rate (no per-request cost besides
//! the link). A NAK (a request the target refused) is counted and the
//! first one kept for the report; the process then never finishes.

use std::sync::Arc;

use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
use netsparse_externs::wire::PrRepr;
use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_nic::coll::PrSender;
pub use netsparse_nic::rdma::{
    addr, ADDR_BITS, FADD_REQ, FADD_RESP, NAK, READ_REQ, READ_RESP, WRITE, WRITE_ACK,
};
use netsparse_nic::rdma::{
    decode_reply, Access, RdmaConfig, RdmaError, Refusals, Reply, Requester, Responder, Served,
};

use super::data::{accumulate, multiply_into};
use super::{Alg, Geom};
use crate::sim::rng::Xoshiro256;

/// Region of A's tile.
pub const REG_A: u8 = 1;
/// Region of B's tile.
pub const REG_B: u8 = 2;
/// Region of the queue of incoming partial C tiles.
pub const REG_QUEUE: u8 = 3;
/// Region of the 8-byte counters: word 0 the queue tail, word 1 the
/// tile's work counter.
pub const REG_COUNTERS: u8 = 4;

const TAG_READ: u32 = 1 << 28;
const TAG_RESERVE: u32 = 2 << 28;
const TAG_PUSH: u32 = 3 << 28;
const TAG_WRITE: u32 = 4 << 28;
const TAG_KIND: u32 = 0xf << 28;

/// A process's counters and outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProcStats {
    /// CPU time in tile multiplications, ps.
    pub compute_ps: u64,
    /// CPU time accumulating received partial tiles, ps.
    pub accum_ps: u64,
    /// When its part was done, ps: its C tile complete and its last
    /// computation finished and pushed (reservations that found no work
    /// after that do not count); 0 if it never ended with nothing left to
    /// do and a complete C tile.
    pub finish_ps: u64,
    /// Units it computed.
    pub units: u64,
    /// Units of its C tile it computed or accumulated.
    pub contributions: u64,
    /// READ requests sent.
    pub reads: u64,
    /// READ response payload bytes received.
    pub read_bytes: u64,
    /// WRITE payload bytes sent.
    pub write_bytes: u64,
    /// FETCH_ADDs sent.
    pub fetch_adds: u64,
    /// Reservations that found a counter exhausted.
    pub failed_steals: u64,
    /// Requests its responder refused (every reason; NAK'd).
    pub bad_access: u64,
    /// Requests its responder refused, per reason.
    pub refused: Refusals,
    /// WRITE acknowledgements received.
    pub write_acks: u64,
    /// NAKs received: requests of this process that a target refused.
    pub naks: u64,
    /// PRs it did not expect (unknown verb, tag or state).
    pub unexpected: u64,
    /// Fetched tiles that did not decode.
    pub decode_errors: u64,
    /// Malformed frames.
    pub malformed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Empty,
    Reserving,
    Fetching,
    Ready,
}

#[derive(Debug)]
struct Slot {
    state: SlotState,
    unit: (u32, u32, u32),
    seq: u64,
    a: Vec<u8>,
    b: Vec<u8>,
    left: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Task {
    Compute(usize),
    Accumulate(usize),
}

/// A process (see the module docs).
#[derive(Debug)]
pub struct Proc {
    me: u32,
    t: u32,
    u: u32,
    geo: Arc<Geom>,
    /// The NIC's RDMA responder: A, B, the queue and the counters live in
    /// its registered regions.
    nic: Responder,
    req: Requester,
    /// Bytes of one queue slot.
    slot_bytes: usize,
    queue_fill: Vec<u64>,
    ready_acc: Vec<usize>,
    c: Vec<u32>,
    slots: [Slot; 2],
    next_seq: u64,
    /// The static units left (s-c, s-a), in order, reversed.
    list: Vec<(u32, u32, u32)>,
    /// Work stealing: tiles to reserve from, in order, and the position.
    victims: Vec<u32>,
    victim: usize,
    out_of_work: bool,
    busy: Option<(Time, Task)>,
    pushes: Vec<Option<Vec<u8>>>,
    /// Pushes whose WRITE is not acknowledged yet.
    writes_unacked: u64,
    first_nak: Option<(u32, Reply)>,
    free_bufs: Vec<Vec<u8>>,
    partial: Vec<u32>,
    started: bool,
    done: bool,
    c_done_ps: u64,
    last_work_ps: u64,
    tx: PrSender,
    deconcat: Deconcatenator,
    stats: ProcStats,
}

fn pad(bytes: u64, chunk: u64) -> u64 {
    bytes.div_ceil(chunk).max(1) * chunk
}

impl Proc {
    /// Process `me` (tile (me / g, me mod g)) with its own tiles of A and B
    /// in memory layout, registered with its responder.
    pub fn new(
        me: u32,
        geo: Arc<Geom>,
        a_tile: Vec<u8>,
        b_tile: Vec<u8>,
        tx: PrSender,
    ) -> Result<Proc, RdmaError> {
        let g = geo.g;
        let (t, u) = (me / g, me % g);
        let ch = u64::from(geo.chunk);
        let mut a_mem = a_tile;
        a_mem.resize(pad(a_mem.len() as u64, ch) as usize, 0);
        let mut b_mem = b_tile;
        b_mem.resize(pad(b_mem.len() as u64, ch) as usize, 0);
        let c_words = geo.tile_rows(t) as usize * geo.tile_k(u) as usize;
        let queue_slots = if geo.alg == Alg::StationaryC { 0 } else { g };
        let cpad = pad(4 * c_words as u64, ch);
        let mut nic = Responder::new(RdmaConfig {
            node: me,
            chunk: geo.chunk,
            nak: true,
        })?;
        nic.register(REG_A, a_mem, Access::READ)?;
        nic.register(REG_B, b_mem, Access::READ)?;
        if queue_slots > 0 {
            let q = vec![0; (u64::from(queue_slots) * cpad) as usize];
            nic.register(REG_QUEUE, q, Access::WRITE)?;
        }
        // Word 0: the queue tail; word 1: the tile's work counter.
        nic.register(REG_COUNTERS, vec![0; 16], Access::ATOMIC)?;
        let list = match geo.alg {
            Alg::StationaryC => (0..g).rev().map(|s| (t, u, (t + u + s) % g)).collect(),
            Alg::StationaryA => (0..g).rev().map(|s| (t, (t + u + s) % g, u)).collect(),
            _ => Vec::new(),
        };
        let victims = match geo.alg {
            Alg::StealRandom | Alg::StealLocal => {
                let mut rng = Xoshiro256::seed_from_u64(geo.seed ^ (u64::from(me) << 32));
                let mut near: Vec<u32> = Vec::new();
                let mut far: Vec<u32> = Vec::new();
                for p in (0..g * g).filter(|&p| p != me) {
                    let local = p / g == t || p % g == u;
                    if geo.alg == Alg::StealLocal && local {
                        near.push(p);
                    } else {
                        far.push(p);
                    }
                }
                for v in [&mut near, &mut far] {
                    for i in (1..v.len()).rev() {
                        v.swap(i, rng.below(i as u64 + 1) as usize);
                    }
                }
                let mut all = vec![me];
                all.extend(near);
                all.extend(far);
                all
            }
            _ => Vec::new(),
        };
        let slot = || Slot {
            state: SlotState::Empty,
            unit: (0, 0, 0),
            seq: 0,
            a: Vec::new(),
            b: Vec::new(),
            left: 0,
        };
        Ok(Proc {
            me,
            t,
            u,
            nic,
            req: Requester {
                node: me,
                chunk: geo.chunk,
            },
            slot_bytes: cpad as usize,
            queue_fill: vec![0; queue_slots as usize],
            ready_acc: Vec::new(),
            c: vec![0; c_words],
            slots: [slot(), slot()],
            next_seq: 0,
            list,
            victims,
            victim: 0,
            out_of_work: false,
            busy: None,
            pushes: Vec::new(),
            writes_unacked: 0,
            first_nak: None,
            free_bufs: Vec::new(),
            partial: Vec::new(),
            started: false,
            done: false,
            c_done_ps: 0,
            last_work_ps: 0,
            tx,
            deconcat: Deconcatenator::new(DeconcatConfig::default()),
            stats: ProcStats::default(),
            geo,
        })
    }

    /// Its counters.
    pub fn stats(&self) -> ProcStats {
        let refused = self.nic.stats().refused;
        ProcStats {
            malformed: self.stats.malformed + self.tx.stats().refused,
            bad_access: refused.total(),
            refused,
            finish_ps: if self.done {
                self.c_done_ps.max(self.last_work_ps).max(1)
            } else {
                0
            },
            ..self.stats
        }
    }

    /// Its C tile (row-major words).
    pub fn c_tile(&self) -> &[u32] {
        &self.c
    }

    /// The first NAK it received: (the refusing node, the NAK).
    pub fn first_nak(&self) -> Option<(u32, Reply)> {
        self.first_nak
    }

    /// Its responder (registered memory and counters).
    pub fn responder(&self) -> &Responder {
        &self.nic
    }

    /// Get the next unit into slot `s` (empty), or find there is none.
    fn acquire(&mut self, now: Time, s: usize) {
        if self.out_of_work {
            return;
        }
        match self.geo.alg {
            Alg::StationaryC | Alg::StationaryA => match self.list.pop() {
                Some(unit) => self.fetch(now, s, unit),
                None => self.out_of_work = true,
            },
            Alg::StealRandom | Alg::StealLocal => {
                self.slots[s].state = SlotState::Reserving;
                self.reserve(now, s);
            }
        }
    }

    /// Reserve the next unit of the current victim tile.
    fn reserve(&mut self, now: Time, s: usize) {
        let g = self.geo.g;
        loop {
            let Some(&v) = self.victims.get(self.victim) else {
                self.slots[s].state = SlotState::Empty;
                self.out_of_work = true;
                return;
            };
            if v != self.me {
                // Remote: FETCH_ADD(+1) on the victim's work counter.
                let a = addr(REG_COUNTERS, 8);
                self.req
                    .fetch_add(&mut self.tx, now, v, a, 1, TAG_RESERVE | s as u32);
                self.stats.fetch_adds += 1;
                return;
            }
            // Own tile: a local atomic.
            let Ok(old) = self.nic.local_fetch_add(addr(REG_COUNTERS, 8), 1) else {
                self.stats.unexpected += 1;
                self.victim += 1;
                continue;
            };
            if old < u64::from(g) {
                let (t, u) = (self.t, self.u);
                self.fetch(now, s, (t, u, (t + u + old as u32) % g));
                return;
            }
            self.victim += 1;
        }
    }

    /// The tiles of `unit` into slot `s`: local ones copied, remote ones READ.
    fn fetch(&mut self, now: Time, s: usize, unit: (u32, u32, u32)) {
        let g = self.geo.g;
        let (t, u, k) = unit;
        let ch = u64::from(self.geo.chunk);
        self.next_seq += 1;
        let seq = self.next_seq;
        let mut left = 0;
        for (which, owner, bytes) in [
            (0u32, t * g + k, self.geo.a_bytes(t, k)),
            (1u32, k * g + u, self.geo.b_bytes(k, u)),
        ] {
            let padded = pad(bytes, ch);
            let slot = &mut self.slots[s];
            let buf = if which == 0 { &mut slot.a } else { &mut slot.b };
            buf.clear();
            let region = if which == 0 { REG_A } else { REG_B };
            if owner == self.me {
                buf.extend_from_slice(self.nic.memory(region).unwrap_or(&[]));
                continue;
            }
            buf.resize(padded as usize, 0);
            let chunks = padded / ch;
            let tag = TAG_READ | (s as u32) << 1 | which;
            self.req
                .read(&mut self.tx, now, owner, addr(region, 0), chunks, tag);
            self.stats.reads += 1;
            left += chunks as u32;
        }
        let slot = &mut self.slots[s];
        slot.unit = unit;
        slot.seq = seq;
        slot.left = left;
        slot.state = if left == 0 {
            SlotState::Ready
        } else {
            SlotState::Fetching
        };
    }

    /// Start the next CPU task if the CPU is free.
    fn schedule(&mut self, now: Time) {
        if self.busy.is_some() {
            return;
        }
        if let Some(q) = self.ready_acc.pop() {
            let words = self.c.len() as u64;
            // At least 1 ps, so that a task always ends after it started.
            let d = self.geo.rates.add_time(words).max(Time::from_ps(1));
            self.stats.accum_ps += d.as_ps();
            self.busy = Some((now + d, Task::Accumulate(q)));
            return;
        }
        let ready = (0..2)
            .filter(|&s| self.slots[s].state == SlotState::Ready)
            .min_by_key(|&s| self.slots[s].seq);
        let Some(s) = ready else {
            self.check_finished();
            return;
        };
        let (t, u, k) = self.slots[s].unit;
        let (rows, kc, inner) = (
            self.geo.tile_rows(t),
            self.geo.tile_k(u),
            self.geo.inner_rows(k),
        );
        let own = t == self.t && u == self.u;
        let slot = &self.slots[s];
        let res = if own {
            multiply_into(&slot.a, &slot.b, inner, kc, &mut self.c)
        } else {
            self.partial.clear();
            self.partial.resize(rows as usize * kc as usize, 0);
            multiply_into(&slot.a, &slot.b, inner, kc, &mut self.partial)
        };
        let nnz = res.unwrap_or_else(|| {
            self.stats.decode_errors += 1;
            0
        });
        let d = self
            .geo
            .rates
            .spmm_time(nnz, u64::from(rows), kc)
            .max(Time::from_ps(1));
        self.stats.compute_ps += d.as_ps();
        self.stats.units += 1;
        self.busy = Some((now + d, Task::Compute(s)));
        // Overlap: the next unit's fetches start with this computation.
        let other = 1 - s;
        if self.slots[other].state == SlotState::Empty {
            self.acquire(now, other);
        }
    }

    /// Reserve a slot in `owner`'s queue for the partial tile just computed.
    fn start_push(&mut self, now: Time, owner: u32) {
        let mut buf = self.free_bufs.pop().unwrap_or_default();
        buf.clear();
        for w in &self.partial {
            buf.extend_from_slice(&w.to_le_bytes());
        }
        let i = match self.pushes.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.pushes.push(None);
                self.pushes.len() - 1
            }
        };
        self.pushes[i] = Some(buf);
        let a = addr(REG_COUNTERS, 0);
        self.req
            .fetch_add(&mut self.tx, now, owner, a, 1, TAG_PUSH | i as u32);
        self.stats.fetch_adds += 1;
    }

    fn finish_task(&mut self, now: Time) {
        let Some((end, task)) = self.busy else { return };
        if end > now {
            return;
        }
        self.busy = None;
        match task {
            Task::Compute(s) => {
                let (t, u, _) = self.slots[s].unit;
                if t == self.t && u == self.u {
                    self.contributed(now);
                } else {
                    // The partial tile exists once its computation ends
                    // (`partial` holds it: one task at a time).
                    self.start_push(now, t * self.geo.g + u);
                }
                self.last_work_ps = now.as_ps();
                self.slots[s].state = SlotState::Empty;
                let other = 1 - s;
                if self.slots[other].state == SlotState::Empty {
                    self.acquire(now, s);
                }
            }
            Task::Accumulate(q) => {
                let cpad = self.slot_bytes;
                let queue = self.nic.memory(REG_QUEUE).unwrap_or(&[]);
                let part = queue.get(q * cpad..(q + 1) * cpad).unwrap_or(&[]);
                if accumulate(&mut self.c, part) {
                    self.contributed(now);
                } else {
                    self.stats.decode_errors += 1;
                }
            }
        }
    }

    fn contributed(&mut self, now: Time) {
        self.stats.contributions += 1;
        if self.stats.contributions == u64::from(self.geo.g) {
            self.c_done_ps = now.as_ps();
        }
    }

    fn check_finished(&mut self) {
        if !self.done
            && self.out_of_work
            && self.busy.is_none()
            && self.slots.iter().all(|s| s.state == SlotState::Empty)
            && self.pushes.iter().all(Option::is_none)
            && self.writes_unacked == 0
            && self.stats.contributions == u64::from(self.geo.g)
        {
            self.done = true;
        }
    }

    /// One received PR: a request is served by the responder, an answer
    /// goes to the requester side.
    fn on_pr(&mut self, now: Time, pr: &PrRepr, payload: &[u8]) {
        match self.nic.serve(now, &mut self.tx, pr, payload) {
            Served::Answered | Served::Refused(_) => {}
            Served::Wrote {
                region,
                offset,
                len,
            } => {
                let q = offset as usize / self.slot_bytes.max(1);
                if region != REG_QUEUE || q >= self.queue_fill.len() {
                    self.stats.unexpected += 1;
                    return;
                }
                self.queue_fill[q] += u64::from(len);
                if self.queue_fill[q] == self.slot_bytes as u64 {
                    self.ready_acc.push(q);
                }
            }
            Served::Reply => match decode_reply(pr.tid, pr.idx) {
                Some(r) => self.on_reply(now, pr.src, pr.req_id, r, payload),
                None => self.stats.unexpected += 1,
            },
        }
    }

    fn on_reply(&mut self, now: Time, src: u32, tag: u32, reply: Reply, payload: &[u8]) {
        let ch = self.geo.chunk as usize;
        match reply {
            Reply::ReadChunk { address } => {
                let s = ((tag >> 1) & 1) as usize;
                let which = tag & 1;
                let slot = &mut self.slots[s];
                let off = (address & 0xffff_ffff) as usize;
                let buf = if which == 0 { &mut slot.a } else { &mut slot.b };
                if tag & TAG_KIND != TAG_READ
                    || slot.state != SlotState::Fetching
                    || slot.left == 0
                    || off + ch > buf.len()
                    || payload.len() != ch
                {
                    self.stats.unexpected += 1;
                    return;
                }
                buf[off..off + ch].copy_from_slice(payload);
                slot.left -= 1;
                self.stats.read_bytes += ch as u64;
                if slot.left == 0 {
                    slot.state = SlotState::Ready;
                }
            }
            Reply::FetchAdd { old } => match tag & TAG_KIND {
                TAG_RESERVE => {
                    let s = (tag & 1) as usize;
                    if self.slots[s].state != SlotState::Reserving {
                        self.stats.unexpected += 1;
                        return;
                    }
                    let g = self.geo.g;
                    let Some(&v) = self.victims.get(self.victim) else {
                        self.stats.unexpected += 1;
                        return;
                    };
                    if old < u64::from(g) {
                        let (t, u) = (v / g, v % g);
                        self.fetch(now, s, (t, u, (t + u + old as u32) % g));
                    } else {
                        self.stats.failed_steals += 1;
                        self.victim += 1;
                        self.reserve(now, s);
                    }
                }
                TAG_PUSH => {
                    let i = (tag & 0xffff) as usize;
                    let Some(buf) = self.pushes.get_mut(i).and_then(Option::take) else {
                        self.stats.unexpected += 1;
                        return;
                    };
                    let Some(base) = old
                        .checked_mul(self.slot_bytes as u64)
                        .filter(|&b| b <= u64::from(u32::MAX))
                    else {
                        self.stats.unexpected += 1;
                        return;
                    };
                    let a = addr(REG_QUEUE, base as u32);
                    let chunks = self.req.write(&mut self.tx, now, src, a, &buf, TAG_WRITE);
                    self.stats.write_bytes += chunks * ch as u64;
                    self.writes_unacked += 1;
                    self.free_bufs.push(buf);
                }
                _ => self.stats.unexpected += 1,
            },
            Reply::WriteAck { .. } => {
                if tag != TAG_WRITE || self.writes_unacked == 0 {
                    self.stats.unexpected += 1;
                    return;
                }
                self.writes_unacked -= 1;
                self.stats.write_acks += 1;
                self.last_work_ps = self.last_work_ps.max(now.as_ps());
            }
            Reply::Nak { .. } => {
                self.stats.naks += 1;
                self.first_nak.get_or_insert((src, reply));
            }
        }
    }

    fn pump(&mut self, now: Time, out: &mut Outputs) {
        self.finish_task(now);
        self.schedule(now);
        self.check_finished();
        self.tx.flush(now);
        self.tx.emit(now, out);
    }
}

impl Datapath for Proc {
    fn on_packet(&mut self, now: Time, _port: u32, frame: &[u8], out: &mut Outputs) {
        match self.deconcat.frame(frame) {
            Ok(d) => {
                for v in d.prs {
                    self.on_pr(now, &v.repr(), v.payload);
                }
            }
            Err(_) => self.stats.malformed += 1,
        }
        self.pump(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        if !self.started {
            self.started = true;
            self.acquire(now, 0);
        }
        self.tx.on_timer(now);
        self.pump(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        if !self.started {
            return Some(Time::ZERO);
        }
        let busy = self.busy.map(|b| b.0);
        match (busy, self.tx.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
