//! The p4lang tutorials' runtime JSON (`sX-runtime.json`):
//!
//! ```json
//! { "target": "bmv2", "p4info": "...", "bmv2_json": "...",
//!   "table_entries": [
//!     { "table": "MyIngress.ipv4_lpm", "default_action": true,
//!       "action_name": "MyIngress.drop", "action_params": {} },
//!     { "table": "MyIngress.ipv4_lpm",
//!       "match": { "hdr.ipv4.dstAddr": ["10.0.1.1", 32] },
//!       "action_name": "MyIngress.ipv4_forward",
//!       "action_params": { "dstAddr": "08:00:00:00:01:11", "port": 1 } } ],
//!   "multicast_group_entries": [
//!     { "multicast_group_id": 1, "replicas": [ { "egress_port": 1, "instance": 1 } ] } ],
//!   "clone_session_entries": [
//!     { "clone_session_id": 100, "replicas": [ { "egress_port": 3, "instance": 1 } ] } ] }
//! ```
//!
//! Match values by key kind: exact and optional `v`; lpm `[v, prefix_len]`;
//! ternary `[v, mask]`; range `[lo, hi]`. A value is a JSON number or a
//! string in the syntax of [`super::values`]. Keys left out of `match` are
//! wildcards (P4Runtime "don't care"); leaving out an exact key is an error.
//! `priority` follows P4Runtime (higher wins). `target`, `p4info` and
//! `bmv2_json` are ignored, as is a clone session's `packet_length_bytes`.
//! The first error stops loading and names `file: table_entries[i]`.

use netsparse_externs::artifact::{KeyMatch, MatchKind};
use serde_json::Value;

use super::values::parse_value;
use super::ControlPlane;
use super::Replica;
use crate::error::{ControlPlaneError, EntriesError};

/// What a runtime JSON file configured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Entries added.
    pub entries: usize,
    /// Default actions set.
    pub defaults: usize,
    /// Multicast groups configured.
    pub mc_groups: usize,
    /// Clone sessions configured.
    pub clone_sessions: usize,
}

fn value_of(v: &Value, width: u16, what: &str) -> Result<u128, String> {
    match v {
        Value::Number(n) => {
            let x = n
                .as_u64()
                .ok_or_else(|| format!("{what}: {n} is not a non-negative integer"))?;
            let x = u128::from(x);
            if x & !crate::word::mask128(width) != 0 {
                return Err(format!("{what}: {x} does not fit in {width} bits"));
            }
            Ok(x)
        }
        Value::String(s) => parse_value(s, width).map_err(|e| format!("{what}: {e}")),
        other => Err(format!(
            "{what}: expected a number or a string, found {other}"
        )),
    }
}

fn pair(v: &Value, what: &str) -> Result<(Value, Value), String> {
    match v.as_array().map(Vec::as_slice) {
        Some([a, b]) => Ok((a.clone(), b.clone())),
        _ => Err(format!("{what}: expected a two-element array")),
    }
}

