//! `netsparse topo up/down` on real namespaces and veths (needs root and
//! iproute2; otherwise every test prints why and returns).
//!
//! * a 2-rack, 4-host leaf-spine of `ipv4_forward.p4` switches carries UDP
//!   datagrams between every pair of hosts (kernel sockets inside the host
//!   namespaces, static neighbours), then `down` leaves no namespace,
//!   interface or process behind, and a second `down` is a no-op;
//! * bad topologies (unknown node, duplicate port, missing program, a
//!   namespace or interface that exists already) are rejected before
//!   anything is created;
//! * a switch process that dies during `up` makes `up` fail and undo.
//!
//! Every test uses its own run id, so they run in parallel.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod topo_support;
use topo_support::{netsparse, root, skip_reason, text, Guard};

fn namespaces_of(id: &str) -> Vec<String> {
    let tag = format!("ns{id}-");
    std::fs::read_dir("/var/run/netns")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|n| n.starts_with(&tag))
                .collect()
        })
        .unwrap_or_default()
}

/// Live (non-zombie) processes whose command line mentions `needle`.
fn live_processes_with(needle: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_none_or(|s| s == "Z");
        if !zombie && String::from_utf8_lossy(&cmd).contains(needle) {
            v.push(pid);
        }
    }
    v
}

/// Removes a run on drop (also when a test panics).
/// A UDP socket bound inside namespace `ns`.
fn udp_in(ns: &str, addr: &str) -> UdpSocket {
    let path = Path::new("/var/run/netns").join(ns);
    let addr = addr.to_owned();
    netsparse_bmv2::drivers::in_netns(&path, move || UdpSocket::bind(addr)).unwrap()
}

