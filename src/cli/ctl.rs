//! `netsparse ctl ADDR <command>`: a simple_switch_CLI-like shell over
//! P4Runtime. Names resolve through the P4Info the switch returns from
//! GetForwardingPipelineConfig; writes arbitrate first (election id
//! `--election-id`, so a controller with a higher id keeps control).

use std::process::ExitCode;
use std::time::Duration;

use netsparse_p4rt::client::{update, Client, ClientError};
use netsparse_p4rt::p4info::{id_of, name_of, Entity};
use netsparse_p4rt::proto::v1;
use netsparse_p4rt::server::update_errors;
use netsparse_p4rt::tonic::{Code, Status};

/// Arguments of `netsparse ctl`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Commands (BMv2 simple_switch_CLI's syntax; values: 10, 0x0a, 10.0.1.1,\n\
00:00:00:00:01:01, 10.0.1.0/24 (LPM), v&&&mask (ternary), lo->hi (range), * (any)):\n\
  table_add TABLE ACTION MATCH... => PARAM... [PRIORITY]\n\
  table_modify TABLE ACTION MATCH... => PARAM... [PRIORITY]   (the entry is found by its match)\n\
  table_delete TABLE MATCH... [PRIORITY]\n\
  table_set_default TABLE ACTION [PARAM...]\n\
  table_dump TABLE | table_dump (every table)\n\
  counter_read NAME [INDEX]      indexed counters; a table name reads its direct counter\n\
  counter_reset NAME\n\
  register_read NAME [INDEX]\n\
  register_write NAME INDEX VALUE\n\
  meter_array_set_rates METER CIR:CBS PIR:PBS   every cell (rates per microsecond, as BMv2)\n\
  meter_set_rates METER INDEX CIR:CBS PIR:PBS   one cell\n\
  meter_set_rates TABLE MATCH... [PRIORITY] CIR:CBS PIR:PBS   an entry's direct meter\n\
  meter_get_rates METER [INDEX] | meter_get_rates TABLE\n\
  meter_reset METER [INDEX]      back to unconfigured (every packet green)\n\
  mc_group_set GROUP PORT[:RID]...   create or replace a multicast group\n\
  mc_group_delete GROUP | mc_dump\n\
  mirroring_add SESSION PORT[:RID]... | mirroring_delete SESSION | mirroring_dump\n\
  digest_watch DIGEST [SECONDS]  turn a digest on, print and acknowledge its lists (default 10 s)\n\
  cache_invalidate [NAME]        NetSparse Property Cache(s)\n\
  filter_clear                   a NetSparse NIC's Idx Filter\n\
  stats                          the switch counters (the --stats-json document)\n\
  p4info                         the running pipeline's P4Info (text format)\n\
\n\
Priorities follow P4Runtime: higher wins (BMv2's CLI has lower wins).\n\
Exit status: 0 ok; 1 the switch refused the request; 2 usage or connection errors.")]
pub struct Args {
    /// The switch's P4Runtime address (`127.0.0.1:9559`).
    pub addr: String,
    /// The command and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub command: Vec<String>,
    /// P4Runtime device id.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub device_id: u64,
    /// Election id used for writes.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub election_id: u128,
    /// Give up after this many seconds per request.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
}

/// Run `netsparse ctl`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let timeout = Duration::from_secs_f64(args.timeout.clamp(0.1, 3600.0));
    let res = rt.block_on(async {
        let mut c = Client::connect(&args.addr, args.device_id, timeout).await?;
        let words: Vec<&str> = args.command.iter().map(String::as_str).collect();
        if words.first() == Some(&"digest_watch") {
            // Runs for its own duration; each request inside is bounded.
            return command(&mut c, &words, args.election_id).await;
        }
        tokio::time::timeout(timeout, command(&mut c, &words, args.election_id))
            .await
            .map_err(|_| ClientError::Timeout(timeout))?
    });
    Ok(match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(ClientError::Rpc(s)) => {
            report(&s);
            ExitCode::from(1)
        }
        Err(e @ (ClientError::Connect { .. } | ClientError::Timeout(_))) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    })
}

fn report(s: &Status) {
    let errs = update_errors(s);
    if errs.is_empty() {
        eprintln!("error: {:?}: {}", s.code(), s.message());
    } else {
        for e in errs.iter().filter(|e| e.canonical_code != 0) {
            eprintln!("error: {:?}: {}", Code::from(e.canonical_code), e.message);
        }
    }
}

