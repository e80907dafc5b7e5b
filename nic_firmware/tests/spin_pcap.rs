//! Golden files of the four sPIN example programs: for each, a fixed
//! stimulus (`in.pcap`: the frames the NIC receives, some out of order),
//! what the NIC sends (`out.pcap`: pongs, broadcast forwards; empty for the
//! strided receive and the accumulate, whose output is host memory) and the
//! host buffer afterwards (`host.bin`), in `tests/pcap/spin/<program>/`.
//! Timestamps are the simulated nanoseconds.
//!
//! To regenerate after an intended change:
//!
//! ```text
//! NETSPARSE_BLESS=1 cargo test -p netsparse-nic --test spin_pcap
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_engine::control::commands;
use netsparse_nic::spin::wire::message_frames;
use netsparse_nic::spin::{SpinConfig, SpinNicDev};
use netsparse_nic::{Datapath, Outputs, Time};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{Endianness, TsResolution};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Scenario {
    program: &'static str,
    node: u32,
    entries: &'static str,
    /// (arrival time in ns, frame)
    input: Vec<(u64, Vec<u8>)>,
    /// Host bytes to keep as the golden.
    host: std::ops::Range<usize>,
}

fn bytes(n: usize, mul: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(mul) % 251) as u8)
        .collect()
}

fn spaced(frames: Vec<Vec<u8>>, order: &[usize], start: u64, gap: u64) -> Vec<(u64, Vec<u8>)> {
    order
        .iter()
        .enumerate()
        .map(|(k, &i)| (start + gap * k as u64, frames[i].clone()))
        .collect()
}

fn scenarios() -> Vec<Scenario> {
    let ping = message_frames(1, 0, 7, 0x1, 0, &bytes(3000, 7), 1024);
    let bcast = message_frames(0, 4, 2, 0xB0, 0, &bytes(2500, 3), 1024);
    let strided = message_frames(2, 0, 11, 0x77, 0, &bytes(4096, 5), 1024);
    let mut acc = Vec::new();
    for src in 1..=2u32 {
        let data: Vec<u8> = (0..512u32).flat_map(|i| (i * src).to_le_bytes()).collect();
        let f = message_frames(src, 0, 1, 0xACC, 0, &data, 1024);
        acc.extend(spaced(f, &[1, 0], 100 * u64::from(src), 7));
    }
    vec![
        Scenario {
            program: "spin_pingpong",
            node: 0,
            entries: "table_add Ping.ping_match pong 0x1 => 0x2 0x100\n",
            input: spaced(ping, &[0, 2, 1], 0, 30),
            host: 0x100..0x100 + 3000,
        },
        Scenario {
            program: "spin_bcast",
            node: 4,
            entries: "table_add Tree.bcast_tree children 0xB0 => 2 6 5 0 0 0x2000\n",
            input: spaced(bcast, &[0, 1, 2], 0, 25),
            host: 0x2000..0x2000 + 2500,
        },
        Scenario {
            program: "spin_strided",
            node: 0,
            entries: "table_add Layout.datatype vector 0x77 => 0x1000 16 32\n",
            input: spaced(strided, &[3, 0, 2, 1], 0, 20),
            host: 0x1000..0x1000 + 8192,
        },
        Scenario {
            program: "spin_accumulate",
            node: 0,
            entries: "table_add Reduce.accumulate_into into 0xACC => 0x4000 0x3000\n",
            input: acc,
            host: 0x3000..0x4000 + 2048,
        },
    ]
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

fn run(s: &Scenario) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let path = root().join("programs").join(format!("{}.p4", s.program));
    let mut sources = SourceMap::new();
    let art = compile_file(&mut sources, &path, &CompileOptions::default())
        .unwrap_or_else(|_| panic!("{} compiles", path.display()))
        .artifact;
    let cfg = SpinConfig {
        node: s.node,
        ..SpinConfig::default()
    };
    let mut nic = SpinNicDev::new(&art, cfg).unwrap();
    commands::apply(nic.control(), s.entries, "entries").unwrap();
    let mut sent: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut out = Outputs::new();
    for (t, f) in &s.input {
        // Wake the NIC for everything due before this arrival.
        while let Some(d) = nic.next_deadline().filter(|d| d.as_ns() < *t) {
            out.clear();
            nic.on_timer(d, &mut out);
            sent.extend(out.iter().map(|(_, f)| (d.as_ns(), f.to_vec())));
        }
        out.clear();
        nic.on_packet(Time::from_ns(*t), 0, f, &mut out);
        sent.extend(out.iter().map(|(_, f)| (*t, f.to_vec())));
    }
    nic.run_until_idle(|t, f| sent.push((t.as_ns(), f.to_vec())));
    let done: Vec<_> = nic.poll_completions().collect();
    let msgs = s
        .input
        .iter()
        .map(|(_, f)| {
            let h = netsparse_nic::spin::wire::parse(f).unwrap().hdr;
            (h.src, h.msg_id)
        })
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(
        done.len(),
        msgs.len(),
        "{}: every message completes",
        s.program
    );
    assert!(done.iter().all(|d| d.rc == 0 && d.dropped_bytes == 0));
    (
        pcap(&s.input),
        pcap(&sent),
        nic.host()[s.host.clone()].to_vec(),
    )
}

#[test]
fn spin_programs_match_their_goldens() {
    let bless = std::env::var_os("NETSPARSE_BLESS").is_some();
    for s in scenarios() {
        let (i, o, h) = run(&s);
        let dir = root().join("tests/pcap/spin").join(s.program);
        for (name, got) in [("in.pcap", &i), ("out.pcap", &o), ("host.bin", &h)] {
            let path = dir.join(name);
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, got).unwrap();
            }
            let want = std::fs::read(&path).unwrap_or_else(|e| {
                panic!("{}: {e} (bless with NETSPARSE_BLESS=1)", path.display())
            });
            assert!(
                *got == want,
                "{}: differs from the golden ({} vs {} bytes)",
                path.display(),
                got.len(),
                want.len()
            );
        }
    }
}

#[test]
fn the_goldens_say_what_the_programs_do() {
    for s in scenarios() {
        let (_, out, host) = run(&s);
        let mut r = pcap_file::pcap::PcapReader::new(std::io::Cursor::new(&out)).unwrap();
        let mut frames = 0;
        while let Some(p) = r.next_packet() {
            p.unwrap();
            frames += 1;
        }
        match s.program {
            // 3 ping packets echoed; 3 packets to each of 2 children.
            "spin_pingpong" => {
                assert_eq!(frames, 3);
                assert_eq!(host, bytes(3000, 7));
            }
            "spin_bcast" => {
                assert_eq!(frames, 6);
                assert_eq!(host, bytes(2500, 3));
            }
            "spin_strided" => {
                assert_eq!(frames, 0);
                let data = bytes(4096, 5);
                for k in 0..4096 {
                    assert_eq!(host[(k / 16) * 32 + k % 16], data[k]);
                    assert_eq!(host[(k / 16) * 32 + 16 + k % 16], 0);
                }
            }
            "spin_accumulate" => {
                assert_eq!(frames, 0);
                assert_eq!(host[0..8], 2u64.to_le_bytes());
                let v = &host[0x1000..];
                for i in 0..512usize {
                    let x = u32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap());
                    assert_eq!(x, 3 * i as u32);
                }
            }
            other => panic!("no check for {other}"),
        }
    }
}
