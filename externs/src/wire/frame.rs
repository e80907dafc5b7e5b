//! Whole NetSparse frames: Ethernet / IPv4 / UDP 4791 / BTH / concatenation
//! layer.
//!
//! [`Frame::parse`] slices L2–L4 with etherparse's zero-copy header slices,
//! then validates the BTH and the NetSparse layers; nothing is copied except
//! the small header fields. [`FrameBuilder`] writes a frame into a reusable
//! `Vec<u8>` and lets PRs be appended in place; [`FrameHeader::emit`] writes
//! the 68 header bytes into a fixed slice for callers that place the PRs
//! themselves.
//!
//! Frames built here: Ethernet II (no VLAN), IPv4 without options, TTL 64,
//! DF set, identification 0, a correct header checksum; UDP checksum 0 (as
//! RoCEv2 allows over IPv4); no RoCE ICRC trailer (the NetSparse layers run to
//! the end of the UDP payload, as `programs/netsparse.p4` parses them).

use etherparse::{Ethernet2HeaderSlice, Ipv4HeaderSlice, UdpHeaderSlice};

use super::bth::{BthPacket, BthRepr};
use super::netsparse::{ConcatPacket, ConcatRepr, PrIter, PrRepr, PrType};
use super::{
    be16, pr_stride, DeviceAddr, Layer, WireError, BTH_LEN, CONCAT_HEADER_LEN, ETH_HEADER_LEN,
    FRAME_HEADERS_LEN, IPV4_HEADER_LEN, PR_HEADER_LEN, ROCEV2_UDP_PORT, UDP_HEADER_LEN,
};
use crate::hash::ipv4_header_checksum;

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IP protocol number of UDP.
pub const IP_PROTO_UDP: u8 = 17;
/// TTL of built frames.
pub const DEFAULT_TTL: u8 = 64;

/// Offsets of the headers in a frame built here (no VLAN, no IP options).
pub mod offset {
    use super::*;
    /// IPv4 header.
    pub const IPV4: usize = ETH_HEADER_LEN;
    /// UDP header.
    pub const UDP: usize = IPV4 + IPV4_HEADER_LEN;
    /// BTH.
    pub const BTH: usize = UDP + UDP_HEADER_LEN;
    /// Concatenation header.
    pub const CONCAT: usize = BTH + BTH_LEN;
    /// First PR.
    pub const PRS: usize = CONCAT + CONCAT_HEADER_LEN;
}

/// Whether `bytes` is Ethernet / IPv4 / UDP to the RoCEv2 port as far as
/// its headers go (lengths and checksums unchecked). A frame that fails
/// [`Frame::parse`] but passes this was meant as NetSparse: a switch counts
/// it as malformed NetSparse rather than passing it through as foreign.
pub fn addressed_to_rocev2(bytes: &[u8]) -> bool {
    let ethertype = bytes.get(12..ETH_HEADER_LEN) == Some(&ETHERTYPE_IPV4.to_be_bytes()[..]);
    let Some(&vihl) = bytes.get(offset::IPV4) else {
        return false;
    };
    let ihl = usize::from(vihl & 0x0f) * 4;
    let udp = bytes.get(offset::IPV4 + 9) == Some(&IP_PROTO_UDP);
    let at = offset::IPV4 + ihl + 2;
    let port = bytes
        .get(at..at + 2)
        .is_some_and(|p| u16::from_be_bytes([p[0], p[1]]) == ROCEV2_UDP_PORT);
    ethertype && vihl >> 4 == 4 && ihl >= IPV4_HEADER_LEN && udp && port
}

/// A parsed NetSparse frame: the header fields and zero-copy access to the PRs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Ethernet destination.
    pub eth_dst: [u8; 6],
    /// Ethernet source.
    pub eth_src: [u8; 6],
    /// The IPv4 header bytes (IHL × 4, options included).
    pub ipv4_header: &'a [u8],
    /// IPv4 source address (the device that originated this packet).
    pub ip_src: [u8; 4],
    /// IPv4 destination address.
    pub ip_dst: [u8; 4],
    /// IPv4 TTL.
    pub ttl: u8,
    /// UDP source port.
    pub udp_src_port: u16,
    /// The BTH.
    pub bth: BthRepr,
    /// The concatenation header.
    pub concat: ConcatRepr,
    /// Offset of the concatenation header in the frame.
    pub concat_offset: usize,
    /// The concatenation layer (header and PRs), validated.
    pub concat_bytes: &'a [u8],
    /// Bytes after the IPv4 datagram (Ethernet padding), ignored.
    pub trailer_len: usize,
}

