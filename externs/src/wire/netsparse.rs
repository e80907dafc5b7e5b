//! The NetSparse concatenation and PR layers (Figure 6).
//!
//! ```text
//! concatenation header (14 B):  pr_type (2) | dst (4) | prop_len (4) | num_prs (4)
//! PR header (18 B):             src (4) | tid (2) | idx (8) | req_id (4)
//! ```
//!
//! followed, for responses, by `prop_len` payload bytes per PR; reads carry
//! no payload. Big-endian, in the order of `ns_concat_h`/`ns_pr_h` in
//! `programs/netsparse.p4`.
//!
//! [`ConcatPacket`] views a whole concatenation layer (header + PRs) and
//! iterates its PRs as zero-copy [`PrView`]s; [`PrPacket`] views one PR.
//! [`ConcatPacket::new_checked`] validates the structure completely (known
//! type, `num_prs` PRs exactly filling the buffer), after which iteration
//! cannot fail.

use std::iter::FusedIterator;

use super::{be16, be32, be64, pr_stride, Layer, WireError, CONCAT_HEADER_LEN, PR_HEADER_LEN};

/// Byte offsets of the concatenation header, each named once.
pub mod field {
    use std::ops::Range;
    /// PR type: 1 read, 2 response.
    pub const PR_TYPE: Range<usize> = 0..2;
    /// Destination node.
    pub const DST: Range<usize> = 2..6;
    /// Property length in bytes.
    pub const PROP_LEN: Range<usize> = 6..10;
    /// Number of PRs that follow.
    pub const NUM_PRS: Range<usize> = 10..14;
    /// First PR.
    pub const PRS: usize = 14;
}

/// Byte offsets of a PR header, each named once.
pub mod pr_field {
    use std::ops::Range;
    /// Source node.
    pub const SRC: Range<usize> = 0..4;
    /// Source RIG unit id.
    pub const TID: Range<usize> = 4..6;
    /// Property index.
    pub const IDX: Range<usize> = 6..14;
    /// Request id.
    pub const REQ_ID: Range<usize> = 14..18;
    /// Payload (responses).
    pub const PAYLOAD: usize = 18;
}

/// The type of the PRs in a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
pub enum PrType {
    /// A read request (no payload).
    Read = 1,
    /// A response carrying the property.
    Response = 2,
}

impl PrType {
    /// The wire value.
    pub const fn as_u16(self) -> u16 {
        self as u16
    }

    /// Decode a wire value.
    pub const fn from_u16(v: u16) -> Result<PrType, WireError> {
        match v {
            1 => Ok(PrType::Read),
            2 => Ok(PrType::Response),
            pr_type => Err(WireError::UnknownPrType { pr_type }),
        }
    }

    /// 0 for reads, 1 for responses (for arrays indexed by type).
    pub const fn index(self) -> usize {
        self as usize - 1
    }
}

