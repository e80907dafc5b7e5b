//! The bundled programs, embedded in the binary so the simulator,
//! `netsparse demo` and `netsparse bench` work without the repository, and
//! compiled once per run and variant. The NetSparse modes run:
//!
//! | device | program | variants |
//! |---|---|---|
//! | every node's SmartNIC | `programs/netsparse_nic.p4` | `-D NS_NO_FILTER`, `-D NS_NO_COALESCE` (Table 8's first steps) |
//! | every ToR, full NetSparse | `programs/netsparse_tor.p4` (NetSparse multi-pipe switch) | |
//! | every ToR before the `+switch` step, every spine | `programs/netsparse_spine.p4` (v1model) | |
//!
//!
//! `programs/ipv4_forward.p4` (v1model) is the switch benchmark's program;
//! `programs/omniccl_agg.p4` (NetSparseNic with `<collective.p4>`) is the
//! OmNICCL aggregator of `netsparse sim --collective allreduce`, and
//! `programs/omniccl_switch.p4` (NetSparseSwitch with `<collective.p4>`)
//! the same aggregator in a ToR's middle pipes (`--agg-at switch`).
//!
//! The bundled includes (`core.p4`, `v1model.p4`, `netsparse.p4`) come
//! from the compiler, which embeds them too.

use std::sync::Arc;

use thiserror::Error;

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions};
use netsparse_externs::artifact::Artifact;

/// One of the bundled programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bundled {
    /// `programs/netsparse_nic.p4`.
    Nic,
    /// `programs/netsparse_tor.p4`.
    Tor,
    /// `programs/netsparse_spine.p4`.
    Spine,
    /// `programs/ipv4_forward.p4`.
    Ipv4Forward,
    /// `programs/omniccl_agg.p4` (the OmNICCL aggregator, `--collective`).
    OmnicclAgg,
    /// `programs/omniccl_switch.p4` (the aggregator in a NetSparse switch's
    /// middle pipes, `--collective allreduce --agg-at switch`).
    OmnicclSwitch,
}

impl Bundled {
    /// The file name.
    pub fn file(self) -> &'static str {
        match self {
            Bundled::Nic => "netsparse_nic.p4",
            Bundled::Tor => "netsparse_tor.p4",
            Bundled::Spine => "netsparse_spine.p4",
            Bundled::Ipv4Forward => "ipv4_forward.p4",
            Bundled::OmnicclAgg => "omniccl_agg.p4",
            Bundled::OmnicclSwitch => "omniccl_switch.p4",
        }
    }

    /// The embedded source text.
    pub fn source(self) -> &'static str {
        match self {
            Bundled::Nic => include_str!("../programs/netsparse_nic.p4"),
            Bundled::Tor => include_str!("../programs/netsparse_tor.p4"),
            Bundled::Spine => include_str!("../programs/netsparse_spine.p4"),
            Bundled::Ipv4Forward => include_str!("../programs/ipv4_forward.p4"),
            Bundled::OmnicclAgg => include_str!("../programs/omniccl_agg.p4"),
            Bundled::OmnicclSwitch => include_str!("../programs/omniccl_switch.p4"),
        }
    }
}

/// A bundled program that does not compile (a build of the tool with a
/// broken `programs/` tree).
#[derive(Debug, Error)]
#[error("the bundled programs/{file}{defines} does not compile:\n{message}")]
pub struct ProgramError {
    /// The program's file name.
    pub file: &'static str,
    /// ` with -D ...` or empty.
    pub defines: String,
    /// The rendered diagnostics.
    pub message: String,
}

/// Compile a bundled program with preprocessor `defines` (each defined to 1).
pub fn compile_bundled(which: Bundled, defines: &[&str]) -> Result<Artifact, ProgramError> {
    let opts = CompileOptions {
        defines: defines
            .iter()
            .map(|d| (d.to_string(), "1".to_string()))
            .collect(),
        ..CompileOptions::default()
    };
    let mut sources = SourceMap::new();
    compile_source(&mut sources, which.file(), which.source(), &opts)
        .map(|c| c.artifact)
        .map_err(|d| ProgramError {
            file: which.file(),
            defines: if defines.is_empty() {
                String::new()
            } else {
                format!(" with -D {}", defines.join(" -D "))
            },
            message: netsparse_compiler::diag::render_all(&d, &sources),
        })
}

/// Compiled programs of a run, by (program, defines): each variant is
/// compiled once however many devices and modes use it.
#[derive(Debug, Default)]
pub struct ProgramCache {
    entries: Vec<(Bundled, Vec<&'static str>, Arc<Artifact>)>,
    compilations: u32,
}

impl ProgramCache {
    /// An empty cache.
    pub fn new() -> ProgramCache {
        ProgramCache::default()
    }

    /// The artifact of `which` with `defines`, compiling it on first use.
    pub fn get(
        &mut self,
        which: Bundled,
        defines: &[&'static str],
    ) -> Result<Arc<Artifact>, ProgramError> {
        if let Some((_, _, a)) = self
            .entries
            .iter()
            .find(|(w, d, _)| *w == which && d.as_slice() == defines)
        {
            return Ok(a.clone());
        }
        let a = Arc::new(compile_bundled(which, defines)?);
        self.compilations += 1;
        self.entries.push((which, defines.to_vec(), a.clone()));
        Ok(a)
    }

    /// How many compilations the cache ran.
    pub fn compilations(&self) -> u32 {
        self.compilations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_programs_compile_once_per_variant() {
        let mut c = ProgramCache::new();
        let a = c.get(Bundled::Nic, &[]).unwrap();
        let b = c.get(Bundled::Nic, &[]).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        c.get(Bundled::Nic, &["NS_NO_FILTER"]).unwrap();
        c.get(Bundled::Spine, &[]).unwrap();
        c.get(Bundled::Tor, &[]).unwrap();
        assert_eq!(c.compilations(), 4);
    }
}
