//! The NetSparse switch in-process with `programs/netsparse_tor.p4` on 16
//! ports in 4 pipes (see `ns_common`): the crossbar rule, the cache, the
//! Concatenator's timing (exact to the picosecond), malformed input, the
//! control plane and the counters.

mod ns_common;

use netsparse_bmv2::nsswitch::testing::{
    pr_frame, property, read_frame, replay, response_frame, Sent,
};
use netsparse_bmv2::nsswitch::{NsConfig, NsSwitch, ORIGINATED_PORT};
use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_engine::control::commands;
use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::deconcat::Deconcatenator;
use netsparse_externs::wire::{DeviceAddr, PrRepr, PrType};
use netsparse_externs::{Datapath, Outputs, Time};
use ns_common::*;

const LAT: u64 = 16; // cache latency, ns (1 GHz)
const DELAY: u64 = 125; // DelayCycles, ns (1 GHz)

fn ns(t: u64) -> Time {
    Time::from_ns(t)
}

/// A validated output frame: (concat header, PR headers, payloads).
struct Out {
    t: Time,
    port: u32,
    pr_type: PrType,
    dst: u32,
    prs: Vec<(PrRepr, Vec<u8>)>,
    ttl: u8,
    ip_src: [u8; 4],
    ip_dst: [u8; 4],
    eth_dst: [u8; 6],
}

fn decode(sent: &[Sent]) -> Vec<Out> {
    let mut d = Deconcatenator::default();
    sent.iter()
        .map(|(t, port, f)| {
            let x = d
                .frame(f)
                .unwrap_or_else(|e| panic!("output on port {port} is invalid: {e}"));
            let fr = x.frame.expect("a frame");
            Out {
                t: *t,
                port: *port,
                pr_type: x.concat.pr_type,
                dst: x.concat.dst,
                prs: x.prs.map(|v| (v.repr(), v.payload.to_vec())).collect(),
                ttl: fr.ttl,
                ip_src: fr.ip_src,
                ip_dst: fr.ip_dst,
                eth_dst: fr.eth_dst,
            }
        })
        .collect()
}

fn run(sw: &mut NsSwitch, mut inputs: Vec<(Time, u32, Vec<u8>)>) -> Vec<Sent> {
    inputs.sort_by_key(|i| i.0);
    let (sent, settled) = replay(sw, &inputs, 10_000);
    assert!(settled, "the switch did not settle");
    assert_eq!(sw.pending_prs(), 0);
    sent
}

#[test]
fn a_response_fills_the_cache_of_its_ingress_pipe_only() {
    let mut sw = tor();
    // Node 20 (remote, behind uplink 12 in pipe 3) answers node 1.
    let sent = run(
        &mut sw,
        vec![(ns(1000), 12, response_frame(20, 1, 64, &[7, 8]).unwrap())],
    );
    let out = decode(&sent);
    assert_eq!(out.len(), 1);
    let o = &out[0];
    assert_eq!((o.t, o.port), (ns(1000 + LAT + DELAY), 1));
    assert_eq!((o.pr_type, o.dst), (PrType::Response, 1));
    assert_eq!(o.ip_src, [10, 128, 0, 4], "rebuilt by switch 3");
    assert_eq!(o.ip_dst, DeviceAddr::Node(1).ipv4().unwrap());
    assert_eq!(o.ttl, 63, "the egress pipe decrements the TTL");
    let idxs: Vec<u64> = o.prs.iter().map(|p| p.0.idx).collect();
    assert_eq!(idxs, [7, 8]);
    assert_eq!(o.prs[1].1, property(8, 64));
    let s = sw.stats();
    for p in &s.pipes {
        let inserts = if p.pipe == 3 { 2 } else { 0 };
        assert_eq!(p.cache.inserts, inserts, "pipe {}", p.pipe);
        assert_eq!(p.prs_in, if p.pipe == 3 { 2 } else { 0 });
    }
    assert_eq!(sw.cache_peek(3, 7), Some(&property(7, 64)[..]));
    assert_eq!(sw.cache_peek(0, 7), None);
    assert_eq!(s.pipes[3].packets_in, 1);
    assert_eq!(s.pipes[0].packets_out, 1);
    assert_eq!((s.pipes[3].prs_out, s.pipes[3].concat_packets), (2, 1));
}