pub(crate) fn usage(msg: &str) -> ClientError {
    ClientError::Input(format!("usage: {msg}"))
}

/// An entry's words: match values, action parameters, priority.
type EntryWords<'a> = (Vec<&'a str>, Vec<&'a str>, Option<i32>);

/// Split `MATCH... => PARAM... [PRIORITY]`.
fn split_entry<'a>(
    c: &Client,
    table: &str,
    action: &str,
    rest: &[&'a str],
) -> Result<EntryWords<'a>, ClientError> {
    let arrow = rest.iter().position(|w| *w == "=>");
    let (keys, after) = match arrow {
        Some(i) => (rest[..i].to_vec(), rest[i + 1..].to_vec()),
        None => (rest.to_vec(), Vec::new()),
    };
    let t = c.table(table)?;
    let nparams = t
        .action_refs
        .iter()
        .filter_map(|r| c.schema.action(r.id))
        .find(|a| {
            a.preamble
                .as_ref()
                .is_some_and(|p| p.name == action || p.alias == action)
        })
        .map_or(after.len(), |a| a.params.len());
    let (params, prio) = if after.len() == nparams + 1 {
        let p = after[nparams]
            .parse::<i32>()
            .map_err(|_| ClientError::Input(format!("bad priority `{}`", after[nparams])))?;
        (after[..nparams].to_vec(), Some(p))
    } else {
        (after, None)
    };
    Ok((keys, params, prio))
}

pub(crate) async fn write_one(
    c: &mut Client,
    election: u128,
    u: v1::Update,
) -> Result<(), ClientError> {
    if c.election.is_none() {
        let code = c.arbitrate(election).await?;
        if code != Code::Ok {
            return Err(ClientError::Rpc(Status::permission_denied(format!(
                "election id {election} is not primary (another controller holds a higher one; see --election-id)"
            ))));
        }
    }
    c.write(vec![u]).await.map_err(ClientError::Rpc)
}

pub(crate) fn show(v: &[u8]) -> String {
    let mut n: u128 = 0;
    for b in v.iter().rev().take(16).rev() {
        n = (n << 8) | u128::from(*b);
    }
    format!("{n:#x}")
}

fn print_entry(c: &Client, te: &v1::TableEntry) {
    use v1::field_match::FieldMatchType as F;
    let Some(t) = c.schema.table(te.table_id) else {
        return;
    };
    let keys: Vec<String> = t
        .match_fields
        .iter()
        .map(|mf| {
            let m = te.r#match.iter().find(|m| m.field_id == mf.id);
            let v = match m.and_then(|m| m.field_match_type.as_ref()) {
                None => "*".to_owned(),
                Some(F::Exact(e)) => show(&e.value),
                Some(F::Optional(o)) => show(&o.value),
                Some(F::Lpm(l)) => format!("{}/{}", show(&l.value), l.prefix_len),
                Some(F::Ternary(x)) => format!("{}&&&{}", show(&x.value), show(&x.mask)),
                Some(F::Range(r)) => format!("{}->{}", show(&r.low), show(&r.high)),
                Some(F::Other(_)) => "?".to_owned(),
            };
            format!("{}={v}", mf.name)
        })
        .collect();
    let action = match te.action.as_ref().and_then(|a| a.r#type.as_ref()) {
        Some(v1::table_action::Type::Action(a)) => {
            let ad = c.schema.action(a.action_id);
            let params: Vec<String> = a
                .params
                .iter()
                .map(|p| {
                    let n = ad
                        .and_then(|ad| ad.params.iter().find(|d| d.id == p.param_id))
                        .map_or_else(|| p.param_id.to_string(), |d| d.name.clone());
                    format!("{n}={}", show(&p.value))
                })
                .collect();
            format!(
                "{}({})",
                ad.map_or("?", |ad| name_of(&ad.preamble)),
                params.join(", ")
            )
        }
        _ => "?".to_owned(),
    };
    let prio = if te.priority != 0 {
        format!(" priority {}", te.priority)
    } else {
        String::new()
    };
    let ctr = te
        .counter_data
        .as_ref()
        .map(|d| format!(" [{} packets, {} bytes]", d.packet_count, d.byte_count))
        .unwrap_or_default();
    println!(
        "{}: {} => {action}{prio}{ctr}",
        name_of(&t.preamble),
        keys.join(" ")
    );
}

