//! Lowering to the artifact: slots, copy-in/copy-out, hoisted calls,
//! table specialisations, stacks, switch cases, determinism.

mod common;

use common::{ok, v1model};
use netsparse_externs::artifact::{self as a, Stmt};

fn ingress(c: &netsparse_compiler::Compiled) -> &[Stmt] {
    let a::Package::V1Switch(p) = &c.artifact.package else {
        panic!("v1model")
    };
    &c.artifact.controls[p.ingress.index()].body
}

fn field(c: &netsparse_compiler::Compiled, name: &str) -> a::FieldId {
    let i = c
        .artifact
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"));
    a::FieldId(i as u32)
}

#[test]
fn headers_get_bit_offsets_and_metadata_slots() {
    let c = ok(&v1model("", "", ""));
    let h = &c.artifact.headers[0];
    assert_eq!(h.name, "hdr.h");
    let offs: Vec<u32> = h.fields.iter().map(|f| f.bit_offset).collect();
    assert_eq!(offs, vec![0, 8, 24, 56]);
    assert_eq!(h.bit_width, 64);
    let a::Package::V1Switch(p) = &c.artifact.package else {
        panic!()
    };
    let names: Vec<&str> = p
        .user_metadata
        .iter()
        .map(|f| c.artifact.fields[f.index()].name.as_str())
        .collect();
    assert_eq!(names, vec!["meta.x", "meta.y", "meta.z", "meta.flag"]);
    assert_eq!(
        c.artifact.fields[p.standard_metadata.egress_spec.index()].name,
        "sm.egress_spec"
    );
}

#[test]
fn direct_action_calls_copy_in_and_out() {
    let c = ok(&v1model(
        "",
        "action inc(inout bit<8> v, bit<8> by) { v = v + by; }",
        "inc(meta.x, 2);",
    ));
    let body = ingress(&c);
    // copy-in v, set `by`, call, copy-out v.
    let v = field(&c, "Ing.inc.v");
    let by = field(&c, "Ing.inc.by");
    let x = field(&c, "meta.x");
    assert!(
        matches!(&body[0], Stmt::Assign { dst: a::LValue::Field { field }, src: a::Expr::Field { field: s } } if *field == v && *s == x)
    );
    assert!(
        matches!(&body[1], Stmt::Assign { dst: a::LValue::Field { field }, src: a::Expr::Const { value: 2, .. } } if *field == by)
    );
    assert!(matches!(&body[2], Stmt::CallAction { .. }));
    assert!(
        matches!(&body[3], Stmt::Assign { dst: a::LValue::Field { field }, src: a::Expr::Field { field: s } } if *field == x && *s == v)
    );
    assert_eq!(
        c.artifact.fields[by.index()].kind,
        a::FieldKind::ActionParam
    );
    assert_eq!(c.artifact.fields[v.index()].kind, a::FieldKind::Local);
}

#[test]
fn tables_binding_directional_arguments_get_a_specialisation() {
    let c = ok(&v1model(
        "",
        "action set(out bit<8> dst, bit<8> v) { dst = v; }\n\
         table t { key = { hdr.h.a: exact; } actions = { set(meta.x); } default_action = set(7); }",
        "t.apply();",
    ));
    let t = &c.artifact.tables[0];
    assert_eq!(t.actions[0].name, "Ing.set");
    let spec = &c.artifact.actions[t.actions[0].action.index()];
    assert_eq!(
        spec.params.len(),
        1,
        "the data parameter is still control-plane data"
    );
    assert!(spec
        .body
        .iter()
        .any(|s| matches!(s, Stmt::CallAction { .. })));
    assert!(
        matches!(spec.body.last(), Some(Stmt::Assign { .. })),
        "copy-out last: {:?}",
        spec.body
    );
    assert_eq!(t.default_action.args, vec![7]);
}

