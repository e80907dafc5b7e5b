//! The workers' seeded block-sparse tensors and the bounds a run is
//! reported against.
//!
//! A tensor of `bytes` bytes is `bytes / block` blocks of little-endian
//! `u32` words. Block `j` of worker `w` is nonzero with probability
//! `density`. With `overlap` 0 the draws are independent per worker (the
//! workers' nonzero blocks differ: at n workers the union holds
//! `1 − (1 − density)^n` of the blocks); with `overlap` o, block `j` is,
//! with probability o, decided by one draw shared by every worker (nonzero
//! at all of them or at none), else per worker: each worker's density is
//! still `density`, and the union shrinks to
//! `o·density + (1 − o)(1 − (1 − density)^n)` (o = 1: the same pattern
//! everywhere). Its words are a hash of (seed, w, j, word). Nothing is stored
//! per worker: blocks are generated when sent. The expected result (the
//! direct, wrapping sum of every worker's tensor) and the union of nonzero
//! blocks are computed once, to verify every block a worker receives.

/// splitmix64.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The workers' tensors (generated on demand).
#[derive(Clone, Debug)]
pub struct Tensors {
    /// Seed.
    pub seed: u64,
    /// Workers.
    pub workers: u32,
    /// Blocks per tensor.
    pub blocks: u64,
    /// Block size in bytes.
    pub block: u32,
    /// Probability that a worker's block is nonzero.
    pub density: f64,
    /// Probability that a block's nonzero-ness is shared by every worker.
    pub overlap: f64,
}

impl Tensors {
    fn block_hash(&self, w: u32, j: u64) -> u64 {
        mix(mix(self.seed ^ (u64::from(w) << 40)) ^ j)
    }

    /// Whether worker `w`'s block `j` is nonzero.
    pub fn nonzero(&self, w: u32, j: u64) -> bool {
        if self.density >= 1.0 {
            return true;
        }
        if self.overlap > 0.0 {
            // Worker-independent draws: is block j shared, and is it nonzero.
            let s = mix(mix(self.seed ^ 0x0E71_A900) ^ j);
            let pick = (s >> 11) as f64 / (1u64 << 53) as f64;
            if pick < self.overlap {
                return ((mix(s ^ 0x5EED) >> 11) as f64 / (1u64 << 53) as f64) < self.density;
            }
        }
        let u = (mix(self.block_hash(w, j) ^ 0x5EED) >> 11) as f64 / (1u64 << 53) as f64;
        u < self.density
    }

    /// Write worker `w`'s block `j` into `out` (`block` bytes).
    pub fn block_into(&self, w: u32, j: u64, out: &mut [u8]) {
        if !self.nonzero(w, j) {
            out.fill(0);
            return;
        }
        let h = self.block_hash(w, j);
        for (k, c) in out.chunks_exact_mut(4).enumerate() {
            // Never an all-zero block: the first word is odd.
            let mut v = mix(h.wrapping_add(k as u64)) as u32;
            if k == 0 {
                v |= 1;
            }
            c.copy_from_slice(&v.to_le_bytes());
        }
    }

    /// Worker `w`'s nonzero block indices, ascending.
    pub fn nonzero_list(&self, w: u32) -> Vec<u64> {
        (0..self.blocks).filter(|&j| self.nonzero(w, j)).collect()
    }

    /// The expected sum (bytes) and, per block, how many workers have it
    /// nonzero.
    pub fn expected(&self) -> (Vec<u8>, Vec<u8>) {
        let b = self.block as usize;
        let mut sum = vec![0u8; self.blocks as usize * b];
        let mut count = vec![0u8; self.blocks as usize];
        let mut tmp = vec![0u8; b];
        for j in 0..self.blocks {
            let dst = &mut sum[j as usize * b..(j as usize + 1) * b];
            for w in 0..self.workers {
                if !self.nonzero(w, j) {
                    continue;
                }
                count[j as usize] = count[j as usize].saturating_add(1);
                self.block_into(w, j, &mut tmp);
                add_into(dst, &tmp);
            }
        }
        (sum, count)
    }
}

/// `dst += src`, element-wise wrapping `u32`.
pub fn add_into(dst: &mut [u8], src: &[u8]) {
    for (a, p) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
        let x = u32::from_le_bytes([a[0], a[1], a[2], a[3]]);
        let y = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
        a.copy_from_slice(&x.wrapping_add(y).to_le_bytes());
    }
}

