//! NIC parameters, with the paper's Table 5 values as defaults, and their
//! validation (every error names the offending key).

use netsparse_externs::time::Clock;
use netsparse_externs::wire::{
    max_prs, pr_capacity, DeviceAddr, PrType, MAX_NODE_ID, PR_HEADER_LEN,
};
use netsparse_externs::Time;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::filtermem::FilterMemoryConfig;

/// Parameters of one SmartNIC. Deserializable (TOML/JSON) with every key
/// optional: missing keys take the defaults of Table 5.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NicConfig {
    /// This NIC's node id (its addresses follow `externs::wire`'s
    /// convention: IPv4 10.0.0.0 + node + 1, MAC `02:4e:53:<node>`).
    pub node: u32,
    /// RIG units in total (Table 5: 32).
    pub rig_units: u32,
    /// How many of them run as client threads; the rest are servers
    /// (default 16 + 16).
    pub client_units: u32,
    /// Pending PR Table entries per client unit (Table 5: 256).
    pub pending_entries: usize,
    /// Idx Filter columns (one bit per sparse-matrix column). An idx at or
    /// beyond it is never filtered (counted).
    pub filter_columns: u64,
    /// NIC clock in MHz (Table 5: 2.2 GHz); a RIG unit reads one idx per cycle.
    pub clock_mhz: u64,
    /// Concatenation DelayCycles (Table 5: 500). 0 disables NIC
    /// concatenation: every PR leaves in its own packet.
    pub delay_cycles: u64,
    /// IP MTU in bytes (Table 5: 1500).
    pub mtu: usize,
    /// Link rate in Gb/s (Table 5: 400): the NIC paces its transmissions.
    pub link_gbps: u64,
    /// TX buffer in bytes (Table 5: 2 MiB): client units stall while it is full.
    pub tx_buffer_bytes: usize,
    /// One-way PCIe latency in ns (Table 5: 200): a DMA read costs two of
    /// them, a DMA write and a command doorbell one.
    pub dma_latency_ns: u64,
    /// DMA bandwidth in GB/s (Table 5: PCIe Gen6, 256 GB/s).
    pub dma_gbytes_per_s: u64,
    /// Idx Buffer size in bytes (Table 5: 4 KiB): idxs are fetched by DMA in
    /// chunks of this size, double-buffered.
    pub idx_buffer_bytes: usize,
    /// Time granularity of a client unit: idxs it processes per timer event
    /// (their PRs are stamped with the batch's start time).
    pub batch_idxs: u32,
    /// Watchdog of a RIG command in microseconds, from when its unit starts it.
    pub watchdog_us: u64,
    /// When `IdxFilterSet` takes effect: when the property's DMA write to
    /// host memory completes (true, §5.2: the bit says the property is in
    /// host memory), or at once, when the response is processed (false).
    pub filter_set_at_write: bool,
    /// The memory hierarchy the Idx Filter lives in (L1/L2/LLC/DRAM).
    pub filter_memory: FilterMemoryConfig,
    /// Seed of the program's random generator.
    pub seed: u64,
    /// Triggered operations the NIC can hold registered and not yet fired
    /// (`post_triggered`; GPU-TN's trigger table). A registration beyond it
    /// is refused with `TriggerError::TableFull` (counted).
    pub trigger_ops: usize,
    /// Trigger tags the NIC keeps a counter for (a tag with registered
    /// operations or triggers counted before its registration). A new tag
    /// beyond it is refused at registration and dropped (counted) at a
    /// trigger.
    pub trigger_tags: usize,
}

impl Default for NicConfig {
    fn default() -> NicConfig {
        NicConfig {
            node: 0,
            rig_units: 32,
            client_units: 16,
            pending_entries: 256,
            filter_columns: 1 << 20,
            clock_mhz: 2_200,
            delay_cycles: 500,
            mtu: 1500,
            link_gbps: 400,
            tx_buffer_bytes: 2 << 20,
            dma_latency_ns: 200,
            dma_gbytes_per_s: 256,
            idx_buffer_bytes: 4096,
            batch_idxs: 64,
            watchdog_us: 10_000,
            filter_set_at_write: true,
            filter_memory: FilterMemoryConfig::default(),
            seed: 1,
            trigger_ops: 1024,
            trigger_tags: 1024,
        }
    }
}

/// A configuration value out of range.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("NIC config key `{key}`: {problem}")]
pub struct ConfigError {
    /// The key.
    pub key: &'static str,
    /// What is wrong with its value.
    pub problem: String,
}

fn bad(key: &'static str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        key,
        problem: problem.into(),
    }
}

