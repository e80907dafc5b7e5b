//! Expressions: the entry points (`expr`, `expr_as`, `cond`, `lvalue`,
//! `const_int`), names, members, indexes, slices and literals, typed with
//! P4's width rules and folded when constant. The operators are in
//! `ops.rs`.

use super::consts::{self, mask};
use super::{did_you_mean, Checker, Sym};
use crate::ast::Direction;
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{Expr, ExprKind, TableResultField, Type, Value, VarKind};

pub(super) fn mk(kind: ExprKind, ty: Type, span: Span) -> Expr {
    Expr { kind, ty, span }
}

pub(super) fn konst(v: Value, ty: Type, span: Span) -> Expr {
    mk(ExprKind::Const(v), ty, span)
}

impl Checker<'_> {
    /// Check an expression and convert it to `ty` (initializers get `ty`'s shape).
    pub(super) fn expr_as(&mut self, e: &ast::Expr, ty: &Type) -> Option<Expr> {
        match (&e.kind, ty) {
            (ast::ExprKind::List(items), Type::Struct(s) | Type::Header(s)) => {
                let fields = self.m.structs[*s].fields.clone();
                if items.len() != fields.len() {
                    let d = Diagnostic::error(
                        codes::INITIALIZER,
                        format!(
                            "`{}` has {} field(s), the initializer gives {}",
                            self.m.structs[*s].name,
                            fields.len(),
                            items.len()
                        ),
                        e.span,
                    );
                    self.emit(d);
                    return None;
                }
                let mut out = Vec::new();
                for (it, f) in items.iter().zip(&fields) {
                    out.push(self.expr_as(it, &f.ty)?);
                }
                Some(mk(ExprKind::List(out), ty.clone(), e.span))
            }
            (ast::ExprKind::StructInit(inits), Type::Struct(s) | Type::Header(s)) => {
                let fields = self.m.structs[*s].fields.clone();
                let mut out = Vec::new();
                let mut ok = true;
                for f in &fields {
                    match inits.iter().find(|(n, _)| n.name == f.name) {
                        Some((_, v)) => match self.expr_as(v, &f.ty) {
                            Some(x) => out.push(x),
                            None => ok = false,
                        },
                        None => {
                            self.err(
                                codes::INITIALIZER,
                                format!("the initializer does not give field `{}`", f.name),
                                e.span,
                            );
                            ok = false;
                        }
                    }
                }
                for (n, _) in inits {
                    if !fields.iter().any(|f| f.name == n.name) {
                        let name = self.m.structs[*s].name.clone();
                        self.err(
                            codes::NO_MEMBER,
                            format!("`{name}` has no field `{}`", n.name),
                            n.span,
                        );
                        ok = false;
                    }
                }
                ok.then(|| mk(ExprKind::List(out), ty.clone(), e.span))
            }
            (ast::ExprKind::List(items), Type::List(ts)) if items.len() == ts.len() => {
                let mut out = Vec::new();
                for (it, t) in items.iter().zip(ts) {
                    out.push(self.expr_as(it, t)?);
                }
                Some(mk(ExprKind::List(out), ty.clone(), e.span))
            }
            _ => {
                let x = self.expr(e)?;
                self.coerce(x, ty)
            }
        }
    }

    /// A condition: must be `bool`.
    pub(super) fn cond(&mut self, e: &ast::Expr) -> Option<Expr> {
        let x = self.expr(e)?;
        if x.ty != Type::Bool {
            let tn = self.m.type_name(&x.ty);
            let mut d = Diagnostic::error(
                codes::NOT_BOOL,
                format!("a condition must be `bool`, found `{tn}`"),
                e.span,
            )
            .with_label(format!("this is `{tn}`"));
            if x.ty.int_width().is_some() || x.ty == Type::InfInt {
                d = d.with_hint("P4 does not convert integers to bool: compare, e.g. `x != 0`");
            }
            self.emit(d);
            return None;
        }
        Some(x)
    }

    /// A compile-time integer (widths, sizes, indices).
    pub(super) fn const_int(&mut self, e: &ast::Expr, what: &str) -> Option<i128> {
        let x = self.expr(e)?;
        match (&x.kind, &x.ty) {
            (ExprKind::Const(Value::Int(i)), _) => Some(*i),
            (ExprKind::Const(Value::Bits(b)), Type::Int(w)) => Some(consts::to_signed(*b, *w)),
            (ExprKind::Const(Value::Bits(b)), Type::Bit(_)) => i128::try_from(*b).ok(),
            (ExprKind::Const(_), _) => {
                let tn = self.m.type_name(&x.ty);
                self.err(
                    codes::TYPE_MISMATCH,
                    format!("{what} must be an integer, found `{tn}`"),
                    e.span,
                );
                None
            }
            _ => {
                let d = Diagnostic::error(
                    codes::NOT_CONSTANT,
                    format!("{what} must be a compile-time constant"),
                    e.span,
                )
                .with_label("computed at run time");
                self.emit(d);
                None
            }
        }
    }

    /// An expression that can be written (`for_arg`: an `out`/`inout` argument).
    pub(super) fn lvalue(&mut self, e: &ast::Expr, for_arg: bool) -> Option<Expr> {
        let x = self.expr(e)?;
        if let Err((span, why)) = self.check_lvalue(&x) {
            let d = if for_arg {
                Diagnostic::error(
                    codes::ARG_NOT_LVALUE,
                    format!("this argument is passed to an `out`/`inout` parameter but {why}"),
                    span,
                )
                .with_label("not an l-value")
                .with_hint("pass a variable, a field, a slice of one, or a header stack element")
            } else {
                Diagnostic::error(
                    codes::ASSIGN_READONLY,
                    format!("cannot assign: {why}"),
                    span,
                )
                .with_label("cannot be written")
            };
            let d = match self.readonly_param_hint(&x) {
                Some(h) => d.with_hint(h),
                None => d,
            };
            self.emit(d);
            return None;
        }
        Some(x)
    }

    fn readonly_param_hint(&self, x: &Expr) -> Option<String> {
        let mut cur = x;
        loop {
            match &cur.kind {
                ExprKind::Var(v) => {
                    let var = &self.m.vars[*v];
                    return match var.kind {
                        VarKind::Param(Some(Direction::In)) => Some(format!(
                            "`{}` is an `in` parameter; declare it `inout` to modify it",
                            var.name
                        )),
                        VarKind::Param(None) => Some(format!(
                            "`{}` is a directionless parameter (read-only)",
                            var.name
                        )),
                        _ => None,
                    };
                }
                ExprKind::Field(b, _)
                | ExprKind::Index(b, _)
                | ExprKind::Slice(b, ..)
                | ExprKind::Next(b)
                | ExprKind::Last(b) => cur = b,
                _ => return None,
            }
        }
    }

    fn check_lvalue(&self, x: &Expr) -> Result<(), (Span, String)> {
        match &x.kind {
            ExprKind::Var(v) => {
                let var = &self.m.vars[*v];
                match var.kind {
                    VarKind::Param(Some(Direction::In)) => {
                        Err((x.span, format!("`{}` is an `in` parameter", var.name)))
                    }
                    VarKind::Param(None) => Err((
                        x.span,
                        format!("`{}` is a directionless parameter", var.name),
                    )),
                    _ => Ok(()),
                }
            }
            ExprKind::Field(b, _)
            | ExprKind::Index(b, _)
            | ExprKind::Next(b)
            | ExprKind::Last(b) => self.check_lvalue(b),
            ExprKind::Slice(b, ..) => self.check_lvalue(b),
            ExprKind::Const(_) => Err((x.span, "it is a constant".into())),
            _ => Err((x.span, "it is a computed value".into())),
        }
    }

    /// Check an expression. `int` literals keep type `int` until a context
    /// gives them a width (see [`Checker::coerce`]).
    pub(super) fn expr(&mut self, e: &ast::Expr) -> Option<Expr> {
        use ast::ExprKind as K;
        let span = e.span;
        match &e.kind {
            K::Int(lit) => self.int_lit(lit, span),
            K::Bool(b) => Some(konst(Value::Bool(*b), Type::Bool, span)),
            K::Str(s) => Some(konst(Value::Str(s.clone()), Type::Str, span)),
            K::Name { name, dot_prefix } => self.name_expr(name, *dot_prefix, span),
            K::Member(base, member) => self.member(base, member, span),
            K::Index(base, idx) => self.index(base, idx, span),
            K::Slice(base, hi, lo) => self.slice(base, hi, lo, span),
            K::Call {
                callee,
                type_args,
                args,
            } => self.call(callee, type_args, args, span, false),
            K::Unary(op, a) => self.unary(*op, a, span),
            K::Binary(op, a, b) => self.binary(*op, a, b, span),
            K::Ternary(c, a, b) => self.ternary(c, a, b, span),
            K::Cast(t, a) => self.cast(t, a, span),
            K::List(items) => {
                let mut out = Vec::new();
                let mut tys = Vec::new();
                let data = std::mem::take(&mut self.ctx.varbit_data);
                for it in items {
                    let x = self.eq_operand(data, it)?;
                    if x.ty == Type::InfInt {
                        let d = Diagnostic::error(
                            codes::TYPE_INFERENCE,
                            "the width of this integer in a list cannot be inferred",
                            it.span,
                        )
                        .with_hint("give it a width, e.g. `8w1`, or cast it: `(bit<8>) 1`");
                        self.emit(d);
                        return None;
                    }
                    tys.push(x.ty.clone());
                    out.push(x);
                }
                Some(mk(ExprKind::List(out), Type::List(tys), span))
            }
            K::StructInit(_) => {
                self.err(
                    codes::INITIALIZER,
                    "the type of this struct initializer cannot be inferred here",
                    span,
                );
                None
            }
            K::DontCare => Some(mk(ExprKind::Const(Value::Int(0)), Type::DontCare, span)),
            K::Type(t) => {
                let d = Diagnostic::error(codes::TYPE_AS_VALUE, "a type is not a value", t.span)
                    .with_label("expected an expression");
                self.emit(d);
                None
            }
        }
    }

    fn int_lit(&mut self, lit: &ast::IntLit, span: Span) -> Option<Expr> {
        match lit.width {
            None => match i128::try_from(lit.value) {
                Ok(i) => Some(konst(Value::Int(i), Type::InfInt, span)),
                Err(_) => {
                    self.err(
                        codes::CONST_OVERFLOW,
                        format!("integer literal `{}` is too large", lit.text),
                        span,
                    );
                    None
                }
            },
            Some((signed, w)) => {
                let max = super::types::WIDE_MAX;
                if w == 0 || w > u32::from(max) {
                    let d = Diagnostic::error(
                        codes::WIDTH_RANGE,
                        format!(
                            "literal `{}`: widths must be between 1 and {max} bits",
                            lit.text
                        ),
                        span,
                    );
                    self.emit(d);
                    return None;
                }
                let w = w as u16;
                if let Some(limbs) = &lit.wide {
                    return self.wide_lit(lit, limbs, signed, w, span);
                }
                let limit = if signed { mask(w) >> 1 } else { mask(w) };
                if lit.value > limit {
                    let d = Diagnostic::error(
                        codes::LITERAL_RANGE,
                        format!("literal `{}` does not fit in {w} bits", lit.text),
                        span,
                    )
                    .with_hint(format!("the largest value is {limit}"));
                    self.emit(d);
                    return None;
                }
                let ty = if signed { Type::Int(w) } else { Type::Bit(w) };
                if w > 128 && lit.value >> 127 != 0 {
                    // A value over 128 bits is its low 128 bits sign-extended
                    // (see `Value::Bits`): zero-extend a 128-bit one explicitly.
                    let v = konst(Value::Bits(lit.value), Type::Bit(128), span);
                    return Some(mk(ExprKind::Cast(Box::new(v)), ty, span));
                }
                Some(konst(Value::Bits(lit.value), ty, span))
            }
        }
    }

    fn name_expr(&mut self, name: &ast::Ident, dot: bool, span: Span) -> Option<Expr> {
        let sym = self.resolve(name, dot)?;
        match sym {
            Sym::Var(v) => Some(mk(ExprKind::Var(v), self.m.vars[v].ty.clone(), span)),
            Sym::Const(ty, v) => Some(konst(v, ty, span)),
            other => {
                let d = Diagnostic::error(
                    codes::WRONG_KIND,
                    format!("`{}` is {}, not a value", name.name, other.describe()),
                    span,
                )
                .with_label("expected a value");
                let d = match other {
                    Sym::Table(_) => d.with_hint(format!("apply it: `{}.apply()`", name.name)),
                    Sym::Action(_) => d.with_hint(format!("call it: `{}(...)`", name.name)),
                    _ => d,
                };
                self.emit(d);
                None
            }
        }
    }

    fn member(&mut self, base: &ast::Expr, member: &ast::Ident, span: Span) -> Option<Expr> {
        // `error.X`
        let is_error_kw = match &base.kind {
            ast::ExprKind::Name { name, .. } => {
                name.name == "error" && self.lookup("error", false).is_none()
            }
            ast::ExprKind::Type(t) => matches!(t.kind, ast::TypeRefKind::Error),
            _ => false,
        };
        if is_error_kw {
            return match self.m.errors.iter().position(|x| *x == member.name) {
                Some(i) => Some(konst(Value::Bits(i as u128), Type::Error, span)),
                None => {
                    let mut d = Diagnostic::error(
                        codes::NO_MEMBER,
                        format!("there is no error `{}`", member.name),
                        member.span,
                    );
                    let errs = self.m.errors.clone();
                    if let Some(b) = did_you_mean(&member.name, errs.iter().map(String::as_str)) {
                        d = d.with_hint(format!("did you mean `error.{b}`?"));
                    } else {
                        d = d.with_hint("declare it: `error { MyError }`");
                    }
                    self.emit(d);
                    None
                }
            };
        }
        // `Enum.X`
        let type_base = match &base.kind {
            ast::ExprKind::Name { name, dot_prefix } => {
                match self.lookup(&name.name, *dot_prefix) {
                    Some(Sym::Type(t)) => Some(t.clone()),
                    _ => None,
                }
            }
            ast::ExprKind::Type(t) => self.resolve_type(t, &[]),
            _ => None,
        };
        if let Some(t) = type_base {
            let Type::Enum(h) = t else {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED,
                    format!(
                        "`{}.{}`: members of type `{}` are not supported",
                        self.m.type_name(&t),
                        member.name,
                        self.m.type_name(&t)
                    ),
                    span,
                );
                self.emit(d);
                return None;
            };
            let def = &self.m.enums[h];
            return match def.members.iter().find(|(n, _)| *n == member.name) {
                Some((_, v)) => Some(konst(Value::Bits(*v), Type::Enum(h), span)),
                None => {
                    let names: Vec<String> = def.members.iter().map(|m| m.0.clone()).collect();
                    let ename = def.name.clone();
                    let mut d = Diagnostic::error(
                        codes::NO_MEMBER,
                        format!("enum `{ename}` has no member `{}`", member.name),
                        member.span,
                    );
                    if let Some(b) = did_you_mean(&member.name, names.iter().map(String::as_str)) {
                        d = d.with_hint(format!("did you mean `{ename}.{b}`?"));
                    }
                    self.emit(d);
                    None
                }
            };
        }
        let b = self.expr(base)?;
        match &b.ty {
            // A variable whose type had an error: already reported.
            Type::DontCare => None,
            Type::Header(s) | Type::Struct(s) => {
                let def = &self.m.structs[*s];
                match def.fields.iter().position(|f| f.name == member.name) {
                    Some(i) => {
                        let ty = def.fields[i].ty.clone();
                        if def.fields[i].varbit && !self.ctx.varbit_operand {
                            let d = Diagnostic::error(
                                codes::VARBIT,
                                format!(
                                    "the varbit field `{}` cannot be used in an expression",
                                    member.name
                                ),
                                span,
                            )
                            .with_hint(
                                "a varbit field is extracted, emitted and copied with its header, \
                                 and may be an item of a checksum's or hash's data list",
                            );
                            self.emit(d);
                            return None;
                        }
                        let folded = match &b.kind {
                            ExprKind::List(items) => items.get(i).cloned(),
                            _ => None,
                        };
                        Some(folded.unwrap_or_else(|| {
                            mk(ExprKind::Field(Box::new(b), i as u32), ty, span)
                        }))
                    }
                    None => {
                        let names: Vec<String> =
                            def.fields.iter().map(|f| f.name.clone()).collect();
                        let sname = def.name.clone();
                        let mut d = Diagnostic::error(
                            codes::NO_MEMBER,
                            format!("`{sname}` has no field `{}`", member.name),
                            member.span,
                        )
                        .with_label("unknown field");
                        if let Some(best) =
                            did_you_mean(&member.name, names.iter().map(String::as_str))
                        {
                            d = d.with_hint(format!("did you mean `{best}`?"));
                        } else {
                            d = d.with_note(format!("its fields are: {}", names.join(", ")));
                        }
                        self.emit(d);
                        None
                    }
                }
            }
            Type::Stack(h, n) => {
                let (h, n) = (*h, *n);
                if self.m.structs[h].is_union && member.name != "size" {
                    self.union_stack_unsupported(&format!("`{}`", member.name), member.span);
                    return None;
                }
                match member.name.as_str() {
                    "next" => Some(mk(ExprKind::Next(Box::new(b)), Type::Header(h), span)),
                    "last" => Some(mk(ExprKind::Last(Box::new(b)), Type::Header(h), span)),
                    "size" => Some(konst(Value::Bits(u128::from(n)), Type::Bit(32), span)),
                    "lastIndex" => Some(mk(ExprKind::LastIndex(Box::new(b)), Type::Bit(32), span)),
                    _ => {
                        self.err(
                            codes::NO_MEMBER,
                            format!(
                                "header stacks have `next`, `last`, `size` and `lastIndex`, not `{}`",
                                member.name
                            ),
                            member.span,
                        );
                        None
                    }
                }
            }
            Type::TableResult(t) => {
                let t = *t;
                let (f, ty) = match member.name.as_str() {
                    "hit" => (TableResultField::Hit, Type::Bool),
                    "miss" => (TableResultField::Miss, Type::Bool),
                    "action_run" => (TableResultField::ActionRun, Type::TableResult(t)),
                    _ => {
                        self.err(
                            codes::NO_MEMBER,
                            format!(
                                "`apply()` results have `hit`, `miss` and `action_run`, not `{}`",
                                member.name
                            ),
                            member.span,
                        );
                        return None;
                    }
                };
                Some(mk(ExprKind::TableResult(Box::new(b), f), ty, span))
            }
            other => {
                let tn = self.m.type_name(other);
                self.err(
                    codes::NO_MEMBER,
                    format!("a value of type `{tn}` has no member `{}`", member.name),
                    member.span,
                );
                None
            }
        }
    }

    fn index(&mut self, base: &ast::Expr, idx: &ast::Expr, span: Span) -> Option<Expr> {
        let b = self.expr(base)?;
        let Type::Stack(h, n) = b.ty else {
            let tn = self.m.type_name(&b.ty);
            let d = Diagnostic::error(
                codes::BAD_SLICE,
                format!("only header stacks can be indexed; this is `{tn}`"),
                base.span,
            )
            .with_hint("to take bits, write a slice `x[hi:lo]`");
            self.emit(d);
            return None;
        };
        let i = self.expr(idx)?;
        let i = match &i.ty {
            Type::InfInt => self.coerce(i, &Type::Bit(32))?,
            Type::Bit(_) => i,
            // A signed index (P4_16 1.2.x): sign-extended, so a negative one
            // is out of range.
            Type::Int(_) => {
                let s = i.span;
                mk(ExprKind::Cast(Box::new(i)), Type::Bit(32), s)
            }
            other => {
                let tn = self.m.type_name(other);
                self.err(
                    codes::BAD_SLICE,
                    format!("a stack index must be an integer, found `{tn}`"),
                    idx.span,
                );
                return None;
            }
        };
        if self.m.structs[h].is_union && !matches!(i.kind, ExprKind::Const(_)) {
            self.union_stack_unsupported("a run-time index", idx.span);
            return None;
        }
        if let ExprKind::Const(Value::Bits(v)) = &i.kind {
            if *v >= u128::from(n) {
                let d = Diagnostic::error(
                    codes::BAD_SLICE,
                    format!("index {v} is out of range for a stack of {n}"),
                    idx.span,
                );
                self.emit(d);
                return None;
            }
        }
        Some(mk(
            ExprKind::Index(Box::new(b), Box::new(i)),
            self.stack_elem(h),
            span,
        ))
    }

    fn slice(
        &mut self,
        base: &ast::Expr,
        hi: &ast::Expr,
        lo: &ast::Expr,
        span: Span,
    ) -> Option<Expr> {
        let b = self.expr(base)?;
        let hi_v = self.const_int(hi, "a slice bound")?;
        let lo_v = self.const_int(lo, "a slice bound")?;
        let Some((w, _)) = b.ty.int_width() else {
            let tn = self.m.type_name(&b.ty);
            let d = Diagnostic::error(
                codes::BAD_SLICE,
                format!("only bit<N> and int<N> values can be sliced; this is `{tn}`"),
                base.span,
            );
            let d = if b.ty == Type::InfInt {
                d.with_hint("give the value a width first: `(bit<32>) x`")
            } else {
                d
            };
            self.emit(d);
            return None;
        };
        if lo_v < 0 || hi_v < lo_v || hi_v >= i128::from(w) {
            let d = Diagnostic::error(
                codes::BAD_SLICE,
                format!("slice [{hi_v}:{lo_v}] is outside the {w} bits of the value"),
                span,
            )
            .with_note(format!("bounds must satisfy {} >= hi >= lo >= 0", w - 1));
            self.emit(d);
            return None;
        }
        let (hi_v, lo_v) = (hi_v as u16, lo_v as u16);
        let ty = Type::Bit(hi_v - lo_v + 1);
        if let (ExprKind::Const(Value::Bits(v)), true) = (&b.kind, w <= 128) {
            return Some(konst(
                Value::Bits((v >> lo_v) & mask(hi_v - lo_v + 1)),
                ty,
                span,
            ));
        }
        Some(mk(ExprKind::Slice(Box::new(b), hi_v, lo_v), ty, span))
    }
}

