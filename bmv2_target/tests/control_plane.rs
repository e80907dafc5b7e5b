//! Control plane: name resolution, runtime JSON, BMv2 command files.

mod common;

use common::*;
use netsparse_bmv2::{ControlPlaneError, EntriesError};
use netsparse_engine::control::{commands, runtime_json};
use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::KeyMatch;

const TWO_TABLES: &str = r#"
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> d; bit<32> e; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<16>>(4) r;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action mark(bit<16> v) { hdr.h.c = v; }
    table t { key = { hdr.h.a: exact; } actions = { fwd; mark; } size = 8; }
    table acl { key = { hdr.h.a: ternary; hdr.h.b: range; } actions = { fwd; NoAction; } default_action = NoAction(); }
    apply { t.apply(); acl.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action mark(bit<16> v) { hdr.h.c = v; }
    table t { key = { hdr.h.b: exact; } actions = { mark; } }
    apply { t.apply(); }
}
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

#[test]
fn names_resolve_by_suffix_and_ambiguity_lists_candidates() {
    let mut sw = p4_switch(TWO_TABLES);
    let e = sw
        .add_entry("t", &[KeyMatch::Exact { value: 1 }], "fwd", &[1], None)
        .unwrap_err();
    assert_eq!(
        e,
        ControlPlaneError::Ambiguous {
            kind: "table",
            name: "t".into(),
            candidates: vec!["I.t".into(), "E.t".into()],
        }
    );
    assert_eq!(
        e.to_string(),
        "table name `t` is ambiguous: it matches I.t, E.t"
    );
    sw.add_entry("I.t", &[KeyMatch::Exact { value: 1 }], "fwd", &[1], None)
        .unwrap();
    sw.add_entry("E.t", &[KeyMatch::Exact { value: 1 }], "mark", &[7], None)
        .unwrap();
    sw.add_entry(
        "acl",
        &[KeyMatch::Any, KeyMatch::Any],
        "I.fwd",
        &[2],
        Some(1),
    )
    .unwrap();
    let e = sw.add_entry("nope", &[], "fwd", &[], None).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("no table named `nope` (known: I.t, I.acl, E.t)"),
        "{e}"
    );
    let e = sw
        .add_entry("E.t", &[KeyMatch::Exact { value: 2 }], "fwd", &[1], None)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "table `E.t` has no action `fwd` (its actions: E.mark, NoAction)"
    );
    let info = sw.table_info("acl").unwrap();
    assert!(info.needs_priority);
    assert_eq!(info.keys.len(), 2);
    assert_eq!(info.actions[0].params, vec![("port".to_string(), 9)]);
    // A table entry is found by its match.
    let h = sw
        .find_entry("I.t", &[KeyMatch::Exact { value: 1 }], None)
        .unwrap();
    assert!(h.is_some());
}

#[test]
fn entries_by_key_and_parameter_names() {
    let mut sw = p4_switch(TWO_TABLES);
    // Keys in any order, by suffix; the range key left out is a wildcard.
    sw.add_entry_by_name(
        "acl",
        &[(
            "h.a",
            KeyMatch::Ternary {
                value: 1,
                mask: 0xff,
            },
        )],
        "fwd",
        &[("port", 3)],
        Some(5),
    )
    .unwrap();
    let mut f = vec![1, 99];
    f.extend_from_slice(&[0; 12]);
    assert_eq!(send(&mut sw, 0, &f)[0].0, 3);
    let e = sw
        .add_entry_by_name(
            "acl",
            &[("hdr.h.zz", KeyMatch::Any)],
            "fwd",
            &[("port", 3)],
            Some(5),
        )
        .unwrap_err();
    assert!(matches!(e, ControlPlaneError::NoSuchKey { .. }), "{e}");
    let e = sw
        .add_entry_by_name("I.t", &[], "fwd", &[("port", 3)], None)
        .unwrap_err();
    assert!(matches!(e, ControlPlaneError::KeyCount { .. }), "{e}");
    let e = sw
        .add_entry_by_name(
            "I.t",
            &[("hdr.h.a", KeyMatch::Exact { value: 4 })],
            "fwd",
            &[("port", 3), ("x", 1)],
            None,
        )
        .unwrap_err();
    assert!(matches!(e, ControlPlaneError::NoSuchParam { .. }), "{e}");
}