/// A zero-copy view of a concatenation layer: the 14-byte header and the PRs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConcatPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ConcatPacket<T> {
    /// Wrap `buffer` unchecked. Header getters then panic on a buffer shorter
    /// than 14 bytes; [`Self::prs`] never panics (it stops early).
    pub const fn new_unchecked(buffer: T) -> ConcatPacket<T> {
        ConcatPacket { buffer }
    }

    /// Wrap `buffer` and validate it: see [`Self::check`].
    pub fn new_checked(buffer: T) -> Result<ConcatPacket<T>, WireError> {
        let p = ConcatPacket::new_unchecked(buffer);
        p.check()?;
        Ok(p)
    }

    /// Error unless the buffer holds the 14-byte header.
    pub fn check_header_len(&self) -> Result<(), WireError> {
        let got = self.buffer.as_ref().len();
        if got < CONCAT_HEADER_LEN {
            return Err(WireError::Truncated {
                layer: Layer::Concat,
                needed: CONCAT_HEADER_LEN,
                got,
            });
        }
        Ok(())
    }

    /// Full structural validation: the header is present, the type is known,
    /// and the buffer holds exactly `num_prs` PRs of [`Self::stride`] bytes
    /// (no more, no less). A read packet whose extra bytes are exactly
    /// `num_prs × prop_len` is reported as [`WireError::ReadWithPayload`].
    pub fn check(&self) -> Result<(), WireError> {
        self.check_header_len()?;
        let pr_type = PrType::from_u16(self.pr_type_raw())?;
        let prop_len = self.prop_len();
        let num_prs = self.num_prs();
        let stride = pr_stride(pr_type, prop_len);
        let available = self.buffer.as_ref().len() - CONCAT_HEADER_LEN;
        let needed = (num_prs as u128) * (stride as u128);
        if needed > available as u128 {
            return Err(WireError::PrCountOverrun {
                num_prs,
                stride,
                available,
            });
        }
        let extra = available - needed as usize;
        if extra != 0 {
            if pr_type == PrType::Read
                && prop_len != 0
                && extra as u128 == num_prs as u128 * prop_len as u128
            {
                return Err(WireError::ReadWithPayload { num_prs, prop_len });
            }
            return Err(WireError::TrailingBytes {
                num_prs,
                stride,
                extra,
            });
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The whole buffer (header and PRs).
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The raw PR type field.
    pub fn pr_type_raw(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PR_TYPE.start)
    }
    /// The PR type.
    pub fn pr_type(&self) -> Result<PrType, WireError> {
        PrType::from_u16(self.pr_type_raw())
    }
    /// Destination node.
    pub fn dst(&self) -> u32 {
        be32(self.buffer.as_ref(), field::DST.start)
    }
    /// Property length in bytes.
    pub fn prop_len(&self) -> u32 {
        be32(self.buffer.as_ref(), field::PROP_LEN.start)
    }
    /// Number of PRs.
    pub fn num_prs(&self) -> u32 {
        be32(self.buffer.as_ref(), field::NUM_PRS.start)
    }
    /// Bytes per PR (header + payload).
    pub fn stride(&self) -> Result<usize, WireError> {
        Ok(pr_stride(self.pr_type()?, self.prop_len()))
    }

    /// The bytes after the header (all PRs, in wire format).
    pub fn pr_bytes(&self) -> &[u8] {
        self.buffer.as_ref().get(field::PRS..).unwrap_or(&[])
    }

    /// The PRs, in order. On a checked packet this yields exactly `num_prs`
    /// PRs; on an unchecked one it stops at the first PR that does not fit
    /// (and yields nothing for an unknown type).
    pub fn prs(&self) -> PrIter<'_> {
        let b = self.buffer.as_ref();
        if b.len() < CONCAT_HEADER_LEN {
            return PrIter::empty();
        }
        let Ok(pr_type) = self.pr_type() else {
            return PrIter::empty();
        };
        PrIter::new(
            self.pr_bytes(),
            pr_stride(pr_type, self.prop_len()),
            self.num_prs(),
        )
    }
}

