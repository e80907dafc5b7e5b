//! A paced PR transmitter: the Concatenator of `netsparse_externs`, the
//! Framer, and a TX queue that starts one frame after another at the link
//! rate. The aggregator and the simulator's collective workers send every
//! PR through one, so blocks travel concatenated like every other PR.
//!
//! PRs are queued with [`PrSender::push`] and leave when their CQ fills or
//! at [`PrSender::flush`] (the caller flushes after each burst: a vote, a
//! round's blocks, a broadcast). No allocation in steady state: the frame
//! bytes live in one buffer, compacted in place when it empties or once
//! half of it was sent.

use std::collections::VecDeque;

use netsparse_externs::concat::{ConcatConfig, ConcatConfigError, Concatenator, CqKey, Flushed};
use netsparse_externs::framer::Framer;
use netsparse_externs::time::serialization_time;
use netsparse_externs::wire::{DeviceAddr, PrRepr, PrType};
use netsparse_externs::{Outputs, Time};

/// Counters of a [`PrSender`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SenderStats {
    /// Frames sent.
    pub frames: u64,
    /// PRs sent.
    pub prs: u64,
    /// Frame bytes sent.
    pub bytes: u64,
    /// PRs the Concatenator or the Framer refused (a bug in the caller).
    pub refused: u64,
}

/// The framed, paced side of a [`PrSender`].
#[derive(Debug)]
struct TxQueue {
    framer: Framer,
    link_gbps: u64,
    frame: Vec<u8>,
    /// (start time, length) of frames queued in `bytes[head..]`.
    frames: VecDeque<(Time, usize)>,
    bytes: Vec<u8>,
    head: usize,
    link_free: Time,
    stats: SenderStats,
}

impl TxQueue {
    /// A flushed CQ becomes a frame, started when the link is free.
    fn enqueue(&mut self, f: &Flushed<'_>) {
        self.frame.clear();
        let len = match self.framer.frame(f, &mut self.frame) {
            Ok(n) => n,
            Err(_) => {
                self.stats.refused += u64::from(f.num_prs);
                return;
            }
        };
        let start = f.at.max(self.link_free);
        self.link_free = start + serialization_time(len as u64, self.link_gbps);
        self.frames.push_back((start, len));
        self.bytes.extend_from_slice(&self.frame[..len]);
        self.stats.frames += 1;
        self.stats.prs += u64::from(f.num_prs);
        self.stats.bytes += len as u64;
    }
}

/// Concatenator + Framer + paced TX queue of one single-port device.
#[derive(Debug)]
pub struct PrSender {
    concat: Concatenator,
    q: TxQueue,
}

impl PrSender {
    /// A sender for node `node` on a `link_gbps` link with IP MTU `mtu`.
    /// A PR left unflushed leaves 1 ns after it was queued.
    pub fn new(node: u32, link_gbps: u64, mtu: usize) -> Result<PrSender, ConcatConfigError> {
        let concat = Concatenator::new(ConcatConfig {
            mtu,
            delay: Time::from_ns(1),
            ..ConcatConfig::nic_default()
        })?;
        Ok(PrSender {
            concat,
            q: TxQueue {
                framer: Framer::new(DeviceAddr::Node(node)),
                link_gbps: link_gbps.max(1),
                frame: Vec::with_capacity(mtu + 64),
                frames: VecDeque::new(),
                bytes: Vec::new(),
                head: 0,
                link_free: Time::ZERO,
                stats: SenderStats::default(),
            },
        })
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.q.stats
    }

    /// Queue one PR for `dst` (`payload`: `prop_len` bytes for a response,
    /// empty for a read).
    pub fn push(
        &mut self,
        now: Time,
        ty: PrType,
        dst: u32,
        prop_len: u32,
        pr: &PrRepr,
        payload: &[u8],
    ) {
        let key = CqKey {
            pr_type: ty,
            dst,
            port: 0,
        };
        let q = &mut self.q;
        if self
            .concat
            .push(now, key, prop_len, pr, payload, |f| q.enqueue(&f))
            .is_err()
        {
            self.q.stats.refused += 1;
        }
    }

    /// Send every queued PR now (end of a burst).
    pub fn flush(&mut self, now: Time) {
        self.on_timer(now);
        let q = &mut self.q;
        self.concat.flush_all(|f| q.enqueue(&f));
    }

    /// Send the PRs whose CQ expired by `now`.
    pub fn on_timer(&mut self, now: Time) {
        let q = &mut self.q;
        self.concat.on_timer(now, |f| q.enqueue(&f));
    }

    /// When the next queued frame starts or CQ expires, if any.
    pub fn next_deadline(&self) -> Option<Time> {
        match (
            self.q.frames.front().map(|f| f.0),
            self.concat.next_deadline(),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether nothing is queued.
    pub fn idle(&self) -> bool {
        self.q.frames.is_empty() && self.concat.pending_prs() == 0
    }

    /// Emit on port 0 every frame whose transmission starts by `now`.
    pub fn emit(&mut self, now: Time, out: &mut Outputs) {
        let q = &mut self.q;
        while let Some(&(start, len)) = q.frames.front() {
            if start > now {
                break;
            }
            q.frames.pop_front();
            out.push(0, &q.bytes[q.head..q.head + len]);
            q.head += len;
        }
        if q.frames.is_empty() {
            q.bytes.clear();
            q.head = 0;
        } else if q.head >= 1 << 16 && 2 * q.head >= q.bytes.len() {
            // Compact in place once half the buffer was sent (a sender that
            // never empties, e.g. a ring worker, would otherwise grow it by
            // everything it ever sent).
            q.bytes.drain(..q.head);
            q.head = 0;
        }
    }
}
