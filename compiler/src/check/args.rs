//! Binding call arguments to parameters: arity, names, defaults,
//! directions (`out`/`inout` need l-values), type parameters (with
//! `int` literals defaulting where the callee allows it) and literal
//! widths.

use super::types::{subst_apply, unify, Subst};
use super::{did_you_mean, Checker};
use crate::ast::{self, Direction, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{Arg, Expr, ParamDef, Type};

impl Checker<'_> {
    /// Bind call arguments to parameters: arity, names, directions (l-values
    /// for `out`/`inout`), type parameters, and `int` literal widths.
    pub(super) fn bind_args(
        &mut self,
        params: &[ParamDef],
        args: &[ast::Argument],
        subst: &mut Subst,
        callee: &str,
        span: Span,
    ) -> Option<Vec<Arg>> {
        self.bind_args_defaulting(params, args, subst, callee, span, &[])
    }

    /// As [`Self::bind_args`]; an `int` literal given for a parameter whose
    /// type is one of the still unbound type variables `int_vars` binds that
    /// variable to `bit<32>` instead of being an error.
    pub(super) fn bind_args_defaulting(
        &mut self,
        params: &[ParamDef],
        args: &[ast::Argument],
        subst: &mut Subst,
        callee: &str,
        span: Span,
        int_vars: &[String],
    ) -> Option<Vec<Arg>> {
        // 1. Which argument goes to which parameter.
        let named = args.iter().filter(|a| a.name.is_some()).count();
        let mut slots: Vec<Option<&ast::Argument>> = vec![None; params.len()];
        if named > 0 {
            if named != args.len() {
                self.err(
                    codes::NAMED_ARG,
                    "either all arguments are named or none is",
                    span,
                );
                return None;
            }
            for a in args {
                let Some(n) = &a.name else { continue };
                match params.iter().position(|p| p.name == n.name) {
                    Some(i) if slots[i].is_none() => slots[i] = Some(a),
                    Some(_) => {
                        self.err(
                            codes::NAMED_ARG,
                            format!("argument `{}` is given twice", n.name),
                            n.span,
                        );
                        return None;
                    }
                    None => {
                        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                        let mut d = Diagnostic::error(
                            codes::NAMED_ARG,
                            format!("`{callee}` has no parameter `{}`", n.name),
                            n.span,
                        );
                        if let Some(best) = did_you_mean(&n.name, names.into_iter()) {
                            d = d.with_hint(format!("did you mean `{best}`?"));
                        }
                        self.emit(d);
                        return None;
                    }
                }
            }
        } else {
            if args.len() > params.len() {
                let d = Diagnostic::error(
                    codes::ARG_COUNT,
                    format!(
                        "`{callee}` takes {} argument(s), {} given",
                        params.len(),
                        args.len()
                    ),
                    span,
                );
                self.emit(d);
                return None;
            }
            for (i, a) in args.iter().enumerate() {
                slots[i] = Some(a);
            }
        }
        let missing: Vec<&str> = params
            .iter()
            .zip(&slots)
            .filter(|(p, s)| s.is_none() && !p.has_default)
            .map(|(p, _)| p.name.as_str())
            .collect();
        if !missing.is_empty() {
            let d = Diagnostic::error(
                codes::ARG_COUNT,
                format!(
                    "`{callee}` takes {} argument(s), {} given: missing {}",
                    params.len(),
                    args.len(),
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                span,
            );
            self.emit(d);
            return None;
        }
        // 2. Check the arguments; unify type parameters with typed arguments.
        let mut checked: Vec<Option<Expr>> = Vec::with_capacity(params.len());
        let mut ok = true;
        for (p, slot) in params.iter().zip(&slots) {
            let Some(a) = slot else {
                checked.push(None);
                continue;
            };
            let is_dont_care = matches!(a.value.kind, ast::ExprKind::DontCare);
            let x = match p.direction {
                Some(Direction::Out) if is_dont_care => None,
                Some(Direction::Out) | Some(Direction::InOut) => self.lvalue(&a.value, true),
                _ => {
                    let pt = subst_apply(&p.ty, subst);
                    let shaped = matches!(
                        a.value.kind,
                        ast::ExprKind::List(_) | ast::ExprKind::StructInit(_)
                    ) && matches!(pt, Type::Struct(_) | Type::Header(_));
                    if shaped {
                        self.expr_as(&a.value, &pt)
                    } else {
                        self.expr(&a.value)
                    }
                }
            };
            match x {
                Some(x) => {
                    if x.ty != Type::InfInt && x.ty != Type::DontCare && p.ty.has_vars() {
                        let before = subst_apply(&p.ty, subst);
                        if !unify(&p.ty, &x.ty, subst) {
                            self.mismatch(&before, &x.ty, x.span);
                            ok = false;
                        }
                    }
                    checked.push(Some(x));
                }
                None if is_dont_care && p.direction == Some(Direction::Out) => checked.push(None),
                None => {
                    ok = false;
                    checked.push(None);
                }
            }
        }
        if !ok {
            return None;
        }
        // 3. Convert to the (now known) parameter types.
        let mut out = Vec::with_capacity(params.len());
        for (p, x) in params.iter().zip(checked) {
            let target = subst_apply(&p.ty, subst);
            let Some(x) = x else {
                out.push(Arg::Skip(target));
                continue;
            };
            match p.direction {
                Some(dir @ (Direction::Out | Direction::InOut)) => {
                    if !target.has_vars() && x.ty != target {
                        self.mismatch(&target, &x.ty, x.span);
                        ok = false;
                        continue;
                    }
                    out.push(Arg::Out(x, dir));
                }
                _ => {
                    if let (Type::Var(v), Type::InfInt) = (&target, &x.ty) {
                        if int_vars.contains(v) {
                            subst.push((v.clone(), Type::Bit(32)));
                            match self.coerce(x, &Type::Bit(32)) {
                                Some(x) => out.push(Arg::In(x)),
                                None => ok = false,
                            }
                            continue;
                        }
                    }
                    if target.has_vars() {
                        if x.ty == Type::InfInt {
                            let d = Diagnostic::error(
                                codes::TYPE_INFERENCE,
                                format!(
                                    "the width of this integer cannot be inferred from `{callee}`'s \
                                     parameter `{}`",
                                    p.name
                                ),
                                x.span,
                            )
                            .with_hint("give it a width, e.g. `32w0`, or cast it");
                            self.emit(d);
                            ok = false;
                            continue;
                        }
                        out.push(Arg::In(x));
                    } else {
                        match self.coerce(x, &target) {
                            Some(x) => out.push(Arg::In(x)),
                            None => ok = false,
                        }
                    }
                }
            }
        }
        ok.then_some(out)
    }
}
