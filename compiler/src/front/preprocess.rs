//! The preprocessor: `#include`, object-like `#define`/`#undef`, conditionals.
//!
//! It works line by line on the original text, tracking block comments and
//! string literals, and produces one expanded text plus a [`SpanMap`] from
//! every output byte back to the original file and offset. Text is copied in
//! maximal verbatim runs; a macro expansion is one fixed segment that maps to
//! the macro use. Directive lines produce a single `\n`.
//!
//! Limits (each a diagnostic, never a crash): include depth, number of
//! inclusions, macro expansion depth and size, `#if` expression depth.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::ast::Span;
use crate::diag::Diagnostic;
use crate::source::SourceMap;

use super::spanmap::SpanMap;
use super::{bundled_include, FrontOptions};

/// Maximum `#include` nesting.
pub(crate) const MAX_INCLUDE_DEPTH: usize = 64;
/// Maximum number of file inclusions in one compilation.
const MAX_INCLUSIONS: usize = 4096;
/// Maximum nesting of macros inside macro expansions.
const MAX_MACRO_DEPTH: usize = 64;
/// Maximum total bytes produced by macro expansions.
const MAX_EXPANSION_BYTES: usize = 4 << 20;
/// Maximum size of the preprocessed text.
const MAX_OUTPUT_BYTES: usize = 256 << 20;
/// Maximum nesting of parentheses and unary operators in `#if`.
const MAX_IF_DEPTH: usize = 64;

/// The preprocessed program.
pub(crate) struct Expanded {
    /// The text the grammar parses.
    pub(crate) text: String,
    /// Output position → original span.
    pub(crate) map: SpanMap,
}

/// Identity of a file for include-once and cycle checks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FileKey {
    Bundled(&'static str),
    Path(PathBuf),
}

#[derive(Clone, Debug)]
struct Macro {
    body: String,
}

#[derive(Clone, Debug)]
struct Cond {
    /// Whether the enclosing region is active.
    parent_active: bool,
    /// Some branch was already taken.
    taken: bool,
    /// The current branch is active.
    active: bool,
    /// `#else` was seen.
    seen_else: bool,
    /// The opening directive.
    span: Span,
}

/// One file on the include stack.
struct Frame {
    key: FileKey,
    /// Directory for `#include "..."` (None for bundled files).
    dir: Option<PathBuf>,
    /// Where it was included from.
    site: Option<Span>,
    name: String,
}

/// Include-guard detection state for the file being processed.
#[derive(Default)]
struct GuardState {
    /// Something other than whitespace/comments was seen.
    seen_significant: bool,
    /// `#ifndef NAME` as the first directive: (name, cond depth after push).
    candidate: Option<(String, usize)>,
    /// The candidate's `#endif` was reached.
    closed: bool,
    /// Something significant followed the closing `#endif`.
    spoiled: bool,
}

struct Pp<'a> {
    sources: &'a mut SourceMap,
    opts: &'a FrontOptions,
    macros: HashMap<String, Macro>,
    out: String,
    map: SpanMap,
    diags: Vec<Diagnostic>,
    conds: Vec<Cond>,
    stack: Vec<Frame>,
    pragma_once: HashSet<FileKey>,
    guards: HashMap<FileKey, String>,
    /// `conds.len()` when each file on the stack started.
    cond_bases: Vec<usize>,
    inclusions: usize,
    expansion_bytes: usize,
    /// Set once the output limit was hit (stops further output).
    overflow: bool,
}

/// Preprocess `text` (already registered as file `file` in `sources`).
pub(crate) fn preprocess(
    sources: &mut SourceMap,
    file: u32,
    path: Option<&Path>,
    opts: &FrontOptions,
) -> Result<Expanded, Vec<Diagnostic>> {
    let mut pp = Pp {
        sources,
        opts,
        macros: HashMap::new(),
        out: String::new(),
        map: SpanMap::new(file),
        diags: Vec::new(),
        conds: Vec::new(),
        stack: Vec::new(),
        pragma_once: HashSet::new(),
        guards: HashMap::new(),
        cond_bases: vec![0],
        inclusions: 0,
        expansion_bytes: 0,
        overflow: false,
    };
    let zero = Span {
        file,
        start: 0,
        end: 0,
    };
    for (name, value) in &opts.defines {
        if is_identifier(name) {
            pp.macros.insert(
                name.clone(),
                Macro {
                    body: value.trim().to_owned(),
                },
            );
        } else {
            pp.diags.push(
                Diagnostic::error(
                    "E0021",
                    format!("invalid macro name `{name}` in a -D definition"),
                    zero,
                )
                .with_hint("a macro name is an identifier: letters, digits and `_`, not starting with a digit"),
            );
        }
    }
    let name = pp
        .sources
        .file(file)
        .map(|f| f.name.clone())
        .unwrap_or_default();
    let (key, dir) = match path {
        Some(p) => (
            FileKey::Path(std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())),
            Some(p.parent().map(Path::to_path_buf).unwrap_or_default()),
        ),
        None => {
            let p = PathBuf::from(&name);
            (
                FileKey::Path(canon(&p)),
                Some(p.parent().map(Path::to_path_buf).unwrap_or_default()),
            )
        }
    };
    pp.stack.push(Frame {
        key: key.clone(),
        dir,
        site: None,
        name,
    });
    pp.run_file(file, key);
    pp.stack.pop();
    if pp.diags.is_empty() {
        Ok(Expanded {
            text: pp.out,
            map: pp.map,
        })
    } else {
        Err(pp.diags)
    }
}

