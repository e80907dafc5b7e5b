//! Sparse matrices: a CSR type, a Matrix Market reader and writer, and
//! seeded generators.
//!
//! * [`CsrMatrix`]: compressed sparse rows with `u32` column indices and
//!   optional `f64` values (the simulator only needs the structure).
//! * [`CooBuilder`]: collects coordinates (any order, duplicates allowed) and
//!   turns them into a [`CsrMatrix`], merging duplicates (values summed) and
//!   counting them.
//! * [`mtx`]: the Matrix Market reader/writer.
//! * [`gen`]: R-MAT, 2D/3D grid stencils, banded and uniform generators.

pub mod gen;
pub mod mtx;
pub mod paper;

use std::sync::Arc;

use thiserror::Error;

pub use gen::GenSpec;
pub use mtx::{
    read_mtx, read_mtx_file, read_mtx_header, write_mtx, write_mtx_file, MtxError, MtxHeader,
    MtxInfo, ReadOptions,
};

/// Largest dimension a matrix may have: indices are `u32`, and `rows + 1`
/// row pointers must be addressable.
pub const MAX_DIM: u64 = u32::MAX as u64;

/// Errors building a matrix from coordinates.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MatrixError {
    /// A dimension does not fit the `u32` index type.
    #[error("{what} = {value} exceeds the largest supported dimension {MAX_DIM}")]
    DimensionTooLarge {
        /// `"rows"` or `"columns"`.
        what: &'static str,
        /// The requested dimension.
        value: u64,
    },
    /// A coordinate outside the matrix (0-based).
    #[error("entry ({row}, {col}) is outside the {rows} x {cols} matrix (0-based)")]
    OutOfRange {
        /// Row index.
        row: u64,
        /// Column index.
        col: u64,
        /// Rows of the matrix.
        rows: u32,
        /// Columns of the matrix.
        cols: u32,
    },
}

/// A sparse matrix in compressed sparse row form. Within a row, column
/// indices are strictly increasing (duplicates were merged on construction).
#[derive(Clone, Debug, PartialEq)]
pub struct CsrMatrix {
    rows: u32,
    cols: u32,
    row_ptr: Vec<u64>,
    /// Shared, so the simulated hosts can stream their idxs from it
    /// without a copy ([`CsrMatrix::shared_col_idx`]).
    col_idx: Arc<Vec<u32>>,
    values: Option<Vec<f64>>,
}

impl CsrMatrix {
    /// Number of rows.
    pub fn rows(&self) -> u32 {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> u32 {
        self.cols
    }
    /// Number of stored nonzeros.
    pub fn nnz(&self) -> u64 {
        self.col_idx.len() as u64
    }
    /// Row pointers: row `r`'s entries are `col_idx[row_ptr[r]..row_ptr[r + 1]]`.
    pub fn row_ptr(&self) -> &[u64] {
        &self.row_ptr
    }
    /// All column indices, row by row.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// The column indices, shared (cheap to clone; never mutated).
    pub fn shared_col_idx(&self) -> Arc<Vec<u32>> {
        Arc::clone(&self.col_idx)
    }
    /// All values, row by row (`None` for a pattern matrix).
    pub fn values(&self) -> Option<&[f64]> {
        self.values.as_deref()
    }
    /// The range of `col_idx` positions holding rows `start..end`
    /// (clamped to the matrix).
    pub fn entry_range(&self, start: u32, end: u32) -> std::ops::Range<usize> {
        let s = start.min(self.rows) as usize;
        let e = end.min(self.rows).max(start.min(self.rows)) as usize;
        self.row_ptr[s] as usize..self.row_ptr[e] as usize
    }
    /// Column indices of row `r` (empty if `r` is out of range).
    pub fn row(&self, r: u32) -> &[u32] {
        &self.col_idx[self.entry_range(r, r.saturating_add(1))]
    }
    /// Values of row `r` (`None` for a pattern matrix).
    pub fn row_values(&self, r: u32) -> Option<&[f64]> {
        let range = self.entry_range(r, r.saturating_add(1));
        self.values.as_ref().map(|v| &v[range])
    }
    /// Every entry as `(row, col, value)` in row-major order (value 1.0 for
    /// pattern matrices).
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32, f64)> + '_ {
        (0..self.rows).flat_map(move |r| {
            let range = self.entry_range(r, r + 1);
            range.map(move |k| {
                let v = self.values.as_ref().map_or(1.0, |v| v[k]);
                (r, self.col_idx[k], v)
            })
        })
    }
    /// Drop the values, keeping the structure.
    pub fn into_pattern(mut self) -> CsrMatrix {
        self.values = None;
        self
    }
}

