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

const RANDOM_DIGEST: &str = include_str!("../../tests/stf/psa/psa_random_digest.p4");

/// The draws `(r8, r16, r32)` of `psa_random_digest.p4` for `n` frames.
fn draws(seed: u64, n: usize) -> Vec<(u8, u16, u32)> {
    let a = common::p4(RANDOM_DIGEST);
    let cfg = SwitchConfig {
        seed,
        ..SwitchConfig::default()
    };
    let mut sw = PsaSwitch::new(&a, cfg).expect("loads");
    let mut frame = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00];
    frame.extend_from_slice(&[0; 7]);
    (0..n)
        .map(|_| {
            let out = send(&mut sw, &frame);
            assert_eq!(out.len(), 1);
            let b = &out[0].1[14..21];
            (
                b[0],
                u16::from_be_bytes([b[1], b[2]]),
                u32::from_be_bytes([b[3], b[4], b[5], b[6]]),
            )
        })
        .collect()
}

#[test]
fn psa_random_stays_in_bounds_and_is_seeded() {
    let a = draws(7, 400);
    // Every value of [10, 20] and nothing else; the one-value range is constant.
    let seen: std::collections::BTreeSet<u8> = a.iter().map(|d| d.0).collect();
    assert_eq!(seen, (10..=20).collect());
    assert!(a.iter().all(|d| d.1 == 1000));
    // The full-range draws are not stuck.
    let wide: std::collections::BTreeSet<u32> = a.iter().map(|d| d.2).collect();
    assert!(
        wide.len() > 390,
        "only {} distinct 32-bit draws",
        wide.len()
    );
    // The same seed gives the same sequence; another seed another one.
    assert_eq!(draws(7, 400), a);
    assert_ne!(draws(8, 400), a);
}

#[test]
fn psa_digests_are_counted_and_collected() {
    let a = common::p4(RANDOM_DIGEST);
    let mut sw = PsaSwitch::new(&a, SwitchConfig::default()).expect("loads");
    let frame = |src: u8, etype: u16| {
        let mut f = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, src];
        f.extend_from_slice(&etype.to_be_bytes());
        f.extend_from_slice(&[0; 7]);
        f
    };
    let mut out = Outputs::new();
    sw.on_packet(Time::from_us(1), 3, &frame(0x11, 0x0801), &mut out);
    sw.on_packet(Time::from_us(2), 0, &frame(0x22, 0x0800), &mut out);
    sw.on_packet(Time::from_us(3), 5, &frame(0x33, 0x0801), &mut out);
    assert_eq!(out.len(), 3);
    assert_eq!(sw.stats().engine.digests, 2);
    let d = sw.take_digests();
    assert_eq!(d.len(), 2);
    assert!(d.iter().all(|m| m.name == "learn_t" && m.receiver == 0));
    let fields: Vec<Vec<(String, u128)>> = d.into_iter().map(|m| m.fields).collect();
    assert_eq!(
        fields,
        vec![
            vec![("src".to_string(), 0x11), ("port".to_string(), 3)],
            vec![("src".to_string(), 0x33), ("port".to_string(), 5)],
        ]
    );
    assert!(sw.take_digests().is_empty(), "collected once");
}
