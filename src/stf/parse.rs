//! The STF script syntax: one command per line, `#` starts a comment.
//!
//! ```text
//! packet <port> <hex bytes, spaces allowed>
//! expect <port> [<hex nibbles, `*` = any nibble>[$]]
//! no_packet
//! wait
//! add <table> [<priority>] <key>:<value>... <action>(<param>:<value>, ...) [= <name>]
//! setdefault <table> <action>(<param>:<value>, ...)
//! remove all | remove $<name> | remove <table> [<priority>] <key>:<value>...
//! check_counter <counter>(<index> | $<name>) [packets|bytes] [<op> <value>]
//! mirroring_add <session> <port>           (and the other simple_switch_CLI
//! mc_mgrp_create <group>                    commands p4c's bmv2stf.py passes
//! mc_node_create <rid> <port>...            through unchanged, plus register_write,
//! mc_node_associate <group> <node handle>   register_reset, counter_reset,
//!                                           meter_set_rates)
//! ```
//!
//! Keywords are case-insensitive as in p4c's lexer. Values are kept as text
//! here: their meaning depends on the key's match kind and width, which only
//! the loaded program knows (see `super::exec`).

use super::StfError;

/// An expected packet: nibbles (`None` = `*`) and whether `$` ends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// The nibbles, most significant nibble of the first byte first.
    pub nibbles: Vec<Option<u8>>,
    /// `$`: the packet must end where the pattern ends (otherwise the
    /// pattern is a prefix, as in p4c's `bmv2stf.py`).
    pub exact: bool,
}

/// The condition of a `check_counter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    fn parse(s: &str) -> Option<CmpOp> {
        Some(match s {
            "==" => CmpOp::Eq,
            "!=" => CmpOp::Ne,
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            ">" => CmpOp::Gt,
            ">=" => CmpOp::Ge,
            _ => return None,
        })
    }

    /// Whether `actual <op> expected` holds.
    pub fn holds(self, actual: u64, expected: u64) -> bool {
        match self {
            CmpOp::Eq => actual == expected,
            CmpOp::Ne => actual != expected,
            CmpOp::Lt => actual < expected,
            CmpOp::Le => actual <= expected,
            CmpOp::Gt => actual > expected,
            CmpOp::Ge => actual >= expected,
        }
    }

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// Which cell a `check_counter` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterIndex {
    /// An index into an indexed counter.
    Index(u64),
    /// The direct-counter cell of the entry added with `= name`.
    Entry(String),
}

/// What a `check_counter` compares: packets or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountKind {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
}

/// What `remove` deletes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoveWhat {
    /// Every entry the script added, in every table.
    All,
    /// The entry added with `= name`.
    Named(String),
    /// The entry of `table` with exactly these matches (and priority).
    Entry {
        /// Table name as written.
        table: String,
        /// Priority, if written.
        priority: Option<u32>,
        /// `(key, value)` as written.
        keys: Vec<(String, String)>,
    },
}

