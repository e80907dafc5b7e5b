//! InfiniBand Base Transport Header (12 bytes), as carried by RoCEv2.
//!
//! ```text
//!  0       opcode (8)
//!  1       SE (1) | M (1) | pad count (2) | TVer (4)
//!  2..4    P_Key (16)
//!  4       reserved (8)
//!  5..8    destination QP (24)
//!  8       AckReq (1) | reserved (7)
//!  9..12   PSN (24)
//! ```
//!
//! Field order and widths match `ns_bth_h` in `programs/netsparse.p4`.
//! NetSparse uses opcode [`OPCODE_RC_SEND_ONLY`] (no extended transport
//! headers follow), P_Key 0xffff, TVer 0 and destination QP [`NETSPARSE_QP`].

use super::{be16, be32, Layer, WireError, BTH_LEN};

/// RC SEND Only: a single-packet message with no extended headers.
pub const OPCODE_RC_SEND_ONLY: u8 = 0x04;
/// The destination QP every NetSparse packet carries: ASCII "NSP".
pub const NETSPARSE_QP: u32 = 0x4E_5350;
/// The default partition key.
pub const DEFAULT_PKEY: u16 = 0xffff;

/// Byte offsets of the BTH fields, each named once.
pub mod field {
    use std::ops::Range;
    /// Opcode.
    pub const OPCODE: usize = 0;
    /// SE, M, pad count and TVer.
    pub const FLAGS: usize = 1;
    /// Partition key.
    pub const PKEY: Range<usize> = 2..4;
    /// Reserved byte (FECN/BECN in some profiles).
    pub const RESERVED0: usize = 4;
    /// Destination QP (24 bits).
    pub const DST_QP: Range<usize> = 5..8;
    /// AckReq and 7 reserved bits.
    pub const ACK: usize = 8;
    /// Packet sequence number (24 bits).
    pub const PSN: Range<usize> = 9..12;
}

const SE_BIT: u8 = 0x80;
const MIG_BIT: u8 = 0x40;
const PAD_SHIFT: u8 = 4;
const TVER_MASK: u8 = 0x0f;
const ACK_BIT: u8 = 0x80;
const U24: u32 = 0x00ff_ffff;

