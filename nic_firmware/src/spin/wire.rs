//! The wire format of sPIN messages: Ethernet / IPv4 / UDP (port
//! [`SPIN_UDP_PORT`]) / a 32-byte sPIN header / payload. Every packet of a
//! message carries the message header (id, match bits, length, user header)
//! and its own offset and sequence number, so any packet can be the first
//! to arrive and install the message. Addresses follow the NetSparse
//! convention (node *n* is 10.0.0.0 + *n* + 1, MAC 02:4e:53 + *n*).

use netsparse_externs::hash::csum16;
use netsparse_externs::wire::{DeviceAddr, ETH_HEADER_LEN, IPV4_HEADER_LEN, UDP_HEADER_LEN};
use thiserror::Error;

/// The UDP destination port of sPIN packets.
pub const SPIN_UDP_PORT: u16 = 4792;
/// Bytes of the sPIN header.
pub const SPIN_HEADER_LEN: usize = 32;
/// Bytes before the payload.
pub const SPIN_FRAME_HEADERS: usize =
    ETH_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN + SPIN_HEADER_LEN;

/// The sPIN header of one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpinHeader {
    /// Sending node (from the IPv4 source address).
    pub src: u32,
    /// Destination node (from the IPv4 destination address).
    pub dst: u32,
    /// Message id, unique per sender.
    pub msg_id: u32,
    /// Match bits.
    pub match_bits: u64,
    /// Message length in bytes.
    pub msg_len: u32,
    /// Offset of this packet's payload in the message.
    pub offset: u32,
    /// Packet number in the message.
    pub seq: u32,
    /// The sender's 8-byte user header.
    pub user: u64,
}

/// Why a frame is not a sPIN packet (counted by the NIC, which drops it).
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum SpinWireError {
    /// Shorter than the headers, or than the IPv4 length says.
    #[error("truncated frame")]
    Truncated,
    /// Not IPv4/UDP to the sPIN port.
    #[error("not a sPIN packet (IPv4/UDP port 4792)")]
    NotSpin,
    /// Source or destination is not a node address.
    #[error("address is not a node's")]
    BadAddress,
    /// The payload does not fit the message (`offset + len > msg_len`).
    #[error("payload outside its message")]
    OutsideMessage,
}

/// A parsed sPIN packet: its header and where its payload is in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpinPacket {
    /// The header.
    pub hdr: SpinHeader,
    /// Payload bytes in the frame: `frame[SPIN_FRAME_HEADERS..][..len]`.
    pub len: u32,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be64(b: &[u8], at: usize) -> u64 {
    (u64::from(be32(b, at)) << 32) | u64::from(be32(b, at + 4))
}

/// Parse a frame (no allocation).
pub fn parse(frame: &[u8]) -> Result<SpinPacket, SpinWireError> {
    if frame.len() < SPIN_FRAME_HEADERS {
        return Err(SpinWireError::Truncated);
    }
    let ip = ETH_HEADER_LEN;
    let udp = ip + IPV4_HEADER_LEN;
    if frame[12..14] != [0x08, 0x00]
        || frame[ip] != 0x45
        || frame[ip + 9] != 17
        || u16::from_be_bytes([frame[udp + 2], frame[udp + 3]]) != SPIN_UDP_PORT
    {
        return Err(SpinWireError::NotSpin);
    }
    let ip_len = usize::from(u16::from_be_bytes([frame[ip + 2], frame[ip + 3]]));
    if ip_len < IPV4_HEADER_LEN + UDP_HEADER_LEN + SPIN_HEADER_LEN || ip + ip_len > frame.len() {
        return Err(SpinWireError::Truncated);
    }
    let node = |at: usize| match DeviceAddr::from_ipv4([
        frame[at],
        frame[at + 1],
        frame[at + 2],
        frame[at + 3],
    ]) {
        Some(DeviceAddr::Node(n)) => Ok(n),
        _ => Err(SpinWireError::BadAddress),
    };
    let src = node(ip + 12)?;
    let dst = node(ip + 16)?;
    let h = udp + UDP_HEADER_LEN;
    let hdr = SpinHeader {
        src,
        dst,
        msg_id: be32(frame, h),
        match_bits: be64(frame, h + 4),
        msg_len: be32(frame, h + 12),
        offset: be32(frame, h + 16),
        seq: be32(frame, h + 20),
        user: be64(frame, h + 24),
    };
    let len = (ip_len - IPV4_HEADER_LEN - UDP_HEADER_LEN - SPIN_HEADER_LEN) as u32;
    if u64::from(hdr.offset) + u64::from(len) > u64::from(hdr.msg_len) {
        return Err(SpinWireError::OutsideMessage);
    }
    Ok(SpinPacket { hdr, len })
}