#[test]
fn a_read_that_hits_is_answered_out_of_its_arrival_port() {
    let mut sw = tor();
    let sent = run(
        &mut sw,
        vec![
            (ns(1000), 12, response_frame(20, 1, 64, &[7]).unwrap()),
            // Node 5 (port 5, pipe 1) reads idx 7 from node 20 (port 12).
            (ns(5000), 5, read_frame(5, 20, 64, &[7]).unwrap()),
        ],
    );
    let out = decode(&sent);
    assert_eq!(out.len(), 2);
    let o = &out[1];
    assert_eq!((o.t, o.port), (ns(5000 + LAT + DELAY), 5));
    assert_eq!((o.pr_type, o.dst), (PrType::Response, 5));
    assert_eq!(o.eth_dst, DeviceAddr::Node(5).mac().unwrap());
    assert_eq!(o.ip_dst, DeviceAddr::Node(5).ipv4().unwrap());
    assert_eq!(o.prs.len(), 1);
    let (h, payload) = &o.prs[0];
    assert_eq!(
        *h,
        PrRepr {
            src: 5,
            tid: 0,
            idx: 7,
            req_id: 0
        }
    );
    assert_eq!(*payload, property(7, 64));
    let s = sw.stats();
    assert_eq!((s.pipes[3].cache.hits, s.pipes[3].cache.misses), (1, 0));
    assert_eq!(s.total.cache.hits, 1);
    assert_eq!(s.pipes[1].packets_out, 1, "out of pipe 1 (port 5)");
}

#[test]
fn a_read_that_misses_continues_to_its_destination() {
    let mut sw = tor();
    let read = read_frame(5, 20, 64, &[9, 10]).unwrap();
    let sent = run(&mut sw, vec![(ns(2000), 5, read)]);
    let out = decode(&sent);
    assert_eq!(out.len(), 1);
    let o = &out[0];
    assert_eq!((o.t, o.port), (ns(2000 + LAT + DELAY), 12));
    assert_eq!((o.pr_type, o.dst), (PrType::Read, 20));
    assert_eq!(o.ip_dst, DeviceAddr::Node(20).ipv4().unwrap());
    let prs: Vec<PrRepr> = o.prs.iter().map(|p| p.0).collect();
    assert_eq!(
        prs,
        [
            PrRepr {
                src: 5,
                tid: 0,
                idx: 9,
                req_id: 0
            },
            PrRepr {
                src: 5,
                tid: 0,
                idx: 10,
                req_id: 1
            }
        ]
    );
    assert!(o.prs.iter().all(|p| p.1.is_empty()));
    let s = sw.stats();
    assert_eq!((s.pipes[3].cache.misses, s.pipes[3].cache.hits), (2, 0));
    assert_eq!(s.pipes[1].cache.lookups, 0, "reads go to their egress pipe");
}

#[test]
fn prs_for_one_destination_within_delay_cycles_leave_in_one_packet() {
    let mut sw = tor();
    let sent = run(
        &mut sw,
        vec![
            (ns(1000), 5, read_frame(5, 20, 64, &[1]).unwrap()),
            (ns(1050), 6, read_frame(6, 20, 64, &[2]).unwrap()),
            (ns(1100), 8, read_frame(8, 20, 64, &[3]).unwrap()),
            // After the first queue's deadline (1141 ns): a new packet.
            (ns(1200), 5, read_frame(5, 20, 64, &[4]).unwrap()),
            // Another destination: its own queue.
            (ns(1010), 6, read_frame(6, 21, 64, &[5]).unwrap()),
        ],
    );
    let out = decode(&sent);
    let summary: Vec<(Time, u32, Vec<u64>)> = out
        .iter()
        .map(|o| (o.t, o.dst, o.prs.iter().map(|p| p.0.idx).collect()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (ns(1000 + LAT + DELAY), 20, vec![1, 2, 3]),
            (ns(1010 + LAT + DELAY), 21, vec![5]),
            (ns(1200 + LAT + DELAY), 20, vec![4]),
        ]
    );
    let s = sw.stats();
    assert_eq!(s.pipes[3].flushes.expired, 3);
    assert_eq!(s.pipes[3].prs_per_packet, 5.0 / 3.0);
}

