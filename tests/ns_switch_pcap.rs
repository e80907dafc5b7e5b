//! Golden pcap tests of the NetSparse switch: `netsparse switch
//! programs/netsparse_tor.p4 --config tests/pcap/ns_tor.toml --entries
//! tests/pcap/ns_tor-commands.txt --use-files DIR` on hand-built PR packets
//! (16 ports in 4 pipes; nodes 1, 5 and 6 on ports 1, 5 and 6, remote node 20
//! behind uplink 12). One scenario per test; each output pcap is compared
//! byte for byte with `tests/pcap/ns_tor/<scenario>/<port>_out.pcap`, and the
//! frames, their timestamps and the per-pipe counters of `--stats-json` are
//! checked.
//!
//! Inputs and outputs are nanosecond pcaps, so timestamps are exact (the
//! test shape's clock is 1 GHz: cache latency 16 ns, DelayCycles 125 ns).
//! To regenerate the goldens after an intended change:
//!
//! ```text
//! NETSPARSE_BLESS=1 cargo test --test ns_switch_pcap
//! ```
//!
//! and review the diff of `tests/pcap/ns_tor/`.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use netsparse_bmv2::nsswitch::testing::{property, read_frame, response_frame};
use netsparse_externs::deconcat::Deconcatenator;
use netsparse_externs::wire::{DeviceAddr, PrRepr, PrType};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::TsResolution;
use serde_json::Value;

/// Bound ports: (port, file stem).
const PORTS: [(u32, &str); 4] = [(1, "p1"), (5, "p5"), (6, "p6"), (12, "p12")];
const LAT: u64 = 16;
const DELAY: u64 = 125;
/// Capture start: 2024-01-01T00:00:00Z.
const EPOCH: u64 = 1_704_067_200;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Input records: (port stem, ns after the capture start, frame).
type Inputs = Vec<(&'static str, u64, Vec<u8>)>;

/// An output record: (port stem, ns after the capture start, frame).
#[derive(Debug)]
struct Rec {
    port: &'static str,
    ns: u64,
    frame: Vec<u8>,
}

fn write_inputs(dir: &Path, inputs: &Inputs) {
    for (stem, _) in PORTS.iter().map(|(p, s)| (s, p)) {
        let recs: Vec<&(&str, u64, Vec<u8>)> = inputs.iter().filter(|r| r.0 == *stem).collect();
        if recs.is_empty() {
            continue;
        }
        let header = PcapHeader {
            ts_resolution: TsResolution::NanoSecond,
            ..PcapHeader::default()
        };
        let file = File::create(dir.join(format!("{stem}_in.pcap"))).unwrap();
        let mut w = PcapWriter::with_header(file, header).unwrap();
        for (_, ns, f) in recs {
            let ts = Duration::from_secs(EPOCH) + Duration::from_nanos(*ns);
            w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
                .unwrap();
        }
    }
}

fn read_outputs(dir: &Path) -> Vec<Rec> {
    let mut out = Vec::new();
    for (_, stem) in PORTS {
        let mut r =
            PcapReader::new(File::open(dir.join(format!("{stem}_out.pcap"))).unwrap()).unwrap();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            let ns = (p.timestamp - Duration::from_secs(EPOCH)).as_nanos() as u64;
            out.push(Rec {
                port: stem,
                ns,
                frame: p.data.into_owned(),
            });
        }
    }
    out.sort_by_key(|r| (r.ns, r.port));
    out
}

