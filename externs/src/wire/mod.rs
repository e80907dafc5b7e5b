//! The NetSparse wire format (§6.1.1, Figure 6), smoltcp style.
//!
//! A NetSparse packet is a RoCEv2 packet:
//!
//! ```text
//! Ethernet (14) | IPv4 (20) | UDP dst 4791 (8) | IB BTH (12) | concatenation header (14) | PR 1 | PR 2 | ...
//! PR = PR header (18) + payload (prop_len bytes for responses, none for reads)
//! ```
//!
//! * [`bth`]: the InfiniBand Base Transport Header view and repr.
//! * [`netsparse`]: the concatenation and PR layers (views, reprs, PR iterator).
//! * [`frame`]: a whole Ethernet frame: zero-copy parse, in-place build.
//!
//! Every layer has a zero-copy `Packet<T: AsRef<[u8]>>`-style view with
//! `new_unchecked`/`new_checked` and a plain `Repr` with `parse`/`emit`/
//! `buffer_len`. All multi-byte fields are big-endian, in the order of
//! `programs/netsparse.p4`. Malformed input is a [`WireError`], never a panic.
//!
//! # Addressing convention
//!
//! Shared by the switch, the NIC, the simulator, the veth topologies and the
//! Wireshark dissector. A [`DeviceAddr`] is either a compute node (the
//! NetSparse node id carried in the `dst` and `src` fields) or a switch:
//!
//! | device | IPv4 | MAC |
//! |---|---|---|
//! | node `n` (0 ≤ n ≤ [`MAX_NODE_ID`]) | `10.0.0.0 + n + 1` (10.0.0.1 … 10.127.255.254) | `02:4e:53:` + 24-bit `n` ("NS") |
//! | switch `s` (0 ≤ s ≤ [`MAX_SWITCH_ID`]) | `10.128.0.0 + s + 1` (10.128.0.1 … 10.255.255.254) | `02:4e:57:` + 24-bit `s` ("NW") |
//!
//! Both ranges hold 8,388,606 devices, the addresses `.0.0.0` and the last
//! one of each half are never used, and the mapping is a bijection, so
//! [`DeviceAddr::from_ipv4`] recovers the device from a frame's source
//! address. A frame's IPv4/MAC source is the device that *originated* that
//! packet (a NIC, or a switch that re-concatenated PRs); its destination is
//! the node in the concatenation header's `dst`. The PR headers keep the
//! original requesters' node ids in `src`.

pub mod bth;
pub mod frame;
pub mod netsparse;

use std::fmt;

use thiserror::Error;

pub use bth::{BthPacket, BthRepr};
pub use frame::{Frame, FrameBuilder, FrameHeader};
pub use netsparse::{ConcatPacket, ConcatRepr, PrIter, PrPacket, PrRepr, PrType, PrView};

/// UDP destination port of RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// Ethernet II header length.
pub const ETH_HEADER_LEN: usize = 14;
/// IPv4 header length without options (what [`FrameBuilder`] writes).
pub const IPV4_HEADER_LEN: usize = 20;
/// UDP header length.
pub const UDP_HEADER_LEN: usize = 8;
/// InfiniBand Base Transport Header length.
pub const BTH_LEN: usize = 12;
/// NetSparse concatenation header length.
pub const CONCAT_HEADER_LEN: usize = 14;
/// NetSparse PR header length (the payload follows it).
pub const PR_HEADER_LEN: usize = 18;
/// Bytes from the start of the IPv4 header to the first PR: IPv4 + UDP + BTH
/// + concatenation header = 54. This is the overhead inside the IP MTU.
pub const IP_OVERHEAD: usize = IPV4_HEADER_LEN + UDP_HEADER_LEN + BTH_LEN + CONCAT_HEADER_LEN;
/// Bytes from the start of the frame to the first PR (68).
pub const FRAME_HEADERS_LEN: usize = ETH_HEADER_LEN + IP_OVERHEAD;
/// The default IP MTU (Table 5).
pub const DEFAULT_MTU: usize = 1500;

