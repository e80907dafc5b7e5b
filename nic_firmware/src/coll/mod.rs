//! Collectives on the SmartNIC: the OmNICCL aggregator (Gu, Fei, Canini,
//! NAIC '24, §2) running a compiled `NetSparseNic` program that calls the
//! collective externs of `<collective.p4>` (`programs/omniccl_agg.p4`).
//!
//! * [`Aggregator`] is the device: it deconcatenates every frame it
//!   receives, runs the program's net_to_host control once per packet and
//!   once per PR (the engine's per-PR path runner, as the NetSparse NIC
//!   does), implements the externs over [`rounds::Rounds`] (Block Merge,
//!   accumulators, round counters) and performs the broadcasts the program
//!   asks for (`SendIndices`, `SendSums`) through a paced [`PrSender`].
//! * [`sender::PrSender`] is the concatenating, paced transmitter the
//!   simulator's workers use too; [`merge::BlockMerge`] is Block Merge.
//!
//! Every PR of the protocol is a NetSparse PR: `src` = sender node,
//! `tid` = kind ([`VOTE`], [`BLOCK`], [`DONE`], [`NEXT`], [`SUM`]),
//! `req_id` = round id ([`round_id`]: a stream and its round; OmNICCL runs
//! one stream, OmniReduce many), `idx` = block index (or a count), payload
//! = the block
//! (for [`BLOCK`] and [`SUM`]). Worker `w` is node `w`; the aggregator is
//! a node of its own. Blocks are little-endian `u32` words summed with
//! wrapping, so results are exact.
//!
//! Timing: the aggregator processes PRs at line rate (no per-PR cost
//! beyond its link); its broadcasts leave paced at its link rate.

pub mod merge;
pub mod rounds;
pub mod sender;

use netsparse_engine::program::{Program, TargetCall, TargetPrims, TargetResult};
use netsparse_engine::prpath::{load_paths, PathSpec, PrMeta, PrPathRunner};
use netsparse_engine::{LoadError, PacketState};
use netsparse_externs::artifact::{Arch, Artifact, CollOp, Package, Prim};
use netsparse_externs::concat::ConcatConfigError;
use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
use netsparse_externs::wire::{pr_capacity, PrType, DEFAULT_MTU, PR_HEADER_LEN};
use netsparse_externs::{Datapath, Outputs, Time};
use thiserror::Error;

use rounds::{Refusals, Rounds, Status};
pub use sender::{coll_pr, kind_type, PrSender, SenderStats};

/// A worker's vote (read PR): `idx` = a nonzero block index or [`NONE`].
pub const VOTE: u16 = 1;
/// A worker's block (response PR): `idx` = block index, payload = block.
pub const BLOCK: u16 = 2;
/// A worker's end of a round (read PR): `idx` = blocks it sent.
pub const DONE: u16 = 3;
/// A chosen index (read PR from the aggregator; `d` per round, padded with [`NONE`]).
pub const NEXT: u16 = 4;
/// A sum (response PR from the aggregator): `idx` = block index.
pub const SUM: u16 = 5;
/// No block.
pub const NONE: u64 = u64::MAX;
/// A round id on the wire (`req_id`, and the externs' `round`) is
/// `stream << STREAM_SHIFT | round`: independent streams of rounds, each
/// with its own slots (OmniReduce's parallel aggregation streams; OmNICCL
/// uses one).
pub const STREAM_SHIFT: u32 = 20;
/// Most streams.
pub const MAX_STREAMS: u32 = 1 << (32 - STREAM_SHIFT);
/// Most rounds per stream.
pub const MAX_ROUNDS: u32 = 1 << STREAM_SHIFT;

/// The wire round id of `round` in `stream`.
pub fn round_id(stream: u32, round: u32) -> u32 {
    (stream << STREAM_SHIFT) | (round & (MAX_ROUNDS - 1))
}

/// (stream, round) of a wire round id.
pub fn split_round(id: u32) -> (u32, u32) {
    (id >> STREAM_SHIFT, id & (MAX_ROUNDS - 1))
}

/// Largest block: what one PR carries in a 1500-byte MTU.
pub const MAX_BLOCK_BYTES: u32 = (pr_capacity(DEFAULT_MTU) - PR_HEADER_LEN) as u32;

