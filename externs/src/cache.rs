//! The in-switch Property Cache (§6.2.2, Figure 9, Table 5).
//!
//! A set-associative, LRU cache of properties keyed by property idx, built from
//! 32 *segments* that each supply 16 bytes of a property. The control plane
//! configures one *mode* (property length M ∈ {16, 32, 64, 128, 256, 512} B)
//! before a kernel; an access then activates M/16 adjacent segments, so the
//! whole capacity is usable whatever M is.
//!
//! # Geometry
//!
//! With total size T and W ways, each segment has S = T / 32 / 16 / W sets
//! of W ways of 16 B. The idx is split as
//!
//! ```text
//! idx = [ tag | 5 segment bits | log2(S) set bits ]
//! ```
//!
//! In mode M the segment selector ignores the low log2(M/16) segment bits
//! (see [`segment_enable`]); those bits become the low bits of the tag, so two
//! idxs that differ only there never alias. (A consequence of ignoring the
//! *low* segment bits: a dense idx range shorter than 32 × S does not reach
//! every segment group in modes above 16 B; the wide idx ranges of sparse
//! matrix columns do.) Mode M therefore has 512/M
//! *segment groups* × S sets × W ways = T/M lines of M bytes (Table 5: 32 MiB,
//! 16 ways, 64 B → 524,288 properties).
//!
//! # Timing
//!
//! The cache is pipelined (one access per cycle); each access completes after
//! a fixed latency (16 switch cycles by default), returned as `ready_at`.
//!
//! # Storage
//!
//! One contiguous data array (T bytes), one tag array and one byte of LRU
//! rank per line, allocated at construction; no allocation per access. The
//! `Unbounded` option (for capacity sweeps) keeps every property in a hash
//! map and never evicts; `Disabled` (or size 0) misses on every lookup.

use thiserror::Error;

use crate::fxhash::{map_with_capacity, FxHashMap};
use crate::hint;
use crate::time::{Clock, Time};

/// Number of segments.
pub const SEGMENTS: u32 = 32;
/// Bytes each segment supplies per access.
pub const SEGMENT_BYTES: u32 = 16;
/// Smallest property length (one segment).
pub const MIN_MODE: u32 = SEGMENT_BYTES;
/// Largest property length (all 32 segments).
pub const MAX_MODE: u32 = SEGMENTS * SEGMENT_BYTES;
/// Largest supported associativity (LRU ranks are kept in one byte).
pub const MAX_WAYS: u32 = 128;

const INVALID: u8 = u8::MAX;

/// Errors of configuration and use.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CacheError {
    /// A mode that is not a power of two in 16..=512.
    #[error("cache mode {mode} B is not a power of two in 16..=512")]
    BadMode {
        /// The requested property length.
        mode: u32,
    },
    /// A property whose length is not the configured mode (the switch counts
    /// and drops such PRs).
    #[error("property of {got} bytes, cache configured for {expected}")]
    WrongLength {
        /// The mode.
        expected: u32,
        /// The property's length.
        got: usize,
    },
    /// Ways outside 1..=128.
    #[error("{ways} ways: must be 1..={MAX_WAYS}")]
    BadWays {
        /// The requested ways.
        ways: u32,
    },
    /// A size that does not give a power-of-two number of sets per segment.
    #[error("cache size {total} B with {ways} ways: size must be 512 × ways × 2^k bytes")]
    BadSize {
        /// The requested size.
        total: u64,
        /// The requested ways.
        ways: u32,
    },
}

/// Total capacity of a cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheCapacity {
    /// No cache: every lookup misses, nothing is stored.
    Disabled,
    /// A real cache of this many bytes (0 = disabled).
    Bytes(u64),
    /// Unlimited capacity, never evicts (for sweeps such as Figure 18).
    Unbounded,
}

/// Cache geometry and timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// Total size.
    pub capacity: CacheCapacity,
    /// Associativity.
    pub ways: u32,
    /// Access latency.
    pub latency: Time,
}

impl CacheConfig {
    /// Table 5: 32 MiB, 16 ways, 16 cycles at 2 GHz (8 ns).
    pub fn table5() -> CacheConfig {
        CacheConfig {
            capacity: CacheCapacity::Bytes(32 << 20),
            ways: 16,
            latency: Clock::from_mhz(2_000).cycles(16),
        }
    }
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig::table5()
    }
}

/// A validated property length (the cache mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheMode(u32);

