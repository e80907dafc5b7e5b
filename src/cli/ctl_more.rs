//! The `netsparse ctl` commands beyond tables, counters and registers:
//! meters (indexed and direct, BMv2 simple_switch_CLI's rate syntax),
//! the packet replication engine (multicast groups, mirroring sessions)
//! and `digest_watch`, which turns a digest on and prints the lists the
//! switch sends, acknowledging each. Everything goes through P4Runtime.

use std::time::{Duration, Instant};

use netsparse_p4rt::client::{update, Client, ClientError};
use netsparse_p4rt::p4info::{id_of, name_of, Entity};
use netsparse_p4rt::proto::v1;
use netsparse_p4rt::tonic::Code;

use super::ctl::{entity, parse_index, show, usage, write_one};

/// `CIR:CBS` in BMv2's units (rate per microsecond, burst in units) as
/// P4Runtime's (rate per second).
fn rate(s: &str) -> Result<(i64, i64), ClientError> {
    let bad = || {
        ClientError::Input(format!(
            "bad rate `{s}` (RATE:BURST, RATE in units per microsecond as BMv2's CLI, e.g. 0.5:10)"
        ))
    };
    let (r, b) = s.split_once(':').ok_or_else(bad)?;
    let r: f64 = r.parse().map_err(|_| bad())?;
    let b: i64 = b.parse().map_err(|_| bad())?;
    if !r.is_finite() || r < 0.0 || b < 0 {
        return Err(bad());
    }
    Ok(((r * 1e6).round() as i64, b))
}

fn meter_config(c: &str, p: &str) -> Result<v1::MeterConfig, ClientError> {
    let (cir, cburst) = rate(c)?;
    let (pir, pburst) = rate(p)?;
    Ok(v1::MeterConfig {
        cir,
        cburst,
        pir,
        pburst,
    })
}

fn show_config(c: &Option<v1::MeterConfig>) -> String {
    match c {
        None => "not configured (every packet green)".to_owned(),
        Some(c) => format!(
            "CIR {}:{} PIR {}:{} (per microsecond)",
            c.cir as f64 / 1e6,
            c.cburst,
            c.pir as f64 / 1e6,
            c.pburst
        ),
    }
}