#[test]
fn implicit_noaction_default() {
    let c = ok(&v1model(
        "",
        "action a() { } table t { key = { hdr.h.a: exact; } actions = { a; } }",
        "t.apply();",
    ));
    let t = &c.artifact.tables[0];
    assert_eq!(t.actions.len(), 2);
    assert_eq!(t.actions[1].name, "NoAction");
    assert!(t.actions[1].default_only);
    assert_eq!(t.default_action.action, t.actions[1].action);
    assert_eq!(t.size, 1024);
}

#[test]
fn hit_miss_and_action_run_read_hidden_slots() {
    let c = ok(&v1model(
        "",
        "action a() { } action b() { } table t { key = { hdr.h.a: exact; } actions = { a; b; } }",
        "if (t.apply().miss) { meta.x = 1; }\n switch (t.apply().action_run) { a: { meta.x = 2; } b: { meta.x = 3; } }",
    ));
    let body = ingress(&c);
    let t = &c.artifact.tables[0];
    assert!(matches!(&body[0], Stmt::ApplyTable { .. }));
    match &body[1] {
        Stmt::If {
            cond:
                a::Expr::Unary {
                    op: a::UnaryOp::Not,
                    arg,
                    ..
                },
            ..
        } => {
            assert_eq!(**arg, a::Expr::Field { field: t.hit });
        }
        other => panic!("expected if !hit: {other:?}"),
    }
    match &body[3] {
        Stmt::Switch {
            selector, cases, ..
        } => {
            assert_eq!(
                *selector,
                a::Expr::Field {
                    field: t.action_run
                }
            );
            assert_eq!(cases[0].values, vec![u128::from(t.actions[0].action.0)]);
            assert_eq!(cases[1].values, vec![u128::from(t.actions[1].action.0)]);
        }
        other => panic!("expected a switch: {other:?}"),
    }
}

#[test]
fn calls_on_the_right_of_and_only_run_when_needed() {
    let c = ok(&v1model(
        "",
        "table t { key = { hdr.h.a: exact; } actions = { NoAction; } }",
        "if (meta.flag && t.apply().hit) { meta.x = 1; }",
    ));
    let body = ingress(&c);
    // tmp = meta.flag; if (tmp) { apply t; tmp = hit }; if (tmp) ...
    assert!(matches!(&body[0], Stmt::Assign { .. }));
    match &body[1] {
        Stmt::If { then, .. } => assert!(matches!(then[0], Stmt::ApplyTable { .. })),
        other => panic!("{other:?}"),
    }
    assert!(matches!(&body[2], Stmt::If { .. }));
}