impl CacheMode {
    /// Mode `bytes` (a power of two in 16..=512).
    pub const fn new(bytes: u32) -> Result<CacheMode, CacheError> {
        if bytes.is_power_of_two() && bytes >= MIN_MODE && bytes <= MAX_MODE {
            Ok(CacheMode(bytes))
        } else {
            Err(CacheError::BadMode { mode: bytes })
        }
    }
    /// The mode for properties of `len` bytes: `len` itself (a power of
    /// two in 16..=512), or the 16-byte mode for shorter properties, each of
    /// which then takes one 16-byte segment, zero-padded (K = 1..3 four-byte
    /// values).
    pub const fn for_property(len: u32) -> Result<CacheMode, CacheError> {
        if len >= 1 && len < MIN_MODE {
            Ok(CacheMode(MIN_MODE))
        } else {
            CacheMode::new(len)
        }
    }
    /// Whether properties of `len` bytes are cached in this mode (see
    /// [`Self::for_property`]).
    pub const fn holds(self, len: u32) -> bool {
        len == self.0 || (self.0 == MIN_MODE && len >= 1 && len < MIN_MODE)
    }
    /// Segment bytes per property (a shorter property is padded to this).
    pub const fn bytes(self) -> u32 {
        self.0
    }
    /// Segments one access activates (M / 16).
    pub const fn segments(self) -> u32 {
        self.0 / SEGMENT_BYTES
    }
    /// Low segment bits the selector ignores: log2(M / 16).
    pub const fn ignored_segment_bits(self) -> u32 {
        self.segments().trailing_zeros()
    }
}

/// The Figure 9 segment selector: the 32 enable bits (bit `i` = segment `i`)
/// for `segment_bits` (the idx's 5 segment bits; higher bits are ignored) in
/// `mode`. Mode M enables M/16 adjacent segments, aligned on M/16: in 32 B
/// mode, segment bits `1110X` enable segments 28 and 29 (the paper's
/// "0…01100" read with segment 0 on the left).
pub const fn segment_enable(mode: CacheMode, segment_bits: u32) -> u32 {
    let n = mode.segments();
    let first = (segment_bits & (SEGMENTS - 1)) & !(n - 1);
    let ones = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
    ones << first
}

/// Result of a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lookup<'a> {
    /// The property on a hit.
    pub hit: Option<&'a [u8]>,
    /// When the result is available (`now + latency`).
    pub ready_at: Time,
}

/// What an insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertOutcome {
    /// Stored in a free way.
    Inserted,
    /// Already cached: nothing changed except its LRU position.
    Present,
    /// Stored in place of the set's least recently used property, whose idx is given.
    Evicted(u64),
    /// The cache is disabled; nothing was stored.
    Disabled,
}

/// Counters a user reads after a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups.
    pub lookups: u64,
    /// Lookups that hit.
    pub hits: u64,
    /// Lookups that missed.
    pub misses: u64,
    /// Inserts that stored a new property (including those that evicted).
    pub inserts: u64,
    /// Inserts that evicted another property.
    pub evictions: u64,
    /// Inserts that found the property already cached.
    pub present: u64,
    /// Inserts rejected because the property length was not the mode.
    pub wrong_length: u64,
    /// Control-plane invalidations.
    pub invalidations: u64,
}

#[derive(Clone, Debug)]
struct Finite {
    /// Sets per segment (a power of two).
    sets: u64,
    set_bits: u32,
    ways: usize,
    /// Tag of each line (`(group × sets + set) × ways + way`).
    tags: Vec<u64>,
    /// Low byte of each line's tag: a 16-way set's candidates are found
    /// with one byte compare, then confirmed against the full tag.
    keys: Vec<u8>,
    /// LRU rank of each line (0 = most recent), `INVALID` if empty.
    ranks: Vec<u8>,
    /// Property bytes, `line × mode` bytes in.
    data: Vec<u8>,
}

#[derive(Clone, Debug)]
enum Store {
    Disabled,
    Finite(Finite),
    Unbounded {
        index: FxHashMap<u64, usize>,
        data: Vec<u8>,
    },
}

/// The Property Cache of one middle pipe.
#[derive(Clone, Debug)]
pub struct PropertyCache {
    config: CacheConfig,
    mode: CacheMode,
    store: Store,
    stats: CacheStats,
}

/// Where an idx lives in the finite cache.
#[derive(Clone, Copy)]
struct Slot {
    /// First line of the set.
    base: usize,
    tag: u64,
}

impl Finite {
    fn new(total: u64, ways: u32) -> Result<Finite, CacheError> {
        let per_way = u64::from(SEGMENTS * SEGMENT_BYTES) * u64::from(ways);
        if total % per_way != 0 || !(total / per_way).is_power_of_two() {
            return Err(CacheError::BadSize { total, ways });
        }
        let sets = total / per_way;
        let max_lines = usize::try_from(total / u64::from(MIN_MODE))
            .map_err(|_| CacheError::BadSize { total, ways })?;
        let bytes = usize::try_from(total).map_err(|_| CacheError::BadSize { total, ways })?;
        Ok(Finite {
            sets,
            set_bits: sets.trailing_zeros(),
            ways: ways as usize,
            tags: vec![0; max_lines],
            keys: vec![0; max_lines],
            ranks: vec![INVALID; max_lines],
            data: vec![0; bytes],
        })
    }

