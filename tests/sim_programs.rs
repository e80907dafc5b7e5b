//! `netsparse sim --nic-program / --tor-program / --spine-program`: a
//! user's P4 program in place of a bundled one, end to end through the
//! binary. The bundled text given as a file changes nothing; an edit to it
//! moves what it should; a program that cannot run is refused with its
//! file named, before the matrix is generated; and the libraries' warnings
//! (a failing `assert` in the program) reach stderr, their repeats capped.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod sim_support;
use sim_support::{run, text};

/// A bundled program's text, from the repository.
fn bundled(file: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("programs")
        .join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Write `text` to `dir/name` and give the path as a string.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let p: PathBuf = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_owned()
}

const SMALL: [&str; 7] = [
    "--gen",
    "rmat:scale=11,ef=6",
    "--nodes",
    "16",
    "--racks",
    "2",
    "-q",
];

/// The JSON report of a run of `modes` with `extra` flags; asserts exit 0.
fn report(dir: &Path, name: &str, modes: &str, extra: &[&str]) -> Value {
    let json = dir.join(name);
    let mut args = vec!["sim", "--mode", modes, "--json", json.to_str().unwrap()];
    args.extend(SMALL);
    args.extend(extra);
    let o = run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The report's modes without the wall-clock measurements of the run.
fn simulated(r: &Value) -> Vec<Value> {
    let mut modes = r["modes"].as_array().unwrap().clone();
    for m in &mut modes {
        m.as_object_mut().unwrap().remove("run");
    }
    modes
}

/// 64-bit FNV-1a, hex: counted here independently of the tool.
fn fnv(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[test]
fn the_bundled_programs_given_as_files_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let nic = write(dir.path(), "nic.p4", &bundled("netsparse_nic.p4"));
    let tor = write(dir.path(), "tor.p4", &bundled("netsparse_tor.p4"));
    let spine = write(dir.path(), "spine.p4", &bundled("netsparse_spine.p4"));
    // rig compiles the NIC program with -D NS_NO_FILTER -D NS_NO_COALESCE,
    // +coalesce without them: the user's file gets the same defines.
    let modes = "rig,+coalesce,netsparse";
    let base = report(dir.path(), "a.json", modes, &[]);
    let user = report(
        dir.path(),
        "b.json",
        modes,
        &[
            "--nic-program",
            &nic,
            "--tor-program",
            &tor,
            "--spine-program",
            &spine,
        ],
    );
    assert_eq!(simulated(&base), simulated(&user));
    assert!(base.get("programs").is_none(), "{base}");
    let progs = user["programs"].as_array().unwrap();
    let roles: Vec<&str> = progs.iter().map(|p| p["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["NIC", "ToR", "spine"]);
    for (p, (file, path)) in progs.iter().zip([
        ("netsparse_nic.p4", &nic),
        ("netsparse_tor.p4", &tor),
        ("netsparse_spine.p4", &spine),
    ]) {
        assert_eq!(p["file"], path.as_str());
        assert_eq!(p["bundled"], format!("programs/{file}"));
        assert_eq!(p["digest"], fnv(&bundled(file)));
    }
    for m in user["modes"].as_array().unwrap() {
        let v = &m["verification"];
        assert_eq!(v["ok"], v["needed"], "{m}");
    }
}

#[test]
fn a_tor_program_without_insert_caches_nothing_and_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let original = bundled("netsparse_tor.p4");
    let edited = original.replacen("            Insert(pr, md);", "", 1);
    assert_ne!(
        edited, original,
        "the bundled ToR program no longer has the Insert this test removes"
    );
    let tor = write(dir.path(), "no_insert.p4", &edited);
    let base = report(dir.path(), "a.json", "netsparse", &[]);
    let json = dir.path().join("b.json");
    let mut args = vec![
        "sim",
        "--mode",
        "netsparse",
        "--tor-program",
        &tor,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(SMALL);
    let o = run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("netsparse: verified"), "{out}");
    assert!(
        out.contains(&format!("ToR program: {tor} (digest {})", fnv(&edited))),
        "{out}"
    );
    let user: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let hits = |r: &Value| r["modes"][0]["cache_hit_rate"].as_f64().unwrap();
    assert!(hits(&base) > 0.05, "{base}");
    assert_eq!(hits(&user), 0.0);
    // Without the cache every read crosses to its owner: the gather ends later.
    let tail = |r: &Value| {
        let m = &r["modes"][0];
        let t = m["tail"].as_u64().unwrap() as usize;
        m["nodes"][t]["time"].as_u64().unwrap()
    };
    assert!(
        tail(&user) > tail(&base),
        "{} vs {}",
        tail(&user),
        tail(&base)
    );
}

/// Run `sim` with `extra`; expect exit 2 and every one of `needles` in
/// stderr. The matrix is large enough that generating it would take many
/// seconds: the errors come first.
fn refused(extra: &[&str], needles: &[&str]) {
    let mut args = vec![
        "sim",
        "--gen",
        "rmat:scale=22,ef=5",
        "--nodes",
        "16",
        "--racks",
        "2",
        "-q",
    ];
    args.extend(extra);
    let o = run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}\n{out}\n{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: no {n:?} in\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn programs_that_cannot_run_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad = write(d, "bad.p4", "control X( {\n");
    refused(
        &["--mode", "netsparse", "--tor-program", &bad],
        &[
            &format!(
                "{bad} (the ToR program, in place of programs/netsparse_tor.p4) does not compile"
            ),
            "bad.p4:1:12",
        ],
    );
    // The variant rig compiles (-D NS_NO_FILTER) is checked up front too.
    let nic = bundled("netsparse_nic.p4");
    let only_filtered = write(
        d,
        "nic.p4",
        &format!("#ifdef NS_NO_FILTER\n#error this NIC needs its filter\n#endif\n{nic}"),
    );
    refused(
        &["--mode", "netsparse,rig", "--nic-program", &only_filtered],
        &[
            "does not compile with -D NS_NO_FILTER -D NS_NO_COALESCE",
            "needs its filter",
        ],
    );
    let spine = write(d, "spine.p4", &bundled("netsparse_spine.p4"));
    refused(
        &["--mode", "netsparse", "--tor-program", &spine],
        &["is a V1Model program; the ToR runs NetSparseSwitch programs"],
    );
    refused(
        &["--mode", "rig", "--tor-program", &spine],
        &["--tor-program: no selected mode runs the ToR program"],
    );
    let missing = d.join("missing.p4");
    refused(
        &[
            "--mode",
            "rig",
            "--spine-program",
            missing.to_str().unwrap(),
        ],
        &["--spine-program", "missing.p4: cannot read it"],
    );
    // A role the run has no device for is refused, naming what it runs.
    for (args, needle) in [
        (
            vec!["sim", "--workload", "w.toml", "--spine-program", &spine],
            "a --workload runs its sPIN handlers' own programs",
        ),
        (
            vec!["sim", "--collective", "allreduce", "--tor-program", &spine],
            "--tor-program: --collective runs no ToR program",
        ),
        (
            vec![
                "sim",
                "--kernel",
                "spmm2d",
                "--gen",
                "rmat:scale=22",
                "--nic-program",
                &spine,
            ],
            "--nic-program: --kernel spmm2d runs no NIC program",
        ),
    ] {
        let o = run(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// The spine program with every packet dropped on its way out.
fn dropping_spine() -> String {
    let text = bundled("netsparse_spine.p4");
    let anchor = "    apply {\n        port_mac.apply();\n    }";
    assert!(
        text.contains(anchor),
        "the spine program changed: update the anchor"
    );
    text.replacen(
        anchor,
        "    apply {\n        port_mac.apply();\n        mark_to_drop(standard_metadata);\n    }",
        1,
    )
}

/// `netsparse sim ARGS --json`: exit code, the JSON, stdout and stderr.
fn kernel_run(dir: &Path, name: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let json = dir.join(name);
    let mut all = vec!["sim", "--json", json.to_str().unwrap()];
    all.extend(args);
    let o = run(&all);
    let (out, err) = text(&o);
    assert!(!err.contains("panicked"), "{err}");
    let v = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (o.status.code(), v, out + &err)
}

#[test]
fn the_rdma_spmm_and_the_allreduce_run_the_users_switch_programs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tor = write(d, "tor.p4", &bundled("netsparse_tor.p4"));
    let spine = write(d, "spine.p4", &bundled("netsparse_spine.p4"));
    let drop = write(d, "drop.p4", &dropping_spine());
    let spmm: &[&str] = &[
        "--kernel",
        "spmm2d",
        "--gen",
        "rmat:scale=10,ef=4",
        "--nodes",
        "16",
        "--racks",
        "2",
        "--alg",
        "s-c",
    ];
    let coll: &[&str] = &["--collective", "allreduce"];
    for (kernel, base, files, results) in [
        (
            "spmm2d",
            spmm,
            vec![
                "--tor-program",
                tor.as_str(),
                "--spine-program",
                spine.as_str(),
            ],
            "/spmm2d/results",
        ),
        (
            "allreduce",
            coll,
            vec!["--spine-program", spine.as_str()],
            "/results",
        ),
    ] {
        // The bundled text as files: the same results, the files named.
        let (c0, bundled_run, _) = kernel_run(d, "a.json", base);
        let with = [base, files.as_slice()].concat();
        let (c1, users, out) = kernel_run(d, "b.json", &with);
        assert_eq!((c0, c1), (Some(0), Some(0)), "{kernel}: {out}");
        assert_eq!(
            bundled_run.pointer(results),
            users.pointer(results),
            "{kernel}"
        );
        assert!(bundled_run.pointer(results).is_some(), "{kernel}");
        let uses = users
            .pointer(results.rsplit_once('/').unwrap().0.to_owned().as_str())
            .and_then(|v| v.get("programs"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        assert_eq!(uses, files.len() / 2, "{kernel}: {users}");
        assert!(out.contains("spine program: "), "{kernel}: {out}");
        // A spine program that drops everything: nothing crosses the
        // fabric, and the run says so.
        let dropping = [base, &["--spine-program", drop.as_str()]].concat();
        let (code, v, out) = kernel_run(d, "c.json", &dropping);
        assert_eq!(code, Some(1), "{kernel}: {out}");
        let verified: Vec<bool> = v
            .pointer(results)
            .and_then(Value::as_array)
            .map(|rs| rs.iter().filter_map(|r| r["verified"].as_bool()).collect())
            .unwrap_or_default();
        assert!(
            !verified.is_empty() && verified.iter().all(|v| !v),
            "{kernel}: {v}"
        );
    }
    // A command on a key the simulator's control plane installs names the
    // switch and the line, before the matrix (a scale-22 generation would
    // take minutes).
    let dup = write(d, "dup.txt", "table_add node_port set_port 0 => 1\n");
    let big: Vec<&str> = spmm
        .iter()
        .map(|a| {
            if a.starts_with("rmat:") {
                "rmat:scale=22,ef=4"
            } else {
                a
            }
        })
        .collect();
    let with = [&big, &["--spine-commands", dup.as_str()][..]].concat();
    let (code, _, out) = kernel_run(d, "d.json", &with);
    assert_eq!(code, Some(2), "{out}");
    for n in [
        "spine0: the spine commands after the simulator's own entries",
        "dup.txt:1",
        "already has an entry",
    ] {
        assert!(out.contains(n), "no {n:?} in {out}");
    }
}

#[test]
fn a_tor_program_without_the_control_planes_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let renamed = bundled("netsparse_tor.p4").replace("node_port", "node_to_port");
    let tor = write(dir.path(), "renamed.p4", &renamed);
    let mut args = vec!["sim", "--mode", "netsparse", "--tor-program", &tor];
    args.extend(SMALL);
    let o = run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    for n in [
        "tor0: the control plane the simulator installs",
        "no table named `node_port`",
        "TorIngress.node_to_port",
    ] {
        assert!(err.contains(n), "no {n:?} in\n{err}");
    }
}

#[test]
fn a_failing_assert_is_shown_and_its_repeats_are_suppressed() {
    let dir = tempfile::tempdir().unwrap();
    let text_in = bundled("netsparse_spine.p4");
    let anchor = "        if (hdr.ipv4.isValid()) {\n            if (hdr.ipv4.ttl <= 1) {";
    assert!(
        text_in.contains(anchor),
        "the spine program changed: update the anchor"
    );
    let edited = text_in.replacen(
        anchor,
        &format!("        assert(hdr.ipv4.ttl > 250);\n{anchor}"),
        1,
    );
    let spine = write(dir.path(), "assert.p4", &edited);
    let mut args = vec!["sim", "--mode", "+nic-concat", "--spine-program", &spine];
    args.extend(SMALL);
    let o = run(&args);
    let (out, err) = text(&o);
    // Every PR is dropped at its first switch: the commands fail by their
    // watchdogs (at half the time limit), and the report says where the
    // PRs went.
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains("+nic-concat: VERIFICATION FAILED (0 of"),
        "{out}"
    );
    assert!(out.contains("+nic-concat: the switches dropped "), "{out}");
    assert!(out.contains(" (assert)"), "{out}");
    assert!(err.contains("failed: watchdog"), "{err}");
    let warnings = err.lines().filter(|l| l.contains("assert failed")).count();
    assert_eq!(warnings, 100, "{err}");
    assert!(
        err.contains("more than 100 log lines; the rest are suppressed"),
        "{err}"
    );
}

/// The spine program with a table of destinations to cut off, empty
/// unless `--spine-commands` fills it.
fn blocking_spine() -> String {
    let text = bundled("netsparse_spine.p4");
    let table = "    /* NetSparse packets: destination node -> port of its rack's ToR. */";
    let apply = "        if (hdr.concat.isValid()) {\n            if (!flow_port.apply().hit) {";
    assert!(
        text.contains(table) && text.contains(apply),
        "the spine program changed: update the anchors"
    );
    text.replacen(
        table,
        &format!(
            "    table block_node {{\n        key = {{ hdr.concat.dst: exact; }}\n        \
             actions = {{ drop; NoAction; }}\n        default_action = NoAction();\n    }}\n{table}"
        ),
        1,
    )
    .replacen(
        apply,
        "        if (hdr.concat.isValid()) {\n            block_node.apply();\n            \
         if (standard_metadata.egress_spec == 511) {\n                return;\n            }\n            \
         if (!flow_port.apply().hit) {",
        1,
    )
}

#[test]
fn commands_fill_a_users_table_after_the_simulators_control_plane() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spine = write(d, "block_spine.p4", &blocking_spine());
    let cut = write(
        d,
        "cut.txt",
        "# node 3 off\ntable_add SpineIngress.block_node drop 3 =>\n",
    );
    let mut args = vec!["sim", "--mode", "netsparse", "--spine-program", &spine];
    args.extend(SMALL);
    // The table empty: every PR arrives.
    let o = run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("netsparse: verified"), "{out}");
    // Node 3 cut off at the spines: the reads of the other rack for its
    // properties are dropped there, and the run says so.
    args.extend(["--spine-commands", cut.as_str()]);
    let o = run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(out.contains("netsparse: VERIFICATION FAILED"), "{out}");
    assert!(out.contains("(dropped by ingress)"), "{out}");
    assert!(
        out.contains(&format!("spine commands: {cut} (digest ")),
        "{out}"
    );
    // A command the program refuses: exit 2 before the matrix, with the
    // file and line.
    let bad = write(
        d,
        "bad.txt",
        "table_add SpineIngress.block_node drop 3 =>\ntable_add SpineIngress.no_such drop 1 =>\n",
    );
    refused(
        &[
            "--mode",
            "netsparse",
            "--spine-program",
            &spine,
            "--spine-commands",
            &bad,
        ],
        &[
            "the spine commands do not fit the spine program",
            "bad.txt:2: no table named `SpineIngress.no_such`",
        ],
    );
    refused(
        &["--mode", "rig", "--tor-commands", &cut],
        &["--tor-commands: no selected mode runs the ToR program"],
    );
}

#[test]
fn switch_commands_that_collide_with_the_simulators_entries_are_refused_before_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The simulator's control plane already routes node 0 on every spine
    // (and on the v1model ToRs of the modes before `netsparse`).
    let dup = write(
        d,
        "dup.txt",
        "# node 0 elsewhere\ntable_add node_port set_port 0 => 1\n",
    );
    for (mode, first) in [("rig", "tor0: "), ("netsparse", "spine0: ")] {
        refused(
            &["--mode", mode, "--spine-commands", &dup],
            &[
                first,
                "the spine commands after the simulator's own entries",
                "dup.txt:2",
                "already has an entry",
            ],
        );
    }
}

#[test]
fn switch_commands_are_checked_on_every_point_of_a_sweep_before_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Node 20 is not in the base topology's 16 nodes, so the entry is new
    // there; the sweep's 32-node point routes node 20 itself.
    let late = write(
        d,
        "late.txt",
        "# node 20 elsewhere\ntable_add node_port set_port 20 => 1\n",
    );
    refused(
        &[
            "--mode",
            "netsparse",
            "--spine-commands",
            &late,
            "--sweep",
            "nodes=16,32",
        ],
        &[
            "--sweep nodes=32",
            "spine0: ",
            "late.txt:2",
            "already has an entry",
        ],
    );
}

