//! The collective externs of `<collective.p4>` ([`CollOp`]), called through
//! [`super::Prim::Coll`]: the aggregator state of a block-sparse AllReduce
//! (OmNICCL, Gu, Fei, Canini, NAIC '24) — Block Merge of the workers' votes
//! (the `d` smallest block indices of a round), block accumulation into a
//! round's slots, the per-round counters that say when a round is complete,
//! and the broadcasts of a round's indices and sums. They run in the per-PR
//! part of a `NetSparseNic` net_to_host control or of a `NetSparseSwitch`
//! middle control (the compiler refuses them elsewhere); the target owns
//! the state ([`crate::coll::CollUnit`]).

use serde::{Deserialize, Serialize};

/// A collective extern. Every operand is an `Expr` of the width
/// [`CollOp::operands`] gives, in declaration order; [`CollOp::result`] is
/// the width of the value written to the call's destination, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollOp {
    /// `VoteMerge(round, worker, idx) : bit<8>`: merge one voted block index
    /// into the round's list of the `d` smallest (Block Merge); returns a
    /// [`status`] code (`COMPLETE` once every worker voted `d` times).
    VoteMerge,
    /// `BlockAccumulate(round, worker, idx, len) : bit<8>`: add the current
    /// PR's payload (`len` bytes) element-wise into the round's slot for
    /// block `idx` (once per worker); returns a [`status`] code (`COMPLETE`
    /// when the round is).
    BlockAccumulate,
    /// `RoundDone(round, worker, count) : bit<8>`: the worker sent `count`
    /// blocks in the round; returns a [`status`] code.
    RoundDone,
    /// `SendIndices(round)`: send the round's chosen indices to every worker
    /// (when the slot window allows).
    SendIndices,
    /// `SendSums(round)`: send the round's sums to every worker and free
    /// its slot.
    SendSums,
}

/// Status codes the collective externs return (`<collective.p4>`'s `COLL_*`).
pub mod status {
    /// Accepted.
    pub const OK: u64 = 0;
    /// Accepted, and it completed the round's phase.
    pub const COMPLETE: u64 = 1;
    /// Refused (unknown worker, round outside the window, size mismatch,
    /// duplicate, index not chosen): counted by the target, nothing changed.
    pub const REFUSED: u64 = 2;
}

impl CollOp {
    /// Every op, in declaration order.
    pub const ALL: [CollOp; 5] = [
        CollOp::VoteMerge,
        CollOp::BlockAccumulate,
        CollOp::RoundDone,
        CollOp::SendIndices,
        CollOp::SendSums,
    ];

    /// The extern's name in `<collective.p4>`.
    pub fn name(self) -> &'static str {
        match self {
            CollOp::VoteMerge => "VoteMerge",
            CollOp::BlockAccumulate => "BlockAccumulate",
            CollOp::RoundDone => "RoundDone",
            CollOp::SendIndices => "SendIndices",
            CollOp::SendSums => "SendSums",
        }
    }

    /// The op named `name` in `<collective.p4>`.
    pub fn from_name(name: &str) -> Option<CollOp> {
        CollOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Operand widths, in order.
    pub fn operands(self) -> &'static [u16] {
        match self {
            CollOp::VoteMerge | CollOp::RoundDone => &[32, 32, 64],
            CollOp::BlockAccumulate => &[32, 32, 64, 32],
            CollOp::SendIndices | CollOp::SendSums => &[32],
        }
    }

    /// The width of the returned value, if any.
    pub fn result(self) -> Option<u16> {
        match self {
            CollOp::VoteMerge | CollOp::BlockAccumulate | CollOp::RoundDone => Some(8),
            CollOp::SendIndices | CollOp::SendSums => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_widths_match_the_header() {
        for op in CollOp::ALL {
            assert_eq!(CollOp::from_name(op.name()), Some(op));
        }
        assert_eq!(CollOp::from_name("SpinCount"), None);
        assert_eq!(CollOp::BlockAccumulate.operands(), &[32, 32, 64, 32]);
        assert_eq!(CollOp::SendSums.result(), None);
    }
}
