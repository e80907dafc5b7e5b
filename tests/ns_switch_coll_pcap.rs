//! Golden pcap test of the OmNICCL aggregator in a NetSparse switch's
//! middle pipes: `netsparse switch programs/omniccl_switch.p4 --config
//! tests/pcap/omniccl_switch/switch.toml --entries
//! tests/pcap/omniccl_switch/commands.txt --use-files DIR` on two workers'
//! votes, blocks and DONE markers for two rounds (worker 0 on port 1,
//! worker 1 on port 5; the switch aggregates for node 2 with depth 2 and
//! 16-byte blocks), plus a vote from an unknown worker, a vote for a stream
//! the aggregator does not run and a block of the wrong size. The same
//! stimulus as the NIC aggregator's goldens (`nic_firmware/tests/coll_pcap.rs`),
//! so the two placements of the aggregator can be compared frame by frame.
//!
//! The inputs and each port's output are committed in
//! `tests/pcap/omniccl_switch/` and compared byte for byte; the PRs each
//! worker receives and the collective's counters in `--stats-json` are
//! checked too. To regenerate after an intended change:
//!
//! ```text
//! NETSPARSE_BLESS=1 cargo test --test ns_switch_coll_pcap
//! ```

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use netsparse_externs::wire::{Frame, PrType};
use netsparse_nic::coll::{coll_pr, round_id, PrSender, BLOCK, DONE, NEXT, NONE, SUM, VOTE};
use netsparse_nic::{Outputs, Time};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::TsResolution;
use serde_json::Value;

/// Block bytes.
const B: u32 = 16;
/// The node the switch aggregates for.
const AGG: u32 = 2;
/// Bound ports: worker 0, worker 1, the aggregator node's port.
const PORTS: [(u32, &str); 3] = [(1, "p1"), (5, "p5"), (9, "p9")];
/// Capture start: 2024-01-01T00:00:00Z.
const EPOCH: u64 = 1_704_067_200;

/// A PR as (kind, round, idx, first payload word).
type Pr = (u16, u32, u64, Option<u32>);

/// Frames as (port stem, ns after the capture start, frame).
type Recs = Vec<(&'static str, u64, Vec<u8>)>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden() -> PathBuf {
    root().join("tests/pcap/omniccl_switch")
}

fn block(v: u32) -> Vec<u8> {
    (0..B / 4).flat_map(|k| (v + k).to_le_bytes()).collect()
}

/// The one frame `tx` sends.
fn one_frame(mut tx: PrSender) -> Vec<u8> {
    tx.flush(Time::ZERO);
    let mut out = Outputs::new();
    tx.emit(Time::from_us(1), &mut out);
    let frames: Vec<Vec<u8>> = out.iter().map(|(_, f)| f.to_vec()).collect();
    assert_eq!(frames.len(), 1);
    frames.into_iter().next().unwrap()
}

/// One frame from worker `src` to the aggregator with `prs`.
fn frame(src: u32, prs: &[Pr]) -> Vec<u8> {
    let mut tx = PrSender::new(src, 400, 1500).unwrap();
    for &(kind, round, idx, value) in prs {
        let pr = coll_pr(src, kind, round, idx);
        match value {
            Some(v) => tx.push(Time::ZERO, PrType::Response, AGG, B, &pr, &block(v)),
            None => tx.push(Time::ZERO, PrType::Read, AGG, B, &pr, &[]),
        }
    }
    one_frame(tx)
}

