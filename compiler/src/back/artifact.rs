//! IR → pipeline artifact.
//!
//! Instantiation and lowering in one walk from the main package: every
//! variable of every instance gets field slots (headers get bit offsets),
//! sub-controls, functions and copy-in/copy-out are inlined as explicit
//! statements, calls with results are hoisted into temporaries, tables get
//! their hidden `hit`/`action_run` slots, and extern calls become artifact
//! statements or `Prim`s. Anything the artifact cannot express is a
//! diagnostic ([`codes::NOT_EXPRESSIBLE`]), never a silently wrong artifact.

use std::collections::HashMap;

use netsparse_externs::artifact::{
    self as a, ActionId, Arch, Artifact, ControlId, ExternId, FieldId, FieldKind, HashAlgo,
    HeaderId, HeaderRef, LValue, Next, ParserId, StackId, TableId, ARTIFACT_FORMAT,
    ARTIFACT_VERSION,
};

use crate::ast::{BinOp, Direction, Span, UnOp};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{
    self, Arg, BlockRef, Builtin, Callee, ExprKind, ExternInstKind, Handle, InstanceKind, Module,
    Receiver, StmtKind, SwitchLabel, TableResultField, Target, Type, Value,
};

/// The artifact and what the graph pass needs besides it.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The artifact.
    pub artifact: Artifact,
    /// Source span of each artifact table (same order as `artifact.tables`).
    pub table_spans: Vec<Span>,
}

/// Lower a checked module to the pipeline artifact.
pub fn lower(m: &Module) -> Result<Lowered, Vec<Diagnostic>> {
    let Some(main) = &m.main else {
        return Err(vec![Diagnostic::error(
            codes::MAIN_PACKAGE,
            "the program has no `main` package instantiation",
            Span::default(),
        )]);
    };
    let mut l = Lower::new(m, main.arch);
    let package = l.package(main);
    if !l.diags.is_empty() {
        return Err(l.diags);
    }
    let Some(package) = package else {
        return Err(vec![Diagnostic::error(
            codes::NOT_EXPRESSIBLE,
            "the package could not be lowered",
            main.span,
        )]);
    };
    let artifact = Artifact {
        format: ARTIFACT_FORMAT.to_string(),
        version: ARTIFACT_VERSION,
        program: m.name.clone(),
        arch: main.arch,
        fields: l.fields,
        headers: l.headers,
        stacks: l.stacks,
        errors: m.errors.clone(),
        parsers: l.parsers,
        controls: l.controls,
        actions: l.actions,
        tables: l.tables,
        externs: l.externs,
        package,
    };
    Ok(Lowered {
        artifact,
        table_spans: l.table_spans,
    })
}

/// Storage of a value: a tree of slots shaped like its type.
#[derive(Clone, Debug)]
enum Place {
    Scalar(FieldId),
    Header(HeaderId),
    Stack(StackId),
    Struct(Vec<Place>),
    /// A packet (`packet_in` / `packet_out`): no storage.
    Packet,
}

/// Where an l-value (or place-like r-value) lives.
#[derive(Clone, Debug)]
enum LPlace {
    Static(Place),
    DynHeader(HeaderRef),
    DynField(HeaderRef, u32),
    Slice(FieldId, u16, u16),
}

/// What a call produced.
enum CallResult {
    Nothing,
    Place(Place),
    Table(TableId),
    Expr(a::Expr),
}

/// The NIC path being lowered (RIG externs are path-specific).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NicSide {
    HostToNet,
    NetToHost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Outside,
    PerPacket,
    PerPr,
}

#[derive(Clone, Debug)]
enum InstRef {
    Extern(ExternId),
    Control(usize),
}

/// One instance of a control (or the global pseudo-instance 0).
struct Inst {
    path: String,
    vars: HashMap<Handle<ir::Var>, Place>,
    tables: HashMap<Handle<ir::Table>, TableId>,
    actions: HashMap<Handle<ir::Action>, ActionId>,
    instances: HashMap<Handle<ir::Instance>, InstRef>,
    region: Region,
}

impl Inst {
    fn new(path: String, region: Region) -> Inst {
        Inst {
            path,
            vars: HashMap::new(),
            tables: HashMap::new(),
            actions: HashMap::new(),
            instances: HashMap::new(),
            region,
        }
    }
}

struct Lower<'m> {
    m: &'m Module,
    arch: Arch,
    fields: Vec<a::Field>,
    headers: Vec<a::Header>,
    stacks: Vec<a::HeaderStack>,
    parsers: Vec<a::Parser>,
    controls: Vec<a::Control>,
    actions: Vec<a::Action>,
    tables: Vec<a::Table>,
    externs: Vec<a::ExternInstance>,
    extern_spans: Vec<Span>,
    table_spans: Vec<Span>,
    diags: Vec<Diagnostic>,
    insts: Vec<Inst>,
    shared: Vec<Place>,
    temps: u32,
    region: Region,
    cache: Option<ExternId>,
    middle_name: String,
    user_metadata: Option<(Type, Place)>,
    ret_place: Option<Place>,
    /// Copy-outs of the inlined action calls being lowered, innermost first:
    /// an `exit` inside them performs these before leaving (p4c semantics).
    exit_copies: Vec<a::Stmt>,
    nic_side: Option<NicSide>,
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

