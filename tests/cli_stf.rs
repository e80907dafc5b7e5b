//! `netsparse stf` end to end: exit status 0 / 1 / 2, the diff printed on a
//! failure, `file:line` on script errors, compile errors, `-v`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stf(program: &Path, script: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .arg("stf")
        .arg(program)
        .arg(script)
        .args(extra)
        .output()
        .expect("run netsparse stf")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The suite's exact-match program, with a script written to a temp dir.
fn with_script(script: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = dir.path().join("t.stf");
    std::fs::write(&s, script).expect("write script");
    (dir, root().join("tests/stf/table_exact.p4"), s)
}

#[test]
fn a_passing_test_exits_0() {
    let o = stf(
        &root().join("tests/stf/table_lpm.p4"),
        &root().join("tests/stf/table_lpm.stf"),
        &[],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("PASS "), "{out}");
    assert!(out.contains("6 packet(s) in, 5 out, 5 expected"), "{out}");
}

#[test]
fn a_failing_test_exits_1_with_a_diff() {
    let (_d, p4, s) = with_script(
        "add dmac hdr.eth.dst:0x000000000001 forward(port:1, new_src:0x0a0b0c0d0e0f)\n\
         packet 0 000000000001 ffffffffffff 0800 00\n\
         expect 1 000000000001 0a0b0c0d0eff 0800 00 $\n\
         expect 1 000000000009\n\
         packet 0 000000000004 ffffffffffff 0800 00\n",
    );
    let o = stf(&p4, &s, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.starts_with("FAIL "), "{out}");
    // The mismatch, with the differing hex digit marked.
    assert!(
        out.contains("#1: expect at line 3 vs packet from line 2: differs at byte 11"),
        "{out}"
    );
    assert!(
        out.contains("expected: 00 00 00 00 00 01 0a 0b 0c 0d 0e ff 08 00 00 $"),
        "{out}"
    );
    assert!(
        out.contains("received: 00 00 00 00 00 01 0a 0b 0c 0d 0e 0f 08 00 00"),
        "{out}"
    );
    let marks = out
        .lines()
        .find(|l| l.trim_start().starts_with('^'))
        .expect("a line of ^ marks");
    assert_eq!(marks.find('^'), Some(15 + 3 * 11), "{out}");
    // The second expectation has no packet; the miss went to port 0 unexpected.
    assert!(
        out.contains("#2: expect at line 4: no packet received"),
        "{out}"
    );
    assert!(
        out.contains("port 0: 0 packet(s) expected, 1 received"),
        "{out}"
    );
    assert!(
        out.contains("#1: unexpected packet (from the packet at line 5)"),
        "{out}"
    );
}

#[test]
fn failed_counter_checks_are_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = dir.path().join("c.stf");
    std::fs::write(
        &s,
        "packet 0 000000000001 000000000002 0001\nexpect 1 000000000001 000000000002 0001\n\
         check_counter by_type(1) packets == 5\nno_packet\n",
    )
    .expect("write");
    let o = stf(&root().join("tests/stf/extern_counter.p4"), &s, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("line 3: check_counter by_type(1) packets == 5 failed: the value is 1"),
        "{out}"
    );
}

#[test]
fn no_packet_catches_an_early_packet() {
    let (_d, p4, s) = with_script(
        "add dmac dst:1 forward(port:1, new_src:0)\n\
         packet 0 000000000001 ffffffffffff 0800 00\n\
         no_packet\n\
         expect 1 000000000001 000000000000 0800 00\n",
    );
    let o = stf(&p4, &s, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("line 3: no_packet: 1 packet(s) had left port 1, but only 0 were expected"),
        "{out}"
    );
}

#[test]
fn script_errors_exit_2_with_file_and_line() {
    for (script, line, what) in [
        ("wait\npacket 0 0g\n", 2, "not a hex digit"),
        ("wait\n\nfrobnicate 1\n", 3, "unknown command `frobnicate`"),
        ("add nosuch k:1 a()\n", 1, "no table named `nosuch`"),
        ("add dmac dst:1 nosuch()\n", 1, "has no action `nosuch`"),
        ("add dmac nokey:1 tag(t:1)\n", 1, "has no key `nokey`"),
        ("add dmac dst:1 tag(t:0x10000)\n", 1, "parameter `t`"),
        ("add dmac dst:1 tag()\n", 1, "needs parameter `t`"),
        ("add dmac dst:1 tag(t:1, u:2)\n", 1, "has no parameter `u`"),
        ("check_counter nosuch(0) == 1\n", 1, "nosuch"),
        ("remove $X\n", 1, "no entry was named `X`"),
        ("expect 1 00\nexpect 1\n", 2, "already expects data"),
    ] {
        let (_d, p4, s) = with_script(script);
        let o = stf(&p4, &s, &[]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{script}: {out}{err}");
        let loc = format!("t.stf:{line}: ");
        assert!(err.contains(&loc), "{script}: want {loc} in {err}");
        assert!(err.contains(what), "{script}: want {what} in {err}");
    }
}

#[test]
fn ambiguous_names_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p4 = dir.path().join("amb.p4");
    std::fs::write(
        &p4,
        r#"#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    table t { key = { hdr.eth.dst: exact; } actions = { NoAction; } }
    apply { t.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    table t { key = { hdr.eth.dst: exact; } actions = { NoAction; } }
    apply { t.apply(); }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"#,
    )
    .expect("write");
    let s = dir.path().join("amb.stf");
    std::fs::write(&s, "add t dst:1 NoAction()\nadd I.t dst:1 NoAction()\n").expect("write");
    let o = stf(&p4, &s, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("amb.stf:1: "), "{err}");
    assert!(
        err.contains("ambiguous") && err.contains("I.t") && err.contains("E.t"),
        "{err}"
    );
    // The qualified name works.
    std::fs::write(&s, "add I.t dst:1 NoAction()\n").expect("write");
    assert_eq!(stf(&p4, &s, &[]).status.code(), Some(0));
}

#[test]
fn compile_errors_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p4 = dir.path().join("bad.p4");
    std::fs::write(&p4, "header h_t { bit<8> a }\n").expect("write");
    let s = dir.path().join("bad.stf");
    std::fs::write(&s, "wait\n").expect("write");
    let o = stf(&p4, &s, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("does not compile") && err.contains("bad.p4"),
        "{err}"
    );
}

#[test]
fn missing_files_exit_2() {
    let o = stf(
        &root().join("tests/stf/table_exact.p4"),
        Path::new("/nonexistent/x.stf"),
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("cannot read /nonexistent/x.stf"));
}

#[test]
fn verbose_prints_the_commands_and_packets() {
    let o = stf(
        &root().join("tests/stf/table_exact.p4"),
        &root().join("tests/stf/table_exact.stf"),
        &["-v"],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        err.contains("table_exact.stf:6: packet 0 (15 bytes)"),
        "{err}"
    );
    assert!(
        err.contains("out on port 1: 00 00 00 00 00 01 0a 0b 0c 0d 0e 0f 08 00 00"),
        "{err}"
    );
    assert!(err.contains("rx pkts"), "switch counters: {err}");
    let o = stf(
        &root().join("tests/stf/table_exact.p4"),
        &root().join("tests/stf/table_exact.stf"),
        &["--log-console"],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("parser state start"), "trace: {err}");
}
