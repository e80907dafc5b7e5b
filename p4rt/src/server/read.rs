//! Read: table entries (all tables with `table_id` 0, all entries of a
//! table without matches, one entry with them, the default entry with
//! `is_default_action`), direct counters, indexed counters and registers
//! (all of them with id 0, every cell without an index), meters and direct
//! meters (their rates), digest configurations, multicast groups and clone
//! sessions (every one with id 0), and the NetSparse statistics
//! pseudo-extern (with the server's digest counters). The whole request is
//! read in one datapath job, so it sees one consistent state.

use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::meter::MeterRates;
use tonic::Status;

use super::write::{entity_kind, status_of};
use super::{gone, Shared, STATS_TYPE_ID, STATS_TYPE_URL};
use crate::convert;
use crate::p4info::{name_of, Entity, Schema};
use crate::proto::{cfg, v1};
use crate::target::Target;

fn counter_data(c: netsparse_externs::stateful::CounterCell) -> v1::CounterData {
    v1::CounterData {
        byte_count: c.bytes as i64,
        packet_count: c.packets as i64,
    }
}

fn bad(msg: impl Into<String>) -> Status {
    Status::invalid_argument(msg.into())
}

/// The entries of `table` that match the filter in `want` (its matches
/// and priority, when given).
fn table_entries<T: Target>(
    t: &T,
    schema: &Schema,
    table: &cfg::Table,
    want: &v1::TableEntry,
    with_counters: bool,
    out: &mut Vec<v1::Entity>,
) -> Result<(), Status> {
    let tname = name_of(&table.preamble);
    let filter: Option<Vec<KeyMatch>> = if want.r#match.is_empty() {
        None
    } else {
        Some(convert::key_matches(table, &want.r#match).map_err(bad)?)
    };
    let entries = t.entries(tname).map_err(|e| status_of(&e))?;
    let has_counter = table
        .direct_resource_ids
        .iter()
        .any(|id| matches!(schema.entity(*id), Some(Entity::DirectCounter(_))));
    for e in entries {
        if filter.as_ref().is_some_and(|f| *f != e.matches) {
            continue;
        }
        if want.priority != 0 && want.priority as u32 != e.priority {
            continue;
        }
        out.push(v1::Entity {
            entity: Some(v1::entity::Entity::TableEntry(v1::TableEntry {
                table_id: crate::p4info::id_of(&table.preamble),
                r#match: convert::field_matches(table, &e.matches),
                action: Some(table_action(schema, &e.action, &e.args)),
                priority: if convert::needs_priority(table) {
                    e.priority as i32
                } else {
                    0
                },
                counter_data: (with_counters && has_counter).then(|| counter_data(e.counter)),
                is_const: e.is_const,
                ..Default::default()
            })),
        });
    }
    Ok(())
}

/// The P4Runtime form of an action and its data.
fn table_action(schema: &Schema, action: &str, args: &[u128]) -> v1::TableAction {
    let action_id = schema
        .find(action, |s, id| s.action(id).map(|_| id))
        .unwrap_or(0);
    let info = schema.action(action_id);
    let params = args
        .iter()
        .enumerate()
        .map(|(i, v)| v1::action::Param {
            param_id: info
                .and_then(|a| a.params.get(i))
                .map_or(i as u32 + 1, |p| p.id),
            value: convert::to_bytes(*v),
        })
        .collect();
    v1::TableAction {
        r#type: Some(v1::table_action::Type::Action(v1::Action {
            action_id,
            params,
        })),
    }
}

/// A table's default entry (`is_default_action`, no matches).
fn default_entry<T: Target>(
    t: &T,
    schema: &Schema,
    table: &cfg::Table,
    out: &mut Vec<v1::Entity>,
) -> Result<(), Status> {
    let d = t
        .default_entry(name_of(&table.preamble))
        .map_err(|e| status_of(&e))?;
    out.push(v1::Entity {
        entity: Some(v1::entity::Entity::TableEntry(v1::TableEntry {
            table_id: crate::p4info::id_of(&table.preamble),
            action: Some(table_action(schema, &d.action, &d.args)),
            is_default_action: true,
            is_const: d.is_const,
            ..Default::default()
        })),
    });
    Ok(())
}

