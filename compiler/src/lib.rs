//! The NetSparse compiler: a P4_16-style language with NetSparse extensions,
//! compiled to the pipeline artifact that the switch and the NIC run.
//!
//! Stages (naga style): `front` (preprocessor, pest grammar → [`ast`]) →
//! `check` (names, types, directions → [`ir`]) → `back` (pipeline artifact,
//! Graphviz dot), with [`graph`] (control-flow and table-dependency graphs,
//! stage assignment, resource limits) between the last two. Every error is a
//! [`diag::Diagnostic`] with a code.
//!
//! ```no_run
//! use netsparse_compiler::{compile_file, CompileOptions, source::SourceMap};
//! let mut sources = SourceMap::new();
//! match compile_file(&mut sources, "programs/ipv4_forward.p4".as_ref(), &CompileOptions::default()) {
//!     Ok(c) => println!("{}", c.artifact.to_json()),
//!     Err(diags) => eprint!("{}", netsparse_compiler::diag::render_all(&diags, &sources)),
//! }
//! ```
#![warn(missing_docs)]

pub mod ast;
pub mod back;
pub mod check;
pub mod codes;
pub mod diag;
pub mod front;
pub mod graph;
pub mod ir;
pub mod source;

use std::path::{Path, PathBuf};

use netsparse_externs::artifact::Artifact;

use crate::diag::{Diagnostic, Severity};
use crate::source::SourceMap;

/// What a compilation needs besides the source.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// `-I` directories for `#include`.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME=VALUE` macros.
    pub defines: Vec<(String, String)>,
    /// Resource limits of the target.
    pub limits: TargetLimits,
}

/// Resource limits of a target (`None` = unlimited, the default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TargetLimits {
    /// Match-action stages per control.
    pub max_stages: Option<u32>,
    /// Tables per stage.
    pub max_tables_per_stage: Option<u32>,
    /// Tables in the whole program.
    pub max_tables: Option<u32>,
}

/// A compiled program: every stage's output.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The parsed program.
    pub ast: ast::Program,
    /// The typed IR, with the graph analysis attached.
    pub ir: ir::Module,
    /// The pipeline artifact.
    pub artifact: Artifact,
    /// Warnings (the program compiled despite them).
    pub warnings: Vec<Diagnostic>,
}

fn front_options(opts: &CompileOptions) -> front::FrontOptions {
    front::FrontOptions {
        include_dirs: opts.include_dirs.clone(),
        defines: opts.defines.clone(),
    }
}

fn stem(name: &str) -> String {
    Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program")
        .to_string()
}

/// Compile the file at `path`. The program name in the artifact is the file stem.
pub fn compile_file(
    sources: &mut SourceMap,
    path: &Path,
    opts: &CompileOptions,
) -> Result<Compiled, Vec<Diagnostic>> {
    let ast = front::parse_file(sources, path, &front_options(opts))?;
    compile_ast(
        sources,
        ast,
        &stem(&path.display().to_string()),
        &opts.limits,
    )
}

/// Compile `text`, registered in `sources` as `name` (its stem names the program).
pub fn compile_source(
    sources: &mut SourceMap,
    name: &str,
    text: &str,
    opts: &CompileOptions,
) -> Result<Compiled, Vec<Diagnostic>> {
    let ast = front::parse_source(sources, name, text, &front_options(opts))?;
    compile_ast(sources, ast, &stem(name), &opts.limits)
}

/// Stack size of the worker thread that checks and lowers (deeply nested
/// expressions recurse; the memory is only reserved, not committed).
const WORKER_STACK: usize = 256 << 20;

/// Check, lower and analyse an already parsed program.
///
/// The work runs on a thread with a large stack, so that no program the front
/// end accepts can overflow it; an internal failure becomes a diagnostic.
pub fn compile_ast(
    sources: &SourceMap,
    ast: ast::Program,
    name: &str,
    limits: &TargetLimits,
) -> Result<Compiled, Vec<Diagnostic>> {
    let internal = |what: &str| {
        vec![Diagnostic::error(
            codes::NOT_EXPRESSIBLE,
            format!("internal compiler error: {what}"),
            ast::Span::default(),
        )]
    };
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("netsparse-check".to_owned())
            .stack_size(WORKER_STACK)
            .spawn_scoped(s, || compile_checked(sources, ast, name, limits));
        match worker {
            Ok(h) => h
                .join()
                .unwrap_or_else(|_| Err(internal("the checker stopped unexpectedly"))),
            Err(_) => Err(internal("cannot start the checker thread")),
        }
    })
}

fn compile_checked(
    sources: &SourceMap,
    ast: ast::Program,
    name: &str,
    limits: &TargetLimits,
) -> Result<Compiled, Vec<Diagnostic>> {
    let (mut ir, mut warnings) = check::check(&ast, sources, name)?;
    let fail = |mut errs: Vec<Diagnostic>, warnings: Vec<Diagnostic>| {
        let mut all = warnings;
        all.append(&mut errs);
        all
    };
    let lowered = match back::artifact::lower(&ir) {
        Ok(l) => l,
        Err(e) => return Err(fail(e, warnings)),
    };
    let analysis = match graph::analyse(&lowered.artifact, &lowered.table_spans, limits) {
        Ok(a) => a,
        Err(e) => return Err(fail(e, warnings)),
    };
    ir.analysis = Some(analysis);
    warnings.retain(|d| d.severity == Severity::Warning);
    Ok(Compiled {
        ast,
        ir,
        artifact: lowered.artifact,
        warnings,
    })
}

/// The IR as stable text (`--emit ir`).
pub fn emit_ir(ir: &ir::Module) -> String {
    ir::print_module(ir)
}

/// Graphviz text: one digraph per control's CFG and per table-dependency graph (`--emit dot`).
pub fn emit_dot(ir: &ir::Module) -> String {
    match &ir.analysis {
        Some(an) => back::dot::render(&ir.name, an),
        None => String::new(),
    }
}
