//! v1model hash and checksum algorithms, bit-compatible with BMv2.
//!
//! [`compute`] implements every [`HashAlgo`] of v1model's `HashAlgorithm` the
//! way BMv2's `simple_switch` computes it (`src/bm_sim/calculations.cpp`), so a
//! p4c STF test that checks a hash or checksum result passes here too. The
//! parameters, in the usual Rocksoft/"CRC catalogue" notation, and the check
//! value (the result over the nine ASCII bytes `"123456789"`):
//!
//! | algo | width | poly | init | refin | refout | xorout | check |
//! |---|---|---|---|---|---|---|---|
//! | `crc16`, `crc16_custom` (default) | 16 | 0x8005 | 0x0000 | yes | yes | 0x0000 | 0xBB3D (CRC-16/ARC) |
//! | `crc32`, `crc32_custom` (default) | 32 | 0x04C11DB7 | 0xFFFFFFFF | yes | yes | 0xFFFFFFFF | 0xCBF43926 (CRC-32/ISO-HDLC, IEEE 802.3) |
//!
//! The other algorithms:
//!
//! * `csum16`: RFC 1071 internet checksum — the one's complement of the
//!   one's-complement sum of the data taken as big-endian 16-bit words; an odd
//!   trailing byte is padded on the right with a zero byte. Empty data gives
//!   0xFFFF. Check value: `"123456789"` gives 0xF62A.
//! * `xor16`: XOR of the data taken as big-endian 16-bit words, an odd trailing
//!   byte padded on the right with zero (BMv2's `xor16`).
//! * `identity`: the first `min(8, len)` bytes of the data read as a big-endian
//!   unsigned integer (BMv2's `identity`): data of at most 8 bytes is returned
//!   as its value; longer data keeps its first (most significant) 8 bytes.
//!   Empty data gives 0. The caller truncates to its destination width.
//! * `random`: has no pure definition. [`compute`] maps it to a 64-bit mix of
//!   the data so that it is still a function; a target that wants per-call
//!   randomness (v1model semantics) draws from a seeded [`SplitMix64`] instead.
//!
//! The CRCs are table-driven (one 256-entry table per algorithm, built at
//! compile time), one table look-up per byte.

use crate::artifact::HashAlgo;

/// Width in bits of the value [`compute`] returns for `algo` (the result
/// always fits in that many low bits).
pub const fn width(algo: HashAlgo) -> u32 {
    match algo {
        HashAlgo::Crc16 | HashAlgo::Crc16Custom | HashAlgo::Csum16 | HashAlgo::Xor16 => 16,
        HashAlgo::Crc32 | HashAlgo::Crc32Custom => 32,
        HashAlgo::Identity | HashAlgo::Random => 64,
    }
}

/// Whether [`compute`] with `algo` is what v1model means by it. `Random` is
/// the only algorithm whose v1model meaning is not a function of the data.
pub const fn is_deterministic(algo: HashAlgo) -> bool {
    !matches!(algo, HashAlgo::Random)
}

/// Hash `data` (already concatenated, most significant field first, as BMv2
/// packs a field list) with `algo`. See the module documentation for the
/// exact definition of each algorithm.
pub fn compute(algo: HashAlgo, data: &[u8]) -> u64 {
    match algo {
        HashAlgo::Crc16 | HashAlgo::Crc16Custom => u64::from(crc16(data)),
        HashAlgo::Crc32 | HashAlgo::Crc32Custom => u64::from(crc32(data)),
        HashAlgo::Csum16 => u64::from(csum16(data)),
        HashAlgo::Xor16 => u64::from(xor16(data)),
        HashAlgo::Identity => identity(data),
        HashAlgo::Random => mix64(data),
    }
}

/// v1model `hash(dst, algo, base, data, max)`: `base + (hash % max)`, or
/// `base + hash` when `max` is 0 (BMv2's behaviour), wrapping at 64 bits. The
/// caller truncates to the destination's width.
pub fn v1model_hash(algo: HashAlgo, base: u64, data: &[u8], max: u64) -> u64 {
    let h = compute(algo, data);
    let h = if max == 0 { h } else { h % max };
    base.wrapping_add(h)
}

const fn reflected_table16(poly_reflected: u16) -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut r = i as u16;
        let mut b = 0;
        while b < 8 {
            r = if r & 1 != 0 {
                (r >> 1) ^ poly_reflected
            } else {
                r >> 1
            };
            b += 1;
        }
        t[i] = r;
        i += 1;
    }
    t
}

