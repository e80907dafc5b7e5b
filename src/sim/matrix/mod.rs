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

use thiserror::Error;

pub use gen::GenSpec;
pub use mtx::{read_mtx, read_mtx_file, write_mtx, write_mtx_file, MtxError, MtxInfo, ReadOptions};

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
    col_idx: Vec<u32>,
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
#[derive(Clone, Debug)]
pub struct CooBuilder {
    rows: u32,
    cols: u32,
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
            row: Vec::new(),
            col: Vec::new(),
            val: values.then(Vec::new),
        })
    }

    /// Reserve room for `n` more coordinates.
    pub fn reserve(&mut self, n: usize) {
        self.row.reserve(n);
        self.col.reserve(n);
        if let Some(v) = &mut self.val {
            v.reserve(n);
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
        self.row.len()
    }

    /// No coordinates yet.
    pub fn is_empty(&self) -> bool {
        self.row.is_empty()
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
        self.row.push(r as u32);
        self.col.push(c as u32);
        if let Some(vals) = &mut self.val {
            vals.push(v);
        }
        Ok(())
    }

    /// Build the CSR matrix: a counting sort by row, then a sort of each
    /// row's columns; repeated coordinates are merged (values summed) and
    /// counted in [`BuildInfo::duplicates`].
    pub fn build(self) -> (CsrMatrix, BuildInfo) {
        let CooBuilder {
            rows,
            cols,
            row,
            col,
            val,
        } = self;
        let n = row.len();
        let mut row_ptr = vec![0u64; rows as usize + 1];
        for &r in &row {
            row_ptr[r as usize + 1] += 1;
        }
        for i in 0..rows as usize {
            row_ptr[i + 1] += row_ptr[i];
        }
        let mut next: Vec<u64> = row_ptr[..rows as usize].to_vec();
        let mut col_idx = vec![0u32; n];
        let mut values = val.as_ref().map(|_| vec![0f64; n]);
        for k in 0..n {
            let r = row[k] as usize;
            let at = next[r] as usize;
            next[r] += 1;
            col_idx[at] = col[k];
            if let (Some(out), Some(inp)) = (&mut values, &val) {
                out[at] = inp[k];
            }
        }
        drop(next);
        drop(row);
        drop(col);
        drop(val);
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
                col_idx,
                values,
            },
            BuildInfo {
                entries: n as u64,
                duplicates,
            },
        )
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
}
