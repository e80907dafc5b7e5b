//! 1D partitioning of a sparse matrix and its property array over N nodes.
//!
//! Node `n` owns a contiguous range of rows (it computes those rows of the
//! output) and the same range of the property array, which has one property
//! (K four-byte elements) per *column*. A nonzero `(r, c)` on node `n` needs
//! property `c`; it is *remote* if another node owns column `c`.
//!
//! * [`Ranges::equal`]: contiguous, equal shares; when `total` does not
//!   divide by `N`, the first `total mod N` nodes get one extra index.
//! * [`Partition::from_text`]: a partition file of N lines `start end`
//!   (half-open row ranges, 0-based, contiguous, starting at 0 and covering
//!   every row; `#` comments and blank lines are ignored). The property array
//!   uses the same ranges, so the matrix must be square.
//!
//! [`analyze`] walks every node's nonzeros once and counts, per node, the
//! remote nonzeros (PRs without filtering), the distinct remote idxs (PRs
//! with perfect per-node filtering), both per owner, and optionally the
//! distinct remote idxs of each of `G` contiguous row groups (cores).

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use thiserror::Error;

use super::matrix::CsrMatrix;

/// A bad partition.
#[derive(Debug, Error)]
pub enum PartitionError {
    /// Zero nodes.
    #[error("nodes = 0: a partition needs at least one node")]
    NoNodes,
    /// The partition file could not be read.
    #[error("cannot read partition file {path}: {source}")]
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A line that is not `start end`.
    #[error("{file}:{line}: expected `start end` (two non-negative integers), found {text:?}")]
    BadLine {
        /// File name.
        file: String,
        /// 1-based line.
        line: usize,
        /// The line.
        text: String,
    },
    /// `end < start`.
    #[error("{file}:{line}: range {start}..{end} ends before it starts")]
    Backwards {
        /// File name.
        file: String,
        /// 1-based line.
        line: usize,
        /// Start.
        start: u64,
        /// End.
        end: u64,
    },
    /// A range that does not start where the previous one ended.
    #[error("{file}:{line}: range starts at {start}, expected {expected} (ranges must be contiguous, from 0)")]
    NotContiguous {
        /// File name.
        file: String,
        /// 1-based line.
        line: usize,
        /// Found start.
        start: u64,
        /// Expected start.
        expected: u64,
    },
    /// A range beyond the matrix.
    #[error("{file}:{line}: range end {end} is beyond the matrix's {rows} rows")]
    BeyondRows {
        /// File name.
        file: String,
        /// 1-based line.
        line: usize,
        /// The end.
        end: u64,
        /// Matrix rows.
        rows: u32,
    },
    /// The ranges do not cover the matrix.
    #[error("{file}: ranges cover rows 0..{covered}, but the matrix has {rows} rows")]
    NotCovering {
        /// File name.
        file: String,
        /// Rows covered.
        covered: u64,
        /// Matrix rows.
        rows: u32,
    },
    /// The file has a different number of ranges than the run's nodes.
    #[error("{file}: {found} ranges, but nodes = {nodes}")]
    NodeCount {
        /// File name.
        file: String,
        /// Ranges in the file.
        found: usize,
        /// Nodes of the run.
        nodes: u32,
    },
    /// A partition file for a non-square matrix.
    #[error("a partition file needs a square matrix (the property array is partitioned like the rows), this one is {rows} x {cols}")]
    NotSquare {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
    },
    /// More than `u32::MAX` nodes.
    #[error("{found} ranges: more than {max} nodes")]
    TooManyNodes {
        /// Ranges found.
        found: usize,
        /// Limit.
        max: u32,
    },
}

/// Contiguous ranges `[bounds[n], bounds[n + 1])` of `0..total` over N nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ranges {
    bounds: Vec<u32>,
    /// `Some((q, rem))` for an equal split: lets [`Ranges::owner`] divide.
    #[serde(skip)]
    equal: Option<(u32, u32)>,
}

