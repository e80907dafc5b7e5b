//! Workloads for the NetSparse switch, used by `netsparse bench
//! middle-pipe`, the benchmarks and tests: PR frames (reads and responses)
//! built with the wire module, a deterministic property of every idx, the
//! routes of `programs/netsparse_tor.p4`, and the middle-pipe benchmark's
//! traffic.

use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::hash::SplitMix64;
use netsparse_externs::wire::{DeviceAddr, FrameBuilder, FrameHeader, PrRepr, PrType, WireError};

use super::NsSwitch;
use netsparse_engine::{ControlPlane, ControlPlaneError};

/// The property of `idx` used in tests: `len` bytes, a function of `idx`
/// only (so a cached property can be checked against its source).
pub fn property(idx: u64, len: u32) -> Vec<u8> {
    let mut g = SplitMix64::new(idx ^ 0x4e53_5052_4f50);
    let mut v = Vec::with_capacity(len as usize);
    while v.len() < len as usize {
        v.extend_from_slice(&g.next_u64().to_le_bytes());
    }
    v.truncate(len as usize);
    v
}

/// A NetSparse frame from device `from` to node `dst` carrying `prs` (the
/// payload is taken for responses and ignored for reads), addressed by the
/// crate's convention, BTH PSN `psn`, no MTU limit beyond 65535 bytes.
pub fn pr_frame(
    from: DeviceAddr,
    pr_type: PrType,
    dst: u32,
    prop_len: u32,
    prs: &[(PrRepr, &[u8])],
    psn: u32,
) -> Result<Vec<u8>, WireError> {
    let header = FrameHeader::netsparse(from, dst, psn)?;
    let mut buf = Vec::new();
    let mut b = FrameBuilder::begin(
        &mut buf,
        &header,
        pr_type,
        dst,
        prop_len,
        usize::from(u16::MAX),
    )?;
    for (pr, payload) in prs {
        let p: &[u8] = match pr_type {
            PrType::Read => &[],
            PrType::Response => payload,
        };
        b.push_pr(pr, p)?;
    }
    b.finish();
    Ok(buf)
}

/// A read frame from node `src` to node `dst` for `idxs` (tid 0, req_id =
/// position).
pub fn read_frame(src: u32, dst: u32, prop_len: u32, idxs: &[u64]) -> Result<Vec<u8>, WireError> {
    let prs: Vec<(PrRepr, &[u8])> = idxs
        .iter()
        .enumerate()
        .map(|(i, &idx)| {
            (
                PrRepr {
                    src,
                    tid: 0,
                    idx,
                    req_id: i as u32,
                },
                &[][..],
            )
        })
        .collect();
    pr_frame(DeviceAddr::Node(src), PrType::Read, dst, prop_len, &prs, 0)
}

/// A response frame from node `src` (the owner) to node `dst` (the
/// requester) carrying [`property`] of each idx (tid 0, req_id = position;
/// the PR's `src` is the requester, as in a read turned into a response).
pub fn response_frame(
    src: u32,
    dst: u32,
    prop_len: u32,
    idxs: &[u64],
) -> Result<Vec<u8>, WireError> {
    let props: Vec<Vec<u8>> = idxs.iter().map(|&i| property(i, prop_len)).collect();
    let prs: Vec<(PrRepr, &[u8])> = idxs
        .iter()
        .zip(&props)
        .enumerate()
        .map(|(i, (&idx, p))| {
            (
                PrRepr {
                    src: dst,
                    tid: 0,
                    idx,
                    req_id: i as u32,
                },
                p.as_slice(),
            )
        })
        .collect();
    pr_frame(
        DeviceAddr::Node(src),
        PrType::Response,
        dst,
        prop_len,
        &prs,
        0,
    )
}