/// One STF command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Send a packet.
    Packet {
        /// Ingress port.
        port: u32,
        /// The frame.
        data: Vec<u8>,
    },
    /// Expect a packet on a port (`None`: any number of any packets).
    Expect {
        /// Egress port.
        port: u32,
        /// The expected bytes.
        pattern: Option<Pattern>,
    },
    /// Every packet sent so far must be accounted for by an `expect` above.
    NoPacket,
    /// A no-op: the switch is deterministic and runs each packet to completion.
    Wait,
    /// Add a table entry.
    Add {
        /// Table name as written.
        table: String,
        /// Priority (higher wins, as in p4c's STF).
        priority: Option<u32>,
        /// `(key, value)` as written.
        keys: Vec<(String, String)>,
        /// Action name as written.
        action: String,
        /// `(parameter, value)` as written.
        args: Vec<(String, String)>,
        /// `= name`: a handle for `check_counter` / `remove`.
        name: Option<String>,
    },
    /// Set a table's default action.
    SetDefault {
        /// Table name as written.
        table: String,
        /// Action name as written.
        action: String,
        /// `(parameter, value)` as written.
        args: Vec<(String, String)>,
    },
    /// Delete entries.
    Remove(RemoveWhat),
    /// Compare a counter cell with a value.
    CheckCounter {
        /// Counter name as written.
        counter: String,
        /// The cell.
        index: CounterIndex,
        /// Packets or bytes (`None`: both, when no condition is written).
        kind: Option<CountKind>,
        /// The comparison (no condition written: `== 0`, p4c's default).
        op: CmpOp,
        /// The value compared with.
        value: u64,
    },
    /// A simple_switch_CLI command (`mirroring_add 1 2`, `mc_node_create 0 1 2`...).
    Cli(String),
    /// `register_read <register> <index>` / `counter_read <counter> <index>`:
    /// logs the value (p4c passes them to the CLI, which prints them).
    Read {
        /// `register_read` or `counter_read`.
        what: String,
        /// Name as written.
        name: String,
        /// Index.
        index: u64,
    },
}

/// Commands handed to the BMv2 command loader unchanged.
const CLI_COMMANDS: [&str; 15] = [
    "mirroring_add",
    "mirroring_add_mc",
    "mirroring_get",
    "mirroring_delete",
    "mc_mgrp_create",
    "mc_mgrp_destroy",
    "mc_node_create",
    "mc_node_associate",
    "mc_node_dissociate",
    "register_write",
    "register_reset",
    "counter_reset",
    "meter_set_rates",
    "meter_array_set_rates",
    "meter_get_rates",
];

/// Parse a whole script into `(line number, command)` pairs.
pub fn parse_script(text: &str, file: &str) -> Result<Vec<(usize, Command)>, StfError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let cmd = parse_line(line).map_err(|detail| StfError::Syntax {
            file: file.to_owned(),
            line: i + 1,
            detail,
        })?;
        out.push((i + 1, cmd));
    }
    Ok(out)
}

fn split_first(s: &str) -> (&str, &str) {
    match s.split_once(char::is_whitespace) {
        Some((a, b)) => (a, b.trim()),
        None => (s, ""),
    }
}

fn port(tok: &str) -> Result<u32, String> {
    let p: u32 = tok
        .parse()
        .map_err(|_| format!("`{tok}` is not a port number (decimal)"))?;
    if p >= 511 {
        return Err(format!("port {p} out of range (0..=510)"));
    }
    Ok(p)
}

/// Parse one command line (comment stripped, not blank).
pub fn parse_line(line: &str) -> Result<Command, String> {
    let (word, rest) = split_first(line);
    let cmd = word.to_ascii_lowercase();
    match cmd.as_str() {
        "packet" => {
            let (p, data) = split_first(rest);
            if p.is_empty() {
                return Err("usage: packet <port> <hex bytes>".into());
            }
            Ok(Command::Packet {
                port: port(p)?,
                data: packet_bytes(data)?,
            })
        }
        "expect" => {
            let (p, data) = split_first(rest);
            if p.is_empty() {
                return Err("usage: expect <port> [<hex nibbles with * wildcards>[$]]".into());
            }
            let port = port(p)?;
            let pattern = if data.is_empty() {
                None
            } else {
                Some(pattern(data)?)
            };
            Ok(Command::Expect { port, pattern })
        }
        "no_packet" => no_args(&cmd, rest, Command::NoPacket),
        "wait" => no_args(&cmd, rest, Command::Wait),
        "add" => parse_add(rest),
        "setdefault" => {
            let (head, args, after) = split_action(rest)?;
            if !after.is_empty() {
                return Err(format!("unexpected `{after}` after the action"));
            }
            let toks = tokens(head);
            let [table, action] = toks.as_slice() else {
                return Err("usage: setdefault <table> <action>(<param>:<value>, ...)".into());
            };
            Ok(Command::SetDefault {
                table: table.clone(),
                action: action.clone(),
                args: action_args(args)?,
            })
        }
        "remove" => parse_remove(rest),
        "check_counter" => parse_check_counter(rest),
        "register_read" | "counter_read" => {
            let toks: Vec<&str> = rest.split_whitespace().collect();
            let [name, index] = toks.as_slice() else {
                return Err(format!("usage: {cmd} <name> <index>"));
            };
            Ok(Command::Read {
                what: cmd.clone(),
                name: (*name).to_owned(),
                index: number_u64(index)?,
            })
        }
        c if CLI_COMMANDS.contains(&c) => Ok(Command::Cli(format!("{c} {rest}"))),
        _ => Err(format!(
            "unknown command `{word}` (expected packet, expect, no_packet, wait, add, \
             setdefault, remove, check_counter, or a simple_switch_CLI command such as \
             mirroring_add / mc_mgrp_create / register_write)"
        )),
    }
}

