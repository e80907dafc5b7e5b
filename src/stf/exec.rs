//! Running a parsed STF script on the switch.

use std::collections::BTreeMap;

use netsparse_bmv2::{ControlPlaneError, EntryHandle, KeySpec, PsaSwitch, Switch, SwitchStats};
use netsparse_engine::control::commands::{self, LineError};
use netsparse_engine::control::values::{parse_match, parse_value};
use netsparse_engine::control::TableInfo;
use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::{KeyMatch, MatchKind};
use netsparse_externs::{Datapath, Outputs, Time};

use super::parse::{CountKind, CounterIndex, RemoveWhat};
use super::wide_values::split_wide;
use super::{Command, Expectation, Failure, Mismatch, Pattern, Received, StfError, StfOutcome};

/// An entry the script added: (table full name, handle).
type Added = (String, EntryHandle);

/// A switch an STF script drives: the v1model switch or the PSA switch,
/// chosen from the program's package.
pub(super) trait StfTarget: ControlPlane + Datapath {
    /// The switch's counters.
    fn counters(&self) -> SwitchStats;
}

impl StfTarget for Switch {
    fn counters(&self) -> SwitchStats {
        self.stats()
    }
}

impl StfTarget for PsaSwitch {
    fn counters(&self) -> SwitchStats {
        self.stats()
    }
}

pub(super) struct Runner<'a> {
    sw: Box<dyn StfTarget>,
    file: &'a str,
    out: Outputs,
    packets_sent: usize,
    expected: BTreeMap<u32, Vec<Expectation>>,
    any_ports: BTreeMap<u32, usize>,
    received: BTreeMap<u32, Vec<Received>>,
    failures: Vec<Failure>,
    /// Entries added by the script, in order (for `remove all`).
    added: Vec<Added>,
    /// Entries named with `= name`.
    named: BTreeMap<String, Added>,
}

impl<'a> Runner<'a> {
    pub(super) fn new(sw: Box<dyn StfTarget>, file: &'a str) -> Runner<'a> {
        Runner {
            sw,
            file,
            out: Outputs::new(),
            packets_sent: 0,
            expected: BTreeMap::new(),
            any_ports: BTreeMap::new(),
            received: BTreeMap::new(),
            failures: Vec::new(),
            added: Vec::new(),
            named: BTreeMap::new(),
        }
    }

    fn rejected(&self, line: usize) -> impl Fn(ControlPlaneError) -> StfError + '_ {
        move |source| StfError::Rejected {
            file: self.file.to_owned(),
            line,
            source: Box::new(source),
        }
    }

    fn command_err(&self, line: usize, detail: impl Into<String>) -> StfError {
        StfError::Command {
            file: self.file.to_owned(),
            line,
            detail: detail.into(),
        }
    }

    pub(super) fn run(mut self, commands: &[(usize, Command)]) -> Result<StfOutcome, StfError> {
        for (line, cmd) in commands {
            tracing::info!("{}:{line}: {}", self.file, describe(cmd));
            self.step(*line, cmd)?;
        }
        self.compare();
        Ok(StfOutcome {
            file: self.file.to_owned(),
            commands: commands.len(),
            packets_sent: self.packets_sent,
            stats: self.sw.counters(),
            expected: self.expected,
            any_ports: self.any_ports,
            received: self.received,
            failures: self.failures,
        })
    }

