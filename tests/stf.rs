//! The STF suite: every `tests/stf/**/<stem>.stf` next to a `<stem>.p4` is
//! compiled (once per program) and run on the v1model switch (PSA programs,
//! `tests/stf/psa/`, on the PSA switch); all must pass.
//!
//! Dropping a directory of p4c samples (`foo-bmv2.p4` + `foo-bmv2.stf`) under
//! `tests/stf/` just works. A directory may hold an `xfail.txt` listing stems
//! known to fail (one per line, `#` comments for the reason): those must
//! fail (compile error, script error or a failed expectation) and are
//! reported, so a fix shows up as "now passes, remove it from xfail.txt".
//!
//! A second test mutates every `expect` with data in turn (one hex digit
//! changed) and checks that the script then fails: each expectation is live.
//!
//! `NETSPARSE_STF=<substring>` runs only the scripts whose path contains it.

mod stf_support;

use std::path::Path;

use netsparse::stf::{self, StfOptions};
use netsparse_externs::artifact::Artifact;
use stf_support::{cases, compile, rel, root, xfails};

#[test]
fn stf_suite() {
    stf_support::run_suite();
}

/// Change the last hex digit of an `expect` line's data.
fn mutate_expect(line: &str) -> Option<String> {
    let code = line.split('#').next().unwrap_or("");
    let mut words = code.split_whitespace();
    if !words.next()?.eq_ignore_ascii_case("expect") {
        return None;
    }
    let port = words.next()?;
    let data_at = code.find(port)? + port.len();
    let (pos, c) = code
        .char_indices()
        .rev()
        .find(|(i, c)| *i >= data_at && c.is_ascii_hexdigit())?;
    let d = c.to_digit(16)?;
    let flipped = char::from_digit(d ^ 1, 16)?;
    let mut out = line.to_owned();
    out.replace_range(pos..pos + 1, &flipped.to_string());
    Some(out)
}

#[test]
fn every_expectation_is_checked() {
    let mut problems = Vec::new();
    let mut mutants = 0;
    for case in cases() {
        let dir = case.program.parent().unwrap_or(Path::new("."));
        let xf = xfails(dir);
        let Ok(art) = compile(&case.program) else {
            continue; // reported by stf_suite
        };
        for script in &case.scripts {
            let stem = script
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if xf.contains(&stem) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(script) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let Some(m) = mutate_expect(l) else { continue };
                mutants += 1;
                let mut changed: Vec<String> = lines.iter().map(|s| (*s).to_owned()).collect();
                changed[i] = m;
                let opts = StfOptions {
                    file: rel(script),
                    ..StfOptions::default()
                };
                match stf::run(&art, &changed.join("\n"), &opts) {
                    Ok(o) if o.passed() => problems.push(format!(
                        "{}:{}: changing a digit of this expectation does not fail the test",
                        rel(script),
                        i + 1
                    )),
                    Ok(_) => {}
                    Err(e) => problems.push(format!("mutant of {}:{}: {e}", rel(script), i + 1)),
                }
            }
        }
    }
    eprintln!("STF mutants: {mutants}");
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn mutation_helper() {
    assert_eq!(
        mutate_expect("expect 1 0a 0b * $ # c").as_deref(),
        Some("expect 1 0a 0a * $ # c")
    );
    assert_eq!(mutate_expect("expect 1"), None);
    assert_eq!(mutate_expect("packet 1 00"), None);
    assert_eq!(
        mutate_expect("expect 12 ** 0*").as_deref(),
        Some("expect 12 ** 1*")
    );
}

mod robustness {
    use std::sync::OnceLock;

    use proptest::prelude::*;

    use super::*;

    fn artifact() -> &'static Artifact {
        static ART: OnceLock<Artifact> = OnceLock::new();
        ART.get_or_init(|| {
            compile(&root().join("table_keys_valid.p4")).unwrap_or_else(|e| panic!("{e}"))
        })
    }

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            "[ -~]{0,40}",
            "(packet|expect) [0-9]{1,3}( [0-9a-fA-F*$ ]{0,40})?",
            "add (t|ingress\\.t|x) ([0-9]{1,3} )?((opt\\.\\$valid\\$|dmac|s\\$0\\.v|hdr\\.s\\[0\\]\\.v):[0-9a-fx*&>/.:-]{1,12} ){0,3}(fwd|NoAction|z)\\((port:[0-9x]{1,4})?\\)( = [A-Z])?",
            "(remove|check_counter|setdefault|mirroring_add|mc_node_create|mc_mgrp_create|mc_node_associate|register_write|meter_set_rates) [ -~]{0,30}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Any script gives an outcome or an error, never a panic.
        #[test]
        fn arbitrary_scripts_never_panic(lines in prop::collection::vec(line(), 0..10)) {
            let opts = StfOptions { file: "fuzz.stf".into(), ..StfOptions::default() };
            match stf::run(artifact(), &lines.join("\n"), &opts) {
                Ok(o) => { let _ = o.render(true); }
                Err(e) => prop_assert!(e.to_string().starts_with("fuzz.stf:"), "{e}"),
            }
        }
    }
}
