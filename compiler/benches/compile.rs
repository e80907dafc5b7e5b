//! `compile_file` on every shipped program with a `main` (front end, checker,
//! lowering, graphs). Target: under 20 ms for ipv4_forward in release.
//!
//! Run: `cargo bench -p netsparse-compiler --bench compile`

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{ast, compile_file, front, CompileOptions};

/// Whether the file instantiates `main` (the bundled includes do not).
fn has_main(path: &Path) -> bool {
    let mut sources = SourceMap::new();
    front::parse_file(&mut sources, path, &front::FrontOptions::default()).is_ok_and(|p| {
        p.decls
            .iter()
            .any(|d| matches!(d, ast::Decl::Instantiation(i) if i.name.name == "main"))
    })
}

fn programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [root.join("../programs"), root.join("tests/programs")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "p4") && has_main(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn bench(c: &mut Criterion) {
    let opts = CompileOptions::default();
    for path in programs() {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_string();
        c.bench_function(&format!("compile/{name}"), |b| {
            b.iter(|| {
                let mut sources = SourceMap::new();
                let compiled = compile_file(&mut sources, &path, &opts);
                assert!(compiled.is_ok(), "{name} compiles");
                compiled
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
