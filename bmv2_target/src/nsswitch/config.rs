//! The NetSparse switch's shape: ports, pipes, clock, Concatenator and
//! Property Cache parameters, the switch's own address. Defaults are the
//! paper's Table 5; a TOML file overrides any of them:
//!
//! ```toml
//! ports = 16             # P ports, numbered 0..P-1
//! pipes = 4              # G pipes; pipe of port p = p / (P / G)
//! clock_mhz = 2000       # switch clock
//! delay_cycles = 125     # Concatenator DelayCycles (§6.1.2)
//! mtu = 1500             # IP MTU of rebuilt NetSparse packets
//! max_queues = 4096      # Concatenation Queues open at once per pipe
//! seed = 0               # random() and the random hash
//! max_frame = 9216       # longer input frames are dropped as malformed
//! pr_cycles = 0          # cycles each PR occupies its middle pipe (§6.2's
//!                        # hardware: 1, one PR per cycle per pipe, as the
//!                        # cluster simulator uses); 0 = no limit
//!
//! [switch]
//! id = 0                 # the switch's device id: 10.128.0.(id+1), 02:4e:57:..
//! # mac = "02:4e:57:00:00:01"    # override the MAC derived from the id
//! # ipv4 = "10.128.0.1"          # override the IPv4 address
//!
//! [cache]
//! size = "32MiB"         # per switch (each of the G middle pipes gets size / G);
//!                        # bytes, "<n>KiB|MiB|GiB", "disabled" or "unbounded"
//! ways = 16
//! latency_cycles = 16
//! mode = 64              # property length in bytes: a power of two in 16..=512
//!
//! [virtual_cqs]          # §7.2; off unless this table is present
//! chunk_bytes = 128
//! chunks = 4096
//! ```
//!
//! Unknown keys are errors; every validation error names its key.

use netsparse_externs::cache::{
    CacheCapacity, CacheConfig, CacheMode, MAX_WAYS, SEGMENTS, SEGMENT_BYTES,
};
use netsparse_externs::concat::{ConcatConfig, VirtualCqConfig};
use netsparse_externs::wire::{
    pr_capacity, pr_stride, DeviceAddr, PrType, DEFAULT_MTU, MAX_SWITCH_ID,
};
use netsparse_externs::{Clock, Time};
use serde::Deserialize;
use thiserror::Error;

/// Most ports a switch may have (port numbers are 0..=510, as in v1model).
pub const MAX_PORTS: u32 = 511;

/// A bad configuration.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum NsConfigError {
    /// The file is not valid TOML, has an unknown key or a value of the
    /// wrong type (the message names the key and the line).
    #[error("{0}")]
    Syntax(String),
    /// A value out of range or inconsistent with another.
    #[error("`{key}`: {detail}")]
    Invalid {
        /// The key (`cache.size`, `pipes`, ...).
        key: &'static str,
        /// What is wrong.
        detail: String,
    },
}

fn invalid(key: &'static str, detail: impl Into<String>) -> NsConfigError {
    NsConfigError::Invalid {
        key,
        detail: detail.into(),
    }
}

/// The Property Cache of the switch (all middle pipes together).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NsCacheConfig {
    /// Total capacity of the switch; each middle pipe gets 1/G of it.
    pub capacity: CacheCapacity,
    /// Associativity.
    pub ways: u32,
    /// Access latency in switch cycles.
    pub latency_cycles: u64,
    /// The property length the control plane configured (cache mode).
    pub mode: CacheMode,
}

