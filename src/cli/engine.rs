//! `--engine`: how P4 programs run in this process (native code generated
//! from each program and compiled by rustc, or the interpreter), and the
//! one line that says what happened.

use anyhow::{bail, Result};
use netsparse_engine::native::{self, EngineMode};

/// The values `--engine` takes (after any command, and after a `matrix gen`
/// spec).
pub const MODES: [&str; 3] = ["auto", "native", "interp"];

/// The mode from `--engine`, else `NETSPARSE_ENGINE`, else the command's
/// default (`auto` for the long-running simulator commands, `interp`
/// for the rest). A bad `NETSPARSE_NATIVE_CACHE_MAX` is refused here too,
/// before anything runs.
pub fn mode(flag: Option<&str>, long_runs: bool) -> Result<EngineMode> {
    native::cache_max_from_env().map_err(anyhow::Error::msg)?;
    if let Some(f) = flag {
        return EngineMode::parse(f)
            .ok_or_else(|| anyhow::anyhow!("--engine {f:?}: expected auto, native or interp"));
    }
    match std::env::var("NETSPARSE_ENGINE") {
        Ok(v) if !v.is_empty() => EngineMode::parse(&v).ok_or_else(|| {
            anyhow::anyhow!("NETSPARSE_ENGINE={v:?}: expected auto, native or interp")
        }),
        _ => Ok(if long_runs {
            EngineMode::Auto
        } else {
            EngineMode::Interp
        }),
    }
}

/// After the command: with `--engine native`, a program that could not
/// get native code is an error (it ran on the interpreter).
pub fn check(mode: EngineMode) -> Result<()> {
    if mode != EngineMode::Native {
        return Ok(());
    }
    let s = native::status();
    if let Some(e) = s.first_error {
        bail!(
            "--engine native: {} program load(s) ran on the interpreter instead: {e}",
            s.fell_back
        );
    }
    Ok(())
}

/// One line on how the programs ran, e.g. for `bench` and `sim`:
/// `P4 engine: native (12 loads; 2 libraries compiled in 0.6 s, 1 from the cache; 14 of 120 statements escape to the interpreter)`.
pub fn summary() -> String {
    let s = native::status();
    let b = native::build_counts();
    let mode = native::mode();
    if mode == EngineMode::Interp {
        return "P4 engine: interpreter".to_owned();
    }
    let mut line = if s.attached > 0 {
        format!(
            "P4 engine: native ({} load(s); {} librar{} compiled in {:.1} s, {} from the cache; {} of {} statements escape to the interpreter)",
            s.attached,
            b.compiled,
            if b.compiled == 1 { "y" } else { "ies" },
            b.compile_ms as f64 / 1000.0,
            b.cached,
            s.escaped_stmts,
            s.stmts
        )
    } else {
        "P4 engine: interpreter".to_owned()
    };
    if let Some(e) = s.first_error {
        line.push_str(&format!(
            "; {} load(s) on the interpreter: {}",
            s.fell_back,
            e.to_string().lines().next().unwrap_or("")
        ));
    }
    line
}
