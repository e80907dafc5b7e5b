//! The front end: preprocessor + pest grammar → [`ast::Program`].
//!
//! [`parse_file`] / [`parse_source`] run the whole front end: the
//! preprocessor (`preprocess`: `#include`, `#define`, conditionals) builds
//! one text plus a map back to the original files; a pre-scan rejects
//! pathological nesting; the pest grammar (`grammar.pest`) parses; the AST
//! builder (`parse.rs`) turns pest pairs into [`ast`] nodes whose spans point
//! into the original files. [`print_program`] prints an AST back as P4.
//!
//! Robustness: the work runs on a dedicated thread with a large stack, the
//! pre-scan and the builder bound every kind of nesting, and every failure
//! (including unreadable files) is a [`Diagnostic`], never a panic.

use std::path::{Path, PathBuf};

use crate::ast::{self, Span};
use crate::diag::Diagnostic;
use crate::source::SourceMap;

mod limits;
mod parse;
mod preprocess;
mod print;
mod spanmap;

/// Stack size of the front-end worker thread.
const WORKER_STACK: usize = 256 << 20;

/// Options of one front-end run (`-I` and `-D` on the command line).
#[derive(Clone, Debug, Default)]
pub struct FrontOptions {
    /// Directories searched for `#include <x>` and, after the including
    /// file's directory, for `#include "x"`.
    pub include_dirs: Vec<PathBuf>,
    /// Object-like macros defined before the program (`-D NAME=VALUE`).
    pub defines: Vec<(String, String)>,
}

/// The bundled includes: (name, text). The one list the include
/// resolver, its diagnostics and the source map read.
pub const BUNDLED_INCLUDES: &[(&str, &str)] = &[
    ("core.p4", include_str!("../../../programs/core.p4")),
    ("v1model.p4", include_str!("../../../programs/v1model.p4")),
    (
        "netsparse.p4",
        include_str!("../../../programs/netsparse.p4"),
    ),
    ("spin.p4", include_str!("../../../programs/spin.p4")),
    ("psa.p4", include_str!("../../../programs/psa.p4")),
    ("bmv2/psa.p4", include_str!("../../../programs/bmv2/psa.p4")),
    (
        "collective.p4",
        include_str!("../../../programs/collective.p4"),
    ),
];

/// The text of a bundled include ([`BUNDLED_INCLUDES`]).
pub fn bundled_include(name: &str) -> Option<&'static str> {
    BUNDLED_INCLUDES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The `'static` name of a bundled include (`netsparse.p4` for an
/// unknown name).
pub fn bundled_name(name: &str) -> &'static str {
    BUNDLED_INCLUDES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("netsparse.p4", |(n, _)| *n)
}

/// Read, preprocess and parse the file at `path`.
///
/// The file and everything it includes are registered in `sources`. An
/// unreadable or non-UTF-8 file is reported as a diagnostic.
pub fn parse_file(
    sources: &mut SourceMap,
    path: &Path,
    opts: &FrontOptions,
) -> Result<ast::Program, Vec<Diagnostic>> {
    let name = path.display().to_string();
    let text = match preprocess::read_source(path) {
        Ok(t) => t,
        Err(preprocess::ReadError::Io(e)) => {
            let id = sources.add(name.clone(), String::new());
            let zero = Span {
                file: id,
                start: 0,
                end: 0,
            };
            return Err(vec![Diagnostic::error(
                "E0011",
                format!("cannot read `{name}`: {e}"),
                zero,
            )]);
        }
        Err(preprocess::ReadError::Utf8 { lossy, at }) => {
            let id = sources.add(name.clone(), lossy);
            let span = Span {
                file: id,
                start: u32::try_from(at).unwrap_or(u32::MAX),
                end: u32::try_from(at + 3).unwrap_or(u32::MAX),
            };
            return Err(vec![Diagnostic::error(
                "E0012",
                format!("`{name}` is not valid UTF-8"),
                span,
            )
            .with_label("invalid byte sequence here")
            .with_hint("P4 source files must be UTF-8 text")]);
        }
    };
    let id = sources.add(name, text);
    run(sources, id, Some(path), opts)
}

/// Preprocess and parse `text`, registered in `sources` as `name`.
///
/// `#include "x"` is resolved relative to the directory part of `name`.
pub fn parse_source(
    sources: &mut SourceMap,
    name: &str,
    text: &str,
    opts: &FrontOptions,
) -> Result<ast::Program, Vec<Diagnostic>> {
    let id = sources.add(name, text);
    run(sources, id, None, opts)
}

/// Print a program as readable P4 (no spans): what `--emit ast` shows and
/// what the AST snapshot tests compare.
pub fn print_program(p: &ast::Program) -> String {
    print::program(p)
}

/// Run the front end on file `id` on a worker thread with a large stack.
fn run(
    sources: &mut SourceMap,
    id: u32,
    path: Option<&Path>,
    opts: &FrontOptions,
) -> Result<ast::Program, Vec<Diagnostic>> {
    let zero = Span {
        file: id,
        start: 0,
        end: 0,
    };
    let result = std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("netsparse-front".to_owned())
            .stack_size(WORKER_STACK)
            .spawn_scoped(s, || front(sources, id, path, opts));
        match handle {
            Ok(h) => Some(h.join().ok()),
            Err(_) => None,
        }
    });
    match result {
        Some(Some(r)) => r,
        None => Err(vec![Diagnostic::error(
            "E0098",
            "cannot start the front-end worker thread",
            zero,
        )
        .with_note(
            "the system refused to create a thread (out of memory or thread limit)",
        )]),
        Some(None) => Err(vec![Diagnostic::error(
            "E0099",
            "internal error in the front end",
            zero,
        )
        .with_note(
            "this is a bug in the compiler; please report it with the input program",
        )]),
    }
}

/// The whole front end on one file.
fn front(
    sources: &mut SourceMap,
    id: u32,
    path: Option<&Path>,
    opts: &FrontOptions,
) -> Result<ast::Program, Vec<Diagnostic>> {
    let expanded = preprocess::preprocess(sources, id, path, opts)?;
    if let Err(d) = limits::check(&expanded.text, &expanded.map) {
        return Err(vec![d]);
    }
    parse::parse_program(&expanded.text, &expanded.map)
}