pub(crate) fn entity(e: v1::entity::Entity) -> v1::Entity {
    v1::Entity { entity: Some(e) }
}

pub(crate) fn parse_index(s: &str) -> Result<i64, ClientError> {
    s.parse::<i64>()
        .map_err(|_| ClientError::Input(format!("bad index `{s}`")))
}

async fn command(c: &mut Client, w: &[&str], election: u128) -> Result<(), ClientError> {
    use v1::entity::Entity as En;
    use v1::update::Type;
    let Some((&cmd, rest)) = w.split_first() else {
        return Err(usage("netsparse ctl ADDR COMMAND [ARGS...]"));
    };
    match cmd {
        "table_add" | "table_modify" => {
            let [table, action, rest @ ..] = rest else {
                return Err(usage(
                    "table_add TABLE ACTION MATCH... => PARAM... [PRIORITY]",
                ));
            };
            let (keys, params, prio) = split_entry(c, table, action, rest)?;
            let e = c.table_entry(table, &keys, Some((action, &params)), prio)?;
            let ty = if cmd == "table_add" {
                Type::Insert
            } else {
                Type::Modify
            };
            write_one(c, election, update(ty, En::TableEntry(e))).await?;
            println!("ok");
        }
        "table_delete" => {
            let [table, keys @ ..] = rest else {
                return Err(usage("table_delete TABLE MATCH... [PRIORITY]"));
            };
            let nkeys = c.table(table)?.match_fields.len();
            let (keys, prio) = if keys.len() == nkeys + 1 {
                let p = keys[nkeys]
                    .parse::<i32>()
                    .map_err(|_| ClientError::Input(format!("bad priority `{}`", keys[nkeys])))?;
                (&keys[..nkeys], Some(p))
            } else {
                (keys, None)
            };
            let e = c.table_entry(table, keys, None, prio)?;
            write_one(c, election, update(Type::Delete, En::TableEntry(e))).await?;
            println!("ok");
        }
        "table_set_default" => {
            let [table, action, params @ ..] = rest else {
                return Err(usage("table_set_default TABLE ACTION [PARAM...]"));
            };
            let nkeys = c.table(table)?.match_fields.len();
            let any = vec!["*"; nkeys];
            let mut e = c.table_entry(table, &any, Some((action, params)), None)?;
            e.r#match.clear();
            e.is_default_action = true;
            write_one(c, election, update(Type::Modify, En::TableEntry(e))).await?;
            println!("ok");
        }
        "table_dump" => {
            let table_id = match rest {
                [] => 0,
                [t] => id_of(&c.table(t)?.preamble),
                _ => return Err(usage("table_dump [TABLE]")),
            };
            let got = c
                .read(vec![entity(En::TableEntry(v1::TableEntry {
                    table_id,
                    counter_data: Some(v1::CounterData::default()),
                    ..Default::default()
                }))])
                .await?;
            for e in &got {
                if let Some(En::TableEntry(te)) = &e.entity {
                    print_entry(c, te);
                }
            }
            println!("{} entries", got.len());
        }
        "counter_read" | "register_read" => {
            let (name, index) = match rest {
                [n] => (*n, None),
                [n, i] => (*n, Some(parse_index(i)?)),
                _ => return Err(usage(&format!("{cmd} NAME [INDEX]"))),
            };
            if cmd == "counter_read" {
                if let Ok(t) = c.table(name) {
                    let te = v1::TableEntry {
                        table_id: id_of(&t.preamble),
                        ..Default::default()
                    };
                    let got = c
                        .read(vec![entity(En::DirectCounterEntry(
                            v1::DirectCounterEntry {
                                table_entry: Some(te),
                                data: None,
                            },
                        ))])
                        .await?;
                    for e in got {
                        if let Some(En::DirectCounterEntry(d)) = e.entity {
                            if let Some(mut te) = d.table_entry {
                                te.counter_data = d.data;
                                print_entry(c, &te);
                            }
                        }
                    }
                    return Ok(());
                }
            }
            let (id, kind) = c.extern_id(name)?;
            let req = match (cmd, kind) {
                ("counter_read", Entity::Counter(_)) => En::CounterEntry(v1::CounterEntry {
                    counter_id: id,
                    index: index.map(|index| v1::Index { index }),
                    data: None,
                }),
                ("register_read", Entity::Register(_)) => En::RegisterEntry(v1::RegisterEntry {
                    register_id: id,
                    index: index.map(|index| v1::Index { index }),
                    data: None,
                }),
                _ => {
                    return Err(ClientError::Input(format!(
                        "{name} is not a {}",
                        &cmd[..cmd.len() - 5]
                    )))
                }
            };
            for e in c.read(vec![entity(req)]).await? {
                match e.entity {
                    Some(En::CounterEntry(ce)) => {
                        let d = ce.data.unwrap_or_default();
                        println!(
                            "{name}[{}] = {} packets, {} bytes",
                            ce.index.map_or(0, |i| i.index),
                            d.packet_count,
                            d.byte_count
                        );
                    }
                    Some(En::RegisterEntry(r)) => {
                        let v = match r.data.and_then(|d| d.data) {
                            Some(v1::p4_data::Data::Bitstring(b)) => show(&b),
                            _ => "?".to_owned(),
                        };
                        println!("{name}[{}] = {v}", r.index.map_or(0, |i| i.index));
                    }
                    _ => {}
                }
            }
        }
        "counter_reset" => {
            let [name] = rest else {
                return Err(usage("counter_reset NAME"));
            };
            let (id, kind) = c.extern_id(name)?;
            if !matches!(kind, Entity::Counter(_)) {
                return Err(ClientError::Input(format!("{name} is not a counter")));
            }
            let u = update(
                Type::Modify,
                En::CounterEntry(v1::CounterEntry {
                    counter_id: id,
                    index: None,
                    data: None,
                }),
            );
            write_one(c, election, u).await?;
            println!("ok");
        }
        "register_write" => {
            let [name, index, value] = rest else {
                return Err(usage("register_write NAME INDEX VALUE"));
            };
            let (id, kind) = c.extern_id(name)?;
            let Entity::Register(i) = kind else {
                return Err(ClientError::Input(format!("{name} is not a register")));
            };
            let reg = &c.schema.info.registers[*i];
            let width = match reg.type_spec.as_ref().and_then(|t| t.type_spec.as_ref()) {
                Some(netsparse_p4rt::proto::cfg::p4_data_type_spec::TypeSpec::Bitstring(b)) => {
                    match &b.type_spec {
                        Some(
                            netsparse_p4rt::proto::cfg::p4_bitstring_like_type_spec::TypeSpec::Bit(
                                b,
                            ),
                        ) => b.bitwidth,
                        _ => 128,
                    }
                }
                _ => 128,
            };
            let v = netsparse_engine::control::values::parse_value(value, width as u16)
                .map_err(|e| ClientError::Input(format!("register {name}: {e}")))?;
            let u = update(
                Type::Modify,
                En::RegisterEntry(v1::RegisterEntry {
                    register_id: id,
                    index: Some(v1::Index {
                        index: parse_index(index)?,
                    }),
                    data: Some(v1::P4Data {
                        data: Some(v1::p4_data::Data::Bitstring(
                            netsparse_p4rt::convert::to_bytes(v),
                        )),
                    }),
                }),
            );
            write_one(c, election, u).await?;
            println!("ok");
        }
        "cache_invalidate" => {
            let caches: Vec<u32> = match rest {
                [] => c.property_caches(),
                [n] => vec![c.extern_id(n)?.0],
                _ => return Err(usage("cache_invalidate [NAME]")),
            };
            if caches.is_empty() {
                return Err(ClientError::Input(
                    "the running program has no Property Cache".into(),
                ));
            }
            c.invalidate_caches(&caches, election).await?;
            println!("ok");
        }
        "filter_clear" => {
            if !rest.is_empty() {
                return Err(usage("filter_clear"));
            }
            let Some(id) = c.idx_filter() else {
                return Err(ClientError::Input(
                    "the running program has no Idx Filter (not a NetSparse NIC)".into(),
                ));
            };
            c.clear_idx_filter(id, election).await?;
            println!("ok");
        }
        "stats" => {
            if !rest.is_empty() {
                return Err(usage("stats"));
            }
            let v = c.stats_json().await?;
            println!("{}", serde_json::to_string(&v).unwrap_or_default());
        }
        "p4info" => {
            print!("{}", netsparse_p4rt::textfmt::to_text(&c.schema.info));
        }
        other => {
            return super::ctl_more::command(c, other, rest, election)
                .await
                .unwrap_or_else(|| {
                    Err(ClientError::Input(format!(
                        "unknown command `{other}` (see netsparse ctl --help)"
                    )))
                })
        }
    }
    Ok(())
}
