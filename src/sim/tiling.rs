//! The 2D tiling of Brock, Buluç and Yelick's RDMA SpMM: a matrix cut into
//! a √P×√P grid of tiles (contiguous, equal row and column blocks), its
//! load-imbalance statistics (their Figure 1) and the seeded random
//! symmetric relabelling that evens them out.
//!
//! * Per tile: max / mean of the nonzeros over the P tiles.
//! * Per stage: in stage `s` of the stationary-C loop, process (i, j)
//!   multiplies A(i, k) with k = (i + j + s) mod √P; its work is that
//!   tile's nonzeros. A stage's imbalance is max / mean over the P
//!   processes of that work; [`TileStats`] keeps every stage's value.
//!   Since k runs over every column block as j does, each stage touches
//!   every tile once: the per-stage statistic equals the per-tile one for
//!   this schedule (both are printed, as in the paper's figure).
//! * End to end (stationary C): process (i, j) does the work of the whole
//!   row block i, so max / mean of the row blocks' nonzeros.
//!
//! A relabelling permutes rows and columns by the same permutation π
//! (entry (r, c) moves to (π(r), π(c))); the tile counts are taken through
//! π without building the permuted matrix.

use thiserror::Error;

use super::matrix::{CooBuilder, CsrMatrix};
use super::rng::Xoshiro256;

/// Why a tiling cannot be made.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TilingError {
    /// P is not a perfect square (or is zero).
    #[error("--tiles {0}: not a perfect square (use 4, 9, 16, ..., 256)")]
    NotSquare(u64),
    /// More tile rows than matrix rows or columns.
    #[error("--tiles {tiles}: a {grid}x{grid} grid needs at least {grid} rows and columns, the matrix is {rows} x {cols}")]
    TooFine {
        /// P.
        tiles: u64,
        /// √P.
        grid: u32,
        /// Matrix rows.
        rows: u32,
        /// Matrix columns.
        cols: u32,
    },
    /// A symmetric relabelling of a rectangular matrix.
    #[error("a symmetric relabelling needs a square matrix, this one is {rows} x {cols}")]
    NotSquareMatrix {
        /// Matrix rows.
        rows: u32,
        /// Matrix columns.
        cols: u32,
    },
}

/// √P of a perfect square P ≥ 1.
pub fn grid_side(p: u64) -> Result<u32, TilingError> {
    let g = (p as f64).sqrt().round() as u64;
    if p == 0 || g * g != p || g > u64::from(u32::MAX) {
        return Err(TilingError::NotSquare(p));
    }
    Ok(g as u32)
}

/// The block boundaries of `n` indices cut into `g` contiguous blocks:
/// block `t` is `bounds[t]..bounds[t + 1]`, `bounds[t] = t·n / g`.
pub fn bounds(n: u32, g: u32) -> Vec<u32> {
    (0..=g)
        .map(|t| (u64::from(t) * u64::from(n) / u64::from(g)) as u32)
        .collect()
}

/// For every index `0..n`, its block of [`bounds`].
fn block_of(n: u32, g: u32) -> Vec<u32> {
    let b = bounds(n, g);
    let mut out = Vec::with_capacity(n as usize);
    for t in 0..g as usize {
        out.extend(std::iter::repeat_n(t as u32, (b[t + 1] - b[t]) as usize));
    }
    out
}

