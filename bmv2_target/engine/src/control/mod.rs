//! The target-neutral control plane: the [`ControlPlane`] trait that every
//! target built on the engine implements (tables, registers, counters,
//! meters, digests; multicast, mirroring and extra commands where the
//! target has them), the engine-side implementations behind it
//! (`tables_api.rs`, `externs_api.rs`), and loaders for the p4lang
//! tutorials' runtime JSON ([`runtime_json`]) and BMv2 CLI command files
//! ([`commands`]), over a shared value/match parser ([`values`]).
//!
//! Names are resolved when an operation is made, never per packet: a fully
//! qualified name (`MyIngress.ipv4_lpm`) or a unique dot-separated suffix
//! (`ipv4_lpm`); an ambiguous suffix is an error listing the candidates.
//!
//! Priorities follow P4Runtime: the **higher** number wins (ties: the entry
//! added first). The BMv2 command-file loader converts BMv2's
//! lower-wins convention at its boundary.

pub mod commands;
mod externs_api;
pub mod runtime_json;
mod tables_api;
pub mod values;

use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::meter::MeterRates;
use netsparse_externs::stateful::CounterCell;

use crate::error::ControlPlaneError;
use crate::runtime::DigestMsg;
use crate::tables::{EntryHandle, KeySpec};
use crate::Engine;

/// Resolve `query` among `names`: an exact name, or a unique suffix that
/// starts at a `.` boundary.
pub fn resolve<'a>(
    kind: &'static str,
    names: impl Iterator<Item = &'a str> + Clone,
    query: &str,
) -> Result<usize, ControlPlaneError> {
    if let Some(i) = names.clone().position(|n| n == query) {
        return Ok(i);
    }
    let dotted = format!(".{query}");
    let hits: Vec<(usize, &str)> = names
        .clone()
        .enumerate()
        .filter(|(_, n)| n.ends_with(&dotted))
        .collect();
    match hits.as_slice() {
        [(i, _)] => Ok(*i),
        [] => Err(ControlPlaneError::NoSuchName {
            kind,
            name: query.to_owned(),
            known: names.take(20).map(str::to_owned).collect(),
        }),
        many => Err(ControlPlaneError::Ambiguous {
            kind,
            name: query.to_owned(),
            candidates: many.iter().map(|(_, n)| (*n).to_owned()).collect(),
        }),
    }
}

/// A table's control-plane description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// Fully-qualified name.
    pub name: String,
    /// Keys in order.
    pub keys: Vec<KeySpec>,
    /// Actions (control-plane names) with their parameters (name, width).
    pub actions: Vec<ActionInfo>,
    /// Whether entries take a priority (ternary/range/optional keys).
    pub needs_priority: bool,
    /// Maximum entries.
    pub size: u32,
    /// Live entries.
    pub len: usize,
}

/// An action's control-plane description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionInfo {
    /// Control-plane name (as listed in the table).
    pub name: String,
    /// Parameters: (name, width).
    pub params: Vec<(String, u16)>,
    /// `@defaultonly`.
    pub default_only: bool,
    /// `@tableonly`.
    pub table_only: bool,
}

/// An installed entry as the control plane sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryView {
    /// Handle.
    pub handle: EntryHandle,
    /// Normalised matches.
    pub matches: Vec<KeyMatch>,
    /// Action name.
    pub action: String,
    /// Action data.
    pub args: Vec<u128>,
    /// Priority (0 for exact/LPM tables).
    pub priority: u32,
    /// From the program.
    pub is_const: bool,
    /// Direct counter cell (zero if the table has none).
    pub counter: CounterCell,
}

/// A table's default entry, as the control plane sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefaultEntry {
    /// Action name (control-plane name, as listed in the table).
    pub action: String,
    /// Action data.
    pub args: Vec<u128>,
    /// The program declared it `const default_action`.
    pub is_const: bool,
}

/// One (port, replication id) destination of a multicast group or a clone
/// session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Replica {
    /// Egress port.
    pub port: u32,
    /// `egress_rid` of the copy.
    pub rid: u16,
}

/// The control plane of a target built on the engine. A target provides
/// its [`Engine`] (every target has exactly one); tables, registers,
/// counters, meters and digests then follow one set of rules for all of
/// them. Replication (multicast, mirroring) and extra command-file commands
/// are optional: the defaults say the target has none. The entry loaders
/// ([`commands`], [`runtime_json`]) work on any implementation.
pub trait ControlPlane {
    /// The target's engine.
    fn engine(&self) -> &Engine;

