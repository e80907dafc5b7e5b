//! BMv2 `simple_switch_CLI` command files.
//!
//! One command per line; `#` starts a comment; blank lines are ignored.
//! Supported commands:
//!
//! ```text
//! table_add <table> <action> <key>... => <param>... [priority]
//! table_set_default <table> <action> [<param>...]
//! table_modify <table> <action> <handle> => <param>...
//! table_delete <table> <handle>
//! table_clear <table>
//! register_write <register> <index> <value>
//! register_reset <register>
//! counter_reset <counter>
//! meter_set_rates <meter> <index> <cir>:<cbs> <pir>:<pbs>
//! meter_array_set_rates <meter> <cir>:<cbs> <pir>:<pbs>
//! meter_get_rates <meter> <index>        (logs the rates)
//! mirroring_add <session> <port>
//! mirroring_delete <session>
//! mc_mgrp_create <group>
//! mc_mgrp_destroy <group>
//! mc_node_create <rid> <port>...
//! mc_node_associate <group> <node handle>
//! mc_node_dissociate <group> <node handle>
//! ```
//!
//! Keys use the match syntax of [`super::values`] (`10.0.0.0/8`,
//! `0x0a&&&0xff`, `1->5`). **Priorities**: BMv2's CLI gives the lowest
//! number the highest priority; this loader converts each priority `p` to
//! `u32::MAX - p` so the switch's P4Runtime rule (higher wins) ranks entries
//! exactly as BMv2 would. Entry handles start at 0 per table and multicast
//! node handles at 0, in creation order, as in BMv2. The first error stops
//! loading and names `file:line`.

use netsparse_externs::meter::MeterRates;

use super::values::{parse_match, parse_raw, parse_value};
use super::ControlPlane;
use crate::error::EntriesError;
use crate::tables::EntryHandle;

/// What a command file did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Commands executed.
    pub commands: usize,
    /// Entries added.
    pub entries: usize,
}

/// Convert a BMv2 CLI priority (lower wins) to the switch's (higher wins).
pub fn bmv2_priority(p: u32) -> u32 {
    u32::MAX - p
}

/// Apply a BMv2 command file to a switch (the v1model `Switch` or the
/// NetSparse switch). `file` names it in errors.
pub fn apply<T: ControlPlane + ?Sized>(
    sw: &mut T,
    text: &str,
    file: &str,
) -> Result<Applied, EntriesError> {
    let mut out = Applied::default();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let location = format!("{file}:{}", n + 1);
        let added = apply_line(sw, line).map_err(|e| match e {
            LineError::Syntax(detail) => EntriesError::Syntax {
                location: location.clone(),
                detail,
            },
            LineError::Rejected(source) => EntriesError::Rejected {
                location: location.clone(),
                source,
            },
        })?;
        out.commands += 1;
        out.entries += usize::from(added);
    }
    Ok(out)
}

/// Why one line failed.
#[derive(Debug)]
pub enum LineError {
    /// Malformed command.
    Syntax(String),
    /// Rejected by the switch.
    Rejected(crate::error::ControlPlaneError),
}

impl From<crate::error::ControlPlaneError> for LineError {
    fn from(e: crate::error::ControlPlaneError) -> Self {
        LineError::Rejected(e)
    }
}

/// Parse `tok` as a number that fits `T`; `what` names it in the error.
pub fn num<T: TryFrom<u128>>(tok: &str, what: &str) -> Result<T, LineError> {
    parse_raw(tok)
        .ok()
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| LineError::Syntax(format!("bad {what} `{tok}`")))
}

/// Check that a command has at least `n` arguments; else `usage`.
pub fn need(toks: &[&str], n: usize, usage: &str) -> Result<(), LineError> {
    if toks.len() < n {
        return Err(LineError::Syntax(format!("usage: {usage}")));
    }
    Ok(())
}

fn rate(tok: &str) -> Result<(f64, u64), LineError> {
    let (r, b) = tok
        .split_once(':')
        .ok_or_else(|| LineError::Syntax(format!("expected <rate>:<burst>, found `{tok}`")))?;
    let r: f64 = r
        .parse()
        .map_err(|_| LineError::Syntax(format!("bad rate `{r}`")))?;
    let b: u64 = b
        .parse()
        .map_err(|_| LineError::Syntax(format!("bad burst `{b}`")))?;
    Ok((r, b))
}