#[test]
fn a_bad_sweep_value_is_refused_before_the_matrix() {
    for (sweep, needle) in [
        (
            "nodes=16,abc",
            "--sweep nodes=abc: nodes = abc is out of range",
        ),
        ("nodes=16,24", "--sweep nodes=24"),
        ("=16,24", "--sweep \"=16,24\": no parameter before '='"),
    ] {
        refused(&["--mode", "netsparse", "--sweep", sweep], &[needle]);
    }
}

/// The NIC program with a table of nodes whose Idx Filter is off, empty
/// unless `--nic-commands` fills it.
fn filter_policy_nic() -> String {
    let text = bundled("netsparse_nic.p4");
    let table = "    /* The destination solver (Figure 5): one entry per node,";
    let apply = "        rig.outcome = NS_ISSUED;\n#ifndef NS_NO_FILTER\n        if (IdxFilterTest(pr.idx)) {";
    assert!(
        text.contains(table) && text.contains(apply),
        "the NIC program changed: update the anchors"
    );
    text.replacen(
        table,
        &format!(
            "    bool filter_on = true;\n    action filter_off() {{\n        filter_on = false;\n    }}\n    \
             table filter_policy {{\n        key = {{ rig.node: exact; }}\n        \
             actions = {{ filter_off; NoAction; }}\n        default_action = NoAction();\n        \
             size = 256;\n    }}\n{table}"
        ),
        1,
    )
    .replacen(
        apply,
        "        rig.outcome = NS_ISSUED;\n        filter_policy.apply();\n#ifndef NS_NO_FILTER\n        \
         if (filter_on && IdxFilterTest(pr.idx)) {",
        1,
    )
}