impl Ranges {
    /// Split `0..total` into `nodes` contiguous shares of `total / nodes`,
    /// the first `total % nodes` shares one larger.
    pub fn equal(total: u32, nodes: u32) -> Result<Ranges, PartitionError> {
        if nodes == 0 {
            return Err(PartitionError::NoNodes);
        }
        let q = total / nodes;
        let rem = total % nodes;
        let mut bounds = Vec::with_capacity(nodes as usize + 1);
        let mut at = 0u32;
        bounds.push(0);
        for n in 0..nodes {
            at += q + u32::from(n < rem);
            bounds.push(at);
        }
        Ok(Ranges {
            bounds,
            equal: Some((q, rem)),
        })
    }

    /// Ranges from explicit boundaries (`bounds[0] == 0`, non-decreasing).
    fn from_bounds(bounds: Vec<u32>) -> Ranges {
        Ranges {
            bounds,
            equal: None,
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        (self.bounds.len() - 1) as u32
    }

    /// The total length (`0..total` is partitioned).
    pub fn total(&self) -> u32 {
        self.bounds[self.bounds.len() - 1]
    }

    /// Node `n`'s range (empty if `n` is out of range).
    pub fn range(&self, n: u32) -> Range<u32> {
        let n = n as usize;
        if n + 1 >= self.bounds.len() {
            return 0..0;
        }
        self.bounds[n]..self.bounds[n + 1]
    }

    /// Length of node `n`'s range.
    pub fn len(&self, n: u32) -> u32 {
        let r = self.range(n);
        r.end - r.start
    }

    /// Whether every range is empty.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The boundaries: `nodes + 1` values from 0 to `total`.
    pub fn bounds(&self) -> &[u32] {
        &self.bounds
    }

    /// The node owning index `i` (`i < total`; larger indices map to the
    /// last node).
    #[inline]
    pub fn owner(&self, i: u32) -> u32 {
        match self.equal {
            Some((q, rem)) => {
                let big = rem as u64 * (q as u64 + 1);
                let i64_ = u64::from(i);
                let n = if i64_ < big {
                    i64_ / (u64::from(q) + 1)
                } else if q == 0 {
                    u64::from(self.nodes()) - 1
                } else {
                    u64::from(rem) + (i64_ - big) / u64::from(q)
                };
                (n as u32).min(self.nodes() - 1)
            }
            None => {
                let p = self.bounds.partition_point(|&b| b <= i);
                (p.saturating_sub(1) as u32).min(self.nodes() - 1)
            }
        }
    }
}

/// Row and property (column) ranges of every node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Partition {
    /// Rows of each node.
    pub rows: Ranges,
    /// Properties (columns) of each node.
    pub cols: Ranges,
}

impl Partition {
    /// Equal contiguous shares of rows and of columns.
    pub fn equal(m: &CsrMatrix, nodes: u32) -> Result<Partition, PartitionError> {
        Ok(Partition {
            rows: Ranges::equal(m.rows(), nodes)?,
            cols: Ranges::equal(m.cols(), nodes)?,
        })
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        self.rows.nodes()
    }

    /// Parse a partition file's text (`file` names it in errors). With
    /// `nodes`, the file must have exactly that many ranges.
    pub fn from_text(
        text: &str,
        file: &str,
        m: &CsrMatrix,
        nodes: Option<u32>,
    ) -> Result<Partition, PartitionError> {
        if m.rows() != m.cols() {
            return Err(PartitionError::NotSquare {
                rows: m.rows(),
                cols: m.cols(),
            });
        }
        let rows = m.rows();
        let mut bounds = vec![0u32];
        for (k, raw) in text.lines().enumerate() {
            let line = k + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let bad = || PartitionError::BadLine {
                file: file.to_string(),
                line,
                text: raw.chars().take(60).collect(),
            };
            let mut it = body.split_whitespace();
            let start: u64 = it.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
            let end: u64 = it.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
            if it.next().is_some() {
                return Err(bad());
            }
            let expected = u64::from(*bounds.last().unwrap_or(&0));
            if start != expected {
                return Err(PartitionError::NotContiguous {
                    file: file.to_string(),
                    line,
                    start,
                    expected,
                });
            }
            if end < start {
                return Err(PartitionError::Backwards {
                    file: file.to_string(),
                    line,
                    start,
                    end,
                });
            }
            if end > u64::from(rows) {
                return Err(PartitionError::BeyondRows {
                    file: file.to_string(),
                    line,
                    end,
                    rows,
                });
            }
            bounds.push(end as u32);
        }
        let found = bounds.len() - 1;
        if found == 0 {
            return Err(PartitionError::NoNodes);
        }
        if found > u32::MAX as usize - 1 {
            return Err(PartitionError::TooManyNodes {
                found,
                max: u32::MAX - 1,
            });
        }
        let covered = u64::from(*bounds.last().unwrap_or(&0));
        if covered != u64::from(rows) {
            return Err(PartitionError::NotCovering {
                file: file.to_string(),
                covered,
                rows,
            });
        }
        if let Some(n) = nodes {
            if found != n as usize {
                return Err(PartitionError::NodeCount {
                    file: file.to_string(),
                    found,
                    nodes: n,
                });
            }
        }
        let r = Ranges::from_bounds(bounds);
        Ok(Partition {
            rows: r.clone(),
            cols: r,
        })
    }