/// Execute one command line (no comment, not blank). Returns whether an
/// entry was added. Table, register, counter and meter commands run on
/// every target; the rest go to the target ([`ControlPlane::command`]:
/// mirroring and multicast on the v1model switch).
pub fn apply_line<T: ControlPlane + ?Sized>(sw: &mut T, line: &str) -> Result<bool, LineError> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let Some((&cmd, args)) = toks.split_first() else {
        return Ok(false);
    };
    match cmd {
        "table_add" => {
            need(
                args,
                2,
                "table_add <table> <action> <key>... => <param>... [priority]",
            )?;
            let (table, action) = (args[0], args[1]);
            let info = sw.table_info(table)?;
            let rest = &args[2..];
            let (keys, params) = match rest.iter().position(|t| *t == "=>") {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &rest[rest.len()..]),
            };
            if keys.len() != info.keys.len() {
                return Err(crate::error::ControlPlaneError::KeyCount {
                    table: info.name.clone(),
                    expected: info.keys.len(),
                    got: keys.len(),
                }
                .into());
            }
            let mut matches = Vec::with_capacity(keys.len());
            for (k, tok) in info.keys.iter().zip(keys) {
                matches.push(
                    parse_match(tok, k.width)
                        .map_err(|e| LineError::Syntax(format!("key `{}`: {e}", k.name)))?,
                );
            }
            let ainfo = super::resolve(
                "action",
                info.actions.iter().map(|a| a.name.as_str()),
                action,
            )
            .ok()
            .map(|i| info.actions[i].clone());
            let nparams = ainfo.as_ref().map_or(params.len(), |a| a.params.len());
            let (params, priority) = if info.needs_priority && params.len() == nparams + 1 {
                let p: u32 = num(params[nparams], "priority")?;
                (&params[..nparams], Some(bmv2_priority(p)))
            } else {
                (params, None)
            };
            let args = parse_params(ainfo.as_ref(), params)?;
            sw.add_entry(table, &matches, action, &args, priority)?;
            Ok(true)
        }
        "table_set_default" => {
            need(args, 2, "table_set_default <table> <action> [<param>...]")?;
            let info = sw.table_info(args[0])?;
            let ainfo = super::resolve(
                "action",
                info.actions.iter().map(|a| a.name.as_str()),
                args[1],
            )
            .ok()
            .map(|i| info.actions[i].clone());
            let params: Vec<&str> = args[2..].iter().copied().filter(|t| *t != "=>").collect();
            let vals = parse_params(ainfo.as_ref(), &params)?;
            sw.set_default(args[0], args[1], &vals)?;
            Ok(false)
        }
        "table_clear" => {
            need(args, 1, "table_clear <table>")?;
            sw.clear_table(args[0])?;
            Ok(false)
        }
        "table_modify" => {
            need(
                args,
                3,
                "table_modify <table> <action> <handle> => <param>...",
            )?;
            let info = sw.table_info(args[0])?;
            let ainfo = super::resolve(
                "action",
                info.actions.iter().map(|a| a.name.as_str()),
                args[1],
            )
            .ok()
            .map(|i| info.actions[i].clone());
            let h: u32 = num(args[2], "entry handle")?;
            let params: Vec<&str> = args[3..].iter().copied().filter(|t| *t != "=>").collect();
            let vals = parse_params(ainfo.as_ref(), &params)?;
            sw.modify_entry(args[0], EntryHandle(h), args[1], &vals)?;
            Ok(false)
        }
        "table_delete" => {
            need(args, 2, "table_delete <table> <handle>")?;
            let h: u32 = num(args[1], "entry handle")?;
            sw.delete_entry(args[0], EntryHandle(h))?;
            Ok(false)
        }
        "register_write" => {
            need(args, 3, "register_write <register> <index> <value>")?;
            let i: u64 = num(args[1], "index")?;
            let v = parse_raw(args[2]).map_err(|e| LineError::Syntax(e.to_string()))?;
            sw.register_write(args[0], i, v)?;
            Ok(false)
        }
        "register_reset" => {
            need(args, 1, "register_reset <register>")?;
            sw.register_reset(args[0])?;
            Ok(false)
        }
        "counter_reset" => {
            need(args, 1, "counter_reset <counter>")?;
            sw.counter_reset(args[0])?;
            Ok(false)
        }
        "meter_array_set_rates" => {
            need(
                args,
                3,
                "meter_array_set_rates <meter> <cir>:<cbs> <pir>:<pbs>",
            )?;
            let (cir, cbs) = rate(args[1])?;
            let (pir, pbs) = rate(args[2])?;
            sw.meter_set_rates(args[0], None, MeterRates { cir, cbs, pir, pbs })?;
            Ok(false)
        }
        "meter_get_rates" => {
            need(args, 2, "meter_get_rates <meter> <index>")?;
            let i: u64 = num(args[1], "index")?;
            match sw.engine().meter_get_rates(args[0], i)? {
                Some(r) => tracing::info!(
                    "{}[{i}]: CIR {}:{} PIR {}:{}",
                    args[0],
                    r.cir,
                    r.cbs,
                    r.pir,
                    r.pbs
                ),
                None => tracing::info!("{}[{i}]: not configured", args[0]),
            }
            Ok(false)
        }
        "meter_set_rates" => {
            need(
                args,
                4,
                "meter_set_rates <meter> <index> <cir>:<cbs> <pir>:<pbs>",
            )?;
            let i: u64 = num(args[1], "index")?;
            let (cir, cbs) = rate(args[2])?;
            let (pir, pbs) = rate(args[3])?;
            sw.meter_set_rates(args[0], Some(i), MeterRates { cir, cbs, pir, pbs })?;
            Ok(false)
        }
        other => sw
            .command(other, args)
            .unwrap_or_else(|| Err(LineError::Syntax(format!("unknown command `{other}`")))),
    }
}

fn parse_params(
    ainfo: Option<&super::ActionInfo>,
    params: &[&str],
) -> Result<Vec<u128>, LineError> {
    match ainfo {
        // Unknown action: the switch reports it (with the table's actions).
        None => Ok(Vec::new()),
        Some(a) => {
            if params.len() != a.params.len() {
                return Err(LineError::Syntax(format!(
                    "action {} takes {} parameter(s) ({}), {} given",
                    a.name,
                    a.params.len(),
                    a.params
                        .iter()
                        .map(|(n, w)| format!("{n}: {w} bits"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    params.len()
                )));
            }
            a.params
                .iter()
                .zip(params)
                .map(|((n, w), t)| {
                    parse_value(t, *w)
                        .map_err(|e| LineError::Syntax(format!("parameter `{n}`: {e}")))
                })
                .collect()
        }
    }
}
