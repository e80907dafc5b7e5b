//! The P4Runtime server driving a running v1model switch, in process: the
//! switch runs on the live driver (the same loop and mailbox as
//! `netsparse switch --grpc-server-addr`) over in-memory ports, the
//! server listens on 127.0.0.1:0, and a tonic client inserts, modifies
//! and deletes entries and checks that forwarding follows; bad requests get
//! the status codes the P4Runtime specification names and change nothing
//! else. Every wait is bounded.

mod p4rt_support;

use std::time::Duration;

use netsparse_p4rt::client::{update, Client};
use netsparse_p4rt::proto::v1;
use netsparse_p4rt::server::update_errors;
use netsparse_p4rt::tonic::Code;

use p4rt_support::*;

async fn primary(addr: &str) -> Client {
    let mut c = Client::connect(addr, 1, WAIT).await.expect("connects");
    assert_eq!(c.arbitrate(10).await.expect("arbitrates"), Code::Ok);
    c
}

fn insert(c: &Client, table: &str, keys: &[&str], action: &str, params: &[&str]) -> v1::Update {
    let e = c
        .table_entry(table, keys, Some((action, params)), None)
        .expect("entry builds");
    update(v1::update::Type::Insert, v1::entity::Entity::TableEntry(e))
}

async fn entry_count(c: &mut Client, table: &str) -> usize {
    let t = c.table(table).unwrap();
    let id = netsparse_p4rt::p4info::id_of(&t.preamble);
    c.read(vec![v1::Entity {
        entity: Some(v1::entity::Entity::TableEntry(v1::TableEntry {
            table_id: id,
            ..Default::default()
        })),
    }])
    .await
    .expect("read")
    .len()
}

/// The action of table `tid`'s default entry, read back.
async fn default_action(c: &mut Client, tid: u32) -> String {
    let want = v1::Entity {
        entity: Some(v1::entity::Entity::TableEntry(v1::TableEntry {
            table_id: tid,
            is_default_action: true,
            ..Default::default()
        })),
    };
    let got = c.read(vec![want]).await.expect("default entry read");
    assert_eq!(got.len(), 1, "one default entry");
    let Some(v1::entity::Entity::TableEntry(te)) = &got[0].entity else {
        panic!("a table entry")
    };
    assert!(te.is_default_action && te.r#match.is_empty());
    let Some(v1::TableAction {
        r#type: Some(v1::table_action::Type::Action(a)),
    }) = &te.action
    else {
        panic!("an action")
    };
    let a = c.schema.action(a.action_id).expect("a known action id");
    netsparse_p4rt::p4info::name_of(&a.preamble).to_owned()
}

#[test]
fn entries_change_forwarding_and_read_back() {
    let rig = rig("programs/ipv4_forward.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = primary(&rig.addr).await;
        let frame = ipv4_frame([10, 0, 0, 1], [10, 0, 2, 7], 64);
        assert!(rig.send_1_to_2(frame.clone()).is_none(), "default: drop");

        let u = insert(
            &c,
            "ipv4_lpm",
            &["10.0.2.0/24"],
            "ipv4_forward",
            &["00:00:00:00:02:02", "2"],
        );
        c.write(vec![u]).await.expect("insert");
        let out = rig
            .send_1_to_2(frame.clone())
            .expect("forwarded after insert");
        assert_eq!(&out[0..6], &[0, 0, 0, 0, 2, 2]);
        assert_eq!(out[14 + 8], 63, "TTL decremented");

        // Read back: one entry, same match and params.
        let got = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::TableEntry(v1::TableEntry::default())),
            }])
            .await
            .unwrap();
        assert_eq!(got.len(), 1);
        let Some(v1::entity::Entity::TableEntry(te)) = &got[0].entity else {
            panic!("a table entry")
        };
        let Some(v1::field_match::FieldMatchType::Lpm(l)) = &te.r#match[0].field_match_type else {
            panic!("an LPM match")
        };
        assert_eq!(
            (l.value.as_slice(), l.prefix_len),
            (&[10u8, 0, 2, 0][..], 24)
        );

        // Modify: new MAC.
        let e = c
            .table_entry(
                "ipv4_lpm",
                &["10.0.2.0/24"],
                Some(("ipv4_forward", &["00:00:00:00:02:03", "2"])),
                None,
            )
            .unwrap();
        c.write_entry(v1::update::Type::Modify, e)
            .await
            .expect("modify");
        let out = rig.send_1_to_2(frame.clone()).expect("still forwarded");
        assert_eq!(&out[0..6], &[0, 0, 0, 0, 2, 3]);

        // Delete: dropped again.
        let e = c
            .table_entry("ipv4_lpm", &["10.0.2.0/24"], None, None)
            .unwrap();
        c.write_entry(v1::update::Type::Delete, e)
            .await
            .expect("delete");
        assert!(rig.send_1_to_2(frame).is_none(), "dropped after delete");
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 0);
    });
}