#[test]
fn nic_commands_fill_a_users_nic_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let nic = write(d, "policy_nic.p4", &filter_policy_nic());
    let mut every: String = "# the Idx Filter off on every node\n".into();
    for n in 0..16 {
        every += &format!("table_add HostToNet.filter_policy filter_off {n} =>\n");
    }
    let off = write(d, "off.txt", &every);
    // +filter: the Idx Filter without the Pending PR Table.
    let base = report(d, "a.json", "+filter", &[]);
    // The table empty: the bundled program's results.
    let empty = report(d, "b.json", "+filter", &["--nic-program", &nic]);
    assert_eq!(simulated(&base), simulated(&empty));
    // The filter off everywhere by table entries: the run is rig's, one
    // read per remote nonzero, event for event.
    let rig = report(d, "c.json", "rig", &[]);
    let filled = report(
        d,
        "d.json",
        "+filter",
        &["--nic-program", &nic, "--nic-commands", &off],
    );
    let (r, f) = (&rig["modes"][0], &filled["modes"][0]);
    for key in ["prs_issued", "events", "idxs"] {
        assert_eq!(r["run"][key], f["run"][key], "{key}");
    }
    assert_eq!(r["tail"], f["tail"]);
    assert!(
        f["run"]["prs_issued"].as_u64() > base["modes"][0]["run"]["prs_issued"].as_u64(),
        "{filled}"
    );
    let v = &f["verification"];
    assert_eq!(v["ok"], v["needed"], "{v}");
    let uses = filled["commands"].as_array().unwrap();
    assert_eq!(uses.len(), 1, "{filled}");
    assert_eq!(uses[0]["role"], "NIC");
    assert_eq!(uses[0]["file"], off.as_str());
    assert_eq!(uses[0]["digest"], fnv(&every));
    // A table the program does not have: exit 2 before the matrix.
    let bad = write(
        d,
        "bad.txt",
        "table_add HostToNet.no_such filter_off 1 =>\n",
    );
    refused(
        &[
            "--mode",
            "+filter",
            "--nic-program",
            &nic,
            "--nic-commands",
            &bad,
        ],
        &[
            "the NIC commands do not fit the NIC program",
            "bad.txt:1: no table named `HostToNet.no_such`",
        ],
    );
}
