//! Digests and meters over P4Runtime, on the learning switch
//! `programs/l2_learn.p4` running on the live driver in process (as
//! `netsparse switch --grpc-server-addr`): the P4Info describes the digest
//! and its struct; a DigestEntry turns it on; the primary receives
//! DigestLists whose data is the frames' source MAC and port; duplicates
//! are suppressed until acknowledged; digests sent before the DigestEntry
//! or after its deletion are counted, not delivered. Meter and direct
//! meter configurations change which frames are dropped and read back.
//! Every wait is bounded.

mod p4rt_support;

use std::time::Duration;

use netsparse_p4rt::client::{update, Client};
use netsparse_p4rt::p4info::{id_of, name_of};
use netsparse_p4rt::proto::{cfg, v1};
use netsparse_p4rt::server::update_errors;
use netsparse_p4rt::tonic::Code;

use p4rt_support::*;

async fn primary(addr: &str) -> Client {
    let mut c = Client::connect(addr, 1, WAIT).await.expect("connects");
    assert_eq!(c.arbitrate(10).await.expect("arbitrates"), Code::Ok);
    c
}

fn mac(last: u8) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, last]
}

fn eth(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    f
}

fn stat(doc: &serde_json::Value, path: &[&str]) -> u64 {
    path.iter()
        .fold(doc, |v, k| &v[*k])
        .as_u64()
        .unwrap_or_else(|| panic!("{path:?} in {doc}"))
}