#[test]
fn a_queue_that_reaches_the_mtu_leaves_at_once() {
    let mut sw = tor();
    // 80 reads fill a 1500-byte packet (1446 / 18); 79 now, one more later.
    let first: Vec<u64> = (0..79).collect();
    let sent = run(
        &mut sw,
        vec![
            (ns(1000), 5, read_frame(5, 20, 64, &first).unwrap()),
            (ns(1030), 6, read_frame(6, 20, 64, &[79, 80]).unwrap()),
        ],
    );
    let out = decode(&sent);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].t, ns(1030 + LAT), "full: no DelayCycles wait");
    assert_eq!(out[0].prs.len(), 80);
    assert!(sent[0].2.len() - 14 <= 1500);
    assert_eq!(out[1].t, ns(1030 + LAT + DELAY));
    assert_eq!(out[1].prs.len(), 1);
    assert_eq!(out[1].prs[0].0.idx, 80);
    // 17 responses of 64 bytes fill a packet too.
    let idxs: Vec<u64> = (100..117).collect();
    let sent = run(
        &mut sw,
        vec![(ns(9000), 12, response_frame(20, 1, 64, &idxs).unwrap())],
    );
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, ns(9000 + LAT));
    let s = sw.stats();
    assert_eq!(s.pipes[3].flushes.full, 2);
    assert_eq!(s.pipes[3].flushes.expired, 1);
}

