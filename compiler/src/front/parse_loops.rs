//! Building the AST of assignments and loops: plain and compound
//! assignments (`a += b` is desugared here to `a = a + b` unless the left
//! side calls something, which the checker must evaluate once), C-style `for`
//! loops and `for`-`in` loops, whose headers take declarations,
//! assignments and calls separated by commas.

use super::*;

impl Builder<'_> {
    /// `lhs = rhs;` or `lhs op= rhs;` (also the assignments of a `for` header).
    pub(super) fn assignment(&self, p: P<'_>, span: Span) -> R<StmtKind> {
        let mut it = self.kids(p);
        let lhs = self.postfix(self.need(&mut it, span)?)?.0;
        let mut next = self.need(&mut it, span)?;
        let op = if next.as_rule() == Rule::p_op_assign {
            let op = compound_op(next.as_str());
            next = self.need(&mut it, span)?;
            Some(op)
        } else {
            None
        };
        let rhs = self.expr(next)?;
        let Some(op) = op else {
            return Ok(StmtKind::Assign(lhs, rhs));
        };
        if contains_call(&lhs) {
            return Ok(StmtKind::OpAssign(op, lhs, rhs));
        }
        let rspan = lhs.span.to(rhs.span);
        let value = Expr {
            kind: ExprKind::Binary(op, Box::new(lhs.clone()), Box::new(rhs)),
            span: rspan,
        };
        Ok(StmtKind::Assign(lhs, value))
    }

    /// `for (...) stmt`.
    pub(super) fn for_stmt(&self, p: P<'_>, span: Span) -> R<StmtKind> {
        let mut it = self.kids(p);
        let head = self.need(&mut it, span)?;
        let body_p = self.need(&mut it, span)?;
        let hspan = self.span(&head);
        if head.as_rule() == Rule::for_in_head {
            let mut parts = self
                .kids(head)
                .filter(|k| !matches!(k.as_rule(), Rule::kw_in | Rule::p_range));
            let first = self.need(&mut parts, hspan)?;
            let (ty, var) = if first.as_rule() == Rule::type_ref {
                let ty = self.type_ref(first)?;
                (Some(ty), self.ident(self.need(&mut parts, hspan)?))
            } else {
                // P4_16's grammar declares the loop variable here, with its
                // type (`for (bit<8> i in 1 .. 6)`); a bare name is a syntax
                // error in p4c too.
                let var = self.ident(first);
                return Err(self.stop(
                    Diagnostic::error(
                        "E0001",
                        format!(
                            "`for ({} in ...)`: the loop variable needs a type",
                            var.name
                        ),
                        var.span,
                    )
                    .with_hint(format!(
                        "declare it in the loop: `for (bit<8> {} in ...)`",
                        var.name
                    )),
                ));
            };
            let a = self.expr(self.need(&mut parts, hspan)?)?;
            let collection = match parts.next() {
                Some(b) => ForInCollection::Range(a, self.expr(b)?),
                None => ForInCollection::Expr(a),
            };
            let body = self.stmt(body_p)?;
            return Ok(StmtKind::ForIn(Box::new(ForInStmt {
                ty,
                var,
                collection,
                body,
            })));
        }
        let mut parts = self.kids(head);
        let init = self.for_simples(self.need(&mut parts, hspan)?)?;
        let cond = match self.kids(self.need(&mut parts, hspan)?).next() {
            Some(e) => Some(self.expr(e)?),
            None => None,
        };
        let updates = self.for_simples(self.need(&mut parts, hspan)?)?;
        let body = self.stmt(body_p)?;
        Ok(StmtKind::For(Box::new(ForStmt {
            init,
            cond,
            updates,
            body,
        })))
    }

    /// The comma-separated declarations, assignments and calls of a `for` header.
    fn for_simples(&self, p: P<'_>) -> R<Vec<Stmt>> {
        let mut out = Vec::new();
        for k in self.kids(p) {
            let span = self.span(&k);
            let kind = match k.as_rule() {
                Rule::for_var => StmtKind::Var(self.var_decl(k, Vec::new())?),
                Rule::for_assign => self.assignment(k, span)?,
                _ => {
                    let mut it = self.kids(k);
                    let e = self.postfix(self.need(&mut it, span)?)?.0;
                    if !matches!(e.kind, ExprKind::Call { .. }) {
                        self.push(
                            Diagnostic::error("E0001", "expected a statement", e.span)
                                .with_label("this expression is not a call")
                                .with_hint(
                                    "a `for` header holds declarations, assignments and calls",
                                ),
                        );
                    }
                    StmtKind::Call(e)
                }
            };
            out.push(Stmt { kind, span });
        }
        Ok(out)
    }
}

/// The operator of a compound assignment token (`+=` → `Add`).
fn compound_op(text: &str) -> BinOp {
    match text.trim_end_matches('=') {
        "|+|" => BinOp::SatAdd,
        "|-|" => BinOp::SatSub,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Mod,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        _ => BinOp::BitXor,
    }
}

/// Does evaluating `e` call anything (so that it must not be evaluated twice)?
fn contains_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { .. } => true,
        ExprKind::Member(a, _) | ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => contains_call(a),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => contains_call(a) || contains_call(b),
        ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
            contains_call(a) || contains_call(b) || contains_call(c)
        }
        ExprKind::List(es) => es.iter().any(contains_call),
        ExprKind::StructInit(kv) => kv.iter().any(|(_, e)| contains_call(e)),
        _ => false,
    }
}
