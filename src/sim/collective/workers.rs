//! The workers of the simulated AllReduce: one device per worker node,
//! sending and receiving PRs through a concatenating, paced
//! [`PrSender`] (host and NIC in one; the host's costs are not modelled).
//!
//! * [`OmniWorker`] speaks OmNICCL's protocol with the aggregator
//!   (`programs/omniccl_agg.p4`): it votes its next `d` nonzero block
//!   indices, sends only the chosen blocks it has nonzero (zero blocks are
//!   skipped; a DONE says how many it sent), votes for the next round at
//!   once, and checks every sum it receives against the direct sum.
//! * [`RingWorker`] is ring AllReduce (reduce-scatter then all-gather, n−1
//!   steps each), streamed block by block: a received block is added to the
//!   worker's own and forwarded at once. It sends every block, zero or not.
//!
//! Received sums are verified as they arrive against the expected result
//! ([`Shared`]); a wrong, unexpected or duplicate block is counted.

use std::sync::Arc;

use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
use netsparse_externs::wire::PrType;
use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_nic::coll::{
    coll_pr, round_id, split_round, PrSender, BLOCK, DONE, NEXT, NONE, SUM, VOTE,
};

use super::tensor::{add_into, Tensors};

/// What every worker reads: the tensors and the expected result.
#[derive(Debug)]
pub struct Shared {
    /// The workers' tensors.
    pub tensors: Tensors,
    /// The direct sum.
    pub expected: Vec<u8>,
    /// Per block: workers with it nonzero.
    pub count: Vec<u8>,
}

/// A worker's outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkerResult {
    /// Sum blocks received and matching.
    pub blocks_ok: u64,
    /// Sum blocks that differ from the direct sum.
    pub wrong: u64,
    /// Blocks received twice, out of range, or PRs not of the protocol.
    pub unexpected: u64,
    /// Blocks it must hold at the end.
    pub blocks_needed: u64,
    /// Nonzero blocks it sent (OmNICCL) or blocks (ring).
    pub blocks_sent: u64,
    /// When it held the whole result, ps: its last needed block arrived
    /// (and, for OmNICCL, it saw the last round).
    pub finished_ps: u64,
    /// Malformed frames.
    pub malformed: u64,
}

impl WorkerResult {
    /// Whether it holds exactly the right result.
    pub fn ok(&self) -> bool {
        self.wrong == 0 && self.unexpected == 0 && self.blocks_ok == self.blocks_needed
    }
}

/// Checks and records a received sum.
#[derive(Debug)]
struct Receiver {
    have: Vec<u64>,
    r: WorkerResult,
}

impl Receiver {
    fn new(blocks: u64, needed: u64) -> Receiver {
        Receiver {
            have: vec![0; blocks.div_ceil(64) as usize],
            r: WorkerResult {
                blocks_needed: needed,
                ..WorkerResult::default()
            },
        }
    }

    fn got(&mut self, sh: &Shared, now: Time, j: u64, payload: &[u8]) {
        let b = sh.tensors.block as usize;
        if j >= sh.tensors.blocks || payload.len() != b {
            self.r.unexpected += 1;
            return;
        }
        let (w, bit) = ((j / 64) as usize, 1u64 << (j % 64));
        if self.have[w] & bit != 0 {
            self.r.unexpected += 1;
            return;
        }
        self.have[w] |= bit;
        if payload != &sh.expected[j as usize * b..(j as usize + 1) * b] {
            self.r.wrong += 1;
            return;
        }
        self.r.blocks_ok += 1;
        if self.r.blocks_ok == self.r.blocks_needed {
            self.r.finished_ps = self.r.finished_ps.max(now.as_ps());
        }
    }
}

/// One stream of rounds at a worker.
#[derive(Debug)]
struct Stream {
    /// The worker's nonzero blocks of this stream, ascending.
    own: Vec<u64>,
    pos: usize,
    round: u32,
    next: Vec<u64>,
    finished: bool,
}

/// An OmNICCL worker (see the module docs); with several streams, each
/// stream is an independent sequence of rounds over the blocks `j` with
/// `j mod streams` = the stream (OmniReduce's parallel streams).
#[derive(Debug)]
pub struct OmniWorker {
    w: u32,
    agg: u32,
    depth: usize,
    sh: Arc<Shared>,
    streams: Vec<Stream>,
    started: bool,
    tx: PrSender,
    rx: Receiver,
    deconcat: Deconcatenator,
    buf: Vec<u8>,
}