impl<'a> Frame<'a> {
    /// Parse and validate a NetSparse frame. Errors for which
    /// [`WireError::is_foreign`] holds mean "valid, but not NetSparse".
    pub fn parse(frame: &'a [u8]) -> Result<Frame<'a>, WireError> {
        let eth = Ethernet2HeaderSlice::from_slice(frame).map_err(|_| WireError::Truncated {
            layer: Layer::Ethernet,
            needed: ETH_HEADER_LEN,
            got: frame.len(),
        })?;
        let ethertype = eth.ether_type().0;
        if ethertype != ETHERTYPE_IPV4 {
            return Err(WireError::NotIpv4 { ethertype });
        }
        let ip_bytes = &frame[ETH_HEADER_LEN..];
        let available = ip_bytes.len();
        let ip = Ipv4HeaderSlice::from_slice(ip_bytes).map_err(|e| match e {
            etherparse::err::ipv4::HeaderSliceError::Len(l) => WireError::Truncated {
                layer: Layer::Ipv4,
                needed: l.required_len,
                got: l.len,
            },
            etherparse::err::ipv4::HeaderSliceError::Content(_) => WireError::BadIpv4Header {
                version: ip_bytes[0] >> 4,
                ihl: ip_bytes[0] & 0xf,
            },
        })?;
        let header_len = ip.slice().len();
        let total_len = ip.total_len();
        if usize::from(total_len) < header_len || usize::from(total_len) > available {
            return Err(WireError::BadIpv4TotalLength {
                total_len,
                header_len,
                available,
            });
        }
        if ip.more_fragments() || ip.fragments_offset().value() != 0 {
            return Err(WireError::Fragmented {
                offset: ip.fragments_offset().value(),
            });
        }
        let protocol = ip.protocol().0;
        if protocol != IP_PROTO_UDP {
            return Err(WireError::NotUdp { protocol });
        }
        let udp_bytes = &ip_bytes[header_len..usize::from(total_len)];
        let udp = UdpHeaderSlice::from_slice(udp_bytes).map_err(|_| WireError::Truncated {
            layer: Layer::Udp,
            needed: UDP_HEADER_LEN,
            got: udp_bytes.len(),
        })?;
        let dst_port = udp.destination_port();
        if dst_port != ROCEV2_UDP_PORT {
            return Err(WireError::NotRoce { dst_port });
        }
        let udp_len = udp.length();
        if usize::from(udp_len) != udp_bytes.len() {
            return Err(WireError::BadUdpLength {
                udp_len,
                ip_payload: udp_bytes.len(),
            });
        }
        let bth_bytes = &udp_bytes[UDP_HEADER_LEN..];
        let bth = BthRepr::parse(&BthPacket::new_unchecked(bth_bytes))?;
        if !bth.is_netsparse() {
            return Err(WireError::NotNetSparse {
                opcode: bth.opcode,
                dst_qp: bth.dst_qp,
            });
        }
        let concat_bytes = &bth_bytes[BTH_LEN..];
        let concat = ConcatRepr::parse(&ConcatPacket::new_unchecked(concat_bytes))?;
        Ok(Frame {
            eth_dst: eth.destination(),
            eth_src: eth.source(),
            ipv4_header: ip.slice(),
            ip_src: ip.source(),
            ip_dst: ip.destination(),
            ttl: ip.ttl(),
            udp_src_port: udp.source_port(),
            bth,
            concat,
            concat_offset: ETH_HEADER_LEN + header_len + UDP_HEADER_LEN + BTH_LEN,
            concat_bytes,
            trailer_len: available - usize::from(total_len),
        })
    }

    /// The PRs, in order (exactly `concat.num_prs` of them).
    pub fn prs(&self) -> PrIter<'a> {
        PrIter::new(
            &self.concat_bytes[CONCAT_HEADER_LEN..],
            self.concat.stride(),
            self.concat.num_prs,
        )
    }

