//! The RIG Unit's redundant-PR structures (§5.2, §5.3).
//!
//! * [`IdxFilter`]: one bit per sparse-matrix column, shared by all client
//!   RIG Units of a NIC; a set bit means "this property has already arrived"
//!   (*filtering*).
//! * [`PendingTable`]: a RIG Unit's bounded CAM of outstanding PRs keyed by
//!   idx (*coalescing*), which also allocates request ids so a response finds
//!   its entry in O(1).
//!
//! Every operation is O(1) and allocation-free after construction.

use thiserror::Error;

use crate::time::Time;

/// Errors of the RIG structures.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RigError {
    /// An idx beyond the filter's columns.
    #[error("idx {idx} out of range ({columns} columns)")]
    IdxOutOfRange {
        /// The idx.
        idx: u64,
        /// Columns of the filter.
        columns: u64,
    },
    /// The filter's bitvector cannot be allocated.
    #[error("cannot allocate an Idx Filter of {columns} columns")]
    FilterTooLarge {
        /// Requested columns.
        columns: u64,
    },
    /// The Pending PR Table is full (the unit must stall, never drop).
    #[error("Pending PR Table full ({capacity} entries)")]
    Full {
        /// The table's capacity.
        capacity: usize,
    },
    /// The idx already has an outstanding PR (the caller should coalesce).
    #[error("idx {idx} already pending")]
    Duplicate {
        /// The idx.
        idx: u64,
    },
    /// A table capacity outside 1..=65,536.
    #[error("Pending PR Table capacity {capacity} must be 1..=65536")]
    BadCapacity {
        /// The requested capacity.
        capacity: usize,
    },
}

/// A bitvector with one bit per column (§5.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdxFilter {
    words: Vec<u64>,
    columns: u64,
    set: u64,
}

impl IdxFilter {
    /// A cleared filter for `columns` columns.
    pub fn new(columns: u64) -> Result<IdxFilter, RigError> {
        let n = usize::try_from(columns.div_ceil(64))
            .map_err(|_| RigError::FilterTooLarge { columns })?;
        let mut words = Vec::new();
        words
            .try_reserve_exact(n)
            .map_err(|_| RigError::FilterTooLarge { columns })?;
        words.resize(n, 0);
        Ok(IdxFilter {
            words,
            columns,
            set: 0,
        })
    }

    /// Number of columns.
    pub fn columns(&self) -> u64 {
        self.columns
    }

    /// Bits set.
    pub fn count_set(&self) -> u64 {
        self.set
    }

    #[inline]
    fn locate(&self, idx: u64) -> Result<(usize, u64), RigError> {
        if idx >= self.columns {
            return Err(RigError::IdxOutOfRange {
                idx,
                columns: self.columns,
            });
        }
        Ok(((idx / 64) as usize, 1u64 << (idx % 64)))
    }

    /// A hint with no effect on results: start loading the word of
    /// `idx`'s bit (nothing for an idx out of range).
    #[inline]
    pub fn prefetch(&self, idx: u64) {
        if let Some(w) = self.locate(idx).ok().and_then(|(w, _)| self.words.get(w)) {
            crate::hint::prefetch(w);
        }
    }

    /// Whether `idx`'s property has arrived.
    #[inline]
    pub fn test(&self, idx: u64) -> Result<bool, RigError> {
        let (w, b) = self.locate(idx)?;
        Ok(self.words[w] & b != 0)
    }

    /// Mark `idx`'s property as arrived; returns whether it already was.
    #[inline]
    pub fn set(&mut self, idx: u64) -> Result<bool, RigError> {
        let (w, b) = self.locate(idx)?;
        let was = self.words[w] & b != 0;
        if !was {
            self.words[w] |= b;
            self.set += 1;
        }
        Ok(was)
    }

    /// Clear every bit (before a new gather).
    pub fn clear_all(&mut self) {
        self.words.fill(0);
        self.set = 0;
    }
}

/// What a client RIG Unit keeps per outstanding PR (the default entry type).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingInfo {
    /// The RIG command the PR belongs to.
    pub command: u32,
    /// When the PR was issued.
    pub issued_at: Time,
}

