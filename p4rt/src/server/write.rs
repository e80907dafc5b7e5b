//! Write: each update is checked against the pipeline's P4Info on the
//! gRPC side (ids, widths, match kinds, parameters, priorities) and turned
//! into an `Op` on names; the valid ops of a batch then run as one job
//! on the datapath, between two packets. Updates are independent
//! (CONTINUE_ON_ERROR): a bad update fails alone, with its own status in
//! the Write's details, and changes nothing.

use netsparse_engine::control::ControlPlane;
use netsparse_engine::{ControlPlaneError, EntryHandle, Replica};
use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::meter::MeterRates;
use netsparse_externs::stateful::CounterCell;
use tonic::Status;

use super::{batch_status, gone, Shared, PROPERTY_CACHE_TYPE_ID};
use crate::convert;
use crate::p4info::{name_of, Entity, Schema};
use crate::proto::v1;
use crate::target::Target;

/// One checked update, on names.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Insert {
        table: String,
        matches: Vec<KeyMatch>,
        action: String,
        args: Vec<u128>,
        priority: Option<u32>,
    },
    Modify {
        table: String,
        matches: Vec<KeyMatch>,
        priority: Option<u32>,
        action: String,
        args: Vec<u128>,
    },
    Delete {
        table: String,
        matches: Vec<KeyMatch>,
        priority: Option<u32>,
    },
    SetDefault {
        table: String,
        action: String,
        args: Vec<u128>,
    },
    RegisterWrite {
        name: String,
        index: Option<u64>,
        size: u64,
        value: u128,
    },
    CounterReset {
        name: String,
    },
    /// Set an indexed counter's cell (every cell without an index).
    CounterWrite {
        name: String,
        index: Option<u64>,
        size: u64,
        cell: CounterCell,
    },
    /// Set a table entry's direct counter.
    DirectCounterWrite {
        table: String,
        matches: Vec<KeyMatch>,
        priority: Option<u32>,
        cell: CounterCell,
    },
    /// Indexed meter rates (`None`: back to unconfigured, all green).
    Meter {
        name: String,
        index: Option<u64>,
        rates: Option<MeterRates>,
    },
    /// A table entry's direct meter.
    DirectMeter {
        table: String,
        matches: Vec<KeyMatch>,
        priority: Option<u32>,
        meter: String,
        rates: Option<MeterRates>,
    },
    /// Put back a table entry's direct-meter colour counts (only an atomic
    /// batch's undo makes this).
    DirectMeterMarked {
        table: String,
        matches: Vec<KeyMatch>,
        priority: Option<u32>,
        meter: String,
        marked: [netsparse_externs::stateful::CounterCell; 3],
    },
    /// A digest's configuration: server state, not the datapath's.
    Digest {
        ty: v1::update::Type,
        id: u32,
        config: Option<super::digest::Config>,
    },
    CacheInvalidate,
    /// Clear the NIC's Idx Filter.
    FilterClear,
    /// A multicast group (`PacketReplicationEngineEntry`).
    McGroup {
        ty: v1::update::Type,
        group: u16,
        replicas: Vec<Replica>,
    },
    /// A clone (mirror) session.
    CloneSession {
        ty: v1::update::Type,
        session: u32,
        replicas: Vec<Replica>,
    },
}

/// The engine's replicas of a P4Runtime replica list: the port from
/// `egress_port` or `port` (at most 4 bytes), the instance as `egress_rid`.
fn replicas_of(what: &str, rs: &[v1::Replica]) -> Result<Vec<Replica>, Status> {
    use v1::replica::PortKind;
    rs.iter()
        .enumerate()
        .map(|(i, r)| {
            let port = match &r.port_kind {
                Some(PortKind::EgressPort(p)) => *p,
                Some(PortKind::Port(b)) => {
                    let b = &b[b.iter().position(|x| *x != 0).unwrap_or(b.len())..];
                    if b.len() > 4 {
                        return Err(bad(format!(
                            "{what}: replica {i}: port does not fit 32 bits"
                        )));
                    }
                    b.iter().fold(0u32, |v, x| (v << 8) | u32::from(*x))
                }
                None => return Err(bad(format!("{what}: replica {i}: no port"))),
            };
            let rid = u16::try_from(r.instance).map_err(|_| {
                bad(format!(
                    "{what}: replica {i}: instance {} does not fit 16 bits",
                    r.instance
                ))
            })?;
            Ok(Replica { port, rid })
        })
        .collect()
}