impl<'a> ConcatPacket<&'a [u8]> {
    /// The PRs, borrowing the underlying bytes rather than the view (same
    /// rules as [`Self::prs`]).
    pub fn into_prs(self) -> PrIter<'a> {
        let b: &'a [u8] = self.buffer;
        if b.len() < CONCAT_HEADER_LEN {
            return PrIter::empty();
        }
        let Ok(pr_type) = self.pr_type() else {
            return PrIter::empty();
        };
        PrIter::new(
            &b[field::PRS..],
            pr_stride(pr_type, self.prop_len()),
            self.num_prs(),
        )
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ConcatPacket<T> {
    /// Set the raw PR type field.
    pub fn set_pr_type_raw(&mut self, v: u16) {
        self.buffer.as_mut()[field::PR_TYPE].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the PR type.
    pub fn set_pr_type(&mut self, v: PrType) {
        self.set_pr_type_raw(v.as_u16());
    }
    /// Set the destination node.
    pub fn set_dst(&mut self, v: u32) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the property length.
    pub fn set_prop_len(&mut self, v: u32) {
        self.buffer.as_mut()[field::PROP_LEN].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the number of PRs.
    pub fn set_num_prs(&mut self, v: u32) {
        self.buffer.as_mut()[field::NUM_PRS].copy_from_slice(&v.to_be_bytes());
    }
    /// The bytes after the header, mutable (to rewrite PRs in place).
    pub fn pr_bytes_mut(&mut self) -> &mut [u8] {
        self.buffer
            .as_mut()
            .get_mut(field::PRS..)
            .unwrap_or(&mut [])
    }
}

/// One PR of a packet, borrowed from the packet's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrView<'a> {
    /// Source node.
    pub src: u32,
    /// Source RIG unit id.
    pub tid: u16,
    /// Property index.
    pub idx: u64,
    /// Request id.
    pub req_id: u32,
    /// The payload (the property for responses, empty for reads).
    pub payload: &'a [u8],
    /// The whole PR in wire format (header and payload), for re-queueing
    /// without re-encoding.
    pub raw: &'a [u8],
}

impl<'a> PrView<'a> {
    /// The view of one PR's wire bytes (at least its 18-byte header).
    #[inline]
    fn of(raw: &'a [u8]) -> PrView<'a> {
        PrView {
            src: be32(raw, pr_field::SRC.start),
            tid: be16(raw, pr_field::TID.start),
            idx: be64(raw, pr_field::IDX.start),
            req_id: be32(raw, pr_field::REQ_ID.start),
            payload: &raw[pr_field::PAYLOAD..],
            raw,
        }
    }

    /// The PR header as plain data.
    pub const fn repr(&self) -> PrRepr {
        PrRepr {
            src: self.src,
            tid: self.tid,
            idx: self.idx,
            req_id: self.req_id,
        }
    }
}

/// Iterator over the PRs of a concatenation layer.
#[derive(Clone, Debug)]
pub struct PrIter<'a> {
    rest: &'a [u8],
    stride: usize,
    left: u32,
}

impl<'a> PrIter<'a> {
    /// PRs of `stride` bytes (≥ 18) in `bytes`, at most `count` of them.
    pub fn new(bytes: &'a [u8], stride: usize, count: u32) -> PrIter<'a> {
        if stride < PR_HEADER_LEN {
            return PrIter::empty();
        }
        PrIter {
            rest: bytes,
            stride,
            left: count,
        }
    }

    /// An iterator that yields nothing.
    pub const fn empty() -> PrIter<'a> {
        PrIter {
            rest: &[],
            stride: PR_HEADER_LEN,
            left: 0,
        }
    }

    /// Bytes per PR.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// PR `i` of those still to come (`None` past the last), without
    /// advancing: for looking a few PRs ahead, e.g. to prefetch the state
    /// they will touch.
    #[inline]
    pub fn get(&self, i: usize) -> Option<PrView<'a>> {
        if i >= self.left as usize {
            return None;
        }
        let at = i.checked_mul(self.stride)?;
        self.rest
            .get(at..at.checked_add(self.stride)?)
            .map(PrView::of)
    }
}

impl<'a> Iterator for PrIter<'a> {
    type Item = PrView<'a>;

    #[inline]
    fn next(&mut self) -> Option<PrView<'a>> {
        if self.left == 0 || self.rest.len() < self.stride {
            return None;
        }
        let (raw, rest) = self.rest.split_at(self.stride);
        self.rest = rest;
        self.left -= 1;
        Some(PrView::of(raw))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.left as usize).min(self.rest.len() / self.stride);
        (n, Some(n))
    }
}

impl ExactSizeIterator for PrIter<'_> {}
impl FusedIterator for PrIter<'_> {}

/// A zero-copy view of one PR: the 18-byte header and the payload after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> PrPacket<T> {
    /// Wrap `buffer` unchecked (getters panic if it is shorter than 18 bytes).
    pub const fn new_unchecked(buffer: T) -> PrPacket<T> {
        PrPacket { buffer }
    }
    /// Wrap `buffer`, checking it holds a PR header.
    pub fn new_checked(buffer: T) -> Result<PrPacket<T>, WireError> {
        let got = buffer.as_ref().len();
        if got < PR_HEADER_LEN {
            return Err(WireError::Truncated {
                layer: Layer::Pr,
                needed: PR_HEADER_LEN,
                got,
            });
        }
        Ok(PrPacket { buffer })
    }
    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Source node.
    pub fn src(&self) -> u32 {
        be32(self.buffer.as_ref(), pr_field::SRC.start)
    }
    /// Source RIG unit id.
    pub fn tid(&self) -> u16 {
        be16(self.buffer.as_ref(), pr_field::TID.start)
    }
    /// Property index.
    pub fn idx(&self) -> u64 {
        be64(self.buffer.as_ref(), pr_field::IDX.start)
    }
    /// Request id.
    pub fn req_id(&self) -> u32 {
        be32(self.buffer.as_ref(), pr_field::REQ_ID.start)
    }
    /// Everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[pr_field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PrPacket<T> {
    /// Set the source node.
    pub fn set_src(&mut self, v: u32) {
        self.buffer.as_mut()[pr_field::SRC].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the source RIG unit id.
    pub fn set_tid(&mut self, v: u16) {
        self.buffer.as_mut()[pr_field::TID].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the property index.
    pub fn set_idx(&mut self, v: u64) {
        self.buffer.as_mut()[pr_field::IDX].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the request id.
    pub fn set_req_id(&mut self, v: u32) {
        self.buffer.as_mut()[pr_field::REQ_ID].copy_from_slice(&v.to_be_bytes());
    }
    /// Everything after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[pr_field::PAYLOAD..]
    }
}

/// The plain-data PR header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PrRepr {
    /// Source node (the requester, kept end to end).
    pub src: u32,
    /// Source RIG unit id.
    pub tid: u16,
    /// Property index.
    pub idx: u64,
    /// Request id.
    pub req_id: u32,
}

