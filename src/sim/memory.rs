//! Memory of a simulation: an estimate of its peak from the matrix's size
//! and the configuration, made before anything large is allocated; the
//! limit it is checked against; and the process's resident-memory figures
//! (from `/proc`).
//!
//! What a run holds, by phase (the terms of [`estimate`]):
//!
//! * **building the matrix**: the column of every coordinate (4 B) and
//!   the row starts (8 B per row) while the coordinates arrive in row
//!   order (every generator but R-MAT); otherwise each coordinate's row
//!   too (8 B per coordinate) and two row arrays (16 B per row);
//! * **the matrix**, held for the whole run: 4 B per nonzero, 8 B per row;
//! * **a NetSparse mode** (one at a time, freed before the next): per node
//!   one Idx Filter bit per column; per distinct remote idx a node needs,
//!   the idx and its state (5 B) and about half a byte of index (plus K × 4
//!   bytes with the SpMM check); per remote nonzero 1/8 byte of marks into
//!   the streamed idx array; a scratch list of one node's remote idxs while
//!   setting up; the ToRs' Property Caches (unbounded: what the racks
//!   need and serve, [`Workload::tor_cached`] where known); the frames in
//!   flight (bounded by the PRs outstanding, [`nic_tx_bytes`]) as the
//!   engine's frame pool holds them ([`in_flight_bytes`]); a few MB per
//!   device;
//! * **SAOpt**: 12 B per column and two nodes × nodes tables;
//! * the process itself (binary, compiled programs): [`BASE_BYTES`].
//!
//! Distinct remote idxs and remote nonzeros are known in advance for the
//! paper's stand-ins; for other matrices the estimate takes their upper
//! bounds (every nonzero remote, every remote nonzero distinct). A margin
//! of 25 % covers allocator slack.

use std::path::Path;

use thiserror::Error;

use super::config::SimConfig;
use super::Mode;

/// Fixed memory of the process (binary, compiled programs, allocator slack).
pub const BASE_BYTES: u64 = 96 << 20;
/// Per simulated device (NIC state, Pending PR Tables, concatenation
/// queues, switch tables and pipes), a generous figure.
pub const PER_DEVICE_BYTES: u64 = 2 << 20;

/// The size of a run's matrix, known before it exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Rows.
    pub rows: u64,
    /// Columns (= properties).
    pub cols: u64,
    /// Nonzeros (coordinates to build, at most).
    pub nnz: u64,
    /// Nonzeros with a remote column, over all nodes, if known.
    pub remote_nnz: Option<u64>,
    /// Distinct remote idxs summed over the nodes, if known.
    pub distinct_remote: Option<u64>,
    /// If known, the most properties unbounded Property Caches can come to
    /// hold, summed over the ToRs, when the nodes are in this many racks:
    /// `(racks, properties)` ([`crate::sim::matrix::paper::Shape::tor_cached`]).
    pub tor_cached: Option<(u64, u64)>,
    /// Bytes per coordinate while the matrix is built: 4 when the
    /// coordinates arrive in row order ([`ORDERED`]), 8 otherwise
    /// ([`UNORDERED`]), more when the generator keeps its own copy.
    pub build_per_nnz: u64,
}

/// [`Workload::build_per_nnz`] of coordinates in row order (the column only).
pub const ORDERED: u64 = 4;
/// [`Workload::build_per_nnz`] of coordinates in any order (row and column).
pub const UNORDERED: u64 = 8;

impl Workload {
    /// A matrix of which only the size is known.
    pub fn new(rows: u64, cols: u64, nnz: u64, build_per_nnz: u64) -> Workload {
        Workload {
            rows,
            cols,
            nnz,
            remote_nnz: None,
            distinct_remote: None,
            tor_cached: None,
            build_per_nnz,
        }
    }

    fn remote(&self) -> u64 {
        self.remote_nnz.unwrap_or(self.nnz).min(self.nnz)
    }

    fn distinct(&self, nodes: u64) -> u64 {
        self.distinct_remote
            .unwrap_or(u64::MAX)
            .min(self.remote())
            .min(self.cols.saturating_mul(nodes))
    }
}

/// Estimated peak memory of a run, in parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryEstimate {
    /// Building the matrix (its peak, before any mode runs).
    pub build_bytes: u64,
    /// The matrix, held while the modes run.
    pub matrix_bytes: u64,
    /// The largest mode's own memory (host memories, Idx Filters, caches,
    /// devices) and the process's base.
    pub run_bytes: u64,
}

