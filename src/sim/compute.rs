//! The per-node computation model: how long each node's share of one SpMM
//! iteration takes on its in-node compute engine, so that a run reports
//! end-to-end time, strong scaling over one node and the
//! communication/computation breakdown (the paper's Figures 13, 14, 21).
//!
//! # The model
//!
//! Node `n` computes the output rows it owns (the 1D row partition): `z`
//! nonzeros (local and remote columns alike) and `r` rows, with K-element
//! properties of 4 bytes. SpMM is a roofline problem:
//!
//! ```text
//! flops = 2 · z · K
//! bytes = z · (4 + 4)         column index and value of each nonzero
//!       + z · 4K              the property (row of B) each nonzero reads
//!       + r · (8 + 4K)        row pointer and output row
//! time  = max(flops / F, bytes / W)
//! ```
//!
//! with the engine's sustained compute rate `F` and memory bandwidth `W`.
//! Property reads are counted once per nonzero (no reuse in an on-chip
//! cache), which is what an irregular matrix gives a streaming engine; at
//! K ≥ 4 every engine below is memory bound, so `W` decides.
//!
//! | model | what | F | W |
//! |---|---|---|---|
//! | `spade` | Table 5: 128 SPADE PEs at 1 GHz, HBM at 800 GB/s | 128 PEs × 16 lanes × 2 flop × 1 GHz = 4,096 GFLOP/s | 800 GB/s |
//! | `cpu-ddr` | §8.5: a 48-core Sapphire Rapids with DDR5 | 48 × 2 GHz × 64 flop = 6,144 GFLOP/s | 8 channels × 38.4 GB/s × 0.7 = 215 GB/s |
//! | `cpu-hbm` | §8.5: a 56-core Sapphire Rapids with HBM ("similar bandwidth to the SPADE PEs") | 56 × 1.9 GHz × 64 flop = 6,810 GFLOP/s | 600 GB/s |
//!
//! The lane count of a SPADE PE and the CPUs' sustained bandwidths are not
//! in the paper; they are this model's assumptions, and both rates can be
//! set (`compute-gflops`, `compute-gbps`).
//!
//! # Overlap
//!
//! The paper's nodes overlap communication and computation partially
//! (§8.3). A node's end-to-end time is bracketed by two assumptions, both
//! reported: *no overlap* (`comm + comp`, the default figure) and *full
//! overlap* (`max(comm, comp)`). The cluster's time is its slowest node's.
//! The single-node time is the whole matrix on one node with no
//! communication; the ideal speedup is that over the slowest node's
//! computation alone (the paper's dashed "no communication" line).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use netsparse_externs::Time;

use super::matrix::CsrMatrix;
use super::partition::Partition;
use super::report::ModeResult;

/// The in-node compute engine whose time is added to communication.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComputeModel {
    /// No computation: communication only (Figure 12, Tables 7 and 8).
    #[default]
    None,
    /// Table 5's SPADE accelerator (Figures 13, 14).
    Spade,
    /// A Sapphire Rapids CPU with DDR5 (Figure 21).
    CpuDdr,
    /// A Sapphire Rapids CPU with HBM (Figure 21).
    CpuHbm,
}

/// The accepted names, for errors.
pub const COMPUTE_MODELS: &str = "none, spade, cpu-ddr, cpu-hbm";

impl ComputeModel {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ComputeModel::None => "none",
            ComputeModel::Spade => "spade",
            ComputeModel::CpuDdr => "cpu-ddr",
            ComputeModel::CpuHbm => "cpu-hbm",
        }
    }

    /// The engine's default rates (`None` for [`ComputeModel::None`]).
    pub fn rates(self) -> Option<Rates> {
        let (gflops, gbps) = match self {
            ComputeModel::None => return None,
            ComputeModel::Spade => (128.0 * 16.0 * 2.0 * 1.0, 800.0),
            ComputeModel::CpuDdr => (48.0 * 2.0 * 64.0, 8.0 * 38.4 * 0.7),
            ComputeModel::CpuHbm => (56.0 * 1.9 * 64.0, 600.0),
        };
        Some(Rates { gflops, gbps })
    }
}

impl fmt::Display for ComputeModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown compute model name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown compute model {0:?} (available: {COMPUTE_MODELS})")]
pub struct UnknownComputeModel(pub String);

impl FromStr for ComputeModel {
    type Err = UnknownComputeModel;
    fn from_str(s: &str) -> Result<ComputeModel, UnknownComputeModel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" => Ok(ComputeModel::None),
            "spade" => Ok(ComputeModel::Spade),
            "cpu-ddr" | "ddr" => Ok(ComputeModel::CpuDdr),
            "cpu-hbm" | "hbm" => Ok(ComputeModel::CpuHbm),
            _ => Err(UnknownComputeModel(s.trim().to_string())),
        }
    }
}

