//! Macros: `#define` (object-like `NAME body` and function-like
//! `NAME(a, b) body`), expansion of a use in the text, and the recursive
//! expansion with its depth and size budgets.
//!
//! Function-like macros follow C: a use is the name followed by a
//! parenthesised argument list (possibly over several lines); arguments
//! are split at top-level commas, fully expanded before they replace their
//! parameters, except next to `##` (pasted as written) or after `#`
//! (turned into a string literal); the result is rescanned with the macro
//! itself disabled. A function-like macro's name without `(` is left alone.

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
        if name == "defined" {
            self.error("E0021", "`defined` cannot be defined as a macro", name_span);
            return;
        }
        let (params, body_at) = if b.get(e) == Some(&b'(') {
            match parse_params(rest, e) {
                Ok((p, at)) => (Some(p), at),
                Err(msg) => {
                    self.error("E0020", msg, name_span)
                        .with_label_mut("in the parameters of this macro")
                        .with_hint_mut(
                            "write `#define NAME(a, b) replacement` with distinct names",
                        );
                    return;
                }
            }
        } else {
            (None, e)
        };
        self.macros.insert(
            name.to_owned(),
            Macro {
                params,
                body: rest[body_at..].trim().to_owned(),
            },
        );
    }

    /// Expand macro `name` used at `text[start..]` (the name ends at
    /// `name_end`) into the output. Returns where the use ends in `text`,
    /// or `None` when it is not a use (a function-like macro's name not
    /// followed by `(`: the name is left as it is).
    pub(super) fn expand_use(
        &mut self,
        text: &str,
        file: u32,
        start: usize,
        name_end: usize,
    ) -> Option<usize> {
        let name = &text[start..name_end];
        let is_fn = self.macros.get(name).is_some_and(|m| m.params.is_some());
        let (args, end) = if is_fn {
            let b = text.as_bytes();
            let mut k = name_end;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if b.get(k) != Some(&b'(') {
                return None;
            }
            match split_args(text, k) {
                Some((args, end)) => (Some(args), end),
                None => {
                    self.error(
                        "E0020",
                        format!("the arguments of macro `{name}` are not closed"),
                        sp(file, start, k + 1),
                    )
                    .with_label_mut("this `(` has no matching `)`");
                    return Some(text.len());
                }
            }
        } else {
            (None, name_end)
        };
        let use_span = sp(file, start, end);
        let out_start = self.out.len();
        let mut active = Vec::new();
        let mut budget = MAX_EXPANSION_BYTES.saturating_sub(self.expansion_bytes);
        let mut x = Expander {
            macros: &self.macros,
            budget: &mut budget,
        };
        let res = match &args {
            Some(a) => x.call(name, a, &mut active, &mut self.out, 0),
            None => x.name(name, &mut active, &mut self.out, 0),
        };
        let produced = self.out.len() - out_start;
        self.expansion_bytes += produced;
        match res {
            Ok(()) => self.map.push_fixed(out_start, produced, use_span),
            Err(Failure::Limit(msg)) => {
                self.out.truncate(out_start);
                self.expansion_bytes = MAX_EXPANSION_BYTES;
                self.error("E0022", msg, use_span)
                    .with_label_mut(format!("in the expansion of `{name}`"));
            }
            Err(Failure::Use(msg)) => {
                self.out.truncate(out_start);
                self.expansion_bytes -= produced;
                self.error("E0020", msg, use_span)
                    .with_label_mut(format!("in the expansion of `{name}`"));
            }
        }
        Some(end)
    }
}

/// Why an expansion stopped.
pub(super) enum Failure {
    /// A size or depth budget (E0022).
    Limit(String),
    /// A function-like macro used with the wrong arguments (E0020).
    Use(String),
}

impl From<Failure> for String {
    fn from(f: Failure) -> String {
        match f {
            Failure::Limit(m) | Failure::Use(m) => m,
        }
    }
}

/// Expand object-like macro `name` (or copy the name) onto `out`: the entry
/// point of `#if` conditions.
pub(super) fn expand_name(
    macros: &HashMap<String, Macro>,
    name: &str,
    active: &mut Vec<String>,
    out: &mut String,
    budget: &mut usize,
    depth: usize,
) -> Result<(), String> {
    let mut x = Expander { macros, budget };
    Ok(x.name(name, active, out, depth)?)
}