/// A request id handed out by a [`PendingTable`]: the entry's slot in the
/// low 16 bits and the slot's generation in the high 16 bits, so a stale or
/// duplicate response never matches a newer entry in the same slot.
pub type ReqId = u32;

/// The Pending PR Table slot request id `req_id` names: its low 16 bits
/// (the high 16 are the slot's generation).
#[inline]
pub const fn req_slot(req_id: ReqId) -> usize {
    (req_id & 0xFFFF) as usize
}

#[derive(Clone, Debug)]
struct Entry<V> {
    idx: u64,
    value: V,
}

/// A bounded CAM of outstanding PRs keyed by idx (default 256 entries,
/// Table 5). Lookup by idx and by request id, insert and remove are O(1).
#[derive(Clone, Debug)]
pub struct PendingTable<V = PendingInfo> {
    entries: Vec<Option<Entry<V>>>,
    generations: Vec<u16>,
    free: Vec<u16>,
    by_idx: IdxIndex,
}

/// The slot of each outstanding idx: an open-addressed table of twice the
/// entries (a power of two), linear probing, deletion by shifting later
/// probes back (no tombstones, so probe lengths stay short under the
/// constant insert/remove churn of PRs). A cell holds the idx's 32-bit
/// hash beside `slot + 1` (0: empty), so a probe compares hashes without
/// loading entries, and a removal knows each cell's home without any.
/// One cache line of cells answers almost every probe; a general hash
/// map would load a control group and a bucket on separate lines.
#[derive(Clone, Debug)]
struct IdxIndex {
    cells: Vec<u64>,
    /// log2 of the number of cells.
    bits: u32,
}

impl IdxIndex {
    fn new(capacity: usize) -> IdxIndex {
        let n = (2 * capacity).next_power_of_two().max(2);
        IdxIndex {
            cells: vec![0; n],
            bits: n.trailing_zeros(),
        }
    }

    /// Fibonacci hash of `idx`, high 32 bits.
    #[inline]
    fn hash(idx: u64) -> u32 {
        (idx.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32
    }

    /// Hint the CPU to load the cell a probe for `idx` starts at.
    #[inline]
    fn prefetch(&self, idx: u64) {
        if let Some(c) = self.cells.get(self.home(Self::hash(idx))) {
            crate::hint::prefetch(c);
        }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.cells.len() - 1
    }

    /// The first cell to probe for a hash.
    #[inline]
    fn home(&self, h: u32) -> usize {
        (h >> (32 - self.bits)) as usize
    }

    /// The position and slot of `idx`, whose entries' idxs `key` gives.
    #[inline]
    fn find(&self, idx: u64, key: impl Fn(u16) -> Option<u64>) -> Option<(usize, u16)> {
        let h = Self::hash(idx);
        let mut p = self.home(h);
        loop {
            let c = self.cells[p];
            if c == 0 {
                return None;
            }
            let slot = ((c & 0xFFFF_FFFF) - 1) as u16;
            if (c >> 32) as u32 == h && key(slot) == Some(idx) {
                return Some((p, slot));
            }
            p = (p + 1) & self.mask();
        }
    }

    /// Record `idx` (not present) in `slot`.
    fn insert(&mut self, idx: u64, slot: u16) {
        let h = Self::hash(idx);
        let mut p = self.home(h);
        while self.cells[p] != 0 {
            p = (p + 1) & self.mask();
        }
        self.cells[p] = (u64::from(h) << 32) | (u64::from(slot) + 1);
    }

    /// Forget the cell at `p`, moving back later cells of its probe run
    /// that may sit in the hole (their home is not cyclically after it).
    fn remove_at(&mut self, p: usize) {
        let mask = self.mask();
        let mut hole = p;
        let mut j = p;
        loop {
            j = (j + 1) & mask;
            let c = self.cells[j];
            if c == 0 {
                break;
            }
            let home = self.home((c >> 32) as u32);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.cells[hole] = c;
                hole = j;
            }
        }
        self.cells[hole] = 0;
    }
}

