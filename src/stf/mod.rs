//! STF tests (p4c's "simple test framework"): a script of table entries,
//! packets in and packets expected out, run on the v1model switch (or the
//! PSA switch for `PSA_Switch` programs).
//!
//! The semantics are those of p4c's `backends/bmv2/bmv2stf.py`, which runs
//! p4c's `testdata/p4_16_samples/*.stf` on BMv2 (differences are listed
//! below):
//!
//! * `packet <port> <hex>` sends a frame. Packets run in script order, each
//!   to completion (clones, resubmits, recirculations, multicast copies
//!   included) before the next command; control-plane commands take effect
//!   where they are written. Packet `n` (from 1) arrives at `n` µs of the
//!   switch clock, so timestamps and meters are reproducible.
//! * `expect <port> <hex>` expects the next packet out of `port` (per-port
//!   FIFO order). `*` matches any nibble. Without a trailing `$` the
//!   pattern is a prefix of the packet (longer packets match); with `$` the
//!   lengths must be equal. The expectations are checked against what came
//!   out after the whole script, so `expect` may come before or after its
//!   `packet`. Counts must match: a missing or an extra packet on any port
//!   fails the test.
//! * `expect <port>` without data accepts any number of packets (0 or
//!   more) on that port, as in bmv2stf; mixing it with data expectations
//!   for the same port is an error.
//! * `no_packet`: every packet output so far must be matched by an
//!   `expect` written above (ports with a bare `expect` excepted).
//! * `wait` is a no-op (nothing runs in the background here).
//! * `add <table> [<prio>] <key>:<value>... <action>(<p>:<v>, ...) [= <name>]`:
//!   names resolve as in bmv2stf: a full name or a unique suffix at a `.`
//!   (`ipv4_lpm`, `ingress.t`); key names also as `hdr$0.f` for
//!   `hdr[0].f` and `h.$valid$` / `h.valid` for `h.isValid()`. Values:
//!   decimal, `0x`/`0b`/`0o` (with `_`), IPv4, MAC and IPv6 addresses, a
//!   negative number for `int<N>`. By match kind: **ternary** — a `0x`/
//!   `0b`/`0o` value's mask covers exactly the digits written, `*` digits
//!   (and digits not written) are don't-care (`0x****0101` on a 32-bit key
//!   is `0x0101 &&& 0xffff`, as bmv2stf's `makeMask`); `v&&&m` gives the
//!   mask explicitly; a decimal value is an exact match. **LPM** —
//!   `v/len`, or a `0x`/`0b`/`0o` value whose prefix length is the number
//!   of non-`*` digits times the digit width (bmv2stf's `makeLpm`); a
//!   decimal or address value is a full-length prefix. **range** —
//!   `lo->hi` or one value. **optional** — a value or `*`. `*` alone is a
//!   wildcard for any non-exact key. Keys left out are wildcards, and exact
//!   keys left out are 0 (bmv2stf's defaults). Priorities: the **higher**
//!   number wins (bmv2stf gives BMv2 `10000 - prio`); a priority on a
//!   table without ternary/range/optional keys is ignored, and an entry of
//!   such a table without one gets priority 0 (ties: first added wins).
//! * `setdefault <table> <action>(...)`, `remove all` (every entry the
//!   script added) / `remove $<name>` / `remove <table> [<prio>] <keys>`.
//! * `check_counter <counter>(<index> | $<name>) [packets|bytes] [<op> <v>]`
//!   compares a counter cell at that point of the script (`$<name>`: the
//!   direct-counter cell of the entry added with `= <name>`). Without a
//!   condition both packets and bytes must be 0 (p4c's parser defaults to
//!   `== 0`); with an operator but no `packets`/`bytes`, packets are
//!   compared.
//! * simple_switch_CLI commands that bmv2stf passes through
//!   (`mirroring_add`, `mc_mgrp_create`, `mc_node_create`,
//!   `mc_node_associate`, and here also `mirroring_delete`,
//!   `mc_mgrp_destroy`, `mc_node_dissociate`, `register_write`,
//!   `register_reset`, `counter_reset`, `meter_set_rates` with rates in
//!   tokens per µs); `register_read` / `counter_read` log the value.
//!
//! Differences from bmv2stf, on purpose: an unknown command, a bad value or
//! an unknown table/action/key is an error naming `file:line` (bmv2stf
//! ignores unknown commands); `no_packet` and `check_counter` are checked
//! (bmv2stf ignores them).

