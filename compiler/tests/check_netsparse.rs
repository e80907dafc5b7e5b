//! NetSparse constructs: the middle pipe's split, the per-PR region rules,
//! the implicit Property Cache.

mod common;

use common::{fails, ok};
use netsparse_externs::artifact::{self as a, Stmt};

fn program(middle_locals: &str, middle_apply: &str, extra: &str) -> String {
    format!(
        r#"#include <core.p4>
#include <netsparse.p4>
header h_t {{ bit<8> a; }}
struct headers {{ h_t h; }}
struct meta_t {{ bit<8> x; }}
parser IP(packet_in pkt, out headers hdr, inout meta_t meta, inout ns_switch_md_t md) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control Ig(inout headers hdr, inout meta_t meta, inout ns_switch_md_t md) {{ apply {{ md.egress_spec = 1; }} }}
control Dep(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr); }} }}
{extra}
control Middle(inout ns_pr_h pr, inout ns_pr_md_t md) {{
{middle_locals}
    apply {{
{middle_apply}
    }}
}}
control Eg(inout headers hdr, inout meta_t meta, inout ns_switch_md_t md) {{ apply {{ }} }}
NetSparseSwitch(IP(), Ig(), Dep(), Middle(), IP(), Eg(), Dep()) main;
"#
    )
}

fn middle(c: &netsparse_compiler::Compiled) -> &a::MiddlePipe {
    match &c.artifact.package {
        a::Package::NetSparseSwitch(ns) => &ns.middle,
        _ => panic!("not a NetSparse artifact"),
    }
}

#[test]
fn the_middle_control_is_split_at_deconcatenate_and_concatenate() {
    let c = ok(&program(
        "",
        "md.drop = false; Deconcatenate(pr, md); if (Lookup(pr, md)) { md.dst = pr.src; } Concatenate(pr, md);",
        "",
    ));
    let m = middle(&c);
    assert_eq!(m.path.per_packet.len(), 1);
    assert!(matches!(
        m.path.per_pr[0],
        Stmt::Prim(a::Prim::CacheLookup { .. })
    ));
    let cache = m.cache.expect("a property cache");
    assert_eq!(
        c.artifact.externs[cache.index()].kind,
        a::ExternKind::PropertyCache
    );
    assert_eq!(
        c.artifact.externs[cache.index()].name,
        "Middle.property_cache"
    );
    assert_eq!(c.artifact.fields[m.path.pr.idx.index()].name, "pr.idx");
    assert_eq!(c.artifact.fields[m.path.pr_meta.drop.index()].width, 1);
    // Separate slots for the two pipes' metadata.
    let a::Package::NetSparseSwitch(ns) = &c.artifact.package else {
        panic!()
    };
    assert_ne!(
        ns.ingress_metadata.egress_spec,
        ns.egress_metadata.egress_spec
    );
    assert_eq!(
        c.artifact.fields[ns.ingress_metadata.egress_spec.index()].name,
        "ingress.md.egress_spec"
    );
}

#[test]
fn no_cache_without_lookup_or_insert() {
    let c = ok(&program(
        "",
        "Deconcatenate(pr, md); Concatenate(pr, md);",
        "",
    ));
    assert_eq!(middle(&c).cache, None);
    assert!(c.artifact.externs.is_empty());
}

#[test]
fn per_pr_controls_and_their_actions_may_use_the_cache() {
    let extra = "control PerPr(inout ns_pr_h pr, inout ns_pr_md_t md) {\n\
                 action ins() { Insert(pr, md); }\n\
                 table t { key = { md.pr_type: exact; } actions = { ins; NoAction; } }\n\
                 apply { t.apply(); } }";
    let c = ok(&program(
        "PerPr() p;",
        "Deconcatenate(pr, md); p.apply(pr, md); Concatenate(pr, md);",
        extra,
    ));
    assert!(middle(&c).cache.is_some());
    assert_eq!(c.artifact.tables[0].name, "Middle.p.t");
}

