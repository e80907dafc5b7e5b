//! The Concatenator (§6.1.2, Figure 7; virtualised queues of §7.2).
//!
//! PRs are collected in *Concatenation Queues* (CQs), one per [`CqKey`]
//! (PR type, destination node, egress port — the port keeps a switch's ports
//! apart). A CQ holds at most one MTU's worth of PRs, in wire format, ready to
//! be wrapped in a frame with [`crate::wire::FrameBuilder`]. A CQ is flushed
//! (handed to the caller's `out` callback as a [`Flushed`]) when:
//!
//! * **full**: it reaches the largest PR count that fits the MTU for its
//!   property length ([`crate::wire::max_prs`]); it leaves at once, and the
//!   next PR for the key starts a new CQ;
//! * **expired**: its first PR has waited `delay` (DelayCycles × clock
//!   period) — the CQ leaves at exactly `first arrival + delay`;
//! * **property length change**: a PR whose `prop_len` differs from the
//!   CQ's flushes the CQ first and starts a new one (a packet has one
//!   `prop_len`; kernels use one property length, so this is rare and keeps
//!   one CQ per key as in the paper);
//! * **evicted**: a new CQ is needed but the queue limit (or, with virtual
//!   CQs, the chunk pool) is exhausted, so the oldest CQ is forced out;
//! * **forced**: [`Concatenator::flush_all`] (end of input).
//!
//! The *Expiration Time Queue* (ETQ) is a FIFO of `{cq, generation,
//! expires_at}` entries in CQ-creation order; with a constant delay and a
//! non-decreasing clock that is also expiry order, so only the head is ever
//! checked. A CQ that leaves for another reason bumps its generation, which
//! invalidates its ETQ entry (the head is kept valid eagerly, so
//! [`Concatenator::next_deadline`] is O(1)). CQs that expire at the same
//! instant leave in ETQ order, i.e. in order of their first PR.
//!
//! Time never goes backwards inside the Concatenator: a `now` earlier than
//! one already seen is treated as the latest seen.
//!
//! # Virtualised CQs (§7.2)
//!
//! With [`VirtualCqConfig`], CQ bytes live in a fixed pool of small physical
//! chunks (e.g. 128 B) linked per key into a virtual CQ; a PR may straddle
//! two chunks. A virtual CQ is emitted as one packet under the same rules,
//! its chunks then return to the pool. When the pool cannot hold the next PR,
//! the oldest virtual CQ is forced out (counted in
//! [`ConcatStats::pool_exhausted`]).
//!
//! No allocation per PR or per packet in steady state: CQ buffers, chunk
//! lists and the gather buffer are reused.

use std::collections::VecDeque;

use thiserror::Error;

use crate::fxhash::{map_with_capacity, FxHashMap};
use crate::time::{Clock, Time};
use crate::wire::{
    max_prs, pr_capacity, pr_stride, ConcatRepr, DeviceAddr, FrameBuilder, FrameHeader, PrRepr,
    PrType, WireError, DEFAULT_MTU, PR_HEADER_LEN,
};

/// The queue a PR goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CqKey {
    /// Read or response.
    pub pr_type: PrType,
    /// Destination node.
    pub dst: u32,
    /// Egress port the packet will leave on (0 on a single-port NIC).
    pub port: u32,
}

/// Virtualised-CQ pool geometry (§7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtualCqConfig {
    /// Bytes per physical chunk (e.g. 128).
    pub chunk_bytes: usize,
    /// Chunks in the pool.
    pub chunks: usize,
}

/// Concatenator parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConcatConfig {
    /// IP MTU: a flushed CQ plus 54 bytes of IPv4/UDP/BTH/concatenation
    /// headers never exceeds it.
    pub mtu: usize,
    /// Longest time a PR waits for others (DelayCycles × clock period).
    pub delay: Time,
    /// Most CQs open at once; opening one more evicts the oldest.
    pub max_queues: usize,
    /// Use virtualised CQs with this pool instead of one MTU buffer per CQ.
    pub virtual_cqs: Option<VirtualCqConfig>,
}

impl ConcatConfig {
    /// Queue limit of the defaults: both types for 2048 destinations.
    pub const DEFAULT_MAX_QUEUES: usize = 4096;

    /// `cycles` DelayCycles at `clock`, default MTU and queue limit, physical CQs.
    pub const fn with_delay_cycles(cycles: u64, clock: Clock) -> ConcatConfig {
        ConcatConfig {
            mtu: DEFAULT_MTU,
            delay: clock.cycles(cycles),
            max_queues: ConcatConfig::DEFAULT_MAX_QUEUES,
            virtual_cqs: None,
        }
    }

    /// A switch pipe (Table 5): 125 cycles at 2 GHz = 62.5 ns.
    pub const fn switch_default() -> ConcatConfig {
        ConcatConfig::with_delay_cycles(125, Clock::from_mhz(2_000))
    }

