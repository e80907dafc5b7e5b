//! The mutable half of a loaded program: table entries, stateful externs,
//! the seeded random generator, scratch buffers and engine counters.

use netsparse_externs::artifact::HashAlgo;
use netsparse_externs::hash::SplitMix64;
use netsparse_externs::meter::MeterArray;
use netsparse_externs::stateful::{CounterArray, RegisterArray};
use netsparse_externs::Time;

use crate::tables::TableRt;

/// A stateful extern instance's run-time state.
#[derive(Clone, Debug)]
pub enum ExternRt {
    /// `register`.
    Register(RegisterArray),
    /// `counter`.
    Counter(CounterArray),
    /// `meter`.
    Meter(MeterArray),
    /// `direct_counter` (cells live in the table's entries).
    DirectCounter {
        /// The table.
        table: u32,
    },
    /// `direct_meter` (meters live in the table's entries).
    DirectMeter {
        /// The table.
        table: u32,
    },
    /// A NetSparse middle pipe's Property Cache: its state lives in the
    /// target (the NetSparse switch of `netsparse-bmv2`), reached through `CacheLookup`/`CacheInsert`.
    PropertyCache,
    /// PSA `Checksum`: its algorithm and the bytes given to `update` since
    /// the last `clear` (the buffer keeps its capacity across packets).
    Checksum {
        /// Algorithm.
        algo: HashAlgo,
        /// Bytes to checksum, at most [`MAX_CHECKSUM_BYTES`].
        buf: Vec<u8>,
    },
    /// PSA `InternetChecksum`: the one's-complement running sum. Like every
    /// extern's state (and as on BMv2) it lasts across packets: a program
    /// calls `clear()` before it starts a new checksum.
    InternetChecksum {
        /// The running sum (not complemented).
        sum: u16,
    },
}

/// Most bytes a PSA `Checksum` accumulates between two `clear()` calls;
/// further data is dropped and counted in [`EngineStats::checksum_overflows`].
pub const MAX_CHECKSUM_BYTES: usize = 64 * 1024;

impl ExternRt {
    /// Kind name for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            ExternRt::Register(_) => "register",
            ExternRt::Counter(_) => "counter",
            ExternRt::Meter(_) => "meter",
            ExternRt::DirectCounter { .. } => "direct_counter",
            ExternRt::DirectMeter { .. } => "direct_meter",
            ExternRt::PropertyCache => "property_cache",
            ExternRt::Checksum { .. } => "Checksum",
            ExternRt::InternetChecksum { .. } => "InternetChecksum",
        }
    }
}

/// A `digest` message sent by the data plane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestMsg {
    /// Receiver id.
    pub receiver: u128,
    /// Digest struct type name.
    pub name: String,
    /// Field names and values.
    pub fields: Vec<(String, u128)>,
}

/// Most digests kept for the control plane before the oldest are dropped.
pub const MAX_DIGESTS: usize = 4096;

/// Counters of the execution engine (not per port).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct EngineStats {
    /// Register/counter/meter accesses with an out-of-range index (v1model:
    /// reads give 0, writes and counts do nothing).
    pub extern_index_out_of_range: u64,
    /// `assert`/`assume` calls that failed (the packet is dropped).
    pub assertions_failed: u64,
    /// `digest` calls.
    pub digests: u64,
    /// Digests dropped because the control plane did not collect them.
    pub digests_dropped: u64,
    /// `log_msg` calls.
    pub log_msgs: u64,
    /// Parsers stopped by the state-transition limit (`ParserTimeout`).
    pub parser_timeouts: u64,
    /// Loops stopped after `exec::MAX_LOOP_ITERATIONS` iterations.
    pub loop_limits: u64,
    /// PSA `Checksum.update` data dropped because the checksum already held
    /// [`MAX_CHECKSUM_BYTES`] bytes.
    pub checksum_overflows: u64,
}

/// The mutable run-time state of a program.
#[derive(Debug)]
pub struct Runtime {
    /// Tables (entries), by table id.
    pub tables: Vec<TableRt>,
    /// Extern instances, by extern id.
    pub externs: Vec<ExternRt>,
    /// Extern names, by extern id.
    pub extern_names: Vec<String>,
    /// Seeded generator for `random()` and the `random` hash.
    pub rng: SplitMix64,
    /// Current time (meters).
    pub now: Time,
    /// Per-packet tracing enabled (checked before formatting anything).
    pub trace: bool,
    /// Key values of the table being applied.
    pub keybuf: Vec<u128>,
    /// Scratch for LPM exact parts.
    pub scratch: Vec<u128>,
    /// Bytes fed to a hash or checksum.
    pub hashbuf: Vec<u8>,
    /// Digests not yet collected.
    pub digests: std::collections::VecDeque<DigestMsg>,
    /// Engine counters.
    pub stats: EngineStats,
    /// Statements run since the target last reset it (each block counts
    /// its statements when it is entered): the operation count targets
    /// turn into handler time.
    pub ops: u64,
    /// A block entered with `ops` above this stops the run as `exit` would
    /// (a target's cycle budget; `u64::MAX`, the default, never stops).
    pub op_limit: u64,
}

impl Runtime {
    /// A runtime for these tables and externs.
    pub fn new(
        tables: Vec<TableRt>,
        externs: Vec<ExternRt>,
        extern_names: Vec<String>,
        seed: u64,
    ) -> Runtime {
        Runtime {
            tables,
            externs,
            extern_names,
            rng: SplitMix64::new(seed),
            now: Time::ZERO,
            trace: false,
            keybuf: Vec::with_capacity(16),
            scratch: Vec::with_capacity(16),
            hashbuf: Vec::with_capacity(256),
            digests: std::collections::VecDeque::new(),
            stats: EngineStats::default(),
            ops: 0,
            op_limit: u64::MAX,
        }
    }
}
