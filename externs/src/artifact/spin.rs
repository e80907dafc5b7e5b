//! The sPIN part of the artifact schema: the `SpinNic` package (three
//! message handlers run on the NIC's handler processing units) and the
//! sPIN externs ([`SpinOp`]) that handlers call through [`super::Prim::Spin`].
//!
//! sPIN (Hoefler et al., SC17) runs a *header handler* once per message,
//! *payload handlers* once per packet (in parallel, in any order) and a
//! *completion handler* once all payload handlers of the message finished.
//! `<spin.p4>` declares the package, the types the handlers receive and the
//! externs; the NIC firmware (`netsparse-nic`'s `spin` module) implements them.

use serde::{Deserialize, Serialize};

use super::{ControlId, FieldId};

/// A sPIN extern. Every operand is an `Expr` of the width [`SpinOp::operands`]
/// gives, in declaration order; [`SpinOp::result`] is the width of the value
/// written to the call's destination, if it returns one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpinOp {
    /// `DmaToHost(host_addr, pl_offset, len)`: blocking DMA of payload bytes
    /// `[pl_offset, pl_offset + len)` of the current packet to host memory.
    DmaToHost,
    /// `DmaToHostNB(host_addr, pl_offset, len)`: the same, non-blocking (the
    /// handler does not wait for the write).
    DmaToHostNb,
    /// `DmaFromHost(host_addr) : bit<64>`: blocking 8-byte read of host
    /// memory (little-endian).
    DmaFromHost,
    /// `HostFetchAdd(host_addr, v) : bit<64>`: atomic add on the 8-byte
    /// little-endian word at `host_addr`; returns the old value.
    HostFetchAdd,
    /// `HostCompareSwap(host_addr, expected, desired) : bit<64>`: atomic
    /// compare-and-swap on host memory; returns the old value.
    HostCompareSwap,
    /// `HpuFetchAdd(word, v) : bit<64>`: atomic add on word `word` of the
    /// HPU memory (a register array shared by every handler).
    HpuFetchAdd,
    /// `HpuCompareSwap(word, expected, desired) : bit<64>`: atomic
    /// compare-and-swap on the HPU memory.
    HpuCompareSwap,
    /// `PutFromDevice(dst_node, match_bits)`: send the current packet's
    /// payload to `dst_node` as the packet at the same offset of a message
    /// of the same length with match bits `match_bits`.
    PutFromDevice,
    /// `PutFromHost(dst_node, match_bits, host_addr, len)`: read `len` bytes
    /// of host memory by DMA and send them to `dst_node` as a new message.
    PutFromHost,
    /// `SpinCount(index, v)`: add `v` to NIC counter `index`.
    Count,
    /// `DmaScatterStrided(host_base, stream_offset, block, stride)`: the
    /// current payload is bytes `[stream_offset, +len)` of a contiguous
    /// stream; stream byte `k` goes to `host_base + (k / block) * stride +
    /// k % block` (one DMA write per contiguous piece).
    DmaScatterStrided,
    /// `DmaAccumulate(host_addr, kind)`: element-wise `host[i] += payload[i]`
    /// from `host_addr` (`kind`: 0 `u32`, 1 `u64`, 2 `f32`, little-endian).
    DmaAccumulate,
}

impl SpinOp {
    /// Every op, in declaration order.
    pub const ALL: [SpinOp; 12] = [
        SpinOp::DmaToHost,
        SpinOp::DmaToHostNb,
        SpinOp::DmaFromHost,
        SpinOp::HostFetchAdd,
        SpinOp::HostCompareSwap,
        SpinOp::HpuFetchAdd,
        SpinOp::HpuCompareSwap,
        SpinOp::PutFromDevice,
        SpinOp::PutFromHost,
        SpinOp::Count,
        SpinOp::DmaScatterStrided,
        SpinOp::DmaAccumulate,
    ];

