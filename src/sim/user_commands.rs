//! The users' command files (`--nic-commands`, `--tor-commands`,
//! `--spine-commands`) checked before a run, so that a bad one costs no
//! matrix generation: [`check_commands`] on a device of the program alone
//! (syntax, tables, actions, keys), [`check_commands_on_control_plane`] on
//! every switch of the topology after the simulator's own entries (a key
//! the control plane already installs), on switches built by the run's
//! own builder in [`super::cluster`], which applies the same files again
//! to each device of a run.

use netsparse_bmv2::{NsConfig, NsSwitch, Switch, SwitchConfig};
use netsparse_engine::control::commands;
use netsparse_externs::artifact::Arch;
use netsparse_nic::{DenseMemory, Nic, NicConfig};

use super::cluster::{build_switch, cp_err};
use super::config::SimConfig;
use super::topology::{Device, TableTemplates};
use super::SimError;
use crate::programs::{Bundled, ProgramCache};

/// Check the user's commands for the devices running `which` on a device
/// of their program alone (a switch, or a SmartNIC over an empty host
/// memory), before the run: their syntax, tables, actions and keys.
/// (Against the simulator's own entries, a duplicate key, see
/// [`check_commands_on_control_plane`].)
pub fn check_commands(programs: &mut ProgramCache, which: Bundled) -> Result<(), SimError> {
    let Some(c) = programs.commands(which).cloned() else {
        return Ok(());
    };
    let art = programs.get(which, &[])?;
    let applied = match which.arch() {
        Arch::NetSparseNic => Nic::new(&art, NicConfig::default(), DenseMemory::default())
            .map_err(|e| e.to_string())
            .and_then(|mut nic| {
                commands::apply(nic.program_mut(), &c.text, &c.name()).map_err(|e| e.to_string())
            }),
        Arch::NetSparseSwitch => NsSwitch::new(&art, NsConfig::default())
            .map_err(|e| e.to_string())
            .and_then(|mut sw| {
                commands::apply(&mut sw, &c.text, &c.name()).map_err(|e| e.to_string())
            }),
        _ => Switch::new(&art, SwitchConfig::default())
            .map_err(|e| e.to_string())
            .and_then(|mut sw| {
                commands::apply(&mut sw, &c.text, &c.name()).map_err(|e| e.to_string())
            }),
    };
    applied.map(|_| ()).map_err(|e| {
        SimError::Commands(format!(
            "the {} commands do not fit the {} program: {e}",
            which.role(),
            which.role()
        ))
    })
}

/// Check the user's switch commands after the simulator's own entries on
/// every switch of `cfg`'s topology, built as a run builds them
/// (the run's own switch builder, the Property Cache off): with `v1_tors` (the modes
/// before `netsparse`) every switch runs the spine program, else the ToRs
/// run the ToR program. The error names the switch and the file's line,
/// as the run would. The SmartNICs' commands meet no simulator entries
/// ([`check_commands`] covers them). Under `owner-load` routing the
/// spines' entries depend on the matrix; this checks the routing's
/// entries without it, and the run checks each switch again.
pub fn check_commands_on_control_plane(
    programs: &mut ProgramCache,
    cfg: &SimConfig,
    v1_tors: bool,
) -> Result<(), SimError> {
    let users = |w: Bundled| programs.commands(w).is_some();
    let tor_used = !v1_tors && users(Bundled::Tor);
    if !tor_used && !users(Bundled::Spine) {
        return Ok(());
    }
    let t = cfg.topology().map_err(|e| cp_err(e.to_string()))?;
    let spine = programs.get(Bundled::Spine, &[])?;
    let tor = if v1_tors {
        None
    } else {
        Some(programs.get(Bundled::Tor, &[])?)
    };
    let templates = TableTemplates::default();
    for d in t.devices().filter(|d| !matches!(d, Device::Node(_))) {
        let tor = tor.as_deref().map(|art| (art, cfg.prop_bytes()));
        build_switch(&t, d, cfg, tor, &spine, programs, &templates, false)?;
    }
    Ok(())
}