impl Checker<'_> {
    /// A literal over 128 bits (`limbs`: 128-bit limbs, least significant
    /// first): the `++` of its 128-bit parts, cast to `int<w>` when signed.
    fn wide_lit(
        &mut self,
        lit: &ast::IntLit,
        limbs: &[u128],
        signed: bool,
        w: u16,
        span: Span,
    ) -> Option<Expr> {
        let top = limbs.iter().rposition(|x| *x != 0).unwrap_or(0);
        let bits = 128 * top as u32 + (128 - limbs[top].leading_zeros());
        let room = u32::from(w) - u32::from(signed);
        if bits > room {
            let d = Diagnostic::error(
                codes::LITERAL_RANGE,
                format!("literal `{}` does not fit in {w} bits", lit.text),
                span,
            )
            .with_hint(format!("it needs {} bits", bits + u32::from(signed)));
            self.emit(d);
            return None;
        }
        // Parts of at most 128 bits, the most significant taking the remainder.
        let n = w.div_ceil(128);
        let mut out: Option<Expr> = None;
        for k in (0..n).rev() {
            let pw = if k + 1 == n { w - 128 * (n - 1) } else { 128 };
            let v = limbs.get(usize::from(k)).copied().unwrap_or(0);
            let part = konst(Value::Bits(v & mask(pw)), Type::Bit(pw), span);
            out = Some(match out {
                None => part,
                Some(hi) => {
                    let hw = self.m.scalar_width(&hi.ty).unwrap_or(0);
                    mk(
                        ExprKind::Concat(Box::new(hi), Box::new(part)),
                        Type::Bit(hw + pw),
                        span,
                    )
                }
            });
        }
        let e = out?;
        Some(if signed {
            mk(ExprKind::Cast(Box::new(e)), Type::Int(w), span)
        } else {
            e
        })
    }
}