#[test]
fn bad_updates_fail_alone_with_their_codes() {
    let rig = rig("programs/ipv4_forward.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = primary(&rig.addr).await;
        let good = insert(
            &c,
            "ipv4_lpm",
            &["10.0.2.0/24"],
            "ipv4_forward",
            &["00:00:00:00:02:02", "2"],
        );
        c.write(vec![good.clone()]).await.expect("insert");

        let tid = netsparse_p4rt::p4info::id_of(&c.table("ipv4_lpm").unwrap().preamble);
        // Unknown table id.
        let unknown = update(
            v1::update::Type::Insert,
            v1::entity::Entity::TableEntry(v1::TableEntry {
                table_id: 0x0200_0001,
                ..Default::default()
            }),
        );
        // Match value wider than the 32-bit key.
        let mut wide = c
            .table_entry(
                "ipv4_lpm",
                &["10.0.3.0/24"],
                Some(("ipv4_forward", &["00:00:00:00:03:03", "2"])),
                None,
            )
            .unwrap();
        if let Some(v1::field_match::FieldMatchType::Lpm(l)) = &mut wide.r#match[0].field_match_type
        {
            l.value = vec![1, 10, 0, 3, 0];
        }
        let wide = update(
            v1::update::Type::Insert,
            v1::entity::Entity::TableEntry(wide),
        );
        // A valid new entry in the same batch.
        let fine = insert(
            &c,
            "ipv4_lpm",
            &["10.0.4.0/24"],
            "ipv4_forward",
            &["00:00:00:00:04:04", "2"],
        );
        let st = c
            .write(vec![unknown, good, wide, fine])
            .await
            .expect_err("the batch has bad updates");
        assert_eq!(st.code(), Code::Unknown, "{st:?}");
        let errs = update_errors(&st);
        let codes: Vec<i32> = errs.iter().map(|e| e.canonical_code).collect();
        assert_eq!(
            codes,
            vec![
                Code::NotFound as i32,
                Code::AlreadyExists as i32,
                Code::InvalidArgument as i32,
                Code::Ok as i32
            ],
            "{errs:?}"
        );
        assert!(
            errs[2].message.contains("hdr.ipv4.dstAddr"),
            "names the field: {}",
            errs[2].message
        );
        let _ = tid;
        // Only the valid update took effect.
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 2);

        // Modify/delete of a missing entry: NOT_FOUND.
        let e = c
            .table_entry("ipv4_lpm", &["10.9.0.0/16"], None, None)
            .unwrap();
        let st = c
            .write(vec![update(
                v1::update::Type::Delete,
                v1::entity::Entity::TableEntry(e),
            )])
            .await
            .unwrap_err();
        assert_eq!(update_errors(&st)[0].canonical_code, Code::NotFound as i32);

        // A backup controller cannot write; nothing changes.
        let mut b = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert_eq!(b.arbitrate(5).await.unwrap(), Code::AlreadyExists);
        let u = insert(
            &b,
            "ipv4_lpm",
            &["10.0.5.0/24"],
            "ipv4_forward",
            &["00:00:00:00:05:05", "2"],
        );
        let st = b.write(vec![u]).await.unwrap_err();
        assert_eq!(st.code(), Code::PermissionDenied, "{st:?}");
        // A client that never arbitrated cannot either.
        let mut n = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        let u = insert(
            &n,
            "ipv4_lpm",
            &["10.0.6.0/24"],
            "ipv4_forward",
            &["00:00:00:00:06:06", "2"],
        );
        assert_eq!(
            n.write(vec![u]).await.unwrap_err().code(),
            Code::PermissionDenied
        );
        // The same election id twice is refused.
        let mut d = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert!(d.arbitrate(10).await.is_err(), "duplicate election id");
        // Wrong device id: NOT_FOUND.
        let mut w = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        w.device_id = 7;
        assert_eq!(w.read(vec![]).await.unwrap_err().code(), Code::NotFound);
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 2);

        // Malformed device configs are refused and the pipeline stays.
        for bad in [
            &b"{\"format\": 3}"[..],
            b"control X(",
            &[0xff, 0xfe][..],
            b"",
        ] {
            let st = c.set_pipeline(bad.to_vec(), None).await.unwrap_err();
            assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");
        }
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 2);
        let frame = ipv4_frame([10, 0, 0, 1], [10, 0, 4, 9], 64);
        assert!(rig.send_1_to_2(frame).is_some(), "still forwarding");

        // When the primary leaves, the backup is promoted and can write.
        drop(c);
        let mut promoted = false;
        for _ in 0..20 {
            match b.next_stream_message(Duration::from_millis(250)).await {
                Some(Ok(v1::StreamMessageResponse {
                    update: Some(v1::stream_message_response::Update::Arbitration(a)),
                })) if a.status.as_ref().is_some_and(|s| s.code == 0) => {
                    promoted = true;
                    break;
                }
                _ => {}
            }
        }
        assert!(promoted, "the backup becomes primary");
        let u = insert(
            &b,
            "ipv4_lpm",
            &["10.0.5.0/24"],
            "ipv4_forward",
            &["00:00:00:00:05:05", "2"],
        );
        b.write(vec![u]).await.expect("the new primary writes");
    });
}