impl<'m> Lower<'m> {
    fn new(m: &'m Module, arch: Arch) -> Lower<'m> {
        Lower {
            m,
            arch,
            fields: Vec::new(),
            headers: Vec::new(),
            stacks: Vec::new(),
            parsers: Vec::new(),
            controls: Vec::new(),
            actions: Vec::new(),
            tables: Vec::new(),
            externs: Vec::new(),
            extern_spans: Vec::new(),
            table_spans: Vec::new(),
            diags: Vec::new(),
            insts: vec![Inst::new(String::new(), Region::Outside)],
            shared: Vec::new(),
            temps: 0,
            region: Region::Outside,
            cache: None,
            middle_name: String::new(),
            user_metadata: None,
            ret_place: None,
            exit_copies: Vec::new(),
            nic_side: None,
        }
    }

    fn err(&mut self, code: &'static str, msg: impl Into<String>, span: Span) {
        self.diags.push(Diagnostic::error(code, msg, span));
    }

    fn inexpressible(&mut self, what: &str, span: Span) {
        let d = Diagnostic::error(
            codes::NOT_EXPRESSIBLE,
            format!("{what}: the pipeline artifact cannot express this"),
            span,
        )
        .with_hint("rewrite it with simpler expressions (e.g. through a temporary variable)");
        self.diags.push(d);
    }

    // ----- storage -------------------------------------------------------------------

    fn scalar_of(&self, ty: &Type) -> Option<(u16, bool)> {
        Some((self.m.scalar_width(ty)?, self.m.scalar_signed(ty)))
    }

    fn new_field(&mut self, name: String, width: u16, signed: bool, kind: FieldKind) -> FieldId {
        let id = FieldId(u32_of(self.fields.len()));
        self.fields.push(a::Field {
            name,
            width,
            signed,
            kind,
        });
        id
    }

    fn new_header(&mut self, name: String, s: Handle<ir::StructDef>) -> HeaderId {
        let hid = HeaderId(u32_of(self.headers.len()));
        let def = &self.m.structs[s];
        let mut fields = Vec::new();
        let mut offset = 0u32;
        let mut slots = Vec::new();
        for f in &def.fields {
            let (w, signed) = self.scalar_of(&f.ty).unwrap_or((1, false));
            slots.push((format!("{name}.{}", f.name), w, signed));
        }
        for (fname, w, signed) in slots {
            let fid = self.new_field(fname, w, signed, FieldKind::Header(hid));
            fields.push(a::HeaderField {
                field: fid,
                bit_offset: offset,
                width: w,
            });
            offset += u32::from(w);
        }
        self.headers.push(a::Header {
            name,
            type_name: def.name.clone(),
            fields,
            bit_width: offset,
        });
        hid
    }

    /// Allocate slots for a value of type `ty` named `name`.
    fn alloc(&mut self, name: &str, ty: &Type, kind: FieldKind) -> Place {
        match ty {
            Type::Header(s) => Place::Header(self.new_header(name.to_string(), *s)),
            Type::Struct(s) => {
                let fields = self.m.structs[*s].fields.clone();
                Place::Struct(
                    fields
                        .iter()
                        .map(|f| self.alloc(&format!("{name}.{}", f.name), &f.ty, kind))
                        .collect(),
                )
            }
            Type::Stack(s, n) => {
                let elements = (0..*n)
                    .map(|i| self.new_header(format!("{name}[{i}]"), *s))
                    .collect();
                let next_index = self.new_field(format!("{name}.$next"), 32, false, kind);
                let sid = StackId(u32_of(self.stacks.len()));
                self.stacks.push(a::HeaderStack {
                    name: name.to_string(),
                    elements,
                    next_index,
                });
                Place::Stack(sid)
            }
            Type::List(ts) => Place::Struct(
                ts.iter()
                    .enumerate()
                    .map(|(i, t)| self.alloc(&format!("{name}.{i}"), t, kind))
                    .collect(),
            ),
            Type::Extern(..) => Place::Packet,
            other => {
                let (w, signed) = self.scalar_of(other).unwrap_or((1, false));
                Place::Scalar(self.new_field(name.to_string(), w, signed, kind))
            }
        }
    }

    fn temp(&mut self, ty: &Type) -> Place {
        self.temps += 1;
        let name = format!("$t{}", self.temps);
        self.alloc(&name, ty, FieldKind::Local)
    }

    fn var_place(&mut self, inst: usize, v: Handle<ir::Var>) -> Place {
        if let Some(p) = self.insts[inst].vars.get(&v) {
            return p.clone();
        }
        if let Some(p) = self.insts[0].vars.get(&v) {
            return p.clone();
        }
        let var = &self.m.vars[v];
        let name = join(&self.insts[inst].path, &var.name);
        let ty = var.ty.clone();
        let p = self.alloc(&name, &ty, FieldKind::Local);
        self.insts[inst].vars.insert(v, p.clone());
        p
    }

    fn leaves(&self, p: &Place, out: &mut Vec<FieldId>) {
        match p {
            Place::Scalar(f) => out.push(*f),
            Place::Header(h) => out.extend(self.headers[h.index()].fields.iter().map(|f| f.field)),
            Place::Stack(s) => {
                for h in &self.stacks[s.index()].elements {
                    out.extend(self.headers[h.index()].fields.iter().map(|f| f.field));
                }
            }
            Place::Struct(ps) => {
                for q in ps {
                    self.leaves(q, out);
                }
            }
            Place::Packet => {}
        }
    }

    // ----- package --------------------------------------------------------------------

    fn package(&mut self, main: &ir::MainPackage) -> Option<a::Package> {
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
            Arch::NetSparseNic => None,
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
        }
    }

    fn user_leaves(&self) -> Vec<FieldId> {
        let mut out = Vec::new();
        if let Some((_, p)) = &self.user_metadata {
            self.leaves(p, &mut out);
        }
        out
    }