/// What turning coordinates into CSR did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BuildInfo {
    /// Coordinates pushed (after symmetric mirroring).
    pub entries: u64,
    /// Coordinates that repeated an earlier one and were merged into it.
    pub duplicates: u64,
}

/// Collects coordinates in any order and builds a [`CsrMatrix`].
///
/// Memory: while the coordinates arrive in non-decreasing row order (every
/// generator but R-MAT, and most Matrix Market files) only the column of
/// each entry is stored (4 B per entry, plus 8 B per row for the row
/// starts), and [`CooBuilder::build`] sorts each row in place: the column
/// array becomes the CSR's. The first entry of an earlier row switches to
/// storing the row of every entry too (8 B per entry); a pattern matrix is
/// then bucketed by row in place (no third array), and one with values
/// through a stable counting sort (12 B + 16 B per entry at the peak).
#[derive(Clone, Debug)]
pub struct CooBuilder {
    rows: u32,
    cols: u32,
    /// While rows arrive in order: `starts[r]` is the first entry of row
    /// `r`, for the rows up to the last one pushed. `None` once a push went
    /// back to an earlier row (then `row` holds every entry's row).
    starts: Option<Vec<u64>>,
    row: Vec<u32>,
    col: Vec<u32>,
    val: Option<Vec<f64>>,
}

impl CooBuilder {
    /// An empty `rows` × `cols` matrix; `values` selects whether values are
    /// stored. Dimensions beyond [`MAX_DIM`] are errors.
    pub fn new(rows: u64, cols: u64, values: bool) -> Result<CooBuilder, MatrixError> {
        let rows = u32::try_from(rows).map_err(|_| MatrixError::DimensionTooLarge {
            what: "rows",
            value: rows,
        })?;
        let cols = u32::try_from(cols).map_err(|_| MatrixError::DimensionTooLarge {
            what: "columns",
            value: cols,
        })?;
        Ok(CooBuilder {
            rows,
            cols,
            starts: Some(Vec::new()),
            row: Vec::new(),
            col: Vec::new(),
            val: values.then(Vec::new),
        })
    }

    /// Reserve room for `n` more coordinates.
    pub fn reserve(&mut self, n: usize) {
        self.col.reserve_exact(n);
        if self.starts.is_none() {
            self.row.reserve_exact(n);
        }
        if let Some(v) = &mut self.val {
            v.reserve_exact(n);
        }
    }

    /// Rows of the matrix being built.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Columns of the matrix being built.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// Coordinates pushed so far.
    pub fn len(&self) -> usize {
        self.col.len()
    }

    /// No coordinates yet.
    pub fn is_empty(&self) -> bool {
        self.col.is_empty()
    }

    /// Whether every coordinate so far came in non-decreasing row order
    /// (the builder stores 4 instead of 8 bytes per entry).
    pub fn rows_in_order(&self) -> bool {
        self.starts.is_some()
    }

    /// Add entry `(r, c)` (0-based) with value `v` (ignored for pattern
    /// builders).
    #[inline]
    pub fn push(&mut self, r: u64, c: u64, v: f64) -> Result<(), MatrixError> {
        if r >= u64::from(self.rows) || c >= u64::from(self.cols) {
            return Err(MatrixError::OutOfRange {
                row: r,
                col: c,
                rows: self.rows,
                cols: self.cols,
            });
        }
        let r = r as u32;
        match &mut self.starts {
            Some(starts) if r as usize + 1 >= starts.len() => {
                if starts.capacity() == 0 {
                    starts.reserve_exact(self.rows as usize + 1);
                }
                while starts.len() <= r as usize {
                    starts.push(self.col.len() as u64);
                }
            }
            Some(_) => {
                self.unorder();
                self.row.push(r);
            }
            None => self.row.push(r),
        }
        self.col.push(c as u32);
        if let Some(vals) = &mut self.val {
            vals.push(v);
        }
        Ok(())
    }

    /// Switch to storing every entry's row (a push went back to an
    /// earlier row).
    #[cold]
    fn unorder(&mut self) {
        let Some(starts) = self.starts.take() else {
            return;
        };
        let mut row = Vec::new();
        row.reserve_exact(self.col.capacity().max(self.col.len() + 1));
        let n = self.col.len() as u64;
        for (r, &s) in starts.iter().enumerate() {
            let e = starts.get(r + 1).copied().unwrap_or(n);
            row.extend(std::iter::repeat_n(r as u32, (e - s) as usize));
        }
        self.row = row;
    }