    fn step(&mut self, line: usize, cmd: &Command) -> Result<(), StfError> {
        match cmd {
            Command::Packet { port, data } => {
                self.packets_sent += 1;
                self.out.clear();
                let now = Time::from_us(self.packets_sent as u64);
                self.sw.on_packet(now, *port, data, &mut self.out);
                for (p, bytes) in self.out.iter() {
                    tracing::info!("  out on port {p}: {}", super::render_hex(bytes));
                    self.received.entry(p).or_default().push(Received {
                        bytes: bytes.to_vec(),
                        packet_line: line,
                    });
                }
                if self.out.is_empty() {
                    tracing::info!("  no packet out");
                }
            }
            Command::Expect { port, pattern } => match pattern {
                Some(p) => {
                    if let Some(l) = self.any_ports.get(port) {
                        return Err(self.command_err(
                            line,
                            format!(
                                "port {port} already has an `expect` without data (line {l}): \
                                 it accepts any packets, so it cannot also expect data"
                            ),
                        ));
                    }
                    self.expected.entry(*port).or_default().push(Expectation {
                        pattern: p.clone(),
                        line,
                    });
                }
                None => {
                    if let Some(e) = self.expected.get(port).and_then(|v| v.first()) {
                        return Err(self.command_err(
                            line,
                            format!(
                                "port {port} already expects data (line {}): an `expect` \
                                 without data would accept any packets there",
                                e.line
                            ),
                        ));
                    }
                    self.any_ports.entry(*port).or_insert(line);
                }
            },
            Command::NoPacket => {
                for (port, got) in &self.received {
                    if self.any_ports.contains_key(port) {
                        continue;
                    }
                    let want = self.expected.get(port).map_or(0, Vec::len);
                    if got.len() > want {
                        self.failures.push(Failure::NoPacket {
                            line,
                            port: *port,
                            sent: got.len(),
                            expected: want,
                        });
                    }
                }
            }
            Command::Wait => {}
            Command::Add {
                table,
                priority,
                keys,
                action,
                args,
                name,
            } => {
                let info = self.sw.table_info(table).map_err(self.rejected(line))?;
                let matches = self.matches(line, &info, keys)?;
                let (aname, vals) = self.action(line, &info, action, args)?;
                let prio = if info.needs_priority {
                    Some(priority.unwrap_or(0))
                } else {
                    if priority.is_some() {
                        tracing::info!(
                            "  priority ignored: table `{}` has no ternary/range/optional key",
                            info.name
                        );
                    }
                    None
                };
                let h = self
                    .sw
                    .add_entry(&info.name, &matches, &aname, &vals, prio)
                    .map_err(self.rejected(line))?;
                self.added.push((info.name.clone(), h));
                if let Some(n) = name {
                    self.named.insert(n.clone(), (info.name.clone(), h));
                }
            }
            Command::SetDefault {
                table,
                action,
                args,
            } => {
                let info = self.sw.table_info(table).map_err(self.rejected(line))?;
                let (aname, vals) = self.action(line, &info, action, args)?;
                self.sw
                    .set_default(&info.name, &aname, &vals)
                    .map_err(self.rejected(line))?;
            }
            Command::Remove(what) => self.remove(line, what)?,
            Command::CheckCounter {
                counter,
                index,
                kind,
                op,
                value,
            } => {
                let cell = match index {
                    CounterIndex::Index(i) => self
                        .sw
                        .counter_read(counter, *i)
                        .map_err(self.rejected(line))?,
                    CounterIndex::Entry(n) => {
                        let (t, h) = self.named.get(n).cloned().ok_or_else(|| {
                            self.command_err(
                                line,
                                format!("no entry was named `{n}` (`add ... = {n}`)"),
                            )
                        })?;
                        self.sw
                            .direct_counter_read(&t, h)
                            .map_err(self.rejected(line))?
                    }
                };
                let idx = match index {
                    CounterIndex::Index(i) => i.to_string(),
                    CounterIndex::Entry(n) => format!("${n}"),
                };
                let checks: &[(CountKind, u64)] = match kind {
                    Some(CountKind::Packets) => &[(CountKind::Packets, cell.packets)],
                    Some(CountKind::Bytes) => &[(CountKind::Bytes, cell.bytes)],
                    None => &[
                        (CountKind::Packets, cell.packets),
                        (CountKind::Bytes, cell.bytes),
                    ],
                };
                for (k, actual) in checks {
                    let what = match k {
                        CountKind::Packets => "packets",
                        CountKind::Bytes => "bytes",
                    };
                    tracing::info!("  {counter}({idx}) {what} = {actual}");
                    if !op.holds(*actual, *value) {
                        self.failures.push(Failure::Counter {
                            line,
                            check: format!("{counter}({idx}) {what} {} {value}", op.as_str()),
                            actual: *actual,
                        });
                    }
                }
            }
            Command::Cli(text) => {
                commands::apply_line(&mut *self.sw, text).map_err(|e| match e {
                    LineError::Syntax(detail) => self.command_err(line, detail),
                    LineError::Rejected(source) => self.rejected(line)(source),
                })?;
            }
            Command::Read { what, name, index } => {
                if what == "register_read" {
                    let v = self
                        .sw
                        .register_read(name, *index)
                        .map_err(self.rejected(line))?;
                    tracing::info!("  {name}[{index}] = {v:#x}");
                } else {
                    let c = self
                        .sw
                        .counter_read(name, *index)
                        .map_err(self.rejected(line))?;
                    tracing::info!(
                        "  {name}[{index}] = {} packets, {} bytes",
                        c.packets,
                        c.bytes
                    );
                }
            }
        }
        Ok(())
    }

