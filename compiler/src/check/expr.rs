//! Expressions: typing with P4's width rules, and constant folding.

use super::consts::{self, fold_bits, fold_int, fold_unary_bits, mask};
use super::{did_you_mean, Checker, Sym};
use crate::ast::Direction;
use crate::ast::{self, BinOp, Span, UnOp};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{Expr, ExprKind, TableResultField, Type, Value, VarKind};

fn mk(kind: ExprKind, ty: Type, span: Span) -> Expr {
    Expr { kind, ty, span }
}

fn konst(v: Value, ty: Type, span: Span) -> Expr {
    mk(ExprKind::Const(v), ty, span)
}

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

    fn unary(&mut self, op: UnOp, a: &ast::Expr, span: Span) -> Option<Expr> {
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

    fn binary(&mut self, op: BinOp, a: &ast::Expr, b: &ast::Expr, span: Span) -> Option<Expr> {
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

    fn ternary(&mut self, c: &ast::Expr, a: &ast::Expr, b: &ast::Expr, span: Span) -> Option<Expr> {
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

    fn cast(&mut self, t: &ast::TypeRef, a: &ast::Expr, span: Span) -> Option<Expr> {
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
