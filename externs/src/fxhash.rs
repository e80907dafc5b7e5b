//! A fast, deterministic, non-cryptographic hasher for the per-packet paths
//! (multiply-rotate, in the style of rustc's FxHash).
//!
//! std's default SipHash is DoS-resistant but several times slower on small
//! keys; the tables that use this hasher are bounded (Concatenation Queues,
//! the unbounded-cache option) and their iteration order
//! never reaches any output.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hasher: `h = (h.rotl(5) ^ word) × K` per word.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline(always)]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.add(u64::from_le_bytes(a));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut a = [0u8; 8];
            a[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(a) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // Fold the well-mixed high bits down: hashbrown uses the top 7 bits
        // as tags and the low bits as bucket index.
        self.hash ^ (self.hash >> 32).rotate_left(7)
    }
}

/// `BuildHasher` for [`FxHasher`].
pub type FxBuildHasher = BuildHasherDefault<FxHasher>;

/// A `HashMap` using [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, FxBuildHasher>;

/// An empty [`FxHashMap`] with room for `n` entries.
pub fn map_with_capacity<K, V>(n: usize) -> FxHashMap<K, V> {
    HashMap::with_capacity_and_hasher(n, FxBuildHasher::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn h<T: Hash>(t: T) -> u64 {
        FxBuildHasher::default().hash_one(t)
    }

    #[test]
    fn deterministic_and_spreads() {
        assert_eq!(h(42u64), h(42u64));
        assert_ne!(h(1u64), h(2u64));
        assert_ne!(h([1u8, 2, 3].as_slice()), h([1u8, 2, 3, 0].as_slice()));
        // Sequential keys land in many distinct buckets of a 1024-bucket table.
        let mut buckets = std::collections::BTreeSet::new();
        for i in 0..1024u64 {
            buckets.insert(h(i) & 1023);
        }
        assert!(buckets.len() > 600, "{}", buckets.len());
        let mut m = map_with_capacity::<u64, u32>(4);
        m.insert(5, 1);
        assert_eq!(m.get(&5), Some(&1));
    }
}