    fn remove(&mut self, line: usize, what: &RemoveWhat) -> Result<(), StfError> {
        match what {
            RemoveWhat::All => {
                for (t, h) in std::mem::take(&mut self.added) {
                    // Entries already removed one by one are skipped.
                    if let Err(e) = self.sw.delete_entry(&t, h) {
                        if !matches!(e, ControlPlaneError::NoSuchEntry { .. }) {
                            return Err(self.rejected(line)(e));
                        }
                    }
                }
                self.named.clear();
            }
            RemoveWhat::Named(n) => {
                let (t, h) = self.named.remove(n).ok_or_else(|| {
                    self.command_err(line, format!("no entry was named `{n}` (`add ... = {n}`)"))
                })?;
                self.sw.delete_entry(&t, h).map_err(self.rejected(line))?;
            }
            RemoveWhat::Entry {
                table,
                priority,
                keys,
            } => {
                let info = self.sw.table_info(table).map_err(self.rejected(line))?;
                let matches = self.matches(line, &info, keys)?;
                let prio = info.needs_priority.then(|| priority.unwrap_or(0));
                let h = self
                    .sw
                    .find_entry(&info.name, &matches, prio)
                    .map_err(self.rejected(line))?
                    .ok_or_else(|| {
                        self.command_err(
                            line,
                            format!("table `{}` has no entry with these keys", info.name),
                        )
                    })?;
                self.sw
                    .delete_entry(&info.name, h)
                    .map_err(self.rejected(line))?;
            }
        }
        Ok(())
    }

    /// One match per key of the table, from `key:value` pairs; keys left out
    /// are wildcards, exact ones 0 (bmv2stf's defaults).
    fn matches(
        &self,
        line: usize,
        info: &TableInfo,
        keys: &[(String, String)],
    ) -> Result<Vec<KeyMatch>, StfError> {
        let mut out: Vec<Option<KeyMatch>> = vec![None; info.keys.len()];
        let keys = self.wide_keys(line, info, keys)?;
        for (name, text) in &keys {
            let i = resolve_key(info, name).map_err(self.rejected(line))?;
            if out[i].is_some() {
                return Err(
                    self.command_err(line, format!("key `{}` is given twice", info.keys[i].name))
                );
            }
            let k = &info.keys[i];
            let m = stf_match(text, k).map_err(|detail| {
                self.rejected(line)(ControlPlaneError::Parse {
                    what: format!("value of key `{}` ({:?}, {} bits)", k.name, k.kind, k.width),
                    text: text.clone(),
                    detail,
                })
            })?;
            out[i] = Some(m);
        }
        Ok(info
            .keys
            .iter()
            .zip(out)
            .map(|(k, m)| {
                m.unwrap_or_else(|| {
                    if k.kind == MatchKind::Exact {
                        tracing::warn!(
                            "{}:{line}: key `{}` of table `{}` not given: it is 0 \
                             (as in p4c's bmv2stf)",
                            self.file,
                            k.name,
                            info.name
                        );
                        KeyMatch::Exact { value: 0 }
                    } else {
                        KeyMatch::Any
                    }
                })
            })
            .collect())
    }

