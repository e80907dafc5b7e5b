//! The RIG extension end to end: what the compiler makes of NIC programs
//! (ablation defines, the package split) and a per-PR sub-control using the
//! RIG externs through copy-in/copy-out, run on the NIC.

mod nic_support;

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions};
use netsparse_externs::artifact::{Artifact, Package, Prim, Stmt};
use netsparse_nic::testing::{batch_commands, Gather};
use netsparse_nic::{CompletionStatus, Time};
use nic_support::{check_destination, nic_program, nics, remote};

fn prims(stmts: &[Stmt], out: &mut Vec<&'static str>) {
    for s in stmts {
        match s {
            Stmt::Prim(p) => out.push(match p {
                Prim::IdxFilterTest { .. } => "IdxFilterTest",
                Prim::IdxFilterSet { .. } => "IdxFilterSet",
                Prim::PendingContains { .. } => "PendingContains",
                Prim::PendingInsert { .. } => "PendingInsert",
                Prim::PendingComplete { .. } => "PendingComplete",
                Prim::HostRead { .. } => "HostRead",
                Prim::HostWrite { .. } => "HostWrite",
                _ => "other",
            }),
            Stmt::If {
                then, otherwise, ..
            } => {
                prims(then, out);
                prims(otherwise, out);
            }
            Stmt::Inlined { body, .. } => prims(body, out),
            Stmt::Switch { cases, default, .. } => {
                for c in cases {
                    prims(&c.body, out);
                }
                prims(default, out);
            }
            _ => {}
        }
    }
}

fn paths(a: &Artifact) -> (Vec<&'static str>, Vec<&'static str>, usize) {
    let Package::NetSparseNic(nic) = &a.package else {
        panic!("not a NIC artifact")
    };
    assert!(nic.host_to_net.path.per_packet.is_empty());
    let (mut h, mut n) = (Vec::new(), Vec::new());
    prims(&nic.host_to_net.path.per_pr, &mut h);
    prims(&nic.net_to_host.path.per_pr, &mut n);
    (h, n, nic.net_to_host.path.per_packet.len())
}

#[test]
fn the_shipped_nic_program_and_its_ablations() {
    let (h, n, per_packet) = paths(&nic_program(&[]));
    assert_eq!(h, ["IdxFilterTest", "PendingContains", "PendingInsert"]);
    assert_eq!(
        n,
        ["HostRead", "PendingComplete", "HostWrite", "IdxFilterSet"]
    );
    assert_eq!(per_packet, 1, "the misdelivery check");
    let (h, _, _) = paths(&nic_program(&["NS_NO_FILTER"]));
    assert_eq!(h, ["PendingContains", "PendingInsert"]);
    let (h, _, _) = paths(&nic_program(&["NS_NO_COALESCE"]));
    assert_eq!(h, ["IdxFilterTest", "PendingInsert"]);
    let (h, _, _) = paths(&nic_program(&["NS_NO_FILTER", "NS_NO_COALESCE"]));
    assert_eq!(h, ["PendingInsert"]);
    // The destination solver is an ordinary range table.
    let a = nic_program(&[]);
    let t = a
        .tables
        .iter()
        .find(|t| t.name.ends_with("dest_solver"))
        .unwrap();
    assert_eq!(t.keys.len(), 1);
    assert_eq!(
        t.keys[0].match_kind,
        netsparse_externs::artifact::MatchKind::Range
    );
    assert_eq!(t.keys[0].width, 64);
    // The artifact round-trips through JSON.
    assert_eq!(Artifact::from_json(&a.to_json()).unwrap(), a);
}

const SUB_CONTROL: &str = r#"
#include <core.p4>
#include <netsparse.p4>
/* The RIG externs in per-PR sub-controls, reached by copy-in/copy-out. */
control Issue(inout ns_pr_h pr, inout ns_pr_md_t md) {
    apply {
        PendingInsert(pr);
    }
}
control Retire(inout ns_pr_h pr, inout ns_pr_md_t md) {
    apply {
        if (PendingComplete(pr, md)) {
            HostWrite(pr, md);
            IdxFilterSet(pr.idx);
        }
        md.drop = true;
    }
}
control H2N(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    Issue() issue;
    action set_dst(bit<32> node) { md.dst = node; }
    table dest_solver {
        key = { pr.idx: range; }
        actions = { set_dst; NoAction; }
        default_action = NoAction();
    }
    apply {
        rig.outcome = NS_ISSUED;
        if (!pr.isValid()) {
            /* The firmware marks the PR header valid: never taken. */
            rig.outcome = 9;
        } else if (IdxFilterTest(pr.idx)) {
            rig.outcome = NS_FILTERED;
        } else if (PendingContains(pr.idx)) {
            rig.outcome = NS_COALESCED;
        } else {
            dest_solver.apply();
            if (md.dst == rig.node) {
                rig.outcome = NS_LOCAL;
            } else {
                issue.apply(pr, md);
            }
        }
        if (rig.outcome != NS_ISSUED) {
            md.drop = true;
        }
        Concatenate(pr, md);
    }
}
control N2H(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    Retire() retire;
    apply {
        Deconcatenate(pr, md);
        if (md.pr_type == NS_READ) {
            if (HostRead(pr, md)) {
                md.pr_type = NS_RESPONSE;
                md.dst = pr.src;
            } else {
                md.drop = true;
            }
        } else if (pr.isValid()) {
            retire.apply(pr, md);
        }
        Concatenate(pr, md);
    }
}
NetSparseNic(H2N(), N2H()) main;
"#;