impl PrRepr {
    /// Read a PR header.
    pub fn parse<T: AsRef<[u8]>>(p: &PrPacket<T>) -> Result<PrRepr, WireError> {
        let got = p.buffer.as_ref().len();
        if got < PR_HEADER_LEN {
            return Err(WireError::Truncated {
                layer: Layer::Pr,
                needed: PR_HEADER_LEN,
                got,
            });
        }
        Ok(PrRepr {
            src: p.src(),
            tid: p.tid(),
            idx: p.idx(),
            req_id: p.req_id(),
        })
    }

    /// Bytes [`Self::emit`] writes (18; the payload is the caller's).
    pub const fn buffer_len(&self) -> usize {
        PR_HEADER_LEN
    }

    /// Write the header into the first 18 bytes of `p`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut PrPacket<T>) {
        p.set_src(self.src);
        p.set_tid(self.tid);
        p.set_idx(self.idx);
        p.set_req_id(self.req_id);
    }

    /// The header's 18 wire bytes.
    #[inline]
    pub fn to_bytes(&self) -> [u8; PR_HEADER_LEN] {
        let mut b = [0u8; PR_HEADER_LEN];
        b[pr_field::SRC].copy_from_slice(&self.src.to_be_bytes());
        b[pr_field::TID].copy_from_slice(&self.tid.to_be_bytes());
        b[pr_field::IDX].copy_from_slice(&self.idx.to_be_bytes());
        b[pr_field::REQ_ID].copy_from_slice(&self.req_id.to_be_bytes());
        b
    }
}

/// The plain-data concatenation header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConcatRepr {
    /// Read or response.
    pub pr_type: PrType,
    /// Destination node.
    pub dst: u32,
    /// Property length in bytes (the same for every PR of a packet).
    pub prop_len: u32,
    /// Number of PRs that follow.
    pub num_prs: u32,
}

impl ConcatRepr {
    /// Read and fully validate a concatenation layer (see [`ConcatPacket::check`]).
    pub fn parse<T: AsRef<[u8]>>(p: &ConcatPacket<T>) -> Result<ConcatRepr, WireError> {
        p.check()?;
        Ok(ConcatRepr {
            pr_type: p.pr_type()?,
            dst: p.dst(),
            prop_len: p.prop_len(),
            num_prs: p.num_prs(),
        })
    }

    /// Bytes per PR.
    pub const fn stride(&self) -> usize {
        pr_stride(self.pr_type, self.prop_len)
    }

    /// Length of the header alone (14).
    pub const fn header_len(&self) -> usize {
        CONCAT_HEADER_LEN
    }

    /// Length of the whole layer: header and `num_prs` PRs (saturating).
    pub const fn buffer_len(&self) -> usize {
        CONCAT_HEADER_LEN.saturating_add((self.num_prs as usize).saturating_mul(self.stride()))
    }