/// The switch's shape and options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NsConfig {
    /// Ports (P), numbered 0..P-1.
    pub ports: u32,
    /// Pipes (G): ingress, middle and egress pipe `g` serve ports
    /// `g·P/G .. (g+1)·P/G - 1`.
    pub pipes: u32,
    /// The switch clock.
    pub clock: Clock,
    /// Concatenator DelayCycles.
    pub delay_cycles: u64,
    /// Cycles each PR occupies its middle pipe (§6.2: the Property Cache
    /// and the middle pipe accept one PR per cycle); 0 = no rate limit.
    /// PRs of packets that arrive while the pipe is busy wait their turn,
    /// so crossbar 1's traffic into one pipe is serialised. The standalone
    /// switch defaults to 0 (a pcap replay shows what the program does,
    /// without contention); the cluster simulator sets 1.
    pub pr_cycles: u64,
    /// IP MTU of the NetSparse packets the switch builds.
    pub mtu: usize,
    /// Concatenation Queues open at once per middle pipe.
    pub max_queues: usize,
    /// Virtualised CQs (§7.2), off by default.
    pub virtual_cqs: Option<VirtualCqConfig>,
    /// The Property Cache.
    pub cache: NsCacheConfig,
    /// The switch's device id ([`DeviceAddr::Switch`]).
    pub switch_id: u32,
    /// Its MAC address (source of the packets it builds).
    pub mac: [u8; 6],
    /// Its IPv4 address (source of the packets it builds).
    pub ipv4: [u8; 4],
    /// Seed of `random()` and the random hash.
    pub seed: u64,
    /// Input frames longer than this are dropped as malformed.
    pub max_frame: usize,
    /// Per-packet trace via `tracing` at INFO.
    pub trace: bool,
    /// Log the first N bytes of every frame in and out (0 = off).
    pub dump_bytes: usize,
    /// An OmNICCL aggregator in the middle pipes (the `[collective]`
    /// table; applied by [`super::NsSwitch::new`]); `None`: none.
    pub collective: Option<super::coll::NsCollective>,
}

