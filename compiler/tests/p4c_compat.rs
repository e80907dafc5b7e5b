//! Constructs that p4c accepts in its bmv2 STF samples and that this compiler
//! accepts too (issue 3: the p4c corpus measures v1model compatibility).
//! Each test is a small program written for this project.

mod common;

use common::{fails, ok, v1model};
use netsparse_externs::artifact::{self as a, Artifact};

/// Every statement of every action and control body, flattened.
fn all_stmts(art: &Artifact) -> Vec<&a::Stmt> {
    fn walk<'a>(stmts: &'a [a::Stmt], out: &mut Vec<&'a a::Stmt>) {
        for s in stmts {
            out.push(s);
            if let a::Stmt::Inlined { body, .. } = s {
                walk(body, out);
            }
        }
    }
    let mut out = Vec::new();
    for act in &art.actions {
        walk(&act.body, &mut out);
    }
    out
}

#[test]
fn annotations_on_statements_are_accepted_and_ignored() {
    let with = ok(&v1model(
        "",
        "",
        "@atomic { meta.x = 1; } @likely if (meta.x == 1) { meta.y = 2; }",
    ));
    let without = ok(&v1model(
        "",
        "",
        "{ meta.x = 1; } if (meta.x == 1) { meta.y = 2; }",
    ));
    assert_eq!(
        serde_json::to_string(&with.artifact.controls).unwrap(),
        serde_json::to_string(&without.artifact.controls).unwrap(),
        "an annotation must not change the program"
    );
}

#[test]
fn verify_checksum_block_may_take_headers_in() {
    // p4c's early v1model declared `control VerifyChecksum<H, M>(in H hdr, inout M meta)`.
    let text =
        v1model("", "", "").replace("control VC(inout headers hdr", "control VC(in headers hdr");
    ok(&text);
    // The other way round (`inout` where `in` is required) stays an error.
    let bad = v1model("", "", "").replace(
        "control D(packet_out pkt, in headers hdr)",
        "control D(packet_out pkt, inout headers hdr)",
    );
    fails(&bad, "E0403");
}

#[test]
fn action_parameters_may_have_default_values() {
    ok(&v1model(
        "",
        "action add(bit<8> va, bit<8> vb = 3) { meta.x = va + vb; }
         table t { key = { meta.y : exact; } actions = { add; } const default_action = add(1, 2); }",
        "t.apply();",
    ));
    // The default value must have the parameter's type.
    fails(
        &v1model(
            "",
            "action add(bit<8> va, bit<8> vb = true) { meta.x = va + vb; }",
            "add(1, 2);",
        ),
        "E0120",
    );
}

#[test]
fn headers_structs_and_stacks_compare_with_eq() {
    let c = ok(&v1model(
        "struct pair_t { h_t a; bit<8> n; }",
        "h_t tmp; h_t[2] s1; h_t[2] s2; pair_t p1; pair_t p2;",
        "tmp = { 1, 2, 3, 4 };
         if (tmp == hdr.h) { meta.x = 1; }
         if (hdr.h != hdr.g) { meta.x = 2; }
         if (s1 == s2) { meta.x = 3; }
         if (p1 == p2) { meta.x = 4; }",
    ));
    // Field-wise comparisons: the validity bits and the fields are read.
    let text = serde_json::to_string(&c.artifact.controls).unwrap();
    assert!(text.contains("valid"), "no validity test in {text}");
    // Comparing values that would be evaluated twice (a call) stays an error.
    fails(
        &v1model(
            "h_t mk() { h_t x = { 1, 2, 3, 4 }; return x; }",
            "",
            "if (mk() == hdr.h) { meta.x = 1; }",
        ),
        "E0123",
    );
}

