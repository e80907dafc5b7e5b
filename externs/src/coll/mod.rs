//! The collective aggregator unit: the state behind the externs of
//! `<collective.p4>` (OmNICCL, Gu, Fei, Canini, NAIC '24, §2), shared by
//! every target that provides them — the SmartNIC's aggregator firmware
//! (`netsparse_nic::coll::Aggregator`) and the NetSparse switch's middle
//! pipes (`netsparse_bmv2::NsSwitch` with a collective configured).
//!
//! * [`merge::BlockMerge`]: Block Merge, the `d` smallest voted indices in
//!   O(d) state with O(d) work per vote message.
//! * [`rounds::Rounds`]: a window of round slots (Block Merge,
//!   accumulators, counters) of one stream of rounds.
//! * [`CollUnit`]: one [`rounds::Rounds`] per stream, the extern calls
//!   ([`CollUnit::call`]) and the broadcasts they request
//!   ([`CollUnit::run_actions`]), which the target performs its own way
//!   (the NIC through its paced transmitter, the switch through the middle
//!   pipe's Concatenator).
//!
//! The protocol: every message is a NetSparse PR (`src` = sender node,
//! `tid` = kind — [`VOTE`], [`BLOCK`], [`DONE`], [`NEXT`], [`SUM`] —,
//! `req_id` = round id ([`round_id`]), `idx` = block index or a count,
//! payload = the block for [`BLOCK`] and [`SUM`]). Worker `w` is node `w`.
//! Blocks are little-endian `u32` words summed with wrapping: exact.

pub mod merge;
pub mod rounds;

use thiserror::Error;

use crate::artifact::{coll_status, CollOp};
use crate::wire::{pr_capacity, PrRepr, PrType, DEFAULT_MTU, PR_HEADER_LEN};
use rounds::{Refusals, Rounds, Status};

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
/// Largest block: what one PR carries in a 1500-byte MTU.
pub const MAX_BLOCK_BYTES: u32 = (pr_capacity(DEFAULT_MTU) - PR_HEADER_LEN) as u32;

/// The wire round id of `round` in `stream`.
pub fn round_id(stream: u32, round: u32) -> u32 {
    (stream << STREAM_SHIFT) | (round & (MAX_ROUNDS - 1))
}

/// (stream, round) of a wire round id.
pub fn split_round(id: u32) -> (u32, u32) {
    (id >> STREAM_SHIFT, id & (MAX_ROUNDS - 1))
}

/// A PR of a collective: `src` the sender, `tid` the kind, `req_id` the round.
pub fn coll_pr(src: u32, kind: u16, round: u32, idx: u64) -> PrRepr {
    PrRepr {
        src,
        tid: kind,
        idx,
        req_id: round,
    }
}

/// [`PrType`] of a kind: blocks and sums carry payloads (responses), the
/// rest are reads.
pub fn kind_type(kind: u16) -> PrType {
    if kind == BLOCK || kind == SUM {
        PrType::Response
    } else {
        PrType::Read
    }
}

/// The unit's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollConfig {
    /// Workers, n (nodes `0..n`).
    pub workers: u32,
    /// Blocks per round, d.
    pub depth: u32,
    /// Block size in bytes, b (a multiple of 4, at most [`MAX_BLOCK_BYTES`]).
    pub block: u32,
    /// Rounds in flight (slots) per stream, at least 2.
    pub window: u32,
    /// Independent streams of rounds (1 for OmNICCL), 1..=[`MAX_STREAMS`].
    pub streams: u32,
}

/// A parameter out of range.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("aggregator {name} = {value}: {range}")]
pub struct CollConfigError {
    /// The parameter.
    pub name: &'static str,
    /// Its value.
    pub value: u64,
    /// The valid range.
    pub range: &'static str,
}

