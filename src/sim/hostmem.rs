//! A memory-light [`HostMemory`] for the simulated nodes, so 128 nodes ×
//! hundreds of millions of nonzeros fit in memory.
//!
//! Layout of node `n` (three registered regions, none stored densely):
//!
//! | region | address | content |
//! |---|---|---|
//! | idx array | [`IDX_BASE`] | the node's nonzeros with a remote column, in row order, as little-endian `u64`s — not stored: streamed from the matrix's shared column array as the NIC's DMA reads them |
//! | destination array | [`DEST_BASE`] | one property slot per column (`cols × K × 4` bytes), sparse: only the slots of the node's distinct remote idxs are kept |
//! | property slice | [`PROP_BASE`] | the node's own properties, computed on read from [`property_bytes`] |
//!
//! The idx array is the node's slice of the CSR column array with its
//! local columns (those it owns) skipped. A read finds its first entry
//! from a cursor left by the previous read (the NIC's client units each
//! read their command's idxs in order, chunk after chunk) or from a mark
//! kept every [`MARK_STRIDE`] remote nonzeros, so the node holds 1/8 byte
//! per remote nonzero instead of 4 or 8.
//!
//! Every write into the destination array is checked against the source
//! ([`is_property`]) as it happens: a slot is *ok* once written with the
//! right bytes, and *wrong* for good once any write carried other bytes.
//! Nothing expected is stored: the property is a function of the idx. The
//! node keeps, per distinct remote idx it needs, the idx (sorted, 4 B) and
//! its state (1 B), plus a bucket index of about half a byte; with
//! `keep_values` the written bytes are stored too (one slot per distinct
//! remote idx), for the SpMM check.
//!
//! Without `keep_values` a write's bytes are checked at once, but the
//! slot it marks is found a few writes later: each write advances the
//! writes before it one step (index entry, ends of its range of needed
//! idxs, the interpolated position in it, state byte), hinting the CPU
//! to load what the next step reads, so the dependent look-ups of one
//! write overlap those of others instead of each waiting for memory in
//! turn. Slots are updated in write order, so the result is the same;
//! [`SimMemory::check`] settles the writes still in flight first.
//!
//! A test hook ([`SimMemory::corrupt`]) makes the node serve a wrong
//! property for one idx, so the end-of-run verification can be seen to fail.

use std::cell::Cell;
use std::ops::Range;
use std::sync::Arc;

use netsparse_externs::hint::prefetch;
use netsparse_nic::{is_property, property_bytes, HostMemory, MemError, Region, RegionKind};

/// Host address of the idx array.
pub const IDX_BASE: u64 = 1 << 44;
/// Host address of the destination array (slot 0).
pub const DEST_BASE: u64 = 2 << 44;
/// Host address of the node's property slice.
pub const PROP_BASE: u64 = 3 << 44;

/// Remote nonzeros between two marks of the streamed idx array.
pub const MARK_STRIDE: u64 = 64;
/// Read cursors kept per node (at least the NIC's client units).
const CURSORS: usize = 16;
/// Needed idxs per bucket of the slot index, on average at most.
const PER_BUCKET: u64 = 8;

/// Writes between two steps of a deferred slot update ([`Verify`]).
const VERIFY_LAG: usize = 4;

/// State of one destination slot.
const NONE: u8 = 0;
const OK: u8 = 1;
const WRONG: u8 = 2;
/// What the end-of-run check found on one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeCheck {
    /// Distinct remote idxs the node needed.
    pub needed: u64,
    /// Of which gathered with the right property.
    pub ok: u64,
    /// Never written.
    pub missing: u64,
    /// Written with a wrong property at least once.
    pub wrong: u64,
    /// Writes outside the needed slots (or misaligned).
    pub unexpected: u64,
    /// The first few problems, as `(idx, what)`.
    pub first: Vec<(u64, &'static str)>,
}

impl NodeCheck {
    /// Whether every needed property arrived intact and nothing else was written.
    pub fn passed(&self) -> bool {
        self.ok == self.needed && self.unexpected == 0
    }
}

/// Problems listed per node at most.
const FIRST: usize = 8;