impl NicConfig {
    /// Check every value; the error names the first bad key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.node > MAX_NODE_ID {
            return Err(bad(
                "node",
                format!(
                    "{} is beyond the addressing convention's {MAX_NODE_ID}",
                    self.node
                ),
            ));
        }
        if self.rig_units < 2 || self.rig_units > u32::from(u16::MAX) {
            return Err(bad(
                "rig_units",
                format!(
                    "{} (need 2..=65535: at least one client and one server)",
                    self.rig_units
                ),
            ));
        }
        if self.client_units == 0 || self.client_units >= self.rig_units {
            return Err(bad(
                "client_units",
                format!(
                    "{} of {} units (need at least one client and one server unit)",
                    self.client_units, self.rig_units
                ),
            ));
        }
        if self.pending_entries == 0 || self.pending_entries > 1 << 16 {
            return Err(bad(
                "pending_entries",
                format!("{} (must be 1..=65536)", self.pending_entries),
            ));
        }
        if self.filter_columns > 1 << 40 {
            return Err(bad(
                "filter_columns",
                format!("{} (at most 2^40 columns)", self.filter_columns),
            ));
        }
        let fm = &self.filter_memory;
        for (key, v, lo, hi) in [
            ("filter_memory.l1_bytes", fm.l1_bytes, 64, 1 << 40),
            ("filter_memory.l2_bytes", fm.l2_bytes, 64, 1 << 40),
            ("filter_memory.llc_bytes", fm.llc_bytes, 64, 1 << 40),
            ("filter_memory.lsq_entries", fm.lsq_entries, 1, 1 << 20),
            ("filter_memory.l1_cycles", fm.l1_cycles, 0, 1 << 20),
            ("filter_memory.l2_cycles", fm.l2_cycles, 0, 1 << 20),
            ("filter_memory.llc_cycles", fm.llc_cycles, 0, 1 << 20),
            ("filter_memory.dram_ns", fm.dram_ns, 0, 1 << 30),
            (
                "filter_memory.dram_gbytes_per_s",
                fm.dram_gbytes_per_s,
                1,
                1 << 20,
            ),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(bad(key, format!("{v} (must be {lo}..={hi})")));
            }
        }
        if self.clock_mhz == 0 || self.clock_mhz > 100_000 {
            return Err(bad(
                "clock_mhz",
                format!("{} (must be 1..=100000)", self.clock_mhz),
            ));
        }
        if self.delay_cycles > 1 << 32 {
            return Err(bad(
                "delay_cycles",
                format!("{} is too large", self.delay_cycles),
            ));
        }
        if self.mtu > usize::from(u16::MAX) || max_prs(PrType::Read, 0, self.mtu) == 0 {
            return Err(bad(
                "mtu",
                format!(
                    "{} (must hold the 54 bytes of headers and one {PR_HEADER_LEN}-byte PR, at most 65535)",
                    self.mtu
                ),
            ));
        }
        if self.link_gbps == 0 || self.link_gbps > 100_000 {
            return Err(bad(
                "link_gbps",
                format!("{} (must be 1..=100000)", self.link_gbps),
            ));
        }
        if self.tx_buffer_bytes < self.mtu + 14 {
            return Err(bad(
                "tx_buffer_bytes",
                format!(
                    "{} cannot hold one frame of MTU {}",
                    self.tx_buffer_bytes, self.mtu
                ),
            ));
        }
        if self.dma_latency_ns > 1_000_000_000 {
            return Err(bad(
                "dma_latency_ns",
                format!("{} is too large", self.dma_latency_ns),
            ));
        }
        if self.dma_gbytes_per_s == 0 {
            return Err(bad("dma_gbytes_per_s", "must be at least 1"));
        }
        if self.idx_buffer_bytes < 8
            || self.idx_buffer_bytes % 8 != 0
            || self.idx_buffer_bytes > 1 << 24
        {
            return Err(bad(
                "idx_buffer_bytes",
                format!(
                    "{} (a multiple of 8 bytes, 8..=16 MiB)",
                    self.idx_buffer_bytes
                ),
            ));
        }
        if self.batch_idxs == 0 || self.batch_idxs > 1 << 16 {
            return Err(bad(
                "batch_idxs",
                format!("{} (must be 1..=65536)", self.batch_idxs),
            ));
        }
        for (key, v) in [
            ("trigger_ops", self.trigger_ops),
            ("trigger_tags", self.trigger_tags),
        ] {
            if v == 0 || v > 1 << 24 {
                return Err(bad(key, format!("{v} (must be 1..=16777216)")));
            }
        }
        if self.watchdog_us == 0 || self.watchdog_us > 3_600_000_000 {
            return Err(bad(
                "watchdog_us",
                format!("{} (must be 1 us..1 h)", self.watchdog_us),
            ));
        }
        Ok(())
    }

    /// The NIC clock.
    pub fn clock(&self) -> Clock {
        Clock::from_mhz(self.clock_mhz)
    }

    /// The NIC's device address.
    pub fn addr(&self) -> DeviceAddr {
        DeviceAddr::Node(self.node)
    }

    /// Server units (the rest after the clients).
    pub fn server_units(&self) -> u32 {
        self.rig_units - self.client_units
    }

    /// Idxs per Idx Buffer chunk.
    pub fn chunk_idxs(&self) -> usize {
        self.idx_buffer_bytes / 8
    }

    /// Largest property a PR can carry in one packet at this MTU.
    pub fn max_prop_len(&self) -> u32 {
        u32::try_from(pr_capacity(self.mtu).saturating_sub(PR_HEADER_LEN)).unwrap_or(u32::MAX)
    }

    /// One-way PCIe latency.
    pub fn dma_one_way(&self) -> Time {
        Time::from_ns(self.dma_latency_ns)
    }

    /// Transfer time of `bytes` over the DMA link (GB/s = bytes per ns).
    pub fn dma_transfer(&self, bytes: u64) -> Time {
        Time::from_ps(bytes.saturating_mul(1_000) / self.dma_gbytes_per_s.max(1))
    }

    /// A DMA read of `bytes`: round trip plus transfer.
    pub fn dma_read(&self, bytes: u64) -> Time {
        self.dma_one_way() + self.dma_one_way() + self.dma_transfer(bytes)
    }

    /// A DMA write of `bytes`: one way plus transfer.
    pub fn dma_write(&self, bytes: u64) -> Time {
        self.dma_one_way() + self.dma_transfer(bytes)
    }

    /// The watchdog timeout.
    pub fn watchdog(&self) -> Time {
        Time::from_us(self.watchdog_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_table_5_and_valid() {
        let c = NicConfig::default();
        c.validate().unwrap();
        assert_eq!(
            (c.rig_units, c.client_units, c.server_units()),
            (32, 16, 16)
        );
        assert_eq!(c.pending_entries, 256);
        assert_eq!(c.clock().cycles(500), Time::from_ps(227_273));
        assert_eq!(c.chunk_idxs(), 512);
        assert_eq!(c.dma_read(4096), Time::from_ns(416));
        assert_eq!(c.dma_write(64), Time::from_ps(200_250));
        assert_eq!(c.max_prop_len(), 1428);
    }

    #[test]
    fn errors_name_the_key() {
        let cases: Vec<(NicConfig, &str)> = vec![
            (
                NicConfig {
                    client_units: 0,
                    ..Default::default()
                },
                "client_units",
            ),
            (
                NicConfig {
                    client_units: 32,
                    ..Default::default()
                },
                "client_units",
            ),
            (
                NicConfig {
                    rig_units: 1,
                    ..Default::default()
                },
                "rig_units",
            ),
            (
                NicConfig {
                    pending_entries: 0,
                    ..Default::default()
                },
                "pending_entries",
            ),
            (
                NicConfig {
                    mtu: 60,
                    ..Default::default()
                },
                "mtu",
            ),
            (
                NicConfig {
                    link_gbps: 0,
                    ..Default::default()
                },
                "link_gbps",
            ),
            (
                NicConfig {
                    tx_buffer_bytes: 100,
                    ..Default::default()
                },
                "tx_buffer_bytes",
            ),
            (
                NicConfig {
                    idx_buffer_bytes: 12,
                    ..Default::default()
                },
                "idx_buffer_bytes",
            ),
            (
                NicConfig {
                    batch_idxs: 0,
                    ..Default::default()
                },
                "batch_idxs",
            ),
            (
                NicConfig {
                    watchdog_us: 0,
                    ..Default::default()
                },
                "watchdog_us",
            ),
            (
                NicConfig {
                    node: u32::MAX,
                    ..Default::default()
                },
                "node",
            ),
            (
                NicConfig {
                    dma_gbytes_per_s: 0,
                    ..Default::default()
                },
                "dma_gbytes_per_s",
            ),
            (
                NicConfig {
                    trigger_ops: 0,
                    ..Default::default()
                },
                "trigger_ops",
            ),
            (
                NicConfig {
                    trigger_tags: 1 << 25,
                    ..Default::default()
                },
                "trigger_tags",
            ),
        ];
        for (c, key) in cases {
            let e = c.validate().unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert!(e.to_string().contains(key));
        }
    }

    #[test]
    fn deserializes_partial_documents() {
        let c: NicConfig = serde_json::from_str(r#"{"node": 3, "delay_cycles": 0}"#).unwrap();
        assert_eq!((c.node, c.delay_cycles, c.rig_units), (3, 0, 32));
        assert!(serde_json::from_str::<NicConfig>(r#"{"nodes": 3}"#).is_err());
    }
}
