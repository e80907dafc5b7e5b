//! NetSparse hardware units and the contracts shared by the compiler and the targets.
//!
//! * [`time`]: the explicit clock every datapath core runs on.
//! * [`artifact`]: the pipeline artifact schema (compiler output, target input).
//! * [`datapath`]: the clocked-core interface (`on_packet`/`on_timer`/`next_deadline`).
//! * [`wire`]: the NetSparse wire format (RoCEv2 / BTH / concatenation / PR layers).
//! * [`concat`](mod@concat): the Concatenator (Concatenation Queues + Expiration Time Queue, §6.1.2).
//! * [`framer`]: flushed Concatenation Queues framed with the device's addresses and PSN.
//! * [`deconcat`]: the validating Deconcatenator.
//! * [`rig`]: the RIG Unit's Idx Filter and Pending PR Table (§5.2).
//! * [`cache`]: the switch's Property Cache (§6.2.2).
//! * [`coll`]: the collective aggregator units (OmNICCL's Block Merge and round state, `<collective.p4>`).
//! * [`fxhash`]: the fast deterministic hasher of the per-PR tables.
//! * [`hash`], [`meter`], [`stateful`]: v1model hash/checksum algorithms, RFC 2698
//!   meters, registers and counters.
#![warn(missing_docs)]

pub mod artifact;
pub mod cache;
pub mod coll;
pub mod concat;
pub mod datapath;
pub mod deconcat;
pub mod framer;
pub mod fxhash;
pub mod hash;
pub mod hint;
pub mod meter;
pub mod rig;
pub mod stateful;
pub mod time;
pub mod wire;

pub use datapath::{Datapath, Outputs};
pub use time::{Clock, Time};
