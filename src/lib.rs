//! Library side of the `netsparse` CLI: drivers and tools shared by the
//! sub-commands and the integration tests.
#![warn(missing_docs)]

pub mod paper;
pub mod programs;
pub mod sim;
pub mod stf;
pub mod topo;
