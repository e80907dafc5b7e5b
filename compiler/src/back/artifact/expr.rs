//! Scalar expressions and binary operators.

use netsparse_externs::artifact::{self as a, LValue};

use crate::ast::{BinOp, UnOp};
use crate::ir::{self, ExprKind, TableResultField, Type, Value};

use super::*;

impl Lower<'_> {
    /// A scalar expression.
    pub(super) fn expr(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<a::Expr> {
        let span = e.span;
        let (w, signed) = self.scalar_of(&e.ty).unwrap_or((1, false));
        if w > a::MAX_WIDTH {
            let d = Diagnostic::error(
                codes::NOT_EXPRESSIBLE,
                format!("a value of {w} bits where this target takes one of at most 128 bits"),
                span,
            )
            .with_hint(
                "values over 128 bits may be assigned, computed on, compared, sliced, used as \
                 table keys and action parameters; pass a slice of at most 128 bits here",
            );
            self.diags.push(d);
            return None;
        }
        if self.has_wide_operand(e) {
            return self.narrow_of_wide(idx, e, pre);
        }
        match &e.kind {
            ExprKind::Const(v) => match v {
                Value::Bits(b) => Some(konst(*b, w, signed)),
                Value::Bool(b) => Some(konst(u128::from(*b), 1, false)),
                Value::Int(_) | Value::Str(_) => {
                    self.inexpressible("a value without a width", span);
                    None
                }
            },
            // `pkt.lookahead<h_t>().f` (a header or a struct of bit<N>
            // fields): a lookahead of that field's bits.
            ExprKind::Field(b, i)
                if matches!(
                    &b.kind,
                    ExprKind::Call(c) if matches!(
                        c.callee,
                        ir::Callee::Builtin { op: ir::Builtin::Lookahead, .. }
                    )
                ) && matches!(b.ty, Type::Header(_) | Type::Struct(_)) =>
            {
                let (Type::Header(s) | Type::Struct(s)) = b.ty else {
                    return None;
                };
                let fields = &self.m.structs[s].fields;
                let offset: u32 = fields[..*i as usize]
                    .iter()
                    .filter_map(|f| self.m.field_bits(&f.ty))
                    .sum();
                let mut x = a::Expr::Lookahead {
                    bit_offset: offset,
                    width: w,
                };
                if signed {
                    x = a::Expr::Cast {
                        arg: Box::new(x),
                        arg_width: w,
                        arg_signed: false,
                        width: w,
                        signed: true,
                    };
                }
                Some(x)
            }
            ExprKind::Var(_)
            | ExprKind::Field(..)
            | ExprKind::Index(..)
            | ExprKind::Next(_)
            | ExprKind::Last(_) => {
                let lp = self.place(idx, e, pre)?;
                self.read(lp, span)
            }
            ExprKind::Slice(b, hi, lo) => {
                if Self::is_place_expr(b) {
                    if let LPlace::Static(Place::Scalar(f)) = self.place(idx, b, pre)? {
                        return Some(a::Expr::Slice {
                            arg: Box::new(a::Expr::Field { field: f }),
                            hi: *hi,
                            lo: *lo,
                        });
                    }
                }
                let arg = self.expr(idx, b, pre)?;
                Some(a::Expr::Slice {
                    arg: Box::new(arg),
                    hi: *hi,
                    lo: *lo,
                })
            }
            ExprKind::LastIndex(b) => {
                let LPlace::Static(Place::Stack(s)) = self.place(idx, b, pre)? else {
                    self.inexpressible("`lastIndex` of this stack", span);
                    return None;
                };
                let field = self.stacks[s.index()].next_index;
                Some(a::Expr::Binary {
                    op: a::BinaryOp::Sub,
                    width: 32,
                    signed: false,
                    lhs: Box::new(a::Expr::Field { field }),
                    rhs: Box::new(konst(1, 32, false)),
                })
            }
            ExprKind::IsValid(h) => {
                let lp = self.place(idx, h, pre)?;
                if let LPlace::Static(Place::Struct(ps)) = &lp {
                    // A header_union is valid when one of its members is.
                    let mut any: Option<a::Expr> = None;
                    for p in ps {
                        let Place::Header(m) = p else { continue };
                        let v = a::Expr::IsValid {
                            header: HeaderRef::Static { header: *m },
                        };
                        any = Some(match any {
                            None => v,
                            Some(x) => a::Expr::Binary {
                                op: a::BinaryOp::LOr,
                                width: 1,
                                signed: false,
                                lhs: Box::new(x),
                                rhs: Box::new(v),
                            },
                        });
                    }
                    return any;
                }
                let header = self.href(lp, span)?;
                Some(a::Expr::IsValid { header })
            }
            ExprKind::Unary(op, x) => {
                let arg = self.expr(idx, x, pre)?;
                let (op, w, signed) = match op {
                    UnOp::Not => (a::UnaryOp::Not, 1, false),
                    UnOp::BitNot => (a::UnaryOp::BitNot, w, signed),
                    UnOp::Neg => (a::UnaryOp::Neg, w, signed),
                    UnOp::Plus => return Some(arg),
                };
                Some(a::Expr::Unary {
                    op,
                    width: w,
                    signed,
                    arg: Box::new(arg),
                })
            }
            ExprKind::Binary(op, l, r) => self.binary(idx, *op, l, r, w, pre),
            ExprKind::Concat(l, r) => {
                let (rw, _) = self.scalar_of(&r.ty).unwrap_or((1, false));
                let lhs = self.expr(idx, l, pre)?;
                let rhs = self.expr(idx, r, pre)?;
                Some(a::Expr::Concat {
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                    rhs_width: rw,
                    width: w,
                    signed,
                })
            }
            ExprKind::Cast(x) => {
                let (aw, asg) = self.scalar_of(&x.ty).unwrap_or((1, false));
                let arg = self.expr(idx, x, pre)?;
                if aw == w && asg == signed {
                    return Some(arg);
                }
                Some(a::Expr::Cast {
                    arg: Box::new(arg),
                    arg_width: aw,
                    arg_signed: asg,
                    width: w,
                    signed,
                })
            }
            ExprKind::Mux(c, x, y) => {
                let cond = self.expr(idx, c, pre)?;
                let mut px = Vec::new();
                let mut py = Vec::new();
                let then = self.expr(idx, x, &mut px)?;
                let otherwise = self.expr(idx, y, &mut py)?;
                if px.is_empty() && py.is_empty() {
                    return Some(a::Expr::Mux {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                        width: w,
                    });
                }
                // Calls in a branch run only when it is taken.
                let Place::Scalar(t) = self.temp(&e.ty) else {
                    return None;
                };
                px.push(a::Stmt::Assign {
                    dst: LValue::Field { field: t },
                    src: then,
                });
                py.push(a::Stmt::Assign {
                    dst: LValue::Field { field: t },
                    src: otherwise,
                });
                pre.push(a::Stmt::If {
                    cond,
                    then: px,
                    otherwise: py,
                });
                Some(a::Expr::Field { field: t })
            }
            ExprKind::Call(c) => match self.call(idx, c, &e.ty, pre)? {
                CallResult::Expr(x) => Some(x),
                CallResult::Place(p) => self.read(LPlace::Static(p), span),
                _ => {
                    self.inexpressible("this call's result", span);
                    None
                }
            },
            ExprKind::TableResult(call, f) => {
                let ExprKind::Call(c) = &call.kind else {
                    return None;
                };
                let Some(CallResult::Table(tid)) = self.call(idx, c, &call.ty, pre) else {
                    return None;
                };
                let t = &self.tables[tid.index()];
                Some(match f {
                    TableResultField::Hit => a::Expr::Field { field: t.hit },
                    TableResultField::Miss => a::Expr::Unary {
                        op: a::UnaryOp::Not,
                        width: 1,
                        signed: false,
                        arg: Box::new(a::Expr::Field { field: t.hit }),
                    },
                    TableResultField::ActionRun => a::Expr::Field {
                        field: t.action_run,
                    },
                })
            }
            ExprKind::List(_) => {
                self.inexpressible("a list used as a single value", span);
                None
            }
        }
    }

    /// The length slot of the varbit field `e` reads (`h.v` of a header
    /// known at compile time); `None` when `e` is not a varbit field.
    pub(super) fn varbit_len(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<a::Expr> {
        let ExprKind::Field(b, i) = &e.kind else {
            return None;
        };
        let Type::Header(s) = b.ty else {
            return None;
        };
        if !self.m.structs[s].fields.get(*i as usize)?.varbit {
            return None;
        }
        match self.place(idx, b, pre)? {
            LPlace::Static(Place::Header(h)) => Some(a::Expr::Field {
                field: self.headers[h.index()].varbit_len?,
            }),
            _ => {
                self.inexpressible("a varbit field of a run-time stack element", e.span);
                None
            }
        }
    }

    pub(super) fn binary(
        &mut self,
        idx: usize,
        op: BinOp,
        l: &ir::Expr,
        r: &ir::Expr,
        w: u16,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<a::Expr> {
        if matches!(op, BinOp::Eq | BinOp::Ne) {
            if let (Some(ll), Some(rl)) =
                (self.varbit_len(idx, l, pre), self.varbit_len(idx, r, pre))
            {
                // Varbit fields: equal lengths and equal values.
                let (lv, rv) = (self.expr(idx, l, pre)?, self.expr(idx, r, pre)?);
                let cmp = |x: a::Expr, y: a::Expr| a::Expr::Binary {
                    op: a::BinaryOp::Eq,
                    width: 1,
                    signed: false,
                    lhs: Box::new(x),
                    rhs: Box::new(y),
                };
                let both = a::Expr::Binary {
                    op: a::BinaryOp::LAnd,
                    width: 1,
                    signed: false,
                    lhs: Box::new(cmp(ll, rl)),
                    rhs: Box::new(cmp(lv, rv)),
                };
                return Some(if op == BinOp::Ne {
                    a::Expr::Unary {
                        op: a::UnaryOp::Not,
                        width: 1,
                        signed: false,
                        arg: Box::new(both),
                    }
                } else {
                    both
                });
            }
        }
        let lhs = self.expr(idx, l, pre)?;
        let mut rpre = Vec::new();
        let rhs = self.expr(idx, r, &mut rpre)?;
        if matches!(op, BinOp::And | BinOp::Or) {
            let aop = if op == BinOp::And {
                a::BinaryOp::LAnd
            } else {
                a::BinaryOp::LOr
            };
            if rpre.is_empty() {
                return Some(a::Expr::Binary {
                    op: aop,
                    width: 1,
                    signed: false,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                });
            }
            // Short-circuit around the right side's calls.
            let Place::Scalar(t) = self.temp(&Type::Bool) else {
                return None;
            };
            pre.push(a::Stmt::Assign {
                dst: LValue::Field { field: t },
                src: lhs,
            });
            rpre.push(a::Stmt::Assign {
                dst: LValue::Field { field: t },
                src: rhs,
            });
            let cond = a::Expr::Field { field: t };
            let cond = if op == BinOp::And {
                cond
            } else {
                a::Expr::Unary {
                    op: a::UnaryOp::Not,
                    width: 1,
                    signed: false,
                    arg: Box::new(cond),
                }
            };
            pre.push(a::Stmt::If {
                cond,
                then: rpre,
                otherwise: Vec::new(),
            });
            return Some(a::Expr::Field { field: t });
        }
        // P4 evaluates left to right: when the right side's calls may write
        // what the left side reads, read the left side first.
        let lhs = if rpre.is_empty() || matches!(lhs, a::Expr::Const { .. }) {
            lhs
        } else if let Place::Scalar(t) = self.temp(&l.ty) {
            pre.push(a::Stmt::Assign {
                dst: LValue::Field { field: t },
                src: lhs,
            });
            a::Expr::Field { field: t }
        } else {
            lhs
        };
        pre.extend(rpre);
        let (ow, signed) = self.scalar_of(&l.ty).unwrap_or((1, false));
        let (aop, width) = match op {
            BinOp::Mul => (a::BinaryOp::Mul, w),
            BinOp::Div => (a::BinaryOp::Div, w),
            BinOp::Mod => (a::BinaryOp::Mod, w),
            BinOp::Add => (a::BinaryOp::Add, w),
            BinOp::Sub => (a::BinaryOp::Sub, w),
            BinOp::SatAdd => (a::BinaryOp::SatAdd, w),
            BinOp::SatSub => (a::BinaryOp::SatSub, w),
            BinOp::Shl => (a::BinaryOp::Shl, w),
            BinOp::Shr => (a::BinaryOp::Shr, w),
            BinOp::BitAnd => (a::BinaryOp::And, w),
            BinOp::BitOr => (a::BinaryOp::Or, w),
            BinOp::BitXor => (a::BinaryOp::Xor, w),
            BinOp::Eq => (a::BinaryOp::Eq, 1),
            BinOp::Ne => (a::BinaryOp::Ne, 1),
            BinOp::Lt => (a::BinaryOp::Lt, 1),
            BinOp::Le => (a::BinaryOp::Le, 1),
            BinOp::Gt => (a::BinaryOp::Gt, 1),
            BinOp::Ge => (a::BinaryOp::Ge, 1),
            BinOp::And | BinOp::Or | BinOp::Concat => return None,
        };
        let _ = ow;
        Some(a::Expr::Binary {
            op: aop,
            width,
            signed,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    }
}
