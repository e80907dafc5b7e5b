//! Per-packet state: the flat slot arrays, header validity, the packet bytes
//! and the v1model side effects requested while processing it. One
//! [`PacketState`] is reused for every packet (reset, not reallocated).

use std::cell::Cell;

use netsparse_externs::artifact::CloneKind;

use super::word::{mask128, Word};

/// Where a field slot lives in the packet state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Index into the `u64` slots (width ≤ 64).
    N(u32),
    /// Index into the `u128` slots (width 65..=128).
    W(u32),
}

/// A clone requested by `clone` / `clone_preserving_field_list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloneReq {
    /// I2E or E2E.
    pub kind: CloneKind,
    /// Mirror session id.
    pub session: u32,
    /// Field list index in the program's field lists (`Code::lists`).
    pub list: u32,
}

/// Side effects requested by extern calls, acted on between blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Last clone request.
    pub clone: Option<CloneReq>,
    /// Last resubmit request (field list).
    pub resubmit: Option<u32>,
    /// Last recirculate request (field list).
    pub recirculate: Option<u32>,
    /// Truncation length in bytes.
    pub truncate: Option<u32>,
    /// An `assert`/`assume` failed: the packet is dropped.
    pub assert_failed: bool,
}

/// Header validity bits: 256 inline (no memory traffic beyond two vector
/// stores to reset), more on the heap.
#[derive(Clone, Debug, Default)]
pub struct Bits {
    inline: [u64; 4],
    heap: Vec<u64>,
}

impl Bits {
    /// `n` cleared bits.
    fn new(n: usize) -> Bits {
        Bits {
            inline: [0; 4],
            heap: vec![0; n.saturating_sub(256).div_ceil(64)],
        }
    }

    /// Bit `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        let w = if i < 256 {
            self.inline[i / 64]
        } else {
            self.heap.get((i - 256) / 64).copied().unwrap_or(0)
        };
        (w >> (i % 64)) & 1 != 0
    }

    /// Set bit `i` to `v`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: bool) {
        let w = if i < 256 {
            &mut self.inline[i / 64]
        } else {
            match self.heap.get_mut((i - 256) / 64) {
                Some(w) => w,
                None => return,
            }
        };
        let m = 1u64 << (i % 64);
        if v {
            *w |= m;
        } else {
            *w &= !m;
        }
    }

    /// The inline words (bits 0..256), for native code.
    #[inline(always)]
    pub(crate) fn inline_mut(&mut self) -> &mut [u64; 4] {
        &mut self.inline
    }

    /// Clear every bit.
    #[inline(always)]
    fn clear(&mut self) {
        self.inline = [0; 4];
        if !self.heap.is_empty() {
            self.heap.fill(0);
        }
    }
}

/// The state of one packet in flight.
#[derive(Clone, Debug, Default)]
pub struct PacketState {
    /// `u64` slots.
    pub n: Vec<u64>,
    /// `u128` slots.
    pub w: Vec<u128>,
    /// Header validity.
    pub valid: Bits,
    /// The packet bytes this pass started from.
    pub frame: Vec<u8>,
    /// Parser cursor in bits.
    pub cursor: usize,
    /// First byte of the unparsed payload.
    pub payload_off: usize,
    /// A lookahead ran past the end of the packet.
    pub short: Cell<bool>,
    /// Requested side effects.
    pub fx: Effects,
    /// Colour of the direct meter executed by the current table hit.
    pub direct_color: Option<(u32, u8)>,
}

impl PacketState {
    /// A state with `n_narrow` `u64` slots, `n_wide` `u128` slots and
    /// `n_headers` validity bits (see `Code::new_state`).
    pub fn with_sizes(n_narrow: usize, n_wide: usize, n_headers: usize) -> PacketState {
        PacketState {
            n: vec![0; n_narrow],
            w: vec![0; n_wide],
            valid: Bits::new(n_headers),
            frame: Vec::with_capacity(2048),
            ..PacketState::default()
        }
    }

    /// Per-packet reset: headers invalid, every slot zero, no side effects.
    /// The frame is left alone.
    #[inline]
    pub fn reset(&mut self) {
        self.n.fill(0);
        if !self.w.is_empty() {
            self.w.fill(0);
        }
        self.valid.clear();
        self.cursor = 0;
        self.payload_off = 0;
        self.short.set(false);
        self.fx = Effects::default();
        self.direct_color = None;
    }

