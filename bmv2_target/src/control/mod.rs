//! The control plane: a typed API on [`Switch`] (tables, registers,
//! counters, meters, mirroring, multicast) and loaders for the p4lang
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
pub mod runtime_json;
mod tables_api;
pub mod values;

use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::meter::MeterRates;
use netsparse_externs::stateful::CounterCell;

use crate::engine::runtime::{DigestMsg, ExternRt};
use crate::engine::word::mask128;
use crate::error::ControlPlaneError;
use crate::tables::{EntryHandle, KeySpec};
use crate::v1model::{McNode, Replica, Switch};

/// Resolve `query` among `names`: an exact name, or a unique suffix that
/// starts at a `.` boundary.
pub(crate) fn resolve<'a>(
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

/// What the entry loaders ([`commands`], [`runtime_json`]) need from a
/// target: its tables, plus optional replication and target-specific
/// commands. Implemented by the v1model [`Switch`] and the NetSparse
/// switch ([`crate::nsswitch::NsSwitch`]).
pub trait ControlPlane {
    /// Describe a table (a fully-qualified name or a unique suffix).
    fn table_info(&self, table: &str) -> Result<TableInfo, ControlPlaneError>;

    /// Add an entry (one match per key; a priority, higher wins, for
    /// ternary/range/optional tables).
    fn add_entry(
        &mut self,
        table: &str,
        matches: &[KeyMatch],
        action: &str,
        args: &[u128],
        priority: Option<u32>,
    ) -> Result<EntryHandle, ControlPlaneError>;

    /// Set a table's default action.
    fn set_default(
        &mut self,
        table: &str,
        action: &str,
        args: &[u128],
    ) -> Result<(), ControlPlaneError>;

    /// Delete every entry the control plane added to a table.
    fn clear_table(&mut self, table: &str) -> Result<(), ControlPlaneError>;

    /// Replace a multicast group's replicas (runtime JSON
    /// `multicast_group_entries`). Default: not supported.
    fn mc_group_set(&mut self, group: u16, replicas: &[Replica]) -> Result<(), ControlPlaneError> {
        let _ = replicas;
        Err(ControlPlaneError::Replication(format!(
            "multicast group {group}: this target has no multicast"
        )))
    }

    /// Replace a mirror session's replicas (runtime JSON
    /// `clone_session_entries`). Default: not supported.
    fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        let _ = replicas;
        Err(ControlPlaneError::Replication(format!(
            "clone session {session}: this target has no mirroring"
        )))
    }

    /// Run a command-file command other than `table_add`,
    /// `table_set_default` and `table_clear` (`cmd` and its arguments):
    /// `None` if the target does not know it. Returns whether an entry was
    /// added.
    fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, commands::LineError>> {
        let _ = (cmd, args);
        None
    }
}

impl ControlPlane for Switch {
    fn table_info(&self, table: &str) -> Result<TableInfo, ControlPlaneError> {
        Switch::table_info(self, table)
    }

    fn add_entry(
        &mut self,
        table: &str,
        matches: &[KeyMatch],
        action: &str,
        args: &[u128],
        priority: Option<u32>,
    ) -> Result<EntryHandle, ControlPlaneError> {
        Switch::add_entry(self, table, matches, action, args, priority)
    }

    fn set_default(
        &mut self,
        table: &str,
        action: &str,
        args: &[u128],
    ) -> Result<(), ControlPlaneError> {
        Switch::set_default(self, table, action, args)
    }

    fn clear_table(&mut self, table: &str) -> Result<(), ControlPlaneError> {
        Switch::clear_table(self, table)
    }

    fn mc_group_set(&mut self, group: u16, replicas: &[Replica]) -> Result<(), ControlPlaneError> {
        Switch::mc_group_set(self, group, replicas)
    }

    fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        Switch::mirroring_set(self, session, replicas)
    }

    fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, commands::LineError>> {
        commands::v1model_command(self, cmd, args)
    }
}

/// Handle of a multicast node (BMv2 `mc_node_create`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct McNodeHandle(pub u32);

impl Switch {
    fn table_index(&self, name: &str) -> Result<usize, ControlPlaneError> {
        self.engine.table_index(name)
    }

    /// Fully-qualified names of every table.
    pub fn table_names(&self) -> Vec<String> {
        self.engine.table_names()
    }

