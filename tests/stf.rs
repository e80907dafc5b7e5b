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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use netsparse::stf::{self, StfOptions};
use netsparse_externs::artifact::Artifact;

/// Scripts the suite must contain at least (the issue asks for 40).
const MIN_SCRIPTS: usize = 40;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/stf")
}

/// One program and its scripts.
struct Case {
    program: PathBuf,
    scripts: Vec<PathBuf>,
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "stf") {
            out.push(p);
        }
    }
}

fn cases() -> Vec<Case> {
    let filter = std::env::var("NETSPARSE_STF").unwrap_or_default();
    let mut scripts = Vec::new();
    walk(&root(), &mut scripts);
    let mut cases: Vec<Case> = Vec::new();
    for s in scripts {
        if !s.display().to_string().contains(&filter) {
            continue;
        }
        let program = s.with_extension("p4");
        match cases.iter_mut().find(|c| c.program == program) {
            Some(c) => c.scripts.push(s),
            None => cases.push(Case {
                program,
                scripts: vec![s],
            }),
        }
    }
    cases
}

/// Stems listed in `dir/xfail.txt`.
fn xfails(dir: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(dir.join("xfail.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(p)
        .display()
        .to_string()
}

fn compile(program: &Path) -> Result<Artifact, String> {
    if !program.exists() {
        return Err(format!(
            "{} not found (each .stf needs a .p4 of the same stem)",
            rel(program)
        ));
    }
    stf::compile_program(program, &[]).map_err(|e| e.to_string())
}

/// Run one script: `Ok(())` passed, `Err(report)` otherwise.
fn run_script(art: &Artifact, script: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(script).map_err(|e| format!("{}: {e}", rel(script)))?;
    let opts = StfOptions {
        file: rel(script),
        ..StfOptions::default()
    };
    match stf::run(art, &text, &opts) {
        Ok(o) if o.passed() => Ok(()),
        Ok(o) => Err(o.render(false)),
        Err(e) => Err(format!("error: {e}")),
    }
}

#[test]
fn stf_suite() {
    let cases = cases();
    let mut ran = 0;
    let mut problems = Vec::new();
    let mut xfailed = Vec::new();
    for case in &cases {
        let dir = case.program.parent().unwrap_or(Path::new("."));
        let xf = xfails(dir);
        let art = compile(&case.program);
        for script in &case.scripts {
            ran += 1;
            let stem = script
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let result = match &art {
                Ok(a) => run_script(a, script),
                Err(e) => Err(e.clone()),
            };
            match (result, xf.contains(&stem)) {
                (Ok(()), false) => {}
                (Err(report), false) => problems.push(report),
                (Err(_), true) => xfailed.push(rel(script)),
                (Ok(()), true) => problems.push(format!(
                    "{} now passes: remove `{stem}` from {}",
                    rel(script),
                    rel(&dir.join("xfail.txt"))
                )),
            }
        }
    }
    eprintln!(
        "STF: {ran} script(s), {} failed, {} expected failure(s){}",
        problems.len(),
        xfailed.len(),
        if xfailed.is_empty() {
            String::new()
        } else {
            format!(": {}", xfailed.join(", "))
        }
    );
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    if std::env::var("NETSPARSE_STF").is_err() {
        let own = cases
            .iter()
            .filter(|c| c.program.parent() == Some(root().as_path()))
            .map(|c| c.scripts.len())
            .sum::<usize>();
        assert!(
            own >= MIN_SCRIPTS,
            "tests/stf/ holds {own} scripts, the suite needs at least {MIN_SCRIPTS}"
        );
    }
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