impl Default for NsConfig {
    /// Table 5: 32 ports in 8 pipes at 2 GHz, DelayCycles 125, MTU 1500,
    /// a 32 MiB 16-way Property Cache with a 16-cycle latency in 64-byte
    /// mode, switch id 0, physical CQs.
    fn default() -> NsConfig {
        let id = 0;
        NsConfig {
            ports: 32,
            pipes: 8,
            clock: Clock::from_mhz(2_000),
            delay_cycles: 125,
            pr_cycles: 0,
            mtu: DEFAULT_MTU,
            max_queues: ConcatConfig::DEFAULT_MAX_QUEUES,
            virtual_cqs: None,
            cache: NsCacheConfig {
                capacity: CacheCapacity::Bytes(32 << 20),
                ways: 16,
                latency_cycles: 16,
                mode: CacheMode::new(64).unwrap_or(CacheMode::new(16).expect("16 is a valid mode")),
            },
            switch_id: id,
            mac: DeviceAddr::Switch(id)
                .mac()
                .unwrap_or([0x02, 0x4e, 0x57, 0, 0, 0]),
            ipv4: DeviceAddr::Switch(id).ipv4().unwrap_or([10, 128, 0, 1]),
            seed: 0,
            max_frame: 9216,
            trace: false,
            dump_bytes: 0,
            collective: None,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    ports: Option<u32>,
    pipes: Option<u32>,
    clock_mhz: Option<u64>,
    delay_cycles: Option<u64>,
    pr_cycles: Option<u64>,
    mtu: Option<usize>,
    max_queues: Option<usize>,
    seed: Option<u64>,
    max_frame: Option<usize>,
    switch: Option<RawSwitch>,
    cache: Option<RawCache>,
    virtual_cqs: Option<RawVirtualCqs>,
    collective: Option<RawCollective>,
}

/// `[collective]`: an OmNICCL aggregator in the middle pipes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCollective {
    workers: u32,
    depth: u32,
    block: u32,
    window: Option<u32>,
    streams: Option<u32>,
    node: u32,
    worker_ports: Vec<u32>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSwitch {
    id: Option<u32>,
    mac: Option<String>,
    ipv4: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCache {
    size: Option<toml::Value>,
    ways: Option<u32>,
    latency_cycles: Option<u64>,
    mode: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVirtualCqs {
    chunk_bytes: usize,
    chunks: usize,
}

/// Parse a cache size: bytes, `<n>KiB|MiB|GiB`, `disabled`, `unbounded`.
fn parse_size(v: &toml::Value) -> Result<CacheCapacity, NsConfigError> {
    let bad = |what: String| {
        invalid(
            "cache.size",
            format!("{what}: expected bytes, \"<n>KiB\", \"<n>MiB\", \"<n>GiB\", \"disabled\" or \"unbounded\""),
        )
    };
    match v {
        toml::Value::Integer(n) => u64::try_from(*n)
            .map(CacheCapacity::Bytes)
            .map_err(|_| bad(format!("{n} is negative"))),
        toml::Value::String(s) => {
            let t = s.trim();
            match t {
                "disabled" => return Ok(CacheCapacity::Disabled),
                "unbounded" => return Ok(CacheCapacity::Unbounded),
                _ => {}
            }
            let (num, shift) = if let Some(n) = t.strip_suffix("GiB") {
                (n, 30)
            } else if let Some(n) = t.strip_suffix("MiB") {
                (n, 20)
            } else if let Some(n) = t.strip_suffix("KiB") {
                (n, 10)
            } else if let Some(n) = t.strip_suffix('B') {
                (n, 0)
            } else {
                (t, 0)
            };
            let n: u64 = num
                .trim()
                .parse()
                .map_err(|_| bad(format!("`{s}` is not a size")))?;
            n.checked_mul(1u64 << shift)
                .map(CacheCapacity::Bytes)
                .ok_or_else(|| bad(format!("`{s}` is too large")))
        }
        other => Err(bad(format!("{other} is not a size"))),
    }
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.trim().split(':');
    for b in &mut out {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

fn parse_ipv4(s: &str) -> Option<[u8; 4]> {
    s.trim()
        .parse::<std::net::Ipv4Addr>()
        .ok()
        .map(|a| a.octets())
}

impl NsConfig {
    /// Read a TOML configuration (keys left out keep their Table 5
    /// defaults) and validate it.
    pub fn from_toml(text: &str) -> Result<NsConfig, NsConfigError> {
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| NsConfigError::Syntax(e.to_string().trim_end().to_owned()))?;
        let mut c = NsConfig::default();
        if let Some(v) = raw.ports {
            c.ports = v;
        }
        if let Some(v) = raw.pipes {
            c.pipes = v;
        }
        if let Some(v) = raw.clock_mhz {
            if v == 0 || v > 1_000_000 {
                return Err(invalid(
                    "clock_mhz",
                    format!("{v} MHz (must be 1..=1000000)"),
                ));
            }
            c.clock = Clock::from_mhz(v);
        }
        if let Some(v) = raw.delay_cycles {
            c.delay_cycles = v;
        }
        if let Some(v) = raw.pr_cycles {
            c.pr_cycles = v;
        }
        if let Some(v) = raw.mtu {
            c.mtu = v;
        }
        if let Some(v) = raw.max_queues {
            c.max_queues = v;
        }
        if let Some(v) = raw.seed {
            c.seed = v;
        }
        if let Some(v) = raw.max_frame {
            c.max_frame = v;
        }
        if let Some(k) = raw.collective {
            // Ranges are checked when the switch is built (the port count
            // and the unit's limits), each error naming its key.
            c.collective = Some(super::coll::NsCollective {
                unit: netsparse_externs::coll::CollConfig {
                    workers: k.workers,
                    depth: k.depth,
                    block: k.block,
                    window: k.window.unwrap_or(4),
                    streams: k.streams.unwrap_or(1),
                },
                node: k.node,
                worker_ports: k.worker_ports,
            });
        }
        let sw = raw.switch.unwrap_or_default();
        if let Some(id) = sw.id {
            c.switch_id = id;
            let d = DeviceAddr::Switch(id);
            let (Ok(mac), Ok(ip)) = (d.mac(), d.ipv4()) else {
                return Err(invalid(
                    "switch.id",
                    format!("{id} is above the addressing convention's maximum {MAX_SWITCH_ID}"),
                ));
            };
            c.mac = mac;
            c.ipv4 = ip;
        }
        if let Some(m) = &sw.mac {
            c.mac = parse_mac(m).ok_or_else(|| {
                invalid(
                    "switch.mac",
                    format!("`{m}` is not a MAC address (aa:bb:cc:dd:ee:ff)"),
                )
            })?;
        }
        if let Some(a) = &sw.ipv4 {
            c.ipv4 = parse_ipv4(a)
                .ok_or_else(|| invalid("switch.ipv4", format!("`{a}` is not an IPv4 address")))?;
        }
        let cache = raw.cache.unwrap_or_default();
        if let Some(v) = &cache.size {
            c.cache.capacity = parse_size(v)?;
        }
        if let Some(v) = cache.ways {
            c.cache.ways = v;
        }
        if let Some(v) = cache.latency_cycles {
            c.cache.latency_cycles = v;
        }
        if let Some(v) = cache.mode {
            c.cache.mode = CacheMode::new(v).map_err(|_| {
                invalid(
                    "cache.mode",
                    format!("{v} bytes is not a power of two in 16..=512"),
                )
            })?;
        }
        c.virtual_cqs = raw.virtual_cqs.map(|v| VirtualCqConfig {
            chunk_bytes: v.chunk_bytes,
            chunks: v.chunks,
        });
        c.validate()?;
        Ok(c)
    }

    /// Check every value and their consistency.
    pub fn validate(&self) -> Result<(), NsConfigError> {
        if self.ports == 0 || self.ports > MAX_PORTS {
            return Err(invalid(
                "ports",
                format!("{} (must be 1..={MAX_PORTS})", self.ports),
            ));
        }
        if self.pipes == 0 || self.ports % self.pipes != 0 {
            return Err(invalid(
                "pipes",
                format!("{} does not divide the {} ports", self.pipes, self.ports),
            ));
        }
        if self.clock.khz == 0 {
            return Err(invalid("clock_mhz", "0"));
        }
        if self.pr_cycles > 1_000_000 {
            return Err(invalid(
                "pr_cycles",
                format!("{} (must be 0..=1000000)", self.pr_cycles),
            ));
        }
        let mode = self.cache.mode.bytes();
        let mtu_max = usize::from(u16::MAX);
        if self.mtu > mtu_max || pr_capacity(self.mtu) < pr_stride(PrType::Response, mode) {
            return Err(invalid(
                "mtu",
                format!(
                    "{} bytes cannot carry one {mode}-byte response PR (54 bytes of headers + 18 + {mode}; at most {mtu_max})",
                    self.mtu
                ),
            ));
        }
        if self.max_frame < self.mtu + 14 {
            return Err(invalid(
                "max_frame",
                format!(
                    "{} is below the MTU plus Ethernet ({})",
                    self.max_frame,
                    self.mtu + 14
                ),
            ));
        }
        if self.max_queues == 0 {
            return Err(invalid("max_queues", "must be at least 1"));
        }
        if let Some(v) = self.virtual_cqs {
            let need = pr_capacity(self.mtu);
            if v.chunk_bytes == 0 || v.chunks.saturating_mul(v.chunk_bytes) < need {
                return Err(invalid(
                    "virtual_cqs",
                    format!(
                        "{} chunks of {} bytes cannot hold one {need}-byte packet",
                        v.chunks, v.chunk_bytes
                    ),
                ));
            }
        }
        if self.cache.ways == 0 || self.cache.ways > MAX_WAYS {
            return Err(invalid(
                "cache.ways",
                format!("{} (must be 1..={MAX_WAYS})", self.cache.ways),
            ));
        }
        if let CacheCapacity::Bytes(total) = self.cache.capacity {
            if total > 0 {
                let per_pipe = total / u64::from(self.pipes);
                let per_way = u64::from(SEGMENTS * SEGMENT_BYTES) * u64::from(self.cache.ways);
                if total % u64::from(self.pipes) != 0
                    || per_pipe % per_way != 0
                    || !(per_pipe / per_way).is_power_of_two()
                {
                    return Err(invalid(
                        "cache.size",
                        format!(
                            "{total} bytes over {} pipes is {per_pipe} bytes per middle pipe; each pipe's share must be 512 x ways ({}) x a power of two",
                            self.pipes, self.cache.ways
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The time one PR occupies a middle pipe (zero: no limit).
    pub fn pr_time(&self) -> Time {
        self.clock.cycles(self.pr_cycles)
    }

    /// Ports per pipe (P / G).
    pub fn ports_per_pipe(&self) -> u32 {
        self.ports / self.pipes.max(1)
    }

    /// The pipe of `port`.
    pub fn pipe_of(&self, port: u32) -> u32 {
        port / self.ports_per_pipe().max(1)
    }

    /// DelayCycles as a time.
    pub fn delay(&self) -> Time {
        self.clock.cycles(self.delay_cycles)
    }

    /// The Property Cache latency as a time.
    pub fn cache_latency(&self) -> Time {
        self.clock.cycles(self.cache.latency_cycles)
    }

    /// The geometry of one middle pipe's cache (1/G of the switch's).
    pub fn pipe_cache(&self) -> CacheConfig {
        let capacity = match self.cache.capacity {
            CacheCapacity::Bytes(b) => CacheCapacity::Bytes(b / u64::from(self.pipes.max(1))),
            other => other,
        };
        CacheConfig {
            capacity,
            ways: self.cache.ways,
            latency: self.cache_latency(),
        }
    }

    /// One middle pipe's Concatenator.
    pub fn concat(&self) -> ConcatConfig {
        ConcatConfig {
            mtu: self.mtu,
            delay: self.delay(),
            max_queues: self.max_queues,
            virtual_cqs: self.virtual_cqs,
        }
    }

    /// A short description for logs: `16 ports in 4 pipes, 2000 MHz, ...`.
    pub fn describe(&self) -> String {
        let cache = match self.cache.capacity {
            CacheCapacity::Disabled | CacheCapacity::Bytes(0) => "no Property Cache".to_owned(),
            CacheCapacity::Unbounded => "unbounded Property Cache".to_owned(),
            CacheCapacity::Bytes(b) => format!(
                "{} KiB {}-way Property Cache ({} KiB per pipe), {}-byte mode, {} cycles",
                b >> 10,
                self.cache.ways,
                (b / u64::from(self.pipes.max(1))) >> 10,
                self.cache.mode.bytes(),
                self.cache.latency_cycles
            ),
        };
        format!(
            "{} ports in {} pipes, {} MHz, DelayCycles {}, {}, MTU {}, {cache}, switch {} ({}.{}.{}.{}){}{}",
            self.ports,
            self.pipes,
            self.clock.khz / 1000,
            self.delay_cycles,
            if self.pr_cycles == 0 {
                "no middle-pipe rate limit".to_owned()
            } else {
                format!("{} cycle(s) per PR per middle pipe", self.pr_cycles)
            },
            self.mtu,
            self.switch_id,
            self.ipv4[0],
            self.ipv4[1],
            self.ipv4[2],
            self.ipv4[3],
            if self.virtual_cqs.is_some() { ", virtual CQs" } else { "" },
            match &self.collective {
                Some(c) => format!(
                    ", OmNICCL aggregator as node {} for {} workers (d = {}, {}-byte blocks)",
                    c.node, c.unit.workers, c.unit.depth, c.unit.block
                ),
                None => String::new(),
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collective_table_configures_the_aggregator() {
        let c = NsConfig::from_toml(
            "ports = 8\npipes = 2\n[collective]\nworkers = 2\ndepth = 16\nblock = 64\nnode = 2\nworker_ports = [0, 1]\n",
        )
        .unwrap();
        let k = c.collective.as_ref().expect("collective");
        assert_eq!((k.unit.workers, k.unit.window, k.unit.streams), (2, 4, 1));
        assert_eq!(k.worker_ports, [0, 1]);
        assert!(c.describe().contains("OmNICCL aggregator as node 2"));
        // A missing key and an unknown one are refused by name.
        for (text, want) in [
            ("[collective]\nworkers = 2\n", "depth"),
            (
                "[collective]\nworkers = 2\ndepth = 1\nblock = 4\nnode = 2\nworker_ports = [0, 1]\nfoo = 1\n",
                "foo",
            ),
        ] {
            let e = NsConfig::from_toml(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn defaults_are_table5() {
        let c = NsConfig::default();
        c.validate().unwrap();
        assert_eq!((c.ports, c.pipes, c.ports_per_pipe()), (32, 8, 4));
        assert_eq!(c.delay(), Time::from_ps(62_500));
        assert_eq!(c.cache_latency(), Time::from_ns(8));
        assert_eq!(c.pipe_cache().capacity, CacheCapacity::Bytes(4 << 20));
        assert_eq!(c.ipv4, [10, 128, 0, 1]);
        assert_eq!(c.mac, [0x02, 0x4e, 0x57, 0, 0, 0]);
        assert_eq!(NsConfig::from_toml("").unwrap(), c);
    }

    #[test]
    fn a_file_overrides_defaults() {
        let c = NsConfig::from_toml(
            "ports = 16\npipes = 4\nclock_mhz = 1000\n[switch]\nid = 7\n\
             [cache]\nsize = \"256KiB\"\nways = 4\nmode = 32\n[virtual_cqs]\nchunk_bytes = 128\nchunks = 64\n",
        )
        .unwrap();
        assert_eq!(
            (c.ports, c.pipes, c.pipe_of(15), c.pipe_of(4)),
            (16, 4, 3, 1)
        );
        assert_eq!(c.clock, Clock::from_mhz(1000));
        assert_eq!(c.ipv4, [10, 128, 0, 8]);
        assert_eq!(c.pipe_cache().capacity, CacheCapacity::Bytes(64 << 10));
        assert_eq!(c.cache.mode.bytes(), 32);
        assert!(c.virtual_cqs.is_some());
        let c =
            NsConfig::from_toml("[switch]\nmac = \"02:00:00:00:00:09\"\nipv4 = \"192.0.2.1\"\n")
                .unwrap();
        assert_eq!((c.mac[5], c.ipv4), (9, [192, 0, 2, 1]));
        let c = NsConfig::from_toml("pr_cycles = 1\n").unwrap();
        assert_eq!(c.pr_time(), Time::from_ps(500));
        assert_eq!(NsConfig::default().pr_time(), Time::ZERO);
        for (s, cap) in [
            ("\"disabled\"", CacheCapacity::Disabled),
            ("\"unbounded\"", CacheCapacity::Unbounded),
            ("0", CacheCapacity::Bytes(0)),
            ("\"64MiB\"", CacheCapacity::Bytes(64 << 20)),
        ] {
            let c = NsConfig::from_toml(&format!("[cache]\nsize = {s}\n")).unwrap();
            assert_eq!(c.cache.capacity, cap);
        }
    }

    #[test]
    fn errors_name_the_key() {
        assert!(matches!(
            NsConfig::from_toml("pr_cycles = 2000000\n"),
            Err(NsConfigError::Invalid {
                key: "pr_cycles",
                ..
            })
        ));
        let key = |text: &str| match NsConfig::from_toml(text) {
            Err(NsConfigError::Invalid { key, .. }) => key.to_owned(),
            Err(NsConfigError::Syntax(s)) => format!("syntax: {s}"),
            Ok(_) => "ok".into(),
        };
        assert_eq!(key("ports = 16\npipes = 3\n"), "pipes");
        assert_eq!(key("ports = 0\n"), "ports");
        assert_eq!(key("ports = 600\n"), "ports");
        assert_eq!(key("[cache]\nmode = 48\n"), "cache.mode");
        assert_eq!(key("[cache]\nmode = 1024\n"), "cache.mode");
        assert_eq!(key("[cache]\nways = 0\n"), "cache.ways");
        assert_eq!(key("[cache]\nsize = \"3MiB\"\n"), "cache.size");
        assert_eq!(key("[cache]\nsize = \"lots\"\n"), "cache.size");
        assert_eq!(key("clock_mhz = 0\n"), "clock_mhz");
        assert_eq!(key("mtu = 100\n[cache]\nmode = 64\n"), "mtu");
        assert_eq!(key("max_queues = 0\n"), "max_queues");
        assert_eq!(key("[switch]\nid = 9000000\n"), "switch.id");
        assert_eq!(key("[switch]\nmac = \"02:00\"\n"), "switch.mac");
        assert_eq!(
            key("[virtual_cqs]\nchunk_bytes = 128\nchunks = 2\n"),
            "virtual_cqs"
        );
        let s = key("port = 16\n");
        assert!(s.starts_with("syntax") && s.contains("port"), "{s}");
        let s = key("[cache]\nsise = 1\n");
        assert!(s.contains("sise"), "{s}");
        let s = key("ports = \"x\"\n");
        assert!(s.contains("ports"), "{s}");
    }
}