/// The node's idx array, streamed from the matrix's column array.
#[derive(Clone, Debug)]
struct IdxStream {
    /// The matrix's column array (shared by every node).
    all: Arc<Vec<u32>>,
    /// The node's entries in it.
    entries: Range<usize>,
    /// Columns skipped (the node's own); an empty range keeps every entry.
    local: Range<u32>,
    /// Entries kept (remote nonzeros).
    len: u64,
    /// `marks[k]`: the position (relative to `entries.start`) of remote
    /// nonzero `k × MARK_STRIDE`.
    marks: Vec<u64>,
    /// `(next remote ordinal, its position)` left by recent reads.
    cursors: [Cell<(u64, u64)>; CURSORS],
    /// The cursor the next read without a matching one replaces.
    victim: Cell<usize>,
}

impl IdxStream {
    fn new(all: Arc<Vec<u32>>, entries: Range<usize>, local: Range<u32>) -> IdxStream {
        let slice = &all[entries.clone()];
        let mut marks = Vec::new();
        let mut len = 0u64;
        for (pos, &c) in slice.iter().enumerate() {
            if !local.contains(&c) {
                if len % MARK_STRIDE == 0 {
                    marks.push(pos as u64);
                }
                len += 1;
            }
        }
        marks.shrink_to_fit();
        IdxStream {
            all,
            entries,
            local,
            len,
            marks,
            cursors: std::array::from_fn(|_| Cell::new((u64::MAX, 0))),
            victim: Cell::new(0),
        }
    }

    #[inline]
    fn slice(&self) -> &[u32] {
        &self.all[self.entries.clone()]
    }

    /// The remote nonzeros from ordinal `first` on, in order, each with
    /// its ordinal; `visit` returns `false` to stop. Leaves a cursor where
    /// it stopped.
    fn scan(&self, first: u64, visit: &mut dyn FnMut(u64, u32) -> bool) {
        if first >= self.len {
            return;
        }
        let slot = self.cursors.iter().position(|c| c.get().0 == first);
        let (mut ord, mut pos) = match slot {
            Some(s) => self.cursors[s].get(),
            None => {
                let k = first / MARK_STRIDE;
                (k * MARK_STRIDE, self.marks[k as usize])
            }
        };
        let slice = self.slice();
        let mut pos_us = pos as usize;
        while pos_us < slice.len() {
            let c = slice[pos_us];
            pos_us += 1;
            if self.local.contains(&c) {
                continue;
            }
            let o = ord;
            ord += 1;
            if o < first {
                continue;
            }
            if !visit(o, c) {
                break;
            }
        }
        pos = pos_us as u64;
        let s = slot.unwrap_or_else(|| {
            let v = self.victim.get();
            self.victim.set((v + 1) % CURSORS);
            v
        });
        self.cursors[s].set((ord, pos));
    }

    /// Every remote nonzero, in order.
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let local = self.local.clone();
        self.slice()
            .iter()
            .copied()
            .filter(move |c| !local.contains(c))
    }
}

/// The simulated host memory of one node.
#[derive(Clone, Debug)]
pub struct SimMemory {
    idxs: IdxStream,
    prop_len: u32,
    cols: u64,
    first: u64,
    count: u64,
    needed: Vec<u32>,
    /// `needed[bucket_start[b]..bucket_start[b + 1]]` are the needed idxs
    /// `i` with `i >> bucket_shift == b`: a write finds its slot with one
    /// table look-up and a search of a short range instead of a binary
    /// search of the whole list (about one bucket per [`PER_BUCKET`]
    /// needed idxs).
    bucket_start: Vec<u32>,
    bucket_shift: u32,
    state: Vec<u8>,
    values: Option<Vec<u8>>,
    /// Checked writes whose slot is not marked yet (without `values`).
    verify: Verify,
    unexpected: u64,
    first_unexpected: Vec<u64>,
    corrupt: Option<u64>,
    writes: u64,
}

impl SimMemory {
    /// Memory of a node whose remote nonzeros (columns, row order) are
    /// `idxs`, in a matrix of `cols` columns with `prop_len`-byte
    /// properties, owning properties `first..first + count`. With
    /// `keep_values` the gathered bytes are stored (for the SpMM check).
    pub fn new(
        idxs: Vec<u32>,
        cols: u64,
        prop_len: u32,
        first: u64,
        count: u64,
        keep_values: bool,
    ) -> SimMemory {
        let n = idxs.len();
        SimMemory::from_columns(
            Arc::new(idxs),
            0..n,
            0..0,
            cols,
            prop_len,
            first,
            count,
            keep_values,
            &mut Vec::new(),
        )
    }