/// Bytes one PR takes on the wire: 18 for a read, 18 + `prop_len` for a response.
pub const fn pr_stride(pr_type: PrType, prop_len: u32) -> usize {
    match pr_type {
        PrType::Read => PR_HEADER_LEN,
        PrType::Response => PR_HEADER_LEN + prop_len as usize,
    }
}

/// Bytes of PRs (headers and payloads) that fit in one packet with IP MTU `mtu`.
pub const fn pr_capacity(mtu: usize) -> usize {
    mtu.saturating_sub(IP_OVERHEAD)
}

/// The most PRs of type `pr_type` and property length `prop_len` that fit in
/// one packet whose IP datagram is at most `mtu` bytes (0 if not even one
/// fits). With the default MTU (1446 bytes for PRs): 80 reads, or 17
/// responses of K = 16 four-byte values (64 B properties, 82-byte PRs:
/// 17 × 82 = 1394 ≤ 1446 < 18 × 82).
pub const fn max_prs(pr_type: PrType, prop_len: u32, mtu: usize) -> u32 {
    let stride = pr_stride(pr_type, prop_len);
    let n = pr_capacity(mtu) / stride;
    if n > u32::MAX as usize {
        u32::MAX
    } else {
        n as u32
    }
}

/// Largest node id of the addressing convention (8,388,605).
pub const MAX_NODE_ID: u32 = (1 << 23) - 3;
/// Largest switch id of the addressing convention (8,388,605).
pub const MAX_SWITCH_ID: u32 = (1 << 23) - 3;
const NODE_IP_BASE: u32 = 0x0A00_0000;
const SWITCH_IP_BASE: u32 = 0x0A80_0000;
const NODE_MAC_PREFIX: [u8; 3] = [0x02, 0x4e, 0x53];
const SWITCH_MAC_PREFIX: [u8; 3] = [0x02, 0x4e, 0x57];

/// A NetSparse device: a compute node (NIC) or a switch. See the module
/// documentation for the address mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceAddr {
    /// Compute node `n` (its NIC).
    Node(u32),
    /// Switch `s`.
    Switch(u32),
}

impl DeviceAddr {
    /// Check that the id is within the convention's range.
    pub const fn validate(self) -> Result<DeviceAddr, WireError> {
        match self {
            DeviceAddr::Node(n) if n > MAX_NODE_ID => {
                Err(WireError::DeviceIdOutOfRange { addr: self })
            }
            DeviceAddr::Switch(s) if s > MAX_SWITCH_ID => {
                Err(WireError::DeviceIdOutOfRange { addr: self })
            }
            _ => Ok(self),
        }
    }

    /// The device's IPv4 address.
    pub const fn ipv4(self) -> Result<[u8; 4], WireError> {
        match self.validate() {
            Ok(DeviceAddr::Node(n)) => Ok((NODE_IP_BASE + n + 1).to_be_bytes()),
            Ok(DeviceAddr::Switch(s)) => Ok((SWITCH_IP_BASE + s + 1).to_be_bytes()),
            Err(e) => Err(e),
        }
    }

    /// The device's MAC address (locally administered, unicast).
    pub const fn mac(self) -> Result<[u8; 6], WireError> {
        let (p, id) = match self.validate() {
            Ok(DeviceAddr::Node(n)) => (NODE_MAC_PREFIX, n),
            Ok(DeviceAddr::Switch(s)) => (SWITCH_MAC_PREFIX, s),
            Err(e) => return Err(e),
        };
        let b = id.to_be_bytes();
        Ok([p[0], p[1], p[2], b[1], b[2], b[3]])
    }