/// The aggregator's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AggConfig {
    /// Its node id (workers are nodes `0..workers`).
    pub node: u32,
    /// Workers, n.
    pub workers: u32,
    /// Blocks per round, d.
    pub depth: u32,
    /// Block size in bytes, b (a multiple of 4, at most [`MAX_BLOCK_BYTES`]).
    pub block: u32,
    /// Rounds in flight (slots) per stream, at least 2.
    pub window: u32,
    /// Independent streams of rounds (1 for OmNICCL), 1..=[`MAX_STREAMS`].
    pub streams: u32,
    /// Link rate, Gb/s.
    pub link_gbps: u64,
}

/// Why an aggregator could not be built.
#[derive(Debug, Error)]
pub enum AggError {
    /// A parameter out of range.
    #[error("aggregator {name} = {value}: {range}")]
    Config {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: u64,
        /// The valid range.
        range: &'static str,
    },
    /// The program does not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The transmitter's configuration.
    #[error("aggregator transmitter: {0}")]
    Sender(#[from] ConcatConfigError),
}

/// The aggregator's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AggStats {
    /// Frames received.
    pub rx_frames: u64,
    /// Frames the Deconcatenator refused.
    pub rx_malformed: u64,
    /// Packets the program dropped whole.
    pub packets_dropped: u64,
    /// PRs processed.
    pub prs: u64,
    /// Votes, blocks and DONE markers accepted.
    pub votes: u64,
    /// Blocks accumulated.
    pub blocks: u64,
    /// DONE markers accepted.
    pub dones: u64,
    /// Rounds whose sums were sent (every stream).
    pub rounds: u64,
    /// Refused extern calls, by reason.
    pub refused: Refusals,
    /// Extern calls the program made out of place (`SendSums` of a round
    /// that is not complete, an extern other than the collective ones).
    pub program_errors: u64,
    /// Block Merge nodes scanned (O(d) per vote message).
    pub merge_steps: u64,
    /// Bytes of round state (accumulators, Block Merge, counters).
    pub state_bytes: u64,
    /// What was sent.
    pub tx: SenderStats,
}

/// What the program asked for while a PR ran (done after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// (stream, round)
    Indices(u32, u32),
    /// (stream, round)
    Sums(u32, u32),
}

/// The externs' side: round state, the PR's payload, requested broadcasts.
#[derive(Debug)]
struct AggCore {
    /// One window of rounds per stream.
    rounds: Vec<Rounds>,
    /// Calls naming a stream that does not exist.
    bad_stream: u64,
    payload: Vec<u8>,
    actions: Vec<Action>,
    stats: AggStats,
}

fn arg(a: &[u128], i: usize) -> u64 {
    a.get(i).copied().unwrap_or(0) as u64
}

fn status(s: Status) -> TargetResult {
    TargetResult::Value(u128::from(match s {
        Status::Ok => netsparse_externs::artifact::coll_status::OK,
        Status::Complete => netsparse_externs::artifact::coll_status::COMPLETE,
        Status::Refused => netsparse_externs::artifact::coll_status::REFUSED,
    }))
}

impl TargetPrims for AggCore {
    fn call(&mut self, _st: &mut PacketState, call: TargetCall<'_>) -> TargetResult {
        let a = call.args;
        let Prim::Coll { op, .. } = call.prim else {
            self.stats.program_errors += 1;
            return TargetResult::Value(0);
        };
        let (stream, r) = split_round(arg(a, 0) as u32);
        let Some(rounds) = self.rounds.get_mut(stream as usize) else {
            self.bad_stream += 1;
            return status(Status::Refused);
        };
        match op {
            CollOp::VoteMerge => {
                let s = rounds.vote(r, arg(a, 1) as u32, arg(a, 2));
                if s != Status::Refused {
                    self.stats.votes += 1;
                }
                status(s)
            }
            CollOp::BlockAccumulate => {
                let s = rounds.accumulate(
                    r,
                    arg(a, 1) as u32,
                    arg(a, 2),
                    arg(a, 3) as u32,
                    &self.payload,
                );
                if s != Status::Refused {
                    self.stats.blocks += 1;
                }
                status(s)
            }
            CollOp::RoundDone => {
                let s = rounds.done(r, arg(a, 1) as u32, arg(a, 2));
                if s != Status::Refused {
                    self.stats.dones += 1;
                }
                status(s)
            }
            CollOp::SendIndices => {
                self.actions.push(Action::Indices(stream, r));
                TargetResult::Done
            }
            CollOp::SendSums => {
                self.actions.push(Action::Sums(stream, r));
                TargetResult::Done
            }
        }
    }
}