#[test]
fn ternary_range_optional_counters_and_registers() {
    let rig = rig("tests/data/p4rt_features.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = primary(&rig.addr).await;
        let u = insert(
            &c,
            "ipv4_lpm",
            &["10.0.2.0/24"],
            "ipv4_forward",
            &["00:00:00:00:02:02", "2"],
        );
        c.write(vec![u]).await.unwrap();
        // ACL: drop src 10.0.0.0/8 (ternary) with TTL 1..32, any protocol.
        let e = c
            .table_entry(
                "acl",
                &["10.0.0.0&&&255.0.0.0", "1->32", "*"],
                Some(("drop", &[])),
                Some(5),
            )
            .unwrap();
        c.write_entry(v1::update::Type::Insert, e).await.unwrap();
        // Priority missing on a ternary table: INVALID_ARGUMENT.
        let e = c
            .table_entry(
                "acl",
                &["11.0.0.0&&&255.0.0.0", "*", "17"],
                Some(("drop", &[])),
                None,
            )
            .unwrap();
        let st = c
            .write(vec![update(
                v1::update::Type::Insert,
                v1::entity::Entity::TableEntry(e),
            )])
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&st)[0].canonical_code,
            Code::InvalidArgument as i32
        );

        assert!(
            rig.send_1_to_2(ipv4_frame([10, 1, 1, 1], [10, 0, 2, 1], 20))
                .is_none(),
            "ACL drops"
        );
        assert!(
            rig.send_1_to_2(ipv4_frame([10, 1, 1, 1], [10, 0, 2, 1], 64))
                .is_some(),
            "TTL outside the range"
        );
        assert!(
            rig.send_1_to_2(ipv4_frame([11, 1, 1, 1], [10, 0, 2, 1], 20))
                .is_some(),
            "source outside the mask"
        );

        // Optional key: drop protocol 17 from 11/8 at priority 9.
        let e = c
            .table_entry(
                "acl",
                &["11.0.0.0&&&255.0.0.0", "*", "17"],
                Some(("drop", &[])),
                Some(9),
            )
            .unwrap();
        c.write_entry(v1::update::Type::Insert, e).await.unwrap();
        assert!(
            rig.send_1_to_2(ipv4_frame([11, 1, 1, 1], [10, 0, 2, 1], 20))
                .is_none(),
            "optional key matches"
        );

        // Default action: read back (the program's drop()), INSERT is
        // refused, MODIFY sets it.
        let t = c.table("ipv4_lpm").unwrap();
        let tid = netsparse_p4rt::p4info::id_of(&t.preamble);
        assert!(default_action(&mut c, tid).await.ends_with("drop"));
        let e = c
            .table_entry("ipv4_lpm", &["10.0.9.0/24"], Some(("NoAction", &[])), None)
            .unwrap();
        let st = c
            .write(vec![update(
                v1::update::Type::Insert,
                v1::entity::Entity::TableEntry(v1::TableEntry {
                    is_default_action: true,
                    r#match: Vec::new(),
                    ..e.clone()
                }),
            )])
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&st)[0].canonical_code,
            Code::InvalidArgument as i32
        );
        c.write(vec![update(
            v1::update::Type::Modify,
            v1::entity::Entity::TableEntry(v1::TableEntry {
                is_default_action: true,
                r#match: Vec::new(),
                ..e
            }),
        )])
        .await
        .expect("default action modified");
        assert_eq!(default_action(&mut c, tid).await, "NoAction");

        // Direct counter of the LPM entry: the 4 packets sent all hit
        // 10.0.2.0/24 (the ACL decides after the LPM table).
        let dc = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::DirectCounterEntry(
                    v1::DirectCounterEntry {
                        table_entry: Some(v1::TableEntry {
                            table_id: tid,
                            ..Default::default()
                        }),
                        data: None,
                    },
                )),
            }])
            .await
            .unwrap();
        assert_eq!(dc.len(), 1);
        let Some(v1::entity::Entity::DirectCounterEntry(d)) = &dc[0].entity else {
            panic!()
        };
        assert_eq!(d.data.as_ref().unwrap().packet_count, 4);
        assert!(d.data.as_ref().unwrap().byte_count >= 4 * 42);

        // Indexed counter: port 1 counted the 4 packets.
        let (cid, _) = c.extern_id("port_pkts").unwrap();
        let cells = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::CounterEntry(v1::CounterEntry {
                    counter_id: cid,
                    index: Some(v1::Index { index: 1 }),
                    data: None,
                })),
            }])
            .await
            .unwrap();
        let Some(v1::entity::Entity::CounterEntry(ce)) = &cells[0].entity else {
            panic!()
        };
        assert_eq!(ce.data.as_ref().unwrap().packet_count, 4);
        // Out-of-range index.
        let st = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::CounterEntry(v1::CounterEntry {
                    counter_id: cid,
                    index: Some(v1::Index { index: 16 }),
                    data: None,
                })),
            }])
            .await
            .unwrap_err();
        assert_eq!(st.code(), Code::OutOfRange);

        // Register: cell 1 holds the last destination; write and read back.
        let (rid, _) = c.extern_id("last_dst").unwrap();
        let reg = |ix: i64, v: Option<Vec<u8>>| v1::RegisterEntry {
            register_id: rid,
            index: Some(v1::Index { index: ix }),
            data: v.map(|b| v1::P4Data {
                data: Some(v1::p4_data::Data::Bitstring(b)),
            }),
        };
        let got = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::RegisterEntry(reg(1, None))),
            }])
            .await
            .unwrap();
        let Some(v1::entity::Entity::RegisterEntry(r)) = &got[0].entity else {
            panic!()
        };
        assert_eq!(
            r.data.as_ref().unwrap().data,
            Some(v1::p4_data::Data::Bitstring(vec![10, 0, 2, 1]))
        );
        c.write(vec![update(
            v1::update::Type::Modify,
            v1::entity::Entity::RegisterEntry(reg(3, Some(vec![0xde, 0xad]))),
        )])
        .await
        .unwrap();
        let all = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::RegisterEntry(v1::RegisterEntry {
                    register_id: rid,
                    ..Default::default()
                })),
            }])
            .await
            .unwrap();
        assert_eq!(all.len(), 16, "every cell without an index");
        let Some(v1::entity::Entity::RegisterEntry(r)) = &all[3].entity else {
            panic!()
        };
        assert_eq!(
            r.data.as_ref().unwrap().data,
            Some(v1::p4_data::Data::Bitstring(vec![0xde, 0xad]))
        );
        // Too wide for bit<32>.
        let st = c
            .write(vec![update(
                v1::update::Type::Modify,
                v1::entity::Entity::RegisterEntry(reg(3, Some(vec![1, 0, 0, 0, 0]))),
            )])
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&st)[0].canonical_code,
            Code::InvalidArgument as i32
        );

        // Counter reset.
        c.write(vec![update(
            v1::update::Type::Modify,
            v1::entity::Entity::CounterEntry(v1::CounterEntry {
                counter_id: cid,
                index: None,
                data: None,
            }),
        )])
        .await
        .unwrap();
        let cells = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::CounterEntry(v1::CounterEntry {
                    counter_id: cid,
                    index: Some(v1::Index { index: 1 }),
                    data: None,
                })),
            }])
            .await
            .unwrap();
        let Some(v1::entity::Entity::CounterEntry(ce)) = &cells[0].entity else {
            panic!()
        };
        assert_eq!(ce.data.as_ref().unwrap().packet_count, 0);
    });
}

