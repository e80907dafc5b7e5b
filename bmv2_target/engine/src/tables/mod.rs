//! Match-action table storage and lookup.
//!
//! A table's shape is chosen the way BMv2 chooses it:
//!
//! * only `exact` keys → a hash map keyed on the packed key (the externs'
//!   FxHash-style hasher, not SipHash);
//! * `exact` keys and one `lpm` key → per exact-part, a multibit trie with
//!   8-bit strides over the prefix (at most `width / 8` node visits per
//!   lookup, longest prefix wins);
//! * any `ternary`, `range` or `optional` key (or more than one `lpm` key) →
//!   a list kept sorted by priority, scanned in order. Priorities follow
//!   P4Runtime: the **higher** numeric priority wins; ties go to the entry
//!   added first. (BMv2's CLI uses the opposite convention; the CLI command
//!   parser converts at its boundary.)
//!
//! Entries are addressed by stable [`EntryHandle`]s. Lookups never allocate.
//! Key normalisation is in `keys`, the LPM trie in `trie`.

use netsparse_externs::artifact::{KeyMatch, MatchKind, MeterUnit};
use netsparse_externs::fxhash::FxHashMap;
use netsparse_externs::meter::TrTcm;
use netsparse_externs::stateful::CounterCell;

use crate::error::ControlPlaneError;

mod keys;
mod trie;

use keys::{align, exact_part, lpm_part, match_value, normalize_one, pack128, pack64, prio_match};
use trie::{Trie, NONE};

/// A stable reference to a table entry (P4Runtime / BMv2 "entry handle").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryHandle(pub u32);

impl std::fmt::Display for EntryHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A table key's control-plane description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySpec {
    /// Control-plane name (`hdr.ipv4.dstAddr`).
    pub name: String,
    /// Width in bits.
    pub width: u16,
    /// Match kind.
    pub kind: MatchKind,
}

/// An action a table may run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableActionInfo {
    /// Action id.
    pub action: u32,
    /// Control-plane name.
    pub name: String,
    /// `@defaultonly`.
    pub default_only: bool,
    /// `@tableonly`.
    pub table_only: bool,
}

/// One installed entry.
///
/// A hit reads the action and its data, so they come first and the
/// record starts on a cache line: a hit touches one line. Whether a slot
/// holds an entry at all is a niche of the record (no tag beside it);
/// rustc currently puts it in the action data's tag, in the same line.
/// The match keys, the direct counter and meter follow; the meter, which
/// few tables have, is boxed to keep the record at two lines.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct EntryRec {
    /// Action data.
    pub args: ActionArgs,
    /// Action id.
    pub action: u32,
    /// Priority (higher wins; 0 for exact/LPM tables).
    pub priority: u32,
    /// From the program's `entries`.
    pub is_const: bool,
    /// Matches, normalised (values masked, one per key).
    pub keys: Box<[KeyMatch]>,
    /// Direct counter cell.
    pub counter: CounterCell,
    /// Direct meter.
    pub meter: Option<Box<TrTcm>>,
}

/// An entry's action data. Up to [`ActionArgs::INLINE`] values are held
/// in the entry itself, so that a hit reads them from the lines it has
/// just loaded rather than following a pointer to the heap; more are
/// boxed. It reads as a slice.
#[derive(Clone)]
pub struct ActionArgs(ArgsRepr);

#[derive(Clone)]
enum ArgsRepr {
    /// `len` values at the front of `vals`.
    Inline {
        len: u8,
        vals: [u128; ActionArgs::INLINE],
    },
    Boxed(Box<[u128]>),
}

impl ActionArgs {
    /// Values held without a heap allocation.
    pub const INLINE: usize = 2;

    /// Action data holding `vals`.
    pub fn new(vals: &[u128]) -> ActionArgs {
        if vals.len() <= Self::INLINE {
            let mut inline = [0u128; Self::INLINE];
            inline[..vals.len()].copy_from_slice(vals);
            ActionArgs(ArgsRepr::Inline {
                len: vals.len() as u8,
                vals: inline,
            })
        } else {
            ActionArgs(ArgsRepr::Boxed(vals.into()))
        }
    }
}