/// Run the scenario through the CLI, compare with (or bless) the goldens,
/// and return the outputs and the stats JSON.
fn scenario(name: &str, inputs: Inputs, extra: &[&str]) -> (Vec<Rec>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path(), &inputs);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netsparse"));
    cmd.arg("switch")
        .arg(root().join("programs/netsparse_tor.p4"))
        .arg("--config")
        .arg(root().join("tests/pcap/ns_tor.toml"))
        .arg("--entries")
        .arg(root().join("tests/pcap/ns_tor-commands.txt"))
        .arg("--use-files")
        .arg(dir.path())
        .arg("--stats-json")
        .arg(dir.path().join("stats.json"))
        .args(extra);
    for (port, stem) in PORTS {
        cmd.arg("-i").arg(format!("{port}@{stem}"));
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "switch failed:\n{stderr}");

    let golden = root().join("tests/pcap/ns_tor").join(name);
    let bless = std::env::var_os("NETSPARSE_BLESS").is_some();
    if bless {
        fs::create_dir_all(&golden).unwrap();
    }
    // The inputs are committed beside the goldens (the README's tour replays them).
    for (_, stem) in PORTS {
        let file = format!("{stem}_in.pcap");
        let Ok(got) = fs::read(dir.path().join(&file)) else {
            continue;
        };
        if bless {
            fs::write(golden.join(&file), &got).unwrap();
        } else {
            assert!(
                fs::read(golden.join(&file)).ok().as_deref() == Some(&got[..]),
                "{name}/{file} differs from the generated input; bless with NETSPARSE_BLESS=1"
            );
        }
    }
    for (_, stem) in PORTS {
        let file = format!("{stem}_out.pcap");
        let got = fs::read(dir.path().join(&file)).unwrap();
        if bless {
            fs::write(golden.join(&file), &got).unwrap();
        } else {
            let want = fs::read(golden.join(&file))
                .unwrap_or_else(|e| panic!("{name}/{file}: {e} (bless with NETSPARSE_BLESS=1)"));
            assert!(
                got == want,
                "{name}/{file} differs from the golden ({} bytes vs {}); bless with NETSPARSE_BLESS=1 if intended",
                got.len(),
                want.len()
            );
        }
    }
    let stats: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("stats.json")).unwrap()).unwrap();
    (read_outputs(dir.path()), stats, stderr)
}

/// A decoded NetSparse output frame.
#[derive(Debug)]
struct Ns {
    pr_type: PrType,
    dst: u32,
    prs: Vec<(PrRepr, Vec<u8>)>,
    ip_src: [u8; 4],
    ip_dst: [u8; 4],
    eth_src: [u8; 6],
    eth_dst: [u8; 6],
}

fn ns(frame: &[u8]) -> Ns {
    let mut d = Deconcatenator::default();
    let x = d.frame(frame).expect("a valid NetSparse frame");
    let f = x.frame.expect("frame");
    Ns {
        pr_type: x.concat.pr_type,
        dst: x.concat.dst,
        prs: x.prs.map(|v| (v.repr(), v.payload.to_vec())).collect(),
        ip_src: f.ip_src,
        ip_dst: f.ip_dst,
        eth_src: f.eth_src,
        eth_dst: f.eth_dst,
    }
}

fn pipe(stats: &Value, i: usize) -> &Value {
    &stats["switch"]["pipes"][i]
}

fn count(v: &Value, path: &[&str]) -> u64 {
    let mut v = v;
    for p in path {
        v = &v[*p];
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not a number: {v}"))
}

fn idxs(n: &Ns) -> Vec<u64> {
    n.prs.iter().map(|p| p.0.idx).collect()
}

#[test]
fn a_response_inserts_into_the_cache_of_its_ingress_pipe() {
    let (out, stats, _) = scenario(
        "a_insert",
        vec![("p12", 1000, response_frame(20, 1, 64, &[7, 8]).unwrap())],
        &[],
    );
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].port, out[0].ns), ("p1", 1000 + LAT + DELAY));
    let n = ns(&out[0].frame);
    assert_eq!(
        (n.pr_type, n.dst, idxs(&n)),
        (PrType::Response, 1, vec![7, 8])
    );
    assert_eq!(n.prs[0].1, property(7, 64));
    assert_eq!(n.ip_src, [10, 128, 0, 4]);
    assert_eq!(n.eth_src, DeviceAddr::Switch(3).mac().unwrap());
    for i in 0..4 {
        let inserts = count(pipe(&stats, i), &["cache", "inserts"]);
        assert_eq!(inserts, if i == 3 { 2 } else { 0 }, "pipe {i}");
    }
    assert_eq!(count(pipe(&stats, 3), &["prs_in"]), 2);
    assert_eq!(count(pipe(&stats, 0), &["packets_out"]), 1);
}

