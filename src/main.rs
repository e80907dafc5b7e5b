//! `netsparse`: compile, run and simulate NetSparse switch and NIC programs.
//!
//! Exit status: 0 success; 1 the input was processed and found wanting (a
//! program error, a failed STF test, a verification mismatch); 2 usage or I/O
//! errors.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Open toolchain for in-network acceleration of distributed sparse kernels.
#[derive(Parser, Debug)]
#[command(name = "netsparse", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How P4 programs run: `native` (generated Rust compiled by the
    /// machine's rustc, cached; same results as the interpreter),
    /// `interp` (the interpreter), or `auto` (native where rustc can build
    /// it). Default: `auto` for sim, paper, demo and bench, `interp` for
    /// the rest; the environment variable NETSPARSE_ENGINE sets it too.
    #[arg(long, global = true, value_name = "MODE", value_parser = cli::engine::MODES)]
    engine: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile a P4 program to a pipeline artifact (or dump a compiler stage).
    Compile(cli::compile::Args),
    /// Explain a compiler error code, e.g. `netsparse explain E0101`.
    Explain(cli::explain::Args),
    /// Generate Matrix Market files, or show a matrix's per-node remote needs.
    Matrix(cli::matrix::Args),
    /// Simulate the gather of one SpMM iteration on a leaf-spine cluster.
    Sim(Box<cli::sim::Args>),
    /// The paper's evaluation on the stand-ins (Figure 12, Tables 7-8, Figures 13-15, 17-19, 21, 22), resumable, with a report beside the paper's numbers.
    Paper(cli::paper::Args),
    /// The main job in one command: simulate a 32-node cluster on a generated matrix under SUOpt, SAOpt and NetSparse, verify, report.
    Demo(cli::demo::Args),
    /// Run a P4 program on pcap files or live interfaces: v1model (BMv2 simple_switch style), PSA (psa_switch style) or NetSparseSwitch, from its package.
    Switch(cli::switch::Args),
    /// Drive a running switch over P4Runtime (simple_switch_CLI-like: table_add, table_dump, counter_read, register_write, cache_invalidate, stats).
    Ctl(cli::ctl::Args),
    /// Run one NetSparse SmartNIC endpoint (RIG gathers, serving reads) on pcap files or an interface.
    Nic(cli::nic::Args),
    /// In-process throughput benchmarks.
    Bench(cli::bench::Args),
    /// Live topologies: namespaces, veths, switch and NIC processes (topo up/down/gen).
    Topo(cli::topo::Args),
    /// Run a p4c STF test (packets in, packets expected out) on the v1model or PSA switch (from the package).
    Stf(cli::stf::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Sim(_)
            | Command::Paper(_)
            | Command::Bench(_)
            | Command::Demo(_)
            | Command::Matrix(_)
    ) {
        cli::hugepages::reexec();
    }
    let long_runs = matches!(
        cli.command,
        Command::Sim(_) | Command::Paper(_) | Command::Bench(_) | Command::Demo(_)
    );
    let mode = match cli::engine::mode(cli.engine.as_deref(), long_runs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    netsparse_engine::native::set_mode(mode);
    // The live drivers and `stf` set up their own logging from their flags;
    // every other command shows the libraries' warnings too.
    if !matches!(
        cli.command,
        Command::Switch(_) | Command::Nic(_) | Command::Stf(_)
    ) {
        cli::init_batch_logging();
    }
    let result = match cli.command {
        Command::Compile(a) => cli::compile::run(a),
        Command::Explain(a) => cli::explain::run(a),
        Command::Matrix(a) => cli::matrix::run(a),
        Command::Sim(a) => cli::sim::run(*a),
        Command::Demo(a) => cli::demo::run(a),
        Command::Paper(a) => cli::paper::run(a),
        Command::Switch(a) => cli::switch::run(a),
        Command::Ctl(a) => cli::ctl::run(a),
        Command::Nic(a) => cli::nic::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Topo(a) => cli::topo::run(a),
        Command::Stf(a) => cli::stf::run(a),
    };
    let result = result.and_then(|code| cli::engine::check(mode).map(|()| code));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
