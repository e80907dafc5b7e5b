//! The artifact's blocks: parsers (states, transitions, select keysets),
//! controls, actions, tables with their keys and entries, and extern
//! instances.

use serde::{Deserialize, Serialize};

use super::*;

/// A parser state machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parser {
    /// Fully-qualified name.
    pub name: String,
    /// States; `accept` and `reject` are not states but [`Next`] values.
    pub states: Vec<ParserState>,
    /// The `start` state.
    pub start: StateId,
}

/// One parser state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParserState {
    /// State name (with an inlined sub-parser's prefix where needed).
    pub name: String,
    /// Statements, run in order.
    pub body: Vec<Stmt>,
    /// Where to go next.
    pub transition: Transition,
}

/// A parser transition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Transition {
    /// Unconditional.
    Direct {
        /// Next state.
        next: Next,
    },
    /// `transition select(keys) { ... }`: the first matching case wins; no match
    /// is `NoMatch` and reject.
    Select {
        /// Key expressions.
        keys: Vec<Expr>,
        /// Cases in source order.
        cases: Vec<SelectCase>,
    },
}

/// One `select` case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelectCase {
    /// One keyset per key (a `default` / `_` case has all `Any`).
    pub keysets: Vec<KeySet>,
    /// Next state.
    pub next: Next,
}

/// A keyset in a `select` case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum KeySet {
    /// `default` or `_`.
    Any,
    /// An exact value.
    Value {
        /// The value.
        #[serde(with = "wide")]
        value: u128,
    },
    /// `value &&& mask`.
    Mask {
        /// Value (already masked).
        #[serde(with = "wide")]
        value: u128,
        /// Mask.
        #[serde(with = "wide")]
        mask: u128,
    },
    /// `lo .. hi` inclusive.
    Range {
        /// Lower bound.
        #[serde(with = "wide")]
        lo: u128,
        /// Upper bound.
        #[serde(with = "wide")]
        hi: u128,
    },
}

/// A transition target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "state")]
pub enum Next {
    /// Another state.
    State(StateId),
    /// `accept`.
    Accept,
    /// `reject`.
    Reject,
}

/// A control block (ingress, egress, checksum, deparser...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Control {
    /// Fully-qualified name.
    pub name: String,
    /// The `apply` body with sub-controls inlined.
    pub body: Vec<Stmt>,
}

/// An action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// Fully-qualified name (`MyIngress.ipv4_forward`, `NoAction`).
    pub name: String,
    /// `@id`: the P4Runtime id the program asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p4rt_id: Option<u32>,
    /// Directionless parameters (action data), in declaration order.
    pub params: Vec<ActionParam>,
    /// The body.
    pub body: Vec<Stmt>,
}

/// A directionless action parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionParam {
    /// Parameter name as written (`port`).
    pub name: String,
    /// The slot the value is written to before the body runs.
    pub field: FieldId,
    /// Width in bits.
    pub width: u16,
}

/// Match kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// Exact.
    Exact,
    /// Longest prefix.
    Lpm,
    /// Value and mask, by priority.
    Ternary,
    /// Inclusive range, by priority.
    Range,
    /// Exact or wildcard, by priority.
    Optional,
}

/// A match-action table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Fully-qualified name (`MyIngress.ipv4_lpm`).
    pub name: String,
    /// `@id`: the P4Runtime id the program asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p4rt_id: Option<u32>,
    /// Key fields in order.
    pub keys: Vec<TableKey>,
    /// Actions the table may run.
    pub actions: Vec<TableAction>,
    /// Action run on a miss.
    pub default_action: DefaultAction,
    /// Entries from the program (`const entries` / `entries`).
    pub entries: Vec<Entry>,
    /// `const entries`: the control plane may not add or remove entries.
    pub entries_const: bool,
    /// Maximum number of entries (`size`, default 1024).
    pub size: u32,
    /// Hidden width-1 slot written with 1 on hit, 0 on miss.
    pub hit: FieldId,
    /// Hidden 32-bit slot written with the [`ActionId`] that ran.
    pub action_run: FieldId,
    /// Direct counter attached with `counters = ...`.
    pub direct_counter: Option<ExternId>,
    /// Direct meter attached with `meters = ...`.
    pub direct_meter: Option<ExternId>,
}