impl CollConfig {
    /// Check every parameter.
    pub fn validate(&self) -> Result<(), CollConfigError> {
        let bad = |name, value: u32, range| {
            Err(CollConfigError {
                name,
                value: value.into(),
                range,
            })
        };
        if self.workers < 1 {
            return bad("workers", self.workers, "at least 1");
        }
        if self.depth < 1 {
            return bad("depth", self.depth, "at least 1");
        }
        if self.block < 4 || self.block % 4 != 0 || self.block > MAX_BLOCK_BYTES {
            return bad(
                "block",
                self.block,
                "a multiple of 4 from 4 to 1428 bytes (one PR in a 1500-byte MTU)",
            );
        }
        if self.window < 2 {
            return bad("window", self.window, "at least 2 rounds");
        }
        if !(1..=MAX_STREAMS).contains(&self.streams) {
            return bad("streams", self.streams, "1 to 4096 streams");
        }
        Ok(())
    }
}

/// The unit's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CollCounters {
    /// Votes accepted.
    pub votes: u64,
    /// Blocks accumulated.
    pub blocks: u64,
    /// DONE markers accepted.
    pub dones: u64,
    /// Rounds whose sums were sent (every stream).
    pub rounds: u64,
    /// Calls out of place: `SendSums` of a round that is not complete,
    /// `SendIndices` of a round that is not voted.
    pub program_errors: u64,
    /// Refused calls, by reason.
    pub refused: Refusals,
    /// Block Merge nodes scanned.
    pub merge_steps: u64,
    /// Bytes of round state (accumulators, Block Merge, counters).
    pub state_bytes: u64,
}

/// A broadcast the program asked for, as the target performs it: for
/// every worker, one PR per chosen index (`kind` [`NEXT`], a read; `d` of
/// them, padded with [`NONE`]) or one per sum (`kind` [`SUM`], a response
/// with the block's sum as payload).
#[derive(Clone, Copy, Debug)]
pub struct Broadcast<'a> {
    /// [`NEXT`] or [`SUM`].
    pub kind: u16,
    /// The wire round id.
    pub round_id: u32,
    /// The chosen indices, ascending.
    pub chosen: &'a [u64],
    /// Blocks per round (NEXT PRs per worker).
    pub depth: usize,
    /// The sums, `chosen.len()` blocks of `block` bytes (empty for NEXT).
    pub sums: &'a [u8],
    /// Block size.
    pub block: usize,
}

impl Broadcast<'_> {
    /// The `k`-th index of a NEXT broadcast (`NONE` past the chosen ones).
    pub fn index(&self, k: usize) -> u64 {
        self.chosen.get(k).copied().unwrap_or(NONE)
    }

    /// The sum of the `k`-th chosen block.
    pub fn sum(&self, k: usize) -> &[u8] {
        &self.sums[k * self.block..(k + 1) * self.block]
    }
}

/// What the program asked for while a PR ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// (stream, round)
    Indices(u32, u32),
    /// (stream, round)
    Sums(u32, u32),
}

/// The aggregator's state and externs (see the module docs).
#[derive(Debug)]
pub struct CollUnit {
    cfg: CollConfig,
    rounds: Vec<Rounds>,
    /// Calls naming a stream that does not exist.
    bad_stream: u64,
    actions: Vec<Action>,
    /// Per stream: a round whose indices wait for the window.
    waiting: Vec<Option<u32>>,
    c: CollCounters,
}

fn arg(a: &[u128], i: usize) -> u64 {
    a.get(i).copied().unwrap_or(0) as u64
}

fn code(s: Status) -> u64 {
    match s {
        Status::Ok => coll_status::OK,
        Status::Complete => coll_status::COMPLETE,
        Status::Refused => coll_status::REFUSED,
    }
}

impl CollUnit {
    /// A unit of shape `cfg` (validated).
    pub fn new(cfg: CollConfig) -> Result<CollUnit, CollConfigError> {
        cfg.validate()?;
        let (n, d, b) = (cfg.workers as usize, cfg.depth as usize, cfg.block as usize);
        Ok(CollUnit {
            cfg,
            rounds: (0..cfg.streams)
                .map(|_| Rounds::new(n, d, b, cfg.window as usize))
                .collect(),
            bad_stream: 0,
            actions: Vec::with_capacity(4),
            waiting: vec![None; cfg.streams as usize],
            c: CollCounters::default(),
        })
    }

    /// Its shape.
    pub fn config(&self) -> &CollConfig {
        &self.cfg
    }