/// The recursive expander over the macro table, with the shared budget.
struct Expander<'m, 'b> {
    macros: &'m HashMap<String, Macro>,
    budget: &'b mut usize,
}

impl Expander<'_, '_> {
    fn push(&mut self, out: &mut String, s: &str) -> Result<(), Failure> {
        push_budget(out, s, self.budget).map_err(Failure::Limit)
    }

    fn deeper(depth: usize) -> Result<(), Failure> {
        if depth >= MAX_MACRO_DEPTH {
            return Err(Failure::Limit(format!(
                "macro expansion nested more than {MAX_MACRO_DEPTH} levels deep"
            )));
        }
        Ok(())
    }

    /// An object-like macro's expansion (a function-like one's name is copied).
    fn name(
        &mut self,
        name: &str,
        active: &mut Vec<String>,
        out: &mut String,
        depth: usize,
    ) -> Result<(), Failure> {
        let Some(m) = self.macros.get(name) else {
            return self.push(out, name);
        };
        if m.params.is_some() || active.iter().any(|a| a == name) {
            return self.push(out, name);
        }
        Self::deeper(depth)?;
        active.push(name.to_owned());
        let body = m.body.clone();
        self.text(&body, active, out, depth + 1)?;
        active.pop();
        Ok(())
    }

    /// A function-like macro applied to `args` (as written).
    fn call(
        &mut self,
        name: &str,
        args: &[String],
        active: &mut Vec<String>,
        out: &mut String,
        depth: usize,
    ) -> Result<(), Failure> {
        let Some(m) = self.macros.get(name) else {
            return self.push(out, name);
        };
        let params = m.params.clone().unwrap_or_default();
        let body = m.body.clone();
        // `F()` is a call with no arguments (one empty argument in C).
        let args: &[String] = if params.is_empty() && args.len() == 1 && args[0].trim().is_empty() {
            &[]
        } else {
            args
        };
        if args.len() != params.len() {
            return Err(Failure::Use(format!(
                "macro `{name}` takes {} argument(s), {} given",
                params.len(),
                args.len()
            )));
        }
        Self::deeper(depth)?;
        let mut expanded = Vec::with_capacity(args.len());
        for a in args {
            let mut s = String::new();
            self.text(a, active, &mut s, depth + 1)?;
            expanded.push(s);
        }
        let replaced = substitute(&body, &params, args, &expanded);
        active.push(name.to_owned());
        self.text(&replaced, active, out, depth + 1)?;
        active.pop();
        Ok(())
    }

    /// Expand every macro use in `text` onto `out`.
    fn text(
        &mut self,
        text: &str,
        active: &mut Vec<String>,
        out: &mut String,
        depth: usize,
    ) -> Result<(), Failure> {
        let b = text.as_bytes();
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
                let w = &text[i..e];
                let Some(m) = self.macros.get(w) else {
                    i = e;
                    continue;
                };
                if active.iter().any(|a| a == w) {
                    i = e;
                    continue;
                }
                if m.params.is_some() {
                    let mut k = e;
                    while k < b.len() && b[k].is_ascii_whitespace() {
                        k += 1;
                    }
                    if b.get(k) != Some(&b'(') {
                        i = e;
                        continue;
                    }
                    let Some((args, end)) = split_args(text, k) else {
                        return Err(Failure::Use(format!(
                            "the arguments of macro `{w}` are not closed"
                        )));
                    };
                    self.push(out, &text[copied..i])?;
                    self.call(w, &args, active, out, depth)?;
                    copied = end;
                    i = end;
                } else {
                    self.push(out, &text[copied..i])?;
                    self.name(w, active, out, depth)?;
                    copied = e;
                    i = e;
                }
            } else {
                i += 1;
            }
        }
        self.push(out, &text[copied..])
    }
}