    /// Copy everything from `other`, reusing this state's allocations.
    pub fn copy_from(&mut self, other: &PacketState) {
        self.n.clone_from(&other.n);
        self.w.clone_from(&other.w);
        self.valid.clone_from(&other.valid);
        self.frame.clone_from(&other.frame);
        self.cursor = other.cursor;
        self.payload_off = other.payload_off;
        self.short.set(other.short.get());
        self.fx = other.fx.clone();
        self.direct_color = other.direct_color;
    }

    /// Read a slot as `u128`.
    #[inline(always)]
    pub fn load(&self, loc: Loc) -> u128 {
        match loc {
            Loc::N(i) => u128::from(self.n[i as usize]),
            Loc::W(i) => self.w[i as usize],
        }
    }

    /// Write a slot (the value is masked to `width`).
    #[inline(always)]
    pub fn store(&mut self, loc: Loc, width: u16, v: u128) {
        let v = v & mask128(width);
        match loc {
            Loc::N(i) => self.n[i as usize] = v as u64,
            Loc::W(i) => self.w[i as usize] = v,
        }
    }

    /// Write a slot with a value already known to fit.
    #[inline(always)]
    pub fn store_raw(&mut self, loc: Loc, v: u128) {
        match loc {
            Loc::N(i) => self.n[i as usize] = v as u64,
            Loc::W(i) => self.w[i as usize] = v,
        }
    }

    /// The bytes of the packet this pass started from.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }
}

/// Read `width` (≤ 64) bits at `bit_off` of `buf`; the caller checked that
/// they are inside `buf`.
#[inline]
pub fn read_bits64(buf: &[u8], bit_off: usize, width: u16) -> u64 {
    let byte = bit_off / 8;
    let sh = (bit_off % 8) as u32;
    let x = if let Some(win) = buf.get(byte..byte + 16) {
        // One fixed-size load: the common case (a header followed by more bytes).
        let mut w = [0u8; 16];
        w.copy_from_slice(win);
        u128::from_be_bytes(w)
    } else {
        let mut x = 0u128;
        for i in 0..16 {
            x = (x << 8) | u128::from(buf.get(byte + i).copied().unwrap_or(0));
        }
        x
    };
    ((x << sh) >> (128 - u32::from(width))) as u64
}

/// Read `width` (≤ 128) bits at `bit_off` of `buf` (in range).
#[inline]
pub fn read_bits(buf: &[u8], bit_off: usize, width: u16) -> u128 {
    if width <= 64 {
        u128::from(read_bits64(buf, bit_off, width))
    } else {
        let hi = read_bits64(buf, bit_off, width - 64);
        let lo = read_bits64(buf, bit_off + usize::from(width - 64), 64);
        (u128::from(hi) << 64) | u128::from(lo)
    }
}

/// Appends a stream of bit fields to a byte vector, most significant bit
/// first, flushing whole 64-bit words (no per-field memory traffic).
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u128,
    nbits: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `out`, starting with `lead` zero bits.
    #[inline]
    pub fn new(out: &'a mut Vec<u8>, lead: u32) -> BitWriter<'a> {
        let mut w = BitWriter {
            out,
            acc: 0,
            nbits: 0,
        };
        let mut lead = lead;
        while lead > 0 {
            let n = lead.min(64);
            w.put64(0, n);
            lead -= n;
        }
        w
    }

    #[inline(always)]
    fn put64(&mut self, v: u64, w: u32) {
        if w == 0 {
            return;
        }
        self.acc = if w >= 128 { 0 } else { self.acc << w } | u128::from(v);
        self.nbits += w;
        if self.nbits >= 64 {
            let word = (self.acc >> (self.nbits - 64)) as u64;
            self.out.extend_from_slice(&word.to_be_bytes());
            self.nbits -= 64;
            self.acc &= (1u128 << self.nbits) - 1;
        }
    }

    /// Append the low `width` bits of `v` (masked by the caller).
    #[inline(always)]
    pub fn put(&mut self, v: u128, width: u16) {
        if width <= 64 {
            self.put64(v as u64, u32::from(width));
        } else {
            self.put64((v >> 64) as u64, u32::from(width - 64));
            self.put64(v as u64, 64);
        }
    }

    /// Flush the remaining whole bytes (a trailing partial byte is padded
    /// with zero bits on the right).
    #[inline]
    pub fn finish(self) {
        let mut n = self.nbits;
        let mut acc = self.acc;
        if n % 8 != 0 {
            acc <<= 8 - n % 8;
            n += 8 - n % 8;
        }
        while n > 0 {
            n -= 8;
            self.out.push((acc >> n) as u8);
        }
    }
}

