//! `netsparse topo gather` over a live 2-rack, 4-host leaf-spine (needs
//! root and iproute2; otherwise the tests print why and return).
//!
//! * With the NetSparse rack (`topo gen leaf-spine --netsparse`: ToRs run
//!   `netsparse_tor.p4` in the multi-pipe switch, spines
//!   `netsparse_spine.p4`, every host a `netsparse_nic.p4` endpoint): every
//!   switch serves P4Runtime (its `grpc_addr` in `state.json`); every
//!   gathered property is right in three gathers on the running rack; the
//!   first and third invalidate the ToR caches over P4Runtime first (tor0's
//!   invalidation counter moves), the second (`--keep-caches`) does not and
//!   at least one of its reads was answered by a ToR's Property Cache; PRs
//!   were concatenated (more than one PR per packet),
//!   `topo down` leaves nothing behind (namespaces, links, processes), and
//!   tshark with `tools/netsparse.lua` decodes tor0's captures of the run
//!   (when tshark is installed).
//! * With `ipv4_forward.p4` switches (plain routers; no cache): every
//!   property is right and the NICs concatenate.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod topo_support;
use topo_support::{netsparse, root, skip_reason, text, Guard};

fn namespaces_of(id: &str) -> usize {
    let tag = format!("ns{id}-");
    std::fs::read_dir("/var/run/netns")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&tag))
                .count()
        })
        .unwrap_or(0)
}

/// The pids `topo up` recorded in the run's state file.
fn recorded_pids(run: &Path) -> Vec<u32> {
    let st: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    st["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "process")
        .map(|r| {
            // Every switch serves P4Runtime inside its namespace.
            assert_eq!(r["grpc_addr"], "127.0.0.1:9559", "{r}");
            r["pid"].as_u64().unwrap() as u32
        })
        .collect()
}

/// Whether `pid` exists and is not a zombie (this machine's init does not
/// reap orphans, so a stopped daemon may linger as a zombie).
fn running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        .is_some_and(|s| s != "Z")
}

