//! Multicast groups and clone sessions over P4Runtime
//! (`PacketReplicationEngineEntry`), in process: a v1model switch running
//! tests/data/p4rt_replication.p4 on the live driver over in-memory ports 1
//! and 2, the server on 127.0.0.1:0. Inserting a group makes a broadcast
//! replicate, MODIFY changes the copies, DELETE stops them; a clone session
//! makes a copy of every unicast packet; Read returns what was written;
//! INSERT of an existing group is ALREADY_EXISTS, MODIFY or DELETE of a
//! missing one NOT_FOUND, and bad ids or instances INVALID_ARGUMENT, each
//! failing alone. Every wait is bounded.

mod p4rt_support;

use std::sync::mpsc::Receiver;
use std::time::Duration;

use netsparse_p4rt::client::{update, Client};
use netsparse_p4rt::proto::v1;
use netsparse_p4rt::server::update_errors;
use netsparse_p4rt::tonic::Code;
use v1::packet_replication_engine_entry::Type as P;
use v1::update::Type;

use p4rt_support::*;

fn replica(port: u32, rid: u32) -> v1::Replica {
    v1::Replica {
        port_kind: Some(v1::replica::PortKind::EgressPort(port)),
        instance: rid,
    }
}

fn pre(ty: Type, p: P) -> v1::Update {
    update(
        ty,
        v1::entity::Entity::PacketReplicationEngineEntry(v1::PacketReplicationEngineEntry {
            r#type: Some(p),
        }),
    )
}

fn group(id: u32, replicas: Vec<v1::Replica>) -> P {
    P::MulticastGroupEntry(v1::MulticastGroupEntry {
        multicast_group_id: id,
        replicas,
        metadata: Vec::new(),
    })
}

fn session(id: u32, replicas: Vec<v1::Replica>) -> P {
    P::CloneSessionEntry(v1::CloneSessionEntry {
        session_id: id,
        replicas,
        ..Default::default()
    })
}

/// The TTLs (= the replica's rid, set in egress) of every frame that comes
/// out of `port` within a short wait.
fn ttls(port: &Receiver<Vec<u8>>) -> Vec<u8> {
    let mut v = Vec::new();
    while let Ok(f) = port.recv_timeout(Duration::from_millis(300)) {
        v.push(f[14 + 8]);
    }
    v
}

