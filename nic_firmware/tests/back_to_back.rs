//! Two NICs back to back gather the remote properties of a small sparse
//! matrix with a 1D row partition, running the compiled netsparse_nic.p4.

mod common;

use common::net::Net;
use common::{check_destination, expected, matrix, nic_program, nics};
use netsparse_nic::testing::{batch_commands, Gather};
use netsparse_nic::{CompletionStatus, NicConfig, Time};

const PROP: u32 = 64;

fn run(
    defines: &[&str],
    serial: bool,
    batch: u64,
    tweak: impl Fn(&mut NicConfig),
) -> (Vec<netsparse_nic::Nic>, Vec<Vec<u64>>, Vec<u64>, Gather) {
    let art = nic_program(defines);
    let (idxs, bounds) = matrix(256, 2, 6, 7);
    let mut net = Net::new(Time::from_ns(450), nics(&art, &idxs, &bounds, PROP, tweak));
    net.connect((0, 0), (1, 0));
    let cmds = idxs
        .iter()
        .map(|l| batch_commands(l.len() as u64, batch, PROP))
        .collect();
    let mut g = Gather::new(cmds, serial);
    assert!(
        g.run(&mut net, Time::from_ms(50)),
        "the gather did not finish"
    );
    (net.into_nics(), idxs, bounds, g)
}

#[test]
fn filtering_and_coalescing_issue_one_pr_per_distinct_remote_idx() {
    let (nics, idxs, bounds, g) = run(&[], true, 1 << 20, |_| {});
    for (n, nic) in nics.iter().enumerate() {
        let e = expected(&idxs[n], &bounds, n);
        assert!(
            e.remote > e.distinct_remote.len() as u64,
            "the matrix repeats remote idxs"
        );
        let s = nic.stats();
        assert_eq!(s.idxs_read, e.nnz);
        assert_eq!(s.prs_local, e.local);
        assert_eq!(s.prs_issued, e.distinct_remote.len() as u64, "node {n}");
        assert_eq!(
            s.prs_filtered + s.prs_coalesced,
            e.remote - e.distinct_remote.len() as u64
        );
        assert_eq!(
            s.idxs_read,
            s.prs_filtered + s.prs_coalesced + s.prs_local + s.prs_issued
        );
        assert_eq!(s.prs_unroutable + s.prs_dropped_other + s.program_errors, 0);
        assert_eq!(s.responses_received, s.prs_issued);
        assert_eq!(s.properties_written, s.prs_issued);
        assert_eq!((s.commands_completed, s.commands_failed), (1, 0));
        assert_eq!(g.completions[n].len(), 1);
        let c = &g.completions[n][0];
        assert_eq!(c.status, CompletionStatus::Success);
        assert!(!c.dest_invalid);
        assert_eq!(c.stats.issued, s.prs_issued);
        assert!(c.at > c.stats.started_at);
        check_destination(nic, &e.distinct_remote, 256, PROP);
        // The other node served exactly these reads.
        let other = nics[1 - n].stats();
        assert_eq!(other.reads_outside_slice, 0);
    }
    let served: u64 = nics.iter().map(|n| n.stats().reads_served).sum();
    let issued: u64 = nics.iter().map(|n| n.stats().prs_issued).sum();
    assert_eq!(served, issued);
    // NIC concatenation: more than one PR per packet on average.
    assert!(
        nics[0].stats().prs_per_packet_out() > 1.5,
        "{}",
        nics[0].stats().summary()
    );
}

#[test]
fn without_filtering_and_coalescing_every_remote_nonzero_is_requested() {
    let (nics, idxs, bounds, _) = run(&["NS_NO_FILTER", "NS_NO_COALESCE"], true, 1 << 20, |_| {});
    for (n, nic) in nics.iter().enumerate() {
        let e = expected(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert_eq!(s.prs_issued, e.remote, "node {n}");
        assert_eq!((s.prs_filtered, s.prs_coalesced), (0, 0));
        assert_eq!(s.prs_local, e.local);
        assert_eq!(s.responses_received, e.remote);
        check_destination(nic, &e.distinct_remote, 256, PROP);
    }
}

#[test]
fn the_filter_works_across_serialised_commands() {
    // Small RIG batches, one after another, on different units.
    let (nics, idxs, bounds, g) = run(&[], true, 50, |_| {});
    for (n, nic) in nics.iter().enumerate() {
        let e = expected(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert_eq!(g.completions[n].len(), idxs[n].len().div_ceil(50));
        assert!(g.completions[n]
            .iter()
            .all(|c| c.status == CompletionStatus::Success));
        assert_eq!(s.prs_issued, e.distinct_remote.len() as u64);
        // One command at a time: each goes to the least loaded unit, 0.
        assert!(g.completions[n].iter().all(|c| c.stats.unit == 0));
        let per_cmd: u64 = g.completions[n].iter().map(|c| c.stats.issued).sum();
        assert_eq!(per_cmd, s.prs_issued);
        check_destination(nic, &e.distinct_remote, 256, PROP);
    }
}

#[test]
fn concurrent_commands_complete_and_counters_add_up() {
    let (nics, idxs, bounds, g) = run(&[], false, 40, |c| c.pending_entries = 4);
    for (n, nic) in nics.iter().enumerate() {
        let e = expected(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert!(g.completions[n]
            .iter()
            .all(|c| c.status == CompletionStatus::Success));
        let units: std::collections::BTreeSet<u16> =
            g.completions[n].iter().map(|c| c.stats.unit).collect();
        assert!(units.len() > 1, "commands spread over client units");
        // Concurrent units may both request an idx before either response.
        assert!(s.prs_issued >= e.distinct_remote.len() as u64);
        assert!(s.prs_issued <= e.remote);
        assert_eq!(s.idxs_read, s.idxs_accounted());
        assert_eq!(s.responses_received, s.prs_issued);
        // Four pending entries per unit: units stalled, nothing was dropped.
        assert!(s.stall_cycles_pending > 0, "{}", s.summary());
        check_destination(nic, &e.distinct_remote, 256, PROP);
    }
}

#[test]
fn without_nic_concatenation_every_pr_is_its_own_packet() {
    let (nics, idxs, bounds, _) = run(&[], true, 1 << 20, |c| c.delay_cycles = 0);
    for (n, nic) in nics.iter().enumerate() {
        let e = expected(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert_eq!(s.tx_packets, s.tx_prs);
        assert_eq!(s.prs_issued, e.distinct_remote.len() as u64);
        check_destination(nic, &e.distinct_remote, 256, PROP);
    }
}

#[test]
fn a_full_tx_buffer_stalls_the_units_without_losing_anything() {
    // A 1 Gb/s link and room for two frames: units wait for the link.
    let (nics, idxs, bounds, g) = run(&["NS_NO_FILTER", "NS_NO_COALESCE"], false, 64, |c| {
        c.link_gbps = 1;
        c.tx_buffer_bytes = 3100;
        c.delay_cycles = 0;
    });
    for (n, nic) in nics.iter().enumerate() {
        let e = expected(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert!(s.stall_cycles_tx > 0, "{}", s.summary());
        assert!(g.completions[n].iter().any(|c| c.stats.stall_cycles_tx > 0));
        // Client units stop when the next frame might not fit; server
        // responses (never refused) can add a few frames on top.
        assert!(s.tx_buffer_peak <= 2 * 3100, "peak {}", s.tx_buffer_peak);
        assert_eq!(s.prs_issued, e.remote);
        assert!(g.completions[n]
            .iter()
            .all(|c| c.status == CompletionStatus::Success));
        check_destination(nic, &e.distinct_remote, 256, PROP);
    }
}