    /// Read a partition file.
    pub fn read_file(
        path: &Path,
        m: &CsrMatrix,
        nodes: Option<u32>,
    ) -> Result<Partition, PartitionError> {
        let text = std::fs::read_to_string(path).map_err(|source| PartitionError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Partition::from_text(&text, &path.display().to_string(), m, nodes)
    }

    /// Node `n`'s share of the matrix.
    pub fn node<'a>(&'a self, m: &'a CsrMatrix, n: u32) -> NodeView<'a> {
        let rows = self.rows.range(n);
        let range = m.entry_range(rows.start, rows.end);
        NodeView {
            node: n,
            rows,
            row_ptr: m.row_ptr(),
            cols: &m.col_idx()[range],
            partition: self,
        }
    }
}

/// One node's rows and the column idxs of their nonzeros.
#[derive(Clone, Debug)]
pub struct NodeView<'a> {
    /// The node.
    pub node: u32,
    /// Its rows.
    pub rows: Range<u32>,
    row_ptr: &'a [u64],
    /// The column idxs of its nonzeros, row by row (the RIG idx list).
    pub cols: &'a [u32],
    partition: &'a Partition,
}

impl<'a> NodeView<'a> {
    /// Whether property `idx` lives on another node.
    #[inline]
    pub fn is_remote(&self, idx: u32) -> bool {
        self.partition.cols.owner(idx) != self.node
    }

    /// The remote nonzeros in order, as `(idx, owner)`.
    pub fn remote(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        let (node, part) = (self.node, self.partition);
        self.cols.iter().filter_map(move |&c| {
            let o = part.cols.owner(c);
            (o != node).then_some((c, o))
        })
    }

    /// The column idxs of row `r` (which must be one of this node's rows).
    pub fn row(&self, r: u32) -> &'a [u32] {
        if !self.rows.contains(&r) {
            return &[];
        }
        let base = self.row_ptr[self.rows.start as usize] as usize;
        let s = self.row_ptr[r as usize] as usize - base;
        let e = self.row_ptr[r as usize + 1] as usize - base;
        &self.cols[s..e]
    }
}

/// What one node needs from the others.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeProfile {
    /// The node.
    pub node: u32,
    /// Its rows.
    pub rows: Range<u32>,
    /// Properties it owns.
    pub owned_cols: u32,
    /// Its nonzeros.
    pub nnz: u64,
    /// Nonzeros whose property is local.
    pub local_nnz: u64,
    /// Nonzeros whose property is remote: the PRs without any filtering.
    pub remote_nnz: u64,
    /// Distinct remote idxs: the PRs with perfect per-node filtering.
    pub distinct_remote: u64,
    /// Distinct remote idxs per owner node (length N; 0 for itself).
    pub distinct_per_owner: Vec<u64>,
    /// Per group (core) of contiguous rows: its distinct remote idxs (empty
    /// when the analysis used one group per node).
    pub group_distinct: Vec<u64>,
    /// Sum over groups of the distinct remote idxs per owner (length N; equal
    /// to `distinct_per_owner` with one group).
    pub group_distinct_per_owner: Vec<u64>,
}

/// The per-node profiles of a partitioned matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// Groups (cores) per node used for `group_distinct`.
    pub groups: u32,
    /// One profile per node.
    pub nodes: Vec<NodeProfile>,
}