/// Is `s` a C identifier?
fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// End of the identifier or number starting at `i`.
fn word_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ident_char(b[i]) {
        i += 1;
    }
    i
}

/// End of a string literal starting at the `"` at `i` (one past the closing
/// quote), or `None` if the line/text ends first.
fn string_end(b: &[u8], i: usize, limit: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < limit {
        match b[j] {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            b'\n' => return None,
            _ => j += 1,
        }
    }
    None
}

fn sp(file: u32, start: usize, end: usize) -> Span {
    Span {
        file,
        start: u32::try_from(start).unwrap_or(u32::MAX),
        end: u32::try_from(end).unwrap_or(u32::MAX),
    }
}

/// A directive's text with comments and line continuations blanked out
/// (same length and offsets as the original), and whether it ends inside an
/// unterminated block comment (with the comment's start offset).
fn clean_directive(raw: &str) -> (String, Option<usize>) {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut open_comment = None;
    while i < b.len() {
        let c = b[i];
        if c == b'\\'
            && (b.get(i + 1) == Some(&b'\n')
                || (b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n')))
        {
            let n = if b[i + 1] == b'\r' { 3 } else { 2 };
            out.extend(std::iter::repeat_n(b' ', n));
            i += n;
        } else if c == b'"' {
            let end = string_end(b, i, b.len()).unwrap_or(b.len());
            out.extend_from_slice(&b[i..end]);
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            out.extend(std::iter::repeat_n(b' ', b.len() - i));
            i = b.len();
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let close = raw[i + 2..].find("*/").map(|k| i + 2 + k + 2);
            let end = close.unwrap_or(b.len());
            if close.is_none() {
                open_comment = Some(i);
            }
            out.extend(std::iter::repeat_n(b' ', end - i));
            i = end;
        } else if c >= 0x80 {
            // Keep multi-byte characters intact.
            let ch_len = raw[i..].chars().next().map_or(1, char::len_utf8);
            out.extend_from_slice(&b[i..i + ch_len]);
            i += ch_len;
        } else {
            out.push(c);
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII, so this is valid UTF-8.
    (String::from_utf8_lossy(&out).into_owned(), open_comment)
}

impl Pp<'_> {
    fn active(&self) -> bool {
        self.conds.last().is_none_or(|c| c.active)
    }

    fn error(&mut self, code: &'static str, msg: impl Into<String>, span: Span) -> &mut Diagnostic {
        self.diags.push(Diagnostic::error(code, msg, span));
        let n = self.diags.len() - 1;
        &mut self.diags[n]
    }

    /// Copy `text[from..to]` of `file` verbatim.
    fn emit_text(&mut self, file: u32, text: &str, from: usize, to: usize) {
        if to <= from || self.overflow {
            return;
        }
        if self.out.len() + (to - from) > MAX_OUTPUT_BYTES {
            self.overflow = true;
            let d = Diagnostic::error(
                "E0022",
                "the preprocessed program is too large",
                sp(file, from, from),
            )
            .with_note(format!("the limit is {} MiB", MAX_OUTPUT_BYTES >> 20));
            self.diags.push(d);
            return;
        }
        let out = self.out.len();
        self.out.push_str(&text[from..to]);
        self.map.push_text(out, file, from, to - from);
    }

    /// Emit a separator `\n` attributed to `span`.
    fn emit_newline(&mut self, span: Span) {
        let out = self.out.len();
        self.out.push('\n');
        self.map.push_fixed(out, 1, span);
    }

    /// Process one whole file.
    fn run_file(&mut self, file: u32, key: FileKey) {
        let text: String = match self.sources.file(file) {
            Some(f) => f.text.clone(),
            None => return,
        };
        let b = text.as_bytes();
        let len = b.len();
        let cond_base = self.conds.len();
        let mut guard = GuardState::default();
        let mut in_comment: Option<usize> = None;
        let mut run_start: Option<usize> = None;
        let mut i = 0;
        while i < len {
            let line_end = memchr_nl(b, i);
            // Is this line a directive?
            let mut k = i;
            while k < line_end && (b[k] == b' ' || b[k] == b'\t' || b[k] == b'\r' || b[k] == 0x0C) {
                k += 1;
            }
            if in_comment.is_none() && k < line_end && b[k] == b'#' {
                if let Some(rs) = run_start.take() {
                    self.emit_text(file, &text, rs, i);
                }
                // Extend over continuation lines.
                let mut end = line_end;
                while end < len && ends_with_backslash(b, i, end) {
                    end = memchr_nl(b, end + 1);
                }
                let open_comment = self.directive(file, &text, k, end, &mut guard, &key);
                guard.seen_significant = true;
                if let Some(c) = open_comment {
                    in_comment = Some(c);
                }
                self.emit_newline(sp(file, end, end));
                i = end + 1;
                continue;
            }
            let active = self.active() && !self.overflow;
            if active {
                if run_start.is_none() {
                    run_start = Some(i);
                }
            } else if let Some(rs) = run_start.take() {
                self.emit_text(file, &text, rs, i);
            }
            // Scan the line for comments, strings and identifiers.
            let mut j = i;
            while j < line_end {
                if in_comment.is_some() {
                    match text[j..line_end].find("*/") {
                        Some(p) => {
                            j += p + 2;
                            in_comment = None;
                        }
                        None => j = line_end,
                    }
                    continue;
                }
                let c = b[j];
                if c == b'/' && b.get(j + 1) == Some(&b'/') {
                    j = line_end;
                } else if c == b'/' && b.get(j + 1) == Some(&b'*') {
                    in_comment = Some(j);
                    j += 2;
                } else if c == b'"' {
                    guard.note_significant();
                    match string_end(b, j, line_end) {
                        Some(e) => j = e,
                        None => {
                            if active {
                                self.error(
                                    "E0005",
                                    "unterminated string literal",
                                    sp(file, j, j + 1),
                                )
                                .with_hint_mut("close the string with `\"` on the same line");
                            }
                            j = line_end;
                        }
                    }
                } else if c.is_ascii_digit() {
                    guard.note_significant();
                    j = word_end(b, j);
                } else if is_ident_start(c) {
                    guard.note_significant();
                    let e = word_end(b, j);
                    if active && !self.macros.is_empty() && self.macros.contains_key(&text[j..e]) {
                        if let Some(rs) = run_start.take() {
                            self.emit_text(file, &text, rs, j);
                        }
                        self.expand_use(&text[j..e], sp(file, j, e));
                        run_start = Some(e);
                    }
                    j = e;
                } else {
                    if !c.is_ascii_whitespace() {
                        guard.note_significant();
                    }
                    j += 1;
                }
            }
            i = line_end + 1;
        }
        if let Some(rs) = run_start.take() {
            self.emit_text(file, &text, rs, len);
        }
        // Separate this file's text from what follows.
        self.emit_newline(sp(file, len, len));
        if let Some(c) = in_comment {
            self.error("E0004", "unterminated block comment", sp(file, c, c + 2))
                .with_label_mut("this comment is never closed")
                .with_hint_mut("close it with `*/`");
        }
        while self.conds.len() > cond_base {
            if let Some(c) = self.conds.pop() {
                self.error("E0031", "unterminated conditional directive", c.span)
                    .with_label_mut("this conditional has no matching `#endif`");
            }
        }
        if let Some((name, _)) = guard.candidate {
            if guard.closed && !guard.spoiled {
                self.guards.insert(key, name);
            }
        }
    }

    /// Handle the directive `text[hash..end]` (`hash` at the `#`). Returns the
    /// offset of an unterminated block comment that starts in it.
    fn directive(
        &mut self,
        file: u32,
        text: &str,
        hash: usize,
        end: usize,
        guard: &mut GuardState,
        key: &FileKey,
    ) -> Option<usize> {
        let raw = &text[hash..end];
        let (clean, open_comment) = clean_directive(raw);
        let cb = clean.as_bytes();
        let dir_span = sp(file, hash, hash + raw.trim_end().len());
        // Directive name.
        let mut k = 1;
        while k < cb.len() && (cb[k] == b' ' || cb[k] == b'\t') {
            k += 1;
        }
        let name_start = k;
        let name_end = word_end(cb, k);
        let name = &clean[name_start..name_end];
        let rest_off = name_end;
        let rest = &clean[rest_off..];
        let active = self.active();
        let first_directive = !guard.seen_significant;
        if guard.closed {
            guard.spoiled = true;
        }
        let off = |o: usize| hash + o;
        match name {
            "ifdef" | "ifndef" => {
                let parent = active;
                let (id, _, _) = first_word(rest);
                let mut val = false;
                if parent {
                    if id.is_empty() || !is_identifier(id) {
                        self.error("E0021", format!("`#{name}` needs a macro name"), dir_span);
                    } else {
                        val = self.macros.contains_key(id) == (name == "ifdef");
                    }
                }
                if first_directive && name == "ifndef" && !id.is_empty() {
                    guard.candidate = Some((id.to_owned(), self.conds.len() + 1));
                }
                self.conds.push(Cond {
                    parent_active: parent,
                    taken: val,
                    active: parent && val,
                    seen_else: false,
                    span: dir_span,
                });
            }
            "if" => {
                let parent = active;
                let val = parent && self.eval_if(rest, file, off(rest_off));
                self.conds.push(Cond {
                    parent_active: parent,
                    taken: val,
                    active: val,
                    seen_else: false,
                    span: dir_span,
                });
            }
            "elif" | "else" | "endif" => {
                let base_ok = self.conds.len() > self.file_cond_base();
                if !base_ok {
                    self.error(
                        "E0030",
                        format!("`#{name}` without a matching `#if`"),
                        dir_span,
                    )
                    .with_label_mut("no open `#if`, `#ifdef` or `#ifndef` in this file");
                    return open_comment;
                }
                let depth = self.conds.len();
                let Some(top) = self.conds.last().cloned() else {
                    return open_comment;
                };
                if name != "endif" && guard.candidate.as_ref().is_some_and(|(_, d)| *d == depth) {
                    // `#ifndef G ... #else ... #endif` is not an include guard.
                    guard.candidate = None;
                }
                match name {
                    "endif" => {
                        self.conds.pop();
                        if guard.candidate.as_ref().is_some_and(|(_, d)| *d == depth) {
                            guard.closed = true;
                        }
                    }
                    "else" => {
                        if top.seen_else {
                            self.error("E0030", "`#else` after `#else`", dir_span)
                                .with_secondary_mut(top.span, "in this conditional");
                            return open_comment;
                        }
                        let active = top.parent_active && !top.taken;
                        if let Some(c) = self.conds.last_mut() {
                            c.active = active;
                            c.taken = true;
                            c.seen_else = true;
                        }
                    }
                    _ => {
                        if top.seen_else {
                            self.error("E0030", "`#elif` after `#else`", dir_span)
                                .with_secondary_mut(top.span, "in this conditional");
                            return open_comment;
                        }
                        let val = top.parent_active
                            && !top.taken
                            && self.eval_if(rest, file, off(rest_off));
                        if let Some(c) = self.conds.last_mut() {
                            c.active = val;
                            c.taken |= val;
                        }
                    }
                }
            }
            _ if !active => {}
            "" => {} // the null directive `#`
            "define" => self.define(rest, file, off(rest_off), dir_span),
            "undef" => {
                let (id, _, _) = first_word(rest);
                if id.is_empty() || !is_identifier(id) {
                    self.error("E0021", "`#undef` needs a macro name", dir_span);
                } else {
                    self.macros.remove(id);
                }
            }
            "include" => self.include(rest, file, off(rest_off), dir_span),
            "error" => {
                let msg = rest.trim();
                self.error("E0034", format!("#error {msg}"), dir_span)
                    .with_label_mut("`#error` directive reached");
            }
            "pragma" => {
                if first_word(rest).0 == "once" {
                    self.pragma_once.insert(key.clone());
                }
            }
            // Accepted and ignored: `#line` would re-map locations that the
            // span map already tracks exactly; `#warning` has no channel.
            "line" | "warning" => {}
            other => {
                let msg = if other.is_empty() {
                    "invalid preprocessor directive".to_owned()
                } else {
                    format!("unknown preprocessor directive `#{other}`")
                };
                self.error("E0033", msg, sp(file, hash, hash + name_end.max(1)))
                    .with_note_mut("supported: #include, #define, #undef, #if, #ifdef, #ifndef, #elif, #else, #endif, #error, #pragma once");
            }
        }
        open_comment
    }

    /// Index in `conds` where the current file's conditionals start.
    fn file_cond_base(&self) -> usize {
        self.cond_bases.last().copied().unwrap_or(0)
    }

    fn define(&mut self, rest: &str, file: u32, rest_at: usize, dir_span: Span) {
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
    fn expand_use(&mut self, name: &str, use_span: Span) {
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

    /// Evaluate an `#if`/`#elif` condition.
    fn eval_if(&mut self, expr: &str, file: u32, at: usize) -> bool {
        let expr_span = {
            let t = expr.trim_start();
            let s = at + (expr.len() - t.len());
            sp(file, s, s + t.trim_end().len())
        };
        // Replace `defined X` / `defined(X)`, expand macros.
        let b = expr.as_bytes();
        let mut text = String::with_capacity(expr.len());
        let mut i = 0;
        let mut budget = MAX_EXPANSION_BYTES.saturating_sub(self.expansion_bytes);
        while i < b.len() {
            let c = b[i];
            if is_ident_start(c) {
                let e = word_end(b, i);
                let w = &expr[i..e];
                if w == "defined" {
                    let mut k = e;
                    while k < b.len() && b[k].is_ascii_whitespace() {
                        k += 1;
                    }
                    let paren = b.get(k) == Some(&b'(');
                    if paren {
                        k += 1;
                        while k < b.len() && b[k].is_ascii_whitespace() {
                            k += 1;
                        }
                    }
                    let ie = word_end(b, k);
                    let id = &expr[k..ie];
                    let mut k2 = ie;
                    if paren {
                        while k2 < b.len() && b[k2].is_ascii_whitespace() {
                            k2 += 1;
                        }
                        if b.get(k2) != Some(&b')') || id.is_empty() {
                            self.error("E0032", "malformed `defined(...)` in `#if`", expr_span)
                                .with_hint_mut("write `defined(NAME)` or `defined NAME`");
                            return false;
                        }
                        k2 += 1;
                    } else if id.is_empty() {
                        self.error("E0032", "`defined` needs a macro name", expr_span);
                        return false;
                    }
                    text.push_str(if self.macros.contains_key(id) {
                        " 1 "
                    } else {
                        " 0 "
                    });
                    i = k2;
                    continue;
                }
                if self.macros.contains_key(w) {
                    let mut active = Vec::new();
                    text.push(' ');
                    if let Err(msg) =
                        expand_name(&self.macros, w, &mut active, &mut text, &mut budget, 0)
                    {
                        self.error("E0022", msg, expr_span);
                        return false;
                    }
                    text.push(' ');
                } else {
                    text.push_str(w);
                }
                i = e;
            } else if c.is_ascii_digit() {
                let e = word_end(b, i);
                text.push_str(&expr[i..e]);
                i = e;
            } else {
                let ch_len = expr[i..].chars().next().map_or(1, char::len_utf8);
                text.push_str(&expr[i..i + ch_len]);
                i += ch_len;
            }
        }
        match ifexpr::eval(&text) {
            Ok(v) => v != 0,
            Err(msg) => {
                self.error(
                    "E0032",
                    format!("invalid `#if` expression: {msg}"),
                    expr_span,
                );
                false
            }
        }
    }

    /// `#include <x>` / `#include "x"`.
    fn include(&mut self, rest: &str, file: u32, rest_at: usize, dir_span: Span) {
        let t = rest.trim_start();
        let lead = rest.len() - t.len();
        let (target, angle, tlen) = if let Some(r) = t.strip_prefix('<') {
            match r.find('>') {
                Some(e) => (&r[..e], true, e + 2),
                None => ("", true, 0),
            }
        } else if let Some(r) = t.strip_prefix('"') {
            match r.find('"') {
                Some(e) => (&r[..e], false, e + 2),
                None => ("", false, 0),
            }
        } else {
            ("", false, 0)
        };
        if target.is_empty() {
            self.error("E0015", "malformed `#include`", dir_span)
                .with_hint_mut("write `#include <core.p4>` or `#include \"file.p4\"`");
            return;
        }
        let site = sp(file, rest_at + lead, rest_at + lead + tlen);
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            self.error(
                "E0014",
                format!("`#include` nested more than {MAX_INCLUDE_DEPTH} levels deep"),
                site,
            )
            .with_label_mut("this include exceeds the limit");
            return;
        }
        if self.inclusions >= MAX_INCLUSIONS {
            self.error(
                "E0014",
                format!("more than {MAX_INCLUSIONS} file inclusions in one compilation"),
                site,
            );
            return;
        }
        // Resolve.
        let mut searched: Vec<String> = Vec::new();
        let mut found: Option<(FileKey, String)> = None;
        let bundled = bundled_include(target).map(|_| target);
        if angle {
            if let Some(b) = bundled {
                found = Some((FileKey::Bundled(static_name(b)), format!("<{b}>")));
            }
        } else if let Some(dir) = self.stack.last().and_then(|f| f.dir.clone()) {
            let p = dir.join(target);
            searched.push(display_dir(&dir));
            if p.is_file() {
                found = Some((FileKey::Path(canon(&p)), p.display().to_string()));
            }
        }
        if found.is_none() {
            for d in &self.opts.include_dirs {
                let p = d.join(target);
                searched.push(display_dir(d));
                if p.is_file() {
                    found = Some((FileKey::Path(canon(&p)), p.display().to_string()));
                    break;
                }
            }
        }
        if found.is_none() {
            if let Some(b) = bundled {
                found = Some((FileKey::Bundled(static_name(b)), format!("<{b}>")));
            }
        }
        let Some((key, name)) = found else {
            let shown = if angle {
                format!("<{target}>")
            } else {
                format!("\"{target}\"")
            };
            let d = self
                .error("E0010", format!("cannot find include file {shown}"), site)
                .with_label_mut("not found");
            if searched.is_empty() {
                d.notes
                    .push("no include directories were given (use -I DIR)".to_owned());
            } else {
                d.notes.push(format!("searched: {}", searched.join(", ")));
            }
            d.notes
                .push("bundled includes: <core.p4>, <v1model.p4>, <netsparse.p4>".to_owned());
            return;
        };
        if self.pragma_once.contains(&key) {
            return;
        }
        if let Some(g) = self.guards.get(&key) {
            if self.macros.contains_key(g) {
                return;
            }
        }
        if let Some(pos) = self.stack.iter().position(|f| f.key == key) {
            let chain: Vec<String> = self.stack[pos..]
                .iter()
                .map(|f| f.name.clone())
                .chain(std::iter::once(name.clone()))
                .collect();
            let first = self.stack[pos].site;
            let d = self
                .error(
                    "E0013",
                    format!("include cycle: `{name}` includes itself"),
                    site,
                )
                .with_label_mut("this include closes the cycle");
            d.notes.push(format!("cycle: {}", chain.join(" -> ")));
            if let Some(first) = first {
                d.labels.push(crate::diag::SpanLabel {
                    span: first,
                    message: format!("`{name}` was first included here"),
                    primary: false,
                });
            }
            d.hint = Some("add an include guard (`#ifndef X` / `#define X` / `#endif`) or `#pragma once`, or remove the include".to_owned());
            return;
        }
        // Load.
        let text: String = match &key {
            FileKey::Bundled(b) => bundled_include(b).unwrap_or("").to_owned(),
            FileKey::Path(_) => {
                let path = PathBuf::from(&name);
                match read_source(&path) {
                    Ok(t) => t,
                    Err(ReadError::Io(e)) => {
                        self.error(
                            "E0011",
                            format!("cannot read include file `{name}`: {e}"),
                            site,
                        );
                        return;
                    }
                    Err(ReadError::Utf8 { lossy, at }) => {
                        let id = self.sources.add(name.clone(), lossy);
                        self.error(
                            "E0012",
                            format!("`{name}` is not valid UTF-8"),
                            sp(id, at, at + 3),
                        )
                        .with_label_mut("invalid byte sequence here")
                        .with_secondary_mut(site, "included here");
                        return;
                    }
                }
            }
        };
        self.inclusions += 1;
        let id = self.sources.add(name.clone(), text);
        let dir = match &key {
            FileKey::Bundled(_) => None,
            FileKey::Path(_) => Some(
                Path::new(&name)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
            ),
        };
        self.stack.push(Frame {
            key: key.clone(),
            dir,
            site: Some(site),
            name,
        });
        self.cond_bases.push(self.conds.len());
        self.run_file(id, key);
        self.cond_bases.pop();
        self.stack.pop();
    }
}

impl GuardState {
    fn note_significant(&mut self) {
        self.seen_significant = true;
        if self.closed {
            self.spoiled = true;
        }
    }
}

/// A small helper trait so diagnostics can be refined in place.
trait DiagMut {
    fn with_label_mut(&mut self, msg: impl Into<String>) -> &mut Self;
    fn with_hint_mut(&mut self, msg: impl Into<String>) -> &mut Self;
    fn with_secondary_mut(&mut self, span: Span, msg: impl Into<String>) -> &mut Self;
    fn with_note_mut(&mut self, msg: impl Into<String>) -> &mut Self;
}

impl DiagMut for Diagnostic {
    fn with_note_mut(&mut self, msg: impl Into<String>) -> &mut Self {
        self.notes.push(msg.into());
        self
    }
    fn with_label_mut(&mut self, msg: impl Into<String>) -> &mut Self {
        if let Some(l) = self.labels.iter_mut().find(|l| l.primary) {
            l.message = msg.into();
        }
        self
    }
    fn with_hint_mut(&mut self, msg: impl Into<String>) -> &mut Self {
        self.hint = Some(msg.into());
        self
    }
    fn with_secondary_mut(&mut self, span: Span, msg: impl Into<String>) -> &mut Self {
        self.labels.push(crate::diag::SpanLabel {
            span,
            message: msg.into(),
            primary: false,
        });
        self
    }
}

fn static_name(name: &str) -> &'static str {
    match name {
        "core.p4" => "core.p4",
        "v1model.p4" => "v1model.p4",
        _ => "netsparse.p4",
    }
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn display_dir(d: &Path) -> String {
    if d.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        d.display().to_string()
    }
}

/// First word of `s`: (word, start, end) offsets within `s`.
fn first_word(s: &str) -> (&str, usize, usize) {
    let b = s.as_bytes();
    let mut k = 0;
    while k < b.len() && b[k].is_ascii_whitespace() {
        k += 1;
    }
    let e = word_end(b, k);
    (&s[k..e], k, e)
}

/// Index of the next `\n` at or after `i`, or the text length.
fn memchr_nl(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p)
}

/// Does the line `b[start..end]` end with a `\` (before an optional `\r`)?
fn ends_with_backslash(b: &[u8], start: usize, end: usize) -> bool {
    let mut e = end;
    if e > start && b[e - 1] == b'\r' {
        e -= 1;
    }
    e > start && b[e - 1] == b'\\'
}

/// Expand `name` (recursively, never re-expanding a macro inside its own
/// expansion) onto `out`.
fn expand_name<'m>(
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

fn push_budget(out: &mut String, s: &str, budget: &mut usize) -> Result<(), String> {
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

/// Why a source file could not be loaded.
pub(crate) enum ReadError {
    /// The file could not be read.
    Io(std::io::Error),
    /// Not UTF-8: the lossy text and the byte offset of the first bad byte.
    Utf8 { lossy: String, at: usize },
}

/// Read a source file as UTF-8.
pub(crate) fn read_source(path: &Path) -> Result<String, ReadError> {
    let bytes = std::fs::read(path).map_err(ReadError::Io)?;
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            Err(ReadError::Utf8 { lossy, at })
        }
    }
}

/// `#if` expressions: C integer constant expressions after `defined` and
/// macro replacement. Unknown identifiers are 0 (as in C); `true` is 1.
mod ifexpr {
    use super::MAX_IF_DEPTH;

    #[derive(Clone, Debug, PartialEq)]
    enum Tok {
        Num(i128),
        Op(&'static str),
        LParen,
        RParen,
    }

    const OPS: &[&str] = &[
        "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "<", ">", "+", "-", "*", "/", "%", "&",
        "|", "^", "!", "~", "?", ":",
    ];

    fn lex(s: &str) -> Result<Vec<Tok>, String> {
        let b = s.as_bytes();
        let mut i = 0;
        let mut toks = Vec::new();
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if c.is_ascii_digit() {
                let e = super::word_end(b, i);
                toks.push(Tok::Num(number(&s[i..e])?));
                i = e;
            } else if super::is_ident_start(c) {
                let e = super::word_end(b, i);
                toks.push(Tok::Num(i128::from(&s[i..e] == "true")));
                i = e;
            } else if c == b'(' {
                toks.push(Tok::LParen);
                i += 1;
            } else if c == b')' {
                toks.push(Tok::RParen);
                i += 1;
            } else if let Some(op) = OPS.iter().find(|op| s[i..].starts_with(**op)) {
                toks.push(Tok::Op(op));
                i += op.len();
            } else {
                let ch = s[i..].chars().next().unwrap_or('?');
                return Err(format!("unexpected `{ch}`"));
            }
        }
        Ok(toks)
    }

    fn number(t: &str) -> Result<i128, String> {
        let t2 = t.trim_end_matches(['u', 'U', 'l', 'L']);
        let (digits, radix) = if let Some(h) = t2.strip_prefix("0x").or(t2.strip_prefix("0X")) {
            (h, 16)
        } else if let Some(h) = t2.strip_prefix("0b").or(t2.strip_prefix("0B")) {
            (h, 2)
        } else if t2.len() > 1 && t2.starts_with('0') {
            (&t2[1..], 8)
        } else {
            (t2, 10)
        };
        i128::from_str_radix(digits, radix).map_err(|_| format!("invalid number `{t}`"))
    }

    struct P {
        toks: Vec<Tok>,
        pos: usize,
        depth: usize,
    }

    /// Binary operator precedence (C), higher binds tighter.
    fn prec(op: &str) -> Option<u8> {
        Some(match op {
            "||" => 1,
            "&&" => 2,
            "|" => 3,
            "^" => 4,
            "&" => 5,
            "==" | "!=" => 6,
            "<" | ">" | "<=" | ">=" => 7,
            "<<" | ">>" => 8,
            "+" | "-" => 9,
            "*" | "/" | "%" => 10,
            _ => return None,
        })
    }

    impl P {
        fn peek(&self) -> Option<&Tok> {
            self.toks.get(self.pos)
        }

        fn enter(&mut self) -> Result<(), String> {
            self.depth += 1;
            if self.depth > MAX_IF_DEPTH {
                Err("expression nested too deeply".to_owned())
            } else {
                Ok(())
            }
        }

        fn cond(&mut self) -> Result<i128, String> {
            self.enter()?;
            let c = self.binary(1)?;
            let r = if self.peek() == Some(&Tok::Op("?")) {
                self.pos += 1;
                let a = self.cond()?;
                if self.peek() != Some(&Tok::Op(":")) {
                    return Err("expected `:` in `?:`".to_owned());
                }
                self.pos += 1;
                let b = self.cond()?;
                if c != 0 {
                    a
                } else {
                    b
                }
            } else {
                c
            };
            self.depth -= 1;
            Ok(r)
        }

        fn binary(&mut self, min: u8) -> Result<i128, String> {
            let mut lhs = self.unary()?;
            while let Some(Tok::Op(op)) = self.peek().cloned() {
                let Some(p) = prec(op) else { break };
                if p < min {
                    break;
                }
                self.pos += 1;
                let rhs = self.binary(p + 1)?;
                lhs = apply(op, lhs, rhs)?;
            }
            Ok(lhs)
        }

        fn unary(&mut self) -> Result<i128, String> {
            self.enter()?;
            let r = match self.peek().cloned() {
                Some(Tok::Num(n)) => {
                    self.pos += 1;
                    n
                }
                Some(Tok::LParen) => {
                    self.pos += 1;
                    let v = self.cond()?;
                    if self.peek() != Some(&Tok::RParen) {
                        return Err("expected `)`".to_owned());
                    }
                    self.pos += 1;
                    v
                }
                Some(Tok::Op(op @ ("!" | "~" | "-" | "+"))) => {
                    self.pos += 1;
                    let v = self.unary()?;
                    match op {
                        "!" => i128::from(v == 0),
                        "~" => !v,
                        "-" => v.wrapping_neg(),
                        _ => v,
                    }
                }
                Some(t) => return Err(format!("unexpected {}", describe(&t))),
                None => return Err("expected a value".to_owned()),
            };
            self.depth -= 1;
            Ok(r)
        }
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Num(n) => format!("`{n}`"),
            Tok::Op(o) => format!("`{o}`"),
            Tok::LParen => "`(`".to_owned(),
            Tok::RParen => "`)`".to_owned(),
        }
    }

    fn apply(op: &str, a: i128, b: i128) -> Result<i128, String> {
        Ok(match op {
            "||" => i128::from(a != 0 || b != 0),
            "&&" => i128::from(a != 0 && b != 0),
            "|" => a | b,
            "^" => a ^ b,
            "&" => a & b,
            "==" => i128::from(a == b),
            "!=" => i128::from(a != b),
            "<" => i128::from(a < b),
            ">" => i128::from(a > b),
            "<=" => i128::from(a <= b),
            ">=" => i128::from(a >= b),
            "<<" => u32::try_from(b)
                .ok()
                .and_then(|s| a.checked_shl(s))
                .unwrap_or(0),
            ">>" => u32::try_from(b)
                .ok()
                .and_then(|s| a.checked_shr(s))
                .unwrap_or(0),
            "+" => a.wrapping_add(b),
            "-" => a.wrapping_sub(b),
            "*" => a.wrapping_mul(b),
            "/" | "%" if b == 0 => return Err("division by zero".to_owned()),
            "/" => a.wrapping_div(b),
            "%" => a.wrapping_rem(b),
            _ => return Err(format!("unsupported operator `{op}`")),
        })
    }

    /// Evaluate `s`.
    pub(super) fn eval(s: &str) -> Result<i128, String> {
        let toks = lex(s)?;
        if toks.is_empty() {
            return Err("empty expression".to_owned());
        }
        let mut p = P {
            toks,
            pos: 0,
            depth: 0,
        };
        let v = p.cond()?;
        if let Some(t) = p.peek().cloned() {
            return Err(format!("unexpected {} after the expression", describe(&t)));
        }
        Ok(v)
    }

    #[cfg(test)]
    mod tests {
        use super::eval;

        #[test]
        fn arithmetic_and_logic() {
            assert_eq!(eval("1 + 2 * 3"), Ok(7));
            assert_eq!(eval("(1 + 2) * 3 == 9 && !0"), Ok(1));
            assert_eq!(eval("0x10 | 0b1"), Ok(17));
            assert_eq!(eval("UNKNOWN"), Ok(0));
            assert_eq!(eval("1 ? 2 : 3"), Ok(2));
            assert_eq!(eval("4 >= 5 || 3 < 4"), Ok(1));
            assert!(eval("1 / 0").is_err());
            assert!(eval("(1").is_err());
            assert!(eval("").is_err());
            assert!(eval(&"(".repeat(200)).is_err());
            assert!(eval(&"!".repeat(200)).is_err());
        }
    }
}