    /// The PR bytes (all PR headers and payloads) in wire format.
    pub fn pr_bytes(&self) -> &'a [u8] {
        &self.concat_bytes[CONCAT_HEADER_LEN..]
    }

    /// The device that originated the packet, from the IPv4 source.
    pub fn src_device(&self) -> Option<DeviceAddr> {
        DeviceAddr::from_ipv4(self.ip_src)
    }

    /// Check the IPv4 header checksum.
    pub fn verify_ipv4_checksum(&self) -> Result<(), WireError> {
        let got = be16(self.ipv4_header, 10);
        let expected = ipv4_header_checksum(self.ipv4_header);
        if got != expected {
            return Err(WireError::BadIpv4Checksum { got, expected });
        }
        Ok(())
    }

    /// Length of the IP datagram (IPv4 total length).
    pub fn ip_len(&self) -> usize {
        self.concat_offset - ETH_HEADER_LEN + self.concat_bytes.len()
    }
}

/// Everything of a frame below the concatenation header: the Ethernet, IPv4,
/// UDP and BTH fields a sender chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameHeader {
    /// Ethernet destination.
    pub eth_dst: [u8; 6],
    /// Ethernet source.
    pub eth_src: [u8; 6],
    /// IPv4 source.
    pub ip_src: [u8; 4],
    /// IPv4 destination.
    pub ip_dst: [u8; 4],
    /// IPv4 DSCP/ECN byte.
    pub tos: u8,
    /// IPv4 TTL.
    pub ttl: u8,
    /// IPv4 identification (0: DF is set, RFC 6864).
    pub ip_id: u16,
    /// UDP source port (RoCEv2 flow entropy).
    pub udp_src_port: u16,
    /// The BTH.
    pub bth: BthRepr,
}

impl FrameHeader {
    /// The header of a NetSparse packet from device `src` to node `dst` with
    /// BTH sequence number `psn`, addressed by the crate's convention. The UDP
    /// source port is `0xC000 | (id & 0x3FFF)` of the source device.
    pub fn netsparse(src: DeviceAddr, dst: u32, psn: u32) -> Result<FrameHeader, WireError> {
        let dst = DeviceAddr::Node(dst);
        let id = match src {
            DeviceAddr::Node(n) | DeviceAddr::Switch(n) => n,
        };
        Ok(FrameHeader {
            eth_dst: dst.mac()?,
            eth_src: src.mac()?,
            ip_src: src.ipv4()?,
            ip_dst: dst.ipv4()?,
            tos: 0,
            ttl: DEFAULT_TTL,
            ip_id: 0,
            udp_src_port: 0xC000 | (id & 0x3FFF) as u16,
            bth: BthRepr::netsparse(psn),
        })
    }

    /// Point the header at node `dst` (Ethernet and IPv4 destinations).
    pub fn set_dst_node(&mut self, dst: u32) -> Result<(), WireError> {
        let d = DeviceAddr::Node(dst);
        self.eth_dst = d.mac()?;
        self.ip_dst = d.ipv4()?;
        Ok(())
    }