fn no_args(cmd: &str, rest: &str, c: Command) -> Result<Command, String> {
    if rest.is_empty() {
        Ok(c)
    } else {
        Err(format!("`{cmd}` takes no arguments, found `{rest}`"))
    }
}

fn hex_nibble(c: char) -> Option<u8> {
    c.to_digit(16).map(|d| d as u8)
}

/// `packet` data: hex digits, whitespace ignored; none is an empty frame and
/// an odd count is padded with a final 0 nibble.
pub fn packet_bytes(data: &str) -> Result<Vec<u8>, String> {
    let mut nibbles = Vec::with_capacity(data.len());
    for c in data.chars().filter(|c| !c.is_whitespace()) {
        match hex_nibble(c) {
            Some(n) => nibbles.push(n),
            None if c == '*' || c == '$' => {
                return Err(format!("`{c}` is only allowed in `expect` data"))
            }
            None => return Err(format!("`{c}` is not a hex digit in the packet data")),
        }
    }
    // Like p4c's runner: no data is an empty frame, and an odd final nibble
    // is the high half of a last byte whose low half is 0.
    if nibbles.len() % 2 != 0 {
        nibbles.push(0);
    }
    Ok(nibbles.chunks(2).map(|p| (p[0] << 4) | p[1]).collect())
}

/// `expect` data: hex digits and `*`, whitespace ignored, optional final `$`.
pub fn pattern(data: &str) -> Result<Pattern, String> {
    let compact: String = data.chars().filter(|c| !c.is_whitespace()).collect();
    let (body, exact) = match compact.strip_suffix('$') {
        Some(b) => (b, true),
        None => (compact.as_str(), false),
    };
    let mut nibbles = Vec::with_capacity(body.len());
    for c in body.chars() {
        match c {
            '*' => nibbles.push(None),
            '$' => return Err("`$` may only end the expected data".into()),
            c => match hex_nibble(c) {
                Some(n) => nibbles.push(Some(n)),
                None => {
                    return Err(format!(
                        "`{c}` is not a hex digit or `*` in the expected data"
                    ))
                }
            },
        }
    }
    if exact && nibbles.len() % 2 != 0 {
        return Err(format!(
            "expected data ending in `$` must be whole bytes, found {} hex digits",
            nibbles.len()
        ));
    }
    Ok(Pattern { nibbles, exact })
}

/// Whitespace tokens, with `key : value` / `key: value` / `key :value`
/// joined into one `key:value` token.
fn tokens(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut glue = false;
    for t in s.split_whitespace() {
        let attach = glue || t.starts_with(':');
        match out.last_mut() {
            Some(last) if attach => last.push_str(t),
            _ => out.push(t.to_owned()),
        }
        glue = t.ends_with(':');
    }
    out
}