    /// The device with IPv4 address `ip`, if `ip` is one of the convention's.
    pub const fn from_ipv4(ip: [u8; 4]) -> Option<DeviceAddr> {
        let v = u32::from_be_bytes(ip);
        let (base, node) = if v & 0xFF80_0000 == NODE_IP_BASE {
            (NODE_IP_BASE, true)
        } else if v & 0xFF80_0000 == SWITCH_IP_BASE {
            (SWITCH_IP_BASE, false)
        } else {
            return None;
        };
        let off = v - base;
        if off == 0 || off - 1 > MAX_NODE_ID {
            return None;
        }
        Some(if node {
            DeviceAddr::Node(off - 1)
        } else {
            DeviceAddr::Switch(off - 1)
        })
    }

    /// The device with MAC address `mac`, if `mac` is one of the convention's.
    pub const fn from_mac(mac: [u8; 6]) -> Option<DeviceAddr> {
        let id = u32::from_be_bytes([0, mac[3], mac[4], mac[5]]);
        if id > MAX_NODE_ID {
            return None;
        }
        if mac[0] == NODE_MAC_PREFIX[0]
            && mac[1] == NODE_MAC_PREFIX[1]
            && mac[2] == NODE_MAC_PREFIX[2]
        {
            Some(DeviceAddr::Node(id))
        } else if mac[0] == SWITCH_MAC_PREFIX[0]
            && mac[1] == SWITCH_MAC_PREFIX[1]
            && mac[2] == SWITCH_MAC_PREFIX[2]
        {
            Some(DeviceAddr::Switch(id))
        } else {
            None
        }
    }
}

impl fmt::Display for DeviceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceAddr::Node(n) => write!(f, "node {n}"),
            DeviceAddr::Switch(s) => write!(f, "switch {s}"),
        }
    }
}

/// A protocol layer, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Ethernet II.
    Ethernet,
    /// IPv4.
    Ipv4,
    /// UDP.
    Udp,
    /// InfiniBand BTH.
    Bth,
    /// NetSparse concatenation header.
    Concat,
    /// NetSparse PR layer.
    Pr,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Ethernet => "Ethernet",
            Layer::Ipv4 => "IPv4",
            Layer::Udp => "UDP",
            Layer::Bth => "BTH",
            Layer::Concat => "concatenation header",
            Layer::Pr => "PR layer",
        })
    }
}

