//! Live test: `netsparse switch` forwarding between two network namespaces.
//!
//! ```text
//!  netns nsa<pid>            root namespace               netns nsb<pid>
//!  vna<pid> ───veth─── vsa<pid>  [netsparse switch]  vsb<pid> ───veth─── vnb<pid>
//!                     port 1                          port 2
//! ```
//!
//! Frames are sent with an AF_PACKET socket opened inside nsa and received
//! with one inside nsb (and the other way round). Needs root and `ip`
//! (iproute2); otherwise the test prints why and returns. Namespaces, veths
//! and the switch process are always cleaned up (Drop guard, also on panic).

use std::path::Path;
use std::time::Duration;

use etherparse::Ipv4HeaderSlice;
use netsparse_bmv2::drivers::live::{AfPacket, PortIo};

mod live_support;

use live_support::*;

#[test]
fn forwards_between_namespaces() {
    if let Some(why) = skip_reason() {
        println!("skipping the live test: {why}");
        return;
    }
    let pid = std::process::id();
    let (mut topo, vsa, vna, vsb, vnb) = match setup("s", pid) {
        Ok(t) => t,
        Err(e) => {
            println!("skipping the live test: cannot build the namespaces ({e})");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let entries = dir.path().join("entries.txt");
    std::fs::write(
        &entries,
        "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.0/24 => 02:00:00:00:02:02 2\n\
         table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.1.0/24 => 02:00:00:00:01:01 1\n",
    )
    .unwrap();
    let rec = dir.path().join("rec");
    std::fs::create_dir_all(&rec).unwrap();
    let args = [
        root()
            .join("programs/ipv4_forward.p4")
            .display()
            .to_string(),
        "-i".into(),
        format!("1@{vsa}"),
        "-i".into(),
        format!("2@{vsb}"),
        "--entries".into(),
        entries.display().to_string(),
        "--pcap".into(),
        rec.display().to_string(),
    ];
    let started = start_switch(&mut topo, &args);
    let a = AfPacket::open_in_netns(&vna, &Path::new("/var/run/netns").join(&topo.nsa)).unwrap();
    let b = AfPacket::open_in_netns(&vnb, &Path::new("/var/run/netns").join(&topo.nsb)).unwrap();

    // A → B.
    let sent = udp(
        [2, 0, 0, 0, 0, 0x51],
        [10, 0, 2, 5],
        b"hello through the switch",
    );
    let mut got = None;
    for _ in 0..5 {
        a.send(&sent).unwrap();
        got = expect_ipv4(&b, [10, 0, 2, 5], Duration::from_secs(2));
        if got.is_some() {
            break;
        }
    }
    let got = got.expect("no frame came out of the switch on the B side");
    assert_eq!(&got[0..6], &[2, 0, 0, 0, 2, 2], "destination MAC rewritten");
    assert_eq!(
        &got[6..12],
        &[2, 0, 0, 0, 0, 0x51],
        "source MAC = the old destination MAC"
    );
    let h = Ipv4HeaderSlice::from_slice(&got[14..]).unwrap();
    assert_eq!(h.ttl(), 63);
    assert_eq!(h.to_header().calc_header_checksum(), h.header_checksum());
    assert_eq!(&got[34..], &sent[34..]);

    // B → A.
    let back = udp([2, 0, 0, 0, 0, 0x52], [10, 0, 1, 9], b"and back");
    let mut got = None;
    for _ in 0..5 {
        b.send(&back).unwrap();
        got = expect_ipv4(&a, [10, 0, 1, 9], Duration::from_secs(2));
        if got.is_some() {
            break;
        }
    }
    let got = got.expect("no frame came out of the switch on the A side");
    assert_eq!(&got[0..6], &[2, 0, 0, 0, 1, 1]);
    assert_eq!(got[22], 63);

    // Stop it cleanly with SIGINT: exit 0 and a counters summary.
    let (status, log) = started.stop_with_sigint(&mut topo);
    assert!(status.success(), "exit status {status}: {log:?}");
    assert!(
        log.iter().any(|l| l.trim_start().starts_with("total")),
        "{log:?}"
    );
    // --pcap recorded both directions.
    let frames = |f: &str| {
        let mut r =
            pcap_file::pcap::PcapReader::new(std::fs::File::open(rec.join(f)).unwrap()).unwrap();
        let mut n = 0;
        while let Some(p) = r.next_packet() {
            p.unwrap();
            n += 1;
        }
        n
    };
    assert!(frames(&format!("{vsa}_in.pcap")) >= 1);
    assert!(frames(&format!("{vsb}_out.pcap")) >= 1);
}