#[test]
fn a_lone_pr_leaves_exactly_at_its_deadline() {
    let mut sw = tor();
    let mut out = Outputs::new();
    let t0 = Time::from_ps(1_000_123);
    sw.on_packet(t0, 5, &read_frame(5, 20, 64, &[42]).unwrap(), &mut out);
    assert!(out.is_empty());
    let deadline = t0 + ns(LAT + DELAY);
    assert_eq!(sw.next_deadline(), Some(deadline));
    sw.on_timer(deadline - Time::from_ps(1), &mut out);
    assert!(out.is_empty(), "nothing before the deadline");
    sw.on_timer(deadline, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(sw.next_deadline(), None);
    // At the default 2 GHz clock: 16 + 125 cycles of 500 ps.
    let mut sw = tor_with(NsConfig {
        clock: netsparse_externs::Clock::from_mhz(2000),
        ..small_config()
    });
    sw.on_packet(t0, 5, &read_frame(5, 20, 64, &[42]).unwrap(), &mut out);
    assert_eq!(sw.next_deadline(), Some(t0 + Time::from_ps(141 * 500)));
}

#[test]
fn malformed_packets_are_counted_and_dropped_while_the_rest_flows() {
    let mut sw = tor();
    // PR count that overruns the packet: num_prs + 1 (offset 14+20+8+12+10).
    let mut overrun = read_frame(5, 20, 64, &[1, 2]).unwrap();
    overrun[54 + 13] += 1;
    // Property length that is not the cache mode (32 instead of 64): not
    // malformed, it passes the pipe without the cache.
    let other_len = read_frame(5, 20, 32, &[3]).unwrap();
    // Unknown PR type 3.
    let mut unknown = read_frame(5, 20, 64, &[4]).unwrap();
    unknown[54 + 1] = 3;
    // A bad IPv4 header checksum.
    let mut bad_csum = read_frame(5, 20, 64, &[5]).unwrap();
    bad_csum[14 + 10] ^= 0xff;
    // A response whose PRs stop early (truncated).
    let mut cut = response_frame(20, 1, 64, &[6, 7]).unwrap();
    cut.truncate(cut.len() - 10);
    let good = read_frame(6, 20, 64, &[9]).unwrap();
    let sent = run(
        &mut sw,
        vec![
            (ns(100), 5, overrun),
            (ns(110), 5, other_len),
            (ns(120), 5, unknown),
            (ns(130), 5, bad_csum),
            (ns(140), 12, cut),
            (ns(150), 6, good),
        ],
    );
    let out = decode(&sent);
    let idxs: Vec<u64> = out.iter().map(|o| o.prs[0].0.idx).collect();
    assert_eq!(idxs, [3, 9], "the good read and the other length leave");
    let s = sw.stats();
    assert_eq!(s.pipes[3].cache_bypass_packets, 1);
    let m = s.pipes[3].malformed;
    assert_eq!(m.unknown_type, 1);
    assert_eq!(m.bad_ip, 1);
    assert_eq!(m.count_overrun, 1, "{m:?}");
    // The cut response (IPv4 total length beyond the frame) is counted by
    // the middle pipe of its egress pipe (port 1: pipe 0).
    assert_eq!(s.pipes[0].malformed.bad_ip, 1);
    assert_eq!(s.total.malformed.total(), 4);
    assert_eq!(s.pipes[3].netsparse_packets, 2);
    assert_eq!(s.pipes[3].prs_in, 2);
}

/// NetSparse packets of any property length cross the middle pipes (RDMA
/// verbs' 1 KiB chunks, another kernel's PRs). A switched-off cache stores
/// nothing; a cache that is on holds its mode's length only, so PRs of
/// another length neither hit it (a 64-byte property never answers a
/// 1 KiB read) nor fill it, and are counted as bypassing it.
#[test]
fn any_property_length_crosses_the_middle_pipes_and_only_the_mode_is_cached() {
    let off = NsConfig::from_toml(
        "ports = 16\npipes = 4\nclock_mhz = 1000\n[switch]\nid = 3\n\
         [cache]\nsize = \"disabled\"\nmode = 64\n",
    )
    .unwrap();
    for (cfg, cache_on) in [(off, false), (small_config(), true)] {
        let mut sw = tor_with(cfg);
        let sent = run(
            &mut sw,
            vec![
                // A 64-byte response for idx 7 (the mode): cached if on.
                (ns(100), 12, response_frame(20, 1, 64, &[7]).unwrap()),
                // A 1 KiB read for the same idx and a 1 KiB response.
                (ns(200), 5, read_frame(5, 20, 1024, &[7]).unwrap()),
                (ns(300), 12, response_frame(20, 1, 1024, &[8]).unwrap()),
            ],
        );
        let out = decode(&sent);
        assert_eq!(out.len(), 3, "all three leave");
        let read = out.iter().find(|o| o.pr_type == PrType::Read).unwrap();
        assert_eq!(
            (read.dst, read.port, read.prs[0].0.idx),
            (20, 12, 7),
            "the 1 KiB read goes on to its owner"
        );
        let big = out
            .iter()
            .find(|o| o.pr_type == PrType::Response && o.prs[0].1.len() == 1024)
            .unwrap();
        assert_eq!((big.dst, big.port, big.prs[0].0.idx), (1, 1, 8));
        let s = sw.stats();
        assert_eq!(s.total.malformed.total(), 0);
        assert_eq!(s.total.cache.hits, 0);
        if cache_on {
            assert_eq!(
                s.pipes[3].cache_bypass_packets, 2,
                "the 1 KiB read and response"
            );
            assert_eq!(s.pipes[3].cache.inserts, 1, "only the 64-byte property");
            assert_eq!(sw.cache_peek(3, 7), Some(&property(7, 64)[..]));
            assert_eq!(sw.cache_peek(3, 8), None);
        } else {
            assert_eq!(s.total.cache_bypass_packets, 0);
            assert_eq!(s.total.cache.inserts, 0);
        }
    }
}

#[test]
fn other_ipv4_traffic_passes_through_its_egress_pipe() {
    let mut sw = tor();
    let ip = DeviceAddr::Node(20).ipv4().unwrap();
    let frame = {
        let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 2], ip, 64)
            .udp(1000, 2000);
        let mut v = Vec::new();
        b.write(&mut v, b"not netsparse").unwrap();
        v
    };
    let mut ttl1 = frame.clone();
    ttl1[22] = 1;
    let sent = run(&mut sw, vec![(ns(10), 1, frame.clone()), (ns(20), 1, ttl1)]);
    assert_eq!(sent.len(), 1, "TTL 1 is dropped by egress");
    let (t, port, f) = &sent[0];
    assert_eq!((*t, *port), (ns(10), 12), "no Concatenator delay");
    assert_eq!(f.len(), frame.len());
    assert_eq!(f[22], 63);
    let h = etherparse::Ipv4HeaderSlice::from_slice(&f[14..]).unwrap();
    assert_eq!(
        h.header_checksum(),
        h.to_header().calc_header_checksum(),
        "incremental checksum update"
    );
    assert_eq!(&f[34..], &frame[34..], "payload untouched");
    let s = sw.stats();
    assert_eq!(s.pipes[3].passthrough_packets, 2);
    assert_eq!(s.pipes[3].egress_drops, 1);
    assert_eq!(s.total.prs_in, 0);
    // No route: dropped by ingress.
    let mut none = frame;
    none[30..34].copy_from_slice(&[192, 0, 2, 1]);
    let sent = run(&mut sw, vec![(ns(30), 1, none)]);
    assert!(sent.is_empty());
    assert_eq!(sw.stats().pipes[0].ingress_drops, 1);
}

