//! Error types of the switch library: loading an artifact and control-plane
//! operations. Every error names what was wrong and where.

use netsparse_externs::artifact::MatchKind;

/// Why an artifact could not be loaded into the switch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The artifact asks for something this target cannot run.
    #[error("unsupported by this target: {what} (in {place})")]
    Unsupported {
        /// What is not supported.
        what: String,
        /// Where in the artifact (`control MyIngress`, `table MyIngress.t`...).
        place: String,
    },
    /// The artifact is internally inconsistent (an id out of range, widths
    /// that disagree, ...): a compiler bug or a hand-edited file.
    #[error("invalid artifact: {detail} (in {place})")]
    Invalid {
        /// What is wrong.
        detail: String,
        /// Where in the artifact.
        place: String,
    },
}

fn fmt_list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

fn fmt_candidates(items: &[String]) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!(" (known: {})", items.join(", "))
    }
}

/// A rejected control-plane operation. Each variant names the table, action,
/// key or parameter concerned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ControlPlaneError {
    /// No object of that kind has this name (or suffix).
    #[error("no {kind} named `{name}`{}", fmt_candidates(.known))]
    NoSuchName {
        /// "table", "register", "counter", "meter", ...
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// Names of that kind in the program (for the hint).
        known: Vec<String>,
    },
    /// A suffix matches more than one object.
    #[error("{kind} name `{name}` is ambiguous: it matches {}", fmt_list(.candidates))]
    Ambiguous {
        /// Object kind.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// Every fully-qualified name it matches.
        candidates: Vec<String>,
    },
    /// The action is not in the table's action list.
    #[error("table `{table}` has no action `{action}` (its actions: {})", fmt_list(.allowed))]
    NoSuchAction {
        /// Table.
        table: String,
        /// Action asked for.
        action: String,
        /// The table's actions.
        allowed: Vec<String>,
    },
    /// An `@defaultonly` action used in an entry.
    #[error("action `{action}` of table `{table}` is @defaultonly: it cannot be used in an entry")]
    DefaultOnly {
        /// Table.
        table: String,
        /// Action.
        action: String,
    },
    /// An `@tableonly` action used as the default.
    #[error("action `{action}` of table `{table}` is @tableonly: it cannot be the default action")]
    TableOnly {
        /// Table.
        table: String,
        /// Action.
        action: String,
    },
    /// Wrong number of key fields.
    #[error("table `{table}` has {expected} key field(s), the entry gives {got}")]
    KeyCount {
        /// Table.
        table: String,
        /// Keys of the table.
        expected: usize,
        /// Keys given.
        got: usize,
    },
    /// A match of the wrong kind for the key (e.g. a range on an exact key).
    #[error("key `{key}` of table `{table}` is {kind:?}: a {got} match is not allowed there")]
    KeyKind {
        /// Table.
        table: String,
        /// Key name.
        key: String,
        /// The key's match kind.
        kind: MatchKind,
        /// What was given ("lpm", "ternary", "range", "wildcard").
        got: &'static str,
    },
    /// A key value (or mask, bound) wider than the key.
    #[error("value {value:#x} does not fit key `{key}` of table `{table}` ({width} bits)")]
    KeyTooWide {
        /// Table.
        table: String,
        /// Key name.
        key: String,
        /// The value.
        value: u128,
        /// Key width.
        width: u16,
    },
    /// A prefix longer than the key.
    #[error("prefix length {len} is longer than key `{key}` of table `{table}` ({width} bits)")]
    PrefixTooLong {
        /// Table.
        table: String,
        /// Key name.
        key: String,
        /// Prefix length given.
        len: u16,
        /// Key width.
        width: u16,
    },
    /// A range whose low bound exceeds its high bound.
    #[error("range {lo:#x}->{hi:#x} of key `{key}` in table `{table}` is empty (low > high)")]
    EmptyRange {
        /// Table.
        table: String,
        /// Key name.
        key: String,
        /// Low bound.
        lo: u128,
        /// High bound.
        hi: u128,
    },
    /// Wrong number of action parameters.
    #[error("action `{action}` takes {expected} parameter(s), {got} given (table `{table}`)")]
    ParamCount {
        /// Table.
        table: String,
        /// Action.
        action: String,
        /// Parameters of the action.
        expected: usize,
        /// Parameters given.
        got: usize,
    },
    /// A parameter value that does not fit the parameter.
    #[error(
        "value {value:#x} does not fit parameter `{param}` of action `{action}` ({width} bits)"
    )]
    ParamTooWide {
        /// Action.
        action: String,
        /// Parameter name.
        param: String,
        /// The value.
        value: u128,
        /// Parameter width.
        width: u16,
    },
    /// A parameter named in runtime JSON that the action does not have.
    #[error("action `{action}` has no parameter `{param}` (its parameters: {})", fmt_list(.params))]
    NoSuchParam {
        /// Action.
        action: String,
        /// The unknown parameter.
        param: String,
        /// The action's parameters.
        params: Vec<String>,
    },
    /// A key named in runtime JSON that the table does not have.
    #[error("table `{table}` has no key `{key}` (its keys: {})", fmt_list(.keys))]
    NoSuchKey {
        /// Table.
        table: String,
        /// The unknown key.
        key: String,
        /// The table's keys.
        keys: Vec<String>,
    },
    /// The table's entries are `const`.
    #[error("table `{table}` has const entries: the control plane cannot change them")]
    ConstEntries {
        /// Table.
        table: String,
    },
    /// The table's default action is `const`.
    #[error("table `{table}` has a const default action")]
    ConstDefault {
        /// Table.
        table: String,
    },
    /// The table already holds `size` entries.
    #[error("table `{table}` is full ({size} entries)")]
    TableFull {
        /// Table.
        table: String,
        /// Its size.
        size: u32,
    },
    /// An entry with the same match (and priority) exists.
    #[error("table `{table}` already has an entry with this match{}", .handle.map(|h| format!(" (handle {h})")).unwrap_or_default())]
    Duplicate {
        /// Table.
        table: String,
        /// The existing entry's handle.
        handle: Option<u32>,
    },
    /// A ternary/range/optional table needs a priority.
    #[error("table `{table}` has ternary/range/optional keys: the entry needs a priority")]
    PriorityRequired {
        /// Table.
        table: String,
    },
    /// Exact and LPM tables take no priority.
    #[error("table `{table}` takes no priority (only tables with ternary/range/optional keys do)")]
    PriorityNotAllowed {
        /// Table.
        table: String,
    },
    /// No entry with this handle.
    #[error("table `{table}` has no entry with handle {handle}")]
    NoSuchEntry {
        /// Table.
        table: String,
        /// The handle.
        handle: u32,
    },
    /// The named extern is of another kind.
    #[error("`{name}` is a {found}, not a {expected}")]
    WrongKind {
        /// Name.
        name: String,
        /// Kind required by the operation.
        expected: &'static str,
        /// Its kind.
        found: &'static str,
    },
    /// An index beyond a register/counter/meter array.
    #[error("index {index} is out of range for `{name}` (size {size})")]
    IndexOutOfRange {
        /// Name.
        name: String,
        /// The index.
        index: u64,
        /// Array size.
        size: usize,
    },
    /// A value that does not fit a register cell.
    #[error("value {value:#x} does not fit register `{name}` ({width} bits)")]
    RegisterTooWide {
        /// Register.
        name: String,
        /// Value.
        value: u128,
        /// Cell width.
        width: u16,
    },
    /// Invalid meter rates.
    #[error("meter `{name}`: {detail}")]
    Meter {
        /// Meter.
        name: String,
        /// What is wrong.
        detail: String,
    },
    /// Multicast / mirroring configuration errors.
    #[error("{0}")]
    Replication(String),
    /// The target does not have this feature (multicast on a NIC, say).
    #[error("{0}")]
    Unsupported(String),
    /// A value or key that could not be parsed.
    #[error("cannot parse {what} `{text}`: {detail}")]
    Parse {
        /// What was being parsed ("key value", "parameter", ...).
        what: String,
        /// The text.
        text: String,
        /// Why.
        detail: String,
    },
}

/// An error in a control-plane input file (runtime JSON or BMv2 commands),
/// with its location.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EntriesError {
    /// The file could not be read.
    #[error("cannot read {file}: {detail}")]
    Io {
        /// The file.
        file: String,
        /// The OS error.
        detail: String,
    },
    /// A syntax or shape error (`file:line` or `file: table_entries[i]`).
    #[error("{location}: {detail}")]
    Syntax {
        /// Where.
        location: String,
        /// What is wrong.
        detail: String,
    },
    /// An operation the switch rejected.
    #[error("{location}: {source}")]
    Rejected {
        /// Where.
        location: String,
        /// The switch's error (names the table, action, key...).
        #[source]
        source: ControlPlaneError,
    },
}
