//! The PSA switch beyond what the STF scripts show: what it counts when a
//! packet goes nowhere (unconfigured multicast group or clone session,
//! ingress and egress drops, the resubmit/recirculate cap), artifacts it
//! refuses with a load error, and the replication engine's checks.

mod common;

use netsparse_bmv2::{ControlPlane, LoadError, PsaSwitch, Replica, Switch, SwitchConfig};
use netsparse_externs::artifact::{Artifact, FieldId, Package};
use netsparse_externs::{Datapath, Outputs, Time};

const PATHS: &str = include_str!("../../tests/stf/psa/psa_paths.p4");

fn psa(cfg: SwitchConfig) -> (Artifact, PsaSwitch) {
    let a = common::p4(PATHS);
    let sw = PsaSwitch::new(&a, cfg).expect("loads");
    (a, sw)
}

/// A tagged frame of `psa_paths.p4`: `op`, `arg`, the rest zero.
fn tagged(op: u8, arg: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x88, 0xb5];
    f.extend_from_slice(&[op, arg, 0, 0, 0, 0, 0, 0, 0]);
    f
}

fn send(sw: &mut PsaSwitch, frame: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut out = Outputs::new();
    sw.on_packet(Time::from_us(1), 0, frame, &mut out);
    out.iter().map(|(p, b)| (p, b.to_vec())).collect()
}

#[test]
fn packets_that_go_nowhere_are_counted() {
    let (_, mut sw) = psa(SwitchConfig::default());
    assert!(
        send(&mut sw, &tagged(3, 9)).is_empty(),
        "group 9 is not configured"
    );
    assert!(send(&mut sw, &tagged(2, 0)).is_empty(), "ingress_drop");
    assert!(send(&mut sw, &tagged(8, 0)).is_empty(), "egress_drop");
    let out = send(&mut sw, &tagged(4, 7));
    assert_eq!(
        out.len(),
        1,
        "session 7 is not configured: only the original"
    );
    let s = sw.stats();
    assert_eq!(s.total.drops.no_mcast_group, 1);
    assert_eq!(s.total.drops.ingress_drop, 1);
    assert_eq!(s.total.drops.egress_drop, 1);
    assert_eq!(s.clone_no_session, 1);
    assert_eq!(s.clones, 0);
    assert_eq!(s.total.rx_packets, 4);
    assert_eq!(s.total.tx_packets, 1);
}

#[test]
fn resubmit_and_recirculate_are_capped() {
    let cfg = SwitchConfig {
        max_passes: 0,
        ..SwitchConfig::default()
    };
    let (_, mut sw) = psa(cfg);
    assert!(send(&mut sw, &tagged(5, 0)).is_empty(), "resubmit refused");
    assert!(
        send(&mut sw, &tagged(6, 0)).is_empty(),
        "recirculation refused"
    );
    let s = sw.stats();
    assert_eq!(s.total.drops.loop_cap, 2);
    assert_eq!((s.resubmits, s.recirculations), (0, 0));
    // With the default cap both come back once and leave.
    let (_, mut sw) = psa(SwitchConfig::default());
    assert_eq!(send(&mut sw, &tagged(5, 0)).len(), 1);
    assert_eq!(send(&mut sw, &tagged(6, 0)).len(), 1);
    let s = sw.stats();
    assert_eq!((s.resubmits, s.recirculations), (1, 1));
    assert_eq!(s.total.drops.total(), 0);
}

#[test]
fn clone_session_to_a_multicast_group() {
    let (_, mut sw) = psa(SwitchConfig::default());
    let r = sw.replication();
    r.mirroring_add_mc(5, 2).expect("session to group 2");
    // The group is created after the session: the clone follows it.
    r.mc_group_set(
        2,
        &[Replica { port: 6, rid: 1 }, Replica { port: 7, rid: 2 }],
    )
    .expect("group 2");
    let mut ports: Vec<u32> = send(&mut sw, &tagged(4, 5))
        .iter()
        .map(|(p, _)| *p)
        .collect();
    ports.sort_unstable();
    assert_eq!(ports, vec![1, 6, 7]);
    assert_eq!(sw.stats().clones, 2);
    assert_eq!(sw.mirroring_sessions().len(), 1);
}

#[test]
fn replication_refuses_bad_ports_and_groups() {
    let (_, mut sw) = psa(SwitchConfig::default());
    let r = sw.replication();
    assert!(
        r.mc_node_create(0, &[600]).is_err(),
        "port 600 does not exist"
    );
    assert!(r.mirroring_add(1, 511).is_err(), "511 is not a port");
    assert!(r.mc_group_create(0).is_err(), "group 0 means no multicast");
    assert!(r.mirroring_add_mc(1, 0).is_err());
    assert!(r.mirroring_delete(42).is_err());
    let bad = sw.command("mc_node_create", &["x", "1"]);
    assert!(
        matches!(bad, Some(Err(_))),
        "a malformed command is an error"
    );
}

#[test]
fn wrong_architecture_and_corrupt_packages_are_load_errors() {
    let (a, _) = psa(SwitchConfig::default());
    // A PSA program on the v1model switch, and the other way round.
    assert!(matches!(
        Switch::new(&a, SwitchConfig::default()),
        Err(LoadError::Unsupported { .. })
    ));
    let v1 = common::p4(
        r#"
#include <core.p4>
#include <v1model.p4>
struct h_t {}
struct m_t {}
parser P(packet_in b, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out b, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#,
    );
    assert!(matches!(
        PsaSwitch::new(&v1, SwitchConfig::default()),
        Err(LoadError::Unsupported { .. })
    ));
    // A metadata slot out of range.
    let mut bad = a.clone();
    if let Package::Psa(p) = &mut bad.package {
        p.metadata.ig_drop = FieldId(u32::MAX);
    }
    assert!(PsaSwitch::new(&bad, SwitchConfig::default()).is_err());
    // Bridges of different lengths.
    let mut bad = a;
    if let Package::Psa(p) = &mut bad.package {
        p.normalized.to.clear();
        assert!(!p.normalized.from.is_empty());
    }
    assert!(PsaSwitch::new(&bad, SwitchConfig::default()).is_err());
}
