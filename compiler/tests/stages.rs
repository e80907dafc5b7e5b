//! Snapshots of every compiler stage (AST, IR, artifact, dot) for every
//! program with a `main` in `programs/` (the bundled includes are skipped)
//! and in `compiler/tests/programs/`. New programs are picked up by the glob.
//! Every artifact also passes the consistency check of `common::validate`.

mod common;

use std::path::Path;

use netsparse_compiler::diag::render_all;
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{ast, compile_file, emit_dot, emit_ir, front, CompileOptions};

/// Whether the file instantiates `main` (the bundled includes do not).
fn has_main(path: &Path) -> bool {
    let mut sources = SourceMap::new();
    front::parse_file(&mut sources, path, &front::FrontOptions::default()).is_ok_and(|p| {
        p.decls
            .iter()
            .any(|d| matches!(d, ast::Decl::Instantiation(i) if i.name.name == "main"))
    })
}

fn snapshot_stages(path: &Path) {
    if !has_main(path) {
        return;
    }
    let mut sources = SourceMap::new();
    let compiled = match compile_file(&mut sources, path, &CompileOptions::default()) {
        Ok(c) => c,
        Err(d) => panic!(
            "{} does not compile:\n{}",
            path.display(),
            render_all(&d, &sources)
        ),
    };
    assert!(
        compiled.warnings.is_empty(),
        "{} compiles with warnings:\n{}",
        path.display(),
        render_all(&compiled.warnings, &sources)
    );
    let problems = common::validate(&compiled.artifact);
    assert!(
        problems.is_empty(),
        "{}: invalid artifact: {problems:#?}",
        path.display()
    );
    // The artifact survives a JSON round trip.
    let json = compiled.artifact.to_json();
    let back =
        netsparse_externs::artifact::Artifact::from_json(&json).expect("artifact JSON reloads");
    assert_eq!(back, compiled.artifact);
    let dot = emit_dot(&compiled.ir);
    assert_eq!(
        dot.matches("digraph ").count(),
        dot.matches("\n}\n").count() + usize::from(dot.starts_with('}'))
    );
    // Name snapshots by program explicitly (a glob matching one file gives no suffix).
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program");
    insta::with_settings!({ snapshot_suffix => stem }, {
        insta::assert_snapshot!("ast", front::print_program(&compiled.ast));
        insta::assert_snapshot!("ir", emit_ir(&compiled.ir));
        insta::assert_snapshot!("artifact", json);
        insta::assert_snapshot!("dot", dot);
    });
}

#[test]
fn shipped_programs() {
    insta::glob!("../../programs", "*.p4", snapshot_stages);
}

#[test]
fn test_programs() {
    insta::glob!("programs", "*.p4", snapshot_stages);
}