#[test]
fn pipeline_replaced_through_set_forwarding_pipeline_config() {
    let rig = rig("programs/ipv4_forward.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = primary(&rig.addr).await;
        let u = insert(
            &c,
            "ipv4_lpm",
            &["10.0.2.0/24"],
            "ipv4_forward",
            &["00:00:00:00:02:02", "2"],
        );
        c.write(vec![u]).await.unwrap();
        // Push the features program as P4 source; the tables start empty.
        let src = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p4rt_features.p4"),
        )
        .unwrap();
        c.set_pipeline(src, None).await.expect("pipeline pushed");
        c.refresh_p4info().await.unwrap();
        assert!(c.table("acl").is_ok(), "the new P4Info has the ACL");
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 0);
        let frame = ipv4_frame([10, 0, 0, 1], [10, 0, 2, 7], 64);
        assert!(rig.send_1_to_2(frame.clone()).is_none());
        let u = insert(
            &c,
            "ipv4_lpm",
            &["10.0.2.0/24"],
            "ipv4_forward",
            &["00:00:00:00:02:02", "2"],
        );
        c.write(vec![u]).await.unwrap();
        assert!(rig.send_1_to_2(frame).is_some());
        // A NetSparse program on a v1model switch: refused, nothing changes.
        let tor = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/netsparse_tor.p4"),
        )
        .unwrap();
        let st = c.set_pipeline(tor, None).await.unwrap_err();
        assert_eq!(st.code(), Code::InvalidArgument);
        assert!(st.message().contains("v1model"), "{}", st.message());
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 1);

        // A controller's own P4Info (other ids, as from p4c) is used for the
        // same program; one naming a table the program lacks is refused.
        let src = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/ipv4_forward.p4"),
        )
        .unwrap();
        c.refresh_p4info().await.unwrap();
        let mut theirs = netsparse_p4rt::p4info::build(&compile("programs/ipv4_forward.p4"));
        let mut wrong = theirs.clone();
        wrong.tables[0].preamble.as_mut().unwrap().name = "MyIngress.nope".into();
        let st = c.set_pipeline(src.clone(), Some(wrong)).await.unwrap_err();
        assert_eq!(st.code(), Code::InvalidArgument);
        assert!(st.message().contains("MyIngress.nope"), "{}", st.message());
        theirs.tables[0].preamble.as_mut().unwrap().id = 0x0200_0abc;
        c.set_pipeline(src, Some(theirs))
            .await
            .expect("pushed with its P4Info");
        c.refresh_p4info().await.unwrap();
        let t = c.table("ipv4_lpm").unwrap();
        assert_eq!(netsparse_p4rt::p4info::id_of(&t.preamble), 0x0200_0abc);
        let u = insert(
            &c,
            "ipv4_lpm",
            &["10.0.2.0/24"],
            "ipv4_forward",
            &["00:00:00:00:02:02", "2"],
        );
        c.write(vec![u])
            .await
            .expect("written with the controller's ids");
        assert!(rig
            .send_1_to_2(ipv4_frame([10, 0, 0, 1], [10, 0, 2, 7], 64))
            .is_some());
    });
}