    /// Memory of a node whose nonzeros are `all[entries]` (a slice of a
    /// CSR column array, row order), of which those with a column in
    /// `local` are local and the rest remote: the idx array is streamed
    /// from `all`, nothing per nonzero is copied. `scratch` is reused
    /// between nodes to find the distinct remote idxs. Other parameters as
    /// [`SimMemory::new`].
    #[allow(clippy::too_many_arguments)]
    pub fn from_columns(
        all: Arc<Vec<u32>>,
        entries: Range<usize>,
        local: Range<u32>,
        cols: u64,
        prop_len: u32,
        first: u64,
        count: u64,
        keep_values: bool,
        scratch: &mut Vec<u32>,
    ) -> SimMemory {
        let idxs = IdxStream::new(all, entries, local);
        scratch.clear();
        scratch.extend(idxs.iter());
        scratch.sort_unstable();
        scratch.dedup();
        let needed = scratch.to_vec();
        let n = needed.len();
        let (bucket_shift, bucket_start) = buckets(&needed, cols);
        SimMemory {
            bucket_start,
            bucket_shift,
            idxs,
            prop_len,
            cols,
            first,
            count,
            state: vec![NONE; n],
            values: keep_values.then(|| vec![0; n * prop_len as usize]),
            verify: Verify::default(),
            needed,
            unexpected: 0,
            first_unexpected: Vec::new(),
            corrupt: None,
            writes: 0,
        }
    }

    /// Test hook: serve a wrong property (first byte inverted) for `idx`
    /// when this node is its owner.
    pub fn corrupt(&mut self, idx: Option<u64>) {
        self.corrupt = idx;
    }

