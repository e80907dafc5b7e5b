//! Calls: calls of actions, tables, instances and functions, and the
//! mapping of extern functions and methods to the target's builtins with
//! the rules on where each may be called. Binding arguments to parameters
//! (directions, type parameters, defaults) is in `args.rs`.

use super::types::{subst_apply, Subst};
use super::{did_you_mean, Checker, Sym};
use crate::ast::{self, Direction, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{
    self, Arg, Builtin, Call, Callee, Expr, ExprKind, Handle, InstanceKind, ParamDef, Receiver,
    Type, Value, VarKind,
};

/// The builtin implementing extern function `name` with `arity` arguments.
pub(crate) fn builtin_fn(name: &str, arity: usize) -> Option<Builtin> {
    use Builtin::*;
    Some(match (name, arity) {
        ("verify", 2) => Verify,
        // The zero-argument form is the pre-2019 v1model one (still in p4c's
        // older samples); both act on the packet's standard metadata.
        ("mark_to_drop", 0 | 1) => MarkToDrop,
        ("hash", 5) => Hash,
        ("verify_checksum", 4) => VerifyChecksum(false),
        ("verify_checksum_with_payload", 4) => VerifyChecksum(true),
        ("update_checksum", 4) => UpdateChecksum(false),
        ("update_checksum_with_payload", 4) => UpdateChecksum(true),
        ("random", 3) => Random,
        ("digest", 2) => Digest,
        ("log_msg", 1 | 2) => LogMsg,
        ("clone", 2) => Clone,
        ("clone_preserving_field_list", 3) => ClonePreserving,
        ("resubmit_preserving_field_list", 1) => Resubmit,
        ("recirculate_preserving_field_list", 1) => Recirculate,
        ("truncate", 1) => Truncate,
        ("assert", 1) => Assert,
        ("assume", 1) => Assume,
        ("Deconcatenate", 2) => Deconcatenate,
        ("Concatenate", 2) => Concatenate,
        ("Lookup", 2) => Lookup,
        ("Insert", 2) => Insert,
        ("IdxFilterTest", 1) => IdxFilterTest,
        ("IdxFilterSet", 1) => IdxFilterSet,
        ("PendingContains", 1) => PendingContains,
        ("PendingInsert", 1) => PendingInsert,
        ("PendingComplete", 2) => PendingComplete,
        ("HostRead", 2) => HostRead,
        ("HostWrite", 2) => HostWrite,
        (n, k) => match netsparse_externs::artifact::SpinOp::from_name(n) {
            Some(op) if op.operands().len() == k => Spin(op),
            _ => match netsparse_externs::artifact::CollOp::from_name(n) {
                Some(op) if op.operands().len() == k => Coll(op),
                _ => return None,
            },
        },
    })
}

/// The builtin implementing method `method` (with `arity` arguments) of extern `ext`.
pub(crate) fn builtin_method(ext: &str, method: &str, arity: usize) -> Option<Builtin> {
    use Builtin::*;
    Some(match (ext, method, arity) {
        ("packet_in", "extract", 1) => Extract,
        ("packet_in", "extract", 2) => ExtractVarbit,
        ("packet_in", "lookahead", 0) => Lookahead,
        ("packet_in", "advance", 1) => Advance,
        ("packet_out", "emit", 1) => Emit,
        ("register", "read", 1) => RegisterReadValue,
        ("register", "read", 2) => RegisterRead,
        ("register", "write", 2) => RegisterWrite,
        ("counter", "count", 1) => Count,
        ("direct_counter", "count", 0) => CountDirect,
        ("meter", "execute_meter", 2) => ExecuteMeter,
        ("direct_meter", "read", 1) => ReadDirectMeter,
        // PSA (<psa.p4>).
        ("Register", "read", 1) => RegisterReadValue,
        ("Register", "write", 2) => RegisterWrite,
        ("Counter", "count", 1) => Count,
        ("DirectCounter", "count", 0) => CountDirect,
        // Colour-blind only: the colour-aware `execute(index, color)` is not implemented.
        ("Meter", "execute", 1) => MeterExecute,
        ("DirectMeter", "execute", 0) => DirectMeterExecute,
        ("Hash", "get_hash", 1 | 3) => HashGet,
        ("Checksum" | "InternetChecksum", "clear", 0) => ChecksumClear,
        ("Checksum", "update", 1) | ("InternetChecksum", "add", 1) => ChecksumAdd,
        ("InternetChecksum", "subtract", 1) => ChecksumSubtract,
        ("Checksum" | "InternetChecksum", "get", 0) => ChecksumGet,
        ("InternetChecksum", "get_state", 0) => ChecksumGetState,
        ("InternetChecksum", "set_state", 1) => ChecksumSetState,
        ("Random", "read", 0) => RandomRead,
        ("Digest", "pack", 1) => DigestPack,
        _ => return None,
    })
}

fn builtin_name(op: Builtin) -> &'static str {
    use Builtin::*;
    match op {
        Extract | ExtractVarbit => "extract",
        Lookahead => "lookahead",
        Advance => "advance",
        Emit => "emit",
        Verify => "verify",
        _ => "this call",
    }
}