impl<V> PendingTable<V> {
    /// Table 5's Pending PR Table size.
    pub const DEFAULT_CAPACITY: usize = 256;

    /// An empty table of `capacity` entries (1..=65,536).
    pub fn new(capacity: usize) -> Result<PendingTable<V>, RigError> {
        if capacity == 0 || capacity > 1 << 16 {
            return Err(RigError::BadCapacity { capacity });
        }
        Ok(PendingTable {
            entries: (0..capacity).map(|_| None).collect(),
            generations: vec![0; capacity],
            free: (0..capacity).rev().map(|s| s as u16).collect(),
            by_idx: IdxIndex::new(capacity),
        })
    }

    /// Entries the table can hold.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Outstanding entries.
    pub fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// Whether no PR is outstanding.
    pub fn is_empty(&self) -> bool {
        self.free.len() == self.entries.len()
    }

    /// Whether an insert would fail with [`RigError::Full`].
    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    fn req_id(&self, slot: u16) -> ReqId {
        (u32::from(self.generations[slot as usize]) << 16) | u32::from(slot)
    }

    /// Record an outstanding PR for `idx`; returns its request id.
    pub fn insert(&mut self, idx: u64, value: V) -> Result<ReqId, RigError> {
        if self.contains(idx) {
            return Err(RigError::Duplicate { idx });
        }
        let slot = self.free.pop().ok_or(RigError::Full {
            capacity: self.entries.len(),
        })?;
        self.entries[slot as usize] = Some(Entry { idx, value });
        self.by_idx.insert(idx, slot);
        Ok(self.req_id(slot))
    }

    /// The outstanding PR for `idx`, if any: its request id and entry.
    #[inline]
    pub fn lookup(&self, idx: u64) -> Option<(ReqId, &V)> {
        let (_, slot) = self.find(idx)?;
        let e = self.entries[slot as usize].as_ref()?;
        Some((self.req_id(slot), &e.value))
    }

    /// Whether `idx` has an outstanding PR.
    #[inline]
    pub fn contains(&self, idx: u64) -> bool {
        self.find(idx).is_some()
    }

    /// The index cell and slot of `idx`.
    #[inline]
    fn find(&self, idx: u64) -> Option<(usize, u16)> {
        self.by_idx.find(idx, |s| {
            self.entries
                .get(usize::from(s))
                .and_then(|e| e.as_ref().map(|e| e.idx))
        })
    }

    /// A hint with no effect on results: start loading what retiring
    /// request `req_id` for `idx` reads (the slot's generation and entry,
    /// and the idx's first index cell), a few PRs before it is retired.
    #[inline]
    pub fn prefetch(&self, req_id: ReqId, idx: u64) {
        let slot = req_slot(req_id);
        if let Some(g) = self.generations.get(slot) {
            crate::hint::prefetch(g);
        }
        if let Some(e) = self.entries.get(slot) {
            crate::hint::prefetch(e);
        }
        self.by_idx.prefetch(idx);
    }

    /// The entry of request `req_id`, if it is outstanding: its idx and value.
    pub fn get_by_req_id(&self, req_id: ReqId) -> Option<(u64, &V)> {
        let slot = self.slot_of(req_id)?;
        self.entries[slot].as_ref().map(|e| (e.idx, &e.value))
    }

    fn slot_of(&self, req_id: ReqId) -> Option<usize> {
        let slot = req_slot(req_id);
        let generation = (req_id >> 16) as u16;
        (slot < self.entries.len()
            && self.generations[slot] == generation
            && self.entries[slot].is_some())
        .then_some(slot)
    }

    fn release(&mut self, slot: usize) -> Option<(u64, V)> {
        let (cell, _) = self.find(self.entries[slot].as_ref()?.idx)?;
        self.release_at(slot, cell)
    }

    /// Free `slot`, whose idx sits in index cell `cell`.
    fn release_at(&mut self, slot: usize, cell: usize) -> Option<(u64, V)> {
        let e = self.entries[slot].take()?;
        self.by_idx.remove_at(cell);
        self.generations[slot] = self.generations[slot].wrapping_add(1);
        self.free.push(slot as u16);
        Some((e.idx, e.value))
    }

