//! `netsparse stf`: run a p4c STF test on the v1model or PSA switch.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use netsparse::stf::{self, StfOptions};

/// Arguments of `netsparse stf`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The script uses p4c's STF format (backends/bmv2/bmv2stf.py semantics):\n\
  packet <port> <hex>                 send a packet (spaces allowed in the hex)\n\
  expect <port> <hex>[$]              expect the next packet out of <port>; `*` = any\n\
                                      hex digit; without `$` the pattern is a prefix\n\
  expect <port>                       any packets on <port>\n\
  add <table> [<prio>] <key>:<value>... <action>(<param>:<value>,...) [= <name>]\n\
  setdefault <table> <action>(...)    remove all | $<name> | <table> <key>:<value>...\n\
  check_counter <c>(<index>|$<name>) [packets|bytes] <op> <value>\n\
  no_packet, wait, mirroring_add, mc_mgrp_create, mc_node_create, mc_node_associate,\n\
  register_write, meter_set_rates ...\n\
Expectations are checked when the script ends: per port, in order, counts included.\n\
\n\
Exit status: 0 the test passed; 1 it failed (a diff of expected vs received is\n\
printed); 2 error (the program does not compile, an STF syntax error, an unknown\n\
table or action: reported as FILE:LINE).\n\
\n\
Example: netsparse stf tests/stf/lpm.p4 tests/stf/lpm.stf -v")]
pub struct Args {
    /// The P4 program.
    pub program: PathBuf,
    /// The STF script.
    pub script: PathBuf,
    /// Add a directory to the `#include` search path (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Trace every packet through the switch (parser states, tables, egress) on stderr.
    #[arg(long)]
    pub log_console: bool,
    /// Print each command and every packet out as the script runs.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Seed of `random()`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
}

/// Run the test.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::init_logging(args.verbose || args.log_console, false);
    let script = std::fs::read_to_string(&args.script)
        .with_context(|| format!("cannot read {}", args.script.display()))?;
    let artifact = match stf::compile_program(&args.program, &args.include) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let opts = StfOptions {
        file: args.script.display().to_string(),
        seed: args.seed,
        trace: args.log_console,
    };
    match stf::run(&artifact, &script, &opts) {
        Ok(outcome) => {
            if args.verbose {
                eprint!("{}", outcome.stats.summary());
            }
            if outcome.passed() {
                println!("{}", outcome.summary());
                Ok(ExitCode::SUCCESS)
            } else {
                print!("{}", outcome.render(std::io::stdout().is_terminal()));
                Ok(ExitCode::from(1))
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(2))
        }
    }
}
