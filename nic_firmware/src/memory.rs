//! The host's memory as the NIC sees it through DMA, and the deterministic
//! property values every driver uses.
//!
//! * [`HostMemory`]: the small trait the firmware needs (read, write, and the
//!   registered region containing an address range). The simulator plugs a
//!   memory-light implementation; [`DenseMemory`] stores every registered
//!   region (tests, the CLI).
//! * Memory is registered in [`Region`]s, like RDMA memory registrations:
//!   the idx arrays the host gathers for (little-endian `u64`s), the
//!   destination buffers (one property slot per column: the property of idx
//!   X goes to `dest_addr + X * property_size`, so every command of a kernel
//!   can share one destination array), and the node's slice of the property
//!   array that server units read.
//! * [`property_word`] / [`property_bytes`]: property values are a pure
//!   function of (idx, word), so the source array never has to be stored to
//!   generate it or to verify a gather.

use thiserror::Error;

/// What a registered region holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionKind {
    /// Idx arrays (read by client RIG units).
    Idxs,
    /// Destination buffers (written with gathered properties).
    Destination,
    /// The local slice of the property array (read by server RIG units).
    Properties,
}

/// A registered region of host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// First address.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
    /// What it holds.
    pub kind: RegionKind,
}

impl Region {
    /// One past the last address.
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    /// Whether `[addr, addr + len)` lies inside the region.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        addr >= self.start && addr.checked_add(len).is_some_and(|e| e <= self.end())
    }
}

/// A DMA access the host memory refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MemError {
    /// The range is not inside one registered region.
    #[error("address range {addr:#x}+{len} is not inside a registered region")]
    Unmapped {
        /// First address.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// The range is in a region of another kind (e.g. a write into an idx array).
    #[error("address range {addr:#x}+{len} is in a {kind:?} region, not a {want:?} region")]
    WrongKind {
        /// First address.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// The region's kind.
        kind: RegionKind,
        /// The kind the access needs.
        want: RegionKind,
    },
    /// A region that overlaps an existing one, is empty, or wraps around.
    #[error("cannot register {kind:?} region {start:#x}+{len}: {why}")]
    BadRegion {
        /// First address.
        start: u64,
        /// Length.
        len: u64,
        /// Kind.
        kind: RegionKind,
        /// Why.
        why: &'static str,
    },
}

/// The host memory a NIC reaches by DMA.
pub trait HostMemory {
    /// The registered region containing all of `[addr, addr + len)`, if any.
    fn region(&self, addr: u64, len: u64) -> Option<Region>;
    /// Read `buf.len()` bytes at `addr` (inside one region).
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError>;
    /// Write `data` at `addr` (inside one region).
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError>;
}

