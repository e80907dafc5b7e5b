//! Builtins: header and stack operations, v1model primitives, stateful
//! externs, hashes and checksums, the NetSparse cache and RIG externs,
//! the sPIN externs, and emit.

use netsparse_externs::artifact::{self as a, HeaderRef};

use crate::ast::Span;
use crate::codes;
use crate::ir::{self, Builtin, ExprKind, Receiver, Type, Value};

use super::*;

impl Lower<'_> {
    /// The value of field `name` of a PR or metadata argument.
    pub(super) fn operand(
        &mut self,
        p: &(LPlace, Type),
        name: &str,
        span: Span,
    ) -> Option<a::Expr> {
        match self.field_of(p, name) {
            Some(lp) => self.read(lp, span),
            None => {
                self.inexpressible(&format!("a RIG extern argument without `{name}`"), span);
                None
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn builtin(
        &mut self,
        idx: usize,
        op: Builtin,
        receiver: Option<&Receiver>,
        type_args: &[Type],
        c: &ir::Call,
        ret: &Type,
        out: &mut Vec<a::Stmt>,
    ) -> Option<CallResult> {
        let span = c.span;
        let args = &c.args;
        let recv_place = |me: &mut Self, out: &mut Vec<a::Stmt>| -> Option<LPlace> {
            match receiver {
                Some(Receiver::Expr(e)) => me.place(idx, e, out),
                _ => None,
            }
        };
        let prim = |p: a::Prim| a::Stmt::Prim(p);
        match op {
            Builtin::Extract => {
                if let Some(ir::Arg::Skip(t)) = args.first() {
                    // `extract<H>(_)`: the header's bits are skipped.
                    let Type::Header(s) = t else {
                        self.inexpressible("`extract(_)` without a header type", span);
                        return None;
                    };
                    let bits: u128 = self.m.structs[*s]
                        .fields
                        .iter()
                        .filter_map(|f| self.m.field_bits(&f.ty))
                        .map(u128::from)
                        .sum();
                    out.push(a::Stmt::Advance {
                        bits: konst(bits, 32, false),
                    });
                    return Some(CallResult::Nothing);
                }
                let e = self.arg_ir(args.first())?.clone();
                let lp = self.place(idx, &e, out)?;
                let header = self.href(lp, span)?;
                out.push(a::Stmt::Extract { header });
                let others = self.union_siblings(idx, &e, out);
                out.extend(super::stmt::invalidate_all(&others));
            }
            Builtin::ExtractVarbit => {
                let e = self.arg_ir(args.first())?.clone();
                let lp = self.place(idx, &e, out)?;
                let header = self.href(lp, span)?;
                let bits = self.arg_expr(idx, args.get(1), out)?;
                out.push(a::Stmt::ExtractVarbit { header, bits });
                let others = self.union_siblings(idx, &e, out);
                out.extend(super::stmt::invalidate_all(&others));
            }
            Builtin::Lookahead => {
                let t = type_args.first().cloned().unwrap_or_else(|| ret.clone());
                if *ret == Type::Void {
                    // A lookahead whose value is discarded still rejects a
                    // packet too short for it: read its last bit.
                    let bits: u32 = match (&t, self.scalar_of(&t)) {
                        (_, Some((w, _))) => u32::from(w),
                        (Type::Header(s) | Type::Struct(s), None) => self.m.structs[*s]
                            .fields
                            .iter()
                            .filter_map(|f| self.m.field_bits(&f.ty))
                            .sum(),
                        _ => 0,
                    };
                    if bits > 0 {
                        let last = || a::Expr::Lookahead {
                            bit_offset: bits - 1,
                            width: 1,
                        };
                        out.push(a::Stmt::Verify {
                            cond: a::Expr::Binary {
                                op: a::BinaryOp::Eq,
                                width: 1,
                                signed: false,
                                lhs: Box::new(last()),
                                rhs: Box::new(last()),
                            },
                            error: 0,
                        });
                    }
                    return Some(CallResult::Nothing);
                }
                let Some((w, signed)) = self.scalar_of(&t) else {
                    // Header lookaheads are handled by `assign`.
                    self.inexpressible("`lookahead` of a header outside an assignment", span);
                    return None;
                };
                let mut e = a::Expr::Lookahead {
                    bit_offset: 0,
                    width: w,
                };
                if signed {
                    e = a::Expr::Cast {
                        arg: Box::new(e),
                        arg_width: w,
                        arg_signed: false,
                        width: w,
                        signed: true,
                    };
                }
                return Some(CallResult::Expr(e));
            }
            Builtin::Advance => {
                let bits = self.arg_expr(idx, args.first(), out)?;
                out.push(a::Stmt::Advance { bits });
            }
            Builtin::Emit => {
                let e = self.arg_ir(args.first())?.clone();
                if let ExprKind::List(items) = &e.kind {
                    // `emit({a, b})`: each element in order.
                    for it in items {
                        match self.place(idx, it, out)? {
                            LPlace::Static(p) => self.emit_place(&p, out),
                            LPlace::DynHeader(r) => out.push(a::Stmt::Emit { header: r }),
                            _ => self.inexpressible("this emit", span),
                        }
                    }
                    return Some(CallResult::Nothing);
                }
                let lp = self.place(idx, &e, out)?;
                match lp {
                    LPlace::Static(p) => self.emit_place(&p, out),
                    LPlace::DynHeader(r) => out.push(a::Stmt::Emit { header: r }),
                    _ => self.inexpressible("this emit", span),
                }
            }
            Builtin::Verify => {
                let cond = self.arg_expr(idx, args.first(), out)?;
                let err = self.const_u(self.arg_ir(args.get(1)), "the error of `verify`", span)?;
                out.push(a::Stmt::Verify {
                    cond,
                    error: u32::try_from(err).unwrap_or(0),
                });
            }
            Builtin::SetValid | Builtin::SetInvalid => {
                let lp = recv_place(self, out)?;
                let header = self.href(lp, span)?;
                out.push(if op == Builtin::SetValid {
                    a::Stmt::SetValid { header }
                } else {
                    a::Stmt::SetInvalid { header }
                });
                if op == Builtin::SetValid {
                    if let Some(Receiver::Expr(e)) = receiver {
                        let others = self.union_siblings(idx, e, out);
                        out.extend(super::stmt::invalidate_all(&others));
                    }
                }
            }
            Builtin::PushFront | Builtin::PopFront => {
                let LPlace::Static(Place::Stack(stack)) = recv_place(self, out)? else {
                    self.inexpressible("push/pop on this stack", span);
                    return None;
                };
                let count = self.const_u(self.arg_ir(args.first()), "the count", span)?;
                let count = u32::try_from(count).unwrap_or(0);
                out.push(if op == Builtin::PushFront {
                    a::Stmt::PushFront { stack, count }
                } else {
                    a::Stmt::PopFront { stack, count }
                });
            }
            Builtin::MarkToDrop => out.push(prim(a::Prim::MarkToDrop)),
            Builtin::Hash => {
                let dst = self.arg_lvalue(idx, args.first(), out, span)?;
                let algo = self.hash_algo(self.arg_ir(args.get(1)), span)?;
                let base = self.arg_expr(idx, args.get(2), out)?;
                let mut data = Vec::new();
                let de = self.arg_ir(args.get(3))?.clone();
                self.flatten(idx, &de, out, &mut data)?;
                let max = self.arg_expr(idx, args.get(4), out)?;
                out.push(prim(a::Prim::Hash {
                    dst,
                    algo,
                    base,
                    data,
                    max,
                }));
            }
            Builtin::VerifyChecksum(with_payload) | Builtin::UpdateChecksum(with_payload) => {
                let cond = self.arg_expr(idx, args.first(), out)?;
                let mut data = Vec::new();
                let de = self.arg_ir(args.get(1))?.clone();
                self.flatten(idx, &de, out, &mut data)?;
                let algo = self.hash_algo(self.arg_ir(args.get(3)), span)?;
                if matches!(op, Builtin::VerifyChecksum(_)) {
                    let checksum = self.arg_expr(idx, args.get(2), out)?;
                    out.push(prim(a::Prim::VerifyChecksum {
                        cond,
                        data,
                        checksum,
                        algo,
                        with_payload,
                    }));
                } else {
                    let dst = self.arg_lvalue(idx, args.get(2), out, span)?;
                    out.push(prim(a::Prim::UpdateChecksum {
                        cond,
                        data,
                        dst,
                        algo,
                        with_payload,
                    }));
                }
            }
            Builtin::Random => {
                let dst = self.arg_lvalue(idx, args.first(), out, span)?;
                let lo = self.arg_expr(idx, args.get(1), out)?;
                let hi = self.arg_expr(idx, args.get(2), out)?;
                out.push(prim(a::Prim::Random { dst, lo, hi }));
            }
            Builtin::Digest => {
                let receiver = self.arg_expr(idx, args.first(), out)?;
                let de = self.arg_ir(args.get(1))?.clone();
                let name = match &de.ty {
                    Type::Struct(s) | Type::Header(s) => self.m.structs[*s].name.clone(),
                    _ => "list".to_string(),
                };
                let mut data = Vec::new();
                self.named_leaves(idx, &de, "", out, &mut data)?;
                out.push(prim(a::Prim::Digest {
                    receiver,
                    name,
                    data,
                }));
            }
            Builtin::LogMsg => {
                let format = match self.arg_ir(args.first()).map(|e| &e.kind) {
                    Some(ExprKind::Const(Value::Str(s))) => s.clone(),
                    _ => {
                        self.err(
                            codes::NOT_CONSTANT,
                            "the format of `log_msg` must be a string literal",
                            span,
                        );
                        return None;
                    }
                };
                let mut vals = Vec::new();
                if let Some(de) = self.arg_ir(args.get(1)).cloned() {
                    self.flatten(idx, &de, out, &mut vals)?;
                }
                out.push(prim(a::Prim::LogMsg { format, args: vals }));
            }
            Builtin::Clone | Builtin::ClonePreserving => {
                let kind = match self
                    .const_member(self.arg_ir(args.first()), "the clone type", span)?
                    .as_str()
                {
                    "I2E" => a::CloneKind::I2E,
                    _ => a::CloneKind::E2E,
                };
                let session = self.arg_expr(idx, args.get(1), out)?;
                let preserve = if op == Builtin::ClonePreserving {
                    let i = self.const_u(self.arg_ir(args.get(2)), "the field list index", span)?;
                    self.field_list(i)
                } else {
                    Vec::new()
                };
                out.push(prim(a::Prim::Clone {
                    kind,
                    session,
                    preserve,
                }));
            }
            Builtin::Resubmit | Builtin::Recirculate => {
                let i = self.const_u(self.arg_ir(args.first()), "the field list index", span)?;
                let preserve = self.field_list(i);
                out.push(prim(if op == Builtin::Resubmit {
                    a::Prim::Resubmit { preserve }
                } else {
                    a::Prim::Recirculate { preserve }
                }));
            }
            Builtin::Truncate => {
                let length = self.arg_expr(idx, args.first(), out)?;
                out.push(prim(a::Prim::Truncate { length }));
            }
            Builtin::Assert | Builtin::Assume => {
                let cond = self.arg_expr(idx, args.first(), out)?;
                out.push(prim(if op == Builtin::Assert {
                    a::Prim::Assert { cond }
                } else {
                    a::Prim::Assume { cond }
                }));
            }
            Builtin::RegisterReadValue => {
                let register = self.extern_of(idx, receiver, span)?;
                let index = self.arg_expr(idx, args.first(), out)?;
                let t = self.temp(ret);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(a::Prim::RegisterRead {
                    register,
                    dst,
                    index,
                }));
                return Some(CallResult::Place(t));
            }
            Builtin::RegisterRead => {
                let register = self.extern_of(idx, receiver, span)?;
                let dst = self.arg_lvalue(idx, args.first(), out, span)?;
                let index = self.arg_expr(idx, args.get(1), out)?;
                out.push(prim(a::Prim::RegisterRead {
                    register,
                    dst,
                    index,
                }));
            }
            Builtin::RegisterWrite => {
                let register = self.extern_of(idx, receiver, span)?;
                let index = self.arg_expr(idx, args.first(), out)?;
                let value = self.arg_expr(idx, args.get(1), out)?;
                out.push(prim(a::Prim::RegisterWrite {
                    register,
                    index,
                    value,
                }));
            }
            Builtin::Count => {
                let counter = self.extern_of(idx, receiver, span)?;
                let index = self.arg_expr(idx, args.first(), out)?;
                out.push(prim(a::Prim::Count { counter, index }));
            }
            Builtin::CountDirect => {
                let counter = self.extern_of(idx, receiver, span)?;
                out.push(prim(a::Prim::CountDirect { counter }));
            }
            Builtin::ExecuteMeter => {
                let meter = self.extern_of(idx, receiver, span)?;
                let index = self.arg_expr(idx, args.first(), out)?;
                let dst = self.arg_lvalue(idx, args.get(1), out, span)?;
                out.push(prim(a::Prim::ExecuteMeter { meter, index, dst }));
            }
            Builtin::MeterExecute => {
                let meter = self.extern_of(idx, receiver, span)?;
                let index = self.arg_expr(idx, args.first(), out)?;
                let t = self.temp(ret);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(a::Prim::ExecuteMeter { meter, index, dst }));
                return Some(CallResult::Place(t));
            }
            Builtin::DirectMeterExecute => {
                let meter = self.extern_of(idx, receiver, span)?;
                let t = self.temp(ret);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(a::Prim::ReadDirectMeter { meter, dst }));
                return Some(CallResult::Place(t));
            }
            Builtin::ReadDirectMeter => {
                let meter = self.extern_of(idx, receiver, span)?;
                let dst = self.arg_lvalue(idx, args.first(), out, span)?;
                out.push(prim(a::Prim::ReadDirectMeter { meter, dst }));
            }
            Builtin::Lookup => {
                let cache = self.cache(span)?;
                let t = self.temp(&Type::Bool);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(a::Prim::CacheLookup { cache, dst }));
                return Some(CallResult::Place(t));
            }
            Builtin::Insert => {
                let cache = self.cache(span)?;
                out.push(prim(a::Prim::CacheInsert { cache }));
            }
            Builtin::IdxFilterTest | Builtin::PendingContains => {
                self.rig_context(op, span)?;
                let idx_e = self.arg_expr(idx, args.first(), out)?;
                let t = self.temp(&Type::Bool);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(if op == Builtin::IdxFilterTest {
                    a::Prim::IdxFilterTest { idx: idx_e, dst }
                } else {
                    a::Prim::PendingContains { idx: idx_e, dst }
                }));
                return Some(CallResult::Place(t));
            }
            Builtin::IdxFilterSet => {
                self.rig_context(op, span)?;
                let idx_e = self.arg_expr(idx, args.first(), out)?;
                out.push(prim(a::Prim::IdxFilterSet { idx: idx_e }));
            }
            Builtin::PendingInsert => {
                self.rig_context(op, span)?;
                let pr = self.arg_place(idx, args.first(), out, span)?;
                let idx_e = self.operand(&pr, "idx", span)?;
                let req_id = match self.field_of(&pr, "req_id") {
                    Some(lp) => self.lvalue(lp, span)?,
                    None => {
                        self.inexpressible("PendingInsert on a value without `req_id`", span);
                        return None;
                    }
                };
                out.push(prim(a::Prim::PendingInsert { idx: idx_e, req_id }));
            }
            Builtin::PendingComplete | Builtin::HostRead | Builtin::HostWrite => {
                self.rig_context(op, span)?;
                let pr = self.arg_place(idx, args.first(), out, span)?;
                let md = self.arg_place(idx, args.get(1), out, span)?;
                let idx_e = self.operand(&pr, "idx", span)?;
                if op == Builtin::HostRead {
                    let prop_len = self.operand(&md, "prop_len", span)?;
                    let t = self.temp(&Type::Bool);
                    let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                    out.push(prim(a::Prim::HostRead {
                        idx: idx_e,
                        prop_len,
                        dst,
                    }));
                    return Some(CallResult::Place(t));
                }
                let tid = self.operand(&pr, "tid", span)?;
                let req_id = self.operand(&pr, "req_id", span)?;
                if op == Builtin::HostWrite {
                    out.push(prim(a::Prim::HostWrite {
                        tid,
                        req_id,
                        idx: idx_e,
                    }));
                } else {
                    let prop_len = self.operand(&md, "prop_len", span)?;
                    let t = self.temp(&Type::Bool);
                    let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                    out.push(prim(a::Prim::PendingComplete {
                        tid,
                        req_id,
                        idx: idx_e,
                        prop_len,
                        dst,
                    }));
                    return Some(CallResult::Place(t));
                }
            }
            Builtin::HashGet
            | Builtin::ChecksumClear
            | Builtin::ChecksumAdd
            | Builtin::ChecksumSubtract
            | Builtin::ChecksumGet
            | Builtin::ChecksumGetState
            | Builtin::ChecksumSetState
            | Builtin::RandomRead
            | Builtin::DigestPack => {
                return self.psa_extern_call(idx, op, receiver, c, ret, out);
            }
            Builtin::Spin(op) => {
                return self.op_call(
                    idx,
                    args,
                    op.operands().len(),
                    op.result(),
                    span,
                    out,
                    |args, dst| a::Prim::Spin { op, args, dst },
                );
            }
            Builtin::Coll(op) => {
                self.coll_context(op.name(), span)?;
                return self.op_call(
                    idx,
                    args,
                    op.operands().len(),
                    op.result(),
                    span,
                    out,
                    |args, dst| a::Prim::Coll { op, args, dst },
                );
            }
            Builtin::Deconcatenate | Builtin::Concatenate => {
                // Handled by `middle`; anywhere else the checker has already complained.
                self.err(
                    codes::NS_STRUCTURE,
                    "Deconcatenate/Concatenate must be at the top level of the middle control",
                    span,
                );
                return None;
            }
        }
        Some(CallResult::Nothing)
    }

    /// A call of a fixed-signature extern operation (sPIN, collective):
    /// its `operands` arguments lowered in order, a temporary of `result`
    /// bits for its value, and the primitive `make` builds from them.
    #[allow(clippy::too_many_arguments)]
    fn op_call(
        &mut self,
        idx: usize,
        args: &[ir::Arg],
        operands: usize,
        result: Option<u16>,
        span: Span,
        out: &mut Vec<a::Stmt>,
        make: impl FnOnce(Vec<a::Expr>, Option<a::LValue>) -> a::Prim,
    ) -> Option<CallResult> {
        let mut vals = Vec::with_capacity(operands);
        for i in 0..operands {
            vals.push(self.arg_expr(idx, args.get(i), out)?);
        }
        let Some(w) = result else {
            out.push(a::Stmt::Prim(make(vals, None)));
            return Some(CallResult::Nothing);
        };
        let t = self.temp(&Type::Bit(w));
        let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
        out.push(a::Stmt::Prim(make(vals, Some(dst))));
        Some(CallResult::Place(t))
    }

    pub(super) fn emit_place(&self, p: &Place, out: &mut Vec<a::Stmt>) {
        match p {
            Place::Header(h) => out.push(a::Stmt::Emit {
                header: HeaderRef::Static { header: *h },
            }),
            Place::Stack(s) => {
                for h in &self.stacks[s.index()].elements {
                    out.push(a::Stmt::Emit {
                        header: HeaderRef::Static { header: *h },
                    });
                }
            }
            Place::Struct(ps) => {
                for q in ps {
                    self.emit_place(q, out);
                }
            }
            Place::Scalar(_) | Place::Wide(_) | Place::Packet => {}
        }
    }
}
