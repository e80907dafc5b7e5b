//! P4Info from a pipeline artifact, for any program the compiler accepts
//! (v1model and NetSparse switch/NIC programs alike), and the [`Schema`]
//! the server and the client use to map P4Runtime ids to the engine's
//! names.
//!
//! Ids follow the P4Runtime specification's `P4Ids` prefixes: the top byte
//! says the kind (action 0x01, table 0x02, controller header 0x04, action
//! profile 0x11, counter 0x12, direct counter 0x13, meter 0x14, direct
//! meter 0x15, register 0x16, digest 0x17; NetSparse's extern types from
//! 0x81 on). The lower 24 bits are FNV-1a (32-bit) of the fully qualified
//! name, folded to 24 bits by xor of the top byte into the rest; a
//! collision within a kind takes the next free value (entities taken in
//! artifact order, so the result is deterministic). p4c derives the lower
//! bits from a hash of the name too, but a different one: controllers
//! that look entities up by name (p4runtime-shell, ONOS pipeconfs, the
//! tutorials' helpers) work unchanged; ids copied from a p4c P4Info do not
//! carry over. `@id(N)` on a table or an action is honoured: N's low 24
//! bits under the kind's prefix (a prefix written in N is replaced by the
//! kind's); these ids are taken before any name is hashed (a clash between
//! two `@id`s moves the later one to the next free value). Match fields
//! are numbered from 1 in key order, action parameters from 1 in
//! declaration order.

use std::collections::{BTreeMap, HashSet};

use netsparse_externs::artifact::{Arch, Artifact, CounterUnit, ExternKind, MatchKind, MeterUnit};

use crate::proto::cfg;

/// `P4Ids.Prefix` values (top byte of an id).
pub mod prefix {
    /// Actions.
    pub const ACTION: u8 = 0x01;
    /// Tables.
    pub const TABLE: u8 = 0x02;
    /// Controller packet metadata (`@controller_header`).
    pub const CONTROLLER_HEADER: u8 = 0x04;
    /// Indexed counters.
    pub const COUNTER: u8 = 0x12;
    /// Direct counters.
    pub const DIRECT_COUNTER: u8 = 0x13;
    /// Indexed meters.
    pub const METER: u8 = 0x14;
    /// Direct meters.
    pub const DIRECT_METER: u8 = 0x15;
    /// Registers.
    pub const REGISTER: u8 = 0x16;
    /// Digests.
    pub const DIGEST: u8 = 0x17;
    /// NetSparse's Property Cache (an `Extern` in P4Info).
    pub const PROPERTY_CACHE: u8 = 0x81;
    /// A NetSparse NIC's Idx Filter (an `Extern` in P4Info).
    pub const IDX_FILTER: u8 = 0x83;
    /// PSA checksum instances (`Checksum`, `InternetChecksum`): ids only,
    /// not listed in the P4Info (p4c lists none; they have no control-plane API).
    pub const CHECKSUM: u8 = 0x82;
}

/// The `extern_type_id` of the NetSparse Property Cache in P4Info.
pub const PROPERTY_CACHE_TYPE_ID: u32 = prefix::PROPERTY_CACHE as u32;
/// Its `extern_type_name`.
pub const PROPERTY_CACHE_TYPE_NAME: &str = "NetSparsePropertyCache";

/// The `extern_type_id` of a NetSparse NIC's Idx Filter in P4Info: one
/// instance, [`IDX_FILTER_NAME`], in the P4Info of every `NetSparseNic`
/// program; a Write MODIFY of its `ExternEntry` clears the filter.
pub const IDX_FILTER_TYPE_ID: u32 = prefix::IDX_FILTER as u32;
/// Its `extern_type_name`.
pub const IDX_FILTER_TYPE_NAME: &str = "NetSparseIdxFilter";
/// The name of its one instance.
pub const IDX_FILTER_NAME: &str = "idx_filter";

/// FNV-1a of `name`, folded to 24 bits.
fn hash24(name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h & 0x00ff_ffff) ^ (h >> 24)
}

/// Hands out ids per kind, avoiding collisions.
#[derive(Default)]
struct Ids {
    taken: HashSet<u32>,
}