/// The parameter list of `#define NAME(a, b)`, `rest[open]` being `(`:
/// the names and where the body starts.
fn parse_params(rest: &str, open: usize) -> Result<(Vec<String>, usize), String> {
    let Some(close) = rest[open..].find(')').map(|p| open + p) else {
        return Err("the parameter list of this macro is not closed".into());
    };
    let inner = rest[open + 1..close].trim();
    let mut params: Vec<String> = Vec::new();
    if !inner.is_empty() {
        for p in inner.split(',') {
            let p = p.trim();
            if p == "..." || p.ends_with("...") {
                return Err("variadic macros (`...`) are not supported".into());
            }
            if !is_identifier(p) {
                return Err(format!("`{p}` is not a parameter name"));
            }
            if params.iter().any(|q| q == p) {
                return Err(format!("parameter `{p}` appears twice"));
            }
            params.push(p.to_owned());
        }
    }
    Ok((params, close + 1))
}

/// The arguments of a macro use whose `(` is at `text[open]`, split at
/// top-level commas (comments become spaces), and the offset after the
/// closing `)`; `None` if it is not closed.
fn split_args(text: &str, open: usize) -> Option<(Vec<String>, usize)> {
    let b = text.as_bytes();
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let e = string_end(b, i, b.len()).unwrap_or(b.len());
                cur.push_str(&text[i..e]);
                i = e;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = memchr_nl(b, i);
                cur.push(' ');
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 4 + p);
                cur.push(' ');
                continue;
            }
            b'(' => depth += 1,
            b')' if depth == 0 => {
                args.push(std::mem::take(&mut cur));
                return Some((args, i + 1));
            }
            b')' => depth -= 1,
            b',' if depth == 0 => {
                args.push(std::mem::take(&mut cur));
                i += 1;
                continue;
            }
            _ => {}
        }
        // Copy one whole character (the text is UTF-8).
        let n = text[i..].chars().next().map_or(1, char::len_utf8);
        cur.push_str(&text[i..i + n]);
        i += n;
    }
    None
}

/// The body of a function-like macro with its parameters replaced: `#p`
/// by the argument as a string, a parameter next to `##` by the argument
/// as written, any other by the expanded argument; `##` joins its sides.
fn substitute(body: &str, params: &[String], raw: &[String], expanded: &[String]) -> String {
    let b = body.as_bytes();
    let param = |w: &str| params.iter().position(|p| p == w);
    let next_is_paste = |mut k: usize| {
        while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
            k += 1;
        }
        b.get(k) == Some(&b'#') && b.get(k + 1) == Some(&b'#')
    };
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    let mut after_paste = false;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            let e = string_end(b, i, b.len()).unwrap_or(b.len());
            out.push_str(&body[i..e]);
            i = e;
            after_paste = false;
        } else if c == b'#' && b.get(i + 1) == Some(&b'#') {
            while out.ends_with([' ', '\t']) {
                out.pop();
            }
            i += 2;
            while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
                i += 1;
            }
            after_paste = true;
        } else if c == b'#' {
            let mut k = i + 1;
            while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                k += 1;
            }
            let e = word_end(b, k);
            match param(&body[k..e]) {
                Some(p) if e > k => {
                    out.push_str(&stringify(&raw[p]));
                    i = e;
                }
                _ => {
                    out.push('#');
                    i += 1;
                }
            }
            after_paste = false;
        } else if is_ident_start(c) || c.is_ascii_digit() {
            let e = word_end(b, i);
            let w = &body[i..e];
            match param(w).filter(|_| is_ident_start(c)) {
                Some(p) if after_paste || next_is_paste(e) => out.push_str(raw[p].trim()),
                Some(p) => out.push_str(&expanded[p]),
                None => out.push_str(w),
            }
            i = e;
            after_paste = false;
        } else {
            let n = body[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&body[i..i + n]);
            i += n;
            after_paste = false;
        }
    }
    out
}

/// `#x`: the argument as a string literal (spaces collapsed, `"` and `\`
/// escaped).
fn stringify(arg: &str) -> String {
    let mut s = String::from("\"");
    for (k, w) in arg.split_whitespace().enumerate() {
        if k > 0 {
            s.push(' ');
        }
        for ch in w.chars() {
            if ch == '"' || ch == '\\' {
                s.push('\\');
            }
            s.push(ch);
        }
    }
    s.push('"');
    s
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
