//! The communication statistics of a partitioned matrix that the NetSparse
//! paper uses to characterise its workloads (§3), computed exactly:
//!
//! * **Table 1**, useful : redundant property transfers. A transfer is
//!   useful when it brings a node a remote property it needs and has not
//!   received yet; every node needs each of its distinct remote idxs once.
//!   Under SU every node receives every property it does not own; under SA
//!   it issues one PR per nonzero with a remote column.
//! * **Table 4**, temporal remote destination locality: the SA PRs of a
//!   node in generation order (row-major, one per remote nonzero) cut into
//!   consecutive windows of 64; the number of distinct destination nodes
//!   per window, averaged over every full window of every node.
//! * **Intra-group sharing** (§3, groups of 16 = racks): of the PRs left
//!   after removing redundant ones (each node's distinct remote idxs), the
//!   share whose property another node of the same group also needs.

use std::ops::Range;

use serde::Serialize;

use super::matrix::CsrMatrix;
use super::partition::Partition;

/// PRs per window for [`Locality::mean_destinations`] (Table 4).
pub const WINDOW: usize = 64;

/// The statistics of one matrix on one partition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Locality {
    /// Nodes.
    pub nodes: u32,
    /// Nodes per group (rack).
    pub group: u32,
    /// Useful transfers: Σ over nodes of distinct remote idxs.
    pub useful: u64,
    /// SU transfers: Σ over nodes of the properties it does not own.
    pub su_transfers: u64,
    /// SA transfers: Σ over nodes of remote nonzeros.
    pub sa_transfers: u64,
    /// Full windows of [`WINDOW`] consecutive SA PRs, over all nodes.
    pub windows: u64,
    /// Σ over those windows of their distinct destinations.
    pub window_destinations: u64,
    /// Useful PRs whose property another node of the group needs too.
    pub shared: u64,
}

impl Locality {
    /// Redundant SU transfers per useful one (Table 1, first row).
    pub fn su_redundancy(&self) -> f64 {
        ratio(self.su_transfers.saturating_sub(self.useful), self.useful)
    }

    /// Redundant SA transfers per useful one (Table 1, second row).
    pub fn sa_redundancy(&self) -> f64 {
        ratio(self.sa_transfers.saturating_sub(self.useful), self.useful)
    }

    /// Mean distinct destinations among [`WINDOW`] consecutive PRs (Table 4).
    pub fn mean_destinations(&self) -> f64 {
        ratio(self.window_destinations, self.windows)
    }