async fn read_pre(c: &mut Client, p: P) -> Vec<P> {
    c.read(vec![v1::Entity {
        entity: Some(v1::entity::Entity::PacketReplicationEngineEntry(
            v1::PacketReplicationEngineEntry { r#type: Some(p) },
        )),
    }])
    .await
    .expect("read")
    .into_iter()
    .filter_map(|e| match e.entity {
        Some(v1::entity::Entity::PacketReplicationEngineEntry(x)) => x.r#type,
        _ => None,
    })
    .collect()
}

#[test]
fn multicast_groups_and_clone_sessions() {
    let rig = rig("tests/data/p4rt_replication.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert_eq!(c.arbitrate(7).await.unwrap(), Code::Ok);
        let bcast = ipv4_frame([10, 0, 0, 1], [10, 0, 0, 255], 64);
        let unicast = ipv4_frame([10, 0, 0, 1], [10, 0, 0, 9], 64);

        // No group yet: a multicast to a missing group is dropped.
        rig.inject[0].send(bcast.clone()).unwrap();
        assert!(ttls(&rig.out[0]).is_empty() && ttls(&rig.out[1]).is_empty());

        // Group 1 = {port 1 rid 3, port 2 rid 4}.
        c.write(vec![pre(
            Type::Insert,
            group(1, vec![replica(1, 3), replica(2, 4)]),
        )])
        .await
        .expect("insert group");
        rig.inject[0].send(bcast.clone()).unwrap();
        assert_eq!(ttls(&rig.out[0]), vec![3]);
        assert_eq!(ttls(&rig.out[1]), vec![4]);

        // Read it back (by id and by wildcard).
        let want = group(1, vec![replica(1, 3), replica(2, 4)]);
        assert_eq!(read_pre(&mut c, group(1, vec![])).await, vec![want.clone()]);
        assert_eq!(read_pre(&mut c, group(0, vec![])).await, vec![want]);
        assert!(read_pre(&mut c, group(9, vec![])).await.is_empty());

        // MODIFY: only port 2, rid 6.
        c.write(vec![pre(Type::Modify, group(1, vec![replica(2, 6)]))])
            .await
            .expect("modify group");
        rig.inject[0].send(bcast.clone()).unwrap();
        assert!(ttls(&rig.out[0]).is_empty());
        assert_eq!(ttls(&rig.out[1]), vec![6]);

        // Bad updates fail alone, with their codes; the good one applies.
        let err = c
            .write(vec![
                pre(Type::Insert, group(1, vec![replica(1, 1)])),
                pre(Type::Modify, group(2, vec![replica(1, 1)])),
                pre(Type::Insert, group(0, vec![replica(1, 1)])),
                pre(Type::Insert, group(70000, vec![replica(1, 1)])),
                pre(Type::Insert, group(3, vec![replica(1, 70000)])),
                pre(Type::Insert, group(4, vec![replica(1, 2)])),
                pre(Type::Delete, session(9, vec![])),
            ])
            .await
            .expect_err("a mixed batch fails");
        let codes: Vec<i32> = update_errors(&err)
            .iter()
            .map(|e| e.canonical_code)
            .collect();
        assert_eq!(
            codes,
            vec![
                Code::AlreadyExists as i32,
                Code::NotFound as i32,
                Code::InvalidArgument as i32,
                Code::InvalidArgument as i32,
                Code::InvalidArgument as i32,
                Code::Ok as i32,
                Code::NotFound as i32,
            ],
            "{err:?}"
        );
        assert_eq!(read_pre(&mut c, group(0, vec![])).await.len(), 2);

        // Clone session 5 = {port 1 rid 8}: a unicast leaves port 2 and its
        // clone port 1.
        rig.inject[0].send(unicast.clone()).unwrap();
        assert!(ttls(&rig.out[0]).is_empty(), "no session yet: no clone");
        assert_eq!(ttls(&rig.out[1]), vec![0]);
        c.write(vec![pre(Type::Insert, session(5, vec![replica(1, 8)]))])
            .await
            .expect("insert session");
        rig.inject[0].send(unicast.clone()).unwrap();
        assert_eq!(ttls(&rig.out[0]), vec![8], "the clone");
        assert_eq!(ttls(&rig.out[1]), vec![0], "the original");
        assert_eq!(
            read_pre(&mut c, session(0, vec![])).await,
            vec![session(5, vec![replica(1, 8)])]
        );
        // Truncation is not supported: refused, not ignored.
        let mut trunc = v1::CloneSessionEntry {
            session_id: 6,
            replicas: vec![replica(1, 0)],
            ..Default::default()
        };
        trunc.packet_length_bytes = 64;
        let err = c
            .write(vec![pre(Type::Insert, P::CloneSessionEntry(trunc))])
            .await
            .expect_err("truncation");
        assert_eq!(
            update_errors(&err)[0].canonical_code,
            Code::Unimplemented as i32
        );

        // DELETE: the group and the session are gone.
        c.write(vec![
            pre(Type::Delete, group(1, vec![])),
            pre(Type::Delete, session(5, vec![])),
        ])
        .await
        .expect("delete");
        rig.inject[0].send(bcast).unwrap();
        rig.inject[0].send(unicast).unwrap();
        assert!(ttls(&rig.out[0]).is_empty());
        assert_eq!(ttls(&rig.out[1]), vec![0], "only the unicast original");
        assert_eq!(read_pre(&mut c, group(1, vec![])).await, vec![]);
        assert_eq!(read_pre(&mut c, session(0, vec![])).await, vec![]);
    });
}

#[test]
fn replication_on_a_netsparse_switch_is_unimplemented() {
    let rig = ns_rig("programs/netsparse_tor.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert_eq!(c.arbitrate(7).await.unwrap(), Code::Ok);
        let err = c
            .write(vec![pre(Type::Insert, group(1, vec![replica(1, 0)]))])
            .await
            .expect_err("no multicast");
        let e = &update_errors(&err)[0];
        assert_eq!(e.canonical_code, Code::Unimplemented as i32);
        assert!(e.message.contains("no multicast"), "{}", e.message);
        assert!(read_pre(&mut c, group(0, vec![])).await.is_empty());
    });
}
