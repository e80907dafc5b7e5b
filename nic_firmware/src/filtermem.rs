//! The memory the Idx Filter lives in (§5.2, Table 5): a bitvector in the
//! SmartNIC's DRAM (16 GB, 64 GB/s) behind a 16 MB LLC shared by the RIG
//! units and, per pair of RIG units (a client and a server), a 32 KB L1
//! and a 128 KB L2. This file owns that hierarchy's model: which level
//! holds the 64-byte line of an idx's bit, and what a lookup costs a client
//! unit.
//!
//! The model is latency and bandwidth per level, with the unit's 64-entry
//! load/store queue overlapping lookups: a lookup served by a level with
//! latency `L` cycles costs the unit `L / LSQ` cycles on top of its one
//! idx per cycle, and a DRAM line transfer also takes its turn on the one
//! DRAM channel (64 B at 64 GB/s: 1 ns), waiting if the channel is busy.
//! L1 and L2 are set-associative with LRU replacement (8 ways); the LLC is
//! exact for a filter that fits it (every line stays once touched: the
//! paper's largest matrix has 18.5 M columns, a 2.3 MB filter) and
//! set-associative LRU (16 ways) otherwise. A bit set by a response fills
//! its line into the client's caches (the write goes through them). The
//! Pending PR Table is SRAM inside the unit (Figure 5) and costs nothing
//! beyond the unit's cycle.
//!
//! The latencies are not in the paper: L1 4, L2 14 and LLC 40 cycles, DRAM
//! 100 ns, typical of a 2.2 GHz Arm SoC like the Pensando Elba's
//! ([`FilterMemoryConfig`] changes them).

use serde::{Deserialize, Serialize};

use netsparse_externs::{hint, Time};

/// Bytes per cache line.
const LINE: u64 = 64;
/// Filter bits per line.
const BITS_PER_LINE: u64 = LINE * 8;

/// Sizes and timings of the hierarchy (Table 5's sizes; latencies are
/// assumptions, see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilterMemoryConfig {
    /// Model the hierarchy (false: every lookup costs nothing).
    pub enabled: bool,
    /// L1 per unit pair, bytes (32 KB).
    pub l1_bytes: u64,
    /// L2 per unit pair, bytes (128 KB).
    pub l2_bytes: u64,
    /// Shared LLC, bytes (16 MB).
    pub llc_bytes: u64,
    /// Load/store queue entries per unit (64).
    pub lsq_entries: u64,
    /// L1 latency, NIC cycles.
    pub l1_cycles: u64,
    /// L2 latency, NIC cycles.
    pub l2_cycles: u64,
    /// LLC latency, NIC cycles.
    pub llc_cycles: u64,
    /// DRAM latency, ns.
    pub dram_ns: u64,
    /// DRAM bandwidth, GB/s (64).
    pub dram_gbytes_per_s: u64,
}

impl Default for FilterMemoryConfig {
    fn default() -> FilterMemoryConfig {
        FilterMemoryConfig {
            enabled: true,
            l1_bytes: 32 << 10,
            l2_bytes: 128 << 10,
            llc_bytes: 16 << 20,
            lsq_entries: 64,
            l1_cycles: 4,
            l2_cycles: 14,
            llc_cycles: 40,
            dram_ns: 100,
            dram_gbytes_per_s: 64,
        }
    }
}

/// Where lookups were served, and what they cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FilterMemoryStats {
    /// Lookups served by an L1.
    pub l1_hits: u64,
    /// By an L2.
    pub l2_hits: u64,
    /// By the LLC.
    pub llc_hits: u64,
    /// By DRAM.
    pub dram: u64,
    /// Client-unit cycles the lookups added.
    pub cycles: u64,
}

/// A set-associative cache of line numbers with LRU replacement.
#[derive(Clone, Debug)]
struct SetCache {
    ways: usize,
    sets: u64,
    /// `sets × ways` tags, each set most recently used first; `u64::MAX`
    /// is empty.
    tags: Vec<u64>,
}

impl SetCache {
    fn new(bytes: u64, ways: usize) -> SetCache {
        let lines = (bytes / LINE).max(ways as u64);
        let sets = (lines / ways as u64).max(1);
        SetCache {
            ways,
            sets,
            tags: Vec::new(),
        }
    }

    /// A hint with no effect on results: start loading `line`'s set.
    #[inline]
    fn prefetch(&self, line: u64) {
        if let Some(t) = self.tags.get(self.set_of(line)) {
            hint::prefetch(t);
        }
    }

