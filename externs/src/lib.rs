//! NetSparse hardware units and the contracts shared by the compiler and the targets.
//!
//! * [`time`]: the explicit clock every datapath core runs on.
//! * [`artifact`]: the pipeline artifact schema (compiler output, target input).
//! * [`datapath`]: the clocked-core interface (`on_packet`/`on_timer`/`next_deadline`).
#![warn(missing_docs)]

pub mod artifact;
pub mod datapath;
pub mod time;

pub use datapath::{Datapath, Outputs};
pub use time::{Clock, Time};