    /// Counters, with the refusals of every stream and the state size.
    pub fn counters(&self) -> CollCounters {
        let mut c = self.c;
        let mut refused = Refusals {
            wrong_round: self.bad_stream,
            ..Refusals::default()
        };
        for r in &self.rounds {
            refused.add(&r.refused);
            c.merge_steps += r.merge_steps();
            c.state_bytes += r.state_bytes() as u64;
        }
        c.refused = refused;
        c
    }

    /// The lowest round of `stream` not finished (every round before it
    /// was summed and sent).
    pub fn rounds_finished(&self, stream: u32) -> u32 {
        self.rounds.get(stream as usize).map_or(0, |r| r.base)
    }

    /// Count a call the program made that the target cannot serve here.
    pub fn program_error(&mut self) {
        self.c.program_errors += 1;
    }

    /// Run extern `op` with `args` (the current PR's payload: `payload`):
    /// the status code for the bit<8> externs, `None` for the void ones
    /// (whose broadcast waits for [`CollUnit::run_actions`]).
    pub fn call(&mut self, op: CollOp, args: &[u128], payload: &[u8]) -> Option<u64> {
        let (stream, r) = split_round(arg(args, 0) as u32);
        let Some(rounds) = self.rounds.get_mut(stream as usize) else {
            self.bad_stream += 1;
            return match op {
                CollOp::SendIndices | CollOp::SendSums => None,
                _ => Some(coll_status::REFUSED),
            };
        };
        let s = match op {
            CollOp::VoteMerge => {
                let s = rounds.vote(r, arg(args, 1) as u32, arg(args, 2));
                if s != Status::Refused {
                    self.c.votes += 1;
                }
                s
            }
            CollOp::BlockAccumulate => {
                let s = rounds.accumulate(
                    r,
                    arg(args, 1) as u32,
                    arg(args, 2),
                    arg(args, 3) as u32,
                    payload,
                );
                if s != Status::Refused {
                    self.c.blocks += 1;
                }
                s
            }
            CollOp::RoundDone => {
                let s = rounds.done(r, arg(args, 1) as u32, arg(args, 2));
                if s != Status::Refused {
                    self.c.dones += 1;
                }
                s
            }
            CollOp::SendIndices => {
                self.actions.push(Action::Indices(stream, r));
                return None;
            }
            CollOp::SendSums => {
                self.actions.push(Action::Sums(stream, r));
                return None;
            }
        };
        Some(code(s))
    }

    /// Whether broadcasts wait for [`CollUnit::run_actions`].
    pub fn has_actions(&self) -> bool {
        !self.actions.is_empty()
    }

