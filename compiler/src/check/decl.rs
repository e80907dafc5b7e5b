//! Declarations with bodies: parsers, controls, actions, tables, functions
//! and instantiations.

use netsparse_externs::artifact::{CounterUnit, KeyMatch, MatchKind, MeterUnit};

use super::consts::mask;
use super::{did_you_mean, Checker, Ctx, Sym};
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{
    self, Arg, ExprKind, ExternInstKind, Handle, InstanceKind, Keyset, ParamDef, Target, Type,
    Value, VarKind,
};

/// The bits of a constant expression (`bool` as 0/1).
pub(crate) fn const_bits(e: &ir::Expr) -> Option<u128> {
    match &e.kind {
        ExprKind::Const(Value::Bits(v)) => Some(*v),
        ExprKind::Const(Value::Bool(b)) => Some(u128::from(*b)),
        _ => None,
    }
}

/// The source text of a key expression for the control plane (`hdr.ipv4.dstAddr`).
pub(crate) fn expr_text(e: &ast::Expr) -> Option<String> {
    use ast::ExprKind as K;
    Some(match &e.kind {
        K::Name { name, dot_prefix } => {
            if *dot_prefix {
                format!(".{}", name.name)
            } else {
                name.name.clone()
            }
        }
        K::Member(b, m) => format!("{}.{}", expr_text(b)?, m.name),
        K::Index(b, i) => format!("{}[{}]", expr_text(b)?, expr_text(i)?),
        K::Slice(b, h, l) => format!("{}[{}:{}]", expr_text(b)?, expr_text(h)?, expr_text(l)?),
        K::Int(lit) => lit.text.clone(),
        K::Call { callee, args, .. } if args.is_empty() => format!("{}()", expr_text(callee)?),
        _ => return None,
    })
}

