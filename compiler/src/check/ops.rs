//! Operators: unary and binary operators with P4's width and sign rules
//! (`==`/`!=` on headers, structs and stacks field by field), `++`,
//! shifts, `?:` and casts, folding constants as it goes. Names, members,
//! indexes, slices and literals are in `expr.rs`.

use super::consts::{self, fold_bits, fold_int, fold_unary_bits, mask};
use super::expr::{konst, mk};
use super::Checker;
use crate::ast::{self, BinOp, Span, UnOp};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{Expr, ExprKind, Type, Value};

/// A side-effect-free reference to storage (`a`, `a.f`, `a[2]`), which
/// [`Checker::aggregate_eq`] may read more than once.
fn is_path(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) => true,
        ExprKind::Field(b, _) => is_path(b),
        ExprKind::Index(b, i) => is_path(b) && matches!(i.kind, ExprKind::Const(_)),
        _ => false,
    }
}

fn and(a: Expr, b: Expr, span: Span) -> Expr {
    match (&a.kind, &b.kind) {
        (ExprKind::Const(Value::Bool(true)), _) => b,
        (_, ExprKind::Const(Value::Bool(true))) => a,
        _ => mk(
            ExprKind::Binary(BinOp::And, Box::new(a), Box::new(b)),
            Type::Bool,
            span,
        ),
    }
}

