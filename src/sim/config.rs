//! Simulation parameters (Table 5) with defaults, TOML loading and range
//! checks.
//!
//! Every field has Table 5's value as its default, can be set in a TOML
//! file (kebab-case keys, e.g. `link-gbps = 200`; unknown keys are errors)
//! and on the command line, and is range-checked by [`SimConfig::validate`]
//! with an error naming the parameter, its value and the allowed range.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use netsparse_externs::wire::{pr_stride, PrType, IP_OVERHEAD};
use netsparse_externs::Time;

use super::compute::{ComputeModel, Rates, COMPUTE_MODELS};
use super::engine::{BufferKind, BufferSpec, EngineConfig, LinkParams};
use super::hostmodel::HostModel;
use super::topology::{Routing, Topology, TopologyError, TopologySpec};

/// Which header sizes the links charge NetSparse packets (Table 5
/// gives 50 B of upper-layer headers and a 12 B concatenation header;
/// Figure 6 and our frames carry Ethernet + IPv4 + UDP + BTH = 54 B and a
/// 14 B concatenation header; PR headers are 18 B in both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Headers {
    /// What the frames carry: 54 + 14 B per packet.
    #[default]
    Wire,
    /// Table 5's accounting: 50 + 12 B per packet. Only the charge
    /// changes (serialisation time, byte counts, SAOpt's model); the frames
    /// and how many PRs fit in one are the wire format's.
    Paper,
}

impl Headers {
    /// The CLI and TOML names.
    pub const NAMES: &'static str = "wire, paper";

    /// The CLI and TOML name.
    pub fn name(self) -> &'static str {
        match self {
            Headers::Wire => "wire",
            Headers::Paper => "paper",
        }
    }

    /// Bytes per NetSparse packet charged beyond (or below) what it carries.
    pub fn adjust(self) -> i64 {
        match self {
            Headers::Wire => 0,
            Headers::Paper => (50 + 12) - (54 + 14),
        }
    }
}

impl std::str::FromStr for Headers {
    type Err = String;
    fn from_str(s: &str) -> Result<Headers, String> {
        match s {
            "wire" => Ok(Headers::Wire),
            "paper" => Ok(Headers::Paper),
            other => Err(format!(
                "unknown header accounting {other:?} (one of {})",
                Headers::NAMES
            )),
        }
    }
}

/// When a SmartNIC's Idx Filter bit for an idx is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterBit {
    /// When the property's DMA write to host memory completes (§5.2):
    /// an idx read again before then misses the filter.
    #[default]
    Write,
    /// As soon as the response is processed (the bit set about one DMA
    /// write, 200 ns, early).
    Response,
}

impl FilterBit {
    /// The CLI and TOML names.
    pub const NAMES: &'static str = "write, response";

    /// The CLI and TOML name.
    pub fn name(self) -> &'static str {
        match self {
            FilterBit::Write => "write",
            FilterBit::Response => "response",
        }
    }
}

impl std::str::FromStr for FilterBit {
    type Err = String;
    fn from_str(s: &str) -> Result<FilterBit, String> {
        match s {
            "write" => Ok(FilterBit::Write),
            "response" => Ok(FilterBit::Response),
            other => Err(format!(
                "unknown filter-bit timing {other:?} (one of {})",
                FilterBit::NAMES
            )),
        }
    }
}

/// A bad configuration.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// A parameter outside its range.
    #[error("{name} = {value} is out of range: {range}")]
    OutOfRange {
        /// The parameter (its TOML key).
        name: &'static str,
        /// Its value.
        value: String,
        /// The allowed range.
        range: String,
    },
    /// The topology parameters do not make a cluster.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The TOML file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The TOML file does not parse (unknown key, wrong type, syntax).
    #[error("{path}: {message}")]
    Toml {
        /// The path.
        path: String,
        /// The parser's message (names the key and line).
        message: String,
    },
}

