//! The pcap driver: merge order, timers, determinism, corrupt inputs.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::Duration;

use netsparse_bmv2::drivers::pcap::{self, PcapError, PcapOptions};
use netsparse_bmv2::drivers::PortSpec;
use netsparse_externs::{Datapath, Outputs, Time};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("ns-pcap-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn spec(s: &str) -> PortSpec {
    s.parse().unwrap()
}

/// Write a classic pcap of (timestamp µs, frame).
fn write_pcap(path: &Path, recs: &[(u64, Vec<u8>)], endianness: Endianness, nanos: bool) {
    let header = PcapHeader {
        endianness,
        ts_resolution: if nanos {
            TsResolution::NanoSecond
        } else {
            TsResolution::MicroSecond
        },
        snaplen: 65535,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(File::create(path).unwrap(), header).unwrap();
    for (us, f) in recs {
        let ts = Duration::from_micros(*us);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .unwrap();
    }
}

fn read_pcap(path: &Path) -> Vec<(Duration, Vec<u8>)> {
    let mut r = PcapReader::new(File::open(path).unwrap()).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        v.push((p.timestamp, p.data.into_owned()));
    }
    v
}

/// Sends each frame out on port `port + 10` after 10 µs (a timer), tagging
/// it with the arrival order.
#[derive(Default)]
struct Delay {
    q: VecDeque<(Time, u32, Vec<u8>)>,
    n: u8,
}

impl Datapath for Delay {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], _out: &mut Outputs) {
        let mut f = frame.to_vec();
        f.push(self.n);
        self.n += 1;
        self.q.push_back((now + Time::from_us(10), port + 10, f));
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        while self.q.front().is_some_and(|(t, _, _)| *t <= now) {
            if let Some((_, p, f)) = self.q.pop_front() {
                out.push(p, &f);
            }
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.q.front().map(|(t, _, _)| *t)
    }
}

fn frame(tag: u8) -> Vec<u8> {
    vec![tag; 20]
}

#[test]
fn merges_by_time_then_port_and_flushes_timers() {
    let d = Scratch::new("merge");
    write_pcap(
        &d.0.join("a_in.pcap"),
        &[
            (1_000_000, frame(1)),
            (1_000_005, frame(2)),
            (1_000_100, frame(3)),
        ],
        Endianness::Little,
        false,
    );
    write_pcap(
        &d.0.join("b_in.pcap"),
        &[(1_000_005, frame(4)), (1_000_050, frame(5))],
        Endianness::Big,
        true,
    );
    let ports = [spec("1@a"), spec("0@b"), spec("10@x"), spec("11@y")];
    let mut dp = Delay::default();
    let rep = pcap::run(&mut dp, &ports, &d.0, &PcapOptions::default()).unwrap();
    assert_eq!(rep.errors().count(), 0);
    // Arrival order: a1 (t0), then at t0+5 b (port 0) before a (port 1), b5, a3.
    let x = read_pcap(&d.0.join("x_out.pcap")); // from port 0 (b)
    let y = read_pcap(&d.0.join("y_out.pcap")); // from port 1 (a)
    let tags = |v: &[(Duration, Vec<u8>)]| v.iter().map(|(_, f)| (f[0], f[20])).collect::<Vec<_>>();
    assert_eq!(tags(&x), vec![(4, 1), (5, 3)]);
    assert_eq!(tags(&y), vec![(1, 0), (2, 2), (3, 4)]);
    // Each output 10 µs after its input, in absolute capture time.
    assert_eq!(y[0].0, Duration::from_micros(1_000_010));
    assert_eq!(x[1].0, Duration::from_micros(1_000_060));
    // The last one was flushed after the end of input.
    assert_eq!(y[2].0, Duration::from_micros(1_000_110));
    // Ports with no input still get an (empty) output file.
    assert!(read_pcap(&d.0.join("a_out.pcap")).is_empty());
    assert_eq!(rep.ports.iter().map(|p| p.packets_in).sum::<u64>(), 5);
}

#[test]
fn same_input_same_bytes() {
    let d = Scratch::new("det");
    let recs: Vec<(u64, Vec<u8>)> = (0..50).map(|i| (i * 3, frame(i as u8))).collect();
    write_pcap(&d.0.join("a_in.pcap"), &recs, Endianness::Little, false);
    let ports = [spec("0@a"), spec("10@o")];
    pcap::run(&mut Delay::default(), &ports, &d.0, &PcapOptions::default()).unwrap();
    let first = fs::read(d.0.join("o_out.pcap")).unwrap();
    pcap::run(&mut Delay::default(), &ports, &d.0, &PcapOptions::default()).unwrap();
    let second = fs::read(d.0.join("o_out.pcap")).unwrap();
    assert_eq!(first, second);
    assert_eq!(read_pcap(&d.0.join("o_out.pcap")).len(), 50);
}

fn good_then(path: &Path, tail: &[u8]) {
    write_pcap(
        path,
        &[(5, frame(1)), (6, frame(2))],
        Endianness::Little,
        false,
    );
    let mut bytes = fs::read(path).unwrap();
    bytes.extend_from_slice(tail);
    fs::write(path, bytes).unwrap();
}

