//! v1model semantics on compiled programs: parser errors, drop, exit,
//! clone/resubmit/recirculate, multicast, truncate, stacks, asserts, digests.

mod common;

use common::*;
use netsparse_bmv2::v1model::instance_type;
use netsparse_bmv2::Replica;
use netsparse_engine::ControlPlane;

/// A 14-byte header used by every test program: `h` (a, b: 8 bits; c: 16;
/// d: 32; e: 48) and a program-specific body.
fn prog(decls: &str, parser: &str, ingress: &str, egress: &str, deparser: &str) -> String {
    format!(
        r#"
#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<8> b; bit<16> c; bit<32> d; bit<48> e; }}
header t_t {{ bit<8> v; }}
struct headers {{ h_t h; t_t t; t_t[3] st; }}
struct metadata {{ @field_list(1) bit<32> keep; bit<32> lose; }}
{decls}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{parser}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{ingress}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{egress}
}}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ {deparser} }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#
    )
}

const PARSE_H: &str = "state start { pkt.extract(hdr.h); transition accept; }";
const EMIT_H: &str = "pkt.emit(hdr.h);";

fn frame(a: u8, b: u8) -> Vec<u8> {
    let mut f = vec![a, b];
    f.extend_from_slice(&[0; 12]);
    f.extend_from_slice(b"payload");
    f
}

#[test]
fn parser_errors_reach_ingress() {
    let src = prog(
        "",
        "state start { pkt.extract(hdr.h); verify(hdr.h.a != 0xee, error.HeaderTooShort);
           transition select(hdr.h.b) { 1: one; 2: accept; } }
         state one { pkt.extract(hdr.t); transition accept; }",
        "apply {
            sm.egress_spec = 1;
            if (sm.parser_error == error.PacketTooShort) { hdr.h.c = 1; }
            else if (sm.parser_error == error.NoMatch) { hdr.h.c = 2; }
            else if (sm.parser_error == error.HeaderTooShort) { hdr.h.c = 3; }
            else if (sm.parser_error == error.NoError) { hdr.h.c = 4; }
         }",
        "apply { }",
        "pkt.emit(hdr.h); pkt.emit(hdr.t);",
    );
    let mut sw = p4_switch(&src);
    // b = 1 and nothing after h: extracting t fails → PacketTooShort; h stays valid.
    let mut f = frame(0, 1);
    f.truncate(14);
    let out = send(&mut sw, 0, &f);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].1[2..4], [0, 1]);
    // b = 3: no select case → NoMatch.
    let out = send(&mut sw, 0, &frame(0, 3));
    assert_eq!(out[0].1[2..4], [0, 2]);
    // verify fails → its error.
    let out = send(&mut sw, 0, &frame(0xee, 2));
    assert_eq!(out[0].1[2..4], [0, 3]);
    // All good.
    let out = send(&mut sw, 0, &frame(0, 2));
    assert_eq!(out[0].1[2..4], [0, 4]);
    // The unparsed bytes follow the emitted headers.
    assert_eq!(&out[0].1[14..], b"payload");
    assert_eq!(sw.stats().total.parser_errors, 3);
}

#[test]
fn drops_exit_and_egress_drop() {
    let src = prog(
        "",
        PARSE_H,
        "apply {
            sm.egress_spec = 2;
            if (hdr.h.a == 1) { mark_to_drop(sm); }
            if (hdr.h.a == 2) { sm.egress_spec = 511; }
            if (hdr.h.a == 3) { exit; }
            hdr.h.b = 0x77;
         }",
        "apply { if (hdr.h.a == 4) { mark_to_drop(sm); } hdr.h.c = (bit<16>)sm.egress_port; }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    assert!(send(&mut sw, 0, &frame(1, 0)).is_empty());
    assert!(send(&mut sw, 0, &frame(2, 0)).is_empty());
    // exit: ingress stops before writing b, egress still runs.
    let out = send(&mut sw, 0, &frame(3, 0));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, 2);
    assert_eq!(out[0].1[1], 0);
    assert_eq!(out[0].1[2..4], [0, 2]);
    assert!(send(&mut sw, 0, &frame(4, 0)).is_empty());
    let out = send(&mut sw, 0, &frame(5, 0));
    assert_eq!(out[0].1[1], 0x77);
    let d = sw.stats().total.drops;
    assert_eq!((d.ingress_drop, d.egress_drop), (2, 1));
}