/// The OmNICCL aggregator on a SmartNIC (see the module docs).
#[derive(Debug)]
pub struct Aggregator {
    cfg: AggConfig,
    program: Program,
    n2h: PrPathRunner,
    st: PacketState,
    deconcat: Deconcatenator,
    core: AggCore,
    tx: PrSender,
    /// Per stream: a round whose indices wait for the window.
    waiting: Vec<Option<u32>>,
}

impl Aggregator {
    /// Load `artifact` (a `NetSparseNic` program) as the aggregator.
    pub fn new(artifact: &Artifact, cfg: AggConfig) -> Result<Aggregator, AggError> {
        let bad = |name, value: u64, range| Err(AggError::Config { name, value, range });
        if cfg.workers < 1 {
            return bad("workers", cfg.workers.into(), "at least 1");
        }
        if cfg.depth < 1 {
            return bad("depth", cfg.depth.into(), "at least 1");
        }
        if cfg.block < 4 || cfg.block % 4 != 0 || cfg.block > MAX_BLOCK_BYTES {
            return bad(
                "block",
                cfg.block.into(),
                "a multiple of 4 from 4 to 1428 bytes (one PR in a 1500-byte MTU)",
            );
        }
        if cfg.window < 2 {
            return bad("window", cfg.window.into(), "at least 2 rounds");
        }
        if !(1..=MAX_STREAMS).contains(&cfg.streams) {
            return bad("streams", cfg.streams.into(), "1 to 4096 streams");
        }
        let place = || format!("program {}", artifact.program);
        let nic = match (&artifact.arch, &artifact.package) {
            (Arch::NetSparseNic, Package::NetSparseNic(n)) => n,
            (arch, _) => {
                return Err(LoadError::Unsupported {
                    what: format!(
                        "architecture {arch:?}: the aggregator runs NetSparseNic programs"
                    ),
                    place: place(),
                }
                .into())
            }
        };
        let rig = [
            nic.net_to_host.rig.node,
            nic.net_to_host.rig.unit,
            nic.net_to_host.rig.command,
            nic.net_to_host.rig.outcome,
        ];
        let specs = [PathSpec {
            path: &nic.net_to_host.path,
            extras: &rig,
        }];
        let (program, mut paths) = load_paths(artifact, &specs, 0)?;
        let Some(n2h) = paths.pop() else {
            return Err(LoadError::Invalid {
                detail: "the aggregator needs the net_to_host path".into(),
                place: place(),
            }
            .into());
        };
        let st = program.new_state();
        let (n, d, b) = (cfg.workers as usize, cfg.depth as usize, cfg.block as usize);
        let rounds = (0..cfg.streams)
            .map(|_| Rounds::new(n, d, b, cfg.window as usize))
            .collect();
        Ok(Aggregator {
            cfg,
            program,
            n2h,
            st,
            deconcat: Deconcatenator::new(DeconcatConfig::default()),
            core: AggCore {
                rounds,
                bad_stream: 0,
                payload: Vec::with_capacity(b),
                actions: Vec::with_capacity(4),
                stats: AggStats::default(),
            },
            tx: PrSender::new(cfg.node, cfg.link_gbps, DEFAULT_MTU)?,
            waiting: vec![None; cfg.streams as usize],
        })
    }

    /// Counters.
    pub fn stats(&self) -> AggStats {
        let mut s = self.core.stats;
        let mut refused = Refusals {
            wrong_round: self.core.bad_stream,
            ..Refusals::default()
        };
        for r in &self.core.rounds {
            refused.add(&r.refused);
            s.merge_steps += r.merge_steps();
            s.state_bytes += r.state_bytes() as u64;
        }
        s.refused = refused;
        s.tx = self.tx.stats();
        s
    }

    /// The lowest round of `stream` not finished (every round before it
    /// was summed and sent).
    pub fn rounds_finished(&self, stream: u32) -> u32 {
        self.core.rounds.get(stream as usize).map_or(0, |r| r.base)
    }

