//! The table half of the control plane, on the engine itself, so that every
//! target built on the engine (the v1model [`Switch`](crate::v1model::Switch),
//! the NIC's [`Program`](crate::program::Program), the NetSparse switch's
//! pipes) applies one set of rules: name resolution, const entries and
//! defaults, `@defaultonly`/`@tableonly`, P4Runtime priorities, parameter
//! counts and widths.

use netsparse_externs::artifact::KeyMatch;

use super::{resolve, ActionInfo, TableInfo};
use crate::engine::word::mask128;
use crate::engine::Engine;
use crate::error::ControlPlaneError;
use crate::tables::EntryHandle;

impl Engine {
    /// Resolve a table by full name or unique suffix.
    pub(crate) fn table_index(&self, name: &str) -> Result<usize, ControlPlaneError> {
        resolve(
            "table",
            self.rt.tables.iter().map(|t| t.name.as_str()),
            name,
        )
    }

    /// Fully-qualified names of every table.
    pub(crate) fn table_names(&self) -> Vec<String> {
        self.rt.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// Describe a table (keys, actions with parameters, priority rule).
    pub(crate) fn table_info(&self, table: &str) -> Result<TableInfo, ControlPlaneError> {
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
    pub(crate) fn table_action(&self, ti: usize, action: &str) -> Result<usize, ControlPlaneError> {
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
    pub(crate) fn check_args(
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
    pub(crate) fn add_entry(
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
    pub(crate) fn clear_table(&mut self, table: &str) -> Result<(), ControlPlaneError> {
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
    pub(crate) fn set_default(
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
}