/// Check a `PacketReplicationEngineEntry` update.
fn pre_op(ty: v1::update::Type, e: &v1::PacketReplicationEngineEntry) -> Result<Op, Status> {
    use v1::packet_replication_engine_entry::Type as P;
    let del = ty == v1::update::Type::Delete;
    match &e.r#type {
        Some(P::MulticastGroupEntry(g)) => {
            let what = format!("multicast group {}", g.multicast_group_id);
            let group = u16::try_from(g.multicast_group_id)
                .ok()
                .filter(|g| *g != 0)
                .ok_or_else(|| {
                    bad(format!(
                        "multicast_group_id {}: groups are 1..=65535",
                        g.multicast_group_id
                    ))
                })?;
            if !g.metadata.is_empty() {
                return Err(Status::unimplemented(format!(
                    "{what}: metadata is not supported"
                )));
            }
            let replicas = if del {
                Vec::new()
            } else {
                replicas_of(&what, &g.replicas)?
            };
            Ok(Op::McGroup {
                ty,
                group,
                replicas,
            })
        }
        Some(P::CloneSessionEntry(c)) => {
            let what = format!("clone session {}", c.session_id);
            if c.packet_length_bytes != 0 || c.class_of_service != 0 {
                return Err(Status::unimplemented(format!(
                    "{what}: truncation (packet_length_bytes) and class_of_service are not supported"
                )));
            }
            let replicas = if del {
                Vec::new()
            } else {
                replicas_of(&what, &c.replicas)?
            };
            Ok(Op::CloneSession {
                ty,
                session: c.session_id,
                replicas,
            })
        }
        None => Err(bad("packet_replication_engine_entry: no type")),
    }
}

/// Apply a replication update: INSERT of an existing group or session is
/// ALREADY_EXISTS, MODIFY or DELETE of a missing one NOT_FOUND.
fn apply_pre<T: ControlPlane + ?Sized>(
    t: &mut T,
    ty: v1::update::Type,
    what: String,
    exists: bool,
    set: impl FnOnce(&mut T) -> Result<(), ControlPlaneError>,
    remove: impl FnOnce(&mut T) -> Result<(), ControlPlaneError>,
) -> Result<(), Status> {
    use v1::update::Type;
    match (ty, exists) {
        (Type::Insert, true) => Err(Status::already_exists(format!("{what} exists"))),
        (Type::Modify | Type::Delete, false) => {
            Err(Status::not_found(format!("{what} does not exist")))
        }
        (Type::Delete, true) => remove(t).map_err(|e| status_of(&e)),
        _ => set(t).map_err(|e| status_of(&e)),
    }
}

/// The gRPC code of an engine error.
pub(crate) fn status_of(e: &ControlPlaneError) -> Status {
    use ControlPlaneError as E;
    let msg = e.to_string();
    match e {
        E::NoSuchName { .. } | E::NoSuchEntry { .. } => Status::not_found(msg),
        E::Duplicate { .. } => Status::already_exists(msg),
        E::TableFull { .. } => Status::resource_exhausted(msg),
        E::ConstEntries { .. } | E::ConstDefault { .. } => Status::permission_denied(msg),
        E::IndexOutOfRange { .. } => Status::out_of_range(msg),
        E::Unsupported(_) => Status::unimplemented(msg),
        _ => Status::invalid_argument(msg),
    }
}

fn bad(msg: impl Into<String>) -> Status {
    Status::invalid_argument(msg.into())
}

