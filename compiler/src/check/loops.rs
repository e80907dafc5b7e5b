//! Loops (P4_16 1.2.4): C-style `for`, `for`-`in` over a range, a header
//! stack or a list expression, and `break` / `continue`. Every loop becomes
//! one IR [`ir::Loop`] (condition, body, updates) after its initialisers; a
//! `for`-`in` gets hidden counter variables, so that its loop variable is a
//! plain local the body may read (and even write) without changing the
//! iteration. Loops run at run time: their bounds need not be constants.

use super::{Checker, Sym};
use crate::ast::{self, BinOp, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, Expr, ExprKind, Handle, Stmt, StmtKind, SwitchLabel, Type, Value, VarKind};

fn mk(kind: ExprKind, ty: Type, span: Span) -> Expr {
    Expr { kind, ty, span }
}

fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt { kind, span }
}

impl Checker<'_> {
    /// Loops are not allowed in parsers (P4 has no parser loops but states).
    fn loop_allowed(&mut self, span: Span) -> bool {
        if self.ctx.in_parser {
            let d = Diagnostic::error(
                codes::NOT_ALLOWED_HERE,
                "a `for` loop is not allowed in a parser",
                span,
            )
            .with_hint("parsers loop through their states: transition back to a state");
            self.emit(d);
            return false;
        }
        true
    }

    /// `break` / `continue`: only inside a loop of the same action, function
    /// or control body.
    pub(super) fn loop_jump(&mut self, brk: bool, span: Span) -> Option<StmtKind> {
        if self.ctx.loop_depth == 0 {
            let word = if brk { "break" } else { "continue" };
            let d = Diagnostic::error(
                codes::NOT_ALLOWED_HERE,
                format!("`{word}` outside a loop"),
                span,
            )
            .with_hint(format!(
                "`{word}` may only appear in the body of a `for` loop"
            ));
            self.emit(d);
            return None;
        }
        Some(if brk {
            StmtKind::Break
        } else {
            StmtKind::Continue
        })
    }

    /// Check a loop body one level deeper (for `break`/`continue` and the
    /// table-application rule).
    fn loop_body(&mut self, body: &ast::Stmt) -> ir::Block {
        self.ctx.loop_depth += 1;
        let b = self.nested(|me| me.stmt_as_block(body));
        self.ctx.loop_depth -= 1;
        b
    }

    /// `for (init; cond; updates) body`.
    pub(super) fn for_stmt(&mut self, f: &ast::ForStmt, span: Span) -> Option<StmtKind> {
        if !self.loop_allowed(span) {
            return None;
        }
        self.push_scope();
        let mut out = Vec::new();
        let mut ok = true;
        for s in &f.init {
            match &s.kind {
                ast::StmtKind::Var(_) | ast::StmtKind::Assign(..) | ast::StmtKind::Call(_) => {
                    match self.stmt(s) {
                        Some(s) => out.push(s),
                        None => ok = false,
                    }
                }
                _ => ok = false,
            }
        }
        let cond = match &f.cond {
            Some(c) => self.cond(c),
            None => Some(mk(ExprKind::Const(Value::Bool(true)), Type::Bool, span)),
        };
        let mut updates = Vec::new();
        self.ctx.loop_depth += 1;
        for s in &f.updates {
            if let Some(s) = self.stmt(s) {
                updates.push(s);
            } else {
                ok = false;
            }
        }
        self.ctx.loop_depth -= 1;
        let body = self.loop_body(&f.body);
        self.pop_scope();
        let cond = cond?;
        if !ok {
            return None;
        }
        out.push(stmt(
            StmtKind::Loop(Box::new(ir::Loop {
                cond,
                body,
                updates: ir::Block { stmts: updates },
            })),
            span,
        ));
        Some(StmtKind::Block(ir::Block { stmts: out }))
    }

    /// A hidden local variable of a loop.
    fn hidden(&mut self, name: &str, ty: Type, span: Span) -> Handle<ir::Var> {
        self.m.vars.append(ir::Var {
            name: format!("$for_{name}"),
            ty,
            kind: VarKind::Local,
            span,
        })
    }

    /// `for ([T] x in collection) body`.
    pub(super) fn for_in(&mut self, f: &ast::ForInStmt, span: Span) -> Option<StmtKind> {
        if !self.loop_allowed(span) {
            return None;
        }
        self.push_scope();
        let r = self.for_in_scoped(f, span);
        self.pop_scope();
        r
    }

    fn for_in_scoped(&mut self, f: &ast::ForInStmt, span: Span) -> Option<StmtKind> {
        let mut out = Vec::new();
        // The loop variable: declared by the loop, or an existing l-value.
        let (var, declared) = match &f.ty {
            Some(t) => {
                let decl = ast::VarDecl {
                    annotations: Vec::new(),
                    ty: t.clone(),
                    name: f.var.clone(),
                    init: None,
                    span: f.var.span,
                };
                let h = self.local_var(&decl)?;
                let e = mk(ExprKind::Var(h), self.m.vars[h].ty.clone(), f.var.span);
                (e, Some(h))
            }
            None => {
                let name = ast::Expr {
                    kind: ast::ExprKind::Name {
                        dot_prefix: false,
                        name: f.var.clone(),
                    },
                    span: f.var.span,
                };
                (self.lvalue(&name, false)?, None)
            }
        };
        let ty = var.ty.clone();
        let vspan = f.var.span;
        // Element `k` of the collection, assigned to the loop variable.
        let (count_ty, first, last, element): (Type, Expr, Expr, Box<dyn Fn(Expr) -> Stmt>) =
            match &f.collection {
                ast::ForInCollection::Range(lo, hi) => {
                    if ty.int_width().is_none() {
                        let tn = self.m.type_name(&ty);
                        let d = Diagnostic::error(
                            codes::TYPE_MISMATCH,
                            format!(
                                "a range loop needs a `bit<N>` or `int<N>` variable, not `{tn}`"
                            ),
                            vspan,
                        );
                        self.emit(d);
                        return None;
                    }
                    let lo = self.expr_as(lo, &ty);
                    let hi = self.expr_as(hi, &ty)?;
                    let v = var.clone();
                    (
                        ty.clone(),
                        lo?,
                        hi,
                        Box::new(move |k: Expr| stmt(StmtKind::Assign(v.clone(), k), vspan)),
                    )
                }
                ast::ForInCollection::Expr(e) => {
                    self.collection(e, &var, declared.is_some(), span)?
                }
            };
        if let Some(h) = declared {
            self.declare(&f.var, Sym::Var(h));
            out.push(stmt(StmtKind::VarDecl(h, None), vspan));
        }
        // k = first; end = last; go = k <= end;
        // loop (go) { x = element(k); body } updates { go = k != end; k = k + 1; }
        let k = self.hidden("index", count_ty.clone(), span);
        let end = self.hidden("last", count_ty.clone(), span);
        let go = self.hidden("more", Type::Bool, span);
        let kx = mk(ExprKind::Var(k), count_ty.clone(), span);
        let ex = mk(ExprKind::Var(end), count_ty.clone(), span);
        let gx = mk(ExprKind::Var(go), Type::Bool, span);
        out.push(stmt(StmtKind::VarDecl(k, Some(first)), span));
        out.push(stmt(StmtKind::VarDecl(end, Some(last)), span));
        let le = mk(
            ExprKind::Binary(BinOp::Le, Box::new(kx.clone()), Box::new(ex.clone())),
            Type::Bool,
            span,
        );
        out.push(stmt(StmtKind::VarDecl(go, Some(le)), span));
        let mut body = vec![element(kx.clone())];
        body.extend(self.loop_body(&f.body).stmts);
        let ne = mk(
            ExprKind::Binary(BinOp::Ne, Box::new(kx.clone()), Box::new(ex)),
            Type::Bool,
            span,
        );
        let one = mk(ExprKind::Const(Value::Bits(1)), count_ty.clone(), span);
        let inc = mk(
            ExprKind::Binary(BinOp::Add, Box::new(kx.clone()), Box::new(one)),
            count_ty,
            span,
        );
        let updates = vec![
            stmt(StmtKind::Assign(gx.clone(), ne), span),
            stmt(StmtKind::Assign(kx, inc), span),
        ];
        out.push(stmt(
            StmtKind::Loop(Box::new(ir::Loop {
                cond: gx,
                body: ir::Block { stmts: body },
                updates: ir::Block { stmts: updates },
            })),
            span,
        ));
        Some(StmtKind::Block(ir::Block { stmts: out }))
    }

    /// A header stack or a list expression iterated by a `for`-`in`: the
    /// counter's type, its first and last value, and the statement giving
    /// the loop variable element `k`.
    #[allow(clippy::type_complexity)]
    fn collection(
        &mut self,
        e: &ast::Expr,
        var: &Expr,
        declared: bool,
        span: Span,
    ) -> Option<(Type, Expr, Expr, Box<dyn Fn(Expr) -> Stmt>)> {
        let ty = var.ty.clone();
        let vspan = var.span;
        let count = Type::Bit(32);
        let c32 = |v: u32| {
            mk(
                ExprKind::Const(Value::Bits(u128::from(v))),
                Type::Bit(32),
                span,
            )
        };
        if let ast::ExprKind::List(items) = &e.kind {
            if items.is_empty() {
                self.err(
                    codes::TYPE_MISMATCH,
                    "a `for` loop over an empty list",
                    e.span,
                );
                return None;
            }
            let mut elems = Vec::new();
            for it in items {
                elems.push(self.expr_as(it, &ty));
            }
            let elems: Vec<Expr> = elems.into_iter().collect::<Option<_>>()?;
            let n = elems.len() as u32;
            let v = var.clone();
            return Some((
                count,
                c32(0),
                c32(n - 1),
                Box::new(move |k: Expr| {
                    let cases = elems
                        .iter()
                        .enumerate()
                        .map(|(i, x)| ir::SwitchCase {
                            labels: vec![SwitchLabel::Value(i as u128)],
                            body: ir::Block {
                                stmts: vec![stmt(StmtKind::Assign(v.clone(), x.clone()), vspan)],
                            },
                        })
                        .collect();
                    stmt(
                        StmtKind::Switch(ir::Switch {
                            selector: k,
                            cases,
                            default: None,
                        }),
                        vspan,
                    )
                }),
            ));
        }
        let coll = self.expr(e)?;
        if self.is_union_stack(&coll.ty) {
            self.union_stack_unsupported("a `for`-`in` loop over each element", e.span);
            return None;
        }
        let Type::Stack(h, n) = coll.ty else {
            let tn = self.m.type_name(&coll.ty);
            let d = Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!(
                    "a `for`-`in` loop iterates over a range, a header stack or a list, not `{tn}`"
                ),
                e.span,
            )
            .with_hint(
                "write `for (T x in lo .. hi)`, `for (H h in hdr.stack)` or `for (T x in {a, b})`",
            );
            self.emit(d);
            return None;
        };
        if ty != Type::Header(h) {
            let (want, got) = (self.m.type_name(&Type::Header(h)), self.m.type_name(&ty));
            let what = if declared { "is declared" } else { "has type" };
            let d = Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!("the loop variable {what} `{got}` but the stack holds `{want}`"),
                vspan,
            );
            self.emit(d);
            return None;
        }
        let v = var.clone();
        Some((
            count,
            c32(0),
            c32(n.saturating_sub(1)),
            Box::new(move |k: Expr| {
                let el = mk(
                    ExprKind::Index(Box::new(coll.clone()), Box::new(k)),
                    Type::Header(h),
                    vspan,
                );
                stmt(StmtKind::Assign(v.clone(), el), vspan)
            }),
        ))
    }
}