    /// Build the CSR matrix: entries grouped by row (already, when they
    /// came in row order), then each row's columns sorted; repeated
    /// coordinates are merged (values summed, in push order) and counted in
    /// [`BuildInfo::duplicates`].
    pub fn build(self) -> (CsrMatrix, BuildInfo) {
        let CooBuilder {
            rows,
            cols,
            starts,
            row,
            mut col,
            val,
        } = self;
        let n = col.len();
        let (mut row_ptr, mut col_idx, mut values) = match (starts, val) {
            (Some(mut starts), val) => {
                starts.resize(rows as usize + 1, n as u64);
                (starts, col, val)
            }
            (None, None) => {
                let row_ptr = row_starts(&row, rows);
                bucket_in_place(&row_ptr, row, &mut col);
                (row_ptr, col, None)
            }
            (None, Some(val)) => {
                let row_ptr = row_starts(&row, rows);
                let mut next: Vec<u64> = row_ptr[..rows as usize].to_vec();
                let mut col_idx = vec![0u32; n];
                let mut values = vec![0f64; n];
                for k in 0..n {
                    let r = row[k] as usize;
                    let at = next[r] as usize;
                    next[r] += 1;
                    col_idx[at] = col[k];
                    values[at] = val[k];
                }
                drop((row, col, val, next));
                (row_ptr, col_idx, Some(values))
            }
        };
        // Sort each row and merge duplicates, compacting in place.
        let mut write = 0usize;
        let mut scratch: Vec<(u32, f64)> = Vec::new();
        let mut duplicates = 0u64;
        for r in 0..rows as usize {
            let (s, e) = (row_ptr[r] as usize, row_ptr[r + 1] as usize);
            row_ptr[r] = write as u64;
            match &mut values {
                None => {
                    let seg = &mut col_idx[s..e];
                    if !seg.windows(2).all(|w| w[0] < w[1]) {
                        seg.sort_unstable();
                    }
                    let mut last: Option<u32> = None;
                    for k in s..e {
                        let c = col_idx[k];
                        if last == Some(c) {
                            duplicates += 1;
                            continue;
                        }
                        col_idx[write] = c;
                        write += 1;
                        last = Some(c);
                    }
                }
                Some(vals) => {
                    scratch.clear();
                    scratch.extend((s..e).map(|k| (col_idx[k], vals[k])));
                    scratch.sort_by_key(|&(c, _)| c);
                    let mut last: Option<u32> = None;
                    for &(c, v) in &scratch {
                        if last == Some(c) {
                            duplicates += 1;
                            vals[write - 1] += v;
                            continue;
                        }
                        col_idx[write] = c;
                        vals[write] = v;
                        write += 1;
                        last = Some(c);
                    }
                }
            }
        }
        row_ptr[rows as usize] = write as u64;
        col_idx.truncate(write);
        col_idx.shrink_to_fit();
        if let Some(v) = &mut values {
            v.truncate(write);
            v.shrink_to_fit();
        }
        (
            CsrMatrix {
                rows,
                cols,
                row_ptr,
                col_idx: Arc::new(col_idx),
                values,
            },
            BuildInfo {
                entries: n as u64,
                duplicates,
            },
        )
    }
}

/// Row pointers from every entry's row (a counting pass).
fn row_starts(row: &[u32], rows: u32) -> Vec<u64> {
    let mut row_ptr = vec![0u64; rows as usize + 1];
    for &r in row {
        row_ptr[r as usize + 1] += 1;
    }
    for i in 0..rows as usize {
        row_ptr[i + 1] += row_ptr[i];
    }
    row_ptr
}

/// Rows per block of [`bucket_in_place`]'s first pass (a power of two):
/// a block's entries and row heads then fit in the CPU's L2 cache for the
/// second pass.
const BLOCK_ROWS_LOG2: u32 = 11;

/// Most blocks of the first pass: their write heads stay in the cache.
const MAX_BLOCKS_LOG2: u32 = 12;