/// Check a table entry of an update; returns (table name, matches,
/// priority) and, when present, (action name, args).
#[allow(clippy::type_complexity)]
fn table_parts(
    schema: &Schema,
    e: &v1::TableEntry,
) -> Result<
    (
        String,
        Vec<KeyMatch>,
        Option<u32>,
        Option<(String, Vec<u128>)>,
    ),
    Status,
> {
    let Some(table) = schema.table(e.table_id) else {
        return Err(Status::not_found(format!(
            "table_entry.table_id {:#x}: no such table",
            e.table_id
        )));
    };
    let tname = name_of(&table.preamble).to_owned();
    let matches = convert::key_matches(table, &e.r#match).map_err(bad)?;
    let prio = if convert::needs_priority(table) {
        if e.priority <= 0 && !e.is_default_action {
            return Err(bad(format!(
                "table {tname}: priority must be > 0 (the table has ternary, range or optional keys)"
            )));
        }
        Some(e.priority as u32)
    } else {
        if e.priority != 0 {
            return Err(bad(format!(
                "table {tname}: priority {} given for a table without ternary, range or optional keys",
                e.priority
            )));
        }
        None
    };
    let action = match &e.action {
        None => None,
        Some(v1::TableAction {
            r#type: Some(v1::table_action::Type::Action(a)),
        }) => {
            let Some(ad) = schema.action(a.action_id) else {
                return Err(Status::not_found(format!(
                    "table {tname}: action_id {:#x}: no such action",
                    a.action_id
                )));
            };
            if !table.action_refs.iter().any(|r| r.id == a.action_id) {
                return Err(bad(format!(
                    "table {tname}: action {} is not one of the table's actions",
                    name_of(&ad.preamble)
                )));
            }
            let args = convert::action_args(ad, &a.params).map_err(bad)?;
            Some((name_of(&ad.preamble).to_owned(), args))
        }
        Some(_) => {
            return Err(Status::unimplemented(format!(
                "table {tname}: action profiles are not supported"
            )))
        }
    };
    Ok((tname, matches, prio, action))
}

/// A counter value written by the controller (no data: zero).
fn counter_cell(d: &Option<v1::CounterData>, what: &str) -> Result<CounterCell, Status> {
    let Some(d) = d else {
        return Ok(CounterCell::default());
    };
    let n =
        |v: i64, f: &str| u64::try_from(v).map_err(|_| bad(format!("{what}: {f} {v} is negative")));
    Ok(CounterCell {
        bytes: n(d.byte_count, "byte_count")?,
        packets: n(d.packet_count, "packet_count")?,
    })
}

/// Check a `MeterConfig`: rates in units per second, bursts in units;
/// `None` (no config) resets the meter.
fn meter_rates(c: &Option<v1::MeterConfig>, what: &str) -> Result<Option<MeterRates>, Status> {
    let Some(c) = c else { return Ok(None) };
    for (field, v) in [
        ("cir", c.cir),
        ("cburst", c.cburst),
        ("pir", c.pir),
        ("pburst", c.pburst),
    ] {
        if v < 0 {
            return Err(bad(format!("{what}: {field} {v} is negative")));
        }
    }
    if c.cir > c.pir {
        return Err(bad(format!(
            "{what}: cir {} is above pir {} (a two-rate meter needs cir <= pir)",
            c.cir, c.pir
        )));
    }
    Ok(Some(MeterRates {
        cir: c.cir as f64 / 1e6,
        cbs: c.cburst as u64,
        pir: c.pir as f64 / 1e6,
        pbs: c.pburst as u64,
    }))
}

/// Check one update.
pub(crate) fn op_of(schema: &Schema, u: &v1::Update) -> Result<Op, Status> {
    use v1::entity::Entity as En;
    use v1::update::Type;
    let ty = Type::try_from(u.r#type).unwrap_or(Type::Unspecified);
    if ty == Type::Unspecified {
        return Err(bad("update.type: unspecified"));
    }
    let Some(entity) = u.entity.as_ref().and_then(|e| e.entity.as_ref()) else {
        return Err(bad("update.entity: missing"));
    };
    match entity {
        En::TableEntry(e) => {
            let (table, matches, priority, action) = table_parts(schema, e)?;
            if e.is_default_action {
                if !e.r#match.is_empty() {
                    return Err(bad(format!(
                        "table {table}: a default entry has no match fields"
                    )));
                }
                return match (ty, action) {
                    (Type::Modify, Some((action, args))) => Ok(Op::SetDefault {
                        table,
                        action,
                        args,
                    }),
                    (Type::Modify, None) => Err(bad(format!("table {table}: action missing"))),
                    _ => Err(bad(format!(
                        "table {table}: the default entry can only be modified"
                    ))),
                };
            }
            match ty {
                Type::Insert | Type::Modify => {
                    let Some((action, args)) = action else {
                        return Err(bad(format!("table {table}: action missing")));
                    };
                    Ok(if ty == Type::Insert {
                        Op::Insert {
                            table,
                            matches,
                            action,
                            args,
                            priority,
                        }
                    } else {
                        Op::Modify {
                            table,
                            matches,
                            priority,
                            action,
                            args,
                        }
                    })
                }
                _ => Ok(Op::Delete {
                    table,
                    matches,
                    priority,
                }),
            }
        }
        En::RegisterEntry(r) => {
            if ty != Type::Modify {
                return Err(bad("register_entry: registers can only be modified"));
            }
            let Some(Entity::Register(i)) = schema.entity(r.register_id) else {
                return Err(Status::not_found(format!(
                    "register_entry.register_id {:#x}: no such register",
                    r.register_id
                )));
            };
            let reg = &schema.info.registers[*i];
            let name = name_of(&reg.preamble).to_owned();
            let width = match &reg.type_spec {
                Some(crate::proto::cfg::P4DataTypeSpec {
                    type_spec:
                        Some(crate::proto::cfg::p4_data_type_spec::TypeSpec::Bitstring(
                            crate::proto::cfg::P4BitstringLikeTypeSpec {
                                type_spec:
                                    Some(crate::proto::cfg::p4_bitstring_like_type_spec::TypeSpec::Bit(
                                        b,
                                    )),
                                ..
                            },
                        )),
                }) => b.bitwidth,
                _ => 128,
            };
            let value = match &r.data {
                Some(v1::P4Data {
                    data: Some(v1::p4_data::Data::Bitstring(b)),
                }) => {
                    convert::from_bytes(b, width, &format!("register {name} data")).map_err(bad)?
                }
                _ => return Err(bad(format!("register {name}: data must be a bitstring"))),
            };
            let index = match &r.index {
                Some(ix) if ix.index < 0 || ix.index >= i64::from(reg.size) => {
                    return Err(Status::out_of_range(format!(
                        "register {name}: index {} outside 0..{}",
                        ix.index, reg.size
                    )))
                }
                Some(ix) => Some(ix.index as u64),
                None => None,
            };
            Ok(Op::RegisterWrite {
                name,
                index,
                size: reg.size.max(0) as u64,
                value,
            })
        }
        En::CounterEntry(c) => {
            if ty != Type::Modify {
                return Err(bad("counter_entry: counters can only be modified"));
            }
            let Some(Entity::Counter(i)) = schema.entity(c.counter_id) else {
                return Err(Status::not_found(format!(
                    "counter_entry.counter_id {:#x}: no such counter",
                    c.counter_id
                )));
            };
            let ctr = &schema.info.counters[*i];
            let name = name_of(&ctr.preamble).to_owned();
            let cell = counter_cell(&c.data, &format!("counter {name}"))?;
            match &c.index {
                None if cell == CounterCell::default() => Ok(Op::CounterReset { name }),
                Some(ix) if ix.index < 0 || ix.index >= ctr.size => Err(Status::out_of_range(
                    format!("counter {name}: index {} outside 0..{}", ix.index, ctr.size),
                )),
                ix => Ok(Op::CounterWrite {
                    name,
                    index: ix.as_ref().map(|ix| ix.index as u64),
                    size: ctr.size.max(0) as u64,
                    cell,
                }),
            }
        }
        En::DirectCounterEntry(d) => {
            if ty != Type::Modify {
                return Err(bad(
                    "direct_counter_entry: direct counters can only be modified",
                ));
            }
            let Some(e) = &d.table_entry else {
                return Err(bad("direct_counter_entry: table_entry missing"));
            };
            let (table, matches, priority, _) = table_parts(schema, e)?;
            if !schema
                .info
                .direct_counters
                .iter()
                .any(|c| c.direct_table_id == e.table_id)
            {
                return Err(Status::not_found(format!(
                    "direct_counter_entry: table {table} has no direct counter"
                )));
            }
            let cell = counter_cell(&d.data, &format!("table {table}'s direct counter"))?;
            Ok(Op::DirectCounterWrite {
                table,
                matches,
                priority,
                cell,
            })
        }
        En::ExternEntry(x) if x.extern_type_id == PROPERTY_CACHE_TYPE_ID => {
            if ty != Type::Modify {
                return Err(bad(
                    "extern_entry: the Property Cache is invalidated with MODIFY",
                ));
            }
            match schema.entity(x.extern_id) {
                Some(Entity::PropertyCache(_)) => Ok(Op::CacheInvalidate),
                _ => Err(Status::not_found(format!(
                    "extern_entry.extern_id {:#x}: no such Property Cache",
                    x.extern_id
                ))),
            }
        }
        En::ExternEntry(x) if x.extern_type_id == crate::p4info::IDX_FILTER_TYPE_ID => {
            if ty != Type::Modify {
                return Err(bad("extern_entry: the Idx Filter is cleared with MODIFY"));
            }
            match schema.entity(x.extern_id) {
                Some(Entity::IdxFilter) => Ok(Op::FilterClear),
                _ => Err(Status::not_found(format!(
                    "extern_entry.extern_id {:#x}: no such Idx Filter",
                    x.extern_id
                ))),
            }
        }
        En::PacketReplicationEngineEntry(e) => pre_op(ty, e),
        En::MeterEntry(m) => {
            if ty != Type::Modify {
                return Err(bad("meter_entry: meters can only be modified"));
            }
            if m.counter_data.is_some() {
                return Err(Status::unimplemented(
                    "meter_entry.counter_data: the colour counts are read-only here",
                ));
            }
            let Some(Entity::Meter(i)) = schema.entity(m.meter_id) else {
                return Err(Status::not_found(format!(
                    "meter_entry.meter_id {:#x}: no such meter",
                    m.meter_id
                )));
            };
            let meter = &schema.info.meters[*i];
            let name = name_of(&meter.preamble).to_owned();
            let index = match &m.index {
                Some(ix) if ix.index < 0 || ix.index >= meter.size => {
                    return Err(Status::out_of_range(format!(
                        "meter {name}: index {} outside 0..{}",
                        ix.index, meter.size
                    )))
                }
                Some(ix) => Some(ix.index as u64),
                None => None,
            };
            let rates = meter_rates(&m.config, &format!("meter {name}"))?;
            Ok(Op::Meter { name, index, rates })
        }
        En::DirectMeterEntry(d) => {
            if ty != Type::Modify {
                return Err(bad(
                    "direct_meter_entry: direct meters can only be modified",
                ));
            }
            if d.counter_data.is_some() {
                return Err(Status::unimplemented(
                    "direct_meter_entry.counter_data: the colour counts are read-only here",
                ));
            }
            let Some(e) = &d.table_entry else {
                return Err(bad("direct_meter_entry: table_entry missing"));
            };
            let (table, matches, priority, _) = table_parts(schema, e)?;
            let Some(dm) = schema
                .info
                .direct_meters
                .iter()
                .find(|m| m.direct_table_id == e.table_id)
            else {
                return Err(Status::not_found(format!(
                    "direct_meter_entry: table {table} has no direct meter"
                )));
            };
            let meter = name_of(&dm.preamble).to_owned();
            let rates = meter_rates(&d.config, &format!("direct meter {meter}"))?;
            Ok(Op::DirectMeter {
                table,
                matches,
                priority,
                meter,
                rates,
            })
        }
        En::DigestEntry(d) => {
            if !matches!(schema.entity(d.digest_id), Some(Entity::Digest(_))) {
                return Err(Status::not_found(format!(
                    "digest_entry.digest_id {:#x}: no such digest",
                    d.digest_id
                )));
            }
            let config = match (&d.config, ty) {
                (Some(c), _) => Some(super::digest::Config::of(
                    c,
                    &format!("digest {:#x}", d.digest_id),
                )?),
                (None, Type::Delete) => None,
                (None, _) => {
                    return Err(bad(format!(
                        "digest_entry {:#x}: config missing",
                        d.digest_id
                    )))
                }
            };
            Ok(Op::Digest {
                ty,
                id: d.digest_id,
                config,
            })
        }
        other => Err(Status::unimplemented(format!(
            "writing {} entities is not supported",
            entity_kind(other)
        ))),
    }
}

/// A short name of an entity kind, for messages.
pub(crate) fn entity_kind(e: &v1::entity::Entity) -> &'static str {
    use v1::entity::Entity as En;
    match e {
        En::ExternEntry(_) => "extern_entry",
        En::TableEntry(_) => "table_entry",
        En::ActionProfileMember(_) => "action_profile_member",
        En::ActionProfileGroup(_) => "action_profile_group",
        En::MeterEntry(_) => "meter_entry",
        En::DirectMeterEntry(_) => "direct_meter_entry",
        En::CounterEntry(_) => "counter_entry",
        En::DirectCounterEntry(_) => "direct_counter_entry",
        En::PacketReplicationEngineEntry(_) => "packet_replication_engine_entry",
        En::ValueSetEntry(_) => "value_set_entry",
        En::RegisterEntry(_) => "register_entry",
        En::DigestEntry(_) => "digest_entry",
    }
}