#[test]
fn runtime_json_tutorial_format() {
    let mut sw = switch(&netsparse_bmv2::testing::ipv4_forward());
    let json = r#"{
        "target": "bmv2", "p4info": "x", "bmv2_json": "y",
        "table_entries": [
            { "table": "MyIngress.ipv4_lpm", "default_action": true,
              "action_name": "MyIngress.drop", "action_params": {} },
            { "table": "MyIngress.ipv4_lpm", "match": { "hdr.ipv4.dstAddr": ["10.0.1.1", 32] },
              "action_name": "MyIngress.ipv4_forward",
              "action_params": { "dstAddr": "08:00:00:00:01:11", "port": 1 } },
            { "table": "ipv4_lpm", "match": { "hdr.ipv4.dstAddr": [167772672, 24] },
              "action_name": "ipv4_forward",
              "action_params": { "port": 2, "dstAddr": "0x080000000222" } }
        ],
        "multicast_group_entries": [
            { "multicast_group_id": 1, "replicas": [ { "egress_port": 1, "instance": 1 }, { "egress_port": 2, "instance": 1 } ] }
        ],
        "clone_session_entries": [
            { "clone_session_id": 100, "replicas": [ { "egress_port": 3, "instance": 0 } ] }
        ]
    }"#;
    let l = runtime_json::apply(&mut sw, json, "s1.json").unwrap();
    assert_eq!(
        (l.entries, l.defaults, l.mc_groups, l.clone_sessions),
        (2, 1, 1, 1)
    );
    let out = send(&mut sw, 0, &ipv4_udp([10, 0, 1, 1], 64, b"x"));
    assert_eq!(out[0].0, 1);
    let out = send(&mut sw, 0, &ipv4_udp([10, 0, 2, 9], 64, b"x"));
    assert_eq!(out[0].0, 2);
    assert_eq!(&out[0].1[0..6], &[8, 0, 0, 0, 2, 0x22]);
    assert_eq!(sw.mc_group_replicas(1).map(<[_]>::len), Some(2));
}

