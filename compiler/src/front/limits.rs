//! Pre-scan of the preprocessed text for pathological nesting.
//!
//! Runs before the grammar so that neither pest nor the AST builder ever sees
//! input nested deeper than the limits below; the error points at the place
//! where a limit was crossed.

use crate::diag::Diagnostic;

use super::spanmap::SpanMap;

/// Maximum nesting of `(`, `[` and `{`.
pub(crate) const MAX_BRACKET_DEPTH: usize = 256;
/// Maximum run of consecutive unary-operator characters (`!`, `~`, `-`, `+`).
pub(crate) const MAX_UNARY_RUN: usize = 64;
/// Maximum number of unclosed `<` within one statement (type arguments).
pub(crate) const MAX_ANGLE_DEPTH: usize = 256;

/// Check `text`; the first violation is returned as a diagnostic.
pub(crate) fn check(text: &str, map: &SpanMap) -> Result<(), Diagnostic> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut angle = 0usize;
    let mut unary = 0usize;
    let mut i = 0;
    let fail = |pos: usize, what: String, limit: usize| {
        Err(Diagnostic::error(
            "E0003",
            format!("{what} nested too deeply"),
            map.span(pos, pos + 1),
        )
        .with_label(format!("the limit of {limit} is exceeded here"))
        .with_hint("split the construct into smaller parts (local variables, constants, actions)"))
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                continue;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
                unary = 0;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' | 0x0B | 0x0C => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if matches!(c, b'!' | b'~' | b'-' | b'+') {
            unary += 1;
            if unary > MAX_UNARY_RUN {
                return fail(i, "unary operators".to_owned(), MAX_UNARY_RUN);
            }
        } else {
            unary = 0;
        }
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_BRACKET_DEPTH {
                    return fail(i, "brackets".to_owned(), MAX_BRACKET_DEPTH);
                }
                if c == b'{' {
                    angle = 0;
                }
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if c == b'}' {
                    angle = 0;
                }
            }
            b';' => angle = 0,
            b'<' => {
                if matches!(b.get(i + 1), Some(b'<' | b'=')) {
                    i += 2;
                    continue;
                }
                angle += 1;
                if angle > MAX_ANGLE_DEPTH {
                    return fail(i, "angle brackets".to_owned(), MAX_ANGLE_DEPTH);
                }
            }
            b'>' => {
                if b.get(i + 1) == Some(&b'=') {
                    i += 2;
                    continue;
                }
                angle = angle.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &str) -> Result<(), Diagnostic> {
        let mut m = SpanMap::new(0);
        m.push_text(0, 0, 0, s.len());
        check(s, &m)
    }

    #[test]
    fn limits() {
        assert!(run("((((a))))").is_ok());
        let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
        let e = run(&deep).unwrap_err();
        assert_eq!(e.code, "E0003");
        assert_eq!(e.span().start, 256);
        assert!(run(&format!("x = {}a;", "-".repeat(100))).is_err());
        assert!(run(&format!("x = {}a;", "- ".repeat(60))).is_ok());
        // Comments and strings do not count.
        assert!(run(&format!(
            "/* {} */ \"{}\" // {}",
            "(".repeat(999),
            "[".repeat(999),
            "{".repeat(999)
        ))
        .is_ok());
        // Angle brackets reset at statement ends.
        assert!(run(&"a < b;".repeat(1000)).is_ok());
        assert!(run(&"a<".repeat(1000)).is_err());
        assert!(run("a << b <= c").is_ok());
    }
}