impl MemoryEstimate {
    /// The peak: building the matrix, or holding it while the largest
    /// mode runs, whichever is more.
    pub fn total(&self) -> u64 {
        self.build_bytes.max(self.matrix_bytes + self.run_bytes)
    }

    /// The estimate in GiB, split: `"3.10 GiB (matrix 2.50 GiB, run
    /// 0.60 GiB; 4.80 GiB while building it)"`.
    pub fn describe(&self) -> String {
        format!(
            "{} (matrix {}, run {}; {} while building the matrix)",
            gib(self.total()),
            gib(self.matrix_bytes),
            gib(self.run_bytes),
            gib(self.build_bytes)
        )
    }
}

/// Estimate the peak memory of running `modes` on `w` under `cfg` (`spmm`:
/// with the SpMM check, which stores the gathered properties).
pub fn estimate(w: &Workload, cfg: &SimConfig, modes: &[Mode], spmm: bool) -> MemoryEstimate {
    let margin = |b: u64| b.saturating_add(b / 4);
    let held = 4 * w.nnz + 8 * (w.rows + 1);
    // Row starts (in order), or row pointers and bucket cursors.
    let per_row = if w.build_per_nnz <= ORDERED { 8 } else { 16 };
    let build = w.build_per_nnz * w.nnz + per_row * (w.rows + 1);
    let run = modes
        .iter()
        .map(|&m| mode_bytes(w, cfg, m, spmm))
        .max()
        .unwrap_or(0);
    MemoryEstimate {
        build_bytes: margin(build) + BASE_BYTES,
        matrix_bytes: margin(held),
        run_bytes: margin(run) + BASE_BYTES,
    }
}

/// How many simulated runs may go at once beside the matrix (`matrix_bytes`,
/// as [`MemoryEstimate::matrix_bytes`]) within `limit` (default: physical
/// memory), at most `want` and at least 1: the largest runs of `runs`
/// (each one's [`mode_bytes`]) are assumed to meet, each with a quarter's
/// margin, beside one process base.
pub fn runs_at_once(matrix_bytes: u64, runs: &[u64], want: usize, limit: Option<u64>) -> usize {
    let Some(limit) = limit.or_else(physical_memory) else {
        return want.max(1);
    };
    let mut sizes: Vec<u64> = runs.iter().map(|&b| b.saturating_add(b / 4)).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let mut held = matrix_bytes.saturating_add(BASE_BYTES);
    let mut n = 0;
    for &b in sizes.iter().take(want) {
        held = held.saturating_add(b);
        if held > limit {
            break;
        }
        n += 1;
    }
    n.max(1)
}

/// The memory of one mode beyond the matrix.
pub fn mode_bytes(w: &Workload, cfg: &SimConfig, mode: Mode, spmm: bool) -> u64 {
    let nodes = u64::from(cfg.nodes.max(1));
    // Switches with hosts (ToRs; every HyperX or Dragonfly switch) and
    // the device count, from the topology when it is valid.
    let (racks, switches) = match cfg.topology() {
        Ok(t) => (u64::from(t.racks()), u64::from(t.racks() + t.spines())),
        Err(_) => {
            let r = u64::from(cfg.racks);
            (
                r,
                r + u64::from(cfg.spines.unwrap_or(cfg.nodes / cfg.racks.max(1))),
            )
        }
    };
    let prop = u64::from(cfg.prop_bytes());
    match mode {
        Mode::Su => nodes * 256,
        Mode::Sa => {
            let groups = if cfg.sa_cores > 1 { 8 } else { 0 };
            (4 + groups) * w.cols + 2 * 8 * nodes * nodes + nodes * u64::from(cfg.sa_cores) * 8
        }
        _ => {
            let remote = w.remote();
            let distinct = w.distinct(nodes);
            let devices = nodes + switches;
            let mut filter = nodes * w.cols.div_ceil(64) * 8;
            if cfg.filter_memory {
                // The filter's caches (nic_firmware/src/filtermem.rs): per
                // client unit an L1 and an L2 of 8-byte tags (32 KB + 128 KB
                // of 64-byte lines), and the LLC: a bitmap of the filter's
                // lines when it fits 16 MB, else 16 MB of lines as tags.
                let units = u64::from(cfg.client_units());
                let lines = w.cols.div_ceil(512);
                let llc = if lines * 64 <= 16 << 20 {
                    lines.div_ceil(64) * 8
                } else {
                    (16 << 20) / 64 * 8
                };
                filter += nodes * (units * (32 + 128) * 1024 / 64 * 8 + llc);
            }
            // Needed idx + state, bucket index, marks, one node's scratch
            // (a node may hold several times the average share).
            let scratch = (4 * remote).min(4 * 4 * remote / nodes + 4096);
            let mut host = 5 * distinct + distinct / 2 + 4 * nodes + remote / 8 + scratch;
            if spmm {
                host += prop * distinct;
            }
            let caches = if cfg.cache_unbounded {
                unbounded_cached(w, distinct, racks) * (prop.max(16) + 48)
            } else if mode == Mode::NetSparse {
                racks * cfg.cache_bytes * 5 / 4
            } else {
                0
            };
            filter + host + caches + in_flight_bytes(w, cfg) + devices * PER_DEVICE_BYTES
        }
    }
}