/// The handle of `table`'s entry with `matches` (NOT_FOUND when none).
fn entry_handle<T: ControlPlane + ?Sized>(
    t: &T,
    table: &str,
    matches: &[KeyMatch],
    priority: Option<u32>,
) -> Result<EntryHandle, Status> {
    t.find_entry(table, matches, priority)
        .map_err(|e| status_of(&e))?
        .ok_or_else(|| Status::not_found(format!("table {table}: no entry with this match")))
}

/// Run the device's own control-plane command `cmd` (no arguments);
/// UNIMPLEMENTED with `missing` when the device has no such command.
fn device_command<T: ControlPlane + ?Sized>(
    t: &mut T,
    cmd: &str,
    missing: &str,
) -> Result<(), Status> {
    match t.command(cmd, &[]) {
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(Status::internal(format!("{e:?}"))),
        None => Err(Status::unimplemented(missing.to_owned())),
    }
}

/// Apply one op to the target.
pub(crate) fn apply<T: ControlPlane + ?Sized>(t: &mut T, op: &Op) -> Result<(), Status> {
    let st = |e: ControlPlaneError| status_of(&e);
    match op {
        Op::Insert {
            table,
            matches,
            action,
            args,
            priority,
        } => {
            // The engine's index finds duplicates (ALREADY_EXISTS).
            t.add_entry(table, matches, action, args, *priority)
                .map(|_| ())
                .map_err(st)
        }
        Op::Modify {
            table,
            matches,
            priority,
            action,
            args,
        } => {
            let h = entry_handle(t, table, matches, *priority)?;
            t.modify_entry(table, h, action, args).map_err(st)
        }
        Op::Delete {
            table,
            matches,
            priority,
        } => {
            let h = entry_handle(t, table, matches, *priority)?;
            t.delete_entry(table, h).map_err(st)
        }
        Op::SetDefault {
            table,
            action,
            args,
        } => t.set_default(table, action, args).map_err(st),
        Op::RegisterWrite {
            name,
            index,
            size,
            value,
        } => match index {
            Some(i) => t.register_write(name, *i, *value).map_err(st),
            None => (0..*size).try_for_each(|i| t.register_write(name, i, *value).map_err(st)),
        },
        Op::CounterReset { name } => t.counter_reset(name).map_err(st),
        Op::CounterWrite {
            name,
            index,
            size,
            cell,
        } => match index {
            Some(i) => t.counter_write(name, *i, *cell).map_err(st),
            None => (0..*size).try_for_each(|i| t.counter_write(name, i, *cell).map_err(st)),
        },
        Op::DirectCounterWrite {
            table,
            matches,
            priority,
            cell,
        } => {
            let h = entry_handle(t, table, matches, *priority)?;
            t.direct_counter_write(table, h, *cell).map_err(st)
        }
        Op::Meter { name, index, rates } => t.meter_configure(name, *index, *rates).map_err(st),
        Op::DirectMeter {
            table,
            matches,
            priority,
            meter,
            rates,
        } => {
            let h = entry_handle(t, table, matches, *priority)?;
            t.meter_configure(meter, Some(u64::from(h.0)), *rates)
                .map_err(st)
        }
        Op::DirectMeterMarked {
            table,
            matches,
            priority,
            meter,
            marked,
        } => {
            let h = entry_handle(t, table, matches, *priority)?;
            t.meter_set_marked(meter, u64::from(h.0), *marked)
                .map_err(st)
        }
        // Applied by the server before the datapath job.
        Op::Digest { .. } => Ok(()),
        Op::FilterClear => device_command(t, "filter_clear", "this device has no Idx Filter"),
        Op::CacheInvalidate => {
            device_command(t, "cache_invalidate", "this switch has no Property Cache")
        }
        Op::McGroup {
            ty,
            group,
            replicas,
        } => {
            let exists = t.mc_groups().iter().any(|(g, _)| g == group);
            apply_pre(
                t,
                *ty,
                format!("multicast group {group}"),
                exists,
                |t| t.mc_group_set(*group, replicas),
                |t| t.mc_group_remove(*group),
            )
        }
        Op::CloneSession {
            ty,
            session,
            replicas,
        } => {
            let exists = t.mirroring_sessions().iter().any(|(s, _)| s == session);
            apply_pre(
                t,
                *ty,
                format!("clone session {session}"),
                exists,
                |t| t.mirroring_set(*session, replicas),
                |t| t.mirroring_remove(*session),
            )
        }
    }
}

