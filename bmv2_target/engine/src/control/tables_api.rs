//! The table half of the control plane, on the engine itself, so that every
//! target built on the engine (the v1model switch,
//! the NIC's [`Program`](crate::program::Program), the NetSparse switch's
//! pipes) applies one set of rules: name resolution, const entries and
//! defaults, `@defaultonly`/`@tableonly`, P4Runtime priorities, parameter
//! counts and widths.

use netsparse_externs::artifact::{KeyMatch, MatchKind};
use netsparse_externs::stateful::CounterCell;

use super::{resolve, ActionInfo, DefaultEntry, EntryView, TableInfo};
use crate::error::ControlPlaneError;
use crate::tables::{EntryHandle, EntryRec, TableRt};
use crate::word::mask128;
use crate::Engine;

impl Engine {
    /// Resolve a table by full name or unique suffix.
    pub fn table_index(&self, name: &str) -> Result<usize, ControlPlaneError> {
        resolve(
            "table",
            self.rt.tables.iter().map(|t| t.name.as_str()),
            name,
        )
    }

    /// Fully-qualified names of every table.
    pub fn table_names(&self) -> Vec<String> {
        self.rt.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// Describe a table (keys, actions with parameters, priority rule).
    pub fn table_info(&self, table: &str) -> Result<TableInfo, ControlPlaneError> {
        let t = &self.rt.tables[self.table_index(table)?];
        Ok(TableInfo {
            name: t.name.clone(),
            keys: t.keys.to_vec(),
            actions: t
                .actions
                .iter()
                .map(|a| {
                    let ca = &self.code.actions[a.action as usize];
                    ActionInfo {
                        name: a.name.clone(),
                        params: ca
                            .param_names
                            .iter()
                            .zip(ca.params.iter())
                            .map(|(n, (_, w))| (n.clone(), *w))
                            .collect(),
                        default_only: a.default_only,
                        table_only: a.table_only,
                    }
                })
                .collect(),
            needs_priority: t.needs_priority(),
            size: t.size,
            len: t.live,
        })
    }

    /// Resolve an action of table `ti` (an index into the table's action
    /// list): by the table's control-plane names first, then by the
    /// actions' own names.
    pub fn table_action(&self, ti: usize, action: &str) -> Result<usize, ControlPlaneError> {
        let t = &self.rt.tables[ti];
        let by_table_name = resolve("action", t.actions.iter().map(|a| a.name.as_str()), action);
        match by_table_name {
            Ok(i) => Ok(i),
            Err(ControlPlaneError::Ambiguous { .. }) => by_table_name,
            Err(_) => resolve(
                "action",
                t.actions
                    .iter()
                    .map(|a| self.code.actions[a.action as usize].name.as_str()),
                action,
            )
            .map_err(|e| match e {
                ControlPlaneError::Ambiguous { .. } => e,
                _ => ControlPlaneError::NoSuchAction {
                    table: t.name.clone(),
                    action: action.to_owned(),
                    allowed: t.actions.iter().map(|a| a.name.clone()).collect(),
                },
            }),
        }
    }

    /// Check `args` against action `ai` of table `ti`; returns the action's
    /// code id.
    pub fn check_args(
        &self,
        ti: usize,
        ai: usize,
        args: &[u128],
    ) -> Result<u32, ControlPlaneError> {
        let t = &self.rt.tables[ti];
        let id = t.actions[ai].action;
        let ca = &self.code.actions[id as usize];
        if args.len() != ca.params.len() {
            return Err(ControlPlaneError::ParamCount {
                table: t.name.clone(),
                action: t.actions[ai].name.clone(),
                expected: ca.params.len(),
                got: args.len(),
            });
        }
        for ((v, (_, w)), n) in args.iter().zip(ca.params.iter()).zip(ca.param_names.iter()) {
            if v & !mask128(*w) != 0 {
                return Err(ControlPlaneError::ParamTooWide {
                    action: t.actions[ai].name.clone(),
                    param: n.clone(),
                    value: *v,
                    width: *w,
                });
            }
        }
        Ok(id)
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
        let ti = self.table_index(table)?;
        let ai = self.table_action(ti, action)?;
        let t = &self.rt.tables[ti];
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
        let prio = match (t.needs_priority(), priority) {
            (true, Some(p)) => p,
            (true, None) => {
                return Err(ControlPlaneError::PriorityRequired {
                    table: t.name.clone(),
                })
            }
            (false, None | Some(0)) => 0,
            (false, Some(_)) => {
                return Err(ControlPlaneError::PriorityNotAllowed {
                    table: t.name.clone(),
                })
            }
        };
        let keys = t.normalize(matches)?;
        let id = self.check_args(ti, ai, args)?;
        self.rt.tables[ti].insert(keys, id, args.into(), prio, false)
    }

    /// Delete every entry the control plane added (an error on tables whose
    /// entries are `const`).
    pub fn clear_table(&mut self, table: &str) -> Result<(), ControlPlaneError> {
        let ti = self.table_index(table)?;
        let t = &mut self.rt.tables[ti];
        if t.entries_const {
            return Err(ControlPlaneError::ConstEntries {
                table: t.name.clone(),
            });
        }
        t.clear();
        Ok(())
    }

    /// Set a table's default action.
    pub fn set_default(
        &mut self,
        table: &str,
        action: &str,
        args: &[u128],
    ) -> Result<(), ControlPlaneError> {
        let ti = self.table_index(table)?;
        let ai = self.table_action(ti, action)?;
        let t = &self.rt.tables[ti];
        if t.default_const {
            return Err(ControlPlaneError::ConstDefault {
                table: t.name.clone(),
            });
        }
        if t.actions[ai].table_only {
            return Err(ControlPlaneError::TableOnly {
                table: t.name.clone(),
                action: t.actions[ai].name.clone(),
            });
        }
        let id = self.check_args(ti, ai, args)?;
        let t = &mut self.rt.tables[ti];
        t.default_action = id;
        t.default_args = args.into();
        Ok(())
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
                None if k.kind == MatchKind::Exact => {
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
        let t = &self.rt.tables[ti];
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
        let t = &mut self.rt.tables[ti];
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
        let t = &mut self.rt.tables[ti];
        if t.entries_const {
            return Err(ControlPlaneError::ConstEntries {
                table: t.name.clone(),
            });
        }
        t.remove(handle.0).map(|_| ())
    }

    /// The control-plane name of action `action` in table `t` (the name
    /// the table lists it under, else the action's own).
    fn table_action_name(&self, t: &TableRt, action: u32) -> String {
        t.actions.iter().find(|a| a.action == action).map_or_else(
            || self.code.actions[action as usize].name.clone(),
            |a| a.name.clone(),
        )
    }

    fn view(&self, t: &TableRt, h: EntryHandle, e: &EntryRec) -> EntryView {
        EntryView {
            handle: h,
            matches: e.keys.to_vec(),
            action: self.table_action_name(t, e.action),
            args: e.args.to_vec(),
            priority: e.priority,
            is_const: e.is_const,
            counter: e.counter,
        }
    }

    /// The installed entries of a table, in handle order.
    pub fn entries(&self, table: &str) -> Result<Vec<EntryView>, ControlPlaneError> {
        let t = &self.rt.tables[self.table_index(table)?];
        Ok(t.iter().map(|(h, e)| self.view(t, h, e)).collect())
    }

    /// One installed entry, by handle.
    pub fn entry(&self, table: &str, handle: EntryHandle) -> Result<EntryView, ControlPlaneError> {
        let t = &self.rt.tables[self.table_index(table)?];
        t.entry(handle.0)
            .map(|e| self.view(t, handle, e))
            .ok_or(ControlPlaneError::NoSuchEntry {
                table: t.name.clone(),
                handle: handle.0,
            })
    }

    /// A table's default entry: its action (control-plane name), the
    /// action data, and whether the program made it `const`.
    pub fn default_entry(&self, table: &str) -> Result<DefaultEntry, ControlPlaneError> {
        let t = &self.rt.tables[self.table_index(table)?];
        Ok(DefaultEntry {
            action: self.table_action_name(t, t.default_action),
            args: t.default_args.to_vec(),
            is_const: t.default_const,
        })
    }

    /// Find the handle of the entry with exactly these matches (and
    /// priority, for priority tables).
    pub fn find_entry(
        &self,
        table: &str,
        matches: &[KeyMatch],
        priority: Option<u32>,
    ) -> Result<Option<EntryHandle>, ControlPlaneError> {
        let t = &self.rt.tables[self.table_index(table)?];
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
        let t = &self.rt.tables[self.table_index(table)?];
        t.entry(handle.0)
            .map(|e| e.counter)
            .ok_or(ControlPlaneError::NoSuchEntry {
                table: t.name.clone(),
                handle: handle.0,
            })
    }
    /// Overwrite the direct counter cell of an entry (P4Runtime MODIFY of
    /// a `DirectCounterEntry`; restoring it when a batch is rolled back).
    pub fn direct_counter_write(
        &mut self,
        table: &str,
        handle: EntryHandle,
        cell: CounterCell,
    ) -> Result<(), ControlPlaneError> {
        let ti = self.table_index(table)?;
        let t = &mut self.rt.tables[ti];
        let name = t.name.clone();
        let e = t
            .entry_mut(handle.0)
            .ok_or(ControlPlaneError::NoSuchEntry {
                table: name,
                handle: handle.0,
            })?;
        e.counter = cell;
        Ok(())
    }
}
