//! The host models of the NetSparse modes: when each node's RIG commands
//! reach its SmartNIC relative to the node's computation, and how much
//! communication overlaps computation.
//!
//! * **post-at-zero** (the default): the host posts every command from time
//!   0, one per `host-post-ns` (the simulator's original model). With a
//!   compute time (`--compute` or `--compute-rate`) the iteration is bulk
//!   synchronous: the kernel runs, then the host posts the gather, so a
//!   node's end-to-end time is its computation plus its communication (the
//!   gather simulated from 0), with nothing overlapped.
//! * **triggered** (GPU-triggered networking, LeBeane's dissertation
//!   Ch. 6): the node's kernel walks its nonzeros in row order at a
//!   constant rate — `compute-rate` nonzeros per second, or the node's
//!   roofline time under `--compute` spread evenly over its nonzeros — in
//!   chunks of `chunk-nnz`. Ahead of time (before the kernel starts, e.g.
//!   during the previous phase, so their posting cost is off the
//!   iteration's critical path, GPU-TN's point), the host registers the
//!   same RIG commands as post-at-zero (`rig-batch` consecutive remote
//!   idxs each, so the two models gather alike and differ only in time)
//!   as triggered operations on one tag per node: a command whose last idx
//!   lies in chunk `j` gets threshold `j + 1`. The registrations reach the
//!   NIC one PCIe latency after time 0.
//!   The kernel stores the tag as each chunk completes, so the counter is
//!   the number of chunks done and a command fires as soon as the chunk
//!   with its last idx is complete (at once, by the early-trigger rule, if
//!   the kernel got there before the registration arrived). A registration
//!   refused because the trigger table is full is counted and its command
//!   posted by the host when the kernel ends, one per `host-post-ns` (the
//!   fallback a host without the slot would take). A node's end-to-end time is the later of its kernel's end
//!   and its last completion.
//!
//! The figures per node: computation `comp` (the kernel, from 0);
//! communication from the first command's posting (or firing) to the last
//! completion; overlapped time, the part of that interval inside the
//! kernel; end-to-end. The cluster's end-to-end time is its slowest
//! node's. The gathered data feed the chunks' consumers, e.g. the next
//! SpMM iteration of an iterative solver or the next layer of a GNN; the
//! model takes the dependency of chunk j's gather on chunk j's compute as
//! given and does not model the consumer.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use netsparse_externs::Time;

use super::config::SimConfig;
use super::matrix::CsrMatrix;
use super::partition::Partition;

/// When a node's host hands its RIG commands to the SmartNIC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostModel {
    /// Every command posted from time 0, one per `host-post-ns`.
    #[default]
    PostAtZero,
    /// Commands registered as triggered operations, fired as the kernel's
    /// chunks complete.
    Triggered,
}

impl HostModel {
    /// The accepted names, for errors.
    pub const NAMES: &'static str = "post-at-zero, triggered";

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            HostModel::PostAtZero => "post-at-zero",
            HostModel::Triggered => "triggered",
        }
    }
}

impl fmt::Display for HostModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HostModel {
    type Err = String;
    fn from_str(s: &str) -> Result<HostModel, String> {
        match s.trim() {
            "post-at-zero" => Ok(HostModel::PostAtZero),
            "triggered" => Ok(HostModel::Triggered),
            other => Err(format!(
                "unknown host model {other:?} (one of {})",
                HostModel::NAMES
            )),
        }
    }
}

/// The compute kernel of one node: its nonzeros at a constant rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kernel {
    /// The node's nonzeros.
    pub nnz: u64,
    /// The kernel's time over all of them.
    pub time: Time,
}

impl Kernel {
    /// When the kernel has processed its first `done` nonzeros.
    pub fn at(&self, done: u64) -> Time {
        if self.nnz == 0 {
            return Time::ZERO;
        }
        let ps =
            u128::from(self.time.as_ps()) * u128::from(done.min(self.nnz)) / u128::from(self.nnz);
        Time::from_ps(ps as u64)
    }
}

/// Each node's kernel, or `None` when the configuration gives no compute
/// time (no `compute` model and no `compute-rate`).
pub fn kernels(m: &CsrMatrix, part: &Partition, cfg: &SimConfig) -> Option<Vec<Kernel>> {
    let work = super::compute::node_work(m, part);
    if let Some(rate) = cfg.compute_rate {
        return Some(
            work.iter()
                .map(|&(nnz, _)| Kernel {
                    nnz,
                    time: Time::from_ps((nnz as f64 / rate * 1e12).round() as u64),
                })
                .collect(),
        );
    }
    let rates = cfg.compute_rates()?;
    Some(
        work.iter()
            .map(|&(nnz, rows)| Kernel {
                nnz,
                time: rates.spmm_time(nnz, rows, cfg.k),
            })
            .collect(),
    )
}

