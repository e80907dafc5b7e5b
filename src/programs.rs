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
//!
//! A user's own program can stand in for a bundled one
//! ([`ProgramCache::set_user`]; `netsparse sim --nic-program FILE` and its
//! siblings): it is compiled from its file, with the same variants'
//! defines, wherever the run would use the bundled program, and the
//! report names it with a digest of its text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions};
use netsparse_externs::artifact::{Arch, Artifact};

use crate::sim::report::{CommandsUse, ProgramUse};

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

    /// The architecture the program's devices run (a user's program in
    /// its place must have it too).
    pub fn arch(self) -> Arch {
        match self {
            Bundled::Nic | Bundled::OmnicclAgg => Arch::NetSparseNic,
            Bundled::Tor | Bundled::OmnicclSwitch => Arch::NetSparseSwitch,
            Bundled::Spine | Bundled::Ipv4Forward => Arch::V1Model,
        }
    }

    /// The program of role `role` (as [`Bundled::role`] names it).
    pub fn of_role(role: &str) -> Option<Bundled> {
        [
            Bundled::Nic,
            Bundled::Tor,
            Bundled::Spine,
            Bundled::Ipv4Forward,
            Bundled::OmnicclAgg,
            Bundled::OmnicclSwitch,
        ]
        .into_iter()
        .find(|b| b.role() == role)
    }

    /// The role the program plays in a simulated cluster, for messages and
    /// reports: `NIC`, `ToR`, `spine`, ...
    pub fn role(self) -> &'static str {
        match self {
            Bundled::Nic => "NIC",
            Bundled::Tor => "ToR",
            Bundled::Spine => "spine",
            Bundled::Ipv4Forward => "switch benchmark",
            Bundled::OmnicclAgg => "OmNICCL aggregator",
            Bundled::OmnicclSwitch => "OmNICCL switch aggregator",
        }
    }

    /// What a report says of `user` standing in for this program.
    pub fn used(self, user: &UserProgram) -> ProgramUse {
        ProgramUse {
            role: self.role().to_string(),
            file: user.path.display().to_string(),
            bundled: format!("programs/{}", self.file()),
            digest: user.digest.clone(),
        }
    }
}

/// A user's program standing in for a bundled one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserProgram {
    /// Where it was read from (includes are resolved from its directory).
    pub path: PathBuf,
    /// Its text, as read when the run started.
    pub text: String,
    /// A digest of `text` (64-bit FNV-1a, hex), so that a report says
    /// which version of the file ran and a run cache tells versions apart.
    pub digest: String,
}

impl UserProgram {
    /// Read `path`.
    pub fn read(path: &Path) -> std::io::Result<UserProgram> {
        Ok(UserProgram::new(path, std::fs::read_to_string(path)?))
    }

    /// The program `text`, read from `path`.
    pub fn new(path: &Path, text: String) -> UserProgram {
        UserProgram {
            path: path.to_path_buf(),
            digest: format!("{:016x}", crate::paper::cache::fnv1a(text.as_bytes())),
            text,
        }
    }
}

/// A program of the run that cannot run: a user's program given in place
/// of a bundled one that does not compile or is for another architecture,
/// or a bundled one that does not compile (a build of the tool with a
/// broken `programs/` tree).
#[derive(Debug, Error)]
pub enum ProgramError {
    /// A bundled program.
    #[error("the bundled programs/{file}{defines} does not compile:\n{message}")]
    Bundled {
        /// The program's file name.
        file: &'static str,
        /// ` with -D ...` or empty.
        defines: String,
        /// The rendered diagnostics.
        message: String,
    },
    /// A user's program.
    #[error(
        "{} (the {role} program, in place of programs/{bundled}) does not compile{defines}:\n{message}",
        path.display()
    )]
    User {
        /// The file.
        path: PathBuf,
        /// Its role in the cluster.
        role: &'static str,
        /// The bundled program it stands in for.
        bundled: &'static str,
        /// ` with -D ...` or empty.
        defines: String,
        /// The rendered diagnostics.
        message: String,
    },
    /// A user's program for another architecture than its devices run.
    #[error(
        "{} (the {role} program, in place of programs/{bundled}) is a {found:?} program; the {role} runs {expected:?} programs",
        path.display()
    )]
    WrongArch {
        /// The file.
        path: PathBuf,
        /// Its role in the cluster.
        role: &'static str,
        /// The bundled program it stands in for.
        bundled: &'static str,
        /// The architecture the role needs.
        expected: Arch,
        /// The program's.
        found: Arch,
    },
}

fn defines_text(defines: &[&str]) -> String {
    if defines.is_empty() {
        String::new()
    } else {
        format!(" with -D {}", defines.join(" -D "))
    }
}

fn options(defines: &[&str]) -> CompileOptions {
    CompileOptions {
        defines: defines
            .iter()
            .map(|d| (d.to_string(), "1".to_string()))
            .collect(),
        ..CompileOptions::default()
    }
}

/// Compile a bundled program with preprocessor `defines` (each defined to 1).
pub fn compile_bundled(which: Bundled, defines: &[&str]) -> Result<Artifact, ProgramError> {
    let mut sources = SourceMap::new();
    compile_source(
        &mut sources,
        which.file(),
        which.source(),
        &options(defines),
    )
    .map(|c| c.artifact)
    .map_err(|d| ProgramError::Bundled {
        file: which.file(),
        defines: defines_text(defines),
        message: netsparse_compiler::diag::render_all(&d, &sources),
    })
}