    /// Resolve an action of the table and parse its arguments (by name).
    fn action(
        &self,
        line: usize,
        info: &TableInfo,
        action: &str,
        args: &[(String, String)],
    ) -> Result<(String, Vec<u128>), StfError> {
        let names: Vec<&str> = info.actions.iter().map(|a| a.name.as_str()).collect();
        let ai = resolve(&names, action)
            .map_err(|candidates| match candidates {
                Some(c) => ControlPlaneError::Ambiguous {
                    kind: "action",
                    name: action.to_owned(),
                    candidates: c,
                },
                None => ControlPlaneError::NoSuchAction {
                    table: info.name.clone(),
                    action: action.to_owned(),
                    allowed: info.actions.iter().map(|a| a.name.clone()).collect(),
                },
            })
            .map_err(self.rejected(line))?;
        let a = &info.actions[ai];
        let args = &self.wide_args(line, a, args)?;
        if let Some((n, _)) = args
            .iter()
            .find(|(n, _)| !a.params.iter().any(|(p, _)| p == n))
        {
            return Err(self.rejected(line)(ControlPlaneError::NoSuchParam {
                action: a.name.clone(),
                param: n.clone(),
                params: a.params.iter().map(|(p, _)| p.clone()).collect(),
            }));
        }
        let mut vals = Vec::with_capacity(a.params.len());
        for (pname, width) in &a.params {
            let given: Vec<&String> = args
                .iter()
                .filter(|(n, _)| n == pname)
                .map(|(_, v)| v)
                .collect();
            let text = match given.as_slice() {
                [one] => *one,
                [] => {
                    return Err(self.command_err(
                        line,
                        format!(
                            "action `{}` needs parameter `{pname}` ({width} bits); its \
                             parameters: {}",
                            a.name,
                            a.params
                                .iter()
                                .map(|(p, w)| format!("{p} ({w} bits)"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ))
                }
                _ => {
                    return Err(
                        self.command_err(line, format!("parameter `{pname}` is given twice"))
                    )
                }
            };
            let v = parse_value(text, *width).map_err(|e| {
                self.rejected(line)(ControlPlaneError::Parse {
                    what: format!("parameter `{pname}` of `{}` ({width} bits)", a.name),
                    text: text.clone(),
                    detail: e.to_string(),
                })
            })?;
            vals.push(v);
        }
        Ok((a.name.clone(), vals))
    }

    /// Keys over 128 bits (the parts `k$0`.. of key `k`) given whole: one
    /// `key:value` per part.
    fn wide_keys(
        &self,
        line: usize,
        info: &TableInfo,
        keys: &[(String, String)],
    ) -> Result<Vec<(String, String)>, StfError> {
        let names: Vec<&str> = info.keys.iter().map(|k| k.name.as_str()).collect();
        let mut out = Vec::with_capacity(keys.len());
        for (name, text) in keys {
            let group = resolve_key(info, name)
                .is_err()
                .then(|| {
                    key_spellings(name)
                        .iter()
                        .find_map(|q| resolve(&names, &format!("{q}$0")).ok())
                })
                .flatten()
                .map(|i0| wide_group(&names, i0));
            let Some(group) = group else {
                out.push((name.clone(), text.clone()));
                continue;
            };
            let widths: Vec<u16> = group.iter().map(|i| info.keys[*i].width).collect();
            let ternary = info.keys[group[0]].kind != MatchKind::Exact;
            let texts = split_wide(text, &widths, ternary).map_err(|e| {
                self.rejected(line)(ControlPlaneError::Parse {
                    what: format!(
                        "value of key `{name}` ({} bits)",
                        widths.iter().sum::<u16>()
                    ),
                    text: text.clone(),
                    detail: e.to_string(),
                })
            })?;
            for (i, t) in group.into_iter().zip(texts) {
                out.push((info.keys[i].name.clone(), t));
            }
        }
        Ok(out)
    }

    /// Parameters over 128 bits (the parts `p$0`.. of parameter `p`) given
    /// whole: one `name:value` per part.
    fn wide_args(
        &self,
        line: usize,
        a: &netsparse_engine::control::ActionInfo,
        args: &[(String, String)],
    ) -> Result<Vec<(String, String)>, StfError> {
        let names: Vec<&str> = a.params.iter().map(|(p, _)| p.as_str()).collect();
        let mut out = Vec::with_capacity(args.len());
        for (name, text) in args {
            let first = format!("{name}$0");
            let i0 = match names.iter().position(|n| *n == first) {
                Some(i) if !names.contains(&name.as_str()) => i,
                _ => {
                    out.push((name.clone(), text.clone()));
                    continue;
                }
            };
            let group = wide_group(&names, i0);
            let widths: Vec<u16> = group.iter().map(|i| a.params[*i].1).collect();
            let texts = split_wide(text, &widths, false).map_err(|e| {
                self.rejected(line)(ControlPlaneError::Parse {
                    what: format!(
                        "parameter `{name}` of `{}` ({} bits)",
                        a.name,
                        widths.iter().sum::<u16>()
                    ),
                    text: text.clone(),
                    detail: e.to_string(),
                })
            })?;
            for (i, t) in group.into_iter().zip(texts) {
                out.push((a.params[i].0.clone(), t));
            }
        }
        Ok(out)
    }

    /// Compare what came out with what was expected, port by port.
    fn compare(&mut self) {
        let mut ports: Vec<u32> = self.expected.keys().copied().collect();
        ports.extend(self.received.keys().copied());
        ports.sort_unstable();
        ports.dedup();
        for port in ports {
            if self.any_ports.contains_key(&port) {
                continue;
            }
            let want = self.expected.get(&port).map_or(&[][..], Vec::as_slice);
            let got = self.received.get(&port).map_or(&[][..], Vec::as_slice);
            for index in 0..want.len().max(got.len()) {
                match (want.get(index), got.get(index)) {
                    (Some(w), Some(g)) => {
                        if let Some(mismatch) = compare_packet(&w.pattern, &g.bytes) {
                            self.failures.push(Failure::Packet {
                                port,
                                index,
                                mismatch,
                            });
                        }
                    }
                    (Some(_), None) => self.failures.push(Failure::Missing { port, index }),
                    (None, Some(_)) => self.failures.push(Failure::Unexpected { port, index }),
                    (None, None) => {}
                }
            }
        }
    }
}

/// How `bytes` fails to match `pattern` (`None`: it matches).
pub(super) fn compare_packet(pattern: &Pattern, bytes: &[u8]) -> Option<Mismatch> {
    for (i, want) in pattern.nibbles.iter().enumerate() {
        let Some(b) = bytes.get(i / 2) else {
            return Some(Mismatch::TooShort);
        };
        let got = if i % 2 == 0 { b >> 4 } else { b & 0xf };
        if let Some(w) = want {
            if *w != got {
                return Some(Mismatch::Nibble { nibble: i });
            }
        }
    }
    if pattern.exact && bytes.len() * 2 > pattern.nibbles.len() {
        return Some(Mismatch::TooLong);
    }
    None
}

/// Resolve `query` among `names` as bmv2stf does: an exact name, else a
/// unique suffix starting at a `.`. `Err(Some(candidates))`: ambiguous;
/// `Err(None)`: no match.
fn resolve(names: &[&str], query: &str) -> Result<usize, Option<Vec<String>>> {
    if let Some(i) = names.iter().position(|n| *n == query) {
        return Ok(i);
    }
    let dotted = format!(".{query}");
    let hits: Vec<usize> = (0..names.len())
        .filter(|&i| names[i].ends_with(&dotted))
        .collect();
    match hits.as_slice() {
        [i] => Ok(*i),
        [] => Err(None),
        many => Err(Some(many.iter().map(|&i| names[i].to_owned()).collect())),
    }
}

/// The spellings of a key name p4c's STF files use for this program's key
/// names: `a$0.b` for `a[0].b`; `h.$valid$`, `h.valid`, `h` (bmv2stf tries
/// `h.$valid$`) for `h.isValid()`.
fn key_spellings(name: &str) -> Vec<String> {
    let mut base = String::with_capacity(name.len());
    // `$N` (P4_14 stack index) -> `[N]`.
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            base.push('[');
            while let Some(d) = chars.next_if(char::is_ascii_digit) {
                base.push(d);
            }
            base.push(']');
        } else {
            base.push(c);
        }
    }
    let mut out = vec![base.clone()];
    for suffix in [".$valid$", ".valid", "$valid$"] {
        if let Some(h) = base.strip_suffix(suffix) {
            out.push(format!("{h}.isValid()"));
        }
    }
    if base == "valid" || base == "$valid$" {
        out.push("isValid()".into());
    }
    out.push(format!("{base}.isValid()"));
    out
}

/// The indices of the parts `base$0`, `base$1`, ... of a value over 128
/// bits, given the index of `base$0` among `names`.
fn wide_group(names: &[&str], i0: usize) -> Vec<usize> {
    let base = names[i0].strip_suffix("$0").unwrap_or(names[i0]);
    let mut out = vec![i0];
    for k in 1.. {
        match names.iter().position(|n| *n == format!("{base}${k}")) {
            Some(i) => out.push(i),
            None => break,
        }
    }
    out
}

/// Resolve a key name of `info` written in an STF file.
fn resolve_key(info: &TableInfo, query: &str) -> Result<usize, ControlPlaneError> {
    let names: Vec<&str> = info.keys.iter().map(|k| k.name.as_str()).collect();
    // A name as the program spells it (`k$1`, a part of a key over 128 bits).
    if let Some(i) = names.iter().position(|n| *n == query) {
        return Ok(i);
    }
    for q in key_spellings(query) {
        match resolve(&names, &q) {
            Ok(i) => return Ok(i),
            Err(Some(candidates)) => {
                return Err(ControlPlaneError::Ambiguous {
                    kind: "key",
                    name: query.to_owned(),
                    candidates,
                })
            }
            Err(None) => {}
        }
    }
    Err(ControlPlaneError::NoSuchKey {
        table: info.name.clone(),
        key: query.to_owned(),
        keys: info.keys.iter().map(|k| k.name.clone()).collect(),
    })
}

/// A `0x`/`0b`/`0o` number with `*` digits: (value, mask of the digits
/// written that are not `*`, bits written, bits per digit). `None` when
/// `text` has no such prefix.
fn wild_number(text: &str) -> Option<Result<(u128, u128, u32, u32), String>> {
    let lower = text.to_ascii_lowercase();
    let (digits, bits) = if let Some(d) = lower.strip_prefix("0x") {
        (d.to_owned(), 4)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d.to_owned(), 1)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d.to_owned(), 3)
    } else {
        return None;
    };
    let radix = 1u32 << bits;
    let mut value = 0u128;
    let mut mask = 0u128;
    let mut total = 0u32;
    let digit_mask = (1u128 << bits) - 1;
    for c in digits.chars().filter(|c| *c != '_') {
        total += bits;
        if total > 128 {
            return Some(Err(format!("`{text}` is wider than 128 bits")));
        }
        value <<= bits;
        mask <<= bits;
        if c == '*' {
            continue;
        }
        match c.to_digit(radix) {
            Some(d) => {
                value |= u128::from(d);
                mask |= digit_mask;
            }
            None => {
                return Some(Err(format!(
                    "`{c}` is not a base-{radix} digit in `{text}`"
                )))
            }
        }
    }
    if total == 0 {
        return Some(Err(format!("`{text}` has no digits")));
    }
    Some(Ok((value, mask, total, bits)))
}