    /// The target's engine, mutably.
    fn engine_mut(&mut self) -> &mut Engine;

    /// Fully-qualified names of every table.
    fn table_names(&self) -> Vec<String> {
        self.engine().table_names()
    }

    /// Describe a table (a fully-qualified name or a unique suffix).
    fn table_info(&self, table: &str) -> Result<TableInfo, ControlPlaneError> {
        self.engine().table_info(table)
    }

    /// Add an entry. `matches` has one [`KeyMatch`] per key, in key order;
    /// `priority` is required for tables with ternary/range/optional keys
    /// (higher wins) and must be `None` (or 0) otherwise.
    fn add_entry(
        &mut self,
        table: &str,
        matches: &[KeyMatch],
        action: &str,
        args: &[u128],
        priority: Option<u32>,
    ) -> Result<EntryHandle, ControlPlaneError> {
        self.engine_mut()
            .add_entry(table, matches, action, args, priority)
    }

    /// Add an entry with keys and parameters given by name (STF / P4Runtime
    /// style): keys may come in any order; keys left out are wildcards (an
    /// error for exact keys); parameters must all be given.
    fn add_entry_by_name(
        &mut self,
        table: &str,
        keys: &[(&str, KeyMatch)],
        action: &str,
        params: &[(&str, u128)],
        priority: Option<u32>,
    ) -> Result<EntryHandle, ControlPlaneError> {
        self.engine_mut()
            .add_entry_by_name(table, keys, action, params, priority)
    }

    /// Change the action (and data) of an entry.
    fn modify_entry(
        &mut self,
        table: &str,
        handle: EntryHandle,
        action: &str,
        args: &[u128],
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().modify_entry(table, handle, action, args)
    }

    /// Delete an entry.
    fn delete_entry(&mut self, table: &str, handle: EntryHandle) -> Result<(), ControlPlaneError> {
        self.engine_mut().delete_entry(table, handle)
    }

    /// Set a table's default action.
    fn set_default(
        &mut self,
        table: &str,
        action: &str,
        args: &[u128],
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().set_default(table, action, args)
    }

    /// Delete every entry the control plane added to a table.
    fn clear_table(&mut self, table: &str) -> Result<(), ControlPlaneError> {
        self.engine_mut().clear_table(table)
    }

    /// The installed entries of a table, in handle order.
    fn entries(&self, table: &str) -> Result<Vec<EntryView>, ControlPlaneError> {
        self.engine().entries(table)
    }

    /// One installed entry, by handle.
    fn entry(&self, table: &str, handle: EntryHandle) -> Result<EntryView, ControlPlaneError> {
        self.engine().entry(table, handle)
    }

    /// A table's default entry.
    fn default_entry(&self, table: &str) -> Result<DefaultEntry, ControlPlaneError> {
        self.engine().default_entry(table)
    }

    /// Find the handle of the entry with exactly these matches (and
    /// priority, for priority tables).
    fn find_entry(
        &self,
        table: &str,
        matches: &[KeyMatch],
        priority: Option<u32>,
    ) -> Result<Option<EntryHandle>, ControlPlaneError> {
        self.engine().find_entry(table, matches, priority)
    }

    /// The direct counter cell of an entry.
    fn direct_counter_read(
        &self,
        table: &str,
        handle: EntryHandle,
    ) -> Result<CounterCell, ControlPlaneError> {
        self.engine().direct_counter_read(table, handle)
    }

    /// Overwrite the direct counter cell of an entry.
    fn direct_counter_write(
        &mut self,
        table: &str,
        handle: EntryHandle,
        cell: CounterCell,
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().direct_counter_write(table, handle, cell)
    }

    /// Overwrite an indexed counter's cell.
    fn counter_write(
        &mut self,
        name: &str,
        index: u64,
        cell: CounterCell,
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().counter_write(name, index, cell)
    }

    /// Read a register cell.
    fn register_read(&self, name: &str, index: u64) -> Result<u128, ControlPlaneError> {
        self.engine().register_read(name, index)
    }

    /// Write a register cell (the value must fit the cell width).
    fn register_write(
        &mut self,
        name: &str,
        index: u64,
        value: u128,
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().register_write(name, index, value)
    }