    /// Write the 68 header bytes (Ethernet to concatenation header) into
    /// `buf[..68]` for a concatenation layer described by `concat` (whose
    /// PRs the caller writes at `buf[68..]`). Lengths and the IPv4 checksum
    /// are computed from `concat.buffer_len()`. Returns the frame length.
    pub fn emit(&self, buf: &mut [u8], concat: &ConcatRepr) -> Result<usize, WireError> {
        let got = buf.len();
        let head: &mut [u8; FRAME_HEADERS_LEN] = buf
            .get_mut(..FRAME_HEADERS_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(WireError::BufferTooSmall {
                needed: FRAME_HEADERS_LEN,
                got,
            })?;
        let ip_len = IPV4_HEADER_LEN + UDP_HEADER_LEN + BTH_LEN + concat.buffer_len();
        let ip_len16 = u16::try_from(ip_len).map_err(|_| WireError::ExceedsMtu {
            ip_len,
            mtu: usize::from(u16::MAX),
        })?;
        self.write_headers(head, concat, ip_len16);
        Ok(ETH_HEADER_LEN + ip_len)
    }

    /// Write every header; `ip_len` is the IPv4 total length.
    fn write_headers(&self, h: &mut [u8; FRAME_HEADERS_LEN], concat: &ConcatRepr, ip_len: u16) {
        h[0..6].copy_from_slice(&self.eth_dst);
        h[6..12].copy_from_slice(&self.eth_src);
        h[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut h[offset::IPV4..offset::UDP];
        ip[0] = 0x45;
        ip[1] = self.tos;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, offset 0
        ip[8] = self.ttl;
        ip[9] = IP_PROTO_UDP;
        ip[10..12].fill(0);
        ip[12..16].copy_from_slice(&self.ip_src);
        ip[16..20].copy_from_slice(&self.ip_dst);
        let csum = ipv4_header_checksum(ip);
        ip[10..12].copy_from_slice(&csum.to_be_bytes());
        let udp_len = ip_len - IPV4_HEADER_LEN as u16;
        let udp = &mut h[offset::UDP..offset::BTH];
        udp[0..2].copy_from_slice(&self.udp_src_port.to_be_bytes());
        udp[2..4].copy_from_slice(&ROCEV2_UDP_PORT.to_be_bytes());
        udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
        udp[6..8].fill(0);
        self.bth.emit(&mut BthPacket::new_unchecked(
            &mut h[offset::BTH..offset::CONCAT],
        ));
        concat.emit(&mut ConcatPacket::new_unchecked(
            &mut h[offset::CONCAT..offset::PRS],
        ));
    }
}

/// Builds one NetSparse frame at the end of a reusable `Vec<u8>` (e.g. the
/// one [`crate::Outputs::push_with`] hands out): headers first, then PRs
/// appended in place; [`Self::finish`] patches the lengths, `num_prs` and the
/// IPv4 checksum. If the builder is dropped without `finish`, the frame is
/// finished anyway, so the buffer never holds inconsistent headers.
#[derive(Debug)]
pub struct FrameBuilder<'b> {
    buf: &'b mut Vec<u8>,
    start: usize,
    header: FrameHeader,
    concat: ConcatRepr,
    stride: usize,
    max_prs: u32,
    mtu: usize,
    finished: bool,
}

impl<'b> FrameBuilder<'b> {
    /// Start a frame of `pr_type` PRs of property length `prop_len` to node
    /// `dst` (the concatenation header's `dst`; the Ethernet/IP destination
    /// is `header`'s), whose IP datagram may not exceed `mtu`.
    pub fn begin(
        buf: &'b mut Vec<u8>,
        header: &FrameHeader,
        pr_type: PrType,
        dst: u32,
        prop_len: u32,
        mtu: usize,
    ) -> Result<FrameBuilder<'b>, WireError> {
        let max_prs = super::max_prs(pr_type, prop_len, mtu.min(usize::from(u16::MAX)));
        if max_prs == 0 {
            return Err(WireError::ExceedsMtu {
                ip_len: super::IP_OVERHEAD + pr_stride(pr_type, prop_len),
                mtu,
            });
        }
        let start = buf.len();
        buf.resize(start + FRAME_HEADERS_LEN, 0);
        Ok(FrameBuilder {
            buf,
            start,
            header: *header,
            concat: ConcatRepr {
                pr_type,
                dst,
                prop_len,
                num_prs: 0,
            },
            stride: pr_stride(pr_type, prop_len),
            max_prs,
            mtu,
            finished: false,
        })
    }

    /// PRs appended so far.
    pub fn num_prs(&self) -> u32 {
        self.concat.num_prs
    }

    /// PRs that can still be appended within the MTU.
    pub fn remaining_prs(&self) -> u32 {
        self.max_prs - self.concat.num_prs
    }

    /// Append one PR; `payload` must be `prop_len` bytes for a response and
    /// empty for a read.
    pub fn push_pr(&mut self, pr: &PrRepr, payload: &[u8]) -> Result<(), WireError> {
        let expected = self.stride - PR_HEADER_LEN;
        if payload.len() != expected {
            return Err(WireError::PayloadLength {
                expected,
                got: payload.len(),
            });
        }
        self.room_for(1)?;
        self.buf.extend_from_slice(&pr.to_bytes());
        self.buf.extend_from_slice(payload);
        self.concat.num_prs += 1;
        Ok(())
    }

