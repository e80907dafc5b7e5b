//! Negative programs (`tests/negative/*.p4`): each has one semantic error,
//! declared on its first line as `// expect: EXXXX` (and target limits as
//! `// limits: max_stages=N ...`). Every error reported must have exactly that
//! code, and the rendered diagnostics (plain text) are snapshots.

mod common;

use std::path::Path;

use netsparse_compiler::diag::render_all;
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions, TargetLimits};

fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| {
            l.strip_prefix(&format!("// {key}:"))
                .map(|v| v.trim().to_string())
        })
}

fn limits(spec: Option<String>) -> TargetLimits {
    let mut l = TargetLimits::default();
    for item in spec.unwrap_or_default().split_whitespace() {
        let (k, v) = item.split_once('=').expect("limits are key=value");
        let v: u32 = v.parse().expect("limit is a number");
        match k {
            "max_stages" => l.max_stages = Some(v),
            "max_tables_per_stage" => l.max_tables_per_stage = Some(v),
            "max_tables" => l.max_tables = Some(v),
            other => panic!("unknown limit {other}"),
        }
    }
    l
}

fn check(path: &Path) {
    let text = std::fs::read_to_string(path).expect("readable test program");
    let expect = header(&text, "expect").expect("first line: // expect: EXXXX");
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("x.p4");
    let opts = CompileOptions {
        limits: limits(header(&text, "limits")),
        ..CompileOptions::default()
    };
    let mut sources = SourceMap::new();
    let name = format!("negative/{file}");
    let diags = match compile_source(&mut sources, &name, &text, &opts) {
        Ok(_) => panic!("{file}: compiled, but {expect} was expected"),
        Err(d) => d,
    };
    let rendered = render_all(&diags, &sources);
    let codes = common::error_codes(&diags);
    assert!(!codes.is_empty(), "{file}: no errors:\n{rendered}");
    assert!(
        codes.iter().all(|c| *c == expect),
        "{file}: expected only {expect}, got {codes:?}:\n{rendered}"
    );
    // Every diagnostic points into the program (or a bundled include), with a code and explanation.
    for d in &diags {
        assert!(
            netsparse_compiler::diag::explain(d.code).is_some(),
            "{file}: {} has no explanation",
            d.code
        );
    }
    insta::assert_snapshot!(rendered);
}

#[test]
fn negative_programs() {
    insta::glob!("negative", "*.p4", check);
}

#[test]
fn enough_negative_programs_covering_the_brief() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/negative");
    let mut codes = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        codes.push(header(&text, "expect").unwrap());
    }
    assert!(codes.len() >= 30, "only {} negative programs", codes.len());
    for must in [
        "E0101", "E0102", "E0110", "E0111", "E0112", "E0121", "E0122", "E0140", "E0301", "E0302",
        "E0310", "E0320", "E0321", "E0322", "E0330", "E0331", "E0401", "E0403", "E0410", "E0412",
        "E0413", "E0414", "E0415", "E0420",
    ] {
        assert!(
            codes.iter().any(|c| c == must),
            "no negative program for {must}"
        );
    }
}