    /// Where `line`'s set starts in `tags`.
    #[inline]
    fn set_of(&self, line: u64) -> usize {
        (line % self.sets) as usize * self.ways
    }

    /// Look `line` up; on a miss, fill it. Returns whether it hit.
    fn access(&mut self, line: u64) -> bool {
        if self.tags.is_empty() {
            // Allocated on first use: most units of a run never look up.
            self.tags = vec![u64::MAX; self.sets as usize * self.ways];
        }
        let set = self.set_of(line);
        let s = &mut self.tags[set..set + self.ways];
        match s.iter().position(|&t| t == line) {
            Some(i) => {
                s[..=i].rotate_right(1);
                true
            }
            None => {
                s.rotate_right(1);
                s[0] = line;
                false
            }
        }
    }
}

/// The LLC: exact (a touched-line bitmap) when the filter fits it.
#[derive(Clone, Debug)]
enum Llc {
    Fits(Vec<u64>),
    Sets(SetCache),
}

/// The hierarchy of one SmartNIC.
#[derive(Clone, Debug)]
pub(crate) struct FilterMemory {
    cfg: FilterMemoryConfig,
    /// Per client unit: its pair's L1 and L2.
    l1: Vec<SetCache>,
    l2: Vec<SetCache>,
    llc: Llc,
    /// Picoseconds per NIC cycle.
    cycle_ps: u64,
    /// When the DRAM channel is next free.
    dram_free: Time,
    /// Cycles of lookups not yet charged to a unit, per unit.
    pending: Vec<u64>,
    pub(crate) stats: FilterMemoryStats,
}

impl FilterMemory {
    /// The hierarchy for `units` client units, a filter of `columns` bits
    /// and a clock of `clock_mhz`.
    pub(crate) fn new(
        cfg: FilterMemoryConfig,
        units: usize,
        columns: u64,
        clock_mhz: u64,
    ) -> FilterMemory {
        let filter_lines = columns.div_ceil(BITS_PER_LINE);
        let llc = if filter_lines * LINE <= cfg.llc_bytes {
            Llc::Fits(vec![0; filter_lines.div_ceil(64) as usize])
        } else {
            Llc::Sets(SetCache::new(cfg.llc_bytes, 16))
        };
        FilterMemory {
            l1: vec![SetCache::new(cfg.l1_bytes, 8); units],
            l2: vec![SetCache::new(cfg.l2_bytes, 8); units],
            llc,
            cycle_ps: 1_000_000 / clock_mhz.max(1),
            dram_free: Time::ZERO,
            pending: vec![0; units],
            stats: FilterMemoryStats::default(),
            cfg,
        }
    }

    /// Client unit `unit` looks up the bit of `idx` at `now` (or, with
    /// `fill`, a response sets it: the line is brought in without charging
    /// the unit).
    pub(crate) fn access(&mut self, unit: usize, idx: u64, now: Time, fill: bool) {
        if !self.cfg.enabled || unit >= self.l1.len() {
            return;
        }
        let line = idx / BITS_PER_LINE;
        let latency_ps = if self.l1[unit].access(line) {
            self.stats.l1_hits += u64::from(!fill);
            self.cfg.l1_cycles * self.cycle_ps
        } else if self.l2[unit].access(line) {
            self.stats.l2_hits += u64::from(!fill);
            self.cfg.l2_cycles * self.cycle_ps
        } else if self.llc_access(line) {
            self.stats.llc_hits += u64::from(!fill);
            self.cfg.llc_cycles * self.cycle_ps
        } else {
            self.stats.dram += u64::from(!fill);
            // The line's transfer takes its turn on the DRAM channel.
            let transfer = Time::from_ps(LINE * 1_000 / self.cfg.dram_gbytes_per_s.max(1));
            let start = now.max(self.dram_free);
            self.dram_free = start + transfer;
            (start - now).as_ps() + self.cfg.dram_ns * 1_000 + transfer.as_ps()
        };
        if fill {
            return;
        }
        // The LSQ overlaps up to `lsq_entries` lookups: a lookup holds the
        // unit for its latency over the queue's depth (at least nothing
        // beyond the unit's own cycle for an L1 hit).
        let extra = latency_ps / self.cfg.lsq_entries.max(1) / self.cycle_ps.max(1);
        let extra = if latency_ps <= self.cfg.l1_cycles * self.cycle_ps {
            0
        } else {
            extra.max(1)
        };
        self.pending[unit] += extra;
        self.stats.cycles += extra;
    }