    /// Append `count` PRs already in wire format (`bytes` must be exactly
    /// `count` × stride bytes), e.g. a Concatenation Queue's contents.
    pub fn push_raw_prs(&mut self, bytes: &[u8], count: u32) -> Result<(), WireError> {
        let expected = (count as usize).saturating_mul(self.stride);
        if bytes.len() != expected {
            return Err(WireError::PayloadLength {
                expected,
                got: bytes.len(),
            });
        }
        self.room_for(count)?;
        self.buf.extend_from_slice(bytes);
        self.concat.num_prs += count;
        Ok(())
    }

    fn room_for(&self, n: u32) -> Result<(), WireError> {
        if n > self.remaining_prs() {
            return Err(WireError::ExceedsMtu {
                ip_len: super::IP_OVERHEAD
                    + (self.concat.num_prs as usize + n as usize) * self.stride,
                mtu: self.mtu,
            });
        }
        Ok(())
    }

    fn patch(&mut self) {
        let ip_len = (super::IP_OVERHEAD + self.concat.num_prs as usize * self.stride) as u16;
        let head: &mut [u8; FRAME_HEADERS_LEN] = (&mut self.buf
            [self.start..self.start + FRAME_HEADERS_LEN])
            .try_into()
            .expect("FrameBuilder reserved the header bytes in begin");
        self.header.write_headers(head, &self.concat, ip_len);
    }

    /// Finish the frame; returns its length in bytes.
    pub fn finish(mut self) -> usize {
        self.patch();
        self.finished = true;
        self.buf.len() - self.start
    }
}

