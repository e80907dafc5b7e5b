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
pub mod user_programs;

use std::io::{IsTerminal as _, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// Send `tracing` output to stderr: INFO and above when `verbose` (the
/// per-packet traces of `--log-console`), else WARN; wall-clock timestamps
/// when `timestamps` (the live drivers), none for deterministic runs.
pub fn init_logging(verbose: bool, timestamps: bool) {
    init_logging_limited(verbose, timestamps, None);
}

/// The batch commands' logging (`sim`, `paper`, `bench`, `demo`, `compile`,
/// `matrix`, `topo`, ...): the libraries' warnings on stderr, at most
/// [`BATCH_LOG_LINES`] of them. A warning that repeats per packet (a
/// failing `assert` in a user's program, say) is also counted in the
/// run's statistics, so the rest are only announced as suppressed rather
/// than slowing the run with millions of lines.
pub fn init_batch_logging() {
    init_logging_limited(false, false, Some(BATCH_LOG_LINES));
}

/// Log lines a batch command prints before it suppresses the rest.
pub const BATCH_LOG_LINES: u64 = 100;

fn init_logging_limited(verbose: bool, timestamps: bool, limit: Option<u64>) {
    let level = if verbose {
        tracing::Level::INFO
    } else {
        tracing::Level::WARN
    };
    let builder = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(move || LimitedStderr { limit })
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    // A second initialisation (tests running several commands) is harmless.
    let _ = if timestamps {
        builder.try_init()
    } else {
        builder.without_time().try_init()
    };
}

/// Log lines written so far by [`LimitedStderr`] (one `write` per event:
/// the formatter writes each event's line in one go).
static LOG_LINES: AtomicU64 = AtomicU64::new(0);

/// Stderr, up to `limit` log lines; the first line past it says that the
/// rest are suppressed.
struct LimitedStderr {
    limit: Option<u64>,
}

impl Write for LimitedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(limit) = self.limit else {
            return std::io::stderr().write(buf);
        };
        let n = LOG_LINES.fetch_add(1, Ordering::Relaxed);
        if n < limit {
            std::io::stderr().write_all(buf)?;
        } else if n == limit {
            writeln!(
                std::io::stderr(),
                "netsparse: more than {limit} log lines; the rest are suppressed \
                 (what they report is counted in the run's statistics)"
            )?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
