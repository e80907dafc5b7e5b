//! The STF suite's machinery, shared by `tests/stf.rs` (the interpreter)
//! and `tests/stf_native.rs` (native code): finding the scripts and their
//! programs, the expected failures, running a script.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use netsparse::stf::{self, StfOptions};
use netsparse_externs::artifact::Artifact;

/// Scripts the suite must contain at least (the issue asks for 40).
pub const MIN_SCRIPTS: usize = 40;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/stf")
}

/// One program and its scripts.
pub struct Case {
    /// The program.
    pub program: PathBuf,
    /// Its scripts.
    pub scripts: Vec<PathBuf>,
}

pub fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
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

pub fn cases() -> Vec<Case> {
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
pub fn xfails(dir: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(dir.join("xfail.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

pub fn rel(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(p)
        .display()
        .to_string()
}

pub fn compile(program: &Path) -> Result<Artifact, String> {
    if !program.exists() {
        return Err(format!(
            "{} not found (each .stf needs a .p4 of the same stem)",
            rel(program)
        ));
    }
    stf::compile_program(program, &[]).map_err(|e| e.to_string())
}

/// Run one script: `Ok(())` passed, `Err(report)` otherwise.
pub fn run_script(art: &Artifact, script: &Path) -> Result<(), String> {
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

/// Run every script; panics with the problems when any script does not
/// do what its directory's `xfail.txt` says.
pub fn run_suite() {
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
        "STF ({}): {ran} script(s), {} failed, {} expected failure(s){}",
        netsparse_engine::native::mode().name(),
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