impl Drop for FrameBuilder<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.patch();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read from node 3 to node 7, 2 PRs, property length 16, written out by hand.
    #[rustfmt::skip]
    static READ_FRAME: [u8; 68 + 36] = [
        // Ethernet: dst node 7, src node 3, IPv4
        0x02, 0x4e, 0x53, 0x00, 0x00, 0x07,
        0x02, 0x4e, 0x53, 0x00, 0x00, 0x03,
        0x08, 0x00,
        // IPv4: 45, tos 0, total 90, id 0, DF, TTL 64, UDP, checksum, 10.0.0.4 -> 10.0.0.8
        0x45, 0x00, 0x00, 0x5a, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x88,
        0x0a, 0x00, 0x00, 0x04, 0x0a, 0x00, 0x00, 0x08,
        // UDP: 0xc003 -> 4791, length 70, checksum 0
        0xc0, 0x03, 0x12, 0xb7, 0x00, 0x46, 0x00, 0x00,
        // BTH: SEND Only, pkey ffff, QP "NSP", PSN 1
        0x04, 0x00, 0xff, 0xff, 0x00, 0x4e, 0x53, 0x50, 0x00, 0x00, 0x00, 0x01,
        // concat: read, dst 7, prop_len 16, 2 PRs
        0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x02,
        // PR: src 3, tid 5, idx 256, req 42
        0x00, 0x00, 0x00, 0x03, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2a,
        // PR: src 3, tid 5, idx 257, req 43
        0x00, 0x00, 0x00, 0x03, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0x01, 0x01, 0x00, 0x00, 0x00, 0x2b,
    ];

    /// A response from switch 1 to node 3, 1 PR of 16 B, written out by hand.
    #[rustfmt::skip]
    static RESP_FRAME: [u8; 68 + 34] = [
        0x02, 0x4e, 0x53, 0x00, 0x00, 0x03,
        0x02, 0x4e, 0x57, 0x00, 0x00, 0x01,
        0x08, 0x00,
        // IPv4 total 88, 10.128.0.2 -> 10.0.0.4
        0x45, 0x00, 0x00, 0x58, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x10,
        0x0a, 0x80, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x04,
        // UDP 0xc001 -> 4791, length 68
        0xc0, 0x01, 0x12, 0xb7, 0x00, 0x44, 0x00, 0x00,
        // BTH PSN 0x000100
        0x04, 0x00, 0xff, 0xff, 0x00, 0x4e, 0x53, 0x50, 0x00, 0x00, 0x01, 0x00,
        // concat: response, dst 3, prop_len 16, 1 PR
        0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01,
        // PR: src 3, tid 5, idx 256, req 42, payload 0..16
        0x00, 0x00, 0x00, 0x03, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2a,
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ];

    fn pr(idx: u64, req_id: u32) -> PrRepr {
        PrRepr {
            src: 3,
            tid: 5,
            idx,
            req_id,
        }
    }

    #[test]
    fn hand_written_checksums_are_right() {
        assert_eq!(crate::hash::csum16(&READ_FRAME[14..34]), 0);
        assert_eq!(crate::hash::csum16(&RESP_FRAME[14..34]), 0);
        assert_eq!(&READ_FRAME[47..50], &NETSPARSE_QP.to_be_bytes()[1..]);
    }

    #[test]
    fn parse_read_frame() {
        let f = Frame::parse(&READ_FRAME).unwrap();
        assert_eq!(
            f.concat,
            ConcatRepr {
                pr_type: PrType::Read,
                dst: 7,
                prop_len: 16,
                num_prs: 2
            }
        );
        assert_eq!(f.src_device(), Some(DeviceAddr::Node(3)));
        assert_eq!(f.ttl, 64);
        assert_eq!(f.udp_src_port, 0xc003);
        assert_eq!(f.bth, BthRepr::netsparse(1));
        assert_eq!(f.concat_offset, 54);
        assert_eq!(f.ip_len(), 90);
        f.verify_ipv4_checksum().unwrap();
        let prs: Vec<PrRepr> = f.prs().map(|p| p.repr()).collect();
        assert_eq!(prs, [pr(256, 42), pr(257, 43)]);
    }

    #[test]
    fn build_read_frame() {
        let h = FrameHeader::netsparse(DeviceAddr::Node(3), 7, 1).unwrap();
        let mut buf = vec![0xEE; 5]; // earlier content is kept
        let mut b = FrameBuilder::begin(&mut buf, &h, PrType::Read, 7, 16, 1500).unwrap();
        b.push_pr(&pr(256, 42), &[]).unwrap();
        b.push_pr(&pr(257, 43), &[]).unwrap();
        assert_eq!(b.num_prs(), 2);
        assert_eq!(b.remaining_prs(), 78);
        assert_eq!(b.finish(), READ_FRAME.len());
        assert_eq!(&buf[..5], &[0xEE; 5]);
        assert_eq!(&buf[5..], &READ_FRAME[..]);
        // The fixed-slice emitter writes the same headers.
        let mut fixed = [0u8; 68 + 36];
        let c = ConcatRepr {
            pr_type: PrType::Read,
            dst: 7,
            prop_len: 16,
            num_prs: 2,
        };
        assert_eq!(h.emit(&mut fixed, &c), Ok(READ_FRAME.len()));
        assert_eq!(&fixed[..68], &READ_FRAME[..68]);
        assert!(h.emit(&mut fixed[..67], &c).is_err());
    }

    #[test]
    fn response_both_directions() {
        let f = Frame::parse(&RESP_FRAME).unwrap();
        assert_eq!(f.src_device(), Some(DeviceAddr::Switch(1)));
        assert_eq!(f.concat.pr_type, PrType::Response);
        let v = f.prs().next().unwrap();
        assert_eq!(v.repr(), pr(256, 42));
        assert_eq!(v.payload, &RESP_FRAME[86..]);

        let h = FrameHeader::netsparse(DeviceAddr::Switch(1), 3, 0x100).unwrap();
        let mut buf = Vec::new();
        {
            let mut b = FrameBuilder::begin(&mut buf, &h, PrType::Response, 3, 16, 1500).unwrap();
            assert!(matches!(
                b.push_pr(&pr(256, 42), &[0; 15]),
                Err(WireError::PayloadLength {
                    expected: 16,
                    got: 15
                })
            ));
            b.push_raw_prs(&RESP_FRAME[68..], 1).unwrap();
            // Dropped without finish: still patched.
        }
        assert_eq!(buf, RESP_FRAME);
    }

    #[test]
    fn builder_respects_mtu() {
        let h = FrameHeader::netsparse(DeviceAddr::Node(0), 1, 0).unwrap();
        let mut buf = Vec::new();
        let mut b = FrameBuilder::begin(&mut buf, &h, PrType::Response, 1, 64, 1500).unwrap();
        let payload = [7u8; 64];
        for i in 0..17 {
            b.push_pr(&pr(i, 0), &payload).unwrap();
        }
        assert!(matches!(
            b.push_pr(&pr(99, 0), &payload),
            Err(WireError::ExceedsMtu { .. })
        ));
        let len = b.finish();
        assert_eq!(len, 68 + 17 * 82);
        assert!(len - 14 <= 1500);
        let f = Frame::parse(&buf).unwrap();
        assert_eq!(f.concat.num_prs, 17);
        assert!(FrameBuilder::begin(&mut buf, &h, PrType::Response, 1, 1500, 1500).is_err());
        assert!(FrameHeader::netsparse(DeviceAddr::Node(0), u32::MAX, 0).is_err());
    }

    #[test]
    fn malformed_and_foreign() {
        // Every truncation is an error, never a panic.
        for n in 0..READ_FRAME.len() {
            assert!(Frame::parse(&READ_FRAME[..n]).is_err(), "len {n}");
        }
        let e = Frame::parse(&READ_FRAME[..10]).unwrap_err();
        assert_eq!(
            e,
            WireError::Truncated {
                layer: Layer::Ethernet,
                needed: 14,
                got: 10
            }
        );
        assert!(matches!(
            Frame::parse(&READ_FRAME[..30]),
            Err(WireError::Truncated {
                layer: Layer::Ipv4,
                ..
            })
        ));
        assert!(matches!(
            Frame::parse(&READ_FRAME[..100]),
            Err(WireError::BadIpv4TotalLength { total_len: 90, .. })
        ));

        let with = |i: usize, v: u8| {
            let mut f = READ_FRAME;
            f[i] = v;
            f
        };
        assert_eq!(
            Frame::parse(&with(12, 0x86)).unwrap_err(),
            WireError::NotIpv4 { ethertype: 0x8600 }
        );
        assert!(Frame::parse(&with(12, 0x86)).unwrap_err().is_foreign());
        assert_eq!(
            Frame::parse(&with(14, 0x65)).unwrap_err(),
            WireError::BadIpv4Header { version: 6, ihl: 5 }
        );
        assert_eq!(
            Frame::parse(&with(23, 6)).unwrap_err(),
            WireError::NotUdp { protocol: 6 }
        );
        assert_eq!(
            Frame::parse(&with(37, 0xb8)).unwrap_err(),
            WireError::NotRoce { dst_port: 0x12b8 }
        );
        assert_eq!(
            Frame::parse(&with(39, 0x45)).unwrap_err(),
            WireError::BadUdpLength {
                udp_len: 0x45,
                ip_payload: 70
            }
        );
        assert_eq!(
            Frame::parse(&with(42, 0x0a)).unwrap_err(),
            WireError::NotNetSparse {
                opcode: 0x0a,
                dst_qp: NETSPARSE_QP
            }
        );
        assert_eq!(
            Frame::parse(&with(55, 9)).unwrap_err(),
            WireError::UnknownPrType { pr_type: 9 }
        );
        assert_eq!(
            Frame::parse(&with(67, 3)).unwrap_err(),
            WireError::PrCountOverrun {
                num_prs: 3,
                stride: 18,
                available: 36
            }
        );
        assert_eq!(
            Frame::parse(&with(20, 0x20)).unwrap_err(),
            WireError::Fragmented { offset: 0 }
        );
        // A bad checksum parses but fails verification.
        let bad = with(24, 0);
        let f = Frame::parse(&bad).unwrap();
        assert_eq!(
            f.verify_ipv4_checksum(),
            Err(WireError::BadIpv4Checksum {
                got: 0x0088,
                expected: 0x2688
            })
        );
        // Ethernet padding after the datagram is ignored.
        let mut padded = READ_FRAME.to_vec();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(Frame::parse(&padded).unwrap().trailer_len, 6);
    }

    use super::super::bth::NETSPARSE_QP;

    #[test]
    fn addressed_to_rocev2_reads_only_the_headers() {
        let mut f = READ_FRAME;
        assert!(addressed_to_rocev2(&f));
        // Truncated after the UDP ports: still addressed to RoCEv2.
        assert!(addressed_to_rocev2(&f[..offset::UDP + 4]));
        assert!(!addressed_to_rocev2(&f[..offset::UDP + 3]));
        let port = f[offset::UDP + 3];
        f[offset::UDP + 3] ^= 1;
        assert!(!addressed_to_rocev2(&f));
        f[offset::UDP + 3] = port;
        f[offset::IPV4 + 9] = 6; // TCP
        assert!(!addressed_to_rocev2(&f));
        f[offset::IPV4 + 9] = IP_PROTO_UDP;
        f[12] = 0x86; // IPv6 ethertype
        assert!(!addressed_to_rocev2(&f));
    }
}
