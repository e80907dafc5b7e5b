//! Helpers of the simulator's root tests (`tests/sim_*.rs`): running the
//! `netsparse` binary and reading its output, and naming the first line
//! where two reports differ (the determinism tests compare whole JSON
//! reports and should say where they part).
#![allow(dead_code)]

use std::process::{Command, Output};

/// Run the `netsparse` binary with `args` to completion.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(args)
        .output()
        .expect("run netsparse")
}

/// A finished run's stdout and stderr, as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Run the binary with `args` and check it refuses them as a usage error:
/// exit status 2, `needle` in its stderr, no panic and no doubled
/// "error:" prefix. Returns the stderr.
pub fn refused(args: &[&str], needle: &str) -> String {
    let o = run(args);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!err.contains("error: error"), "{args:?}: {err}");
    err
}

/// The first line where `a` and `b` differ, both versions of it (line 0
/// when one is a prefix of the other).
pub fn first_difference(a: &str, b: &str) -> String {
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(0);
    format!(
        "line {line}: {:?} vs {:?}",
        a.lines().nth(line),
        b.lines().nth(line)
    )
}
