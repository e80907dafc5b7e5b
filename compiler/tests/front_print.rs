//! `print_program` snapshots of the sample programs and the bundled
//! includes, and the round trip parse → print → parse → print.

use std::path::{Path, PathBuf};

use netsparse_compiler::diag::render_all;
use netsparse_compiler::front::{parse_file, parse_source, print_program, FrontOptions};
use netsparse_compiler::source::SourceMap;

fn parse_path(path: &Path) -> String {
    let mut sm = SourceMap::new();
    match parse_file(&mut sm, path, &FrontOptions::default()) {
        Ok(p) => print_program(&p),
        Err(d) => panic!("{}:\n{}", path.display(), render_all(&d, &sm)),
    }
}

/// Printing is faithful: the printed program parses to the same AST (the
/// second print equals the first).
fn assert_round_trip(name: &str, printed: &str) {
    let mut sm = SourceMap::new();
    let again = match parse_source(&mut sm, name, printed, &FrontOptions::default()) {
        Ok(p) => print_program(&p),
        Err(d) => panic!(
            "{name}: printed program does not parse:\n{}\n{printed}",
            render_all(&d, &sm)
        ),
    };
    assert_eq!(again, printed, "{name}: print is not a fixed point");
}

#[test]
fn sample_programs_print_stably() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("syntax/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    let files = [
        ("ast_full", "tests/syntax/ok/full.p4"),
        ("ast_mini_core", "tests/syntax/ok/mini_core.p4"),
        ("ast_netsparse", "../programs/netsparse.p4"),
        ("ast_core", "../programs/core.p4"),
        ("ast_v1model", "../programs/v1model.p4"),
    ];
    settings.bind(|| {
        for (snap, file) in files {
            let printed = parse_path(Path::new(file));
            assert_round_trip(file, &printed);
            insta::assert_snapshot!(snap, printed);
        }
    });
}

/// Every shipped program parses and round-trips (no snapshot: those
/// programs belong to later issues and change with them).
#[test]
fn every_shipped_program_round_trips() {
    let mut files: Vec<PathBuf> = std::fs::read_dir("../programs")
        .expect("programs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    files.sort();
    assert!(files.len() >= 3);
    for f in files {
        let printed = parse_path(&f);
        assert!(!printed.is_empty(), "{}", f.display());
        assert_round_trip(&f.display().to_string(), &printed);
    }
}