/// What a Read needs of the server's own state (digests live there, not
/// in the datapath), taken when the Read starts.
struct ServerSide {
    digests: super::digest::DigestCounters,
    digest_entries: Vec<v1::DigestEntry>,
}

/// A meter's rates as P4Runtime's config (units per second).
fn meter_config(r: MeterRates) -> v1::MeterConfig {
    let per_s = |x: f64| (x * 1e6).round() as i64;
    v1::MeterConfig {
        cir: per_s(r.cir),
        cburst: i64::try_from(r.cbs).unwrap_or(i64::MAX),
        pir: per_s(r.pir),
        pburst: i64::try_from(r.pbs).unwrap_or(i64::MAX),
    }
}

/// The (green, yellow, red) packets and bytes a meter marked.
fn meter_counter_data(m: [netsparse_externs::stateful::CounterCell; 3]) -> v1::MeterCounterData {
    let [g, y, r] = m;
    v1::MeterCounterData {
        green: Some(counter_data(g)),
        yellow: Some(counter_data(y)),
        red: Some(counter_data(r)),
    }
}

/// Indexed meters: every one with id 0, every cell without an index.
fn read_meters<T: Target>(
    t: &T,
    schema: &Schema,
    m: &v1::MeterEntry,
    out: &mut Vec<v1::Entity>,
) -> Result<(), Status> {
    let ids: Vec<usize> = if m.meter_id == 0 {
        (0..schema.info.meters.len()).collect()
    } else {
        match schema.entity(m.meter_id) {
            Some(Entity::Meter(i)) => vec![*i],
            _ => {
                return Err(Status::not_found(format!(
                    "meter_entry.meter_id {:#x}: no such meter",
                    m.meter_id
                )))
            }
        }
    };
    for i in ids {
        let meter = &schema.info.meters[i];
        let name = name_of(&meter.preamble);
        let cells: Vec<u64> = match &m.index {
            Some(ix) if ix.index < 0 || ix.index >= meter.size => {
                return Err(Status::out_of_range(format!(
                    "meter {name}: index {} outside 0..{}",
                    ix.index, meter.size
                )))
            }
            Some(ix) => vec![ix.index as u64],
            None => (0..meter.size.max(0) as u64).collect(),
        };
        for ix in cells {
            let rates = t.meter_get_rates(name, ix).map_err(|e| status_of(&e))?;
            let marked = t.meter_marked(name, ix).map_err(|e| status_of(&e))?;
            out.push(v1::Entity {
                entity: Some(v1::entity::Entity::MeterEntry(v1::MeterEntry {
                    meter_id: crate::p4info::id_of(&meter.preamble),
                    index: Some(v1::Index { index: ix as i64 }),
                    config: rates.map(meter_config),
                    counter_data: Some(meter_counter_data(marked)),
                })),
            });
        }
    }
    Ok(())
}