impl Ids {
    /// An `@id` value under `prefix`.
    fn explicit(&mut self, prefix: u8, id: u32) -> u32 {
        let top = u32::from(prefix) << 24;
        let mut low = id & 0x00ff_ffff;
        loop {
            if low != 0 && self.taken.insert(top | low) {
                return top | low;
            }
            low = (low + 1) & 0x00ff_ffff;
        }
    }

    fn id(&mut self, prefix: u8, name: &str) -> u32 {
        let top = u32::from(prefix) << 24;
        let mut low = hash24(name);
        // Zero is not a valid id suffix in practice (p4c avoids it too).
        loop {
            let id = top | low;
            if low != 0 && self.taken.insert(id) {
                return id;
            }
            low = (low + 1) & 0x00ff_ffff;
        }
    }
}

/// The shortest dot-separated suffix of `name` that no other name in
/// `all` ends with (p4c's alias rule).
fn alias(name: &str, all: &[&str]) -> String {
    let parts: Vec<&str> = name.split('.').collect();
    for n in 1..=parts.len() {
        let suffix = parts[parts.len() - n..].join(".");
        let dotted = format!(".{suffix}");
        let clash = all
            .iter()
            .filter(|o| **o != name)
            .any(|o| *o == suffix || o.ends_with(&dotted));
        if !clash {
            return suffix;
        }
    }
    name.to_owned()
}

fn preamble(id: u32, name: &str, all: &[&str]) -> Option<cfg::Preamble> {
    Some(cfg::Preamble {
        id,
        name: name.to_owned(),
        alias: alias(name, all),
        ..Default::default()
    })
}

fn match_type(k: MatchKind) -> cfg::match_field::MatchType {
    use cfg::match_field::MatchType as M;
    match k {
        MatchKind::Exact => M::Exact,
        MatchKind::Lpm => M::Lpm,
        MatchKind::Ternary => M::Ternary,
        MatchKind::Range => M::Range,
        MatchKind::Optional => M::Optional,
    }
}

fn counter_unit(u: CounterUnit) -> i32 {
    use cfg::counter_spec::Unit;
    match u {
        CounterUnit::Packets => Unit::Packets as i32,
        CounterUnit::Bytes => Unit::Bytes as i32,
        CounterUnit::PacketsAndBytes => Unit::Both as i32,
    }
}

fn meter_unit(u: MeterUnit) -> i32 {
    use cfg::meter_spec::Unit;
    match u {
        MeterUnit::Packets => Unit::Packets as i32,
        MeterUnit::Bytes => Unit::Bytes as i32,
    }
}

/// The `arch` string of `pkg_info`.
pub fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::V1Model => "v1model",
        Arch::NetSparseSwitch => "netsparse_switch",
        Arch::NetSparseNic => "netsparse_nic",
        Arch::SpinNic => "spin_nic",
        Arch::Psa => "psa",
    }
}

