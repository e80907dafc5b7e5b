//! The checker's rules for header_unions and varbit fields that sit in
//! method calls and expressions: `u.isValid()` (a union's only method), the
//! header size methods (`minSizeInBits()`...), the one- or two-argument
//! `extract` a header needs, and `==`/`!=` between varbit fields. The
//! declarations themselves are in `types.rs`.

use super::Checker;
use crate::ast::{self, BinOp, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{Builtin, Expr, ExprKind, Type, Value};

impl Checker<'_> {
    /// `u.isValid()` on a header_union `b`.
    pub(super) fn union_method(
        &mut self,
        b: Expr,
        method: &ast::Ident,
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        if method.name != "isValid" {
            let d = Diagnostic::error(
                codes::NO_MEMBER,
                format!(
                    "a header_union has one method, `isValid`, not `{}`",
                    method.name
                ),
                method.span,
            )
            .with_hint("set a member valid or invalid: `u.member.setValid()`");
            self.emit(d);
            return None;
        }
        if !args.is_empty() {
            self.err(codes::ARG_COUNT, "`isValid()` takes no arguments", span);
            return None;
        }
        Some(Expr {
            kind: ExprKind::IsValid(Box::new(b)),
            ty: Type::Bool,
            span,
        })
    }

    /// `h.minSizeInBits()` and its siblings: an `int` constant. The minimum
    /// leaves a varbit field empty; the maximum fills it.
    pub(super) fn header_size(&mut self, b: &Expr, method: &str, span: Span) -> Option<Expr> {
        let Type::Header(h) = b.ty else {
            return None;
        };
        let max = method.starts_with("max");
        let bits: i128 = self.m.structs[h]
            .fields
            .iter()
            .filter(|f| max || !f.varbit)
            .filter_map(|f| self.m.field_bits(&f.ty))
            .map(i128::from)
            .sum();
        let v = if method.ends_with("Bytes") {
            (bits + 7) / 8
        } else {
            bits
        };
        Some(Expr {
            kind: ExprKind::Const(Value::Int(v)),
            ty: Type::InfInt,
            span,
        })
    }

    /// A header with a varbit field is extracted with a length, any other
    /// without (reported; `false` when wrong).
    pub(super) fn extract_arity_ok(&mut self, op: Builtin, a: &Expr) -> bool {
        let Type::Header(h) = a.ty else {
            return true;
        };
        let has_varbit = self.m.structs[h].fields.iter().any(|f| f.varbit);
        if has_varbit == (op == Builtin::ExtractVarbit) {
            return true;
        }
        let (msg, hint) = if has_varbit {
            (
                "this header has a varbit field: `extract` needs its length",
                "write `pkt.extract(h, (bit<32>) length_in_bits)`",
            )
        } else {
            (
                "`extract` with a length needs a header with a varbit field",
                "extract a fixed-size header with `pkt.extract(h)`",
            )
        };
        let d = Diagnostic::error(codes::PACKET_OP, msg, a.span).with_hint(hint);
        self.emit(d);
        false
    }

    /// Check an operand of a binary operator; a direct operand of `==`/`!=`
    /// (`eq`) may read a varbit field.
    pub(super) fn eq_operand(&mut self, eq: bool, x: &ast::Expr) -> Option<Expr> {
        self.ctx.varbit_operand = eq && matches!(x.kind, ast::ExprKind::Member(..));
        let r = self.expr(x);
        self.ctx.varbit_operand = false;
        r
    }

    /// Whether `e` reads a varbit header field.
    pub(super) fn is_varbit_field(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Field(b, i) => match &b.ty {
                Type::Header(h) => self.m.structs[*h]
                    .fields
                    .get(*i as usize)
                    .is_some_and(|f| f.varbit),
                _ => false,
            },
            _ => false,
        }
    }

    /// `l == r` / `l != r` where one side is a varbit field: both must be
    /// varbit fields of one width (the back end compares lengths and values).
    pub(super) fn varbit_eq(&mut self, op: BinOp, l: Expr, r: Expr, span: Span) -> Option<Expr> {
        if !(self.is_varbit_field(&l) && self.is_varbit_field(&r) && l.ty == r.ty) {
            let d = Diagnostic::error(
                codes::VARBIT,
                "a varbit field can only be compared with a varbit field of the same width",
                span,
            );
            self.emit(d);
            return None;
        }
        Some(Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            ty: Type::Bool,
            span,
        })
    }
}