#[test]
fn fall_through_switch_labels_merge() {
    let c = ok(&v1model(
        "",
        "",
        "switch (hdr.h.a) { 1: 2: { meta.x = 1; } 3: { } default: { meta.x = 0; } }",
    ));
    match &ingress(&c)[0] {
        Stmt::Switch { cases, default, .. } => {
            assert_eq!(cases[0].values, vec![1, 2]);
            assert_eq!(cases[1].values, vec![3]);
            assert_eq!(default.len(), 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn header_stacks() {
    let text = v1model("struct st_t { m_t[2] s; }", "st_t st;", "")
        .replace(
            "struct headers { h_t h; h_t g; }",
            "header m_t { bit<8> v; }\nstruct headers { h_t h; h_t g; m_t[3] m; }",
        )
        .replace(
            "state start { pkt.extract(hdr.h); transition accept; }",
            "state start { pkt.extract(hdr.m.next); transition select(hdr.m.last.v) { 0: start; default: accept; } }",
        )
        .replace(
            "apply {\n\n    }",
            "apply { hdr.m.push_front(1); hdr.m[0].setValid(); hdr.m[meta.x].v = 3; meta.z = hdr.m.lastIndex; }",
        );
    let c = ok(&text);
    assert_eq!(c.artifact.stacks.len(), 2);
    let st = &c.artifact.stacks[0];
    assert_eq!(st.name, "hdr.m");
    assert_eq!(st.elements.len(), 3);
    let p = &c.artifact.parsers[0];
    assert!(matches!(
        &p.states[0].body[0],
        Stmt::Extract {
            header: a::HeaderRef::Next { .. }
        }
    ));
    let body = ingress(&c);
    assert!(body
        .iter()
        .any(|s| matches!(s, Stmt::PushFront { count: 1, .. })));
    assert!(body.iter().any(|s| matches!(
        s,
        Stmt::Assign {
            dst: a::LValue::StackField {
                header: a::HeaderRef::Index { .. },
                field_index: 0
            },
            ..
        }
    )));
}

#[test]
fn sub_controls_are_inlined_with_their_own_tables() {
    let c = ok(&v1model(
        "control Sub(inout bit<8> v) { table t { key = { v: exact; } actions = { NoAction; } } apply { t.apply(); v = v + 1; } }",
        "Sub() one; Sub() two;",
        "one.apply(meta.x); two.apply(hdr.h.a);",
    ));
    let names: Vec<&str> = c.artifact.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["Ing.one.t", "Ing.two.t"]);
    let inlined: Vec<&str> = ingress(&c)
        .iter()
        .filter_map(|s| match s {
            Stmt::Inlined { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(inlined, vec!["Ing.one", "Ing.two"]);
}

#[test]
fn parser_locals_get_an_init_state_and_errors_are_indices() {
    let text = v1model("error { Bad }", "", "").replace(
        "state start { pkt.extract(hdr.h); transition accept; }",
        "bit<8> n = 3;\n    state start { pkt.extract(hdr.h); verify(hdr.h.a != n, error.Bad); pkt.advance(16); transition accept; }",
    );
    let c = ok(&text);
    let p = &c.artifact.parsers[0];
    assert_eq!(p.states[0].name, "$init");
    assert_eq!(p.start.0, 0);
    assert_eq!(c.artifact.errors[7], "Bad");
    assert!(p.states[1]
        .body
        .iter()
        .any(|s| matches!(s, Stmt::Verify { error: 7, .. })));
    assert!(p.states[1]
        .body
        .iter()
        .any(|s| matches!(s, Stmt::Advance { .. })));
}

#[test]
fn compiling_is_deterministic() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/programs/v1model_features.p4"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let a = ok(&text).artifact.to_json();
    let b = ok(&text).artifact.to_json();
    assert_eq!(a, b);
}

#[test]
fn unreachable_states_warn_but_compile() {
    let text = v1model("", "", "").replace(
        "state start { pkt.extract(hdr.h); transition accept; }",
        "state start { pkt.extract(hdr.h); transition accept; }\n    state orphan { transition accept; }",
    );
    let c = ok(&text);
    assert_eq!(c.warnings.len(), 1);
    assert_eq!(c.warnings[0].code, "E0332");
}

#[test]
fn unattached_direct_counters_are_errors() {
    let r = common::fails(
        &v1model("", "direct_counter(CounterType.packets) dc;", ""),
        "E0326",
    );
    assert!(
        r.contains("Ing.dc") && r.contains("direct_counter(CounterType.packets) dc;"),
        "{r}"
    );
}

#[test]
fn emitting_a_list_emits_each_header() {
    let c = ok(&v1model("", "", "").replace("pkt.emit(hdr);", "pkt.emit({ hdr.g, hdr.h });"));
    let a::Package::V1Switch(p) = &c.artifact.package else {
        panic!()
    };
    let body = &c.artifact.controls[p.deparser.index()].body;
    let names: Vec<&str> = body
        .iter()
        .map(|s| match s {
            Stmt::Emit {
                header: a::HeaderRef::Static { header },
            } => c.artifact.headers[header.index()].name.as_str(),
            _ => "?",
        })
        .collect();
    assert_eq!(names, vec!["hdr.g", "hdr.h"]);
}