    #[inline]
    fn slot(&self, mode: CacheMode, idx: u64) -> Slot {
        let g = mode.ignored_segment_bits();
        let set = idx & (self.sets - 1);
        let above = idx >> self.set_bits; // [tag | segment bits]
        let seg = above & u64::from(SEGMENTS - 1);
        let group = seg >> g;
        let tag = ((above >> 5) << g) | (seg & ((1 << g) - 1));
        let set_index = group * self.sets + set;
        Slot {
            base: set_index as usize * self.ways,
            tag,
        }
    }

    /// Rebuild the idx stored at line `line` (with tag `tag`) in `mode`.
    fn idx_of(&self, mode: CacheMode, line: usize, tag: u64) -> u64 {
        let g = mode.ignored_segment_bits();
        let set_index = (line / self.ways) as u64;
        let group = set_index / self.sets;
        let set = set_index % self.sets;
        let seg = (group << g) | (tag & ((1 << g) - 1));
        let hi = tag >> g;
        (((hi << 5) | seg) << self.set_bits) | set
    }

    /// The way of `s` holding its tag, if valid (the lowest such way).
    /// Branch-free over the ways (no early exit), so lookups of independent
    /// idxs overlap in the CPU; 16 ways (Table 5) take a fixed-size path the
    /// compiler turns into a few vector compares.
    #[inline]
    fn find(&self, s: Slot) -> Option<usize> {
        if self.ways == 16 {
            let keys: &[u8; 16] = self.keys[s.base..s.base + 16].try_into().ok()?;
            let ranks: &[u8; 16] = self.ranks[s.base..s.base + 16].try_into().ok()?;
            let mut cand = candidates(keys, ranks, s.tag as u8);
            while cand != 0 {
                let line = s.base + cand.trailing_zeros() as usize;
                if self.tags[line] == s.tag {
                    return Some(line);
                }
                cand &= cand - 1;
            }
            return None;
        }
        let tags = &self.tags[s.base..s.base + self.ways];
        let ranks = &self.ranks[s.base..s.base + self.ways];
        let mut found = usize::MAX;
        for (w, (&t, &r)) in tags.iter().zip(ranks).enumerate().rev() {
            if t == s.tag && r != INVALID {
                found = w;
            }
        }
        (found != usize::MAX).then(|| s.base + found)
    }

    /// Hint the CPU to load `len` bytes of property data from `at`, up to
    /// 512 (a whole K = 128 property, eight lines).
    #[inline]
    fn prefetch_bytes(&self, at: usize, len: usize) {
        if let Some(d) = self.data.get(at..) {
            for line in d.chunks(64).take(len.min(512).div_ceil(64)) {
                hint::prefetch(&line[0]);
            }
        }
    }

    /// Hint the CPU to load the tags (two lines: 16 ways of 8 bytes), LRU
    /// ranks and tag keys of `s`'s set.
    #[inline]
    fn prefetch(&self, s: Slot) {
        for t in self
            .tags
            .get(s.base..)
            .into_iter()
            .flat_map(|t| t.iter().step_by(8).take(2))
        {
            hint::prefetch(t);
        }
        if let Some(r) = self.ranks.get(s.base) {
            hint::prefetch(r);
        }
        if let Some(k) = self.keys.get(s.base) {
            hint::prefetch(k);
        }
    }

    /// Make `line` the most recently used of its set (which starts at
    /// `base`): every line more recent than it ages by one. `line` may be
    /// empty (a new property entering the set): then every valid line ages,
    /// as `INVALID` is above every valid rank. Empty lines never change
    /// (no valid rank is above them).
    #[inline]
    fn touch(&mut self, base: usize, line: usize) {
        let old = self.ranks[line];
        if self.ways == 16 {
            if let Ok(ranks) = <&mut [u8; 16]>::try_from(&mut self.ranks[base..base + 16]) {
                age_fixed(ranks, old);
            }
        } else {
            for r in &mut self.ranks[base..base + self.ways] {
                *r += u8::from(*r < old);
            }
        }
        self.ranks[line] = 0;
    }

    /// The way a new property takes in the set at `base`: the first empty
    /// way, or (a full set's ranks are a permutation of 0..ways) the least
    /// recently used one. Both are the first way of highest rank, since
    /// `INVALID` is above every valid rank.
    #[inline]
    fn victim(&self, base: usize) -> usize {
        if self.ways == 16 {
            if let Ok(ranks) = <&[u8; 16]>::try_from(&self.ranks[base..base + 16]) {
                let top = ranks.iter().copied().fold(0, u8::max);
                return ranks.iter().position(|&r| r == top).unwrap_or(0);
            }
        }
        let ranks = &self.ranks[base..base + self.ways];
        let top = ranks.iter().copied().max().unwrap_or(INVALID);
        ranks.iter().position(|&r| r == top).unwrap_or(0)
    }