    /// The idx array (remote nonzeros in row order), streamed.
    pub fn idxs(&self) -> impl Iterator<Item = u32> + '_ {
        self.idxs.iter()
    }

    /// Entries of the idx array (the node's remote nonzeros).
    pub fn idx_count(&self) -> u64 {
        self.idxs.len
    }

    /// Bytes of the idx array.
    pub fn idx_bytes(&self) -> u64 {
        self.idxs.len * 8
    }

    /// The distinct remote idxs, sorted.
    pub fn needed(&self) -> &[u32] {
        &self.needed
    }

    /// Destination writes seen.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Bytes this node holds on the heap (its share of the run's memory;
    /// the shared column array is not counted).
    pub fn heap_bytes(&self) -> u64 {
        (self.idxs.marks.capacity() * 8
            + self.needed.capacity() * 4
            + self.bucket_start.capacity() * 4
            + self.state.capacity()
            + self.values.as_ref().map_or(0, Vec::capacity)) as u64
    }

    /// The gathered property of remote idx `idx` (with `keep_values`, once
    /// written correctly).
    pub fn gathered(&self, idx: u32) -> Option<&[u8]> {
        let s = self.slot(idx)?;
        if self.state[s] != OK {
            return None;
        }
        let p = self.prop_len as usize;
        self.values.as_ref().map(|v| &v[s * p..(s + 1) * p])
    }

    /// Check every needed slot (after marking the slots of the writes
    /// still in flight).
    pub fn check(&mut self) -> NodeCheck {
        self.settle();
        let mut c = NodeCheck {
            needed: self.needed.len() as u64,
            unexpected: self.unexpected,
            ..NodeCheck::default()
        };
        for &i in &self.first_unexpected {
            c.first.push((i, "written but never requested"));
        }
        for (s, &st) in self.state.iter().enumerate() {
            match st {
                OK => c.ok += 1,
                WRONG => c.wrong += 1,
                _ => c.missing += 1,
            }
            if st != OK && c.first.len() < FIRST {
                let what = if st == WRONG {
                    "gathered property differs from the source"
                } else {
                    "property never gathered"
                };
                c.first.push((u64::from(self.needed[s]), what));
            }
        }
        c
    }

    /// Mark the slot of every write still in flight, oldest first.
    fn settle(&mut self) {
        while let Some(w) = self.verify.pop() {
            self.mark(w);
        }
    }

    /// Mark the slot of one checked write (found now if its search was
    /// not run ahead).
    fn mark(&mut self, w: Pending) {
        let slot = match w.step {
            Step::Slot(s) => s,
            _ => self.find(w.idx),
        };
        match slot {
            Some(s) if w.right => {
                if self.state[s] == NONE {
                    self.state[s] = OK;
                }
            }
            Some(s) => self.state[s] = WRONG,
            None => self.note_unexpected(w.idx),
        }
    }

    /// Run the deferred writes one step on, each [`VERIFY_LAG`] writes
    /// behind the next: the newest's index entry is hinted; the next
    /// reads it and hints both ends of its range of needed idxs; the next
    /// reads the ends and hints where the idx would be were the range
    /// evenly spread (dense runs of columns, as banded matrices need,
    /// make long ranges); the next searches from there and hints its
    /// state byte; and the oldest, when the pipeline is full, is marked.
    fn advance(&mut self) {
        let n = self.verify.len;
        let at = |stage: usize| n.checked_sub(1 + stage * VERIFY_LAG);
        if let Some(w) = at(0).and_then(|i| self.verify.get(i)) {
            if let Some(e) = self.bucket_start.get(self.bucket(w.idx)) {
                prefetch(e);
            }
        }
        if let Some(i) = at(1) {
            let step = self.verify.get(i).map(|w| {
                let b = self.bucket(w.idx);
                let lo = self.bucket_start.get(b).copied().unwrap_or(0);
                let hi = self.bucket_start.get(b + 1).copied().unwrap_or(lo);
                for end in [lo, hi.saturating_sub(1)] {
                    if let Some(v) = self.needed.get(end as usize).filter(|_| lo < hi) {
                        prefetch(v);
                    }
                }
                Step::Range(lo, hi)
            });
            self.set_step(i, step);
        }
        if let Some(i) = at(2) {
            let step = self.verify.get(i).map(|w| match w.step {
                Step::Range(lo, hi) => {
                    let g = self.guess(w.idx, lo, hi);
                    if let Some(v) = self.needed.get(g as usize).filter(|_| lo < hi) {
                        prefetch(v);
                    }
                    Step::Probe(lo, hi, g)
                }
                other => other,
            });
            self.set_step(i, step);
        }
        if let Some(i) = at(3) {
            let step = self.verify.get(i).map(|w| {
                let slot = match w.step {
                    Step::Probe(lo, hi, g) => self.search(w.idx, lo, hi, g),
                    _ => self.find(w.idx),
                };
                if let Some(st) = slot.and_then(|s| self.state.get(s)) {
                    prefetch(st);
                }
                Step::Slot(slot)
            });
            self.set_step(i, step);
        }
        if n == Verify::CAP {
            if let Some(w) = self.verify.pop() {
                self.mark(w);
            }
        }
    }

    /// Record how far the `i`th oldest write in flight has got.
    fn set_step(&mut self, i: usize, step: Option<Step>) {
        if let (Some(w), Some(step)) = (self.verify.get_mut(i), step) {
            w.step = step;
        }
    }

    /// The bucket of idx `idx` (past the index for idxs beyond `u32`).
    fn bucket(&self, idx: u64) -> usize {
        usize::try_from(idx >> self.bucket_shift).unwrap_or(usize::MAX - 1)
    }

    /// Where `idx` would sit in `needed[lo..hi]` (a non-empty range) were
    /// its values evenly spread between its ends: exact in a dense run.
    fn guess(&self, idx: u64, lo: u32, hi: u32) -> u32 {
        let ends = self
            .needed
            .get(lo as usize)
            .zip(self.needed.get(hi as usize - 1));
        let Some((&first, &last)) = ends.filter(|_| lo < hi) else {
            return lo;
        };
        let (first, last) = (u64::from(first), u64::from(last));
        if last == first || idx <= first {
            return lo;
        }
        let span = u64::from(hi - 1 - lo);
        let off = ((idx.min(last) - first) * span / (last - first)) as u32;
        lo + off
    }

    /// Position of `idx` in `needed[lo..hi]`, looking at position `g`
    /// first and then galloping away from it (1, 2, 4, ... positions) on
    /// the side that can hold `idx`, so a close guess is settled within
    /// the cache lines around it.
    fn search(&self, idx: u64, lo: u32, hi: u32, g: u32) -> Option<usize> {
        let idx = u32::try_from(idx).ok()?;
        let range = self.needed.get(lo as usize..hi as usize)?;
        let g = g.checked_sub(lo)? as usize;
        let (from, to) = match range.get(g)?.cmp(&idx) {
            std::cmp::Ordering::Equal => return Some(lo as usize + g),
            // range[below] < idx: idx is in (below, j] for the first
            // j = g + 2^k with range[j] >= idx, or past the end.
            std::cmp::Ordering::Less => {
                let (mut below, mut step) = (g, 1);
                loop {
                    let j = g + step;
                    match range.get(j) {
                        None => break (below + 1, range.len()),
                        Some(&v) if v >= idx => break (below + 1, j + 1),
                        Some(_) => (below, step) = (j, step * 2),
                    }
                }
            }
            // range[above] > idx: idx is in [j, above) for the first
            // j = g - 2^k with range[j] <= idx, or from the start.
            std::cmp::Ordering::Greater => {
                let (mut above, mut step) = (g, 1);
                loop {
                    let Some(j) = g.checked_sub(step) else {
                        break (0, above);
                    };
                    if range[j] <= idx {
                        break (j, above);
                    }
                    (above, step) = (j, step * 2);
                }
            }
        };
        let at = range[from..to].binary_search(&idx).ok()?;
        Some(lo as usize + from + at)
    }

    /// The slot of `idx`, if it is a needed idx.
    fn find(&self, idx: u64) -> Option<usize> {
        u32::try_from(idx).ok().and_then(|i| self.slot(i))
    }

    /// Index of `idx` in `needed`, if it is there.
    fn slot(&self, idx: u32) -> Option<usize> {
        let b = (idx >> self.bucket_shift) as usize;
        let lo = *self.bucket_start.get(b)? as usize;
        let hi = *self.bucket_start.get(b + 1)? as usize;
        let range = self.needed.get(lo..hi)?;
        range.binary_search(&idx).ok().map(|i| lo + i)
    }

    fn dest_len(&self) -> u64 {
        self.cols.max(1).saturating_mul(u64::from(self.prop_len))
    }

    fn regions(&self) -> [Region; 3] {
        [
            Region {
                start: IDX_BASE,
                len: self.idx_bytes().max(8),
                kind: RegionKind::Idxs,
            },
            Region {
                start: DEST_BASE,
                len: self.dest_len(),
                kind: RegionKind::Destination,
            },
            Region {
                start: PROP_BASE,
                len: self.count.saturating_mul(u64::from(self.prop_len)).max(1),
                kind: RegionKind::Properties,
            },
        ]
    }

    fn note_unexpected(&mut self, idx: u64) {
        self.unexpected += 1;
        if self.first_unexpected.len() < FIRST {
            self.first_unexpected.push(idx);
        }
    }
}