/// Where the compute time comes from, for the report.
pub fn compute_source(cfg: &SimConfig) -> String {
    match (cfg.compute_rate, cfg.compute_rates()) {
        (Some(r), _) => format!("compute-rate {r:.4e} nonzeros/s per node"),
        (None, Some(r)) => format!(
            "{} roofline ({:.0} GFLOP/s, {:.0} GB/s)",
            cfg.compute, r.gflops, r.gbps
        ),
        (None, None) => "none".into(),
    }
}

/// One chunk of a node's kernel: when it completes and the remote
/// nonzeros (positions in the node's idx array) it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Its tag (the chunk's index).
    pub tag: u64,
    /// When the kernel completes it.
    pub done: Time,
    /// First position in the node's idx array (its remote nonzeros in row
    /// order).
    pub first: u64,
    /// Remote nonzeros in the chunk.
    pub count: u64,
}

/// The chunks of node `n`'s kernel, in order (chunk `j` has tag `j`).
pub fn chunks(
    m: &CsrMatrix,
    part: &Partition,
    n: u32,
    kernel: &Kernel,
    chunk_nnz: u64,
) -> Vec<Chunk> {
    let rows = part.rows.range(n);
    let owned = part.cols.range(n);
    let entries = m.entry_range(rows.start, rows.end);
    let cols = &m.col_idx()[entries];
    let size = chunk_nnz.max(1) as usize;
    let mut out = Vec::with_capacity(cols.len().div_ceil(size));
    let mut first = 0u64;
    for (j, c) in cols.chunks(size).enumerate() {
        let count = c.iter().filter(|col| !owned.contains(col)).count() as u64;
        let end = (j * size + c.len()) as u64;
        out.push(Chunk {
            tag: j as u64,
            done: kernel.at(end),
            first,
            count,
        });
        first += count;
    }
    out
}

/// How many chunks must be complete before the idxs at positions
/// `first..end` of the idx array can be gathered: the number up to the
/// chunk holding position `end - 1` (`chunks` as from [`chunks`]).
pub fn chunks_needed(chunks: &[Chunk], end: u64) -> u64 {
    // The first chunk whose remote positions reach past `end - 1`.
    let last = end.saturating_sub(1);
    let i = chunks.partition_point(|c| c.first + c.count <= last);
    (i as u64 + 1).min(chunks.len() as u64)
}

/// One node's computation and communication.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HostNode {
    /// Its kernel's time.
    pub compute: Time,
    /// When its first command was posted or fired (`None`: no commands).
    pub comm_start: Option<Time>,
    /// Its last completion (the gather simulated from 0 for post-at-zero).
    pub comm_end: Time,
    /// Its end-to-end time.
    pub end_to_end: Time,
    /// Communication inside the kernel's time.
    pub overlapped: Time,
}

impl HostNode {
    /// The figures of a node under `model`.
    pub fn new(model: HostModel, compute: Time, comm_start: Option<Time>, comm_end: Time) -> Self {
        match (model, comm_start) {
            (_, None) => HostNode {
                compute,
                comm_start,
                comm_end: Time::ZERO,
                end_to_end: compute,
                overlapped: Time::ZERO,
            },
            (HostModel::PostAtZero, Some(s)) => HostNode {
                compute,
                comm_start: Some(s),
                comm_end,
                end_to_end: compute + comm_end,
                overlapped: Time::ZERO,
            },
            (HostModel::Triggered, Some(s)) => HostNode {
                compute,
                comm_start: Some(s),
                comm_end,
                end_to_end: compute.max(comm_end),
                overlapped: compute.min(comm_end).saturating_sub(s),
            },
        }
    }

    /// From the first posting to the last completion.
    pub fn communication(&self) -> Time {
        self.comm_start
            .map_or(Time::ZERO, |s| self.comm_end.saturating_sub(s))
    }
}

