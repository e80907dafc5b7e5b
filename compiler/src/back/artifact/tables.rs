//! Actions (named per instance, bodies lowered once) and tables: keys,
//! action lists, default actions, const entries, direct resources.

use netsparse_externs::artifact::{self as a, ActionId, ExternId, FieldKind, TableId};

use crate::ir::{self, Handle};

use super::storage::wide_parts;
use super::*;

impl Lower<'_> {
    // ----- actions and tables ------------------------------------------------------------

    pub(super) fn action_name(&self, idx: usize, act: &ir::Action) -> String {
        match &act.cp_name {
            Some(n) if n.starts_with('.') => n[1..].to_string(),
            Some(n) if act.owner.is_some() => join(&self.insts[idx].path, n),
            Some(n) => n.clone(),
            None if act.owner.is_some() => join(&self.insts[idx].path, &act.name),
            None => act.name.clone(),
        }
    }

    /// Lower an action once per instance (top-level actions once, in instance 0).
    pub(super) fn action(&mut self, idx: usize, h: Handle<ir::Action>) -> ActionId {
        let act = &self.m.actions[h];
        let idx = if act.owner.is_none() { 0 } else { idx };
        if let Some(id) = self.insts[idx].actions.get(&h) {
            return *id;
        }
        let name = self.action_name(idx, act);
        let p4rt_id = act.p4rt_id;
        let mut params = Vec::new();
        for p in &act.params {
            let var = &self.m.vars[*p];
            let data = var.kind == ir::VarKind::Param(None);
            let kind = if data {
                FieldKind::ActionParam
            } else {
                FieldKind::Local
            };
            let place = self.alloc(&format!("{name}.{}", var.name), &var.ty, kind);
            match (data, &place) {
                (true, Place::Scalar(f)) => params.push(a::ActionParam {
                    name: var.name.clone(),
                    field: *f,
                    width: self.fields[f.index()].width,
                }),
                // A parameter over 128 bits: one control-plane parameter
                // per 128-bit part, `p$0` (most significant) to `p$n`.
                (true, Place::Wide(fs)) => {
                    for (k, f) in fs.iter().enumerate() {
                        params.push(a::ActionParam {
                            name: format!("{}${k}", var.name),
                            field: *f,
                            width: self.fields[f.index()].width,
                        });
                    }
                }
                _ => {}
            }
            self.insts[idx].vars.insert(*p, place);
        }
        // Two different actions with one control-plane name (`@name(".x")`
        // on both): the control plane could not tell them apart. The same
        // action in two instances under an absolute name is one action.
        if let Some(other) = self
            .actions
            .iter()
            .zip(&self.action_origins)
            .find(|(o, oh)| o.name == name && **oh != h)
            .map(|(_, oh)| *oh)
        {
            let d = Diagnostic::error(
                codes::DUPLICATE,
                format!("two actions have the control-plane name `{name}`"),
                act.span,
            )
            .with_secondary(self.m.actions[other].span, "the other action of that name")
            .with_hint("give each action its own @name");
            self.diags.push(d);
        }
        // Reserve the id first: the body cannot call itself (P4 has no recursion).
        let id = ActionId(u32_of(self.actions.len()));
        self.actions.push(a::Action {
            name,
            p4rt_id,
            params,
            body: Vec::new(),
        });
        self.action_origins.push(h);
        self.insts[idx].actions.insert(h, id);
        let saved = self.region;
        if act.owner.is_none() {
            self.region = Region::Outside;
        }
        let body = self.block(idx, &act.body.stmts);
        self.region = saved;
        self.actions[id.index()].body = body;
        id
    }

    pub(super) fn table(&mut self, idx: usize, h: Handle<ir::Table>) -> Option<TableId> {
        let t = &self.m.tables[h];
        let name = match &t.cp_name {
            Some(n) if n.starts_with('.') => n[1..].to_string(),
            Some(n) => join(&self.insts[idx].path, n),
            None => join(&self.insts[idx].path, &t.name),
        };
        let mut keys = Vec::new();
        let mut wide_key = false;
        for k in &t.keys {
            let mut pre = Vec::new();
            if k.width > a::MAX_WIDTH {
                // A key over 128 bits: one key per 128-bit part, `k$0` (most
                // significant) to `k$n`, matched together.
                if !matches!(k.match_kind, a::MatchKind::Exact | a::MatchKind::Ternary) {
                    let kind = format!("{:?}", k.match_kind).to_lowercase();
                    self.wide_refused(
                        &format!("a `{kind}` key of {} bits", k.width),
                        "a key over 128 bits may be exact or ternary (a prefix is a ternary \
                         mask); or key on a slice of at most 128 bits",
                        k.span,
                    );
                    continue;
                }
                wide_key = true;
                let ps = self.parts(idx, &k.expr, &mut pre)?;
                if !pre.is_empty() {
                    self.inexpressible("a table key with a call in it", k.span);
                    return None;
                }
                for (j, (e, pw)) in ps.into_iter().zip(wide_parts(k.width)).enumerate() {
                    keys.push(a::TableKey {
                        name: format!("{}${j}", k.name),
                        expr: e,
                        width: pw,
                        match_kind: k.match_kind,
                    });
                }
                continue;
            }
            let e = self.expr(idx, &k.expr, &mut pre)?;
            if !pre.is_empty() {
                self.inexpressible("a table key with a call in it", k.span);
                return None;
            }
            keys.push(a::TableKey {
                name: k.name.clone(),
                expr: e,
                width: k.width,
                match_kind: k.match_kind,
            });
        }
        if wide_key && !t.entries.is_empty() {
            self.wide_refused(
                "`entries` of a table with a key over 128 bits",
                "add the entries from the control plane, which takes wide values whole",
                t.span,
            );
        }
        let mut actions = Vec::new();
        for ta in &t.actions {
            let base = self.action(idx, ta.action);
            let act = &self.m.actions[ta.action];
            let owner_idx = if act.owner.is_none() { 0 } else { idx };
            let cp = self.action_name(owner_idx, act);
            let id = if ta.bound.is_empty() {
                base
            } else {
                // A specialisation: copy the bound arguments in, run the action, copy out.
                let params: Vec<Handle<ir::Var>> = act
                    .params
                    .iter()
                    .copied()
                    .filter(|p| self.m.vars[*p].kind != ir::VarKind::Param(None))
                    .collect();
                let mut body = Vec::new();
                let mut outs = Vec::new();
                for (p, arg) in params.iter().zip(&ta.bound) {
                    let place = self.var_place(owner_idx, *p);
                    let ty = self.m.vars[*p].ty.clone();
                    self.copy_in(idx, &place, &ty, arg, &mut body, &mut outs)?;
                }
                body.push(a::Stmt::CallAction { action: base });
                self.copy_out(&outs, &mut body);
                let id = ActionId(u32_of(self.actions.len()));
                let data = self.actions[base.index()].params.clone();
                let p4rt_id = self.actions[base.index()].p4rt_id;
                self.actions.push(a::Action {
                    name: format!("{cp}${}", self.actions.len()),
                    p4rt_id,
                    params: data,
                    body,
                });
                self.action_origins.push(ta.action);
                id
            };
            actions.push(a::TableAction {
                action: id,
                name: cp,
                default_only: ta.default_only,
                table_only: ta.table_only,
            });
        }
        let default_action = a::DefaultAction {
            action: actions.get(t.default_action)?.action,
            args: self.split_args(t.actions.get(t.default_action)?.action, &t.default_args),
            is_const: t.default_const,
        };
        let entries = t
            .entries
            .iter()
            .filter(|_| !wide_key)
            .filter_map(|e| {
                Some(a::Entry {
                    keys: e.keys.clone(),
                    action: actions.get(e.action)?.action,
                    args: self.split_args(t.actions.get(e.action)?.action, &e.args),
                    priority: e.priority,
                })
            })
            .collect();
        let hit = self.new_field(format!("${name}.hit"), 1, false, FieldKind::Local);
        let action_run = self.new_field(format!("${name}.action_run"), 32, false, FieldKind::Local);
        let tid = TableId(u32_of(self.tables.len()));
        let ext = |i: Option<Handle<ir::Instance>>, me: &mut Self| -> Option<ExternId> {
            match me.lookup_instance(idx, i?)? {
                InstRef::Extern(e) => {
                    match &mut me.externs[e.index()].kind {
                        a::ExternKind::DirectCounter { table, .. }
                        | a::ExternKind::DirectMeter { table, .. } => *table = tid,
                        _ => {}
                    }
                    Some(e)
                }
                InstRef::Control(_) => None,
            }
        };
        let direct_counter = ext(t.direct_counter, self);
        let direct_meter = ext(t.direct_meter, self);
        if let Some(other) = self.tables.iter().position(|o| o.name == name) {
            // Two instances of one control with a table named `@name(".x")`,
            // or two `@name`s alike: the control plane could not tell them
            // apart.
            let d = Diagnostic::error(
                codes::DUPLICATE,
                format!("two tables have the control-plane name `{name}`"),
                t.span,
            );
            let d = if self.table_spans[other] == t.span {
                d.with_note(
                    "the control declaring it is instantiated more than once, and an absolute \
                     @name gives every instance's table the same name",
                )
            } else {
                d.with_secondary(self.table_spans[other], "the other table of that name")
            }
            .with_hint("give each table (or each instance's table) its own @name");
            // Still built, so that its uses raise no errors of their own.
            self.diags.push(d);
        }
        self.tables.push(a::Table {
            name,
            p4rt_id: t.p4rt_id,
            keys,
            actions,
            default_action,
            entries,
            entries_const: t.entries_const,
            size: t.size,
            hit,
            action_run,
            direct_counter,
            direct_meter,
        });
        self.table_spans.push(t.span);
        Some(tid)
    }
}

impl Lower<'_> {
    /// Action arguments as the artifact's parameters: an argument over 128
    /// bits (its low 128 bits sign-extended, as the checker folds it) split
    /// into its 128-bit parts.
    fn split_args(&self, act: Handle<ir::Action>, args: &[u128]) -> Vec<u128> {
        let data: Vec<u16> = self.m.actions[act]
            .params
            .iter()
            .filter(|p| self.m.vars[**p].kind == ir::VarKind::Param(None))
            .map(|p| self.m.scalar_width(&self.m.vars[*p].ty).unwrap_or(1))
            .collect();
        if data.len() != args.len() || data.iter().all(|w| *w <= a::MAX_WIDTH) {
            return args.to_vec();
        }
        let mut out = Vec::new();
        for (v, w) in args.iter().zip(data) {
            if w <= a::MAX_WIDTH {
                out.push(*v);
                continue;
            }
            let ext = if v >> 127 != 0 { u128::MAX } else { 0 };
            let ps = wide_parts(w);
            let n = ps.len();
            for (k, pw) in ps.into_iter().enumerate() {
                let x = if k + 1 == n { *v } else { ext };
                out.push(x & crate::check::consts::mask(pw));
            }
        }
        out
    }
}
