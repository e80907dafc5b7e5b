//! The verbs-like host API: a RIG work request (`ibv_post_send` with the
//! `IBV_WR_RIG` opcode of §5.4), command ids and completion-queue entries.

use netsparse_externs::Time;
use serde::Serialize;
use thiserror::Error;

use crate::memory::MemError;
use crate::stats::CommandStats;

/// The `IBV_WR_RIG` opcode value used in logs and the CLI (next to verbs'
/// `IBV_WR_RDMA_READ` = 4).
pub const IBV_WR_RIG: u32 = 0x80;

/// A Remote Indexed Gather work request (§5.1): gather the properties of the
/// `count` idxs at `idx_addr` (little-endian `u64`s) into the destination
/// array at `dest_addr` (the property of idx X at `dest_addr + X *
/// property_size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RigCommand {
    /// Host address of the idx array.
    pub idx_addr: u64,
    /// Host address of the destination array (slot 0).
    pub dest_addr: u64,
    /// Number of idxs.
    pub count: u64,
    /// Bytes per property (K × 4 for K four-byte values).
    pub property_size: u32,
}

/// The id a posted command completes with (like `wr_id`), in posting order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct CommandId(pub u32);

/// Why a command failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Error)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum FailReason {
    /// The watchdog expired before every issued PR was answered (§7.1):
    /// PRs or responses were lost.
    #[error(
        "watchdog: not complete {timeout_us} us after it started ({outstanding} PRs unanswered)"
    )]
    Watchdog {
        /// The watchdog timeout.
        timeout_us: u64,
        /// PRs still outstanding when it fired.
        outstanding: u64,
    },
    /// A DMA access of the command left its registered buffer (an idx whose
    /// destination slot is outside the destination region, or an idx array
    /// that could not be read).
    #[error("bad address {addr:#x} (+{len} bytes): {what}")]
    BadAddress {
        /// The address.
        addr: u64,
        /// Bytes accessed.
        len: u64,
        /// Which access.
        what: String,
    },
    /// Idxs that no node owns (the destination solver had no entry): their
    /// properties were not fetched.
    #[error("{count} idx(s) have no owner node (destination solver miss), first {first}")]
    Unroutable {
        /// How many.
        count: u64,
        /// The first one.
        first: u64,
    },
}

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum CompletionStatus {
    /// Every non-dropped PR was answered and its property written.
    Success,
    /// It failed; its destination buffer must be considered invalid.
    Failed(FailReason),
}

/// A completion-queue entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Completion {
    /// The command.
    pub id: CommandId,
    /// How it ended.
    pub status: CompletionStatus,
    /// When the host sees it (after the last write and the CQE's DMA).
    pub at: Time,
    /// Whether the command's destination buffer may hold partial or wrong
    /// results (every failure): the host discards it (§7.1).
    pub dest_invalid: bool,
    /// The command's statistics.
    pub stats: CommandStats,
}

/// Why `post_rig` rejected a command (it never starts; counted).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PostError {
    /// The idx array is not inside one registered idx region.
    #[error("idx array {addr:#x}+{len} bytes: {source}")]
    BadIdxArray {
        /// Its address.
        addr: u64,
        /// Its length.
        len: u64,
        /// The memory's complaint.
        source: MemError,
    },
    /// The destination address is not inside a registered destination region.
    #[error("destination {addr:#x}: {source}")]
    BadDestination {
        /// The address.
        addr: u64,
        /// The memory's complaint.
        source: MemError,
    },
    /// A property size of 0 or more than one PR can carry.
    #[error("property size {size} (must be 1..={max} bytes at this MTU)")]
    BadPropertySize {
        /// The size.
        size: u32,
        /// The largest allowed.
        max: u32,
    },
    /// `count * 8` overflows.
    #[error("{count} idxs is too many")]
    TooManyIdxs {
        /// The count.
        count: u64,
    },
}

/// A put (GPU-TN's triggered put, in its local form): the NIC writes the
/// 8 bytes of `value` (little-endian) by DMA into a registered destination
/// region of its own host memory at `dest_addr` — a flag or counter the
/// host or an accelerator polls. It completes on the completion queue like
/// a RIG command (after the DMA write).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PutCommand {
    /// Host address written (8 bytes inside one destination region).
    pub dest_addr: u64,
    /// The value written.
    pub value: u64,
}

/// What a triggered operation does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggeredOp {
    /// Start a RIG command (as `post_rig` would, without the doorbell: the
    /// work request is on the NIC since its registration).
    Rig(RigCommand),
    /// Write a value into host memory.
    Put(PutCommand),
}

/// The id of a registered triggered operation, in registration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct TriggeredId(pub u32);

/// Why `post_triggered` refused an operation (nothing is registered;
/// counted in `NicStats::triggered_rejected`).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TriggerError {
    /// Every slot of the trigger table holds an operation not yet fired.
    #[error(
        "trigger table full: {capacity} triggered operations are registered and not yet fired \
         (NicConfig trigger_ops)"
    )]
    TableFull {
        /// The table's size.
        capacity: usize,
    },
    /// The operation's tag is new and every tag counter is in use.
    #[error(
        "trigger tag table full: tag {tag} is new and {capacity} tags already have counters \
         (NicConfig trigger_tags; release_tag frees one)"
    )]
    TagsFull {
        /// The tag.
        tag: u64,
        /// The counter table's size.
        capacity: usize,
    },
    /// A threshold of 0 (an operation fires when its tag's counter reaches
    /// the threshold; at least one trigger is needed).
    #[error("threshold 0 for tag {tag}: the threshold must be at least 1")]
    ZeroThreshold {
        /// The tag.
        tag: u64,
    },
    /// The operation itself is invalid (checked at registration).
    #[error("triggered operation: {0}")]
    Op(#[from] PostError),
}