const fn reflected_table32(poly_reflected: u32) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut r = i as u32;
        let mut b = 0;
        while b < 8 {
            r = if r & 1 != 0 {
                (r >> 1) ^ poly_reflected
            } else {
                r >> 1
            };
            b += 1;
        }
        t[i] = r;
        i += 1;
    }
    t
}

/// CRC-16/ARC table: polynomial 0x8005 bit-reversed (0xA001).
static CRC16_TABLE: [u16; 256] = reflected_table16(0xA001);
/// CRC-32/ISO-HDLC table: polynomial 0x04C11DB7 bit-reversed (0xEDB88320).
static CRC32_TABLE: [u32; 256] = reflected_table32(0xEDB8_8320);

/// CRC-16/ARC (BMv2 `crc16`): poly 0x8005, init 0, reflected in and out, xorout 0.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc = (crc >> 8) ^ CRC16_TABLE[usize::from((crc as u8) ^ b)];
    }
    crc
}

/// CRC-32/ISO-HDLC (BMv2 `crc32`, Ethernet FCS, zlib): poly 0x04C11DB7, init
/// and xorout 0xFFFFFFFF, reflected in and out.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc: u32 = 0xFFFF_FFFF;
    for &b in data {
        crc = (crc >> 8) ^ CRC32_TABLE[usize::from((crc as u8) ^ b)];
    }
    !crc
}

/// RFC 1071 internet checksum of `data` (see [`InternetChecksum`]).
pub fn csum16(data: &[u8]) -> u16 {
    let mut c = InternetChecksum::new();
    c.update(data);
    c.finish()
}

/// BMv2 `xor16`: XOR of big-endian 16-bit words, an odd last byte padded on
/// the right with zero.
pub fn xor16(data: &[u8]) -> u16 {
    let mut chunks = data.chunks_exact(2);
    let mut x = 0u16;
    for c in &mut chunks {
        x ^= u16::from_be_bytes([c[0], c[1]]);
    }
    if let [last] = chunks.remainder() {
        x ^= u16::from(*last) << 8;
    }
    x
}

/// BMv2 `identity`: the first `min(8, len)` bytes as a big-endian integer.
pub fn identity(data: &[u8]) -> u64 {
    data.iter()
        .take(8)
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// A deterministic 64-bit mix of `data` (FNV-1a followed by a SplitMix64
/// finaliser), used for [`HashAlgo::Random`] by [`compute`].
pub fn mix64(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    splitmix_finalize(h)
}

const fn splitmix_finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small, fast, seeded pseudo-random generator (SplitMix64) for v1model's
/// `random()` and the `random` hash: the same seed gives the same sequence on
/// every run and platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator started from `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        splitmix_finalize(self.state)
    }

    /// A value uniform in `lo..=hi` (v1model `random(dst, lo, hi)`); `lo > hi`
    /// gives `lo`. Uses rejection sampling, so there is no modulo bias.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if lo >= hi {
            return lo;
        }
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        let n = span + 1;
        // Largest multiple of n that fits in 2^64, minus one.
        let zone = u64::MAX - (u64::MAX - n + 1) % n;
        loop {
            let r = self.next_u64();
            if r <= zone {
                return lo + r % n;
            }
        }
    }
}

/// Incremental RFC 1071 internet checksum over pieces of data that may have
/// odd lengths: the pieces are summed as if concatenated. Used for v1model
/// `csum16` over field lists and for IPv4 header checksums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InternetChecksum {
    /// Running sum of 16-bit words, folded lazily.
    sum: u64,
    /// The high byte of a word whose low byte has not arrived yet.
    pending: Option<u8>,
}

impl InternetChecksum {
    /// An empty checksum (sum 0).
    pub const fn new() -> InternetChecksum {
        InternetChecksum {
            sum: 0,
            pending: None,
        }
    }

    /// Add `data` to the sum, continuing any odd byte left by the previous piece.
    pub fn update(&mut self, mut data: &[u8]) {
        if let Some(hi) = self.pending.take() {
            match data.split_first() {
                Some((&lo, rest)) => {
                    self.sum += u64::from(u16::from_be_bytes([hi, lo]));
                    data = rest;
                }
                None => {
                    self.pending = Some(hi);
                    return;
                }
            }
        }
        // 32-bit words at a time into a 64-bit accumulator: no carry can be
        // lost for inputs below 2^32 words.
        let mut quads = data.chunks_exact(4);
        for q in &mut quads {
            self.sum += u64::from(u32::from_be_bytes([q[0], q[1], q[2], q[3]]));
        }
        let rest = quads.remainder();
        let mut pairs = rest.chunks_exact(2);
        for p in &mut pairs {
            self.sum += u64::from(u16::from_be_bytes([p[0], p[1]]));
        }
        if let [b] = pairs.remainder() {
            self.pending = Some(*b);
        }
        // Keep the accumulator far from overflow on very long inputs.
        if self.sum >> 62 != 0 {
            self.sum = (self.sum & 0xFFFF_FFFF) + (self.sum >> 32);
        }
    }