/// A seeded uniform random permutation of `0..n` (Fisher–Yates).
pub fn random_permutation(n: u32, seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    let mut rng = Xoshiro256::seed_from_u64(seed);
    for i in (1..n as usize).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// `m` with rows and columns permuted by the seeded random permutation of
/// [`random_permutation`]: entry (r, c) moves to (π(r), π(c)) (pattern
/// only, as the simulator's matrices).
pub fn relabel(m: &CsrMatrix, seed: u64) -> Result<CsrMatrix, TilingError> {
    if m.rows() != m.cols() {
        return Err(TilingError::NotSquareMatrix {
            rows: m.rows(),
            cols: m.cols(),
        });
    }
    let perm = random_permutation(m.rows(), seed);
    let n = u64::from(m.rows());
    let mut b = CooBuilder::new(n, n, false).expect("the same size as a valid matrix");
    b.reserve(m.nnz() as usize);
    for r in 0..m.rows() {
        let pr = u64::from(perm[r as usize]);
        for &c in m.row(r) {
            b.push(pr, u64::from(perm[c as usize]), 1.0)
                .expect("a permuted index is in range");
        }
    }
    Ok(b.build().0)
}

/// Nonzeros per tile of the `g`×`g` tiling, row-major (tile (i, j) at
/// `i·g + j`), with entry (r, c) counted at (π(r), π(c)) when `perm` is
/// given (it must be a permutation of `0..rows` and the matrix square).
pub fn tile_counts(m: &CsrMatrix, g: u32, perm: Option<&[u32]>) -> Vec<u64> {
    let rb = block_of(m.rows(), g);
    let cb = block_of(m.cols(), g);
    let mut counts = vec![0u64; (g as usize) * (g as usize)];
    for r in 0..m.rows() {
        let pr = perm.map_or(r, |p| p[r as usize]);
        let base = rb[pr as usize] as usize * g as usize;
        for &c in m.row(r) {
            let pc = perm.map_or(c, |p| p[c as usize]);
            counts[base + cb[pc as usize] as usize] += 1;
        }
    }
    counts
}

/// max / mean of `v` (1 when every value is 0).
pub fn imbalance(v: &[u64]) -> f64 {
    let max = v.iter().copied().max().unwrap_or(0);
    let sum: u64 = v.iter().sum();
    if sum == 0 {
        return 1.0;
    }
    max as f64 * v.len() as f64 / sum as f64
}

/// The load-imbalance statistics of one tiling.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TileStats {
    /// √P.
    pub grid: u32,
    /// Nonzeros per tile, row-major.
    pub tile_nnz: Vec<u64>,
    /// max / mean over tiles.
    pub tile_imbalance: f64,
    /// Per stage s of the stationary-C loop: max / mean over processes.
    pub stage_imbalance: Vec<f64>,
    /// End to end under stationary C: max / mean of the row blocks.
    pub end_to_end_imbalance: f64,
}

impl TileStats {
    /// The statistics of tile counts `tile_nnz` (row-major, `grid`²).
    pub fn from_counts(grid: u32, tile_nnz: Vec<u64>) -> TileStats {
        let g = grid as usize;
        let stage_imbalance = (0..g)
            .map(|s| {
                let work: Vec<u64> = (0..g * g)
                    .map(|p| {
                        let (i, j) = (p / g, p % g);
                        tile_nnz[i * g + (i + j + s) % g]
                    })
                    .collect();
                imbalance(&work)
            })
            .collect();
        let rows: Vec<u64> = (0..g)
            .map(|i| tile_nnz[i * g..(i + 1) * g].iter().sum())
            .collect();
        TileStats {
            grid,
            tile_imbalance: imbalance(&tile_nnz),
            stage_imbalance,
            end_to_end_imbalance: imbalance(&rows),
            tile_nnz,
        }
    }

    /// Mean over stages of the per-stage imbalance.
    pub fn mean_stage_imbalance(&self) -> f64 {
        if self.stage_imbalance.is_empty() {
            return 1.0;
        }
        self.stage_imbalance.iter().sum::<f64>() / self.stage_imbalance.len() as f64
    }

    /// The worst stage's imbalance.
    pub fn max_stage_imbalance(&self) -> f64 {
        self.stage_imbalance.iter().copied().fold(1.0, f64::max)
    }
}