/// Count every node's remote needs. `groups` ≥ 1 splits each node's rows
/// into that many contiguous groups by [`Ranges::equal`] (SAOpt's cores) and
/// counts distinct remote idxs per group too. `progress(done_nodes)` is
/// called after each node; returning `false` stops early (the analysis then
/// holds the nodes done so far).
pub fn analyze(
    m: &CsrMatrix,
    part: &Partition,
    groups: u32,
    progress: &mut dyn FnMut(u32) -> bool,
) -> Analysis {
    let n_nodes = part.nodes();
    let groups = groups.max(1);
    let cols = m.cols() as usize;
    // Stamps instead of per-node sets: `seen_node[c] == node + 1` means idx c
    // was already counted for this node; likewise per group.
    let mut seen_node = vec![0u32; cols];
    let mut seen_group = if groups > 1 {
        vec![0u64; cols]
    } else {
        Vec::new()
    };
    let mut out = Vec::with_capacity(n_nodes as usize);
    for node in 0..n_nodes {
        let rows = part.rows.range(node);
        let mut p = NodeProfile {
            node,
            rows: rows.clone(),
            owned_cols: part.cols.len(node),
            nnz: 0,
            local_nnz: 0,
            remote_nnz: 0,
            distinct_remote: 0,
            distinct_per_owner: vec![0; n_nodes as usize],
            group_distinct: Vec::new(),
            group_distinct_per_owner: vec![0; n_nodes as usize],
        };
        let node_stamp = node + 1;
        let group_ranges = Ranges::equal(rows.end - rows.start, groups)
            .unwrap_or_else(|_| Ranges::from_bounds(vec![0, rows.end - rows.start]));
        if groups > 1 {
            p.group_distinct = vec![0; groups as usize];
        }
        for g in 0..groups {
            let gr = group_ranges.range(g);
            let (gs, ge) = (rows.start + gr.start, rows.start + gr.end);
            let group_stamp = u64::from(node) * u64::from(groups) + u64::from(g) + 1;
            for &c in &m.col_idx()[m.entry_range(gs, ge)] {
                p.nnz += 1;
                let owner = part.cols.owner(c);
                if owner == node {
                    p.local_nnz += 1;
                    continue;
                }
                p.remote_nnz += 1;
                let ci = c as usize;
                if seen_node[ci] != node_stamp {
                    seen_node[ci] = node_stamp;
                    p.distinct_remote += 1;
                    p.distinct_per_owner[owner as usize] += 1;
                }
                if groups > 1 && seen_group[ci] != group_stamp {
                    seen_group[ci] = group_stamp;
                    p.group_distinct[g as usize] += 1;
                    p.group_distinct_per_owner[owner as usize] += 1;
                }
            }
        }
        if groups == 1 {
            p.group_distinct_per_owner = p.distinct_per_owner.clone();
        }
        out.push(p);
        if !progress(node + 1) {
            break;
        }
    }
    Analysis { groups, nodes: out }
}

/// The distinct remote idxs each node needs from each owner, for one
/// matrix and partition: the part of an [`Analysis`] that `owner-load`
/// routing places its (rack, owner) pairs by. Counted once per partition
/// and shared by the runs on it (the modes of a run, a sweep's points).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerNeeds {
    nodes: u32,
    /// The matrix's nonzeros the count went over.
    nnz: u64,
    row_bounds: Vec<u32>,
    col_bounds: Vec<u32>,
    /// `distinct[node * nodes + owner]`.
    distinct: Vec<u64>,
}

impl OwnerNeeds {
    /// Count them (one pass over the matrix).
    pub fn count(m: &CsrMatrix, part: &Partition) -> OwnerNeeds {
        Self::of(&analyze(m, part, 1, &mut |_| true), part)
    }

    /// Take them from an analysis of `part` (any number of groups). Nodes
    /// the analysis did not reach (stopped early) count nothing.
    pub fn of(a: &Analysis, part: &Partition) -> OwnerNeeds {
        let nodes = part.nodes();
        let n = nodes as usize;
        let mut distinct = vec![0u64; n * n];
        let nnz = a.nodes.iter().map(|p| p.nnz).sum();
        for p in &a.nodes {
            let row = p.node as usize * n;
            for (owner, &d) in p.distinct_per_owner.iter().enumerate().take(n) {
                if let Some(slot) = distinct.get_mut(row + owner) {
                    *slot = d;
                }
            }
        }
        OwnerNeeds {
            nodes,
            nnz,
            row_bounds: part.rows.bounds().to_vec(),
            col_bounds: part.cols.bounds().to_vec(),
            distinct,
        }
    }