/// Routes of `programs/netsparse_tor.p4`: table `node_port` gets node →
/// port for every `(node, port)` pair (NetSparse traffic) and `ipv4_port`
/// the node's /32 (other IPv4 traffic).
pub fn install_tor_routes(
    sw: &mut NsSwitch,
    routes: &[(u32, u32)],
) -> Result<(), ControlPlaneError> {
    for &(node, port) in routes {
        sw.add_entry(
            "node_port",
            &[KeyMatch::Exact {
                value: u128::from(node),
            }],
            "set_port",
            &[u128::from(port)],
            None,
        )?;
        if let Ok(ip) = DeviceAddr::Node(node).ipv4() {
            sw.add_entry(
                "ipv4_port",
                &[KeyMatch::Lpm {
                    value: u128::from(u32::from_be_bytes(ip)),
                    prefix_len: 32,
                }],
                "set_port",
                &[u128::from(port)],
                None,
            )?;
        }
    }
    Ok(())
}

/// The middle-pipe benchmark's traffic: frames that all meet in middle
/// pipe 0 of a ToR whose nodes `0..ports_per_pipe` sit on the ports of
/// pipe 0 and whose remote nodes `1000..` are reached through port 0.
#[derive(Clone, Debug)]
pub struct MiddleWorkload {
    /// (ingress port, frame), replayed in order.
    pub frames: Vec<(u32, Vec<u8>)>,
    /// PRs in all frames.
    pub prs: u64,
    /// Property length (bytes).
    pub prop_len: u32,
    /// Routes for [`install_tor_routes`].
    pub routes: Vec<(u32, u32)>,
}

/// Build [`MiddleWorkload`]: `packets` full packets, alternately a response
/// from a remote owner through port 0 (filling middle pipe 0's cache) and a
/// read from a local host to a remote owner. Response idxs are drawn from
/// `0..idx_range`; half the read idxs repeat an idx some earlier response
/// carried (they hit while it is cached), half are drawn from the range
/// (they mostly miss). Seeded by `seed`. Properties are `prop_len` bytes
/// (64 for K = 16 four-byte values); a packet carries as many PRs as fit a
/// 1500-byte MTU.
pub fn middle_workload(
    packets: usize,
    prop_len: u32,
    idx_range: u64,
    ports_per_pipe: u32,
    seed: u64,
) -> Result<MiddleWorkload, WireError> {
    let mut g = SplitMix64::new(seed);
    let mtu = netsparse_externs::wire::DEFAULT_MTU;
    let n_resp = netsparse_externs::wire::max_prs(PrType::Response, prop_len, mtu) as usize;
    let n_read = netsparse_externs::wire::max_prs(PrType::Read, prop_len, mtu) as usize;
    let hosts = ports_per_pipe.max(2) - 1;
    let remote = 1000u32;
    let mut routes: Vec<(u32, u32)> = (1..=hosts).map(|h| (h, h)).collect();
    routes.extend((0..4).map(|r| (remote + r, 0)));
    let mut frames = Vec::with_capacity(packets);
    let mut inserted: Vec<u64> = Vec::new();
    let mut prs = 0u64;
    for i in 0..packets {
        let owner = remote + (g.next_u64() % 4) as u32;
        let host = 1 + (g.next_u64() % u64::from(hosts)) as u32;
        let n = if i % 2 == 0 { n_resp } else { n_read };
        let idxs: Vec<u64> = (0..n)
            .map(|_| {
                if i % 2 == 1 && !inserted.is_empty() && g.next_u64() % 2 == 0 {
                    inserted[(g.next_u64() % inserted.len() as u64) as usize]
                } else {
                    g.next_u64() % idx_range.max(1)
                }
            })
            .collect();
        if i % 2 == 0 {
            inserted.extend_from_slice(&idxs);
        }
        let f = if i % 2 == 0 {
            (0, response_frame(owner, host, prop_len, &idxs)?)
        } else {
            (host, read_frame(host, owner, prop_len, &idxs)?)
        };
        prs += n as u64;
        frames.push(f);
    }
    Ok(MiddleWorkload {
        frames,
        prs,
        prop_len,
        routes,
    })
}
