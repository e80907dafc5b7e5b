//! The sPIN NIC's configuration (HPUs, clock, budgets, DMA, buffers) and
//! its statistics.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The shape and timing of a sPIN NIC. Defaults follow sPIN's evaluation
/// (§4.1): 8 HPUs at 2.5 GHz, a discrete NIC's 250 ns DMA latency. Read
/// from TOML by `netsparse nic --config` (keys left out keep these
/// defaults; unknown keys are refused).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpinConfig {
    /// This NIC's node id.
    pub node: u32,
    /// Handler processing units.
    pub hpus: u32,
    /// HPU clock in MHz.
    pub hpu_clock_mhz: u64,
    /// HPU cycles per operation (statement) the engine counts.
    pub cycles_per_op: u64,
    /// Cycle budget of one handler run: this many cycles ...
    pub budget_cycles: u64,
    /// ... plus this many per payload byte of its packet (sPIN's maximum
    /// cycles per byte). A handler over budget is stopped and counted.
    pub budget_cycles_per_byte: u64,
    /// DMA latency (host memory reads and blocking writes), ns: 250 for a
    /// discrete NIC, 50 for an integrated one.
    pub dma_latency_ns: u64,
    /// DMA bandwidth in bytes per ns (a blocking write of n bytes waits
    /// latency + n / bandwidth; every write occupies the DMA engine for
    /// (n + `dma_overhead_bytes`) / bandwidth).
    pub dma_bytes_per_ns: u64,
    /// Bytes of overhead per DMA write (PCIe transaction headers).
    pub dma_overhead_bytes: u64,
    /// Packets that may wait for an HPU; a packet that finds no free HPU
    /// and no buffer is dropped (flow control). 0: drop whenever no HPU is free.
    pub buffer_packets: u32,
    /// Messages in flight at once (the message table).
    pub max_messages: u32,
    /// A message not complete this long after its first packet completes
    /// with `timed_out` (ns).
    pub timeout_ns: u64,
    /// Bytes of host memory (addresses 0 .. this).
    pub host_mem_bytes: u64,
    /// 64-bit words of HPU memory.
    pub hpu_mem_words: u32,
    /// NIC counters (`SpinCount`).
    pub counters: u32,
    /// Payload bytes per packet the NIC sends (PutFromHost).
    pub mtu_payload: u32,
    /// Link rate for the frames the NIC sends, Gbit/s.
    pub link_gbps: u64,
    /// Least time between two frames the NIC sends, ps (LogGP's g).
    pub tx_gap_ps: u64,
}

impl Default for SpinConfig {
    fn default() -> SpinConfig {
        SpinConfig {
            node: 0,
            hpus: 8,
            hpu_clock_mhz: 2500,
            cycles_per_op: 1,
            budget_cycles: 2000,
            budget_cycles_per_byte: 8,
            dma_latency_ns: 250,
            dma_bytes_per_ns: 32,
            dma_overhead_bytes: 24,
            buffer_packets: 64,
            max_messages: 1024,
            timeout_ns: 1_000_000,
            host_mem_bytes: 16 << 20,
            hpu_mem_words: 4096,
            counters: 64,
            mtu_payload: 1440,
            link_gbps: 400,
            tx_gap_ps: 0,
        }
    }
}

/// A configuration value out of range.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("sPIN NIC configuration: `{key}` {problem}")]
pub struct SpinConfigError {
    /// The key.
    pub key: &'static str,
    /// What is wrong.
    pub problem: String,
}