/// `netsparse nic --grpc-server-addr`: the NIC's program is driven like a
/// switch's (its destination solver read and extended), its counters come
/// under `"nic"`, and a new pipeline is refused with the reason.
#[test]
fn a_running_nic_serves_its_tables_and_counters() {
    let artifact = compile("programs/netsparse_nic.p4");
    let bounds = [0u64, 100, 200];
    let nic = netsparse_nic::testing::nics(&artifact, &[vec![], vec![]], &bounds, 64, |_| {})
        .swap_remove(0);
    let rig = rig_with(nic, &artifact);
    rt().block_on(async {
        let mut c = primary(&rig.addr).await;
        let before = entry_count(&mut c, "dest_solver").await;
        assert!(before >= 1, "the partition's entries are readable");
        let e = c
            .table_entry(
                "dest_solver",
                &["1000->1999"],
                Some(("set_dst", &["1"])),
                Some(1),
            )
            .expect("entry builds");
        c.write_entry(v1::update::Type::Insert, e)
            .await
            .expect("insert into the NIC's table");
        assert_eq!(entry_count(&mut c, "dest_solver").await, before + 1);
        let doc = c.stats_json().await.expect("stats");
        assert!(doc["nic"].is_object(), "NIC counters: {doc}");
        assert!(doc.get("switch").is_none());
        assert_eq!(doc["nic"]["filter_clears"], 0);
        // The Idx Filter: an extern of the NIC's P4Info, cleared by a MODIFY.
        let id = c
            .idx_filter()
            .expect("the NIC program's P4Info lists its Idx Filter");
        assert_eq!(id >> 24, 0x83);
        c.clear_idx_filter(id, 10).await.expect("filter cleared");
        let doc = c.stats_json().await.expect("stats");
        assert_eq!(doc["nic"]["filter_clears"], 1, "{doc}");
        let filter = |ty, extern_id| {
            update(
                ty,
                v1::entity::Entity::ExternEntry(v1::ExternEntry {
                    extern_type_id: netsparse_p4rt::p4info::IDX_FILTER_TYPE_ID,
                    extern_id,
                    entry: None,
                }),
            )
        };
        for (u, code) in [
            (filter(v1::update::Type::Insert, id), Code::InvalidArgument),
            (filter(v1::update::Type::Modify, id ^ 1), Code::NotFound),
        ] {
            let st = c.write(vec![u]).await.unwrap_err();
            assert_eq!(codes(&st), [code], "{st:?}");
        }
        let doc = c.stats_json().await.expect("stats");
        assert_eq!(
            doc["nic"]["filter_clears"], 1,
            "refused writes clear nothing"
        );
        let st = c
            .set_pipeline(artifact.to_json().into_bytes(), None)
            .await
            .unwrap_err();
        assert_eq!(st.code(), Code::InvalidArgument);
        assert!(st.message().contains("fixed while it runs"), "{st:?}");
    });
}

