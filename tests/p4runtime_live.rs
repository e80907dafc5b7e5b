//! Live test: `netsparse switch --grpc-server-addr` between two network
//! namespaces, driven by `netsparse ctl`: the switch starts with no
//! entries (drops), a `table_add` over P4Runtime makes it forward, a
//! `table_delete` makes it drop again, and SIGINT still stops it cleanly.
//! Needs root and `ip` (iproute2); otherwise it prints why and returns.
//! Namespaces, veths and the switch are removed on drop (also on panic).

use std::path::Path;
use std::process::Command;

use netsparse_bmv2::drivers::live::AfPacket;

mod live_support;

use live_support::*;

fn ctl(addr: &str, args: &[&str]) -> bool {
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(["ctl", addr, "--timeout", "10"])
        .args(args)
        .output()
        .unwrap();
    println!(
        "ctl {}: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o.status.success()
}

#[test]
fn ctl_changes_forwarding_while_running() {
    if let Some(why) = skip_reason() {
        println!("skipping the live P4Runtime test: {why}");
        return;
    }
    let pid = std::process::id();
    let (mut topo, vsa, vna, vsb, vnb) = match setup("p", pid) {
        Ok(t) => t,
        Err(e) => {
            println!("skipping the live P4Runtime test: cannot build the namespaces ({e})");
            return;
        }
    };
    let program = root().join("programs/ipv4_forward.p4");
    let args = [
        program.display().to_string(),
        "-i".into(),
        format!("1@{vsa}"),
        "-i".into(),
        format!("2@{vsb}"),
        "--grpc-server-addr".into(),
        "127.0.0.1:0".into(),
    ];
    let started = start_switch(&mut topo, &args);
    let addr = started
        .grpc_addr()
        .expect("the server's address is printed");
    let a = AfPacket::open_in_netns(&vna, &Path::new("/var/run/netns").join(&topo.nsa)).unwrap();
    let b = AfPacket::open_in_netns(&vnb, &Path::new("/var/run/netns").join(&topo.nsb)).unwrap();
    let frame = udp([2, 0, 0, 0, 0, 0x51], [10, 0, 2, 5], b"over P4Runtime");
    assert!(
        passes(&a, &b, &frame, [10, 0, 2, 5]).is_none(),
        "no entries: dropped"
    );
    assert!(ctl(
        &addr,
        &[
            "table_add",
            "ipv4_lpm",
            "ipv4_forward",
            "10.0.2.0/24",
            "=>",
            "02:00:00:00:02:02",
            "2"
        ]
    ));
    let got = passes(&a, &b, &frame, [10, 0, 2, 5]).expect("forwarded after table_add");
    assert_eq!(&got[0..6], &[2, 0, 0, 0, 2, 2]);
    assert!(ctl(&addr, &["table_delete", "ipv4_lpm", "10.0.2.0/24"]));
    assert!(
        passes(&a, &b, &frame, [10, 0, 2, 5]).is_none(),
        "dropped after table_delete"
    );

    let (status, log) = started.stop_with_sigint(&mut topo);
    assert!(status.success(), "exit status {status}: {log:?}");
}