impl OmniWorker {
    /// Worker `w` of `sh`, aggregator node `agg`, depth `depth`, `streams`
    /// streams (at least 1).
    pub fn new(
        w: u32,
        agg: u32,
        depth: u32,
        streams: u32,
        sh: Arc<Shared>,
        tx: PrSender,
    ) -> OmniWorker {
        let s = u64::from(streams.max(1));
        let mut lists: Vec<Vec<u64>> = vec![Vec::new(); s as usize];
        for j in sh.tensors.nonzero_list(w) {
            lists[(j % s) as usize].push(j);
        }
        let needed = sh.count.iter().filter(|&&c| c > 0).count() as u64;
        let (blocks, b) = (sh.tensors.blocks, sh.tensors.block as usize);
        OmniWorker {
            w,
            agg,
            depth: depth as usize,
            sh,
            streams: lists
                .into_iter()
                .map(|own| Stream {
                    own,
                    pos: 0,
                    round: 0,
                    next: Vec::with_capacity(depth as usize),
                    finished: false,
                })
                .collect(),
            started: false,
            tx,
            rx: Receiver::new(blocks, needed),
            deconcat: Deconcatenator::new(DeconcatConfig::default()),
            buf: vec![0; b],
        }
    }

    /// Its outcome.
    pub fn result(&self) -> WorkerResult {
        self.rx.r
    }

    /// Whether it saw the last (empty) round of every stream.
    pub fn finished_voting(&self) -> bool {
        self.streams.iter().all(|s| s.finished)
    }

    fn vote(&mut self, now: Time, stream: u32, round: u32) {
        let b = self.sh.tensors.block;
        let id = round_id(stream, round);
        let st = &self.streams[stream as usize];
        for k in 0..self.depth {
            let idx = st.own.get(st.pos + k).copied().unwrap_or(NONE);
            let pr = coll_pr(self.w, VOTE, id, idx);
            self.tx.push(now, PrType::Read, self.agg, b, &pr, &[]);
        }
    }

    /// All `d` indices of the stream's current round are in: send the DONE
    /// and the next round's vote first (a small frame that does not wait
    /// behind the blocks), then the round's blocks.
    fn round_chosen(&mut self, now: Time, stream: u32) {
        let b = self.sh.tensors.block;
        let st = &mut self.streams[stream as usize];
        let r = st.round;
        let last = st.next.iter().copied().filter(|&i| i != NONE).max();
        let Some(last) = last else {
            // The last round: nothing left anywhere in this stream.
            st.finished = true;
            if self.finished_voting() {
                self.rx.r.finished_ps = self.rx.r.finished_ps.max(now.as_ps());
            }
            return;
        };
        // This round's blocks: own[start..end]. Every one is chosen (the d
        // smallest of the union include every nonzero block up to the last
        // chosen); one that is not would be counted, not sent.
        let start = st.pos;
        let mut end = start;
        let mut sent = 0u64;
        while let Some(&j) = st.own.get(end) {
            if j > last {
                break;
            }
            end += 1;
            if st.next.binary_search(&j).is_ok() {
                sent += 1;
            } else {
                self.rx.r.unexpected += 1;
            }
        }
        st.pos = end;
        let done = coll_pr(self.w, DONE, round_id(stream, r), sent);
        self.tx.push(now, PrType::Read, self.agg, b, &done, &[]);
        self.vote(now, stream, r + 1);
        self.tx.flush(now);
        let st = &self.streams[stream as usize];
        for &j in &st.own[start..end] {
            if st.next.binary_search(&j).is_err() {
                continue;
            }
            self.sh.tensors.block_into(self.w, j, &mut self.buf);
            let pr = coll_pr(self.w, BLOCK, round_id(stream, r), j);
            self.tx
                .push(now, PrType::Response, self.agg, b, &pr, &self.buf);
        }
        self.rx.r.blocks_sent += sent;
        let st = &mut self.streams[stream as usize];
        st.round += 1;
        st.next.clear();
    }
}

