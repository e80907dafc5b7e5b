//! The STF suite again, every program run as native code (generated Rust,
//! compiled by `rustc`; see `netsparse_engine::native`): each script must
//! pass or fail exactly as it does on the interpreter, and every program
//! must get native code — a program that quietly fell back to the
//! interpreter would prove nothing here.
//!
//! Needs a Rust compiler (the one that built the tests): without one the
//! test says so and fails rather than passing on the interpreter.
//! `NETSPARSE_STF=<substring>` narrows it as it does the interpreter's run.

mod stf_support;

use netsparse_engine::native::{self, EngineMode};

#[test]
fn stf_suite_native() {
    native::set_mode(EngineMode::Native);
    stf_support::run_suite();
    let s = native::status();
    let b = native::build_counts();
    eprintln!(
        "native: {} load(s) attached, {} fell back; {} librar(ies) compiled in {:.1} s, {} from the cache ({}); {} of {} statements escaped",
        s.attached,
        s.fell_back,
        b.compiled,
        b.compile_ms as f64 / 1000.0,
        b.cached,
        native::cache_dir().display(),
        s.escaped_stmts,
        s.stmts
    );
    assert!(
        s.first_error.is_none(),
        "a program got no native code: {}",
        s.first_error.map(|e| e.to_string()).unwrap_or_default()
    );
    assert!(s.attached > 0, "no program ran as native code");
}