impl HostMemory for SimMemory {
    fn region(&self, addr: u64, len: u64) -> Option<Region> {
        self.regions()
            .into_iter()
            .find(|r| r.contains(addr, len.max(1)) || (len == 0 && r.start == addr))
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let len = buf.len() as u64;
        let r = self
            .region(addr, len)
            .ok_or(MemError::Unmapped { addr, len })?;
        let off = addr - r.start;
        match r.kind {
            RegionKind::Idxs => {
                // Idx entries are 8 bytes; serve any byte range of them
                // (entries past the node's remote nonzeros read as 0).
                buf.fill(0);
                let end = off + len;
                self.idxs.scan(off / 8, &mut |ord, c| {
                    let bytes = u64::from(c).to_le_bytes();
                    let (s, e) = (ord * 8, ord * 8 + 8);
                    for at in s.max(off)..e.min(end) {
                        buf[(at - off) as usize] = bytes[(at - s) as usize];
                    }
                    e < end
                });
            }
            RegionKind::Properties => {
                let p = u64::from(self.prop_len.max(1));
                if off % p == 0 && len == p {
                    let idx = self.first + off / p;
                    property_bytes(idx, buf);
                    if self.corrupt == Some(idx) {
                        buf[0] ^= 0xFF;
                    }
                } else {
                    let mut prop = vec![0u8; p as usize];
                    for (k, b) in buf.iter_mut().enumerate() {
                        let at = off + k as u64;
                        let idx = self.first + at / p;
                        property_bytes(idx, &mut prop);
                        if self.corrupt == Some(idx) {
                            prop[0] ^= 0xFF;
                        }
                        *b = prop[(at % p) as usize];
                    }
                }
            }
            RegionKind::Destination => {
                let p = u64::from(self.prop_len.max(1));
                for (k, b) in buf.iter_mut().enumerate() {
                    let at = off + k as u64;
                    let idx = at / p;
                    *b = u32::try_from(idx)
                        .ok()
                        .and_then(|i| self.gathered(i))
                        .map_or(0, |v| v[(at % p) as usize]);
                }
            }
        }
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let len = data.len() as u64;
        let r = self
            .region(addr, len)
            .ok_or(MemError::Unmapped { addr, len })?;
        if r.kind != RegionKind::Destination {
            return Err(MemError::WrongKind {
                addr,
                len,
                kind: r.kind,
                want: RegionKind::Destination,
            });
        }
        self.writes += 1;
        let p = u64::from(self.prop_len);
        let off = addr - DEST_BASE;
        let idx = off / p.max(1);
        if off % p.max(1) != 0 || len != p {
            self.note_unexpected(idx);
            return Ok(());
        }
        let right = is_property(idx, data);
        if self.values.is_none() {
            self.verify.push(Pending {
                idx,
                right,
                step: Step::Looking,
            });
            self.advance();
            return Ok(());
        }
        let slot = u32::try_from(idx).ok().and_then(|i| self.slot(i));
        let Some(s) = slot else {
            self.note_unexpected(idx);
            return Ok(());
        };
        self.mark(Pending {
            idx,
            right,
            step: Step::Slot(Some(s)),
        });
        if let Some(v) = self.values.as_mut() {
            let p = p as usize;
            v[s * p..(s + 1) * p].copy_from_slice(data);
        }
        Ok(())
    }
}

