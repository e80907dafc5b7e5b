//! Calls of PSA's `Hash`, `Checksum`, `InternetChecksum`, `Random` and
//! `Digest` externs. The stateless ones have no artifact extern: a
//! `get_hash` is a [`a::Prim::Hash`] with the instance's algorithm, a
//! `Random.read()` a [`a::Prim::Random`] between the constructor's bounds,
//! a `Digest.pack` a [`a::Prim::Digest`] (receiver 0, named after the data's
//! type). The two checksums are artifact externs with the `Checksum*`
//! primitives.

use netsparse_externs::artifact as a;

use crate::ir::{self, Builtin, ExternInstKind, InstanceKind, Receiver, Type};

use super::*;

impl Lower<'_> {
    /// The kind of the PSA extern instance a method is called on.
    fn receiver_kind(&mut self, receiver: Option<&Receiver>, span: Span) -> Option<ExternInstKind> {
        if let Some(Receiver::Instance(i)) = receiver {
            if let InstanceKind::Extern { kind, .. } = &self.m.instances[*i].kind {
                return Some(kind.clone());
            }
        }
        self.inexpressible("a PSA extern that is not a declared instance", span);
        None
    }

    /// Lower a call of one of the PSA externs above (`op` is one of their builtins).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn psa_extern_call(
        &mut self,
        idx: usize,
        op: Builtin,
        receiver: Option<&Receiver>,
        c: &ir::Call,
        ret: &Type,
        out: &mut Vec<a::Stmt>,
    ) -> Option<CallResult> {
        let span = c.span;
        let args = &c.args;
        let prim = |p: a::Prim| a::Stmt::Prim(p);
        match op {
            Builtin::HashGet => {
                let Some(ExternInstKind::Hash { algo }) = self.receiver_kind(receiver, span) else {
                    return None;
                };
                // `get_hash(data)` or `get_hash(base, data, max)`; max 0 means no modulo.
                let (base, data_arg, max) = if args.len() == 3 {
                    let base = self.arg_expr(idx, args.first(), out)?;
                    let max = self.arg_expr(idx, args.get(2), out)?;
                    (base, args.get(1), max)
                } else {
                    (konst(0, 64, false), args.first(), konst(0, 64, false))
                };
                let de = self.arg_ir(data_arg)?.clone();
                let mut data = Vec::new();
                self.flatten(idx, &de, out, &mut data)?;
                let t = self.temp(ret);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(a::Prim::Hash {
                    dst,
                    algo,
                    base,
                    data,
                    max,
                }));
                Some(CallResult::Place(t))
            }
            Builtin::ChecksumClear => {
                let checksum = self.extern_of(idx, receiver, span)?;
                out.push(prim(a::Prim::ChecksumClear { checksum }));
                Some(CallResult::Nothing)
            }
            Builtin::ChecksumAdd | Builtin::ChecksumSubtract => {
                let checksum = self.extern_of(idx, receiver, span)?;
                let de = self.arg_ir(args.first())?.clone();
                let mut data = Vec::new();
                self.flatten(idx, &de, out, &mut data)?;
                out.push(prim(a::Prim::ChecksumUpdate {
                    checksum,
                    data,
                    subtract: op == Builtin::ChecksumSubtract,
                }));
                Some(CallResult::Nothing)
            }
            Builtin::ChecksumGet | Builtin::ChecksumGetState => {
                let checksum = self.extern_of(idx, receiver, span)?;
                let t = self.temp(ret);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(a::Prim::ChecksumGet {
                    checksum,
                    dst,
                    state: op == Builtin::ChecksumGetState,
                }));
                Some(CallResult::Place(t))
            }
            Builtin::ChecksumSetState => {
                let checksum = self.extern_of(idx, receiver, span)?;
                let value = self.arg_expr(idx, args.first(), out)?;
                out.push(prim(a::Prim::ChecksumSetState { checksum, value }));
                Some(CallResult::Nothing)
            }
            Builtin::RandomRead => {
                let Some(ExternInstKind::Random { min, max, width }) =
                    self.receiver_kind(receiver, span)
                else {
                    return None;
                };
                let t = self.temp(ret);
                let dst = self.lvalue(LPlace::Static(t.clone()), span)?;
                out.push(prim(a::Prim::Random {
                    dst,
                    lo: konst(min, width, false),
                    hi: konst(max, width, false),
                }));
                Some(CallResult::Place(t))
            }
            Builtin::DigestPack => {
                let de = self.arg_ir(args.first())?.clone();
                let name = match &de.ty {
                    Type::Struct(s) | Type::Header(s) => self.m.structs[*s].name.clone(),
                    _ => "value".to_string(),
                };
                let mut data = Vec::new();
                if self.m.scalar_width(&de.ty).is_some() {
                    data.push((String::new(), self.expr(idx, &de, out)?));
                } else {
                    self.named_leaves(idx, &de, "", out, &mut data)?;
                }
                out.push(prim(a::Prim::Digest {
                    receiver: konst(0, 32, false),
                    name,
                    data,
                }));
                Some(CallResult::Nothing)
            }
            _ => {
                self.inexpressible("this PSA extern call", span);
                None
            }
        }
    }
}