/// Word `j` (a `u32`) of the property of `idx`: the SplitMix64 finaliser of
/// `idx · 0x9E3779B97F4A7C15 ⊕ (j << 32)`, low 32 bits. Every driver (tests,
/// the CLI, the simulator) generates the source property array and checks
/// gathered properties with it.
#[inline]
pub fn property_word(idx: u64, j: u32) -> u32 {
    let mut z = idx.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (u64::from(j) << 32) ^ 0x4E53;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

/// Fill `out` with the property of `idx`: word `j` little-endian at bytes
/// `4j..4j+4` (a trailing partial word is truncated).
///
/// Whole words are stored as `u32`s and only a trailing partial word is
/// copied byte-wise, so a property costs no library call per word (the
/// simulator fills and checks every gathered property with these).
pub fn property_bytes(idx: u64, out: &mut [u8]) {
    let mut words = out.chunks_exact_mut(4);
    let mut j = 0u32;
    for chunk in &mut words {
        chunk.copy_from_slice(&property_word(idx, j).to_le_bytes());
        j += 1;
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        let w = property_word(idx, j).to_le_bytes();
        tail.copy_from_slice(&w[..tail.len()]);
    }
}

/// Whether `bytes` is the property of `idx` (word by word, as
/// [`property_bytes`] writes it).
pub fn is_property(idx: u64, bytes: &[u8]) -> bool {
    let words = bytes.chunks_exact(4);
    let tail = words.remainder();
    let mut j = 0u32;
    for chunk in words {
        let got = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        if got != property_word(idx, j) {
            return false;
        }
        j += 1;
    }
    tail.is_empty() || tail == &property_word(idx, j).to_le_bytes()[..tail.len()]
}

/// Host memory that stores every registered region densely. Regions never
/// overlap; lookups are a binary search over them.
#[derive(Clone, Debug, Default)]
pub struct DenseMemory {
    /// Sorted by start address.
    regions: Vec<(Region, Vec<u8>)>,
}

impl DenseMemory {
    /// No regions.
    pub fn new() -> DenseMemory {
        DenseMemory::default()
    }

    /// Register a zeroed region.
    pub fn register(&mut self, start: u64, len: u64, kind: RegionKind) -> Result<(), MemError> {
        let bad = |why| MemError::BadRegion {
            start,
            len,
            kind,
            why,
        };
        if len == 0 {
            return Err(bad("empty"));
        }
        let end = start
            .checked_add(len)
            .ok_or(bad("wraps around the address space"))?;
        let size = usize::try_from(len).map_err(|_| bad("too large"))?;
        let pos = self.regions.partition_point(|(r, _)| r.start < start);
        let overlaps_prev = pos > 0 && self.regions[pos - 1].0.end() > start;
        let overlaps_next = self.regions.get(pos).is_some_and(|(r, _)| r.start < end);
        if overlaps_prev || overlaps_next {
            return Err(bad("overlaps a registered region"));
        }
        let mut data = Vec::new();
        data.try_reserve_exact(size).map_err(|_| bad("too large"))?;
        data.resize(size, 0);
        self.regions
            .insert(pos, (Region { start, len, kind }, data));
        Ok(())
    }

    /// Register an idx array holding `idxs` (little-endian `u64`s).
    pub fn register_idxs(&mut self, start: u64, idxs: &[u64]) -> Result<(), MemError> {
        let len = (idxs.len() as u64).saturating_mul(8);
        self.register(start, len, RegionKind::Idxs)?;
        let data = self
            .data_mut(start)
            .ok_or(MemError::Unmapped { addr: start, len })?;
        for (c, idx) in data.chunks_exact_mut(8).zip(idxs) {
            c.copy_from_slice(&idx.to_le_bytes());
        }
        Ok(())
    }

    /// Register a destination buffer of `len` bytes.
    pub fn register_destination(&mut self, start: u64, len: u64) -> Result<(), MemError> {
        self.register(start, len, RegionKind::Destination)
    }

    /// Register the slice `first_idx..first_idx + count` of the property
    /// array (`prop_len` bytes each, from [`property_bytes`]) at `start`.
    pub fn register_properties(
        &mut self,
        start: u64,
        first_idx: u64,
        count: u64,
        prop_len: u32,
    ) -> Result<(), MemError> {
        let len = count.saturating_mul(u64::from(prop_len));
        self.register(start, len, RegionKind::Properties)?;
        let data = self
            .data_mut(start)
            .ok_or(MemError::Unmapped { addr: start, len })?;
        if prop_len > 0 {
            for (i, c) in data.chunks_exact_mut(prop_len as usize).enumerate() {
                property_bytes(first_idx + i as u64, c);
            }
        }
        Ok(())
    }

    /// The registered regions, by address.
    pub fn regions(&self) -> impl Iterator<Item = Region> + '_ {
        self.regions.iter().map(|(r, _)| *r)
    }

    /// The bytes of the region starting exactly at `start`.
    pub fn data(&self, start: u64) -> Option<&[u8]> {
        self.regions
            .iter()
            .find(|(r, _)| r.start == start)
            .map(|(_, d)| d.as_slice())
    }

    fn data_mut(&mut self, start: u64) -> Option<&mut [u8]> {
        self.regions
            .iter_mut()
            .find(|(r, _)| r.start == start)
            .map(|(_, d)| d.as_mut_slice())
    }

    fn locate(&self, addr: u64, len: u64) -> Result<(usize, usize), MemError> {
        let pos = self.regions.partition_point(|(r, _)| r.start <= addr);
        let i = pos.checked_sub(1).ok_or(MemError::Unmapped { addr, len })?;
        let r = &self.regions[i].0;
        if !r.contains(addr, len) {
            return Err(MemError::Unmapped { addr, len });
        }
        Ok((i, (addr - r.start) as usize))
    }
}