#[test]
fn i2e_clone_preserves_field_list_and_original_bytes() {
    let src = prog(
        "",
        PARSE_H,
        "apply {
            meta.keep = 0xabcd;
            meta.lose = 0x1234;
            hdr.h.a = 0x99;
            sm.egress_spec = 1;
            clone_preserving_field_list(CloneType.I2E, 32w7, 1);
         }",
        "apply {
            hdr.h.d = meta.keep;
            hdr.h.c = (bit<16>)meta.lose;
            hdr.h.b = (bit<8>)sm.instance_type;
         }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    // No session yet: no clone, counted.
    let out = send(&mut sw, 0, &frame(1, 0));
    assert_eq!(out.len(), 1);
    assert_eq!(sw.stats().clone_no_session, 1);
    sw.mirroring_add(7, 3).unwrap();
    let out = send(&mut sw, 0, &frame(1, 0));
    assert_eq!(out.len(), 2);
    let clone = out.iter().find(|(p, _)| *p == 3).expect("clone on port 3");
    let orig = out
        .iter()
        .find(|(p, _)| *p == 1)
        .expect("original on port 1");
    // The clone is the packet as it arrived (a = 1), with the field list kept.
    assert_eq!(clone.1[0], 1);
    assert_eq!(u32::from(clone.1[1]), instance_type::INGRESS_CLONE);
    assert_eq!(clone.1[4..8], 0xabcdu32.to_be_bytes());
    assert_eq!(clone.1[2..4], [0, 0]);
    assert_eq!(orig.1[0], 0x99);
    assert_eq!(u32::from(orig.1[1]), instance_type::NORMAL);
    assert_eq!(orig.1[2..4], [0x12, 0x34]);
    assert_eq!(sw.stats().clones, 1);
}

#[test]
fn e2e_clone_copies_current_headers() {
    let src = prog(
        "",
        PARSE_H,
        "apply { sm.egress_spec = 1; }",
        "apply {
            if (sm.instance_type == 0) {
                hdr.h.a = 0x55;
                meta.keep = 9;
                clone_preserving_field_list(CloneType.E2E, 32w1, 1);
            } else {
                hdr.h.b = (bit<8>)sm.instance_type;
                hdr.h.d = meta.keep;
            }
         }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    sw.mirroring_add(1, 4).unwrap();
    let out = send(&mut sw, 0, &frame(0, 0));
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].0, 1);
    assert_eq!(out[1].0, 4);
    assert_eq!(
        out[1].1[0], 0x55,
        "E2E clones carry the egress modifications"
    );
    assert_eq!(u32::from(out[1].1[1]), instance_type::EGRESS_CLONE);
    assert_eq!(out[1].1[4..8], 9u32.to_be_bytes());
}

#[test]
fn resubmit_and_loop_cap() {
    let src = prog(
        "",
        PARSE_H,
        "apply {
            sm.egress_spec = 1;
            if (sm.instance_type == 0) { meta.keep = 42; meta.lose = 1; resubmit_preserving_field_list(1); }
            else { hdr.h.d = meta.keep; hdr.h.c = (bit<16>)meta.lose; hdr.h.b = (bit<8>)sm.instance_type; }
            if (hdr.h.a == 9) { resubmit_preserving_field_list(1); }
         }",
        "apply { }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    let out = send(&mut sw, 0, &frame(0, 0));
    assert_eq!(out.len(), 1);
    assert_eq!(u32::from(out[0].1[1]), instance_type::RESUBMIT);
    assert_eq!(out[0].1[4..8], 42u32.to_be_bytes());
    assert_eq!(out[0].1[2..4], [0, 0], "fields outside the list are reset");
    // Resubmitting forever hits the cap and is dropped.
    assert!(send(&mut sw, 0, &frame(9, 0)).is_empty());
    let st = sw.stats();
    assert_eq!(st.total.drops.loop_cap, 1);
    assert_eq!(st.resubmits, 1 + 16);
}

