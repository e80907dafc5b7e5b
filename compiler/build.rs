//! Embeds every `errors/EXXXX.md` explanation file into the compiler.
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("errors");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut codes: Vec<(String, String)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let path = e.path();
            println!("cargo:rerun-if-changed={}", path.display());
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let is_code = stem.len() == 5
                && stem.starts_with('E')
                && stem[1..].bytes().all(|b| b.is_ascii_digit());
            if is_code && path.extension().is_some_and(|x| x == "md") {
                codes.push((stem.to_owned(), path.display().to_string()));
            }
        }
    }
    codes.sort();
    let mut out = String::from(
        "/// Error codes and their explanations (generated from `errors/*.md`).\n\
         static EXPLANATIONS: &[(&str, &str)] = &[\n",
    );
    for (code, path) in &codes {
        let _ = writeln!(out, "    ({code:?}, include_str!({path:?})),");
    }
    out.push_str("];\n");
    let dest =
        Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR set by cargo")).join("explanations.rs");
    std::fs::write(dest, out).expect("write explanations.rs");
}
