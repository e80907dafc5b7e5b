//! Controls, and the NetSparse blocks: the middle pipe's per-packet and
//! per-PR parts around `Deconcatenate`/`Concatenate`, the NIC paths, and
//! the slots of `pr`, `md` and the RIG metadata.

use netsparse_externs::artifact::{self as a, FieldId};

use crate::ast::Span;
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, Arg, Builtin, Callee, Handle, StmtKind, Type};

use super::*;

impl Lower<'_> {
    // ----- controls --------------------------------------------------------------------

    pub(super) fn control_body(&mut self, idx: usize, c: Handle<ir::Control>) -> Vec<a::Stmt> {
        let ctl = &self.m.controls[c];
        let mut body = self.block(idx, &ctl.local_inits);
        body.extend(self.block(idx, &ctl.apply.stmts));
        body
    }

    /// The middle pipe: its [`a::PrPath`] and the Property Cache it uses.
    pub(super) fn middle(
        &mut self,
        idx: usize,
        c: Handle<ir::Control>,
        span: Span,
    ) -> Option<a::MiddlePipe> {
        self.middle_name = self.insts[idx].path.clone();
        let path = self.pr_path(idx, c, span, None)?;
        Some(a::MiddlePipe {
            path,
            cache: self.cache,
        })
    }

    /// One path control of the NIC package: its [`a::PrPath`] and the RIG
    /// metadata slots.
    pub(super) fn nic_path(
        &mut self,
        idx: usize,
        c: Handle<ir::Control>,
        span: Span,
        side: NicSide,
    ) -> Option<a::NicPath> {
        let path = self.pr_path(idx, c, span, Some(side))?;
        let rig = self.rig_slots(idx, c, span)?;
        Some(a::NicPath { path, rig })
    }

    /// Lower a control with the per-PR shape (`side` None: a middle pipe;
    /// otherwise a NIC path): the statements before `Deconcatenate` run
    /// once per packet, those between it and `Concatenate` once per PR.
    /// host_to_net has no `Deconcatenate`: everything up to its final
    /// `Concatenate` runs once per idx.
    fn pr_path(
        &mut self,
        idx: usize,
        c: Handle<ir::Control>,
        span: Span,
        side: Option<NicSide>,
    ) -> Option<a::PrPath> {
        let ctl = &self.m.controls[c];
        let stmts = &ctl.apply.stmts;
        let pos = |op: Builtin| {
            stmts.iter().position(|s| {
                matches!(&s.kind, StmtKind::Call(call) if matches!(&call.callee, Callee::Builtin { op: o, .. } if *o == op))
            })
        };
        let (di, ci) = (pos(Builtin::Deconcatenate), pos(Builtin::Concatenate));
        let code = if side.is_some() {
            codes::NIC_STRUCTURE
        } else {
            codes::NS_STRUCTURE
        };
        let (di, ci) = match (side, di, ci) {
            (None, Some(d), Some(c)) if d < c => (Some(d), c),
            (None, _, _) => {
                self.err(
                    code,
                    "the middle control needs Deconcatenate and Concatenate",
                    span,
                );
                return None;
            }
            (Some(_), _, None) => {
                self.err(code, "a NIC path control needs a final Concatenate", span);
                return None;
            }
            (Some(NicSide::HostToNet), _, Some(c)) => (None, c),
            (Some(NicSide::NetToHost), Some(d), Some(c)) if d < c => (Some(d), c),
            (Some(NicSide::NetToHost), _, Some(_)) => {
                self.err(
                    code,
                    "net_to_host needs Deconcatenate before Concatenate",
                    span,
                );
                return None;
            }
        };
        let StmtKind::Call(ccall) = &stmts[ci].kind else {
            return None;
        };
        let Some(di) = di else {
            // host_to_net: one per-idx part, up to Concatenate.
            self.region = Region::PerPr;
            let mut per_pr = self.block(idx, &ctl.local_inits);
            per_pr.extend(self.block(idx, &stmts[..ci]));
            let (pr, pr_meta) = self.pr_slots(idx, ccall)?;
            self.region = Region::Outside;
            return Some(a::PrPath {
                name: self.insts[idx].path.clone(),
                per_packet: Vec::new(),
                per_pr,
                pr,
                pr_meta,
            });
        };
        self.region = Region::PerPacket;
        let mut per_packet = self.block(idx, &ctl.local_inits);
        per_packet.extend(self.block(idx, &stmts[..di]));
        let StmtKind::Call(dcall) = &stmts[di].kind else {
            return None;
        };
        let (pr, pr_meta) = self.pr_slots(idx, dcall)?;
        let again = self.pr_slots(idx, ccall)?;
        if again.0 != pr || again.1 != pr_meta {
            let d = Diagnostic::error(
                code,
                "Concatenate must be given the PR and metadata that Deconcatenate filled",
                ccall.span,
            )
            .with_secondary(dcall.span, "Deconcatenate is given these");
            self.diags.push(d);
            return None;
        }
        self.region = Region::PerPr;
        let per_pr = self.block(idx, &stmts[di + 1..ci]);
        self.region = Region::Outside;
        Some(a::PrPath {
            name: self.insts[idx].path.clone(),
            per_packet,
            per_pr,
            pr,
            pr_meta,
        })
    }

    /// The slots of a NIC path control's `ns_rig_md_t` parameter.
    pub(super) fn rig_slots(
        &mut self,
        idx: usize,
        c: Handle<ir::Control>,
        span: Span,
    ) -> Option<a::RigSlots> {
        let params = self.m.controls[c].params.clone();
        let found = params.iter().find_map(|v| {
            let ty = &self.m.vars[*v].ty;
            match ty {
                Type::Struct(s) if self.m.structs[*s].name == "ns_rig_md_t" => {
                    Some((*v, ty.clone()))
                }
                _ => None,
            }
        });
        let slots = found.and_then(|(v, ty)| {
            let p = self.var_place(idx, v);
            let f = |n: &str| self.struct_field(&ty, &p, n);
            Some(a::RigSlots {
                node: f("node")?,
                unit: f("unit")?,
                command: f("command")?,
                outcome: f("outcome")?,
            })
        });
        if slots.is_none() {
            self.err(
                codes::NOT_EXPRESSIBLE,
                "the NIC path control has no `ns_rig_md_t` parameter with the fields of <netsparse.p4>",
                span,
            );
        }
        slots
    }

    /// The slots of the `ns_pr_h` and `ns_pr_md_t` arguments of Deconcatenate/Concatenate.
    pub(super) fn pr_slots(
        &mut self,
        idx: usize,
        call: &ir::Call,
    ) -> Option<(a::PrSlots, a::PrMetaSlots)> {
        let (Some(pa), Some(ma)) = (call.args.first(), call.args.get(1)) else {
            return None;
        };
        let arg_expr = |x: &Arg| match x {
            Arg::In(e) | Arg::Out(e, _) => Some(e.clone()),
            Arg::Skip(_) => None,
        };
        let (pe, me) = (arg_expr(pa)?, arg_expr(ma)?);
        let mut pre = Vec::new();
        let pp = self.place(idx, &pe, &mut pre)?;
        let mp = self.place(idx, &me, &mut pre)?;
        let (LPlace::Static(Place::Header(h)), LPlace::Static(mplace)) = (pp, mp) else {
            self.inexpressible(
                "Deconcatenate/Concatenate on a run-time stack element",
                call.span,
            );
            return None;
        };
        let hf = |me2: &Self, n: &str| -> Option<FieldId> {
            let Type::Header(s) = &pe.ty else { return None };
            let i = me2.m.structs[*s].fields.iter().position(|f| f.name == n)?;
            let i = me2.art_field(*s, i);
            Some(me2.headers[h.index()].fields.get(i)?.field)
        };
        let pr = (
            hf(self, "src"),
            hf(self, "tid"),
            hf(self, "idx"),
            hf(self, "req_id"),
        );
        let mf = |n: &str| self.struct_field(&me.ty, &mplace, n);
        let meta = (
            mf("pr_type"),
            mf("dst"),
            mf("prop_len"),
            mf("ingress_port"),
            mf("egress_port"),
            mf("drop"),
        );
        match (pr, meta) {
            (
                (Some(src), Some(tid), Some(pidx), Some(req_id)),
                (
                    Some(pr_type),
                    Some(dst),
                    Some(prop_len),
                    Some(ingress_port),
                    Some(egress_port),
                    Some(drop),
                ),
            ) => Some((
                a::PrSlots {
                    src,
                    tid,
                    idx: pidx,
                    req_id,
                },
                a::PrMetaSlots {
                    pr_type,
                    dst,
                    prop_len,
                    ingress_port,
                    egress_port,
                    drop,
                },
            )),
            _ => {
                self.err(
                    codes::NOT_EXPRESSIBLE,
                    "ns_pr_h / ns_pr_md_t do not have the fields of <netsparse.p4>",
                    call.span,
                );
                None
            }
        }
    }
}