/// Write the low `width` (≤ 128) bits of `v` at `bit_off` of `buf` (in
/// range), bit by bit: the reference the fast paths are tested against.
/// A [`Word`] type with its own slot array in [`PacketState`]: `u64` for
/// fields up to 64 bits, `u128` for wider ones.
pub trait SlotWord: Word {
    /// Read slot `i` of this word's slot array.
    fn load_slot(st: &PacketState, i: u32) -> Self;
}

impl SlotWord for u64 {
    #[inline(always)]
    fn load_slot(st: &PacketState, i: u32) -> Self {
        st.n[i as usize]
    }
}

impl SlotWord for u128 {
    #[inline(always)]
    fn load_slot(st: &PacketState, i: u32) -> Self {
        st.w[i as usize]
    }
}

/// Write `width` bits of `v` at bit offset `bit_off` (a bit-at-a-time
/// reference for tests of the fast paths).
#[cfg(test)]
pub fn write_bits(buf: &mut [u8], bit_off: usize, width: u16, v: u128) {
    for i in 0..usize::from(width) {
        let bit = (v >> (usize::from(width) - 1 - i)) & 1;
        let pos = bit_off + i;
        let m = 0x80u8 >> (pos % 8);
        if bit == 1 {
            buf[pos / 8] |= m;
        } else {
            buf[pos / 8] &= !m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bits_round_trip_examples() {
        let buf = [0x45u8, 0x00, 0x00, 0x54, 0xab, 0xcd];
        assert_eq!(read_bits64(&buf, 0, 4), 4);
        assert_eq!(read_bits64(&buf, 4, 4), 5);
        assert_eq!(read_bits64(&buf, 16, 16), 0x54);
        assert_eq!(read_bits64(&buf, 35, 13), 0xbcd & 0x1fff);
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out, 0);
        w.put(4, 4);
        w.put(5, 4);
        w.put(0, 8);
        w.put(0x54, 16);
        w.finish();
        assert_eq!(out, vec![0x45, 0, 0, 0x54]);
        let mut out = vec![0xaa];
        let mut w = BitWriter::new(&mut out, 4);
        w.put(0xfff, 12);
        w.put(u128::MAX, 128);
        w.put(1, 1);
        w.finish();
        // 4 + 12 + 128 + 1 = 145 bits: 19 bytes.
        assert_eq!(out.len(), 1 + 19);
        assert_eq!(&out[..3], &[0xaa, 0x0f, 0xff]);
        assert_eq!(out[18], 0xff);
        assert_eq!(out[19], 0x80);
    }

    proptest! {
        #[test]
        fn writer_matches_bitwise(lead in 0u32..130, fields in proptest::collection::vec((1u16..=128, any::<u128>()), 0..12)) {
            let mut fast = Vec::new();
            let mut w = BitWriter::new(&mut fast, lead);
            let mut total = lead as usize;
            for (width, v) in &fields {
                w.put(v & mask128(*width), *width);
                total += usize::from(*width);
            }
            w.finish();
            let mut slow = vec![0u8; total.div_ceil(8)];
            let mut off = lead as usize;
            for (width, v) in &fields {
                write_bits(&mut slow, off, *width, v & mask128(*width));
                off += usize::from(*width);
            }
            prop_assert_eq!(fast, slow);
        }
    }

    proptest! {
        #[test]
        fn write_then_read(off in 0usize..64, width in 1u16..=128, v: u128, fill: u8) {
            let mut buf = vec![fill; 40];
            let v = v & mask128(width);
            write_bits(&mut buf, off, width, v);
            prop_assert_eq!(read_bits(&buf, off, width), v);
            // Bits outside the field are untouched.
            for bit in (0..off).chain(off + usize::from(width)..320) {
                let b = (buf[bit / 8] >> (7 - bit % 8)) & 1;
                let f = (fill >> (7 - bit % 8)) & 1;
                prop_assert_eq!(b, f);
            }
        }
    }
}
