//! `netsparse nic` on pcap files: a gather completed in three deterministic
//! passes (node 0 issues reads, node 1 serves them, node 0 takes the
//! responses), the gathered properties written and checked; and the CLI's
//! handling of bad input.

mod nic_support;

use std::path::Path;
use std::process::{Command, Output};

use netsparse_nic::property_bytes;
use nic_support::root;
use pcap_file::pcap::{PcapReader, PcapWriter};

fn nic(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .arg("nic")
        .arg(root().join("programs/netsparse_nic.p4"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("netsparse runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Append the records of `src` to the pcap `dst` (same format).
fn append(dst: &Path, src: &Path) {
    let mut r = PcapReader::new(std::fs::File::open(dst).unwrap()).unwrap();
    let header = r.header();
    let mut packets = Vec::new();
    while let Some(p) = r.next_packet() {
        packets.push(p.unwrap().into_owned());
    }
    let mut s = PcapReader::new(std::fs::File::open(src).unwrap()).unwrap();
    while let Some(p) = s.next_packet() {
        packets.push(p.unwrap().into_owned());
    }
    let mut w = PcapWriter::with_header(std::fs::File::create(dst).unwrap(), header).unwrap();
    for p in &packets {
        w.write_packet(p).unwrap();
    }
}

#[test]
fn a_gather_in_three_pcap_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("parts.txt"), "# two nodes\n0 32\n32 64\n").unwrap();
    std::fs::write(d.join("node0.idx"), "40\n41\n40\n3 # local\n\n63\n41\n50\n").unwrap();
    let common = ["--partition", "parts.txt", "--use-files", ".", "--k", "4"];
    // Pass 1: node 0 issues its reads; nothing answers (the watchdog fires at the end).
    let o = nic(
        d,
        &[&common[..], &["--node", "0", "--gather", "node0.idx"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("watchdog"), "{}", stderr(&o));
    assert!(
        d.join("node0_in.pcap").exists(),
        "the anchor record was written"
    );
    // Pass 2: node 1 serves them.
    std::fs::copy(d.join("node0_out.pcap"), d.join("node1_in.pcap")).unwrap();
    let o = nic(
        d,
        &[&common[..], &["--node", "1", "--stats-json", "n1.json"]].concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let n1: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("n1.json")).unwrap()).unwrap();
    assert_eq!(n1["nic"]["reads_served"], 4);
    // Pass 3: node 0 again, with the responses after its anchor record.
    append(&d.join("node0_in.pcap"), &d.join("node1_out.pcap"));
    let o = nic(
        d,
        &[
            &common[..],
            &[
                "--node",
                "0",
                "--gather",
                "node0.idx",
                "--out",
                "props.txt",
                "--stats-json",
                "n0.json",
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("gathered 4 remote properties, all verified"));
    let text = std::fs::read_to_string(d.join("props.txt")).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 4);
    for (l, idx) in lines.iter().zip([40u64, 41, 50, 63]) {
        let mut want = [0u8; 16];
        property_bytes(idx, &mut want);
        let hex: String = want.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(*l, format!("{idx} {hex}"));
    }
    let n0: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("n0.json")).unwrap()).unwrap();
    assert_eq!(n0["nic"]["prs_issued"], 4);
    assert_eq!(n0["nic"]["prs_coalesced"], 2);
    assert_eq!(n0["nic"]["prs_local"], 1);
    assert_eq!(n0["commands"][0]["status"]["status"], "success");
    // Binary output: records of u64 idx + property.
    let o = nic(
        d,
        &[
            &common[..],
            &[
                "--node",
                "0",
                "--gather",
                "node0.idx",
                "--out",
                "props.bin",
                "--out-format",
                "bin",
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bin = std::fs::read(d.join("props.bin")).unwrap();
    assert_eq!(bin.len(), 4 * (8 + 16));
    assert_eq!(u64::from_le_bytes(bin[24..32].try_into().unwrap()), 41);
}

#[test]
fn bad_input_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("parts.txt"), "0 32\n32 64\n").unwrap();
    std::fs::write(d.join("gaps.txt"), "0 10\n20 64\n").unwrap();
    std::fs::write(d.join("bad.idx"), "4\nfive\n").unwrap();
    std::fs::write(d.join("ok.idx"), "40\n").unwrap();
    let run = |args: &[&str]| nic(d, args);
    // A partition with a gap: the simulator's parser names the line.
    let o = run(&["--node", "0", "--partition", "gaps.txt", "--use-files", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("gaps.txt:2"), "{}", stderr(&o));
    // A P4Runtime server on a pcap replay, and a bad server address.
    for (extra, want) in [
        (
            &["--use-files", ".", "--grpc-server-addr", "127.0.0.1:0"][..],
            "needs live interfaces",
        ),
        (
            &["-i", "0@lo", "--grpc-server-addr", "nowhere"][..],
            "not an address",
        ),
    ] {
        let o = run(&[&["--node", "0", "--partition", "parts.txt"][..], extra].concat());
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
    // A node the partition does not have.
    let o = run(&[
        "--node",
        "5",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("2 nodes"), "{}", stderr(&o));
    // A gather job with a bad line.
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "--gather",
        "bad.idx",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.idx:2"), "{}", stderr(&o));
    // A bad config key.
    std::fs::write(d.join("nic.toml"), "client_units = 0\n").unwrap();
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "--config",
        "nic.toml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("client_units"), "{}", stderr(&o));
    std::fs::write(d.join("nic.toml"), "nodez = 1\n").unwrap();
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "--config",
        "nic.toml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nodez"), "{}", stderr(&o));
    // Entries: a bad command names the line.
    std::fs::write(
        d.join("e.txt"),
        "table_add dest_solver set_dst 100->200 => 1 5\nbogus\n",
    )
    .unwrap();
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "--entries",
        "e.txt",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("e.txt:2"), "{}", stderr(&o));
    // Runtime JSON goes through the switch's loader: an unknown table is
    // named with its entry.
    std::fs::write(
        d.join("e.json"),
        r#"{"table_entries":[{"table":"no_such_table","action_name":"x","action_params":{}}]}"#,
    )
    .unwrap();
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "--entries",
        "e.json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("e.json") && stderr(&o).contains("no_such_table"),
        "{}",
        stderr(&o)
    );
    // Neither an interface nor --use-files.
    let o = run(&["--node", "0", "--partition", "parts.txt"]);
    assert_eq!(o.status.code(), Some(2));
    // A NIC has one port.
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "-i",
        "1@x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // A switch program is not a NIC program.
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(["nic"])
        .arg(root().join("programs/ipv4_forward.p4"))
        .args([
            "--node",
            "0",
            "--partition",
            "parts.txt",
            "--use-files",
            ".",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("NetSparseNic"), "{}", stderr(&o));
    // An ablation define compiles the program differently; nothing answers,
    // so the gather fails by watchdog at the end of the input.
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "--gather",
        "ok.idx",
        "-D",
        "NS_NO_FILTER",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("watchdog"), "{}", stderr(&o));
    let o = run(&[
        "--node",
        "0",
        "--partition",
        "parts.txt",
        "--use-files",
        ".",
        "-D",
        "1BAD",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// The records of a pcap file: (timestamp, bytes).
fn records(path: &Path) -> Vec<(std::time::Duration, Vec<u8>)> {
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        out.push((p.timestamp, p.data.into_owned()));
    }
    out
}

/// `netsparse nic` on a sPIN program: the pingpong golden of
/// `nic_firmware/tests/spin_pcap.rs` replayed through the CLI gives the same
/// frames at the same times and the same host buffer; flags of the
/// NetSparse NIC are refused.
#[test]
fn a_spin_program_replays_its_golden() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let golden = root().join("tests/pcap/spin/spin_pingpong");
    std::fs::copy(golden.join("in.pcap"), d.join("node0_in.pcap")).unwrap();
    std::fs::write(
        d.join("e.txt"),
        "table_add Ping.ping_match pong 0x1 => 0x2 0x100\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .arg("nic")
        .arg(root().join("programs/spin_pingpong.p4"))
        .args([
            "--use-files",
            ".",
            "--entries",
            "e.txt",
            "--host-out",
            "host.bin",
        ])
        .args(["--host-range", "0x100..0xcb8", "--stats-json", "s.json"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("message 1:7 (match bits 0x1, 3000 bytes): rc 0, 0 bytes dropped"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        records(&d.join("node0_out.pcap")),
        records(&golden.join("out.pcap")),
        "the pongs"
    );
    assert_eq!(
        std::fs::read(d.join("host.bin")).unwrap(),
        std::fs::read(golden.join("host.bin")).unwrap()
    );
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("s.json")).unwrap()).unwrap();
    assert_eq!(s["spin"]["packets_in"], 3);
    assert_eq!(s["completions"].as_array().map(Vec::len), Some(1));

    let spin = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_netsparse"))
            .arg("nic")
            .arg(root().join("programs/spin_pingpong.p4"))
            .args(["--use-files", "."])
            .args(args)
            .current_dir(d)
            .output()
            .unwrap()
    };
    std::fs::write(d.join("bad.toml"), "hpus = 8\nwarp_speed = 9\n").unwrap();
    for (args, want) in [
        (
            &["--partition", "p.txt"][..],
            "--partition: not for a sPIN NIC program",
        ),
        (
            &["--host-out", "h", "--host-range", "0x10..0x8"][..],
            "START <= END",
        ),
        (&["--config", "bad.toml"][..], "bad sPIN NIC config"),
    ] {
        let o = spin(args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // A NetSparse NIC program still needs its partition.
    let o = nic(d, &["--use-files", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("needs --node ID and --partition FILE"),
        "{}",
        stderr(&o)
    );
}
