//! Four NetSparse NICs behind one switch gather the remote properties of a
//! small sparse matrix (1D row partition), running the compiled
//! `programs/netsparse_nic.p4`. The switch is the simulator's plain
//! forwarding-by-node router (no Property Cache, no re-concatenation);
//! `nic_tor.rs` runs the gather behind the NetSparse ToR.

mod nic_support;

use netsparse::sim::devices::NodeRouter;
use netsparse_nic::testing::{batch_commands, Gather};
use netsparse_nic::{CompletionStatus, Time};
use nic_support::net::Net;
use nic_support::{check_destination, matrix, nic_program, nics, remote};

const PROP: u32 = 64;
const N: u64 = 512;

fn gather(
    defines: &[&str],
    serial: bool,
    batch: u64,
) -> (
    Vec<netsparse_nic::Nic>,
    Vec<Vec<u64>>,
    Vec<u64>,
    NodeRouter,
    Gather,
) {
    let art = nic_program(defines);
    let (idxs, bounds) = matrix(N, 4, 5, 11);
    let mut net = Net::new(Time::from_ns(450), nics(&art, &idxs, &bounds, PROP, |_| {}));
    // NIC n on router port n; the router is device 4.
    let router = net.add(Box::new(NodeRouter::new(vec![0, 1, 2, 3])), "router");
    for n in 0..4u32 {
        net.connect((n, 0), (router, n));
    }
    let cmds = idxs
        .iter()
        .map(|l| batch_commands(l.len() as u64, batch, PROP))
        .collect();
    let mut g = Gather::new(cmds, serial);
    assert!(g.run(&mut net, Time::from_ms(100)));
    let router = net.get::<NodeRouter>(router).clone();
    (net.into_nics(), idxs, bounds, router, g)
}

#[test]
fn four_nics_gather_every_remote_property_once_with_filtering() {
    let (nics, idxs, bounds, router, g) = gather(&[], true, 1 << 20);
    let mut total_issued = 0;
    for (n, nic) in nics.iter().enumerate() {
        let (remote_nnz, distinct) = remote(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert!(remote_nnz > distinct.len() as u64);
        assert_eq!(s.prs_issued, distinct.len() as u64, "node {n}");
        assert_eq!(s.idxs_read, idxs[n].len() as u64);
        assert_eq!(
            s.idxs_read,
            s.prs_filtered + s.prs_coalesced + s.prs_local + s.prs_issued
        );
        assert_eq!(s.responses_received, s.prs_issued);
        assert!(g.completions[n]
            .iter()
            .all(|c| c.status == CompletionStatus::Success));
        check_destination(nic, &distinct, N, PROP);
        total_issued += s.prs_issued;
    }
    // Every read was served by its owner, every response routed back.
    let served: u64 = nics.iter().map(|n| n.stats().reads_served).sum();
    assert_eq!(served, total_issued);
    assert_eq!(router.unroutable, 0);
    let sent: u64 = nics.iter().map(|n| n.stats().tx_packets).sum();
    assert_eq!(router.forwarded, sent);
}

#[test]
fn four_nics_without_filtering_or_coalescing_request_every_remote_nonzero() {
    let (nics, idxs, bounds, _, g) = gather(&["NS_NO_FILTER", "NS_NO_COALESCE"], true, 1 << 20);
    for (n, nic) in nics.iter().enumerate() {
        let (remote_nnz, distinct) = remote(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert_eq!(s.prs_issued, remote_nnz, "node {n}");
        assert_eq!((s.prs_filtered, s.prs_coalesced), (0, 0));
        assert!(g.completions[n]
            .iter()
            .all(|c| c.status == CompletionStatus::Success));
        check_destination(nic, &distinct, N, PROP);
    }
}

#[test]
fn four_nics_with_concurrent_batches() {
    let (nics, idxs, bounds, _, g) = gather(&[], false, 100);
    for (n, nic) in nics.iter().enumerate() {
        let (remote_nnz, distinct) = remote(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert_eq!(g.completions[n].len(), idxs[n].len().div_ceil(100));
        assert!(g.completions[n]
            .iter()
            .all(|c| c.status == CompletionStatus::Success));
        assert!(s.prs_issued >= distinct.len() as u64 && s.prs_issued <= remote_nnz);
        assert_eq!(s.idxs_read, s.idxs_accounted());
        check_destination(nic, &distinct, N, PROP);
    }
}
