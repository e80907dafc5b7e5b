//! The operands of the simulated 2D SpMM C = A·B and their byte layouts
//! in the processes' registered memory.
//!
//! * A is the sparse matrix's pattern with small integer values
//!   ([`a_value`]); B is dense, `cols(A)` × K, with seeded integer values
//!   ([`Operands::b_value`]). Arithmetic is `u32` with wrapping, so C is
//!   exact and compared word for word with [`Operands::direct`].
//! * Tile (t, u) of a matrix on the g×g grid covers row block t and column
//!   block u ([`crate::sim::tiling::bounds`]); B's column blocks cut K.
//! * A tile in memory: `u32` nonzero count, then per nonzero (row-major)
//!   local row, local column and value, all `u32` little-endian: 4 + 12·z
//!   bytes. A dense tile (B or C): row-major `u32` words.

use crate::sim::matrix::CsrMatrix;
use crate::sim::tiling::bounds;

/// The value of A at (r, c): 1..=7, a fixed hash of the position.
pub fn a_value(r: u32, c: u32) -> u32 {
    let h = u64::from(r)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(u64::from(c).wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    1 + ((h >> 32) % 7) as u32
}

/// The operands on a g×g grid.
#[derive(Debug)]
pub struct Operands<'m> {
    /// A.
    pub a: &'m CsrMatrix,
    /// Columns of B (and C).
    pub k: u32,
    /// Grid side g.
    pub grid: u32,
    /// Seed of B's values.
    pub seed: u64,
    /// A's (and C's) row block boundaries.
    pub rows: Vec<u32>,
    /// A's column block boundaries (= B's row blocks).
    pub inner: Vec<u32>,
    /// K's block boundaries (B's and C's column blocks).
    pub kb: Vec<u32>,
}

impl<'m> Operands<'m> {
    /// The operands of `a` with K = `k` on a `grid`×`grid` grid.
    pub fn new(a: &'m CsrMatrix, k: u32, grid: u32, seed: u64) -> Operands<'m> {
        Operands {
            a,
            k,
            grid,
            seed,
            rows: bounds(a.rows(), grid),
            inner: bounds(a.cols(), grid),
            kb: bounds(k, grid),
        }
    }

    /// B at (r, c): 0..=12, seeded.
    pub fn b_value(&self, r: u32, c: u32) -> u32 {
        let h = (u64::from(r) * u64::from(self.k) + u64::from(c))
            .wrapping_add(self.seed.wrapping_mul(0x2545_F491_4F6C_DD1D))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 40) % 13) as u32
    }

    /// Rows of row block `t`.
    pub fn tile_rows(&self, t: u32) -> u32 {
        self.rows[t as usize + 1] - self.rows[t as usize]
    }

    /// Rows of B's row block `t` (A's column block `t`).
    pub fn inner_rows(&self, t: u32) -> u32 {
        self.inner[t as usize + 1] - self.inner[t as usize]
    }

    /// Columns of K's block `u`.
    pub fn tile_k(&self, u: u32) -> u32 {
        self.kb[u as usize + 1] - self.kb[u as usize]
    }

    /// Nonzeros of A's tile (t, u).
    pub fn a_nnz(&self, t: u32, u: u32) -> u64 {
        let (c0, c1) = (self.inner[u as usize], self.inner[u as usize + 1]);
        (self.rows[t as usize]..self.rows[t as usize + 1])
            .map(|r| self.a.row(r).iter().filter(|&&c| c >= c0 && c < c1).count() as u64)
            .sum()
    }

    /// Bytes of A's tile (t, u) in memory.
    pub fn a_bytes(&self, t: u32, u: u32) -> u64 {
        4 + 12 * self.a_nnz(t, u)
    }

    /// Bytes of B's tile (t, u).
    pub fn b_bytes(&self, t: u32, u: u32) -> u64 {
        4 * u64::from(self.inner_rows(t)) * u64::from(self.tile_k(u))
    }

    /// Bytes of C's tile (t, u).
    pub fn c_bytes(&self, t: u32, u: u32) -> u64 {
        4 * u64::from(self.tile_rows(t)) * u64::from(self.tile_k(u))
    }

    /// A's tile (t, u) in its memory layout, into `out` (cleared first).
    pub fn a_tile(&self, t: u32, u: u32, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&[0; 4]);
        let (c0, c1) = (self.inner[u as usize], self.inner[u as usize + 1]);
        let r0 = self.rows[t as usize];
        let mut z = 0u32;
        for r in r0..self.rows[t as usize + 1] {
            for &c in self.a.row(r) {
                if c >= c0 && c < c1 {
                    for w in [r - r0, c - c0, a_value(r, c)] {
                        out.extend_from_slice(&w.to_le_bytes());
                    }
                    z += 1;
                }
            }
        }
        out[..4].copy_from_slice(&z.to_le_bytes());
    }

    /// B's tile (t, u), row-major, into `out` (cleared first).
    pub fn b_tile(&self, t: u32, u: u32, out: &mut Vec<u8>) {
        out.clear();
        for r in self.inner[t as usize]..self.inner[t as usize + 1] {
            for c in self.kb[u as usize]..self.kb[u as usize + 1] {
                out.extend_from_slice(&self.b_value(r, c).to_le_bytes());
            }
        }
    }

    /// C = A·B directly (row-major `rows(A)` × K words).
    pub fn direct(&self) -> Vec<u32> {
        let k = self.k as usize;
        let mut c = vec![0u32; self.a.rows() as usize * k];
        for r in 0..self.a.rows() {
            for &col in self.a.row(r) {
                let v = a_value(r, col);
                for j in 0..self.k {
                    let e = &mut c[r as usize * k + j as usize];
                    *e = e.wrapping_add(v.wrapping_mul(self.b_value(col, j)));
                }
            }
        }
        c
    }
}

