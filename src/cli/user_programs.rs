//! The flags that run a user's P4 programs in place of the bundled ones
//! (`--nic-program`, `--tor-program`, `--spine-program`, shared by `sim`
//! and `paper`) and add a user's control-plane commands to their devices
//! (`--nic-commands`, `--tor-commands`, `--spine-commands`, also shared by
//! both): reading the files, and for `sim` compiling every variant the
//! selected modes (or `--kernel spmm2d`'s and `--collective`'s switches)
//! need and checking the commands, before any matrix is generated.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};

use netsparse::programs::{Bundled, ProgramCache, UserCommands, UserProgram};
use netsparse::sim::cluster::{check_commands, mode_programs};
use netsparse::sim::Mode;

/// A user's programs in place of the bundled ones.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ProgramArgs {
    /// Run this program on every node's SmartNIC in place of the bundled
    /// programs/netsparse_nic.p4 (NetSparseNic architecture). Each mode
    /// compiles it with the bundled program's defines (-D NS_NO_FILTER for
    /// rig, -D NS_NO_COALESCE for rig and +filter), so one file can serve
    /// every step. `paper` keys each run that uses it by the file's digest.
    #[arg(long, value_name = "FILE.p4")]
    pub nic_program: Option<PathBuf>,
    /// Run this program in every ToR of the netsparse mode (and of
    /// `--kernel spmm2d`) in place of the bundled programs/netsparse_tor.p4
    /// (NetSparseSwitch architecture).
    /// The simulator installs the bundled program's control plane (see
    /// `sim --topology-out`): keep its tables and actions.
    #[arg(long, value_name = "FILE.p4")]
    pub tor_program: Option<PathBuf>,
    /// Run this program in every spine, and in every ToR of the steps
    /// before netsparse (and every v1model switch of `--kernel spmm2d` and
    /// `--collective`), in place of the bundled programs/netsparse_spine.p4
    /// (v1model). The control plane is the bundled program's, as for
    /// --tor-program.
    #[arg(long, value_name = "FILE.p4")]
    pub spine_program: Option<PathBuf>,
}

/// A user's control-plane commands for the SmartNICs and switches.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CommandArgs {
    /// simple_switch_CLI commands (table_add, table_set_default, ...)
    /// applied to every node's SmartNIC after the simulator's own control
    /// plane (the destination solver's ranges): the entries of your NIC
    /// program's own tables. Checked before the matrix.
    #[arg(long, value_name = "FILE")]
    pub nic_commands: Option<PathBuf>,
    /// simple_switch_CLI commands (table_add, table_set_default,
    /// register_write, ...) applied to every ToR of the netsparse mode
    /// after the simulator's own control plane: the entries of your ToR
    /// program's own tables. Checked before the matrix.
    #[arg(long, value_name = "FILE")]
    pub tor_commands: Option<PathBuf>,
    /// As --tor-commands, for every switch that runs the spine program.
    #[arg(long, value_name = "FILE")]
    pub spine_commands: Option<PathBuf>,
}

impl ProgramArgs {
    fn flags(&self) -> [(&'static str, Bundled, Option<&PathBuf>); 3] {
        [
            ("--nic-program", Bundled::Nic, self.nic_program.as_ref()),
            ("--tor-program", Bundled::Tor, self.tor_program.as_ref()),
            (
                "--spine-program",
                Bundled::Spine,
                self.spine_program.as_ref(),
            ),
        ]
    }

    /// The programs given, read.
    pub fn read(&self) -> anyhow::Result<Vec<(Bundled, UserProgram)>> {
        read_each(self.flags(), UserProgram::read)
    }
}

/// Read the file of each flag given, by role.
fn read_each<T>(
    flags: [(&'static str, Bundled, Option<&PathBuf>); 3],
    read: impl Fn(&Path) -> std::io::Result<T>,
) -> anyhow::Result<Vec<(Bundled, T)>> {
    let mut out = Vec::new();
    for (flag, which, path) in flags {
        if let Some(path) = path {
            let t =
                read(path).with_context(|| format!("{flag} {}: cannot read it", path.display()))?;
            out.push((which, t));
        }
    }
    Ok(out)
}

impl CommandArgs {
    fn flags(&self) -> [(&'static str, Bundled, Option<&PathBuf>); 3] {
        [
            ("--nic-commands", Bundled::Nic, self.nic_commands.as_ref()),
            ("--tor-commands", Bundled::Tor, self.tor_commands.as_ref()),
            (
                "--spine-commands",
                Bundled::Spine,
                self.spine_commands.as_ref(),
            ),
        ]
    }

    /// The commands given, read.
    pub fn read(&self) -> anyhow::Result<Vec<(Bundled, UserCommands)>> {
        read_each(self.flags(), UserCommands::read)
    }
}

/// The first of these flags given, if any.
pub fn first_flag(p: &ProgramArgs, c: &CommandArgs) -> Option<&'static str> {
    p.flags()
        .into_iter()
        .chain(c.flags())
        .find(|f| f.2.is_some())
        .map(|f| f.0)
}

/// The program cache of a `sim` run of `modes` with the users' programs
/// and commands in place: each flag's role checked against the modes (a
/// flag that would do nothing is refused), every variant of the programs
/// the modes need compiled (their warnings printed), and the commands
/// checked on a device of their program.
pub fn program_cache(
    p: &ProgramArgs,
    c: &CommandArgs,
    modes: &[Mode],
) -> anyhow::Result<ProgramCache> {
    let needed: Vec<_> = modes.iter().flat_map(|&m| mode_programs(m)).collect();
    programs_for(p, c, &needed, &|role| {
        format!(
            "no selected mode runs the {role} program (the NIC and spine programs run in rig ... netsparse, the ToR program in netsparse)"
        )
    })
}

/// The program cache of a run that needs the program variants `needed`,
/// with the users' programs and commands in place (as [`program_cache`]);
/// a flag for a role that is not needed is refused with `not_run(role)`.
pub fn programs_for(
    p: &ProgramArgs,
    c: &CommandArgs,
    needed: &[(Bundled, Vec<&'static str>)],
    not_run: &dyn Fn(&str) -> String,
) -> anyhow::Result<ProgramCache> {
    let mut programs = ProgramCache::new();
    for (flag, which, path) in p.flags().into_iter().chain(c.flags()) {
        if path.is_some() && !needed.iter().any(|(w, _)| *w == which) {
            bail!("{flag}: {}", not_run(which.role()));
        }
    }
    for (which, user) in p.read()? {
        programs.set_user(which, user);
    }
    for (which, commands) in c.read()? {
        programs.set_commands(which, commands);
    }
    programs.compile_users(needed.iter().cloned())?;
    for w in programs.take_warnings() {
        eprint!("{w}");
    }
    for (_, which, path) in c.flags() {
        if path.is_some() {
            check_commands(&mut programs, which)?;
        }
    }
    Ok(programs)
}