#[test]
fn rig_externs_in_per_pr_sub_controls_see_their_copies() {
    let mut sources = SourceMap::new();
    let art = match compile_source(
        &mut sources,
        "sub_controls.p4",
        SUB_CONTROL,
        &CompileOptions::default(),
    ) {
        Ok(c) => c.artifact,
        Err(d) => panic!("{}", netsparse_compiler::diag::render_all(&d, &sources)),
    };
    let (h, n, _) = paths(&art);
    assert_eq!(h, ["IdxFilterTest", "PendingContains", "PendingInsert"]);
    assert_eq!(
        n,
        ["HostRead", "PendingComplete", "HostWrite", "IdxFilterSet"]
    );
    // Run it on both nodes: the request ids written into the sub-control's
    // copy of `pr` must reach the wire (copy-out), or nothing completes.
    let (idxs, bounds) = nic_support::matrix(128, 2, 4, 3);
    let mut net = nic_support::net::Net::new(
        Time::from_ns(450),
        nics(&art, &idxs, &bounds, 32, |c| c.watchdog_us = 200),
    );
    net.connect((0, 0), (1, 0));
    let cmds = idxs
        .iter()
        .map(|l| batch_commands(l.len() as u64, 1 << 20, 32))
        .collect();
    let mut g = Gather::new(cmds, true);
    assert!(g.run(&mut net, Time::from_ms(10)));
    for (i, nic) in net.nics().enumerate() {
        let (_, distinct) = remote(&idxs[i], &bounds, i);
        assert_eq!(g.completions[i][0].status, CompletionStatus::Success);
        assert_eq!(nic.stats().prs_issued, distinct.len() as u64);
        assert_eq!(nic.stats().responses_unknown, 0);
        assert_eq!(nic.stats().prs_dropped_other, 0);
        check_destination(nic, &distinct, 128, 32);
    }
}

/// The shipped NIC program with net_to_host's whole per-PR part moved into
/// one sub-control applied with `(pr, md, rig)`: the shape whose copies the
/// per-PR path runner elides.
fn wrapped_nic_program() -> String {
    let shipped = std::fs::read_to_string(nic_support::root().join("programs/netsparse_nic.p4"))
        .expect("programs/netsparse_nic.p4");
    let head = shipped
        .split("control NetToHost")
        .next()
        .expect("the shipped program has NetToHost");
    format!(
        r#"{head}
control Serve(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {{
    apply {{
        if (md.pr_type == NS_READ) {{
            if (HostRead(pr, md)) {{
                md.pr_type = NS_RESPONSE;
                md.dst = pr.src;
            }} else {{
                md.drop = true;
            }}
        }} else if (md.pr_type == NS_RESPONSE) {{
            if (PendingComplete(pr, md)) {{
                HostWrite(pr, md);
                IdxFilterSet(pr.idx);
            }}
            md.drop = true;
        }} else {{
            md.drop = true;
        }}
    }}
}}
control NetToHost(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {{
    Serve() serve;
    apply {{
        if (md.dst != rig.node) {{
            md.drop = true;
        }}
        Deconcatenate(pr, md);
        serve.apply(pr, md, rig);
        Concatenate(pr, md);
    }}
}}
NetSparseNic(HostToNet(), NetToHost()) main;
"#
    )
}

#[test]
fn an_elided_per_pr_sub_control_on_the_nic_gives_the_shipped_results() {
    let mut sources = SourceMap::new();
    let wrapped = match compile_source(
        &mut sources,
        "wrapped_nic.p4",
        &wrapped_nic_program(),
        &CompileOptions::default(),
    ) {
        Ok(c) => c.artifact,
        Err(d) => panic!("{}", netsparse_compiler::diag::render_all(&d, &sources)),
    };
    let shipped = nic_program(&[]);
    let (idxs, bounds) = nic_support::matrix(256, 2, 6, 11);
    let run = |art: &Artifact| {
        let mut net =
            nic_support::net::Net::new(Time::from_ns(450), nics(art, &idxs, &bounds, 32, |_| {}));
        net.connect((0, 0), (1, 0));
        let cmds = idxs
            .iter()
            .map(|l| batch_commands(l.len() as u64, 64, 32))
            .collect();
        let mut g = Gather::new(cmds, true);
        assert!(g.run(&mut net, Time::from_ms(10)));
        for (i, nic) in net.nics().enumerate() {
            let (_, distinct) = remote(&idxs[i], &bounds, i);
            check_destination(nic, &distinct, 256, 32);
        }
        let elided: Vec<[bool; 2]> = net.nics().map(|n| n.per_pr_copies_elided()).collect();
        let stats: Vec<_> = net.nics().map(|n| n.stats()).collect();
        (elided, stats, g.completions)
    };
    let (e_shipped, s_shipped, c_shipped) = run(&shipped);
    let (e_wrapped, s_wrapped, c_wrapped) = run(&wrapped);
    // The shipped program has nothing to elide; the wrapped one has its
    // net_to_host copies elided (rig is copied along with pr and md).
    assert_eq!(e_shipped, vec![[false, false]; 2]);
    assert_eq!(e_wrapped, vec![[false, true]; 2]);
    assert_eq!(s_wrapped, s_shipped);
    assert_eq!(c_wrapped, c_shipped);
    assert!(s_shipped.iter().all(|s| s.properties_written > 0));
}