    /// Share of useful PRs useful to more than one node of their group (§3).
    pub fn shared_fraction(&self) -> f64 {
        ratio(self.shared, self.useful)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Measure `m` on `part`, nodes grouped `group` at a time in node order
/// (the last group may be smaller). Two passes over the nonzeros; memory is
/// two `u32` stamps per column.
pub fn measure(m: &CsrMatrix, part: &Partition, group: u32) -> Locality {
    let nodes = part.nodes();
    let group = group.clamp(1, nodes.max(1));
    let cols = m.cols() as usize;
    let mut out = Locality {
        nodes,
        group,
        useful: 0,
        su_transfers: 0,
        sa_transfers: 0,
        windows: 0,
        window_destinations: 0,
        shared: 0,
    };
    // `first[c]`: 1 + the first node of the current group needing c;
    // `multi[c]`: 1 + the group index if a second node of it needs c.
    let mut first = vec![0u32; cols];
    let mut multi = vec![0u32; cols];
    // Per-node distinct stamp: `seen[c] == node + 1`.
    let mut seen = vec![0u32; cols];
    let mut dests = vec![0u32; nodes as usize];
    for g0 in (0..nodes).step_by(group as usize) {
        let members: Range<u32> = g0..(g0 + group).min(nodes);
        let gstamp = g0 / group + 1;
        // Pass 1: per node, its distinct remote idxs; which the group shares.
        for node in members.clone() {
            out.su_transfers += u64::from(m.cols() - part.cols.len(node));
            let rows = part.rows.range(node);
            let mut window = 0usize;
            let mut distinct_in_window = 0u64;
            let mut wid = 0u32;
            for &c in &m.col_idx()[m.entry_range(rows.start, rows.end)] {
                let owner = part.cols.owner(c);
                if owner == node {
                    continue;
                }
                out.sa_transfers += 1;
                // Table 4: distinct owners in this window (stamped by window).
                let stamp = wid + 1;
                if dests[owner as usize] != stamp {
                    dests[owner as usize] = stamp;
                    distinct_in_window += 1;
                }
                window += 1;
                if window == WINDOW {
                    out.windows += 1;
                    out.window_destinations += distinct_in_window;
                    window = 0;
                    distinct_in_window = 0;
                    wid += 1;
                }
                let ci = c as usize;
                if seen[ci] != node + 1 {
                    seen[ci] = node + 1;
                    out.useful += 1;
                    if first[ci] != gstamp {
                        first[ci] = gstamp;
                    } else {
                        multi[ci] = gstamp;
                    }
                }
            }
            // Window stamps restart per node.
            dests.iter_mut().for_each(|d| *d = 0);
        }
        // Pass 2: the group's useful PRs whose idx two or more members need.
        for node in members {
            let rows = part.rows.range(node);
            for &c in &m.col_idx()[m.entry_range(rows.start, rows.end)] {
                let ci = c as usize;
                if part.cols.owner(c) == node || seen[ci] == u32::MAX - node {
                    continue;
                }
                // Count each (node, idx) once: mark it with a second stamp.
                seen[ci] = u32::MAX - node;
                if multi[ci] == gstamp {
                    out.shared += 1;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use super::*;
    use crate::sim::matrix::CooBuilder;
    use crate::sim::rng::SplitMix64;

    /// The statistics of random matrices equal a direct count with sets.
    #[test]
    fn equals_an_independent_count() {
        let mut some_unshared = false;
        for (seed, n, per_row, nodes, group) in [
            (1u64, 300u64, 9u64, 12u32, 4u32),
            (2, 1000, 20, 16, 16),
            (3, 257, 8, 10, 3),
            (4, 64, 40, 8, 8),
        ] {
            let mut g = SplitMix64::new(seed);
            let mut b = CooBuilder::new(n, n, false).unwrap();
            for r in 0..n {
                for _ in 0..per_row {
                    // Half near the diagonal, half anywhere.
                    let c = if g.next_u64() % 2 == 0 {
                        (r + g.next_u64() % 20) % n
                    } else {
                        g.next_u64() % n
                    };
                    b.push(r, c, 1.0).unwrap();
                }
            }
            let m = b.build().0;
            let part = Partition::equal(&m, nodes).unwrap();
            let got = measure(&m, &part, group);
            // Direct count.
            let mut useful = 0u64;
            let mut su = 0u64;
            let mut sa = 0u64;
            let (mut windows, mut wdest) = (0u64, 0u64);
            let mut need: Vec<HashSet<u32>> = Vec::new();
            for node in 0..nodes {
                su += u64::from(m.cols() - part.cols.len(node));
                let rows = part.rows.range(node);
                let mut stream = Vec::new();
                for r in rows {
                    for &c in m.row(r) {
                        if part.cols.owner(c) != node {
                            stream.push(c);
                        }
                    }
                }
                sa += stream.len() as u64;
                for w in stream.chunks_exact(WINDOW) {
                    windows += 1;
                    let owners: BTreeSet<u32> = w.iter().map(|&c| part.cols.owner(c)).collect();
                    wdest += owners.len() as u64;
                }
                let distinct: HashSet<u32> = stream.into_iter().collect();
                useful += distinct.len() as u64;
                need.push(distinct);
            }
            let mut shared = 0u64;
            for node in 0..nodes {
                let g0 = node / group * group;
                for &c in &need[node as usize] {
                    let others = (g0..(g0 + group).min(nodes))
                        .filter(|&o| o != node)
                        .any(|o| need[o as usize].contains(&c));
                    if others {
                        shared += 1;
                    }
                }
            }
            let want = Locality {
                nodes,
                group,
                useful,
                su_transfers: su,
                sa_transfers: sa,
                windows,
                window_destinations: wdest,
                shared,
            };
            assert_eq!(got, want, "seed {seed}");
            // Not a degenerate case: every statistic has something to count.
            assert!(got.windows > 0 && got.shared > 0, "seed {seed}: {got:?}");
            some_unshared |= got.shared < got.useful;
        }
        assert!(some_unshared);
    }
}