/// Append the frame of `hdr` with `payload` to `out` (no allocation beyond
/// `out`'s growth). `None` (nothing written) when a node id is out of range
/// or the frame would exceed 65535 IPv4 bytes.
pub fn emit(hdr: &SpinHeader, payload: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let smac = DeviceAddr::Node(hdr.src).mac().ok()?;
    let dmac = DeviceAddr::Node(hdr.dst).mac().ok()?;
    let sip = DeviceAddr::Node(hdr.src).ipv4().ok()?;
    let dip = DeviceAddr::Node(hdr.dst).ipv4().ok()?;
    let ip_len = IPV4_HEADER_LEN + UDP_HEADER_LEN + SPIN_HEADER_LEN + payload.len();
    let ip_len16 = u16::try_from(ip_len).ok()?;
    let start = out.len();
    out.extend_from_slice(&dmac);
    out.extend_from_slice(&smac);
    out.extend_from_slice(&[0x08, 0x00]);
    let ip = out.len();
    out.extend_from_slice(&[0x45, 0x00]);
    out.extend_from_slice(&ip_len16.to_be_bytes());
    out.extend_from_slice(&(hdr.seq as u16).to_be_bytes()); // identification
    out.extend_from_slice(&[0x40, 0x00, 64, 17, 0, 0]); // DF, TTL, UDP, checksum
    out.extend_from_slice(&sip);
    out.extend_from_slice(&dip);
    let c = csum16(&out[ip..ip + IPV4_HEADER_LEN]);
    out[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    let udp_len = (ip_len - IPV4_HEADER_LEN) as u16;
    out.extend_from_slice(&SPIN_UDP_PORT.to_be_bytes());
    out.extend_from_slice(&SPIN_UDP_PORT.to_be_bytes());
    out.extend_from_slice(&udp_len.to_be_bytes());
    out.extend_from_slice(&[0, 0]); // no UDP checksum
    out.extend_from_slice(&hdr.msg_id.to_be_bytes());
    out.extend_from_slice(&hdr.match_bits.to_be_bytes());
    out.extend_from_slice(&hdr.msg_len.to_be_bytes());
    out.extend_from_slice(&hdr.offset.to_be_bytes());
    out.extend_from_slice(&hdr.seq.to_be_bytes());
    out.extend_from_slice(&hdr.user.to_be_bytes());
    out.extend_from_slice(payload);
    Some(out.len() - start)
}

/// The payload bytes of a parsed frame.
pub fn payload<'a>(frame: &'a [u8], p: &SpinPacket) -> &'a [u8] {
    &frame[SPIN_FRAME_HEADERS..SPIN_FRAME_HEADERS + p.len as usize]
}

/// Frames of a whole message of `data` from `src` to `dst`, `mtu_payload`
/// payload bytes per packet, in order (test and workload helper).
pub fn message_frames(
    src: u32,
    dst: u32,
    msg_id: u32,
    match_bits: u64,
    user: u64,
    data: &[u8],
    mtu_payload: usize,
) -> Vec<Vec<u8>> {
    let per = mtu_payload.max(1);
    let n = data.len().div_ceil(per).max(1);
    (0..n)
        .filter_map(|i| {
            let off = i * per;
            let end = (off + per).min(data.len());
            let hdr = SpinHeader {
                src,
                dst,
                msg_id,
                match_bits,
                msg_len: data.len() as u32,
                offset: off as u32,
                seq: i as u32,
                user,
            };
            let mut f = Vec::with_capacity(SPIN_FRAME_HEADERS + end - off);
            emit(&hdr, &data[off..end], &mut f).map(|_| f)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let h = SpinHeader {
            src: 1,
            dst: 2,
            msg_id: 7,
            match_bits: 0xAB,
            msg_len: 100,
            offset: 96,
            seq: 3,
            user: 0x1000,
        };
        let mut f = Vec::new();
        emit(&h, &[1, 2, 3, 4], &mut f).unwrap();
        let p = parse(&f).unwrap();
        assert_eq!(p.hdr, h);
        assert_eq!(payload(&f, &p), &[1, 2, 3, 4]);
        assert_eq!(parse(&f[..40]), Err(SpinWireError::Truncated));
        let mut g = Vec::new();
        emit(&SpinHeader { offset: 98, ..h }, &[1, 2, 3, 4], &mut g).unwrap();
        assert_eq!(parse(&g), Err(SpinWireError::OutsideMessage));
        let mut u = f.clone();
        u[36] = 0; // UDP destination port
        assert_eq!(parse(&u), Err(SpinWireError::NotSpin));
        let frames = message_frames(0, 1, 1, 5, 0, &[9u8; 2500], 1024);
        assert_eq!(frames.len(), 3);
        assert_eq!(parse(&frames[2]).unwrap().len, 452);
    }
}