/// Malformed or foreign input, and impossible build requests.
///
/// [`WireError::is_foreign`] separates traffic that simply is not NetSparse
/// (a switch forwards it unchanged) from malformed NetSparse packets (counted
/// and dropped).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WireError {
    /// The buffer ends inside `layer`.
    #[error("truncated {layer}: need {needed} bytes, got {got}")]
    Truncated {
        /// The layer being read.
        layer: Layer,
        /// Bytes that layer needs from its start.
        needed: usize,
        /// Bytes available from its start.
        got: usize,
    },
    /// Not an IPv4 frame (the EtherType is given; VLAN tags are not supported).
    #[error("not IPv4: EtherType {ethertype:#06x}")]
    NotIpv4 {
        /// The frame's EtherType.
        ethertype: u16,
    },
    /// IPv4 version is not 4 or IHL is below 5.
    #[error("bad IPv4 header: version {version}, IHL {ihl}")]
    BadIpv4Header {
        /// Version nibble.
        version: u8,
        /// IHL nibble.
        ihl: u8,
    },
    /// IPv4 total length smaller than the header or larger than the frame.
    #[error("bad IPv4 total length {total_len} (header {header_len} bytes, {available} bytes available)")]
    BadIpv4TotalLength {
        /// The total-length field.
        total_len: u16,
        /// IHL × 4.
        header_len: usize,
        /// Bytes from the IPv4 header to the end of the frame.
        available: usize,
    },
    /// IPv4 header checksum mismatch (only reported by checked parsing).
    #[error("bad IPv4 header checksum {got:#06x}, expected {expected:#06x}")]
    BadIpv4Checksum {
        /// The checksum in the header.
        got: u16,
        /// The checksum of the header.
        expected: u16,
    },
    /// An IPv4 fragment (NetSparse packets are never fragmented).
    #[error("IPv4 fragment (MF set or offset {offset}): NetSparse packets are not fragmented")]
    Fragmented {
        /// The fragment offset in 8-byte units.
        offset: u16,
    },
    /// IPv4 payload is not UDP.
    #[error("not UDP: IP protocol {protocol}")]
    NotUdp {
        /// IP protocol number.
        protocol: u8,
    },
    /// UDP, but not to the RoCEv2 port 4791.
    #[error("not RoCEv2: UDP destination port {dst_port}")]
    NotRoce {
        /// UDP destination port.
        dst_port: u16,
    },
    /// UDP length disagrees with the IPv4 payload length.
    #[error("bad UDP length {udp_len} (IPv4 payload is {ip_payload} bytes)")]
    BadUdpLength {
        /// The UDP length field.
        udp_len: u16,
        /// IPv4 total length minus its header.
        ip_payload: usize,
    },
    /// A RoCEv2 packet that is not NetSparse (other BTH opcode or QP).
    #[error("RoCEv2 but not NetSparse: BTH opcode {opcode:#04x}, destination QP {dst_qp:#08x}")]
    NotNetSparse {
        /// BTH opcode.
        opcode: u8,
        /// BTH destination QP.
        dst_qp: u32,
    },
    /// Concatenation header type is neither read (1) nor response (2).
    #[error("unknown PR type {pr_type}")]
    UnknownPrType {
        /// The type field.
        pr_type: u16,
    },
    /// `num_prs` PRs of `stride` bytes do not fit in the bytes that follow
    /// the concatenation header.
    #[error("PR count {num_prs} overruns the packet: {num_prs} x {stride} bytes needed, {available} available")]
    PrCountOverrun {
        /// The `num_prs` field.
        num_prs: u32,
        /// Bytes per PR.
        stride: usize,
        /// Bytes after the concatenation header.
        available: usize,
    },
    /// Bytes left after the last PR (e.g. a length that is not a multiple of the PR size).
    #[error("{extra} trailing bytes after {num_prs} PRs of {stride} bytes")]
    TrailingBytes {
        /// The `num_prs` field.
        num_prs: u32,
        /// Bytes per PR.
        stride: usize,
        /// Bytes left over.
        extra: usize,
    },
    /// A read packet whose PRs carry `prop_len`-byte payloads.
    #[error("read PRs carry payloads ({num_prs} x {prop_len} extra bytes)")]
    ReadWithPayload {
        /// The `num_prs` field.
        num_prs: u32,
        /// The `prop_len` field.
        prop_len: u32,
    },
    /// A build request whose output does not fit the buffer.
    #[error("buffer too small: need {needed} bytes, have {got}")]
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
    /// A build request whose IP datagram would exceed the MTU.
    #[error("packet of {ip_len} IP bytes exceeds the MTU {mtu}")]
    ExceedsMtu {
        /// The IP datagram length.
        ip_len: usize,
        /// The MTU.
        mtu: usize,
    },
    /// A PR payload whose length is not the packet's (`prop_len` for
    /// responses, 0 for reads).
    #[error("PR payload of {got} bytes, expected {expected}")]
    PayloadLength {
        /// Expected bytes.
        expected: usize,
        /// Given bytes.
        got: usize,
    },
    /// A device id beyond the addressing convention.
    #[error("{addr} is outside the addressing convention (max id {MAX_NODE_ID})")]
    DeviceIdOutOfRange {
        /// The device.
        addr: DeviceAddr,
    },
}

impl WireError {
    /// Whether the input is valid traffic that is simply not NetSparse (not
    /// IPv4, not UDP, not port 4791, other RoCE opcodes): forward it, do not
    /// count it as malformed.
    pub const fn is_foreign(&self) -> bool {
        matches!(
            self,
            WireError::NotIpv4 { .. }
                | WireError::NotUdp { .. }
                | WireError::NotRoce { .. }
                | WireError::NotNetSparse { .. }
        )
    }
}

