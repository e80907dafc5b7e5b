//! Property test of the NetSparse switch running `programs/netsparse_tor.p4`:
//! for any sequence of valid PR packets, the multiset of PRs that leave
//! equals the multiset that entered after rewriting exactly the cache hits
//! (a hit read becomes a response to its requester carrying the cached
//! property, out of the port it came in on) — nothing lost, nothing
//! duplicated — and every PR leaves between `latency` and `latency +
//! DelayCycles` after it arrived. A second property mixes corrupted frames
//! (one byte overwritten or cut short, on any port) with valid reads: no
//! panic, and every valid PR still leaves exactly once, in time.

mod ns_common;

use std::collections::BTreeSet;

use netsparse_bmv2::nsswitch::testing::{pr_frame, property, replay};
use netsparse_bmv2::nsswitch::NsConfig;
use netsparse_externs::deconcat::Deconcatenator;
use netsparse_externs::wire::{DeviceAddr, PrRepr, PrType};
use netsparse_externs::Time;
use ns_common::*;
use proptest::prelude::*;

const LAT: u64 = 16;
const DELAY: u64 = 125;
const PROP: u32 = 64;

/// One input packet: `dt` ns after the previous one; from `from` to `to`
/// (node ids of the rack's routes); a response (carrying the property of
/// each idx) or a read.
#[derive(Clone, Debug)]
struct Pkt {
    dt: u64,
    response: bool,
    from: u32,
    to: u32,
    prs: Vec<(u16, u64)>, // (tid, idx)
}

fn node() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..12, 16u32..48]
}

fn pkt() -> impl Strategy<Value = Pkt> {
    (0u64..300, any::<bool>(), node(), node(), 1usize..=17)
        .prop_flat_map(|(dt, response, from, to, n)| {
            prop::collection::vec((0u16..4, 0u64..48), n).prop_map(move |prs| Pkt {
                dt,
                response,
                from,
                to,
                prs,
            })
        })
        .prop_filter("two remote nodes are never both ends", |p| {
            p.from < 16 || p.to < 16
        })
}

/// The port a node is reached through (the rack's routes).
fn port_of(node: u32) -> u32 {
    rack_routes()
        .iter()
        .find(|(n, _)| *n == node)
        .map(|(_, p)| *p)
        .unwrap_or(u32::MAX)
}

/// A PR as it leaves: (type, dst, port, header, payload).
type Leaving = (u16, u32, u32, PrRepr, Vec<u8>);

fn config() -> NsConfig {
    // 1 MiB of cache (4096 64-byte lines per pipe): 48 idxs never evict.
    NsConfig::from_toml(
        "ports = 16\npipes = 4\nclock_mhz = 1000\n[switch]\nid = 3\n\
         [cache]\nsize = \"1MiB\"\nways = 4\nmode = 64\n",
    )
    .expect("config")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn prs_are_conserved_modulo_cache_hits(pkts in prop::collection::vec(pkt(), 1..24)) {
        let mut sw = tor_with(config());
        let cfg = sw.config().clone();
        let mut inputs = Vec::new();
        let mut expected: Vec<Leaving> = Vec::new();
        let mut arrival = std::collections::BTreeMap::new();
        let mut cached: Vec<BTreeSet<u64>> = vec![BTreeSet::new(); 4];
        let mut hits = 0u64;
        let mut t = 1000u64;
        let mut req_id = 0u32;
        for p in &pkts {
            t += p.dt;
            let in_port = port_of(p.from);
            let props: Vec<Vec<u8>> = p.prs.iter().map(|&(_, i)| property(i, PROP)).collect();
            let mut prs = Vec::new();
            for (&(tid, idx), prop_bytes) in p.prs.iter().zip(&props) {
                // A response's PR names its requester (the packet's dst).
                let src = if p.response { p.to } else { p.from };
                let h = PrRepr { src, tid, idx, req_id };
                arrival.insert(req_id, t);
                req_id += 1;
                if p.response {
                    cached[cfg.pipe_of(in_port) as usize].insert(idx);
                    expected.push((2, p.to, port_of(p.to), h, prop_bytes.clone()));
                } else if cached[cfg.pipe_of(port_of(p.to)) as usize].contains(&idx) {
                    hits += 1;
                    expected.push((2, src, in_port, h, prop_bytes.clone()));
                } else {
                    expected.push((1, p.to, port_of(p.to), h, Vec::new()));
                }
                prs.push((h, prop_bytes.as_slice()));
            }
            let ty = if p.response { PrType::Response } else { PrType::Read };
            let f = pr_frame(DeviceAddr::Node(p.from), ty, p.to, PROP, &prs, 0).unwrap();
            inputs.push((Time::from_ns(t), in_port, f));
        }
        let (sent, settled) = replay(&mut sw, &inputs, 100_000);
        prop_assert!(settled);
        let mut d = Deconcatenator::default();
        let mut got: Vec<Leaving> = Vec::new();
        for (when, port, f) in &sent {
            let x = d.frame(f).map_err(|e| TestCaseError::fail(format!("bad output: {e}")))?;
            prop_assert!(f.len() - 14 <= 1500, "within the MTU");
            for v in x.prs {
                let at = arrival[&v.req_id];
                let w = when.as_ps();
                prop_assert!(
                    w >= Time::from_ns(at + LAT).as_ps() && w <= Time::from_ns(at + LAT + DELAY).as_ps(),
                    "PR {} arrived at {at} ns, left at {when}", v.req_id
                );
                got.push((x.concat.pr_type.as_u16(), x.concat.dst, *port, v.repr(), v.payload.to_vec()));
            }
        }
        expected.sort();
        got.sort();
        prop_assert_eq!(got, expected);
        let s = sw.stats();
        prop_assert_eq!(s.total.cache.hits, hits);
        prop_assert_eq!(s.total.prs_in, u64::from(req_id));
        prop_assert_eq!(s.total.prs_out, u64::from(req_id));
        prop_assert_eq!(s.total.malformed.total() + s.total.program_errors.total(), 0);
    }
}