/// The statistics of the √P×√P tiling of `m`, relabelled by the seeded
/// random symmetric permutation when `relabel` is `Some(seed)`.
pub fn tile_stats(m: &CsrMatrix, p: u64, relabel: Option<u64>) -> Result<TileStats, TilingError> {
    let g = grid_side(p)?;
    if g > m.rows() || g > m.cols() {
        return Err(TilingError::TooFine {
            tiles: p,
            grid: g,
            rows: m.rows(),
            cols: m.cols(),
        });
    }
    let perm = match relabel {
        Some(seed) => {
            if m.rows() != m.cols() {
                return Err(TilingError::NotSquareMatrix {
                    rows: m.rows(),
                    cols: m.cols(),
                });
            }
            Some(random_permutation(m.rows(), seed))
        }
        None => None,
    };
    Ok(TileStats::from_counts(
        g,
        tile_counts(m, g, perm.as_deref()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> CsrMatrix {
        // 6 x 6, on a 2 x 2 grid of 3 x 3 tiles.
        let entries = [
            (0, 0),
            (0, 1),
            (1, 1),
            (2, 2),
            (0, 4),
            (1, 5),
            (2, 3),
            (2, 5),
            (3, 0),
            (5, 5),
        ];
        let mut b = CooBuilder::new(6, 6, false).unwrap();
        for (r, c) in entries {
            b.push(r, c, 1.0).unwrap();
        }
        b.build().0
    }

    #[test]
    fn perfect_squares_only() {
        assert_eq!(grid_side(16), Ok(4));
        assert_eq!(grid_side(1), Ok(1));
        for bad in [0, 2, 8, 15, 17] {
            let e = grid_side(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("--tiles {bad}")), "{e}");
        }
    }

    #[test]
    fn statistics_match_a_hand_count() {
        let m = small();
        let s = tile_stats(&m, 4, None).unwrap();
        // Tiles: (0,0) = 4 entries, (0,1) = 4, (1,0) = 1, (1,1) = 1.
        assert_eq!(s.tile_nnz, vec![4, 4, 1, 1]);
        assert!((s.tile_imbalance - 4.0 / 2.5).abs() < 1e-12);
        // Stage 0: k = i + j: (0,0)->A00=4, (0,1)->A01=4, (1,0)->A11=1,
        // (1,1)->A10=1: max 4, mean 2.5. Stage 1 the same multiset.
        assert_eq!(s.stage_imbalance.len(), 2);
        assert!((s.stage_imbalance[0] - 1.6).abs() < 1e-12);
        assert!((s.stage_imbalance[1] - 1.6).abs() < 1e-12);
        // Row blocks: 8 and 2: max 8, mean 5.
        assert!((s.end_to_end_imbalance - 1.6).abs() < 1e-12);
    }

    #[test]
    fn relabelling_matches_an_explicitly_permuted_matrix() {
        let m = small();
        let perm = random_permutation(6, 7);
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..6).collect::<Vec<_>>());
        // Independent count: build the permuted matrix, tile without perm.
        let mut b = CooBuilder::new(6, 6, false).unwrap();
        for (r, c, _) in m.iter() {
            b.push(
                u64::from(perm[r as usize]),
                u64::from(perm[c as usize]),
                1.0,
            )
            .unwrap();
        }
        let pm = b.build().0;
        let direct = tile_stats(&pm, 4, None).unwrap();
        let through = tile_stats(&m, 4, Some(7)).unwrap();
        assert_eq!(direct, through);
        let rm = relabel(&m, 7).unwrap();
        assert_eq!(rm.row_ptr(), pm.row_ptr());
        assert_eq!(rm.col_idx(), pm.col_idx());
        assert_eq!(through.tile_nnz.iter().sum::<u64>(), m.nnz());
    }

    #[test]
    fn uneven_blocks_and_bad_grids() {
        assert_eq!(bounds(7, 3), vec![0, 2, 4, 7]);
        let m = small();
        let e = tile_stats(&m, 49, None).unwrap_err();
        assert!(e.to_string().contains("--tiles 49"), "{e}");
        let mut b = CooBuilder::new(4, 6, false).unwrap();
        b.push(0, 5, 1.0).unwrap();
        let rect = b.build().0;
        assert!(matches!(
            tile_stats(&rect, 4, Some(1)),
            Err(TilingError::NotSquareMatrix { rows: 4, cols: 6 })
        ));
    }
}