    /// A SmartNIC (Table 5): 500 cycles at the SNIC's 2.2 GHz (454 ps
    /// period, so 227 ns).
    pub const fn nic_default() -> ConcatConfig {
        ConcatConfig::with_delay_cycles(500, Clock::from_mhz(2_200))
    }
}

/// Why a CQ left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlushReason {
    /// It reached the MTU.
    Full,
    /// Its first PR's deadline passed.
    Expired,
    /// A PR with another property length arrived for its key.
    PropLenChange,
    /// The queue limit or the chunk pool was exhausted and it was the oldest.
    Evicted,
    /// `flush_all`.
    Forced,
}

/// A CQ leaving as one packet. `prs` borrows the Concatenator's buffer: copy
/// it (e.g. into a frame) inside the callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flushed<'a> {
    /// The CQ's key.
    pub key: CqKey,
    /// Property length of every PR (the concatenation header's `prop_len`).
    pub prop_len: u32,
    /// PRs in `prs`.
    pub num_prs: u32,
    /// Why it left.
    pub reason: FlushReason,
    /// When it leaves: the deadline for expired CQs (even if serviced
    /// late), otherwise the `now` of the call.
    pub at: Time,
    /// When its first PR arrived.
    pub first_at: Time,
    /// The PR headers and payloads, in wire format and arrival order.
    pub prs: &'a [u8],
}

impl Flushed<'_> {
    /// The concatenation header of the packet this CQ becomes.
    pub fn concat_repr(&self) -> ConcatRepr {
        ConcatRepr {
            pr_type: self.key.pr_type,
            dst: self.key.dst,
            prop_len: self.prop_len,
            num_prs: self.num_prs,
        }
    }

    /// Append this CQ to `buf` as one NetSparse frame from device `src` to
    /// the CQ's destination node (addressing convention of [`crate::wire`]),
    /// with BTH sequence number `psn`. Returns the frame length.
    pub fn write_frame(
        &self,
        buf: &mut Vec<u8>,
        src: DeviceAddr,
        psn: u32,
    ) -> Result<usize, WireError> {
        let header = FrameHeader::netsparse(src, self.key.dst, psn)?;
        self.write_frame_with(buf, &header)
    }

    /// Append this CQ to `buf` as one frame with the given lower-layer
    /// `header` (its addresses are used as they are). Returns the frame length.
    pub fn write_frame_with(
        &self,
        buf: &mut Vec<u8>,
        header: &FrameHeader,
    ) -> Result<usize, WireError> {
        let mut b = FrameBuilder::begin(
            buf,
            header,
            self.key.pr_type,
            self.key.dst,
            self.prop_len,
            usize::from(u16::MAX),
        )?;
        b.push_raw_prs(self.prs, self.num_prs)?;
        Ok(b.finish())
    }
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConcatStats {
    /// PRs accepted.
    pub prs_in: u64,
    /// PRs flushed.
    pub prs_out: u64,
    /// Packets (flushes).
    pub packets_out: u64,
    /// PR bytes flushed (headers and payloads).
    pub bytes_out: u64,
    /// Flushes because full.
    pub flushes_full: u64,
    /// Flushes because expired.
    pub flushes_expired: u64,
    /// Flushes because a PR changed the property length.
    pub flushes_prop_len: u64,
    /// Flushes forced by `flush_all`.
    pub flushes_forced: u64,
    /// CQs forced out because the virtual-CQ chunk pool was exhausted.
    pub pool_exhausted: u64,
    /// CQs forced out because `max_queues` CQs were open.
    pub queue_limit: u64,
    /// PRs rejected with an error.
    pub rejected: u64,
}

/// Errors of `push`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ConcatError {
    /// The payload is not `prop_len` bytes (responses) or empty (reads).
    #[error("{pr_type:?} PR with a {got}-byte payload, expected {expected}")]
    PayloadLength {
        /// The PR type.
        pr_type: PrType,
        /// Expected payload bytes.
        expected: usize,
        /// Given payload bytes.
        got: usize,
    },
    /// Not even one PR of this size fits in a packet.
    #[error("a {stride}-byte PR does not fit in an MTU of {mtu}")]
    PrTooLarge {
        /// Bytes per PR.
        stride: usize,
        /// The MTU.
        mtu: usize,
    },
    /// A raw PR whose length is not the stride for its type and `prop_len`.
    #[error("raw PR of {got} bytes, expected {expected}")]
    RawLength {
        /// Expected bytes.
        expected: usize,
        /// Given bytes.
        got: usize,
    },
}

/// Errors of construction.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ConcatConfigError {
    /// The MTU leaves no room for a PR.
    #[error("MTU {mtu} leaves no room for a PR (54 bytes of headers + 18 per PR)")]
    MtuTooSmall {
        /// The MTU.
        mtu: usize,
    },
    /// `max_queues` is 0.
    #[error("max_queues must be at least 1")]
    NoQueues,
    /// The chunk pool cannot hold one full packet, or chunks are empty.
    #[error("virtual CQ pool of {chunks} × {chunk_bytes} B cannot hold one packet of {needed} B")]
    PoolTooSmall {
        /// Chunks.
        chunks: usize,
        /// Bytes per chunk.
        chunk_bytes: usize,
        /// PR bytes of a full packet.
        needed: usize,
    },
}

