//! `netsparse compile` (being built: issue 2).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `netsparse compile`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The P4 source file.
    pub file: PathBuf,
}

/// Compile a program.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`netsparse compile` is under construction")
}