    /// Complete request `req_id`: remove and return its idx and value. A
    /// stale, duplicate or unknown id returns `None` and changes nothing.
    pub fn remove_by_req_id(&mut self, req_id: ReqId) -> Option<(u64, V)> {
        let slot = self.slot_of(req_id)?;
        self.release(slot)
    }

    /// Remove the outstanding PR of `idx`: its request id and value.
    pub fn remove_by_idx(&mut self, idx: u64) -> Option<(ReqId, V)> {
        let (cell, slot) = self.find(idx)?;
        let id = self.req_id(slot);
        self.release_at(slot as usize, cell).map(|(_, v)| (id, v))
    }

    /// Forget every entry (e.g. after a watchdog failure). Request ids
    /// handed out before stay invalid.
    pub fn clear(&mut self) {
        for slot in 0..self.entries.len() {
            if self.entries[slot].is_some() {
                self.release(slot);
            }
        }
    }

    /// Outstanding entries in slot order (deterministic): request id, idx, value.
    pub fn iter(&self) -> impl Iterator<Item = (ReqId, u64, &V)> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter_map(move |(s, e)| e.as_ref().map(|e| (self.req_id(s as u16), e.idx, &e.value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_bits() {
        let mut f = IdxFilter::new(130).unwrap();
        assert_eq!(f.test(129), Ok(false));
        assert_eq!(f.set(129), Ok(false));
        assert_eq!(f.set(129), Ok(true));
        assert_eq!(f.set(0), Ok(false));
        assert_eq!(
            (f.test(129), f.test(128), f.test(0)),
            (Ok(true), Ok(false), Ok(true))
        );
        assert_eq!(f.count_set(), 2);
        assert_eq!(
            f.test(130),
            Err(RigError::IdxOutOfRange {
                idx: 130,
                columns: 130
            })
        );
        assert!(f.set(u64::MAX).is_err());
        f.clear_all();
        assert_eq!(
            (f.test(129), f.count_set(), f.columns()),
            (Ok(false), 0, 130)
        );
        assert_eq!(
            IdxFilter::new(0).unwrap().test(0),
            Err(RigError::IdxOutOfRange { idx: 0, columns: 0 })
        );
        assert!(matches!(
            IdxFilter::new(u64::MAX),
            Err(RigError::FilterTooLarge { .. })
        ));
    }

    #[test]
    fn pending_table_insert_lookup_remove() {
        let mut t: PendingTable = PendingTable::new(2).unwrap();
        let info = |c| PendingInfo {
            command: c,
            issued_at: Time::from_ns(5),
        };
        let a = t.insert(100, info(1)).unwrap();
        assert_eq!(
            t.insert(100, info(2)),
            Err(RigError::Duplicate { idx: 100 })
        );
        let b = t.insert(200, info(1)).unwrap();
        assert_ne!(a, b);
        assert!(t.is_full());
        assert_eq!(t.insert(300, info(1)), Err(RigError::Full { capacity: 2 }));
        assert_eq!(t.lookup(100), Some((a, &info(1))));
        assert_eq!(t.get_by_req_id(b), Some((200, &info(1))));
        assert_eq!(t.remove_by_req_id(a), Some((100, info(1))));
        // A duplicate response (same id) finds nothing.
        assert_eq!(t.remove_by_req_id(a), None);
        // The freed slot is reused with a new generation: the old id stays dead.
        let c = t.insert(300, info(3)).unwrap();
        assert_eq!(c & 0xFFFF, a & 0xFFFF);
        assert_ne!(c, a);
        assert_eq!(t.remove_by_req_id(a), None);
        assert_eq!(t.remove_by_req_id(0xFFFF_FFFF), None);
        assert_eq!(t.remove_by_idx(200), Some((b, info(1))));
        assert_eq!(t.len(), 1);
        assert!(!t.contains(200) && t.contains(300));
        let all: Vec<_> = t.iter().map(|(id, idx, v)| (id, idx, v.command)).collect();
        assert_eq!(all, [(c, 300, 3)]);
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.remove_by_req_id(c), None);
    }

    #[test]
    fn pending_table_capacity_bounds() {
        assert!(PendingTable::<()>::new(0).is_err());
        assert!(PendingTable::<()>::new((1 << 16) + 1).is_err());
        let mut t = PendingTable::<u8>::new(1 << 16).unwrap();
        for i in 0..(1u64 << 16) {
            t.insert(i * 3, 0).unwrap();
        }
        assert!(t.insert(1, 0).is_err());
        for i in (0..(1u64 << 16)).step_by(7) {
            assert_eq!(t.remove_by_idx(i * 3).map(|(_, v)| v), Some(0));
        }
        for i in 0..(1u64 << 16) {
            assert_eq!(t.contains(i * 3), i % 7 != 0, "idx {}", i * 3);
        }
        assert_eq!(PendingTable::<()>::DEFAULT_CAPACITY, 256);
    }

    /// One operation of the model test.
    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64),
        RemoveByIdx(u64),
        /// The `n`th request id handed out so far (stale ones included).
        RemoveById(usize),
        Clear,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        // Few distinct idxs, some far apart, so probe runs collide, wrap
        // and are cut by removals in every order.
        let idx = prop_oneof![0u64..40, (0u64..8).prop_map(|k| k << 40 | 5)];
        prop_oneof![
            4 => idx.clone().prop_map(Op::Insert),
            2 => idx.prop_map(Op::RemoveByIdx),
            3 => (0usize..64).prop_map(Op::RemoveById),
            1 => Just(Op::Clear),
        ]
    }