/// Build the P4Info of `artifact`. Tables, actions (as the tables name
/// them; each distinct control-plane name once, in order of first use),
/// counters, direct counters, meters, direct meters, registers, digests
/// (with their structs in `type_info`), and the Property Cache (an
/// `externs` entry of type [`PROPERTY_CACHE_TYPE_NAME`]).
pub fn build(artifact: &Artifact) -> cfg::P4Info {
    let mut ids = Ids::default();
    // Actions: control-plane names in order of first use by a table.
    let mut action_names: Vec<&str> = Vec::new();
    let mut action_of: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &artifact.tables {
        for ta in &t.actions {
            if !action_of.contains_key(ta.name.as_str()) {
                action_of.insert(&ta.name, ta.action.0 as usize);
                action_names.push(&ta.name);
            }
        }
    }
    let table_names: Vec<&str> = artifact.tables.iter().map(|t| t.name.as_str()).collect();
    let extern_names: Vec<&str> = artifact.externs.iter().map(|e| e.name.as_str()).collect();

    // `@id`s first, then hashed names.
    let mut action_ids: BTreeMap<&str, u32> = BTreeMap::new();
    for n in &action_names {
        if let Some(id) = artifact.actions[action_of[n]].p4rt_id {
            action_ids.insert(n, ids.explicit(prefix::ACTION, id));
        }
    }
    let mut table_ids: Vec<u32> = artifact
        .tables
        .iter()
        .map(|t| t.p4rt_id.map_or(0, |id| ids.explicit(prefix::TABLE, id)))
        .collect();
    for n in &action_names {
        if !action_ids.contains_key(n) {
            action_ids.insert(n, ids.id(prefix::ACTION, n));
        }
    }
    for (ti, n) in table_names.iter().enumerate() {
        if table_ids[ti] == 0 {
            table_ids[ti] = ids.id(prefix::TABLE, n);
        }
    }
    let extern_ids: Vec<u32> = artifact
        .externs
        .iter()
        .map(|e| {
            let p = match e.kind {
                ExternKind::Register { .. } => prefix::REGISTER,
                ExternKind::Counter { .. } => prefix::COUNTER,
                ExternKind::DirectCounter { .. } => prefix::DIRECT_COUNTER,
                ExternKind::Meter { .. } => prefix::METER,
                ExternKind::DirectMeter { .. } => prefix::DIRECT_METER,
                ExternKind::PropertyCache => prefix::PROPERTY_CACHE,
                ExternKind::Checksum { .. } | ExternKind::InternetChecksum => prefix::CHECKSUM,
            };
            ids.id(p, &e.name)
        })
        .collect();

    let mut info = cfg::P4Info {
        pkg_info: Some(cfg::PkgInfo {
            arch: arch_name(artifact.arch).to_owned(),
            name: artifact.program.clone(),
            ..Default::default()
        }),
        ..Default::default()
    };
    for n in &action_names {
        let a = &artifact.actions[action_of[n]];
        info.actions.push(cfg::Action {
            preamble: preamble(action_ids[n], n, &action_names),
            params: a
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| cfg::action::Param {
                    id: i as u32 + 1,
                    name: p.name.clone(),
                    bitwidth: i32::from(p.width),
                    ..Default::default()
                })
                .collect(),
        });
    }
    for (ti, t) in artifact.tables.iter().enumerate() {
        let mut direct = Vec::new();
        for e in [t.direct_counter, t.direct_meter].into_iter().flatten() {
            direct.push(extern_ids[e.0 as usize]);
        }
        let default_name = t
            .actions
            .iter()
            .find(|a| a.action == t.default_action.action)
            .map(|a| a.name.as_str());
        info.tables.push(cfg::Table {
            preamble: preamble(table_ids[ti], &t.name, &table_names),
            match_fields: t
                .keys
                .iter()
                .enumerate()
                .map(|(i, k)| cfg::MatchField {
                    id: i as u32 + 1,
                    name: k.name.clone(),
                    bitwidth: i32::from(k.width),
                    r#match: Some(cfg::match_field::Match::MatchType(
                        match_type(k.match_kind) as i32
                    )),
                    ..Default::default()
                })
                .collect(),
            action_refs: t
                .actions
                .iter()
                .map(|a| cfg::ActionRef {
                    id: action_ids[a.name.as_str()],
                    scope: if a.default_only {
                        cfg::action_ref::Scope::DefaultOnly as i32
                    } else if a.table_only {
                        cfg::action_ref::Scope::TableOnly as i32
                    } else {
                        cfg::action_ref::Scope::TableAndDefault as i32
                    },
                    ..Default::default()
                })
                .collect(),
            const_default_action_id: match (t.default_action.is_const, default_name) {
                (true, Some(n)) => action_ids[n],
                _ => 0,
            },
            direct_resource_ids: direct,
            size: i64::from(t.size),
            is_const_table: t.entries_const,
            has_initial_entries: !t.entries.is_empty(),
            ..Default::default()
        });
    }
    let mut cache = cfg::Extern {
        extern_type_id: PROPERTY_CACHE_TYPE_ID,
        extern_type_name: PROPERTY_CACHE_TYPE_NAME.to_owned(),
        instances: Vec::new(),
    };
    for (ei, e) in artifact.externs.iter().enumerate() {
        let pre = preamble(extern_ids[ei], &e.name, &extern_names);
        match &e.kind {
            ExternKind::Register { width, size, .. } => info.registers.push(cfg::Register {
                preamble: pre,
                type_spec: Some(bit_spec(*width)),
                size: i32::try_from(*size).unwrap_or(i32::MAX),
            }),
            ExternKind::Counter { size, unit } => info.counters.push(cfg::Counter {
                preamble: pre,
                spec: Some(cfg::CounterSpec {
                    unit: counter_unit(*unit),
                }),
                size: i64::from(*size),
            }),
            ExternKind::DirectCounter { unit, table } => {
                info.direct_counters.push(cfg::DirectCounter {
                    preamble: pre,
                    spec: Some(cfg::CounterSpec {
                        unit: counter_unit(*unit),
                    }),
                    direct_table_id: table_ids[table.0 as usize],
                })
            }
            ExternKind::Meter { size, unit } => info.meters.push(cfg::Meter {
                preamble: pre,
                spec: Some(cfg::MeterSpec {
                    unit: meter_unit(*unit),
                }),
                size: i64::from(*size),
            }),
            ExternKind::DirectMeter { unit, table } => info.direct_meters.push(cfg::DirectMeter {
                preamble: pre,
                spec: Some(cfg::MeterSpec {
                    unit: meter_unit(*unit),
                }),
                direct_table_id: table_ids[table.0 as usize],
            }),
            ExternKind::PropertyCache => cache.instances.push(cfg::ExternInstance {
                preamble: pre,
                info: None,
            }),
            ExternKind::Checksum { .. } | ExternKind::InternetChecksum => {}
        }
    }
    if !cache.instances.is_empty() {
        info.externs.push(cache);
    }
    if artifact.arch == Arch::NetSparseNic {
        let id = ids.id(prefix::IDX_FILTER, IDX_FILTER_NAME);
        info.externs.push(cfg::Extern {
            extern_type_id: IDX_FILTER_TYPE_ID,
            extern_type_name: IDX_FILTER_TYPE_NAME.to_owned(),
            instances: vec![cfg::ExternInstance {
                preamble: preamble(id, IDX_FILTER_NAME, &[IDX_FILTER_NAME]),
                info: None,
            }],
        });
    }
    let found = digests(artifact);
    let digest_names: Vec<&str> = found.iter().map(|d| d.name.as_str()).collect();
    for d in &found {
        info.digests.push(cfg::Digest {
            preamble: preamble(ids.id(prefix::DIGEST, &d.name), &d.name, &digest_names),
            type_spec: Some(cfg::P4DataTypeSpec {
                type_spec: Some(cfg::p4_data_type_spec::TypeSpec::Struct(cfg::P4NamedType {
                    name: d.name.clone(),
                })),
            }),
        });
        let members = d
            .fields
            .iter()
            .map(|(n, w)| cfg::p4_struct_type_spec::Member {
                name: n.clone(),
                type_spec: Some(bit_spec(*w)),
            })
            .collect();
        info.type_info
            .get_or_insert_with(Default::default)
            .structs
            .insert(d.name.clone(), cfg::P4StructTypeSpec { members });
    }
    let headers = controller_headers(artifact);
    let names: Vec<&str> = headers.iter().map(|h| h.name.as_str()).collect();
    for h in &headers {
        info.controller_packet_metadata
            .push(cfg::ControllerPacketMetadata {
                preamble: Some(cfg::Preamble {
                    annotations: vec![format!("@controller_header(\"{}\")", h.name)],
                    ..preamble(ids.id(prefix::CONTROLLER_HEADER, &h.name), &h.name, &names)
                        .unwrap_or_default()
                }),
                metadata: h
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| cfg::controller_packet_metadata::Metadata {
                        id: i as u32 + 1,
                        name: f.name.clone(),
                        bitwidth: i32::from(f.width),
                        ..Default::default()
                    })
                    .collect(),
            });
    }
    info
}

