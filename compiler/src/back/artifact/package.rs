//! The main package: the architecture's blocks, standard and NetSparse
//! metadata, instantiation of controls, parsers and externs per instance,
//! and direct resources.

use std::collections::HashMap;

use netsparse_externs::artifact::{
    self as a, Arch, ControlId, ExternId, FieldId, FieldKind, ParserId, TableId,
};

use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, BlockRef, ExternInstKind, Handle, InstanceKind, Type};

use super::*;

impl Lower<'_> {
    // ----- package --------------------------------------------------------------------

    pub(super) fn package(&mut self, main: &ir::MainPackage) -> Option<a::Package> {
        // Shared storage first: headers, user metadata, standard metadata.
        for s in &main.shared {
            let p = self.alloc(&s.name, &s.ty, FieldKind::Metadata);
            self.shared.push(p);
        }
        let shared_of = |key: &str, pipe: usize| -> Option<usize> {
            main.shared
                .iter()
                .position(|s| s.key == key && s.pipe == pipe)
        };
        let user_key = match self.arch {
            Arch::V1Model => shared_of("M", 0),
            Arch::NetSparseSwitch => shared_of("IM", 0),
            Arch::NetSparseNic | Arch::SpinNic | Arch::Psa => None,
        };
        if let Some(k) = user_key {
            self.user_metadata = Some((main.shared[k].ty.clone(), self.shared[k].clone()));
        }
        let mut parser_ids: HashMap<String, ParserId> = HashMap::new();
        let mut control_ids: HashMap<String, ControlId> = HashMap::new();
        let mut middle: Option<a::MiddlePipe> = None;
        let mut nic_paths: (Option<a::NicPath>, Option<a::NicPath>) = (None, None);
        for arg in &main.args {
            let side = match (self.arch, arg.param.as_str()) {
                (Arch::NetSparseNic, "host_to_net") => Some(NicSide::HostToNet),
                (Arch::NetSparseNic, "net_to_host") => Some(NicSide::NetToHost),
                _ => None,
            };
            let region = match side {
                Some(NicSide::HostToNet) => Region::PerPr,
                Some(NicSide::NetToHost) => Region::PerPacket,
                None if arg.param == "middle" => Region::PerPacket,
                None => Region::Outside,
            };
            self.nic_side = side;
            let inst = self.top_inst(arg, region);
            if let (Some(side), BlockRef::Control(c)) = (side, arg.block) {
                let path = self.nic_path(inst, c, arg.span, side);
                match side {
                    NicSide::HostToNet => nic_paths.0 = path,
                    NicSide::NetToHost => nic_paths.1 = path,
                }
                self.nic_side = None;
                continue;
            }
            self.nic_side = None;
            match arg.block {
                BlockRef::Parser(p) => {
                    if let Some(parser) = self.parser(inst, p) {
                        parser_ids.insert(arg.param.clone(), ParserId(u32_of(self.parsers.len())));
                        self.parsers.push(parser);
                    }
                }
                BlockRef::Control(c) if arg.param == "middle" => {
                    middle = self.middle(inst, c, arg.span);
                }
                BlockRef::Control(c) => {
                    let body = self.control_body(inst, c);
                    control_ids.insert(arg.param.clone(), ControlId(u32_of(self.controls.len())));
                    self.controls.push(a::Control {
                        name: arg.instance_name.clone(),
                        body,
                    });
                }
            }
        }
        self.check_direct_resources();
        if !self.diags.is_empty() {
            return None;
        }
        let pid = |n: &str| parser_ids.get(n).copied();
        let cid = |n: &str| control_ids.get(n).copied();
        match self.arch {
            Arch::V1Model => {
                let sm = shared_of("standard_metadata_t", 0)
                    .and_then(|k| self.std_metadata(&main.shared[k].ty, &self.shared[k].clone()));
                let Some(standard_metadata) = sm else {
                    self.err(
                        codes::NOT_EXPRESSIBLE,
                        "`standard_metadata_t` does not have the fields of v1model's standard metadata",
                        main.span,
                    );
                    return None;
                };
                let user_metadata = self.user_leaves();
                Some(a::Package::V1Switch(a::V1Switch {
                    parser: pid("p")?,
                    verify_checksum: cid("vr")?,
                    ingress: cid("ig")?,
                    egress: cid("eg")?,
                    compute_checksum: cid("ck")?,
                    deparser: cid("dep")?,
                    standard_metadata,
                    user_metadata,
                }))
            }
            Arch::NetSparseSwitch => {
                let ig_md = shared_of("ns_switch_md_t", 0)
                    .and_then(|k| self.ns_metadata(&main.shared[k].ty, &self.shared[k].clone()));
                let eg_md = shared_of("ns_switch_md_t", 2)
                    .and_then(|k| self.ns_metadata(&main.shared[k].ty, &self.shared[k].clone()));
                let (Some(ingress_metadata), Some(egress_metadata)) = (ig_md, eg_md) else {
                    self.err(
                        codes::NOT_EXPRESSIBLE,
                        "`ns_switch_md_t` does not have the fields of <netsparse.p4>",
                        main.span,
                    );
                    return None;
                };
                let leaves_of = |key: &str, pipe: usize| -> Vec<FieldId> {
                    let mut out = Vec::new();
                    if let Some(k) = shared_of(key, pipe) {
                        let p = self.shared[k].clone();
                        self.leaves(&p, &mut out);
                    }
                    out
                };
                let ingress_user_metadata = leaves_of("IM", 0);
                let egress_user_metadata = leaves_of("EM", 2);
                Some(a::Package::NetSparseSwitch(a::NetSparseSwitch {
                    ingress_parser: pid("ingress_parser")?,
                    ingress: cid("ingress")?,
                    ingress_deparser: cid("ingress_deparser")?,
                    middle: middle?,
                    egress_parser: pid("egress_parser")?,
                    egress: cid("egress")?,
                    egress_deparser: cid("egress_deparser")?,
                    ingress_metadata,
                    egress_metadata,
                    ingress_user_metadata,
                    egress_user_metadata,
                }))
            }
            Arch::NetSparseNic => {
                let (Some(host_to_net), Some(net_to_host)) = nic_paths else {
                    self.err(
                        codes::NIC_STRUCTURE,
                        "the NIC package needs host_to_net and net_to_host controls",
                        main.span,
                    );
                    return None;
                };
                Some(a::Package::NetSparseNic(a::NetSparseNic {
                    host_to_net,
                    net_to_host,
                }))
            }
            Arch::Psa => {
                let psa = self.psa_package(main, &pid, &cid);
                if psa.is_none() {
                    self.err(
                        codes::NOT_EXPRESSIBLE,
                        "the PSA metadata structs do not have the fields of <psa.p4>",
                        main.span,
                    );
                }
                psa.map(a::Package::Psa)
            }
            Arch::SpinNic => {
                let spin = self.spin_package(main, &cid);
                if spin.is_none() {
                    self.err(
                        codes::NOT_EXPRESSIBLE,
                        "the SpinNic handlers do not take the <spin.p4> types (spin_msg_t, spin_pkt_t, spin_md_t)",
                        main.span,
                    );
                }
                spin.map(a::Package::SpinNic)
            }
        }
    }

    /// The `SpinNic` package: the three handler controls and the slots of
    /// the types they share.
    fn spin_package(
        &self,
        main: &ir::MainPackage,
        cid: &dyn Fn(&str) -> Option<ControlId>,
    ) -> Option<a::SpinNic> {
        let shared = |key: &str| -> Option<(Type, Place)> {
            let k = main.shared.iter().position(|s| s.key == key)?;
            Some((main.shared[k].ty.clone(), self.shared[k].clone()))
        };
        let (mt, mp) = shared("spin_msg_t")?;
        let (kt, kp) = shared("spin_pkt_t")?;
        let (dt, dp) = shared("spin_md_t")?;
        let m = |n: &str| self.struct_field(&mt, &mp, n);
        let k = |n: &str| self.struct_field(&kt, &kp, n);
        let d = |n: &str| self.struct_field(&dt, &dp, n);
        let mut state = Vec::new();
        if let Some((_, sp)) = shared("S") {
            self.leaves(&sp, &mut state);
        }
        Some(a::SpinNic {
            header_handler: cid("header_handler")?,
            payload_handler: cid("payload_handler")?,
            completion_handler: cid("completion_handler")?,
            msg: a::SpinMsgSlots {
                src: m("src")?,
                msg_id: m("msg_id")?,
                match_bits: m("match_bits")?,
                length: m("length")?,
                user: m("user")?,
            },
            pkt: a::SpinPktSlots {
                offset: k("offset")?,
                length: k("length")?,
                seq: k("seq")?,
            },
            md: a::SpinMdSlots {
                rc: d("rc")?,
                node: d("node")?,
                hpu: d("hpu")?,
                dropped_bytes: d("dropped_bytes")?,
                flow_control: d("flow_control")?,
                timed_out: d("timed_out")?,
            },
            state,
        })
    }

    pub(super) fn user_leaves(&self) -> Vec<FieldId> {
        let mut out = Vec::new();
        if let Some((_, p)) = &self.user_metadata {
            self.leaves(p, &mut out);
        }
        out
    }

    /// The slot of field `name` of a struct place of type `ty`.
    pub(super) fn struct_field(&self, ty: &Type, p: &Place, name: &str) -> Option<FieldId> {
        let (Type::Struct(s), Place::Struct(ps)) = (ty, p) else {
            return None;
        };
        let i = self.m.structs[*s]
            .fields
            .iter()
            .position(|f| f.name == name)?;
        match ps.get(i)? {
            Place::Scalar(f) => Some(*f),
            _ => None,
        }
    }

    pub(super) fn std_metadata(&self, ty: &Type, p: &Place) -> Option<a::StandardMetadata> {
        let f = |n: &str| self.struct_field(ty, p, n);
        Some(a::StandardMetadata {
            ingress_port: f("ingress_port")?,
            egress_spec: f("egress_spec")?,
            egress_port: f("egress_port")?,
            instance_type: f("instance_type")?,
            packet_length: f("packet_length")?,
            enq_timestamp: f("enq_timestamp")?,
            enq_qdepth: f("enq_qdepth")?,
            deq_timedelta: f("deq_timedelta")?,
            deq_qdepth: f("deq_qdepth")?,
            ingress_global_timestamp: f("ingress_global_timestamp")?,
            egress_global_timestamp: f("egress_global_timestamp")?,
            mcast_grp: f("mcast_grp")?,
            egress_rid: f("egress_rid")?,
            checksum_error: f("checksum_error")?,
            parser_error: f("parser_error")?,
            priority: f("priority")?,
        })
    }

    pub(super) fn ns_metadata(&self, ty: &Type, p: &Place) -> Option<a::NsSwitchMetadata> {
        let f = |n: &str| self.struct_field(ty, p, n);
        Some(a::NsSwitchMetadata {
            ingress_port: f("ingress_port")?,
            egress_spec: f("egress_spec")?,
            egress_port: f("egress_port")?,
            drop: f("drop")?,
            packet_length: f("packet_length")?,
            parser_error: f("parser_error")?,
        })
    }

    pub(super) fn top_inst(&mut self, arg: &ir::PackageArg, region: Region) -> usize {
        let idx = self.insts.len();
        self.insts
            .push(Inst::new(arg.instance_name.clone(), region));
        let params = match arg.block {
            BlockRef::Parser(p) => self.m.parsers[p].params.clone(),
            BlockRef::Control(c) => self.m.controls[c].params.clone(),
        };
        for (v, b) in params.iter().zip(&arg.bindings) {
            let place = match b {
                Some(k) => self.shared[*k].clone(),
                None => Place::Packet,
            };
            self.insts[idx].vars.insert(*v, place);
        }
        if let BlockRef::Control(c) = arg.block {
            self.populate(idx, c);
        } else if let BlockRef::Parser(p) = arg.block {
            for i in self.m.parsers[p].instances.clone() {
                self.instance(idx, i);
            }
        }
        idx
    }

    /// Create a control instance's externs, actions and tables.
    pub(super) fn populate(&mut self, idx: usize, c: Handle<ir::Control>) {
        let ctl = &self.m.controls[c];
        let saved = self.region;
        self.region = match self.insts[idx].region {
            Region::PerPr => Region::PerPr,
            _ => Region::Outside,
        };
        for i in ctl.instances.clone() {
            self.instance(idx, i);
        }
        for act in ctl.actions.clone() {
            let id = self.action(idx, act);
            self.insts[idx].actions.insert(act, id);
        }
        for t in ctl.tables.clone() {
            if let Some(id) = self.table(idx, t) {
                self.insts[idx].tables.insert(t, id);
            }
        }
        self.region = saved;
    }

    pub(super) fn instance(&mut self, idx: usize, i: Handle<ir::Instance>) -> Option<InstRef> {
        if let Some(r) = self.insts[idx].instances.get(&i) {
            return Some(r.clone());
        }
        let inst = &self.m.instances[i];
        let name = join(&self.insts[idx].path, &inst.name);
        let r = match &inst.kind {
            InstanceKind::Extern { kind, .. } => {
                let kind = match kind {
                    ExternInstKind::Register {
                        width,
                        size,
                        initial,
                    } => a::ExternKind::Register {
                        width: *width,
                        size: *size,
                        initial: *initial,
                    },
                    ExternInstKind::Counter { size, unit } => a::ExternKind::Counter {
                        size: *size,
                        unit: *unit,
                    },
                    ExternInstKind::Meter { size, unit } => a::ExternKind::Meter {
                        size: *size,
                        unit: *unit,
                    },
                    // Attached to their table when it is lowered.
                    ExternInstKind::DirectCounter { unit } => a::ExternKind::DirectCounter {
                        unit: *unit,
                        table: TableId(u32::MAX),
                    },
                    ExternInstKind::DirectMeter { unit } => a::ExternKind::DirectMeter {
                        unit: *unit,
                        table: TableId(u32::MAX),
                    },
                    ExternInstKind::Checksum { algo, width } => a::ExternKind::Checksum {
                        algo: *algo,
                        width: *width,
                    },
                    ExternInstKind::InternetChecksum => a::ExternKind::InternetChecksum,
                    // Stateless: their calls carry what they need (see `psa_externs`).
                    ExternInstKind::Hash { .. }
                    | ExternInstKind::Random { .. }
                    | ExternInstKind::Digest => return None,
                };
                let id = ExternId(u32_of(self.externs.len()));
                self.externs.push(a::ExternInstance { name, kind });
                self.extern_spans.push(inst.span);
                InstRef::Extern(id)
            }
            InstanceKind::Control(c) => {
                let c = *c;
                let region = if self.m.controls[c].per_pr {
                    Region::PerPr
                } else {
                    self.region
                };
                let sub = self.insts.len();
                self.insts.push(Inst::new(name, region));
                self.insts[idx].instances.insert(i, InstRef::Control(sub));
                self.populate(sub, c);
                return Some(InstRef::Control(sub));
            }
            InstanceKind::Parser(pp) => {
                // Its states are inlined where it is applied (see `parser`).
                let pp = *pp;
                let sub = self.insts.len();
                self.insts.push(Inst::new(name, self.region));
                self.insts[idx].instances.insert(i, InstRef::Control(sub));
                for j in self.m.parsers[pp].instances.clone() {
                    self.instance(sub, j);
                }
                return Some(InstRef::Control(sub));
            }
        };
        self.insts[idx].instances.insert(i, r.clone());
        Some(r)
    }

    /// The instance `i` as seen from instance `idx` (top-level instances live in 0).
    pub(super) fn lookup_instance(
        &mut self,
        idx: usize,
        i: Handle<ir::Instance>,
    ) -> Option<InstRef> {
        if let Some(r) = self.insts[idx].instances.get(&i) {
            return Some(r.clone());
        }
        self.instance(0, i)
    }

    pub(super) fn check_direct_resources(&mut self) {
        for (e, span) in self.externs.iter().zip(&self.extern_spans) {
            if let a::ExternKind::DirectCounter { table, .. }
            | a::ExternKind::DirectMeter { table, .. } = &e.kind
            {
                if table.0 == u32::MAX {
                    let d = Diagnostic::error(
                        codes::DIRECT_RESOURCE,
                        format!("`{}` is not attached to any table", e.name),
                        *span,
                    )
                    .with_hint(
                        "attach it with `counters = ...` / `meters = ...` in a table, or remove it",
                    );
                    self.diags.push(d);
                }
            }
        }
    }
}
