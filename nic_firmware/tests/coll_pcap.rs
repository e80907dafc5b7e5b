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
use netsparse_externs::wire::Frame;
use netsparse_nic::coll::{AggConfig, Aggregator};
use netsparse_nic::{Datapath, Outputs, Time};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{Endianness, TsResolution};

use netsparse_nic::testing::coll::{Pr, BLOCK_BYTES as B, RESULT};

const AGG: u32 = 2;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shared stimulus (`netsparse_nic::testing::coll`), all into the
/// aggregator's one port.
fn stimulus() -> Vec<(u64, Vec<u8>)> {
    netsparse_nic::testing::coll::stimulus(AGG)
        .into_iter()
        .map(|(t, _, f)| (t, f))
        .collect()
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
    let want = RESULT.to_vec();
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
