//! Declarations with bodies: controls, actions, functions and
//! instantiations (with extern instances). Tables are in `table.rs`,
//! parsers in `parser.rs`.

use netsparse_externs::artifact::{CounterUnit, MeterUnit};

use super::{Checker, Ctx, Sym};
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, Arg, ExprKind, ExternInstKind, Handle, InstanceKind, Type, Value, VarKind};

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
    pub(super) fn param_vars(
        &mut self,
        params: &[ast::Param],
        block: &str,
    ) -> Option<Vec<Handle<ir::Var>>> {
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

    pub(super) fn reject_generic(
        &mut self,
        tparams: &[ast::Ident],
        what: &str,
        name: &ast::Ident,
    ) -> bool {
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

    pub(super) fn reject_ctor_params(
        &mut self,
        ctor: &[ast::Param],
        what: &str,
        name: &ast::Ident,
    ) -> bool {
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

    pub(super) fn is_pr_type(&self, t: &Type) -> bool {
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
                    } else {
                        self.poison(&i.name);
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
        self.direct_instances.clear();
        let apply = self.block(&c.apply);
        instances.append(&mut self.direct_instances);
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

    pub(super) fn control_local_var(&mut self, v: &ast::VarDecl) -> Option<ir::Stmt> {
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
            p4rt_id: Self::annotation_ints(&a.annotations, "id").first().copied(),
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

    pub(super) fn extern_instance(
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
            // PSA (<psa.p4>).
            "Register" | "Counter" | "DirectCounter" | "Meter" | "DirectMeter" => {}
            // PSA's, not a program's own extern of the same name.
            "Hash" | "Checksum" | "InternetChecksum" | "Random" | "Digest" if d.bundled => {}
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
            Some("packets" | "PACKETS") => Some(CounterUnit::Packets),
            Some("bytes" | "BYTES") => Some(CounterUnit::Bytes),
            Some("packets_and_bytes" | "PACKETS_AND_BYTES") => Some(CounterUnit::PacketsAndBytes),
            _ => None,
        };
        let meter_unit = |s: Option<String>| match s.as_deref() {
            Some("packets" | "PACKETS") => Some(MeterUnit::Packets),
            Some("bytes" | "BYTES") => Some(MeterUnit::Bytes),
            _ => None,
        };
        if d.bundled
            && matches!(
                d.name.as_str(),
                "Hash" | "Checksum" | "InternetChecksum" | "Random" | "Digest"
            )
        {
            let named: Vec<(u128, Option<String>)> =
                vals.iter().map(|v| (v.0, member(&self.m, v))).collect();
            return self.psa_extern_kind(&d.name, targs, &named, i.span);
        }
        let kind = match d.name.as_str() {
            "register" | "Register" => {
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
                // PSA `Register(size, initial_value)`.
                let initial = vals.get(1).map_or(0, |v| v.0);
                size(&vals).map(|size| ExternInstKind::Register {
                    width,
                    size,
                    initial,
                })
            }
            "counter" | "Counter" => match (
                size(&vals),
                vals.get(1).and_then(|v| counter_unit(member(&self.m, v))),
            ) {
                (Some(size), Some(unit)) => Some(ExternInstKind::Counter { size, unit }),
                _ => None,
            },
            "direct_counter" | "DirectCounter" => vals
                .first()
                .and_then(|v| counter_unit(member(&self.m, v)))
                .map(|unit| ExternInstKind::DirectCounter { unit }),
            "meter" | "Meter" => match (
                size(&vals),
                vals.get(1).and_then(|v| meter_unit(member(&self.m, v))),
            ) {
                (Some(size), Some(unit)) => Some(ExternInstKind::Meter { size, unit }),
                _ => None,
            },
            "direct_meter" | "DirectMeter" => vals
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

    /// Declare `name` (an instance whose declaration had an error, already
    /// reported) as a value of no type, so that its uses are not reported
    /// again as undefined names.
    pub(super) fn poison(&mut self, name: &ast::Ident) {
        let h = self.m.vars.append(ir::Var {
            name: name.name.clone(),
            ty: Type::DontCare,
            kind: VarKind::Local,
            span: name.span,
        });
        self.declare(name, Sym::Var(h));
    }

    pub(super) fn not_implemented_instance(&mut self, name: &str, span: Span) {
        let d = Diagnostic::error(
            codes::EXTERN_NOT_IMPLEMENTED,
            format!("extern `{name}` is declared but this target does not implement it"),
            span,
        )
        .with_note(
            "the NetSparse targets implement register, counter, direct_counter, meter and \
             direct_meter objects, and PSA's Register, Counter, DirectCounter, Meter, \
             DirectMeter, Hash, Checksum, InternetChecksum, Random and Digest",
        );
        self.emit(d);
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