/// Lower bounds on the AllReduce time, ns, from link bandwidth only
/// (payload bytes; headers, latency and the switches are not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Bounds {
    /// Dense: 2(n−1)/n · N / bandwidth (what a bandwidth-optimal dense
    /// AllReduce without in-network aggregation sends per worker).
    pub dense_ring_ns: f64,
    /// Sparse, any algorithm: each worker must send its nonzero blocks and
    /// receive every block some other worker has nonzero:
    /// max over w of max(|S_w|, |∪_{v≠w} S_v|) · b / bandwidth.
    pub sparse_worker_ns: f64,
    /// Sparse, one aggregator on one link: it receives Σ|S_w| blocks and
    /// sends n · |∪ S_w|: max of the two · b / its bandwidth.
    pub sparse_aggregator_ns: f64,
}

impl Bounds {
    /// The bounds for `t` on `gbps` links (the aggregator on `agg_gbps`).
    pub fn of(t: &Tensors, gbps: u64, agg_gbps: u64) -> Bounds {
        let n = u64::from(t.workers);
        let b = f64::from(t.block);
        let ns = |bytes: f64, g: u64| bytes * 8.0 / g as f64;
        let total = t.blocks as f64 * b;
        let mut own = vec![0u64; n as usize];
        // Blocks nonzero at some other worker, per worker.
        let mut others = vec![0u64; n as usize];
        let mut union = 0u64;
        for j in 0..t.blocks {
            let mut who = 0u32;
            let mut k = 0u64;
            for w in 0..t.workers {
                if t.nonzero(w, j) {
                    own[w as usize] += 1;
                    who = w;
                    k += 1;
                }
            }
            if k > 0 {
                union += 1;
            }
            for (w, o) in others.iter_mut().enumerate() {
                if k > 1 || (k == 1 && who as usize != w) {
                    *o += 1;
                }
            }
        }
        let worker = (0..n as usize)
            .map(|w| own[w].max(others[w]))
            .max()
            .unwrap_or(0);
        let agg = own.iter().sum::<u64>().max(n * union);
        Bounds {
            dense_ring_ns: ns(2.0 * (n as f64 - 1.0) / n as f64 * total, gbps),
            sparse_worker_ns: ns(worker as f64 * b, gbps),
            sparse_aggregator_ns: ns(agg as f64 * b, agg_gbps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(density: f64) -> Tensors {
        Tensors {
            seed: 7,
            workers: 3,
            blocks: 64,
            block: 16,
            density,
            overlap: 0.0,
        }
    }

    #[test]
    fn density_zero_and_one_are_exact() {
        assert!(t(0.0).nonzero_list(0).is_empty());
        assert_eq!(t(1.0).nonzero_list(2).len(), 64);
        let (sum, count) = t(0.0).expected();
        assert!(sum.iter().all(|&b| b == 0) && count.iter().all(|&c| c == 0));
    }

    #[test]
    fn workers_differ_and_blocks_are_deterministic() {
        let x = t(0.5);
        assert_ne!(x.nonzero_list(0), x.nonzero_list(1));
        let (mut a, mut b) = (vec![0u8; 16], vec![0u8; 16]);
        let j = x.nonzero_list(1)[0];
        x.block_into(1, j, &mut a);
        x.block_into(1, j, &mut b);
        assert_eq!(a, b);
        assert_ne!(a, vec![0u8; 16]);
    }

    #[test]
    fn overlap_shares_the_pattern_and_keeps_the_density() {
        let mut x = t(0.25);
        x.blocks = 4096;
        x.workers = 4;
        let union = |x: &Tensors| x.expected().1.iter().filter(|&&c| c > 0).count() as f64;
        let u0 = union(&x) / 4096.0;
        // 1 − 0.75^4 = 0.684.
        assert!((u0 - 0.684).abs() < 0.03, "{u0}");
        x.overlap = 1.0;
        let all = x.nonzero_list(0);
        assert!((1..4).all(|w| x.nonzero_list(w) == all));
        assert!((all.len() as f64 / 4096.0 - 0.25).abs() < 0.03);
        x.overlap = 0.5;
        let u = union(&x) / 4096.0;
        // 0.5·0.25 + 0.5·0.684 = 0.467.
        assert!((u - 0.467).abs() < 0.03, "{u}");
        for w in 0..4 {
            let d = x.nonzero_list(w).len() as f64 / 4096.0;
            assert!((d - 0.25).abs() < 0.03, "worker {w}: {d}");
        }
    }

    #[test]
    fn the_dense_bound_is_the_ring_bound() {
        let b = Bounds::of(&t(1.0), 400, 400);
        // 64 blocks of 16 B at 400 Gb/s: 2.56 ns per block.
        assert!((b.dense_ring_ns - 4.0 / 3.0 * 64.0 * 0.32).abs() < 1e-9);
        assert!((b.sparse_worker_ns - 64.0 * 0.32).abs() < 1e-9);
        assert!((b.sparse_aggregator_ns - 3.0 * 64.0 * 0.32).abs() < 1e-9);
    }
}