/// Compile `user`'s program, standing in for `which`, with `defines`; its
/// warnings, rendered, go to `warnings`.
fn compile_user(
    which: Bundled,
    user: &UserProgram,
    defines: &[&str],
    warnings: &mut Vec<String>,
) -> Result<Artifact, ProgramError> {
    let mut sources = SourceMap::new();
    // The text read at the start, under the file's name: a file edited
    // while the run goes on does not change what runs.
    let name = user.path.display().to_string();
    let front = netsparse_compiler::front::FrontOptions {
        include_dirs: user
            .path
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect(),
        defines: options(defines).defines,
    };
    let compiled = netsparse_compiler::front::parse_source(&mut sources, &name, &user.text, &front)
        .and_then(|ast| {
            let stem = user
                .path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("program");
            netsparse_compiler::compile_ast(&sources, ast, stem, &Default::default())
        });
    match compiled {
        Ok(c) => {
            if !c.warnings.is_empty() {
                warnings.push(netsparse_compiler::diag::render_all(&c.warnings, &sources));
            }
            if c.artifact.arch != which.arch() {
                return Err(ProgramError::WrongArch {
                    path: user.path.clone(),
                    role: which.role(),
                    bundled: which.file(),
                    expected: which.arch(),
                    found: c.artifact.arch,
                });
            }
            Ok(c.artifact)
        }
        Err(d) => Err(ProgramError::User {
            path: user.path.clone(),
            role: which.role(),
            bundled: which.file(),
            defines: defines_text(defines),
            message: netsparse_compiler::diag::render_all(&d, &sources),
        }),
    }
}

/// A user's control-plane commands (simple_switch_CLI syntax) for every
/// device of a role, applied after the simulator's own entries: the
/// entries of a user program's own tables, or changes to the bundled
/// programs' defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserCommands {
    /// Where they were read from (named in errors as `FILE:line`).
    pub path: PathBuf,
    /// The text, as read when the run started.
    pub text: String,
    /// 64-bit FNV-1a of the text, hex.
    pub digest: String,
}

impl UserCommands {
    /// Read `path`.
    pub fn read(path: &Path) -> std::io::Result<UserCommands> {
        let p = UserProgram::read(path)?;
        Ok(UserCommands::new(&p.path, p.text))
    }

    /// Commands `text`, as if read from `path`.
    pub fn new(path: &Path, text: String) -> UserCommands {
        let p = UserProgram::new(path, text);
        UserCommands {
            path: p.path,
            text: p.text,
            digest: p.digest,
        }
    }

    /// What a report says of these commands applied to the devices that
    /// run `which`.
    pub fn used(&self, which: Bundled) -> CommandsUse {
        CommandsUse {
            role: which.role().to_string(),
            file: self.name(),
            digest: self.digest.clone(),
        }
    }

    /// The file's name in errors.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// Compiled programs of a run, by (program, defines): each variant is
/// compiled once however many devices and modes use it.
#[derive(Clone, Debug, Default)]
pub struct ProgramCache {
    entries: Vec<(Bundled, Vec<&'static str>, Arc<Artifact>)>,
    compilations: u32,
    user: BTreeMap<Bundled, UserProgram>,
    commands: BTreeMap<Bundled, UserCommands>,
    warnings: Vec<String>,
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
        let a = Arc::new(match self.user.get(&which) {
            Some(u) => compile_user(which, u, defines, &mut self.warnings)?,
            None => compile_bundled(which, defines)?,
        });
        self.compilations += 1;
        self.entries.push((which, defines.to_vec(), a.clone()));
        Ok(a)
    }

    /// Run `user` wherever `which` would run, from now on (variants of
    /// `which` compiled before are forgotten).
    pub fn set_user(&mut self, which: Bundled, user: UserProgram) {
        self.entries.retain(|(w, _, _)| *w != which);
        self.user.insert(which, user);
    }

    /// The users' programs standing in for bundled ones, by role.
    pub fn user_programs(&self) -> impl Iterator<Item = (Bundled, &UserProgram)> {
        self.user.iter().map(|(&w, u)| (w, u))
    }

    /// Apply `commands` to every device that runs `which`, after the
    /// simulator's own control plane.
    pub fn set_commands(&mut self, which: Bundled, commands: UserCommands) {
        self.commands.insert(which, commands);
    }

    /// The user's commands for the devices that run `which`.
    pub fn commands(&self, which: Bundled) -> Option<&UserCommands> {
        self.commands.get(&which)
    }

    /// Compile now every variant of the users' programs that `needed`
    /// lists ((program, defines) pairs: what the runs ahead will ask for),
    /// so that an error in one stops a run before anything large is done.
    pub fn compile_users(
        &mut self,
        needed: impl IntoIterator<Item = (Bundled, Vec<&'static str>)>,
    ) -> Result<(), ProgramError> {
        for (which, defines) in needed {
            if self.user.contains_key(&which) {
                self.get(which, &defines)?;
            }
        }
        Ok(())
    }

    /// What a report says of the users' commands, by role.
    pub fn command_uses(&self) -> Vec<CommandsUse> {
        self.commands.iter().map(|(w, c)| c.used(*w)).collect()
    }

    /// What a report says of the users' programs, by role.
    pub fn uses(&self) -> Vec<ProgramUse> {
        self.user_programs().map(|(w, u)| w.used(u)).collect()
    }

    /// The warnings of the users' programs compiled since the last call,
    /// rendered (a bundled program has none).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
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