/// A small R-MAT matrix (skewed: hub columns are read by several hosts).
fn matrix(dir: &Path) -> PathBuf {
    let m = dir.join("m.mtx");
    let o = netsparse(&[
        "matrix",
        "gen",
        "rmat",
        "--scale",
        "8",
        "--edge-factor",
        "4",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    m
}

/// Up, gather once per entry of `rounds` (its extra `topo gather`
/// arguments), down; returns each gather's JSON report, with tor0's
/// counters as the gather left them under `"_tor0_stats"` (if it has them).
fn run_gather(dir: &Path, id: &str, gen_args: &[&str], rounds: &[&[&str]]) -> Vec<Value> {
    let topo = dir.join("ls.json");
    let programs = root().join("programs");
    let mut args = vec![
        "topo",
        "gen",
        "leaf-spine",
        "--racks",
        "2",
        "--hosts",
        "2",
        "--programs",
        programs.to_str().unwrap(),
        "-o",
        topo.to_str().unwrap(),
    ];
    args.extend(gen_args);
    let o = netsparse(&args);
    assert!(o.status.success(), "{}", text(&o));
    let run = dir.join("run");
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
    let m = matrix(dir);
    let mut reports = Vec::new();
    for (round, extra) in rounds.iter().enumerate() {
        let json = dir.join(format!("gather{round}.json"));
        let mut args = vec![
            "topo",
            "gather",
            topo.to_str().unwrap(),
            "--run-dir",
            run.to_str().unwrap(),
            "--matrix",
            m.to_str().unwrap(),
            "--k",
            "16",
            "--batch",
            "64",
            "--timeout",
            "30",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = netsparse(&args);
        let out = text(&o);
        assert!(o.status.success(), "{out}");
        assert!(out.contains("remote properties verified"), "{out}");
        let mut rep: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        if let Ok(t) = std::fs::read_to_string(run.join("tor0/stats.json")) {
            rep["_tor0_stats"] = serde_json::from_str(&t).unwrap();
        }
        reports.push(rep);
    }
    let pids = recorded_pids(&run);
    assert_eq!(pids.len(), 4, "one process per switch");
    let o = netsparse(&["topo", "down", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    for p in pids {
        assert!(!running(p), "process {p} still running after `topo down`");
    }
    assert_eq!(namespaces_of(id), 0);
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&links.stdout).contains(&format!("{id}-")));
    reports
}

/// Checks every report shares: all verified, counts add up, concatenation.
fn check_common(rep: &Value) {
    assert_eq!(rep["ok"], true);
    let nodes = rep["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    let mut remote = 0;
    for n in nodes {
        assert_eq!(n["verified"], n["remote"], "{n}");
        assert!(n["failures"].as_array().unwrap().is_empty(), "{n}");
        let nic = &n["nic"];
        let read = nic["idxs_read"].as_u64().unwrap();
        let parts: u64 = [
            "prs_filtered",
            "prs_coalesced",
            "prs_local",
            "prs_unroutable",
            "prs_dropped_other",
            "prs_issued",
        ]
        .iter()
        .map(|k| nic[k].as_u64().unwrap())
        .sum();
        assert_eq!(read, parts, "{nic}");
        assert_eq!(read, n["idxs"].as_u64().unwrap());
        remote += n["remote"].as_u64().unwrap();
    }
    assert!(remote > 100, "the matrix has remote nonzeros: {remote}");
    let (prs, pkts) = nodes.iter().fold((0, 0), |(p, k), n| {
        (
            p + n["nic"]["tx_prs"].as_u64().unwrap(),
            k + n["nic"]["tx_packets"].as_u64().unwrap(),
        )
    });
    assert!(
        prs > pkts,
        "PRs were concatenated: {prs} PRs in {pkts} packets"
    );
}

#[test]
fn gather_over_ipv4_routers() {
    if let Some(why) = skip_reason() {
        println!("skipping: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let id = format!("{:x}", std::process::id() % 0xfff + 0x4000);
    let nic = root().join("programs/netsparse_nic.p4");
    let rep = run_gather(
        dir.path(),
        &id[id.len() - 4..],
        &["--nic-program", nic.to_str().unwrap()],
        &[&[]],
    )
    .remove(0);
    check_common(&rep);
    // Routers serve P4Runtime too, but have no Property Cache to invalidate.
    assert_eq!(rep["caches_invalidated"], serde_json::json!([]), "{rep}");
    // Plain routers forward every frame; they have no cache.
    for s in rep["switches"].as_array().unwrap() {
        assert_eq!(s["cache_hits"], 0);
        assert_eq!(s["frames"][0], s["frames"][1], "{s}");
    }
}

#[test]
fn gather_over_netsparse_rack_hits_the_tor_cache() {
    if let Some(why) = skip_reason() {
        println!("skipping: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let id = format!("{:x}", std::process::id() % 0xfff + 0x5000);
    // Three gathers of the same matrix on one running rack. Each gather
    // first invalidates the ToR caches over P4Runtime (`topo up` gave every
    // switch an address), except with --keep-caches: whether a read of a
    // cold round meets a cached response depends on the live timing, but
    // the warm round's reads find the previous round's responses.
    let reps = run_gather(
        dir.path(),
        &id[id.len() - 4..],
        &["--netsparse", "--k", "16"],
        &[&[], &["--keep-caches"], &[]],
    );
    for rep in &reps {
        check_common(rep);
    }
    let invalidations =
        |r: &Value| r["_tor0_stats"]["switch"]["total"]["cache"]["invalidations"].as_u64();
    let inv: Vec<u64> = reps
        .iter()
        .map(|r| invalidations(r).unwrap_or_else(|| panic!("tor0 counters: {r}")))
        .collect();
    let listed = |r: &Value| {
        r["caches_invalidated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e[0].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(listed(&reps[0]).contains(&"tor0".to_owned()), "{}", reps[0]);
    assert!(listed(&reps[0]).contains(&"tor1".to_owned()), "{}", reps[0]);
    assert!(inv[0] >= 1, "tor0's caches were invalidated: {inv:?}");
    assert!(listed(&reps[1]).is_empty(), "--keep-caches: {}", reps[1]);
    assert_eq!(inv[1], inv[0], "--keep-caches invalidates nothing");
    assert!(
        inv[2] > inv[1],
        "the third gather invalidates again: {inv:?}"
    );
    let rep = &reps[1];
    let tor_hits: u64 = rep["switches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("tor"))
        .map(|s| s["cache_hits"].as_u64().unwrap())
        .sum();
    assert!(tor_hits >= 1, "no read was served by a ToR cache: {rep}");
    // Responses reach the NICs concatenated too.
    let (prs, pkts) = rep["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .fold((0, 0), |(p, k), n| {
            (
                p + n["nic"]["rx_prs"].as_u64().unwrap(),
                k + n["nic"]["rx_packets"].as_u64().unwrap(),
            )
        });
    assert!(prs > pkts, "{prs} PRs in {pkts} packets");
    dissect_tor_capture(&dir.path().join("run/tor0/pcap"));
}

/// tshark with `tools/netsparse.lua` decodes the ToR's captures of the run:
/// reads and responses, each packet's PR idx list as long as its count,
/// and some packets with more than one PR. Skipped (saying so) only when
/// tshark is not installed.
fn dissect_tor_capture(pcaps: &Path) {
    if let Err(e) = Command::new("tshark").arg("--version").output() {
        println!("skipping the capture dissection: tshark: {e}");
        return;
    }
    let script = root().join("tools/netsparse.lua");
    let mut types = std::collections::BTreeSet::new();
    let (mut packets, mut concatenated) = (0, 0);
    let mut files: Vec<PathBuf> = std::fs::read_dir(pcaps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("_in.pcap"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no captures in {}", pcaps.display());
    for f in files {
        let o = Command::new("tshark")
            .arg("-n")
            .arg("-X")
            .arg(format!("lua_script:{}", script.display()))
            .arg("-r")
            .arg(&f)
            .args(["-Y", "netsparse", "-T", "fields", "-E", "separator=|"])
            .args(["-e", "netsparse.type", "-e", "netsparse.num_prs"])
            .args(["-e", "netsparse.pr.idx"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert!(!String::from_utf8_lossy(&o.stderr).contains("Lua: Error"));
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let v: Vec<&str> = line.split('|').collect();
            assert_eq!(v.len(), 3, "{line}");
            let n: usize = v[1].parse().unwrap();
            assert_eq!(v[2].split(',').count(), n, "{line}");
            types.insert(v[0].to_owned());
            packets += 1;
            concatenated += usize::from(n > 1);
        }
    }
    assert!(
        packets > 0,
        "no NetSparse packet decoded in {}",
        pcaps.display()
    );
    assert!(concatenated > 0, "no packet with more than one PR");
    assert_eq!(types.into_iter().collect::<Vec<_>>(), ["1", "2"]);
}
