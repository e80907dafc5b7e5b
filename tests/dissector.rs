//! The Wireshark dissector `tools/netsparse.lua`, run by tshark on a pcap
//! built with `netsparse_externs::wire`: concatenation header and PR fields
//! decode, display filters on PR fields select the right frames, malformed
//! packets get expert info, and other RoCEv2 traffic is left to Wireshark.
//! Needs tshark (Debian's package; `.ci/install-deps` installs it):
//! otherwise the test prints why and returns.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use netsparse_externs::wire::{DeviceAddr, FrameBuilder, FrameHeader, PrRepr, PrType};
use pcap_file::pcap::{PcapPacket, PcapWriter};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/netsparse.lua")
}

/// Why the test cannot run: only when tshark is not installed at all. A
/// tshark that is installed but broken fails the test.
fn tshark_missing() -> Option<String> {
    match Command::new("tshark").arg("--version").output() {
        Ok(o) => {
            assert!(
                o.status.success(),
                "tshark is installed but `tshark --version` failed ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
            None
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!(
            "tshark is not installed (run .ci/install-deps, or apt-get install tshark): {e}"
        )),
        Err(e) => panic!("cannot run tshark: {e}"),
    }
}

fn frame(src: DeviceAddr, pr_type: PrType, dst: u32, prop_len: u32, prs: &[PrRepr]) -> Vec<u8> {
    let h = FrameHeader::netsparse(src, dst, 7).unwrap();
    let mut buf = Vec::new();
    let mut b = FrameBuilder::begin(&mut buf, &h, pr_type, dst, prop_len, 1500).unwrap();
    for (i, pr) in prs.iter().enumerate() {
        let payload: Vec<u8> = match pr_type {
            PrType::Read => Vec::new(),
            PrType::Response => (0..prop_len).map(|j| (i as u32 * 16 + j) as u8).collect(),
        };
        b.push_pr(pr, &payload).unwrap();
    }
    b.finish();
    buf
}

fn pr(src: u32, tid: u16, idx: u64, req_id: u32) -> PrRepr {
    PrRepr {
        src,
        tid,
        idx,
        req_id,
    }
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = PcapWriter::new(f).unwrap();
    for (i, fr) in frames.iter().enumerate() {
        w.write_packet(&PcapPacket::new(
            Duration::from_millis(i as u64),
            fr.len() as u32,
            fr,
        ))
        .unwrap();
    }
}

fn tshark(pcap: &Path, args: &[&str]) -> String {
    let o = Command::new("tshark")
        .arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", script().display()))
        .arg("-r")
        .arg(pcap)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "tshark failed: {err}");
    assert!(
        !err.contains("Lua: Error"),
        "the script failed to load: {err}"
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn tshark_decodes_netsparse_layers() {
    if let Some(why) = tshark_missing() {
        println!("skipping the dissector test: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("ns.pcap");
    let read = frame(
        DeviceAddr::Node(1),
        PrType::Read,
        3,
        64,
        &[
            pr(1, 0, 42, 0x10),
            pr(1, 0, 43, 0x11),
            pr(1, 5, 1 << 40, 0x12),
        ],
    );
    let resp = frame(
        DeviceAddr::Switch(0),
        PrType::Response,
        1,
        8,
        &[pr(1, 0, 42, 0x10), pr(1, 2, 7, 0x13)],
    );
    // Malformed: num_prs says 9 but only 3 PRs follow.
    let mut overrun = read.clone();
    overrun[68 - 4..68].copy_from_slice(&9u32.to_be_bytes());
    // Trailing bytes: two PRs declared, three present.
    let mut trailing = read.clone();
    trailing[68 - 4..68].copy_from_slice(&2u32.to_be_bytes());
    // Another RoCEv2 packet (different QP, payload not a concatenation layer).
    let mut other = read.clone();
    other[42 + 5..42 + 8].copy_from_slice(&[0, 0, 1]);
    other[54..56].copy_from_slice(&[0x77, 0x77]);
    write_pcap(&pcap, &[read, resp, overrun, trailing, other]);

    let out = tshark(
        &pcap,
        &[
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "frame.number",
            "-e",
            "netsparse.type",
            "-e",
            "netsparse.dst",
            "-e",
            "netsparse.prop_len",
            "-e",
            "netsparse.num_prs",
            "-e",
            "netsparse.pr.src",
            "-e",
            "netsparse.pr.tid",
            "-e",
            "netsparse.pr.idx",
            "-e",
            "netsparse.pr.req_id",
            "-e",
            "netsparse.bth.dst_qp",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(
        lines[0],
        "1|1|3|64|3|1,1,1|0,0,5|42,43,1099511627776|0x00000010,0x00000011,0x00000012|0x4e5350",
        "{out}"
    );
    assert_eq!(
        lines[1], "2|2|1|8|2|1,1|0,2|42,7|0x00000010,0x00000013|0x4e5350",
        "{out}"
    );
    // The overrun packet decodes the PRs that fit, the trailing one the two declared.
    assert!(lines[2].starts_with("3|1|3|64|9|1,1,1|"), "{out}");
    assert!(lines[3].starts_with("4|1|3|64|2|1,1|0,0|42,43|"), "{out}");
    // Not NetSparse: no NetSparse fields.
    assert_eq!(lines[4], "5|||||||||", "{out}");

    // Payloads of the response.
    let out = tshark(
        &pcap,
        &[
            "-Y",
            "netsparse.type == 2",
            "-T",
            "fields",
            "-e",
            "netsparse.pr.payload",
        ],
    );
    assert_eq!(out.trim(), "0001020304050607,1011121314151617");

    // Display filters on PR fields.
    let out = tshark(
        &pcap,
        &[
            "-Y",
            "netsparse.pr.idx == 7",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ],
    );
    assert_eq!(out.trim(), "2");
    let out = tshark(
        &pcap,
        &[
            "-Y",
            "netsparse.pr.idx == 42",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ],
    );
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>(),
        ["1", "2", "3", "4"]
    );

    // Expert info on the malformed packets.
    let out = tshark(
        &pcap,
        &[
            "-Y",
            "_ws.expert",
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "_ws.expert.message",
        ],
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("3\t") && l.contains("overruns the packet")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("4\t") && l.contains("after the last")),
        "{out}"
    );
    assert!(
        !out.lines()
            .any(|l| l.starts_with("1\t") || l.starts_with("2\t")),
        "{out}"
    );

    // The tree, as a user sees it.
    let out = tshark(&pcap, &["-V", "-Y", "frame.number == 2"]);
    assert!(
        out.contains("NetSparse (concatenation and PR layers), Response to node 1, 2 PRs"),
        "{out}"
    );
    assert!(
        out.contains("PR 1: src 1, tid 2, idx 7, req_id 0x00000013"),
        "{out}"
    );
}