#[test]
fn exit_in_an_action_still_copies_out_inout_arguments() {
    let c = ok(&v1model(
        "",
        "action set_and_exit(inout bit<8> v) { v = 2; exit; }",
        "set_and_exit(meta.x);",
    ));
    // The call is inlined so that the copy-out of `v` precedes the exit.
    let mut found = false;
    for ctl in &c.artifact.controls {
        let text = serde_json::to_string(&ctl.body).unwrap();
        if let Some(i) = text.find("\"exit\"") {
            assert!(text.contains("inlined"), "not inlined: {text}");
            assert!(
                text[..i].matches("assign").count() >= 2,
                "no copy-out before exit: {text}"
            );
            found = true;
        }
    }
    assert!(found, "no exit found");
    // Without out/inout arguments the shared action is called as before.
    let plain = ok(&v1model("", "action just_exit() { exit; }", "just_exit();"));
    assert!(all_stmts(&plain.artifact)
        .iter()
        .any(|s| matches!(s, a::Stmt::Exit)));
}

#[test]
fn mark_to_drop_without_arguments_is_the_early_v1model_form() {
    let c = ok(&v1model(
        "",
        "action drop_old() { mark_to_drop(); } action drop_new() { mark_to_drop(sm); }",
        "drop_old(); drop_new();",
    ));
    let drops = all_stmts(&c.artifact)
        .into_iter()
        .filter(|s| matches!(s, a::Stmt::Prim(a::Prim::MarkToDrop)))
        .count();
    assert_eq!(drops, 2, "both forms lower to the same primitive");
    // Two arguments still match no overload.
    fails(&v1model("", "", "mark_to_drop(sm, sm);"), "E0130");
}

/// A v1model program whose parser applies sub-parser `Sub` (declared in `decls`).
fn with_subparser(decls: &str, state_body: &str) -> String {
    v1model(
        decls,
        "",
        "",
    )
    .replace(
        "parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {\n    state start { pkt.extract(hdr.h); transition accept; }",
        &format!(
            "parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{\n    Sub() sub;\n    state start {{ {state_body} }}"
        ),
    )
}

#[test]
fn sub_parsers_are_inlined_at_each_application() {
    let sub = "parser Sub(packet_in pkt, inout h_t h, out bit<8> k) {
        bit<8> local = 3;
        state start { pkt.extract(h); k = h.a + local; transition select(k) { 0: reject; default: accept; } }
    }";
    let c = ok(&with_subparser(
        sub,
        "sub.apply(pkt, hdr.h, meta.x); sub.apply(pkt, hdr.g, meta.x); transition accept;",
    ));
    let parser = &c.artifact.parsers[0];
    let names: Vec<&str> = parser.states.iter().map(|s| s.name.as_str()).collect();
    // Two inlined copies of Sub's states, each with continuation and reject states.
    assert_eq!(
        names.iter().filter(|n| n.ends_with("sub.start")).count(),
        2,
        "{names:?}"
    );
    assert!(
        names.contains(&"start$after1") && names.contains(&"start$after2"),
        "{names:?}"
    );
    assert!(
        names.contains(&"start$reject1") && names.contains(&"start$reject2"),
        "{names:?}"
    );
    // Every transition target is a state of this parser.
    let n = parser.states.len() as u32;
    for s in &parser.states {
        let text = serde_json::to_string(&s.transition).unwrap();
        for part in text.split("\"state\":").skip(1) {
            let id: u32 = part
                .trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(id < n, "state {id} out of range in {text}");
        }
    }
}

#[test]
fn sub_parsers_are_applied_only_in_parser_states() {
    let sub = "parser Sub(packet_in pkt, inout h_t h) { state start { transition accept; } }";
    fails(
        &with_subparser(sub, "sub.run(pkt, hdr.h); transition accept;"),
        "E0104",
    );
    // In a control there is no parser state to split.
    let no_pkt = "parser Sub2(inout h_t h) { state start { transition accept; } }";
    let text = v1model(&format!("{sub}\n{no_pkt}"), "Sub2() s;", "s.apply(hdr.h);");
    let rendered = match common::compile(&text) {
        Ok(_) => panic!("a parser applied in a control compiled"),
        Err((r, _)) => r,
    };
    assert!(rendered.contains("parser"), "{rendered}");
}
