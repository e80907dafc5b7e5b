//! Calls: copy-in/copy-out of actions, functions and sub-controls, argument
//! lowering, and the constant and extern operands that builtins need.

use netsparse_externs::artifact::{self as a, ExternId, FieldId, FieldKind, HashAlgo, LValue};

use crate::ast::{Direction, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{
    self, Arg, Builtin, Callee, ExprKind, InstanceKind, Receiver, StmtKind, Type, Value,
};

use super::*;

impl Lower<'_> {
    // ----- calls -------------------------------------------------------------------------

    /// Copy an argument into a parameter's place; remember l-values to copy back.
    pub(super) fn copy_in(
        &mut self,
        idx: usize,
        param: &Place,
        ty: &Type,
        arg: &Arg,
        out: &mut Vec<a::Stmt>,
        outs: &mut Vec<(LPlace, Place, Type, Span)>,
    ) -> Option<()> {
        match arg {
            Arg::In(e) => self.assign(idx, LPlace::Static(param.clone()), ty, e, out),
            Arg::Out(e, dir) => {
                let lp = self.place(idx, e, out)?;
                if *dir == Direction::InOut {
                    self.copy(LPlace::Static(param.clone()), lp.clone(), ty, e.span, out);
                } else {
                    self.invalidate(param, out);
                }
                outs.push((lp, param.clone(), ty.clone(), e.span));
            }
            Arg::Skip(_) => self.invalidate(param, out),
        }
        Some(())
    }

    /// Whether running `b` may execute `exit` (directly or in a called action).
    pub(super) fn may_exit(&self, b: &ir::Block) -> bool {
        b.stmts.iter().any(|s| match &s.kind {
            StmtKind::Exit => true,
            StmtKind::If(_, t, e) => self.may_exit(t) || self.may_exit(e),
            StmtKind::Block(b) => self.may_exit(b),
            StmtKind::Loop(l) => self.may_exit(&l.body) || self.may_exit(&l.updates),
            StmtKind::Switch(sw) => {
                sw.cases.iter().any(|c| self.may_exit(&c.body))
                    || sw.default.as_ref().is_some_and(|d| self.may_exit(d))
            }
            StmtKind::Call(c) => match c.callee {
                Callee::Action(h) => self.may_exit(&self.m.actions[h].body),
                _ => false,
            },
            _ => false,
        })
    }

    pub(super) fn copy_out(
        &mut self,
        outs: &[(LPlace, Place, Type, Span)],
        out: &mut Vec<a::Stmt>,
    ) {
        for (lp, param, ty, span) in outs {
            self.copy(lp.clone(), LPlace::Static(param.clone()), ty, *span, out);
        }
    }

    pub(super) fn call(
        &mut self,
        idx: usize,
        c: &ir::Call,
        ret: &Type,
        out: &mut Vec<a::Stmt>,
    ) -> Option<CallResult> {
        match &c.callee {
            Callee::Action(h) => {
                let id = self.action(idx, *h);
                let act = &self.m.actions[*h];
                let owner = if act.owner.is_none() { 0 } else { idx };
                let mut outs = Vec::new();
                for (p, arg) in act.params.clone().iter().zip(&c.args) {
                    let place = self.var_place(owner, *p);
                    let ty = self.m.vars[*p].ty.clone();
                    self.copy_in(idx, &place, &ty, arg, out, &mut outs)?;
                }
                if !outs.is_empty() && self.may_exit(&act.body) {
                    // `exit` in the action must still copy out its `out` and
                    // `inout` arguments: inline the body, with every `exit`
                    // preceded by this call's copy-out.
                    let mut copies = Vec::new();
                    self.copy_out(&outs, &mut copies);
                    copies.extend(std::mem::take(&mut self.exit_copies));
                    let saved = std::mem::replace(&mut self.exit_copies, copies);
                    let region = self.region;
                    if act.owner.is_none() {
                        self.region = Region::Outside;
                    }
                    let body = self.block(owner, &act.body.stmts);
                    self.region = region;
                    self.exit_copies = saved;
                    out.push(a::Stmt::Inlined {
                        name: act.name.clone(),
                        body,
                    });
                } else {
                    out.push(a::Stmt::CallAction { action: id });
                }
                self.copy_out(&outs, out);
                Some(CallResult::Nothing)
            }
            Callee::Function(f) => {
                let func = &self.m.functions[*f];
                let fname = join(&self.insts[idx].path, &func.name);
                let mut outs = Vec::new();
                for (p, arg) in func.params.iter().zip(&c.args) {
                    if !self.insts[idx].vars.contains_key(p) {
                        let var = &self.m.vars[*p];
                        let place =
                            self.alloc(&format!("{fname}.{}", var.name), &var.ty, FieldKind::Local);
                        self.insts[idx].vars.insert(*p, place);
                    }
                    let place = self.var_place(idx, *p);
                    let ty = self.m.vars[*p].ty.clone();
                    self.copy_in(idx, &place, &ty, arg, out, &mut outs)?;
                }
                let ret_place = func.ret_var.map(|v| self.var_place(idx, v));
                let saved = std::mem::replace(&mut self.ret_place, ret_place.clone());
                let body = self.block(idx, &func.body.stmts);
                self.ret_place = saved;
                out.push(a::Stmt::Inlined {
                    name: func.name.clone(),
                    body,
                });
                self.copy_out(&outs, out);
                let _ = ret;
                Some(match ret_place {
                    Some(p) => CallResult::Place(p),
                    None => CallResult::Nothing,
                })
            }
            Callee::ApplyControl(i) => {
                let Some(InstRef::Control(sub)) = self.lookup_instance(idx, *i) else {
                    return None;
                };
                let InstanceKind::Control(ch) = self.m.instances[*i].kind else {
                    return None;
                };
                let ctl = &self.m.controls[ch];
                if ctl.per_pr && self.region != Region::PerPr {
                    let d = Diagnostic::error(
                        codes::NS_PER_PR_CONTROL,
                        format!(
                            "`{}` is a per-PR control (it takes the PR or its metadata) and can only be \
                             applied between Deconcatenate and Concatenate",
                            ctl.name
                        ),
                        c.span,
                    )
                    .with_hint("apply it after `Deconcatenate(pr, md);` in the middle control");
                    self.diags.push(d);
                    return None;
                }
                let mut outs = Vec::new();
                for (p, arg) in ctl.params.clone().iter().zip(&c.args) {
                    let place = self.var_place(sub, *p);
                    let ty = self.m.vars[*p].ty.clone();
                    self.copy_in(idx, &place, &ty, arg, out, &mut outs)?;
                }
                let saved = self.region;
                let body = self.control_body(sub, ch);
                self.region = saved;
                out.push(a::Stmt::Inlined {
                    name: self.insts[sub].path.clone(),
                    body,
                });
                self.copy_out(&outs, out);
                Some(CallResult::Nothing)
            }
            Callee::ApplyParser(_) => {
                // Only valid as a statement of a parser state, split there.
                self.inexpressible("a sub-parser applied outside a parser state", c.span);
                None
            }
            Callee::ApplyTable(t) => {
                let Some(tid) = self.insts[idx].tables.get(t).copied() else {
                    self.inexpressible("a table of another control", c.span);
                    return None;
                };
                out.push(a::Stmt::ApplyTable { table: tid });
                Some(CallResult::Table(tid))
            }
            Callee::Builtin {
                op,
                receiver,
                type_args,
            } => self.builtin(idx, *op, receiver.as_deref(), type_args, c, ret, out),
        }
    }

    pub(super) fn arg_expr(
        &mut self,
        idx: usize,
        a: Option<&Arg>,
        out: &mut Vec<a::Stmt>,
    ) -> Option<a::Expr> {
        match a? {
            Arg::In(e) | Arg::Out(e, _) => self.expr(idx, e, out),
            Arg::Skip(_) => None,
        }
    }

    pub(super) fn arg_lvalue(
        &mut self,
        idx: usize,
        a: Option<&Arg>,
        out: &mut Vec<a::Stmt>,
        span: Span,
    ) -> Option<LValue> {
        match a? {
            Arg::In(e) | Arg::Out(e, _) => {
                let lp = self.place(idx, e, out)?;
                self.lvalue(lp, e.span)
            }
            Arg::Skip(t) => {
                let t = t.clone();
                let p = self.temp(&t);
                self.lvalue(LPlace::Static(p), span)
            }
        }
    }

    pub(super) fn arg_ir<'x>(&self, a: Option<&'x Arg>) -> Option<&'x ir::Expr> {
        match a? {
            Arg::In(e) | Arg::Out(e, _) => Some(e),
            Arg::Skip(_) => None,
        }
    }

    /// Every scalar of a list/struct/header value, most significant first.
    pub(super) fn flatten(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        out: &mut Vec<a::Stmt>,
        acc: &mut Vec<a::Expr>,
    ) -> Option<()> {
        if let ExprKind::List(items) = &e.kind {
            for it in items {
                self.flatten(idx, it, out, acc)?;
            }
            return Some(());
        }
        if let ExprKind::Field(b, i) = &e.kind {
            // A varbit field (a checksum's or hash's data item): its current length.
            if matches!(b.ty, Type::Header(s) if self.m.structs[s].fields.get(*i as usize).is_some_and(|f| f.varbit))
            {
                return match self.place(idx, b, out)? {
                    LPlace::Static(Place::Header(h)) => {
                        acc.push(a::Expr::VarbitField { header: h });
                        Some(())
                    }
                    _ => {
                        self.inexpressible("a varbit field of a run-time stack element", e.span);
                        None
                    }
                };
            }
        }
        if self.m.scalar_width(&e.ty).is_some() {
            // A value over 128 bits: its parts, most significant first.
            acc.extend(self.parts(idx, e, out)?);
            return Some(());
        }
        if self.has_varbit(&e.ty) {
            // Its slot holds the maximum width, not the extracted length.
            self.inexpressible("a header with a varbit field in a field list", e.span);
            return None;
        }
        let lp = self.place(idx, e, out)?;
        match lp {
            LPlace::Static(p) => {
                let mut fs = Vec::new();
                self.leaves(&p, &mut fs);
                acc.extend(fs.into_iter().map(|field| a::Expr::Field { field }));
            }
            LPlace::DynHeader(r) => {
                let n = self.header_field_count(&e.ty);
                for i in 0..n {
                    acc.push(a::Expr::StackField {
                        header: r.clone(),
                        field_index: u32_of(i),
                    });
                }
            }
            _ => {
                self.inexpressible("this argument", e.span);
                return None;
            }
        }
        Some(())
    }

    /// Whether a value of type `ty` holds a header with a varbit field.
    pub(super) fn has_varbit(&self, ty: &Type) -> bool {
        match ty {
            Type::Header(s) => self.m.structs[*s].fields.iter().any(|f| f.varbit),
            Type::Struct(s) | Type::Stack(s, _) => self.m.structs[*s]
                .fields
                .iter()
                .any(|f| f.varbit || self.has_varbit(&f.ty)),
            Type::List(ts) => ts.iter().any(|t| self.has_varbit(t)),
            _ => false,
        }
    }

    pub(super) fn header_field_count(&self, ty: &Type) -> usize {
        match ty {
            Type::Header(s) => self.art_field_count(*s),
            _ => 0,
        }
    }

    /// Names and values of a digest's data.
    pub(super) fn named_leaves(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        prefix: &str,
        out: &mut Vec<a::Stmt>,
        acc: &mut Vec<(String, a::Expr)>,
    ) -> Option<()> {
        if self.has_varbit(&e.ty) {
            self.inexpressible("a header with a varbit field in a digest", e.span);
            return None;
        }
        match (&e.kind, &e.ty) {
            (ExprKind::List(items), Type::Struct(s)) => {
                let fields = self.m.structs[*s].fields.clone();
                for (f, it) in fields.iter().zip(items) {
                    self.named_leaves(idx, it, &join(prefix, &f.name), out, acc)?;
                }
            }
            (ExprKind::List(items), _) => {
                for it in items {
                    let name = expr_path(self.m, it).unwrap_or_else(|| format!("f{}", acc.len()));
                    self.named_leaves(idx, it, &join(prefix, &name), out, acc)?;
                }
            }
            (_, Type::Struct(s)) => {
                let fields = self.m.structs[*s].fields.clone();
                for (i, f) in fields.iter().enumerate() {
                    let fe = ir::Expr {
                        kind: ExprKind::Field(Box::new(e.clone()), u32_of(i)),
                        ty: f.ty.clone(),
                        span: e.span,
                    };
                    self.named_leaves(idx, &fe, &join(prefix, &f.name), out, acc)?;
                }
            }
            _ if self.m.scalar_width(&e.ty).is_some() => {
                let v = self.expr(idx, e, out)?;
                acc.push((prefix.to_string(), v));
            }
            _ => {
                let mut vals = Vec::new();
                self.flatten(idx, e, out, &mut vals)?;
                for (i, v) in vals.into_iter().enumerate() {
                    acc.push((format!("{prefix}.{i}"), v));
                }
            }
        }
        Some(())
    }

    pub(super) fn const_member(
        &mut self,
        e: Option<&ir::Expr>,
        what: &str,
        span: Span,
    ) -> Option<String> {
        let e = e?;
        match (&e.kind, &e.ty) {
            (ExprKind::Const(Value::Bits(v)), Type::Enum(h)) => self.m.enums[*h]
                .members
                .iter()
                .find(|(_, x)| x == v)
                .map(|(n, _)| n.clone()),
            _ => {
                let d = Diagnostic::error(
                    codes::NOT_CONSTANT,
                    format!("{what} must be a compile-time constant"),
                    span,
                );
                self.diags.push(d);
                None
            }
        }
    }

    pub(super) fn hash_algo(&mut self, e: Option<&ir::Expr>, span: Span) -> Option<HashAlgo> {
        let name = self.const_member(e, "the hash algorithm", span)?;
        Some(match name.as_str() {
            "crc32" => HashAlgo::Crc32,
            "crc32_custom" => HashAlgo::Crc32Custom,
            "crc16" => HashAlgo::Crc16,
            "crc16_custom" => HashAlgo::Crc16Custom,
            "random" => HashAlgo::Random,
            "identity" => HashAlgo::Identity,
            "csum16" => HashAlgo::Csum16,
            "xor16" => HashAlgo::Xor16,
            other => {
                self.err(
                    codes::EXTERN_NOT_IMPLEMENTED,
                    format!("hash algorithm `{other}` is not implemented"),
                    span,
                );
                return None;
            }
        })
    }

    pub(super) fn const_u(&mut self, e: Option<&ir::Expr>, what: &str, span: Span) -> Option<u128> {
        match e.map(|e| &e.kind) {
            Some(ExprKind::Const(Value::Bits(v))) => Some(*v),
            _ => {
                self.err(
                    codes::NOT_CONSTANT,
                    format!("{what} must be a compile-time constant"),
                    span,
                );
                None
            }
        }
    }

    /// User metadata slots in field list `index` (`@field_list(index)`).
    pub(super) fn field_list(&self, index: u128) -> Vec<FieldId> {
        let mut out = Vec::new();
        if let Some((Type::Struct(s), Place::Struct(ps))) = &self.user_metadata {
            for (f, p) in self.m.structs[*s].fields.iter().zip(ps) {
                if f.field_lists.iter().any(|x| u128::from(*x) == index) {
                    self.leaves(p, &mut out);
                }
            }
        }
        out
    }

    pub(super) fn extern_of(
        &mut self,
        idx: usize,
        r: Option<&Receiver>,
        span: Span,
    ) -> Option<ExternId> {
        match r {
            Some(Receiver::Instance(i)) => match self.lookup_instance(idx, *i)? {
                InstRef::Extern(e) => Some(e),
                InstRef::Control(_) => None,
            },
            _ => {
                self.inexpressible("an extern object that is not an instance", span);
                None
            }
        }
    }

    pub(super) fn cache(&mut self, span: Span) -> Option<ExternId> {
        if self.region != Region::PerPr {
            let d = Diagnostic::error(
                codes::NS_CACHE_REGION,
                "the Property Cache can only be used between Deconcatenate and Concatenate",
                span,
            )
            .with_note("Lookup and Insert work on the current PR: in the middle control's per-PR part, or in a per-PR control applied there")
            .with_hint("move this call after `Deconcatenate(pr, md);`");
            self.diags.push(d);
            return None;
        }
        if let Some(c) = self.cache {
            return Some(c);
        }
        let id = ExternId(u32_of(self.externs.len()));
        self.externs.push(a::ExternInstance {
            name: join(&self.middle_name, "property_cache"),
            kind: a::ExternKind::PropertyCache,
        });
        self.extern_spans.push(span);
        self.cache = Some(id);
        Some(id)
    }

    /// Collective externs: only where there is a current PR (the per-PR
    /// part of a NIC's net_to_host or of a switch's middle control).
    pub(super) fn coll_context(&mut self, name: &str, span: Span) -> Option<()> {
        if self.region == Region::PerPr {
            return Some(());
        }
        let d = Diagnostic::error(
            codes::COLL_REGION,
            format!("`{name}` can only be used where there is a current PR"),
            span,
        )
        .with_note("the collective externs work on the PR being processed (its round, worker, index and block): between Deconcatenate and Concatenate, or in a per-PR control applied there")
        .with_hint("move this call after `Deconcatenate(pr, md);`");
        self.diags.push(d);
        None
    }

    /// RIG externs: only in the per-PR part of a NIC path, some only on one path.
    pub(super) fn rig_context(&mut self, op: Builtin, span: Span) -> Option<()> {
        let name = crate::check::builtin_label(op);
        if self.region != Region::PerPr || self.nic_side.is_none() {
            let d = Diagnostic::error(
                codes::RIG_REGION,
                format!("`{name}` can only be used where there is a current idx or PR"),
                span,
            )
            .with_note("in host_to_net anywhere before Concatenate; in net_to_host between Deconcatenate and Concatenate, or in a per-PR control applied there")
            .with_hint("move this call into the per-PR part of the path control");
            self.diags.push(d);
            return None;
        }
        let need = match op {
            Builtin::PendingInsert => Some(NicSide::HostToNet),
            Builtin::PendingComplete | Builtin::HostRead | Builtin::HostWrite => {
                Some(NicSide::NetToHost)
            }
            _ => None,
        };
        if let Some(need) = need.filter(|n| Some(*n) != self.nic_side) {
            let (here, there, why) = match need {
                NicSide::HostToNet => (
                    "net_to_host",
                    "host_to_net",
                    "it registers a read PR issued by a client RIG unit",
                ),
                NicSide::NetToHost => (
                    "host_to_net",
                    "net_to_host",
                    "it acts on a PR that arrived from the network",
                ),
            };
            let d = Diagnostic::error(
                codes::RIG_PATH,
                format!("`{name}` cannot be used in {here}: {why}"),
                span,
            )
            .with_hint(format!("use it in the {there} control"));
            self.diags.push(d);
            return None;
        }
        Some(())
    }

    /// The place of a PR or metadata argument of a RIG extern.
    pub(super) fn arg_place(
        &mut self,
        idx: usize,
        a: Option<&Arg>,
        out: &mut Vec<a::Stmt>,
        span: Span,
    ) -> Option<(LPlace, Type)> {
        let Some(e) = self.arg_ir(a).cloned() else {
            self.inexpressible("this RIG extern argument", span);
            return None;
        };
        let lp = self.place(idx, &e, out)?;
        Some((lp, e.ty))
    }

    /// The place of field `name` of a header/struct place.
    pub(super) fn field_of(&self, p: &(LPlace, Type), name: &str) -> Option<LPlace> {
        let (lp, ty) = p;
        let (Type::Header(s) | Type::Struct(s)) = ty else {
            return None;
        };
        let i = self.m.structs[*s]
            .fields
            .iter()
            .position(|f| f.name == name)?;
        let ai = match ty {
            Type::Header(s) => self.art_field(*s, i),
            _ => i,
        };
        match lp {
            LPlace::Static(Place::Header(h)) => {
                self.header_field_place(*h, *s, i).map(LPlace::Static)
            }
            LPlace::DynHeader(_) if matches!(self.m.structs[*s].fields[i].ty, Type::Struct(_)) => {
                None
            }
            LPlace::Static(Place::Struct(ps)) => ps.get(i).cloned().map(LPlace::Static),
            LPlace::DynHeader(r) => Some(LPlace::DynField(r.clone(), u32_of(ai))),
            _ => None,
        }
    }
}
