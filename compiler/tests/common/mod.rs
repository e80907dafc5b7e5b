//! Shared helpers of the compiler's integration tests: compiling snippets and
//! checking an artifact's internal consistency.
#![allow(dead_code)]

use netsparse_compiler::diag::{render_all, Diagnostic, Severity};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions, Compiled, TargetLimits};
use netsparse_externs::artifact::Artifact;

/// The v1model boilerplate around a test's declarations and ingress body.
pub fn v1model(decls: &str, ingress_locals: &str, ingress_apply: &str) -> String {
    format!(
        r#"#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<16> b; bit<32> c; bit<8> d; }}
struct headers {{ h_t h; h_t g; }}
struct metadata {{ bit<8> x; bit<16> y; bit<32> z; bool flag; }}
{decls}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control VC(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{ingress_locals}
    apply {{
{ingress_apply}
    }}
}}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr); }} }}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"#
    )
}

/// Compile a program text; on failure return the rendered diagnostics and the codes.
pub fn compile(text: &str) -> Result<Compiled, (String, Vec<&'static str>)> {
    compile_with(text, TargetLimits::default())
}

/// Compile with target limits.
pub fn compile_with(
    text: &str,
    limits: TargetLimits,
) -> Result<Compiled, (String, Vec<&'static str>)> {
    let mut sources = SourceMap::new();
    let opts = CompileOptions {
        limits,
        ..CompileOptions::default()
    };
    match compile_source(&mut sources, "test.p4", text, &opts) {
        Ok(c) => {
            let problems = validate(&c.artifact);
            assert!(problems.is_empty(), "invalid artifact: {problems:#?}");
            Ok(c)
        }
        Err(diags) => Err((render_all(&diags, &sources), error_codes(&diags))),
    }
}

/// The codes of the error (not warning) diagnostics.
pub fn error_codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.code)
        .collect()
}

/// Compile and expect success.
#[track_caller]
pub fn ok(text: &str) -> Compiled {
    match compile(text) {
        Ok(c) => c,
        Err((rendered, _)) => panic!("expected the program to compile:\n{rendered}"),
    }
}

/// Compile and expect failure with exactly `code` (every error has it).
#[track_caller]
pub fn fails(text: &str, code: &str) -> String {
    match compile(text) {
        Ok(_) => panic!("expected error {code}, but the program compiled"),
        Err((rendered, codes)) => {
            assert!(!codes.is_empty(), "no errors:\n{rendered}");
            assert!(
                codes.iter().all(|c| *c == code),
                "expected only {code}, got {codes:?}:\n{rendered}"
            );
            rendered
        }
    }
}

// ----- artifact validation -------------------------------------------------------------

/// Check an artifact's internal consistency with the one validator (the
/// artifact schema's, which the engine also runs before loading); returns
/// the problems, each with its JSON pointer.
pub fn validate(art: &Artifact) -> Vec<String> {
    netsparse_externs::artifact::validate(art)
        .iter()
        .map(ToString::to_string)
        .collect()
}