#[test]
fn control_plane_commands_and_mac_rewrite() {
    let mut sw = tor();
    let text = "\
# port 1 faces node 1
table_add port_macs rewrite_macs 1 => 02:4e:57:00:00:04 02:aa:bb:cc:dd:ee
cache_mode 64
cache_invalidate
";
    let a = commands::apply(&mut sw, text, "cmds.txt").unwrap();
    assert_eq!((a.commands, a.entries), (3, 1));
    let sent = run(
        &mut sw,
        vec![(ns(0), 12, response_frame(20, 1, 64, &[1]).unwrap())],
    );
    assert_eq!(&sent[0].2[0..6], &[2, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
    assert_eq!(sw.cache_peek(3, 1), Some(&property(1, 64)[..]));
    commands::apply(&mut sw, "cache_invalidate\n", "c").unwrap();
    assert_eq!(sw.cache_peek(3, 1), None);
    // cache_mode (which invalidates) and two cache_invalidate.
    assert_eq!(sw.stats().pipes[3].cache.invalidations, 3);
    // A new mode: 64-byte packets are now the wrong length.
    commands::apply(&mut sw, "cache_mode 32\n", "c").unwrap();
    assert_eq!(sw.config().cache.mode.bytes(), 32);
    run(
        &mut sw,
        vec![(ns(1000), 12, response_frame(20, 1, 64, &[1]).unwrap())],
    );
    let s = sw.stats();
    assert_eq!(s.pipes[3].cache_bypass_packets, 1);
    assert_eq!(
        s.pipes[3].cache.inserts, 1,
        "only the first response was stored"
    );
    for (bad, what) in [
        ("cache_mode 48\n", "cache.mode"),
        ("cache_mode x\n", "bad property length"),
        ("cache_invalidate now\n", "usage"),
        ("mirroring_add 1 2\n", "unknown command"),
        ("table_add nope set_port 1 => 1\n", "nope"),
    ] {
        let e = commands::apply(&mut sw, bad, "c").unwrap_err().to_string();
        assert!(e.contains(what), "{bad}: {e}");
    }
    // Runtime JSON entries work too.
    let json = r#"{"table_entries": [{"table": "TorIngress.node_port",
        "match": {"hdr.concat.dst": 60}, "action_name": "TorIngress.set_port",
        "action_params": {"port": 14}}]}"#;
    netsparse_engine::control::runtime_json::apply(&mut sw, json, "r.json").unwrap();
    let sent = run(
        &mut sw,
        vec![(ns(5000), 5, read_frame(5, 60, 32, &[1]).unwrap())],
    );
    assert_eq!(sent[0].1, 14);
}