    fn invalidate(&mut self) {
        self.ranks.fill(INVALID);
    }
}

/// Bit `w` set when way `w` of a 16-way set is valid and its tag's low
/// byte is `key` (SSE2: one compare of the 16 keys, one of the 16 ranks).
#[cfg(target_arch = "x86_64")]
#[inline]
fn candidates(keys: &[u8; 16], ranks: &[u8; 16], key: u8) -> u32 {
    use core::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86_64 baseline; each unaligned 16-byte
    // load reads exactly one of the two 16-byte arrays.
    let (same, empty) = unsafe {
        let k = _mm_loadu_si128(keys.as_ptr().cast());
        let r = _mm_loadu_si128(ranks.as_ptr().cast());
        (
            _mm_movemask_epi8(_mm_cmpeq_epi8(k, _mm_set1_epi8(key as i8))) as u32,
            _mm_movemask_epi8(_mm_cmpeq_epi8(r, _mm_set1_epi8(INVALID as i8))) as u32,
        )
    };
    same & !empty & 0xFFFF
}

/// Bit `w` set when way `w` of a 16-way set is valid and its tag's low
/// byte is `key`.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn candidates(keys: &[u8; 16], ranks: &[u8; 16], key: u8) -> u32 {
    let mut m = 0u32;
    for (w, (&k, &r)) in keys.iter().zip(ranks).enumerate() {
        m |= u32::from((k == key) & (r != INVALID)) << w;
    }
    m
}

/// Age every rank of a 16-way set below `old` by one (one vector op).
#[inline]
fn age_fixed(ranks: &mut [u8; 16], old: u8) {
    for r in ranks.iter_mut() {
        *r += u8::from(*r < old);
    }
}

impl PropertyCache {
    /// A cache with geometry `config`, configured for `mode`.
    pub fn new(config: CacheConfig, mode: CacheMode) -> Result<PropertyCache, CacheError> {
        if config.ways == 0 || config.ways > MAX_WAYS {
            return Err(CacheError::BadWays { ways: config.ways });
        }
        let store = match config.capacity {
            CacheCapacity::Disabled | CacheCapacity::Bytes(0) => Store::Disabled,
            CacheCapacity::Bytes(total) => Store::Finite(Finite::new(total, config.ways)?),
            CacheCapacity::Unbounded => Store::Unbounded {
                index: map_with_capacity(1024),
                data: Vec::new(),
            },
        };
        Ok(PropertyCache {
            config,
            mode,
            store,
            stats: CacheStats::default(),
        })
    }

    /// The geometry.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// The configured property length.
    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    /// Access latency.
    pub fn latency(&self) -> Time {
        self.config.latency
    }

    /// Sets per segment (S), for a finite cache.
    pub fn sets_per_segment(&self) -> Option<u64> {
        match &self.store {
            Store::Finite(f) => Some(f.sets),
            _ => None,
        }
    }

    /// Properties the cache holds in the current mode (T / M): `Some(0)`
    /// when disabled, `None` when unbounded.
    pub fn capacity(&self) -> Option<u64> {
        match &self.store {
            Store::Disabled => Some(0),
            Store::Finite(f) => Some(f.data.len() as u64 / u64::from(self.mode.bytes())),
            Store::Unbounded { .. } => None,
        }
    }

    /// Properties currently cached.
    pub fn occupancy(&self) -> u64 {
        match &self.store {
            Store::Disabled => 0,
            Store::Finite(f) => {
                let lines = f.data.len() / self.mode.bytes() as usize;
                f.ranks[..lines].iter().filter(|&&r| r != INVALID).count() as u64
            }
            Store::Unbounded { index, .. } => index.len() as u64,
        }
    }

    /// Counters.
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Zero the counters.
    pub fn reset_stats(&mut self) {
        self.stats = CacheStats::default();
    }

    /// Control plane: forget every property (before a kernel).
    pub fn invalidate_all(&mut self) {
        self.stats.invalidations += 1;
        match &mut self.store {
            Store::Disabled => {}
            Store::Finite(f) => f.invalidate(),
            Store::Unbounded { index, data } => {
                index.clear();
                data.clear();
            }
        }
    }

    /// Control plane: set the property length for the next kernel. Always
    /// invalidates the cache.
    pub fn configure(&mut self, mode: CacheMode) {
        self.mode = mode;
        self.invalidate_all();
    }

    /// Look `idx` up at `now`. A hit makes it the most recently used of its set.
    #[inline]
    pub fn lookup(&mut self, now: Time, idx: u64) -> Lookup<'_> {
        let ready_at = now + self.config.latency;
        self.stats.lookups += 1;
        let m = self.mode.bytes() as usize;
        let hit = match &mut self.store {
            Store::Disabled => None,
            Store::Finite(f) => {
                let s = f.slot(self.mode, idx);
                match f.find(s) {
                    Some(line) => {
                        f.touch(s.base, line);
                        Some(&f.data[line * m..line * m + m])
                    }
                    None => None,
                }
            }
            Store::Unbounded { index, data } => index.get(&idx).map(|&off| &data[off..off + m]),
        };
        if hit.is_some() {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        Lookup { hit, ready_at }
    }