impl std::ops::Deref for ActionArgs {
    type Target = [u128];
    #[inline]
    fn deref(&self) -> &[u128] {
        match &self.0 {
            ArgsRepr::Inline { len, vals } => &vals[..usize::from(*len)],
            ArgsRepr::Boxed(b) => b,
        }
    }
}

impl std::fmt::Debug for ActionArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for ActionArgs {
    fn eq(&self, o: &ActionArgs) -> bool {
        **self == **o
    }
}

impl Eq for ActionArgs {}

impl From<&[u128]> for ActionArgs {
    fn from(vals: &[u128]) -> ActionArgs {
        ActionArgs::new(vals)
    }
}

impl From<Vec<u128>> for ActionArgs {
    fn from(vals: Vec<u128>) -> ActionArgs {
        ActionArgs::from(vals.into_boxed_slice())
    }
}

impl From<Box<[u128]>> for ActionArgs {
    fn from(vals: Box<[u128]>) -> ActionArgs {
        if vals.len() <= Self::INLINE {
            ActionArgs::new(&vals)
        } else {
            ActionArgs(ArgsRepr::Boxed(vals))
        }
    }
}

/// How the table is indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Only exact keys.
    Exact,
    /// Exact keys and one LPM key at this position.
    Lpm(usize),
    /// Priority-ordered.
    Prio,
}

#[derive(Clone, Debug)]
enum ExactMap {
    K64(FxHashMap<u64, u32>),
    K128(FxHashMap<u128, u32>),
    KN(FxHashMap<Box<[u128]>, u32>),
}

#[derive(Clone, Debug)]
struct LpmIndex {
    /// Trie per exact part (index into `tries`); `None` when the table has
    /// no exact keys (then `tries[0]` is the only trie).
    by_exact: Option<FxHashMap<Box<[u128]>, u32>>,
    tries: Vec<Trie>,
    /// Width of the LPM key.
    width: u16,
}

#[derive(Clone, Debug)]
struct PrioEntry {
    handle: u32,
    priority: u32,
    seq: u64,
    /// Per key: (a, b, is_range): `k & b == a`, or `a <= k <= b`.
    m: Box<[(u128, u128, bool)]>,
}

#[derive(Clone, Debug)]
enum Index {
    Exact(ExactMap),
    Lpm(LpmIndex),
    Prio(Vec<PrioEntry>),
}

/// The run-time part of a table: its entries, default action and index.
#[derive(Clone, Debug)]
pub struct TableRt {
    /// Fully-qualified name.
    pub name: String,
    /// Keys.
    pub keys: Box<[KeySpec]>,
    /// Actions the table may run.
    pub actions: Box<[TableActionInfo]>,
    /// Shape.
    pub shape: Shape,
    /// Maximum number of entries.
    pub size: u32,
    /// Entries by handle (`None` = deleted).
    pub entries: Vec<Option<EntryRec>>,
    /// Live entries.
    pub live: usize,
    /// Default action id.
    pub default_action: u32,
    /// Default action data.
    pub default_args: Box<[u128]>,
    /// `const default_action`.
    pub default_const: bool,
    /// `const entries`.
    pub entries_const: bool,
    /// Direct counter extern id.
    pub direct_counter: Option<u32>,
    /// Direct meter extern id and unit.
    pub direct_meter: Option<(u32, MeterUnit)>,
    next_seq: u64,
    index: Index,
    /// For a table whose only key is a range key and whose ranges are
    /// disjoint (e.g. a NIC's destination solver: one idx range per node):
    /// (lo, hi, handle) sorted by `lo`, searched by bisection instead of the
    /// priority list. `None` when ranges overlap (or for other tables).
    ranges: Option<Vec<(u128, u128, u32)>>,
}

