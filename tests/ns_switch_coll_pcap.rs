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

use netsparse_externs::wire::Frame;
use netsparse_nic::coll::SUM;
use netsparse_nic::testing::coll::{Pr, BLOCK_BYTES as B, RESULT};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::TsResolution;
use serde_json::Value;

/// The node the switch aggregates for.
const AGG: u32 = 2;
/// Bound ports: worker 0, worker 1, the aggregator node's port.
const PORTS: [(u32, &str); 3] = [(1, "p1"), (5, "p5"), (9, "p9")];
/// Capture start: 2024-01-01T00:00:00Z.
const EPOCH: u64 = 1_704_067_200;

/// Frames as (port stem, ns after the capture start, frame).
type Recs = Vec<(&'static str, u64, Vec<u8>)>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden() -> PathBuf {
    root().join("tests/pcap/omniccl_switch")
}

/// The shared stimulus (`netsparse_nic::testing::coll`): worker 1's
/// frames on port 5, everything else (worker 0 and the unknown node 7) on
/// port 1.
fn stimulus() -> Recs {
    netsparse_nic::testing::coll::stimulus(AGG)
        .into_iter()
        .map(|(t, src, f)| (if src == 1 { "p5" } else { "p1" }, t, f))
        .collect()
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
    // 40 and block 6 = 60 (worker 0 only).
    let want = RESULT.to_vec();
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
