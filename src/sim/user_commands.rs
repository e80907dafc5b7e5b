//! The users' command files (`--nic-commands`, `--tor-commands`,
//! `--spine-commands`) checked before a run, so that a bad one costs no
//! matrix generation: [`check_commands`] on a device of the program alone
//! (syntax, tables, actions, keys), [`check_commands_on_control_plane`] on
//! every switch of the topology after the simulator's own entries (a key
//! the control plane already installs). The run applies the same files
//! to each device as it is built ([`super::cluster`]).

use netsparse_bmv2::{NsConfig, NsSwitch, Switch, SwitchConfig};
use netsparse_engine::control::commands;
use netsparse_externs::artifact::Arch;
use netsparse_externs::cache::CacheCapacity;
use netsparse_nic::{DenseMemory, Nic, NicConfig};

use super::cluster::{control_plane_err, cp_err, tor_config};
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

/// Check the user's switch commands for `which` after the simulator's own
/// entries on every switch of `cfg`'s topology that runs that program in a
/// mode whose ToRs are v1model switches (`v1_tors`: the modes before
/// `netsparse`) or NetSparse switches: the spine program on every spine
/// and, with `v1_tors`, on every ToR; the ToR program on every ToR
/// without. Each
/// switch is built as the run builds it, its Property Cache off, gets its
/// control plane and then the commands; the error names the switch and
/// the file's line, as the run would. The SmartNICs' commands meet no
/// simulator entries ([`check_commands`] covers them). Under `owner-load`
/// routing the spines' entries depend on the matrix; this checks the
/// routing's entries without it, and the run checks each switch again.
pub fn check_commands_on_control_plane(
    programs: &mut ProgramCache,
    which: Bundled,
    cfg: &SimConfig,
    v1_tors: bool,
) -> Result<(), SimError> {
    if which == Bundled::Nic {
        return Ok(());
    }
    let Some(c) = programs.commands(which).cloned() else {
        return Ok(());
    };
    let t = cfg.topology().map_err(|e| cp_err(e.to_string()))?;
    let art = programs.get(which, &[])?;
    let templates = TableTemplates::default();
    let user_err = |d: Device, e: String| {
        SimError::Commands(format!(
            "{d}: the {} commands after the simulator's own entries \
             (`--topology-out DIR` writes them): {e}",
            which.role()
        ))
    };
    for d in t.devices() {
        let runs = match d {
            Device::Node(_) => false,
            Device::Tor(_) => (which == Bundled::Tor) != v1_tors,
            _ => which == Bundled::Spine,
        };
        if !runs {
            continue;
        }
        let entries = t.control_plane(d, &templates);
        let file = format!("{d}-commands.txt");
        match d {
            Device::Tor(r) if which == Bundled::Tor => {
                let mut ns = tor_config(&t, cfg, r, cfg.prop_bytes())?;
                ns.cache.capacity = CacheCapacity::Disabled;
                let mut sw = NsSwitch::new(&art, ns).map_err(|e| cp_err(format!("{d}: {e}")))?;
                commands::apply(&mut sw, &entries, &file).map_err(|e| control_plane_err(d, e))?;
                commands::apply(&mut sw, &c.text, &c.name())
                    .map_err(|e| user_err(d, e.to_string()))?;
            }
            _ => {
                let mut sw = Switch::new(
                    &art,
                    SwitchConfig {
                        seed: cfg.seed,
                        ..SwitchConfig::default()
                    },
                )
                .map_err(|e| cp_err(format!("{d}: {e}")))?;
                commands::apply(&mut sw, &entries, &file).map_err(|e| control_plane_err(d, e))?;
                commands::apply(&mut sw, &c.text, &c.name())
                    .map_err(|e| user_err(d, e.to_string()))?;
            }
        }
    }
    Ok(())
}
