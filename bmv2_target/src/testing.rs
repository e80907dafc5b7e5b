//! Hand-built pipeline artifacts for tests, benches and examples.
//!
//! [`ArtifactBuilder`] assembles a v1model [`Artifact`] (standard metadata,
//! core errors, headers with their layout, parsers, controls, actions,
//! tables with hidden `hit`/`action_run` slots, externs) without the
//! compiler; the [`ex`] helpers build expressions and statements.
//! [`ipv4_forward`] mirrors `programs/ipv4_forward.p4`.

use netsparse_externs::artifact::*;

/// Expression and statement shorthands.
pub mod ex {
    use netsparse_externs::artifact::*;

    /// An unsigned constant of `width` bits.
    pub fn c(value: u128, width: u16) -> Expr {
        Expr::Const {
            value,
            width,
            signed: false,
        }
    }

    /// A signed constant (`value` is the two's complement bits).
    pub fn cs(value: u128, width: u16) -> Expr {
        Expr::Const {
            value,
            width,
            signed: true,
        }
    }

    /// A slot's value.
    pub fn f(field: FieldId) -> Expr {
        Expr::Field { field }
    }

    /// A binary operation.
    pub fn bin(op: BinaryOp, width: u16, signed: bool, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary {
            op,
            width,
            signed,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }

    /// An unsigned comparison.
    pub fn cmp(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
        bin(op, 1, false, lhs, rhs)
    }

    /// `h.isValid()`.
    pub fn valid(header: HeaderId) -> Expr {
        Expr::IsValid {
            header: HeaderRef::Static { header },
        }
    }

    /// `dst = src`.
    pub fn set(dst: FieldId, src: Expr) -> Stmt {
        Stmt::Assign {
            dst: LValue::Field { field: dst },
            src,
        }
    }

    /// `if (cond) { then } else { otherwise }`.
    pub fn if_(cond: Expr, then: Vec<Stmt>, otherwise: Vec<Stmt>) -> Stmt {
        Stmt::If {
            cond,
            then,
            otherwise,
        }
    }

    /// `extract(h)`.
    pub fn extract(header: HeaderId) -> Stmt {
        Stmt::Extract {
            header: HeaderRef::Static { header },
        }
    }

    /// `emit(h)`.
    pub fn emit(header: HeaderId) -> Stmt {
        Stmt::Emit {
            header: HeaderRef::Static { header },
        }
    }

    /// `t.apply()`.
    pub fn apply(table: TableId) -> Stmt {
        Stmt::ApplyTable { table }
    }
}

/// A table to add with [`ArtifactBuilder::table`].
#[derive(Clone, Debug)]
pub struct TableSpec {
    /// Fully-qualified name.
    pub name: String,
    /// Keys: (control-plane name, expression, width, kind).
    pub keys: Vec<(String, Expr, u16, MatchKind)>,
    /// Actions (control-plane name = the action's name).
    pub actions: Vec<ActionId>,
    /// Default action and its data.
    pub default: (ActionId, Vec<u128>),
    /// `const default_action`.
    pub default_const: bool,
    /// Program entries.
    pub entries: Vec<Entry>,
    /// `const entries`.
    pub entries_const: bool,
    /// Size.
    pub size: u32,
}

impl TableSpec {
    /// A table with no entries, size 1024.
    pub fn new(name: &str, default: ActionId) -> TableSpec {
        TableSpec {
            name: name.to_owned(),
            keys: Vec::new(),
            actions: Vec::new(),
            default: (default, Vec::new()),
            default_const: false,
            entries: Vec::new(),
            entries_const: false,
            size: 1024,
        }
    }

    /// Add a key.
    pub fn key(mut self, name: &str, expr: Expr, width: u16, kind: MatchKind) -> TableSpec {
        self.keys.push((name.to_owned(), expr, width, kind));
        self
    }