mod exec;
mod parse;
mod report;
mod wide_values;

use std::path::{Path, PathBuf};

use netsparse_bmv2::{ControlPlaneError, LoadError, SwitchConfig, SwitchStats};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::artifact::Artifact;

pub use parse::{parse_script, CmpOp, Command, CountKind, CounterIndex, Pattern, RemoveWhat};
pub use report::render_hex;

/// Why a script could not be run (as opposed to a test that ran and failed).
#[derive(Debug, thiserror::Error)]
pub enum StfError {
    /// The program does not compile (diagnostics rendered).
    #[error("{file} does not compile:\n{diagnostics}")]
    Compile {
        /// The program.
        file: String,
        /// The rendered diagnostics.
        diagnostics: String,
    },
    /// The switch cannot load the program.
    #[error("{file}: {source}")]
    Load {
        /// The program.
        file: String,
        /// Why.
        #[source]
        source: LoadError,
    },
    /// A malformed command.
    #[error("{file}:{line}: {detail}")]
    Syntax {
        /// The script.
        file: String,
        /// Line (from 1).
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A command the switch rejected (unknown or ambiguous table, action,
    /// key, parameter; a value that does not fit; a full table...).
    #[error("{file}:{line}: {source}")]
    Rejected {
        /// The script.
        file: String,
        /// Line (from 1).
        line: usize,
        /// The switch's error.
        #[source]
        source: Box<ControlPlaneError>,
    },
    /// A command that cannot be carried out for another reason (an unknown
    /// entry name, a key given twice, a bare and a data `expect` on one port).
    #[error("{file}:{line}: {detail}")]
    Command {
        /// The script.
        file: String,
        /// Line (from 1).
        line: usize,
        /// What is wrong.
        detail: String,
    },
}

/// How to run a script.
#[derive(Clone, Debug, Default)]
pub struct StfOptions {
    /// The script's name in messages (`tests/stf/foo.stf`).
    pub file: String,
    /// Seed of the switch's `random()`.
    pub seed: u64,
    /// Per-packet trace of the switch (`tracing` at INFO).
    pub trace: bool,
}

/// A packet that came out of the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The frame.
    pub bytes: Vec<u8>,
    /// Line of the `packet` command that produced it.
    pub packet_line: usize,
}

/// An `expect` with data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// The pattern.
    pub pattern: Pattern,
    /// Line of the `expect`.
    pub line: usize,
}

/// How a received packet differs from its expectation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// Nibble `nibble` (from 0) differs.
    Nibble {
        /// Index of the first differing nibble.
        nibble: usize,
    },
    /// The packet is shorter than the pattern.
    TooShort,
    /// `$` was given and the packet is longer.
    TooLong,
}

/// One reason a test failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The `index`-th packet out of `port` does not match the `index`-th
    /// expectation of that port.
    Packet {
        /// Port.
        port: u32,
        /// Position in the port's FIFO (from 0).
        index: usize,
        /// How.
        mismatch: Mismatch,
    },
    /// An expectation with no packet.
    Missing {
        /// Port.
        port: u32,
        /// Position in the port's FIFO (from 0).
        index: usize,
    },
    /// A packet with no expectation.
    Unexpected {
        /// Port.
        port: u32,
        /// Position in the port's FIFO (from 0).
        index: usize,
    },
    /// At a `no_packet`, more packets had left `port` than were expected so far.
    NoPacket {
        /// Line of the `no_packet`.
        line: usize,
        /// Port.
        port: u32,
        /// Packets out of the port by then.
        sent: usize,
        /// Expectations for the port written above the `no_packet`.
        expected: usize,
    },
    /// A `check_counter` that does not hold.
    Counter {
        /// Line of the `check_counter`.
        line: usize,
        /// The check as written (`c(2) packets == 3`).
        check: String,
        /// The value read.
        actual: u64,
    },
}