/// A mode's computation/communication overlap (`host` in the report).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HostResult {
    /// The host model.
    pub model: HostModel,
    /// Where the kernel's time comes from.
    pub compute_source: String,
    /// Nonzeros per chunk (triggered).
    pub chunk_nnz: u64,
    /// The node with the longest end-to-end time.
    pub tail: u32,
    /// The cluster's end-to-end time (the tail node's).
    pub end_to_end: Time,
    /// The tail node's computation.
    pub compute: Time,
    /// The tail node's communication (first posting to last completion).
    pub communication: Time,
    /// The tail node's communication inside its computation.
    pub overlapped: Time,
    /// The slowest node's computation.
    pub compute_max: Time,
    /// Over all nodes: overlapped time ÷ communication time.
    pub overlap_fraction: f64,
    /// Triggered operations registered, over all nodes.
    pub registered: u64,
    /// Of which fired.
    pub fired: u64,
    /// Of which fired at registration (their chunk completed first).
    pub early: u64,
    /// Registrations refused (trigger table full), posted at the kernel's end.
    pub table_full: u64,
    /// Per node, in node order.
    pub nodes: Vec<HostNode>,
}

impl HostResult {
    /// Summarise per-node figures.
    pub fn new(model: HostModel, cfg: &SimConfig, nodes: Vec<HostNode>) -> HostResult {
        let mut tail = 0;
        for (i, n) in nodes.iter().enumerate() {
            if n.end_to_end > nodes[tail].end_to_end {
                tail = i;
            }
        }
        let t = nodes.get(tail).copied().unwrap_or_default();
        let (ov, comm) = nodes.iter().fold((0u128, 0u128), |(o, c), n| {
            (
                o + u128::from(n.overlapped.as_ps()),
                c + u128::from(n.communication().as_ps()),
            )
        });
        HostResult {
            model,
            compute_source: compute_source(cfg),
            chunk_nnz: cfg.chunk_nnz,
            tail: tail as u32,
            end_to_end: t.end_to_end,
            compute: t.compute,
            communication: t.communication(),
            overlapped: t.overlapped,
            compute_max: nodes.iter().map(|n| n.compute).max().unwrap_or_default(),
            overlap_fraction: if comm == 0 {
                0.0
            } else {
                ov as f64 / comm as f64
            },
            nodes,
            ..HostResult::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::matrix::CooBuilder;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for h in [HostModel::PostAtZero, HostModel::Triggered] {
            assert_eq!(h.name().parse::<HostModel>(), Ok(h));
        }
        let e = "eager".parse::<HostModel>().unwrap_err();
        assert!(e.contains(HostModel::NAMES), "{e}");
    }

    #[test]
    fn chunks_cover_the_remote_nonzeros_in_row_order() {
        // 4 x 4, two nodes: node 0 owns rows and columns 0..2.
        let mut b = CooBuilder::new(4, 4, false).unwrap();
        for (r, c) in [(0, 0), (0, 3), (1, 2), (1, 1), (1, 3), (2, 0), (3, 3)] {
            b.push(r, c, 1.0).unwrap();
        }
        let m = b.build().0;
        let part = Partition::equal(&m, 2).unwrap();
        let k = Kernel {
            nnz: 5,
            time: Time::from_us(5),
        };
        // Node 0's nonzeros: (0,0) (0,3)r | (1,1) (1,2)r | (1,3)r.
        let c = chunks(&m, &part, 0, &k, 2);
        let chunk = |tag, us, first| Chunk {
            tag,
            done: Time::from_us(us),
            first,
            count: 1,
        };
        assert_eq!(c, vec![chunk(0, 2, 0), chunk(1, 4, 1), chunk(2, 5, 2)]);
        // Idx positions 0..2 need chunks 0 and 1; 2..3 all three; 0..1 one.
        assert_eq!(chunks_needed(&c, 2), 2);
        assert_eq!(chunks_needed(&c, 3), 3);
        assert_eq!(chunks_needed(&c, 1), 1);
        assert_eq!(chunks(&m, &part, 0, &k, 100).len(), 1);
        // A chunk without remote nonzeros still counts.
        let c = chunks(&m, &part, 0, &k, 1);
        assert_eq!(
            c.iter().map(|c| c.count).collect::<Vec<_>>(),
            [0, 1, 0, 1, 1]
        );
        assert_eq!(chunks_needed(&c, 1), 2);
        assert_eq!(chunks_needed(&c, 2), 4);
    }

    #[test]
    fn overlap_is_the_communication_inside_the_kernel() {
        let us = Time::from_us;
        let t = HostNode::new(HostModel::Triggered, us(10), Some(us(2)), us(14));
        assert_eq!((t.end_to_end, t.overlapped), (us(14), us(8)));
        assert_eq!(t.communication(), us(12));
        let z = HostNode::new(HostModel::PostAtZero, us(10), Some(Time::ZERO), us(6));
        assert_eq!((z.end_to_end, z.overlapped), (us(16), Time::ZERO));
        let idle = HostNode::new(HostModel::Triggered, us(3), None, Time::ZERO);
        assert_eq!((idle.end_to_end, idle.communication()), (us(3), Time::ZERO));
    }
}
