//! Golden pcap of one small gather as seen on the wire: two NICs back to
//! back running `programs/netsparse_nic.p4`, each gathering a few properties
//! from the other (reads and responses in both directions, concatenated).
//! Frames are recorded when they leave a NIC, with nanosecond timestamps,
//! and compared byte for byte with `tests/pcap/nic_gather/wire.pcap`.
//!
//! To regenerate the golden after an intended change:
//!
//! ```text
//! NETSPARSE_BLESS=1 cargo test --test nic_pcap
//! ```
//!
//! and review the diff (e.g. with Wireshark: the frames are RoCEv2).

mod nic_support;

use std::io::Cursor;

use netsparse_externs::wire::{DeviceAddr, Frame, PrType};
use netsparse_nic::testing::{batch_commands, Gather};
use netsparse_nic::{property_bytes, CompletionStatus, Time};
use nic_support::net::Net;
use nic_support::{nic_program, nics, root};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::{Endianness, TsResolution};

const PROP: u32 = 16;

fn capture() -> Vec<u8> {
    let art = nic_program(&[]);
    let bounds = vec![0u64, 16, 32];
    // Node 0 needs 17, 20, 17 (coalesced), 3 (local), 31; node 1 needs 2 and 9.
    let idxs = vec![vec![17, 20, 17, 3, 31], vec![2, 9, 20]];
    let mut net = Net::new(Time::from_ns(450), nics(&art, &idxs, &bounds, PROP, |_| {}));
    net.connect((0, 0), (1, 0));
    net.capture(true);
    let cmds = idxs
        .iter()
        .map(|l| batch_commands(l.len() as u64, 8, PROP))
        .collect();
    let mut g = Gather::new(cmds, true);
    assert!(g.run(&mut net, Time::from_ms(1)));
    assert!(g
        .completions
        .iter()
        .flatten()
        .all(|c| c.status == CompletionStatus::Success));
    // What is on the wire: reads from both nodes, responses to both.
    let mut seen = Vec::new();
    for c in net.captured() {
        let f = Frame::parse(c.bytes).expect("a NetSparse frame");
        let from = match f.src_device() {
            Some(DeviceAddr::Node(n)) => n,
            other => panic!("unexpected source {other:?}"),
        };
        assert_eq!(from, c.from.0);
        for pr in f.prs() {
            if f.concat.pr_type == PrType::Response {
                let mut want = vec![0u8; PROP as usize];
                property_bytes(pr.idx, &mut want);
                assert_eq!(pr.payload, want.as_slice());
            }
            seen.push((f.concat.pr_type, from, f.concat.dst, pr.idx));
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        vec![
            (PrType::Read, 0, 1, 17),
            (PrType::Read, 0, 1, 20),
            (PrType::Read, 0, 1, 31),
            (PrType::Read, 1, 0, 2),
            (PrType::Read, 1, 0, 9),
            (PrType::Response, 0, 1, 2),
            (PrType::Response, 0, 1, 9),
            (PrType::Response, 1, 0, 17),
            (PrType::Response, 1, 0, 20),
            (PrType::Response, 1, 0, 31),
        ]
    );
    let header = PcapHeader {
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for c in net.captured() {
        let ts = std::time::Duration::from_nanos(c.at.as_ns()) + std::time::Duration::from_nanos(0);
        w.write_packet(&PcapPacket::new(ts, c.bytes.len() as u32, c.bytes))
            .unwrap();
    }
    w.into_writer()
}

#[test]
fn a_small_gather_on_the_wire_matches_the_golden_pcap() {
    let got = capture();
    let golden = root().join("tests/pcap/nic_gather/wire.pcap");
    if std::env::var_os("NETSPARSE_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &got).unwrap();
    }
    let want = std::fs::read(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with NETSPARSE_BLESS=1)", golden.display()));
    if got != want {
        // Show the first differing record.
        let mut a = PcapReader::new(Cursor::new(&got)).unwrap();
        let mut b = PcapReader::new(Cursor::new(&want)).unwrap();
        let mut i = 0;
        loop {
            match (a.next_packet(), b.next_packet()) {
                (Some(Ok(x)), Some(Ok(y))) if x.timestamp == y.timestamp && x.data == y.data => {
                    i += 1
                }
                (x, y) => panic!(
                    "record {i} differs from the golden: got {:?}, want {:?}",
                    x.map(|p| p.map(|p| (p.timestamp, p.data.len()))),
                    y.map(|p| p.map(|p| (p.timestamp, p.data.len())))
                ),
            }
        }
    }
    // Deterministic: a second run gives the same bytes.
    assert_eq!(capture(), got);
}