/// One Write with `atomicity` through the raw client.
async fn write_atomic(
    c: &mut Client,
    atomicity: i32,
    updates: Vec<v1::Update>,
) -> Result<(), netsparse_p4rt::tonic::Status> {
    let req = v1::WriteRequest {
        device_id: 1,
        election_id: Some(v1::Uint128 { high: 0, low: 10 }),
        updates,
        atomicity,
        ..Default::default()
    };
    c.raw().write(req).await.map(|_| ())
}

fn codes(st: &netsparse_p4rt::tonic::Status) -> Vec<Code> {
    update_errors(st)
        .iter()
        .map(|e| Code::from(e.canonical_code))
        .collect()
}

/// The packet counts of a table's direct counter, entry by entry.
async fn direct_packets(c: &mut Client, tid: u32) -> Vec<i64> {
    let want = v1::Entity {
        entity: Some(v1::entity::Entity::DirectCounterEntry(
            v1::DirectCounterEntry {
                table_entry: Some(v1::TableEntry {
                    table_id: tid,
                    ..Default::default()
                }),
                data: None,
            },
        )),
    };
    c.read(vec![want])
        .await
        .unwrap()
        .iter()
        .filter_map(|e| match &e.entity {
            Some(v1::entity::Entity::DirectCounterEntry(d)) => d.data.map(|d| d.packet_count),
            _ => None,
        })
        .collect()
}

/// ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC: a batch with a failing update
/// changes nothing (entries, their direct counters, the default action,
/// registers and multicast groups are as before) and its other updates
/// report ABORTED; a valid batch applies whole; a bad atomicity value is
/// refused.
#[test]
fn atomic_batches_apply_whole_or_roll_back() {
    use v1::write_request::Atomicity;
    let rig = rig("tests/data/p4rt_features.p4");
    rt().block_on(async {
        let mut c = primary(&rig.addr).await;
        let a = insert(
            &c,
            "ipv4_lpm",
            &["10.0.2.0/24"],
            "ipv4_forward",
            &["00:00:00:00:02:02", "2"],
        );
        c.write(vec![a.clone()]).await.unwrap();
        let frame = ipv4_frame([11, 0, 0, 1], [10, 0, 2, 7], 64);
        for _ in 0..3 {
            assert!(rig.send_1_to_2(frame.clone()).is_some());
        }
        let tid = netsparse_p4rt::p4info::id_of(&c.table("ipv4_lpm").unwrap().preamble);
        let default_before = default_action(&mut c, tid).await;
        assert_eq!(direct_packets(&mut c, tid).await, [3]);

        // Delete A, insert B, set the default, write a register cell and a
        // multicast group, then modify an entry that does not exist.
        let entry = |keys: &[&str], params: Option<&[&str]>| {
            c.table_entry("ipv4_lpm", keys, params.map(|p| ("ipv4_forward", p)), None)
                .unwrap()
        };
        let del_a = update(
            v1::update::Type::Delete,
            v1::entity::Entity::TableEntry(entry(&["10.0.2.0/24"], None)),
        );
        let ins_b = update(
            v1::update::Type::Insert,
            v1::entity::Entity::TableEntry(entry(
                &["10.0.3.0/24"],
                Some(&["00:00:00:00:03:03", "2"]),
            )),
        );
        let mut def = entry(&["10.0.9.0/24"], Some(&["00:00:00:00:09:09", "2"]));
        def.r#match.clear();
        def.is_default_action = true;
        let set_def = update(
            v1::update::Type::Modify,
            v1::entity::Entity::TableEntry(def),
        );
        let reg = c.extern_id("last_dst").unwrap().0;
        let reg_write = update(
            v1::update::Type::Modify,
            v1::entity::Entity::RegisterEntry(v1::RegisterEntry {
                register_id: reg,
                index: Some(v1::Index { index: 3 }),
                data: Some(v1::P4Data {
                    data: Some(v1::p4_data::Data::Bitstring(vec![0x42])),
                }),
            }),
        );
        let mc = update(
            v1::update::Type::Insert,
            v1::entity::Entity::PacketReplicationEngineEntry(v1::PacketReplicationEngineEntry {
                r#type: Some(
                    v1::packet_replication_engine_entry::Type::MulticastGroupEntry(
                        v1::MulticastGroupEntry {
                            multicast_group_id: 7,
                            replicas: vec![v1::Replica {
                                port_kind: Some(v1::replica::PortKind::EgressPort(2)),
                                instance: 0,
                            }],
                            metadata: Vec::new(),
                        },
                    ),
                ),
            }),
        );
        let bad = update(
            v1::update::Type::Modify,
            v1::entity::Entity::TableEntry(entry(
                &["10.0.5.0/24"],
                Some(&["00:00:00:00:05:05", "2"]),
            )),
        );
        let batch = vec![del_a, ins_b, set_def, reg_write, mc, bad];
        for atomicity in [Atomicity::RollbackOnError, Atomicity::DataplaneAtomic] {
            let packets = direct_packets(&mut c, tid).await;
            let st = write_atomic(&mut c, atomicity as i32, batch.clone())
                .await
                .unwrap_err();
            assert_eq!(
                codes(&st),
                [
                    Code::Aborted,
                    Code::Aborted,
                    Code::Aborted,
                    Code::Aborted,
                    Code::Aborted,
                    Code::NotFound
                ],
                "{st:?}"
            );
            // Everything as before: A forwards, its counter kept, B absent.
            assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 1);
            assert_eq!(direct_packets(&mut c, tid).await, packets);
            assert_eq!(default_action(&mut c, tid).await, default_before);
            let regs = c
                .read(vec![v1::Entity {
                    entity: Some(v1::entity::Entity::RegisterEntry(v1::RegisterEntry {
                        register_id: reg,
                        index: Some(v1::Index { index: 3 }),
                        data: None,
                    })),
                }])
                .await
                .unwrap();
            let Some(v1::entity::Entity::RegisterEntry(r)) = &regs[0].entity else {
                panic!("a register entry")
            };
            assert_eq!(
                r.data,
                Some(v1::P4Data {
                    data: Some(v1::p4_data::Data::Bitstring(vec![0]))
                })
            );
            let groups = c
                .read(vec![v1::Entity {
                    entity: Some(v1::entity::Entity::PacketReplicationEngineEntry(
                        v1::PacketReplicationEngineEntry {
                            r#type: Some(
                                v1::packet_replication_engine_entry::Type::MulticastGroupEntry(
                                    Default::default(),
                                ),
                            ),
                        },
                    )),
                }])
                .await
                .unwrap();
            assert!(groups.is_empty(), "the group was rolled back");
            let out = rig.send_1_to_2(frame.clone()).expect("A still forwards");
            assert_eq!(&out[0..6], &[0, 0, 0, 0, 2, 2]);
            assert_eq!(direct_packets(&mut c, tid).await[0], packets[0] + 1);
        }
        // A batch with an update refused at the check: nothing applied.
        let mut bad_id = batch[1].clone();
        if let Some(v1::Entity {
            entity: Some(v1::entity::Entity::TableEntry(te)),
        }) = bad_id.entity.as_mut()
        {
            te.table_id = 0x0200_0000 | 0xdead;
        }
        let st = write_atomic(
            &mut c,
            Atomicity::RollbackOnError as i32,
            vec![batch[1].clone(), bad_id],
        )
        .await
        .unwrap_err();
        assert_eq!(codes(&st), [Code::Aborted, Code::NotFound]);
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 1);
        // A valid batch applies whole.
        write_atomic(
            &mut c,
            Atomicity::DataplaneAtomic as i32,
            vec![batch[0].clone(), batch[1].clone()],
        )
        .await
        .expect("valid atomic batch");
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 1);
        assert!(
            rig.send_1_to_2(frame).is_none(),
            "A deleted, B does not match"
        );
        // Counter cells can be written (an index), and negative data is refused.
        let ctr = c.extern_id("port_pkts").unwrap().0;
        let cell = |index: i64, packets: i64| {
            update(
                v1::update::Type::Modify,
                v1::entity::Entity::CounterEntry(v1::CounterEntry {
                    counter_id: ctr,
                    index: Some(v1::Index { index }),
                    data: Some(v1::CounterData {
                        byte_count: 0,
                        packet_count: packets,
                    }),
                }),
            )
        };
        c.write(vec![cell(2, 5)])
            .await
            .expect("counter cell written");
        let st = c.write(vec![cell(2, -1), cell(99, 1)]).await.unwrap_err();
        assert_eq!(codes(&st), [Code::InvalidArgument, Code::OutOfRange]);
        let got = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::CounterEntry(v1::CounterEntry {
                    counter_id: ctr,
                    index: Some(v1::Index { index: 2 }),
                    data: None,
                })),
            }])
            .await
            .unwrap();
        let Some(v1::entity::Entity::CounterEntry(ce)) = &got[0].entity else {
            panic!("a counter entry")
        };
        assert_eq!(ce.data.map(|d| d.packet_count), Some(5));
        // An atomicity value that does not exist.
        let st = write_atomic(&mut c, 9, vec![batch[2].clone()])
            .await
            .unwrap_err();
        assert_eq!(st.code(), Code::InvalidArgument);
    });
}