    /// Add one big-endian 16-bit word (must be at an even offset).
    pub fn add_u16(&mut self, word: u16) {
        self.update(&word.to_be_bytes());
    }

    /// The one's-complement sum folded to 16 bits (before complementing),
    /// with an odd trailing byte padded by zero.
    pub fn folded_sum(&self) -> u16 {
        let mut s = self.sum;
        if let Some(hi) = self.pending {
            s += u64::from(hi) << 8;
        }
        while s >> 16 != 0 {
            s = (s & 0xFFFF) + (s >> 16);
        }
        s as u16
    }

    /// The checksum: the one's complement of [`Self::folded_sum`].
    pub fn finish(&self) -> u16 {
        !self.folded_sum()
    }
}

/// The IPv4 header checksum of `header` (its length is taken as given, so
/// pass exactly IHL×4 bytes), computed with the checksum field (bytes 10–11)
/// taken as zero. Headers shorter than 12 bytes are summed as they are.
pub fn ipv4_header_checksum(header: &[u8]) -> u16 {
    let mut c = InternetChecksum::new();
    if header.len() >= 12 {
        c.update(&header[..10]);
        c.update(&header[12..]);
    } else {
        c.update(header);
    }
    c.finish()
}

/// RFC 1624 incremental update (equation 3): the new checksum after a 16-bit
/// word covered by checksum `old_checksum` changes from `old_word` to
/// `new_word`: `HC' = ~(~HC + ~m + m')`. Used e.g. for a TTL decrement
/// without re-summing the header.
pub fn csum16_incremental(old_checksum: u16, old_word: u16, new_word: u16) -> u16 {
    let mut s = u32::from(!old_checksum) + u32::from(!old_word) + u32::from(new_word);
    while s >> 16 != 0 {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

/// One's-complement 16-bit addition with end-around carry (RFC 1071): the
/// sum of `a` and `b` modulo 0xFFFF, where 0 results only from 0 + 0.
pub const fn ones_complement_add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    ((s & 0xFFFF) + (s >> 16)) as u16
}

/// PSA `InternetChecksum.add(data)` (or `subtract` when `subtract`) on the
/// running sum `sum`, as BMv2's psa_switch computes it: `data` (the fields
/// concatenated, right-aligned in whole bytes) is read as one big-endian
/// number and split into 16-bit words from its least significant end; each
/// word is added to the sum in one's complement (subtract adds the word's
/// complement). Words above the most significant non-zero word are not
/// visited, so subtracting zeros leaves a zero sum at 0 rather than 0xFFFF.
pub fn psa_internet_checksum(sum: u16, data: &[u8], subtract: bool) -> u16 {
    let lead = data.iter().take_while(|b| **b == 0).count();
    let data = &data[lead..];
    let mut sum = sum;
    // Words from the least significant end; an odd first byte is a word alone.
    let mut rest = data;
    while !rest.is_empty() {
        let (w, head) = match rest {
            [.., hi, lo] => (u16::from_be_bytes([*hi, *lo]), &rest[..rest.len() - 2]),
            [lo] => (u16::from(*lo), &rest[..0]),
            [] => break,
        };
        sum = ones_complement_add(sum, if subtract { !w } else { w });
        rest = head;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    /// Reference bit-at-a-time CRC (Rocksoft model), to test the tables against.
    fn crc_bitwise(
        width: u32,
        poly: u64,
        init: u64,
        refin: bool,
        refout: bool,
        xorout: u64,
        data: &[u8],
    ) -> u64 {
        let top = 1u64 << (width - 1);
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let mut r = init;
        for &b in data {
            let b = if refin { b.reverse_bits() } else { b };
            r ^= u64::from(b) << (width - 8);
            for _ in 0..8 {
                r = if r & top != 0 {
                    (r << 1) ^ poly
                } else {
                    r << 1
                } & mask;
            }
        }
        if refout {
            r = r.reverse_bits() >> (64 - width);
        }
        (r ^ xorout) & mask
    }

    #[test]
    fn crc_check_values() {
        assert_eq!(crc16(CHECK), 0xBB3D);
        assert_eq!(crc32(CHECK), 0xCBF4_3926);
        assert_eq!(compute(HashAlgo::Crc16, CHECK), 0xBB3D);
        assert_eq!(compute(HashAlgo::Crc16Custom, CHECK), 0xBB3D);
        assert_eq!(compute(HashAlgo::Crc32, CHECK), 0xCBF4_3926);
        assert_eq!(compute(HashAlgo::Crc32Custom, CHECK), 0xCBF4_3926);
        assert_eq!(crc16(&[]), 0);
        assert_eq!(crc32(&[]), 0);
    }

    #[test]
    fn crc_tables_match_bitwise_model() {
        let data: Vec<u8> = (0u16..600).map(|i| (i * 7 + 3) as u8).collect();
        for n in [0, 1, 2, 3, 17, 255, 600] {
            let d = &data[..n];
            assert_eq!(
                u64::from(crc16(d)),
                crc_bitwise(16, 0x8005, 0, true, true, 0, d)
            );
            assert_eq!(
                u64::from(crc32(d)),
                crc_bitwise(32, 0x04C1_1DB7, 0xFFFF_FFFF, true, true, 0xFFFF_FFFF, d)
            );
        }
    }

    #[test]
    fn csum16_values() {
        // RFC 1071 §3 example: words 0001 f203 f4f5 f6f7 sum to 0xddf2.
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let mut c = InternetChecksum::new();
        c.update(&d);
        assert_eq!(c.folded_sum(), 0xddf2);
        assert_eq!(csum16(&d), !0xddf2);
        // "123456789": 0x3132+0x3334+0x3536+0x3738+0x3900 = 0x109D4 -> 0x09D5 -> !0x09D5.
        assert_eq!(csum16(CHECK), 0xF62A);
        assert_eq!(compute(HashAlgo::Csum16, CHECK), 0xF62A);
        assert_eq!(csum16(&[]), 0xFFFF);
        // Odd byte is padded on the right.
        assert_eq!(csum16(&[0xAB]), !0xAB00);
    }

    #[test]
    fn csum16_pieces_equal_whole() {
        let data: Vec<u8> = (0u16..301).map(|i| (i * 13 + 1) as u8).collect();
        let whole = csum16(&data);
        for cut1 in [0, 1, 2, 3, 5, 100] {
            for cut2 in [cut1, cut1 + 1, cut1 + 7, 300] {
                let mut c = InternetChecksum::new();
                c.update(&data[..cut1]);
                c.update(&data[cut1..cut2]);
                c.update(&[]);
                c.update(&data[cut2..]);
                assert_eq!(c.finish(), whole, "cuts {cut1} {cut2}");
            }
        }
    }

    #[test]
    fn ipv4_checksum_and_incremental() {
        // A classic example header (checksum 0xb861 in bytes 10..12).
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_header_checksum(&h), 0xb861);
        // A valid header sums (with its checksum) to 0xFFFF, i.e. csum16 == 0.
        assert_eq!(csum16(&h), 0);
        // TTL decrement: word 4 (TTL, protocol) 0x4011 -> 0x3f11.
        let new = csum16_incremental(0xb861, 0x4011, 0x3f11);
        h[8] = 0x3f;
        assert_eq!(new, ipv4_header_checksum(&h));
    }

    #[test]
    fn xor16_and_identity() {
        assert_eq!(xor16(&[0x12, 0x34, 0x56, 0x78]), 0x1234 ^ 0x5678);
        assert_eq!(xor16(&[0x12, 0x34, 0xAB]), 0x1234 ^ 0xAB00);
        assert_eq!(xor16(&[]), 0);
        assert_eq!(
            compute(HashAlgo::Xor16, CHECK),
            0x3132 ^ 0x3334 ^ 0x3536 ^ 0x3738 ^ 0x3900
        );
        assert_eq!(identity(&[0x0a, 0x00, 0x00, 0x01]), 0x0a00_0001);
        assert_eq!(identity(&[]), 0);
        assert_eq!(
            identity(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
            0x0102_0304_0506_0708
        );
        assert_eq!(compute(HashAlgo::Identity, CHECK), 0x3132_3334_3536_3738);
    }

    #[test]
    fn widths_bound_results() {
        let algos = [
            HashAlgo::Crc16,
            HashAlgo::Crc16Custom,
            HashAlgo::Crc32,
            HashAlgo::Crc32Custom,
            HashAlgo::Csum16,
            HashAlgo::Xor16,
            HashAlgo::Identity,
            HashAlgo::Random,
        ];
        let data: Vec<u8> = (0u8..=255).collect();
        for a in algos {
            let w = width(a);
            for n in [0, 1, 9, 256] {
                let h = compute(a, &data[..n]);
                if w < 64 {
                    assert!(h < 1 << w, "{a:?} {h:#x}");
                }
                // Deterministic in the data.
                assert_eq!(h, compute(a, &data[..n]));
            }
        }
        assert!(!is_deterministic(HashAlgo::Random));
        assert!(is_deterministic(HashAlgo::Crc16));
    }

    #[test]
    fn v1model_hash_base_and_max() {
        assert_eq!(v1model_hash(HashAlgo::Crc16, 10, CHECK, 0), 10 + 0xBB3D);
        assert_eq!(
            v1model_hash(HashAlgo::Crc16, 10, CHECK, 100),
            10 + 0xBB3D % 100
        );
        assert_eq!(v1model_hash(HashAlgo::Identity, u64::MAX, &[2], 0), 1);
    }

    #[test]
    fn splitmix_is_seeded_and_bounded() {
        let mut a = SplitMix64::new(42);
        let mut b = SplitMix64::new(42);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs[0], xs[1]);
        let mut r = SplitMix64::new(7);
        let mut seen = [false; 6];
        for _ in 0..200 {
            let v = r.range_inclusive(10, 15);
            assert!((10..=15).contains(&v));
            seen[(v - 10) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.range_inclusive(5, 5), 5);
        assert_eq!(r.range_inclusive(9, 3), 9);
        let _ = r.range_inclusive(0, u64::MAX);
    }

    /// The IPv4 header of RFC 791's well-known example (20 bytes, checksum
    /// 0xB861 at bytes 10-11).
    const IPV4: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn ones_complement_add_wraps_the_carry() {
        assert_eq!(ones_complement_add(0, 0), 0);
        assert_eq!(ones_complement_add(0xFFFF, 1), 1);
        assert_eq!(ones_complement_add(0x8000, 0x8000), 1);
        assert_eq!(ones_complement_add(0x1234, 0x0001), 0x1235);
        assert_eq!(ones_complement_add(0xFFFF, 0), 0xFFFF);
    }

    #[test]
    fn psa_internet_checksum_of_an_ipv4_header() {
        // Every word but the checksum, as PSA programs add them.
        let mut data = IPV4.to_vec();
        data.drain(10..12);
        let sum = psa_internet_checksum(0, &data, false);
        assert_eq!(!sum, 0xB861);
        assert_eq!(!sum, ipv4_header_checksum(&IPV4));
        // Field by field gives the same sum.
        let mut s = 0;
        for w in data.chunks(2) {
            s = psa_internet_checksum(s, w, false);
        }
        assert_eq!(s, sum);
    }

    #[test]
    fn psa_internet_checksum_incremental_ttl_decrement() {
        // TTL 0x40 -> 0x3F: word 4 (ttl, protocol) 0x4011 -> 0x3F11.
        let mut hdr = IPV4;
        let mut sum = !u16::from_be_bytes([hdr[10], hdr[11]]);
        sum = psa_internet_checksum(sum, &[0x40, 0x11], true);
        sum = psa_internet_checksum(sum, &[0x3F, 0x11], false);
        hdr[8] = 0x3F;
        assert_eq!(!sum, ipv4_header_checksum(&hdr));
        assert_eq!(!sum, csum16_incremental(0xB861, 0x4011, 0x3F11));
        // 0xB861 + 0x0100 (one's complement arithmetic).
        assert_eq!(!sum, 0xB961);
    }

    #[test]
    fn psa_internet_checksum_skips_leading_zero_words() {
        // Subtracting zeros from a zero sum keeps it 0 (BMv2 visits no word).
        assert_eq!(psa_internet_checksum(0, &[0, 0, 0, 0], true), 0);
        // A zero word below a non-zero one is visited: 0 - 0 = 0xFFFF, then - 1.
        assert_eq!(psa_internet_checksum(0, &[0, 1, 0, 0], true), 0xFFFE);
        // An odd byte count: the first byte is a word alone.
        assert_eq!(psa_internet_checksum(0, &[0x12, 0x34, 0x56], false), 0x3468);
        assert_eq!(psa_internet_checksum(0, &[], false), 0);
    }
}