    /// `given` if it was counted for `m` and `part` ([`OwnerNeeds::fits`]),
    /// else a fresh count.
    pub fn reuse_or_count(
        given: Option<&Arc<OwnerNeeds>>,
        m: &CsrMatrix,
        part: &Partition,
    ) -> Arc<OwnerNeeds> {
        match given {
            Some(n) if n.fits(m, part) => n.clone(),
            _ => Arc::new(OwnerNeeds::count(m, part)),
        }
    }

    /// Whether these were counted for a partition with `part`'s bounds of
    /// a matrix with `m`'s nonzeros (a cheap check: the caller hands in
    /// needs counted on the same matrix).
    pub fn fits(&self, m: &CsrMatrix, part: &Partition) -> bool {
        self.nodes == part.nodes()
            && self.nnz == m.nnz()
            && self.row_bounds == part.rows.bounds()
            && self.col_bounds == part.cols.bounds()
    }

    /// The nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// The distinct idxs `node` needs from `owner` (0 out of range).
    pub fn get(&self, node: u32, owner: u32) -> u64 {
        if node >= self.nodes || owner >= self.nodes {
            return 0;
        }
        self.distinct
            .get(node as usize * self.nodes as usize + owner as usize)
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::matrix::CooBuilder;

    #[test]
    fn equal_ranges_and_owner() {
        let r = Ranges::equal(10, 4).unwrap();
        assert_eq!(r.bounds(), &[0, 3, 6, 8, 10]);
        let owners: Vec<u32> = (0..10).map(|i| r.owner(i)).collect();
        assert_eq!(owners, vec![0, 0, 0, 1, 1, 1, 2, 2, 3, 3]);
        // More nodes than indices: the first nodes get one each.
        let r = Ranges::equal(3, 5).unwrap();
        assert_eq!(r.bounds(), &[0, 1, 2, 3, 3, 3]);
        assert_eq!(
            (0..3).map(|i| r.owner(i)).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        let f = Ranges::from_bounds(vec![0, 0, 5, 10]);
        assert_eq!(f.owner(0), 1);
        assert_eq!(f.owner(4), 1);
        assert_eq!(f.owner(5), 2);
        assert!(Ranges::equal(5, 0).is_err());
        // Exhaustive agreement of the two owner paths.
        for total in 0..40u32 {
            for nodes in 1..12u32 {
                let e = Ranges::equal(total, nodes).unwrap();
                let f = Ranges::from_bounds(e.bounds().to_vec());
                for i in 0..total {
                    assert_eq!(e.owner(i), f.owner(i), "total {total} nodes {nodes} i {i}");
                    assert!(e.range(e.owner(i)).contains(&i));
                }
            }
        }
    }

    fn square(n: u64) -> CsrMatrix {
        let mut b = CooBuilder::new(n, n, false).unwrap();
        for i in 0..n {
            b.push(i, (i * 7 + 3) % n, 1.0).unwrap();
            b.push(i, i, 1.0).unwrap();
        }
        b.build().0
    }

    #[test]
    fn partition_file_errors_name_the_line() {
        let m = square(10);
        let p = Partition::from_text("# hdr\n0 4\n\n4 10\n", "p.txt", &m, Some(2)).unwrap();
        assert_eq!(p.rows.bounds(), &[0, 4, 10]);
        for (text, needle) in [
            ("0 4\n5 10\n", "p.txt:2: range starts at 5, expected 4"),
            ("0 4\n4 x\n", "p.txt:2: expected `start end`"),
            ("0 4\n4 3\n", "p.txt:2: range 4..3 ends before"),
            ("0 4\n4 11\n", "p.txt:2: range end 11 is beyond"),
            ("0 4\n", "cover rows 0..4, but the matrix has 10"),
            ("0 4 5\n", "p.txt:1: expected"),
            ("", "nodes = 0"),
        ] {
            let e = Partition::from_text(text, "p.txt", &m, None).unwrap_err();
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
        }
        let e = Partition::from_text("0 10\n", "p.txt", &m, Some(2)).unwrap_err();
        assert!(e.to_string().contains("1 ranges, but nodes = 2"), "{e}");
    }
}