    /// Perform the broadcasts the program asked for, in order, through
    /// `send` (the target sends every PR of one [`Broadcast`] before the
    /// next), and advance the rounds: a round's sums free its slot, and
    /// the indices that waited for that slot go out before the sums (small
    /// PRs, ahead of the blocks). Calls that cannot be served (sums of an
    /// incomplete round) are counted as program errors.
    pub fn run_actions(&mut self, mut send: impl FnMut(&Broadcast<'_>)) {
        let mut i = 0;
        while i < self.actions.len() {
            let a = self.actions[i];
            i += 1;
            match a {
                Action::Indices(st, r) => {
                    let rounds = &self.rounds[st as usize];
                    if rounds.may_send_indices(r) {
                        self.send_indices(st, r, &mut send);
                    } else if rounds.get(r).round == r
                        && rounds.get(r).phase == rounds::Phase::Voted
                    {
                        self.waiting[st as usize] = Some(r);
                    } else {
                        self.c.program_errors += 1;
                    }
                }
                Action::Sums(st, r) => {
                    if !self.rounds[st as usize].is_complete(r) {
                        self.c.program_errors += 1;
                        continue;
                    }
                    // Free the slot (the accumulators stay as they are
                    // until the next round's first vote reopens it).
                    self.rounds[st as usize].sums_sent(r);
                    if let Some(w) = self.waiting[st as usize] {
                        if self.rounds[st as usize].may_send_indices(w) {
                            self.waiting[st as usize] = None;
                            self.send_indices(st, w, &mut send);
                        }
                    }
                    let s = self.rounds[st as usize].get(r);
                    send(&Broadcast {
                        kind: SUM,
                        round_id: round_id(st, r),
                        chosen: &s.chosen,
                        depth: self.cfg.depth as usize,
                        sums: &s.acc,
                        block: self.cfg.block as usize,
                    });
                    self.c.rounds += 1;
                }
            }
        }
        self.actions.clear();
    }

    fn send_indices(&mut self, st: u32, r: u32, send: &mut impl FnMut(&Broadcast<'_>)) {
        let s = self.rounds[st as usize].get(r);
        send(&Broadcast {
            kind: NEXT,
            round_id: round_id(st, r),
            chosen: &s.chosen,
            depth: self.cfg.depth as usize,
            sums: &[],
            block: self.cfg.block as usize,
        });
        self.rounds[st as usize].indices_sent(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: u32, b: usize) -> Vec<u8> {
        (0..b / 4).flat_map(|_| v.to_le_bytes()).collect()
    }

    #[test]
    fn a_round_through_the_externs_broadcasts_indices_then_sums() {
        let cfg = CollConfig {
            workers: 2,
            depth: 2,
            block: 8,
            window: 2,
            streams: 1,
        };
        let mut u = CollUnit::new(cfg).unwrap();
        let vote =
            |u: &mut CollUnit, w: u128, i: u64| u.call(CollOp::VoteMerge, &[0, w, i as u128], &[]);
        assert_eq!(vote(&mut u, 0, 4), Some(coll_status::OK));
        assert_eq!(vote(&mut u, 0, NONE), Some(coll_status::OK));
        assert_eq!(vote(&mut u, 1, 2), Some(coll_status::OK));
        assert_eq!(vote(&mut u, 1, 4), Some(coll_status::COMPLETE));
        assert_eq!(u.call(CollOp::SendIndices, &[0], &[]), None);
        let mut seen = Vec::new();
        u.run_actions(|b| seen.push((b.kind, b.chosen.to_vec(), b.sums.to_vec())));
        assert_eq!(seen, vec![(NEXT, vec![2, 4], vec![])]);
        let acc = |u: &mut CollUnit, w: u128, i: u128, v: u32| {
            u.call(CollOp::BlockAccumulate, &[0, w, i, 8], &block(v, 8))
        };
        assert_eq!(acc(&mut u, 0, 4, 3), Some(coll_status::OK));
        assert_eq!(acc(&mut u, 1, 4, 5), Some(coll_status::OK));
        assert_eq!(acc(&mut u, 1, 2, 7), Some(coll_status::OK));
        // A block of the wrong size and a duplicate: refused, counted.
        assert_eq!(
            u.call(CollOp::BlockAccumulate, &[0, 1, 2, 4], &block(7, 4)),
            Some(coll_status::REFUSED)
        );
        assert_eq!(acc(&mut u, 0, 4, 3), Some(coll_status::REFUSED));
        // SendSums before the round is complete: a program error.
        u.call(CollOp::SendSums, &[0], &[]);
        u.run_actions(|_| panic!("nothing to send"));
        assert_eq!(u.counters().program_errors, 1);
        assert_eq!(
            u.call(CollOp::RoundDone, &[0, 0, 1], &[]),
            Some(coll_status::OK)
        );
        assert_eq!(
            u.call(CollOp::RoundDone, &[0, 1, 2], &[]),
            Some(coll_status::COMPLETE)
        );
        u.call(CollOp::SendSums, &[0], &[]);
        seen.clear();
        u.run_actions(|b| seen.push((b.kind, b.chosen.to_vec(), b.sums.to_vec())));
        assert_eq!(
            seen,
            vec![(SUM, vec![2, 4], [block(7, 8), block(8, 8)].concat())]
        );
        let c = u.counters();
        assert_eq!(
            (c.rounds, c.refused.block_size, c.refused.bad_block),
            (1, 1, 1)
        );
        assert_eq!(u.rounds_finished(0), 1);
        // A call naming a stream that does not exist.
        assert_eq!(
            u.call(CollOp::VoteMerge, &[u128::from(round_id(3, 0)), 0, 1], &[]),
            Some(coll_status::REFUSED)
        );
        assert_eq!(u.counters().refused.wrong_round, 1);
    }
}