fn gen(dir: &Path, racks: u32, hosts: u32) -> PathBuf {
    let topo = dir.join("ls.json");
    let prog = root().join("programs/ipv4_forward.p4");
    let o = netsparse(&[
        "topo",
        "gen",
        "leaf-spine",
        "--racks",
        &racks.to_string(),
        "--hosts",
        &hosts.to_string(),
        "--tor-program",
        prog.to_str().unwrap(),
        "--spine-program",
        prog.to_str().unwrap(),
        "--mtu",
        "9000",
        "-o",
        topo.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    topo
}

#[test]
fn leaf_spine_forwards_and_down_cleans_up() {
    if let Some(why) = skip_reason() {
        println!("skipping: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let topo = gen(dir.path(), 2, 2);
    let run = dir.path().join("run");
    let id = format!("{:x}", std::process::id() % 0xfff + 0x1000);
    let id = &id[id.len() - 4..];
    let _guard = Guard(run.clone());
    let o = netsparse(&[
        "topo",
        "up",
        topo.to_str().unwrap(),
        "--run-dir",
        run.to_str().unwrap(),
        "--run-id",
        id,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(namespaces_of(id).len(), 8, "4 hosts + 2 ToRs + 2 spines");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["status"], "up");
    let pids: Vec<u64> = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "process")
        .map(|r| r["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids.len(), 4);
    // Jumbo MTU on the links.
    let mtu = Command::new("ip")
        .args([
            "-n",
            &format!("ns{id}-h0"),
            "link",
            "show",
            &format!("{id}-h0-p0"),
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&mtu.stdout).contains("mtu 9000"));

    // Every host sends one datagram to every other host.
    let socks: Vec<UdpSocket> = (0..4)
        .map(|n| {
            let s = udp_in(&format!("ns{id}-h{n}"), &format!("10.0.0.{}:7000", n + 1));
            s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
            s
        })
        .collect();
    for (a, s) in socks.iter().enumerate() {
        for b in 0..4 {
            if a != b {
                let msg = format!("{a}->{b}");
                s.send_to(msg.as_bytes(), format!("10.0.0.{}:7000", b + 1))
                    .unwrap();
            }
        }
    }
    let mut buf = [0u8; 64];
    for (b, s) in socks.iter().enumerate() {
        let mut got = Vec::new();
        for _ in 0..3 {
            let (n, from) = s.recv_from(&mut buf).expect("a datagram within 3 s");
            got.push((String::from_utf8_lossy(&buf[..n]).into_owned(), from));
        }
        got.sort();
        let want: Vec<String> = (0..4)
            .filter(|&a| a != b)
            .map(|a| format!("{a}->{b}"))
            .collect();
        assert_eq!(got.iter().map(|g| g.0.clone()).collect::<Vec<_>>(), want);
        for (m, from) in &got {
            let a: usize = m[..1].parse().unwrap();
            assert_eq!(from.ip().to_string(), format!("10.0.0.{}", a + 1));
        }
    }
    // SIGUSR1 makes a switch write its counters.
    let tor0 = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["node"] == "tor0")
        .unwrap()["pid"]
        .as_i64()
        .unwrap();
    assert!(netsparse_bmv2::drivers::send_signal(
        u32::try_from(tor0).unwrap(),
        netsparse_bmv2::drivers::Sig::Usr1
    ));
    let stats = run.join("tor0/stats.json");
    let mut doc = Value::Null;
    for _ in 0..200 {
        if let Ok(t) = std::fs::read_to_string(&stats) {
            doc = serde_json::from_str(&t).unwrap_or(Value::Null);
            if !doc.is_null() {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let rx: u64 = doc["driver"]["ports"]
        .as_array()
        .expect("stats.json with driver ports")
        .iter()
        .map(|p| p["rx_frames"].as_u64().unwrap())
        .sum();
    // tor0 sees h0's and h1's 6 datagrams, and the 4 from rack 1 to rack 0.
    assert!(rx >= 10, "{doc}");

    let o = netsparse(&["topo", "down", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(namespaces_of(id).is_empty(), "{:?}", namespaces_of(id));
    for p in pids {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next().map(str::to_owned));
        assert!(
            state.is_none() || state.as_deref() == Some("Z"),
            "process {p} still running"
        );
    }
    assert!(live_processes_with(&format!("{id}-tor0-p0")).is_empty());
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&links.stdout).contains(&format!("{id}-")));
    // pcaps were recorded per switch port, flushed at exit.
    assert!(
        std::fs::metadata(run.join(format!("tor0/pcap/{id}-tor0-p0_in.pcap")))
            .unwrap()
            .len()
            > 24
    );
    // Idempotent.
    let o = netsparse(&["topo", "down", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("stopped 0 processes"));
}

/// A one-switch topology with `links`, written to `dir/<file>`.
fn small(dir: &Path, file: &str, program: &str, links: &str, extra_switch: &str) -> PathBuf {
    let t = format!(
        r#"{{"hosts": {{"h1": {{"ip": "10.0.1.1/24"}}, "h2": {{"ip": "10.0.2.2/24"}}}},
            "switches": {{"s1": {{"program": "{program}" {extra_switch}}}}},
            "links": {links}}}"#
    );
    let f = dir.join(file);
    std::fs::write(&f, t).unwrap();
    f
}

#[test]
fn bad_topologies_are_rejected_before_anything_exists() {
    if let Some(why) = skip_reason() {
        println!("skipping: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prog = root().join("programs/ipv4_forward.p4");
    let prog = prog.to_str().unwrap();
    let id = format!("{:x}", (std::process::id() + 7) % 0xfff + 0x2000);
    let id = &id[id.len() - 4..];
    let ok_links = r#"[["h1", "s1-p1"], ["h2", "s1-p2"]]"#;
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            small(
                dir.path(),
                "case0.json",
                prog,
                r#"[["h1", "s1-p1"], ["h9", "s1-p2"]]"#,
                "",
            ),
            "h9",
        ),
        (
            small(
                dir.path(),
                "case1.json",
                prog,
                r#"[["h1", "s1-p1"], ["h2", "s1-p1"]]"#,
                "",
            ),
            "s1-p1",
        ),
        (
            small(
                dir.path(),
                "case2.json",
                "/no/such/program.p4",
                ok_links,
                "",
            ),
            "program.p4",
        ),
        (
            small(
                dir.path(),
                "case3.json",
                prog,
                ok_links,
                r#", "entries": "/no/such/entries.txt""#,
            ),
            "switches.s1.entries",
        ),
        (
            small(
                dir.path(),
                "case4.json",
                prog,
                r#"[["h1", "s1-p1"], ["h2", "s1-p2"],]"#,
                "",
            ),
            "case4.json",
        ),
    ];
    for (i, (f, want)) in cases.iter().enumerate() {
        let o = netsparse(&["topo", "up", f.to_str().unwrap(), "--run-id", id]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(want),
            "{}",
            text(&o)
        );
        assert!(namespaces_of(id).is_empty());
        assert!(!dir.path().join(format!("case{i}.run/state.json")).exists());
    }
    // A namespace of the run exists already.
    let good = small(dir.path(), "good.json", prog, ok_links, "");
    let taken = format!("ns{id}-h2");
    assert!(Command::new("ip")
        .args(["netns", "add", &taken])
        .status()
        .unwrap()
        .success());
    let o = netsparse(&["topo", "up", good.to_str().unwrap(), "--run-id", id]);
    let _ = Command::new("ip").args(["netns", "del", &taken]).status();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&taken),
        "{}",
        text(&o)
    );
    assert!(namespaces_of(id).is_empty(), "{:?}", namespaces_of(id));
    // An interface of the run exists already (in the root namespace).
    let iface = format!("{id}-s1-p2");
    assert!(Command::new("ip")
        .args([
            "link",
            "add",
            &iface,
            "type",
            "veth",
            "peer",
            "name",
            &format!("{id}-peer")
        ])
        .status()
        .unwrap()
        .success());
    let o = netsparse(&["topo", "up", good.to_str().unwrap(), "--run-id", id]);
    let _ = Command::new("ip").args(["link", "del", &iface]).status();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&iface),
        "{}",
        text(&o)
    );
    assert!(namespaces_of(id).is_empty());
    // Entries that do not apply to the program.
    let bad_entries = dir.path().join("bad.txt");
    std::fs::write(&bad_entries, "table_add MyIngress.no_such_table x 1 =>\n").unwrap();
    let f = small(
        dir.path(),
        "entries.json",
        prog,
        ok_links,
        &format!(r#", "entries": "{}""#, bad_entries.display()),
    );
    let o = netsparse(&["topo", "up", f.to_str().unwrap(), "--run-id", id]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("switches.s1.entries"),
        "{}",
        text(&o)
    );
    assert!(namespaces_of(id).is_empty());
}

#[test]
fn a_process_dying_during_up_undoes_everything() {
    if let Some(why) = skip_reason() {
        println!("skipping: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prog = root().join("programs/ipv4_forward.p4");
    let id = format!("{:x}", (std::process::id() + 13) % 0xfff + 0x3000);
    let id = &id[id.len() - 4..];
    // The switch rejects its arguments at start-up and exits.
    let f = small(
        dir.path(),
        "t.json",
        prog.to_str().unwrap(),
        r#"[["h1", "s1-p1"], ["h2", "s1-p2"]]"#,
        r#", "args": ["--max-frame", "not-a-number"]"#,
    );
    let _guard = Guard(dir.path().join("t.run"));
    let o = netsparse(&["topo", "up", f.to_str().unwrap(), "--run-id", id]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("s1: the switch process exited during `up`"),
        "{err}"
    );
    assert!(err.contains("not-a-number"), "the log tail is shown: {err}");
    assert!(namespaces_of(id).is_empty(), "{:?}", namespaces_of(id));
    let st: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("t.run/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(st["status"], "failed");
    assert_eq!(st["resources"].as_array().unwrap().len(), 0);
    // The run directory can be reused at once.
    let o = netsparse(&["topo", "down", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn down_after_up_was_killed_removes_everything() {
    if let Some(why) = skip_reason() {
        println!("skipping: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let topo = gen(dir.path(), 2, 2);
    let run = dir.path().join("run");
    let id = format!("{:x}", (std::process::id() + 19) % 0xfff + 0x6000);
    let id = &id[id.len() - 4..];
    let _guard = Guard(run.clone());
    let mut up = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(["topo", "up", topo.to_str().unwrap(), "--run-dir"])
        .arg(&run)
        .args(["--run-id", id])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Crash `up` (SIGKILL: no clean-up of its own) once it has started a
    // switch process, i.e. half-way: namespaces, links and processes exist.
    let end = std::time::Instant::now() + Duration::from_secs(60);
    let state = run.join("state.json");
    loop {
        let started = std::fs::read_to_string(&state)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|st| {
                st["resources"].as_array().is_some_and(|r| {
                    r.iter()
                        .any(|r| r["kind"] == "process" && r["pid"].is_u64())
                })
            });
        if started || std::time::Instant::now() > end {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    up.kill().unwrap();
    up.wait().unwrap();
    assert!(!namespaces_of(id).is_empty(), "up had created namespaces");
    let st: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    if st["status"] == "up" {
        println!("note: `up` finished before it was killed; `down` of a complete run was tested");
    }
    let o = netsparse(&["topo", "down", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(namespaces_of(id).is_empty(), "{:?}", namespaces_of(id));
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&links.stdout).contains(&format!("{id}-")));
    assert!(
        live_processes_with(&format!("{id}-tor0-p0")).is_empty(),
        "a switch process of the killed run is still running"
    );
    // Idempotent.
    let o = netsparse(&["topo", "down", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("stopped 0 processes"));
}