/// Interpret an STF key value for key `k` (see the module documentation).
fn stf_match(text: &str, k: &KeySpec) -> Result<KeyMatch, String> {
    let t = text.trim();
    let width = k.width;
    let full = values_mask(width);
    let explicit = t == "*" || t == "_" || t.contains("&&&") || t.contains("->") || t.contains('/');
    if explicit {
        return parse_match(t, width).map_err(|e| e.to_string());
    }
    let wild = t.contains('*');
    match (k.kind, wild_number(t)) {
        (MatchKind::Ternary, Some(r)) => {
            let (value, mask, _, _) = r?;
            if value & !full != 0 {
                return Err(format!("`{t}` does not fit in {width} bits"));
            }
            Ok(KeyMatch::Ternary {
                value,
                mask: mask & full,
            })
        }
        (MatchKind::Lpm, Some(r)) => {
            let (value, mask, _, bits) = r?;
            if value & !full != 0 {
                return Err(format!("`{t}` does not fit in {width} bits"));
            }
            let care = mask.count_ones() / bits * bits;
            Ok(KeyMatch::Lpm {
                value,
                prefix_len: (care as u16).min(width),
            })
        }
        (_, Some(_)) if wild => Err(format!(
            "`*` digits need a ternary or LPM key; this key is {:?} (use `*` alone for a wildcard)",
            k.kind
        )),
        _ => parse_match(t, width).map_err(|e| e.to_string()),
    }
}