/// Sustained rates of a compute engine.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    /// Floating-point operations per second, in units of 10^9.
    pub gflops: f64,
    /// Memory bandwidth, GB/s (10^9 bytes).
    pub gbps: f64,
}

impl Rates {
    /// The time of SpMM over `nnz` nonzeros and `rows` output rows with
    /// `k`-element 4-byte properties (the roofline of the module docs).
    pub fn spmm_time(&self, nnz: u64, rows: u64, k: u32) -> Time {
        let (z, r, k) = (nnz as f64, rows as f64, f64::from(k));
        let flops = 2.0 * z * k;
        let bytes = z * 8.0 + z * 4.0 * k + r * (8.0 + 4.0 * k);
        let secs = (flops / (self.gflops * 1e9)).max(bytes / (self.gbps * 1e9));
        Time::from_ps((secs * 1e12).round() as u64)
    }

    /// The time of adding a dense tile of `words` 4-byte values into
    /// another: one operation and 12 bytes (two reads, one write) per word.
    pub fn add_time(&self, words: u64) -> Time {
        let w = words as f64;
        let secs = (w / (self.gflops * 1e9)).max(12.0 * w / (self.gbps * 1e9));
        Time::from_ps((secs * 1e12).round() as u64)
    }
}

/// A mode's end-to-end figures under a compute model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComputeResult {
    /// The model.
    pub model: ComputeModel,
    /// The rates used.
    pub rates: Rates,
    /// Per node, in node order: its computation time.
    pub comp: Vec<Time>,
    /// The slowest node's computation time.
    pub comp_max: Time,
    /// The slowest node's communication time (the mode's time).
    pub comm_max: Time,
    /// The cluster's time with no overlap: max over nodes of comm + comp.
    pub end_to_end: Time,
    /// The cluster's time with full overlap: max over nodes of max(comm, comp).
    pub end_to_end_overlapped: Time,
    /// The whole matrix on one node, without communication.
    pub single_node: Time,
    /// `single_node / end_to_end` (strong scaling, no overlap).
    pub speedup_vs_single: f64,
    /// `single_node / end_to_end_overlapped` (full overlap).
    pub speedup_vs_single_overlapped: f64,
    /// `single_node / comp_max`: the scaling without any communication.
    pub ideal_speedup: f64,
    /// Communication's share of the no-overlap time on the slowest node
    /// (Figure 14's breakdown).
    pub comm_fraction: f64,
}

/// Per node: (nonzeros, rows) of the rows it owns.
pub fn node_work(m: &CsrMatrix, part: &Partition) -> Vec<(u64, u64)> {
    let ptr = m.row_ptr();
    (0..part.nodes())
        .map(|n| {
            let r = part.rows.range(n);
            let nnz = ptr.get(r.end as usize).copied().unwrap_or(0)
                - ptr.get(r.start as usize).copied().unwrap_or(0);
            (nnz, u64::from(r.end - r.start))
        })
        .collect()
}

fn ratio(a: Time, b: Time) -> f64 {
    if b.as_ps() == 0 {
        0.0
    } else {
        a.as_ps() as f64 / b.as_ps() as f64
    }
}

/// Per-node communication and computation combined into a cluster's
/// times (see the module's *Overlap*).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Combined {
    /// No overlap: the slowest node's communication + computation.
    pub end_to_end: Time,
    /// Full overlap: the slowest node's max(communication, computation).
    pub end_to_end_overlapped: Time,
    /// The longest communication.
    pub comm_max: Time,
    /// The longest computation.
    pub comp_max: Time,
    /// (communication, computation) of the node that sets `end_to_end`.
    pub slowest: (Time, Time),
}

/// Combine each node's communication time `(node, time)` with its
/// computation time `comp[node]` (nodes missing from `comm` compute only).
pub fn combine(comm: impl Iterator<Item = (usize, Time)>, comp: &[Time]) -> Combined {
    let mut end = Time::ZERO;
    let mut end_ov = Time::ZERO;
    let mut comm_max = Time::ZERO;
    let mut slowest = (Time::ZERO, Time::ZERO);
    for (n, t) in comm {
        let c = comp.get(n).copied().unwrap_or(Time::ZERO);
        comm_max = comm_max.max(t);
        if t + c > end {
            end = t + c;
            slowest = (t, c);
        }
        end_ov = end_ov.max(t.max(c));
    }
    let comp_max = comp.iter().copied().max().unwrap_or(Time::ZERO);
    if comp_max > end {
        end = comp_max;
        slowest = (Time::ZERO, comp_max);
    }
    Combined {
        end_to_end: end,
        end_to_end_overlapped: end_ov.max(comp_max),
        comm_max,
        comp_max,
        slowest,
    }
}