#[test]
fn the_egress_pipe_sees_originated_packets() {
    // A ToR variant whose egress stamps md.ingress_port into the IPv4 id.
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs/netsparse_tor.p4"),
    )
    .unwrap()
    .replace(
        "        port_macs.apply();",
        "        port_macs.apply();\n        hdr.ipv4.identification = md.ingress_port;",
    );
    let a = p4_ns(&src);
    let mut sw = NsSwitch::new(&a, small_config()).unwrap();
    netsparse_bmv2::nsswitch::testing::install_tor_routes(&mut sw, &rack_routes()).unwrap();
    let (sent, _) = replay(
        &mut sw,
        &[(ns(0), 12, response_frame(20, 1, 64, &[1]).unwrap())],
        100,
    );
    let id = u16::from_be_bytes([sent[0].2[18], sent[0].2[19]]);
    assert_eq!(u32::from(id), ORIGINATED_PORT);
}

/// Compile NetSparse P4 text.
fn p4_ns(src: &str) -> netsparse_externs::artifact::Artifact {
    let mut sources = netsparse_compiler::source::SourceMap::default();
    match netsparse_compiler::compile_source(
        &mut sources,
        "test.p4",
        src,
        &netsparse_compiler::CompileOptions::default(),
    ) {
        Ok(c) => c.artifact,
        Err(d) => panic!(
            "does not compile:\n{}",
            netsparse_compiler::diag::render_all(&d, &sources)
        ),
    }
}

/// A middle pipe with a per-packet part and deliberately inconsistent
/// per-PR results, keyed by the PR's idx.
const BAD_MIDDLE: &str = r#"
#include <core.p4>
#include <netsparse.p4>
header eth_t { bit<48> d; bit<48> s; bit<16> t; }
struct ih_t { eth_t eth; }
struct m_t { bit<1> u; }
parser IP(packet_in p, out ih_t h, inout m_t m, inout ns_switch_md_t md) {
    state start { p.extract(h.eth); transition accept; }
}
control I(inout ih_t h, inout m_t m, inout ns_switch_md_t md) {
    apply { md.egress_spec = 2; }
}
control ID(packet_out p, in ih_t h) { apply { p.emit(h.eth); } }
control Mid(inout ns_pr_h pr, inout ns_pr_md_t md) {
    apply {
        if (md.dst == 99) { md.drop = true; }
        Deconcatenate(pr, md);
        if (pr.idx == 1) { md.pr_type = NS_RESPONSE; }
        else if (pr.idx == 2) { md.pr_type = 7; }
        else if (pr.idx == 3) { md.egress_port = 500; }
        else if (pr.idx == 4) { md.prop_len = 8; }
        else if (pr.idx == 5) { Insert(pr, md); }
        else if (pr.idx == 6) { md.drop = true; }
        else if (pr.idx == 7) { pr.req_id = 77; md.dst = 3; }
        else if (pr.idx == 8) { if (Lookup(pr, md)) { md.dst = 3; } }
        Concatenate(pr, md);
    }
}
parser EP(packet_in p, out ih_t h, inout m_t m, inout ns_switch_md_t md) {
    state start { p.extract(h.eth); transition accept; }
}
control E(inout ih_t h, inout m_t m, inout ns_switch_md_t md) { apply { } }
control ED(packet_out p, in ih_t h) { apply { p.emit(h.eth); } }
NetSparseSwitch(IP(), I(), ID(), Mid(), EP(), E(), ED()) main;
"#;

