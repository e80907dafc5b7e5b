//! The preprocessor: `#include`, `#define` (object-like and function-like)
//! and `#undef`, conditionals.
//!
//! It works line by line on the original text, tracking block comments and
//! string literals, and produces one expanded text plus a [`SpanMap`] from
//! every output byte back to the original file and offset. Text is copied in
//! maximal verbatim runs; a macro expansion is one fixed segment that maps to
//! the macro use. Directive lines produce a single `\n`.
//!
//! Limits (each a diagnostic, never a crash): include depth, number of
//! inclusions, macro expansion depth and size, `#if` expression depth.
//!
//! `mod.rs` runs files line by line and dispatches directives;
//! `macros.rs` defines and expands macros, `cond.rs` evaluates `#if`
//! conditions and `include.rs` resolves and reads included files.

mod cond;
mod include;
mod macros;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::spanmap::SpanMap;
use super::FrontOptions;
use crate::ast::Span;
use crate::diag::Diagnostic;
use crate::source::SourceMap;
use include::canon;
pub(crate) use include::{read_source, ReadError};

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
    /// `Some` for a function-like macro: its parameter names.
    params: Option<Vec<String>>,
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
                    params: None,
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
            let mut line_end = memchr_nl(b, i);
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
                        match self.expand_use(&text, file, j, e) {
                            Some(end) => {
                                run_start = Some(end);
                                // A function-like use may end on a later line.
                                if end > line_end {
                                    line_end = memchr_nl(b, end - 1);
                                }
                                j = end;
                                continue;
                            }
                            // Not a use (a function-like name without `(`): the
                            // verbatim run goes on from the name.
                            None => run_start = Some(j),
                        }
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
    super::bundled_name(name)
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
