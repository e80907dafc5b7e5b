//! Statements: blocks, assignments, conditionals, switch, loops, header
//! invalidation (and the header_union rule: one valid member).

use netsparse_externs::artifact::{self as a, HeaderId, HeaderRef, LValue};

use crate::ir::{self, ExprKind, StmtKind, SwitchLabel, TableResultField, Type};

use super::*;

impl Lower<'_> {
    // ----- statements --------------------------------------------------------------------

    pub(super) fn block(&mut self, idx: usize, stmts: &[ir::Stmt]) -> Vec<a::Stmt> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(idx, s, &mut out);
        }
        out
    }

    pub(super) fn stmt(&mut self, idx: usize, s: &ir::Stmt, out: &mut Vec<a::Stmt>) {
        match &s.kind {
            StmtKind::Assign(dst, src) => {
                let Some(lp) = self.place(idx, dst, out) else {
                    return;
                };
                self.assign(idx, lp.clone(), &dst.ty, src, out);
                // A header_union member that became valid invalidates the others.
                let others = self.union_siblings(idx, dst, out);
                if !others.is_empty() {
                    if let Some(header) = self.href(lp, s.span) {
                        out.push(a::Stmt::If {
                            cond: a::Expr::IsValid { header },
                            then: invalidate_all(&others),
                            otherwise: Vec::new(),
                        });
                    }
                }
            }
            StmtKind::Call(c) => {
                self.call(idx, c, &Type::Void, out);
            }
            StmtKind::If(c, t, e) => {
                let Some(cond) = self.expr(idx, c, out) else {
                    return;
                };
                let then = self.block(idx, &t.stmts);
                let otherwise = self.block(idx, &e.stmts);
                out.push(a::Stmt::If {
                    cond,
                    then,
                    otherwise,
                });
            }
            StmtKind::Switch(sw) => self.switch(idx, sw, out),
            StmtKind::Block(b) => {
                let inner = self.block(idx, &b.stmts);
                out.extend(inner);
            }
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    if let Some(ret) = self.ret_place.clone() {
                        self.assign(idx, LPlace::Static(ret), &v.ty, v, out);
                    }
                }
                out.push(a::Stmt::Return);
            }
            StmtKind::Exit => {
                out.extend(self.exit_copies.iter().cloned());
                out.push(a::Stmt::Exit);
            }
            StmtKind::Loop(l) => {
                // The condition's own statements (calls, temporaries) run
                // before every test: they go at the end of the updates and
                // once before the loop.
                let mut pre = Vec::new();
                let Some(cond) = self.expr(idx, &l.cond, &mut pre) else {
                    return;
                };
                let body = self.block(idx, &l.body.stmts);
                let mut updates = self.block(idx, &l.updates.stmts);
                updates.extend(pre.iter().cloned());
                out.extend(pre);
                out.push(a::Stmt::Loop {
                    cond,
                    body,
                    updates,
                });
            }
            StmtKind::Break => out.push(a::Stmt::Break),
            StmtKind::Continue => out.push(a::Stmt::Continue),
            StmtKind::VarDecl(v, init) => {
                let p = self.var_place(idx, *v);
                let ty = self.m.vars[*v].ty.clone();
                match init {
                    Some(e) => self.assign(idx, LPlace::Static(p), &ty, e, out),
                    None => self.invalidate(&p, out),
                }
            }
        }
    }

    /// The other members of the header_union of which `e` is a member
    /// (`u.a` → the headers of `u` but `a`); empty when `e` is not one.
    pub(super) fn union_siblings(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        out: &mut Vec<a::Stmt>,
    ) -> Vec<HeaderId> {
        let ExprKind::Field(base, i) = &e.kind else {
            return Vec::new();
        };
        let Type::Struct(s) = &base.ty else {
            return Vec::new();
        };
        if !self.m.structs[*s].is_union {
            return Vec::new();
        }
        let Some(LPlace::Static(Place::Struct(ps))) = self.place(idx, base, out) else {
            return Vec::new();
        };
        ps.iter()
            .enumerate()
            .filter(|(j, _)| *j != *i as usize)
            .filter_map(|(_, p)| match p {
                Place::Header(h) => Some(*h),
                _ => None,
            })
            .collect()
    }

    /// Headers in `p` become invalid (uninitialised header variables, `out` parameters).
    pub(super) fn invalidate(&self, p: &Place, out: &mut Vec<a::Stmt>) {
        match p {
            Place::Header(h) => out.push(a::Stmt::SetInvalid {
                header: HeaderRef::Static { header: *h },
            }),
            Place::Struct(ps) => {
                for q in ps {
                    self.invalidate(q, out);
                }
            }
            Place::Stack(s) => {
                for h in &self.stacks[s.index()].elements {
                    out.push(a::Stmt::SetInvalid {
                        header: HeaderRef::Static { header: *h },
                    });
                }
                out.push(a::Stmt::Assign {
                    dst: LValue::Field {
                        field: self.stacks[s.index()].next_index,
                    },
                    src: konst(0, 32, false),
                });
            }
            Place::Scalar(_) | Place::Wide(_) | Place::Packet => {}
        }
    }

    pub(super) fn switch(&mut self, idx: usize, sw: &ir::Switch, out: &mut Vec<a::Stmt>) {
        let (selector, table) = match (&sw.selector.kind, &sw.selector.ty) {
            (ExprKind::TableResult(call, TableResultField::ActionRun), Type::TableResult(t)) => {
                let ExprKind::Call(c) = &call.kind else {
                    return;
                };
                let Some(CallResult::Table(tid)) = self.call(idx, c, &call.ty, out) else {
                    return;
                };
                let field = self.tables[tid.index()].action_run;
                (a::Expr::Field { field }, Some((tid, *t)))
            }
            _ => match self.expr(idx, &sw.selector, out) {
                Some(e) => (e, None),
                None => return,
            },
        };
        let mut cases = Vec::new();
        for c in &sw.cases {
            let mut values = Vec::new();
            for l in &c.labels {
                match (l, table) {
                    (SwitchLabel::Value(v), _) => values.push(*v),
                    (SwitchLabel::Action(act), Some((tid, th))) => {
                        let pos = self.m.tables[th]
                            .actions
                            .iter()
                            .position(|ta| ta.action == *act);
                        if let Some(ta) = pos.and_then(|p| self.tables[tid.index()].actions.get(p))
                        {
                            values.push(u128::from(ta.action.0));
                        }
                    }
                    (SwitchLabel::Action(_), None) => {}
                }
            }
            let body = self.block(idx, &c.body.stmts);
            cases.push(a::SwitchCase { values, body });
        }
        let default = sw
            .default
            .as_ref()
            .map(|d| self.block(idx, &d.stmts))
            .unwrap_or_default();
        out.push(a::Stmt::Switch {
            selector,
            cases,
            default,
        });
    }
}

/// `SetInvalid` of each of `headers`.
pub(super) fn invalidate_all(headers: &[HeaderId]) -> Vec<a::Stmt> {
    headers
        .iter()
        .map(|h| a::Stmt::SetInvalid {
            header: HeaderRef::Static { header: *h },
        })
        .collect()
}
