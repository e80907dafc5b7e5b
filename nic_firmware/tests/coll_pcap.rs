//! Golden files of the OmNICCL aggregator (`programs/omniccl_agg.p4` with
//! the externs of `<collective.p4>`): a fixed stimulus (`in.pcap`: two
//! workers' votes, blocks and DONE markers for two rounds, plus a vote from
//! an unknown worker, a vote for an unknown stream and a block of the wrong
//! size) and what the aggregator
//! sends (`out.pcap`: the chosen indices and the sums, to both workers), in
//! `tests/pcap/omniccl_agg/`. Timestamps are simulated nanoseconds.
//!
//! To regenerate after an intended change:
//!
//! ```text
//! NETSPARSE_BLESS=1 cargo test -p netsparse-nic --test coll_pcap
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::wire::{Frame, PrType};
use netsparse_nic::coll::{
    coll_pr, round_id, AggConfig, Aggregator, PrSender, BLOCK, DONE, NEXT, NONE, SUM, VOTE,
};
use netsparse_nic::{Datapath, Outputs, Time};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{Endianness, TsResolution};

const B: u32 = 16;

/// A PR as (kind, round, idx, first payload word).
type Pr = (u16, u32, u64, Option<u32>);
const AGG: u32 = 2;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn block(v: u32) -> Vec<u8> {
    (0..B / 4).flat_map(|k| (v + k).to_le_bytes()).collect()
}

/// One frame from `src` with the PRs `(kind, round, idx, payload value)`.
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

/// The one frame `tx` sends.
fn one_frame(mut tx: PrSender) -> Vec<u8> {
    tx.flush(Time::ZERO);
    let mut out = Outputs::new();
    tx.emit(Time::from_us(1), &mut out);
    let frames: Vec<Vec<u8>> = out.iter().map(|(_, f)| f.to_vec()).collect();
    assert_eq!(frames.len(), 1);
    frames.into_iter().next().unwrap()
}

/// Worker 0 has blocks 1, 4, 6 nonzero; worker 1 has 1, 2. Depth 2: round
/// 0 chooses {1, 2}, round 1 {4, 6}, round 2 is empty (the end).
fn stimulus() -> Vec<(u64, Vec<u8>)> {
    let v = |src, a, b| frame(src, &[(VOTE, 0, a, None), (VOTE, 0, b, None)]);
    vec![
        (100, v(0, 1, 4)),
        (110, v(1, 1, 2)),
        // An unknown worker's vote, and a vote for a stream the aggregator
        // does not run: refused.
        (120, frame(7, &[(VOTE, 0, 3, None)])),
        (130, frame(0, &[(VOTE, round_id(5, 0), 3, None)])),
        // Round 0: worker 0 sends block 1, worker 1 blocks 1 and 2.
        (500, frame(0, &[(BLOCK, 0, 1, Some(10))])),
        (
            505,
            frame(
                0,
                &[(DONE, 0, 1, None), (VOTE, 1, 4, None), (VOTE, 1, 6, None)],
            ),
        ),
        (
            510,
            frame(1, &[(BLOCK, 0, 1, Some(20)), (BLOCK, 0, 2, Some(30))]),
        ),
        // A block of the wrong size: refused.
        (512, {
            let mut tx = PrSender::new(1, 400, 1500).unwrap();
            tx.push(
                Time::ZERO,
                PrType::Response,
                AGG,
                8,
                &coll_pr(1, BLOCK, 0, 2),
                &[0; 8],
            );
            tx.flush(Time::ZERO);
            one_frame(tx)
        }),
        (
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
            900,
            frame(0, &[(BLOCK, 1, 4, Some(40)), (BLOCK, 1, 6, Some(60))]),
        ),
        (
            905,
            frame(
                0,
                &[
                    (DONE, 1, 2, None),
                    (VOTE, 2, NONE, None),
                    (VOTE, 2, NONE, None),
                ],
            ),
        ),
        (
            910,
            frame(
                1,
                &[
                    (DONE, 1, 0, None),
                    (VOTE, 2, NONE, None),
                    (VOTE, 2, NONE, None),
                ],
            ),
        ),
    ]
}

fn run() -> (Vec<(u64, Vec<u8>)>, Aggregator) {
    let path = root().join("programs/omniccl_agg.p4");
    let mut sources = SourceMap::new();
    let art = compile_file(&mut sources, &path, &CompileOptions::default())
        .expect("omniccl_agg.p4 compiles")
        .artifact;
    let cfg = AggConfig {
        node: AGG,
        workers: 2,
        depth: 2,
        block: B,
        window: 2,
        streams: 1,
        link_gbps: 400,
    };
    let mut agg = Aggregator::new(&art, cfg).unwrap();
    let mut sent = Vec::new();
    let mut out = Outputs::new();
    for (t, f) in stimulus() {
        while let Some(d) = agg.next_deadline().filter(|d| d.as_ns() < t) {
            out.clear();
            agg.on_timer(d, &mut out);
            sent.extend(out.iter().map(|(_, f)| (d.as_ns(), f.to_vec())));
        }
        out.clear();
        agg.on_packet(Time::from_ns(t), 0, &f, &mut out);
        sent.extend(out.iter().map(|(_, f)| (t, f.to_vec())));
    }
    while let Some(d) = agg.next_deadline() {
        out.clear();
        agg.on_timer(d, &mut out);
        sent.extend(out.iter().map(|(_, f)| (d.as_ns(), f.to_vec())));
    }
    (sent, agg)
}

fn pcap(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let header = PcapHeader {
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for (t, f) in frames {
        w.write_packet(&PcapPacket::new(
            Duration::from_nanos(*t),
            f.len() as u32,
            f,
        ))
        .unwrap();
    }
    w.into_writer()
}

#[test]
fn the_aggregator_matches_its_goldens() {
    let bless = std::env::var_os("NETSPARSE_BLESS").is_some();
    let (sent, _) = run();
    let dir = root().join("tests/pcap/omniccl_agg");
    for (name, got) in [("in.pcap", pcap(&stimulus())), ("out.pcap", pcap(&sent))] {
        let path = dir.join(name);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &got).unwrap();
        }
        let want = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (bless with NETSPARSE_BLESS=1)", path.display()));
        assert!(got == want, "{}: differs from the golden", path.display());
    }
}

#[test]
fn the_golden_output_says_what_the_aggregator_does() {
    let (sent, agg) = run();
    // Per worker: (kind, round, idx, first word of the payload).
    let mut got: Vec<Vec<Pr>> = vec![Vec::new(); 2];
    for (_, f) in &sent {
        let fr = Frame::parse(f).expect("a NetSparse frame");
        let dst = fr.concat.dst as usize;
        for p in fr.prs() {
            let pl = p.payload;
            let first = (!pl.is_empty()).then(|| u32::from_le_bytes(pl[..4].try_into().unwrap()));
            got[dst].push((p.tid, p.req_id, p.idx, first));
        }
    }
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
    assert_eq!(got[0], want);
    assert_eq!(got[1], want);
    let s = agg.stats();
    assert_eq!((s.blocks, s.dones, s.rounds), (5, 4, 2), "{s:?}");
    assert_eq!(s.refused.unknown_worker, 1);
    assert_eq!(s.refused.wrong_round, 1);
    assert_eq!(s.refused.block_size, 1);
    assert_eq!(s.program_errors, 0);
    assert_eq!(agg.rounds_finished(0), 3);
}