#[derive(Clone, Copy, Debug)]
struct EtqEntry {
    slot: u32,
    generation: u32,
    expires_at: Time,
}

#[derive(Clone, Debug)]
struct Cq {
    key: CqKey,
    active: bool,
    generation: u32,
    prop_len: u32,
    stride: usize,
    max_prs: u32,
    num_prs: u32,
    first_at: Time,
    expires_at: Time,
    /// Physical mode: the PR bytes.
    buf: Vec<u8>,
    /// Virtual mode: bytes used and the chunks holding them, in order.
    len: usize,
    chunks: Vec<u32>,
}

#[derive(Clone, Debug)]
struct Pool {
    chunk_bytes: usize,
    data: Vec<u8>,
    free: Vec<u32>,
    /// Gather buffer for emitting a virtual CQ contiguously.
    gather: Vec<u8>,
}

/// One Concatenation Point: CQs, the ETQ and (optionally) the chunk pool.
#[derive(Clone, Debug)]
pub struct Concatenator {
    cfg: ConcatConfig,
    capacity: usize,
    slots: Vec<Cq>,
    free_slots: Vec<u32>,
    map: FxHashMap<CqKey, u32>,
    active: usize,
    etq: VecDeque<EtqEntry>,
    pool: Option<Pool>,
    last_now: Time,
    /// Slot of the most recently used key (checked against the slot's key).
    last: u32,
    stats: ConcatStats,
}

