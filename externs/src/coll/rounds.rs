//! The aggregator's round state: a window of round slots, each with its
//! Block Merge list, `d` accumulators of `b` bytes and the round counters
//! (votes, blocks and DONE markers per worker). Pure state, no time: the
//! device (`mod.rs`) calls it from the program's externs and performs the
//! broadcasts it asks for.
//!
//! Memory: `window × (d·b + Block Merge + n·(d + 2) counters)`; the
//! accumulators dominate (`window·b·d` bytes, against the `(n+2)·b·d` of
//! OmNICCL's design, §2; here a block is added as its PR is processed,
//! with no receive buffer per worker).

use super::merge::{BlockMerge, Vote};
use super::NONE;

/// Where a round slot is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Unused (its last round, if any, finished).
    Free,
    /// Collecting votes.
    Voting,
    /// Votes complete; the chosen indices wait for the window to open.
    Voted,
    /// Indices sent: collecting blocks and DONE markers.
    Sending,
}

/// The outcome of an extern call (`<collective.p4>`'s `COLL_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Accepted.
    Ok,
    /// Accepted, and the round's phase is complete.
    Complete,
    /// Refused: counted, nothing changed.
    Refused,
}

/// One round in flight.
#[derive(Clone, Debug)]
pub struct Slot {
    /// The round it holds (or last held).
    pub round: u32,
    /// Its phase.
    pub phase: Phase,
    /// The last round that finished in it.
    pub last_done: Option<u32>,
    merge: BlockMerge,
    votes: Vec<u32>,
    voted: u32,
    /// The chosen indices, ascending (after voting).
    pub chosen: Vec<u64>,
    /// `d` accumulators of `b` bytes.
    pub acc: Vec<u8>,
    got: Vec<bool>,
    done: Vec<bool>,
    ndone: u32,
    expected: u64,
    received: u64,
}

/// Why a call was refused (counted per reason).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Refusals {
    /// A worker id outside 0..n.
    pub unknown_worker: u64,
    /// A round outside the window, or a slot in another phase.
    pub wrong_round: u64,
    /// More than `d` votes, or votes not ascending.
    pub bad_vote: u64,
    /// A block of the wrong size.
    pub block_size: u64,
    /// A block that was not chosen, or sent twice.
    pub bad_block: u64,
    /// A second DONE, or a count above `d`.
    pub bad_done: u64,
}

impl Refusals {
    /// Add `o`'s counts.
    pub fn add(&mut self, o: &Refusals) {
        self.unknown_worker += o.unknown_worker;
        self.wrong_round += o.wrong_round;
        self.bad_vote += o.bad_vote;
        self.block_size += o.block_size;
        self.bad_block += o.bad_block;
        self.bad_done += o.bad_done;
    }

    /// All refusals.
    pub fn total(&self) -> u64 {
        self.unknown_worker
            + self.wrong_round
            + self.bad_vote
            + self.block_size
            + self.bad_block
            + self.bad_done
    }
}

/// The window of round slots.
#[derive(Clone, Debug)]
pub struct Rounds {
    workers: usize,
    depth: usize,
    block: usize,
    /// Slots, round `r` in `r % window`.
    pub slots: Vec<Slot>,
    /// The lowest round not finished.
    pub base: u32,
    /// Refusal counters.
    pub refused: Refusals,
}

impl Rounds {
    /// `window` slots for `workers` workers, depth `depth`, `block` bytes.
    pub fn new(workers: usize, depth: usize, block: usize, window: usize) -> Rounds {
        let slot = Slot {
            round: 0,
            phase: Phase::Free,
            last_done: None,
            merge: BlockMerge::new(workers, depth),
            votes: vec![0; workers],
            voted: 0,
            chosen: Vec::with_capacity(depth),
            acc: vec![0; depth * block],
            got: vec![false; workers * depth],
            done: vec![false; workers],
            ndone: 0,
            expected: 0,
            received: 0,
        };
        Rounds {
            workers,
            depth,
            block,
            slots: vec![slot; window.max(2)],
            base: 0,
            refused: Refusals::default(),
        }
    }

    /// Bytes of round state (accumulators, Block Merge, counters).
    pub fn state_bytes(&self) -> usize {
        self.slots
            .iter()
            .map(|s| {
                s.acc.len()
                    + s.merge.state_bytes()
                    + s.chosen.capacity() * 8
                    + s.votes.len() * 4
                    + s.got.len()
                    + s.done.len()
            })
            .sum()
    }