/// The most properties unbounded Property Caches hold, over `racks` ToRs.
/// A ToR inserts every response its middle pipes see: those to its own
/// nodes (at most the distinct remote idxs they need, at most every column
/// per rack) and those its nodes send to other racks (its own columns, at
/// most every column over all ToRs, and no more than other racks need).
/// A matrix whose racks' needs are known ([`Workload::tor_cached`], the
/// paper's stand-ins on their own rack count) takes that tighter figure.
fn unbounded_cached(w: &Workload, distinct: u64, racks: u64) -> u64 {
    let needed = distinct.min(w.cols.saturating_mul(racks));
    let bound = needed + needed.min(w.cols);
    match w.tor_cached {
        Some((r, held)) if r == racks => held.min(bound),
        _ => bound,
    }
}

/// Per-packet bytes of a response beyond its property when it travels
/// alone (Ethernet, IPv4, UDP, the NetSparse and PR headers: 86 B measured,
/// rounded up).
pub const RESPONSE_FRAME_OVERHEAD: u64 = 96;

/// The frames the NICs' TX buffers can hold at once, all nodes together. A
/// server queues the response to every read it gets (nothing holds its
/// reads back, so its TX buffer can pass Table 5's 2 MB), and a client's
/// reads wait there too; but every such frame carries a PR that is
/// outstanding, and a node has at most its Pending PR Table entries
/// outstanding (per client unit), so the bound is the outstanding PRs of
/// every node, each as a response frame of its own (the largest form; PRs
/// sharing a frame take less), and never more than the remote nonzeros.
pub fn nic_tx_bytes(w: &Workload, cfg: &SimConfig) -> u64 {
    let outstanding = u64::from(cfg.nodes)
        .saturating_mul(u64::from(cfg.client_units()))
        .saturating_mul(u64::from(cfg.pending_entries))
        .min(w.remote());
    outstanding.saturating_mul(u64::from(cfg.prop_bytes()) + RESPONSE_FRAME_OVERHEAD)
}

/// What the network engine's frame pool can hold for the frames in
/// flight: they carry outstanding PRs wherever they are (NIC TX buffers,
/// links, switch buffers), so their bytes are at most [`nic_tx_bytes`];
/// the pool's arenas hold up to [`POOL_HOLD_RATIO`] times the bytes in
/// flight (and [`POOL_HOLD_SLACK`]) before it compacts them, and keeps up
/// to 1 / [`POOL_STORE_SHARE`] of that again as spare storage.
///
/// [`POOL_HOLD_RATIO`]: netsparse_netsim::POOL_HOLD_RATIO
/// [`POOL_HOLD_SLACK`]: netsparse_netsim::POOL_HOLD_SLACK
/// [`POOL_STORE_SHARE`]: netsparse_netsim::POOL_STORE_SHARE
pub fn in_flight_bytes(w: &Workload, cfg: &SimConfig) -> u64 {
    let held = nic_tx_bytes(w, cfg)
        .saturating_mul(netsparse_netsim::POOL_HOLD_RATIO as u64)
        .saturating_add(netsparse_netsim::POOL_HOLD_SLACK as u64);
    held.saturating_add(held / netsparse_netsim::POOL_STORE_SHARE as u64)
}