#[test]
fn runtime_json_errors_name_the_entry() {
    let mut sw = switch(&netsparse_bmv2::testing::ipv4_forward());
    let cases = [
        (
            r#"{"table_entries": [{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.0", 8]}, "action_name": "MyIngress.ipv4_forward", "action_params": {"dstAddr": 1}}]}"#,
            "f.json: table_entries[0] (table MyIngress.ipv4_lpm): action MyIngress.ipv4_forward: missing parameter `port`",
        ),
        (
            r#"{"table_entries": [{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.0", 8]}, "action_name": "MyIngress.ipv4_forward", "action_params": {"dstAddr": 1, "port": 1, "vlan": 2}}]}"#,
            "f.json: table_entries[0] (table MyIngress.ipv4_lpm): action `MyIngress.ipv4_forward` has no parameter `vlan` (its parameters: dstAddr, port)",
        ),
        (
            r#"{"table_entries": [{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.0", 40]}, "action_name": "MyIngress.drop"}]}"#,
            "f.json: table_entries[0] (table MyIngress.ipv4_lpm): prefix length 40 is longer than key `hdr.ipv4.dstAddr` of table `MyIngress.ipv4_lpm` (32 bits)",
        ),
        (
            r#"{"table_entries": [{"table": "MyIngress.nope", "action_name": "a"}]}"#,
            "f.json: table_entries[0] (table MyIngress.nope): no table named `MyIngress.nope` (known: MyIngress.ipv4_lpm)",
        ),
        (
            r#"{"table_entries": [{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.srcAddr": ["10.0.0.0", 8]}, "action_name": "MyIngress.drop"}]}"#,
            "f.json: table_entries[0] (table MyIngress.ipv4_lpm): table `MyIngress.ipv4_lpm` has no key `hdr.ipv4.srcAddr` (its keys: hdr.ipv4.dstAddr)",
        ),
        (
            r#"{"table_entries": [{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.0", 8]}, "action_name": "MyIngress.ipv4_forward", "action_params": {"dstAddr": 1, "port": 512}}]}"#,
            "f.json: table_entries[0] (table MyIngress.ipv4_lpm): parameter `port`: 512 does not fit in 9 bits",
        ),
        (r#"{"table_entries": 3}"#, "f.json: `table_entries` must be an array"),
        ("{", "f.json: not valid JSON"),
    ];
    for (json, want) in cases {
        let e = runtime_json::apply(&mut sw, json, "f.json").unwrap_err();
        assert!(e.to_string().starts_with(want), "got: {e}\nwant: {want}");
    }
}

#[test]
fn bmv2_command_files() {
    let mut sw = p4_switch(TWO_TABLES);
    let text = "\
# a comment line
table_add I.t I.fwd 1 => 3
table_add I.t mark 2 => 0x77   # trailing comment

table_add acl fwd 0x10&&&0xf0 0->100 => 4 20
table_add acl fwd 0x10&&&0xf0 0->100 => 5 10
table_set_default acl fwd 6
register_write r 1 0xbeef
mirroring_add 5 2
mc_mgrp_create 9
mc_node_create 3 1 2
mc_node_associate 9 0
table_modify I.t I.fwd 0 => 4
";
    let a = commands::apply(&mut sw, text, "cmds.txt").unwrap();
    assert_eq!((a.commands, a.entries), (11, 4));
    assert_eq!(sw.register_read("r", 1).unwrap(), 0xbeef);
    assert_eq!(sw.mc_group_replicas(9).map(<[_]>::len), Some(2));
    // BMv2 priorities: the lower number wins, so `=> 5 10` beats `=> 4 20`.
    let mut f = vec![0x12, 50];
    f.extend_from_slice(&[0; 12]);
    let out = send(&mut sw, 0, &f);
    assert_eq!(out[0].0, 5);
    // Default of acl, and the modified t entry (handle 0 → port 4; acl misses).
    let mut f = vec![1, 200];
    f.extend_from_slice(&[0; 12]);
    assert_eq!(send(&mut sw, 0, &f)[0].0, 6);
    sw.set_default("acl", "NoAction", &[]).unwrap();
    assert_eq!(send(&mut sw, 0, &f)[0].0, 4);
    let entries = sw.entries("acl").unwrap();
    assert_eq!(entries[1].priority, u32::MAX - 10);
}

#[test]
fn bmv2_command_errors_carry_file_and_line() {
    let mut sw = p4_switch(TWO_TABLES);
    let cases = [
        (
            "table_add I.t fwd 1 => 512",
            "c.txt:1: parameter `port`: `512` does not fit in 9 bits",
        ),
        (
            "\n\ntable_add I.t fwd 1 2 => 1",
            "c.txt:3: table `I.t` has 1 key field(s), the entry gives 2",
        ),
        (
            "table_add I.t fwd 256 => 1",
            "c.txt:1: key `hdr.h.a`: `256` does not fit in 8 bits",
        ),
        (
            "table_add I.t nope 1 => 1",
            "c.txt:1: table `I.t` has no action `nope` (its actions: I.fwd, I.mark, NoAction)",
        ),
        (
            "table_add acl fwd 1&&&1 0->1 => 1",
            "c.txt:1: table `I.acl` has ternary/range/optional keys: the entry needs a priority",
        ),
        ("frobnicate 1 2", "c.txt:1: unknown command `frobnicate`"),
        (
            "register_write r 9 1",
            "c.txt:1: index 9 is out of range for `I.r` (size 4)",
        ),
        (
            "table_delete I.t 99",
            "c.txt:1: table `I.t` has no entry with handle 99",
        ),
        ("mc_node_associate 3 0", "c.txt:1: no multicast node 0"),
        ("table_add", "c.txt:1: usage: table_add"),
    ];
    for (text, want) in cases {
        let e = commands::apply(&mut sw, text, "c.txt").unwrap_err();
        assert!(e.to_string().starts_with(want), "got: {e}\nwant: {want}");
        assert!(matches!(
            e,
            EntriesError::Syntax { .. } | EntriesError::Rejected { .. }
        ));
    }
}