impl Concatenator {
    /// A Concatenator with `cfg`.
    pub fn new(cfg: ConcatConfig) -> Result<Concatenator, ConcatConfigError> {
        let capacity = pr_capacity(cfg.mtu.min(usize::from(u16::MAX)));
        if capacity < PR_HEADER_LEN {
            return Err(ConcatConfigError::MtuTooSmall { mtu: cfg.mtu });
        }
        if cfg.max_queues == 0 {
            return Err(ConcatConfigError::NoQueues);
        }
        let pool = match cfg.virtual_cqs {
            None => None,
            Some(v) => {
                if v.chunk_bytes == 0
                    || v.chunks.saturating_mul(v.chunk_bytes) < capacity
                    || v.chunks > u32::MAX as usize
                {
                    return Err(ConcatConfigError::PoolTooSmall {
                        chunks: v.chunks,
                        chunk_bytes: v.chunk_bytes,
                        needed: capacity,
                    });
                }
                Some(Pool {
                    chunk_bytes: v.chunk_bytes,
                    data: vec![0; v.chunks * v.chunk_bytes],
                    free: (0..v.chunks as u32).rev().collect(),
                    gather: Vec::with_capacity(capacity),
                })
            }
        };
        Ok(Concatenator {
            cfg,
            capacity,
            slots: Vec::new(),
            free_slots: Vec::new(),
            map: map_with_capacity(64),
            active: 0,
            etq: VecDeque::with_capacity(64),
            pool,
            last_now: Time::ZERO,
            last: u32::MAX,
            stats: ConcatStats::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ConcatConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &ConcatStats {
        &self.stats
    }

    /// CQs holding PRs.
    pub fn open_queues(&self) -> usize {
        self.active
    }

    /// PRs waiting in CQs.
    pub fn pending_prs(&self) -> u64 {
        self.stats.prs_in - self.stats.prs_out
    }

    /// Free chunks in the virtual-CQ pool (None in physical mode).
    pub fn free_chunks(&self) -> Option<usize> {
        self.pool.as_ref().map(|p| p.free.len())
    }

    /// The earliest CQ deadline, if any CQ holds PRs.
    pub fn next_deadline(&self) -> Option<Time> {
        self.etq.front().map(|e| e.expires_at)
    }

    /// Queue one PR (header `pr`, `payload`: `prop_len` bytes for a
    /// response, empty for a read) for `key` at `now`. CQs due at `now` are
    /// flushed first; then this PR's CQ may flush (full). Flushes go to `out`.
    pub fn push<F: FnMut(Flushed<'_>)>(
        &mut self,
        now: Time,
        key: CqKey,
        prop_len: u32,
        pr: &PrRepr,
        payload: &[u8],
        out: F,
    ) -> Result<(), ConcatError> {
        let expected = pr_stride(key.pr_type, prop_len) - PR_HEADER_LEN;
        if payload.len() != expected {
            self.stats.rejected += 1;
            return Err(ConcatError::PayloadLength {
                pr_type: key.pr_type,
                expected,
                got: payload.len(),
            });
        }
        self.push_parts(now, key, prop_len, &pr.to_bytes(), payload, out)
    }

    /// Queue one PR already in wire format (`raw` = 18-byte header and
    /// payload, e.g. [`crate::wire::PrView::raw`]), without re-encoding.
    pub fn push_raw<F: FnMut(Flushed<'_>)>(
        &mut self,
        now: Time,
        key: CqKey,
        prop_len: u32,
        raw: &[u8],
        out: F,
    ) -> Result<(), ConcatError> {
        let expected = pr_stride(key.pr_type, prop_len);
        if raw.len() != expected {
            self.stats.rejected += 1;
            return Err(ConcatError::RawLength {
                expected,
                got: raw.len(),
            });
        }
        self.push_parts(now, key, prop_len, raw, &[], out)
    }

    /// Flush every CQ whose deadline is at or before `now`, in ETQ order.
    pub fn on_timer<F: FnMut(Flushed<'_>)>(&mut self, now: Time, mut out: F) {
        let now = self.advance(now);
        self.expire(now, &mut out);
    }

    /// Flush every CQ (end of input), in ETQ order, reason `Forced`.
    pub fn flush_all<F: FnMut(Flushed<'_>)>(&mut self, mut out: F) {
        let now = self.last_now;
        while let Some(e) = self.etq.pop_front() {
            if self.is_live(&e) {
                self.flush(e.slot, FlushReason::Forced, now, &mut out);
            }
        }
    }

    fn advance(&mut self, now: Time) -> Time {
        if now > self.last_now {
            self.last_now = now;
        }
        self.last_now
    }

    fn is_live(&self, e: &EtqEntry) -> bool {
        let cq = &self.slots[e.slot as usize];
        cq.active && cq.generation == e.generation
    }

    /// Drop stale entries at the head so the head is live (or the ETQ empty).
    fn clean_head(&mut self) {
        while let Some(e) = self.etq.front() {
            if self.is_live(e) {
                break;
            }
            self.etq.pop_front();
        }
    }

    fn expire<F: FnMut(Flushed<'_>)>(&mut self, now: Time, out: &mut F) {
        while let Some(&e) = self.etq.front() {
            if !self.is_live(&e) {
                self.etq.pop_front();
                continue;
            }
            if e.expires_at > now {
                break;
            }
            self.etq.pop_front();
            self.flush(e.slot, FlushReason::Expired, e.expires_at, out);
        }
    }

    /// Evict the oldest open CQ (the ETQ head), because the chunk pool
    /// (`pool`) or the queue limit is exhausted. False if none is open.
    fn evict_oldest<F: FnMut(Flushed<'_>)>(&mut self, pool: bool, now: Time, out: &mut F) -> bool {
        self.clean_head();
        match self.etq.pop_front() {
            Some(e) => {
                if pool {
                    self.stats.pool_exhausted += 1;
                } else {
                    self.stats.queue_limit += 1;
                }
                self.flush(e.slot, FlushReason::Evicted, now, out);
                true
            }
            None => false,
        }
    }

    /// The open CQ of `key`, if any.
    #[inline]
    fn find(&mut self, key: &CqKey) -> Option<u32> {
        // Consecutive PRs usually share a key (the PRs of one packet).
        if let Some(cq) = self.slots.get(self.last as usize) {
            if cq.active && cq.key == *key {
                return Some(self.last);
            }
        }
        let s = self.map.get(key).copied()?;
        self.last = s;
        Some(s)
    }

    fn push_parts<F: FnMut(Flushed<'_>)>(
        &mut self,
        now: Time,
        key: CqKey,
        prop_len: u32,
        head: &[u8],
        tail: &[u8],
        mut out: F,
    ) -> Result<(), ConcatError> {
        let stride = pr_stride(key.pr_type, prop_len);
        if stride > self.capacity {
            self.stats.rejected += 1;
            return Err(ConcatError::PrTooLarge {
                stride,
                mtu: self.cfg.mtu,
            });
        }
        let now = self.advance(now);
        self.expire(now, &mut out);

        let mut slot = self.find(&key);
        if let Some(s) = slot {
            let cq = &self.slots[s as usize];
            if cq.prop_len != prop_len {
                self.flush(s, FlushReason::PropLenChange, now, &mut out);
                slot = None;
            } else if cq.num_prs >= cq.max_prs {
                // Unreachable with uniform strides (full CQs leave at once),
                // kept as a guard: flush first, then start a new CQ.
                self.flush(s, FlushReason::Full, now, &mut out);
                slot = None;
            }
        }

        // Virtual mode: make room in the pool for this PR's bytes.
        if self.pool.is_some() {
            loop {
                let used = slot.map_or(0, |s| self.slots[s as usize].len);
                let pool = self.pool.as_ref().expect("checked above");
                let held = used.div_ceil(pool.chunk_bytes);
                let need = (used + stride).div_ceil(pool.chunk_bytes) - held;
                if pool.free.len() >= need {
                    break;
                }
                if !self.evict_oldest(true, now, &mut out) {
                    break; // unreachable: the pool holds at least one full packet
                }
                if slot.is_some_and(|s| !self.slots[s as usize].active) {
                    slot = None; // we evicted this key's own CQ
                }
            }
        }

        let s = match slot {
            Some(s) => s,
            None => {
                if self.active >= self.cfg.max_queues {
                    self.evict_oldest(false, now, &mut out);
                }
                let max = max_prs(
                    key.pr_type,
                    prop_len,
                    self.cfg.mtu.min(usize::from(u16::MAX)),
                );
                self.open(now, key, prop_len, stride, max)
            }
        };

        let capacity = self.capacity;
        let cq = &mut self.slots[s as usize];
        match &mut self.pool {
            None => {
                if cq.buf.capacity() < capacity {
                    cq.buf.reserve_exact(capacity - cq.buf.len());
                }
                cq.buf.extend_from_slice(head);
                if !tail.is_empty() {
                    cq.buf.extend_from_slice(tail);
                }
            }
            Some(pool) => {
                for part in [head, tail] {
                    let mut rest = part;
                    while !rest.is_empty() {
                        let off = cq.len % pool.chunk_bytes;
                        if off == 0 {
                            let c = pool.free.pop().expect("pool space reserved above");
                            cq.chunks.push(c);
                        }
                        let chunk = *cq.chunks.last().expect("a chunk was just ensured") as usize;
                        let n = rest.len().min(pool.chunk_bytes - off);
                        let at = chunk * pool.chunk_bytes + off;
                        pool.data[at..at + n].copy_from_slice(&rest[..n]);
                        cq.len += n;
                        rest = &rest[n..];
                    }
                }
            }
        }
        cq.num_prs += 1;
        self.stats.prs_in += 1;
        if cq.num_prs >= cq.max_prs {
            self.flush(s, FlushReason::Full, now, &mut out);
            self.clean_head();
        }
        Ok(())
    }

    /// Open a CQ for `key` in a free slot and enqueue its ETQ entry.
    fn open(&mut self, now: Time, key: CqKey, prop_len: u32, stride: usize, max: u32) -> u32 {
        let expires_at = now + self.cfg.delay;
        let s = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Cq {
                    key,
                    active: false,
                    generation: 0,
                    prop_len,
                    stride,
                    max_prs: max,
                    num_prs: 0,
                    first_at: now,
                    expires_at,
                    buf: Vec::new(),
                    len: 0,
                    chunks: Vec::new(),
                });
                (self.slots.len() - 1) as u32
            }
        };
        let cq = &mut self.slots[s as usize];
        cq.key = key;
        cq.active = true;
        cq.prop_len = prop_len;
        cq.stride = stride;
        cq.max_prs = max;
        cq.num_prs = 0;
        cq.first_at = now;
        cq.expires_at = expires_at;
        cq.len = 0;
        cq.buf.clear();
        cq.chunks.clear();
        self.etq.push_back(EtqEntry {
            slot: s,
            generation: cq.generation,
            expires_at,
        });
        self.map.insert(key, s);
        self.last = s;
        self.active += 1;
        s
    }