/// The parameters of a simulated run. Defaults are Table 5's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SimConfig {
    /// Compute nodes (Table 5: 128).
    pub nodes: u32,
    /// The network (leaf-spine; Figure 22 also runs hyperx and dragonfly).
    pub topology: TopologySpec,
    /// Racks (Table 5: 8, i.e. 16 nodes per rack).
    pub racks: u32,
    /// Spine switches (default: hosts per rack).
    pub spines: Option<u32>,
    /// Property elements of 4 bytes (K; the paper uses 1, 16, 128).
    pub k: u32,
    /// IP MTU in bytes (1500).
    pub mtu: u32,
    /// Link bandwidth, Gb/s (400).
    pub link_gbps: u64,
    /// One-way link latency, ns (450).
    pub link_latency_ns: u64,
    /// Switch pipeline latency, ns (300).
    pub switch_latency_ns: u64,
    /// Nonzeros per RIG command (32k; the paper uses 8k for europe and uk).
    pub rig_batch: u32,
    /// RIG Units per SNIC (32).
    pub rig_units: u32,
    /// How many of the RIG Units are client threads (default: half, the
    /// paper's client/server pairs); the rest serve reads.
    pub rig_clients: Option<u32>,
    /// Pending PR Table entries per RIG Unit (256).
    pub pending_entries: u32,
    /// NIC concatenation delay cycles (500).
    pub nic_delay_cycles: u64,
    /// Switch concatenation delay cycles (125).
    pub switch_delay_cycles: u64,
    /// Cycles each PR occupies a NetSparse ToR's middle pipe (1: §6.2's
    /// one PR per cycle per pipe; 0: no rate limit).
    pub switch_pr_cycles: u64,
    /// How ToRs pick the spine of traffic between racks (rack-pair).
    pub routing: Routing,
    /// Each switch's shared packet buffer, bytes (Table 5: 96 MB), guarded
    /// by lossless credit-based flow control on the links into the switch;
    /// 0: unbounded queues, no flow control.
    pub switch_buffer_bytes: u64,
    /// Each SmartNIC's RX buffer, bytes (Table 5: 2 MB), guarded alike;
    /// 0: unbounded.
    pub nic_buffer_bytes: u64,
    /// When the Idx Filter bit is set (write: when the property reaches
    /// host memory, §5.2).
    pub filter_bit: FilterBit,
    /// Model the SmartNIC memory the Idx Filter lives in (L1/L2/LLC/DRAM,
    /// Table 5); false: lookups cost nothing.
    pub filter_memory: bool,
    /// Header sizes the links charge NetSparse packets (wire).
    pub headers: Headers,
    /// SNIC clock, MHz (2200).
    pub nic_clock_mhz: u64,
    /// Switch clock, MHz (2000).
    pub switch_clock_mhz: u64,
    /// Property Cache size per switch, bytes (32 MiB; 0 disables it).
    pub cache_bytes: u64,
    /// An unbounded Property Cache (Figure 18's "infinite"); overrides
    /// `cache-bytes`.
    pub cache_unbounded: bool,
    /// Property Cache associativity (16).
    pub cache_ways: u32,
    /// Property Cache latency, switch cycles (16).
    pub cache_latency_cycles: u64,
    /// SAOpt: cores per node generating PRs (64).
    pub sa_cores: u32,
    /// SAOpt: software overhead per PR on one core, ns (see `sim::analytic`).
    pub sa_pr_overhead_ns: f64,
    /// Seed of the generators.
    pub seed: u64,
    /// Event-loop cap: events.
    pub max_events: u64,
    /// Event-loop cap: simulated time, ms. A RIG command still waiting
    /// for responses after half of it fails by the SmartNIC's watchdog (its
    /// PRs were lost), so such a run ends with a report, not at the cap.
    pub max_sim_time_ms: u64,
    /// Host: one core posts each node's RIG commands one after another,
    /// each costing this many ns (0: all posted at time 0).
    pub host_post_ns: u64,
    /// The in-node compute engine for end-to-end figures (`none`:
    /// communication only, as Figure 12 and Tables 7 and 8).
    pub compute: ComputeModel,
    /// Override of the compute engine's sustained GFLOP/s.
    pub compute_gflops: Option<f64>,
    /// Override of the compute engine's sustained memory bandwidth, GB/s.
    pub compute_gbps: Option<f64>,
    /// When the hosts hand their RIG commands to the SmartNICs
    /// (post-at-zero; triggered: fired by the kernel's chunks, see
    /// [`crate::sim::hostmodel`]).
    pub host_model: HostModel,
    /// The kernel's rate, nonzeros per second per node; overrides the
    /// `compute` model's roofline time for the host model's kernel.
    pub compute_rate: Option<f64>,
    /// Nonzeros per kernel chunk: a chunk's completion triggers the RIG
    /// commands of its remote nonzeros (triggered).
    pub chunk_nnz: u64,
    /// Each SmartNIC's trigger table: operations registered and not yet
    /// fired, and tags with a counter (each).
    pub trigger_table: u64,
}

