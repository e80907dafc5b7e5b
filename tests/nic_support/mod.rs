//! Helpers of the root NIC tests (`tests/nic_*.rs`): compile the shipped NIC
//! program, a small sparse matrix with a 1D row partition, NICs for its
//! nodes, and what a gather must do, computed independently.
#![allow(dead_code)]

/// The NIC tests' network, shared with `nic_firmware/tests`.
#[path = "../../nic_firmware/tests/common/net.rs"]
pub mod net;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::artifact::Artifact;
#[allow(unused_imports)] // not every test binary that includes this module uses them
pub use netsparse_nic::testing::{check_destination, nics};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compile `programs/netsparse_nic.p4` with `defines`.
pub fn nic_program(defines: &[&str]) -> Artifact {
    compile(&root().join("programs/netsparse_nic.p4"), defines)
}

/// Compile a program file.
pub fn compile(path: &Path, defines: &[&str]) -> Artifact {
    let opts = CompileOptions {
        defines: defines
            .iter()
            .map(|d| (d.to_string(), "1".to_string()))
            .collect(),
        ..CompileOptions::default()
    };
    let mut sources = SourceMap::new();
    match compile_file(&mut sources, path, &opts) {
        Ok(c) => c.artifact,
        Err(d) => panic!(
            "{} does not compile:\n{}",
            path.display(),
            netsparse_compiler::diag::render_all(&d, &sources)
        ),
    }
}

/// Column idxs of each node's nonzeros (row order) of an `n × n` matrix with
/// `per_row` nonzeros per row (half from a hot set of 8 columns), equal row
/// ranges over `nodes`; and the partition bounds.
pub fn matrix(n: u64, nodes: usize, per_row: u64, seed: u64) -> (Vec<Vec<u64>>, Vec<u64>) {
    let mut x = seed | 1;
    let mut rnd = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let bounds: Vec<u64> = (0..=nodes as u64).map(|i| i * n / nodes as u64).collect();
    let mut idxs = vec![Vec::new(); nodes];
    for (node, list) in idxs.iter_mut().enumerate() {
        for _ in bounds[node]..bounds[node + 1] {
            for _ in 0..per_row {
                let c = if rnd(2) == 0 {
                    rnd(8) * (n / 8)
                } else {
                    rnd(n)
                };
                list.push(c);
            }
        }
    }
    (idxs, bounds)
}

/// Remote nonzeros and distinct remote idxs of node `node`.
pub fn remote(idxs: &[u64], bounds: &[u64], node: usize) -> (u64, BTreeSet<u64>) {
    let own = bounds[node]..bounds[node + 1];
    let r: Vec<u64> = idxs.iter().copied().filter(|i| !own.contains(i)).collect();
    (r.len() as u64, r.into_iter().collect())
}
