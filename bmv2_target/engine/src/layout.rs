//! Precomputed byte layouts: a header (or a field list fed to a checksum)
//! cut into 64-bit chunks at load time, each field (or field part) knowing
//! its chunk and shift. Extraction is one big-endian load per chunk plus one
//! shift and mask per field; emission the reverse — flat loops, no per-bit
//! bookkeeping on the packet path. Layouts longer than [`MAX_CHUNKS`] chunks
//! (64 bytes) take a generic bit-at-a-time path instead.

use super::state::{read_bits, BitWriter, Loc, PacketState};

/// Chunks handled by the fast path (64 bytes).
pub const MAX_CHUNKS: usize = 8;

/// A field of at most 64 bits lying entirely inside one chunk (the common
/// case): one shift and mask each way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Simple {
    /// The `u64` slot.
    pub slot: u32,
    /// Bits of the chunk value below the field.
    pub shift: u8,
    /// The field's mask.
    pub mask: u64,
}

/// Some bits of a field that straddles chunks or is wider than 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The field's slot index (`u64` slots, or `u128` slots when `wide`).
    pub slot: u32,
    /// The slot is a `u128` slot.
    pub wide: bool,
    /// This part holds the field's most significant bits.
    pub first: bool,
    /// Bits of the field below this part.
    pub field_shift: u8,
    /// Bits of the chunk value below this part.
    pub chunk_shift: u8,
    /// Mask of the part's width.
    pub mask: u64,
}

/// Up to 8 bytes of the layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Bytes in this chunk (1..=8).
    pub bytes: u8,
    /// Fields wholly inside this chunk.
    pub simple: Box<[Simple]>,
    /// Parts of fields that straddle chunks or are wider than 64 bits, most
    /// significant first.
    pub parts: Box<[Part]>,
}

impl Chunk {
    /// The chunk's bytes as a right-aligned big-endian value, built from
    /// the slots.
    #[inline(always)]
    fn value(&self, st: &PacketState) -> u64 {
        let mut c = 0u64;
        for f in self.simple.iter() {
            c |= (st.n[f.slot as usize] & f.mask) << f.shift;
        }
        for p in self.parts.iter() {
            let v = if p.wide {
                (st.w[p.slot as usize] >> p.field_shift) as u64
            } else {
                st.n[p.slot as usize] >> p.field_shift
            };
            c |= (v & p.mask) << p.chunk_shift;
        }
        c
    }
}

/// A whole layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Total bytes.
    pub bytes: usize,
    /// The chunks in order.
    pub chunks: Box<[Chunk]>,
    /// (slot, bit offset, width) of every field, for the generic path.
    pub fields: Box<[(Loc, u32, u16)]>,
    /// Leading zero bits.
    pub lead: u32,
}

impl Plan {
    /// The plan for `fields` (slot, width), packed most significant first
    /// after `lead` zero bits; the total must be a whole number of bytes.
    pub fn new(fields: &[(Loc, u16)], lead: u32) -> Plan {
        let total: u64 = u64::from(lead) + fields.iter().map(|(_, w)| u64::from(*w)).sum::<u64>();
        let mut chunks = Vec::new();
        let mut cs = 0u64;
        while cs < total {
            let ce = (cs + 64).min(total);
            let mut simple = Vec::new();
            let mut parts = Vec::new();
            let mut off = u64::from(lead);
            for &(loc, w) in fields {
                let (fs, fe) = (off, off + u64::from(w));
                off = fe;
                let (a, b) = (fs.max(cs), fe.min(ce));
                if a >= b {
                    continue;
                }
                let n = b - a;
                let mask = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
                let (slot, wide) = match loc {
                    Loc::N(i) => (i, false),
                    Loc::W(i) => (i, true),
                };
                if !wide && a == fs && b == fe {
                    simple.push(Simple {
                        slot,
                        shift: (ce - b) as u8,
                        mask,
                    });
                } else {
                    parts.push(Part {
                        slot,
                        wide,
                        first: a == fs,
                        field_shift: (fe - b) as u8,
                        chunk_shift: (ce - b) as u8,
                        mask,
                    });
                }
            }
            chunks.push(Chunk {
                bytes: ((ce - cs) / 8) as u8,
                simple: simple.into_boxed_slice(),
                parts: parts.into_boxed_slice(),
            });
            cs = ce;
        }
        let mut off = lead;
        let fields = fields
            .iter()
            .map(|&(loc, w)| {
                let f = (loc, off, w);
                off += u32::from(w);
                f
            })
            .collect();
        Plan {
            bytes: (total / 8) as usize,
            chunks: chunks.into_boxed_slice(),
            fields,
            lead,
        }
    }

    /// Extract the layout from `buf[start..start + self.bytes]` (in range)
    /// into the slot arrays.
    #[inline]
    pub fn extract(&self, buf: &[u8], start: usize, n: &mut [u64], w: &mut [u128]) {
        if self.chunks.len() > MAX_CHUNKS {
            for &(loc, off, width) in self.fields.iter() {
                let v = read_bits(buf, start * 8 + off as usize, width);
                match loc {
                    Loc::N(i) => n[i as usize] = v as u64,
                    Loc::W(i) => w[i as usize] = v,
                }
            }
            return;
        }
        let mut pos = start;
        for ch in self.chunks.iter() {
            let c = load_be(buf, pos, ch.bytes);
            pos += usize::from(ch.bytes);
            for f in ch.simple.iter() {
                n[f.slot as usize] = (c >> f.shift) & f.mask;
            }
            for p in ch.parts.iter() {
                let v = (c >> p.chunk_shift) & p.mask;
                if p.wide {
                    let s = &mut w[p.slot as usize];
                    let v = u128::from(v) << p.field_shift;
                    *s = if p.first { v } else { *s | v };
                } else {
                    let s = &mut n[p.slot as usize];
                    let v = v << p.field_shift;
                    *s = if p.first { v } else { *s | v };
                }
            }
        }
    }