/// Permute `col` in place so that row `r`'s entries occupy
/// `row_ptr[r]..row_ptr[r + 1]` (`row` gives each entry's row). Two
/// unstable in-place bucket passes by cycles, one swap per misplaced
/// entry each: first by block of `2^shift` consecutive rows (at most
/// 4,096 blocks, whose write heads move through memory in order and so
/// stay in the cache), then each block by row, within the block's own
/// entries. One pass by row alone sends every swap to a random place in
/// the whole array (a cache miss or three apiece: 3 s for R-MAT's 10.5 M
/// entries at scale 21). The order within a row is not kept: the caller
/// sorts each row.
fn bucket_in_place(row_ptr: &[u64], mut row: Vec<u32>, col: &mut [u32]) {
    let rows = row_ptr.len() - 1;
    let rows_log2 = usize::BITS - rows.max(1).leading_zeros();
    let shift = BLOCK_ROWS_LOG2.max(rows_log2.saturating_sub(MAX_BLOCKS_LOG2));
    let mut heads = Vec::new();
    if rows >> shift == 0 {
        cycle_buckets(row_ptr, &mut heads, |r| r as usize, &mut row, col);
        return;
    }
    let blocks = rows.div_ceil(1 << shift);
    let block_bounds: Vec<u64> = (0..=blocks)
        .map(|b| row_ptr[(b << shift).min(rows)])
        .collect();
    cycle_buckets(
        &block_bounds,
        &mut heads,
        |r| (r >> shift) as usize,
        &mut row,
        col,
    );
    for b in 0..blocks {
        let first = b << shift;
        let last = ((b + 1) << shift).min(rows);
        let (s, e) = (row_ptr[first] as usize, row_ptr[last] as usize);
        cycle_buckets(
            &row_ptr[first..=last],
            &mut heads,
            |r| r as usize - first,
            &mut row[s..e],
            &mut col[s..e],
        );
    }
}

