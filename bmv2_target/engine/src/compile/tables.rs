//! Tables: keys, action lists, hidden `hit`/`action_run` slots, default
//! actions, direct counters and meters, size limits, and the program's
//! const entries inserted through the same checks as control-plane ones.

use netsparse_externs::artifact::{Action, Artifact, Entry, ExternKind};

use super::*;
use crate::code::*;
use crate::error::LoadError;
use crate::tables::{KeySpec, TableActionInfo, TableRt};
use crate::word::mask128;

use super::cx::*;

/// Executable tables and their run-time state, by table id.
pub(super) fn tables(cx: &mut Cx<'_>) -> Result<(Vec<CTable>, Vec<TableRt>), LoadError> {
    let a = cx.a;
    let mut ctables = Vec::with_capacity(a.tables.len());
    let mut rtables = Vec::with_capacity(a.tables.len());
    cx.ctx = Ctx::Control;
    for (ti, t) in a.tables.iter().enumerate() {
        cx.place = format!("table {}", t.name);
        if t.keys.len() > MAX_TABLE_KEYS {
            return Err(cx.unsupported(format!("{} keys (max {MAX_TABLE_KEYS})", t.keys.len())));
        }
        if t.size > MAX_TABLE_SIZE {
            return Err(cx.unsupported(format!("size {} (max {MAX_TABLE_SIZE})", t.size)));
        }
        let mut keys = Vec::with_capacity(t.keys.len());
        let mut specs = Vec::with_capacity(t.keys.len());
        for k in &t.keys {
            cx.check_width(k.width, &format!("key {}", k.name))?;
            keys.push(cx.expr_w(&k.expr, k.width, &format!("key {}", k.name))?);
            specs.push(KeySpec {
                name: k.name.clone(),
                width: k.width,
                kind: k.match_kind,
            });
        }
        let mut acts = Vec::with_capacity(t.actions.len());
        for ta in &t.actions {
            if ta.action.index() >= a.actions.len() {
                return Err(cx.invalid(format!("action id {} out of range", ta.action.0)));
            }
            acts.push(TableActionInfo {
                action: ta.action.0,
                name: ta.name.clone(),
                default_only: ta.default_only,
                table_only: ta.table_only,
            });
        }
        if cx.field(t.hit)?.width != 1 {
            return Err(cx.invalid("hit slot is not 1 bit wide"));
        }
        let hit = cx.nslot(t.hit)?;
        let action_run = cx.nslot(t.action_run)?;
        if (a.actions.len() as u64).saturating_sub(1) > action_run.mask {
            return Err(cx.invalid("action_run slot too narrow for the action ids"));
        }
        let da = &t.default_action;
        if !t.actions.iter().any(|x| x.action == da.action) {
            return Err(cx.invalid("the default action is not in the table's action list"));
        }
        check_args(cx, &a.actions[da.action.index()], &da.args)?;
        let mut rt = TableRt::new(
            t.name.clone(),
            specs.into_boxed_slice(),
            acts.into_boxed_slice(),
            t.size,
            da.action.0,
            da.args.clone().into_boxed_slice(),
        );
        rt.default_const = da.is_const;
        for (what, ext, want) in [
            ("direct counter", t.direct_counter, true),
            ("direct meter", t.direct_meter, false),
        ] {
            if let Some(e) = ext {
                match a.externs.get(e.index()).map(|x| &x.kind) {
                    Some(ExternKind::DirectCounter { table, .. })
                        if want && table.index() == ti =>
                    {
                        rt.direct_counter = Some(e.0);
                    }
                    Some(ExternKind::DirectMeter { table, unit })
                        if !want && table.index() == ti =>
                    {
                        rt.direct_meter = Some((e.0, *unit));
                    }
                    _ => {
                        return Err(cx.invalid(format!(
                            "{what} extern id {} does not belong to this table",
                            e.0
                        )))
                    }
                }
            }
        }
        let n = t.entries.len();
        for (i, e) in t.entries.iter().enumerate() {
            insert_program_entry(cx, &mut rt, a, e, i, n)?;
        }
        rt.entries_const = t.entries_const;
        rtables.push(rt);
        ctables.push(CTable {
            name: t.name.clone(),
            keys: keys.into_boxed_slice(),
            hit,
            action_run,
        });
    }

    Ok((ctables, rtables))
}

pub(super) fn compile_action(cx: &mut Cx<'_>, act: &Action) -> Result<CAction, LoadError> {
    let mut params = Vec::with_capacity(act.params.len());
    for p in &act.params {
        let f = cx.field(p.field)?;
        if f.width != p.width {
            return Err(cx.invalid(format!(
                "parameter {} is {} bits but its slot is {} bits",
                p.name, p.width, f.width
            )));
        }
        params.push((f.loc, f.width));
    }
    cx.ctx = Ctx::Action;
    let body = cx.block(&act.body)?;
    cx.ctx = Ctx::Control;
    Ok(CAction {
        name: act.name.clone(),
        params: params.into_boxed_slice(),
        param_names: act.params.iter().map(|p| p.name.clone()).collect(),
        body,
    })
}

pub(super) fn check_args(cx: &Cx<'_>, act: &Action, args: &[u128]) -> Result<(), LoadError> {
    if args.len() != act.params.len() {
        return Err(cx.invalid(format!(
            "action {} takes {} arguments, {} given",
            act.name,
            act.params.len(),
            args.len()
        )));
    }
    for (p, v) in act.params.iter().zip(args) {
        if v & !mask128(p.width) != 0 {
            return Err(cx.invalid(format!(
                "argument {v:#x} does not fit parameter {} of {} ({} bits)",
                p.name, act.name, p.width
            )));
        }
    }
    Ok(())
}

pub(super) fn insert_program_entry(
    cx: &Cx<'_>,
    rt: &mut TableRt,
    a: &Artifact,
    e: &Entry,
    i: usize,
    n: usize,
) -> Result<(), LoadError> {
    let err = |d: String| LoadError::Invalid {
        detail: format!("entry {i}: {d}"),
        place: cx.place.clone(),
    };
    if !rt.actions.iter().any(|x| x.action == e.action.0) {
        return Err(err("action not in the table's action list".into()));
    }
    check_args(cx, &a.actions[e.action.index()], &e.args).map_err(|x| err(x.to_string()))?;
    let keys = rt.normalize(&e.keys).map_err(|x| err(x.to_string()))?;
    let prio = if rt.needs_priority() {
        // Explicit priorities as given (higher wins); entries without one
        // rank by position, earlier first, as p4c and BMv2 do for const
        // entries.
        e.priority.unwrap_or((n - i) as u32)
    } else {
        0
    };
    // Duplicates among program entries: the first one wins (later ones are
    // unreachable); report them as invalid.
    rt.insert(
        keys,
        e.action.0,
        e.args.clone().into_boxed_slice(),
        prio,
        true,
    )
    .map_err(|x| err(x.to_string()))?;
    Ok(())
}
