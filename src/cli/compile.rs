//! `netsparse compile`: P4 source → pipeline artifact (or a dump of a stage).

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use netsparse_compiler::diag::Diagnostic;
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, emit_dot, emit_ir, front, CompileOptions, TargetLimits};
use netsparse_p4rt::textfmt::{self, P4InfoFormat};

/// What `--emit` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// The pipeline artifact (JSON) that `netsparse switch` and `netsparse nic` load.
    Artifact,
    /// The parsed program, printed back as P4.
    Ast,
    /// The typed intermediate representation.
    Ir,
    /// Graphviz: each control's flow graph and its table-dependency graph.
    Dot,
    /// The Rust that native code compiles for the program (`--engine
    /// native`): the library source, as the cache keeps it.
    Rust,
}

const AFTER_HELP: &str =
    "Output: with --emit artifact (the default) the artifact is written to -o FILE,
or without -o to <stem>.json in the current directory, and its path is printed.
(p4c's -o names a directory; here -o names the output file.) The other --emit
kinds print to standard output, or to -o FILE.

Exit status: 0 compiled (warnings on stderr), 1 the program has errors
(diagnostics on stderr), 2 usage or I/O error.

Examples:
  netsparse compile programs/ipv4_forward.p4 -o ipv4.json
  netsparse compile prog.p4 --emit dot | dot -Tsvg > prog.svg
  netsparse compile prog.p4 --emit ir --max-stages 12
  netsparse compile prog.p4 --emit rust > prog.rs

--emit rust writes the library native code builds from the program (the
same text as ns<hash>.rs in the native code cache, for v1model and PSA
programs as their switches load them). NetSparse switch, NIC and sPIN
targets add their own blocks (PR paths, per-PR parts) when they load a
program; for those the artifact's parsers and controls are written, and
the libraries with the added blocks are in the cache after a run. It
needs the compiler native code uses ($NETSPARSE_RUSTC, else $RUSTC, else
rustc): its version is part of the library's key.";

/// Arguments of `netsparse compile`.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The P4 source file.
    pub file: PathBuf,
    /// Output file (default for artifacts: `<stem>.json` in the current directory).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// What to produce.
    #[arg(long, value_enum, default_value_t = Emit::Artifact)]
    pub emit: Emit,
    /// Add a directory to the `#include` search path (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a macro, `NAME` or `NAME=VALUE` (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Stages available to each control's tables.
    #[arg(long, value_name = "N")]
    pub max_stages: Option<u32>,
    /// Tables that fit in one stage.
    #[arg(long, value_name = "N")]
    pub max_tables_per_stage: Option<u32>,
    /// Tables in the whole program.
    #[arg(long, value_name = "N")]
    pub max_tables: Option<u32>,
    /// Also write the program's P4Info (P4Runtime) to FILE: protobuf text
    /// format for `.txt`/`.pbtxt`, binary for `.bin`/`.pb` (p4c's flag).
    #[arg(long = "p4runtime-files", value_name = "FILE")]
    pub p4runtime_files: Option<PathBuf>,
}

fn parse_define(d: &str) -> anyhow::Result<(String, String)> {
    let (name, value) = match d.split_once('=') {
        Some((n, v)) => (n.to_string(), v.to_string()),
        None => (d.to_string(), "1".to_string()),
    };
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        bail!("-D {d:?}: {name:?} is not a valid macro name");
    }
    Ok((name, value))
}

fn report(diags: &[Diagnostic], sources: &SourceMap) {
    let color = std::io::stderr().is_terminal();
    for d in diags {
        d.emit(sources, color);
    }
}

fn write_out(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Compile a program.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    std::fs::File::open(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let p4info_format = match &args.p4runtime_files {
        None => None,
        Some(p) => match textfmt::format_for(p) {
            Some(P4InfoFormat::Json) => {
                eprintln!(
                    "error: --p4runtime-files {}: JSON P4Info is not supported; use .txt (text) or .bin/.pb (binary)",
                    p.display()
                );
                return Ok(ExitCode::from(2));
            }
            Some(f) => Some((p.clone(), f)),
            None => {
                eprintln!(
                    "error: --p4runtime-files {}: unknown extension; use .txt/.pbtxt (text) or .bin/.pb (binary)",
                    p.display()
                );
                return Ok(ExitCode::from(2));
            }
        },
    };
    let opts = CompileOptions {
        include_dirs: args.include.clone(),
        defines: args
            .define
            .iter()
            .map(|d| parse_define(d))
            .collect::<anyhow::Result<_>>()?,
        limits: TargetLimits {
            max_stages: args.max_stages,
            max_tables_per_stage: args.max_tables_per_stage,
            max_tables: args.max_tables,
        },
    };
    let mut sources = SourceMap::new();
    let compiled = match compile_file(&mut sources, &args.file, &opts) {
        Ok(c) => c,
        Err(diags) => {
            report(&diags, &sources);
            let n = diags
                .iter()
                .filter(|d| d.severity == netsparse_compiler::diag::Severity::Error)
                .count();
            eprintln!("error: {} not compiled: {n} error(s)", args.file.display());
            return Ok(ExitCode::from(1));
        }
    };
    report(&compiled.warnings, &sources);
    if let Some((path, format)) = &p4info_format {
        let info = netsparse_p4rt::p4info::build(&compiled.artifact);
        let bytes = textfmt::encode(&info, *format).unwrap_or_default();
        std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let text = match args.emit {
        Emit::Artifact => compiled.artifact.to_json() + "\n",
        Emit::Ast => front::print_program(&compiled.ast),
        Emit::Ir => emit_ir(&compiled.ir),
        Emit::Dot => emit_dot(&compiled.ir),
        Emit::Rust => match rust_source(&compiled.artifact) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {}: --emit rust: {e:#}", args.file.display());
                return Ok(ExitCode::from(2));
            }
        },
    };
    match (args.emit, &args.output) {
        (_, Some(out)) => {
            write_out(out, &text)?;
            if args.emit == Emit::Artifact {
                println!("{}", out.display());
            }
        }
        (Emit::Artifact, None) => {
            let stem = args
                .file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("program");
            let out = PathBuf::from(format!("{stem}.json"));
            write_out(&out, &text)?;
            println!("{}", out.display());
        }
        (_, None) => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The native library source of `artifact`, loaded as its switch loads
/// it (v1model with its standard metadata; every other architecture
/// without target blocks, with a leading note saying so).
fn rust_source(artifact: &netsparse_externs::artifact::Artifact) -> anyhow::Result<String> {
    use netsparse_engine::compile::{load, load_generic};
    use netsparse_externs::artifact::Arch;
    let loaded = match artifact.arch {
        Arch::V1Model => load(artifact)?,
        _ => load_generic(artifact, &[])?,
    };
    let source = netsparse_engine::native::source(&loaded.code)?;
    Ok(match artifact.arch {
        Arch::V1Model | Arch::Psa => source,
        _ => format!(
            "// The artifact's parsers and controls only: the {:?} target adds its own \
             blocks when it loads the program (see the native code cache after a run).\n{source}",
            artifact.arch
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines() {
        assert_eq!(parse_define("X").unwrap(), ("X".into(), "1".into()));
        assert_eq!(parse_define("N=4").unwrap(), ("N".into(), "4".into()));
        assert_eq!(parse_define("A=b=c").unwrap(), ("A".into(), "b=c".into()));
        assert!(parse_define("1X").is_err());
        assert!(parse_define("").is_err());
    }
}