    /// The extern's name in `<spin.p4>`.
    pub fn name(self) -> &'static str {
        match self {
            SpinOp::DmaToHost => "DmaToHost",
            SpinOp::DmaToHostNb => "DmaToHostNB",
            SpinOp::DmaFromHost => "DmaFromHost",
            SpinOp::HostFetchAdd => "HostFetchAdd",
            SpinOp::HostCompareSwap => "HostCompareSwap",
            SpinOp::HpuFetchAdd => "HpuFetchAdd",
            SpinOp::HpuCompareSwap => "HpuCompareSwap",
            SpinOp::PutFromDevice => "PutFromDevice",
            SpinOp::PutFromHost => "PutFromHost",
            SpinOp::Count => "SpinCount",
            SpinOp::DmaScatterStrided => "DmaScatterStrided",
            SpinOp::DmaAccumulate => "DmaAccumulate",
        }
    }

    /// The op named `name` in `<spin.p4>`.
    pub fn from_name(name: &str) -> Option<SpinOp> {
        SpinOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Operand widths, in order.
    pub fn operands(self) -> &'static [u16] {
        match self {
            SpinOp::DmaToHost | SpinOp::DmaToHostNb => &[64, 32, 32],
            SpinOp::DmaFromHost => &[64],
            SpinOp::HostFetchAdd => &[64, 64],
            SpinOp::HostCompareSwap => &[64, 64, 64],
            SpinOp::HpuFetchAdd => &[32, 64],
            SpinOp::HpuCompareSwap => &[32, 64, 64],
            SpinOp::PutFromDevice => &[32, 64],
            SpinOp::PutFromHost => &[32, 64, 64, 32],
            SpinOp::Count => &[32, 64],
            SpinOp::DmaScatterStrided => &[64, 32, 32, 32],
            SpinOp::DmaAccumulate => &[64, 8],
        }
    }

    /// The width of the returned value, if any.
    pub fn result(self) -> Option<u16> {
        match self {
            SpinOp::DmaFromHost
            | SpinOp::HostFetchAdd
            | SpinOp::HostCompareSwap
            | SpinOp::HpuFetchAdd
            | SpinOp::HpuCompareSwap => Some(64),
            _ => None,
        }
    }

    /// Whether the op works on the current packet's payload (payload
    /// handlers only).
    pub fn needs_payload(self) -> bool {
        matches!(
            self,
            SpinOp::DmaToHost
                | SpinOp::DmaToHostNb
                | SpinOp::PutFromDevice
                | SpinOp::DmaScatterStrided
                | SpinOp::DmaAccumulate
        )
    }
}

/// `SpinNic(header_handler, payload_handler, completion_handler) main;`
/// (see `spin.p4`). The three handlers share their arguments' slots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpinNic {
    /// Runs once per message, before any payload handler.
    pub header_handler: ControlId,
    /// Runs once per packet of a message the header handler accepted.
    pub payload_handler: ControlId,
    /// Runs once per message, after every payload handler finished.
    pub completion_handler: ControlId,
    /// The message header (`spin_msg_t`).
    pub msg: SpinMsgSlots,
    /// The packet a payload handler runs on (`spin_pkt_t`).
    pub pkt: SpinPktSlots,
    /// The handler metadata (`spin_md_t`).
    pub md: SpinMdSlots,
    /// Leaves of the per-message handler state (the package's `S`), saved
    /// in the message table between handlers.
    pub state: Vec<FieldId>,
}

/// Slots of `spin_msg_t`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpinMsgSlots {
    /// Sending node (32 bits).
    pub src: FieldId,
    /// Message id, unique per sender (32 bits).
    pub msg_id: FieldId,
    /// Match bits (64 bits).
    pub match_bits: FieldId,
    /// Message length in bytes (32 bits).
    pub length: FieldId,
    /// The sender's 8-byte user header (64 bits).
    pub user: FieldId,
}

/// Slots of `spin_pkt_t`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpinPktSlots {
    /// Offset of this packet's payload in the message (32 bits).
    pub offset: FieldId,
    /// Payload bytes in this packet (32 bits).
    pub length: FieldId,
    /// Packet number in the message (32 bits).
    pub seq: FieldId,
}

/// Slots of `spin_md_t`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpinMdSlots {
    /// Return code (`SPIN_*`, 8 bits).
    pub rc: FieldId,
    /// This NIC's node id (32 bits).
    pub node: FieldId,
    /// The HPU running the handler (16 bits).
    pub hpu: FieldId,
    /// Completion: payload bytes not processed (32 bits).
    pub dropped_bytes: FieldId,
    /// Completion: packets were dropped for want of a free HPU (1 bit).
    pub flow_control: FieldId,
    /// Completion: the message timed out before all its packets came (1 bit).
    pub timed_out: FieldId,
}

/// Handler return codes (`spin.p4`'s `SPIN_*`).
pub mod rc {
    /// Payload and completion handlers: done.
    pub const SUCCESS: u64 = 0;
    /// Header handler: run the payload handlers (the default).
    pub const PROCESS_DATA: u64 = 1;
    /// Header handler: no handlers; deposit the payload at the host address
    /// in the message's user header, as a plain RDMA put would.
    pub const PROCEED: u64 = 2;
    /// Header handler: drop the message; payload handler: drop this packet
    /// (its bytes count as dropped).
    pub const DROP: u64 = 3;
    /// Completion handler: the message failed.
    pub const FAIL: u64 = 4;
}