impl TableRt {
    /// An empty table.
    pub fn new(
        name: String,
        keys: Box<[KeySpec]>,
        actions: Box<[TableActionInfo]>,
        size: u32,
        default_action: u32,
        default_args: Box<[u128]>,
    ) -> TableRt {
        let lpm_keys = keys.iter().filter(|k| k.kind == MatchKind::Lpm).count();
        let single_range = keys.len() == 1 && keys[0].kind == MatchKind::Range;
        let prio = keys.iter().any(|k| {
            matches!(
                k.kind,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        }) || lpm_keys > 1;
        let shape = if prio {
            Shape::Prio
        } else if let Some(pos) = keys.iter().position(|k| k.kind == MatchKind::Lpm) {
            Shape::Lpm(pos)
        } else {
            Shape::Exact
        };
        let index = match shape {
            Shape::Exact => {
                let total: u32 = keys.iter().map(|k| u32::from(k.width)).sum();
                Index::Exact(if total <= 64 {
                    ExactMap::K64(FxHashMap::default())
                } else if total <= 128 {
                    ExactMap::K128(FxHashMap::default())
                } else {
                    ExactMap::KN(FxHashMap::default())
                })
            }
            Shape::Lpm(pos) => Index::Lpm(LpmIndex {
                by_exact: if keys.len() > 1 {
                    Some(FxHashMap::default())
                } else {
                    None
                },
                tries: if keys.len() > 1 {
                    Vec::new()
                } else {
                    vec![Trie::new()]
                },
                width: keys[pos].width,
            }),
            Shape::Prio => Index::Prio(Vec::new()),
        };
        TableRt {
            name,
            keys,
            actions,
            shape,
            size,
            entries: Vec::new(),
            live: 0,
            default_action,
            default_args,
            default_const: false,
            entries_const: false,
            direct_counter: None,
            direct_meter: None,
            next_seq: 0,
            ranges: single_range.then(Vec::new),
            index,
        }
    }

    /// Check `matches` against the keys and bring them to the table's
    /// normal form (values masked; exact/any/prefix/mask conversions as
    /// P4Runtime and BMv2 allow them: an exact value on an LPM key is a full
    /// prefix, on a ternary key a full mask, on a range key a one-value
    /// range; a wildcard is /0, mask 0 or the full range).
    pub fn normalize(&self, matches: &[KeyMatch]) -> Result<Box<[KeyMatch]>, ControlPlaneError> {
        if matches.len() != self.keys.len() {
            return Err(ControlPlaneError::KeyCount {
                table: self.name.clone(),
                expected: self.keys.len(),
                got: matches.len(),
            });
        }
        self.keys
            .iter()
            .zip(matches)
            .map(|(k, m)| normalize_one(&self.name, k, m))
            .collect()
    }

    /// Whether entries need a priority.
    pub fn needs_priority(&self) -> bool {
        self.shape == Shape::Prio
    }

    /// Look a key up: the handle of the winning entry.
    #[inline]
    pub fn lookup(&self, vals: &[u128], scratch: &mut Vec<u128>) -> Option<u32> {
        match &self.index {
            Index::Exact(m) => match m {
                ExactMap::K64(m) => m.get(&pack64(&self.keys, vals)).copied(),
                ExactMap::K128(m) => m.get(&pack128(&self.keys, vals)).copied(),
                ExactMap::KN(m) => m.get(vals).copied(),
            },
            Index::Lpm(l) => {
                let Shape::Lpm(pos) = self.shape else {
                    return None;
                };
                let trie = match &l.by_exact {
                    None => l.tries.first()?,
                    Some(map) => {
                        scratch.clear();
                        scratch.extend(
                            vals.iter()
                                .enumerate()
                                .filter(|(i, _)| *i != pos)
                                .map(|(_, v)| *v),
                        );
                        &l.tries[*map.get(scratch.as_slice())? as usize]
                    }
                };
                let w = l.width;
                let h = trie.lookup(align(vals[pos], w), usize::from(w).div_ceil(8));
                (h != NONE).then_some(h)
            }
            Index::Prio(_) if self.ranges.is_some() => {
                let r = self.ranges.as_deref()?;
                let k = *vals.first()?;
                let pos = r.partition_point(|e| e.0 <= k);
                let (_, hi, h) = *r.get(pos.checked_sub(1)?)?;
                (k <= hi).then_some(h)
            }
            Index::Prio(list) => list
                .iter()
                .find(|e| {
                    e.m.iter().zip(vals).all(
                        |(&(a, b, range), &k)| {
                            if range {
                                a <= k && k <= b
                            } else {
                                k & b == a
                            }
                        },
                    )
                })
                .map(|e| e.handle),
        }
    }

    /// The entry behind a handle.
    #[inline]
    pub fn entry(&self, h: u32) -> Option<&EntryRec> {
        self.entries.get(h as usize).and_then(Option::as_ref)
    }

    /// Mutable entry behind a handle.
    #[inline]
    pub fn entry_mut(&mut self, h: u32) -> Option<&mut EntryRec> {
        self.entries.get_mut(h as usize).and_then(Option::as_mut)
    }

    /// Insert a validated, normalised entry.
    pub fn insert(
        &mut self,
        keys: Box<[KeyMatch]>,
        action: u32,
        args: Box<[u128]>,
        priority: u32,
        is_const: bool,
    ) -> Result<EntryHandle, ControlPlaneError> {
        if self.live >= self.size as usize {
            return Err(ControlPlaneError::TableFull {
                table: self.name.clone(),
                size: self.size,
            });
        }
        let handle = self.entries.len() as u32;
        let shape = self.shape;
        let seq = self.next_seq;
        let dup = |h: u32| ControlPlaneError::Duplicate {
            table: self.name.clone(),
            handle: Some(h),
        };
        // Duplicate detection and indexing.
        match &mut self.index {
            Index::Exact(m) => {
                let vals: Vec<u128> = keys.iter().map(match_value).collect();
                match m {
                    ExactMap::K64(m) => {
                        let k = pack64(&self.keys, &vals);
                        if let Some(h) = m.get(&k) {
                            return Err(dup(*h));
                        }
                        m.insert(k, handle);
                    }
                    ExactMap::K128(m) => {
                        let k = pack128(&self.keys, &vals);
                        if let Some(h) = m.get(&k) {
                            return Err(dup(*h));
                        }
                        m.insert(k, handle);
                    }
                    ExactMap::KN(m) => {
                        if let Some(h) = m.get(vals.as_slice()) {
                            return Err(dup(*h));
                        }
                        m.insert(vals.into_boxed_slice(), handle);
                    }
                }
            }
            Index::Lpm(l) => {
                let pos = match shape {
                    Shape::Lpm(pos) => pos,
                    _ => 0,
                };
                let (value, len) = lpm_part(&keys[pos], l.width);
                let trie = match &mut l.by_exact {
                    None => &mut l.tries[0],
                    Some(map) => {
                        let exact = exact_part(&keys, pos);
                        let next = l.tries.len() as u32;
                        let idx = *map.entry(exact).or_insert(next);
                        if idx == next {
                            l.tries.push(Trie::new());
                        }
                        &mut l.tries[idx as usize]
                    }
                };
                let aligned = align(value, l.width);
                if let Some(h) = trie.find(aligned, len) {
                    return Err(dup(h));
                }
                trie.insert(aligned, len, handle);
            }
            Index::Prio(list) => {
                if let Some(e) = list.iter().find(|e| {
                    e.priority == priority
                        && self.entries[e.handle as usize]
                            .as_ref()
                            .is_some_and(|r| *r.keys == *keys)
                }) {
                    return Err(dup(e.handle));
                }
                let m: Box<[(u128, u128, bool)]> = keys
                    .iter()
                    .zip(self.keys.iter())
                    .map(|(m, k)| prio_match(m, k.width))
                    .collect();
                let pos = list
                    .iter()
                    .position(|e| e.priority < priority || (e.priority == priority && e.seq > seq))
                    .unwrap_or(list.len());
                list.insert(
                    pos,
                    PrioEntry {
                        handle,
                        priority,
                        seq,
                        m,
                    },
                );
            }
        }
        let meter = self
            .direct_meter
            .map(|(_, unit)| Box::new(TrTcm::new(unit)));
        self.entries.push(Some(EntryRec {
            keys,
            action,
            args: args.into(),
            priority,
            is_const,
            counter: CounterCell::default(),
            meter,
        }));
        self.next_seq += 1;
        self.live += 1;
        if let (Some(r), Some(KeyMatch::Range { lo, hi })) = (
            self.ranges.as_mut(),
            self.entries[handle as usize]
                .as_ref()
                .and_then(|e| e.keys.first()),
        ) {
            let (lo, hi) = (*lo, *hi);
            let pos = r.partition_point(|e| e.0 < lo);
            let before_ok = pos == 0 || r[pos - 1].1 < lo;
            let after_ok = r.get(pos).is_none_or(|e| hi < e.0);
            if before_ok && after_ok {
                r.insert(pos, (lo, hi, handle));
            } else {
                // Overlapping ranges: priorities matter, use the list.
                self.ranges = None;
            }
        }
        Ok(EntryHandle(handle))
    }

    /// Rebuild the disjoint-range index of a single-range-key table (after
    /// a removal), if its ranges are disjoint.
    fn rebuild_ranges(&mut self) {
        if self.keys.len() != 1 || self.keys[0].kind != MatchKind::Range {
            return;
        }
        let mut v: Vec<(u128, u128, u32)> = self
            .iter()
            .filter_map(|(h, e)| match e.keys.first() {
                Some(KeyMatch::Range { lo, hi }) => Some((*lo, *hi, h.0)),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        self.ranges = v.windows(2).all(|w| w[0].1 < w[1].0).then_some(v);
    }

    /// Remove an entry.
    pub fn remove(&mut self, h: u32) -> Result<EntryRec, ControlPlaneError> {
        let Some(rec) = self.entries.get_mut(h as usize).and_then(Option::take) else {
            return Err(ControlPlaneError::NoSuchEntry {
                table: self.name.clone(),
                handle: h,
            });
        };
        self.live -= 1;
        match &mut self.index {
            Index::Exact(m) => {
                let vals: Vec<u128> = rec.keys.iter().map(match_value).collect();
                match m {
                    ExactMap::K64(m) => {
                        m.remove(&pack64(&self.keys, &vals));
                    }
                    ExactMap::K128(m) => {
                        m.remove(&pack128(&self.keys, &vals));
                    }
                    ExactMap::KN(m) => {
                        m.remove(vals.as_slice());
                    }
                }
            }
            Index::Lpm(l) => {
                let pos = match self.shape {
                    Shape::Lpm(pos) => pos,
                    _ => 0,
                };
                let (value, len) = lpm_part(&rec.keys[pos], l.width);
                let idx = match &l.by_exact {
                    None => Some(0u32),
                    Some(map) => map.get(&exact_part(&rec.keys, pos)).copied(),
                };
                if let Some(t) = idx.and_then(|i| l.tries.get_mut(i as usize)) {
                    t.remove(align(value, l.width), len, h);
                }
            }
            Index::Prio(list) => list.retain(|e| e.handle != h),
        }
        match self.ranges.as_mut() {
            Some(r) => r.retain(|e| e.2 != h),
            None => self.rebuild_ranges(),
        }
        Ok(rec)
    }

    /// Live entries in handle order.
    pub fn iter(&self) -> impl Iterator<Item = (EntryHandle, &EntryRec)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.as_ref().map(|e| (EntryHandle(i as u32), e)))
    }

    /// Remove every non-const entry.
    pub fn clear(&mut self) {
        let handles: Vec<u32> = self
            .iter()
            .filter(|(_, e)| !e.is_const)
            .map(|(h, _)| h.0)
            .collect();
        for h in handles {
            let _ = self.remove(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Action data reads back the same whether it is held inline or
    /// boxed, and compares by value across the two.
    #[test]
    fn action_args_read_as_the_values_given() {
        for n in 0..=ActionArgs::INLINE + 2 {
            let vals: Vec<u128> = (0..n as u128).map(|i| (i + 1) << 100).collect();
            let a = ActionArgs::new(&vals);
            assert_eq!(&*a, &vals[..]);
            assert_eq!(
                matches!(a.0, ArgsRepr::Inline { .. }),
                n <= ActionArgs::INLINE
            );
            assert_eq!(ActionArgs::from(vals.clone()), a);
            assert_eq!(ActionArgs::from(vals.clone().into_boxed_slice()), a);
            assert_eq!(format!("{a:?}"), format!("{vals:?}"));
        }
        // Boxed data of inline length (as a caller may build it) equals
        // the inline form.
        let boxed = ActionArgs(ArgsRepr::Boxed(vec![7u128].into_boxed_slice()));
        assert_eq!(boxed, ActionArgs::new(&[7]));
        assert_ne!(boxed, ActionArgs::new(&[7, 0]));
    }

    /// What a hit reads (the action, its data, and whether the slot holds
    /// an entry at all) lies in the record's first cache line, and the
    /// record is two lines, starting on a line.
    #[test]
    fn a_hit_reads_one_line_of_its_entry() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<EntryRec>(), 64);
        assert_eq!(size_of::<EntryRec>(), 128);
        // The slot's presence is a niche of the record, not a tag beside it.
        assert_eq!(size_of::<Option<EntryRec>>(), 128);
        assert!(offset_of!(EntryRec, args) + size_of::<ActionArgs>() <= 64);
        assert!(offset_of!(EntryRec, action) + size_of::<u32>() <= 64);
    }

    fn table(keys: Vec<KeySpec>, size: u32) -> TableRt {
        TableRt::new(
            "t".into(),
            keys.into_boxed_slice(),
            Box::new([]),
            size,
            0,
            Box::new([]),
        )
    }

    fn key(kind: MatchKind, width: u16) -> KeySpec {
        KeySpec {
            name: "k".into(),
            width,
            kind,
        }
    }

    #[test]
    fn exact_lookup_and_delete() {
        let mut t = table(
            vec![key(MatchKind::Exact, 32), key(MatchKind::Exact, 16)],
            10,
        );
        let mut s = Vec::new();
        let h = t
            .insert(
                Box::new([KeyMatch::Exact { value: 7 }, KeyMatch::Exact { value: 9 }]),
                1,
                Box::new([]),
                0,
                false,
            )
            .unwrap();
        assert_eq!(t.lookup(&[7, 9], &mut s), Some(h.0));
        assert_eq!(t.lookup(&[7, 8], &mut s), None);
        let dup = t.insert(
            Box::new([KeyMatch::Exact { value: 7 }, KeyMatch::Exact { value: 9 }]),
            1,
            Box::new([]),
            0,
            false,
        );
        assert!(matches!(dup, Err(ControlPlaneError::Duplicate { .. })));
        t.remove(h.0).unwrap();
        assert_eq!(t.lookup(&[7, 9], &mut s), None);
        assert!(t.remove(h.0).is_err());
    }

    #[test]
    fn wide_exact_keys() {
        let mut t = table(
            vec![key(MatchKind::Exact, 128), key(MatchKind::Exact, 48)],
            10,
        );
        let mut s = Vec::new();
        let big = u128::MAX - 3;
        let h = t
            .insert(
                Box::new([KeyMatch::Exact { value: big }, KeyMatch::Exact { value: 5 }]),
                0,
                Box::new([]),
                0,
                false,
            )
            .unwrap();
        assert_eq!(t.lookup(&[big, 5], &mut s), Some(h.0));
        assert_eq!(t.lookup(&[big, 6], &mut s), None);
    }

    #[test]
    fn lpm_longest_wins_and_delete_restores() {
        let mut t = table(vec![key(MatchKind::Lpm, 32)], 10);
        let mut s = Vec::new();
        let ins = |t: &mut TableRt, v: u32, len: u16| {
            t.insert(
                Box::new([KeyMatch::Lpm {
                    value: u128::from(v),
                    prefix_len: len,
                }]),
                0,
                Box::new([]),
                0,
                false,
            )
            .unwrap()
            .0
        };
        let d = ins(&mut t, 0, 0);
        let a = ins(&mut t, 0x0a00_0000, 8);
        let b = ins(&mut t, 0x0a01_0000, 16);
        let c = ins(&mut t, 0x0a01_0100, 24);
        let e = ins(&mut t, 0x0a01_0105, 32);
        let f = ins(&mut t, 0x0a01_0200, 23); // 10.1.2.0/23 covers 10.1.2.x and 10.1.3.x
        assert_eq!(t.lookup(&[0x0a01_0105], &mut s), Some(e));
        assert_eq!(t.lookup(&[0x0a01_0106], &mut s), Some(c));
        assert_eq!(t.lookup(&[0x0a01_0306], &mut s), Some(f));
        assert_eq!(t.lookup(&[0x0a01_0406], &mut s), Some(b));
        assert_eq!(t.lookup(&[0x0a02_0406], &mut s), Some(a));
        assert_eq!(t.lookup(&[0x0b02_0406], &mut s), Some(d));
        t.remove(c).unwrap();
        assert_eq!(t.lookup(&[0x0a01_0106], &mut s), Some(b));
        t.remove(d).unwrap();
        assert_eq!(t.lookup(&[0x0b02_0406], &mut s), None);
    }

    #[test]
    fn lpm_with_exact_part() {
        let mut t = table(vec![key(MatchKind::Exact, 16), key(MatchKind::Lpm, 32)], 10);
        let mut s = Vec::new();
        let h1 = t
            .insert(
                Box::new([
                    KeyMatch::Exact { value: 1 },
                    KeyMatch::Lpm {
                        value: 0x0a00_0000,
                        prefix_len: 8,
                    },
                ]),
                0,
                Box::new([]),
                0,
                false,
            )
            .unwrap();
        assert_eq!(t.lookup(&[1, 0x0a01_0101], &mut s), Some(h1.0));
        assert_eq!(t.lookup(&[2, 0x0a01_0101], &mut s), None);
    }

    #[test]
    fn prio_higher_wins_ties_first_added() {
        let mut t = table(vec![key(MatchKind::Ternary, 8)], 10);
        let mut s = Vec::new();
        let tern = |v, m| KeyMatch::Ternary { value: v, mask: m };
        let lo = t
            .insert(Box::new([tern(0, 0)]), 0, Box::new([]), 1, false)
            .unwrap();
        let hi = t
            .insert(Box::new([tern(0x10, 0xf0)]), 0, Box::new([]), 5, false)
            .unwrap();
        let tie = t
            .insert(Box::new([tern(0x01, 0x0f)]), 0, Box::new([]), 5, false)
            .unwrap();
        assert_eq!(t.lookup(&[0x11], &mut s), Some(hi.0));
        assert_eq!(t.lookup(&[0x21], &mut s), Some(tie.0));
        assert_eq!(t.lookup(&[0x22], &mut s), Some(lo.0));
        t.remove(hi.0).unwrap();
        assert_eq!(t.lookup(&[0x11], &mut s), Some(tie.0));
    }

    #[test]
    fn size_limit() {
        let mut t = table(vec![key(MatchKind::Exact, 8)], 2);
        for v in 0..2 {
            t.insert(
                Box::new([KeyMatch::Exact { value: v }]),
                0,
                Box::new([]),
                0,
                false,
            )
            .unwrap();
        }
        let e = t
            .insert(
                Box::new([KeyMatch::Exact { value: 9 }]),
                0,
                Box::new([]),
                0,
                false,
            )
            .unwrap_err();
        assert_eq!(e.to_string(), "table `t` is full (2 entries)");
    }

    #[test]
    fn single_range_key_tables_bisect_disjoint_ranges() {
        let mut t = table(vec![key(MatchKind::Range, 64)], 100);
        let mut s = Vec::new();
        let r = |lo, hi| Box::new([KeyMatch::Range { lo, hi }]) as Box<[KeyMatch]>;
        let a = t.insert(r(100, 199), 1, Box::new([]), 1, false).unwrap();
        let b = t.insert(r(0, 99), 1, Box::new([]), 1, false).unwrap();
        let c = t.insert(r(300, 300), 1, Box::new([]), 1, false).unwrap();
        assert!(t.ranges.is_some());
        for (k, want) in [
            (0, Some(b.0)),
            (99, Some(b.0)),
            (100, Some(a.0)),
            (199, Some(a.0)),
            (200, None),
            (300, Some(c.0)),
            (301, None),
            (u128::from(u64::MAX), None),
        ] {
            assert_eq!(t.lookup(&[k], &mut s), want, "key {k}");
        }
        // An overlapping entry: the priority list decides (higher wins).
        let d = t.insert(r(150, 310), 1, Box::new([]), 5, false).unwrap();
        assert!(t.ranges.is_none());
        assert_eq!(t.lookup(&[160], &mut s), Some(d.0));
        assert_eq!(t.lookup(&[120], &mut s), Some(a.0));
        // Removing it makes the ranges disjoint again.
        t.remove(d.0).unwrap();
        assert!(t.ranges.is_some());
        assert_eq!(t.lookup(&[160], &mut s), Some(a.0));
        t.remove(a.0).unwrap();
        assert_eq!(t.lookup(&[160], &mut s), None);
        assert_eq!(t.lookup(&[50], &mut s), Some(b.0));
    }
}