fn values_mask(width: u16) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// A short description of a command for the `-v` transcript.
fn describe(cmd: &Command) -> String {
    match cmd {
        Command::Packet { port, data } => {
            format!("packet {port} ({} bytes)", data.len())
        }
        Command::Expect { port, pattern } => match pattern {
            Some(p) => format!(
                "expect {port} ({} nibbles{})",
                p.nibbles.len(),
                if p.exact { ", exact length" } else { "" }
            ),
            None => format!("expect {port} (any packets)"),
        },
        Command::NoPacket => "no_packet".into(),
        Command::Wait => "wait".into(),
        Command::Add { table, action, .. } => format!("add {table} ... {action}(...)"),
        Command::SetDefault { table, action, .. } => format!("setdefault {table} {action}(...)"),
        Command::Remove(w) => format!("remove {w:?}"),
        Command::CheckCounter { counter, .. } => format!("check_counter {counter}"),
        Command::Cli(t) => t.clone(),
        Command::Read { what, name, index } => format!("{what} {name} {index}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(kind: MatchKind, width: u16) -> KeySpec {
        KeySpec {
            name: "hdr.h.f".into(),
            width,
            kind,
        }
    }

    #[test]
    fn ternary_masks_cover_the_digits_written() {
        let k = key(MatchKind::Ternary, 32);
        assert_eq!(
            stf_match("0x****0101", &k),
            Ok(KeyMatch::Ternary {
                value: 0x0101,
                mask: 0x0000_ffff
            })
        );
        assert_eq!(
            stf_match("0x01", &k),
            Ok(KeyMatch::Ternary {
                value: 1,
                mask: 0xff
            })
        );
        assert_eq!(
            stf_match("0b1*0", &key(MatchKind::Ternary, 8)),
            Ok(KeyMatch::Ternary {
                value: 0b100,
                mask: 0b101
            })
        );
        assert_eq!(
            stf_match("0x0a&&&0x0f", &k),
            Ok(KeyMatch::Ternary {
                value: 0x0a,
                mask: 0x0f
            })
        );
        assert_eq!(stf_match("5", &k), Ok(KeyMatch::Exact { value: 5 }));
        assert_eq!(stf_match("*", &k), Ok(KeyMatch::Any));
        // Leading zero digits beyond the width are fine; set bits are not.
        assert!(stf_match("0x0ff", &key(MatchKind::Ternary, 8)).is_ok());
        assert!(stf_match("0x1ff", &key(MatchKind::Ternary, 8)).is_err());
    }

    #[test]
    fn lpm_prefix_from_digits() {
        let k = key(MatchKind::Lpm, 32);
        assert_eq!(
            stf_match("0x0a******", &k),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0000,
                prefix_len: 8
            })
        );
        assert_eq!(
            stf_match("10.0.0.0/8", &k),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0000,
                prefix_len: 8
            })
        );
        assert_eq!(
            stf_match("0x0a000001", &k),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0001,
                prefix_len: 32
            })
        );
        assert_eq!(
            stf_match("10.0.0.1", &k),
            Ok(KeyMatch::Exact { value: 0x0a00_0001 })
        );
    }

    #[test]
    fn exact_and_range() {
        assert!(stf_match("0x0*", &key(MatchKind::Exact, 8))
            .unwrap_err()
            .contains("ternary"));
        assert_eq!(
            stf_match("3->7", &key(MatchKind::Range, 8)),
            Ok(KeyMatch::Range { lo: 3, hi: 7 })
        );
        assert_eq!(
            stf_match("0x10", &key(MatchKind::Exact, 8)),
            Ok(KeyMatch::Exact { value: 16 })
        );
        assert!(stf_match("256", &key(MatchKind::Exact, 8)).is_err());
    }

    #[test]
    fn key_names() {
        let s = key_spellings("extra$0.h");
        assert_eq!(s[0], "extra[0].h");
        let s = key_spellings("hdr.h.$valid$");
        assert!(s.contains(&"hdr.h.isValid()".to_owned()));
        let s = key_spellings("h.valid");
        assert!(s.contains(&"h.isValid()".to_owned()));
    }

    #[test]
    fn packet_comparison() {
        let p = super::super::parse::pattern("0a*b").unwrap();
        assert_eq!(compare_packet(&p, &[0x0a, 0xcb]), None);
        assert_eq!(compare_packet(&p, &[0x0a, 0xcb, 0xff]), None);
        assert_eq!(
            compare_packet(&p, &[0x0b, 0xcb]),
            Some(Mismatch::Nibble { nibble: 1 })
        );
        assert_eq!(compare_packet(&p, &[0x0a]), Some(Mismatch::TooShort));
        let p = super::super::parse::pattern("0a*b$").unwrap();
        assert_eq!(
            compare_packet(&p, &[0x0a, 0xcb, 0xff]),
            Some(Mismatch::TooLong)
        );
        assert_eq!(compare_packet(&p, &[0x0a, 0x0b]), None);
    }

    #[test]
    fn name_resolution() {
        let names = ["ingress.t", "egress.t", "ingress.setb1", "NoAction"];
        assert_eq!(resolve(&names, "ingress.t"), Ok(0));
        assert_eq!(resolve(&names, "setb1"), Ok(2));
        assert_eq!(
            resolve(&names, "t"),
            Err(Some(vec!["ingress.t".into(), "egress.t".into()]))
        );
        assert_eq!(resolve(&names, "b1"), Err(None));
    }
}