/// Wait until the switch's engine has sent `n` digests in all.
async fn wait_engine_digests(c: &mut Client, n: u64) {
    for _ in 0..500 {
        let doc = c.stats_json().await.expect("stats");
        if stat(&doc, &["switch", "engine", "digests"]) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the engine did not send {n} digests");
}

fn digest_entry(id: u32, config: Option<v1::digest_entry::Config>) -> v1::entity::Entity {
    v1::entity::Entity::DigestEntry(v1::DigestEntry {
        digest_id: id,
        config,
    })
}

/// The (MAC, port) pairs of a DigestList.
fn learned(l: &v1::DigestList) -> Vec<(Vec<u8>, Vec<u8>)> {
    l.data
        .iter()
        .map(|d| {
            let Some(v1::p4_data::Data::Struct(s)) = &d.data else {
                panic!("a struct digest")
            };
            let bits = |i: usize| match &s.members[i].data {
                Some(v1::p4_data::Data::Bitstring(b)) => b.clone(),
                other => panic!("a bitstring member, got {other:?}"),
            };
            (bits(0), bits(1))
        })
        .collect()
}

/// Digest lists on the stream until `want` data items arrived (or the
/// wait ends).
async fn lists_until(c: &mut Client, want: usize) -> Vec<v1::DigestList> {
    let mut out = Vec::new();
    let mut n = 0;
    while n < want {
        match c.next_stream_message(WAIT).await {
            Some(Ok(v1::StreamMessageResponse {
                update: Some(v1::stream_message_response::Update::Digest(l)),
            })) => {
                n += l.data.len();
                out.push(l);
            }
            Some(Ok(_)) => {}
            other => panic!("a DigestList, got {other:?}"),
        }
    }
    out
}

/// Nothing but possibly arbitration on the stream for `wait`.
async fn no_digest_for(c: &mut Client, wait: Duration) {
    if let Some(Ok(v1::StreamMessageResponse {
        update: Some(v1::stream_message_response::Update::Digest(l)),
    })) = c.next_stream_message(wait).await
    {
        panic!("unexpected DigestList {l:?}");
    }
}

#[test]
fn digests_are_described_delivered_suppressed_and_acknowledged() {
    let rig = rig("programs/l2_learn.p4");
    rt().block_on(async {
        let mut c = primary(&rig.addr).await;
        // P4Info: one digest, a struct of (bit<48>, bit<9>).
        let info = c.schema.info.clone();
        assert_eq!(info.digests.len(), 1);
        let d = &info.digests[0];
        assert_eq!(name_of(&d.preamble), "learn_t");
        assert_eq!(id_of(&d.preamble) >> 24, 0x17, "digest id prefix");
        let members: Vec<(String, i32)> = info.type_info.as_ref().expect("type_info").structs
            ["learn_t"]
            .members
            .iter()
            .map(|m| {
                let Some(cfg::P4DataTypeSpec {
                    type_spec: Some(cfg::p4_data_type_spec::TypeSpec::Bitstring(b)),
                }) = &m.type_spec
                else {
                    panic!("a bitstring member")
                };
                let Some(cfg::p4_bitstring_like_type_spec::TypeSpec::Bit(w)) = &b.type_spec else {
                    panic!("bit<W>")
                };
                (m.name.clone(), w.bitwidth)
            })
            .collect();
        assert_eq!(
            members,
            [("srcAddr".to_owned(), 48), ("ingress_port".to_owned(), 9)]
        );
        let did = id_of(&d.preamble);

        // Bad DigestEntries: unknown id, negative timeout, no config.
        let bad = [
            (
                digest_entry(did + 1, Some(Default::default())),
                Code::NotFound,
            ),
            (
                digest_entry(
                    did,
                    Some(v1::digest_entry::Config {
                        ack_timeout_ns: -5,
                        ..Default::default()
                    }),
                ),
                Code::InvalidArgument,
            ),
            (digest_entry(did, None), Code::InvalidArgument),
        ];
        for (e, code) in bad {
            let st = c
                .write(vec![update(v1::update::Type::Insert, e)])
                .await
                .unwrap_err();
            assert_eq!(update_errors(&st)[0].canonical_code, code as i32, "{st:?}");
        }
        // MODIFY before INSERT: NOT_FOUND.
        let config = v1::digest_entry::Config {
            max_timeout_ns: 2_000_000,
            max_list_size: 16,
            ack_timeout_ns: 60_000_000_000,
        };
        let st = c
            .write(vec![update(
                v1::update::Type::Modify,
                digest_entry(did, Some(config)),
            )])
            .await
            .unwrap_err();
        assert_eq!(update_errors(&st)[0].canonical_code, Code::NotFound as i32);

        // A digest sent before the DigestEntry is not delivered.
        rig.inject[0].send(eth(mac(9), mac(1))).unwrap();
        wait_engine_digests(&mut c, 1).await;
        c.write(vec![update(
            v1::update::Type::Insert,
            digest_entry(did, Some(config)),
        )])
        .await
        .expect("digest turned on");
        no_digest_for(&mut c, Duration::from_millis(200)).await;
        let doc = c.stats_json().await.unwrap();
        assert_eq!(stat(&doc, &["digests", "not_configured"]), 1);

        // Read back the configuration.
        let got = c
            .read(vec![v1::Entity {
                entity: Some(digest_entry(0, None)),
            }])
            .await
            .unwrap();
        assert_eq!(got.len(), 1);
        let Some(v1::entity::Entity::DigestEntry(e)) = &got[0].entity else {
            panic!("a digest entry")
        };
        assert_eq!((e.digest_id, e.config), (did, Some(config)));

        // Two MACs learned on port 1, the first one twice: the duplicate
        // is suppressed (its list is not acknowledged yet).
        for src in [mac(1), mac(2), mac(1)] {
            rig.inject[0].send(eth(mac(9), src)).unwrap();
        }
        let lists = lists_until(&mut c, 2).await;
        let mut seen: Vec<_> = lists.iter().flat_map(learned).collect();
        seen.sort();
        assert_eq!(
            seen,
            [(mac(1).to_vec(), vec![1u8]), (mac(2).to_vec(), vec![1u8])],
            "source MAC and ingress port"
        );
        wait_engine_digests(&mut c, 4).await;
        no_digest_for(&mut c, Duration::from_millis(100)).await;
        let doc = c.stats_json().await.unwrap();
        assert_eq!(stat(&doc, &["digests", "suppressed"]), 1);
        assert_eq!(stat(&doc, &["digests", "delivered"]), 2);

        // A backup may not acknowledge.
        let mut backup = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert_eq!(backup.arbitrate(5).await.unwrap(), Code::AlreadyExists);
        backup.digest_ack(did, lists[0].list_id).await.unwrap();
        match backup.next_stream_message(WAIT).await {
            Some(Ok(v1::StreamMessageResponse {
                update: Some(v1::stream_message_response::Update::Error(e)),
            })) => assert_eq!(e.canonical_code, Code::PermissionDenied as i32),
            other => panic!("a stream error, got {other:?}"),
        }

        // After the primary's acks, MAC 1 is reported again.
        for l in &lists {
            c.digest_ack(did, l.list_id).await.unwrap();
        }
        c.digest_ack(did, 12345).await.unwrap();
        let acked = |doc: &serde_json::Value| {
            stat(doc, &["digests", "acks"]) == lists.len() as u64
                && stat(doc, &["digests", "unknown_acks"]) == 1
        };
        let mut ok = false;
        for _ in 0..250 {
            if acked(&c.stats_json().await.unwrap()) {
                ok = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(ok, "acks counted");
        rig.inject[0].send(eth(mac(9), mac(1))).unwrap();
        let again = lists_until(&mut c, 1).await;
        assert_eq!(learned(&again[0]), [(mac(1).to_vec(), vec![1u8])]);

        // Once the controller learned MAC 3 (smac hit), no digest.
        let e = c
            .table_entry(
                "smac",
                &["02:00:00:00:00:03"],
                Some(("NoAction", &[])),
                None,
            )
            .unwrap();
        c.write_entry(v1::update::Type::Insert, e).await.unwrap();
        rig.inject[0].send(eth(mac(9), mac(3))).unwrap();
        no_digest_for(&mut c, Duration::from_millis(200)).await;

        // DELETE turns it off: later digests are counted, not sent.
        c.write(vec![update(
            v1::update::Type::Delete,
            digest_entry(did, None),
        )])
        .await
        .expect("digest turned off");
        let before = stat(
            &c.stats_json().await.unwrap(),
            &["switch", "engine", "digests"],
        );
        rig.inject[0].send(eth(mac(9), mac(4))).unwrap();
        wait_engine_digests(&mut c, before + 1).await;
        no_digest_for(&mut c, Duration::from_millis(200)).await;
        assert!(c
            .read(vec![v1::Entity {
                entity: Some(digest_entry(0, None)),
            }])
            .await
            .unwrap()
            .is_empty());
    });
}

fn meter_config(cir: i64, cburst: i64, pir: i64, pburst: i64) -> v1::MeterConfig {
    v1::MeterConfig {
        cir,
        cburst,
        pir,
        pburst,
    }
}

#[test]
fn meters_and_direct_meters_are_configured_read_and_police() {
    let rig = rig("programs/l2_learn.p4");
    rt().block_on(async {
        let mut c = primary(&rig.addr).await;
        let info = c.schema.info.clone();
        let port_meter = id_of(&info.meters[0].preamble);
        let dmac_table = id_of(&c.table("dmac").unwrap().preamble);
        // Forward MAC 2 to port 2.
        let e = c
            .table_entry(
                "dmac",
                &["02:00:00:00:00:02"],
                Some(("forward", &["2"])),
                None,
            )
            .unwrap();
        c.write(vec![update(
            v1::update::Type::Insert,
            v1::entity::Entity::TableEntry(e.clone()),
        )])
        .await
        .unwrap();
        let to2 = || eth(mac(2), mac(1));
        assert!(rig.send_1_to_2(to2()).is_some(), "unconfigured: green");

        // Bad configs.
        let meter_entry = |index: Option<i64>, config| {
            v1::entity::Entity::MeterEntry(v1::MeterEntry {
                meter_id: port_meter,
                index: index.map(|index| v1::Index { index }),
                config,
                counter_data: None,
            })
        };
        for (e, code) in [
            (
                meter_entry(Some(1), Some(meter_config(10, 1, 5, 1))),
                Code::InvalidArgument,
            ),
            (
                meter_entry(Some(1), Some(meter_config(-1, 1, 5, 1))),
                Code::InvalidArgument,
            ),
            (
                meter_entry(Some(512), Some(meter_config(1, 1, 1, 1))),
                Code::OutOfRange,
            ),
        ] {
            let st = c
                .write(vec![update(v1::update::Type::Modify, e)])
                .await
                .unwrap_err();
            assert_eq!(update_errors(&st)[0].canonical_code, code as i32, "{st:?}");
        }
        let st = c
            .write(vec![update(
                v1::update::Type::Insert,
                meter_entry(Some(1), None),
            )])
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&st)[0].canonical_code,
            Code::InvalidArgument as i32
        );

        // Port 1's meter: 1 packet/s, bursts of 1 → the first packet is
        // green, the next ones red (dropped).
        c.write(vec![update(
            v1::update::Type::Modify,
            meter_entry(Some(1), Some(meter_config(1, 1, 1, 1))),
        )])
        .await
        .expect("meter set");
        assert!(rig.send_1_to_2(to2()).is_some(), "first packet passes");
        assert!(rig.send_1_to_2(to2()).is_none(), "second is red");
        let got = c
            .read(vec![v1::Entity {
                entity: Some(meter_entry(Some(1), None)),
            }])
            .await
            .unwrap();
        let Some(v1::entity::Entity::MeterEntry(m)) = &got[0].entity else {
            panic!("a meter entry")
        };
        assert_eq!(m.config, Some(meter_config(1, 1, 1, 1)));
        // Colour counts (MeterCounterData): the unconfigured packet and the
        // first configured one green, the second red.
        let counts = |d: &Option<v1::MeterCounterData>| {
            let d = d.expect("counter_data");
            [d.green, d.yellow, d.red].map(|c| c.expect("a colour").packet_count)
        };
        assert_eq!(counts(&m.counter_data), [2, 0, 1]);
        // The counts are read-only: a Write carrying them is refused.
        let st = c
            .write(vec![update(
                v1::update::Type::Modify,
                v1::entity::Entity::MeterEntry(v1::MeterEntry {
                    counter_data: Some(v1::MeterCounterData::default()),
                    ..*m
                }),
            )])
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&st)[0].canonical_code,
            Code::Unimplemented as i32
        );
        let all = c
            .read(vec![v1::Entity {
                entity: Some(meter_entry(None, None)),
            }])
            .await
            .unwrap();
        assert_eq!(all.len(), 512, "every cell");
        let configured = all
            .iter()
            .filter(|e| matches!(&e.entity, Some(v1::entity::Entity::MeterEntry(m)) if m.config.is_some()))
            .count();
        assert_eq!(configured, 1);

        // No config: back to unconfigured, green.
        c.write(vec![update(
            v1::update::Type::Modify,
            meter_entry(Some(1), None),
        )])
        .await
        .expect("meter reset");
        assert!(rig.send_1_to_2(to2()).is_some(), "reset: green again");

        // The direct meter of the MAC 2 entry.
        let direct = |config| {
            v1::entity::Entity::DirectMeterEntry(v1::DirectMeterEntry {
                table_entry: Some(v1::TableEntry {
                    action: None,
                    ..e.clone()
                }),
                config,
                counter_data: None,
            })
        };
        c.write(vec![update(
            v1::update::Type::Modify,
            direct(Some(meter_config(1, 1, 1, 1))),
        )])
        .await
        .expect("direct meter set");
        assert!(rig.send_1_to_2(to2()).is_some(), "first packet passes");
        assert!(rig.send_1_to_2(to2()).is_none(), "second is red");
        let got = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::DirectMeterEntry(
                    v1::DirectMeterEntry {
                        table_entry: Some(v1::TableEntry {
                            table_id: dmac_table,
                            ..Default::default()
                        }),
                        config: None,
                        counter_data: None,
                    },
                )),
            }])
            .await
            .unwrap();
        assert_eq!(got.len(), 1);
        let Some(v1::entity::Entity::DirectMeterEntry(d)) = &got[0].entity else {
            panic!("a direct meter entry")
        };
        assert_eq!(d.config, Some(meter_config(1, 1, 1, 1)));
        assert_eq!(counts(&d.counter_data)[2], 1, "the second packet red");
        // An atomic batch that deletes the entry, then fails: the entry
        // comes back with its direct meter's rates.
        let del = update(
            v1::update::Type::Delete,
            v1::entity::Entity::TableEntry(v1::TableEntry {
                action: None,
                ..e.clone()
            }),
        );
        let missing = c
            .table_entry(
                "dmac",
                &["02:00:00:00:00:08"],
                Some(("forward", &["1"])),
                None,
            )
            .unwrap();
        let fails = update(
            v1::update::Type::Modify,
            v1::entity::Entity::TableEntry(missing),
        );
        let st = c
            .raw()
            .write(v1::WriteRequest {
                device_id: 1,
                election_id: Some(v1::Uint128 { high: 0, low: 10 }),
                updates: vec![del, fails],
                atomicity: v1::write_request::Atomicity::RollbackOnError as i32,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&st)
                .iter()
                .map(|e| Code::from(e.canonical_code))
                .collect::<Vec<_>>(),
            [Code::Aborted, Code::NotFound]
        );
        let again = c
            .read(vec![v1::Entity {
                entity: Some(v1::entity::Entity::DirectMeterEntry(
                    v1::DirectMeterEntry {
                        table_entry: Some(v1::TableEntry {
                            table_id: dmac_table,
                            ..Default::default()
                        }),
                        config: None,
                        counter_data: None,
                    },
                )),
            }])
            .await
            .unwrap();
        assert_eq!(again, got, "entry and direct meter as before");
        // A table without a direct meter, an entry that does not exist.
        let smac = c
            .table_entry("smac", &["02:00:00:00:00:05"], None, None)
            .unwrap();
        let missing = c
            .table_entry("dmac", &["02:00:00:00:00:07"], None, None)
            .unwrap();
        for (te, code) in [(smac, Code::NotFound), (missing, Code::NotFound)] {
            let st = c
                .write(vec![update(
                    v1::update::Type::Modify,
                    v1::entity::Entity::DirectMeterEntry(v1::DirectMeterEntry {
                        table_entry: Some(te),
                        config: Some(meter_config(1, 1, 1, 1)),
                        counter_data: None,
                    }),
                )])
                .await
                .unwrap_err();
            assert_eq!(update_errors(&st)[0].canonical_code, code as i32, "{st:?}");
        }
    });
}
