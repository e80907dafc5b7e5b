//! Four NetSparse NICs behind one NetSparse ToR switch (the multi-pipe
//! `NsSwitch` running `programs/netsparse_tor.p4`, 4 ports in 2 pipes, a
//! Property Cache in 64-byte mode) gather the remote properties of a small
//! sparse matrix. Reads that hit the switch's cache are answered by the
//! switch; every gathered property must still equal the source array.

mod nic_support;

use netsparse_bmv2::{NsConfig, NsSwitch};
use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::KeyMatch;
use netsparse_nic::testing::{batch_commands, Gather};
use netsparse_nic::{CompletionStatus, Time};
use nic_support::net::Net;
use nic_support::{check_destination, compile, matrix, nic_program, nics, remote, root};

const PROP: u32 = 64;
const N: u64 = 512;

#[test]
fn four_nics_behind_a_netsparse_tor_gather_correctly_with_cache_hits() {
    let tor = compile(&root().join("programs/netsparse_tor.p4"), &[]);
    let cfg = NsConfig {
        ports: 4,
        pipes: 2,
        ..NsConfig::default()
    };
    let mut sw = NsSwitch::new(&tor, cfg).expect("the ToR loads");
    for n in 0..4u128 {
        sw.add_entry(
            "node_port",
            &[KeyMatch::Exact { value: n }],
            "set_port",
            &[n],
            None,
        )
        .unwrap();
    }
    let art = nic_program(&[]);
    let (idxs, bounds) = matrix(N, 4, 6, 5);
    let mut net = Net::new(Time::from_ns(450), nics(&art, &idxs, &bounds, PROP, |_| {}));
    let tor_id = net.add(Box::new(sw), "tor");
    for n in 0..4u32 {
        net.connect((n, 0), (tor_id, n));
    }
    // Small RIG batches, one after another on each node: a hot property one
    // node fetched early is in the ToR's cache when another node reads it.
    let cmds = idxs
        .iter()
        .map(|l| batch_commands(l.len() as u64, 32, PROP))
        .collect();
    let mut g = Gather::new(cmds, true);
    assert!(
        g.run(&mut net, Time::from_ms(100)),
        "the gather did not finish"
    );
    let st = net.get::<NsSwitch>(tor_id).stats();
    let nics = net.into_nics();
    let mut issued = 0;
    let mut served = 0;
    for (n, nic) in nics.iter().enumerate() {
        let (remote_nnz, distinct) = remote(&idxs[n], &bounds, n);
        let s = nic.stats();
        assert!(
            g.completions[n]
                .iter()
                .all(|c| c.status == CompletionStatus::Success),
            "node {n}: {:?}",
            g.completions[n]
        );
        assert!(remote_nnz > distinct.len() as u64);
        assert_eq!(s.prs_issued, distinct.len() as u64, "node {n}");
        assert_eq!(s.idxs_read, s.idxs_accounted());
        assert_eq!(s.responses_received, s.prs_issued);
        assert_eq!(s.rx_malformed + s.program_errors + s.responses_unknown, 0);
        check_destination(nic, &distinct, N, PROP);
        issued += s.prs_issued;
        served += s.reads_served;
    }
    // Every issued read was answered by its owner or by the switch's cache.
    assert_eq!(issued, served + st.total.cache.hits, "{}", st.summary());
    assert!(st.total.cache.inserts > 0);
    assert!(st.total.cache.hits > 0, "{}", st.summary());
}