    /// Add actions.
    pub fn actions(mut self, a: &[ActionId]) -> TableSpec {
        self.actions.extend_from_slice(a);
        self
    }
}

/// Builds a v1model artifact by hand.
#[derive(Clone, Debug)]
pub struct ArtifactBuilder {
    a: Artifact,
    std: StandardMetadata,
}

impl ArtifactBuilder {
    /// A v1model program with standard metadata and the core errors; the
    /// package blocks must be set with [`ArtifactBuilder::package`].
    pub fn v1model(program: &str) -> ArtifactBuilder {
        let mut a = Artifact {
            format: ARTIFACT_FORMAT.to_owned(),
            version: ARTIFACT_VERSION,
            program: program.to_owned(),
            arch: Arch::V1Model,
            fields: Vec::new(),
            headers: Vec::new(),
            stacks: Vec::new(),
            errors: [
                "NoError",
                "PacketTooShort",
                "NoMatch",
                "StackOutOfBounds",
                "HeaderTooShort",
                "ParserTimeout",
                "ParserInvalidArgument",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
            parsers: Vec::new(),
            controls: Vec::new(),
            actions: Vec::new(),
            tables: Vec::new(),
            externs: Vec::new(),
            package: Package::V1Switch(V1Switch {
                parser: ParserId(0),
                verify_checksum: ControlId(0),
                ingress: ControlId(0),
                egress: ControlId(0),
                compute_checksum: ControlId(0),
                deparser: ControlId(0),
                standard_metadata: StandardMetadata {
                    ingress_port: FieldId(0),
                    egress_spec: FieldId(0),
                    egress_port: FieldId(0),
                    instance_type: FieldId(0),
                    packet_length: FieldId(0),
                    enq_timestamp: FieldId(0),
                    enq_qdepth: FieldId(0),
                    deq_timedelta: FieldId(0),
                    deq_qdepth: FieldId(0),
                    ingress_global_timestamp: FieldId(0),
                    egress_global_timestamp: FieldId(0),
                    mcast_grp: FieldId(0),
                    egress_rid: FieldId(0),
                    checksum_error: FieldId(0),
                    parser_error: FieldId(0),
                    priority: FieldId(0),
                },
                user_metadata: Vec::new(),
            }),
        };
        let mut sm = |name: &str, width: u16| {
            a.fields.push(Field {
                name: format!("standard_metadata.{name}"),
                width,
                signed: false,
                kind: FieldKind::Metadata,
            });
            FieldId(a.fields.len() as u32 - 1)
        };
        let std = StandardMetadata {
            ingress_port: sm("ingress_port", 9),
            egress_spec: sm("egress_spec", 9),
            egress_port: sm("egress_port", 9),
            instance_type: sm("instance_type", 32),
            packet_length: sm("packet_length", 32),
            enq_timestamp: sm("enq_timestamp", 32),
            enq_qdepth: sm("enq_qdepth", 19),
            deq_timedelta: sm("deq_timedelta", 32),
            deq_qdepth: sm("deq_qdepth", 19),
            ingress_global_timestamp: sm("ingress_global_timestamp", 48),
            egress_global_timestamp: sm("egress_global_timestamp", 48),
            mcast_grp: sm("mcast_grp", 16),
            egress_rid: sm("egress_rid", 16),
            checksum_error: sm("checksum_error", 1),
            parser_error: sm("parser_error", 32),
            priority: sm("priority", 3),
        };
        if let Package::V1Switch(p) = &mut a.package {
            p.standard_metadata = std.clone();
        }
        ArtifactBuilder { a, std }
    }

    /// The standard metadata slots.
    pub fn std(&self) -> &StandardMetadata {
        &self.std
    }

    /// Add a slot.
    pub fn field(&mut self, name: &str, width: u16, signed: bool, kind: FieldKind) -> FieldId {
        self.a.fields.push(Field {
            name: name.to_owned(),
            width,
            signed,
            kind,
        });
        FieldId(self.a.fields.len() as u32 - 1)
    }

    /// Add a user metadata slot.
    pub fn meta(&mut self, name: &str, width: u16) -> FieldId {
        let f = self.field(name, width, false, FieldKind::Metadata);
        if let Package::V1Switch(p) = &mut self.a.package {
            p.user_metadata.push(f);
        }
        f
    }

    /// Add a header instance with `fields` (name, width) in wire order.
    pub fn header(
        &mut self,
        name: &str,
        type_name: &str,
        fields: &[(&str, u16)],
    ) -> (HeaderId, Vec<FieldId>) {
        let hid = HeaderId(self.a.headers.len() as u32);
        let mut off = 0u32;
        let mut hf = Vec::new();
        let mut ids = Vec::new();
        for (n, w) in fields {
            let id = self.field(&format!("{name}.{n}"), *w, false, FieldKind::Header(hid));
            hf.push(HeaderField {
                field: id,
                bit_offset: off,
                width: *w,
            });
            ids.push(id);
            off += u32::from(*w);
        }
        self.a.headers.push(Header {
            name: name.to_owned(),
            type_name: type_name.to_owned(),
            fields: hf,
            bit_width: off,
            varbit_len: None,
            varbit_parts: 0,
            controller_header: None,
        });
        (hid, ids)
    }

    /// Add a header stack of `size` elements.
    pub fn stack(
        &mut self,
        name: &str,
        type_name: &str,
        fields: &[(&str, u16)],
        size: u32,
    ) -> (StackId, Vec<HeaderId>) {
        let elems: Vec<HeaderId> = (0..size)
            .map(|i| self.header(&format!("{name}[{i}]"), type_name, fields).0)
            .collect();
        let ni = self.field(&format!("{name}.$nextIndex"), 32, false, FieldKind::Local);
        self.a.stacks.push(HeaderStack {
            name: name.to_owned(),
            elements: elems.clone(),
            next_index: ni,
        });
        (StackId(self.a.stacks.len() as u32 - 1), elems)
    }

    /// Add a parser.
    pub fn parser(&mut self, name: &str, states: Vec<ParserState>, start: u32) -> ParserId {
        self.a.parsers.push(Parser {
            name: name.to_owned(),
            states,
            start: StateId(start),
        });
        ParserId(self.a.parsers.len() as u32 - 1)
    }

    /// Add a control.
    pub fn control(&mut self, name: &str, body: Vec<Stmt>) -> ControlId {
        self.a.controls.push(Control {
            name: name.to_owned(),
            body,
        });
        ControlId(self.a.controls.len() as u32 - 1)
    }

    /// Add an action with directionless `params` (name, width); `body`
    /// receives the parameter slots.
    pub fn action(
        &mut self,
        name: &str,
        params: &[(&str, u16)],
        body: impl FnOnce(&[FieldId]) -> Vec<Stmt>,
    ) -> ActionId {
        let ids: Vec<FieldId> = params
            .iter()
            .map(|(n, w)| self.field(&format!("{name}.{n}"), *w, false, FieldKind::ActionParam))
            .collect();
        let body = body(&ids);
        self.a.actions.push(Action {
            name: name.to_owned(),
            p4rt_id: None,
            params: params
                .iter()
                .zip(&ids)
                .map(|((n, w), id)| ActionParam {
                    name: (*n).to_owned(),
                    field: *id,
                    width: *w,
                })
                .collect(),
            body,
        });
        ActionId(self.a.actions.len() as u32 - 1)
    }

    /// Add a table (with its hidden `hit` and `action_run` slots).
    pub fn table(&mut self, spec: TableSpec) -> TableId {
        let hit = self.field(&format!("${}.hit", spec.name), 1, false, FieldKind::Local);
        let run = self.field(
            &format!("${}.action_run", spec.name),
            32,
            false,
            FieldKind::Local,
        );
        let actions = spec
            .actions
            .iter()
            .map(|a| TableAction {
                action: *a,
                name: self.a.actions[a.index()].name.clone(),
                default_only: false,
                table_only: false,
            })
            .collect();
        self.a.tables.push(Table {
            name: spec.name,
            p4rt_id: None,
            keys: spec
                .keys
                .into_iter()
                .map(|(name, expr, width, match_kind)| TableKey {
                    name,
                    expr,
                    width,
                    match_kind,
                })
                .collect(),
            actions,
            default_action: DefaultAction {
                action: spec.default.0,
                args: spec.default.1,
                is_const: spec.default_const,
            },
            entries: spec.entries,
            entries_const: spec.entries_const,
            size: spec.size,
            hit,
            action_run: run,
            direct_counter: None,
            direct_meter: None,
        });
        TableId(self.a.tables.len() as u32 - 1)
    }

    /// Mutable access to a table (for annotations, direct externs...).
    pub fn table_mut(&mut self, t: TableId) -> &mut Table {
        &mut self.a.tables[t.index()]
    }

    /// The hidden `hit` / `action_run` slots of a table.
    pub fn table_slots(&self, t: TableId) -> (FieldId, FieldId) {
        let t = &self.a.tables[t.index()];
        (t.hit, t.action_run)
    }

    /// Add an extern instance.
    pub fn extern_(&mut self, name: &str, kind: ExternKind) -> ExternId {
        self.a.externs.push(ExternInstance {
            name: name.to_owned(),
            kind,
        });
        ExternId(self.a.externs.len() as u32 - 1)
    }

    /// Attach a direct counter to a table.
    pub fn direct_counter(&mut self, name: &str, t: TableId, unit: CounterUnit) -> ExternId {
        let e = self.extern_(name, ExternKind::DirectCounter { unit, table: t });
        self.a.tables[t.index()].direct_counter = Some(e);
        e
    }

    /// Attach a direct meter to a table.
    pub fn direct_meter(&mut self, name: &str, t: TableId, unit: MeterUnit) -> ExternId {
        let e = self.extern_(name, ExternKind::DirectMeter { unit, table: t });
        self.a.tables[t.index()].direct_meter = Some(e);
        e
    }

    /// Wire the package.
    pub fn package(
        &mut self,
        parser: ParserId,
        verify: ControlId,
        ingress: ControlId,
        egress: ControlId,
        compute: ControlId,
        deparser: ControlId,
    ) {
        if let Package::V1Switch(p) = &mut self.a.package {
            p.parser = parser;
            p.verify_checksum = verify;
            p.ingress = ingress;
            p.egress = egress;
            p.compute_checksum = compute;
            p.deparser = deparser;
        }
    }

    /// Direct access to the artifact under construction.
    pub fn artifact_mut(&mut self) -> &mut Artifact {
        &mut self.a
    }

    /// The finished artifact.
    pub fn build(self) -> Artifact {
        self.a
    }
}

/// Ethernet header fields (name, width).
pub const ETHERNET: &[(&str, u16)] = &[("dstAddr", 48), ("srcAddr", 48), ("etherType", 16)];

/// IPv4 header fields (name, width).
pub const IPV4: &[(&str, u16)] = &[
    ("version", 4),
    ("ihl", 4),
    ("diffserv", 8),
    ("totalLen", 16),
    ("identification", 16),
    ("flags", 3),
    ("fragOffset", 13),
    ("ttl", 8),
    ("protocol", 8),
    ("hdrChecksum", 16),
    ("srcAddr", 32),
    ("dstAddr", 32),
];

/// The slots and ids of [`ipv4_forward_parts`], for tests that extend it.
#[derive(Clone, Debug)]
pub struct Ipv4Forward {
    /// The builder (package already wired).
    pub builder: ArtifactBuilder,
    /// `hdr.ethernet`.
    pub ethernet: HeaderId,
    /// Ethernet field slots in wire order.
    pub eth: Vec<FieldId>,
    /// `hdr.ipv4`.
    pub ipv4: HeaderId,
    /// IPv4 field slots in wire order.
    pub ip: Vec<FieldId>,
    /// `MyIngress.ipv4_lpm`.
    pub table: TableId,
    /// `MyIngress.ipv4_forward`.
    pub forward: ActionId,
    /// `MyIngress.drop`.
    pub drop: ActionId,
}

/// `programs/ipv4_forward.p4`, built by hand: Ethernet/IPv4 parser, IPv4
/// checksum verify, LPM table `MyIngress.ipv4_lpm` on `hdr.ipv4.dstAddr`
/// with `MyIngress.ipv4_forward(dstAddr, port)` / `MyIngress.drop` /
/// `NoAction` (default `drop`), checksum update, deparser.
pub fn ipv4_forward_parts() -> Ipv4Forward {
    use ex::*;
    let mut b = ArtifactBuilder::v1model("ipv4_forward");
    let std = b.std().clone();
    let (ethernet, eth) = b.header("hdr.ethernet", "ethernet_t", ETHERNET);
    let (ipv4, ip) = b.header("hdr.ipv4", "ipv4_t", IPV4);
    let parser = b.parser(
        "MyParser",
        vec![
            ParserState {
                name: "start".into(),
                body: vec![],
                transition: Transition::Direct {
                    next: Next::State(StateId(1)),
                },
            },
            ParserState {
                name: "parse_ethernet".into(),
                body: vec![extract(ethernet)],
                transition: Transition::Select {
                    keys: vec![f(eth[2])],
                    cases: vec![
                        SelectCase {
                            keysets: vec![KeySet::Value { value: 0x800 }],
                            next: Next::State(StateId(2)),
                        },
                        SelectCase {
                            keysets: vec![KeySet::Any],
                            next: Next::Accept,
                        },
                    ],
                },
            },
            ParserState {
                name: "parse_ipv4".into(),
                body: vec![extract(ipv4)],
                transition: Transition::Direct { next: Next::Accept },
            },
        ],
        0,
    );
    let csum_fields: Vec<Expr> = [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11]
        .iter()
        .map(|i| f(ip[*i]))
        .collect();
    let verify = b.control(
        "MyVerifyChecksum",
        vec![Stmt::Prim(Prim::VerifyChecksum {
            cond: valid(ipv4),
            data: csum_fields.clone(),
            checksum: f(ip[9]),
            algo: HashAlgo::Csum16,
            with_payload: false,
        })],
    );
    let drop = b.action("MyIngress.drop", &[], |_| {
        vec![Stmt::Prim(Prim::MarkToDrop)]
    });
    let (e0, e1, ttl) = (eth[0], eth[1], ip[7]);
    let egress_spec = std.egress_spec;
    let forward = b.action(
        "MyIngress.ipv4_forward",
        &[("dstAddr", 48), ("port", 9)],
        |p| {
            vec![
                set(egress_spec, f(p[1])),
                set(e1, f(e0)),
                set(e0, f(p[0])),
                set(ttl, bin(BinaryOp::Sub, 8, false, f(ttl), c(1, 8))),
            ]
        },
    );
    let noaction = b.action("NoAction", &[], |_| vec![]);
    let table = b.table(
        TableSpec::new("MyIngress.ipv4_lpm", drop)
            .key("hdr.ipv4.dstAddr", f(ip[11]), 32, MatchKind::Lpm)
            .actions(&[forward, drop, noaction]),
    );
    let ingress = b.control(
        "MyIngress",
        vec![if_(valid(ipv4), vec![apply(table)], vec![])],
    );
    let egress = b.control("MyEgress", vec![]);
    let compute = b.control(
        "MyComputeChecksum",
        vec![Stmt::Prim(Prim::UpdateChecksum {
            cond: valid(ipv4),
            data: csum_fields,
            dst: LValue::Field { field: ip[9] },
            algo: HashAlgo::Csum16,
            with_payload: false,
        })],
    );
    let deparser = b.control("MyDeparser", vec![emit(ethernet), emit(ipv4)]);
    b.package(parser, verify, ingress, egress, compute, deparser);
    Ipv4Forward {
        builder: b,
        ethernet,
        eth,
        ipv4,
        ip,
        table,
        forward,
        drop,
    }
}

/// The ipv4_forward artifact.
pub fn ipv4_forward() -> Artifact {
    ipv4_forward_parts().builder.build()
}

pub use crate::workload::*;