    /// The slot of field `name` of a struct place of type `ty`.
    fn struct_field(&self, ty: &Type, p: &Place, name: &str) -> Option<FieldId> {
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

    fn std_metadata(&self, ty: &Type, p: &Place) -> Option<a::StandardMetadata> {
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

    fn ns_metadata(&self, ty: &Type, p: &Place) -> Option<a::NsSwitchMetadata> {
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

    fn top_inst(&mut self, arg: &ir::PackageArg, region: Region) -> usize {
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
    fn populate(&mut self, idx: usize, c: Handle<ir::Control>) {
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

    fn instance(&mut self, idx: usize, i: Handle<ir::Instance>) -> Option<InstRef> {
        if let Some(r) = self.insts[idx].instances.get(&i) {
            return Some(r.clone());
        }
        let inst = &self.m.instances[i];
        let name = join(&self.insts[idx].path, &inst.name);
        let r = match &inst.kind {
            InstanceKind::Extern { kind, .. } => {
                let kind = match kind {
                    ExternInstKind::Register { width, size } => a::ExternKind::Register {
                        width: *width,
                        size: *size,
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
    fn lookup_instance(&mut self, idx: usize, i: Handle<ir::Instance>) -> Option<InstRef> {
        if let Some(r) = self.insts[idx].instances.get(&i) {
            return Some(r.clone());
        }
        self.instance(0, i)
    }

    fn check_direct_resources(&mut self) {
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

    // ----- actions and tables ------------------------------------------------------------

    fn action_name(&self, idx: usize, act: &ir::Action) -> String {
        match &act.cp_name {
            Some(n) if n.starts_with('.') => n[1..].to_string(),
            Some(n) if act.owner.is_some() => join(&self.insts[idx].path, n),
            Some(n) => n.clone(),
            None if act.owner.is_some() => join(&self.insts[idx].path, &act.name),
            None => act.name.clone(),
        }
    }

    /// Lower an action once per instance (top-level actions once, in instance 0).
    fn action(&mut self, idx: usize, h: Handle<ir::Action>) -> ActionId {
        let act = &self.m.actions[h];
        let idx = if act.owner.is_none() { 0 } else { idx };
        if let Some(id) = self.insts[idx].actions.get(&h) {
            return *id;
        }
        let name = self.action_name(idx, act);
        let mut params = Vec::new();
        for p in &act.params {
            let var = &self.m.vars[*p];
            let data = var.kind == ir::VarKind::Param(None);
            let kind = if data {
                FieldKind::ActionParam
            } else {
                FieldKind::Local
            };
            let place = self.alloc(&format!("{name}.{}", var.name), &var.ty, kind);
            if let (true, Place::Scalar(f)) = (data, &place) {
                params.push(a::ActionParam {
                    name: var.name.clone(),
                    field: *f,
                    width: self.fields[f.index()].width,
                });
            }
            self.insts[idx].vars.insert(*p, place);
        }
        // Reserve the id first: the body cannot call itself (P4 has no recursion).
        let id = ActionId(u32_of(self.actions.len()));
        self.actions.push(a::Action {
            name,
            params,
            body: Vec::new(),
        });
        self.insts[idx].actions.insert(h, id);
        let saved = self.region;
        if act.owner.is_none() {
            self.region = Region::Outside;
        }
        let body = self.block(idx, &act.body.stmts);
        self.region = saved;
        self.actions[id.index()].body = body;
        id
    }

    fn table(&mut self, idx: usize, h: Handle<ir::Table>) -> Option<TableId> {
        let t = &self.m.tables[h];
        let name = match &t.cp_name {
            Some(n) if n.starts_with('.') => n[1..].to_string(),
            Some(n) => join(&self.insts[idx].path, n),
            None => join(&self.insts[idx].path, &t.name),
        };
        let mut keys = Vec::new();
        for k in &t.keys {
            let mut pre = Vec::new();
            let e = self.expr(idx, &k.expr, &mut pre)?;
            if !pre.is_empty() {
                self.inexpressible("a table key with a call in it", k.span);
                return None;
            }
            keys.push(a::TableKey {
                name: k.name.clone(),
                expr: e,
                width: k.width,
                match_kind: k.match_kind,
            });
        }
        let mut actions = Vec::new();
        for ta in &t.actions {
            let base = self.action(idx, ta.action);
            let act = &self.m.actions[ta.action];
            let owner_idx = if act.owner.is_none() { 0 } else { idx };
            let cp = self.action_name(owner_idx, act);
            let id = if ta.bound.is_empty() {
                base
            } else {
                // A specialisation: copy the bound arguments in, run the action, copy out.
                let params: Vec<Handle<ir::Var>> = act
                    .params
                    .iter()
                    .copied()
                    .filter(|p| self.m.vars[*p].kind != ir::VarKind::Param(None))
                    .collect();
                let mut body = Vec::new();
                let mut outs = Vec::new();
                for (p, arg) in params.iter().zip(&ta.bound) {
                    let place = self.var_place(owner_idx, *p);
                    let ty = self.m.vars[*p].ty.clone();
                    self.copy_in(idx, &place, &ty, arg, &mut body, &mut outs)?;
                }
                body.push(a::Stmt::CallAction { action: base });
                self.copy_out(&outs, &mut body);
                let id = ActionId(u32_of(self.actions.len()));
                let data = self.actions[base.index()].params.clone();
                self.actions.push(a::Action {
                    name: format!("{cp}${}", self.actions.len()),
                    params: data,
                    body,
                });
                id
            };
            actions.push(a::TableAction {
                action: id,
                name: cp,
                default_only: ta.default_only,
                table_only: ta.table_only,
            });
        }
        let default_action = a::DefaultAction {
            action: actions.get(t.default_action)?.action,
            args: t.default_args.clone(),
            is_const: t.default_const,
        };
        let entries = t
            .entries
            .iter()
            .filter_map(|e| {
                Some(a::Entry {
                    keys: e.keys.clone(),
                    action: actions.get(e.action)?.action,
                    args: e.args.clone(),
                    priority: e.priority,
                })
            })
            .collect();
        let hit = self.new_field(format!("${name}.hit"), 1, false, FieldKind::Local);
        let action_run = self.new_field(format!("${name}.action_run"), 32, false, FieldKind::Local);
        let tid = TableId(u32_of(self.tables.len()));
        let ext = |i: Option<Handle<ir::Instance>>, me: &mut Self| -> Option<ExternId> {
            match me.lookup_instance(idx, i?)? {
                InstRef::Extern(e) => {
                    match &mut me.externs[e.index()].kind {
                        a::ExternKind::DirectCounter { table, .. }
                        | a::ExternKind::DirectMeter { table, .. } => *table = tid,
                        _ => {}
                    }
                    Some(e)
                }
                InstRef::Control(_) => None,
            }
        };
        let direct_counter = ext(t.direct_counter, self);
        let direct_meter = ext(t.direct_meter, self);
        self.tables.push(a::Table {
            name,
            keys,
            actions,
            default_action,
            entries,
            entries_const: t.entries_const,
            size: t.size,
            hit,
            action_run,
            direct_counter,
            direct_meter,
        });
        self.table_spans.push(t.span);
        Some(tid)
    }

    // ----- parsers ---------------------------------------------------------------------

    fn parser(&mut self, idx: usize, p: Handle<ir::Parser>) -> Option<a::Parser> {
        let mut states = Vec::new();
        let ends = (Next::Accept, Next::Reject);
        let start = self.parser_states(idx, p, &mut states, ends, String::new())?;
        Some(a::Parser {
            name: self.insts[idx].path.clone(),
            states,
            start,
        })
    }

    /// Lower the states of parser `p` (instance `idx`) into `states`, where
    /// `accept` and `reject` go to `ends` and state names get `prefix`. A
    /// state that applies a sub-parser is split there: the part before copies
    /// the arguments in and jumps to the sub-parser's (inlined) start; the
    /// sub-parser's accept goes to a continuation state that copies out and
    /// runs the rest, its reject to a state that copies out and rejects (so
    /// headers extracted before the reject are kept, as in a flat parser).
    /// Returns the entry state (`$init` when there are local initializers).
    fn parser_states(
        &mut self,
        idx: usize,
        p: Handle<ir::Parser>,
        states: &mut Vec<a::ParserState>,
        ends: (Next, Next),
        prefix: String,
    ) -> Option<a::StateId> {
        let (accept, reject) = ends;
        let pr = &self.m.parsers[p];
        let placeholder = |name: String| a::ParserState {
            name,
            body: Vec::new(),
            transition: a::Transition::Direct { next: Next::Reject },
        };
        // Reserve one id per source state first: transitions may go forward.
        let init = (!pr.local_inits.is_empty()).then(|| {
            states.push(placeholder(format!("{prefix}$init")));
            a::StateId(u32_of(states.len() - 1))
        });
        let base = states.len();
        for s in &pr.states {
            states.push(placeholder(format!("{prefix}{}", s.name)));
        }
        let target = |t: Target| match t {
            Target::Accept => accept,
            Target::Reject => reject,
            Target::State(i) => Next::State(a::StateId(u32_of(base + i))),
        };
        let entry = a::StateId(u32_of(base + pr.start));
        if let Some(id) = init {
            let body = self.block(idx, &pr.local_inits);
            states[id.index()].body = body;
            states[id.index()].transition = a::Transition::Direct {
                next: Next::State(entry),
            };
        }
        for (si, s) in pr.states.iter().enumerate() {
            let transition = match &s.transition {
                ir::Transition::Direct(t) => a::Transition::Direct { next: target(*t) },
                ir::Transition::Select { keys, cases } => {
                    let mut ks = Vec::new();
                    for k in keys {
                        let mut pre = Vec::new();
                        let e = self.expr(idx, k, &mut pre)?;
                        if !pre.is_empty() {
                            self.inexpressible("a select expression with a call in it", k.span);
                            return None;
                        }
                        ks.push(e);
                    }
                    let cases = cases
                        .iter()
                        .map(|(sets, t)| a::SelectCase {
                            keysets: sets
                                .iter()
                                .map(|k| match *k {
                                    ir::Keyset::Any => a::KeySet::Any,
                                    ir::Keyset::Value(value) => a::KeySet::Value { value },
                                    ir::Keyset::Mask(value, mask) => {
                                        a::KeySet::Mask { value, mask }
                                    }
                                    ir::Keyset::Range(lo, hi) => a::KeySet::Range { lo, hi },
                                })
                                .collect(),
                            next: target(*t),
                        })
                        .collect();
                    a::Transition::Select { keys: ks, cases }
                }
            };
            // Split the body at each sub-parser application.
            let mut cur = base + si;
            let mut pending: Vec<ir::Stmt> = Vec::new();
            let mut part = 0;
            for st in &s.body.stmts {
                let StmtKind::Call(call) = &st.kind else {
                    pending.push(st.clone());
                    continue;
                };
                let Callee::ApplyParser(i) = call.callee else {
                    pending.push(st.clone());
                    continue;
                };
                let Some(InstRef::Control(sub)) = self.lookup_instance(idx, i) else {
                    return None;
                };
                let InstanceKind::Parser(sp) = self.m.instances[i].kind else {
                    return None;
                };
                let mut body = self.block(idx, &pending);
                pending.clear();
                let mut outs = Vec::new();
                for (pv, arg) in self.m.parsers[sp].params.clone().iter().zip(&call.args) {
                    let ty = self.m.vars[*pv].ty.clone();
                    if matches!(ty, Type::Extern(..)) {
                        continue; // packet_in: the one packet being parsed
                    }
                    let place = self.var_place(sub, *pv);
                    self.copy_in(idx, &place, &ty, arg, &mut body, &mut outs)?;
                }
                part += 1;
                states.push(placeholder(format!("{prefix}{}$after{part}", s.name)));
                let cont = states.len() - 1;
                states.push(placeholder(format!("{prefix}{}$reject{part}", s.name)));
                let rej = states.len() - 1;
                let sub_prefix = format!("{prefix}{}.", self.m.instances[i].name);
                let sub_ends = (
                    Next::State(a::StateId(u32_of(cont))),
                    Next::State(a::StateId(u32_of(rej))),
                );
                let sub_entry = self.parser_states(sub, sp, states, sub_ends, sub_prefix)?;
                states[cur].body = body;
                states[cur].transition = a::Transition::Direct {
                    next: Next::State(sub_entry),
                };
                let mut copy_back = Vec::new();
                self.copy_out(&outs, &mut copy_back);
                states[rej].body = copy_back.clone();
                states[rej].transition = a::Transition::Direct { next: reject };
                states[cont].body = copy_back;
                cur = cont;
            }
            let rest = self.block(idx, &pending);
            states[cur].body.extend(rest);
            states[cur].transition = transition;
        }
        // Local initializers run first, each time the parser is entered.
        Some(init.unwrap_or(entry))
    }

    // ----- controls --------------------------------------------------------------------

    fn control_body(&mut self, idx: usize, c: Handle<ir::Control>) -> Vec<a::Stmt> {
        let ctl = &self.m.controls[c];
        let mut body = self.block(idx, &ctl.local_inits);
        body.extend(self.block(idx, &ctl.apply.stmts));
        body
    }

    fn middle(&mut self, idx: usize, c: Handle<ir::Control>, span: Span) -> Option<a::MiddlePipe> {
        let ctl = &self.m.controls[c];
        self.middle_name = self.insts[idx].path.clone();
        let stmts = &ctl.apply.stmts;
        let pos = |op: Builtin| {
            stmts.iter().position(|s| {
                matches!(&s.kind, StmtKind::Call(call) if matches!(&call.callee, Callee::Builtin { op: o, .. } if *o == op))
            })
        };
        let (Some(di), Some(ci)) = (pos(Builtin::Deconcatenate), pos(Builtin::Concatenate)) else {
            self.err(
                codes::NS_STRUCTURE,
                "the middle control needs Deconcatenate and Concatenate",
                span,
            );
            return None;
        };
        self.region = Region::PerPacket;
        let mut per_packet = self.block(idx, &ctl.local_inits);
        per_packet.extend(self.block(idx, &stmts[..di]));
        let StmtKind::Call(dcall) = &stmts[di].kind else {
            return None;
        };
        let (pr, pr_meta) = self.pr_slots(idx, dcall)?;
        if let StmtKind::Call(ccall) = &stmts[ci].kind {
            let again = self.pr_slots(idx, ccall)?;
            if again.0 != pr || again.1 != pr_meta {
                let d = Diagnostic::error(
                    codes::NS_STRUCTURE,
                    "Concatenate must be given the PR and metadata that Deconcatenate filled",
                    ccall.span,
                )
                .with_secondary(dcall.span, "Deconcatenate is given these");
                self.diags.push(d);
                return None;
            }
        }
        self.region = Region::PerPr;
        let per_pr = self.block(idx, &stmts[di + 1..ci]);
        self.region = Region::Outside;
        Some(a::MiddlePipe {
            name: self.insts[idx].path.clone(),
            per_packet,
            per_pr,
            pr,
            pr_meta,
            cache: self.cache,
        })
    }

    /// Lower one path control of the NIC package: host_to_net is per-idx up
    /// to its final Concatenate; net_to_host is split like a middle pipe.
    fn nic_path(
        &mut self,
        idx: usize,
        c: Handle<ir::Control>,
        span: Span,
        side: NicSide,
    ) -> Option<a::NicPath> {
        let ctl = &self.m.controls[c];
        let stmts = &ctl.apply.stmts;
        let pos = |op: Builtin| {
            stmts.iter().position(|s| {
                matches!(&s.kind, StmtKind::Call(call) if matches!(&call.callee, Callee::Builtin { op: o, .. } if *o == op))
            })
        };
        let Some(ci) = pos(Builtin::Concatenate) else {
            self.err(
                codes::NIC_STRUCTURE,
                "a NIC path control needs a final Concatenate",
                span,
            );
            return None;
        };
        let StmtKind::Call(ccall) = &stmts[ci].kind else {
            return None;
        };
        let (per_packet, per_pr, pr, pr_meta) = match side {
            NicSide::HostToNet => {
                self.region = Region::PerPr;
                let mut per_pr = self.block(idx, &ctl.local_inits);
                per_pr.extend(self.block(idx, &stmts[..ci]));
                let (pr, pr_meta) = self.pr_slots(idx, ccall)?;
                (Vec::new(), per_pr, pr, pr_meta)
            }
            NicSide::NetToHost => {
                let Some(di) = pos(Builtin::Deconcatenate).filter(|d| *d < ci) else {
                    self.err(
                        codes::NIC_STRUCTURE,
                        "net_to_host needs Deconcatenate before Concatenate",
                        span,
                    );
                    return None;
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
                        codes::NIC_STRUCTURE,
                        "Concatenate must be given the PR and metadata that Deconcatenate filled",
                        ccall.span,
                    )
                    .with_secondary(dcall.span, "Deconcatenate is given these");
                    self.diags.push(d);
                    return None;
                }
                self.region = Region::PerPr;
                let per_pr = self.block(idx, &stmts[di + 1..ci]);
                (per_packet, per_pr, pr, pr_meta)
            }
        };
        self.region = Region::Outside;
        let rig = self.rig_slots(idx, c, span)?;
        Some(a::NicPath {
            name: self.insts[idx].path.clone(),
            per_packet,
            per_pr,
            pr,
            pr_meta,
            rig,
        })
    }

    /// The slots of a NIC path control's `ns_rig_md_t` parameter.
    fn rig_slots(&mut self, idx: usize, c: Handle<ir::Control>, span: Span) -> Option<a::RigSlots> {
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
    fn pr_slots(&mut self, idx: usize, call: &ir::Call) -> Option<(a::PrSlots, a::PrMetaSlots)> {
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

    // ----- statements --------------------------------------------------------------------

    fn block(&mut self, idx: usize, stmts: &[ir::Stmt]) -> Vec<a::Stmt> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(idx, s, &mut out);
        }
        out
    }

    fn stmt(&mut self, idx: usize, s: &ir::Stmt, out: &mut Vec<a::Stmt>) {
        match &s.kind {
            StmtKind::Assign(dst, src) => {
                let Some(lp) = self.place(idx, dst, out) else {
                    return;
                };
                self.assign(idx, lp, &dst.ty, src, out);
            }
            StmtKind::Call(c) => {
                self.call(idx, c, &Type::Void, out);
            }
            StmtKind::If(c, t, e) => {
                let Some(cond) = self.expr(idx, c, out) else {
                    return;
                };
                let then = self.block(idx, &t.stmts);
                let otherwise = self.block(idx, &e.stmts);
                out.push(a::Stmt::If {
                    cond,
                    then,
                    otherwise,
                });
            }
            StmtKind::Switch(sw) => self.switch(idx, sw, out),
            StmtKind::Block(b) => {
                let inner = self.block(idx, &b.stmts);
                out.extend(inner);
            }
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    if let Some(ret) = self.ret_place.clone() {
                        self.assign(idx, LPlace::Static(ret), &v.ty, v, out);
                    }
                }
                out.push(a::Stmt::Return);
            }
            StmtKind::Exit => {
                out.extend(self.exit_copies.iter().cloned());
                out.push(a::Stmt::Exit);
            }
            StmtKind::VarDecl(v, init) => {
                let p = self.var_place(idx, *v);
                let ty = self.m.vars[*v].ty.clone();
                match init {
                    Some(e) => self.assign(idx, LPlace::Static(p), &ty, e, out),
                    None => self.invalidate(&p, out),
                }
            }
        }
    }

    /// Headers in `p` become invalid (uninitialised header variables, `out` parameters).
    fn invalidate(&self, p: &Place, out: &mut Vec<a::Stmt>) {
        match p {
            Place::Header(h) => out.push(a::Stmt::SetInvalid {
                header: HeaderRef::Static { header: *h },
            }),
            Place::Struct(ps) => {
                for q in ps {
                    self.invalidate(q, out);
                }
            }
            Place::Stack(s) => {
                for h in &self.stacks[s.index()].elements {
                    out.push(a::Stmt::SetInvalid {
                        header: HeaderRef::Static { header: *h },
                    });
                }
                out.push(a::Stmt::Assign {
                    dst: LValue::Field {
                        field: self.stacks[s.index()].next_index,
                    },
                    src: konst(0, 32, false),
                });
            }
            Place::Scalar(_) | Place::Packet => {}
        }
    }

    fn switch(&mut self, idx: usize, sw: &ir::Switch, out: &mut Vec<a::Stmt>) {
        let (selector, table) = match (&sw.selector.kind, &sw.selector.ty) {
            (ExprKind::TableResult(call, TableResultField::ActionRun), Type::TableResult(t)) => {
                let ExprKind::Call(c) = &call.kind else {
                    return;
                };
                let Some(CallResult::Table(tid)) = self.call(idx, c, &call.ty, out) else {
                    return;
                };
                let field = self.tables[tid.index()].action_run;
                (a::Expr::Field { field }, Some((tid, *t)))
            }
            _ => match self.expr(idx, &sw.selector, out) {
                Some(e) => (e, None),
                None => return,
            },
        };
        let mut cases = Vec::new();
        for c in &sw.cases {
            let mut values = Vec::new();
            for l in &c.labels {
                match (l, table) {
                    (SwitchLabel::Value(v), _) => values.push(*v),
                    (SwitchLabel::Action(act), Some((tid, th))) => {
                        let pos = self.m.tables[th]
                            .actions
                            .iter()
                            .position(|ta| ta.action == *act);
                        if let Some(ta) = pos.and_then(|p| self.tables[tid.index()].actions.get(p))
                        {
                            values.push(u128::from(ta.action.0));
                        }
                    }
                    (SwitchLabel::Action(_), None) => {}
                }
            }
            let body = self.block(idx, &c.body.stmts);
            cases.push(a::SwitchCase { values, body });
        }
        let default = sw
            .default
            .as_ref()
            .map(|d| self.block(idx, &d.stmts))
            .unwrap_or_default();
        out.push(a::Stmt::Switch {
            selector,
            cases,
            default,
        });
    }

    // ----- places and values -------------------------------------------------------------

    fn href(&mut self, lp: LPlace, span: Span) -> Option<HeaderRef> {
        match lp {
            LPlace::Static(Place::Header(h)) => Some(HeaderRef::Static { header: h }),
            LPlace::DynHeader(r) => Some(r),
            _ => {
                self.inexpressible("expected a header here", span);
                None
            }
        }
    }

    fn lvalue(&mut self, lp: LPlace, span: Span) -> Option<LValue> {
        match lp {
            LPlace::Static(Place::Scalar(f)) => Some(LValue::Field { field: f }),
            LPlace::Slice(f, hi, lo) => Some(LValue::Slice { field: f, hi, lo }),
            LPlace::DynField(r, i) => Some(LValue::StackField {
                header: r,
                field_index: i,
            }),
            _ => {
                self.inexpressible("expected a scalar l-value here", span);
                None
            }
        }
    }

    fn read(&mut self, lp: LPlace, span: Span) -> Option<a::Expr> {
        match lp {
            LPlace::Static(Place::Scalar(f)) => Some(a::Expr::Field { field: f }),
            LPlace::Slice(f, hi, lo) => Some(a::Expr::Slice {
                arg: Box::new(a::Expr::Field { field: f }),
                hi,
                lo,
            }),
            LPlace::DynField(r, i) => Some(a::Expr::StackField {
                header: r,
                field_index: i,
            }),
            _ => {
                self.inexpressible("expected a scalar value here", span);
                None
            }
        }
    }

    fn is_place_expr(e: &ir::Expr) -> bool {
        match &e.kind {
            ExprKind::Var(_) => true,
            ExprKind::Field(b, _)
            | ExprKind::Index(b, _)
            | ExprKind::Next(b)
            | ExprKind::Last(b) => Self::is_place_expr(b),
            ExprKind::Slice(b, ..) => Self::is_place_expr(b),
            _ => false,
        }
    }

    /// Where a place-like expression lives; calls returning aggregates are
    /// evaluated into a temporary first.
    fn place(&mut self, idx: usize, e: &ir::Expr, pre: &mut Vec<a::Stmt>) -> Option<LPlace> {
        match &e.kind {
            ExprKind::Var(v) => Some(LPlace::Static(self.var_place(idx, *v))),
            ExprKind::Field(b, i) => {
                let i = *i;
                match self.place(idx, b, pre)? {
                    LPlace::Static(Place::Struct(ps)) => {
                        ps.get(i as usize).cloned().map(LPlace::Static)
                    }
                    LPlace::Static(Place::Header(h)) => {
                        let f = self.headers[h.index()].fields.get(i as usize)?.field;
                        Some(LPlace::Static(Place::Scalar(f)))
                    }
                    LPlace::DynHeader(r) => Some(LPlace::DynField(r, i)),
                    _ => {
                        self.inexpressible("this field access", e.span);
                        None
                    }
                }
            }
            ExprKind::Index(b, i) => {
                let LPlace::Static(Place::Stack(s)) = self.place(idx, b, pre)? else {
                    self.inexpressible("this stack index", e.span);
                    return None;
                };
                match &i.kind {
                    ExprKind::Const(Value::Bits(v)) => {
                        let h = *self.stacks[s.index()].elements.get(*v as usize)?;
                        Some(LPlace::Static(Place::Header(h)))
                    }
                    _ => {
                        let index = self.expr(idx, i, pre)?;
                        Some(LPlace::DynHeader(HeaderRef::Index {
                            stack: s,
                            index: Box::new(index),
                        }))
                    }
                }
            }
            ExprKind::Next(b) | ExprKind::Last(b) => {
                let LPlace::Static(Place::Stack(s)) = self.place(idx, b, pre)? else {
                    self.inexpressible("`next`/`last` of this stack", e.span);
                    return None;
                };
                Some(LPlace::DynHeader(if matches!(e.kind, ExprKind::Next(_)) {
                    HeaderRef::Next { stack: s }
                } else {
                    HeaderRef::Last { stack: s }
                }))
            }
            ExprKind::Slice(b, hi, lo) => match self.place(idx, b, pre)? {
                LPlace::Static(Place::Scalar(f)) => Some(LPlace::Slice(f, *hi, *lo)),
                LPlace::Slice(f, _, l2) => Some(LPlace::Slice(f, l2 + hi, l2 + lo)),
                _ => {
                    self.inexpressible("a slice of a field of a run-time stack element", e.span);
                    None
                }
            },
            ExprKind::Call(c) => match self.call(idx, c, &e.ty, pre)? {
                CallResult::Place(p) => Some(LPlace::Static(p)),
                CallResult::Expr(x) => {
                    let t = self.temp(&e.ty);
                    let lv = self.lvalue(LPlace::Static(t.clone()), e.span)?;
                    pre.push(a::Stmt::Assign { dst: lv, src: x });
                    Some(LPlace::Static(t))
                }
                _ => {
                    self.inexpressible("this call result", e.span);
                    None
                }
            },
            _ => {
                // A computed aggregate (an initializer): evaluate into a temporary.
                let t = self.temp(&e.ty);
                self.assign(idx, LPlace::Static(t.clone()), &e.ty, e, pre);
                Some(LPlace::Static(t))
            }
        }
    }

    /// `dst = src` for a value of type `ty`.
    fn assign(
        &mut self,
        idx: usize,
        dst: LPlace,
        ty: &Type,
        src: &ir::Expr,
        out: &mut Vec<a::Stmt>,
    ) {
        let span = src.span;
        if self.m.scalar_width(ty).is_some() {
            let Some(v) = self.expr(idx, src, out) else {
                return;
            };
            let Some(lv) = self.lvalue(dst, span) else {
                return;
            };
            out.push(a::Stmt::Assign { dst: lv, src: v });
            return;
        }
        match &src.kind {
            ExprKind::List(items) => match (ty, dst) {
                (Type::Header(s), dst) => {
                    let Some(href) = self.href(dst.clone(), span) else {
                        return;
                    };
                    out.push(a::Stmt::SetValid {
                        header: href.clone(),
                    });
                    let fields = self.m.structs[*s].fields.clone();
                    for (i, (f, it)) in fields.iter().zip(items).enumerate() {
                        let fdst = match &dst {
                            LPlace::Static(Place::Header(h)) => {
                                match self.headers[h.index()].fields.get(i) {
                                    Some(hf) => LPlace::Static(Place::Scalar(hf.field)),
                                    None => return,
                                }
                            }
                            _ => LPlace::DynField(href.clone(), u32_of(i)),
                        };
                        self.assign(idx, fdst, &f.ty, it, out);
                    }
                }
                (Type::Struct(s), LPlace::Static(Place::Struct(ps))) => {
                    let fields = self.m.structs[*s].fields.clone();
                    for ((f, it), p) in fields.iter().zip(items).zip(ps) {
                        self.assign(idx, LPlace::Static(p), &f.ty, it, out);
                    }
                }
                (Type::List(ts), LPlace::Static(Place::Struct(ps))) => {
                    for ((t, it), p) in ts.iter().zip(items).zip(ps) {
                        self.assign(idx, LPlace::Static(p), t, it, out);
                    }
                }
                _ => self.inexpressible("this initializer", span),
            },
            ExprKind::Call(c)
                if matches!(
                    &c.callee,
                    Callee::Builtin {
                        op: Builtin::Lookahead,
                        ..
                    }
                ) && matches!(ty, Type::Header(_)) =>
            {
                // `h = pkt.lookahead<h_t>()`: one lookahead per field.
                let Some(href) = self.href(dst.clone(), span) else {
                    return;
                };
                out.push(a::Stmt::SetValid {
                    header: href.clone(),
                });
                let Type::Header(s) = ty else { return };
                let mut offset = 0u32;
                for (i, f) in self.m.structs[*s].fields.iter().enumerate() {
                    let (w, signed) = self.scalar_of(&f.ty).unwrap_or((1, false));
                    let mut e = a::Expr::Lookahead {
                        bit_offset: offset,
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
                    offset += u32::from(w);
                    let lv = match &dst {
                        LPlace::Static(Place::Header(h)) => {
                            match self.headers[h.index()].fields.get(i) {
                                Some(hf) => LValue::Field { field: hf.field },
                                None => return,
                            }
                        }
                        _ => LValue::StackField {
                            header: href.clone(),
                            field_index: u32_of(i),
                        },
                    };
                    out.push(a::Stmt::Assign { dst: lv, src: e });
                }
            }
            _ => {
                let Some(sp) = self.place(idx, src, out) else {
                    return;
                };
                self.copy(dst, sp, ty, span, out);
            }
        }
    }

    /// Copy an aggregate (or scalar) from one place to another.
    fn copy(&mut self, dst: LPlace, src: LPlace, ty: &Type, span: Span, out: &mut Vec<a::Stmt>) {
        if self.m.scalar_width(ty).is_some() {
            let (Some(lv), Some(v)) = (self.lvalue(dst, span), self.read(src, span)) else {
                return;
            };
            out.push(a::Stmt::Assign { dst: lv, src: v });
            return;
        }
        match ty {
            Type::Header(_) => {
                let (Some(d), Some(s)) = (self.href(dst, span), self.href(src, span)) else {
                    return;
                };
                out.push(a::Stmt::CopyHeader { dst: d, src: s });
            }
            Type::Struct(s) => {
                let (LPlace::Static(Place::Struct(dp)), LPlace::Static(Place::Struct(sp))) =
                    (dst, src)
                else {
                    self.inexpressible("this struct copy", span);
                    return;
                };
                let fields = self.m.structs[*s].fields.clone();
                for ((f, d), s) in fields.iter().zip(dp).zip(sp) {
                    self.copy(LPlace::Static(d), LPlace::Static(s), &f.ty, span, out);
                }
            }
            Type::Stack(..) => {
                let (LPlace::Static(Place::Stack(d)), LPlace::Static(Place::Stack(s))) = (dst, src)
                else {
                    self.inexpressible("this stack copy", span);
                    return;
                };
                let (ds, ss) = (
                    self.stacks[d.index()].clone(),
                    self.stacks[s.index()].clone(),
                );
                for (dh, sh) in ds.elements.iter().zip(&ss.elements) {
                    out.push(a::Stmt::CopyHeader {
                        dst: HeaderRef::Static { header: *dh },
                        src: HeaderRef::Static { header: *sh },
                    });
                }
                out.push(a::Stmt::Assign {
                    dst: LValue::Field {
                        field: ds.next_index,
                    },
                    src: a::Expr::Field {
                        field: ss.next_index,
                    },
                });
            }
            Type::Extern(..) => {}
            _ => self.inexpressible("this copy", span),
        }
    }

    /// A scalar expression.
    fn expr(&mut self, idx: usize, e: &ir::Expr, pre: &mut Vec<a::Stmt>) -> Option<a::Expr> {
        let span = e.span;
        let (w, signed) = self.scalar_of(&e.ty).unwrap_or((1, false));
        match &e.kind {
            ExprKind::Const(v) => match v {
                Value::Bits(b) => Some(konst(*b, w, signed)),
                Value::Bool(b) => Some(konst(u128::from(*b), 1, false)),
                Value::Int(_) | Value::Str(_) => {
                    self.inexpressible("a value without a width", span);
                    None
                }
            },
            ExprKind::Var(_)
            | ExprKind::Field(..)
            | ExprKind::Index(..)
            | ExprKind::Next(_)
            | ExprKind::Last(_) => {
                let lp = self.place(idx, e, pre)?;
                self.read(lp, span)
            }
            ExprKind::Slice(b, hi, lo) => {
                if Self::is_place_expr(b) {
                    if let LPlace::Static(Place::Scalar(f)) = self.place(idx, b, pre)? {
                        return Some(a::Expr::Slice {
                            arg: Box::new(a::Expr::Field { field: f }),
                            hi: *hi,
                            lo: *lo,
                        });
                    }
                }
                let arg = self.expr(idx, b, pre)?;
                Some(a::Expr::Slice {
                    arg: Box::new(arg),
                    hi: *hi,
                    lo: *lo,
                })
            }
            ExprKind::LastIndex(b) => {
                let LPlace::Static(Place::Stack(s)) = self.place(idx, b, pre)? else {
                    self.inexpressible("`lastIndex` of this stack", span);
                    return None;
                };
                let field = self.stacks[s.index()].next_index;
                Some(a::Expr::Binary {
                    op: a::BinaryOp::Sub,
                    width: 32,
                    signed: false,
                    lhs: Box::new(a::Expr::Field { field }),
                    rhs: Box::new(konst(1, 32, false)),
                })
            }
            ExprKind::IsValid(h) => {
                let lp = self.place(idx, h, pre)?;
                let header = self.href(lp, span)?;
                Some(a::Expr::IsValid { header })
            }
            ExprKind::Unary(op, x) => {
                let arg = self.expr(idx, x, pre)?;
                let (op, w, signed) = match op {
                    UnOp::Not => (a::UnaryOp::Not, 1, false),
                    UnOp::BitNot => (a::UnaryOp::BitNot, w, signed),
                    UnOp::Neg => (a::UnaryOp::Neg, w, signed),
                    UnOp::Plus => return Some(arg),
                };
                Some(a::Expr::Unary {
                    op,
                    width: w,
                    signed,
                    arg: Box::new(arg),
                })
            }
            ExprKind::Binary(op, l, r) => self.binary(idx, *op, l, r, w, pre),
            ExprKind::Concat(l, r) => {
                let (rw, _) = self.scalar_of(&r.ty).unwrap_or((1, false));
                let lhs = self.expr(idx, l, pre)?;
                let rhs = self.expr(idx, r, pre)?;
                Some(a::Expr::Concat {
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                    rhs_width: rw,
                    width: w,
                    signed,
                })
            }
            ExprKind::Cast(x) => {
                let (aw, asg) = self.scalar_of(&x.ty).unwrap_or((1, false));
                let arg = self.expr(idx, x, pre)?;
                if aw == w && asg == signed {
                    return Some(arg);
                }
                Some(a::Expr::Cast {
                    arg: Box::new(arg),
                    arg_width: aw,
                    arg_signed: asg,
                    width: w,
                    signed,
                })
            }
            ExprKind::Mux(c, x, y) => {
                let cond = self.expr(idx, c, pre)?;
                let mut px = Vec::new();
                let mut py = Vec::new();
                let then = self.expr(idx, x, &mut px)?;
                let otherwise = self.expr(idx, y, &mut py)?;
                if px.is_empty() && py.is_empty() {
                    return Some(a::Expr::Mux {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                        width: w,
                    });
                }
                // Calls in a branch run only when it is taken.
                let Place::Scalar(t) = self.temp(&e.ty) else {
                    return None;
                };
                px.push(a::Stmt::Assign {
                    dst: LValue::Field { field: t },
                    src: then,
                });
                py.push(a::Stmt::Assign {
                    dst: LValue::Field { field: t },
                    src: otherwise,
                });
                pre.push(a::Stmt::If {
                    cond,
                    then: px,
                    otherwise: py,
                });
                Some(a::Expr::Field { field: t })
            }
            ExprKind::Call(c) => match self.call(idx, c, &e.ty, pre)? {
                CallResult::Expr(x) => Some(x),
                CallResult::Place(p) => self.read(LPlace::Static(p), span),
                _ => {
                    self.inexpressible("this call's result", span);
                    None
                }
            },
            ExprKind::TableResult(call, f) => {
                let ExprKind::Call(c) = &call.kind else {
                    return None;
                };
                let Some(CallResult::Table(tid)) = self.call(idx, c, &call.ty, pre) else {
                    return None;
                };
                let t = &self.tables[tid.index()];
                Some(match f {
                    TableResultField::Hit => a::Expr::Field { field: t.hit },
                    TableResultField::Miss => a::Expr::Unary {
                        op: a::UnaryOp::Not,
                        width: 1,
                        signed: false,
                        arg: Box::new(a::Expr::Field { field: t.hit }),
                    },
                    TableResultField::ActionRun => a::Expr::Field {
                        field: t.action_run,
                    },
                })
            }
            ExprKind::List(_) => {
                self.inexpressible("a list used as a single value", span);
                None
            }
        }
    }

    fn binary(
        &mut self,
        idx: usize,
        op: BinOp,
        l: &ir::Expr,
        r: &ir::Expr,
        w: u16,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<a::Expr> {
        let lhs = self.expr(idx, l, pre)?;
        let mut rpre = Vec::new();
        let rhs = self.expr(idx, r, &mut rpre)?;
        if matches!(op, BinOp::And | BinOp::Or) {
            let aop = if op == BinOp::And {
                a::BinaryOp::LAnd
            } else {
                a::BinaryOp::LOr
            };
            if rpre.is_empty() {
                return Some(a::Expr::Binary {
                    op: aop,
                    width: 1,
                    signed: false,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                });
            }
            // Short-circuit around the right side's calls.
            let Place::Scalar(t) = self.temp(&Type::Bool) else {
                return None;
            };
            pre.push(a::Stmt::Assign {
                dst: LValue::Field { field: t },
                src: lhs,
            });
            rpre.push(a::Stmt::Assign {
                dst: LValue::Field { field: t },
                src: rhs,
            });
            let cond = a::Expr::Field { field: t };
            let cond = if op == BinOp::And {
                cond
            } else {
                a::Expr::Unary {
                    op: a::UnaryOp::Not,
                    width: 1,
                    signed: false,
                    arg: Box::new(cond),
                }
            };
            pre.push(a::Stmt::If {
                cond,
                then: rpre,
                otherwise: Vec::new(),
            });
            return Some(a::Expr::Field { field: t });
        }
        pre.extend(rpre);
        let (ow, signed) = self.scalar_of(&l.ty).unwrap_or((1, false));
        let (aop, width) = match op {
            BinOp::Mul => (a::BinaryOp::Mul, w),
            BinOp::Div => (a::BinaryOp::Div, w),
            BinOp::Mod => (a::BinaryOp::Mod, w),
            BinOp::Add => (a::BinaryOp::Add, w),
            BinOp::Sub => (a::BinaryOp::Sub, w),
            BinOp::SatAdd => (a::BinaryOp::SatAdd, w),
            BinOp::SatSub => (a::BinaryOp::SatSub, w),
            BinOp::Shl => (a::BinaryOp::Shl, w),
            BinOp::Shr => (a::BinaryOp::Shr, w),
            BinOp::BitAnd => (a::BinaryOp::And, w),
            BinOp::BitOr => (a::BinaryOp::Or, w),
            BinOp::BitXor => (a::BinaryOp::Xor, w),
            BinOp::Eq => (a::BinaryOp::Eq, 1),
            BinOp::Ne => (a::BinaryOp::Ne, 1),
            BinOp::Lt => (a::BinaryOp::Lt, 1),
            BinOp::Le => (a::BinaryOp::Le, 1),
            BinOp::Gt => (a::BinaryOp::Gt, 1),
            BinOp::Ge => (a::BinaryOp::Ge, 1),
            BinOp::And | BinOp::Or | BinOp::Concat => return None,
        };
        let _ = ow;
        Some(a::Expr::Binary {
            op: aop,
            width,
            signed,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    }

    // ----- calls -------------------------------------------------------------------------

    /// Copy an argument into a parameter's place; remember l-values to copy back.
    fn copy_in(
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
    fn may_exit(&self, b: &ir::Block) -> bool {
        b.stmts.iter().any(|s| match &s.kind {
            StmtKind::Exit => true,
            StmtKind::If(_, t, e) => self.may_exit(t) || self.may_exit(e),
            StmtKind::Block(b) => self.may_exit(b),
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

    fn copy_out(&mut self, outs: &[(LPlace, Place, Type, Span)], out: &mut Vec<a::Stmt>) {
        for (lp, param, ty, span) in outs {
            self.copy(lp.clone(), LPlace::Static(param.clone()), ty, *span, out);
        }
    }

    fn call(
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

    fn arg_expr(&mut self, idx: usize, a: Option<&Arg>, out: &mut Vec<a::Stmt>) -> Option<a::Expr> {
        match a? {
            Arg::In(e) | Arg::Out(e, _) => self.expr(idx, e, out),
            Arg::Skip(_) => None,
        }
    }

    fn arg_lvalue(
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

    fn arg_ir<'x>(&self, a: Option<&'x Arg>) -> Option<&'x ir::Expr> {
        match a? {
            Arg::In(e) | Arg::Out(e, _) => Some(e),
            Arg::Skip(_) => None,
        }
    }

    /// Every scalar of a list/struct/header value, most significant first.
    fn flatten(
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
        if self.m.scalar_width(&e.ty).is_some() {
            acc.push(self.expr(idx, e, out)?);
            return Some(());
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

    fn header_field_count(&self, ty: &Type) -> usize {
        match ty {
            Type::Header(s) => self.m.structs[*s].fields.len(),
            _ => 0,
        }
    }

    /// Names and values of a digest's data.
    fn named_leaves(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        prefix: &str,
        out: &mut Vec<a::Stmt>,
        acc: &mut Vec<(String, a::Expr)>,
    ) -> Option<()> {
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

    fn const_member(&mut self, e: Option<&ir::Expr>, what: &str, span: Span) -> Option<String> {
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

    fn hash_algo(&mut self, e: Option<&ir::Expr>, span: Span) -> Option<HashAlgo> {
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

    fn const_u(&mut self, e: Option<&ir::Expr>, what: &str, span: Span) -> Option<u128> {
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
    fn field_list(&self, index: u128) -> Vec<FieldId> {
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

    fn extern_of(&mut self, idx: usize, r: Option<&Receiver>, span: Span) -> Option<ExternId> {
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

    fn cache(&mut self, span: Span) -> Option<ExternId> {
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

    /// RIG externs: only in the per-PR part of a NIC path, some only on one path.
    fn rig_context(&mut self, op: Builtin, span: Span) -> Option<()> {
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
    fn arg_place(
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
    fn field_of(&self, p: &(LPlace, Type), name: &str) -> Option<LPlace> {
        let (lp, ty) = p;
        let (Type::Header(s) | Type::Struct(s)) = ty else {
            return None;
        };
        let i = self.m.structs[*s]
            .fields
            .iter()
            .position(|f| f.name == name)?;
        match lp {
            LPlace::Static(Place::Header(h)) => Some(LPlace::Static(Place::Scalar(
                self.headers[h.index()].fields.get(i)?.field,
            ))),
            LPlace::Static(Place::Struct(ps)) => ps.get(i).cloned().map(LPlace::Static),
            LPlace::DynHeader(r) => Some(LPlace::DynField(r.clone(), u32_of(i))),
            _ => None,
        }
    }

    /// The value of field `name` of a PR or metadata argument.
    fn operand(&mut self, p: &(LPlace, Type), name: &str, span: Span) -> Option<a::Expr> {
        match self.field_of(p, name) {
            Some(lp) => self.read(lp, span),
            None => {
                self.inexpressible(&format!("a RIG extern argument without `{name}`"), span);
                None
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn builtin(
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
                let e = self.arg_ir(args.first())?.clone();
                let lp = self.place(idx, &e, out)?;
                let header = self.href(lp, span)?;
                out.push(a::Stmt::Extract { header });
            }
            Builtin::Lookahead => {
                let t = type_args.first().cloned().unwrap_or_else(|| ret.clone());
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

    fn emit_place(&self, p: &Place, out: &mut Vec<a::Stmt>) {
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
            Place::Scalar(_) | Place::Packet => {}
        }
    }
}

fn konst(value: u128, width: u16, signed: bool) -> a::Expr {
    a::Expr::Const {
        value: value & crate::check::consts::mask(width),
        width,
        signed,
    }
}

/// `hdr.ipv4.ttl`-style path of an IR expression, for names.
pub(crate) fn expr_path(m: &Module, e: &ir::Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Var(v) => Some(m.vars[*v].name.clone()),
        ExprKind::Field(b, i) => {
            let base = expr_path(m, b)?;
            let name = match &b.ty {
                Type::Header(s) | Type::Struct(s) => {
                    m.structs[*s].fields.get(*i as usize)?.name.clone()
                }
                _ => return None,
            };
            Some(format!("{base}.{name}"))
        }
        _ => None,
    }
}