/// How far a deferred write's slot look-up has got.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Its index entry is being loaded.
    Looking,
    /// Its range of needed idxs is `lo..hi`; the ends are being loaded.
    Range(u32, u32),
    /// As `Range`, with the position to look at first being loaded.
    Probe(u32, u32, u32),
    /// Its slot is found (`None`: not a needed idx); its state byte is
    /// being loaded.
    Slot(Option<usize>),
}

/// A checked destination write whose slot is not marked yet.
#[derive(Clone, Copy, Debug)]
struct Pending {
    idx: u64,
    /// Whether it carried the property of `idx`.
    right: bool,
    step: Step,
}

/// The writes in flight, oldest first: a ring of [`Verify::CAP`].
#[derive(Clone, Debug, Default)]
struct Verify {
    ring: [Option<Pending>; Verify::CAP],
    head: usize,
    len: usize,
}

impl Verify {
    /// A write is marked [`VERIFY_LAG`] writes after its slot was found.
    const CAP: usize = 4 * VERIFY_LAG + 1;

    /// Add the newest write (the caller pops when full).
    fn push(&mut self, w: Pending) {
        debug_assert!(self.len < Self::CAP);
        self.ring[(self.head + self.len) % Self::CAP] = Some(w);
        self.len += 1;
    }

    /// Take the oldest write.
    fn pop(&mut self) -> Option<Pending> {
        if self.len == 0 {
            return None;
        }
        let w = self.ring[self.head].take();
        self.head = (self.head + 1) % Self::CAP;
        self.len -= 1;
        w
    }

    /// The `i`th oldest write.
    fn get(&self, i: usize) -> Option<&Pending> {
        (i < self.len).then(|| self.ring[(self.head + i) % Self::CAP].as_ref())?
    }

    /// The `i`th oldest write, to advance it.
    fn get_mut(&mut self, i: usize) -> Option<&mut Pending> {
        (i < self.len).then(|| self.ring[(self.head + i) % Self::CAP].as_mut())?
    }
}