/// Default cost of posting one RIG command on the host core, ns: building
/// the work request and ringing the doorbell (an uncached MMIO write), the
/// order of a verbs `ibv_post_send`. The paper gives no value; see the
/// README's notes on Figure 15.
pub const DEFAULT_HOST_POST_NS: u64 = 250;

/// Default nonzeros per kernel chunk of the triggered host model.
pub const DEFAULT_CHUNK_NNZ: u64 = 4096;

/// Default size of a SmartNIC's trigger table (operations and tags).
pub const DEFAULT_TRIGGER_TABLE: u64 = 1024;

/// Default switch packet buffer: Table 5's 96 MB (taken as MiB).
pub const DEFAULT_SWITCH_BUFFER_BYTES: u64 = 96 << 20;

/// Default SmartNIC RX buffer: Table 5's 2 MB (taken as MiB).
pub const DEFAULT_NIC_BUFFER_BYTES: u64 = 2 << 20;

/// Default SAOpt overhead per PR per core, ns: see [`crate::sim::analytic`]
/// for the calibration.
pub const DEFAULT_SA_PR_OVERHEAD_NS: f64 = 750.0;

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            nodes: 128,
            topology: TopologySpec::LeafSpine,
            racks: 8,
            spines: None,
            k: 16,
            mtu: 1500,
            link_gbps: 400,
            link_latency_ns: 450,
            switch_latency_ns: 300,
            rig_batch: 32 * 1024,
            rig_units: 32,
            rig_clients: None,
            pending_entries: 256,
            nic_delay_cycles: 500,
            switch_delay_cycles: 125,
            switch_pr_cycles: 1,
            routing: Routing::RackPair,
            switch_buffer_bytes: DEFAULT_SWITCH_BUFFER_BYTES,
            nic_buffer_bytes: DEFAULT_NIC_BUFFER_BYTES,
            filter_bit: FilterBit::Write,
            filter_memory: true,
            headers: Headers::Wire,
            nic_clock_mhz: 2200,
            switch_clock_mhz: 2000,
            cache_bytes: 32 << 20,
            cache_unbounded: false,
            cache_ways: 16,
            cache_latency_cycles: 16,
            sa_cores: 64,
            sa_pr_overhead_ns: DEFAULT_SA_PR_OVERHEAD_NS,
            seed: 1,
            max_events: 20_000_000_000,
            max_sim_time_ms: 60_000,
            host_post_ns: DEFAULT_HOST_POST_NS,
            compute: ComputeModel::None,
            compute_gflops: None,
            compute_gbps: None,
            host_model: HostModel::PostAtZero,
            compute_rate: None,
            chunk_nnz: DEFAULT_CHUNK_NNZ,
            trigger_table: DEFAULT_TRIGGER_TABLE,
        }
    }
}

fn check<T: PartialOrd + fmt::Display + Copy>(
    name: &'static str,
    v: T,
    lo: T,
    hi: T,
) -> Result<(), ConfigError> {
    if v < lo || v > hi {
        return Err(ConfigError::OutOfRange {
            name,
            value: v.to_string(),
            range: format!("{lo}..={hi}"),
        });
    }
    Ok(())
}

