//! The P4 runtime shared by every NetSparse target: the v1model and
//! NetSparse switches (`netsparse-bmv2`) and the SmartNIC (`netsparse-nic`)
//! sit on it as siblings.
//!
//! * Loading ([`compile`]): a validated pipeline artifact is translated into
//!   pre-resolved trees ([`code`]): no names, no maps but exact-match tables
//!   on the packet path, a 64-bit fast path for fields up to 64 bits.
//! * Execution ([`exec`], [`eval`], [`layout`], [`state`], [`word`]):
//!   parsers, controls and deparsers over one reusable [`PacketState`],
//!   without heap allocation in the steady state.
//! * Tables ([`tables`]): exact (hash), LPM, ternary, range and optional
//!   matching with P4Runtime priorities.
//! * The control plane ([`control`]): the target-neutral [`ControlPlane`]
//!   trait, runtime JSON and BMv2 command files.
//! * [`program`]: named statement blocks run with target-specific
//!   primitives (the NIC's RIG externs, the Property Cache).
//! * [`native`]: the same blocks generated as Rust, compiled by `rustc`
//!   and run instead of the interpreter (for any program, same results).
//! * [`prpath`]: the one per-PR path runner (per-packet part, then per-PR
//!   part between `Deconcatenate` and `Concatenate`) that the middle pipes
//!   and the NIC both use.
//!
//! Dependencies point one way: targets → engine → externs.
#![warn(missing_docs)]

pub mod code;
pub mod compile;
pub mod control;
mod engine;
pub mod error;
pub mod eval;
pub mod exec;
pub mod layout;
pub mod native;
pub mod program;
pub mod prpath;
pub mod runtime;
pub mod state;
pub mod tables;
pub mod target;
pub mod word;

pub use control::{ControlPlane, Replica};
pub use engine::Engine;
pub use error::{ControlPlaneError, EntriesError, LoadError};
pub use runtime::{DigestMsg, EngineStats};
pub use state::PacketState;
pub use tables::{ActionArgs, EntryHandle, KeySpec};