/// (port stem, ns after the capture start, frame). Worker 0 has blocks 1,
/// 4 and 6 nonzero, worker 1 blocks 1 and 2: round 0 chooses {1, 2},
/// round 1 {4, 6}, round 2 is empty (the end).
fn stimulus() -> Recs {
    let v = |src, a, b| frame(src, &[(VOTE, 0, a, None), (VOTE, 0, b, None)]);
    let wrong_size = {
        let mut tx = PrSender::new(1, 400, 1500).unwrap();
        let pr = coll_pr(1, BLOCK, 0, 2);
        tx.push(Time::ZERO, PrType::Response, AGG, 8, &pr, &[0; 8]);
        one_frame(tx)
    };
    let end = [(VOTE, 2, NONE, None), (VOTE, 2, NONE, None)];
    vec![
        ("p1", 100, v(0, 1, 4)),
        ("p5", 110, v(1, 1, 2)),
        // An unknown worker's vote, and a vote for a stream the aggregator
        // does not run: refused and counted.
        ("p1", 120, frame(7, &[(VOTE, 0, 3, None)])),
        ("p1", 130, frame(0, &[(VOTE, round_id(5, 0), 3, None)])),
        // Round 0: worker 0 sends block 1, worker 1 blocks 1 and 2.
        ("p1", 500, frame(0, &[(BLOCK, 0, 1, Some(10))])),
        (
            "p1",
            505,
            frame(
                0,
                &[(DONE, 0, 1, None), (VOTE, 1, 4, None), (VOTE, 1, 6, None)],
            ),
        ),
        (
            "p5",
            510,
            frame(1, &[(BLOCK, 0, 1, Some(20)), (BLOCK, 0, 2, Some(30))]),
        ),
        // A block of the wrong size: refused and counted.
        ("p5", 512, wrong_size),
        (
            "p5",
            515,
            frame(
                1,
                &[
                    (DONE, 0, 2, None),
                    (VOTE, 1, NONE, None),
                    (VOTE, 1, NONE, None),
                ],
            ),
        ),
        // Round 1: worker 0 sends 4 and 6; worker 1 nothing.
        (
            "p1",
            900,
            frame(0, &[(BLOCK, 1, 4, Some(40)), (BLOCK, 1, 6, Some(60))]),
        ),
        ("p1", 905, {
            let mut prs = vec![(DONE, 1, 2, None)];
            prs.extend(end);
            frame(0, &prs)
        }),
        ("p5", 910, {
            let mut prs = vec![(DONE, 1, 0, None)];
            prs.extend(end);
            frame(1, &prs)
        }),
    ]
}

fn write_inputs(dir: &Path, inputs: &Recs) {
    for (_, stem) in PORTS {
        let recs: Vec<_> = inputs.iter().filter(|r| r.0 == stem).collect();
        if recs.is_empty() {
            continue;
        }
        let header = PcapHeader {
            ts_resolution: TsResolution::NanoSecond,
            ..PcapHeader::default()
        };
        let f = File::create(dir.join(format!("{stem}_in.pcap"))).unwrap();
        let mut w = PcapWriter::with_header(f, header).unwrap();
        for (_, ns, frame) in recs {
            let ts = Duration::from_secs(EPOCH) + Duration::from_nanos(*ns);
            w.write_packet(&PcapPacket::new(ts, frame.len() as u32, frame))
                .unwrap();
        }
    }
}

/// Each port's output: (port stem, ns after the capture start, frame).
fn read_outputs(dir: &Path) -> Recs {
    let mut recs = Vec::new();
    for (_, stem) in PORTS {
        let f = File::open(dir.join(format!("{stem}_out.pcap"))).unwrap();
        let mut r = PcapReader::new(f).unwrap();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            let ns = (p.timestamp - Duration::from_secs(EPOCH)).as_nanos() as u64;
            recs.push((stem, ns, p.data.into_owned()));
        }
    }
    recs.sort_by_key(|r| (r.1, r.0));
    recs
}