impl SpinConfig {
    /// Check every value.
    pub fn validate(&self) -> Result<(), SpinConfigError> {
        let bad = |key, problem: &str| {
            Err(SpinConfigError {
                key,
                problem: problem.into(),
            })
        };
        if self.hpus == 0 || self.hpus > 4096 {
            return bad("hpus", "must be 1..=4096");
        }
        if self.hpu_clock_mhz == 0 || self.hpu_clock_mhz > 100_000 {
            return bad("hpu_clock_mhz", "must be 1..=100000");
        }
        if self.cycles_per_op == 0 {
            return bad("cycles_per_op", "must be at least 1");
        }
        if self.dma_bytes_per_ns == 0 {
            return bad("dma_bytes_per_ns", "must be at least 1");
        }
        if self.max_messages == 0 || self.max_messages > 1 << 20 {
            return bad("max_messages", "must be 1..=1048576");
        }
        if self.host_mem_bytes > 1 << 32 {
            return bad("host_mem_bytes", "must be at most 4 GiB");
        }
        if self.hpu_mem_words > 1 << 24 || self.counters > 1 << 16 {
            return bad("hpu_mem_words", "must be at most 2^24 (counters: 2^16)");
        }
        if !(64..=9000).contains(&self.mtu_payload) {
            return bad("mtu_payload", "must be 64..=9000");
        }
        if self.link_gbps == 0 {
            return bad("link_gbps", "must be at least 1");
        }
        if self.timeout_ns == 0 {
            return bad("timeout_ns", "must be at least 1");
        }
        Ok(())
    }
}

/// Counters of a sPIN NIC.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SpinStats {
    /// Frames received.
    pub packets_in: u64,
    /// Payload bytes received in sPIN packets.
    pub payload_bytes_in: u64,
    /// Frames that are not sPIN packets or are malformed (dropped).
    pub malformed: u64,
    /// sPIN packets addressed to another node (dropped).
    pub not_for_us: u64,
    /// Messages installed in the message table.
    pub messages: u64,
    /// Messages whose completion handler ran.
    pub messages_completed: u64,
    /// ... of which the completion handler returned `SPIN_FAIL`.
    pub messages_failed: u64,
    /// ... of which timed out before all their packets came.
    pub messages_timed_out: u64,
    /// Messages the header handler dropped.
    pub messages_dropped: u64,
    /// Messages proceeded to host memory without handlers (`SPIN_PROCEED`).
    pub messages_proceeded: u64,
    /// Packets dropped because the message table was full.
    pub message_table_full: u64,
    /// Packets for a message that already completed (dropped).
    pub late_packets: u64,
    /// Duplicate packets of a message in flight (dropped).
    pub duplicate_packets: u64,
    /// Packets whose length or match bits differ from the first packet of
    /// their message (dropped).
    pub inconsistent_packets: u64,
    /// Header handler runs.
    pub header_handlers: u64,
    /// Payload handler runs.
    pub payload_handlers: u64,
    /// Completion handler runs.
    pub completion_handlers: u64,
    /// Packets dropped because no HPU and no buffer was free.
    pub flow_control_drops: u64,
    /// Their payload bytes.
    pub flow_control_bytes: u64,
    /// Packets a payload handler dropped (`SPIN_DROP`).
    pub handler_drops: u64,
    /// Handler runs stopped at their cycle budget.
    pub budget_exceeded: u64,
    /// Operations (statements) run by handlers.
    pub handler_ops: u64,
    /// HPU cycles spent in handlers.
    pub hpu_cycles: u64,
    /// DMA writes to host memory (each contiguous piece counts one).
    pub dma_writes: u64,
    /// Bytes written to host memory by DMA.
    pub dma_write_bytes: u64,
    /// DMA reads of host memory.
    pub dma_reads: u64,
    /// Atomics on host memory.
    pub host_atomics: u64,
    /// Atomics on HPU memory.
    pub hpu_atomics: u64,
    /// Packets sent by PutFromDevice.
    pub puts_from_device: u64,
    /// Messages sent by PutFromHost.
    pub puts_from_host: u64,
    /// Frames sent.
    pub frames_out: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Extern calls refused: host or HPU memory out of range, a payload
    /// extern without a packet, a bad element kind, a put to a bad node.
    pub extern_errors: u64,
}