/// The bucket index of sorted `needed` over columns `0..cols`: the
/// smallest shift that makes no more buckets than one per [`PER_BUCKET`]
/// needed idxs (at least one), and each bucket's first position (plus the
/// end).
fn buckets(needed: &[u32], cols: u64) -> (u32, Vec<u32>) {
    let top = needed
        .last()
        .map_or(0, |&m| u64::from(m))
        .max(cols.saturating_sub(1));
    let top = top.min(u64::from(u32::MAX));
    let want = (needed.len() as u64 / PER_BUCKET).max(1);
    let mut shift = 0u32;
    while shift < 32 && (top >> shift) + 1 > want {
        shift += 1;
    }
    let nb = ((top >> shift) + 1) as usize;
    let mut start = vec![0u32; nb + 1];
    for &i in needed {
        start[(i >> shift) as usize + 1] += 1;
    }
    for b in 0..nb {
        start[b + 1] += start[b];
    }
    (shift, start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_checks() {
        // Columns 0..10, this node owns 4..6, K = 2 (8-byte properties).
        let mut m = SimMemory::new(vec![9, 1, 9, 3], 10, 8, 4, 2, true);
        assert_eq!(m.needed(), &[1, 3, 9]);
        let mut w = [0u8; 16];
        m.read(IDX_BASE + 8, &mut w).unwrap();
        assert_eq!(u64::from_le_bytes(w[..8].try_into().unwrap()), 1);
        assert_eq!(u64::from_le_bytes(w[8..].try_into().unwrap()), 9);
        let mut p = [0u8; 8];
        m.read(PROP_BASE + 8, &mut p).unwrap();
        assert!(is_property(5, &p));
        assert!(m.read(PROP_BASE + 16, &mut p).is_err());
        assert_eq!(
            m.region(DEST_BASE + 72, 8).map(|r| r.kind),
            Some(RegionKind::Destination)
        );
        let mut good = [0u8; 8];
        property_bytes(9, &mut good);
        m.write(DEST_BASE + 72, &good).unwrap();
        assert_eq!(m.gathered(9), Some(&good[..]));
        let mut bad = [0u8; 8];
        property_bytes(3, &mut bad);
        bad[7] ^= 1;
        m.write(DEST_BASE + 24, &bad).unwrap();
        // Column 2 was never requested.
        m.write(DEST_BASE + 16, &good).unwrap();
        let c = m.check();
        assert_eq!(
            (c.needed, c.ok, c.wrong, c.missing, c.unexpected),
            (3, 1, 1, 1, 1)
        );
        assert!(!c.passed());
        assert_eq!(c.first[0], (2, "written but never requested"));
        assert!(m.write(IDX_BASE, &good).is_err());
        m.corrupt(Some(4));
        m.read(PROP_BASE, &mut p).unwrap();
        assert!(!is_property(4, &p));
    }

    /// Slots marked a few writes late (without values) end as they do
    /// when marked at once (with values): same counts, same first
    /// problems in the same order, whether or not writes are still in
    /// flight when the check runs.
    #[test]
    fn deferred_marking_checks_as_immediate_marking() {
        let mut rng = crate::sim::rng::Xoshiro256::seed_from_u64(11);
        let idxs: Vec<u32> = (0..400).map(|_| rng.below(5000) as u32).collect();
        for writes in [0usize, 1, 5, 12, 13, 14, 600] {
            let mut late = SimMemory::new(idxs.clone(), 5000, 8, 0, 0, false);
            let mut now = SimMemory::new(idxs.clone(), 5000, 8, 0, 0, true);
            for _ in 0..writes {
                let idx = rng.below(5000);
                let mut p = [0u8; 8];
                property_bytes(idx, &mut p);
                if rng.below(10) == 0 {
                    p[3] ^= 1;
                }
                for m in [&mut late, &mut now] {
                    m.write(DEST_BASE + idx * 8, &p).unwrap();
                }
            }
            let (a, b) = (late.check(), now.check());
            assert_eq!(a, b, "{writes} writes");
            assert_eq!(a.ok + a.wrong + a.missing, a.needed);
            assert_eq!(late.check(), b, "a second check, {writes} writes");
        }
    }

    #[test]
    fn bucket_index_finds_every_needed_idx_and_nothing_else() {
        // Sparse, clustered and edge values, over a range wider than `cols`.
        let idxs: Vec<u32> = vec![0, 1, 2, 3, 700, 701, 999, 5000, 5001, 65_535];
        for cols in [0u64, 1, 10, 1000, 70_000] {
            let m = SimMemory::new(idxs.clone(), cols, 4, 0, 0, false);
            for i in 0..70_000u32 {
                assert_eq!(
                    m.slot(i),
                    m.needed().binary_search(&i).ok(),
                    "cols {cols} idx {i}"
                );
            }
            assert!(m.bucket_start.len() <= m.needed().len() + 2);
        }
        let empty = SimMemory::new(Vec::new(), 100, 4, 0, 0, false);
        assert_eq!(empty.slot(5), None);
    }

    /// The interpolated first probe lands inside the range, on the idx
    /// itself in a dense run, and the search from any probe finds what a
    /// binary search of the whole list finds.
    #[test]
    fn search_from_any_probe_finds_what_binary_search_finds() {
        // A dense run, a sparse stretch and another run: long buckets.
        let mut idxs: Vec<u32> = (1000..3000).collect();
        idxs.extend((0..40).map(|k| 5000 + 97 * k));
        idxs.extend(9000..9100);
        let m = SimMemory::new(idxs, 10_000, 4, 0, 0, false);
        let needed = m.needed().to_vec();
        for i in (0..10_050u64)
            .step_by(7)
            .chain([999, 1000, 2999, 3000, 9099, 9100])
        {
            let want = u32::try_from(i)
                .ok()
                .and_then(|i| needed.binary_search(&i).ok());
            let b = m.bucket(i);
            let lo = m.bucket_start.get(b).copied().unwrap_or(0);
            let hi = m.bucket_start.get(b + 1).copied().unwrap_or(lo);
            assert_eq!(m.find(i), want, "idx {i}");
            if lo == hi {
                assert_eq!(want, None, "idx {i} in an empty bucket");
                continue;
            }
            let g = m.guess(i, lo, hi);
            assert!(
                (lo..hi).contains(&g),
                "idx {i}: guess {g} outside {lo}..{hi}"
            );
            if (1000..3000).contains(&i) {
                assert_eq!(needed[g as usize], i as u32, "dense run, idx {i}");
            }
            for probe in (lo..hi).step_by(13).chain([g, hi - 1]) {
                assert_eq!(m.search(i, lo, hi, probe), want, "idx {i} from {probe}");
            }
        }
    }

    /// The streamed idx array reads as the materialised list of remote
    /// nonzeros would, in order, out of order, in unaligned pieces and
    /// from several interleaved readers.
    #[test]
    fn streamed_idx_array_equals_the_remote_list() {
        let mut rng = crate::sim::rng::Xoshiro256::seed_from_u64(7);
        // 5,000 entries over columns 0..1000; the node owns 300..700 and
        // its slice is entries 1000..4000.
        let all: Vec<u32> = (0..5000).map(|_| rng.below(1000) as u32).collect();
        let local = 300..700u32;
        let want: Vec<u32> = all[1000..4000]
            .iter()
            .copied()
            .filter(|c| !local.contains(c))
            .collect();
        let m = SimMemory::from_columns(
            Arc::new(all),
            1000..4000,
            local,
            1000,
            4,
            300,
            400,
            false,
            &mut Vec::new(),
        );
        assert_eq!(m.idx_count(), want.len() as u64);
        assert_eq!(m.idxs().collect::<Vec<_>>(), want);
        let mut sorted = want.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(m.needed(), &sorted[..]);
        let entry = |i: usize| u64::from(want.get(i).copied().unwrap_or(0));
        let read = |first: usize, n: usize| {
            let mut b = vec![0u8; n * 8];
            m.read(IDX_BASE + first as u64 * 8, &mut b).unwrap();
            b.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect::<Vec<_>>()
        };
        // Four readers, each through its own range in chunks, interleaved.
        let quarter = want.len() / 4;
        for step in 0..(quarter / 37 + 1) {
            for r in 0..4 {
                let first = r * quarter + step * 37;
                let n = 37.min(want.len() - first.min(want.len()));
                if n == 0 {
                    continue;
                }
                let got = read(first, n);
                assert!(got.iter().enumerate().all(|(k, &v)| v == entry(first + k)));
            }
        }
        // Random single entries and an unaligned byte range.
        for _ in 0..500 {
            let i = rng.below(want.len() as u64) as usize;
            assert_eq!(read(i, 1), vec![entry(i)]);
        }
        let mut b = [0u8; 13];
        m.read(IDX_BASE + 8 * 100 + 3, &mut b).unwrap();
        let mut flat = Vec::new();
        for i in 100..103 {
            flat.extend_from_slice(&entry(i).to_le_bytes());
        }
        assert_eq!(&b[..], &flat[3..16]);
        // Past the end of the array: unmapped.
        let mut b = [0u8; 8];
        assert!(m.read(IDX_BASE + want.len() as u64 * 8, &mut b).is_err());
    }
}
