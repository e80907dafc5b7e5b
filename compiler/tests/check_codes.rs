//! Every error code used by the compiler (outside the front end, which has its
//! own test) has an explanation file, and every explanation is well-formed.

use std::path::Path;

fn codes_in(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "front") {
                continue;
            }
            codes_in(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            let bytes = text.as_bytes();
            for i in 0..bytes.len().saturating_sub(6) {
                if bytes[i] == b'"'
                    && bytes[i + 1] == b'E'
                    && bytes[i + 2..i + 6].iter().all(u8::is_ascii_digit)
                    && bytes[i + 6] == b'"'
                {
                    out.push((text[i + 1..i + 6].to_string(), p.display().to_string()));
                }
            }
        }
    }
}

#[test]
fn every_code_has_an_explanation() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut used = Vec::new();
    codes_in(&src, &mut used);
    assert!(used.len() > 50, "found only {} codes", used.len());
    for (code, file) in &used {
        assert!(
            netsparse_compiler::diag::explain(code).is_some(),
            "{code} (used in {file}) has no compiler/errors/{code}.md"
        );
    }
}

#[test]
fn explanations_are_titled_paragraphs() {
    for code in netsparse_compiler::diag::codes() {
        let text = netsparse_compiler::diag::explain(code).unwrap();
        assert!(
            text.starts_with(&format!("# {code}: ")),
            "{code}: title line"
        );
        assert!(text.lines().count() >= 3, "{code}: needs a paragraph");
    }
}