    proptest::proptest! {
        /// The table agrees with a map of idx to (request id, value) after
        /// every operation: lookups by idx and id, lengths, fullness,
        /// duplicates refused, stale ids ignored.
        #[test]
        fn pending_table_matches_a_map(
            capacity in 1usize..12,
            ops in proptest::collection::vec(op(), 1..200),
        ) {
            use std::collections::BTreeMap;
            let mut t = PendingTable::<u64>::new(capacity).unwrap();
            let mut model: BTreeMap<u64, ReqId> = BTreeMap::new();
            let mut ids: Vec<ReqId> = Vec::new();
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Insert(idx) => {
                        let got = t.insert(idx, idx ^ 0xAB);
                        if model.contains_key(&idx) {
                            proptest::prop_assert_eq!(got, Err(RigError::Duplicate { idx }));
                        } else if model.len() == capacity {
                            proptest::prop_assert_eq!(got, Err(RigError::Full { capacity }));
                        } else {
                            let id = got.unwrap();
                            model.insert(idx, id);
                            ids.push(id);
                        }
                    }
                    Op::RemoveByIdx(idx) => {
                        let want = model.remove(&idx).map(|id| (id, idx ^ 0xAB));
                        proptest::prop_assert_eq!(t.remove_by_idx(idx), want);
                    }
                    Op::RemoveById(n) => {
                        let Some(&id) = ids.get(n) else { continue };
                        let idx = model.iter().find(|(_, &v)| v == id).map(|(&k, _)| k);
                        let want = idx.map(|i| (i, i ^ 0xAB));
                        if let Some(i) = idx {
                            model.remove(&i);
                        }
                        proptest::prop_assert_eq!(t.remove_by_req_id(id), want);
                    }
                    Op::Clear => {
                        t.clear();
                        model.clear();
                    }
                }
                proptest::prop_assert_eq!(t.len(), model.len(), "step {}", step);
                proptest::prop_assert_eq!(t.is_full(), model.len() == capacity);
                for idx in (0u64..40).chain((0..8).map(|k| k << 40 | 5)) {
                    let want = model.get(&idx).map(|&id| (id, idx ^ 0xAB));
                    proptest::prop_assert_eq!(t.lookup(idx).map(|(id, v)| (id, *v)), want);
                    proptest::prop_assert_eq!(t.contains(idx), want.is_some());
                }
                for (&idx, &id) in &model {
                    proptest::prop_assert_eq!(t.get_by_req_id(id).map(|(i, _)| i), Some(idx));
                }
            }
        }
    }
}
