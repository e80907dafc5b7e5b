//! Fuzz the whole front end: arbitrary bytes (lossy UTF-8) through the
//! preprocessor, the grammar and the AST builder, then the printer on
//! whatever is accepted. Any panic, stack overflow or hang is a bug.
//!
//! Run with `cargo fuzz run parse` from `compiler/` (needs nightly).
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsparse_compiler::front::{parse_source, print_program, FrontOptions};
use netsparse_compiler::source::SourceMap;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut sources = SourceMap::new();
    match parse_source(&mut sources, "fuzz.p4", &text, &FrontOptions::default()) {
        Ok(program) => {
            let _ = print_program(&program);
        }
        Err(diags) => {
            assert!(!diags.is_empty());
            assert!(
                diags.iter().all(|d| d.code != "E0099"),
                "internal error: {diags:?}"
            );
        }
    }
});