#[test]
fn recirculate_sees_the_deparsed_packet() {
    let src = prog(
        "",
        PARSE_H,
        "apply {
            sm.egress_spec = 2;
            if (sm.instance_type == 4) { hdr.h.b = hdr.h.a; hdr.h.d = meta.keep; }
         }",
        // Egress sees instance_type 0 (NORMAL) on both passes, as in
        // simple_switch: the second pass is told apart by b.
        "apply {
            if (hdr.h.b == 0) { hdr.h.a = 0x33; meta.keep = 5; recirculate_preserving_field_list(1); }
         }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    let out = send(&mut sw, 0, &frame(1, 0));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].1[0], 0x33);
    assert_eq!(
        out[0].1[1], 0x33,
        "the second pass parsed the modified packet"
    );
    assert_eq!(out[0].1[4..8], 5u32.to_be_bytes());
    assert_eq!(sw.stats().recirculations, 1);
}

#[test]
fn multicast_replicates_with_rid() {
    let src = prog(
        "",
        PARSE_H,
        "apply { sm.mcast_grp = (bit<16>)hdr.h.a; }",
        "apply { hdr.h.c = sm.egress_rid; hdr.h.b = (bit<8>)sm.instance_type; }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    sw.mc_group_set(
        5,
        &[
            Replica { port: 3, rid: 10 },
            Replica { port: 1, rid: 10 },
            Replica { port: 2, rid: 20 },
        ],
    )
    .unwrap();
    let out = send(&mut sw, 0, &frame(5, 0));
    let got: Vec<(u32, u16)> = out
        .iter()
        .map(|(p, f)| (*p, u16::from_be_bytes([f[2], f[3]])))
        .collect();
    assert_eq!(got, vec![(1, 10), (3, 10), (2, 20)]);
    assert!(out
        .iter()
        .all(|(_, f)| u32::from(f[1]) == instance_type::REPLICATION));
    // BMv2 CLI style: group, nodes, associate.
    sw.mc_group_create(6).unwrap();
    let n = sw.mc_node_create(7, &[4, 4, 0]).unwrap();
    sw.mc_node_associate(6, n).unwrap();
    let out = send(&mut sw, 0, &frame(6, 0));
    assert_eq!(out.iter().map(|(p, _)| *p).collect::<Vec<_>>(), vec![0, 4]);
    // Unknown group: dropped and counted.
    assert!(send(&mut sw, 0, &frame(8, 0)).is_empty());
    assert_eq!(sw.stats().total.drops.no_mcast_group, 1);
    assert!(sw.mc_group_create(0).is_err());
    assert!(sw.mc_node_create(1, &[511]).is_err());
}