/// Roles: each role has its own primary and backups; the primary of a
/// non-default role writes like the default one's, its backup cannot, the
/// same election id may be used in two roles, and only the default role's
/// primary may replace the pipeline. A role config is refused.
#[test]
fn roles_have_their_own_primaries() {
    let rig = rig("programs/ipv4_forward.p4");
    rt().block_on(async {
        let mut c = primary(&rig.addr).await;
        let mut acl = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        acl.role = "acl".into();
        assert_eq!(
            acl.arbitrate(10).await.unwrap(),
            Code::Ok,
            "same id, other role"
        );
        let mut acl_backup = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        acl_backup.role = "acl".into();
        assert_eq!(acl_backup.arbitrate(3).await.unwrap(), Code::AlreadyExists);
        let mut dup = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        dup.role = "acl".into();
        assert!(
            dup.arbitrate(10).await.is_err(),
            "duplicate id within a role"
        );

        let u = insert(
            &acl,
            "ipv4_lpm",
            &["10.0.7.0/24"],
            "ipv4_forward",
            &["00:00:00:00:07:07", "2"],
        );
        acl.write(vec![u]).await.expect("the acl primary writes");
        let u = insert(
            &acl_backup,
            "ipv4_lpm",
            &["10.0.8.0/24"],
            "ipv4_forward",
            &["00:00:00:00:08:08", "2"],
        );
        let st = acl_backup.write(vec![u]).await.unwrap_err();
        assert_eq!(st.code(), Code::PermissionDenied);
        assert!(st.message().contains("role `acl`"), "{st:?}");
        assert_eq!(entry_count(&mut c, "ipv4_lpm").await, 1);
        let art = compile("programs/ipv4_forward.p4");
        let st = acl
            .set_pipeline(art.to_json().into_bytes(), None)
            .await
            .unwrap_err();
        assert_eq!(st.code(), Code::PermissionDenied);
        assert!(st.message().contains("default role"), "{st:?}");
        c.set_pipeline(art.to_json().into_bytes(), None)
            .await
            .expect("the default role's primary may");

        // A role config (an entity filter) is not supported.
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tx.send(v1::StreamMessageRequest {
            update: Some(v1::stream_message_request::Update::Arbitration(
                v1::MasterArbitrationUpdate {
                    device_id: 1,
                    role: Some(v1::Role {
                        name: "filtered".into(),
                        config: Some(Default::default()),
                        ..Default::default()
                    }),
                    election_id: Some(v1::Uint128 { high: 0, low: 1 }),
                    status: None,
                },
            )),
        })
        .await
        .unwrap();
        let mut raw = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        let mut inbound = raw
            .raw()
            .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        let first = tokio::time::timeout(WAIT, inbound.message()).await.unwrap();
        let st = first.unwrap_err();
        assert_eq!(st.code(), Code::Unimplemented, "{st:?}");
    });
}