/// Replicas `PORT[:RID]`.
fn replicas(words: &[&str]) -> Result<Vec<v1::Replica>, ClientError> {
    words
        .iter()
        .map(|w| {
            let (p, r) = w.split_once(':').unwrap_or((w, "0"));
            let bad = || ClientError::Input(format!("bad replica `{w}` (PORT or PORT:RID)"));
            Ok(v1::Replica {
                port_kind: Some(v1::replica::PortKind::EgressPort(
                    p.parse().map_err(|_| bad())?,
                )),
                instance: r.parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

fn pre(t: v1::packet_replication_engine_entry::Type) -> v1::entity::Entity {
    v1::entity::Entity::PacketReplicationEngineEntry(v1::PacketReplicationEngineEntry {
        r#type: Some(t),
    })
}

/// INSERT, or MODIFY when it exists.
async fn upsert(c: &mut Client, election: u128, e: v1::entity::Entity) -> Result<(), ClientError> {
    match write_one(c, election, update(v1::update::Type::Insert, e.clone())).await {
        Err(ClientError::Rpc(s))
            if netsparse_p4rt::server::update_errors(&s)
                .first()
                .is_some_and(|e| e.canonical_code == Code::AlreadyExists as i32) =>
        {
            write_one(c, election, update(v1::update::Type::Modify, e)).await
        }
        other => other,
    }
}

/// Run one of this file's commands; `None` if `cmd` is not one.
pub async fn command(
    c: &mut Client,
    cmd: &str,
    rest: &[&str],
    election: u128,
) -> Option<Result<(), ClientError>> {
    Some(match cmd {
        "meter_array_set_rates" | "meter_set_rates" | "meter_reset" => {
            meter_write(c, cmd, rest, election).await
        }
        "meter_get_rates" => meter_read(c, rest).await,
        "mc_group_set" | "mc_group_delete" | "mirroring_add" | "mirroring_delete" => {
            pre_write(c, cmd, rest, election).await
        }
        "mc_dump" | "mirroring_dump" => pre_dump(c, cmd, rest).await,
        "digest_watch" => digest_watch(c, rest, election).await,
        _ => return None,
    })
}

async fn meter_write(
    c: &mut Client,
    cmd: &str,
    rest: &[&str],
    election: u128,
) -> Result<(), ClientError> {
    use v1::entity::Entity as En;
    if let (Some(name), "meter_set_rates") = (rest.first(), cmd) {
        if c.table(name).is_ok() {
            return direct_meter_write(c, name, &rest[1..], election).await;
        }
    }
    let (name, index, config) = match (cmd, rest) {
        ("meter_array_set_rates", [n, cr, pr]) => (*n, None, Some(meter_config(cr, pr)?)),
        ("meter_set_rates", [n, i, cr, pr]) => {
            (*n, Some(parse_index(i)?), Some(meter_config(cr, pr)?))
        }
        ("meter_reset", [n]) => (*n, None, None),
        ("meter_reset", [n, i]) => (*n, Some(parse_index(i)?), None),
        ("meter_array_set_rates", _) => {
            return Err(usage("meter_array_set_rates METER CIR:CBS PIR:PBS"))
        }
        ("meter_set_rates", _) => {
            return Err(usage(
                "meter_set_rates METER INDEX CIR:CBS PIR:PBS | meter_set_rates TABLE MATCH... [PRIORITY] CIR:CBS PIR:PBS",
            ))
        }
        _ => return Err(usage("meter_reset METER [INDEX]")),
    };
    let (id, kind) = c.extern_id(name)?;
    if !matches!(kind, Entity::Meter(_)) {
        return Err(ClientError::Input(format!(
            "{name} is not an indexed meter (direct meters: meter_set_rates TABLE MATCH... CIR:CBS PIR:PBS)"
        )));
    }
    let u = update(
        v1::update::Type::Modify,
        En::MeterEntry(v1::MeterEntry {
            meter_id: id,
            index: index.map(|index| v1::Index { index }),
            config,
            counter_data: None,
        }),
    );
    write_one(c, election, u).await?;
    println!("ok");
    Ok(())
}

/// `meter_set_rates TABLE MATCH... [PRIORITY] CIR:CBS PIR:PBS`: the direct
/// meter of the entry found by its match.
async fn direct_meter_write(
    c: &mut Client,
    name: &str,
    rest: &[&str],
    election: u128,
) -> Result<(), ClientError> {
    use v1::entity::Entity as En;
    let [keys @ .., cr, pr] = rest else {
        return Err(usage(
            "meter_set_rates TABLE MATCH... [PRIORITY] CIR:CBS PIR:PBS",
        ));
    };
    let nkeys = c.table(name)?.match_fields.len();
    let (keys, prio) = match keys.len() {
        n if n == nkeys => (keys, None),
        n if n == nkeys + 1 => (
            &keys[..nkeys],
            Some(
                keys[nkeys]
                    .parse::<i32>()
                    .map_err(|_| ClientError::Input(format!("bad priority `{}`", keys[nkeys])))?,
            ),
        ),
        n => {
            return Err(ClientError::Input(format!(
                "table {name}: {n} match values for {nkeys} keys"
            )))
        }
    };
    let te = c.table_entry(name, keys, None, prio)?;
    let u = update(
        v1::update::Type::Modify,
        En::DirectMeterEntry(v1::DirectMeterEntry {
            table_entry: Some(te),
            config: Some(meter_config(cr, pr)?),
            counter_data: None,
        }),
    );
    write_one(c, election, u).await?;
    println!("ok");
    Ok(())
}

async fn meter_read(c: &mut Client, rest: &[&str]) -> Result<(), ClientError> {
    use v1::entity::Entity as En;
    let (name, index) = match rest {
        [n] => (*n, None),
        [n, i] => (*n, Some(parse_index(i)?)),
        _ => {
            return Err(usage(
                "meter_get_rates METER [INDEX] | meter_get_rates TABLE",
            ))
        }
    };
    let want = if let (Ok(t), None) = (c.table(name), index) {
        En::DirectMeterEntry(v1::DirectMeterEntry {
            table_entry: Some(v1::TableEntry {
                table_id: id_of(&t.preamble),
                ..Default::default()
            }),
            config: None,
            counter_data: None,
        })
    } else {
        let (id, kind) = c.extern_id(name)?;
        if !matches!(kind, Entity::Meter(_)) {
            return Err(ClientError::Input(format!("{name} is not a meter")));
        }
        En::MeterEntry(v1::MeterEntry {
            meter_id: id,
            index: index.map(|index| v1::Index { index }),
            config: None,
            counter_data: None,
        })
    };
    for e in c.read(vec![entity(want)]).await? {
        match e.entity {
            Some(En::MeterEntry(m)) => println!(
                "{name}[{}]: {}{}",
                m.index.map_or(0, |i| i.index),
                show_config(&m.config),
                show_marked(&m.counter_data)
            ),
            Some(En::DirectMeterEntry(d)) => {
                let keys: Vec<String> = d
                    .table_entry
                    .iter()
                    .flat_map(|t| t.r#match.iter())
                    .map(|m| match &m.field_match_type {
                        Some(v1::field_match::FieldMatchType::Exact(x)) => show(&x.value),
                        _ => "…".to_owned(),
                    })
                    .collect();
                println!(
                    "{name} [{}]: {}{}",
                    keys.join(" "),
                    show_config(&d.config),
                    show_marked(&d.counter_data)
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// `; green P pkts/B bytes, yellow …, red …` when the switch reports colour
/// counts.
fn show_marked(d: &Option<v1::MeterCounterData>) -> String {
    let Some(d) = d else {
        return String::new();
    };
    let one = |name: &str, c: &Option<v1::CounterData>| {
        let c = c.unwrap_or_default();
        format!("{name} {} pkts/{} bytes", c.packet_count, c.byte_count)
    };
    format!(
        "; {}, {}, {}",
        one("green", &d.green),
        one("yellow", &d.yellow),
        one("red", &d.red)
    )
}

async fn pre_write(
    c: &mut Client,
    cmd: &str,
    rest: &[&str],
    election: u128,
) -> Result<(), ClientError> {
    use v1::packet_replication_engine_entry::Type as P;
    let num = |s: &str, what: &str| {
        s.parse::<u32>()
            .map_err(|_| ClientError::Input(format!("bad {what} `{s}`")))
    };
    match (cmd, rest) {
        ("mc_group_set", [g, rs @ ..]) if !rs.is_empty() => {
            let e = pre(P::MulticastGroupEntry(v1::MulticastGroupEntry {
                multicast_group_id: num(g, "group")?,
                replicas: replicas(rs)?,
                metadata: Vec::new(),
            }));
            upsert(c, election, e).await?;
        }
        ("mc_group_delete", [g]) => {
            let e = pre(P::MulticastGroupEntry(v1::MulticastGroupEntry {
                multicast_group_id: num(g, "group")?,
                ..Default::default()
            }));
            write_one(c, election, update(v1::update::Type::Delete, e)).await?;
        }
        ("mirroring_add", [s, rs @ ..]) if !rs.is_empty() => {
            let e = pre(P::CloneSessionEntry(v1::CloneSessionEntry {
                session_id: num(s, "session")?,
                replicas: replicas(rs)?,
                ..Default::default()
            }));
            upsert(c, election, e).await?;
        }
        ("mirroring_delete", [s]) => {
            let e = pre(P::CloneSessionEntry(v1::CloneSessionEntry {
                session_id: num(s, "session")?,
                ..Default::default()
            }));
            write_one(c, election, update(v1::update::Type::Delete, e)).await?;
        }
        ("mc_group_set", _) => return Err(usage("mc_group_set GROUP PORT[:RID]...")),
        ("mc_group_delete", _) => return Err(usage("mc_group_delete GROUP")),
        ("mirroring_add", _) => return Err(usage("mirroring_add SESSION PORT[:RID]...")),
        _ => return Err(usage("mirroring_delete SESSION")),
    }
    println!("ok");
    Ok(())
}

async fn pre_dump(c: &mut Client, cmd: &str, rest: &[&str]) -> Result<(), ClientError> {
    use v1::packet_replication_engine_entry::Type as P;
    if !rest.is_empty() {
        return Err(usage(cmd));
    }
    let want = if cmd == "mc_dump" {
        P::MulticastGroupEntry(v1::MulticastGroupEntry::default())
    } else {
        P::CloneSessionEntry(v1::CloneSessionEntry::default())
    };
    let fmt = |rs: &[v1::Replica]| {
        rs.iter()
            .map(|r| match &r.port_kind {
                Some(v1::replica::PortKind::EgressPort(p)) => format!("{p}:{}", r.instance),
                _ => format!("?:{}", r.instance),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let got = c.read(vec![entity(pre(want))]).await?;
    for e in &got {
        if let Some(v1::entity::Entity::PacketReplicationEngineEntry(p)) = &e.entity {
            match &p.r#type {
                Some(P::MulticastGroupEntry(g)) => {
                    println!("group {}: {}", g.multicast_group_id, fmt(&g.replicas))
                }
                Some(P::CloneSessionEntry(s)) => {
                    println!("session {}: {}", s.session_id, fmt(&s.replicas))
                }
                None => {}
            }
        }
    }
    println!("{} entries", got.len());
    Ok(())
}

/// `digest_watch DIGEST [SECONDS]`: turn the digest on (1 ms batching,
/// lists of up to 64, acks expected within 1 s), print every list's data
/// for SECONDS (default 10) and acknowledge it.
async fn digest_watch(c: &mut Client, rest: &[&str], election: u128) -> Result<(), ClientError> {
    let (name, secs) = match rest {
        [n] => (*n, 10.0),
        [n, s] => (
            *n,
            s.parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s > 0.0)
                .ok_or_else(|| ClientError::Input(format!("bad duration `{s}` (seconds)")))?,
        ),
        _ => return Err(usage("digest_watch DIGEST [SECONDS]")),
    };
    let info = &c.schema.info;
    let Some(d) = info.digests.iter().find(|d| {
        d.preamble
            .as_ref()
            .is_some_and(|p| p.name == name || p.alias == name)
    }) else {
        let names: Vec<&str> = info.digests.iter().map(|d| name_of(&d.preamble)).collect();
        return Err(ClientError::Input(format!(
            "no digest `{name}` (the program sends: {})",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let did = id_of(&d.preamble);
    let members: Vec<String> = info
        .type_info
        .as_ref()
        .and_then(|t| t.structs.get(name_of(&d.preamble)))
        .map(|s| s.members.iter().map(|m| m.name.clone()).collect())
        .unwrap_or_default();
    let e = v1::entity::Entity::DigestEntry(v1::DigestEntry {
        digest_id: did,
        config: Some(v1::digest_entry::Config {
            max_timeout_ns: 1_000_000,
            max_list_size: 64,
            ack_timeout_ns: 1_000_000_000,
        }),
    });
    upsert(c, election, e).await?;
    eprintln!("watching digest {name} for {secs} s");
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut lists = 0u64;
    let mut digests = 0u64;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let Some(msg) = c.next_stream_message(left).await else {
            continue;
        };
        let msg = msg.map_err(ClientError::Rpc)?;
        let Some(v1::stream_message_response::Update::Digest(l)) = msg.update else {
            continue;
        };
        lists += 1;
        for d in &l.data {
            digests += 1;
            let Some(v1::p4_data::Data::Struct(s)) = &d.data else {
                continue;
            };
            let fields: Vec<String> = s
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let v = match &m.data {
                        Some(v1::p4_data::Data::Bitstring(b)) => show(b),
                        _ => "?".to_owned(),
                    };
                    match members.get(i) {
                        Some(n) => format!("{n}={v}"),
                        None => v,
                    }
                })
                .collect();
            println!("{name} list {}: {}", l.list_id, fields.join(" "));
        }
        c.digest_ack(l.digest_id, l.list_id).await?;
    }
    eprintln!("{digests} digests in {lists} lists");
    Ok(())
}