    /// A performance hint with no effect on results: start loading the
    /// cache set of `idx` from memory. The hardware cache is pipelined (one
    /// access per cycle, each taking the full latency); a software middle
    /// pipe gets the same overlap by calling `prefetch` for a PR a few
    /// positions ahead of the one it looks up or inserts.
    #[inline]
    pub fn prefetch(&self, idx: u64) {
        if let Store::Finite(f) = &self.store {
            f.prefetch(f.slot(self.mode, idx));
        }
    }

    /// Second-stage performance hint, no effect on results: if `idx` is
    /// cached, start loading its property bytes. Call it for a PR whose set
    /// was [`Self::prefetch`]ed a few PRs earlier (so the tag check does not
    /// wait for memory) and a few PRs before its lookup.
    #[inline]
    pub fn prefetch_line(&self, idx: u64) {
        if let Store::Finite(f) = &self.store {
            if let Some(line) = f.find(f.slot(self.mode, idx)) {
                f.prefetch_bytes(
                    line * self.mode.bytes() as usize,
                    self.mode.bytes() as usize,
                );
            }
        }
    }

    /// The cached property for `idx`, without touching LRU state or counters.
    pub fn peek(&self, idx: u64) -> Option<&[u8]> {
        let m = self.mode.bytes() as usize;
        match &self.store {
            Store::Disabled => None,
            Store::Finite(f) => f
                .find(f.slot(self.mode, idx))
                .map(|line| &f.data[line * m..line * m + m]),
            Store::Unbounded { index, data } => index.get(&idx).map(|&off| &data[off..off + m]),
        }
    }