/// The end-to-end figures of `mode` with `rates`, given each node's work
/// (`node_work`) and the whole matrix's size.
pub fn evaluate(
    mode: &ModeResult,
    model: ComputeModel,
    rates: Rates,
    work: &[(u64, u64)],
    k: u32,
    total: (u64, u64),
) -> ComputeResult {
    let comp: Vec<Time> = work
        .iter()
        .map(|&(z, r)| rates.spmm_time(z, r, k))
        .collect();
    let e = combine(mode.nodes.iter().map(|n| (n.node as usize, n.time)), &comp);
    let (end, end_ov, comm_max, comp_max, slowest) = (
        e.end_to_end,
        e.end_to_end_overlapped,
        e.comm_max,
        e.comp_max,
        e.slowest,
    );
    let single_node = rates.spmm_time(total.0, total.1, k);
    ComputeResult {
        model,
        rates,
        comp_max,
        comm_max,
        end_to_end: end,
        end_to_end_overlapped: end_ov,
        single_node,
        speedup_vs_single: ratio(single_node, end),
        speedup_vs_single_overlapped: ratio(single_node, end_ov),
        ideal_speedup: ratio(single_node, comp_max),
        comm_fraction: ratio(slowest.0, slowest.0 + slowest.1),
        comp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::report::NodeResult;

    #[test]
    fn spade_time_matches_a_hand_computation() {
        // 1,000,000 nonzeros in 10,000 rows, K = 16 on SPADE:
        // bytes = 1e6 * 8 + 1e6 * 64 + 1e4 * (8 + 64) = 72,720,000
        // at 800 GB/s = 90.9 us; flops = 32e6 at 4,096 GFLOP/s = 7.8 us.
        let r = ComputeModel::Spade.rates().expect("spade has rates");
        assert_eq!(
            r.spmm_time(1_000_000, 10_000, 16),
            Time::from_ps(90_900_000)
        );
        // K = 1: bytes = 1e6 * 12 + 1e4 * 12 = 12,120,000 -> 15.15 us.
        assert_eq!(r.spmm_time(1_000_000, 10_000, 1), Time::from_ps(15_150_000));
        // A compute-bound engine: 1 GFLOP/s, huge bandwidth.
        let slow = Rates {
            gflops: 1.0,
            gbps: 1e9,
        };
        assert_eq!(slow.spmm_time(500, 1, 2), Time::from_ps(2_000_000));
    }

    #[test]
    fn end_to_end_brackets_communication_and_computation() {
        let node = |n: u32, us: u64| NodeResult {
            node: n,
            time: Time::from_us(us),
            ..NodeResult::default()
        };
        let mode = ModeResult::new("x", "", vec![node(0, 10), node(1, 40)], false);
        let rates = Rates {
            gflops: 1e6,
            gbps: 1.0,
        };
        // Node 0: 30,000 bytes -> 30 us; node 1: 10,000 bytes -> 10 us
        // (K = 1: 12 bytes per nonzero, 12 per row).
        let work = [(2_000, 500), (500, 333)];
        let c = evaluate(&mode, ComputeModel::Spade, rates, &work, 1, (2_500, 833));
        assert_eq!(c.comp[0], Time::from_us(30));
        assert_eq!(c.comp[1], Time::from_ps(9_996_000));
        assert_eq!(c.comm_max, Time::from_us(40));
        // No overlap: max(10 + 30, 40 + 9.996) = 49.996 us.
        assert_eq!(c.end_to_end, Time::from_ps(49_996_000));
        // Full overlap: max(max(10, 30), max(40, 9.996)) = 40 us.
        assert_eq!(c.end_to_end_overlapped, Time::from_us(40));
        assert_eq!(c.single_node, Time::from_ps(39_996_000));
        assert!((c.ideal_speedup - 39.996 / 30.0).abs() < 1e-9);
        assert!((c.comm_fraction - 40.0 / 49.996).abs() < 1e-9);
        assert!(c.end_to_end >= c.end_to_end_overlapped);
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for m in [
            ComputeModel::None,
            ComputeModel::Spade,
            ComputeModel::CpuDdr,
            ComputeModel::CpuHbm,
        ] {
            assert_eq!(m.name().parse::<ComputeModel>(), Ok(m));
        }
        let e = "gpu".parse::<ComputeModel>().unwrap_err();
        assert!(e.to_string().contains(COMPUTE_MODELS), "{e}");
    }
}