#[test]
fn program_errors_are_counted_per_pipe() {
    let a = p4_ns(BAD_MIDDLE);
    let mut sw = NsSwitch::new(&a, small_config()).unwrap();
    let idxs: Vec<u64> = (1..=9).collect();
    let sent = run(
        &mut sw,
        vec![
            (ns(0), 9, read_frame(9, 20, 64, &idxs).unwrap()),
            (ns(1), 9, read_frame(9, 99, 64, &[9]).unwrap()),
        ],
    );
    // Reads go to the middle pipe of egress port 2: pipe 0.
    let s = sw.stats();
    let p = &s.pipes[0];
    let e = p.program_errors;
    assert_eq!(e.response_without_payload, 1, "{e:?}");
    assert_eq!(e.bad_type, 1);
    assert_eq!(e.bad_port, 1);
    assert_eq!(e.prop_len_changed, 1);
    assert_eq!(e.insert_without_payload, 1);
    assert_eq!(p.prs_dropped, 2, "idx 6 and the dropped packet's PR");
    assert_eq!(p.packets_dropped, 1);
    assert_eq!(p.cache.lookups, 1);
    // idx 5 (insert failed but the read goes on), 7 (re-encoded), 8 (miss), 9.
    let out = decode(&sent);
    let mut got: Vec<(u32, u64, u32)> = out
        .iter()
        .flat_map(|o| o.prs.iter().map(move |p| (o.dst, p.0.idx, p.0.req_id)))
        .collect();
    got.sort_unstable();
    assert_eq!(got, vec![(3, 7, 77), (20, 5, 4), (20, 8, 7), (20, 9, 8)]);
}

#[test]
fn per_pr_copies_are_elided_only_for_the_plain_shape() {
    // netsparse_tor.p4 applies one per-PR control: its copy-in/copy-out
    // is elided (the golden and property tests check the results).
    assert!(tor().per_pr_copies_elided());
    // A middle control that works on the package slots itself: nothing to
    // elide.
    let sw = NsSwitch::new(&p4_ns(BAD_MIDDLE), small_config()).unwrap();
    assert!(!sw.per_pr_copies_elided());
}

#[test]
fn architectures_are_checked() {
    let tor = tor_artifact();
    let e = Switch::new(tor, SwitchConfig::default()).unwrap_err();
    assert!(e.to_string().contains("NsSwitch"), "{e}");
    let spine = compile("programs/netsparse_spine.p4");
    let e = NsSwitch::new(&spine, small_config()).unwrap_err();
    assert!(e.to_string().contains("NetSparseSwitch"), "{e}");
    let bad = NsConfig {
        pipes: 3,
        ..small_config()
    };
    let e = NsSwitch::new(tor, bad).unwrap_err();
    assert!(e.to_string().contains("`pipes`"), "{e}");
}

#[test]
fn the_spine_forwards_by_destination_node() {
    let spine = compile("programs/netsparse_spine.p4");
    let mut sw = Switch::new(&spine, SwitchConfig::default()).unwrap();
    sw.add_entry(
        "node_port",
        &[KeyMatch::Exact { value: 20 }],
        "set_port",
        &[3],
        None,
    )
    .unwrap();
    let mut out = Outputs::new();
    let f = read_frame(5, 20, 64, &[1, 2, 3]).unwrap();
    sw.on_packet(ns(0), 1, &f, &mut out);
    let got: Vec<(u32, Vec<u8>)> = out.iter().map(|(p, b)| (p, b.to_vec())).collect();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, 3);
    let mut d = Deconcatenator::default();
    let x = d
        .frame(&got[0].1)
        .expect("valid NetSparse frame, checksum recomputed");
    assert_eq!(x.frame.unwrap().ttl, 63);
    assert_eq!(x.prs.count(), 3);
    // Unknown destination: dropped.
    out.clear();
    sw.on_packet(ns(1), 1, &read_frame(5, 21, 64, &[1]).unwrap(), &mut out);
    assert!(out.is_empty());
}