    /// Describe a table (keys, actions with parameters, priority rule).
    pub fn table_info(&self, table: &str) -> Result<TableInfo, ControlPlaneError> {
        self.engine.table_info(table)
    }

    fn table_action(&self, ti: usize, action: &str) -> Result<usize, ControlPlaneError> {
        self.engine.table_action(ti, action)
    }

    fn check_args(&self, ti: usize, ai: usize, args: &[u128]) -> Result<u32, ControlPlaneError> {
        self.engine.check_args(ti, ai, args)
    }

    /// Add an entry. `matches` has one [`KeyMatch`] per key, in key order;
    /// `priority` is required for tables with ternary/range/optional keys
    /// (higher wins) and must be `None` (or 0) otherwise.
    pub fn add_entry(
        &mut self,
        table: &str,
        matches: &[KeyMatch],
        action: &str,
        args: &[u128],
        priority: Option<u32>,
    ) -> Result<EntryHandle, ControlPlaneError> {
        self.engine
            .add_entry(table, matches, action, args, priority)
    }

    /// Add an entry with keys and parameters given by name (STF / P4Runtime
    /// style): keys may come in any order and match by full name or unique
    /// suffix; keys left out are wildcards (an error for exact keys);
    /// parameters must all be given.
    pub fn add_entry_by_name(
        &mut self,
        table: &str,
        keys: &[(&str, KeyMatch)],
        action: &str,
        params: &[(&str, u128)],
        priority: Option<u32>,
    ) -> Result<EntryHandle, ControlPlaneError> {
        let info = self.table_info(table)?;
        let mut matches: Vec<Option<KeyMatch>> = vec![None; info.keys.len()];
        for (name, m) in keys {
            let i =
                resolve("key", info.keys.iter().map(|k| k.name.as_str()), name).map_err(|_| {
                    ControlPlaneError::NoSuchKey {
                        table: info.name.clone(),
                        key: (*name).to_owned(),
                        keys: info.keys.iter().map(|k| k.name.clone()).collect(),
                    }
                })?;
            matches[i] = Some(m.clone());
        }
        let mut full = Vec::with_capacity(matches.len());
        for (k, m) in info.keys.iter().zip(matches) {
            match m {
                Some(m) => full.push(m),
                None if k.kind == netsparse_externs::artifact::MatchKind::Exact => {
                    return Err(ControlPlaneError::KeyCount {
                        table: info.name.clone(),
                        expected: info.keys.len(),
                        got: keys.len(),
                    })
                }
                None => full.push(KeyMatch::Any),
            }
        }
        let ti = self.table_index(table)?;
        let ai = self.table_action(ti, action)?;
        let a = &info.actions[ai];
        let mut args = Vec::with_capacity(a.params.len());
        for (pname, _) in &a.params {
            let v = params
                .iter()
                .find(|(n, _)| n == pname)
                .map(|(_, v)| *v)
                .ok_or_else(|| ControlPlaneError::ParamCount {
                    table: info.name.clone(),
                    action: a.name.clone(),
                    expected: a.params.len(),
                    got: params.len(),
                })?;
            args.push(v);
        }
        if let Some((n, _)) = params
            .iter()
            .find(|(n, _)| !a.params.iter().any(|(p, _)| p == n))
        {
            return Err(ControlPlaneError::NoSuchParam {
                action: a.name.clone(),
                param: (*n).to_owned(),
                params: a.params.iter().map(|(p, _)| p.clone()).collect(),
            });
        }
        let action_name = a.name.clone();
        self.add_entry(table, &full, &action_name, &args, priority)
    }

    /// Change the action (and data) of an entry.
    pub fn modify_entry(
        &mut self,
        table: &str,
        handle: EntryHandle,
        action: &str,
        args: &[u128],
    ) -> Result<(), ControlPlaneError> {
        let ti = self.table_index(table)?;
        let ai = self.table_action(ti, action)?;
        let t = &self.engine.rt.tables[ti];
        if t.entries_const {
            return Err(ControlPlaneError::ConstEntries {
                table: t.name.clone(),
            });
        }
        if t.actions[ai].default_only {
            return Err(ControlPlaneError::DefaultOnly {
                table: t.name.clone(),
                action: t.actions[ai].name.clone(),
            });
        }
        let id = self.check_args(ti, ai, args)?;
        let t = &mut self.engine.rt.tables[ti];
        let name = t.name.clone();
        let e = t
            .entry_mut(handle.0)
            .ok_or(ControlPlaneError::NoSuchEntry {
                table: name,
                handle: handle.0,
            })?;
        e.action = id;
        e.args = args.into();
        Ok(())
    }