#[test]
fn truncate_limits_the_output() {
    let src = prog(
        "",
        PARSE_H,
        "apply { sm.egress_spec = 1; truncate(32w16); }",
        "apply { }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    let out = send(&mut sw, 0, &frame(1, 2));
    assert_eq!(out[0].1.len(), 16);
    assert_eq!(&out[0].1[14..16], b"pa");
}

#[test]
fn failed_assertions_drop_and_count() {
    let src = prog(
        "",
        PARSE_H,
        "apply { sm.egress_spec = 1; assert(hdr.h.a != 7); assume(hdr.h.b != 7); }",
        "apply { }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    assert_eq!(send(&mut sw, 0, &frame(1, 1)).len(), 1);
    assert!(send(&mut sw, 0, &frame(7, 1)).is_empty());
    assert!(send(&mut sw, 0, &frame(1, 7)).is_empty());
    let st = sw.stats();
    assert_eq!(st.total.drops.assertion, 2);
    assert_eq!(st.engine.assertions_failed, 2);
}

#[test]
fn header_stacks_extract_push_pop_emit() {
    let src = prog(
        "",
        "state start { pkt.extract(hdr.h); transition select(hdr.h.a) { 0: accept; default: s; } }
         state s { pkt.extract(hdr.st.next); transition select(hdr.st.last.v) { 0: accept; default: s; } }",
        "apply {
            sm.egress_spec = 1;
            hdr.h.b = (bit<8>)(hdr.st.lastIndex + 1);
            if (hdr.h.a == 2) { hdr.st.pop_front(1); }
            if (hdr.h.a == 3) { hdr.st.push_front(1); hdr.st[0].setValid(); hdr.st[0].v = 0xaa; }
         }",
        "apply { }",
        "pkt.emit(hdr.h); pkt.emit(hdr.st);",
    );
    let mut sw = p4_switch(&src);
    let mk = |a: u8, vals: &[u8]| {
        let mut f = vec![a];
        f.extend_from_slice(&[0; 13]);
        f.extend_from_slice(vals);
        f
    };
    // Two elements: 5, then 0 (end).
    let out = send(&mut sw, 0, &mk(1, &[5, 0, 0x77]));
    assert_eq!(out[0].1[1], 2);
    assert_eq!(&out[0].1[14..], &[5, 0, 0x77]);
    let out = send(&mut sw, 0, &mk(2, &[5, 0]));
    assert_eq!(&out[0].1[14..], &[0]);
    let out = send(&mut sw, 0, &mk(3, &[5, 0]));
    assert_eq!(&out[0].1[14..], &[0xaa, 5, 0]);
    // Four non-zero elements overflow the 3-element stack: StackOutOfBounds.
    let out = send(&mut sw, 0, &mk(1, &[1, 2, 3, 4]));
    assert_eq!(out[0].1[1], 3);
    assert_eq!(sw.stats().total.parser_errors, 1);
}

#[test]
fn digests_and_log_msgs() {
    let src = prog(
        "struct learn_t { bit<8> a; bit<16> c; }",
        PARSE_H,
        "apply {
            sm.egress_spec = 1;
            digest<learn_t>(1, { hdr.h.a, hdr.h.c });
            log_msg(\"a={} c={}\", { hdr.h.a, hdr.h.c });
         }",
        "apply { }",
        EMIT_H,
    );
    let mut sw = p4_switch(&src);
    let mut f = frame(3, 0);
    f[3] = 9;
    send(&mut sw, 0, &f);
    let d = sw.take_digests();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].receiver, 1);
    assert_eq!(
        d[0].fields.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
        vec![3, 9]
    );
    assert!(sw.take_digests().is_empty());
    assert_eq!(sw.stats().engine.log_msgs, 1);
}

#[test]
fn checksums_with_payload() {
    let src = r#"
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<16> d; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) {
    apply { verify_checksum_with_payload(true, { hdr.h.a, hdr.h.b }, hdr.h.c, HashAlgorithm.csum16); }
}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; hdr.h.b = (bit<8>)sm.checksum_error; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) {
    apply { update_checksum_with_payload(true, { hdr.h.a }, hdr.h.d, HashAlgorithm.csum16); }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    use netsparse_externs::artifact::HashAlgo;
    use netsparse_externs::hash::compute;
    let mut sw = p4_switch(src);
    let payload = b"0123456789abc";
    let good = compute(HashAlgo::Csum16, &[&[0x11u8, 0x22][..], payload].concat()) as u16;
    let mut f = vec![0x11, 0x22];
    f.extend_from_slice(&good.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    let out = send(&mut sw, 0, &f);
    assert_eq!(out[0].1[1], 0, "checksum verified");
    let want = compute(HashAlgo::Csum16, &[&[0x11u8][..], payload].concat()) as u16;
    assert_eq!(out[0].1[4..6], want.to_be_bytes());
    f[2] ^= 1;
    let out = send(&mut sw, 0, &f);
    assert_eq!(out[0].1[1], 1, "checksum error");
    assert_eq!(sw.stats().total.checksum_errors, 1);
}

#[test]
fn malformed_frames_are_counted_never_panic() {
    let mut sw = switch(&netsparse_bmv2::testing::ipv4_forward());
    // Shorter than Ethernet: parsed like any frame (as BMv2 does), so the
    // Ethernet extract fails and each counts as a parser error.
    for n in 0..14 {
        send(&mut sw, 1, &vec![0x45; n]);
    }
    assert_eq!(sw.stats().total.parser_errors, 14);
    assert!(send(&mut sw, 1, &vec![0; 9217]).is_empty());
    assert!(send(&mut sw, 600, &[0; 64]).is_empty());
    // Garbage that claims IPv4 but is cut anywhere: handled.
    let good = ipv4_udp([10, 0, 1, 1], 64, b"0123456789");
    for n in 14..good.len() {
        send(&mut sw, 1, &good[..n]);
    }
    let d = sw.stats().total.drops;
    assert_eq!(d.malformed_oversize, 1);
    assert_eq!(d.bad_port, 1);
}