impl Checker<'_> {
    /// Declare parameters as variables in the current scope.
    fn param_vars(&mut self, params: &[ast::Param], block: &str) -> Option<Vec<Handle<ir::Var>>> {
        let mut out = Vec::new();
        let mut ok = true;
        for p in params {
            let Some(ty) = self.resolve_type(&p.ty, &[]) else {
                // Declared with an unknown type so that its uses do not cascade.
                let h = self.m.vars.append(ir::Var {
                    name: p.name.name.clone(),
                    ty: Type::DontCare,
                    kind: VarKind::Param(p.direction),
                    span: p.name.span,
                });
                self.declare(&p.name, Sym::Var(h));
                ok = false;
                continue;
            };
            if matches!(ty, Type::Void | Type::DontCare | Type::Var(_)) {
                let tn = self.m.type_name(&ty);
                self.err(
                    codes::TYPE_NOT_ALLOWED,
                    format!(
                        "parameter `{}` of {block} cannot have type `{tn}`",
                        p.name.name
                    ),
                    p.ty.span,
                );
                ok = false;
                continue;
            }
            if let (Some(default), "an action") = (&p.default, block) {
                // p4c accepts defaults on action parameters; every use here
                // must still pass the value, but the default must type-check
                // (a bad one is reported; the parameter is still declared so
                // that its uses do not cascade).
                let _ = self.expr_as(default, &ty);
            } else if p.default.is_some() {
                self.err(
                    codes::UNSUPPORTED,
                    "default parameter values are only supported on extern declarations",
                    p.span,
                );
                ok = false;
                continue;
            }
            let h = self.m.vars.append(ir::Var {
                name: p.name.name.clone(),
                ty,
                kind: VarKind::Param(p.direction),
                span: p.name.span,
            });
            self.declare(&p.name, Sym::Var(h));
            out.push(h);
        }
        ok.then_some(out)
    }

    fn reject_generic(&mut self, tparams: &[ast::Ident], what: &str, name: &ast::Ident) -> bool {
        if tparams.is_empty() {
            return false;
        }
        let d = Diagnostic::error(
            codes::GENERIC_DECL,
            format!(
                "generic {what} `{}` is not supported by this compiler",
                name.name
            ),
            name.span,
        )
        .with_hint("use concrete types for the parameters");
        self.emit(d);
        true
    }

    fn reject_ctor_params(&mut self, ctor: &[ast::Param], what: &str, name: &ast::Ident) -> bool {
        let Some(first) = ctor.first() else {
            return false;
        };
        let d = Diagnostic::error(
            codes::UNSUPPORTED,
            format!(
                "constructor parameters of {what} `{}` are not supported by this compiler",
                name.name
            ),
            first.span,
        )
        .with_hint("use constants instead");
        self.emit(d);
        true
    }

    fn is_pr_type(&self, t: &Type) -> bool {
        match t {
            Type::Header(s) | Type::Struct(s) => {
                let n = &self.m.structs[*s].name;
                n == "ns_pr_h" || n == "ns_pr_md_t"
            }
            _ => false,
        }
    }

    pub(super) fn control_decl(&mut self, c: &ast::ControlDecl) {
        if self.reject_generic(&c.type_params, "control", &c.name)
            | self.reject_ctor_params(&c.ctor_params, "control", &c.name)
        {
            return;
        }
        let bundled = self.is_bundled(c.span);
        let h = self.m.controls.append(ir::Control {
            name: c.name.name.clone(),
            params: Vec::new(),
            local_inits: Vec::new(),
            instances: Vec::new(),
            actions: Vec::new(),
            tables: Vec::new(),
            apply: ir::Block::default(),
            per_pr: false,
            bundled,
            span: c.span,
        });
        let saved = std::mem::replace(
            &mut self.ctx,
            Ctx {
                control: Some(h),
                ..Ctx::default()
            },
        );
        self.push_scope();
        let params = self.param_vars(&c.params, "a control");
        if params.is_none() {
            self.broken_blocks.push(ir::BlockRef::Control(h));
        }
        let params = params.unwrap_or_default();
        for p in &params {
            if self.m.vars[*p].kind == VarKind::Param(None)
                && !matches!(self.m.vars[*p].ty, Type::Extern(..))
            {
                let d = Diagnostic::error(
                    codes::TYPE_NOT_ALLOWED,
                    format!(
                        "parameter `{}` of a control needs a direction",
                        self.m.vars[*p].name
                    ),
                    self.m.vars[*p].span,
                )
                .with_hint("write `in`, `out` or `inout` before its type");
                self.emit(d);
            }
        }
        let per_pr = params.iter().any(|p| self.is_pr_type(&self.m.vars[*p].ty));
        let mut local_inits = Vec::new();
        let mut instances = Vec::new();
        let mut actions = Vec::new();
        let mut tables = Vec::new();
        for l in &c.locals {
            match l {
                ast::Local::Const(k) => {
                    if let Some((ty, v)) = self.const_decl(k) {
                        self.declare(&k.name, Sym::Const(ty, v));
                    }
                }
                ast::Local::Var(v) => {
                    if let Some(s) = self.control_local_var(v) {
                        local_inits.push(s);
                    }
                }
                ast::Local::Instantiation(i) => {
                    if let Some(ih) = self.instantiation(i) {
                        self.declare(&i.name, Sym::Instance(ih));
                        instances.push(ih);
                    }
                }
                ast::Local::Action(a) => {
                    if let Some(ah) = self.action_decl(a, Some(h)) {
                        self.declare(&a.name, Sym::Action(ah));
                        actions.push(ah);
                    }
                }
                ast::Local::Table(t) => {
                    if let Some(th) = self.table_decl(t, h) {
                        self.declare(&t.name, Sym::Table(th));
                        tables.push(th);
                    }
                }
                ast::Local::ValueSet(v) => {
                    self.err(
                        codes::NOT_ALLOWED_HERE,
                        "value sets can only be declared in parsers",
                        v.span,
                    );
                }
            }
        }
        self.ctx.apply_depth = Some(0);
        let apply = self.block(&c.apply);
        self.pop_scope();
        self.ctx = saved;
        let ctl = &mut self.m.controls[h];
        ctl.params = params;
        ctl.local_inits = local_inits;
        ctl.instances = instances;
        ctl.actions = actions;
        ctl.tables = tables;
        ctl.apply = apply;
        ctl.per_pr = per_pr;
        // Declared even with errors, so that `main` does not cascade.
        self.declare(&c.name, Sym::Control(h));
    }

    fn control_local_var(&mut self, v: &ast::VarDecl) -> Option<ir::Stmt> {
        let h = self.local_var(v)?;
        let init = match &v.init {
            Some(e) => {
                let ty = self.m.vars[h].ty.clone();
                Some(self.expr_as(e, &ty)?)
            }
            None => None,
        };
        self.declare(&v.name, Sym::Var(h));
        Some(ir::Stmt {
            kind: ir::StmtKind::VarDecl(h, init),
            span: v.span,
        })
    }

    pub(super) fn action_decl(
        &mut self,
        a: &ast::ActionDecl,
        owner: Option<Handle<ir::Control>>,
    ) -> Option<Handle<ir::Action>> {
        let saved = std::mem::replace(
            &mut self.ctx,
            Ctx {
                control: owner,
                in_action: true,
                ..Ctx::default()
            },
        );
        self.push_scope();
        // Directional parameters first, then action data.
        let mut seen_data: Option<&ast::Param> = None;
        for p in &a.params {
            match (p.direction, seen_data) {
                (None, None) => seen_data = Some(p),
                (Some(_), Some(data)) => {
                    let d = Diagnostic::error(
                        codes::ACTION_PARAM_ORDER,
                        format!(
                            "directional parameter `{}` of action `{}` comes after action data parameter `{}`",
                            p.name.name, a.name.name, data.name.name
                        ),
                        p.span,
                    )
                    .with_secondary(data.span, "directionless (control-plane) parameter")
                    .with_hint("put `in`/`out`/`inout` parameters first; directionless parameters are action data and come last");
                    self.emit(d);
                }
                _ => {}
            }
        }
        let params = self.param_vars(&a.params, "an action");
        let body = self.block(&a.body);
        self.pop_scope();
        self.ctx = saved;
        let bundled = self.is_bundled(a.span);
        let params = params?;
        for p in &params {
            if self.m.scalar_width(&self.m.vars[*p].ty).is_none()
                && self.m.vars[*p].kind == VarKind::Param(None)
            {
                let tn = self.m.type_name(&self.m.vars[*p].ty);
                let d = Diagnostic::error(
                    codes::TYPE_NOT_ALLOWED,
                    format!(
                        "action data parameter `{}` cannot have type `{tn}`",
                        self.m.vars[*p].name
                    ),
                    self.m.vars[*p].span,
                )
                .with_hint("action data are bit<N>, int<N>, bool or enum values");
                self.emit(d);
                return None;
            }
        }
        Some(self.m.actions.append(ir::Action {
            name: a.name.name.clone(),
            cp_name: Self::annotation_str(&a.annotations, "name"),
            owner,
            params,
            body,
            synthetic: false,
            bundled,
            span: a.span,
        }))
    }

    pub(super) fn function_decl(&mut self, f: &ast::FunctionDecl) {
        if self.reject_generic(&f.proto.type_params, "function", &f.proto.name) {
            return;
        }
        let ret = match &f.proto.ret {
            Some(t) => match self.resolve_type(t, &[]) {
                Some(t) => t,
                None => return,
            },
            None => Type::Void,
        };
        if ret != Type::Void && !self.data_type_ok(&ret) {
            let tn = self.m.type_name(&ret);
            self.err(
                codes::TYPE_NOT_ALLOWED,
                format!("a function cannot return `{tn}`"),
                f.proto.span,
            );
            return;
        }
        let ret_var = (ret != Type::Void).then(|| {
            self.m.vars.append(ir::Var {
                name: format!("$ret_{}", f.proto.name.name),
                ty: ret.clone(),
                kind: VarKind::Local,
                span: f.proto.name.span,
            })
        });
        let saved = std::mem::replace(
            &mut self.ctx,
            Ctx {
                function_ret: Some(ret.clone()),
                ..Ctx::default()
            },
        );
        self.push_scope();
        let params = self.param_vars(&f.proto.params, "a function");
        let body = self.block(&f.body);
        self.pop_scope();
        self.ctx = saved;
        let Some(params) = params else { return };
        if ret != Type::Void && !always_returns(&body.stmts) {
            let d = Diagnostic::error(
                codes::BAD_RETURN,
                format!(
                    "function `{}` may end without returning a value",
                    f.proto.name.name
                ),
                f.proto.name.span,
            )
            .with_hint("end every path through the body with `return <value>;`");
            self.emit(d);
            return;
        }
        let h = self.m.functions.append(ir::Function {
            name: f.proto.name.name.clone(),
            params,
            ret,
            ret_var,
            body,
            span: f.proto.span,
        });
        self.declare(&f.proto.name, Sym::Function(h));
    }

    /// An instantiation (`counter(...) c;`, `MySub() s;`).
    pub(super) fn instantiation(&mut self, i: &ast::Instantiation) -> Option<Handle<ir::Instance>> {
        let ty = self.resolve_type(&i.ty, &[])?;
        let kind = match ty {
            Type::Extern(def, targs) => {
                let kind = self.extern_instance(def, &targs, i)?;
                InstanceKind::Extern {
                    def,
                    type_args: targs,
                    kind,
                }
            }
            Type::Control(c) => {
                if !i.args.is_empty() {
                    self.err(
                        codes::ARG_COUNT,
                        "controls take no constructor arguments here",
                        i.span,
                    );
                    return None;
                }
                InstanceKind::Control(c)
            }
            Type::Parser(p) => {
                if !i.args.is_empty() {
                    self.err(
                        codes::ARG_COUNT,
                        "parsers take no constructor arguments here",
                        i.span,
                    );
                    return None;
                }
                InstanceKind::Parser(p)
            }
            other => {
                let tn = self.m.type_name(&other);
                self.err(
                    codes::WRONG_KIND,
                    format!("`{tn}` cannot be instantiated"),
                    i.ty.span,
                );
                return None;
            }
        };
        Some(self.m.instances.append(ir::Instance {
            name: i.name.name.clone(),
            kind,
            span: i.span,
        }))
    }

    fn extern_instance(
        &mut self,
        def: Handle<ir::ExternObjectDef>,
        targs: &[Type],
        i: &ast::Instantiation,
    ) -> Option<ExternInstKind> {
        let d = self.m.extern_objects[def].clone();
        match d.name.as_str() {
            "action_profile" | "action_selector" => {
                let diag = Diagnostic::error(
                    codes::UNSUPPORTED,
                    format!("`{}` is not supported by this target", d.name),
                    i.ty.span,
                )
                .with_hint(
                    "list the actions in the table directly and let the control plane choose",
                );
                self.emit(diag);
                return None;
            }
            "register" | "counter" | "direct_counter" | "meter" | "direct_meter" => {}
            _ => {
                self.not_implemented_instance(&d.name, i.ty.span);
                return None;
            }
        }
        let n = i.args.len();
        let Some(ctor) = d.ctors.iter().find(|c| c.params.len() == n).cloned() else {
            self.err(
                codes::ARG_COUNT,
                format!("no constructor of `{}` takes {n} argument(s)", d.name),
                i.span,
            );
            return None;
        };
        let mut subst: Vec<(String, Type)> = d
            .type_params
            .iter()
            .zip(targs)
            .filter(|(_, t)| !t.has_vars())
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        let args = self.bind_args(&ctor.params, &i.args, &mut subst, &d.name, i.span)?;
        let mut vals = Vec::new();
        for (a, p) in args.iter().zip(&ctor.params) {
            match a {
                Arg::In(x) => match const_bits(x) {
                    Some(v) => vals.push((v, x.ty.clone())),
                    None => {
                        self.err(
                            codes::NOT_CONSTANT,
                            format!(
                                "constructor argument `{}` must be a compile-time constant",
                                p.name
                            ),
                            x.span,
                        );
                        return None;
                    }
                },
                _ => {
                    self.err(
                        codes::UNSUPPORTED,
                        "unsupported constructor argument",
                        i.span,
                    );
                    return None;
                }
            }
        }
        let size = |vals: &[(u128, Type)]| -> Option<u32> {
            vals.first().and_then(|v| u32::try_from(v.0).ok())
        };
        let member = |m: &ir::Module, v: &(u128, Type)| -> Option<String> {
            match &v.1 {
                Type::Enum(e) => m.enums[*e]
                    .members
                    .iter()
                    .find(|(_, x)| *x == v.0)
                    .map(|(n, _)| n.clone()),
                _ => None,
            }
        };
        let counter_unit = |s: Option<String>| match s.as_deref() {
            Some("packets") => Some(CounterUnit::Packets),
            Some("bytes") => Some(CounterUnit::Bytes),
            Some("packets_and_bytes") => Some(CounterUnit::PacketsAndBytes),
            _ => None,
        };
        let meter_unit = |s: Option<String>| match s.as_deref() {
            Some("packets") => Some(MeterUnit::Packets),
            Some("bytes") => Some(MeterUnit::Bytes),
            _ => None,
        };
        let kind = match d.name.as_str() {
            "register" => {
                let width = match targs.first() {
                    Some(t) => self.m.scalar_width(t),
                    None => None,
                };
                let Some(width) = width else {
                    let diag = Diagnostic::error(
                        codes::TYPE_INFERENCE,
                        "a register needs its cell type: `register<bit<32>>(size)`",
                        i.ty.span,
                    );
                    self.emit(diag);
                    return None;
                };
                size(&vals).map(|size| ExternInstKind::Register { width, size })
            }
            "counter" => match (
                size(&vals),
                vals.get(1).and_then(|v| counter_unit(member(&self.m, v))),
            ) {
                (Some(size), Some(unit)) => Some(ExternInstKind::Counter { size, unit }),
                _ => None,
            },
            "direct_counter" => vals
                .first()
                .and_then(|v| counter_unit(member(&self.m, v)))
                .map(|unit| ExternInstKind::DirectCounter { unit }),
            "meter" => match (
                size(&vals),
                vals.get(1).and_then(|v| meter_unit(member(&self.m, v))),
            ) {
                (Some(size), Some(unit)) => Some(ExternInstKind::Meter { size, unit }),
                _ => None,
            },
            "direct_meter" => vals
                .first()
                .and_then(|v| meter_unit(member(&self.m, v)))
                .map(|unit| ExternInstKind::DirectMeter { unit }),
            _ => None,
        };
        if kind.is_none() {
            self.err(
                codes::TYPE_MISMATCH,
                format!("bad constructor arguments for `{}`", d.name),
                i.span,
            );
        }
        kind
    }

    fn not_implemented_instance(&mut self, name: &str, span: Span) {
        let d = Diagnostic::error(
            codes::EXTERN_NOT_IMPLEMENTED,
            format!("extern `{name}` is declared but this target does not implement it"),
            span,
        )
        .with_note(
            "the NetSparse targets implement register, counter, direct_counter, meter and \
             direct_meter objects",
        );
        self.emit(d);
    }

    // ----- tables ----------------------------------------------------------------------

    fn table_decl(
        &mut self,
        t: &ast::TableDecl,
        owner: Handle<ir::Control>,
    ) -> Option<Handle<ir::Table>> {
        let mut keys: Vec<ir::Key> = Vec::new();
        let mut actions: Vec<ir::TableAction> = Vec::new();
        let mut has_actions = false;
        let mut size: u32 = 1024;
        let mut direct_counter = None;
        let mut direct_meter = None;
        let mut seen: Vec<(String, Span)> = Vec::new();
        let mut lpm_seen: Option<Span> = None;
        let prop_name = |p: &ast::TableProperty| -> (String, Span) {
            match p {
                ast::TableProperty::Key(_, s) => ("key".into(), *s),
                ast::TableProperty::Actions(_, s) => ("actions".into(), *s),
                ast::TableProperty::DefaultAction { span, .. } => ("default_action".into(), *span),
                ast::TableProperty::Entries { span, .. } => ("entries".into(), *span),
                ast::TableProperty::Other { name, span, .. } => (name.name.clone(), *span),
            }
        };
        for p in &t.properties {
            let (n, s) = prop_name(p);
            if let Some((_, prev)) = seen.iter().find(|(x, _)| *x == n) {
                let d = Diagnostic::error(
                    codes::TABLE_PROPERTY,
                    format!("table property `{n}` is given twice"),
                    s,
                )
                .with_secondary(*prev, "first given here");
                self.emit(d);
                continue;
            }
            seen.push((n, s));
        }
        // Pass 1: keys, actions, other properties.
        for p in &t.properties {
            match p {
                ast::TableProperty::Key(elems, _) => {
                    for k in elems {
                        if let Some(key) = self.table_key(k, &mut lpm_seen) {
                            keys.push(key)
                        }
                    }
                }
                ast::TableProperty::Actions(refs, _) => {
                    has_actions = true;
                    for r in refs {
                        if let Some(ta) = self.table_action(r) {
                            if actions.iter().any(|x| x.action == ta.action) {
                                self.err(codes::DUPLICATE, "this action is listed twice", r.span);
                            } else {
                                actions.push(ta);
                            }
                        }
                    }
                }
                ast::TableProperty::Other {
                    name, value, span, ..
                } => match name.name.as_str() {
                    "size" => match self.const_int(value, "`size`") {
                        Some(v) if (0..=i128::from(u32::MAX)).contains(&v) => size = v as u32,
                        Some(v) => {
                            self.err(
                                codes::TABLE_SIZE,
                                format!("table size {v} is out of range"),
                                value.span,
                            );
                        }
                        None => {}
                    },
                    "counters" | "meters" => {
                        let want_counter = name.name == "counters";
                        match self.direct_resource(value, want_counter) {
                            Some(h) if want_counter => direct_counter = Some(h),
                            Some(h) => direct_meter = Some(h),
                            None => {}
                        }
                    }
                    "implementation" | "support_timeout" | "idle_timeout_with_auto_delete" => {
                        let d = Diagnostic::error(
                            codes::UNSUPPORTED,
                            format!(
                                "table property `{}` is not supported by this target",
                                name.name
                            ),
                            *span,
                        );
                        self.emit(d);
                    }
                    other => {
                        let mut d = Diagnostic::error(
                            codes::TABLE_PROPERTY,
                            format!("unknown table property `{other}`"),
                            name.span,
                        );
                        let known = [
                            "key",
                            "actions",
                            "default_action",
                            "entries",
                            "size",
                            "counters",
                            "meters",
                        ];
                        if let Some(b) = did_you_mean(other, known.into_iter()) {
                            d = d.with_hint(format!("did you mean `{b}`?"));
                        }
                        self.emit(d);
                    }
                },
                _ => {}
            }
        }
        if !has_actions {
            let d = Diagnostic::error(
                codes::TABLE_PROPERTY,
                format!("table `{}` has no `actions` property", t.name.name),
                t.name.span,
            )
            .with_hint("add e.g. `actions = { NoAction; }`");
            self.emit(d);
        }
        // Pass 2: default action and entries, which refer to the action list.
        let mut default: Option<(usize, Vec<u128>, bool)> = None;
        let mut entries = Vec::new();
        let mut entries_const = false;
        for p in &t.properties {
            match p {
                ast::TableProperty::DefaultAction {
                    action, is_const, ..
                } => {
                    if let Some((i, args)) = self.default_action(action, &actions, &t.name.name) {
                        default = Some((i, args, *is_const))
                    }
                }
                ast::TableProperty::Entries {
                    entries: es,
                    is_const,
                    ..
                } => {
                    entries_const = *is_const;
                    for e in es {
                        if let Some(x) = self.table_entry(e, &keys, &actions, &t.name.name) {
                            entries.push(x)
                        }
                    }
                }
                _ => {}
            }
        }
        let (default_action, default_args, default_const) = match default {
            Some(d) => d,
            None => {
                let na = self.no_action_handle();
                let i = match actions.iter().position(|a| a.action == na) {
                    Some(i) => i,
                    None => {
                        actions.push(ir::TableAction {
                            action: na,
                            bound: Vec::new(),
                            default_only: true,
                            table_only: false,
                            implicit: true,
                        });
                        actions.len() - 1
                    }
                };
                (i, Vec::new(), false)
            }
        };
        // A table with errors is still declared, so that its uses do not
        // cascade into "undefined" errors (the compilation fails anyway).
        Some(self.m.tables.append(ir::Table {
            name: t.name.name.clone(),
            cp_name: Self::annotation_str(&t.annotations, "name"),
            owner,
            keys,
            actions,
            default_action,
            default_args,
            default_const,
            entries,
            entries_const,
            size,
            direct_counter,
            direct_meter,
            span: t.name.span,
        }))
    }

    /// The top-level `NoAction` (declared by core.p4, or made up).
    fn no_action_handle(&mut self) -> Handle<ir::Action> {
        if let Some(h) = self.no_action {
            return h;
        }
        let h = self.m.actions.append(ir::Action {
            name: "NoAction".into(),
            cp_name: None,
            owner: None,
            params: Vec::new(),
            body: ir::Block::default(),
            synthetic: true,
            bundled: true,
            span: Span::default(),
        });
        self.no_action = Some(h);
        h
    }

    fn table_key(&mut self, k: &ast::KeyElement, lpm_seen: &mut Option<Span>) -> Option<ir::Key> {
        let x = self.expr(&k.expr)?;
        let Some(width) = self.m.scalar_width(&x.ty) else {
            let tn = self.m.type_name(&x.ty);
            let d = Diagnostic::error(
                codes::KEY_TYPE,
                format!("a table key cannot have type `{tn}`"),
                k.expr.span,
            )
            .with_hint(
                "match on bit<N>, int<N>, bool, enum or error values (e.g. the fields of a header)",
            );
            self.emit(d);
            return None;
        };
        if x.ty == Type::InfInt {
            self.err(codes::KEY_TYPE, "a table key needs a width", k.expr.span);
            return None;
        }
        let kind_name = k.match_kind.name.as_str();
        if !self.m.match_kinds.iter().any(|m| m == kind_name) {
            let mut d = Diagnostic::error(
                codes::MATCH_KIND,
                format!("unknown match kind `{kind_name}`"),
                k.match_kind.span,
            )
            .with_label("not a match kind");
            let kinds = self.m.match_kinds.clone();
            if let Some(b) = did_you_mean(kind_name, kinds.iter().map(String::as_str)) {
                d = d.with_hint(format!("did you mean `{b}`?"));
            } else {
                d = d.with_note(format!("declared match kinds: {}", kinds.join(", ")));
            }
            self.emit(d);
            return None;
        }
        let mk = match kind_name {
            "exact" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            "range" => MatchKind::Range,
            "optional" => MatchKind::Optional,
            "selector" => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED,
                    "match kind `selector` needs an action selector, which this target does not implement",
                    k.match_kind.span,
                );
                self.emit(d);
                return None;
            }
            other => {
                self.err(
                    codes::UNSUPPORTED,
                    format!("match kind `{other}` is not supported by this target"),
                    k.match_kind.span,
                );
                return None;
            }
        };
        if mk == MatchKind::Lpm {
            if let Some(prev) = *lpm_seen {
                let d = Diagnostic::error(
                    codes::TWO_LPM,
                    "a table may have at most one `lpm` key",
                    k.match_kind.span,
                )
                .with_secondary(prev, "the first `lpm` key")
                .with_hint("make the other keys `ternary` or `exact`");
                self.emit(d);
                return None;
            }
            *lpm_seen = Some(k.match_kind.span);
        }
        let name = Self::annotation_str(&k.annotations, "name")
            .or_else(|| expr_text(&k.expr))
            .unwrap_or_else(|| {
                self.sources
                    .snippet(k.expr.span)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        Some(ir::Key {
            name,
            expr: x,
            width,
            match_kind: mk,
            span: k.span,
        })
    }

    fn resolve_action_ref(&mut self, r: &ast::ActionRef) -> Option<Handle<ir::Action>> {
        let ast::ExprKind::Name { name, dot_prefix } = &r.name.kind else {
            self.err(codes::WRONG_KIND, "expected an action name", r.name.span);
            return None;
        };
        match self.resolve(name, *dot_prefix)? {
            Sym::Action(a) => Some(a),
            other => {
                self.err(
                    codes::WRONG_KIND,
                    format!("`{}` is {}, not an action", name.name, other.describe()),
                    r.name.span,
                );
                None
            }
        }
    }

    fn split_params(&self, a: Handle<ir::Action>) -> (Vec<ParamDef>, Vec<ParamDef>) {
        let params = self.var_params(&self.m.actions[a].params.clone());
        params.into_iter().partition(|p| p.direction.is_some())
    }

    fn table_action(&mut self, r: &ast::ActionRef) -> Option<ir::TableAction> {
        let a = self.resolve_action_ref(r)?;
        let (dir, data) = self.split_params(a);
        let aname = self.m.actions[a].name.clone();
        let bound = match &r.args {
            None if !dir.is_empty() => {
                let names: Vec<String> = dir.iter().map(|p| format!("`{}`", p.name)).collect();
                let d = Diagnostic::error(
                    codes::ACTION_ARGS,
                    format!(
                        "action `{aname}` has directional parameter(s) {} that the table must bind",
                        names.join(", ")
                    ),
                    r.span,
                )
                .with_hint(format!("write `{aname}(<argument>)` in the `actions` list"));
                self.emit(d);
                return None;
            }
            None => Vec::new(),
            Some(args) => {
                if args.len() > dir.len() {
                    let d = Diagnostic::error(
                        codes::ACTION_ARGS,
                        format!(
                            "`{aname}` has {} directional parameter(s) but {} argument(s) are given",
                            dir.len(),
                            args.len()
                        ),
                        r.span,
                    )
                    .with_note(format!(
                        "its action data ({}) come from table entries and the control plane",
                        data.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ")
                    ));
                    self.emit(d);
                    return None;
                }
                let mut subst = Vec::new();
                self.bind_args(&dir, args, &mut subst, &aname, r.span)?
            }
        };
        Some(ir::TableAction {
            action: a,
            bound,
            default_only: Self::has_annotation(&r.annotations, "defaultonly"),
            table_only: Self::has_annotation(&r.annotations, "tableonly"),
            implicit: false,
        })
    }

    /// Action data of a default action or an entry: compile-time constants.
    fn action_data(
        &mut self,
        a: Handle<ir::Action>,
        args: Option<&Vec<ast::Argument>>,
        span: Span,
    ) -> Option<Vec<u128>> {
        let (dir, data) = self.split_params(a);
        let aname = self.m.actions[a].name.clone();
        let args: Vec<&ast::Argument> = match args {
            None if data.is_empty() => return Some(Vec::new()),
            None => {
                let d = Diagnostic::error(
                    codes::ACTION_ARGS,
                    format!("action `{aname}` needs its action data here"),
                    span,
                )
                .with_hint(format!(
                    "write `{aname}({})`",
                    data.iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                self.emit(d);
                return None;
            }
            Some(args) if args.len() == data.len() => args.iter().collect(),
            Some(args) if args.len() == dir.len() + data.len() => {
                args.iter().skip(dir.len()).collect()
            }
            Some(args) => {
                self.err(
                    codes::ARG_COUNT,
                    format!(
                        "action `{aname}` takes {} action data argument(s), {} given",
                        data.len(),
                        args.len()
                    ),
                    span,
                );
                return None;
            }
        };
        let mut out = Vec::new();
        for (p, a) in data.iter().zip(args) {
            let x = self.expr_as(&a.value, &p.ty)?;
            match const_bits(&x) {
                Some(v) => out.push(v),
                None => {
                    let d = Diagnostic::error(
                        codes::ACTION_DATA_CONST,
                        format!(
                            "action data `{}` must be a compile-time constant here",
                            p.name
                        ),
                        a.span,
                    )
                    .with_label("computed at run time")
                    .with_hint("table entries and default actions carry constant action data");
                    self.emit(d);
                    return None;
                }
            }
        }
        Some(out)
    }

    fn default_action(
        &mut self,
        r: &ast::ActionRef,
        actions: &[ir::TableAction],
        table: &str,
    ) -> Option<(usize, Vec<u128>)> {
        let a = self.resolve_action_ref(r)?;
        let aname = self.m.actions[a].name.clone();
        let Some(i) = actions.iter().position(|x| x.action == a) else {
            let d = Diagnostic::error(
                codes::DEFAULT_NOT_LISTED,
                format!("default action `{aname}` is not in the `actions` of table `{table}`"),
                r.span,
            )
            .with_hint(format!("add `{aname};` to the table's `actions`"));
            self.emit(d);
            return None;
        };
        if actions[i].table_only {
            let d = Diagnostic::error(
                codes::DEFAULT_ONLY,
                format!("action `{aname}` is `@tableonly`: it cannot be the default action"),
                r.span,
            );
            self.emit(d);
            return None;
        }
        let args = self.action_data(a, r.args.as_ref(), r.span)?;
        Some((i, args))
    }

    fn table_entry(
        &mut self,
        e: &ast::TableEntry,
        keys: &[ir::Key],
        actions: &[ir::TableAction],
        table: &str,
    ) -> Option<ir::Entry> {
        if e.keysets.len() != keys.len() {
            let d = Diagnostic::error(
                codes::BAD_ENTRY,
                format!(
                    "this entry has {} keyset(s) but table `{table}` has {} key(s)",
                    e.keysets.len(),
                    keys.len()
                ),
                e.span,
            );
            self.emit(d);
            return None;
        }
        let mut matches = Vec::new();
        for (ks, key) in e.keysets.iter().zip(keys) {
            matches.push(self.entry_keyset(ks, key)?);
        }
        let a = self.resolve_action_ref(&e.action)?;
        let aname = self.m.actions[a].name.clone();
        let Some(ai) = actions.iter().position(|x| x.action == a) else {
            let d = Diagnostic::error(
                codes::ACTION_NOT_LISTED,
                format!("action `{aname}` is not in the `actions` of table `{table}`"),
                e.action.span,
            )
            .with_hint(format!("add `{aname};` to the table's `actions`"));
            self.emit(d);
            return None;
        };
        if actions[ai].default_only {
            let d = Diagnostic::error(
                codes::DEFAULT_ONLY,
                format!("action `{aname}` is `@defaultonly`: entries cannot use it"),
                e.action.span,
            );
            self.emit(d);
            return None;
        }
        let args = self.action_data(a, e.action.args.as_ref(), e.action.span)?;
        let prio_expr = e.priority.as_ref().or_else(|| {
            e.annotations
                .iter()
                .find(|a| a.name.name == "priority")
                .and_then(|a| match &a.body {
                    ast::AnnotationBody::Exprs(es) => es.first(),
                    _ => None,
                })
        });
        let priority = match prio_expr {
            Some(p) => {
                let v = self.const_int(p, "a priority")?;
                match u32::try_from(v) {
                    Ok(v) => Some(v),
                    Err(_) => {
                        self.err(
                            codes::BAD_ENTRY,
                            format!("priority {v} is out of range"),
                            p.span,
                        );
                        return None;
                    }
                }
            }
            None => None,
        };
        Some(ir::Entry {
            keys: matches,
            action: ai,
            args,
            priority,
        })
    }

    fn keyset_value(&mut self, e: &ast::Expr, ty: &Type) -> Option<u128> {
        let x = self.expr_as(e, ty)?;
        match const_bits(&x) {
            Some(v) => Some(v),
            None => {
                self.err(
                    codes::NOT_CONSTANT,
                    "keyset values must be compile-time constants",
                    e.span,
                );
                None
            }
        }
    }

    fn entry_keyset(&mut self, ks: &ast::Keyset, key: &ir::Key) -> Option<KeyMatch> {
        let ty = key.expr.ty.clone();
        let w = key.width;
        let bad = |me: &mut Self, span: Span, what: &str| {
            let d = Diagnostic::error(
                codes::BAD_ENTRY,
                format!("{what} cannot match a `{:?}` key", key.match_kind).to_lowercase(),
                span,
            )
            .with_note(format!(
                "key `{}` is matched with `{}`",
                key.name,
                kind_str(key.match_kind)
            ));
            me.emit(d);
            None
        };
        match ks {
            ast::Keyset::Default(s) | ast::Keyset::DontCare(s) => {
                if key.match_kind == MatchKind::Exact {
                    return bad(self, *s, "`_` (don't care)");
                }
                Some(KeyMatch::Any)
            }
            ast::Keyset::Expr(e) => {
                let v = self.keyset_value(e, &ty)?;
                Some(match key.match_kind {
                    MatchKind::Exact | MatchKind::Optional => KeyMatch::Exact { value: v },
                    MatchKind::Lpm => KeyMatch::Lpm {
                        value: v,
                        prefix_len: w,
                    },
                    MatchKind::Ternary => KeyMatch::Ternary {
                        value: v,
                        mask: mask(w),
                    },
                    MatchKind::Range => KeyMatch::Range { lo: v, hi: v },
                })
            }
            ast::Keyset::Mask(ve, me) => {
                let v = self.keyset_value(ve, &ty)?;
                let m = self.keyset_value(me, &ty)?;
                match key.match_kind {
                    MatchKind::Ternary => Some(KeyMatch::Ternary {
                        value: v & m,
                        mask: m,
                    }),
                    MatchKind::Lpm => {
                        let plen = m.count_ones() as u16;
                        let prefix = if plen == 0 {
                            0
                        } else {
                            mask(w) & !mask(w - plen)
                        };
                        if m != prefix {
                            let d = Diagnostic::error(
                                codes::BAD_ENTRY,
                                format!("mask {m:#x} is not a prefix mask (leading ones, then zeros)"),
                                me.span,
                            )
                            .with_hint("an `lpm` key takes `value &&& prefix_mask`, or use a `ternary` key");
                            self.emit(d);
                            return None;
                        }
                        Some(KeyMatch::Lpm {
                            value: v & m,
                            prefix_len: plen,
                        })
                    }
                    _ => bad(self, ve.span.to(me.span), "a `&&&` mask"),
                }
            }
            ast::Keyset::Range(lo, hi) => {
                let l = self.keyset_value(lo, &ty)?;
                let h = self.keyset_value(hi, &ty)?;
                if key.match_kind != MatchKind::Range {
                    return bad(self, lo.span.to(hi.span), "a `..` range");
                }
                if l > h {
                    let d = Diagnostic::error(
                        codes::BAD_ENTRY,
                        format!("empty range: {l} > {h}"),
                        lo.span.to(hi.span),
                    );
                    self.emit(d);
                    return None;
                }
                Some(KeyMatch::Range { lo: l, hi: h })
            }
        }
    }

    fn direct_resource(
        &mut self,
        value: &ast::Expr,
        counter: bool,
    ) -> Option<Handle<ir::Instance>> {
        let what = if counter {
            "direct_counter"
        } else {
            "direct_meter"
        };
        let prop = if counter { "counters" } else { "meters" };
        let found = match &value.kind {
            ast::ExprKind::Name { name, dot_prefix } => match self.resolve(name, *dot_prefix)? {
                Sym::Instance(i) => match &self.m.instances[i].kind {
                    InstanceKind::Extern {
                        kind: ExternInstKind::DirectCounter { .. },
                        ..
                    } if counter => Some(i),
                    InstanceKind::Extern {
                        kind: ExternInstKind::DirectMeter { .. },
                        ..
                    } if !counter => Some(i),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        if found.is_none() {
            let d = Diagnostic::error(
                codes::DIRECT_RESOURCE,
                format!("`{prop}` must name a `{what}` instance"),
                value.span,
            )
            .with_hint(format!(
                "declare one in the control, e.g. `{what}(...) my_{prop};`"
            ));
            self.emit(d);
            return None;
        }
        if let Some(i) = found {
            let used = self
                .m
                .tables
                .iter()
                .any(|(_, t)| t.direct_counter == Some(i) || t.direct_meter == Some(i));
            if used {
                self.err(
                    codes::DIRECT_RESOURCE,
                    format!("this `{what}` is already attached to another table"),
                    value.span,
                );
                return None;
            }
        }
        found
    }

    // ----- parsers ---------------------------------------------------------------------

    pub(super) fn parser_decl(&mut self, p: &ast::ParserDecl) {
        if self.reject_generic(&p.type_params, "parser", &p.name)
            | self.reject_ctor_params(&p.ctor_params, "parser", &p.name)
        {
            return;
        }
        let h = self.m.parsers.append(ir::Parser {
            name: p.name.name.clone(),
            params: Vec::new(),
            local_inits: Vec::new(),
            instances: Vec::new(),
            states: Vec::new(),
            start: 0,
            span: p.span,
        });
        let saved = std::mem::replace(
            &mut self.ctx,
            Ctx {
                in_parser: true,
                ..Ctx::default()
            },
        );
        self.push_scope();
        let params = self.param_vars(&p.params, "a parser");
        let mut ok = params.is_some();
        if !ok {
            self.broken_blocks.push(ir::BlockRef::Parser(h));
        }
        let params = params.unwrap_or_default();
        let mut local_inits = Vec::new();
        let mut instances = Vec::new();
        for l in &p.locals {
            match l {
                ast::Local::Const(k) => {
                    if let Some((ty, v)) = self.const_decl(k) {
                        self.declare(&k.name, Sym::Const(ty, v));
                    }
                }
                ast::Local::Var(v) => {
                    if let Some(s) = self.control_local_var(v) {
                        local_inits.push(s);
                    }
                }
                ast::Local::Instantiation(i) => {
                    if let Some(ih) = self.instantiation(i) {
                        self.declare(&i.name, Sym::Instance(ih));
                        instances.push(ih);
                    }
                }
                ast::Local::ValueSet(v) => {
                    let d = Diagnostic::error(
                        codes::UNSUPPORTED,
                        "`value_set` is not supported by this compiler",
                        v.span,
                    )
                    .with_hint(
                        "use constant keysets in the `select`, or a table in the ingress control",
                    );
                    self.emit(d);
                    ok = false;
                }
                ast::Local::Action(a) => {
                    self.err(
                        codes::NOT_ALLOWED_HERE,
                        "parsers cannot declare actions",
                        a.name.span,
                    );
                    ok = false;
                }
                ast::Local::Table(t) => {
                    self.err(
                        codes::NOT_ALLOWED_HERE,
                        "parsers cannot declare tables",
                        t.name.span,
                    );
                    ok = false;
                }
            }
        }
        // State names first: transitions may go forward.
        let mut names: Vec<String> = Vec::new();
        for s in &p.states {
            let n = &s.name.name;
            if n == "accept" || n == "reject" {
                self.err(
                    codes::DUPLICATE,
                    format!("`{n}` is a built-in state and cannot be declared"),
                    s.name.span,
                );
                ok = false;
            } else if let Some(i) = names.iter().position(|x| x == n) {
                let d = Diagnostic::error(
                    codes::DUPLICATE,
                    format!("state `{n}` is declared twice"),
                    s.name.span,
                )
                .with_secondary(p.states[i].name.span, "first declared here");
                self.emit(d);
                ok = false;
            }
            names.push(n.clone());
        }
        let start = names.iter().position(|n| n == "start");
        if start.is_none() {
            let d = Diagnostic::error(
                codes::NO_START,
                format!("parser `{}` has no `start` state", p.name.name),
                p.name.span,
            )
            .with_hint("parsing begins in the state named `start`: add `state start { ... }`");
            self.emit(d);
            ok = false;
        }
        let mut states = Vec::new();
        for s in &p.states {
            let body = self.block(&ast::Block {
                stmts: s.body.clone(),
                span: s.span,
            });
            let transition = match &s.transition {
                None => Some(ir::Transition::Direct(Target::Reject)),
                Some(ast::Transition::Direct(id)) => {
                    self.state_target(id, &names).map(ir::Transition::Direct)
                }
                Some(ast::Transition::Select { exprs, cases, span }) => {
                    self.select(exprs, cases, *span, &names)
                }
            };
            match transition {
                Some(transition) => states.push(ir::State {
                    name: s.name.name.clone(),
                    body,
                    transition,
                    span: s.span,
                }),
                None => ok = false,
            }
        }
        self.pop_scope();
        self.ctx = saved;
        if ok {
            if let Some(start) = start {
                // Unreachable states are a warning.
                let mut reached = vec![false; states.len()];
                let mut todo = vec![start];
                while let Some(i) = todo.pop() {
                    if reached[i] {
                        continue;
                    }
                    reached[i] = true;
                    let targets: Vec<Target> = match &states[i].transition {
                        ir::Transition::Direct(t) => vec![*t],
                        ir::Transition::Select { cases, .. } => cases.iter().map(|c| c.1).collect(),
                    };
                    for t in targets {
                        if let Target::State(j) = t {
                            todo.push(j);
                        }
                    }
                }
                for (i, s) in p.states.iter().enumerate() {
                    if !reached[i] {
                        let d = Diagnostic::warning(
                            codes::UNREACHABLE_STATE,
                            format!("state `{}` is never reached from `start`", s.name.name),
                            s.name.span,
                        )
                        .with_hint("remove it, or add a transition to it");
                        self.emit(d);
                    }
                }
            }
        }
        let pr = &mut self.m.parsers[h];
        pr.params = params;
        pr.local_inits = local_inits;
        pr.instances = instances;
        pr.states = states;
        pr.start = start.unwrap_or(0);
        self.declare(&p.name, Sym::Parser(h));
    }

    fn state_target(&mut self, id: &ast::Ident, names: &[String]) -> Option<Target> {
        match id.name.as_str() {
            "accept" => return Some(Target::Accept),
            "reject" => return Some(Target::Reject),
            _ => {}
        }
        if let Some(i) = names.iter().position(|n| *n == id.name) {
            return Some(Target::State(i));
        }
        let mut d = Diagnostic::error(
            codes::UNKNOWN_STATE,
            format!("there is no state `{}` in this parser", id.name),
            id.span,
        )
        .with_label("unknown state");
        let cands = names.iter().map(String::as_str).chain(["accept", "reject"]);
        if let Some(b) = did_you_mean(&id.name, cands) {
            d = d.with_hint(format!("did you mean `{b}`?"));
        }
        self.emit(d);
        None
    }

    fn select(
        &mut self,
        exprs: &[ast::Expr],
        cases: &[ast::SelectCase],
        span: Span,
        names: &[String],
    ) -> Option<ir::Transition> {
        let mut keys = Vec::new();
        for e in exprs {
            let x = self.expr(e)?;
            if self.m.scalar_width(&x.ty).is_none() {
                let tn = self.m.type_name(&x.ty);
                self.err(
                    codes::SELECT_KEYSET,
                    format!("cannot select on a value of type `{tn}`"),
                    e.span,
                );
                return None;
            }
            keys.push(x);
        }
        let _ = span;
        let mut out = Vec::new();
        let mut ok = true;
        for c in cases {
            let target = self.state_target(&c.next, names);
            let all_any = c.keysets.len() == 1
                && matches!(
                    c.keysets[0],
                    ast::Keyset::Default(_) | ast::Keyset::DontCare(_)
                );
            let keysets = if all_any {
                Some(vec![Keyset::Any; keys.len()])
            } else if c.keysets.len() != keys.len() {
                let d = Diagnostic::error(
                    codes::SELECT_KEYSET,
                    format!(
                        "this case has {} keyset(s) but the select has {} expression(s)",
                        c.keysets.len(),
                        keys.len()
                    ),
                    c.span,
                );
                self.emit(d);
                None
            } else {
                let mut v = Vec::new();
                let mut good = true;
                for (ks, k) in c.keysets.iter().zip(&keys) {
                    match self.select_keyset(ks, &k.ty) {
                        Some(x) => v.push(x),
                        None => good = false,
                    }
                }
                good.then_some(v)
            };
            match (keysets, target) {
                (Some(k), Some(t)) => out.push((k, t)),
                _ => ok = false,
            }
        }
        ok.then_some(ir::Transition::Select { keys, cases: out })
    }

    fn select_keyset(&mut self, ks: &ast::Keyset, ty: &Type) -> Option<Keyset> {
        match ks {
            ast::Keyset::Default(_) | ast::Keyset::DontCare(_) => Some(Keyset::Any),
            ast::Keyset::Expr(e) => {
                let v = self.select_value(e, ty)?;
                Some(Keyset::Value(v))
            }
            ast::Keyset::Mask(v, m) => {
                let v = self.select_value(v, ty)?;
                let m = self.select_value(m, ty)?;
                Some(Keyset::Mask(v & m, m))
            }
            ast::Keyset::Range(lo, hi) => {
                let l = self.select_value(lo, ty)?;
                let h = self.select_value(hi, ty)?;
                if l > h {
                    self.err(
                        codes::SELECT_KEYSET,
                        format!("empty range: {l} > {h}"),
                        lo.span.to(hi.span),
                    );
                    return None;
                }
                Some(Keyset::Range(l, h))
            }
        }
    }

    fn select_value(&mut self, e: &ast::Expr, ty: &Type) -> Option<u128> {
        let x = self.expr(e)?;
        if x.ty != *ty && x.ty != Type::InfInt {
            let (en, fnm) = (self.m.type_name(ty), self.m.type_name(&x.ty));
            let code = match (ty.int_width(), x.ty.int_width()) {
                (Some((a, _)), Some((b, _))) if a != b => codes::WIDTH_MISMATCH,
                _ => codes::SELECT_KEYSET,
            };
            let d = Diagnostic::error(
                code,
                format!("this keyset is `{fnm}`, but the select expression is `{en}`"),
                e.span,
            )
            .with_label(format!("this is `{fnm}`"));
            self.emit(d);
            return None;
        }
        let x = self.coerce(x, ty)?;
        match const_bits(&x) {
            Some(v) => Some(v),
            None => {
                let d = Diagnostic::error(
                    codes::NOT_CONSTANT,
                    "select keysets must be compile-time constants",
                    e.span,
                )
                .with_hint("value sets (`value_set`) are not supported; use constants");
                self.emit(d);
                None
            }
        }
    }
}

fn kind_str(k: MatchKind) -> &'static str {
    match k {
        MatchKind::Exact => "exact",
        MatchKind::Lpm => "lpm",
        MatchKind::Ternary => "ternary",
        MatchKind::Range => "range",
        MatchKind::Optional => "optional",
    }
}

/// Whether every path through `stmts` ends in a `return` (or `exit`).
fn always_returns(stmts: &[ir::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        ir::StmtKind::Return(_) | ir::StmtKind::Exit => true,
        ir::StmtKind::If(_, t, e) => always_returns(&t.stmts) && always_returns(&e.stmts),
        ir::StmtKind::Block(b) => always_returns(&b.stmts),
        ir::StmtKind::Switch(sw) => {
            sw.default
                .as_ref()
                .is_some_and(|d| always_returns(&d.stmts))
                && sw.cases.iter().all(|c| always_returns(&c.body.stmts))
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> ast::Expr {
        ast::Expr {
            kind: ast::ExprKind::Name {
                name: ast::Ident {
                    name: n.into(),
                    span: Span::default(),
                },
                dot_prefix: false,
            },
            span: Span::default(),
        }
    }

    #[test]
    fn key_text() {
        let e = ast::Expr {
            kind: ast::ExprKind::Member(
                Box::new(ast::Expr {
                    kind: ast::ExprKind::Member(
                        Box::new(name("hdr")),
                        ast::Ident {
                            name: "ipv4".into(),
                            span: Span::default(),
                        },
                    ),
                    span: Span::default(),
                }),
                ast::Ident {
                    name: "dstAddr".into(),
                    span: Span::default(),
                },
            ),
            span: Span::default(),
        };
        assert_eq!(expr_text(&e).as_deref(), Some("hdr.ipv4.dstAddr"));
    }
}