    /// Delete an entry.
    pub fn delete_entry(
        &mut self,
        table: &str,
        handle: EntryHandle,
    ) -> Result<(), ControlPlaneError> {
        let ti = self.table_index(table)?;
        let t = &mut self.engine.rt.tables[ti];
        if t.entries_const {
            return Err(ControlPlaneError::ConstEntries {
                table: t.name.clone(),
            });
        }
        t.remove(handle.0).map(|_| ())
    }

    /// Delete every entry the control plane added.
    pub fn clear_table(&mut self, table: &str) -> Result<(), ControlPlaneError> {
        self.engine.clear_table(table)
    }

    /// Set the default action.
    pub fn set_default(
        &mut self,
        table: &str,
        action: &str,
        args: &[u128],
    ) -> Result<(), ControlPlaneError> {
        self.engine.set_default(table, action, args)
    }

    /// The installed entries of a table, in handle order.
    pub fn entries(&self, table: &str) -> Result<Vec<EntryView>, ControlPlaneError> {
        let t = &self.engine.rt.tables[self.table_index(table)?];
        let code = &self.engine.code;
        Ok(t.iter()
            .map(|(h, e)| EntryView {
                handle: h,
                matches: e.keys.to_vec(),
                action: t.actions.iter().find(|a| a.action == e.action).map_or_else(
                    || code.actions[e.action as usize].name.clone(),
                    |a| a.name.clone(),
                ),
                args: e.args.to_vec(),
                priority: e.priority,
                is_const: e.is_const,
                counter: e.counter,
            })
            .collect())
    }

    /// Find the handle of the entry with exactly these matches (and
    /// priority, for priority tables).
    pub fn find_entry(
        &self,
        table: &str,
        matches: &[KeyMatch],
        priority: Option<u32>,
    ) -> Result<Option<EntryHandle>, ControlPlaneError> {
        let t = &self.engine.rt.tables[self.table_index(table)?];
        let keys = t.normalize(matches)?;
        Ok(t.iter()
            .find(|(_, e)| {
                *e.keys == *keys && (!t.needs_priority() || Some(e.priority) == priority)
            })
            .map(|(h, _)| h))
    }

    /// The direct counter cell of an entry.
    pub fn direct_counter_read(
        &self,
        table: &str,
        handle: EntryHandle,
    ) -> Result<CounterCell, ControlPlaneError> {
        let t = &self.engine.rt.tables[self.table_index(table)?];
        t.entry(handle.0)
            .map(|e| e.counter)
            .ok_or(ControlPlaneError::NoSuchEntry {
                table: t.name.clone(),
                handle: handle.0,
            })
    }

    fn extern_index(&self, name: &str) -> Result<usize, ControlPlaneError> {
        resolve(
            "extern",
            self.engine.rt.extern_names.iter().map(String::as_str),
            name,
        )
    }

    fn wrong(&self, i: usize, expected: &'static str) -> ControlPlaneError {
        ControlPlaneError::WrongKind {
            name: self.engine.rt.extern_names[i].clone(),
            expected,
            found: self.engine.rt.externs[i].kind_name(),
        }
    }

    /// Read a register cell.
    pub fn register_read(&self, name: &str, index: u64) -> Result<u128, ControlPlaneError> {
        let i = self.extern_index(name)?;
        match &self.engine.rt.externs[i] {
            ExternRt::Register(r) => {
                r.read(index)
                    .map_err(|_| ControlPlaneError::IndexOutOfRange {
                        name: self.engine.rt.extern_names[i].clone(),
                        index,
                        size: r.len(),
                    })
            }
            _ => Err(self.wrong(i, "register")),
        }
    }

