//! Shared helpers: compile netsparse_nic.p4 (with ablation defines), make a
//! small sparse matrix with a 1D row partition, build NICs for its nodes,
//! and compute what a gather must do independently of the firmware.
#![allow(dead_code)]

pub mod net;

use std::collections::BTreeSet;
use std::path::Path;

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::artifact::Artifact;
pub use netsparse_nic::testing::{check_destination, nics};

/// Compile `programs/netsparse_nic.p4` with `defines` (e.g. `NS_NO_FILTER`).
pub fn nic_program(defines: &[&str]) -> Artifact {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs/netsparse_nic.p4");
    let opts = CompileOptions {
        defines: defines
            .iter()
            .map(|d| (d.to_string(), "1".to_string()))
            .collect(),
        ..CompileOptions::default()
    };
    let mut sources = SourceMap::new();
    match compile_file(&mut sources, &path, &opts) {
        Ok(c) => c.artifact,
        Err(d) => panic!(
            "netsparse_nic.p4 does not compile:\n{}",
            netsparse_compiler::diag::render_all(&d, &sources)
        ),
    }
}

/// A small xorshift generator (tests only).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A square sparse matrix of `n` rows with `per_row` nonzeros per row (with
/// repeated columns across rows, half of them from a small hot set), split
/// in equal row ranges over `nodes`: per node, the column idxs of its
/// nonzeros in row order, and the partition bounds.
pub fn matrix(n: u64, nodes: usize, per_row: u64, seed: u64) -> (Vec<Vec<u64>>, Vec<u64>) {
    let mut rng = Rng::new(seed);
    let bounds: Vec<u64> = (0..=nodes as u64).map(|i| i * n / nodes as u64).collect();
    let mut idxs = vec![Vec::new(); nodes];
    for (node, list) in idxs.iter_mut().enumerate() {
        for _row in bounds[node]..bounds[node + 1] {
            for _ in 0..per_row {
                let c = if rng.below(2) == 0 {
                    rng.below(8) * (n / 8)
                } else {
                    rng.below(n)
                };
                list.push(c);
            }
        }
    }
    (idxs, bounds)
}

/// What a gather of `idxs` on `node` must do.
pub struct Expected {
    pub nnz: u64,
    pub local: u64,
    pub remote: u64,
    pub distinct_remote: BTreeSet<u64>,
}

pub fn expected(idxs: &[u64], bounds: &[u64], node: usize) -> Expected {
    let own = bounds[node]..bounds[node + 1];
    let remote: Vec<u64> = idxs.iter().copied().filter(|i| !own.contains(i)).collect();
    Expected {
        nnz: idxs.len() as u64,
        local: (idxs.len() - remote.len()) as u64,
        remote: remote.len() as u64,
        distinct_remote: remote.into_iter().collect(),
    }
}
