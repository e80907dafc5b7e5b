//! One module per sub-command: argument structs (clap derive) and `run`.
//! The work itself lives in the library crates and `netsparse::*`.

pub mod bench;
pub mod collective;
pub mod compile;
pub mod ctl;
pub mod ctl_more;
pub mod demo;
pub mod engine;
pub mod explain;
pub mod hugepages;
pub mod matrix;
pub mod nic;
pub mod nic_spin;
pub mod paper;
pub mod sim;
pub mod spmm2d;
pub mod stf;
pub mod switch;
pub mod topo;

use std::io::IsTerminal as _;

/// Send `tracing` output to stderr: INFO and above when `verbose` (the
/// per-packet traces of `--log-console`), else WARN; wall-clock timestamps
/// when `timestamps` (the live drivers), none for deterministic runs.
pub fn init_logging(verbose: bool, timestamps: bool) {
    let level = if verbose {
        tracing::Level::INFO
    } else {
        tracing::Level::WARN
    };
    let builder = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    // A second initialisation (tests running several commands) is harmless.
    let _ = if timestamps {
        builder.try_init()
    } else {
        builder.without_time().try_init()
    };
}
