//! Macros: `#define` (object-like), expansion of a use in the text, and
//! the recursive expansion with its depth and size budgets.

use std::collections::HashMap;

use crate::ast::Span;

use super::*;

impl Pp<'_> {
    pub(super) fn define(&mut self, rest: &str, file: u32, rest_at: usize, dir_span: Span) {
        let b = rest.as_bytes();
        let mut k = 0;
        while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
            k += 1;
        }
        let e = word_end(b, k);
        let name = &rest[k..e];
        if name.is_empty() || !is_identifier(name) {
            self.error("E0021", "`#define` needs a macro name", dir_span)
                .with_hint_mut("write `#define NAME replacement`");
            return;
        }
        let name_span = sp(file, rest_at + k, rest_at + e);
        if b.get(e) == Some(&b'(') {
            self.error(
                "E0020",
                format!("function-like macro `{name}` is not supported"),
                name_span,
            )
            .with_label_mut("defined with parameters here")
            .with_hint_mut(
                "use an object-like macro (`#define NAME value`), a constant or an action",
            );
            return;
        }
        if name == "defined" {
            self.error("E0021", "`defined` cannot be defined as a macro", name_span);
            return;
        }
        self.macros.insert(
            name.to_owned(),
            Macro {
                body: rest[e..].trim().to_owned(),
            },
        );
    }

    /// Expand macro `name` used at `use_span` into the output.
    pub(super) fn expand_use(&mut self, name: &str, use_span: Span) {
        let start = self.out.len();
        let mut active = Vec::new();
        let mut budget = MAX_EXPANSION_BYTES.saturating_sub(self.expansion_bytes);
        let res = expand_name(
            &self.macros,
            name,
            &mut active,
            &mut self.out,
            &mut budget,
            0,
        );
        let produced = self.out.len() - start;
        self.expansion_bytes += produced;
        match res {
            Ok(()) => self.map.push_fixed(start, produced, use_span),
            Err(msg) => {
                self.out.truncate(start);
                self.expansion_bytes = MAX_EXPANSION_BYTES;
                self.error("E0022", msg, use_span)
                    .with_label_mut(format!("in the expansion of `{name}`"));
            }
        }
    }
}

/// Expand `name` (recursively, never re-expanding a macro inside its own
/// expansion) onto `out`.
pub(super) fn expand_name<'m>(
    macros: &'m HashMap<String, Macro>,
    name: &str,
    active: &mut Vec<&'m str>,
    out: &mut String,
    budget: &mut usize,
    depth: usize,
) -> Result<(), String> {
    let Some((key, m)) = macros.get_key_value(name) else {
        out.push_str(name);
        return Ok(());
    };
    if depth >= MAX_MACRO_DEPTH {
        return Err(format!(
            "macro expansion nested more than {MAX_MACRO_DEPTH} levels deep"
        ));
    }
    active.push(key.as_str());
    let body = m.body.as_str();
    let b = body.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            i = string_end(b, i, b.len()).unwrap_or(b.len());
        } else if c.is_ascii_digit() {
            i = word_end(b, i);
        } else if is_ident_start(c) {
            let e = word_end(b, i);
            let w = &body[i..e];
            if macros.contains_key(w) && !active.contains(&w) {
                push_budget(out, &body[copied..i], budget)?;
                expand_name(macros, w, active, out, budget, depth + 1)?;
                copied = e;
            }
            i = e;
        } else {
            i += 1;
        }
    }
    push_budget(out, &body[copied..], budget)?;
    active.pop();
    Ok(())
}

pub(super) fn push_budget(out: &mut String, s: &str, budget: &mut usize) -> Result<(), String> {
    if s.len() > *budget {
        return Err(format!(
            "macro expansion produces more than {} MiB of text",
            MAX_EXPANSION_BYTES >> 20
        ));
    }
    *budget -= s.len();
    out.push_str(s);
    Ok(())
}