#[test]
fn frames_on_missing_ports_and_short_frames_are_counted() {
    let mut sw = tor();
    let mut out = Outputs::new();
    sw.on_packet(ns(0), 16, &read_frame(5, 20, 64, &[1]).unwrap(), &mut out);
    sw.on_packet(ns(0), 2, &[0u8; 10], &mut out);
    assert!(out.is_empty());
    let s = sw.stats();
    assert_eq!(s.bad_port, 1);
    assert_eq!(s.pipes[0].rx_malformed, 1);
    // A NetSparse frame from a node id beyond the convention cannot be
    // answered: the read that would hit is dropped as unaddressable.
    let f = pr_frame(
        DeviceAddr::Node(5),
        PrType::Read,
        20,
        64,
        &[(
            PrRepr {
                src: u32::MAX,
                tid: 0,
                idx: 1,
                req_id: 0,
            },
            &[],
        )],
        0,
    )
    .unwrap();
    run(
        &mut sw,
        vec![
            (ns(100), 12, response_frame(20, 1, 64, &[1]).unwrap()),
            (ns(1000), 5, f),
        ],
    );
    assert_eq!(sw.stats().pipes[3].program_errors.unaddressable, 1);
}

#[test]
fn flush_all_forces_every_queue_out() {
    let mut sw = tor();
    let mut out = Outputs::new();
    sw.on_packet(ns(0), 5, &read_frame(5, 20, 64, &[1]).unwrap(), &mut out);
    sw.on_packet(
        ns(1),
        12,
        &response_frame(20, 1, 64, &[2]).unwrap(),
        &mut out,
    );
    assert_eq!(sw.pending_prs(), 2);
    sw.flush_all(ns(2), &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(sw.pending_prs(), 0);
    assert_eq!(sw.next_deadline(), None);
    let s = sw.stats();
    assert_eq!(s.total.flushes.forced, 2);
    assert!(s.summary().contains("total"));
    sw.reset_stats();
    let s = sw.stats();
    assert_eq!((s.total.flushes.forced, s.total.prs_in), (0, 0));
}

#[test]
fn a_middle_pipe_accepts_at_most_one_pr_per_pr_cycles() {
    // Four 40-PR reads for node 20 arrive together on ports 0..3; all go to
    // the middle pipe of uplink 12 (pipe 3), a miss each.
    let inputs = |_| {
        (0..4u32)
            .map(|p| {
                let idxs: Vec<u64> = (0..40).map(|i| u64::from(p) * 1000 + i).collect();
                (ns(1000), p, read_frame(p, 20, 64, &idxs).unwrap())
            })
            .collect::<Vec<_>>()
    };
    let shape = |pr_cycles| {
        let mut c = small_config();
        c.pr_cycles = pr_cycles;
        c
    };
    // No limit: every PR enters at 1000 ns and two full queues of 80 PRs
    // (an MTU's worth) leave at once.
    let mut sw = tor_with(shape(0));
    let got: Vec<(Time, usize)> = decode(&run(&mut sw, inputs(())))
        .iter()
        .map(|o| (o.t, o.prs.len()))
        .collect();
    assert_eq!(got, vec![(ns(1000 + LAT), 80), (ns(1000 + LAT), 80)]);
    assert_eq!(sw.stats().pipes[3].busy_ps, 0);
    // Two cycles (2 ns) per PR: PR i enters at 1000 + 2i ns, so each queue
    // expires (DelayCycles after its first PR) before it fills.
    let mut sw = tor_with(shape(2));
    let out = decode(&run(&mut sw, inputs(())));
    let got: Vec<(Time, usize)> = out.iter().map(|o| (o.t, o.prs.len())).collect();
    assert_eq!(
        got,
        vec![
            (ns(1000 + DELAY + LAT), 63),
            (ns(1126 + DELAY + LAT), 63),
            (ns(1252 + DELAY + LAT), 34)
        ]
    );
    // Every PR left after it entered: by time t at most (t - 1000 - LAT) / 2 + 1.
    let mut left = 0;
    for o in &out {
        left += o.prs.len() as u64;
        let bound = (o.t.as_ps() - ns(1000 + LAT).as_ps()) / 2_000 + 1;
        assert!(left <= bound, "{left} PRs out by {} (bound {bound})", o.t);
    }
    let p = &sw.stats().pipes[3];
    assert_eq!(p.busy_ps, 160 * 2_000);
    // The 2nd, 3rd and 4th packets waited 80, 160 and 240 ns.
    assert_eq!(p.wait_ps, (80 + 160 + 240) * 1_000);
    assert_eq!(p.max_wait_ps, 240_000);
}
