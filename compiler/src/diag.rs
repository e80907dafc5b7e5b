//! Diagnostics: every error the compiler reports has a code (`E0001`...), a
//! message, labelled spans, and optionally notes and a hint, and renders with
//! codespan-reporting (source line, caret under the span).
//!
//! Each code has a one-paragraph explanation in `compiler/errors/EXXXX.md`,
//! embedded at build time (see `build.rs`) and shown by `explain`.
//! Code ranges: E0001–E0099 preprocessor and syntax; E0100–E0299 names and
//! types; E0300–E0399 P4 semantics (directions, actions, tables, parsers);
//! E0400–E0499 architecture, NetSparse constructs and target resources.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::term::{self, termcolor};

use crate::ast::Span;
use crate::source::SourceMap;

include!(concat!(env!("OUT_DIR"), "/explanations.rs"));

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// A note attached to nothing else; does not fail the compilation.
    Warning,
    /// The program is rejected.
    Error,
}

/// A labelled span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanLabel {
    /// Where.
    pub span: Span,
    /// What to say there (may be empty).
    pub message: String,
    /// The primary label gets the caret; secondary labels get dashes.
    pub primary: bool,
}

/// A compiler diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// Error code, e.g. `"E0101"`.
    pub code: &'static str,
    /// One-line message.
    pub message: String,
    /// Labelled spans (the first primary one is the location).
    pub labels: Vec<SpanLabel>,
    /// Extra notes.
    pub notes: Vec<String>,
    /// A suggestion, rendered as `help: ...`.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// An error with code `code` at `span`.
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: vec![SpanLabel {
                span,
                message: String::new(),
                primary: true,
            }],
            notes: Vec::new(),
            hint: None,
        }
    }

    /// A warning with code `code` at `span`.
    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message, span)
        }
    }

    /// Set the primary label's message.
    pub fn with_label(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.iter_mut().find(|l| l.primary) {
            l.message = message.into();
        }
        self
    }

    /// Add a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(SpanLabel {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    /// Add a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Set the hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// The primary span.
    pub fn span(&self) -> Span {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or(self.labels.first())
            .map(|l| l.span)
            .unwrap_or_default()
    }

    fn to_codespan(&self) -> CsDiagnostic<u32> {
        let severity = match self.severity {
            Severity::Warning => CsSeverity::Warning,
            Severity::Error => CsSeverity::Error,
        };
        let labels = self
            .labels
            .iter()
            .map(|l| {
                let range = l.span.start as usize..l.span.end as usize;
                let label = if l.primary {
                    Label::primary(l.span.file, range)
                } else {
                    Label::secondary(l.span.file, range)
                };
                label.with_message(l.message.clone())
            })
            .collect();
        let mut notes = self.notes.clone();
        if let Some(h) = &self.hint {
            notes.push(format!("help: {h}"));
        }
        CsDiagnostic::new(severity)
            .with_code(self.code)
            .with_message(self.message.clone())
            .with_labels(labels)
            .with_notes(notes)
    }

    /// Render as plain text (no colour): what snapshot tests compare.
    pub fn render(&self, files: &SourceMap) -> String {
        let mut buf = termcolor::Buffer::no_color();
        let config = term::Config::default();
        if term::emit_to_write_style(&mut buf, &config, files, &self.to_codespan()).is_err() {
            return format!("{}[{}]: {}\n", self.severity_str(), self.code, self.message);
        }
        String::from_utf8_lossy(buf.as_slice()).into_owned()
    }

    /// Render to a terminal stream, coloured when `color` is set.
    pub fn emit(&self, files: &SourceMap, color: bool) {
        let choice = if color {
            termcolor::ColorChoice::Auto
        } else {
            termcolor::ColorChoice::Never
        };
        let writer = termcolor::StandardStream::stderr(choice);
        let mut lock = writer.lock();
        let config = term::Config::default();
        if term::emit_to_write_style(&mut lock, &config, files, &self.to_codespan()).is_err() {
            eprintln!("{}[{}]: {}", self.severity_str(), self.code, self.message);
        }
    }

    fn severity_str(&self) -> &'static str {
        match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Render many diagnostics, separated as the terminal output would be.
pub fn render_all(diags: &[Diagnostic], files: &SourceMap) -> String {
    diags.iter().map(|d| d.render(files)).collect()
}

/// The long explanation of an error code (the contents of `errors/EXXXX.md`).
pub fn explain(code: &str) -> Option<&'static str> {
    EXPLANATIONS
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(code))
        .map(|(_, text)| *text)
}

/// Every error code that has an explanation, in order.
pub fn codes() -> impl Iterator<Item = &'static str> {
    EXPLANATIONS.iter().map(|(c, _)| *c)
}
