//! Negative programs: every `tests/syntax/*.p4` must be rejected by the front
//! end; the rendered diagnostics (no colour) are insta snapshots in
//! `tests/syntax/snapshots/`. Paths are relative to the crate, so the
//! snapshots do not depend on the machine.

use std::path::{Path, PathBuf};

use netsparse_compiler::diag::{explain, render_all};
use netsparse_compiler::front::{parse_file, FrontOptions};
use netsparse_compiler::source::SourceMap;

fn negative_programs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/syntax")
        .expect("tests/syntax exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    files.sort();
    files
}

#[test]
fn negative_programs_are_rejected_with_snapshotted_diagnostics() {
    let files = negative_programs();
    assert!(files.len() >= 12, "only {} negative programs", files.len());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("syntax/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for path in &files {
            let mut sources = SourceMap::new();
            let result = parse_file(&mut sources, path, &FrontOptions::default());
            let diags = match result {
                Ok(_) => panic!("{} was accepted", path.display()),
                Err(d) => d,
            };
            assert!(!diags.is_empty(), "{}: no diagnostics", path.display());
            for d in &diags {
                assert!(
                    d.code.starts_with("E00") && explain(d.code).is_some(),
                    "{}: code {} is not a documented front-end code",
                    path.display(),
                    d.code
                );
                assert_ne!(d.code, "E0099", "{}: internal error", path.display());
                // The primary span must be inside a registered file.
                let sp = d.span();
                let file = sources.file(sp.file).expect("span file registered");
                assert!(sp.start <= sp.end && sp.end as usize <= file.text.len());
            }
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("x");
            insta::assert_snapshot!(name, render_all(&diags, &sources));
        }
    });
}

#[test]
fn missing_main_file_is_a_diagnostic() {
    let mut sources = SourceMap::new();
    let diags = parse_file(
        &mut sources,
        Path::new("tests/syntax/no_such_file.p4"),
        &FrontOptions::default(),
    )
    .expect_err("missing file");
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, "E0011");
    let text = render_all(&diags, &sources);
    assert!(text.contains("no_such_file.p4"), "{text}");
}

#[test]
fn invalid_utf8_points_at_the_first_bad_byte() {
    let mut sources = SourceMap::new();
    let diags = parse_file(
        &mut sources,
        Path::new("tests/syntax/invalid_utf8.p4"),
        &FrontOptions::default(),
    )
    .expect_err("invalid UTF-8");
    assert_eq!(diags[0].code, "E0012");
    let sp = diags[0].span();
    let f = sources.file(sp.file).expect("file");
    assert_eq!(f.line_col(sp.start as usize), (2, 7));
}

/// Every `"E00NN"` code used by the front end has an explanation file.
#[test]
fn every_front_end_code_is_explained() {
    let mut used = Vec::new();
    // Every file under src/front, subdirectories included.
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![Path::new("src/front").to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).expect("src/front").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in files {
        if f.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("read source");
        let b = text.as_bytes();
        for (i, _) in text.match_indices("\"E00") {
            let code = &text[i + 1..(i + 6).min(text.len())];
            if code.len() == 5
                && code[1..].bytes().all(|c| c.is_ascii_digit())
                && b.get(i + 6) == Some(&b'"')
            {
                used.push(code.to_owned());
            }
        }
    }
    used.sort();
    used.dedup();
    assert!(used.len() >= 10, "found only {used:?}");
    for code in &used {
        let text = explain(code).unwrap_or_else(|| panic!("{code} has no errors/{code}.md"));
        assert!(
            text.starts_with(&format!("# {code}: ")),
            "{code}: bad title line"
        );
        assert!(text.lines().count() >= 3, "{code}: explanation too short");
    }
}