/// Apply a runtime JSON document to a switch (the v1model `Switch` or
/// the NetSparse switch; multicast groups and clone sessions need the
/// v1model switch). `file` names it in errors.
pub fn apply<T: ControlPlane + ?Sized>(
    sw: &mut T,
    text: &str,
    file: &str,
) -> Result<Loaded, EntriesError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| EntriesError::Syntax {
        location: file.to_owned(),
        detail: format!("not valid JSON: {e}"),
    })?;
    let Some(obj) = doc.as_object() else {
        return Err(EntriesError::Syntax {
            location: file.to_owned(),
            detail: "the top level must be a JSON object".into(),
        });
    };
    let mut out = Loaded::default();
    let list = |key: &str| -> Result<Vec<Value>, EntriesError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(_) => Err(EntriesError::Syntax {
                location: file.to_owned(),
                detail: format!("`{key}` must be an array"),
            }),
        }
    };
    for (i, e) in list("table_entries")?.iter().enumerate() {
        let location = format!(
            "{file}: table_entries[{i}]{}",
            e.get("table")
                .and_then(Value::as_str)
                .map(|t| format!(" (table {t})"))
                .unwrap_or_default()
        );
        let syntax = |detail: String| EntriesError::Syntax {
            location: location.clone(),
            detail,
        };
        let rejected = |source: ControlPlaneError| EntriesError::Rejected {
            location: location.clone(),
            source,
        };
        let table = e
            .get("table")
            .and_then(Value::as_str)
            .ok_or_else(|| syntax("missing `table`".into()))?;
        let action = e
            .get("action_name")
            .and_then(Value::as_str)
            .ok_or_else(|| syntax("missing `action_name`".into()))?;
        let info = sw.table_info(table).map_err(rejected)?;
        // An unknown action leaves `ainfo` empty: the switch then reports
        // it precisely (with the table's action list).
        let ainfo = super::resolve(
            "action",
            info.actions.iter().map(|a| a.name.as_str()),
            action,
        )
        .ok()
        .map(|i| &info.actions[i]);
        // Parameters by name.
        let params = match e.get("action_params") {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(syntax("`action_params` must be an object".into())),
        };
        let args = match ainfo {
            None => Vec::new(),
            Some(a) => {
                for k in params.keys() {
                    if !a.params.iter().any(|(n, _)| n == k) {
                        return Err(rejected(ControlPlaneError::NoSuchParam {
                            action: a.name.clone(),
                            param: k.clone(),
                            params: a.params.iter().map(|(n, _)| n.clone()).collect(),
                        }));
                    }
                }
                let mut args = Vec::with_capacity(a.params.len());
                for (n, w) in &a.params {
                    let v = params.get(n).ok_or_else(|| {
                        syntax(format!("action {}: missing parameter `{n}`", a.name))
                    })?;
                    args.push(value_of(v, *w, &format!("parameter `{n}`")).map_err(&syntax)?);
                }
                args
            }
        };
        if e.get("default_action")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            sw.set_default(table, action, &args).map_err(rejected)?;
            out.defaults += 1;
            continue;
        }
        let matches = match e.get("match") {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(syntax("`match` must be an object".into())),
        };
        let mut km = vec![None; info.keys.len()];
        for (name, v) in &matches {
            let ki = super::resolve("key", info.keys.iter().map(|k| k.name.as_str()), name)
                .map_err(|_| {
                    rejected(ControlPlaneError::NoSuchKey {
                        table: info.name.clone(),
                        key: name.clone(),
                        keys: info.keys.iter().map(|k| k.name.clone()).collect(),
                    })
                })?;
            let k = &info.keys[ki];
            let what = format!("key `{}`", k.name);
            let m = match k.kind {
                MatchKind::Exact | MatchKind::Optional => KeyMatch::Exact {
                    value: value_of(v, k.width, &what).map_err(&syntax)?,
                },
                MatchKind::Lpm => {
                    let (a, b) = pair(v, &what).map_err(&syntax)?;
                    let len = b
                        .as_u64()
                        .and_then(|l| u16::try_from(l).ok())
                        .ok_or_else(|| syntax(format!("{what}: bad prefix length {b}")))?;
                    KeyMatch::Lpm {
                        value: value_of(&a, k.width, &what).map_err(&syntax)?,
                        prefix_len: len,
                    }
                }
                MatchKind::Ternary => {
                    let (a, b) = pair(v, &what).map_err(&syntax)?;
                    KeyMatch::Ternary {
                        value: value_of(&a, k.width, &what).map_err(&syntax)?,
                        mask: value_of(&b, k.width, &what).map_err(&syntax)?,
                    }
                }
                MatchKind::Range => {
                    let (a, b) = pair(v, &what).map_err(&syntax)?;
                    KeyMatch::Range {
                        lo: value_of(&a, k.width, &what).map_err(&syntax)?,
                        hi: value_of(&b, k.width, &what).map_err(&syntax)?,
                    }
                }
            };
            km[ki] = Some(m);
        }
        let mut keys = Vec::with_capacity(km.len());
        for (k, m) in info.keys.iter().zip(km) {
            match m {
                Some(m) => keys.push(m),
                None if k.kind == MatchKind::Exact => {
                    return Err(syntax(format!("missing exact key `{}`", k.name)))
                }
                None => keys.push(KeyMatch::Any),
            }
        }
        let priority = match e.get("priority") {
            None | Some(Value::Null) => None,
            Some(p) => Some(
                p.as_u64()
                    .and_then(|p| u32::try_from(p).ok())
                    .ok_or_else(|| syntax(format!("bad priority {p}")))?,
            ),
        };
        sw.add_entry(table, &keys, action, &args, priority)
            .map_err(rejected)?;
        out.entries += 1;
    }
    let replicas = |v: &Value, location: &str| -> Result<Vec<Replica>, EntriesError> {
        let syntax = |detail: String| EntriesError::Syntax {
            location: location.to_owned(),
            detail,
        };
        let arr = v
            .get("replicas")
            .and_then(Value::as_array)
            .ok_or_else(|| syntax("missing `replicas` array".into()))?;
        arr.iter()
            .map(|r| {
                let port = r
                    .get("egress_port")
                    .and_then(Value::as_u64)
                    .and_then(|p| u32::try_from(p).ok())
                    .ok_or_else(|| syntax("replica without a valid `egress_port`".into()))?;
                let rid = match r.get("instance") {
                    None => 0,
                    Some(i) => i
                        .as_u64()
                        .and_then(|i| u16::try_from(i).ok())
                        .ok_or_else(|| syntax(format!("bad `instance` {i}")))?,
                };
                Ok(Replica { port, rid })
            })
            .collect()
    };
    for (i, g) in list("multicast_group_entries")?.iter().enumerate() {
        let location = format!("{file}: multicast_group_entries[{i}]");
        let id = g
            .get("multicast_group_id")
            .and_then(Value::as_u64)
            .and_then(|x| u16::try_from(x).ok())
            .ok_or_else(|| EntriesError::Syntax {
                location: location.clone(),
                detail: "missing or bad `multicast_group_id`".into(),
            })?;
        let reps = replicas(g, &location)?;
        sw.mc_group_set(id, &reps)
            .map_err(|source| EntriesError::Rejected { location, source })?;
        out.mc_groups += 1;
    }
    for (i, c) in list("clone_session_entries")?.iter().enumerate() {
        let location = format!("{file}: clone_session_entries[{i}]");
        let id = c
            .get("clone_session_id")
            .and_then(Value::as_u64)
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| EntriesError::Syntax {
                location: location.clone(),
                detail: "missing or bad `clone_session_id`".into(),
            })?;
        let reps = replicas(c, &location)?;
        sw.mirroring_set(id, &reps)
            .map_err(|source| EntriesError::Rejected { location, source })?;
        out.clone_sessions += 1;
    }
    Ok(out)
}