    /// Write the header into the first 14 bytes of `p` (the PRs are the caller's).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut ConcatPacket<T>) {
        p.set_pr_type(self.pr_type);
        p.set_dst(self.dst);
        p.set_prop_len(self.prop_len);
        p.set_num_prs(self.num_prs);
    }

    /// The header's 14 wire bytes.
    pub fn to_bytes(&self) -> [u8; CONCAT_HEADER_LEN] {
        let mut b = [0u8; CONCAT_HEADER_LEN];
        self.emit(&mut ConcatPacket::new_unchecked(&mut b[..]));
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read packet's concatenation layer, 2 PRs, for property length 16,
    /// written out by hand.
    static READ_2: [u8; 14 + 2 * 18] = [
        0x00, 0x01, // pr_type: read
        0x00, 0x00, 0x00, 0x07, // dst: node 7
        0x00, 0x00, 0x00, 0x10, // prop_len: 16
        0x00, 0x00, 0x00, 0x02, // num_prs: 2
        // PR 1
        0x00, 0x00, 0x00, 0x03, // src: node 3
        0x00, 0x05, // tid 5
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, // idx 256
        0x00, 0x00, 0x00, 0x2a, // req_id 42
        // PR 2
        0x00, 0x00, 0x00, 0x04, // src: node 4
        0x00, 0x00, // tid 0
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // idx
        0xff, 0xff, 0xff, 0xff, // req_id
    ];

    /// A response with 1 PR of 16 bytes.
    static RESP_1: [u8; 14 + 18 + 16] = [
        0x00, 0x02, // pr_type: response
        0x00, 0x00, 0x00, 0x03, // dst: node 3
        0x00, 0x00, 0x00, 0x10, // prop_len 16
        0x00, 0x00, 0x00, 0x01, // num_prs 1
        0x00, 0x00, 0x00, 0x03, // src 3
        0x00, 0x05, // tid 5
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, // idx 256
        0x00, 0x00, 0x00, 0x2a, // req_id 42
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, // payload
    ];

    fn pr1() -> PrRepr {
        PrRepr {
            src: 3,
            tid: 5,
            idx: 256,
            req_id: 42,
        }
    }
    fn pr2() -> PrRepr {
        PrRepr {
            src: 4,
            tid: 0,
            idx: 0x0102_0304_0506_0708,
            req_id: 0xffff_ffff,
        }
    }

    #[test]
    fn looking_ahead_sees_what_iterating_yields() {
        // Three 20-byte PRs (2-byte payloads) and a stray trailing byte.
        let prs = [pr1(), pr2(), pr1()];
        let mut bytes = Vec::new();
        for (i, pr) in prs.iter().enumerate() {
            let mut b = [0u8; PR_HEADER_LEN + 2];
            pr.emit(&mut PrPacket::new_unchecked(&mut b[..]));
            b[PR_HEADER_LEN..].fill(i as u8);
            bytes.extend_from_slice(&b);
        }
        bytes.push(0xEE);
        let mut it = PrIter::new(&bytes, PR_HEADER_LEN + 2, 3);
        let ahead = it.clone();
        assert_eq!(ahead.get(3), None, "past the count");
        assert_eq!(
            PrIter::new(&bytes, PR_HEADER_LEN + 2, 9).get(3),
            None,
            "past the bytes"
        );
        for (i, pr) in prs.iter().enumerate() {
            let got = ahead.get(i).unwrap();
            assert_eq!(it.get(0), Some(got));
            assert_eq!(it.next(), Some(got));
            assert_eq!(got.repr(), *pr);
            assert_eq!(got.payload, [i as u8; 2]);
        }
        assert_eq!(it.get(0), None);
    }

    #[test]
    fn parse_read() {
        let p = ConcatPacket::new_checked(&READ_2[..]).unwrap();
        let r = ConcatRepr::parse(&p).unwrap();
        assert_eq!(
            r,
            ConcatRepr {
                pr_type: PrType::Read,
                dst: 7,
                prop_len: 16,
                num_prs: 2
            }
        );
        assert_eq!(r.buffer_len(), READ_2.len());
        let prs: Vec<_> = p.prs().collect();
        assert_eq!(prs.len(), 2);
        assert_eq!(prs[0].repr(), pr1());
        assert_eq!(prs[1].repr(), pr2());
        assert!(prs[0].payload.is_empty());
        assert_eq!(prs[1].raw, &READ_2[32..50]);
        assert_eq!(p.prs().len(), 2);
    }

    #[test]
    fn emit_read() {
        let mut buf = [0u8; READ_2.len()];
        let r = ConcatRepr {
            pr_type: PrType::Read,
            dst: 7,
            prop_len: 16,
            num_prs: 2,
        };
        r.emit(&mut ConcatPacket::new_unchecked(&mut buf[..]));
        pr1().emit(&mut PrPacket::new_unchecked(&mut buf[14..32]));
        buf[32..50].copy_from_slice(&pr2().to_bytes());
        assert_eq!(buf, READ_2);
        assert_eq!(r.to_bytes(), READ_2[..14]);
    }

    #[test]
    fn response_both_directions() {
        let p = ConcatPacket::new_checked(&RESP_1[..]).unwrap();
        let r = ConcatRepr::parse(&p).unwrap();
        assert_eq!(
            (r.pr_type, r.dst, r.prop_len, r.num_prs),
            (PrType::Response, 3, 16, 1)
        );
        let v = p.prs().next().unwrap();
        assert_eq!(v.repr(), pr1());
        assert_eq!(v.payload, &RESP_1[32..]);

        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&mut ConcatPacket::new_unchecked(&mut buf[..]));
        let mut pp = PrPacket::new_unchecked(&mut buf[14..]);
        pr1().emit(&mut pp);
        pp.payload_mut().copy_from_slice(&RESP_1[32..]);
        assert_eq!(buf, RESP_1);
        let pv = PrPacket::new_checked(&RESP_1[14..]).unwrap();
        assert_eq!(PrRepr::parse(&pv), Ok(pr1()));
        assert_eq!(pv.payload().len(), 16);
    }

    #[test]
    fn malformed() {
        // Truncated header.
        assert!(matches!(
            ConcatPacket::new_checked(&READ_2[..13]),
            Err(WireError::Truncated {
                layer: Layer::Concat,
                needed: 14,
                got: 13
            })
        ));
        // Count overrun: one byte short.
        assert_eq!(
            ConcatPacket::new_checked(&READ_2[..49]).unwrap_err(),
            WireError::PrCountOverrun {
                num_prs: 2,
                stride: 18,
                available: 35
            }
        );
        // Trailing byte.
        let mut long = READ_2.to_vec();
        long.push(0);
        assert_eq!(
            ConcatPacket::new_checked(&long[..]).unwrap_err(),
            WireError::TrailingBytes {
                num_prs: 2,
                stride: 18,
                extra: 1
            }
        );
        // Read carrying payloads: 2 × 16 extra bytes.
        let mut rp = READ_2.to_vec();
        rp.extend_from_slice(&[0; 32]);
        assert_eq!(
            ConcatPacket::new_checked(&rp[..]).unwrap_err(),
            WireError::ReadWithPayload {
                num_prs: 2,
                prop_len: 16
            }
        );
        // Unknown type.
        let mut ut = READ_2;
        ut[1] = 3;
        assert_eq!(
            ConcatPacket::new_checked(&ut[..]).unwrap_err(),
            WireError::UnknownPrType { pr_type: 3 }
        );
        assert_eq!(ConcatPacket::new_unchecked(&ut[..]).prs().count(), 0);
        // Huge count does not overflow.
        let mut huge = READ_2;
        huge[10..14].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            ConcatPacket::new_checked(&huge[..]),
            Err(WireError::PrCountOverrun { .. })
        ));
        // Unchecked iteration stops at the end of the buffer.
        assert_eq!(ConcatPacket::new_unchecked(&huge[..]).prs().count(), 2);
        assert_eq!(ConcatPacket::new_unchecked(&READ_2[..40]).prs().count(), 1);
        assert_eq!(ConcatPacket::new_unchecked(&READ_2[..3]).prs().count(), 0);
        assert!(PrPacket::new_checked(&READ_2[..17]).is_err());
    }

    #[test]
    fn setters() {
        let mut buf = READ_2;
        let mut p = ConcatPacket::new_unchecked(&mut buf[..]);
        p.set_dst(9);
        p.set_pr_type(PrType::Response);
        p.set_prop_len(0);
        assert_eq!(
            (p.dst(), p.pr_type(), p.prop_len()),
            (9, Ok(PrType::Response), 0)
        );
        let mut pr = PrPacket::new_unchecked(&mut p.pr_bytes_mut()[..18]);
        pr.set_idx(77);
        pr.set_tid(1);
        assert_eq!((pr.idx(), pr.tid(), pr.src(), pr.req_id()), (77, 1, 3, 42));
        assert_eq!(PrType::Read.index(), 0);
        assert_eq!(PrType::Response.index(), 1);
    }
}
