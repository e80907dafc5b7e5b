//! Primitives and extern calls: the v1model primitives (v1model programs
//! only), stateful externs, hashes and checksums, and the target-specific
//! primitives (Property Cache, RIG externs) handed to the target's hook.

use netsparse_externs::artifact::{Expr, ExternKind, LValue, Prim};

use crate::code::*;
use crate::error::LoadError;

use super::cx::*;

/// A PSA `Checksum` or `InternetChecksum`.
fn is_checksum(k: &ExternKind) -> bool {
    matches!(
        k,
        ExternKind::Checksum { .. } | ExternKind::InternetChecksum
    )
}

impl Cx<'_> {
    pub(super) fn prim(&mut self, p: &Prim) -> Result<P, LoadError> {
        if self.target && matches!(p, Prim::MarkToDrop | Prim::VerifyChecksum { .. }) {
            return Err(self.unsupported(
                "v1model standard-metadata primitives (mark_to_drop, verify_checksum) on this target",
            ));
        }
        Ok(match p {
            Prim::MarkToDrop => P::MarkToDrop,
            Prim::RegisterRead {
                register,
                dst,
                index,
            } => {
                let reg = self.extern_of(*register, "register", |k| {
                    matches!(k, ExternKind::Register { .. })
                })?;
                let (dst, w) = self.lvalue(dst)?;
                if let ExternKind::Register { width, .. } = self.a.externs[reg as usize].kind {
                    if width != w {
                        return Err(self.invalid(format!(
                            "register read of {width}-bit cells into a {w}-bit destination"
                        )));
                    }
                }
                P::RegRead {
                    reg,
                    dst,
                    index: self.index(index)?,
                }
            }
            Prim::RegisterWrite {
                register,
                index,
                value,
            } => {
                let reg = self.extern_of(*register, "register", |k| {
                    matches!(k, ExternKind::Register { .. })
                })?;
                let v = self.expr(value)?;
                if let ExternKind::Register { width, .. } = self.a.externs[reg as usize].kind {
                    if width != v.width {
                        return Err(self.invalid(format!(
                            "register write of a {}-bit value into {width}-bit cells",
                            v.width
                        )));
                    }
                }
                P::RegWrite {
                    reg,
                    index: self.index(index)?,
                    value: v.vx,
                }
            }
            Prim::Count { counter, index } => P::Count {
                counter: self.extern_of(*counter, "counter", |k| {
                    matches!(k, ExternKind::Counter { .. })
                })?,
                index: self.index(index)?,
            },
            Prim::ExecuteMeter { meter, index, dst } => P::Meter {
                meter: self
                    .extern_of(*meter, "meter", |k| matches!(k, ExternKind::Meter { .. }))?,
                index: self.index(index)?,
                dst: self.lvalue(dst)?.0,
            },
            Prim::ReadDirectMeter { meter, dst } => P::ReadDirectMeter {
                meter: self.extern_of(*meter, "direct_meter", |k| {
                    matches!(k, ExternKind::DirectMeter { .. })
                })?,
                dst: self.lvalue(dst)?.0,
            },
            Prim::CountDirect { counter } => {
                self.extern_of(*counter, "direct_counter", |k| {
                    matches!(k, ExternKind::DirectCounter { .. })
                })?;
                P::CountDirect
            }
            Prim::Hash {
                dst,
                algo,
                base,
                data,
                max,
            } => P::Hash {
                dst: self.lvalue(dst)?.0,
                algo: *algo,
                base: self.expr(base)?.vx,
                data: self.data(data)?,
                max: self.expr(max)?.vx,
            },
            Prim::VerifyChecksum {
                cond,
                data,
                checksum,
                algo,
                with_payload,
            } => {
                let c = self.expr(checksum)?;
                P::VerifyChecksum {
                    cond: self.cond(cond, "verify_checksum condition")?,
                    data: self.data(data)?,
                    checksum: c.vx,
                    checksum_width: c.width,
                    algo: *algo,
                    with_payload: *with_payload,
                }
            }
            Prim::UpdateChecksum {
                cond,
                data,
                dst,
                algo,
                with_payload,
            } => P::UpdateChecksum {
                cond: self.cond(cond, "update_checksum condition")?,
                data: self.data(data)?,
                dst: self.lvalue(dst)?.0,
                algo: *algo,
                with_payload: *with_payload,
            },
            Prim::Random { dst, lo, hi } => P::Random {
                dst: self.lvalue(dst)?.0,
                lo: self.expr(lo)?.vx,
                hi: self.expr(hi)?.vx,
            },
            Prim::Digest {
                receiver,
                name,
                data,
            } => P::Digest {
                receiver: self.expr(receiver)?.vx,
                name: name.clone(),
                data: data
                    .iter()
                    .map(|(n, e)| Ok((n.clone(), self.expr(e)?.vx)))
                    .collect::<Result<_, LoadError>>()?,
            },
            Prim::LogMsg { format, args } => {
                let parts: Box<[String]> = format.split("{}").map(str::to_owned).collect();
                P::LogMsg {
                    parts,
                    args: args
                        .iter()
                        .map(|e| Ok(self.expr(e)?.vx))
                        .collect::<Result<_, LoadError>>()?,
                }
            }
            Prim::Clone {
                kind,
                session,
                preserve,
            } => P::Clone {
                kind: *kind,
                session: self.expr(session)?.vx,
                list: self.list(preserve)?,
            },
            Prim::Resubmit { preserve } => P::Resubmit {
                list: self.list(preserve)?,
            },
            Prim::Recirculate { preserve } => P::Recirculate {
                list: self.list(preserve)?,
            },
            Prim::Truncate { length } => P::Truncate {
                length: self.expr(length)?.vx,
            },
            Prim::Assert { cond } => P::Assert {
                cond: self.cond(cond, "assert condition")?,
                assume: false,
            },
            Prim::Assume { cond } => P::Assert {
                cond: self.cond(cond, "assume condition")?,
                assume: true,
            },
            Prim::ChecksumClear { checksum } => P::ChecksumClear {
                ext: self.extern_of(*checksum, "checksum", is_checksum)?,
            },
            Prim::ChecksumUpdate {
                checksum,
                data,
                subtract,
            } => {
                let ext = self.extern_of(*checksum, "checksum", is_checksum)?;
                if *subtract
                    && !matches!(
                        self.a.externs[ext as usize].kind,
                        ExternKind::InternetChecksum
                    )
                {
                    return Err(
                        self.invalid("subtract on a checksum that is not an InternetChecksum")
                    );
                }
                P::ChecksumUpdate {
                    ext,
                    data: self.data(data)?,
                    subtract: *subtract,
                }
            }
            Prim::ChecksumGet {
                checksum,
                dst,
                state,
            } => P::ChecksumGet {
                ext: self.extern_of(*checksum, "checksum", is_checksum)?,
                dst: self.lvalue(dst)?.0,
                state: *state,
            },
            Prim::ChecksumSetState { checksum, value } => P::ChecksumSetState {
                ext: self.extern_of(*checksum, "InternetChecksum", |k| {
                    matches!(k, ExternKind::InternetChecksum)
                })?,
                value: self.index(value)?,
            },
            Prim::CacheLookup { .. } | Prim::CacheInsert { .. } if !self.target => {
                return Err(self.unsupported(
                    "Property Cache Lookup/Insert (NetSparse middle pipes) in a v1model program",
                ))
            }
            Prim::IdxFilterTest { .. }
            | Prim::IdxFilterSet { .. }
            | Prim::PendingContains { .. }
            | Prim::PendingInsert { .. }
            | Prim::PendingComplete { .. }
            | Prim::HostRead { .. }
            | Prim::HostWrite { .. }
            | Prim::Spin { .. }
                if !self.target =>
            {
                return Err(self.unsupported(
                    "RIG or sPIN externs (a NetSparse or sPIN SmartNIC) in a v1model program",
                ))
            }
            target => return self.target_prim(target),
        })
    }

    /// A primitive left to the target: its operands and destination.
    pub(super) fn target_prim(&mut self, p: &Prim) -> Result<P, LoadError> {
        let (args, dst): (Vec<&Expr>, Option<&LValue>) = match p {
            Prim::CacheLookup { dst, .. } => (vec![], Some(dst)),
            Prim::CacheInsert { .. } => (vec![], None),
            Prim::IdxFilterTest { idx, dst } | Prim::PendingContains { idx, dst } => {
                (vec![idx], Some(dst))
            }
            Prim::IdxFilterSet { idx } => (vec![idx], None),
            Prim::PendingInsert { idx, req_id } => (vec![idx], Some(req_id)),
            Prim::PendingComplete {
                tid,
                req_id,
                idx,
                prop_len,
                dst,
            } => (vec![tid, req_id, idx, prop_len], Some(dst)),
            Prim::HostRead { idx, prop_len, dst } => (vec![idx, prop_len], Some(dst)),
            Prim::HostWrite { tid, req_id, idx } => (vec![tid, req_id, idx], None),
            Prim::Spin { args, dst, .. } | Prim::Coll { args, dst, .. } => {
                (args.iter().collect(), dst.as_ref())
            }
            _ => return Err(self.invalid("a v1model primitive compiled as a target primitive")),
        };
        let mut vx = Vec::with_capacity(args.len());
        for e in args {
            vx.push(self.expr(e)?.vx);
        }
        let dst = match dst {
            Some(d) => Some(self.lvalue(d)?.0),
            None => None,
        };
        let prim = u32::try_from(self.target_prims.len()).unwrap_or(u32::MAX);
        self.target_prims.push(p.clone());
        Ok(P::Target(Box::new(TargetP {
            prim,
            args: vx.into_boxed_slice(),
            dst,
        })))
    }
}