/// A corruption of a frame: overwrite one byte, or cut the frame short.
#[derive(Clone, Debug)]
enum Corrupt {
    Byte(usize, u8),
    Truncate(usize),
}

/// A packet of the hostile mix: a valid read (tag 0x7777) or a corrupted
/// read or response (tid 0: one overwritten byte can never make it 0x7777).
#[derive(Clone, Debug)]
enum Hostile {
    Valid {
        from: u32,
        to: u32,
        idxs: Vec<u64>,
    },
    Bad {
        port: u32,
        response: bool,
        from: u32,
        to: u32,
        idxs: Vec<u64>,
        how: Corrupt,
    },
}

const TAG: u16 = 0x7777;

fn hostile() -> impl Strategy<Value = Hostile> {
    let idxs = || prop::collection::vec(0u64..32, 1..=12);
    prop_oneof![
        (0u32..12, 16u32..48, idxs()).prop_map(|(from, to, idxs)| Hostile::Valid {
            from,
            to,
            idxs
        }),
        (
            0u32..20,
            any::<bool>(),
            node(),
            node(),
            idxs(),
            prop_oneof![
                (0usize..1200, any::<u8>()).prop_map(|(i, v)| Corrupt::Byte(i, v)),
                (0usize..1200).prop_map(Corrupt::Truncate),
            ],
        )
            .prop_map(|(port, response, from, to, idxs, how)| Hostile::Bad {
                port,
                response,
                from,
                to,
                idxs,
                how,
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Corrupted frames (any byte overwritten, any length cut) on any port,
    /// mixed with valid reads: the switch never panics, settles, and every
    /// valid PR leaves exactly once (as a read or, if a corrupted response
    /// filled the cache, as a hit), within its latency window.
    #[test]
    fn corrupted_frames_never_disturb_valid_prs(mix in prop::collection::vec(hostile(), 1..32)) {
        let mut sw = tor_with(config());
        let mut inputs = Vec::new();
        let mut arrival = std::collections::BTreeMap::new();
        let mut req_id = 0u32;
        let mut t = 1000u64;
        for h in &mix {
            t += 20;
            match h {
                Hostile::Valid { from, to, idxs } => {
                    let prs: Vec<(PrRepr, &[u8])> = idxs
                        .iter()
                        .map(|&idx| {
                            arrival.insert(req_id, t);
                            req_id += 1;
                            (PrRepr { src: *from, tid: TAG, idx, req_id: req_id - 1 }, &[][..])
                        })
                        .collect();
                    let f = pr_frame(DeviceAddr::Node(*from), PrType::Read, *to, PROP, &prs, 0).unwrap();
                    inputs.push((Time::from_ns(t), port_of(*from), f));
                }
                Hostile::Bad { port, response, from, to, idxs, how } => {
                    let props: Vec<Vec<u8>> = idxs.iter().map(|&i| property(i, PROP)).collect();
                    let prs: Vec<(PrRepr, &[u8])> = idxs
                        .iter()
                        .zip(&props)
                        .enumerate()
                        .map(|(i, (&idx, p))| (PrRepr { src: *from, tid: 0, idx, req_id: i as u32 }, p.as_slice()))
                        .collect();
                    let ty = if *response { PrType::Response } else { PrType::Read };
                    let mut f = pr_frame(DeviceAddr::Node(*from), ty, *to, PROP, &prs, 0).unwrap();
                    match *how {
                        Corrupt::Byte(i, v) => {
                            let n = f.len();
                            f[i % n] = v;
                        }
                        Corrupt::Truncate(n) => f.truncate(n % f.len()),
                    }
                    inputs.push((Time::from_ns(t), *port, f));
                }
            }
        }
        let (sent, settled) = replay(&mut sw, &inputs, 100_000);
        prop_assert!(settled);
        let mut d = Deconcatenator::default();
        let mut seen = std::collections::BTreeMap::new();
        for (when, _, f) in &sent {
            let Ok(x) = d.frame(f) else { continue };
            for v in x.prs {
                if v.tid != TAG {
                    continue;
                }
                *seen.entry(v.req_id).or_insert(0u32) += 1;
                let at = arrival.get(&v.req_id).copied();
                prop_assert!(at.is_some(), "a tagged PR nobody sent: {:?}", v.repr());
                let at = at.unwrap_or_default();
                prop_assert!(
                    *when >= Time::from_ns(at + LAT) && *when <= Time::from_ns(at + LAT + DELAY),
                    "PR {} arrived at {at} ns, left at {when}", v.req_id
                );
            }
        }
        prop_assert_eq!(seen.len() as u32, req_id, "every valid PR leaves");
        prop_assert!(seen.values().all(|&n| n == 1), "none twice: {seen:?}");
        prop_assert_eq!(sw.pending_prs(), 0);
    }
}