    /// Zero every cell of a register.
    fn register_reset(&mut self, name: &str) -> Result<(), ControlPlaneError> {
        self.engine_mut().register_reset(name)
    }

    /// Read an indexed counter's cell.
    fn counter_read(&self, name: &str, index: u64) -> Result<CounterCell, ControlPlaneError> {
        self.engine().counter_read(name, index)
    }

    /// Zero a counter (indexed, or a table's direct counter).
    fn counter_reset(&mut self, name: &str) -> Result<(), ControlPlaneError> {
        self.engine_mut().counter_reset(name)
    }

    /// Set meter rates: an indexed meter's cell `index` (or every cell when
    /// `None`), or a direct meter's entry (`index` = entry handle).
    fn meter_set_rates(
        &mut self,
        name: &str,
        index: Option<u64>,
        rates: MeterRates,
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().meter_set_rates(name, index, rates)
    }

    /// Configure meters as [`ControlPlane::meter_set_rates`]; `None`
    /// forgets the rates (every packet is green again).
    fn meter_configure(
        &mut self,
        name: &str,
        index: Option<u64>,
        rates: Option<MeterRates>,
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().meter_configure(name, index, rates)
    }

    /// The rates of an indexed meter's cell `index`, or of a direct meter's
    /// entry (`index` = entry handle); `None` when not configured.
    fn meter_get_rates(
        &self,
        name: &str,
        index: u64,
    ) -> Result<Option<MeterRates>, ControlPlaneError> {
        self.engine().meter_get_rates(name, index)
    }

    /// Packets and bytes a meter cell (or a direct meter's entry, `index` =
    /// entry handle) marked green, yellow and red.
    fn meter_marked(
        &self,
        name: &str,
        index: u64,
    ) -> Result<[netsparse_externs::stateful::CounterCell; 3], ControlPlaneError> {
        self.engine().meter_marked(name, index)
    }

    /// Put back the marked counts of a meter cell or direct meter entry.
    fn meter_set_marked(
        &mut self,
        name: &str,
        index: u64,
        marked: [netsparse_externs::stateful::CounterCell; 3],
    ) -> Result<(), ControlPlaneError> {
        self.engine_mut().meter_set_marked(name, index, marked)
    }

    /// The name of the direct meter attached to `table`, if it has one.
    fn direct_meter_of(&self, table: &str) -> Result<Option<String>, ControlPlaneError> {
        self.engine().direct_meter_of(table)
    }

    /// Collect the digests sent by the data plane since the last call.
    fn take_digests(&mut self) -> Vec<DigestMsg> {
        self.engine_mut().take_digests()
    }

    /// Replace a multicast group's replicas (runtime JSON
    /// `multicast_group_entries`). Default: not supported.
    fn mc_group_set(&mut self, group: u16, replicas: &[Replica]) -> Result<(), ControlPlaneError> {
        let _ = replicas;
        Err(ControlPlaneError::Unsupported(format!(
            "multicast group {group}: this target has no multicast"
        )))
    }

    /// Remove a multicast group. Default: not supported.
    fn mc_group_remove(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        Err(ControlPlaneError::Unsupported(format!(
            "multicast group {group}: this target has no multicast"
        )))
    }

    /// Every multicast group and its replicas, by group id. Default: none.
    fn mc_groups(&self) -> Vec<(u16, Vec<Replica>)> {
        Vec::new()
    }

    /// Replace a mirror session's replicas (runtime JSON
    /// `clone_session_entries`). Default: not supported.
    fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        let _ = replicas;
        Err(ControlPlaneError::Unsupported(format!(
            "clone session {session}: this target has no mirroring"
        )))
    }

    /// Remove a mirror session. Default: not supported.
    fn mirroring_remove(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        Err(ControlPlaneError::Unsupported(format!(
            "clone session {session}: this target has no mirroring"
        )))
    }

    /// Every mirror session and its replicas, by session id. Default: none.
    fn mirroring_sessions(&self) -> Vec<(u32, Vec<Replica>)> {
        Vec::new()
    }

    /// Run a command-file command that the generic loader does not know
    /// (`cmd` and its arguments; replication commands, say): `None` if the
    /// target does not know it either. Returns whether an entry was added.
    fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, commands::LineError>> {
        let _ = (cmd, args);
        None
    }
}