    /// Nodes scanned by Block Merge in every slot.
    pub fn merge_steps(&self) -> u64 {
        self.slots.iter().map(|s| s.merge.steps()).sum()
    }

    fn slot_of(&self, round: u32) -> usize {
        round as usize % self.slots.len()
    }

    /// The slot holding `round` in `phase`, or a refusal.
    fn slot(&mut self, round: u32, worker: u32, phase: Phase) -> Option<usize> {
        if worker as usize >= self.workers {
            self.refused.unknown_worker += 1;
            return None;
        }
        let w = self.slots.len() as u32;
        let i = self.slot_of(round);
        let in_window = round >= self.base && round - self.base < w;
        let s = &mut self.slots[i];
        if in_window && phase == Phase::Voting && s.phase == Phase::Free {
            // A new round's first vote opens the slot.
            s.round = round;
            s.phase = Phase::Voting;
            s.merge.clear();
            s.votes.iter_mut().for_each(|v| *v = 0);
            s.voted = 0;
            s.chosen.clear();
            s.acc.iter_mut().for_each(|b| *b = 0);
            s.got.iter_mut().for_each(|g| *g = false);
            s.done.iter_mut().for_each(|d| *d = false);
            s.ndone = 0;
            s.expected = 0;
            s.received = 0;
        }
        if !in_window || s.round != round || s.phase != phase {
            self.refused.wrong_round += 1;
            return None;
        }
        Some(i)
    }

    /// `VoteMerge(round, worker, idx)`.
    pub fn vote(&mut self, round: u32, worker: u32, idx: u64) -> Status {
        let Some(i) = self.slot(round, worker, Phase::Voting) else {
            return Status::Refused;
        };
        let (d, w) = (self.depth as u32, worker as usize);
        let s = &mut self.slots[i];
        if s.votes[w] >= d || (idx != NONE && s.merge.vote(w, idx) == Vote::Refused) {
            self.refused.bad_vote += 1;
            return Status::Refused;
        }
        s.votes[w] += 1;
        if s.votes[w] < d {
            return Status::Ok;
        }
        s.voted += 1;
        if s.voted as usize == self.workers {
            s.phase = Phase::Voted;
            s.merge.sorted_into(&mut s.chosen);
            return Status::Complete;
        }
        Status::Ok
    }

    /// `BlockAccumulate(round, worker, idx, len)` with the PR's payload.
    pub fn accumulate(
        &mut self,
        round: u32,
        worker: u32,
        idx: u64,
        len: u32,
        payload: &[u8],
    ) -> Status {
        let Some(i) = self.slot(round, worker, Phase::Sending) else {
            return Status::Refused;
        };
        let (b, d) = (self.block, self.depth);
        if len as usize != b || payload.len() != b {
            self.refused.block_size += 1;
            return Status::Refused;
        }
        let s = &mut self.slots[i];
        let Ok(pos) = s.chosen.binary_search(&idx) else {
            self.refused.bad_block += 1;
            return Status::Refused;
        };
        let g = &mut s.got[worker as usize * d + pos];
        if *g {
            self.refused.bad_block += 1;
            return Status::Refused;
        }
        *g = true;
        let acc = &mut s.acc[pos * b..(pos + 1) * b];
        for (a, p) in acc.chunks_exact_mut(4).zip(payload.chunks_exact(4)) {
            let x = u32::from_le_bytes([a[0], a[1], a[2], a[3]]);
            let y = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
            a.copy_from_slice(&x.wrapping_add(y).to_le_bytes());
        }
        s.received += 1;
        if s.complete() {
            Status::Complete
        } else {
            Status::Ok
        }
    }

    /// `RoundDone(round, worker, count)`.
    pub fn done(&mut self, round: u32, worker: u32, count: u64) -> Status {
        let Some(i) = self.slot(round, worker, Phase::Sending) else {
            return Status::Refused;
        };
        let s = &mut self.slots[i];
        if s.done[worker as usize] || count > s.chosen.len() as u64 {
            self.refused.bad_done += 1;
            return Status::Refused;
        }
        s.done[worker as usize] = true;
        s.ndone += 1;
        s.expected += count;
        if s.complete() {
            Status::Complete
        } else {
            Status::Ok
        }
    }

    /// Whether round `round`'s indices may be sent: it is voted, and the
    /// slot the workers' next votes go to is free.
    pub fn may_send_indices(&self, round: u32) -> bool {
        let s = &self.slots[self.slot_of(round)];
        let next = &self.slots[self.slot_of(round.wrapping_add(1))];
        s.round == round && s.phase == Phase::Voted && next.phase == Phase::Free
    }

