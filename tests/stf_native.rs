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

/// `hash`, `verify_checksum` and `update_checksum` over plain fields run as
/// generated code, not as escapes: the library's source (kept beside it in
/// the cache) has none of them among its escaped statements. (The suite
/// above checks that these programs still give the STF scripts' results.)
#[test]
fn hashes_and_checksums_run_natively() {
    use netsparse_bmv2::v1model::{Switch, SwitchConfig};
    use netsparse_engine::ControlPlane;

    native::set_mode(EngineMode::Native);
    let root = stf_support::root();
    for (program, escapes) in [
        ("extern_hash.p4", ["extern call hash"].as_slice()),
        (
            "checksum_ipv4.p4",
            ["extern call verify_checksum", "extern call update_checksum"].as_slice(),
        ),
    ] {
        let art = stf_support::compile(&root.join(program)).unwrap();
        let sw = Switch::new(&art, SwitchConfig::default()).unwrap();
        let n = sw
            .engine()
            .native()
            .unwrap_or_else(|| panic!("{program}: no native code ({:?})", native::status()));
        let src = native::cache_dir().join(format!("ns{:016x}.rs", n.hash()));
        let text = std::fs::read_to_string(&src)
            .unwrap_or_else(|e| panic!("{program}: {}: {e}", src.display()));
        for e in escapes {
            assert!(!text.contains(e), "{program}: `{e}` still escapes");
        }
        assert!(
            text.contains("hash(c, "),
            "{program}: no digest computed natively"
        );
    }
}
