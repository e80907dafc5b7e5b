//! Workloads for the v1model switch, used by `netsparse bench switch`,
//! the benchmarks and tests: LPM routes and Ethernet/IPv4/UDP frames
//! addressed into them ([`ipv4_workload`]), and the routes installed into a
//! switch running `programs/ipv4_forward.p4` ([`install_routes`]).

use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::KeyMatch;

/// A synthetic ipv4_forward workload: LPM routes and pre-built frames.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Routes: (prefix, prefix length, next-hop MAC, port).
    pub routes: Vec<(u32, u16, u64, u32)>,
    /// Ethernet/IPv4/UDP frames, most of them hitting a route.
    pub frames: Vec<Vec<u8>>,
}

/// Build `routes` routes (/8, /16, /24 and /32 mixed) and `frames` frames
/// of 64–128 bytes addressed into them (one in 16 misses), from `seed`.
pub fn ipv4_workload(routes: usize, frames: usize, seed: u64) -> Workload {
    use netsparse_externs::hash::SplitMix64;
    let mut rng = SplitMix64::new(seed);
    let mut rs = Vec::with_capacity(routes);
    let mut seen = std::collections::BTreeSet::new();
    while rs.len() < routes {
        let len: u16 = [8u16, 16, 24, 24, 24, 32][(rng.next_u64() % 6) as usize];
        let base = 0x0a00_0000u32 | (rng.next_u64() as u32 & 0x00ff_ffff);
        let prefix = if len == 32 {
            base
        } else {
            base & !((1u32 << (32 - len)) - 1)
        };
        if !seen.insert((prefix, len)) {
            continue;
        }
        let port = (rng.next_u64() % 8) as u32 + 1;
        let mac = 0x0200_0000_0000 | u64::from(prefix);
        rs.push((prefix, len, mac, port));
    }
    let mut fs = Vec::with_capacity(frames);
    for i in 0..frames {
        let dst = if i % 16 == 15 {
            0xc0a8_0000 | (rng.next_u64() as u32 & 0xffff)
        } else {
            let (p, len, _, _) = rs[(rng.next_u64() % rs.len() as u64) as usize];
            let host = if len == 32 {
                0
            } else {
                rng.next_u64() as u32 & ((1u32 << (32 - len)) - 1)
            };
            p | host
        };
        let payload_len = 22 + (rng.next_u64() % 64) as usize;
        fs.push(ipv4_udp_frame(dst, 64, payload_len));
    }
    Workload {
        routes: rs,
        frames: fs,
    }
}

/// An Ethernet/IPv4/UDP frame to `dst` with a correct IPv4 checksum and a
/// zero-filled payload of `payload_len` bytes (UDP checksum 0).
pub fn ipv4_udp_frame(dst: u32, ttl: u8, payload_len: usize) -> Vec<u8> {
    let total = 20 + 8 + payload_len;
    let mut f = Vec::with_capacity(14 + total);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0xfe, 0, 0, 0, 0, 0, 0x01, 0x08, 0x00]);
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[8] = ttl;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 255, 0, 1]);
    ip[16..20].copy_from_slice(&dst.to_be_bytes());
    let c = netsparse_externs::hash::ipv4_header_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0x30, 0x39, 0x12, 0xb7]);
    f.extend_from_slice(&((8 + payload_len) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.resize(14 + total, 0);
    f
}

/// Install a workload's routes into a switch running `programs/ipv4_forward.p4`
/// (or the hand-built `testing::ipv4_forward`).
pub fn install_routes(
    sw: &mut crate::Switch,
    w: &Workload,
) -> Result<(), crate::ControlPlaneError> {
    for &(prefix, len, mac, port) in &w.routes {
        sw.add_entry(
            "MyIngress.ipv4_lpm",
            &[KeyMatch::Lpm {
                value: u128::from(prefix),
                prefix_len: len,
            }],
            "MyIngress.ipv4_forward",
            &[u128::from(mac), u128::from(port)],
            None,
        )?;
    }
    Ok(())
}