/// A zero-copy view of a BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BthPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> BthPacket<T> {
    /// Wrap `buffer` without checking its length (accessors may then panic
    /// on a short buffer: use [`Self::new_checked`] on untrusted input).
    pub const fn new_unchecked(buffer: T) -> BthPacket<T> {
        BthPacket { buffer }
    }

    /// Wrap `buffer`, checking it holds at least 12 bytes.
    pub fn new_checked(buffer: T) -> Result<BthPacket<T>, WireError> {
        let p = BthPacket::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Error unless the buffer holds a whole BTH.
    pub fn check_len(&self) -> Result<(), WireError> {
        let got = self.buffer.as_ref().len();
        if got < BTH_LEN {
            return Err(WireError::Truncated {
                layer: Layer::Bth,
                needed: BTH_LEN,
                got,
            });
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Opcode.
    pub fn opcode(&self) -> u8 {
        self.buffer.as_ref()[field::OPCODE]
    }
    /// Solicited event bit.
    pub fn solicited(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & SE_BIT != 0
    }
    /// Migration request bit.
    pub fn mig_req(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & MIG_BIT != 0
    }
    /// Pad count (0..=3).
    pub fn pad_count(&self) -> u8 {
        (self.buffer.as_ref()[field::FLAGS] >> PAD_SHIFT) & 0x3
    }
    /// Transport header version (0..=15).
    pub fn tver(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS] & TVER_MASK
    }
    /// Partition key.
    pub fn pkey(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PKEY.start)
    }
    /// Destination QP (24 bits).
    pub fn dst_qp(&self) -> u32 {
        be32(self.buffer.as_ref(), field::RESERVED0) & U24
    }
    /// AckReq bit.
    pub fn ack_req(&self) -> bool {
        self.buffer.as_ref()[field::ACK] & ACK_BIT != 0
    }
    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK) & U24
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> BthPacket<T> {
    fn flags_mut(&mut self, mask: u8, value: u8) {
        let b = &mut self.buffer.as_mut()[field::FLAGS];
        *b = (*b & !mask) | (value & mask);
    }
    /// Set the opcode.
    pub fn set_opcode(&mut self, v: u8) {
        self.buffer.as_mut()[field::OPCODE] = v;
    }
    /// Set the solicited event bit.
    pub fn set_solicited(&mut self, v: bool) {
        self.flags_mut(SE_BIT, if v { SE_BIT } else { 0 });
    }
    /// Set the migration request bit.
    pub fn set_mig_req(&mut self, v: bool) {
        self.flags_mut(MIG_BIT, if v { MIG_BIT } else { 0 });
    }
    /// Set the pad count (low 2 bits of `v`).
    pub fn set_pad_count(&mut self, v: u8) {
        self.flags_mut(0x30, (v & 0x3) << PAD_SHIFT);
    }
    /// Set the transport header version (low 4 bits of `v`).
    pub fn set_tver(&mut self, v: u8) {
        self.flags_mut(TVER_MASK, v);
    }
    /// Set the partition key.
    pub fn set_pkey(&mut self, v: u16) {
        self.buffer.as_mut()[field::PKEY].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the destination QP (low 24 bits of `v`); also zeroes the reserved byte.
    pub fn set_dst_qp(&mut self, v: u32) {
        self.buffer.as_mut()[field::RESERVED0] = 0;
        self.buffer.as_mut()[field::DST_QP].copy_from_slice(&(v & U24).to_be_bytes()[1..]);
    }
    /// Set the AckReq bit (the 7 reserved bits become 0).
    pub fn set_ack_req(&mut self, v: bool) {
        self.buffer.as_mut()[field::ACK] = if v { ACK_BIT } else { 0 };
    }
    /// Set the PSN (low 24 bits of `v`).
    pub fn set_psn(&mut self, v: u32) {
        self.buffer.as_mut()[field::PSN].copy_from_slice(&(v & U24).to_be_bytes()[1..]);
    }
}

/// The plain-data BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BthRepr {
    /// Opcode.
    pub opcode: u8,
    /// Solicited event.
    pub solicited: bool,
    /// Migration request.
    pub mig_req: bool,
    /// Pad count (0..=3).
    pub pad_count: u8,
    /// Transport header version (0..=15).
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// Destination QP (24 bits).
    pub dst_qp: u32,
    /// AckReq.
    pub ack_req: bool,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

impl BthRepr {
    /// The BTH of a NetSparse packet with sequence number `psn` (low 24 bits).
    pub const fn netsparse(psn: u32) -> BthRepr {
        BthRepr {
            opcode: OPCODE_RC_SEND_ONLY,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: DEFAULT_PKEY,
            dst_qp: NETSPARSE_QP,
            ack_req: false,
            psn: psn & U24,
        }
    }

    /// Whether this BTH marks a NetSparse packet (opcode and destination QP).
    pub const fn is_netsparse(&self) -> bool {
        self.opcode == OPCODE_RC_SEND_ONLY && self.dst_qp == NETSPARSE_QP
    }

    /// Read a BTH (reserved bits are ignored).
    pub fn parse<T: AsRef<[u8]>>(p: &BthPacket<T>) -> Result<BthRepr, WireError> {
        p.check_len()?;
        Ok(BthRepr {
            opcode: p.opcode(),
            solicited: p.solicited(),
            mig_req: p.mig_req(),
            pad_count: p.pad_count(),
            tver: p.tver(),
            pkey: p.pkey(),
            dst_qp: p.dst_qp(),
            ack_req: p.ack_req(),
            psn: p.psn(),
        })
    }

    /// Bytes [`Self::emit`] writes (12).
    pub const fn buffer_len(&self) -> usize {
        BTH_LEN
    }

    /// Write the BTH into the first 12 bytes of `p` (reserved bits zero;
    /// out-of-range narrow fields are truncated to their widths).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut BthPacket<T>) {
        p.buffer.as_mut()[field::FLAGS] = 0;
        p.set_opcode(self.opcode);
        p.set_solicited(self.solicited);
        p.set_mig_req(self.mig_req);
        p.set_pad_count(self.pad_count);
        p.set_tver(self.tver);
        p.set_pkey(self.pkey);
        p.set_dst_qp(self.dst_qp);
        p.set_ack_req(self.ack_req);
        p.set_psn(self.psn);
    }

    /// Write the BTH into `buf[..12]`, checking the length.
    pub fn emit_into(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let got = buf.len();
        let head = buf.get_mut(..BTH_LEN).ok_or(WireError::BufferTooSmall {
            needed: BTH_LEN,
            got,
        })?;
        self.emit(&mut BthPacket::new_unchecked(head));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A NetSparse BTH with PSN 0x010203, written out by hand.
    static NETSPARSE_BTH: [u8; 12] = [
        0x04, // opcode: RC SEND Only
        0x00, // SE 0, M 0, pad 0, TVer 0
        0xff, 0xff, // P_Key
        0x00, // reserved
        0x4e, 0x53, 0x50, // destination QP "NSP"
        0x00, // AckReq 0
        0x01, 0x02, 0x03, // PSN
    ];

    /// Every flag set, odd values everywhere.
    static FLAGS_BTH: [u8; 12] = [
        0x0a, // opcode 0x0a
        0xe5, // SE 1, M 1, pad 2, TVer 5
        0x12, 0x34, // P_Key
        0x00, 0xab, 0xcd, 0xef, // reserved, QP
        0x80, // AckReq
        0xfe, 0xdc, 0xba, // PSN
    ];

    #[test]
    fn parse_netsparse() {
        let p = BthPacket::new_checked(&NETSPARSE_BTH[..]).unwrap();
        let r = BthRepr::parse(&p).unwrap();
        assert_eq!(r, BthRepr::netsparse(0x010203));
        assert!(r.is_netsparse());
    }

    #[test]
    fn emit_netsparse() {
        let mut buf = [0xAAu8; 12];
        BthRepr::netsparse(0xFF01_0203).emit(&mut BthPacket::new_unchecked(&mut buf[..]));
        assert_eq!(buf, NETSPARSE_BTH);
    }

    #[test]
    fn flags_both_directions() {
        let r = BthRepr {
            opcode: 0x0a,
            solicited: true,
            mig_req: true,
            pad_count: 2,
            tver: 5,
            pkey: 0x1234,
            dst_qp: 0xabcdef,
            ack_req: true,
            psn: 0xfedcba,
        };
        assert_eq!(
            BthRepr::parse(&BthPacket::new_unchecked(&FLAGS_BTH[..])),
            Ok(r)
        );
        let mut buf = [0u8; 12];
        r.emit_into(&mut buf).unwrap();
        assert_eq!(buf, FLAGS_BTH);
        assert!(!r.is_netsparse());
        // Setters touch only their own bits.
        let mut p = BthPacket::new_unchecked(&mut buf[..]);
        p.set_tver(0);
        p.set_solicited(false);
        assert_eq!(
            (p.mig_req(), p.pad_count(), p.tver(), p.solicited()),
            (true, 2, 0, false)
        );
    }

    #[test]
    fn short_buffers() {
        assert_eq!(
            BthPacket::new_checked(&NETSPARSE_BTH[..11]),
            Err(WireError::Truncated {
                layer: Layer::Bth,
                needed: 12,
                got: 11
            })
        );
        assert!(BthRepr::netsparse(0).emit_into(&mut [0u8; 5]).is_err());
    }
}