/// A key field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableKey {
    /// Control-plane name: the `@name` annotation or the source text of the
    /// key expression (`hdr.ipv4.dstAddr`).
    pub name: String,
    /// The value matched.
    pub expr: Expr,
    /// Width of the key.
    pub width: u16,
    /// Match kind.
    pub match_kind: MatchKind,
}

/// An action listed in a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableAction {
    /// The action (a compiler-made specialisation when the table binds
    /// directional arguments).
    pub action: ActionId,
    /// Name the control plane uses (`MyIngress.ipv4_forward`).
    pub name: String,
    /// `@defaultonly`: may only be the default action.
    pub default_only: bool,
    /// `@tableonly`: may not be the default action.
    pub table_only: bool,
}

/// The default action of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefaultAction {
    /// The action.
    pub action: ActionId,
    /// Action data.
    #[serde(with = "wide_vec")]
    pub args: Vec<u128>,
    /// `const default_action`: the control plane may not change it.
    pub is_const: bool,
}

/// A table entry from the program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// One match per key.
    pub keys: Vec<KeyMatch>,
    /// Action to run.
    pub action: ActionId,
    /// Action data.
    #[serde(with = "wide_vec")]
    pub args: Vec<u128>,
    /// Explicit `priority` / `@priority`; `None` means by position (earlier wins).
    pub priority: Option<u32>,
}

/// How one key of an entry matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum KeyMatch {
    /// Exact value.
    Exact {
        /// Value.
        #[serde(with = "wide")]
        value: u128,
    },
    /// Prefix of `prefix_len` bits.
    Lpm {
        /// Value (host bits zero).
        #[serde(with = "wide")]
        value: u128,
        /// Prefix length.
        prefix_len: u16,
    },
    /// Value and mask.
    Ternary {
        /// Value (masked).
        #[serde(with = "wide")]
        value: u128,
        /// Mask.
        #[serde(with = "wide")]
        mask: u128,
    },
    /// Inclusive range.
    Range {
        /// Lower bound.
        #[serde(with = "wide")]
        lo: u128,
        /// Upper bound.
        #[serde(with = "wide")]
        hi: u128,
    },
    /// `_` / `default`: matches anything.
    Any,
}

/// A stateful extern instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternInstance {
    /// Fully-qualified instance name (`MyIngress.port_counter`).
    pub name: String,
    /// What it is.
    pub kind: ExternKind,
}

/// Extern instance kinds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ExternKind {
    /// `register<bit<width>>(size)` (PSA: `Register<T, S>(size[, initial])`).
    Register {
        /// Cell width.
        width: u16,
        /// Cells.
        size: u32,
        /// Every cell's value at load (PSA's `initial_value`; 0 otherwise).
        #[serde(default, skip_serializing_if = "is_zero", with = "wide")]
        initial: u128,
    },
    /// `counter(size, type)`.
    Counter {
        /// Cells.
        size: u32,
        /// What is counted.
        unit: CounterUnit,
    },
    /// `direct_counter(type)` attached to a table.
    DirectCounter {
        /// What is counted.
        unit: CounterUnit,
        /// The table it belongs to.
        table: TableId,
    },
    /// `meter(size, type)`: two-rate three-colour (RFC 2698).
    Meter {
        /// Cells.
        size: u32,
        /// Packets or bytes.
        unit: MeterUnit,
    },
    /// `direct_meter<T>(type)` attached to a table.
    DirectMeter {
        /// Packets or bytes.
        unit: MeterUnit,
        /// The table it belongs to.
        table: TableId,
    },
    /// The Property Cache of a NetSparse middle pipe (geometry from the switch config).
    PropertyCache,
    /// PSA `Checksum<bit<width>>(algo)`: the algorithm over every byte given
    /// to `update` since the last `clear`.
    Checksum {
        /// Algorithm.
        algo: HashAlgo,
        /// Result width.
        width: u16,
    },
    /// PSA `InternetChecksum`: a 16-bit one's-complement running sum.
    InternetChecksum,
}

/// Counter units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterUnit {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
    /// Both.
    PacketsAndBytes,
}

/// Meter units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeterUnit {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
}
