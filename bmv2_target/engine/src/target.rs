//! The engine's hook for target-specific primitives: primitives the engine
//! does not implement itself (the Property Cache's `CacheLookup` /
//! `CacheInsert`, the RIG externs) are compiled with their operands and
//! handed, evaluated, to the target's [`TargetPrims`] when they run.

use netsparse_externs::artifact::Prim;

use crate::state::PacketState;

/// A target-specific primitive call: the artifact's primitive and its
/// operands' values, in the primitive's declaration order (for example
/// `PendingComplete`: `tid, req_id, idx, prop_len`; `CacheLookup`: none).
#[derive(Clone, Copy, Debug)]
pub struct TargetCall<'a> {
    /// The primitive as written in the artifact.
    pub prim: &'a Prim,
    /// Its `Expr` operands, evaluated (its `LValue` destination, if any,
    /// receives [`TargetResult::Value`]).
    pub args: &'a [u128],
    /// The run's operation count so far ([`crate::program::Program::ops`]).
    pub ops: u64,
}

/// What a target primitive returns to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetResult {
    /// Nothing to store; continue.
    Done,
    /// Store this value in the primitive's destination (masked to its
    /// width); continue.
    Value(u128),
    /// Stop running the block (like `exit`).
    Exit,
}

/// A target's implementation of the primitives the engine leaves to it.
pub trait TargetPrims {
    /// Run one primitive over the packet state `st`.
    fn call(&mut self, st: &mut PacketState, call: TargetCall<'_>) -> TargetResult;
}

/// A target that implements no primitive (every call stores 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTarget;

impl TargetPrims for NoTarget {
    fn call(&mut self, _st: &mut PacketState, _call: TargetCall<'_>) -> TargetResult {
        TargetResult::Value(0)
    }
}