/// `bit<width>` as a P4Info type.
fn bit_spec(width: u16) -> cfg::P4DataTypeSpec {
    cfg::P4DataTypeSpec {
        type_spec: Some(cfg::p4_data_type_spec::TypeSpec::Bitstring(
            cfg::P4BitstringLikeTypeSpec {
                type_spec: Some(cfg::p4_bitstring_like_type_spec::TypeSpec::Bit(
                    cfg::P4BitTypeSpec {
                        bitwidth: i32::from(width),
                    },
                )),
                annotations: Vec::new(),
            },
        )),
    }
}

/// A digest the program sends: its struct type's name and its fields
/// (name, width) in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestType {
    /// The struct type's name (the P4Info digest's name, as p4c's).
    pub name: String,
    /// Fields in declaration order.
    pub fields: Vec<(String, u16)>,
}

/// Every digest type the program's `digest` calls send, in order of first
/// appearance (parsers, controls, then actions); one per type name.
pub fn digests(artifact: &Artifact) -> Vec<DigestType> {
    use netsparse_externs::artifact::{Prim, Stmt};
    fn walk(a: &Artifact, body: &[Stmt], out: &mut Vec<DigestType>) {
        for s in body {
            match s {
                Stmt::Prim(Prim::Digest { name, data, .. })
                    if !out.iter().any(|d| &d.name == name) =>
                {
                    out.push(DigestType {
                        name: name.clone(),
                        fields: data
                            .iter()
                            .map(|(n, e)| (n.clone(), a.expr_width(e)))
                            .collect(),
                    });
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    walk(a, then, out);
                    walk(a, otherwise, out);
                }
                Stmt::Switch { cases, default, .. } => {
                    for c in cases {
                        walk(a, &c.body, out);
                    }
                    walk(a, default, out);
                }
                Stmt::Inlined { body, .. } => walk(a, body, out),
                Stmt::Loop { body, updates, .. } => {
                    walk(a, body, out);
                    walk(a, updates, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for p in &artifact.parsers {
        for st in &p.states {
            walk(artifact, &st.body, &mut out);
        }
    }
    for c in &artifact.controls {
        walk(artifact, &c.body, &mut out);
    }
    for a in &artifact.actions {
        walk(artifact, &a.body, &mut out);
    }
    out
}

/// One `@controller_header` type: its name (`packet_in`, `packet_out`)
/// and fields in wire order; metadata ids are 1 + the field's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerHeader {
    /// The annotation's name.
    pub name: String,
    /// Fields in wire order.
    pub fields: Vec<ControllerField>,
    /// Total width in bits.
    pub bit_width: u32,
}

/// One field of a [`ControllerHeader`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerField {
    /// Field name (without the instance path).
    pub name: String,
    /// Width in bits.
    pub width: u16,
}

impl ControllerHeader {
    /// Bytes the header takes on the wire.
    pub fn byte_len(&self) -> usize {
        self.bit_width.div_ceil(8) as usize
    }
}

/// The program's `@controller_header` types, first instance of each name
/// in artifact order.
pub fn controller_headers(artifact: &Artifact) -> Vec<ControllerHeader> {
    let mut out: Vec<ControllerHeader> = Vec::new();
    for h in &artifact.headers {
        let Some(name) = &h.controller_header else {
            continue;
        };
        if out.iter().any(|c| &c.name == name) {
            continue;
        }
        let fields = h
            .fields
            .iter()
            .map(|f| {
                let full = &artifact.fields[f.field.0 as usize].name;
                ControllerField {
                    name: full.rsplit('.').next().unwrap_or(full).to_owned(),
                    width: f.width,
                }
            })
            .collect();
        out.push(ControllerHeader {
            name: name.clone(),
            fields,
            bit_width: h.bit_width,
        });
    }
    out
}

/// What an id names, for the server and the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entity {
    /// A table (its index in `P4Info.tables`).
    Table(usize),
    /// An action (index in `P4Info.actions`).
    Action(usize),
    /// An indexed counter (index in `P4Info.counters`).
    Counter(usize),
    /// A direct counter (index in `P4Info.direct_counters`).
    DirectCounter(usize),
    /// An indexed meter.
    Meter(usize),
    /// A direct meter.
    DirectMeter(usize),
    /// A register (index in `P4Info.registers`).
    Register(usize),
    /// A Property Cache instance (index in its extern's instances).
    PropertyCache(usize),
    /// The NIC's Idx Filter.
    IdxFilter,
    /// A digest (index in `P4Info.digests`).
    Digest(usize),
}

/// P4Info with lookups by id and by name (full name or alias).
#[derive(Clone, Debug, Default)]
pub struct Schema {
    /// The P4Info.
    pub info: cfg::P4Info,
    by_id: BTreeMap<u32, Entity>,
    by_name: BTreeMap<String, Vec<u32>>,
}

impl Schema {
    /// Index `info`.
    pub fn new(info: cfg::P4Info) -> Schema {
        let mut s = Schema {
            info,
            ..Schema::default()
        };
        let mut add = |p: &Option<cfg::Preamble>, e: Entity| {
            if let Some(p) = p {
                s.by_id.insert(p.id, e);
                s.by_name.entry(p.name.clone()).or_default().push(p.id);
                if p.alias != p.name && !p.alias.is_empty() {
                    s.by_name.entry(p.alias.clone()).or_default().push(p.id);
                }
            }
        };
        let info = s.info.clone();
        for (i, t) in info.tables.iter().enumerate() {
            add(&t.preamble, Entity::Table(i));
        }
        for (i, a) in info.actions.iter().enumerate() {
            add(&a.preamble, Entity::Action(i));
        }
        for (i, c) in info.counters.iter().enumerate() {
            add(&c.preamble, Entity::Counter(i));
        }
        for (i, c) in info.direct_counters.iter().enumerate() {
            add(&c.preamble, Entity::DirectCounter(i));
        }
        for (i, m) in info.meters.iter().enumerate() {
            add(&m.preamble, Entity::Meter(i));
        }
        for (i, m) in info.direct_meters.iter().enumerate() {
            add(&m.preamble, Entity::DirectMeter(i));
        }
        for (i, r) in info.registers.iter().enumerate() {
            add(&r.preamble, Entity::Register(i));
        }
        for (i, d) in info.digests.iter().enumerate() {
            add(&d.preamble, Entity::Digest(i));
        }
        for x in info
            .externs
            .iter()
            .filter(|x| x.extern_type_id == PROPERTY_CACHE_TYPE_ID)
        {
            for (i, inst) in x.instances.iter().enumerate() {
                add(&inst.preamble, Entity::PropertyCache(i));
            }
        }
        for x in info
            .externs
            .iter()
            .filter(|x| x.extern_type_id == IDX_FILTER_TYPE_ID)
        {
            for inst in &x.instances {
                add(&inst.preamble, Entity::IdxFilter);
            }
        }
        s
    }

    /// What `id` names.
    pub fn entity(&self, id: u32) -> Option<&Entity> {
        self.by_id.get(&id)
    }

    /// The ids named `name` (a full name or an alias).
    pub fn ids_named(&self, name: &str) -> &[u32] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The table with id `id`.
    pub fn table(&self, id: u32) -> Option<&cfg::Table> {
        match self.entity(id)? {
            Entity::Table(i) => self.info.tables.get(*i),
            _ => None,
        }
    }

    /// The action with id `id`.
    pub fn action(&self, id: u32) -> Option<&cfg::Action> {
        match self.entity(id)? {
            Entity::Action(i) => self.info.actions.get(*i),
            _ => None,
        }
    }

    /// Find an entity of kind `pick` by full name or alias.
    pub fn find<'a, T>(
        &'a self,
        name: &str,
        pick: impl Fn(&'a Schema, u32) -> Option<T>,
    ) -> Option<T> {
        self.ids_named(name).iter().find_map(|id| pick(self, *id))
    }
}

/// The name in a preamble (empty if none).
pub fn name_of(p: &Option<cfg::Preamble>) -> &str {
    p.as_ref().map_or("", |p| p.name.as_str())
}

/// The id in a preamble (0 if none).
pub fn id_of(p: &Option<cfg::Preamble>) -> u32 {
    p.as_ref().map_or(0, |p| p.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_kind_prefix_and_are_stable() {
        let mut ids = Ids::default();
        let a = ids.id(prefix::TABLE, "MyIngress.ipv4_lpm");
        assert_eq!(a >> 24, 0x02);
        let mut again = Ids::default();
        assert_eq!(again.id(prefix::TABLE, "MyIngress.ipv4_lpm"), a);
        // A second entity of the same name and kind gets another id.
        assert_ne!(ids.id(prefix::TABLE, "MyIngress.ipv4_lpm"), a);
    }

    #[test]
    fn alias_is_the_shortest_unique_suffix() {
        let all = ["MyIngress.drop", "MyEgress.drop", "MyIngress.fwd"];
        assert_eq!(alias("MyIngress.fwd", &all), "fwd");
        assert_eq!(alias("MyIngress.drop", &all), "MyIngress.drop");
        assert_eq!(alias("NoAction", &["NoAction"]), "NoAction");
    }
}