/// A run that would not fit: the estimate against the limit.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error(
    "not enough memory for {what}: the estimated peak is {need} but the limit is {limit_text} \
     ({limit_from}); nothing was allocated. Use a smaller matrix (e.g. a larger /S of a paper:NAME \
     stand-in) or fewer modes, or a higher --mem-limit where the command takes one"
)]
pub struct MemoryShortfall {
    /// What was to run (matrix, nodes, modes).
    pub what: String,
    /// The estimate, described.
    pub need: String,
    /// The estimated peak, bytes.
    pub need_bytes: u64,
    /// The limit, bytes.
    pub limit: u64,
    /// The limit as text.
    pub limit_text: String,
    /// Where the limit came from.
    pub limit_from: String,
}

/// Check `est` against `limit` (bytes; `None`: the machine's physical
/// memory). Returns the limit used.
pub fn check(est: &MemoryEstimate, limit: Option<u64>, what: &str) -> Result<u64, MemoryShortfall> {
    let (limit, source) = match limit {
        Some(l) => (l, "--mem-limit".to_string()),
        None => match physical_memory() {
            Some(p) => (
                p,
                "the machine's physical memory, MemTotal of /proc/meminfo".into(),
            ),
            None => return Ok(u64::MAX),
        },
    };
    if est.total() <= limit {
        return Ok(limit);
    }
    Err(MemoryShortfall {
        what: what.to_string(),
        need: est.describe(),
        need_bytes: est.total(),
        limit,
        limit_text: gib(limit),
        limit_from: source,
    })
}

/// A field of /proc/meminfo, bytes.
fn meminfo(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    kb_field(&s, field)
}

fn kb_field(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The machine's physical memory: `MemTotal` of /proc/meminfo.
pub fn physical_memory() -> Option<u64> {
    meminfo("MemTotal:")
}

/// Memory available to this process: `MemAvailable` of /proc/meminfo.
pub fn available_memory() -> Option<u64> {
    meminfo("MemAvailable:")
}

fn status(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(Path::new("/proc/self/status")).ok()?;
    kb_field(&s, field)
}

/// Give the memory the allocator holds free back to the system, where the
/// C library can (glibc's `malloc_trim`; elsewhere nothing). Freed blocks
/// below an arena's top stay resident otherwise, so a process that runs
/// one simulation after another (`netsparse paper`'s workers) would keep
/// the high-water mark of every earlier run on top of the next one's.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointers and only returns free pages
    // of the allocator's own arenas to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The process's peak resident memory (`VmHWM`), bytes.
pub fn peak_rss() -> Option<u64> {
    status("VmHWM:")
}

/// The process's resident memory now (`VmRSS`), bytes.
pub fn current_rss() -> Option<u64> {
    status("VmRSS:")
}

/// Bytes as GiB with two decimals.
pub fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / f64::from(1u32 << 30))
}

/// Parse a memory size: a number of bytes, or with a suffix K, M, G, T
/// (powers of 1024; `KiB`, `MB`, `GiB` ... are read the same way).
pub fn parse_size(s: &str) -> Result<u64, String> {
    size(s, 1.0)
}

/// [`parse_size`] for a buffer or cache size, where 0 has a meaning (no
/// cache, an unbounded buffer).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    size(s, 0.0)
}