impl Checker<'_> {
    /// Parameters of a parser/control/action/function, from its variables.
    pub(super) fn var_params(&self, vars: &[Handle<ir::Var>]) -> Vec<ParamDef> {
        vars.iter()
            .map(|v| {
                let var = &self.m.vars[*v];
                ParamDef {
                    name: var.name.clone(),
                    direction: match var.kind {
                        VarKind::Param(d) => d,
                        VarKind::Local => None,
                    },
                    ty: var.ty.clone(),
                    has_default: false,
                }
            })
            .collect()
    }

    pub(super) fn not_here(&mut self, what: &str, span: Span, hint: &str) {
        let d = Diagnostic::error(
            codes::NOT_ALLOWED_HERE,
            format!("{what} is not allowed here"),
            span,
        )
        .with_hint(hint.to_string());
        self.emit(d);
    }

    /// Check a call. In expression context (`stmt == false`) it must return a value.
    pub(super) fn call(
        &mut self,
        callee: &ast::Expr,
        type_args: &[ast::TypeRef],
        args: &[ast::Argument],
        span: Span,
        stmt: bool,
    ) -> Option<Expr> {
        let x = self.call_inner(callee, type_args, args, span)?;
        if !stmt && x.ty == Type::Void {
            let d = Diagnostic::error(
                codes::TYPE_MISMATCH,
                "this call returns nothing; it cannot be used as a value",
                span,
            );
            self.emit(d);
            return None;
        }
        Some(x)
    }

    pub(super) fn call_inner(
        &mut self,
        callee: &ast::Expr,
        type_args: &[ast::TypeRef],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        match &callee.kind {
            ast::ExprKind::Name { name, dot_prefix } => {
                let sym = self.resolve(name, *dot_prefix)?;
                match sym {
                    Sym::Action(a) => self.call_action(a, args, span),
                    Sym::Function(f) => {
                        let params = self.var_params(&self.m.functions[f].params.clone());
                        let mut subst = Subst::new();
                        let args = self.bind_args(&params, args, &mut subst, &name.name, span)?;
                        let ret = self.m.functions[f].ret.clone();
                        Some(call_expr(Callee::Function(f), args, ret, span))
                    }
                    Sym::ExternFns(list) => self.call_extern_fn(name, &list, type_args, args, span),
                    other => {
                        let d = Diagnostic::error(
                            codes::WRONG_KIND,
                            format!(
                                "`{}` is {} and cannot be called",
                                name.name,
                                other.describe()
                            ),
                            callee.span,
                        );
                        let d = match other {
                            Sym::Instance(_) | Sym::Table(_) => {
                                d.with_hint(format!("apply it: `{}.apply(...)`", name.name))
                            }
                            _ => d,
                        };
                        self.emit(d);
                        None
                    }
                }
            }
            ast::ExprKind::Member(base, method) => {
                if let ast::ExprKind::Name { name, dot_prefix } = &base.kind {
                    match self.lookup(&name.name, *dot_prefix).cloned() {
                        Some(Sym::Table(t)) => return self.apply_table(t, method, args, span),
                        Some(Sym::Instance(i)) => {
                            return self.call_instance(i, method, type_args, args, span)
                        }
                        // Direct invocation (P4_16 1.2): `C.apply(...)` of a
                        // control type is an anonymous instance of it.
                        Some(Sym::Control(c))
                            if method.name == "apply" && self.ctx.apply_depth.is_some() =>
                        {
                            let i = self.m.instances.append(ir::Instance {
                                name: name.name.clone(),
                                kind: InstanceKind::Control(c),
                                span: base.span,
                            });
                            self.direct_instances.push(i);
                            return self.call_instance(i, method, type_args, args, span);
                        }
                        _ => {}
                    }
                }
                let b = self.expr(base)?;
                self.call_on_value(b, method, type_args, args, span)
            }
            _ => {
                self.err(
                    codes::WRONG_KIND,
                    "this expression cannot be called",
                    callee.span,
                );
                None
            }
        }
    }

    pub(super) fn call_action(
        &mut self,
        a: Handle<ir::Action>,
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        if self.ctx.in_parser {
            self.not_here(
                "calling an action in a parser",
                span,
                "actions run in controls",
            );
            return None;
        }
        let params = self.var_params(&self.m.actions[a].params.clone());
        let name = self.m.actions[a].name.clone();
        let mut subst = Subst::new();
        let args = self.bind_args(&params, args, &mut subst, &name, span)?;
        Some(call_expr(Callee::Action(a), args, Type::Void, span))
    }

    pub(super) fn apply_table(
        &mut self,
        t: Handle<ir::Table>,
        method: &ast::Ident,
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        if method.name != "apply" {
            self.err(
                codes::NO_MEMBER,
                format!("tables have one method, `apply`, not `{}`", method.name),
                method.span,
            );
            return None;
        }
        if !args.is_empty() {
            self.err(
                codes::ARG_COUNT,
                "`apply()` on a table takes no arguments",
                span,
            );
            return None;
        }
        if self.ctx.in_action || self.ctx.apply_depth.is_none() {
            self.not_here(
                "applying a table",
                span,
                "tables are applied in a control's `apply` block, not in actions or functions",
            );
            return None;
        }
        if self.ctx.loop_depth > 0 {
            self.not_here(
                "applying a table inside a loop",
                span,
                "a table is applied at most once per packet; apply it before or after the loop",
            );
            return None;
        }
        Some(call_expr(
            Callee::ApplyTable(t),
            Vec::new(),
            Type::TableResult(t),
            span,
        ))
    }

    pub(super) fn call_instance(
        &mut self,
        i: Handle<ir::Instance>,
        method: &ast::Ident,
        type_args: &[ast::TypeRef],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        let inst = self.m.instances[i].clone();
        match inst.kind {
            InstanceKind::Control(c) => {
                if method.name != "apply" {
                    self.err(
                        codes::NO_MEMBER,
                        format!(
                            "a control instance has one method, `apply`, not `{}`",
                            method.name
                        ),
                        method.span,
                    );
                    return None;
                }
                if self.ctx.in_action || self.ctx.apply_depth.is_none() {
                    self.not_here(
                        "applying a control",
                        span,
                        "controls are applied in another control's `apply` block",
                    );
                    return None;
                }
                if self.ctx.loop_depth > 0 {
                    self.not_here(
                        "applying a control inside a loop",
                        span,
                        "its tables would be applied more than once per packet; apply it outside the loop",
                    );
                    return None;
                }
                let params = self.var_params(&self.m.controls[c].params.clone());
                let mut subst = Subst::new();
                let args = self.bind_args(&params, args, &mut subst, &inst.name, span)?;
                Some(call_expr(Callee::ApplyControl(i), args, Type::Void, span))
            }
            InstanceKind::Parser(sp) => {
                if method.name != "apply" {
                    self.err(
                        codes::NO_MEMBER,
                        format!(
                            "a parser instance has one method, `apply`, not `{}`",
                            method.name
                        ),
                        method.span,
                    );
                    return None;
                }
                if !self.ctx.in_parser {
                    self.not_here(
                        "applying a parser",
                        span,
                        "sub-parsers are applied in a state of another parser",
                    );
                    return None;
                }
                let params = self.var_params(&self.m.parsers[sp].params.clone());
                let mut subst = Subst::new();
                let args = self.bind_args(&params, args, &mut subst, &inst.name, span)?;
                Some(call_expr(Callee::ApplyParser(i), args, Type::Void, span))
            }
            InstanceKind::Extern {
                def,
                type_args: targs,
                ..
            } => {
                let recv = Receiver::Instance(i);
                self.call_extern_method(def, targs, recv, method, type_args, args, span)
            }
        }
    }

    pub(super) fn call_on_value(
        &mut self,
        b: Expr,
        method: &ast::Ident,
        type_args: &[ast::TypeRef],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        match b.ty.clone() {
            // A variable whose type had an error: already reported.
            Type::DontCare => None,
            Type::Extern(def, targs) => self.call_extern_method(
                def,
                targs,
                Receiver::Expr(b),
                method,
                type_args,
                args,
                span,
            ),
            Type::Header(_) => {
                if !args.is_empty() {
                    self.err(
                        codes::ARG_COUNT,
                        format!("`{}()` takes no arguments", method.name),
                        span,
                    );
                    return None;
                }
                match method.name.as_str() {
                    "isValid" => Some(Expr {
                        kind: ExprKind::IsValid(Box::new(b)),
                        ty: Type::Bool,
                        span,
                    }),
                    "minSizeInBits" | "minSizeInBytes" | "maxSizeInBits" | "maxSizeInBytes" => {
                        self.header_size(&b, &method.name, span)
                    }
                    "setValid" | "setInvalid" => {
                        let op = if method.name == "setValid" {
                            Builtin::SetValid
                        } else {
                            Builtin::SetInvalid
                        };
                        if self.lvalue_ok(&b, span) {
                            Some(builtin_call(
                                op,
                                Some(Receiver::Expr(b)),
                                Vec::new(),
                                Vec::new(),
                                span,
                            ))
                        } else {
                            None
                        }
                    }
                    _ => {
                        let mut d = Diagnostic::error(
                            codes::NO_MEMBER,
                            format!("headers have no method `{}`", method.name),
                            method.span,
                        );
                        if let Some(best) = did_you_mean(
                            &method.name,
                            [
                                "isValid",
                                "setValid",
                                "setInvalid",
                                "minSizeInBits",
                                "minSizeInBytes",
                                "maxSizeInBits",
                                "maxSizeInBytes",
                            ]
                            .into_iter(),
                        ) {
                            d = d.with_hint(format!("did you mean `{best}()`?"));
                        }
                        self.emit(d);
                        None
                    }
                }
            }
            Type::Struct(h) if self.m.structs[h].is_union => {
                self.union_method(b, method, args, span)
            }
            Type::Stack(..) if self.is_union_stack(&b.ty) => {
                self.union_stack_unsupported(&format!("`{}()`", method.name), method.span);
                None
            }
            Type::Stack(..) => {
                let op = match method.name.as_str() {
                    "push_front" => Builtin::PushFront,
                    "pop_front" => Builtin::PopFront,
                    _ => {
                        self.err(
                            codes::NO_MEMBER,
                            format!("header stacks have no method `{}`", method.name),
                            method.span,
                        );
                        return None;
                    }
                };
                if args.len() != 1 {
                    self.err(
                        codes::ARG_COUNT,
                        format!("`{}` takes one argument", method.name),
                        span,
                    );
                    return None;
                }
                let n = self.const_int(&args[0].value, "the count")?;
                if !(0..=256).contains(&n) {
                    self.err(
                        codes::BAD_SLICE,
                        format!("count {n} is out of range"),
                        args[0].span,
                    );
                    return None;
                }
                if !self.lvalue_ok(&b, span) {
                    return None;
                }
                let count = Expr {
                    kind: ExprKind::Const(Value::Bits(n as u128)),
                    ty: Type::Bit(32),
                    span: args[0].span,
                };
                Some(builtin_call(
                    op,
                    Some(Receiver::Expr(b)),
                    vec![Arg::In(count)],
                    Vec::new(),
                    span,
                ))
            }
            other => {
                let tn = self.m.type_name(&other);
                self.err(
                    codes::NO_MEMBER,
                    format!("a value of type `{tn}` has no method `{}`", method.name),
                    method.span,
                );
                None
            }
        }
    }

    pub(super) fn lvalue_ok(&mut self, b: &Expr, span: Span) -> bool {
        let mut cur = b;
        loop {
            match &cur.kind {
                ExprKind::Var(v) => {
                    let var = &self.m.vars[*v];
                    if matches!(
                        var.kind,
                        VarKind::Param(Some(Direction::In)) | VarKind::Param(None)
                    ) {
                        let name = var.name.clone();
                        let d = Diagnostic::error(
                            codes::ASSIGN_READONLY,
                            format!("cannot modify `{name}`: it is an `in` parameter"),
                            span,
                        )
                        .with_hint(format!("declare `{name}` `inout` to modify it"));
                        self.emit(d);
                        return false;
                    }
                    return true;
                }
                ExprKind::Field(x, _)
                | ExprKind::Index(x, _)
                | ExprKind::Next(x)
                | ExprKind::Last(x) => cur = x,
                _ => {
                    self.err(
                        codes::ASSIGN_READONLY,
                        "this value cannot be modified",
                        span,
                    );
                    return false;
                }
            }
        }
    }

    pub(super) fn call_extern_fn(
        &mut self,
        name: &ast::Ident,
        overloads: &[Handle<ir::ExternFnDef>],
        type_args: &[ast::TypeRef],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        let n = args.len();
        let pick = overloads.iter().copied().find(|o| {
            let ps = &self.m.extern_fns[*o].sig.params;
            let required = ps.iter().filter(|p| !p.has_default).count();
            n >= required && n <= ps.len()
        });
        let Some(o) = pick else {
            let arities: Vec<String> = overloads
                .iter()
                .map(|o| self.m.extern_fns[*o].sig.params.len().to_string())
                .collect();
            let d = Diagnostic::error(
                codes::ARG_COUNT,
                format!(
                    "`{}` takes {} argument(s), {n} given",
                    name.name,
                    arities.join(" or ")
                ),
                span,
            );
            self.emit(d);
            return None;
        };
        let sig = self.m.extern_fns[o].sig.clone();
        let Some(op) = builtin_fn(&sig.name, sig.params.len()) else {
            self.not_implemented(&sig.name, span);
            return None;
        };
        let mut subst = self.explicit_type_args(&sig.type_params, type_args)?;
        self.ctx.varbit_data = matches!(
            op,
            Builtin::VerifyChecksum(_) | Builtin::UpdateChecksum(_) | Builtin::Hash
        );
        let bound = self.bind_args(&sig.params, args, &mut subst, &name.name, span);
        self.ctx.varbit_data = false;
        let bound = bound?;
        self.builtin_context(op, span)?;
        let ret = subst_apply(&sig.ret, &subst);
        self.record_builtin(op, span);
        let mut x = builtin_call(op, None, bound, Vec::new(), span);
        x.ty = ret;
        Some(x)
    }

    pub(super) fn not_implemented(&mut self, name: &str, span: Span) {
        let d = Diagnostic::error(
            codes::EXTERN_NOT_IMPLEMENTED,
            format!("extern `{name}` is declared but this target does not implement it"),
            span,
        )
        .with_note(
            "the NetSparse targets implement the externs of the bundled core.p4, v1model.p4, \
             netsparse.p4 and spin.p4, and PSA's Counter, DirectCounter, Register and the meters \
             (see `netsparse explain E0401`)",
        );
        self.emit(d);
    }

    pub(super) fn explicit_type_args(
        &mut self,
        tparams: &[String],
        type_args: &[ast::TypeRef],
    ) -> Option<Subst> {
        let mut subst = Subst::new();
        if type_args.is_empty() {
            return Some(subst);
        }
        if type_args.len() != tparams.len() {
            let span = type_args[0].span;
            self.err(
                codes::TYPE_INFERENCE,
                format!(
                    "expected {} type argument(s), found {}",
                    tparams.len(),
                    type_args.len()
                ),
                span,
            );
            return None;
        }
        for (p, t) in tparams.iter().zip(type_args) {
            let ty = self.resolve_type(t, &[])?;
            subst.push((p.clone(), ty));
        }
        Some(subst)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_extern_method(
        &mut self,
        def: Handle<ir::ExternObjectDef>,
        inst_targs: Vec<Type>,
        recv: Receiver,
        method: &ast::Ident,
        type_args: &[ast::TypeRef],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        let d = self.m.extern_objects[def].clone();
        let n = args.len();
        let candidates: Vec<&ir::Signature> =
            d.methods.iter().filter(|m| m.name == method.name).collect();
        if candidates.is_empty() {
            let names: Vec<&str> = d.methods.iter().map(|m| m.name.as_str()).collect();
            let mut diag = Diagnostic::error(
                codes::NO_MEMBER,
                format!("extern `{}` has no method `{}`", d.name, method.name),
                method.span,
            );
            if let Some(best) = did_you_mean(&method.name, names.into_iter()) {
                diag = diag.with_hint(format!("did you mean `{best}`?"));
            }
            self.emit(diag);
            return None;
        }
        let Some(sig) = candidates.iter().find(|s| {
            let required = s.params.iter().filter(|p| !p.has_default).count();
            n >= required && n <= s.params.len()
        }) else {
            let arities: Vec<String> = candidates
                .iter()
                .map(|s| s.params.len().to_string())
                .collect();
            self.err(
                codes::ARG_COUNT,
                format!(
                    "`{}.{}` takes {} argument(s), {n} given",
                    d.name,
                    method.name,
                    arities.join(" or ")
                ),
                span,
            );
            return None;
        };
        let sig = (*sig).clone();
        let Some(op) = builtin_method(&d.name, &sig.name, sig.params.len()) else {
            if matches!(d.name.as_str(), "Meter" | "DirectMeter") && sig.name == "execute" {
                let diag = Diagnostic::error(
                    codes::EXTERN_NOT_IMPLEMENTED,
                    format!(
                        "the colour-aware `{}.execute` (with an input colour) is not implemented by this target",
                        d.name
                    ),
                    span,
                )
                .with_hint("use the colour-blind form: `execute(index)` / `execute()`");
                self.emit(diag);
                return None;
            }
            self.not_implemented(&format!("{}.{}", d.name, sig.name), span);
            return None;
        };
        let mut subst = self.explicit_type_args(&sig.type_params, type_args)?;
        for (p, t) in d.type_params.iter().zip(&inst_targs) {
            if !t.has_vars() {
                subst.push((p.clone(), t.clone()));
            }
        }
        if op == Builtin::Lookahead && type_args.is_empty() {
            let d = Diagnostic::error(
                codes::TYPE_INFERENCE,
                "`lookahead` needs a type argument",
                span,
            )
            .with_hint("write e.g. `pkt.lookahead<bit<16>>()`");
            self.emit(d);
            return None;
        }
        // Type parameters of the instance left open by its declaration
        // (`register<bit<32>>(16) r` leaves the index type `I` open): an
        // `int` literal given for one of them takes `bit<32>`, the index
        // type of every v1model extern, as p4c infers for `r.read(x, 3)`.
        let open: Vec<String> = d
            .type_params
            .iter()
            .filter(|p| !subst.iter().any(|(n, _)| n == *p))
            .cloned()
            .collect();
        let bound =
            self.bind_args_defaulting(&sig.params, args, &mut subst, &method.name, span, &open)?;
        self.builtin_context(op, span)?;
        let ret = subst_apply(&sig.ret, &subst);
        if ret.has_vars() {
            let d = Diagnostic::error(
                codes::TYPE_INFERENCE,
                format!("the result type of `{}` cannot be inferred", method.name),
                span,
            )
            .with_hint(
                "give the instance its type arguments, e.g. `register<bit<32>, bit<32>>(...)`",
            );
            self.emit(d);
            return None;
        }
        // Builtin-specific argument rules.
        match op {
            Builtin::Extract | Builtin::ExtractVarbit => {
                if let Some(Arg::Out(a, _)) = bound.first() {
                    if !self.extract_arity_ok(op, a) {
                        return None;
                    }
                    if !matches!(a.ty, Type::Header(_)) {
                        let tn = self.m.type_name(&a.ty);
                        let d = Diagnostic::error(
                            codes::PACKET_OP,
                            format!("`extract` needs a header, found `{tn}`"),
                            a.span,
                        )
                        .with_hint(
                            "extract one header at a time; for a stack use `hdr.stack.next`",
                        );
                        self.emit(d);
                        return None;
                    }
                }
            }
            Builtin::Emit => {
                if let Some(Arg::In(a)) = bound.first() {
                    if !self.emittable(&a.ty) {
                        let tn = self.m.type_name(&a.ty);
                        let d = Diagnostic::error(
                            codes::PACKET_OP,
                            format!("`emit` needs a header, a header stack or a struct of them, found `{tn}`"),
                            a.span,
                        );
                        self.emit(d);
                        return None;
                    }
                }
            }
            Builtin::Lookahead => {
                // A struct of bit<N>/int<N>/bool fields reads like a header.
                let flat_struct = |t: &Type| match t {
                    Type::Struct(s) => self.m.structs[*s]
                        .fields
                        .iter()
                        .all(|f| matches!(f.ty, Type::Bit(_) | Type::Int(_) | Type::Bool)),
                    _ => false,
                };
                let ok = matches!(
                    &ret,
                    Type::Bit(_) | Type::Int(_) | Type::Bool | Type::Header(_)
                ) || flat_struct(&ret);
                if !ok {
                    let tn = self.m.type_name(&ret);
                    self.err(
                        codes::PACKET_OP,
                        format!("`lookahead` can read bit<N>, int<N>, a header or a struct of bit<N> fields, not `{tn}`"),
                        span,
                    );
                    return None;
                }
            }
            _ => {}
        }
        self.psa_call_rules(&d.name, op, &bound)?;
        self.record_builtin(op, span);
        let type_args_out = if op == Builtin::Lookahead {
            vec![ret.clone()]
        } else {
            Vec::new()
        };
        let mut x = builtin_call(op, Some(recv), bound, type_args_out, span);
        x.ty = ret;
        Some(x)
    }

    pub(super) fn emittable(&self, t: &Type) -> bool {
        match t {
            Type::Header(_) | Type::Stack(..) => true,
            Type::Struct(s) => self.m.structs[*s]
                .fields
                .iter()
                .all(|f| self.emittable(&f.ty)),
            Type::List(ts) => ts.iter().all(|t| self.emittable(t)),
            _ => false,
        }
    }

    /// Where each builtin may be used.
    pub(super) fn builtin_context(&mut self, op: Builtin, span: Span) -> Option<()> {
        match op {
            Builtin::Extract
            | Builtin::ExtractVarbit
            | Builtin::Lookahead
            | Builtin::Advance
            | Builtin::Verify
                if !self.ctx.in_parser =>
            {
                let d = Diagnostic::error(
                    codes::NOT_ALLOWED_HERE,
                    format!("`{}` can only be used in a parser", builtin_name(op)),
                    span,
                );
                self.emit(d);
                return None;
            }
            Builtin::Emit if self.ctx.in_parser => {
                self.not_here("`emit`", span, "headers are emitted by a deparser control");
                return None;
            }
            _ => {}
        }
        Some(())
    }
}

fn call_expr(callee: Callee, args: Vec<Arg>, ty: Type, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Call(Box::new(Call { callee, args, span })),
        ty,
        span,
    }
}

fn builtin_call(
    op: Builtin,
    receiver: Option<Receiver>,
    args: Vec<Arg>,
    type_args: Vec<Type>,
    span: Span,
) -> Expr {
    call_expr(
        Callee::Builtin {
            op,
            receiver: receiver.map(Box::new),
            type_args,
        },
        args,
        Type::Void,
        span,
    )
}