    fn do_actions(&mut self, now: Time) {
        let mut i = 0;
        while i < self.core.actions.len() {
            let a = self.core.actions[i];
            i += 1;
            match a {
                Action::Indices(st, r) => {
                    let rounds = &self.core.rounds[st as usize];
                    if rounds.may_send_indices(r) {
                        self.send_indices(now, st, r);
                    } else if rounds.get(r).round == r {
                        self.waiting[st as usize] = Some(r);
                    } else {
                        self.core.stats.program_errors += 1;
                    }
                }
                Action::Sums(st, r) => {
                    if !self.core.rounds[st as usize].is_complete(r) {
                        self.core.stats.program_errors += 1;
                        continue;
                    }
                    // Free the slot, send the indices that waited for it
                    // (small frames, ahead of the sums), then the sums (the
                    // slot's accumulators stay as they are until the next
                    // round's first vote reopens it).
                    self.core.rounds[st as usize].sums_sent(r);
                    if let Some(w) = self.waiting[st as usize] {
                        if self.core.rounds[st as usize].may_send_indices(w) {
                            self.waiting[st as usize] = None;
                            self.send_indices(now, st, w);
                        }
                    }
                    self.send_sums(now, st, r);
                }
            }
        }
        self.core.actions.clear();
    }

    fn send_indices(&mut self, now: Time, st: u32, r: u32) {
        let (node, b, d) = (self.cfg.node, self.cfg.block, self.cfg.depth as usize);
        let id = round_id(st, r);
        let s = self.core.rounds[st as usize].get(r);
        for w in 0..self.cfg.workers {
            for k in 0..d {
                let idx = s.chosen.get(k).copied().unwrap_or(NONE);
                self.tx
                    .push(now, PrType::Read, w, b, &coll_pr(node, NEXT, id, idx), &[]);
            }
        }
        self.tx.flush(now);
        self.core.rounds[st as usize].indices_sent(r);
    }

    fn send_sums(&mut self, now: Time, st: u32, r: u32) {
        let (node, b) = (self.cfg.node, self.cfg.block as usize);
        let id = round_id(st, r);
        let s = self.core.rounds[st as usize].get(r);
        // Block by block over the workers, so that every worker's CQ fills
        // and leaves in turn (no worker waits for all the others' sums).
        for (k, &idx) in s.chosen.iter().enumerate() {
            for w in 0..self.cfg.workers {
                let pr = coll_pr(node, SUM, id, idx);
                self.tx.push(
                    now,
                    PrType::Response,
                    w,
                    b as u32,
                    &pr,
                    &s.acc[k * b..(k + 1) * b],
                );
            }
        }
        self.tx.flush(now);
        self.core.stats.rounds += 1;
    }
}

impl Datapath for Aggregator {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.core.stats.rx_frames += 1;
        let d = match self.deconcat.frame(frame) {
            Ok(d) => d,
            Err(_) => {
                self.core.stats.rx_malformed += 1;
                return;
            }
        };
        let node = self.cfg.node;
        let md = PrMeta {
            pr_type: u64::from(d.concat.pr_type.as_u16()),
            dst: u64::from(d.concat.dst),
            prop_len: u64::from(d.concat.prop_len),
            ingress_port: u64::from(port),
            egress_port: 0,
        };
        let set = |v: &mut [u64], x: &[usize]| {
            v[x[0]] = u64::from(node);
            v[x[1]] = 0;
            v[x[2]] = 0;
            v[x[3]] = 0;
        };
        if !self
            .n2h
            .begin(&mut self.program, &mut self.st, md, set, &mut self.core)
        {
            self.core.stats.packets_dropped += 1;
            return;
        }
        for v in d.prs {
            self.core.stats.prs += 1;
            self.core.payload.clear();
            self.core.payload.extend_from_slice(v.payload);
            // Every PR is consumed by the program: what it would send on is
            // ignored; the broadcasts are the firmware's.
            let _ = self.n2h.run_pr(
                &mut self.program,
                &mut self.st,
                &v.repr(),
                set,
                &mut self.core,
            );
            if !self.core.actions.is_empty() {
                self.do_actions(now);
            }
        }
        self.tx.emit(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.tx.on_timer(now);
        self.tx.emit(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        self.tx.next_deadline()
    }
}
