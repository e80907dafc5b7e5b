//! NetSparse hardware units and the contracts shared by the compiler and the targets.
//!
//! * [`time`]: the explicit clock every datapath core runs on.
//! * [`artifact`]: the pipeline artifact schema (compiler output, target input).
#![warn(missing_docs)]

pub mod artifact;
pub mod time;

pub use time::{Clock, Time};