fn size(s: &str, min: f64) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{s:?}: expected a size such as 16G, 512M or 1073741824"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "{s:?}: unknown unit {other:?} (use K, M, G or T, powers of 1024)"
            ))
        }
    };
    let bytes = v * (1u64 << shift) as f64;
    if !(min..1.8e19).contains(&bytes) {
        return Err(format!("{s:?}: out of range ({min} bytes to 16 EiB)"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_sizes_take_zero_and_units() {
        assert_eq!(parse_bytes("0"), Ok(0));
        assert_eq!(parse_bytes("1M"), Ok(1 << 20));
        assert_eq!(parse_bytes("96MiB"), Ok(96 << 20));
        assert_eq!(parse_bytes("100663296"), Ok(96 << 20));
        assert!(parse_size("0").unwrap_err().contains("out of range"));
        assert!(parse_bytes("-1").is_err());
        assert!(parse_bytes("3Q").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").unwrap_err().contains("expected a size"));
        assert!(parse_size("3Q").unwrap_err().contains("unknown unit"));
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn estimate_scales_and_refuses_with_the_numbers() {
        let cfg = SimConfig {
            nodes: 128,
            racks: 8,
            ..SimConfig::default()
        };
        let modes = [Mode::Su, Mode::Sa, Mode::NetSparse];
        // 640 M nonzeros over 23 M rows, generated in row order.
        let big = Workload::new(23_000_000, 23_000_000, 640_000_000, ORDERED);
        let e = estimate(&big, &cfg, &modes, false);
        // The matrix alone is 2.56 GB; the bound on every nonzero being a
        // distinct remote idx adds 5.5 B per nonzero.
        assert!(e.matrix_bytes > 2_560_000_000, "{e:?}");
        assert!(e.total() < 16 << 30, "{e:?}");
        let small = Workload::new(1 << 20, 1 << 20, 5 << 20, UNORDERED);
        let s = estimate(&small, &cfg, &modes, false);
        // The matrix's part scales with it; the frames in flight and the
        // devices are a fixed cost of the cluster.
        assert!(s.matrix_bytes < e.matrix_bytes / 8, "{s:?} vs {e:?}");
        assert!(s.run_bytes < e.run_bytes / 3, "{s:?} vs {e:?}");
        // Unordered coordinates cost twice as much to build.
        let unordered = estimate(
            &Workload {
                build_per_nnz: UNORDERED,
                ..big
            },
            &cfg,
            &modes,
            false,
        );
        assert!(unordered.build_bytes > e.build_bytes + 2_000_000_000);
        // Known remote counts tighten the estimate.
        let known = Workload {
            remote_nnz: Some(40_000_000),
            distinct_remote: Some(1_500_000),
            ..big
        };
        assert!(estimate(&known, &cfg, &modes, false).run_bytes < e.run_bytes);
        // Refusal names the need and the limit.
        let err = check(&e, Some(1 << 30), "paper:arabic on 128 nodes").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("paper:arabic on 128 nodes"), "{msg}");
        assert!(msg.contains(&gib(e.total())), "{msg}");
        assert!(msg.contains("the limit is 1.00 GiB (--mem-limit)"), "{msg}");
        assert_eq!(check(&s, Some(64 << 30), "x"), Ok(64 << 30));
    }

    #[test]
    fn nic_tx_frames_are_bounded_by_the_prs_outstanding() {
        let cfg = SimConfig {
            nodes: 128,
            racks: 8,
            k: 128,
            ..SimConfig::default()
        };
        let big = Workload {
            remote_nnz: Some(40_000_000),
            ..Workload::new(23_000_000, 23_000_000, 640_000_000, ORDERED)
        };
        // 128 nodes x 16 client units x 256 entries, each a 512-byte
        // property in a frame of its own.
        let outstanding = 128 * 16 * 256;
        assert_eq!(nic_tx_bytes(&big, &cfg), outstanding * (512 + 96));
        // Fewer remote nonzeros than entries: every PR outstanding at once.
        let small = Workload {
            remote_nnz: Some(1000),
            ..big
        };
        assert_eq!(nic_tx_bytes(&small, &cfg), 1000 * (512 + 96));
        // Part of every NIC mode's estimate, none of the software ones'.
        let k16 = SimConfig {
            k: 16,
            ..cfg.clone()
        };
        let nic = |c: &SimConfig, m| mode_bytes(&big, c, m, false);
        // The frames in flight as the frame pool holds them: twice their
        // bytes before it compacts, and half that again as spare storage.
        let pool = |f: u64| {
            let held = 2 * f + (256 << 20);
            held + held / 2
        };
        assert_eq!(in_flight_bytes(&big, &cfg), pool(outstanding * (512 + 96)));
        assert_eq!(
            nic(&cfg, Mode::Rig) - nic(&k16, Mode::Rig),
            pool(outstanding * (512 + 96)) - pool(outstanding * (64 + 96))
        );
        assert_eq!(nic(&cfg, Mode::Su), nic(&k16, Mode::Su));
    }

    #[test]
    fn proc_figures_are_read() {
        assert_eq!(
            kb_field("MemTotal:   2048 kB\n", "MemTotal:"),
            Some(2 << 20)
        );
        assert_eq!(kb_field("VmHWM: x kB\n", "VmHWM:"), None);
        if Path::new("/proc/self/status").exists() {
            let peak = peak_rss().unwrap();
            assert!(peak >= current_rss().unwrap().min(peak));
            assert!(physical_memory().unwrap() > 0);
        }
    }
}
