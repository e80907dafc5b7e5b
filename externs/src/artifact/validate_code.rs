//! The code half of the artifact's consistency check (`validate.rs` holds
//! the structure): every expression's operands and width, every
//! assignment's sides, every statement's ids and every primitive's
//! arguments, checked against the field slots, headers, externs and
//! tables they name.

use super::validate::V;
use super::*;

impl V<'_> {
    fn href(&mut self, r: &HeaderRef) -> Option<&Header> {
        match r {
            HeaderRef::Static { header } => {
                if self.a.headers.get(header.index()).is_none() {
                    self.bad(format!("header {} out of range", header.0));
                }
            }
            HeaderRef::Index { stack, index } => {
                self.expr(index);
                if self.a.stacks.get(stack.index()).is_none() {
                    self.bad("stack out of range".into());
                }
            }
            HeaderRef::Next { stack } | HeaderRef::Last { stack } => {
                if self.a.stacks.get(stack.index()).is_none() {
                    self.bad("stack out of range".into());
                }
            }
        }
        self.a.header_of_ref(r)
    }

    fn lvalue(&mut self, l: &LValue) -> u16 {
        match l {
            LValue::Field { field } => self.field(*field),
            LValue::Slice { field, hi, lo } => {
                let w = self.field(*field);
                if hi < lo || *hi >= w {
                    self.bad(format!("slice [{hi}:{lo}] of a {w}-bit field"));
                }
                hi.saturating_sub(*lo) + 1
            }
            LValue::StackField {
                header,
                field_index,
            } => {
                let w = self
                    .href(header)
                    .and_then(|h| h.fields.get(*field_index as usize))
                    .map(|f| f.width);
                w.unwrap_or_else(|| {
                    self.bad("stack field out of range".into());
                    0
                })
            }
        }
    }

    /// An item of a hash or checksum data list: an expression, or a varbit
    /// field (its maximum width; whole bytes).
    fn data_item(&mut self, e: &Expr) -> u16 {
        match e {
            Expr::VarbitField { header } => match self.a.headers.get(header.index()) {
                Some(h) if h.varbit_len.is_some() => self.a.expr_width(e),
                _ => {
                    self.bad("varbit data item of a header without a varbit field".into());
                    0
                }
            },
            _ => self.expr(e),
        }
    }

    pub(super) fn expr(&mut self, e: &Expr) -> u16 {
        match e {
            Expr::VarbitField { .. } => {
                self.bad("a varbit field outside a hash or checksum data list".into());
                0
            }
            Expr::Const { value, width, .. } => {
                if *width < 128 && *value >> width != 0 {
                    self.bad(format!("constant {value:#x} does not fit {width} bits"));
                }
                *width
            }
            Expr::Field { field } => self.field(*field),
            Expr::StackField {
                header,
                field_index,
            } => {
                let w = self
                    .href(header)
                    .and_then(|h| h.fields.get(*field_index as usize))
                    .map(|f| f.width);
                w.unwrap_or_else(|| {
                    self.bad("stack field out of range".into());
                    0
                })
            }
            Expr::IsValid { header } => {
                self.href(header);
                1
            }
            Expr::Unary { op, width, arg, .. } => {
                let w = self.expr(arg);
                if w != *width || (*op == UnaryOp::Not && *width != 1) {
                    self.bad(format!("unary {op:?} width {width} on {w}"));
                }
                *width
            }
            Expr::Binary {
                op,
                width,
                lhs,
                rhs,
                ..
            } => {
                let (l, r) = (self.expr(lhs), self.expr(rhs));
                use BinaryOp::*;
                let ok = match op {
                    Shl | Shr => l == *width,
                    Eq | Ne | Lt | Le | Gt | Ge => l == r && *width == 1,
                    LAnd | LOr => l == 1 && r == 1 && *width == 1,
                    _ => l == *width && r == *width,
                };
                if !ok {
                    self.bad(format!("binary {op:?} width {width} on {l}, {r}"));
                }
                *width
            }
            Expr::Slice { arg, hi, lo } => {
                let w = self.expr(arg);
                if hi < lo || *hi >= w {
                    self.bad(format!("slice [{hi}:{lo}] of a {w}-bit value"));
                }
                hi.saturating_sub(*lo) + 1
            }
            Expr::Concat {
                lhs,
                rhs,
                rhs_width,
                width,
                ..
            } => {
                let (l, r) = (self.expr(lhs), self.expr(rhs));
                if r != *rhs_width || l + r != *width {
                    self.bad(format!(
                        "concat {l} ++ {r} as {width} (rhs_width {rhs_width})"
                    ));
                }
                *width
            }
            Expr::Cast {
                arg,
                arg_width,
                width,
                ..
            } => {
                let w = self.expr(arg);
                if w != *arg_width {
                    self.bad(format!("cast from {w} declared {arg_width}"));
                }
                *width
            }
            Expr::Mux {
                cond,
                then,
                otherwise,
                width,
            } => {
                let (c, t, o) = (self.expr(cond), self.expr(then), self.expr(otherwise));
                if c != 1 || t != *width || o != *width {
                    self.bad(format!("mux {c} ? {t} : {o} as {width}"));
                }
                *width
            }
            Expr::Lookahead { width, .. } => *width,
        }
    }

    fn assign(&mut self, dst: &LValue, src: &Expr) {
        let (d, s) = (self.lvalue(dst), self.expr(src));
        if d != s {
            self.bad(format!("assignment of {s} bits to {d} bits"));
        }
    }

    fn extern_kind(&mut self, e: ExternId, ok: fn(&ExternKind) -> bool, want: &str) {
        match self.a.externs.get(e.index()) {
            Some(x) if ok(&x.kind) => {}
            Some(x) => self.bad(format!(
                "extern {} ({}) is used as {want} but is {:?}",
                e.0, x.name, x.kind
            )),
            None => self.bad(format!("extern id {} out of range", e.0)),
        }
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { dst, src } => self.assign(dst, src),
            Stmt::SetValid { header } | Stmt::SetInvalid { header } | Stmt::Emit { header } => {
                self.href(header);
            }
            Stmt::Extract { header } => {
                if self.href(header).is_some_and(|h| h.varbit_len.is_some()) {
                    self.bad("extract of a header with a varbit field needs a length".into());
                }
            }
            Stmt::ExtractVarbit { header, bits } => {
                if self.href(header).is_some_and(|h| h.varbit_len.is_none()) {
                    self.bad("extract with a length of a header without a varbit field".into());
                }
                if self.expr(bits) != 32 {
                    self.bad("varbit length is not 32 bits".into());
                }
            }
            Stmt::CopyHeader { dst, src } => {
                let d = self.href(dst).map(|h| h.type_name.clone());
                let s = self.href(src).map(|h| h.type_name.clone());
                if d != s {
                    self.bad("header copy between different types".into());
                }
            }
            Stmt::PushFront { stack, .. } | Stmt::PopFront { stack, .. } => {
                if self.a.stacks.get(stack.index()).is_none() {
                    self.bad("stack out of range".into());
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if self.expr(cond) != 1 {
                    self.bad("if condition is not 1 bit".into());
                }
                self.stmts_at("then", then);
                self.stmts_at("otherwise", otherwise);
            }
            Stmt::Switch {
                selector,
                cases,
                default,
            } => {
                let w = self.expr(selector);
                for (k, c) in cases.iter().enumerate() {
                    self.segs.push(format!("cases/{k}"));
                    if c.values.iter().any(|v| w < 128 && *v >> w != 0) {
                        self.bad("switch value wider than selector".into());
                    }
                    self.stmts_at("body", &c.body);
                    self.segs.pop();
                }
                self.stmts_at("default", default);
            }
            Stmt::ApplyTable { table } => {
                if self.a.tables.get(table.index()).is_none() {
                    self.bad("table out of range".into());
                }
            }
            Stmt::CallAction { action } => {
                if self.a.actions.get(action.index()).is_none() {
                    self.bad("action out of range".into());
                }
            }
            Stmt::Inlined { body, .. } => self.stmts_at("body", body),
            Stmt::Return | Stmt::Exit => {}
            Stmt::Loop {
                cond,
                body,
                updates,
            } => {
                if self.expr(cond) != 1 {
                    self.bad("loop condition is not 1 bit".into());
                }
                self.loops += 1;
                self.stmts_at("body", body);
                self.loops -= 1;
                // Updates run outside the body: no break/continue there.
                let saved = std::mem::take(&mut self.loops);
                self.stmts_at("updates", updates);
                self.loops = saved;
            }
            Stmt::Break | Stmt::Continue => {
                if self.loops == 0 {
                    self.bad("break/continue outside a loop body".into());
                }
            }
            Stmt::Advance { bits } => {
                self.expr(bits);
            }
            Stmt::Verify { cond, error } => {
                if self.expr(cond) != 1 {
                    self.bad("verify condition is not 1 bit".into());
                }
                if *error as usize >= self.a.errors.len() {
                    self.bad("verify error out of range".into());
                }
            }
            Stmt::Prim(p) => self.prim(p),
        }
    }

    fn prim(&mut self, p: &Prim) {
        use Prim::*;
        match p {
            MarkToDrop => {}
            RegisterRead {
                register,
                dst,
                index,
            } => {
                self.extern_kind(
                    *register,
                    |k| matches!(k, ExternKind::Register { .. }),
                    "a register",
                );
                let w = self.lvalue(dst);
                if let Some(ExternKind::Register { width, .. }) =
                    self.a.externs.get(register.index()).map(|e| &e.kind)
                {
                    if *width != w {
                        self.bad("register read into a slot of another width".into());
                    }
                }
                self.expr(index);
            }
            RegisterWrite {
                register,
                index,
                value,
            } => {
                self.extern_kind(
                    *register,
                    |k| matches!(k, ExternKind::Register { .. }),
                    "a register",
                );
                self.expr(index);
                let w = self.expr(value);
                if let Some(ExternKind::Register { width, .. }) =
                    self.a.externs.get(register.index()).map(|e| &e.kind)
                {
                    if *width != w {
                        self.bad("register write of another width".into());
                    }
                }
            }
            Count { counter, index } => {
                self.extern_kind(
                    *counter,
                    |k| matches!(k, ExternKind::Counter { .. }),
                    "a counter",
                );
                self.expr(index);
            }
            ExecuteMeter { meter, index, dst } => {
                self.extern_kind(*meter, |k| matches!(k, ExternKind::Meter { .. }), "a meter");
                self.expr(index);
                self.lvalue(dst);
            }
            ReadDirectMeter { meter, dst } => {
                self.extern_kind(
                    *meter,
                    |k| matches!(k, ExternKind::DirectMeter { .. }),
                    "a direct meter",
                );
                self.lvalue(dst);
            }
            CountDirect { counter } => self.extern_kind(
                *counter,
                |k| matches!(k, ExternKind::DirectCounter { .. }),
                "a direct counter",
            ),
            Hash {
                dst,
                base,
                data,
                max,
                ..
            } => {
                self.lvalue(dst);
                self.expr(base);
                self.expr(max);
                for d in data {
                    self.data_item(d);
                }
            }
            VerifyChecksum {
                cond,
                data,
                checksum,
                ..
            } => {
                self.expr(cond);
                self.expr(checksum);
                for d in data {
                    self.data_item(d);
                }
            }
            UpdateChecksum {
                cond, data, dst, ..
            } => {
                self.expr(cond);
                self.lvalue(dst);
                for d in data {
                    self.data_item(d);
                }
            }
            Random { dst, lo, hi } => {
                let w = self.lvalue(dst);
                if self.expr(lo) != w || self.expr(hi) != w {
                    self.bad("random bounds width".into());
                }
            }
            Digest { receiver, data, .. } => {
                self.expr(receiver);
                for (_, d) in data {
                    self.expr(d);
                }
            }
            LogMsg { args, .. } => {
                for d in args {
                    self.expr(d);
                }
            }
            Clone {
                session, preserve, ..
            } => {
                self.expr(session);
                for f in preserve {
                    self.field(*f);
                }
            }
            Resubmit { preserve } | Recirculate { preserve } => {
                for f in preserve {
                    self.field(*f);
                }
            }
            Truncate { length } => {
                self.expr(length);
            }
            Assert { cond } | Assume { cond } => {
                if self.expr(cond) != 1 {
                    self.bad("assert condition is not 1 bit".into());
                }
            }
            CacheLookup { cache, dst } => {
                self.extern_kind(
                    *cache,
                    |k| matches!(k, ExternKind::PropertyCache),
                    "a Property Cache",
                );
                if self.lvalue(dst) != 1 {
                    self.bad("lookup result is not 1 bit".into());
                }
            }
            CacheInsert { cache } => self.extern_kind(
                *cache,
                |k| matches!(k, ExternKind::PropertyCache),
                "a Property Cache",
            ),
            IdxFilterSet { idx } => self.want(idx, 64, "RIG idx"),
            IdxFilterTest { idx, dst } | PendingContains { idx, dst } => {
                self.want(idx, 64, "RIG idx");
                if self.lvalue(dst) != 1 {
                    self.bad("RIG test result is not 1 bit".into());
                }
            }
            PendingInsert { idx, req_id } => {
                self.want(idx, 64, "RIG idx");
                if self.lvalue(req_id) != 32 {
                    self.bad("request id destination is not 32 bits".into());
                }
            }
            PendingComplete {
                tid,
                req_id,
                idx,
                prop_len,
                dst,
            } => {
                self.want(tid, 16, "tid");
                self.want(req_id, 32, "req_id");
                self.want(idx, 64, "RIG idx");
                self.want(prop_len, 32, "prop_len");
                if self.lvalue(dst) != 1 {
                    self.bad("PendingComplete result is not 1 bit".into());
                }
            }
            HostRead { idx, prop_len, dst } => {
                self.want(idx, 64, "RIG idx");
                self.want(prop_len, 32, "prop_len");
                if self.lvalue(dst) != 1 {
                    self.bad("HostRead result is not 1 bit".into());
                }
            }
            HostWrite { tid, req_id, idx } => {
                self.want(tid, 16, "tid");
                self.want(req_id, 32, "req_id");
                self.want(idx, 64, "RIG idx");
            }
            ChecksumClear { checksum } => self.extern_kind(
                *checksum,
                |k| {
                    matches!(
                        k,
                        ExternKind::Checksum { .. } | ExternKind::InternetChecksum
                    )
                },
                "a checksum",
            ),
            ChecksumUpdate {
                checksum,
                data,
                subtract,
            } => {
                let internet = matches!(
                    self.a.externs.get(checksum.index()).map(|e| &e.kind),
                    Some(ExternKind::InternetChecksum)
                );
                self.extern_kind(
                    *checksum,
                    |k| {
                        matches!(
                            k,
                            ExternKind::Checksum { .. } | ExternKind::InternetChecksum
                        )
                    },
                    "a checksum",
                );
                if *subtract && !internet {
                    self.bad("subtract on a checksum that is not an InternetChecksum".into());
                }
                let mut bits = 0u32;
                for d in data {
                    bits += u32::from(self.data_item(d));
                }
                if internet && bits % 16 != 0 {
                    self.bad(format!(
                        "InternetChecksum data of {bits} bits (not a multiple of 16)"
                    ));
                }
            }
            ChecksumGet {
                checksum,
                dst,
                state,
            } => {
                let kind = self.a.externs.get(checksum.index()).map(|e| e.kind.clone());
                self.extern_kind(
                    *checksum,
                    |k| {
                        matches!(
                            k,
                            ExternKind::Checksum { .. } | ExternKind::InternetChecksum
                        )
                    },
                    "a checksum",
                );
                let w = self.lvalue(dst);
                match kind {
                    Some(ExternKind::Checksum { width, .. }) => {
                        if *state {
                            self.bad(
                                "get_state on a checksum that is not an InternetChecksum".into(),
                            );
                        }
                        if width != w {
                            self.bad("checksum result of another width".into());
                        }
                    }
                    Some(ExternKind::InternetChecksum) if w != 16 => {
                        self.bad("InternetChecksum result is not 16 bits".into());
                    }
                    _ => {}
                }
            }
            ChecksumSetState { checksum, value } => {
                self.extern_kind(
                    *checksum,
                    |k| matches!(k, ExternKind::InternetChecksum),
                    "an InternetChecksum",
                );
                self.want(value, 16, "set_state");
            }
            Spin { op, args, dst } => {
                self.op_call(op.name(), op.operands(), op.result(), args, dst.as_ref())
            }
            Coll { op, args, dst } => {
                self.op_call(op.name(), op.operands(), op.result(), args, dst.as_ref())
            }
        }
    }

    /// An operand of a fixed width.
    /// A call of a fixed-signature extern operation (sPIN, collective):
    /// operand count and widths, and the result's width.
    fn op_call(
        &mut self,
        name: &str,
        want: &[u16],
        result: Option<u16>,
        args: &[Expr],
        dst: Option<&LValue>,
    ) {
        if args.len() != want.len() {
            self.bad(format!(
                "{name} takes {} operands, {} given",
                want.len(),
                args.len()
            ));
        }
        for (e, w) in args.iter().zip(want) {
            self.want(e, *w, name);
        }
        match (result, dst) {
            (Some(w), Some(d)) => {
                if self.lvalue(d) != w {
                    self.bad(format!("{name} result is not {w} bits"));
                }
            }
            (None, None) | (Some(_), None) => {}
            (None, Some(_)) => self.bad(format!("{name} returns no value")),
        }
    }

    fn want(&mut self, e: &Expr, width: u16, what: &str) {
        if self.expr(e) != width {
            self.bad(format!("{what} operand is not {width} bits"));
        }
    }
}
