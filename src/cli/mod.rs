//! One module per sub-command: argument structs (clap derive) and `run`.
//! The work itself lives in the library crates and `netsparse::*`.

pub mod bench;
pub mod compile;
pub mod demo;
pub mod explain;
pub mod matrix;
pub mod nic;
pub mod sim;
pub mod stf;
pub mod switch;
pub mod topo;