/// Direct meters: the entries of one table (every table with a direct
/// meter with table id 0), one entry with matches.
fn read_direct_meters<T: Target>(
    t: &T,
    schema: &Schema,
    d: &v1::DirectMeterEntry,
    out: &mut Vec<v1::Entity>,
) -> Result<(), Status> {
    let want = d.table_entry.clone().unwrap_or_default();
    for dm in &schema.info.direct_meters {
        if want.table_id != 0 && dm.direct_table_id != want.table_id {
            continue;
        }
        let Some(table) = schema.table(dm.direct_table_id) else {
            continue;
        };
        let tname = name_of(&table.preamble);
        let filter: Option<Vec<KeyMatch>> = if want.r#match.is_empty() {
            None
        } else {
            Some(convert::key_matches(table, &want.r#match).map_err(bad)?)
        };
        for e in t.entries(tname).map_err(|e| status_of(&e))? {
            if filter.as_ref().is_some_and(|f| *f != e.matches) {
                continue;
            }
            if want.priority != 0 && want.priority as u32 != e.priority {
                continue;
            }
            let rates = t
                .meter_get_rates(name_of(&dm.preamble), u64::from(e.handle.0))
                .map_err(|e| status_of(&e))?;
            let marked = t
                .meter_marked(name_of(&dm.preamble), u64::from(e.handle.0))
                .map_err(|e| status_of(&e))?;
            out.push(v1::Entity {
                entity: Some(v1::entity::Entity::DirectMeterEntry(v1::DirectMeterEntry {
                    table_entry: Some(v1::TableEntry {
                        table_id: dm.direct_table_id,
                        r#match: convert::field_matches(table, &e.matches),
                        priority: if convert::needs_priority(table) {
                            e.priority as i32
                        } else {
                            0
                        },
                        ..Default::default()
                    }),
                    config: rates.map(meter_config),
                    counter_data: Some(meter_counter_data(marked)),
                })),
            });
        }
    }
    if want.table_id != 0
        && !schema
            .info
            .direct_meters
            .iter()
            .any(|dm| dm.direct_table_id == want.table_id)
    {
        return Err(Status::not_found(format!(
            "direct_meter_entry.table_entry.table_id {:#x}: no table with a direct meter",
            want.table_id
        )));
    }
    Ok(())
}

fn read_one<T: Target>(
    t: &T,
    schema: &Schema,
    side: &ServerSide,
    entity: &v1::Entity,
    out: &mut Vec<v1::Entity>,
) -> Result<(), Status> {
    use v1::entity::Entity as En;
    let Some(e) = &entity.entity else {
        return Err(bad("entities: an entity with nothing set"));
    };
    match e {
        En::MeterEntry(m) => read_meters(t, schema, m, out),
        En::DirectMeterEntry(d) => read_direct_meters(t, schema, d, out),
        En::DigestEntry(d) => {
            if d.digest_id != 0 && !matches!(schema.entity(d.digest_id), Some(Entity::Digest(_))) {
                return Err(Status::not_found(format!(
                    "digest_entry.digest_id {:#x}: no such digest",
                    d.digest_id
                )));
            }
            for e in side
                .digest_entries
                .iter()
                .filter(|e| d.digest_id == 0 || e.digest_id == d.digest_id)
            {
                out.push(v1::Entity {
                    entity: Some(En::DigestEntry(*e)),
                });
            }
            Ok(())
        }
        En::TableEntry(want) => {
            if want.is_default_action {
                if !want.r#match.is_empty() {
                    return Err(bad("table_entry: a default entry has no match fields"));
                }
                if want.table_id == 0 {
                    for table in &schema.info.tables {
                        default_entry(t, schema, table, out)?;
                    }
                    return Ok(());
                }
                let Some(table) = schema.table(want.table_id) else {
                    return Err(Status::not_found(format!(
                        "table_entry.table_id {:#x}: no such table",
                        want.table_id
                    )));
                };
                return default_entry(t, schema, table, out);
            }
            if want.table_id == 0 {
                for table in &schema.info.tables {
                    table_entries(t, schema, table, want, want.counter_data.is_some(), out)?;
                }
                return Ok(());
            }
            let Some(table) = schema.table(want.table_id) else {
                return Err(Status::not_found(format!(
                    "table_entry.table_id {:#x}: no such table",
                    want.table_id
                )));
            };
            table_entries(t, schema, table, want, want.counter_data.is_some(), out)
        }
        En::DirectCounterEntry(d) => {
            let want = d.table_entry.clone().unwrap_or_default();
            let tables: Vec<&cfg::Table> = if want.table_id == 0 {
                schema
                    .info
                    .direct_counters
                    .iter()
                    .filter_map(|c| schema.table(c.direct_table_id))
                    .collect()
            } else {
                vec![schema.table(want.table_id).ok_or_else(|| {
                    Status::not_found(format!(
                        "direct_counter_entry.table_entry.table_id {:#x}: no such table",
                        want.table_id
                    ))
                })?]
            };
            let mut rows = Vec::new();
            for table in tables {
                table_entries(t, schema, table, &want, true, &mut rows)?;
            }
            for r in rows {
                if let Some(En::TableEntry(mut te)) = r.entity {
                    let data = te.counter_data.take();
                    te.action = None;
                    out.push(v1::Entity {
                        entity: Some(En::DirectCounterEntry(v1::DirectCounterEntry {
                            table_entry: Some(te),
                            data,
                        })),
                    });
                }
            }
            Ok(())
        }
        En::CounterEntry(c) => {
            let ids: Vec<usize> = if c.counter_id == 0 {
                (0..schema.info.counters.len()).collect()
            } else {
                match schema.entity(c.counter_id) {
                    Some(Entity::Counter(i)) => vec![*i],
                    _ => {
                        return Err(Status::not_found(format!(
                            "counter_entry.counter_id {:#x}: no such counter",
                            c.counter_id
                        )))
                    }
                }
            };
            for i in ids {
                let ctr = &schema.info.counters[i];
                let name = name_of(&ctr.preamble);
                let cells: Vec<u64> = match &c.index {
                    Some(ix) if ix.index < 0 || ix.index >= ctr.size => {
                        return Err(Status::out_of_range(format!(
                            "counter {name}: index {} outside 0..{}",
                            ix.index, ctr.size
                        )))
                    }
                    Some(ix) => vec![ix.index as u64],
                    None => (0..ctr.size.max(0) as u64).collect(),
                };
                for ix in cells {
                    let cell = t.counter_read(name, ix).map_err(|e| status_of(&e))?;
                    out.push(v1::Entity {
                        entity: Some(En::CounterEntry(v1::CounterEntry {
                            counter_id: crate::p4info::id_of(&ctr.preamble),
                            index: Some(v1::Index { index: ix as i64 }),
                            data: Some(counter_data(cell)),
                        })),
                    });
                }
            }
            Ok(())
        }
        En::RegisterEntry(r) => {
            let ids: Vec<usize> = if r.register_id == 0 {
                (0..schema.info.registers.len()).collect()
            } else {
                match schema.entity(r.register_id) {
                    Some(Entity::Register(i)) => vec![*i],
                    _ => {
                        return Err(Status::not_found(format!(
                            "register_entry.register_id {:#x}: no such register",
                            r.register_id
                        )))
                    }
                }
            };
            for i in ids {
                let reg = &schema.info.registers[i];
                let name = name_of(&reg.preamble);
                let cells: Vec<u64> = match &r.index {
                    Some(ix) if ix.index < 0 || ix.index >= i64::from(reg.size) => {
                        return Err(Status::out_of_range(format!(
                            "register {name}: index {} outside 0..{}",
                            ix.index, reg.size
                        )))
                    }
                    Some(ix) => vec![ix.index as u64],
                    None => (0..reg.size.max(0) as u64).collect(),
                };
                for ix in cells {
                    let v = t.register_read(name, ix).map_err(|e| status_of(&e))?;
                    out.push(v1::Entity {
                        entity: Some(En::RegisterEntry(v1::RegisterEntry {
                            register_id: crate::p4info::id_of(&reg.preamble),
                            index: Some(v1::Index { index: ix as i64 }),
                            data: Some(v1::P4Data {
                                data: Some(v1::p4_data::Data::Bitstring(convert::to_bytes(v))),
                            }),
                        })),
                    });
                }
            }
            Ok(())
        }
        En::ExternEntry(x) if x.extern_type_id == STATS_TYPE_ID => {
            let mut doc = serde_json::json!({ "digests": side.digests });
            if let Some(m) = doc.as_object_mut() {
                m.insert(t.stats_key().into(), t.stats_json());
            }
            if let (Some(m), Some(c)) = (doc.as_object_mut(), t.cpu_port_json()) {
                m.insert("cpu_port".into(), c);
            }
            out.push(v1::Entity {
                entity: Some(En::ExternEntry(v1::ExternEntry {
                    extern_type_id: STATS_TYPE_ID,
                    extern_id: 0,
                    entry: Some(prost_types::Any {
                        type_url: STATS_TYPE_URL.to_owned(),
                        value: serde_json::to_vec(&doc).unwrap_or_default(),
                    }),
                })),
            });
            Ok(())
        }
        En::PacketReplicationEngineEntry(p) => {
            read_pre(t, p, out);
            Ok(())
        }
        other => Err(Status::unimplemented(format!(
            "reading {} entities is not supported",
            entity_kind(other)
        ))),
    }
}

