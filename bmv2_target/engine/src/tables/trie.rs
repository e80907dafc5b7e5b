//! The LPM index of a table: a multibit trie with 8-bit strides over keys
//! left-aligned in a `u128` (one per exact part of the key; see
//! [`super::TableRt`]). Inserting a prefix fills the slots it covers in its
//! node; removing one refills them from the node's remaining prefixes; a
//! lookup is one dependent load per key byte.

/// No entry / no child.
pub(super) const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Handle of the longest prefix in this node covering the slot.
    entry: u32,
    /// Child node index.
    child: u32,
}

const EMPTY_SLOT: Slot = Slot {
    entry: NONE,
    child: NONE,
};

/// A multibit trie (stride 8) over keys left-aligned in a `u128`. Nodes are
/// 256 consecutive slots of one flat vector, so a lookup is one dependent
/// load per byte of the key.
#[derive(Clone, Debug)]
pub struct Trie {
    /// Node `i` is `slots[256 * i..256 * (i + 1)]`.
    slots: Vec<Slot>,
    /// Prefix length (within its node, 1..=8) of each slot's entry.
    lens: Vec<u8>,
    /// Prefixes stored in each node: (bits left-aligned in the byte, len 1..=8, handle).
    prefixes: Vec<Vec<(u8, u8, u32)>>,
    /// The /0 entry.
    zero: u32,
}

impl Trie {
    pub(super) fn new() -> Trie {
        let mut t = Trie {
            slots: Vec::new(),
            lens: Vec::new(),
            prefixes: Vec::new(),
            zero: NONE,
        };
        t.add_node();
        t
    }

    fn add_node(&mut self) -> usize {
        self.slots.extend(std::iter::repeat_n(EMPTY_SLOT, 256));
        self.lens.extend(std::iter::repeat_n(0, 256));
        self.prefixes.push(Vec::new());
        self.prefixes.len() - 1
    }

    /// The node holding prefixes of `len` (≥ 1) bits of `value`, creating
    /// the path when `create`.
    fn node_for(&mut self, value: u128, len: u16, create: bool) -> Option<usize> {
        let depth = usize::from((len - 1) / 8);
        let mut node = 0usize;
        for d in 0..depth {
            let byte = usize::from((value >> (120 - 8 * d)) as u8);
            let child = self.slots[node * 256 + byte].child;
            node = if child != NONE {
                child as usize
            } else if create {
                let n = self.add_node();
                self.slots[node * 256 + byte].child = n as u32;
                n
            } else {
                return None;
            };
        }
        Some(node)
    }

    /// (bits left-aligned in the node's byte, length within the node).
    fn local(value: u128, len: u16) -> (u8, u8) {
        let depth = usize::from((len - 1) / 8);
        let l = (len - 8 * depth as u16) as u8;
        let byte = (value >> (120 - 8 * depth)) as u8;
        (byte & (0xffu8 << (8 - l)), l)
    }

    /// Insert `value` (left-aligned) / `len`.
    pub(super) fn insert(&mut self, value: u128, len: u16, handle: u32) {
        if len == 0 {
            self.zero = handle;
            return;
        }
        let Some(node) = self.node_for(value, len, true) else {
            return;
        };
        let (bits, l) = Self::local(value, len);
        self.prefixes[node].push((bits, l, handle));
        let lo = node * 256 + usize::from(bits);
        let hi = lo + (1usize << (8 - l));
        for i in lo..hi {
            if self.slots[i].entry == NONE || self.lens[i] <= l {
                self.slots[i].entry = handle;
                self.lens[i] = l;
            }
        }
    }

    /// The handle stored for exactly `value`/`len`, if any.
    pub(super) fn find(&mut self, value: u128, len: u16) -> Option<u32> {
        if len == 0 {
            return (self.zero != NONE).then_some(self.zero);
        }
        let node = self.node_for(value, len, false)?;
        let (bits, l) = Self::local(value, len);
        self.prefixes[node]
            .iter()
            .find(|p| p.0 == bits && p.1 == l)
            .map(|p| p.2)
    }

    /// Remove `value`/`len` stored under `handle`.
    pub(super) fn remove(&mut self, value: u128, len: u16, handle: u32) {
        if len == 0 {
            if self.zero == handle {
                self.zero = NONE;
            }
            return;
        }
        let Some(node) = self.node_for(value, len, false) else {
            return;
        };
        self.prefixes[node].retain(|p| p.2 != handle);
        let (bits, l) = Self::local(value, len);
        let lo = usize::from(bits);
        let hi = lo + (1usize << (8 - l));
        for slot in lo..hi {
            let best = self.prefixes[node]
                .iter()
                .filter(|(pb, pl, _)| (slot as u8) & (0xffu8 << (8 - pl)) == *pb)
                .max_by_key(|(_, pl, _)| *pl)
                .copied();
            let i = node * 256 + slot;
            match best {
                Some((_, pl, h)) => {
                    self.slots[i].entry = h;
                    self.lens[i] = pl;
                }
                None => {
                    self.slots[i].entry = NONE;
                    self.lens[i] = 0;
                }
            }
        }
    }

    /// Longest prefix match of `key` (left-aligned, `bytes` significant bytes).
    #[inline]
    pub(super) fn lookup(&self, key: u128, bytes: usize) -> u32 {
        let mut best = self.zero;
        let mut base = 0usize;
        for d in 0..bytes {
            let byte = usize::from((key >> (120 - 8 * d)) as u8);
            let s = self.slots[base + byte];
            if s.entry != NONE {
                best = s.entry;
            }
            if s.child == NONE {
                break;
            }
            base = s.child as usize * 256;
        }
        best
    }
}