#[test]
fn region_rules() {
    // Lookup in an action of the middle control: it may run outside the per-PR part.
    fails(
        &program(
            "action look() { if (Lookup(pr, md)) { md.drop = true; } }",
            "Deconcatenate(pr, md); look(); Concatenate(pr, md);",
            "",
        ),
        "E0412",
    );
    // Insert before Deconcatenate.
    fails(
        &program(
            "",
            "Insert(pr, md); Deconcatenate(pr, md); Concatenate(pr, md);",
            "",
        ),
        "E0412",
    );
    // A per-PR control before Deconcatenate.
    fails(
        &program(
            "P2() p;",
            "p.apply(pr, md); Deconcatenate(pr, md); Concatenate(pr, md);",
            "control P2(inout ns_pr_h pr, inout ns_pr_md_t md) { apply { } }",
        ),
        "E0413",
    );
}

#[test]
fn structure_rules() {
    fails(&program("", "Deconcatenate(pr, md);", ""), "E0411");
    fails(
        &program("", "Concatenate(pr, md); Deconcatenate(pr, md);", ""),
        "E0411",
    );
    fails(
        &program(
            "",
            "Deconcatenate(pr, md); Deconcatenate(pr, md); Concatenate(pr, md);",
            "",
        ),
        "E0411",
    );
    fails(
        &program(
            "action c() { Concatenate(pr, md); }",
            "Deconcatenate(pr, md); Concatenate(pr, md);",
            "",
        ),
        "E0410",
    );
}

#[test]
fn v1model_only_externs_are_rejected_in_netsparse_programs() {
    let text = program("", "Deconcatenate(pr, md); Concatenate(pr, md);", "")
        .replace(
            "#include <netsparse.p4>",
            "#include <netsparse.p4>\n#include <v1model.p4>",
        )
        .replace(
            "md.egress_spec = 1;",
            "standard_metadata_t sm; mark_to_drop(sm); truncate(64);",
        );
    let r = fails(&text, "E0415");
    assert_eq!(r.matches("error[E0415]").count(), 2, "{r}");
    // Arch-neutral externs of v1model.p4 are fine.
    let text = program("", "Deconcatenate(pr, md); Concatenate(pr, md);", "")
        .replace("#include <netsparse.p4>", "#include <netsparse.p4>\n#include <v1model.p4>")
        .replace(
            "control Ig(inout headers hdr, inout meta_t meta, inout ns_switch_md_t md) { apply { md.egress_spec = 1; } }",
            "control Ig(inout headers hdr, inout meta_t meta, inout ns_switch_md_t md) {\n\
             register<bit<8>, bit<32>>(16) r;\n\
             apply { r.write(0, hdr.h.a); hash(meta.x, HashAlgorithm.crc16, 8w0, { hdr.h.a }, 8w16); } }",
        );
    ok(&text);
}

#[test]
fn collective_externs_in_the_middle_pipe_only_where_there_is_a_pr() {
    let with_coll = |p: String| {
        p.replace(
            "#include <netsparse.p4>",
            "#include <netsparse.p4>\n#include <collective.p4>",
        )
    };
    // In the middle control's per-PR part: the switch's aggregator.
    let c = ok(&with_coll(program(
        "",
        "Deconcatenate(pr, md);\n        bit<8> st = BlockAccumulate(pr.req_id, pr.src, pr.idx, md.prop_len);\n        if (st == COLL_COMPLETE) { SendSums(pr.req_id); }\n        Concatenate(pr, md);",
        "",
    )));
    // Both calls land in the per-PR part, none in the per-packet part.
    let json = |v: &[Stmt]| serde_json::to_string(v).unwrap();
    let per_pr = json(&middle(&c).path.per_pr);
    assert!(
        per_pr.contains("block_accumulate") && per_pr.contains("send_sums"),
        "{per_pr}"
    );
    assert!(!json(&middle(&c).path.per_packet).contains("block_accumulate"));
    // Before Deconcatenate there is no PR.
    let msg = fails(
        &with_coll(program(
            "",
            "SendSums(32w0);\n        Deconcatenate(pr, md);\n        Concatenate(pr, md);",
            "",
        )),
        "E0443",
    );
    assert!(msg.contains("current PR"), "{msg}");
    // A v1model program has no aggregator.
    let v1 = r#"#include <core.p4>
#include <v1model.p4>
#include <collective.p4>
header h_t { bit<32> a; }
struct headers { h_t h; }
struct meta_t { bit<8> x; }
parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t meta) { apply { } }
control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { SendSums(hdr.h.a); }
}
control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;
    let msg = fails(v1, "E0417");
    assert!(msg.contains("collective extern"), "{msg}");
}