fn replicas(rs: &[netsparse_engine::Replica]) -> Vec<v1::Replica> {
    rs.iter()
        .map(|r| v1::Replica {
            port_kind: Some(v1::replica::PortKind::EgressPort(r.port)),
            instance: u32::from(r.rid),
        })
        .collect()
}

/// Multicast groups or clone sessions: every one with id 0, else the one
/// named (nothing if it does not exist).
fn read_pre<T: Target>(t: &T, p: &v1::PacketReplicationEngineEntry, out: &mut Vec<v1::Entity>) {
    use v1::entity::Entity as En;
    use v1::packet_replication_engine_entry::Type as P;
    let wrap = |ty: P| v1::Entity {
        entity: Some(En::PacketReplicationEngineEntry(
            v1::PacketReplicationEngineEntry { r#type: Some(ty) },
        )),
    };
    match &p.r#type {
        Some(P::MulticastGroupEntry(want)) => {
            for (g, rs) in t.mc_groups() {
                let id = u32::from(g);
                if want.multicast_group_id == 0 || want.multicast_group_id == id {
                    out.push(wrap(P::MulticastGroupEntry(v1::MulticastGroupEntry {
                        multicast_group_id: id,
                        replicas: replicas(&rs),
                        metadata: Vec::new(),
                    })));
                }
            }
        }
        Some(P::CloneSessionEntry(want)) => {
            for (s, rs) in t.mirroring_sessions() {
                if want.session_id == 0 || want.session_id == s {
                    out.push(wrap(P::CloneSessionEntry(v1::CloneSessionEntry {
                        session_id: s,
                        replicas: replicas(&rs),
                        ..Default::default()
                    })));
                }
            }
        }
        // No type: every group and every session.
        None => {
            for ty in [
                P::MulticastGroupEntry(v1::MulticastGroupEntry::default()),
                P::CloneSessionEntry(v1::CloneSessionEntry::default()),
            ] {
                read_pre(
                    t,
                    &v1::PacketReplicationEngineEntry { r#type: Some(ty) },
                    out,
                );
            }
        }
    }
}

/// Serve a Read (device already checked).
pub(crate) async fn read<T: Target>(
    shared: &Shared<T>,
    entities: Vec<v1::Entity>,
) -> Result<Vec<v1::Entity>, Status> {
    let schema = std::sync::Arc::clone(&shared.pipeline().schema);
    let side = {
        let d = shared
            .digests
            .lock()
            .map_err(|_| Status::internal("poisoned"))?;
        ServerSide {
            digests: d.counters,
            digest_entries: d.read(0),
        }
    };
    shared
        .poster
        .run(move |t: &mut T| {
            let mut out = Vec::new();
            for e in &entities {
                read_one(&*t, &schema, &side, e, &mut out)?;
            }
            Ok(out)
        })
        .await
        .map_err(|_| gone())?
}