    /// The indices of `round` went out: collect blocks (or, for the empty
    /// last round, finish it).
    pub fn indices_sent(&mut self, round: u32) {
        let i = self.slot_of(round);
        let s = &mut self.slots[i];
        if s.chosen.is_empty() {
            self.finish(i);
        } else {
            s.phase = Phase::Sending;
        }
    }

    /// Whether round `round` has every block and DONE.
    pub fn is_complete(&self, round: u32) -> bool {
        let s = &self.slots[self.slot_of(round)];
        s.round == round && s.phase == Phase::Sending && s.complete()
    }

    /// The sums of `round` went out: free the slot.
    pub fn sums_sent(&mut self, round: u32) {
        let i = self.slot_of(round);
        self.finish(i);
    }

    fn finish(&mut self, i: usize) {
        let s = &mut self.slots[i];
        s.phase = Phase::Free;
        s.last_done = Some(s.round);
        loop {
            let j = self.slot_of(self.base);
            let t = &self.slots[j];
            if t.phase == Phase::Free && t.last_done == Some(self.base) {
                self.base += 1;
            } else {
                break;
            }
        }
    }

    /// The slot of `round`.
    pub fn get(&self, round: u32) -> &Slot {
        &self.slots[self.slot_of(round)]
    }
}

impl Slot {
    fn complete(&self) -> bool {
        self.ndone as usize == self.done.len() && self.received == self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: u32, b: usize) -> Vec<u8> {
        (0..b / 4).flat_map(|_| v.to_le_bytes()).collect()
    }

    #[test]
    fn a_round_votes_accumulates_and_completes() {
        let (n, d, b) = (2, 2, 8);
        let mut r = Rounds::new(n, d, b, 2);
        assert_eq!(r.vote(0, 0, 3), Status::Ok);
        assert_eq!(r.vote(0, 0, 9), Status::Ok);
        assert_eq!(r.vote(0, 1, 1), Status::Ok);
        assert_eq!(r.vote(0, 1, NONE), Status::Complete);
        assert_eq!(r.get(0).chosen, vec![1, 3]);
        assert!(r.may_send_indices(0));
        r.indices_sent(0);
        // Worker 0 has block 3, worker 1 block 1; both send DONE.
        assert_eq!(r.accumulate(0, 0, 3, 8, &block(5, b)), Status::Ok);
        assert_eq!(r.accumulate(0, 0, 3, 8, &block(5, b)), Status::Refused);
        assert_eq!(r.accumulate(0, 1, 9, 8, &block(5, b)), Status::Refused);
        assert_eq!(r.accumulate(0, 1, 1, 4, &block(5, 4)), Status::Refused);
        assert_eq!(r.done(0, 0, 1), Status::Ok);
        assert_eq!(r.done(0, 1, 1), Status::Ok);
        assert_eq!(r.accumulate(0, 1, 1, 8, &block(7, b)), Status::Complete);
        assert!(r.is_complete(0));
        assert_eq!(r.get(0).acc, [block(7, b), block(5, b)].concat());
        r.sums_sent(0);
        assert_eq!(r.base, 1);
        let f = r.refused;
        assert_eq!((f.bad_block, f.block_size), (2, 1), "{f:?}");
    }

    #[test]
    fn unknown_workers_and_rounds_outside_the_window_are_refused() {
        let mut r = Rounds::new(2, 1, 4, 2);
        assert_eq!(r.vote(0, 2, 1), Status::Refused);
        assert_eq!(r.vote(2, 0, 1), Status::Refused);
        assert_eq!(r.done(0, 0, 0), Status::Refused);
        assert_eq!(r.vote(0, 0, 1), Status::Ok);
        assert_eq!(r.vote(0, 0, 2), Status::Refused);
        let f = r.refused;
        assert_eq!((f.unknown_worker, f.wrong_round, f.bad_vote), (1, 2, 1));
        assert_eq!(f.total(), 4);
    }

    #[test]
    fn the_next_round_waits_for_a_free_slot() {
        let mut r = Rounds::new(1, 1, 4, 2);
        r.vote(0, 0, 0);
        r.indices_sent(0);
        r.vote(1, 0, 5);
        // Round 2's votes would reuse round 0's slot: round 1's indices wait.
        assert!(!r.may_send_indices(1));
        r.done(0, 0, 1);
        r.accumulate(0, 0, 0, 4, &block(1, 4));
        r.sums_sent(0);
        assert!(r.may_send_indices(1));
    }
}