    /// Store `data` (the mode's length, or shorter in the 16-byte mode:
    /// [`CacheMode::holds`]; padded with zeros) under `idx` at `now`. If the
    /// idx is present nothing is written and it becomes most recently used;
    /// otherwise a free way is used, or the set's LRU property is evicted.
    /// The outcome is returned at once; like a lookup, the write occupies
    /// the pipeline until `now + latency()`, which nothing observes.
    #[inline]
    pub fn insert(
        &mut self,
        _now: Time,
        idx: u64,
        data: &[u8],
    ) -> Result<InsertOutcome, CacheError> {
        let m = self.mode.bytes() as usize;
        if !self.mode.holds(data.len() as u32) {
            self.stats.wrong_length += 1;
            return Err(CacheError::WrongLength {
                expected: self.mode.bytes(),
                got: data.len(),
            });
        }
        let outcome = match &mut self.store {
            Store::Disabled => InsertOutcome::Disabled,
            Store::Finite(f) => {
                let s = f.slot(self.mode, idx);
                if let Some(line) = f.find(s) {
                    f.touch(s.base, line);
                    InsertOutcome::Present
                } else {
                    let line = s.base + f.victim(s.base);
                    let outcome = if f.ranks[line] == INVALID {
                        InsertOutcome::Inserted
                    } else {
                        InsertOutcome::Evicted(f.idx_of(self.mode, line, f.tags[line]))
                    };
                    f.touch(s.base, line);
                    f.tags[line] = s.tag;
                    f.keys[line] = s.tag as u8;
                    let seg = &mut f.data[line * m..line * m + m];
                    seg[..data.len()].copy_from_slice(data);
                    seg[data.len()..].fill(0);
                    outcome
                }
            }
            Store::Unbounded { index, data: store } => match index.entry(idx) {
                std::collections::hash_map::Entry::Occupied(_) => InsertOutcome::Present,
                std::collections::hash_map::Entry::Vacant(v) => {
                    let off = store.len();
                    v.insert(off);
                    store.extend_from_slice(data);
                    store.resize(off + m, 0);
                    InsertOutcome::Inserted
                }
            },
        };
        match outcome {
            InsertOutcome::Inserted => self.stats.inserts += 1,
            InsertOutcome::Evicted(_) => {
                self.stats.inserts += 1;
                self.stats.evictions += 1;
            }
            InsertOutcome::Present => self.stats.present += 1,
            InsertOutcome::Disabled => {}
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(m: u32) -> CacheMode {
        CacheMode::new(m).unwrap()
    }

    fn cache(total: u64, ways: u32, m: u32) -> PropertyCache {
        let cfg = CacheConfig {
            capacity: CacheCapacity::Bytes(total),
            ways,
            latency: Time::from_ns(8),
        };
        PropertyCache::new(cfg, mode(m)).unwrap()
    }

    fn prop(m: u32, v: u64) -> Vec<u8> {
        (0..m as u64)
            .map(|i| (v.wrapping_mul(31) + i) as u8)
            .collect()
    }

    #[test]
    fn segment_selector_examples() {
        // Figure 9 / §6.2.2: 32 B mode, segment bits 1110X -> segments 28, 29.
        for x in [0b11100, 0b11101] {
            assert_eq!(segment_enable(mode(32), x), (1 << 28) | (1 << 29));
        }
        // The paper's string, segment 0 on the left.
        let s: String = (0..32)
            .map(|i| {
                if segment_enable(mode(32), 0b11101) >> i & 1 == 1 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        assert!(
            s.ends_with("01100") && s[..27].chars().all(|c| c == '0'),
            "{s}"
        );
        // 16 B: exactly the addressed segment.
        for x in 0..32 {
            assert_eq!(segment_enable(mode(16), x), 1 << x);
        }
        // 512 B: all segments, whatever the bits.
        for x in 0..32 {
            assert_eq!(segment_enable(mode(512), x), u32::MAX);
        }
        assert_eq!(segment_enable(mode(64), 0b00110), 0b1111 << 4);
        assert_eq!(segment_enable(mode(256), 0b10001), 0xFFFF_0000);
        assert_eq!(segment_enable(mode(16), 0b100000 | 3), 1 << 3);
    }

    #[test]
    fn modes() {
        for m in [16, 32, 64, 128, 256, 512] {
            assert_eq!(CacheMode::new(m).unwrap().bytes(), m);
        }
        for m in [0, 8, 48, 1024, u32::MAX] {
            assert_eq!(CacheMode::new(m), Err(CacheError::BadMode { mode: m }));
        }
    }

    #[test]
    fn table5_capacity() {
        let c = PropertyCache::new(CacheConfig::table5(), mode(64)).unwrap();
        assert_eq!(c.capacity(), Some(524_288));
        assert_eq!(c.sets_per_segment(), Some(4096));
        assert_eq!(c.latency(), Time::from_ns(8));
        let c16 = PropertyCache::new(CacheConfig::table5(), mode(16)).unwrap();
        assert_eq!(c16.capacity(), Some(2 << 20));
    }

    #[test]
    fn hit_after_insert_and_latency() {
        let mut c = cache(64 << 10, 4, 64);
        let now = Time::from_ns(100);
        let l = c.lookup(now, 12345);
        assert_eq!((l.hit, l.ready_at), (None, Time::from_ns(108)));
        assert_eq!(
            c.insert(now, 12345, &prop(64, 1)),
            Ok(InsertOutcome::Inserted)
        );
        assert_eq!(c.lookup(now, 12345).hit, Some(&prop(64, 1)[..]));
        assert_eq!(
            c.insert(now, 12345, &prop(64, 2)),
            Ok(InsertOutcome::Present)
        );
        assert_eq!(c.peek(12345), Some(&prop(64, 1)[..]));
        assert_eq!(
            c.insert(now, 1, &[0; 63]),
            Err(CacheError::WrongLength {
                expected: 64,
                got: 63
            })
        );
        let s = *c.stats();
        assert_eq!(
            (
                s.lookups,
                s.hits,
                s.misses,
                s.inserts,
                s.present,
                s.wrong_length
            ),
            (2, 1, 1, 1, 1, 1)
        );
        assert_eq!(c.occupancy(), 1);
    }

    #[test]
    fn lru_eviction_order_two_way() {
        // 2 ways, 1 set per segment: 512 × 2 = 1 KiB. In 16 B mode, idxs
        // with equal segment bits (idx mod 32) share a set.
        let mut c = cache(1024, 2, 16);
        assert_eq!(c.sets_per_segment(), Some(1));
        let t = Time::ZERO;
        let (a, b, d) = (5, 5 + 32, 5 + 64);
        assert_eq!(c.insert(t, a, &prop(16, a)), Ok(InsertOutcome::Inserted));
        assert_eq!(c.insert(t, b, &prop(16, b)), Ok(InsertOutcome::Inserted));
        // Touch a: b becomes LRU.
        assert!(c.lookup(t, a).hit.is_some());
        assert_eq!(c.insert(t, d, &prop(16, d)), Ok(InsertOutcome::Evicted(b)));
        assert!(c.peek(b).is_none());
        // Now a is LRU (d was just inserted).
        assert_eq!(c.insert(t, b, &prop(16, b)), Ok(InsertOutcome::Evicted(a)));
        assert_eq!(c.peek(d), Some(&prop(16, d)[..]));
        assert_eq!(c.peek(b), Some(&prop(16, b)[..]));
        // Another set is unaffected.
        assert_eq!(c.insert(t, 6, &prop(16, 6)), Ok(InsertOutcome::Inserted));
        assert_eq!(c.stats().evictions, 2);
    }

    #[test]
    fn ignored_segment_bits_are_part_of_the_tag() {
        // 32 B mode: idxs 28 and 29 (segment bits 1110X, set bits none) map to
        // the same segment pair and set, but must not alias.
        let mut c = cache(1024, 2, 32);
        let t = Time::ZERO;
        c.insert(t, 28, &prop(32, 28)).unwrap();
        assert!(c.lookup(t, 29).hit.is_none());
        c.insert(t, 29, &prop(32, 29)).unwrap();
        assert_eq!(c.peek(28), Some(&prop(32, 28)[..]));
        assert_eq!(c.peek(29), Some(&prop(32, 29)[..]));
        // They do share a set: a third idx of that pair's set evicts the LRU (28).
        assert_eq!(
            c.insert(t, 28 + 32, &prop(32, 60)),
            Ok(InsertOutcome::Evicted(28))
        );
        assert_eq!(
            c.insert(t, 29 + 64, &prop(32, 93)),
            Ok(InsertOutcome::Evicted(29))
        );
    }

    #[test]
    fn evicted_idx_is_reconstructed_exactly() {
        // 4 sets per segment, 1 way: every idx in one (group, set) evicts the previous.
        let mut c = cache(512 * 4, 1, 64);
        let t = Time::ZERO;
        let base: u64 = 0xDEAD_BEEF_0000_0001;
        for m in [16, 32, 64, 512] {
            c.configure(mode(m));
            let step = 4 * 32; // changes only the tag
            c.insert(t, base, &prop(m, 0)).unwrap();
            assert_eq!(
                c.insert(t, base + step, &prop(m, 1)),
                Ok(InsertOutcome::Evicted(base))
            );
            assert_eq!(c.insert(t, u64::MAX, &prop(m, 2)).map(|_| ()), Ok(()));
            let top = u64::MAX - 4 * 32;
            assert_eq!(
                c.insert(t, top, &prop(m, 3)),
                Ok(InsertOutcome::Evicted(u64::MAX))
            );
        }
    }

    #[test]
    fn mode_change_invalidates() {
        let mut c = cache(64 << 10, 4, 64);
        c.insert(Time::ZERO, 7, &prop(64, 7)).unwrap();
        c.configure(mode(128));
        assert_eq!(c.mode().bytes(), 128);
        assert!(c.lookup(Time::ZERO, 7).hit.is_none());
        assert_eq!(c.capacity(), Some(512));
        c.insert(Time::ZERO, 7, &prop(128, 7)).unwrap();
        c.invalidate_all();
        assert_eq!(c.occupancy(), 0);
        assert_eq!(c.stats().invalidations, 2);
    }

    #[test]
    fn full_capacity_is_usable_in_every_mode() {
        for m in [16, 32, 64, 128, 256, 512] {
            let mut c = cache(8 << 10, 2, m);
            let cap = c.capacity().unwrap();
            let sets = c.sets_per_segment().unwrap();
            let g = c.mode().ignored_segment_bits();
            let groups = u64::from(SEGMENTS >> g);
            // One idx per line: vary the set, then the segment group, then the tag.
            let idx = |i: u64| {
                let (set, rest) = (i % sets, i / sets);
                let (group, hi) = (rest % groups, rest / groups);
                ((hi << 5 | group << g) << sets.trailing_zeros()) | set
            };
            for i in 0..cap {
                let o = c.insert(Time::ZERO, idx(i), &prop(m, i)).unwrap();
                assert_eq!(o, InsertOutcome::Inserted, "mode {m} idx {}", idx(i));
            }
            assert_eq!(c.occupancy(), cap);
            for i in 0..cap {
                assert_eq!(
                    c.peek(idx(i)),
                    Some(&prop(m, i)[..]),
                    "mode {m} idx {}",
                    idx(i)
                );
            }
            // One more idx evicts.
            assert!(matches!(
                c.insert(Time::ZERO, idx(cap), &prop(m, 0)),
                Ok(InsertOutcome::Evicted(_))
            ));
        }
    }

    #[test]
    fn disabled_and_unbounded() {
        for cap in [CacheCapacity::Disabled, CacheCapacity::Bytes(0)] {
            let cfg = CacheConfig {
                capacity: cap,
                ..CacheConfig::table5()
            };
            let mut c = PropertyCache::new(cfg, mode(16)).unwrap();
            assert_eq!(
                c.insert(Time::ZERO, 1, &[0; 16]),
                Ok(InsertOutcome::Disabled)
            );
            assert!(c.lookup(Time::ZERO, 1).hit.is_none());
            assert_eq!(c.capacity(), Some(0));
        }
        let cfg = CacheConfig {
            capacity: CacheCapacity::Unbounded,
            ..CacheConfig::table5()
        };
        let mut c = PropertyCache::new(cfg, mode(16)).unwrap();
        for i in 0..10_000u64 {
            assert_eq!(
                c.insert(Time::ZERO, i * 7919, &prop(16, i)),
                Ok(InsertOutcome::Inserted)
            );
        }
        assert_eq!(c.lookup(Time::ZERO, 42 * 7919).hit, Some(&prop(16, 42)[..]));
        assert_eq!(c.occupancy(), 10_000);
        assert_eq!(c.capacity(), None);
        c.invalidate_all();
        assert!(c.peek(0).is_none());
    }

    #[test]
    fn bad_geometry() {
        let mk = |total, ways| {
            PropertyCache::new(
                CacheConfig {
                    capacity: CacheCapacity::Bytes(total),
                    ways,
                    latency: Time::ZERO,
                },
                mode(16),
            )
            .map(|_| ())
        };
        assert_eq!(mk(1024, 0), Err(CacheError::BadWays { ways: 0 }));
        assert_eq!(mk(1024, 200), Err(CacheError::BadWays { ways: 200 }));
        assert_eq!(
            mk(1000, 2),
            Err(CacheError::BadSize {
                total: 1000,
                ways: 2
            })
        );
        assert_eq!(
            mk(512 * 3 * 2, 2),
            Err(CacheError::BadSize {
                total: 3072,
                ways: 2
            })
        );
        assert_eq!(mk(512 * 3 * 4, 3), Ok(()));
    }

    /// The cache against a plain LRU model (per set, idxs from most to
    /// least recent), on both the 16-way path and the general one: same
    /// hits, same outcomes, same victims.
    #[test]
    fn matches_a_reference_lru() {
        for (ways, m) in [(16u32, 64u32), (4, 16), (16, 16), (8, 512)] {
            let total = 512 * u64::from(ways) * 4;
            let mut c = cache(total, ways, m);
            let sets = c.sets_per_segment().unwrap();
            let g = c.mode().ignored_segment_bits();
            let set_of = |idx: u64| {
                let above = idx >> sets.trailing_zeros();
                ((above & 31) >> g, idx & (sets - 1))
            };
            let mut model: std::collections::BTreeMap<(u64, u64), Vec<u64>> =
                std::collections::BTreeMap::new();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for step in 0..20_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let idx = x % (total * 4 / u64::from(m));
                let set = model.entry(set_of(idx)).or_default();
                let pos = set.iter().position(|&i| i == idx);
                if x >> 40 & 1 == 0 {
                    let hit = c.lookup(Time::ZERO, idx).hit.map(<[u8]>::to_vec);
                    assert_eq!(hit.is_some(), pos.is_some(), "step {step}");
                    if let Some(p) = pos {
                        assert_eq!(hit, Some(prop(m, idx)));
                        let v = set.remove(p);
                        set.insert(0, v);
                    }
                } else {
                    let o = c.insert(Time::ZERO, idx, &prop(m, idx)).unwrap();
                    let want = match pos {
                        Some(p) => {
                            let v = set.remove(p);
                            set.insert(0, v);
                            InsertOutcome::Present
                        }
                        None if set.len() < ways as usize => {
                            set.insert(0, idx);
                            InsertOutcome::Inserted
                        }
                        None => {
                            let old = set.pop().unwrap();
                            set.insert(0, idx);
                            InsertOutcome::Evicted(old)
                        }
                    };
                    assert_eq!(o, want, "step {step} ways {ways} mode {m}");
                }
            }
            let held: usize = model.values().map(Vec::len).sum();
            assert_eq!(c.occupancy(), held as u64);
        }
    }

    /// 4- and 8-byte properties (K = 1, 2) live in the 16-byte mode, one
    /// zero-padded segment each; other lengths are still refused.
    #[test]
    fn short_properties_take_one_padded_segment() {
        assert_eq!(CacheMode::for_property(4).unwrap().bytes(), 16);
        assert_eq!(CacheMode::for_property(12).unwrap().bytes(), 16);
        assert_eq!(CacheMode::for_property(64).unwrap().bytes(), 64);
        assert!(CacheMode::for_property(0).is_err());
        assert!(CacheMode::for_property(24).is_err());
        assert!(mode(16).holds(4) && mode(16).holds(16) && !mode(32).holds(4));
        for capacity in [CacheCapacity::Bytes(1 << 12), CacheCapacity::Unbounded] {
            let cfg = CacheConfig {
                capacity,
                ways: 4,
                latency: Time::from_ns(8),
            };
            let mut c = PropertyCache::new(cfg, mode(16)).unwrap();
            c.insert(Time::ZERO, 7, &[1, 2, 3, 4]).unwrap();
            c.insert(Time::ZERO, 9, &[9; 16]).unwrap();
            assert_eq!(
                c.lookup(Time::ZERO, 7).hit,
                Some(&[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0][..])
            );
            assert_eq!(c.peek(9), Some(&[9u8; 16][..]));
            assert!(c.insert(Time::ZERO, 8, &[0; 20]).is_err());
            assert_eq!(c.stats().wrong_length, 1);
        }
    }
}