    /// A hint with no effect on results: start loading what a lookup of
    /// `idx` by `unit` reads (its sets in the unit's L1 and L2, and the
    /// LLC's).
    #[inline]
    pub(crate) fn prefetch(&self, unit: usize, idx: u64) {
        if !self.cfg.enabled {
            return;
        }
        let line = idx / BITS_PER_LINE;
        if let (Some(l1), Some(l2)) = (self.l1.get(unit), self.l2.get(unit)) {
            l1.prefetch(line);
            l2.prefetch(line);
        }
        match &self.llc {
            Llc::Fits(bits) => {
                if let Some(w) = bits.get((line / 64) as usize) {
                    hint::prefetch(w);
                }
            }
            Llc::Sets(c) => c.prefetch(line),
        }
    }

    fn llc_access(&mut self, line: u64) -> bool {
        match &mut self.llc {
            Llc::Fits(bits) => {
                let (w, b) = ((line / 64) as usize, 1u64 << (line % 64));
                let Some(word) = bits.get_mut(w) else {
                    return false;
                };
                let hit = *word & b != 0;
                *word |= b;
                hit
            }
            Llc::Sets(c) => c.access(line),
        }
    }

    /// The cycles `unit`'s lookups added since the last call.
    pub(crate) fn take_cycles(&mut self, unit: usize) -> u64 {
        self.pending.get_mut(unit).map_or(0, std::mem::take)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem() -> FilterMemory {
        // 2.2 GHz: 454 ps per cycle; 2^20 columns: a 128 KB filter.
        FilterMemory::new(FilterMemoryConfig::default(), 2, 1 << 20, 2200)
    }

    #[test]
    fn a_line_is_served_from_dram_then_l1() {
        let mut m = mem();
        m.access(0, 5, Time::ZERO, false);
        assert_eq!(m.stats.dram, 1);
        // 100 ns + 1 ns transfer over 64 LSQ entries: 1.58 ns = 3 cycles.
        assert_eq!(m.take_cycles(0), 3);
        // Same line (bits 0..512): an L1 hit, nothing added.
        m.access(0, 511, Time::ZERO, false);
        assert_eq!((m.stats.l1_hits, m.take_cycles(0)), (1, 0));
        // Another unit: its own L1 and L2 miss, the LLC has it.
        m.access(1, 6, Time::ZERO, false);
        assert_eq!(m.stats.llc_hits, 1);
        assert_eq!(m.take_cycles(1), 1);
    }

    #[test]
    fn a_working_set_beyond_l1_is_served_by_l2() {
        let mut m = mem();
        // 1024 lines = 64 KB: twice the L1, half the L2.
        for round in 0..2 {
            for line in 0..1024u64 {
                m.access(0, line * BITS_PER_LINE, Time::ZERO, false);
            }
            if round == 0 {
                assert_eq!(m.stats.dram, 1024);
            }
        }
        assert_eq!(m.stats.l2_hits, 1024, "{:?}", m.stats);
        assert_eq!(m.stats.l1_hits, 0);
    }

    #[test]
    fn dram_transfers_queue_on_the_channel() {
        let mut m = mem();
        for line in 0..100u64 {
            m.access(0, line * BITS_PER_LINE, Time::ZERO, false);
        }
        // The 100th line waited 99 ns for the channel: 200 ns in all, 7
        // cycles over the LSQ; the first took 3.
        let total = m.take_cycles(0);
        assert!(total > 100 * 3, "{total}");
        assert_eq!(m.stats.dram, 100);
    }

    #[test]
    fn a_set_bit_fills_the_line_and_a_disabled_model_costs_nothing() {
        let mut m = mem();
        m.access(0, 9, Time::ZERO, true);
        assert_eq!(m.stats, FilterMemoryStats::default());
        m.access(0, 9, Time::ZERO, false);
        assert_eq!(m.stats.l1_hits, 1);
        let mut off = FilterMemory::new(
            FilterMemoryConfig {
                enabled: false,
                ..FilterMemoryConfig::default()
            },
            1,
            1 << 20,
            2200,
        );
        off.access(0, 9, Time::ZERO, false);
        assert_eq!(
            (off.take_cycles(0), off.stats),
            (0, FilterMemoryStats::default())
        );
    }

    #[test]
    fn a_filter_larger_than_the_llc_uses_sets() {
        let m = FilterMemory::new(FilterMemoryConfig::default(), 1, 1 << 40, 2200);
        assert!(matches!(m.llc, Llc::Sets(_)));
        assert!(matches!(mem().llc, Llc::Fits(_)));
    }
}