/// One in-place bucket pass by cycles over `row` and `col` (an entry's
/// bucket is `key` of its row): bucket `k` is to occupy
/// `bounds[k]..bounds[k + 1]`, offsets into the whole matrix of which
/// `row` and `col` start at `bounds[0]`. Each misplaced entry is swapped
/// to the next free place of its bucket; `heads` is scratch for those
/// places.
fn cycle_buckets(
    bounds: &[u64],
    heads: &mut Vec<usize>,
    key: impl Fn(u32) -> usize,
    row: &mut [u32],
    col: &mut [u32],
) {
    let (Some(&base), Some((_, starts))) = (bounds.first(), bounds.split_last()) else {
        return;
    };
    heads.clear();
    heads.extend(starts.iter().map(|&p| (p - base) as usize));
    for k in 0..starts.len() {
        let end = (bounds[k + 1] - base) as usize;
        let mut i = heads[k];
        while i < end {
            let kk = key(row[i]);
            if kk == k {
                i += 1;
                continue;
            }
            let j = heads[kk];
            heads[kk] += 1;
            row.swap(i, j);
            col.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_sorts_and_merges() {
        let mut b = CooBuilder::new(3, 4, true).unwrap();
        for &(r, c, v) in &[
            (2, 3, 1.0),
            (0, 1, 2.0),
            (2, 0, 3.0),
            (0, 1, 4.0),
            (1, 2, 5.0),
        ] {
            b.push(r, c, v).unwrap();
        }
        let (m, info) = b.build();
        assert_eq!(
            info,
            BuildInfo {
                entries: 5,
                duplicates: 1
            }
        );
        assert_eq!(m.row_ptr(), &[0, 1, 2, 4]);
        assert_eq!(m.col_idx(), &[1, 2, 0, 3]);
        assert_eq!(m.values().unwrap(), &[6.0, 5.0, 3.0, 1.0]);
        assert_eq!(m.row(2), &[0, 3]);
        assert_eq!(m.row(7), &[] as &[u32]);
        let all: Vec<_> = m.iter().collect();
        assert_eq!(all[0], (0, 1, 6.0));
        assert_eq!(all.len(), 4);
    }

    #[test]
    fn pattern_and_errors() {
        let mut b = CooBuilder::new(2, 2, false).unwrap();
        b.push(1, 1, 0.0).unwrap();
        b.push(1, 1, 0.0).unwrap();
        b.push(1, 0, 0.0).unwrap();
        assert!(matches!(
            b.push(2, 0, 0.0),
            Err(MatrixError::OutOfRange { row: 2, .. })
        ));
        let (m, info) = b.build();
        assert_eq!(info.duplicates, 1);
        assert_eq!(m.col_idx(), &[0, 1]);
        assert!(m.values().is_none());
        assert!(matches!(
            CooBuilder::new(1 << 33, 1, false),
            Err(MatrixError::DimensionTooLarge { what: "rows", .. })
        ));
    }

    /// Shuffled coordinates over many row blocks (the bucket's first pass
    /// by blocks of 2,048 rows, the second by row) build what an
    /// independent sort-and-dedup gives: row counts on both sides of a
    /// block's size, rows with no entries, whole empty blocks, and one row
    /// holding most entries (as R-MAT's first rows do).
    #[test]
    fn unordered_builds_over_many_row_blocks_agree_with_a_sort() {
        let mut rng = crate::sim::rng::Xoshiro256::seed_from_u64(5);
        for (rows, entries) in [
            (2047u64, 9000usize),
            (2048, 9000),
            (2049, 9000),
            (10_000, 40_000),
            (1 << 20, 3000),
            (70_001, 50_000),
        ] {
            let cols = 5000u64;
            let coords: Vec<(u64, u64)> = (0..entries)
                .map(|k| {
                    let r = if k % 3 == 0 { 1 } else { rng.below(rows) };
                    (r, rng.below(cols))
                })
                .collect();
            let mut b = CooBuilder::new(rows, cols, false).unwrap();
            for &(r, c) in &coords {
                b.push(r, c, 1.0).unwrap();
            }
            assert!(!b.rows_in_order());
            let (m, info) = b.build();
            let mut want = coords.clone();
            want.sort_unstable();
            want.dedup();
            let got: Vec<(u64, u64)> = m
                .iter()
                .map(|(r, c, _)| (u64::from(r), u64::from(c)))
                .collect();
            assert_eq!(got, want, "{rows} rows");
            assert_eq!(info.duplicates, (entries - want.len()) as u64);
            assert_eq!(m.row_ptr().len(), rows as usize + 1);
        }
    }

    /// Coordinates in row order (stored as columns only) and the same
    /// coordinates shuffled (bucketed in place) build the same matrix as
    /// an independent sort-and-dedup, with the same duplicate count; with
    /// values, the order within a row decides nothing but the sums' order.
    #[test]
    fn ordered_and_unordered_builds_agree() {
        let mut rng = crate::sim::rng::Xoshiro256::seed_from_u64(11);
        let (rows, cols) = (300u64, 200u64);
        let mut coords: Vec<(u64, u64)> = (0..5000)
            .map(|_| (rng.below(rows), rng.below(cols)))
            .collect();
        let mut want = coords.clone();
        want.sort_unstable();
        let total = want.len();
        want.dedup();
        let build = |cs: &[(u64, u64)]| {
            let mut b = CooBuilder::new(rows, cols, false).unwrap();
            b.reserve(cs.len());
            for &(r, c) in cs {
                b.push(r, c, 1.0).unwrap();
            }
            let ordered = b.rows_in_order();
            let (m, info) = b.build();
            (m, info, ordered)
        };
        let (shuffled, info_s, ord_s) = build(&coords);
        coords.sort_by_key(|&(r, _)| r);
        let (sorted, info_o, ord_o) = build(&coords);
        assert!(!ord_s && ord_o);
        assert_eq!(shuffled, sorted);
        assert_eq!(info_s, info_o);
        assert_eq!(info_s.duplicates, (total - want.len()) as u64);
        let got: Vec<(u64, u64)> = sorted
            .iter()
            .map(|(r, c, _)| (u64::from(r), u64::from(c)))
            .collect();
        assert_eq!(got, want);
        assert_eq!(sorted.row_ptr().len(), rows as usize + 1);
        // Empty trailing rows and an empty builder.
        let mut b = CooBuilder::new(5, 5, false).unwrap();
        b.push(1, 4, 0.0).unwrap();
        let (m, _) = b.build();
        assert_eq!(m.row_ptr(), &[0, 0, 1, 1, 1, 1]);
        let (m, _) = CooBuilder::new(3, 3, true).unwrap().build();
        assert_eq!((m.nnz(), m.row_ptr()), (0, &[0u64, 0, 0, 0][..]));
        // Values, in row order and not: summed duplicates agree.
        let mut a = CooBuilder::new(3, 3, true).unwrap();
        let mut z = CooBuilder::new(3, 3, true).unwrap();
        for &(r, c, v) in &[(0, 2, 1.0), (0, 2, 2.0), (1, 0, 3.0), (2, 1, 4.0)] {
            a.push(r, c, v).unwrap();
        }
        for &(r, c, v) in &[(2, 1, 4.0), (0, 2, 1.0), (1, 0, 3.0), (0, 2, 2.0)] {
            z.push(r, c, v).unwrap();
        }
        assert!(a.rows_in_order() && !z.rows_in_order());
        assert_eq!(a.build(), z.build());
    }
}