    /// Emit slot `s` as one packet and free it. Its ETQ entry becomes stale.
    fn flush<F: FnMut(Flushed<'_>)>(&mut self, s: u32, reason: FlushReason, at: Time, out: &mut F) {
        let cq = &mut self.slots[s as usize];
        let prs: &[u8] = match &mut self.pool {
            None => &cq.buf,
            Some(pool) => {
                pool.gather.clear();
                let mut left = cq.len;
                for &c in &cq.chunks {
                    let n = left.min(pool.chunk_bytes);
                    let at = c as usize * pool.chunk_bytes;
                    pool.gather.extend_from_slice(&pool.data[at..at + n]);
                    left -= n;
                }
                pool.free.extend(cq.chunks.drain(..).rev());
                &pool.gather
            }
        };
        let st = &mut self.stats;
        st.packets_out += 1;
        st.prs_out += u64::from(cq.num_prs);
        st.bytes_out += prs.len() as u64;
        match reason {
            FlushReason::Full => st.flushes_full += 1,
            FlushReason::Expired => st.flushes_expired += 1,
            FlushReason::PropLenChange => st.flushes_prop_len += 1,
            FlushReason::Forced => st.flushes_forced += 1,
            FlushReason::Evicted => {}
        }
        out(Flushed {
            key: cq.key,
            prop_len: cq.prop_len,
            num_prs: cq.num_prs,
            reason,
            at,
            first_at: cq.first_at,
            prs,
        });
        cq.active = false;
        cq.generation = cq.generation.wrapping_add(1);
        cq.num_prs = 0;
        cq.len = 0;
        cq.buf.clear();
        let key = cq.key;
        self.map.remove(&key);
        self.free_slots.push(s);
        self.active -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ConcatPacket;

    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Out {
        key: CqKey,
        prop_len: u32,
        n: u32,
        reason: FlushReason,
        at: Time,
        idxs: Vec<u64>,
    }

    fn collect(v: &mut Vec<Out>) -> impl FnMut(Flushed<'_>) + '_ {
        move |f: Flushed<'_>| {
            // Re-parse the bytes as a concatenation layer to check the wire format.
            let mut layer = ConcatRepr {
                pr_type: f.key.pr_type,
                dst: f.key.dst,
                prop_len: f.prop_len,
                num_prs: f.num_prs,
            }
            .to_bytes()
            .to_vec();
            layer.extend_from_slice(f.prs);
            let p = ConcatPacket::new_checked(&layer[..]).expect("flushed bytes are a valid layer");
            let idxs = p.prs().map(|v| v.idx).collect();
            v.push(Out {
                key: f.key,
                prop_len: f.prop_len,
                n: f.num_prs,
                reason: f.reason,
                at: f.at,
                idxs,
            });
        }
    }

    fn key(t: PrType, dst: u32) -> CqKey {
        CqKey {
            pr_type: t,
            dst,
            port: 0,
        }
    }

    fn pr(idx: u64) -> PrRepr {
        PrRepr {
            src: 1,
            tid: 2,
            idx,
            req_id: idx as u32,
        }
    }

    fn cfg(delay_ns: u64) -> ConcatConfig {
        ConcatConfig {
            mtu: 1500,
            delay: Time::from_ns(delay_ns),
            max_queues: 64,
            virtual_cqs: None,
        }
    }

    #[test]
    fn defaults() {
        assert_eq!(ConcatConfig::switch_default().delay, Time::from_ps(62_500));
        assert_eq!(ConcatConfig::nic_default().delay, Time::from_ps(227_273));
        assert!(Concatenator::new(ConcatConfig { mtu: 60, ..cfg(1) }).is_err());
        assert!(Concatenator::new(ConcatConfig {
            max_queues: 0,
            ..cfg(1)
        })
        .is_err());
        assert!(Concatenator::new(ConcatConfig {
            virtual_cqs: Some(VirtualCqConfig {
                chunk_bytes: 128,
                chunks: 11
            }),
            ..cfg(1)
        })
        .is_err());
    }

    #[test]
    fn same_destination_within_delay_is_one_packet() {
        let mut c = Concatenator::new(cfg(100)).unwrap();
        let mut v = Vec::new();
        let k = key(PrType::Read, 5);
        for (i, t) in [0, 30, 99].into_iter().enumerate() {
            c.push(Time::from_ns(t), k, 64, &pr(i as u64), &[], collect(&mut v))
                .unwrap();
        }
        assert!(v.is_empty());
        assert_eq!(c.next_deadline(), Some(Time::from_ns(100)));
        c.on_timer(Time::from_ns(99), collect(&mut v));
        assert!(v.is_empty());
        c.on_timer(Time::from_ns(100), collect(&mut v));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].idxs, [0, 1, 2]);
        assert_eq!(
            (v[0].reason, v[0].at, v[0].prop_len),
            (FlushReason::Expired, Time::from_ns(100), 64)
        );
        assert_eq!(c.next_deadline(), None);
        assert_eq!(c.open_queues(), 0);
    }

    #[test]
    fn full_cq_flushes_at_once_k16() {
        // K = 16 four-byte values: 64 B properties, 82-byte PRs, 17 per packet.
        let mut c = Concatenator::new(cfg(1_000)).unwrap();
        let mut v = Vec::new();
        let k = key(PrType::Response, 9);
        let payload = [0xAB; 64];
        for i in 0..16 {
            c.push(Time::from_ns(i), k, 64, &pr(i), &payload, collect(&mut v))
                .unwrap();
        }
        assert!(v.is_empty());
        c.push(Time::from_ns(16), k, 64, &pr(16), &payload, collect(&mut v))
            .unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].n, v[0].reason, v[0].at),
            (17, FlushReason::Full, Time::from_ns(16))
        );
        assert_eq!(v[0].idxs, (0..17).collect::<Vec<_>>());
        assert_eq!(crate::wire::max_prs(PrType::Response, 64, 1500), 17);
        assert_eq!(
            c.next_deadline(),
            None,
            "the full CQ's ETQ entry is invalidated"
        );
        // The 18th PR starts a new CQ with its own deadline.
        c.push(Time::from_ns(20), k, 64, &pr(17), &payload, collect(&mut v))
            .unwrap();
        assert_eq!(c.next_deadline(), Some(Time::from_ns(1_020)));
        assert_eq!(c.stats().flushes_full, 1);
        // 80 reads fill a read packet.
        let kr = key(PrType::Read, 9);
        for i in 0..80 {
            c.push(Time::from_ns(30), kr, 64, &pr(i), &[], collect(&mut v))
                .unwrap();
        }
        assert_eq!(v.last().map(|o| (o.key, o.n)), Some((kr, 80)));
    }

    #[test]
    fn lone_pr_leaves_at_arrival_plus_delay() {
        let mut c = Concatenator::new(ConcatConfig::switch_default()).unwrap();
        let mut v = Vec::new();
        let t0 = Time::from_ns(1_000);
        c.push(t0, key(PrType::Read, 1), 16, &pr(7), &[], collect(&mut v))
            .unwrap();
        let d = c.next_deadline().unwrap();
        assert_eq!(d, t0 + Time::from_ps(62_500));
        c.on_timer(d - Time::from_ps(1), collect(&mut v));
        assert!(v.is_empty());
        c.on_timer(d, collect(&mut v));
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].at, v[0].idxs.as_slice()), (d, &[7][..]));
    }

    #[test]
    fn destinations_types_and_ports_never_mix() {
        let mut c = Concatenator::new(cfg(50)).unwrap();
        let mut v = Vec::new();
        let keys = [
            key(PrType::Read, 1),
            key(PrType::Read, 2),
            key(PrType::Response, 1),
            CqKey {
                pr_type: PrType::Read,
                dst: 1,
                port: 3,
            },
        ];
        for round in 0..3u64 {
            for (i, k) in keys.iter().enumerate() {
                let payload = vec![0; if k.pr_type == PrType::Response { 16 } else { 0 }];
                c.push(
                    Time::from_ns(round),
                    *k,
                    16,
                    &pr(round * 10 + i as u64),
                    &payload,
                    collect(&mut v),
                )
                .unwrap();
            }
        }
        c.on_timer(Time::from_ns(50), collect(&mut v));
        assert_eq!(v.len(), 4);
        // ETQ order = order of first PRs.
        for (i, o) in v.iter().enumerate() {
            assert_eq!(o.key, keys[i]);
            assert_eq!(o.idxs, [i as u64, 10 + i as u64, 20 + i as u64]);
        }
    }

    #[test]
    fn expired_then_new_cq() {
        let mut c = Concatenator::new(cfg(10)).unwrap();
        let mut v = Vec::new();
        let k = key(PrType::Read, 4);
        c.push(Time::from_ns(0), k, 8, &pr(1), &[], collect(&mut v))
            .unwrap();
        // The driver is late: the next push at t=25 first flushes the expired
        // CQ (at its deadline, 10), then opens a new one.
        c.push(Time::from_ns(25), k, 8, &pr(2), &[], collect(&mut v))
            .unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].idxs.as_slice(), v[0].at),
            (&[1][..], Time::from_ns(10))
        );
        assert_eq!(c.next_deadline(), Some(Time::from_ns(35)));
        // Time going backwards is clamped.
        c.on_timer(Time::from_ns(3), collect(&mut v));
        assert_eq!(v.len(), 1);
        c.flush_all(collect(&mut v));
        assert_eq!(
            (v[1].idxs.as_slice(), v[1].reason),
            (&[2][..], FlushReason::Forced)
        );
        assert_eq!(c.next_deadline(), None);
        assert_eq!(c.pending_prs(), 0);
    }

    #[test]
    fn prop_len_change_flushes() {
        let mut c = Concatenator::new(cfg(10)).unwrap();
        let mut v = Vec::new();
        let k = key(PrType::Response, 4);
        c.push(Time::ZERO, k, 16, &pr(1), &[0; 16], collect(&mut v))
            .unwrap();
        c.push(Time::ZERO, k, 32, &pr(2), &[0; 32], collect(&mut v))
            .unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].reason, v[0].prop_len, v[0].n),
            (FlushReason::PropLenChange, 16, 1)
        );
        c.flush_all(collect(&mut v));
        assert_eq!((v[1].prop_len, v[1].n), (32, 1));
        assert_eq!(c.stats().flushes_prop_len, 1);
    }

    #[test]
    fn errors() {
        let mut c = Concatenator::new(cfg(10)).unwrap();
        let mut v = Vec::new();
        assert_eq!(
            c.push(
                Time::ZERO,
                key(PrType::Response, 1),
                16,
                &pr(1),
                &[0; 15],
                collect(&mut v)
            ),
            Err(ConcatError::PayloadLength {
                pr_type: PrType::Response,
                expected: 16,
                got: 15
            })
        );
        assert!(c
            .push(
                Time::ZERO,
                key(PrType::Read, 1),
                16,
                &pr(1),
                &[0; 16],
                collect(&mut v)
            )
            .is_err());
        assert_eq!(
            c.push(
                Time::ZERO,
                key(PrType::Response, 1),
                1500,
                &pr(1),
                &[0; 1500],
                collect(&mut v)
            ),
            Err(ConcatError::PrTooLarge {
                stride: 1518,
                mtu: 1500
            })
        );
        assert_eq!(
            c.push_raw(
                Time::ZERO,
                key(PrType::Read, 1),
                16,
                &[0; 19],
                collect(&mut v)
            ),
            Err(ConcatError::RawLength {
                expected: 18,
                got: 19
            })
        );
        assert_eq!(c.stats().rejected, 4);
        assert_eq!(c.stats().prs_in, 0);
    }

    #[test]
    fn queue_limit_evicts_oldest() {
        let mut c = Concatenator::new(ConcatConfig {
            max_queues: 2,
            ..cfg(100)
        })
        .unwrap();
        let mut v = Vec::new();
        for d in 0..3 {
            c.push(
                Time::from_ns(d),
                key(PrType::Read, d as u32),
                8,
                &pr(d),
                &[],
                collect(&mut v),
            )
            .unwrap();
        }
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].key.dst, v[0].reason), (0, FlushReason::Evicted));
        assert_eq!((c.stats().queue_limit, c.stats().pool_exhausted), (1, 0));
        assert_eq!(c.next_deadline(), Some(Time::from_ns(101)));
        assert_eq!(c.open_queues(), 2);
    }

    #[test]
    fn raw_push_matches_repr_push() {
        let mut a = Concatenator::new(cfg(10)).unwrap();
        let mut b = Concatenator::new(cfg(10)).unwrap();
        let (mut va, mut vb) = (Vec::new(), Vec::new());
        let k = key(PrType::Response, 3);
        let mut raw = pr(5).to_bytes().to_vec();
        raw.extend_from_slice(&[9; 16]);
        a.push(Time::ZERO, k, 16, &pr(5), &[9; 16], collect(&mut va))
            .unwrap();
        b.push_raw(Time::ZERO, k, 16, &raw, collect(&mut vb))
            .unwrap();
        let mut ba = Vec::new();
        let mut bb = Vec::new();
        a.flush_all(|f| ba.extend_from_slice(f.prs));
        b.flush_all(|f| bb.extend_from_slice(f.prs));
        assert_eq!(ba, raw);
        assert_eq!(bb, raw);
    }

    #[test]
    fn flushed_cq_becomes_a_frame() {
        let mut c = Concatenator::new(cfg(10)).unwrap();
        let k = CqKey {
            pr_type: PrType::Response,
            dst: 6,
            port: 2,
        };
        for i in 0..3 {
            c.push(Time::ZERO, k, 16, &pr(i), &[i as u8; 16], |_| {})
                .unwrap();
        }
        let mut buf = vec![1, 2, 3];
        let mut len = 0;
        c.flush_all(|f| {
            assert_eq!(f.concat_repr().buffer_len(), 14 + f.prs.len());
            len = f.write_frame(&mut buf, DeviceAddr::Switch(4), 9).unwrap();
        });
        assert_eq!(len, 68 + 3 * 34);
        let f = crate::wire::Frame::parse(&buf[3..]).unwrap();
        assert_eq!(f.src_device(), Some(DeviceAddr::Switch(4)));
        assert_eq!(f.concat.dst, 6);
        let got: Vec<(u64, u8)> = f.prs().map(|p| (p.idx, p.payload[0])).collect();
        assert_eq!(got, [(0, 0), (1, 1), (2, 2)]);
    }

    #[test]
    fn virtual_cqs_straddle_chunks_and_exhaust_pool() {
        // 12 chunks of 128 B = 1536 B: one full packet (1446 B) fits.
        let vcfg = ConcatConfig {
            virtual_cqs: Some(VirtualCqConfig {
                chunk_bytes: 128,
                chunks: 12,
            }),
            ..cfg(1_000)
        };
        let mut c = Concatenator::new(vcfg).unwrap();
        let mut v = Vec::new();
        let payload: Vec<u8> = (0..64).collect();
        // 82-byte PRs straddle chunk boundaries; 17 fill a packet.
        let k1 = key(PrType::Response, 1);
        for i in 0..17 {
            c.push(Time::ZERO, k1, 64, &pr(i), &payload, collect(&mut v))
                .unwrap();
        }
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].idxs, (0..17).collect::<Vec<_>>());
        assert_eq!(c.free_chunks(), Some(12));
        // Fill most of the pool with one destination, then another needs room:
        // the oldest virtual CQ is forced out.
        for i in 0..16 {
            c.push(
                Time::from_ns(1),
                k1,
                64,
                &pr(100 + i),
                &payload,
                collect(&mut v),
            )
            .unwrap();
        }
        assert_eq!(c.free_chunks(), Some(1)); // 16 × 82 = 1312 B in 11 chunks
        let k2 = key(PrType::Response, 2);
        c.push(
            Time::from_ns(2),
            k2,
            64,
            &pr(200),
            &payload,
            collect(&mut v),
        )
        .unwrap();
        assert_eq!((c.free_chunks(), v.len()), (Some(0), 1));
        // 2 × 82 B needs a second chunk: none is free.
        c.push(
            Time::from_ns(2),
            k2,
            64,
            &pr(201),
            &payload,
            collect(&mut v),
        )
        .unwrap();
        assert_eq!(c.free_chunks(), Some(10));
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[1].key, v[1].reason, v[1].n),
            (k1, FlushReason::Evicted, 16)
        );
        assert_eq!((c.stats().pool_exhausted, c.stats().queue_limit), (1, 0));
        c.flush_all(collect(&mut v));
        assert_eq!(v[2].idxs, [200, 201]);
        assert_eq!(c.free_chunks(), Some(12));
    }
}