impl HostMemory for DenseMemory {
    fn region(&self, addr: u64, len: u64) -> Option<Region> {
        self.locate(addr, len).ok().map(|(i, _)| self.regions[i].0)
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let (i, off) = self.locate(addr, buf.len() as u64)?;
        buf.copy_from_slice(&self.regions[i].1[off..off + buf.len()]);
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let (i, off) = self.locate(addr, data.len() as u64)?;
        self.regions[i].1[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_values_are_deterministic_and_distinct() {
        assert_eq!(property_word(5, 1), property_word(5, 1));
        assert_ne!(property_word(5, 0), property_word(6, 0));
        assert_ne!(property_word(5, 0), property_word(5, 1));
        let mut b = [0u8; 10];
        property_bytes(77, &mut b);
        assert_eq!(&b[0..4], &property_word(77, 0).to_le_bytes());
        assert_eq!(&b[8..10], &property_word(77, 2).to_le_bytes()[..2]);
        assert!(is_property(77, &b));
        b[9] ^= 1;
        assert!(!is_property(77, &b));
    }

    #[test]
    fn word_wise_fill_and_check_match_the_byte_definition() {
        for len in 0..=21usize {
            for idx in [0u64, 3, 1 << 33, u64::MAX] {
                let mut b = vec![0u8; len];
                property_bytes(idx, &mut b);
                let want: Vec<u8> = (0..len)
                    .map(|at| property_word(idx, (at / 4) as u32).to_le_bytes()[at % 4])
                    .collect();
                assert_eq!(b, want, "idx {idx}, {len} bytes");
                assert!(is_property(idx, &b));
                for at in 0..len {
                    let mut bad = b.clone();
                    bad[at] ^= 0x10;
                    assert!(!is_property(idx, &bad), "idx {idx}, byte {at} of {len}");
                }
                assert_eq!(len == 0, is_property(idx ^ 1, &b), "other idx, {len} bytes");
            }
        }
    }

    #[test]
    fn regions_do_not_overlap_and_bound_accesses() {
        let mut m = DenseMemory::new();
        m.register_idxs(0x1000, &[3, 9, 1 << 40]).unwrap();
        m.register_destination(0x2000, 64).unwrap();
        m.register_properties(0x4000, 10, 4, 8).unwrap();
        assert!(m.register(0x1010, 16, RegionKind::Destination).is_err());
        assert!(m.register(0x0ff8, 16, RegionKind::Destination).is_err());
        assert!(m.register(0x5000, 0, RegionKind::Destination).is_err());
        assert!(m
            .register(u64::MAX - 3, 8, RegionKind::Destination)
            .is_err());
        let mut w = [0u8; 8];
        m.read(0x1008, &mut w).unwrap();
        assert_eq!(u64::from_le_bytes(w), 9);
        m.read(0x1010, &mut w).unwrap();
        assert_eq!(u64::from_le_bytes(w), 1 << 40);
        assert!(m.read(0x1014, &mut w).is_err());
        assert_eq!(
            m.region(0x2000, 64).map(|r| r.kind),
            Some(RegionKind::Destination)
        );
        assert!(m.region(0x2001, 64).is_none());
        assert!(m.write(0x203f, &[1, 2]).is_err());
        m.write(0x2030, &[1, 2]).unwrap();
        assert_eq!(&m.data(0x2000).unwrap()[0x30..0x32], &[1, 2]);
        let mut p = [0u8; 8];
        m.read(0x4008, &mut p).unwrap();
        assert!(is_property(11, &p));
        assert_eq!(m.regions().count(), 3);
    }
}