#[test]
fn corrupt_inputs_stop_with_file_and_record() {
    let d = Scratch::new("corrupt");
    // bad magic
    fs::write(d.0.join("m_in.pcap"), b"this is not a pcap file at all").unwrap();
    // truncated third record (header says 20 bytes, 3 present)
    let mut rec = Vec::new();
    rec.extend_from_slice(&7u32.to_le_bytes());
    rec.extend_from_slice(&0u32.to_le_bytes());
    rec.extend_from_slice(&20u32.to_le_bytes());
    rec.extend_from_slice(&20u32.to_le_bytes());
    rec.extend_from_slice(&[1, 2, 3]);
    good_then(&d.0.join("t_in.pcap"), &rec);
    // absurd caplen on the third record
    let mut big = Vec::new();
    big.extend_from_slice(&7u32.to_le_bytes());
    big.extend_from_slice(&0u32.to_le_bytes());
    big.extend_from_slice(&0x4000_0000u32.to_le_bytes());
    big.extend_from_slice(&0x4000_0000u32.to_le_bytes());
    good_then(&d.0.join("c_in.pcap"), &big);
    // a half record header
    good_then(&d.0.join("h_in.pcap"), &[1, 2, 3, 4, 5]);
    // non-Ethernet link type
    let header = PcapHeader {
        datalink: DataLink::RAW,
        ..PcapHeader::default()
    };
    PcapWriter::with_header(File::create(d.0.join("l_in.pcap")).unwrap(), header).unwrap();
    // and a good one
    write_pcap(
        &d.0.join("g_in.pcap"),
        &[(1, frame(9)), (2, frame(8))],
        Endianness::Little,
        false,
    );
    let ports = [
        spec("0@m"),
        spec("1@t"),
        spec("2@c"),
        spec("3@h"),
        spec("4@l"),
        spec("5@g"),
        spec("10@o0"),
        spec("11@o1"),
        spec("12@o2"),
        spec("13@o3"),
        spec("15@o5"),
    ];
    let rep = pcap::run(&mut Delay::default(), &ports, &d.0, &PcapOptions::default()).unwrap();
    let err_of = |name: &str| -> String {
        rep.ports
            .iter()
            .find(|p| p.spec.as_ref().is_some_and(|s| s.name == name))
            .and_then(|p| p.error.as_ref())
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(
        err_of("m").contains("m_in.pcap: not a pcap file"),
        "{}",
        err_of("m")
    );
    assert!(
        err_of("t").contains("record 3 is truncated"),
        "{}",
        err_of("t")
    );
    assert!(
        err_of("c").contains("record 3 has a capture length"),
        "{}",
        err_of("c")
    );
    assert!(
        err_of("h").contains("record 3 is truncated (5 of 16"),
        "{}",
        err_of("h")
    );
    assert!(err_of("l").contains("is not Ethernet"), "{}", err_of("l"));
    assert_eq!(err_of("g"), "");
    assert_eq!(rep.errors().count(), 5);
    // The good records before each error were delivered; everything written
    // is a valid pcap.
    assert_eq!(read_pcap(&d.0.join("o1_out.pcap")).len(), 2);
    assert_eq!(read_pcap(&d.0.join("o2_out.pcap")).len(), 2);
    assert_eq!(read_pcap(&d.0.join("o5_out.pcap")).len(), 2);
    assert!(read_pcap(&d.0.join("o0_out.pcap")).is_empty());
}

/// A core that always has a timer due.
struct Restless(Time);

impl Datapath for Restless {
    fn on_packet(&mut self, _: Time, port: u32, f: &[u8], out: &mut Outputs) {
        out.push(port, f);
    }
    fn on_timer(&mut self, now: Time, _: &mut Outputs) {
        self.0 = now + Time::from_ns(1);
    }
    fn next_deadline(&self) -> Option<Time> {
        Some(self.0)
    }
}

#[test]
fn a_core_that_never_settles_is_an_error_but_outputs_stay_valid() {
    let d = Scratch::new("restless");
    write_pcap(
        &d.0.join("a_in.pcap"),
        &[(1, frame(1))],
        Endianness::Little,
        false,
    );
    let opts = PcapOptions {
        max_timer_steps: 1000,
        ..PcapOptions::default()
    };
    let e = pcap::run(&mut Restless(Time::ZERO), &[spec("0@a")], &d.0, &opts).unwrap_err();
    assert!(matches!(e, PcapError::Unsettled { steps: 1001 }), "{e}");
    assert_eq!(read_pcap(&d.0.join("a_out.pcap")).len(), 1);
}

#[test]
fn pcapng_input() {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
    use pcap_file::pcapng::PcapNgWriter;
    let d = Scratch::new("ng");
    let mut w = PcapNgWriter::new(File::create(d.0.join("a_in.pcap")).unwrap()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 0,
        options: vec![],
    })
    .unwrap();
    for (i, t) in [(1u8, 2_000_000u64), (2, 2_000_003)] {
        // Default resolution is microseconds: the block stores raw ticks.
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(t),
            original_len: 20,
            data: frame(i).into(),
            options: vec![],
        })
        .unwrap();
    }
    drop(w);
    let rep = pcap::run(
        &mut Delay::default(),
        &[spec("0@a"), spec("10@o")],
        &d.0,
        &PcapOptions::default(),
    )
    .unwrap();
    assert_eq!(rep.errors().count(), 0, "{:?}", rep.ports);
    let o = read_pcap(&d.0.join("o_out.pcap"));
    assert_eq!(o.len(), 2);
    // 2_000_003 µs ticks + 10 µs.
    assert_eq!(o[1].0, Duration::from_micros(2_000_013));
}
