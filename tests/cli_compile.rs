//! `netsparse compile` end to end: exit codes, output files, diagnostics.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
}

fn program(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("programs")
        .join(name)
}

#[test]
fn compiles_ipv4_forward_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let o = bin()
        .args(["compile"])
        .arg(program("ipv4_forward.p4"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("out.json"));
    let text = std::fs::read_to_string(&out).unwrap();
    let art = netsparse_externs::artifact::Artifact::from_json(&text).unwrap();
    assert_eq!(art.program, "ipv4_forward");
    assert!(art.tables.iter().any(|t| t.name == "MyIngress.ipv4_lpm"));
}

#[test]
fn default_output_is_stem_json_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .current_dir(dir.path())
        .args(["compile"])
        .arg(program("ipv4_forward.p4"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "ipv4_forward.json"
    );
    assert!(dir.path().join("ipv4_forward.json").is_file());
}

#[test]
fn emits_ir_and_dot_to_stdout() {
    for (emit, needle) in [
        ("ir", "control MyIngress"),
        ("dot", "digraph \"tables MyIngress\""),
        ("ast", "V1Switch("),
    ] {
        let o = bin()
            .args(["compile", "--emit", emit])
            .arg(program("ipv4_forward.p4"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(needle),
            "--emit {emit}"
        );
    }
}

#[test]
fn a_bad_program_exits_1_with_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.p4");
    let text = std::fs::read_to_string(program("ipv4_forward.p4"))
        .unwrap()
        .replace("ipv4_lpm.apply();", "ipv4_lmp.apply();");
    std::fs::write(&bad, text).unwrap();
    let o = bin()
        .current_dir(dir.path())
        .args(["compile", "bad.p4"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error[E0101]"), "{err}");
    assert!(err.contains("ipv4_lpm"), "the hint names the table: {err}");
    assert!(!dir.path().join("bad.json").exists());
}

#[test]
fn stage_limit_is_a_program_error() {
    let o = bin()
        .args(["compile", "--emit", "ir", "--max-tables", "0"])
        .arg(program("ipv4_forward.p4"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("E0422"));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let o = bin()
        .args(["compile", "/nonexistent/x.p4"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bin()
        .args(["compile", "--emit", "nonsense"])
        .arg(program("ipv4_forward.p4"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bin()
        .args(["compile", "-D", "1bad"])
        .arg(program("ipv4_forward.p4"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `--emit rust` without a compiler, and a bad cache bound, are exit 2
/// with the cause named (what the source is: `tests/stf_native.rs`).
#[test]
fn emit_rust_errors_name_their_cause() {
    let o = bin()
        .env("NETSPARSE_RUSTC", "/nonexistent/rustc")
        .args(["compile", "--emit", "rust"])
        .arg(program("ipv4_forward.p4"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no Rust compiler") && err.contains("/nonexistent/rustc"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    for bad in ["0", "lots", "-3"] {
        let o = bin()
            .env("NETSPARSE_NATIVE_CACHE_MAX", bad)
            .args(["compile", "--emit", "ir"])
            .arg(program("ipv4_forward.p4"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "NETSPARSE_NATIVE_CACHE_MAX={bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("NETSPARSE_NATIVE_CACHE_MAX") && err.contains("1 or more"),
            "{err}"
        );
    }
}
