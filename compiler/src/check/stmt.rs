//! Statements: blocks, local variables, assignments, conditionals,
//! `switch` on table results and values, `return` and `exit`, and the
//! rules on where each statement may appear. Calls are in `call.rs`.

use super::{Checker, Sym};
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{
    self, ExprKind, Handle, Stmt, StmtKind, SwitchLabel, TableResultField, Type, Value, VarKind,
};

impl Checker<'_> {
    /// Check a block in a new scope.
    pub(super) fn block(&mut self, b: &ast::Block) -> ir::Block {
        self.push_scope();
        let stmts = self.stmt_list(&b.stmts);
        self.pop_scope();
        ir::Block { stmts }
    }

    /// Check statements in the current scope.
    pub(super) fn stmt_list(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for s in stmts {
            if let Some(s) = self.stmt(s) {
                out.push(s);
            }
        }
        out
    }

    pub(super) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.ctx.apply_depth;
        self.ctx.apply_depth = saved.map(|d| d + 1);
        let r = f(self);
        self.ctx.apply_depth = saved;
        r
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt) -> Option<Stmt> {
        use ast::StmtKind as K;
        let span = s.span;
        let kind = match &s.kind {
            K::Assign(lhs, rhs) => {
                let l = self.lvalue(lhs, false);
                let l = l?;
                if matches!(
                    l.ty,
                    Type::Extern(..) | Type::TableResult(_) | Type::Control(_) | Type::Parser(_)
                ) {
                    let tn = self.m.type_name(&l.ty);
                    self.err(
                        codes::TYPE_MISMATCH,
                        format!("values of type `{tn}` cannot be assigned"),
                        span,
                    );
                    return None;
                }
                let r = self.expr_as(rhs, &l.ty)?;
                StmtKind::Assign(l, r)
            }
            K::Call(e) => {
                let ast::ExprKind::Call {
                    callee,
                    type_args,
                    args,
                } = &e.kind
                else {
                    self.err(
                        codes::NOT_ALLOWED_HERE,
                        "only calls can be used as statements",
                        e.span,
                    );
                    return None;
                };
                let x = self.call(callee, type_args, args, e.span, true)?;
                match x.kind {
                    ExprKind::Call(c) => StmtKind::Call(*c),
                    // `h.isValid();` has no effect.
                    _ => return None,
                }
            }
            K::If(c, t, e) => {
                let c = self.cond(c);
                let (t, e) = self.nested(|me| {
                    let t = me.stmt_as_block(t);
                    let e = e.as_ref().map(|e| me.stmt_as_block(e)).unwrap_or_default();
                    (t, e)
                });
                StmtKind::If(c?, t, e)
            }
            K::Block(b) => StmtKind::Block(self.nested(|me| me.block(b))),
            K::Switch(sel, cases) => StmtKind::Switch(self.switch(sel, cases, span)?),
            K::Return(v) => self.return_stmt(v.as_ref(), span)?,
            K::Exit => {
                if self.ctx.in_parser || self.ctx.function_ret.is_some() {
                    let d = Diagnostic::error(
                        codes::NOT_ALLOWED_HERE,
                        format!(
                            "`exit` is not allowed in a {}",
                            if self.ctx.in_parser {
                                "parser"
                            } else {
                                "function"
                            }
                        ),
                        span,
                    )
                    .with_hint(if self.ctx.in_parser {
                        "use `transition reject;` to stop parsing"
                    } else {
                        "`exit` may be used in controls and actions"
                    });
                    self.emit(d);
                    return None;
                }
                StmtKind::Exit
            }
            K::Empty => return None,
            K::For(f) => self.for_stmt(f, span)?,
            K::ForIn(f) => self.for_in(f, span)?,
            K::OpAssign(op, lhs, rhs) => self.op_assign(*op, lhs, rhs, span)?,
            K::Break => self.loop_jump(true, span)?,
            K::Continue => self.loop_jump(false, span)?,
            K::Var(v) => {
                let h = self.local_var(v)?;
                let init = match &v.init {
                    Some(e) => {
                        let ty = self.m.vars[h].ty.clone();
                        Some(self.expr_as(e, &ty)?)
                    }
                    None => None,
                };
                self.declare(&v.name, Sym::Var(h));
                StmtKind::VarDecl(h, init)
            }
            K::Const(c) => {
                if let Some((ty, v)) = self.const_decl(c) {
                    self.declare(&c.name, Sym::Const(ty, v));
                }
                return None;
            }
        };
        Some(Stmt { kind, span })
    }

    /// A local variable (not yet declared in scope).
    /// `lhs op= rhs` whose `lhs` calls something: each stack index that
    /// calls is evaluated once into a hidden variable, then the assignment
    /// is `lhs' = lhs' op rhs` on the rewritten `lhs'`.
    fn op_assign(
        &mut self,
        op: ast::BinOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
    ) -> Option<StmtKind> {
        self.push_scope();
        let mut pre = Vec::new();
        let lhs2 = self.hoist_indexes(lhs, &mut pre);
        let out = lhs2.and_then(|l| {
            let value = ast::Expr {
                kind: ast::ExprKind::Binary(op, Box::new(l.clone()), Box::new(rhs.clone())),
                span: l.span.to(rhs.span),
            };
            let assign = ast::Stmt {
                kind: ast::StmtKind::Assign(l, value),
                span,
            };
            self.stmt(&assign)
        });
        self.pop_scope();
        pre.push(out?);
        Some(StmtKind::Block(ir::Block { stmts: pre }))
    }

    /// `e` with every stack index that contains a call replaced by a hidden
    /// variable declared (and initialised) in `pre`.
    fn hoist_indexes(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>) -> Option<ast::Expr> {
        use ast::ExprKind as K;
        let kind = match &e.kind {
            K::Member(b, m) => K::Member(Box::new(self.hoist_indexes(b, pre)?), m.clone()),
            K::Slice(b, hi, lo) => K::Slice(
                Box::new(self.hoist_indexes(b, pre)?),
                hi.clone(),
                lo.clone(),
            ),
            K::Index(b, i) => {
                let b = self.hoist_indexes(b, pre)?;
                let mut x = self.expr(i)?;
                if x.ty == Type::InfInt {
                    x = self.coerce(x, &Type::Bit(32))?;
                }
                let name = ast::Ident {
                    name: format!("$index{}", pre.len()),
                    span: i.span,
                };
                let h = self.m.vars.append(ir::Var {
                    name: name.name.clone(),
                    ty: x.ty.clone(),
                    kind: VarKind::Local,
                    span: i.span,
                });
                self.declare(&name, Sym::Var(h));
                pre.push(Stmt {
                    kind: StmtKind::VarDecl(h, Some(x)),
                    span: i.span,
                });
                K::Index(
                    Box::new(b),
                    Box::new(ast::Expr {
                        kind: K::Name {
                            dot_prefix: false,
                            name,
                        },
                        span: i.span,
                    }),
                )
            }
            k => k.clone(),
        };
        Some(ast::Expr { kind, span: e.span })
    }

    pub(super) fn local_var(&mut self, v: &ast::VarDecl) -> Option<Handle<ir::Var>> {
        let ty = self.resolve_type(&v.ty, &[])?;
        // A tuple of data types is stored like a struct of its elements.
        let tuple_ok = matches!(&ty, Type::List(ts) if ts.iter().all(|t| self.data_type_ok(t)));
        if !self.data_type_ok(&ty) && !tuple_ok {
            let tn = self.m.type_name(&ty);
            let d = Diagnostic::error(
                codes::TYPE_NOT_ALLOWED,
                format!("a variable cannot have type `{tn}`"),
                v.ty.span,
            );
            self.emit(d);
            return None;
        }
        Some(self.m.vars.append(ir::Var {
            name: v.name.name.clone(),
            ty,
            kind: VarKind::Local,
            span: v.name.span,
        }))
    }

    pub(super) fn stmt_as_block(&mut self, s: &ast::Stmt) -> ir::Block {
        match &s.kind {
            ast::StmtKind::Block(b) => self.block(b),
            _ => {
                self.push_scope();
                let st = self.stmt(s);
                self.pop_scope();
                ir::Block {
                    stmts: st.into_iter().collect(),
                }
            }
        }
    }

    pub(super) fn return_stmt(&mut self, v: Option<&ast::Expr>, span: Span) -> Option<StmtKind> {
        if self.ctx.in_parser {
            let d = Diagnostic::error(
                codes::NOT_ALLOWED_HERE,
                "`return` is not allowed in a parser",
                span,
            )
            .with_hint("end a state with a `transition`");
            self.emit(d);
            return None;
        }
        match (&self.ctx.function_ret.clone(), v) {
            (Some(Type::Void), None) | (None, None) => Some(StmtKind::Return(None)),
            (Some(Type::Void), Some(e)) | (None, Some(e)) => {
                let d = Diagnostic::error(
                    codes::BAD_RETURN,
                    "this `return` gives a value, but there is nothing to return it to",
                    e.span,
                )
                .with_hint("actions, controls and void functions return with `return;`");
                self.emit(d);
                None
            }
            (Some(ret), None) => {
                let tn = self.m.type_name(ret);
                self.err(
                    codes::BAD_RETURN,
                    format!("this function returns `{tn}`: `return` needs a value"),
                    span,
                );
                None
            }
            (Some(ret), Some(e)) => {
                let x = self.expr_as(e, ret)?;
                Some(StmtKind::Return(Some(x)))
            }
        }
    }

    pub(super) fn switch(
        &mut self,
        sel: &ast::Expr,
        cases: &[ast::SwitchCase],
        span: Span,
    ) -> Option<ir::Switch> {
        if self.ctx.in_action {
            let d = Diagnostic::error(
                codes::NOT_ALLOWED_HERE,
                "a `switch` statement is not allowed in an action",
                span,
            )
            .with_hint("P4_16 allows `switch` only in a control's `apply` block; use `if`/`else if` in actions");
            self.emit(d);
            return None;
        }
        let x = self.expr(sel)?;
        let table = match (&x.kind, &x.ty) {
            (ExprKind::TableResult(_, TableResultField::ActionRun), Type::TableResult(t)) => {
                Some(*t)
            }
            _ => None,
        };
        if table.is_none() {
            let ok = matches!(
                x.ty,
                Type::Bit(_) | Type::Int(_) | Type::Enum(_) | Type::Error | Type::NewType(_)
            );
            if !ok {
                let tn = self.m.type_name(&x.ty);
                let d = Diagnostic::error(
                    codes::SWITCH_SELECTOR,
                    format!("cannot switch on a value of type `{tn}`"),
                    sel.span,
                )
                .with_hint(
                    "switch on `t.apply().action_run`, or on a bit<N>, int<N>, enum or error value",
                );
                self.emit(d);
                return None;
            }
        }
        let mut out: Vec<ir::SwitchCase> = Vec::new();
        let mut default: Option<ir::Block> = None;
        let mut pending: Vec<SwitchLabel> = Vec::new();
        let mut seen: Vec<SwitchLabel> = Vec::new();
        let mut ok = true;
        for (i, case) in cases.iter().enumerate() {
            let last = i + 1 == cases.len();
            match &case.label {
                ast::SwitchLabel::Default(lspan) => {
                    if !last {
                        self.err(
                            codes::SWITCH_LABEL,
                            "`default` must be the last switch label",
                            *lspan,
                        );
                        ok = false;
                    }
                    if case.body.is_none() {
                        self.err(codes::SWITCH_LABEL, "`default` needs a body", *lspan);
                        ok = false;
                        continue;
                    }
                    // Labels falling through into `default` behave as `default`.
                    pending.clear();
                    if let Some(b) = &case.body {
                        default = Some(self.nested(|me| me.block(b)));
                    }
                }
                ast::SwitchLabel::Expr(le) => {
                    let label = match table {
                        Some(t) => self.action_label(le, t),
                        None => self.value_label(le, &x.ty),
                    };
                    let Some(label) = label else {
                        ok = false;
                        continue;
                    };
                    if seen.contains(&label) {
                        self.err(
                            codes::SWITCH_LABEL,
                            "this label appears twice in the switch",
                            le.span,
                        );
                        ok = false;
                        continue;
                    }
                    seen.push(label.clone());
                    pending.push(label);
                    match &case.body {
                        Some(b) => {
                            let body = self.nested(|me| me.block(b));
                            out.push(ir::SwitchCase {
                                labels: std::mem::take(&mut pending),
                                body,
                            });
                        }
                        None if last => {
                            self.err(
                                codes::SWITCH_LABEL,
                                "the last switch label needs a body",
                                case.span,
                            );
                            ok = false;
                        }
                        None => {}
                    }
                }
            }
        }
        let _ = span;
        ok.then_some(ir::Switch {
            selector: x,
            cases: out,
            default,
        })
    }

    pub(super) fn action_label(
        &mut self,
        le: &ast::Expr,
        t: Handle<ir::Table>,
    ) -> Option<SwitchLabel> {
        let ast::ExprKind::Name { name, dot_prefix } = &le.kind else {
            self.err(
                codes::SWITCH_LABEL,
                "labels of a switch on `action_run` must be action names",
                le.span,
            );
            return None;
        };
        let sym = self.resolve(name, *dot_prefix)?;
        let Sym::Action(a) = sym else {
            self.err(
                codes::SWITCH_LABEL,
                format!("`{}` is {}, not an action", name.name, sym.describe()),
                le.span,
            );
            return None;
        };
        if !self.m.tables[t].actions.iter().any(|ta| ta.action == a) {
            let tname = self.m.tables[t].name.clone();
            let d = Diagnostic::error(
                codes::SWITCH_LABEL,
                format!("`{}` is not an action of table `{tname}`", name.name),
                le.span,
            )
            .with_hint(format!(
                "list it in `{tname}`'s `actions`, or remove this case"
            ));
            self.emit(d);
            return None;
        }
        Some(SwitchLabel::Action(a))
    }

    pub(super) fn value_label(&mut self, le: &ast::Expr, ty: &Type) -> Option<SwitchLabel> {
        if let ast::ExprKind::Name { name, dot_prefix } = &le.kind {
            if let Some(Sym::Action(_)) = self.lookup(&name.name, *dot_prefix) {
                let d = Diagnostic::error(
                    codes::SWITCH_LABEL,
                    format!(
                        "`{}` is an action, but this switch is on a value",
                        name.name
                    ),
                    le.span,
                )
                .with_hint(
                    "to switch on the action a table ran, use `switch (t.apply().action_run)`",
                );
                self.emit(d);
                return None;
            }
        }
        let x = self.expr(le)?;
        if x.ty != *ty && x.ty != Type::InfInt {
            let (en, fnm) = (self.m.type_name(ty), self.m.type_name(&x.ty));
            let d = Diagnostic::error(
                codes::SWITCH_LABEL,
                format!("this label is `{fnm}`, but the switch is on `{en}`"),
                le.span,
            )
            .with_label(format!("this is `{fnm}`"));
            self.emit(d);
            return None;
        }
        let x = self.coerce(x, ty)?;
        match x.kind {
            ExprKind::Const(Value::Bits(v)) => Some(SwitchLabel::Value(v)),
            _ => {
                self.err(
                    codes::NOT_CONSTANT,
                    "switch labels must be compile-time constants",
                    le.span,
                );
                None
            }
        }
    }
}