    /// Write a register cell (the value must fit the cell width).
    pub fn register_write(
        &mut self,
        name: &str,
        index: u64,
        value: u128,
    ) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let n = self.engine.rt.extern_names[i].clone();
        let wrong = self.wrong(i, "register");
        match &mut self.engine.rt.externs[i] {
            ExternRt::Register(r) => {
                if value & !mask128(r.width()) != 0 {
                    return Err(ControlPlaneError::RegisterTooWide {
                        name: n,
                        value,
                        width: r.width(),
                    });
                }
                let size = r.len();
                r.write(index, value)
                    .map_err(|_| ControlPlaneError::IndexOutOfRange {
                        name: n,
                        index,
                        size,
                    })
            }
            _ => Err(wrong),
        }
    }

    /// Zero every cell of a register.
    pub fn register_reset(&mut self, name: &str) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let wrong = self.wrong(i, "register");
        match &mut self.engine.rt.externs[i] {
            ExternRt::Register(r) => {
                r.reset();
                Ok(())
            }
            _ => Err(wrong),
        }
    }

    /// Read a counter cell (indexed counters; direct counters: use
    /// [`Switch::direct_counter_read`]).
    pub fn counter_read(&self, name: &str, index: u64) -> Result<CounterCell, ControlPlaneError> {
        let i = self.extern_index(name)?;
        match &self.engine.rt.externs[i] {
            ExternRt::Counter(c) => c
                .read(index)
                .map_err(|_| ControlPlaneError::IndexOutOfRange {
                    name: self.engine.rt.extern_names[i].clone(),
                    index,
                    size: c.len(),
                }),
            _ => Err(self.wrong(i, "counter")),
        }
    }

    /// Zero a counter (indexed, or a table's direct counter).
    pub fn counter_reset(&mut self, name: &str) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let wrong = self.wrong(i, "counter");
        match self.engine.rt.externs[i].clone() {
            ExternRt::Counter(_) => {
                if let ExternRt::Counter(c) = &mut self.engine.rt.externs[i] {
                    c.reset();
                }
                Ok(())
            }
            ExternRt::DirectCounter { table } => {
                for e in self.engine.rt.tables[table as usize]
                    .entries
                    .iter_mut()
                    .flatten()
                {
                    e.counter = CounterCell::default();
                }
                Ok(())
            }
            _ => Err(wrong),
        }
    }

    /// Set meter rates: an indexed meter's cell `index` (or every cell when
    /// `None`), or a direct meter's entry (`index` = entry handle).
    pub fn meter_set_rates(
        &mut self,
        name: &str,
        index: Option<u64>,
        rates: MeterRates,
    ) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let n = self.engine.rt.extern_names[i].clone();
        let wrong = self.wrong(i, "meter");
        let merr = |e: netsparse_externs::meter::MeterError| ControlPlaneError::Meter {
            name: n.clone(),
            detail: e.to_string(),
        };
        match &mut self.engine.rt.externs[i] {
            ExternRt::Meter(m) => match index {
                Some(ix) => m.set_rates(ix, rates).map_err(merr),
                None => m.set_all_rates(rates).map_err(merr),
            },
            ExternRt::DirectMeter { table } => {
                let t = &mut self.engine.rt.tables[*table as usize];
                let tname = t.name.clone();
                match index {
                    Some(h) => {
                        let e = u32::try_from(h).ok().and_then(|h| t.entry_mut(h)).ok_or(
                            ControlPlaneError::NoSuchEntry {
                                table: tname,
                                handle: h as u32,
                            },
                        )?;
                        match e.meter.as_mut() {
                            Some(m) => m.set_rates(rates).map_err(merr),
                            None => Ok(()),
                        }
                    }
                    None => {
                        for e in t.entries.iter_mut().flatten() {
                            if let Some(m) = e.meter.as_mut() {
                                m.set_rates(rates).map_err(merr)?;
                            }
                        }
                        Ok(())
                    }
                }
            }
            _ => Err(wrong),
        }
    }

    /// Mirror session `session` sends clones to `port` (BMv2 `mirroring_add`).
    pub fn mirroring_add(&mut self, session: u32, port: u32) -> Result<(), ControlPlaneError> {
        self.mirroring_set(session, &[Replica { port, rid: 0 }])
    }

    /// Mirror session `session` sends a clone to each replica (P4Runtime
    /// clone session entries).
    pub fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        for r in replicas {
            check_port(r.port)?;
        }
        self.mirror.insert(session, replicas.to_vec());
        Ok(())
    }

    /// Remove a mirror session.
    pub fn mirroring_delete(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        self.mirror
            .remove(&session)
            .map(|_| ())
            .ok_or_else(|| ControlPlaneError::Replication(format!("no mirror session {session}")))
    }

    /// Create an empty multicast group (BMv2 `mc_mgrp_create`).
    pub fn mc_group_create(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        if group == 0 {
            return Err(ControlPlaneError::Replication(
                "multicast group 0 means no multicast".into(),
            ));
        }
        if self.mc_groups.contains_key(&group) {
            return Err(ControlPlaneError::Replication(format!(
                "multicast group {group} already exists"
            )));
        }
        self.mc_groups.insert(group, Vec::new());
        self.rebuild_mc(group);
        Ok(())
    }

    /// Delete a multicast group.
    pub fn mc_group_delete(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        self.mc_groups
            .remove(&group)
            .ok_or_else(|| ControlPlaneError::Replication(format!("no multicast group {group}")))?;
        self.mc_cache.remove(&group);
        Ok(())
    }

    /// Create a multicast node: replication id `rid` on `ports`.
    pub fn mc_node_create(
        &mut self,
        rid: u16,
        ports: &[u32],
    ) -> Result<McNodeHandle, ControlPlaneError> {
        for p in ports {
            check_port(*p)?;
        }
        let mut ports = ports.to_vec();
        ports.sort_unstable();
        ports.dedup();
        self.mc_nodes.push(Some(McNode { rid, ports }));
        Ok(McNodeHandle((self.mc_nodes.len() - 1) as u32))
    }

    /// Attach a node to a group.
    pub fn mc_node_associate(
        &mut self,
        group: u16,
        node: McNodeHandle,
    ) -> Result<(), ControlPlaneError> {
        if self
            .mc_nodes
            .get(node.0 as usize)
            .is_none_or(Option::is_none)
        {
            return Err(ControlPlaneError::Replication(format!(
                "no multicast node {}",
                node.0
            )));
        }
        let g = self
            .mc_groups
            .get_mut(&group)
            .ok_or_else(|| ControlPlaneError::Replication(format!("no multicast group {group}")))?;
        if !g.contains(&node.0) {
            g.push(node.0);
        }
        self.rebuild_mc(group);
        Ok(())
    }

    /// Detach a node from a group.
    pub fn mc_node_dissociate(
        &mut self,
        group: u16,
        node: McNodeHandle,
    ) -> Result<(), ControlPlaneError> {
        let g = self
            .mc_groups
            .get_mut(&group)
            .ok_or_else(|| ControlPlaneError::Replication(format!("no multicast group {group}")))?;
        g.retain(|n| *n != node.0);
        self.rebuild_mc(group);
        Ok(())
    }

    /// Replace a group's replicas (P4Runtime multicast group entries):
    /// creates the group if needed, one node per distinct rid.
    pub fn mc_group_set(
        &mut self,
        group: u16,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        if group == 0 {
            return Err(ControlPlaneError::Replication(
                "multicast group 0 means no multicast".into(),
            ));
        }
        let mut by_rid: std::collections::BTreeMap<u16, Vec<u32>> = Default::default();
        for r in replicas {
            check_port(r.port)?;
            by_rid.entry(r.rid).or_default().push(r.port);
        }
        let mut nodes = Vec::new();
        for (rid, ports) in by_rid {
            nodes.push(self.mc_node_create(rid, &ports)?.0);
        }
        self.mc_groups.insert(group, nodes);
        self.rebuild_mc(group);
        Ok(())
    }

    fn rebuild_mc(&mut self, group: u16) {
        let mut reps = Vec::new();
        if let Some(nodes) = self.mc_groups.get(&group) {
            for n in nodes {
                if let Some(Some(node)) = self.mc_nodes.get(*n as usize) {
                    reps.extend(node.ports.iter().map(|&port| Replica {
                        port,
                        rid: node.rid,
                    }));
                }
            }
        }
        self.mc_cache.insert(group, reps);
    }

    /// The (port, rid) copies group `group` makes, in order.
    pub fn mc_group_replicas(&self, group: u16) -> Option<&[Replica]> {
        self.mc_cache.get(&group).map(Vec::as_slice)
    }

    /// Collect the digests sent by the data plane since the last call.
    pub fn take_digests(&mut self) -> Vec<DigestMsg> {
        self.engine.rt.digests.drain(..).collect()
    }
}

fn check_port(port: u32) -> Result<(), ControlPlaneError> {
    if port >= crate::v1model::DROP_PORT {
        return Err(ControlPlaneError::Replication(format!(
            "port {port} out of range (0..=510)"
        )));
    }
    Ok(())
}