impl SimConfig {
    /// Read a TOML file (missing keys keep their defaults).
    pub fn from_toml_file(path: &Path) -> Result<SimConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        SimConfig::from_toml_str(&text, &path.display().to_string())
    }

    /// Parse TOML text; `path` names it in errors.
    pub fn from_toml_str(text: &str, path: &str) -> Result<SimConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Toml {
            path: path.to_string(),
            message: e.to_string().trim_end().to_string(),
        })
    }

    /// The compute engine's rates with the overrides applied (`None`
    /// without a compute model).
    pub fn compute_rates(&self) -> Option<Rates> {
        let mut r = self.compute.rates()?;
        if let Some(g) = self.compute_gflops {
            r.gflops = g;
        }
        if let Some(b) = self.compute_gbps {
            r.gbps = b;
        }
        Some(r)
    }

    /// Check every parameter's range and the topology.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check("nodes", self.nodes, 2, 1 << 20)?;
        check("racks", self.racks, 1, self.nodes)?;
        if let Some(s) = self.spines {
            check("spines", s, 1, 510)?;
        }
        check("mtu", self.mtu, 128, 9216)?;
        check("k", self.k, 1, 4096)?;
        // One response PR must fit in a packet.
        let max_k = ((self.mtu as usize - IP_OVERHEAD - pr_stride(PrType::Read, 0)) / 4) as u32;
        if self.k > max_k {
            return Err(ConfigError::OutOfRange {
                name: "k",
                value: self.k.to_string(),
                range: format!("1..={max_k} (one response PR of K x 4 bytes + 18 must fit the MTU {} minus 54 header bytes)", self.mtu),
            });
        }
        check("link-gbps", self.link_gbps, 1, 100_000)?;
        check("link-latency-ns", self.link_latency_ns, 0, 1_000_000_000)?;
        check(
            "switch-latency-ns",
            self.switch_latency_ns,
            0,
            1_000_000_000,
        )?;
        check("rig-batch", self.rig_batch, 1, 1 << 24)?;
        check("rig-units", self.rig_units, 2, 1024)?;
        if let Some(c) = self.rig_clients {
            check("rig-clients", c, 1, self.rig_units - 1)?;
        }
        check("pending-entries", self.pending_entries, 1, 1 << 20)?;
        check("nic-delay-cycles", self.nic_delay_cycles, 0, 100_000_000)?;
        check(
            "switch-delay-cycles",
            self.switch_delay_cycles,
            0,
            100_000_000,
        )?;
        check("nic-clock-mhz", self.nic_clock_mhz, 1, 100_000)?;
        check("switch-clock-mhz", self.switch_clock_mhz, 1, 100_000)?;
        check("cache-bytes", self.cache_bytes, 0, 1 << 34)?;
        check("cache-ways", self.cache_ways, 1, 128)?;
        check(
            "cache-latency-cycles",
            self.cache_latency_cycles,
            0,
            1_000_000,
        )?;
        check("sa-cores", self.sa_cores, 1, 65_536)?;
        if !(self.sa_pr_overhead_ns.is_finite()
            && self.sa_pr_overhead_ns > 0.0
            && self.sa_pr_overhead_ns <= 1e9)
        {
            return Err(ConfigError::OutOfRange {
                name: "sa-pr-overhead-ns",
                value: self.sa_pr_overhead_ns.to_string(),
                range: "0 < x <= 1e9".into(),
            });
        }
        for (name, v) in [
            ("compute-gflops", self.compute_gflops),
            ("compute-gbps", self.compute_gbps),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0 && v <= 1e9) {
                    return Err(ConfigError::OutOfRange {
                        name,
                        value: v.to_string(),
                        range: "0 < x <= 1e9".into(),
                    });
                }
            }
        }
        check("host-post-ns", self.host_post_ns, 0, 1_000_000_000)?;
        if let Some(r) = self.compute_rate {
            if !(r.is_finite() && (1e3..=1e15).contains(&r)) {
                return Err(ConfigError::OutOfRange {
                    name: "compute-rate",
                    value: r.to_string(),
                    range: "1e3..=1e15 nonzeros per second per node".into(),
                });
            }
        }
        check("chunk-nnz", self.chunk_nnz, 1, 1 << 32)?;
        check("trigger-table", self.trigger_table, 1, 1 << 24)?;
        if self.host_model == HostModel::Triggered
            && self.compute_rate.is_none()
            && self.compute == ComputeModel::None
        {
            return Err(ConfigError::OutOfRange {
                name: "host-model",
                value: "triggered".into(),
                range: "post-at-zero without a compute time; triggered needs one: \
                        compute = spade, cpu-ddr or cpu-hbm, or compute-rate = N (nonzeros \
                        per second per node)"
                    .into(),
            });
        }
        check("switch-pr-cycles", self.switch_pr_cycles, 0, 1_000_000)?;
        check("max-events", self.max_events, 1, u64::MAX)?;
        check("max-sim-time-ms", self.max_sim_time_ms, 1, 1_000_000_000)?;
        let t = self.topology()?;
        // Every input buffer (a switch's buffer split over its ports) must
        // hold the largest frame: the MTU plus the Ethernet header. 0 turns
        // the model off.
        let frame = u64::from(self.mtu) + 14;
        let switch_ports = u64::from(t.tor_ports().max(t.spine_ports()));
        for (name, v, ports) in [
            (
                "switch-buffer-bytes",
                self.switch_buffer_bytes,
                switch_ports,
            ),
            ("nic-buffer-bytes", self.nic_buffer_bytes, 1),
        ] {
            let least = frame * ports;
            if v != 0 && !(least..=1 << 40).contains(&v) {
                return Err(ConfigError::OutOfRange {
                    name,
                    value: v.to_string(),
                    range: format!(
                        "0 (unbounded), or {least}..={} (one {frame}-byte frame per port, {ports} port(s), to 1 TiB)",
                        1u64 << 40
                    ),
                });
            }
        }
        if self.cache_bytes > 0 && !self.cache_unbounded {
            // Each middle pipe of a ToR gets an equal share, which must be
            // 512 B x ways x a power of two (the cache's sets).
            let pipes = u64::from(t.tor_pipes());
            let per_way = 512 * u64::from(self.cache_ways);
            let share = self.cache_bytes / pipes;
            if self.cache_bytes % pipes != 0
                || share % per_way != 0
                || !(share / per_way).is_power_of_two()
            {
                return Err(ConfigError::OutOfRange {
                    name: "cache-bytes",
                    value: self.cache_bytes.to_string(),
                    range: format!(
                        "0, or {pipes} pipes x 512 B x {} ways x a power of two (e.g. {})",
                        self.cache_ways,
                        pipes * per_way * 1024
                    ),
                });
            }
        }
        Ok(())
    }

    /// Client RIG Units per SmartNIC.
    pub fn client_units(&self) -> u32 {
        self.rig_clients
            .unwrap_or((self.rig_units / 2).max(1))
            .min(self.rig_units.saturating_sub(1).max(1))
    }

    /// The topology of these parameters.
    pub fn topology(&self) -> Result<Topology, TopologyError> {
        if self.topology != TopologySpec::LeafSpine && self.routing != Routing::RackPair {
            return Err(TopologyError::Parameter {
                name: "routing",
                value: self.routing.to_string(),
                range: format!(
                    "rack-pair (the default) with --topology {}: routing chooses among a leaf-spine's spines; \
                     HyperX and Dragonfly have their own minimal routing",
                    self.topology.kind()
                ),
            });
        }
        Ok(
            Topology::build(self.topology, self.nodes, self.racks, self.spines)?
                .with_routing(self.routing),
        )
    }

    /// Bytes of one property (K × 4).
    pub fn prop_bytes(&self) -> u32 {
        self.k * 4
    }

    /// The link parameters.
    pub fn link(&self) -> LinkParams {
        LinkParams {
            gbps: self.link_gbps,
            latency: Time::from_ns(self.link_latency_ns),
        }
    }

    /// The event loop's limits from `max-events` and `max-sim-time-ms`,
    /// with an optional stop flag (Ctrl-C).
    pub fn engine_config(
        &self,
        stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> EngineConfig {
        EngineConfig {
            max_events: self.max_events,
            max_time: Time::from_ms(self.max_sim_time_ms),
            stop,
            netsparse_header_adjust: self.headers.adjust(),
            ..EngineConfig::default()
        }
    }

    /// The buffer model of a switch (`None`: unbounded).
    pub fn switch_buffer(&self) -> Option<BufferSpec> {
        (self.switch_buffer_bytes > 0).then_some(BufferSpec {
            capacity: self.switch_buffer_bytes,
            kind: BufferKind::Shared,
        })
    }

    /// The buffer model of a SmartNIC (`None`: unbounded).
    pub fn nic_buffer(&self) -> Option<BufferSpec> {
        (self.nic_buffer_bytes > 0).then_some(BufferSpec {
            capacity: self.nic_buffer_bytes,
            kind: BufferKind::Receive,
        })
    }

    /// The switch pipeline latency.
    pub fn switch_latency(&self) -> Time {
        Time::from_ns(self.switch_latency_ns)
    }

    /// Set one parameter by its TOML key from a string (the sweep mode
    /// uses this). Returns an error naming the key for unknown keys and
    /// unparsable values; ranges are checked by [`SimConfig::validate`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let bad = |range: &str| ConfigError::OutOfRange {
            name: static_key(key),
            value: value.to_string(),
            range: range.to_string(),
        };
        fn p<T: std::str::FromStr>(v: &str) -> Option<T> {
            v.trim().replace('_', "").parse().ok()
        }
        fn bytes(v: &str) -> Option<u64> {
            crate::sim::memory::parse_bytes(&v.replace('_', "")).ok()
        }
        let int = "an integer";
        match key {
            "nodes" => self.nodes = p(value).ok_or_else(|| bad(int))?,
            "racks" => self.racks = p(value).ok_or_else(|| bad(int))?,
            "spines" => self.spines = Some(p(value).ok_or_else(|| bad(int))?),
            "k" => self.k = p(value).ok_or_else(|| bad(int))?,
            "mtu" => self.mtu = p(value).ok_or_else(|| bad(int))?,
            "link-gbps" => self.link_gbps = p(value).ok_or_else(|| bad(int))?,
            "link-latency-ns" => self.link_latency_ns = p(value).ok_or_else(|| bad(int))?,
            "switch-latency-ns" => self.switch_latency_ns = p(value).ok_or_else(|| bad(int))?,
            "rig-batch" => self.rig_batch = p(value).ok_or_else(|| bad(int))?,
            "rig-units" => self.rig_units = p(value).ok_or_else(|| bad(int))?,
            "rig-clients" => self.rig_clients = Some(p(value).ok_or_else(|| bad(int))?),
            "delay-cycles" => {
                // Figure 17: the NIC's cycles, the switch's scaled alike
                // (Table 5's 500 : 125).
                let v: u64 = p(value).ok_or_else(|| bad(int))?;
                self.nic_delay_cycles = v;
                self.switch_delay_cycles = v / 4;
            }
            "pending-entries" => self.pending_entries = p(value).ok_or_else(|| bad(int))?,
            "nic-delay-cycles" => self.nic_delay_cycles = p(value).ok_or_else(|| bad(int))?,
            "switch-delay-cycles" => self.switch_delay_cycles = p(value).ok_or_else(|| bad(int))?,
            "cache-bytes" => match value.trim() {
                "unbounded" | "inf" | "infinite" => self.cache_unbounded = true,
                v => {
                    self.cache_bytes =
                        bytes(v).ok_or_else(|| bad("bytes (e.g. 32M) or `unbounded`"))?;
                    self.cache_unbounded = false;
                }
            },
            "cache-ways" => self.cache_ways = p(value).ok_or_else(|| bad(int))?,
            "sa-cores" => self.sa_cores = p(value).ok_or_else(|| bad(int))?,
            "sa-pr-overhead-ns" => {
                self.sa_pr_overhead_ns = p(value).ok_or_else(|| bad("a number"))?
            }
            "switch-pr-cycles" => self.switch_pr_cycles = p(value).ok_or_else(|| bad(int))?,
            "host-post-ns" => self.host_post_ns = p(value).ok_or_else(|| bad(int))?,
            "switch-buffer-bytes" => {
                self.switch_buffer_bytes = bytes(value).ok_or_else(|| bad("bytes (e.g. 96M)"))?
            }
            "nic-buffer-bytes" => {
                self.nic_buffer_bytes = bytes(value).ok_or_else(|| bad("bytes (e.g. 2M)"))?
            }
            "routing" => self.routing = value.trim().parse().map_err(|_| bad(Routing::NAMES))?,
            "topology" => {
                self.topology = value
                    .parse()
                    .map_err(|e: TopologyError| bad(&e.to_string()))?
            }
            "headers" => self.headers = value.trim().parse().map_err(|_| bad(Headers::NAMES))?,
            "filter-memory" => {
                self.filter_memory = match value.trim() {
                    "true" | "on" | "1" => true,
                    "false" | "off" | "0" => false,
                    _ => return Err(bad("on or off")),
                }
            }
            "filter-bit" => {
                self.filter_bit = value.trim().parse().map_err(|_| bad(FilterBit::NAMES))?
            }
            "compute" => self.compute = value.parse().map_err(|_| bad(COMPUTE_MODELS))?,
            "compute-gflops" => {
                self.compute_gflops = Some(p(value).ok_or_else(|| bad("a number"))?)
            }
            "compute-gbps" => self.compute_gbps = Some(p(value).ok_or_else(|| bad("a number"))?),
            "compute-rate" => self.compute_rate = Some(p(value).ok_or_else(|| bad("a number"))?),
            "chunk-nnz" => self.chunk_nnz = p(value).ok_or_else(|| bad(int))?,
            "trigger-table" => self.trigger_table = p(value).ok_or_else(|| bad(int))?,
            "host-model" => self.host_model = value.parse().map_err(|_| bad(HostModel::NAMES))?,
            _ => {
                return Err(ConfigError::OutOfRange {
                    name: "sweep parameter",
                    value: key.to_string(),
                    range: SWEEPABLE.join(", "),
                })
            }
        }
        Ok(())
    }
}