/// What happened when a script ran.
#[derive(Clone, Debug)]
pub struct StfOutcome {
    /// The script's name.
    pub file: String,
    /// Commands run.
    pub commands: usize,
    /// Packets sent.
    pub packets_sent: usize,
    /// Expectations (with data) per port.
    pub expected: std::collections::BTreeMap<u32, Vec<Expectation>>,
    /// Ports with a bare `expect` (any packets), with the line.
    pub any_ports: std::collections::BTreeMap<u32, usize>,
    /// Packets out, per port, in order.
    pub received: std::collections::BTreeMap<u32, Vec<Received>>,
    /// Why the test failed (empty: it passed).
    pub failures: Vec<Failure>,
    /// The switch's counters at the end.
    pub stats: SwitchStats,
}

impl StfOutcome {
    /// Whether every expectation and check held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Expectations with data, all ports.
    pub fn expectation_count(&self) -> usize {
        self.expected.values().map(Vec::len).sum()
    }

    /// Packets out, all ports.
    pub fn received_count(&self) -> usize {
        self.received.values().map(Vec::len).sum()
    }

    /// A one-line summary (`PASS file: 3 packets in, 2 out, 2 expected`).
    pub fn summary(&self) -> String {
        format!(
            "{} {}: {} packet(s) in, {} out, {} expected, {} command(s)",
            if self.passed() { "PASS" } else { "FAIL" },
            self.file,
            self.packets_sent,
            self.received_count(),
            self.expectation_count(),
            self.commands
        )
    }

    /// The failures as text: for each port, expected vs received with the
    /// differing nibbles marked (`^`, and red when `color`), missing and
    /// unexpected packets, failed counter checks.
    pub fn render(&self, color: bool) -> String {
        report::render(self, color)
    }
}

/// Compile a P4 program for the switch. `include_dirs` are `-I` directories.
pub fn compile_program(path: &Path, include_dirs: &[PathBuf]) -> Result<Artifact, StfError> {
    let mut sources = SourceMap::new();
    let opts = CompileOptions {
        include_dirs: include_dirs.to_vec(),
        ..CompileOptions::default()
    };
    compile_file(&mut sources, path, &opts)
        .map(|c| c.artifact)
        .map_err(|diags| StfError::Compile {
            file: path.display().to_string(),
            diagnostics: netsparse_compiler::diag::render_all(&diags, &sources),
        })
}

/// Run `script` (STF text) on a fresh switch loaded with `program`: the
/// PSA switch for `PSA_Switch` programs, else the v1model switch.
///
/// `Err` means the script could not be run (bad syntax, an unknown table,
/// a program the switch cannot load); a test that ran and failed is an
/// `Ok` outcome whose [`StfOutcome::passed`] is false.
pub fn run(program: &Artifact, script: &str, opts: &StfOptions) -> Result<StfOutcome, StfError> {
    let commands = parse_script(script, &opts.file)?;
    let cfg = SwitchConfig {
        seed: opts.seed,
        trace: opts.trace,
        ..SwitchConfig::default()
    };
    let load = |source| StfError::Load {
        file: program.program.clone(),
        source,
    };
    let sw: Box<dyn exec::StfTarget> = if program.arch == netsparse_externs::artifact::Arch::Psa {
        Box::new(netsparse_bmv2::PsaSwitch::new(program, cfg).map_err(load)?)
    } else {
        Box::new(netsparse_bmv2::Switch::new(program, cfg).map_err(load)?)
    };
    exec::Runner::new(sw, &opts.file).run(&commands)
}