fn word(b: &[u8], i: usize) -> Option<u32> {
    b.get(4 * i..4 * i + 4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// C_tile += A_tile · B_tile on the memory layouts: `a` an A tile with
/// `rows` rows, `b` a dense tile of `inner` × `kc` words, `c` a dense
/// `rows` × `kc` tile. Returns the nonzeros multiplied, or `None` when a
/// tile does not decode (a truncated or corrupt transfer).
pub fn multiply_into(a: &[u8], b: &[u8], inner: u32, kc: u32, c: &mut [u32]) -> Option<u64> {
    let z = word(a, 0)? as usize;
    if a.len() < 4 + 12 * z || b.len() < 4 * inner as usize * kc as usize {
        return None;
    }
    let kc = kc as usize;
    for e in 0..z {
        let (r, col, v) = (
            word(a, 1 + 3 * e)? as usize,
            word(a, 2 + 3 * e)? as usize,
            word(a, 3 + 3 * e)?,
        );
        if col >= inner as usize || (r + 1) * kc > c.len() {
            return None;
        }
        for j in 0..kc {
            let x = word(b, col * kc + j)?;
            c[r * kc + j] = c[r * kc + j].wrapping_add(v.wrapping_mul(x));
        }
    }
    Some(z as u64)
}

/// `c += p` where `p` is a dense tile's bytes (at least `c.len()` words).
pub fn accumulate(c: &mut [u32], p: &[u8]) -> bool {
    if p.len() < 4 * c.len() {
        return false;
    }
    for (i, e) in c.iter_mut().enumerate() {
        let w = &p[4 * i..4 * i + 4];
        *e = e.wrapping_add(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::matrix::CooBuilder;

    #[test]
    fn tiled_product_equals_the_direct_one() {
        let mut bld = CooBuilder::new(7, 7, false).unwrap();
        for (r, c) in [
            (0, 0),
            (0, 6),
            (1, 3),
            (2, 2),
            (3, 5),
            (4, 1),
            (5, 5),
            (6, 0),
            (6, 6),
        ] {
            bld.push(r, c, 1.0).unwrap();
        }
        let m = bld.build().0;
        let ops = Operands::new(&m, 5, 2, 3);
        let want = ops.direct();
        let mut got = vec![0u32; 7 * 5];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..2 {
            for j in 0..2 {
                let (rows, kc) = (ops.tile_rows(i), ops.tile_k(j));
                let mut c = vec![0u32; (rows * kc) as usize];
                for k in 0..2 {
                    ops.a_tile(i, k, &mut a);
                    assert_eq!(a.len() as u64, ops.a_bytes(i, k));
                    ops.b_tile(k, j, &mut b);
                    assert_eq!(b.len() as u64, ops.b_bytes(k, j));
                    multiply_into(&a, &b, ops.inner_rows(k), kc, &mut c).unwrap();
                }
                for r in 0..rows {
                    for x in 0..kc {
                        let (gr, gc) = (ops.rows[i as usize] + r, ops.kb[j as usize] + x);
                        got[(gr * 5 + gc) as usize] = c[(r * kc + x) as usize];
                    }
                }
            }
        }
        assert_eq!(got, want);
        assert!(want.iter().any(|&v| v != 0));
        // A truncated tile does not decode.
        ops.a_tile(0, 1, &mut a);
        a.truncate(a.len() - 1);
        let mut c = vec![0u32; 20];
        assert_eq!(multiply_into(&a, &b, 4, 2, &mut c), None);
    }
}