/// Keys [`SimConfig::set`] accepts.
pub const SWEEPABLE: &[&str] = &[
    "nodes",
    "racks",
    "spines",
    "k",
    "mtu",
    "link-gbps",
    "link-latency-ns",
    "switch-latency-ns",
    "rig-batch",
    "rig-units",
    "rig-clients",
    "pending-entries",
    "nic-delay-cycles",
    "switch-delay-cycles",
    "delay-cycles",
    "cache-bytes",
    "cache-ways",
    "sa-cores",
    "sa-pr-overhead-ns",
    "switch-pr-cycles",
    "host-post-ns",
    "switch-buffer-bytes",
    "nic-buffer-bytes",
    "routing",
    "topology",
    "headers",
    "filter-bit",
    "filter-memory",
    "compute",
    "compute-gflops",
    "compute-gbps",
    "compute-rate",
    "chunk-nnz",
    "trigger-table",
    "host-model",
];

fn static_key(key: &str) -> &'static str {
    SWEEPABLE
        .iter()
        .find(|k| **k == key)
        .copied()
        .unwrap_or("parameter")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_table5_and_valid() {
        let c = SimConfig::default();
        c.validate().unwrap();
        let t = c.topology().unwrap();
        assert_eq!(t.tor_ports(), 32);
        assert_eq!(c.prop_bytes(), 64);
    }

    #[test]
    fn toml_and_ranges() {
        let c = SimConfig::from_toml_str("k = 128\nlink-gbps = 200\n", "c.toml").unwrap();
        assert_eq!((c.k, c.link_gbps, c.nodes), (128, 200, 128));
        let e = SimConfig::from_toml_str("kk = 1\n", "c.toml").unwrap_err();
        assert!(e.to_string().contains("kk"), "{e}");
        let c = SimConfig {
            k: 400,
            ..SimConfig::default()
        };
        let e = c.validate().unwrap_err().to_string();
        assert!(e.starts_with("k = 400 is out of range: 1..=357"), "{e}");
        let c = SimConfig {
            racks: 7,
            ..SimConfig::default()
        };
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("nodes = 128 is not divisible by racks = 7"),
            "{e}"
        );
        let c = SimConfig {
            sa_pr_overhead_ns: f64::NAN,
            ..SimConfig::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("sa-pr-overhead-ns"));
        let mut c = SimConfig::default();
        c.set("k", "1").unwrap();
        assert_eq!(c.k, 1);
        assert!(c.set("k", "x").unwrap_err().to_string().contains("k = x"));
        assert!(c.set("warp", "1").is_err());
        // Sizes take units, and 0 where it means "none" or "unbounded".
        c.set("cache-bytes", "1M").unwrap();
        assert_eq!(c.cache_bytes, 1 << 20);
        c.set("switch-buffer-bytes", "96M").unwrap();
        assert_eq!(c.switch_buffer_bytes, 96 << 20);
        c.set("nic-buffer-bytes", "0").unwrap();
        assert_eq!(c.nic_buffer_bytes, 0);
        let e = c.set("cache-bytes", "2Q").unwrap_err().to_string();
        assert!(e.contains("cache-bytes = 2Q") && e.contains("32M"), "{e}");
        assert_eq!(c.cache_bytes, 1 << 20, "a refused value leaves the old one");
    }
}
