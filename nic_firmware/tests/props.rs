//! Property test: for random small gathers and NIC settings (two NICs back
//! to back), every command completes, exactly the source properties are
//! gathered, nothing is written that was not needed, and the counters add up.

mod common;

use common::net::Net;
use common::{check_destination, expected, nic_program, nics, Rng};
use netsparse_nic::testing::{batch_commands, Gather};
use netsparse_nic::{CompletionStatus, Time};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn gathers_are_complete_and_exact(
        seed in 1u64..u64::MAX,
        columns in 2u64..200,
        per_node in 0usize..120,
        k in 1u32..20,
        batch in 1u64..80,
        pending in 1usize..40,
        delay in prop::sample::select(vec![0u64, 7, 500]),
        serial in any::<bool>(),
        ablation in 0usize..4,
        clients in 1u32..5,
        batch_idxs in 1u32..100,
        link_ns in 1u64..1000,
        at_write in any::<bool>(),
    ) {
        let defines: &[&str] = match ablation {
            0 => &[],
            1 => &["NS_NO_FILTER"],
            2 => &["NS_NO_COALESCE"],
            _ => &["NS_NO_FILTER", "NS_NO_COALESCE"],
        };
        let art = nic_program(defines);
        let mut rng = Rng::new(seed);
        let bounds = vec![0, columns / 2, columns];
        let idxs: Vec<Vec<u64>> = (0..2)
            .map(|_| (0..per_node).map(|_| rng.below(columns)).collect())
            .collect();
        let prop = 4 * k;
        let nics = nics(&art, &idxs, &bounds, prop, |c| {
            c.pending_entries = pending;
            c.delay_cycles = delay;
            c.batch_idxs = batch_idxs;
            c.client_units = clients;
            c.rig_units = clients + 2;
            c.filter_set_at_write = at_write;
        });
        let mut net = Net::new(Time::from_ns(link_ns), nics);
        net.connect((0, 0), (1, 0));
        let cmds = idxs
            .iter()
            .map(|l| batch_commands(l.len() as u64, batch, prop))
            .collect();
        let mut g = Gather::new(cmds, serial);
        prop_assert!(g.run(&mut net, Time::from_secs(1)));
        let nics = net.into_nics();
        for n in 0..2 {
            let e = expected(&idxs[n], &bounds, n);
            let s = nics[n].stats();
            prop_assert_eq!(s.idxs_read, e.nnz);
            prop_assert_eq!(s.idxs_read, s.idxs_accounted());
            prop_assert_eq!(s.prs_local, e.local);
            prop_assert!(s.prs_issued >= e.distinct_remote.len() as u64);
            prop_assert!(s.prs_issued <= e.remote);
            if defines.len() == 2 {
                prop_assert_eq!(s.prs_issued, e.remote);
            }
            // Serialised, a filter set when the response arrives issues one
            // PR per distinct idx; set when the host write completes, an idx
            // read again in between is requested again.
            if serial && defines.is_empty() && !at_write {
                prop_assert_eq!(s.prs_issued, e.distinct_remote.len() as u64);
            }
            prop_assert_eq!(s.responses_received, s.prs_issued);
            prop_assert_eq!(
                s.program_errors + s.responses_unknown + s.responses_duplicate + s.prs_unroutable,
                0
            );
            prop_assert!(g.completions[n].iter().all(|c| c.status == CompletionStatus::Success));
            check_destination(&nics[n], &e.distinct_remote, columns, prop);
        }
        prop_assert!(nics.iter().all(|n| n.is_idle()));
    }
}