impl Datapath for OmniWorker {
    fn on_packet(&mut self, now: Time, _port: u32, frame: &[u8], out: &mut Outputs) {
        let Ok(d) = self.deconcat.frame(frame) else {
            self.rx.r.malformed += 1;
            return;
        };
        let sh = self.sh.clone();
        for v in d.prs {
            let (s, r) = split_round(v.req_id);
            match (v.tid, self.streams.get_mut(s as usize)) {
                (NEXT, Some(st)) if r == st.round && !st.finished => {
                    st.next.push(v.idx);
                    if st.next.len() == self.depth {
                        st.next.sort_unstable();
                        self.round_chosen(now, s);
                    }
                }
                (SUM, _) => self.rx.got(&sh, now, v.idx, v.payload),
                _ => self.rx.r.unexpected += 1,
            }
        }
        self.tx.flush(now);
        self.tx.emit(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        if !self.started {
            self.started = true;
            for s in 0..self.streams.len() as u32 {
                self.vote(now, s, 0);
            }
            self.tx.flush(now);
        }
        self.tx.on_timer(now);
        self.tx.emit(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        if !self.started {
            return Some(Time::ZERO);
        }
        self.tx.next_deadline()
    }
}

/// A ring AllReduce worker (see the module docs).
#[derive(Debug)]
pub struct RingWorker {
    w: u32,
    n: u32,
    sh: Arc<Shared>,
    started: bool,
    tx: PrSender,
    rx: Receiver,
    deconcat: Deconcatenator,
    own: Vec<u8>,
    acc: Vec<u8>,
}

impl RingWorker {
    /// Worker `w` of `n`.
    pub fn new(w: u32, n: u32, sh: Arc<Shared>, tx: PrSender) -> RingWorker {
        let (blocks, b) = (sh.tensors.blocks, sh.tensors.block as usize);
        RingWorker {
            w,
            n,
            sh,
            started: false,
            tx,
            rx: Receiver::new(blocks, blocks),
            deconcat: Deconcatenator::new(DeconcatConfig::default()),
            own: vec![0; b],
            acc: vec![0; b],
        }
    }

    /// Its outcome.
    pub fn result(&self) -> WorkerResult {
        self.rx.r
    }

    /// Blocks of chunk `c`.
    fn chunk(&self, c: u32) -> std::ops::Range<u64> {
        let (nb, n) = (self.sh.tensors.blocks, u64::from(self.n));
        (u64::from(c) * nb / n)..(u64::from(c + 1) * nb / n)
    }

    fn send(&mut self, now: Time, step: u32, j: u64, from_acc: bool) {
        let to = (self.w + 1) % self.n;
        let pr = coll_pr(self.w, BLOCK, step, j);
        let data = if from_acc { &self.acc } else { &self.own };
        self.tx
            .push(now, PrType::Response, to, self.sh.tensors.block, &pr, data);
        self.rx.r.blocks_sent += 1;
    }
}

impl Datapath for RingWorker {
    fn on_packet(&mut self, now: Time, _port: u32, frame: &[u8], out: &mut Outputs) {
        let Ok(d) = self.deconcat.frame(frame) else {
            self.rx.r.malformed += 1;
            return;
        };
        let sh = self.sh.clone();
        let last_rs = self.n - 2;
        let last = 2 * self.n - 3;
        for v in d.prs {
            let (s, j) = (v.req_id, v.idx);
            if v.tid != BLOCK
                || s > last
                || j >= sh.tensors.blocks
                || v.payload.len() != self.acc.len()
            {
                self.rx.r.unexpected += 1;
                continue;
            }
            self.acc.copy_from_slice(v.payload);
            if s <= last_rs {
                sh.tensors.block_into(self.w, j, &mut self.own);
                add_into(&mut self.acc, &self.own);
                if s == last_rs {
                    self.rx.got(&sh, now, j, &self.acc);
                }
            } else {
                self.rx.got(&sh, now, j, v.payload);
            }
            if s < last {
                self.send(now, s + 1, j, true);
            }
        }
        self.tx.flush(now);
        self.tx.emit(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        if !self.started {
            self.started = true;
            for j in self.chunk(self.w) {
                self.sh.tensors.block_into(self.w, j, &mut self.own);
                self.send(now, 0, j, false);
            }
            self.tx.flush(now);
        }
        self.tx.on_timer(now);
        self.tx.emit(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        if !self.started {
            return Some(Time::ZERO);
        }
        self.tx.next_deadline()
    }
}