/// Run the switch on the stimulus; compare (or bless) the pcaps; return
/// the outputs and `--stats-json`.
fn run() -> (Recs, Value) {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path(), &stimulus());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netsparse"));
    cmd.arg("switch")
        .arg(root().join("programs/omniccl_switch.p4"))
        .arg("--config")
        .arg(golden().join("switch.toml"))
        .arg("--entries")
        .arg(golden().join("commands.txt"))
        .arg("--use-files")
        .arg(dir.path())
        .arg("--stats-json")
        .arg(dir.path().join("stats.json"));
    for (port, stem) in PORTS {
        cmd.arg("-i").arg(format!("{port}@{stem}"));
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "switch failed:\n{stderr}");

    let bless = std::env::var_os("NETSPARSE_BLESS").is_some();
    for (_, stem) in PORTS {
        for file in [format!("{stem}_in.pcap"), format!("{stem}_out.pcap")] {
            let Ok(got) = fs::read(dir.path().join(&file)) else {
                continue;
            };
            let path = golden().join(&file);
            if bless {
                fs::write(&path, &got).unwrap();
            }
            let want = fs::read(&path).unwrap_or_else(|e| {
                panic!("{}: {e} (bless with NETSPARSE_BLESS=1)", path.display())
            });
            assert!(
                got == want,
                "{file} differs from the golden ({} bytes vs {}); bless with NETSPARSE_BLESS=1 if intended",
                got.len(),
                want.len()
            );
        }
    }
    let stats: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("stats.json")).unwrap()).unwrap();
    (read_outputs(dir.path()), stats)
}

fn count(v: &Value, path: &[&str]) -> u64 {
    path.iter()
        .fold(v, |v, k| &v[*k])
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {path:?} in {v}"))
}

#[test]
fn the_switch_aggregator_matches_its_goldens_and_sums_exactly() {
    let (outputs, stats) = run();
    // Per worker port: (kind, round, idx, first word of the payload), in
    // the order they left.
    let mut got: Vec<Vec<Pr>> = vec![Vec::new(); 2];
    for (stem, _, f) in &outputs {
        assert_ne!(*stem, "p9", "nothing may reach the aggregator node's port");
        let fr = Frame::parse(f).expect("a NetSparse frame");
        let w = fr.concat.dst as usize;
        assert_eq!(*stem, ["p1", "p5"][w], "worker {w}'s PRs leave on its port");
        for p in fr.prs() {
            let pl = p.payload;
            let first = (!pl.is_empty()).then(|| u32::from_le_bytes(pl[..4].try_into().unwrap()));
            got[w].push((p.tid, p.req_id, p.idx, first));
            assert_eq!(p.src, AGG, "the switch answers as node {AGG}");
            if p.tid == SUM {
                assert_eq!(pl.len(), B as usize, "a sum is one whole block");
            }
        }
    }
    // The sums: block 1 = 10 + 20, block 2 = 30 (worker 1 only), block 4 =
    // 40 and block 6 = 60 (worker 0 only); word k of each is the first
    // word's sum plus k per worker that sent it.
    let want = vec![
        (NEXT, 0, 1, None),
        (NEXT, 0, 2, None),
        (SUM, 0, 1, Some(30)),
        (SUM, 0, 2, Some(30)),
        (NEXT, 1, 4, None),
        (NEXT, 1, 6, None),
        (SUM, 1, 4, Some(40)),
        (SUM, 1, 6, Some(60)),
        (NEXT, 2, NONE, None),
        (NEXT, 2, NONE, None),
    ];
    assert_eq!(got[0], want, "worker 0");
    assert_eq!(got[1], want, "worker 1");
    for (_, _, f) in &outputs {
        let fr = Frame::parse(f).unwrap();
        for p in fr.prs().filter(|p| p.tid == SUM && p.idx == 1) {
            let words: Vec<u32> = p
                .payload
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            assert_eq!(words, [30, 32, 34, 36], "block 1 summed word by word");
        }
    }
    let c = &stats["collective"];
    assert_eq!(count(c, &["unit", "blocks"]), 5, "{c}");
    assert_eq!(count(c, &["unit", "dones"]), 4, "{c}");
    assert_eq!(count(c, &["unit", "rounds"]), 2, "{c}");
    assert_eq!(count(c, &["unit", "refused", "unknown_worker"]), 1, "{c}");
    assert_eq!(count(c, &["unit", "refused", "wrong_round"]), 1, "{c}");
    assert_eq!(count(c, &["unit", "refused", "block_size"]), 1, "{c}");
    assert_eq!(count(c, &["unit", "program_errors"]), 0, "{c}");
    assert_eq!(count(c, &["prs_sent"]), 20, "{c}");
    assert_eq!(count(c, &["prs_rejected"]), 0, "{c}");
}