#[test]
fn a_read_for_a_cached_idx_is_answered_by_the_switch() {
    let (out, stats, _) = scenario(
        "b_hit",
        vec![
            ("p12", 1000, response_frame(20, 1, 64, &[7]).unwrap()),
            ("p5", 5000, read_frame(5, 20, 64, &[7]).unwrap()),
        ],
        &[],
    );
    assert_eq!(out.len(), 2);
    let r = &out[1];
    assert_eq!(
        (r.port, r.ns),
        ("p5", 5000 + LAT + DELAY),
        "out of its arrival port"
    );
    let n = ns(&r.frame);
    assert_eq!((n.pr_type, n.dst), (PrType::Response, 5));
    assert_eq!(n.ip_dst, DeviceAddr::Node(5).ipv4().unwrap());
    assert_eq!(n.eth_dst, DeviceAddr::Node(5).mac().unwrap());
    assert_eq!(
        n.prs,
        vec![(
            PrRepr {
                src: 5,
                tid: 0,
                idx: 7,
                req_id: 0
            },
            property(7, 64)
        )]
    );
    assert_eq!(count(pipe(&stats, 3), &["cache", "hits"]), 1);
    assert_eq!(count(&stats["switch"]["total"], &["cache", "hits"]), 1);
    assert_eq!(count(pipe(&stats, 3), &["prs_out"]), 2);
}

#[test]
fn a_read_that_misses_continues_to_its_destination() {
    let (out, stats, _) = scenario(
        "c_miss",
        vec![("p5", 2000, read_frame(5, 20, 64, &[9, 10]).unwrap())],
        &[],
    );
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].port, out[0].ns), ("p12", 2000 + LAT + DELAY));
    let n = ns(&out[0].frame);
    assert_eq!(
        (n.pr_type, n.dst, idxs(&n)),
        (PrType::Read, 20, vec![9, 10])
    );
    assert_eq!(n.ip_dst, DeviceAddr::Node(20).ipv4().unwrap());
    // The uplink's MACs come from table port_macs.
    assert_eq!(n.eth_dst, [0x02, 0x4e, 0x57, 0, 0, 0x64]);
    assert_eq!(count(pipe(&stats, 3), &["cache", "misses"]), 2);
}

#[test]
fn prs_for_one_destination_within_delay_cycles_leave_in_one_packet() {
    let (out, stats, _) = scenario(
        "d_concat",
        vec![
            ("p5", 1000, read_frame(5, 20, 64, &[1]).unwrap()),
            ("p6", 1060, read_frame(6, 20, 64, &[2, 3]).unwrap()),
            ("p5", 1124, read_frame(5, 20, 64, &[4]).unwrap()),
            // After the first queue left (1141 ns): a packet of its own.
            ("p6", 1142, read_frame(6, 20, 64, &[5]).unwrap()),
        ],
        &[],
    );
    let got: Vec<(&str, u64, Vec<u64>, Vec<u32>)> = out
        .iter()
        .map(|r| {
            let n = ns(&r.frame);
            let srcs = n.prs.iter().map(|p| p.0.src).collect();
            (r.port, r.ns, idxs(&n), srcs)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "p12",
                1000 + LAT + DELAY,
                vec![1, 2, 3, 4],
                vec![5, 6, 6, 5]
            ),
            ("p12", 1142 + LAT + DELAY, vec![5], vec![6]),
        ]
    );
    assert_eq!(count(pipe(&stats, 3), &["flushes", "expired"]), 2);
    let ppp = pipe(&stats, 3)["prs_per_packet"].as_f64().unwrap();
    assert!((ppp - 2.5).abs() < 1e-9);
}

