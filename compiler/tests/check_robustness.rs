//! The checker and the back end never panic: mutated versions of the test
//! programs (lines deleted, duplicated or swapped; identifiers and numbers
//! replaced) either compile to a valid artifact or fail with diagnostics,
//! never with an internal error. Deterministic (fixed seed).

mod common;

use netsparse_compiler::diag::Severity;
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions};

/// xorshift64*: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn words(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

fn mutate(text: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let ws = words(text);
    match rng.below(6) {
        0 => {
            let i = rng.below(lines.len());
            lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n")
        }
        1 => {
            let i = rng.below(lines.len());
            let mut v = lines.clone();
            v.insert(i, lines[i]);
            v.join("\n")
        }
        2 => {
            let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
            let mut v = lines.clone();
            v.swap(i, j);
            v.join("\n")
        }
        3 | 4 => {
            let (s, e) = ws[rng.below(ws.len())];
            let (s2, e2) = ws[rng.below(ws.len())];
            format!("{}{}{}", &text[..s], &text[s2..e2], &text[e..])
        }
        _ => {
            let nums = [
                "0",
                "1",
                "255",
                "65536",
                "128w1",
                "8w255",
                "4s7",
                "340282366920938463463374607431768211455",
            ];
            let (s, e) = ws[rng.below(ws.len())];
            format!(
                "{}{}{}",
                &text[..s],
                nums[rng.below(nums.len())],
                &text[e..]
            )
        }
    }
}

#[test]
fn mutated_programs_never_cause_an_internal_error() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = [
        root.join("../programs/ipv4_forward.p4"),
        root.join("tests/programs/v1model_features.p4"),
        root.join("tests/programs/netsparse_middle.p4"),
        root.join("tests/programs/loops_compound.p4"),
        root.join("tests/programs/union_varbit_macros.p4"),
        // PSA's hash, checksum, random and digest externs.
        root.join("../tests/stf/psa/psa_hash_checksum.p4"),
        root.join("../tests/stf/psa/psa_internet_checksum.p4"),
        root.join("../tests/stf/psa/psa_random_digest.p4"),
        // Header fields and varbits over 128 bits; a varbit in checksum lists.
        root.join("../tests/stf/header_wide_fields.p4"),
        root.join("../tests/stf/varbit_wide_checksum.p4"),
        root.join("../tests/stf/header_struct_field.p4"),
        // Expressions, locals, keys and action parameters over 128 bits.
        root.join("../tests/stf/wide_arith.p4"),
        root.join("../tests/stf/wide_slices.p4"),
        root.join("../tests/stf/wide_table.p4"),
    ];
    // `MUTANTS=N` explores more locally; CI runs the default.
    let rounds: usize = std::env::var("MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let seed: u64 = std::env::var("MUTANT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001);
    let mut rng = Rng(seed);
    let (mut compiled, mut rejected) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for _ in 0..rounds {
            let mut m = mutate(&text, &mut rng);
            if rng.below(3) == 0 {
                m = mutate(&m, &mut rng);
            }
            let mut sources = SourceMap::new();
            match compile_source(&mut sources, "mutant.p4", &m, &CompileOptions::default()) {
                Ok(c) => {
                    let problems = common::validate(&c.artifact);
                    assert!(
                        problems.is_empty(),
                        "invalid artifact {problems:?} for:\n{m}"
                    );
                    compiled += 1;
                }
                Err(diags) => {
                    assert!(diags.iter().any(|d| d.severity == Severity::Error));
                    for d in &diags {
                        assert!(
                            !d.message.contains("internal compiler error"),
                            "internal error for:\n{m}"
                        );
                    }
                    rejected += 1;
                }
            }
        }
    }
    assert!(
        compiled > 0 && rejected > 0,
        "{compiled} compiled, {rejected} rejected"
    );
}