    /// Build the layout's bytes in `buf` (fast path only). Returns the
    /// length, or `None` when the layout is longer than the fast path.
    #[inline]
    pub fn fill(&self, st: &PacketState, buf: &mut [u8; 8 * MAX_CHUNKS]) -> Option<usize> {
        if self.chunks.len() > MAX_CHUNKS {
            return None;
        }
        for (out, ch) in buf.chunks_exact_mut(8).zip(self.chunks.iter()) {
            out.copy_from_slice(&(ch.value(st) << (8 * (8 - u32::from(ch.bytes)))).to_be_bytes());
        }
        Some(self.bytes)
    }

    /// Append the layout's bytes, built from the slots, to `out`. On the
    /// fast path each chunk is appended as a whole 8-byte word (one store,
    /// no copy through a buffer) and the bytes a short chunk did not fill
    /// are dropped again by shortening `out`.
    #[inline]
    pub fn emit(&self, st: &PacketState, out: &mut Vec<u8>) {
        if self.chunks.len() <= MAX_CHUNKS {
            out.reserve(8 * self.chunks.len());
            for ch in self.chunks.iter() {
                let short = 8 - usize::from(ch.bytes);
                out.extend_from_slice(&(ch.value(st) << (8 * short)).to_be_bytes());
                out.truncate(out.len() - short);
            }
        } else {
            let mut w = BitWriter::new(out, self.lead);
            for &(loc, _, width) in self.fields.iter() {
                w.put(st.load(loc), width);
            }
            w.finish();
        }
    }
}

/// The `n` (1..=8) bytes at `pos` as a big-endian integer (zero past the end).
#[inline(always)]
pub(crate) fn load_be(buf: &[u8], pos: usize, n: u8) -> u64 {
    if let Some(w) = buf.get(pos..pos + 8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        let v = u64::from_be_bytes(b);
        if n >= 8 {
            v
        } else {
            v >> (64 - 8 * u32::from(n))
        }
    } else {
        let mut v = 0u64;
        for i in 0..usize::from(n) {
            v = (v << 8) | u64::from(buf.get(pos + i).copied().unwrap_or(0));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::write_bits;
    use crate::word::mask128;
    use proptest::prelude::*;

    fn state(narrow: usize, wide: usize) -> PacketState {
        PacketState {
            n: vec![0; narrow],
            w: vec![0; wide],
            ..PacketState::default()
        }
    }

    fn check(widths: Vec<u16>, vals: &[u128], lead: u32) -> Result<(), TestCaseError> {
        let total: u32 = lead + widths.iter().map(|w| u32::from(*w)).sum::<u32>();
        // Pad the last field so the layout is whole bytes.
        let mut widths = widths;
        let pad = (8 - total % 8) % 8;
        if pad > 0 {
            widths.push(pad as u16);
        }
        let mut fields = Vec::new();
        let (mut nn, mut nw) = (0u32, 0u32);
        for w in &widths {
            if *w <= 64 {
                fields.push((Loc::N(nn), *w));
                nn += 1;
            } else {
                fields.push((Loc::W(nw), *w));
                nw += 1;
            }
        }
        let plan = Plan::new(&fields, lead);
        let mut st = state(nn as usize, nw as usize);
        for (i, (loc, w)) in fields.iter().enumerate() {
            st.store(*loc, *w, vals[i % vals.len()]);
        }
        // Emit and compare with the bitwise reference.
        let mut out = vec![0x5a];
        plan.emit(&st, &mut out);
        let mut reference = vec![0u8; plan.bytes];
        let mut off = lead as usize;
        for (loc, w) in &fields {
            write_bits(&mut reference, off, *w, st.load(*loc));
            off += usize::from(*w);
        }
        prop_assert_eq!(&out[1..], &reference[..]);
        // Extract back (with and without trailing bytes).
        for tail in [0usize, 9] {
            let mut buf = vec![0xee; 3];
            buf.extend_from_slice(&reference);
            buf.extend(std::iter::repeat_n(0x77, tail));
            let mut back = state(nn as usize, nw as usize);
            let PacketState { n, w, .. } = &mut back;
            plan.extract(&buf, 3, n, w);
            let mut off = lead as usize;
            for (loc, w) in &fields {
                prop_assert_eq!(back.load(*loc), st.load(*loc) & mask128(*w));
                prop_assert_eq!(back.load(*loc), read_bits(&reference, off, *w));
                off += usize::from(*w);
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn plan_matches_bitwise(widths in proptest::collection::vec(1u16..=128, 1..14), vals in proptest::collection::vec(any::<u128>(), 14), lead in 0u32..8) {
            check(widths, &vals, lead)?;
        }

        #[test]
        fn long_layouts_take_the_generic_path(widths in proptest::collection::vec(60u16..=128, 10..14), vals in proptest::collection::vec(any::<u128>(), 4)) {
            check(widths, &vals, 0)?;
        }
    }
}