#[test]
fn a_queue_that_reaches_the_mtu_leaves_at_once() {
    let first: Vec<u64> = (0..79).collect();
    let (out, stats, _) = scenario(
        "e_mtu",
        vec![
            ("p5", 1000, read_frame(5, 20, 64, &first).unwrap()),
            ("p6", 1030, read_frame(6, 20, 64, &[79, 80]).unwrap()),
        ],
        &[],
    );
    assert_eq!(out.len(), 2);
    assert_eq!(
        out[0].ns,
        1030 + LAT,
        "full at 80 reads: no DelayCycles wait"
    );
    assert_eq!(ns(&out[0].frame).prs.len(), 80);
    assert_eq!(
        out[0].frame.len(),
        14 + 1494,
        "80 × 18 + 54 bytes, within the MTU"
    );
    assert_eq!(out[1].ns, 1030 + LAT + DELAY);
    assert_eq!(idxs(&ns(&out[1].frame)), vec![80]);
    assert_eq!(count(pipe(&stats, 3), &["flushes", "full"]), 1);
    assert_eq!(count(pipe(&stats, 3), &["flushes", "expired"]), 1);
}

#[test]
fn a_lone_pr_leaves_exactly_when_its_deadline_passes() {
    let t0 = 123_456_789;
    let (out, stats, stderr) = scenario(
        "f_deadline",
        vec![("p6", t0, read_frame(6, 20, 64, &[42]).unwrap())],
        &["--log-console"],
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ns, t0 + LAT + DELAY);
    assert_eq!(count(pipe(&stats, 3), &["flushes", "expired"]), 1);
    assert!(
        stderr.contains("crossbar 1: Read"),
        "trace on stderr:\n{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "no ANSI escapes when stderr is not a terminal"
    );
}

#[test]
fn malformed_packets_are_counted_and_dropped_while_the_rest_flows() {
    // num_prs + 1: the PR count overruns the packet.
    let mut overrun = read_frame(5, 20, 64, &[1, 2]).unwrap();
    overrun[54 + 13] += 1;
    // prop_len 32 while the cache is in 64-byte mode (not malformed).
    let other_len = read_frame(5, 20, 32, &[3]).unwrap();
    // PR type 3.
    let mut unknown = read_frame(5, 20, 64, &[4]).unwrap();
    unknown[54 + 1] = 3;
    let plain = {
        let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 6], [2, 0, 0, 0, 0, 1])
            .ipv4(
                DeviceAddr::Node(6).ipv4().unwrap(),
                DeviceAddr::Node(20).ipv4().unwrap(),
                64,
            )
            .udp(5000, 6000);
        let mut v = Vec::new();
        b.write(&mut v, b"plain IPv4").unwrap();
        v
    };
    let (out, stats, stderr) = scenario(
        "g_malformed",
        vec![
            ("p5", 100, overrun),
            ("p6", 110, read_frame(6, 20, 64, &[9]).unwrap()),
            ("p5", 120, other_len),
            ("p6", 130, plain.clone()),
            ("p5", 140, unknown),
            ("p12", 150, response_frame(20, 1, 64, &[11]).unwrap()),
        ],
        &[],
    );
    let got: Vec<(&str, u64)> = out.iter().map(|r| (r.port, r.ns)).collect();
    // The 32-byte read is not malformed: it passes the pipe without the
    // cache, and its arrival flushes the queue that holds the 64-byte read
    // to the same node (one property length per packet).
    assert_eq!(
        got,
        vec![
            ("p12", 130),
            ("p12", 120 + LAT),
            ("p12", 120 + LAT + DELAY),
            ("p1", 150 + LAT + DELAY)
        ]
    );
    assert_eq!(out[0].frame.len(), plain.len());
    assert_eq!(idxs(&ns(&out[1].frame)), vec![9]);
    assert_eq!(idxs(&ns(&out[2].frame)), vec![3]);
    let m = &pipe(&stats, 3)["malformed"];
    assert_eq!(count(m, &["count_overrun"]), 1);
    assert_eq!(count(pipe(&stats, 3), &["cache_bypass_packets"]), 1);
    assert_eq!(count(pipe(&stats, 3), &["flushes", "prop_len_change"]), 1);
    assert_eq!(count(m, &["unknown_type"]), 1);
    assert_eq!(count(pipe(&stats, 3), &["passthrough_packets"]), 1);
    for what in ["overruns the packet", "unknown PR type"] {
        assert!(stderr.contains(what), "a log line for `{what}`:\n{stderr}");
    }
    assert!(stderr.contains("malf"), "the summary table:\n{stderr}");
}