/// Serve a Write (device and primary already checked). CONTINUE_ON_ERROR
/// applies the valid updates and fails the others alone; ROLLBACK_ON_ERROR
/// and DATAPLANE_ATOMIC apply all or nothing ([`super::atomic`]).
pub(crate) async fn write<T: Target>(
    shared: &Shared<T>,
    req: v1::WriteRequest,
) -> Result<(), Status> {
    use v1::write_request::Atomicity;
    let atomic = match Atomicity::try_from(req.atomicity) {
        Ok(Atomicity::ContinueOnError) => false,
        Ok(Atomicity::RollbackOnError | Atomicity::DataplaneAtomic) => true,
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "atomicity {}: not a known value",
                req.atomicity
            )))
        }
    };
    let schema = std::sync::Arc::clone(&shared.pipeline().schema);
    let checked: Vec<Result<Op, Status>> = req.updates.iter().map(|u| op_of(&schema, u)).collect();
    let aborted = |at: usize| {
        Status::aborted(format!(
            "not applied: update {at} of this atomic batch failed"
        ))
    };
    let all_or_nothing = |errs: Vec<Option<Status>>| {
        let at = errs.iter().position(Option::is_some).unwrap_or(0);
        let results: Vec<Result<(), Status>> = errs
            .into_iter()
            .map(|e| Err(e.unwrap_or_else(|| aborted(at))))
            .collect();
        batch_status(&results).map_or(Ok(()), Err)
    };
    if atomic && checked.iter().any(Result::is_err) {
        return all_or_nothing(checked.into_iter().map(Result::err).collect());
    }
    // Digest configurations are the server's: applied here, in order (an
    // atomic batch checks them here and applies them after the datapath's
    // part succeeded).
    let digest_ops: Vec<Option<(v1::update::Type, u32, Option<super::digest::Config>)>> = checked
        .iter()
        .map(|c| match c {
            Ok(Op::Digest { ty, id, config }) => Some((*ty, *id, *config)),
            _ => None,
        })
        .collect();
    let server_side: Vec<Option<Result<(), Status>>> = {
        let mut d = shared
            .digests
            .lock()
            .map_err(|_| Status::internal("poisoned"))?;
        if atomic {
            d.dry_run(&digest_ops)
        } else {
            digest_ops
                .iter()
                .map(|o| o.map(|(ty, id, config)| d.write(ty, id, config)))
                .collect()
        }
    };
    if atomic && server_side.iter().any(|r| matches!(r, Some(Err(_)))) {
        return all_or_nothing(
            server_side
                .into_iter()
                .map(|r| r.and_then(Result::err))
                .collect(),
        );
    }
    let ops: Vec<Option<Op>> = checked
        .iter()
        .map(|r| {
            r.as_ref()
                .ok()
                .filter(|op| !matches!(op, Op::Digest { .. }))
                .cloned()
        })
        .collect();
    // A digest turned on now must not deliver what the program sent
    // before: those are drained in the same job and dropped (counted).
    let turned_on: Vec<u32> = digest_ops
        .iter()
        .zip(&server_side)
        .filter_map(|(o, r)| match (o, r) {
            (Some((v1::update::Type::Insert, id, _)), Some(Ok(()))) => Some(*id),
            _ => None,
        })
        .collect();
    let drain = !turned_on.is_empty();
    let (applied, drained) = shared
        .poster
        .run(move |t: &mut T| {
            let drained = if drain { t.take_digests() } else { Vec::new() };
            let applied = if atomic {
                super::atomic::apply_all(t, &ops)
            } else {
                Ok(ops
                    .iter()
                    .map(|op| op.as_ref().map(|op| apply(t, op)))
                    .collect::<Vec<_>>())
            };
            (applied, drained)
        })
        .await
        .map_err(|_| gone())?;
    let applied = applied?;
    let datapath_ok = applied.iter().all(|a| !matches!(a, Some(Err(_))));
    let mut d = shared
        .digests
        .lock()
        .map_err(|_| Status::internal("poisoned"))?;
    let mut server_side = server_side;
    if atomic {
        if datapath_ok {
            // Checked above; applied now that the rest succeeded.
            server_side = digest_ops
                .iter()
                .map(|o| o.map(|(ty, id, config)| d.write(ty, id, config)))
                .collect();
        } else {
            let at = applied
                .iter()
                .position(|a| matches!(a, Some(Err(_))))
                .unwrap_or(0);
            server_side = digest_ops
                .iter()
                .map(|o| o.map(|_| Err(aborted(at))))
                .collect();
        }
    }
    if !drained.is_empty() {
        let on = |id: &u32| turned_on.contains(id) && (!atomic || datapath_ok);
        let (stale, keep): (Vec<_>, Vec<_>) = drained
            .into_iter()
            .partition(|m| schema.ids_named(&m.name).iter().any(on));
        d.drop_stale(stale.len() as u64);
        d.add(&schema, keep, std::time::Instant::now());
    }
    drop(d);
    let results: Vec<Result<(), Status>> = checked
        .into_iter()
        .zip(applied)
        .zip(server_side)
        .map(|((c, a), srv)| match (c, a, srv) {
            (Err(s), _, _) => Err(s),
            (Ok(_), _, Some(r)) => r,
            (Ok(_), Some(r), None) => r,
            (Ok(_), None, None) => Err(Status::internal("update lost")),
        })
        .collect();
    match batch_status(&results) {
        Some(s) => Err(s),
        None => Ok(()),
    }
}