impl Checker<'_> {
    /// `l == r` on headers, structs and header stacks, as P4_16 defines it:
    /// structs and stacks are equal when every field (element) is; headers
    /// when both are invalid, or both valid with equal fields. `l` and `r`
    /// are paths ([`is_path`]), so reading them repeatedly is harmless.
    fn aggregate_eq(&mut self, ty: &Type, l: &Expr, r: &Expr, span: Span) -> Expr {
        let field = |e: &Expr, i: usize, fty: &Type| {
            mk(
                ExprKind::Field(Box::new(e.clone()), i as u32),
                fty.clone(),
                span,
            )
        };
        match ty {
            Type::Header(h) | Type::Struct(h) => {
                let fields = self.m.structs[*h].fields.clone();
                let mut all = konst(Value::Bool(true), Type::Bool, span);
                for (i, f) in fields.iter().enumerate() {
                    let e =
                        self.aggregate_eq(&f.ty, &field(l, i, &f.ty), &field(r, i, &f.ty), span);
                    all = and(all, e, span);
                }
                if !matches!(ty, Type::Header(_)) {
                    return all;
                }
                let valid = |e: &Expr| mk(ExprKind::IsValid(Box::new(e.clone())), Type::Bool, span);
                let not = |e: Expr| mk(ExprKind::Unary(UnOp::Not, Box::new(e)), Type::Bool, span);
                let both_invalid = and(not(valid(l)), not(valid(r)), span);
                let both_valid = and(valid(l), valid(r), span);
                mk(
                    ExprKind::Binary(
                        BinOp::Or,
                        Box::new(both_invalid),
                        Box::new(and(both_valid, all, span)),
                    ),
                    Type::Bool,
                    span,
                )
            }
            Type::Stack(h, n) => {
                let elem = self.stack_elem(*h);
                let mut all = konst(Value::Bool(true), Type::Bool, span);
                for i in 0..*n {
                    let idx = |e: &Expr| {
                        mk(
                            ExprKind::Index(
                                Box::new(e.clone()),
                                Box::new(konst(Value::Bits(u128::from(i)), Type::Bit(32), span)),
                            ),
                            elem.clone(),
                            span,
                        )
                    };
                    let e = self.aggregate_eq(&elem, &idx(l), &idx(r), span);
                    all = and(all, e, span);
                }
                all
            }
            _ => mk(
                ExprKind::Binary(BinOp::Eq, Box::new(l.clone()), Box::new(r.clone())),
                Type::Bool,
                span,
            ),
        }
    }

    pub(super) fn unary(&mut self, op: UnOp, a: &ast::Expr, span: Span) -> Option<Expr> {
        let x = self.expr(a)?;
        match op {
            UnOp::Not => {
                if x.ty != Type::Bool {
                    let tn = self.m.type_name(&x.ty);
                    let d = Diagnostic::error(
                        codes::BAD_OPERAND,
                        format!("`!` needs a `bool`, found `{tn}`"),
                        a.span,
                    )
                    .with_hint("for a bitwise complement write `~`");
                    self.emit(d);
                    return None;
                }
                if let ExprKind::Const(Value::Bool(b)) = x.kind {
                    return Some(konst(Value::Bool(!b), Type::Bool, span));
                }
                Some(mk(ExprKind::Unary(op, Box::new(x)), Type::Bool, span))
            }
            UnOp::Plus => match x.ty {
                Type::Bit(_) | Type::Int(_) | Type::InfInt => Some(x),
                _ => {
                    self.bad_operand(op.as_str(), &x.ty, a.span);
                    None
                }
            },
            UnOp::Neg | UnOp::BitNot => match (&x.ty, &x.kind) {
                (Type::InfInt, ExprKind::Const(Value::Int(i))) if op == UnOp::Neg => {
                    match i.checked_neg() {
                        Some(n) => Some(konst(Value::Int(n), Type::InfInt, span)),
                        None => {
                            self.err(codes::CONST_OVERFLOW, "integer overflow in `-`", span);
                            None
                        }
                    }
                }
                (Type::InfInt, _) => {
                    let d = Diagnostic::error(
                        codes::BAD_OPERAND,
                        "`~` needs a value with a width, not an `int` literal",
                        a.span,
                    )
                    .with_hint("give the literal a width, e.g. `~8w0`");
                    self.emit(d);
                    None
                }
                (Type::Bit(w) | Type::Int(w), ExprKind::Const(Value::Bits(v))) if *w <= 128 => {
                    let w = *w;
                    Some(konst(
                        Value::Bits(fold_unary_bits(op, *v, w)),
                        x.ty.clone(),
                        span,
                    ))
                }
                (Type::Bit(_) | Type::Int(_), _) => {
                    let ty = x.ty.clone();
                    Some(mk(ExprKind::Unary(op, Box::new(x)), ty, span))
                }
                _ => {
                    self.bad_operand(op.as_str(), &x.ty, a.span);
                    None
                }
            },
        }
    }

    fn bad_operand(&mut self, op: &str, ty: &Type, span: Span) {
        let tn = self.m.type_name(ty);
        let d = Diagnostic::error(
            codes::BAD_OPERAND,
            format!("operator `{op}` cannot be applied to `{tn}`"),
            span,
        )
        .with_label(format!("this is `{tn}`"));
        self.emit(d);
    }

    /// Give two operands the same type: an `int` literal takes the other's type.
    fn unify_operands(&mut self, op: BinOp, l: Expr, r: Expr) -> Option<(Expr, Expr)> {
        if l.ty == r.ty {
            return Some((l, r));
        }
        // Serializable enums compare with their representation.
        let l = self.enum_to_repr(l, &r.ty);
        let r = self.enum_to_repr(r, &l.ty);
        if l.ty == r.ty {
            return Some((l, r));
        }
        match (&l.ty, &r.ty) {
            (Type::InfInt, _) => {
                let t = r.ty.clone();
                let l = self.coerce(l, &t)?;
                Some((l, r))
            }
            (_, Type::InfInt) => {
                let t = l.ty.clone();
                let r = self.coerce(r, &t)?;
                Some((l, r))
            }
            _ => {
                let (ln, rn) = (self.m.type_name(&l.ty), self.m.type_name(&r.ty));
                let same_sign_diff_width = matches!(
                    (l.ty.int_width(), r.ty.int_width()),
                    (Some((a, sa)), Some((b, sb))) if sa == sb && a != b
                );
                let code = if same_sign_diff_width {
                    codes::WIDTH_MISMATCH
                } else {
                    codes::TYPE_MISMATCH
                };
                let d = Diagnostic::error(
                    code,
                    format!(
                        "`{}` on `{ln}` and `{rn}`: the operands must have the same type",
                        op.as_str()
                    ),
                    r.span,
                )
                .with_secondary(l.span, format!("this is `{ln}`"))
                .with_label(format!("this is `{rn}`"))
                .with_hint(format!(
                    "cast one side, e.g. `({ln})(...)`; P4 never converts widths implicitly"
                ));
                self.emit(d);
                None
            }
        }
    }

    fn enum_to_repr(&mut self, e: Expr, other: &Type) -> Expr {
        if let Type::Enum(h) = &e.ty {
            if let Some(u) = self.m.enums[*h].underlying.clone() {
                if *other == u || *other == Type::InfInt {
                    let span = e.span;
                    return match e.kind {
                        ExprKind::Const(v) => konst(v, u, span),
                        _ => mk(ExprKind::Cast(Box::new(e)), u, span),
                    };
                }
            }
        }
        e
    }

    pub(super) fn binary(
        &mut self,
        op: BinOp,
        a: &ast::Expr,
        b: &ast::Expr,
        span: Span,
    ) -> Option<Expr> {
        let eq = matches!(op, BinOp::Eq | BinOp::Ne);
        let l = self.eq_operand(eq, a);
        let r = self.eq_operand(eq, b);
        let (l, r) = (l?, r?);
        if eq && (self.is_varbit_field(&l) || self.is_varbit_field(&r)) {
            return self.varbit_eq(op, l, r, span);
        }
        match op {
            BinOp::And | BinOp::Or => {
                for x in [&l, &r] {
                    if x.ty != Type::Bool {
                        self.bad_operand(op.as_str(), &x.ty, x.span);
                        return None;
                    }
                }
                if let (ExprKind::Const(Value::Bool(x)), ExprKind::Const(Value::Bool(y))) =
                    (&l.kind, &r.kind)
                {
                    let v = if op == BinOp::And { *x && *y } else { *x || *y };
                    return Some(konst(Value::Bool(v), Type::Bool, span));
                }
                Some(mk(
                    ExprKind::Binary(op, Box::new(l), Box::new(r)),
                    Type::Bool,
                    span,
                ))
            }
            BinOp::Concat => self.concat(l, r, span),
            BinOp::Shl | BinOp::Shr => self.shift(op, l, r, span),
            _ => {
                let (l, r) = self.unify_operands(op, l, r)?;
                let ty = l.ty.clone();
                let cmp = matches!(
                    op,
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                );
                let eq = matches!(op, BinOp::Eq | BinOp::Ne);
                if eq
                    && matches!(ty, Type::Header(_) | Type::Struct(_) | Type::Stack(..))
                    && is_path(&l)
                    && is_path(&r)
                {
                    let e = self.aggregate_eq(&ty, &l, &r, span);
                    return Some(if op == BinOp::Ne {
                        mk(ExprKind::Unary(UnOp::Not, Box::new(e)), Type::Bool, span)
                    } else {
                        e
                    });
                }
                let ok = match &ty {
                    Type::Bit(_) => true,
                    Type::Int(_) => !matches!(op, BinOp::Div | BinOp::Mod),
                    Type::InfInt => !matches!(op, BinOp::SatAdd | BinOp::SatSub),
                    Type::Bool | Type::Error | Type::Enum(_) | Type::NewType(_) => eq,
                    _ => false,
                };
                if !ok {
                    let tn = self.m.type_name(&ty);
                    let mut d = Diagnostic::error(
                        codes::BAD_OPERAND,
                        format!("operator `{}` cannot be applied to `{tn}`", op.as_str()),
                        span,
                    );
                    if matches!(ty, Type::Int(_)) {
                        d = d.with_hint("`/` and `%` are only defined on unsigned bit<N> values");
                    } else if matches!(ty, Type::Header(_) | Type::Struct(_)) {
                        d = d.with_hint("compare the fields one by one");
                    }
                    self.emit(d);
                    return None;
                }
                let rty = if cmp { Type::Bool } else { ty.clone() };
                // Fold constants.
                if let (ExprKind::Const(x), ExprKind::Const(y)) = (&l.kind, &r.kind) {
                    let folded = match (x, y) {
                        (Value::Int(x), Value::Int(y)) => Some(fold_int(op, *x, *y)),
                        (Value::Bits(x), Value::Bits(y))
                            if self.m.scalar_width(&ty).is_some_and(|w| w <= 128) =>
                        {
                            let w = self.m.scalar_width(&ty).unwrap_or(1);
                            let signed = self.m.scalar_signed(&ty);
                            Some(fold_bits(op, *x, *y, w, signed))
                        }
                        (Value::Bool(x), Value::Bool(y)) if eq => {
                            Some(Ok(Value::Bool((x == y) == (op == BinOp::Eq))))
                        }
                        _ => None,
                    };
                    match folded {
                        Some(Ok(v)) => return Some(konst(v, rty, span)),
                        Some(Err(msg)) => {
                            self.err(codes::CONST_OVERFLOW, msg, span);
                            return None;
                        }
                        None => {}
                    }
                }
                Some(mk(
                    ExprKind::Binary(op, Box::new(l), Box::new(r)),
                    rty,
                    span,
                ))
            }
        }
    }

    fn concat(&mut self, l: Expr, r: Expr, span: Span) -> Option<Expr> {
        let (Some((wl, sl)), Some((wr, _))) = (l.ty.int_width(), r.ty.int_width()) else {
            let bad = if l.ty.int_width().is_none() { &l } else { &r };
            let tn = self.m.type_name(&bad.ty);
            let mut d = Diagnostic::error(
                codes::BAD_CONCAT,
                format!("`++` needs bit<N> or int<N> operands, found `{tn}`"),
                bad.span,
            );
            if bad.ty == Type::InfInt {
                d = d.with_hint("the width of an `int` literal is unknown: write e.g. `4w0`");
            }
            self.emit(d);
            return None;
        };
        let w = u32::from(wl) + u32::from(wr);
        let max = super::types::WIDE_MAX;
        if w > u32::from(max) {
            let d = Diagnostic::error(
                codes::BAD_CONCAT,
                format!("`++` would make a {w}-bit value; the limit is {max} bits"),
                span,
            );
            self.emit(d);
            return None;
        }
        let w = w as u16;
        let ty = if sl { Type::Int(w) } else { Type::Bit(w) };
        if let (ExprKind::Const(Value::Bits(x)), ExprKind::Const(Value::Bits(y)), true) =
            (&l.kind, &r.kind, w <= 128)
        {
            let v = if wr >= 128 { *y } else { (x << wr) | y };
            return Some(konst(Value::Bits(v & mask(w)), ty, span));
        }
        Some(mk(ExprKind::Concat(Box::new(l), Box::new(r)), ty, span))
    }

    fn shift(&mut self, op: BinOp, l: Expr, r: Expr, span: Span) -> Option<Expr> {
        let r = match &r.ty {
            Type::Bit(_) => r,
            Type::InfInt => match &r.kind {
                ExprKind::Const(Value::Int(i)) if *i < 0 => {
                    self.err(codes::BAD_SHIFT, "shift amounts cannot be negative", r.span);
                    return None;
                }
                ExprKind::Const(Value::Int(i)) => {
                    if l.ty == Type::InfInt {
                        r
                    } else {
                        // A constant shift amount: give it a width that holds it.
                        let v = *i as u128;
                        konst(
                            Value::Bits(v.min(u128::from(u32::MAX))),
                            Type::Bit(32),
                            r.span,
                        )
                    }
                }
                _ => r,
            },
            other => {
                let tn = self.m.type_name(other);
                let d = Diagnostic::error(
                    codes::BAD_SHIFT,
                    format!("a shift amount must be an unsigned bit<N> value, found `{tn}`"),
                    r.span,
                );
                self.emit(d);
                return None;
            }
        };
        match &l.ty {
            Type::Bit(w) | Type::Int(w) => {
                let (w, signed) = (*w, matches!(l.ty, Type::Int(_)));
                if let (ExprKind::Const(Value::Bits(x)), ExprKind::Const(Value::Bits(y)), true) =
                    (&l.kind, &r.kind, w <= 128)
                {
                    if let Ok(v) = fold_bits(op, *x, *y, w, signed) {
                        return Some(konst(v, l.ty.clone(), span));
                    }
                }
                let ty = l.ty.clone();
                Some(mk(ExprKind::Binary(op, Box::new(l), Box::new(r)), ty, span))
            }
            Type::InfInt => match (&l.kind, &r.kind) {
                (ExprKind::Const(Value::Int(x)), ExprKind::Const(Value::Int(y))) => {
                    match fold_int(op, *x, *y) {
                        Ok(v) => Some(konst(v, Type::InfInt, span)),
                        Err(msg) => {
                            self.err(codes::CONST_OVERFLOW, msg, span);
                            None
                        }
                    }
                }
                _ => {
                    let d = Diagnostic::error(
                        codes::BAD_SHIFT,
                        "shifting an `int` literal by a run-time amount: its width is unknown",
                        l.span,
                    )
                    .with_hint("give the literal a width, e.g. `32w1 << n`");
                    self.emit(d);
                    None
                }
            },
            other => {
                let tn = self.m.type_name(other);
                self.err(
                    codes::BAD_SHIFT,
                    format!("only bit<N>, int<N> and int values can be shifted, not `{tn}`"),
                    l.span,
                );
                None
            }
        }
    }

    pub(super) fn ternary(
        &mut self,
        c: &ast::Expr,
        a: &ast::Expr,
        b: &ast::Expr,
        span: Span,
    ) -> Option<Expr> {
        let c = self.cond(c);
        let x = self.expr(a);
        let y = self.expr(b);
        let (c, x, y) = (c?, x?, y?);
        if let ExprKind::Const(Value::Bool(v)) = c.kind {
            // Fold, but still insist that the branches agree.
            let (x, y) = if x.ty == y.ty || x.ty == Type::InfInt || y.ty == Type::InfInt {
                (x, y)
            } else {
                self.unify_operands(BinOp::Eq, x, y)?
            };
            return Some(if v { x } else { y });
        }
        let (x, y) = self.unify_operands(BinOp::Eq, x, y)?;
        if x.ty == Type::InfInt {
            let d = Diagnostic::error(
                codes::TYPE_INFERENCE,
                "the width of `?:` on two `int` literals cannot be inferred",
                span,
            )
            .with_hint("give one of the literals a width, e.g. `8w1`");
            self.emit(d);
            return None;
        }
        let ty = x.ty.clone();
        Some(mk(
            ExprKind::Mux(Box::new(c), Box::new(x), Box::new(y)),
            ty,
            span,
        ))
    }

    pub(super) fn cast(&mut self, t: &ast::TypeRef, a: &ast::Expr, span: Span) -> Option<Expr> {
        let to = self.resolve_type(t, &[])?;
        let x = match (&a.kind, &to) {
            (ast::ExprKind::List(_) | ast::ExprKind::StructInit(_), _) => {
                return self.expr_as(a, &to);
            }
            _ => self.expr(a)?,
        };
        if x.ty == to {
            return Some(x);
        }
        let from = x.ty.clone();
        let repr = |m: &crate::ir::Module, t: &Type| -> Option<Type> {
            match t {
                Type::Enum(h) => m.enums[*h].underlying.clone(),
                Type::NewType(n) => Some(m.newtypes[*n].underlying.clone()),
                _ => None,
            }
        };
        let ok = match (&from, &to) {
            (Type::InfInt, Type::Bit(_) | Type::Int(_)) => true,
            (Type::Bit(_), Type::Bit(_)) | (Type::Int(_), Type::Int(_)) => true,
            (Type::Bit(a), Type::Int(b)) | (Type::Int(a), Type::Bit(b)) => a == b,
            (Type::Bool, Type::Bit(1)) | (Type::Bit(1), Type::Bool) => true,
            (Type::InfInt, Type::Bool) => matches!(x.kind, ExprKind::Const(Value::Int(0 | 1))),
            (Type::Enum(_) | Type::NewType(_), _) => repr(&self.m, &from).as_ref() == Some(&to),
            (_, Type::Enum(_) | Type::NewType(_)) => {
                repr(&self.m, &to).as_ref() == Some(&from) || from == Type::InfInt
            }
            _ => false,
        };
        if !ok {
            let (fnm, tn) = (self.m.type_name(&from), self.m.type_name(&to));
            let mut d = Diagnostic::error(
                codes::BAD_CAST,
                format!("cannot cast `{fnm}` to `{tn}`"),
                span,
            );
            if let ((Type::Bit(_), Type::Int(_)) | (Type::Int(_), Type::Bit(_)), Some((w, _))) =
                ((&from, &to), from.int_width())
            {
                d =
                    d.with_hint(format!(
                    "change the width and the signedness in two steps, e.g. `({tn})(({}<{w}>) x)`",
                    if matches!(to, Type::Int(_)) { "int" } else { "bit" }
                ));
            }
            self.emit(d);
            return None;
        }
        // Fold casts of constants (over 128 bits, only of an `int`: see `Value::Bits`).
        let narrow = |w: Option<u16>| w.is_none_or(|w| w <= 128);
        let foldable = matches!(x.kind, ExprKind::Const(Value::Int(_)))
            || (narrow(self.m.scalar_width(&from)) && narrow(self.m.scalar_width(&to)));
        if let (ExprKind::Const(v), true) = (&x.kind, foldable) {
            let folded = match (v, self.m.scalar_width(&to)) {
                (Value::Int(i), Some(w)) => Some(if to == Type::Bool {
                    Value::Bool(*i != 0)
                } else {
                    Value::Bits(consts::from_i128(*i, w))
                }),
                (Value::Bits(b), Some(w)) => {
                    let fw = self.m.scalar_width(&from).unwrap_or(w);
                    let value = if self.m.scalar_signed(&from) {
                        consts::from_i128(consts::to_signed(*b, fw), w)
                    } else {
                        b & mask(w)
                    };
                    Some(if to == Type::Bool {
                        Value::Bool(value != 0)
                    } else {
                        Value::Bits(value)
                    })
                }
                (Value::Bool(b), Some(_)) => Some(Value::Bits(u128::from(*b))),
                _ => None,
            };
            if let Some(v) = folded {
                return Some(konst(v, to, span));
            }
        }
        Some(mk(ExprKind::Cast(Box::new(x)), to, span))
    }
}
