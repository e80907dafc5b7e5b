//! Table-dependency graphs, stage assignment, resource limits and dot output.

mod common;

use common::{compile_with, ok, v1model};
use netsparse_compiler::graph::DepKind;
use netsparse_compiler::{emit_dot, emit_ir, TargetLimits};

const TABLES: &str = "
    action set_x(bit<8> v) { meta.x = v; }
    action set_y(bit<16> v) { meta.y = v; }
    action set_x2(bit<8> v) { meta.x = v; }
    table a { key = { hdr.h.a: exact; } actions = { set_x; } }
    table b { key = { meta.x: exact; } actions = { set_y; } }
    table c { key = { hdr.h.b: exact; } actions = { set_x2; } }
    table d { key = { hdr.h.c: exact; } actions = { NoAction; } }
    table e { key = { hdr.h.d: exact; } actions = { NoAction; } }";

fn graph_of(c: &netsparse_compiler::Compiled) -> &netsparse_compiler::graph::TableGraph {
    let an = c.ir.analysis.as_ref().unwrap();
    an.table_graphs.iter().find(|g| g.control == "Ing").unwrap()
}

fn edges(c: &netsparse_compiler::Compiled) -> Vec<(String, String, DepKind)> {
    let g = &graph_of(c).graph;
    let mut out: Vec<_> = g
        .edge_indices()
        .map(|e| {
            let (x, y) = g.edge_endpoints(e).unwrap();
            (g[x].name.clone(), g[y].name.clone(), g[e])
        })
        .collect();
    out.sort_by(|p, q| (p.0.as_str(), p.1.as_str()).cmp(&(q.0.as_str(), q.1.as_str())));
    out
}

#[test]
fn match_action_and_successor_dependencies() {
    let c = ok(&v1model(
        "",
        TABLES,
        "a.apply(); b.apply(); c.apply(); if (d.apply().hit) { e.apply(); }",
    ));
    let e = edges(&c);
    let has =
        |x: &str, y: &str, k: DepKind| e.iter().any(|(p, q, kk)| p == x && q == y && *kk == k);
    assert!(has("Ing.a", "Ing.b", DepKind::Match), "{e:?}");
    assert!(
        has("Ing.a", "Ing.c", DepKind::Action),
        "both write meta.x: {e:?}"
    );
    assert!(
        has("Ing.b", "Ing.c", DepKind::Match)
            || has("Ing.b", "Ing.c", DepKind::Action)
            || !has("Ing.b", "Ing.c", DepKind::Successor)
    );
    assert!(has("Ing.d", "Ing.e", DepKind::Successor), "{e:?}");
    assert!(!e.iter().any(|(p, _, _)| p == "Ing.e"));
    let stage = |n: &str| c.ir.analysis.as_ref().unwrap().stage_of(n).unwrap();
    assert_eq!(stage("Ing.a"), 0);
    assert_eq!(stage("Ing.b"), 1);
    assert_eq!(stage("Ing.c"), 1, "an action dependency on `a` only");
    assert_eq!(stage("Ing.d"), 0);
    assert_eq!(stage("Ing.e"), 0, "successor dependencies cost no stage");
    assert_eq!(graph_of(&c).stages, 2);
    assert!(emit_ir(&c.ir).contains("table b { // stage 1"));
}

#[test]
fn tables_on_exclusive_branches_do_not_depend_on_each_other() {
    let c = ok(&v1model(
        "",
        TABLES,
        "if (meta.flag) { a.apply(); } else { c.apply(); }",
    ));
    assert!(edges(&c).is_empty(), "{:?}", edges(&c));
}

#[test]
fn conditions_guarding_a_table_count_as_its_match_reads() {
    let c = ok(&v1model(
        "",
        TABLES,
        "a.apply(); if (meta.x == 1) { d.apply(); }",
    ));
    assert!(edges(&c)
        .iter()
        .any(|(p, q, k)| p == "Ing.a" && q == "Ing.d" && *k == DepKind::Match));
}

#[test]
fn limits() {
    let text = v1model("", TABLES, "a.apply(); b.apply(); d.apply(); e.apply();");
    assert!(compile_with(
        &text,
        TargetLimits {
            max_stages: Some(2),
            ..TargetLimits::default()
        }
    )
    .is_ok());
    let Err((r, codes)) = compile_with(
        &text,
        TargetLimits {
            max_stages: Some(1),
            ..TargetLimits::default()
        },
    ) else {
        panic!()
    };
    assert_eq!(codes, vec!["E0420"], "{r}");
    assert!(
        r.contains("Ing.a (stage 0) --match--> Ing.b (stage 1)"),
        "{r}"
    );
    let per_stage = TargetLimits {
        max_stages: Some(2),
        max_tables_per_stage: Some(2),
        ..TargetLimits::default()
    };
    let c = compile_with(&text, per_stage).unwrap();
    assert_eq!(graph_of(&c).stages, 2);
    let tight = TargetLimits {
        max_stages: Some(2),
        max_tables_per_stage: Some(1),
        ..TargetLimits::default()
    };
    let Err((r, codes)) = compile_with(&text, tight) else {
        panic!()
    };
    assert_eq!(codes, vec!["E0421"], "{r}");
    let Err((_, codes)) = compile_with(
        &text,
        TargetLimits {
            max_tables: Some(3),
            ..TargetLimits::default()
        },
    ) else {
        panic!()
    };
    assert_eq!(codes, vec!["E0422"]);
}

#[test]
fn dot_output_is_well_formed() {
    let c = ok(&v1model("", TABLES, "a.apply(); if (b.apply().hit) { c.apply(); } switch (d.apply().action_run) { NoAction: { e.apply(); } }"));
    let dot = emit_dot(&c.ir);
    let graphs = dot.matches("digraph \"").count();
    assert_eq!(graphs, 5 + 1, "five CFGs and one table graph:\n{dot}");
    assert_eq!(dot.matches('{').count(), dot.matches('}').count());
    for line in dot.lines() {
        let l = line.trim();
        assert!(
            l.starts_with("digraph \"") || l == "}" || l.ends_with(';'),
            "unexpected dot line {l:?}"
        );
        assert_eq!(l.matches('"').count() % 2, 0, "unbalanced quotes in {l:?}");
    }
    assert!(dot.contains("[label=\"true\"]"));
    assert!(dot.contains("[label=\"NoAction\"]"));
    assert!(dot.contains("label=\"successor\", style=dotted"));
    // Render with Graphviz when it is installed.
    if let Ok(mut child) = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
    {
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(dot.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success(), "dot rejected the output");
    }
}