/// Read a big-endian u16 at `at` (caller checked the length).
#[inline(always)]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Read a big-endian u32 at `at` (caller checked the length).
#[inline(always)]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Read a big-endian u64 at `at` (caller checked the length).
#[inline(always)]
pub(crate) fn be64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_capacity() {
        assert_eq!(IP_OVERHEAD, 54);
        assert_eq!(FRAME_HEADERS_LEN, 68);
        assert_eq!(pr_capacity(1500), 1446);
        // K = 16 f32 values: 64 B properties, 82-byte response PRs.
        assert_eq!(pr_stride(PrType::Response, 64), 82);
        assert_eq!(max_prs(PrType::Response, 64, 1500), 17);
        assert_eq!(max_prs(PrType::Response, 16, 1500), 42);
        assert_eq!(max_prs(PrType::Read, 64, 1500), 80);
        assert_eq!(max_prs(PrType::Response, 512, 1500), 2);
        assert_eq!(max_prs(PrType::Response, 2000, 1500), 0);
        assert_eq!(max_prs(PrType::Read, 0, 40), 0);
    }

    #[test]
    fn addressing_round_trips() {
        for (d, ip, mac) in [
            (DeviceAddr::Node(0), [10, 0, 0, 1], [2, 0x4e, 0x53, 0, 0, 0]),
            (
                DeviceAddr::Node(255),
                [10, 0, 1, 0],
                [2, 0x4e, 0x53, 0, 0, 255],
            ),
            (
                DeviceAddr::Node(65_535),
                [10, 1, 0, 0],
                [2, 0x4e, 0x53, 0, 0xff, 0xff],
            ),
            (
                DeviceAddr::Node(MAX_NODE_ID),
                [10, 127, 255, 254],
                [2, 0x4e, 0x53, 0x7f, 0xff, 0xfd],
            ),
            (
                DeviceAddr::Switch(0),
                [10, 128, 0, 1],
                [2, 0x4e, 0x57, 0, 0, 0],
            ),
            (
                DeviceAddr::Switch(MAX_SWITCH_ID),
                [10, 255, 255, 254],
                [2, 0x4e, 0x57, 0x7f, 0xff, 0xfd],
            ),
        ] {
            assert_eq!(d.ipv4(), Ok(ip), "{d}");
            assert_eq!(d.mac(), Ok(mac), "{d}");
            assert_eq!(DeviceAddr::from_ipv4(ip), Some(d));
            assert_eq!(DeviceAddr::from_mac(mac), Some(d));
        }
        for bad in [
            [10, 0, 0, 0],
            [10, 127, 255, 255],
            [10, 128, 0, 0],
            [10, 255, 255, 255],
            [192, 168, 0, 1],
        ] {
            assert_eq!(DeviceAddr::from_ipv4(bad), None, "{bad:?}");
        }
        assert_eq!(
            DeviceAddr::from_mac([2, 0x4e, 0x53, 0x7f, 0xff, 0xfe]),
            None
        );
        assert_eq!(DeviceAddr::from_mac([0, 1, 2, 3, 4, 5]), None);
        assert!(DeviceAddr::Node(MAX_NODE_ID + 1).ipv4().is_err());
        assert!(DeviceAddr::Switch(u32::MAX).mac().is_err());
        // Unambiguous over the first 65,000+ nodes.
        let mut seen = std::collections::BTreeSet::new();
        for n in 0..70_000 {
            let ip = DeviceAddr::Node(n).ipv4().unwrap();
            assert!(seen.insert(ip));
            assert_eq!(DeviceAddr::from_ipv4(ip), Some(DeviceAddr::Node(n)));
        }
    }

    #[test]
    fn foreign_classification() {
        assert!(WireError::NotRoce { dst_port: 53 }.is_foreign());
        assert!(!WireError::UnknownPrType { pr_type: 3 }.is_foreign());
    }
}