/// Split `head action(args) after` at the action's parentheses: the last
/// `(...)` of the line (key names may contain `isValid()`).
fn split_action(s: &str) -> Result<(&str, &str, &str), String> {
    let close = s
        .rfind(')')
        .ok_or_else(|| "expected an action call `<action>(<param>:<value>, ...)`".to_owned())?;
    let open = s[..close]
        .rfind('(')
        .ok_or_else(|| "unbalanced `)` (expected `<action>(<param>:<value>, ...)`)".to_owned())?;
    if s[..open].trim().is_empty() {
        return Err("expected an action name before `(`".into());
    }
    Ok((&s[..open], &s[open + 1..close], s[close + 1..].trim()))
}

fn action_args(s: &str) -> Result<Vec<(String, String)>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|a| {
            let a = a.trim();
            let (k, v) = a
                .split_once(':')
                .ok_or_else(|| format!("action argument `{a}` is not `<param>:<value>`"))?;
            let (k, v) = (k.trim(), v.trim());
            if k.is_empty() || v.is_empty() {
                return Err(format!("action argument `{a}` is not `<param>:<value>`"));
            }
            Ok((k.to_owned(), v.to_owned()))
        })
        .collect()
}

fn key_value(tok: &str) -> Result<(String, String), String> {
    let (k, v) = tok
        .split_once(':')
        .ok_or_else(|| format!("`{tok}` is not `<key>:<value>`"))?;
    if k.is_empty() || v.is_empty() {
        return Err(format!("`{tok}` is not `<key>:<value>`"));
    }
    Ok((k.to_owned(), v.to_owned()))
}

fn is_priority(tok: &str) -> bool {
    !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit())
}

fn priority(tok: &str) -> Result<u32, String> {
    tok.parse()
        .map_err(|_| format!("priority `{tok}` does not fit 32 bits"))
}

fn parse_add(rest: &str) -> Result<Command, String> {
    const USAGE: &str =
        "usage: add <table> [<priority>] <key>:<value>... <action>(<param>:<value>, ...) [= <name>]";
    let (head, args, after) = split_action(rest)?;
    let name = if after.is_empty() {
        None
    } else {
        let n = after
            .strip_prefix('=')
            .map(str::trim)
            .filter(|n| is_ident(n))
            .ok_or_else(|| {
                format!("unexpected `{after}` after the action (expected `= <name>`)")
            })?;
        Some(n.to_owned())
    };
    let toks = tokens(head);
    if toks.len() < 2 {
        return Err(USAGE.into());
    }
    let table = toks[0].clone();
    let action = toks[toks.len() - 1].clone();
    if action.contains(':') {
        return Err(format!("`{action}` is not an action name ({USAGE})"));
    }
    let mut middle = &toks[1..toks.len() - 1];
    let mut prio = None;
    if let Some(first) = middle.first() {
        if is_priority(first) {
            prio = Some(priority(first)?);
            middle = &middle[1..];
        }
    }
    let keys = middle
        .iter()
        .map(|t| key_value(t))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Command::Add {
        table,
        priority: prio,
        keys,
        action,
        args: action_args(args)?,
        name,
    })
}

fn parse_remove(rest: &str) -> Result<Command, String> {
    let toks = tokens(rest);
    match toks.as_slice() {
        [] => Err(
            "usage: remove all | remove $<name> | remove <table> [<priority>] <key>:<value>..."
                .into(),
        ),
        [a] if a.eq_ignore_ascii_case("all") => Ok(Command::Remove(RemoveWhat::All)),
        [n] if n.starts_with('$') && is_ident(&n[1..]) => {
            Ok(Command::Remove(RemoveWhat::Named(n[1..].to_owned())))
        }
        [table, rest @ ..] => {
            let mut rest = rest;
            let mut prio = None;
            if let Some(first) = rest.first() {
                if is_priority(first) {
                    prio = Some(priority(first)?);
                    rest = &rest[1..];
                }
            }
            if rest.is_empty() {
                return Err(format!(
                    "`remove {table}` needs the entry's keys (`remove all` clears every table)"
                ));
            }
            Ok(Command::Remove(RemoveWhat::Entry {
                table: table.clone(),
                priority: prio,
                keys: rest
                    .iter()
                    .map(|t| key_value(t))
                    .collect::<Result<Vec<_>, _>>()?,
            }))
        }
    }
}

fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn number_u64(tok: &str) -> Result<u64, String> {
    netsparse_engine::control::values::parse_raw(tok)
        .ok()
        .and_then(|v| u64::try_from(v).ok())
        .ok_or_else(|| format!("`{tok}` is not a number"))
}

fn parse_check_counter(rest: &str) -> Result<Command, String> {
    const USAGE: &str =
        "usage: check_counter <counter>(<index> | $<name>) [packets|bytes] [<op> <value>]";
    let open = rest.find('(').ok_or(USAGE)?;
    let close = rest[open..].find(')').map(|c| open + c).ok_or(USAGE)?;
    let counter = rest[..open].trim();
    if counter.is_empty() || counter.contains(char::is_whitespace) {
        return Err(USAGE.into());
    }
    let idx = rest[open + 1..close].trim();
    let index = match idx.strip_prefix('$') {
        Some(n) if is_ident(n) => CounterIndex::Entry(n.to_owned()),
        Some(_) => return Err(format!("`{idx}` is not an entry name")),
        None => CounterIndex::Index(number_u64(idx)?),
    };
    let toks: Vec<&str> = rest[close + 1..].split_whitespace().collect();
    let (kind, cond) = match toks.first().map(|t| t.to_ascii_lowercase()) {
        Some(t) if t == "packets" => (Some(CountKind::Packets), &toks[1..]),
        Some(t) if t == "bytes" => (Some(CountKind::Bytes), &toks[1..]),
        _ => (None, &toks[..]),
    };
    let (op, value) = match cond {
        [] if kind.is_none() => (CmpOp::Eq, 0),
        [op, v] => (
            CmpOp::parse(op)
                .ok_or_else(|| format!("`{op}` is not a comparison (==, !=, <, <=, >, >=)"))?,
            number_u64(v)?,
        ),
        _ => return Err(USAGE.into()),
    };
    // A comparison without `packets`/`bytes` compares packets.
    let kind = match (kind, cond.is_empty()) {
        (None, false) => Some(CountKind::Packets),
        (k, _) => k,
    };
    Ok(Command::CheckCounter {
        counter: counter.to_owned(),
        index,
        kind,
        op,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_and_patterns() {
        assert_eq!(
            parse_line("packet 0 0102 03 0a0B").unwrap(),
            Command::Packet {
                port: 0,
                data: vec![1, 2, 3, 0x0a, 0x0b]
            }
        );
        // p4c's samples send odd nibble counts (padded) and empty frames.
        assert_eq!(
            parse_line("packet 0 012").unwrap(),
            Command::Packet {
                port: 0,
                data: vec![1, 0x20]
            }
        );
        assert_eq!(
            parse_line("packet 2 ").unwrap(),
            Command::Packet {
                port: 2,
                data: vec![]
            }
        );
        assert!(parse_line("packet 0 01*2").is_err());
        assert!(parse_line("packet 511 00").unwrap_err().contains("range"));
        assert!(parse_line("packet x 00").is_err());
        assert!(parse_line("packet").is_err());
        let Command::Expect {
            port: 3,
            pattern: Some(p),
        } = parse_line("EXPECT 3 0a* f $").unwrap()
        else {
            panic!("not an expect")
        };
        assert_eq!(p.nibbles, vec![Some(0), Some(0xa), None, Some(0xf)]);
        assert!(p.exact);
        assert_eq!(
            parse_line("expect 4").unwrap(),
            Command::Expect {
                port: 4,
                pattern: None
            }
        );
        assert!(parse_line("expect 1 00$00").is_err());
        assert!(parse_line("expect 1 0$").is_err());
        assert!(parse_line("expect 1 0g").is_err());
    }

    #[test]
    fn add_forms() {
        assert_eq!(
            parse_line("add test1 503 data.f1:0x****0202 ingress.setb1(val:7, port:3)").unwrap(),
            Command::Add {
                table: "test1".into(),
                priority: Some(503),
                keys: vec![("data.f1".into(), "0x****0202".into())],
                action: "ingress.setb1".into(),
                args: vec![("val".into(), "7".into()), ("port".into(), "3".into())],
                name: None,
            }
        );
        assert_eq!(
            parse_line("add t h.a : 1 h.b: 2 h.c :3 a() = E1").unwrap(),
            Command::Add {
                table: "t".into(),
                priority: None,
                keys: vec![
                    ("h.a".into(), "1".into()),
                    ("h.b".into(), "2".into()),
                    ("h.c".into(), "3".into())
                ],
                action: "a".into(),
                args: vec![],
                name: Some("E1".into()),
            }
        );
        assert!(parse_line("add t h.a:1 a(").is_err());
        assert!(parse_line("add t h.a:1 a ()").is_ok());
        assert!(parse_line("add t ()").is_err());
        assert_eq!(
            parse_line("add t h.isValid():1 a(x:1)").unwrap(),
            Command::Add {
                table: "t".into(),
                priority: None,
                keys: vec![("h.isValid()".into(), "1".into())],
                action: "a".into(),
                args: vec![("x".into(), "1".into())],
                name: None,
            }
        );
        assert!(parse_line("add t h.a:1 a() junk").is_err());
        assert!(parse_line("add t h.a a()").is_err());
        assert!(parse_line("add t a(x)").is_err());
        assert!(parse_line("add t 99999999999 k:1 a()").is_err());
    }

    #[test]
    fn other_commands() {
        assert_eq!(
            parse_line("setdefault t drop()").unwrap(),
            Command::SetDefault {
                table: "t".into(),
                action: "drop".into(),
                args: vec![]
            }
        );
        assert_eq!(
            parse_line("remove all").unwrap(),
            Command::Remove(RemoveWhat::All)
        );
        assert_eq!(
            parse_line("remove $A").unwrap(),
            Command::Remove(RemoveWhat::Named("A".into()))
        );
        assert!(parse_line("remove t").is_err());
        assert_eq!(
            parse_line("check_counter c(3) bytes >= 100").unwrap(),
            Command::CheckCounter {
                counter: "c".into(),
                index: CounterIndex::Index(3),
                kind: Some(CountKind::Bytes),
                op: CmpOp::Ge,
                value: 100
            }
        );
        assert_eq!(
            parse_line("check_counter ig.c($E) == 2").unwrap(),
            Command::CheckCounter {
                counter: "ig.c".into(),
                index: CounterIndex::Entry("E".into()),
                kind: Some(CountKind::Packets),
                op: CmpOp::Eq,
                value: 2
            }
        );
        assert_eq!(
            parse_line("check_counter c(0)").unwrap(),
            Command::CheckCounter {
                counter: "c".into(),
                index: CounterIndex::Index(0),
                kind: None,
                op: CmpOp::Eq,
                value: 0
            }
        );
        assert!(parse_line("check_counter c(0) packets").is_err());
        assert!(parse_line("check_counter c(0) packets =~ 1").is_err());
        assert_eq!(
            parse_line("mirroring_add 5 3").unwrap(),
            Command::Cli("mirroring_add 5 3".into())
        );
        assert!(parse_line("wait 3").is_err());
        assert!(parse_line("frobnicate")
            .unwrap_err()
            .contains("unknown command"));
    }

    #[test]
    fn script_line_numbers() {
        let s = parse_script("# c\n\npacket 0 00 # trailing\nwait\n", "x.stf").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].0, 3);
        assert_eq!(s[1], (4, Command::Wait));
        match parse_script("wait\nbogus\n", "x.stf") {
            Err(StfError::Syntax { file, line, .. }) => {
                assert_eq!((file.as_str(), line), ("x.stf", 2))
            }
            other => panic!("{other:?}"),
        }
    }
}
