//! PacketIn and PacketOut through the CPU port, in process: a v1model
//! switch running programs/ipv4_cpu.p4 with CPU port 255 on the live
//! driver over in-memory ports, the P4Runtime server on 127.0.0.1:0, and
//! our tonic client as the controller. Frames routed to the CPU reach the
//! primary as PacketIn with the `packet_in` header as metadata; a
//! PacketOut leaves the port its metadata names; bad PacketOuts (from a
//! backup, unknown or too-wide metadata) get a StreamError that carries the
//! packet back, and change nothing. Every wait is bounded.

mod p4rt_support;

use std::time::Duration;

use netsparse_p4rt::client::Client;
use netsparse_p4rt::proto::v1;
use netsparse_p4rt::tonic::Code;

use p4rt_support::*;

/// The P4Info metadata id of `field` in controller header `header`.
fn meta_id(c: &Client, header: &str, field: &str) -> u32 {
    c.schema
        .info
        .controller_packet_metadata
        .iter()
        .find(|m| m.preamble.as_ref().is_some_and(|p| p.name == header))
        .and_then(|m| m.metadata.iter().find(|x| x.name == field))
        .map(|x| x.id)
        .unwrap_or_else(|| panic!("{header}.{field} in P4Info"))
}

/// The next PacketIn on the stream, skipping arbitration updates (a new
/// backup makes the server tell everyone who is primary); any other
/// message fails the test.
async fn packet_in(c: &mut Client) -> Option<v1::PacketIn> {
    loop {
        match c.next_stream_message(Duration::from_secs(3)).await {
            None => return None,
            Some(Ok(v1::StreamMessageResponse {
                update: Some(v1::stream_message_response::Update::Packet(p)),
            })) => return Some(p),
            Some(Ok(v1::StreamMessageResponse {
                update: Some(v1::stream_message_response::Update::Arbitration(_)),
            })) => continue,
            other => panic!("expected a PacketIn, got {other:?}"),
        }
    }
}

async fn stream_error(c: &mut Client) -> v1::StreamError {
    match c.next_stream_message(Duration::from_secs(3)).await {
        Some(Ok(v1::StreamMessageResponse {
            update: Some(v1::stream_message_response::Update::Error(e)),
        })) => e,
        other => panic!("expected a StreamError, got {other:?}"),
    }
}

#[test]
fn packet_in_and_packet_out_through_the_cpu_port() {
    let rig = cpu_rig("programs/ipv4_cpu.p4", 255);
    let rt = rt();
    rt.block_on(async {
        let mut c = Client::connect(&rig.addr, 1, WAIT).await.expect("connects");
        assert_eq!(c.arbitrate(10).await.unwrap(), Code::Ok);
        let e = c
            .table_entry(
                "ipv4_lpm",
                &["10.0.9.0/24"],
                Some(("send_to_cpu", &[])),
                None,
            )
            .unwrap();
        c.write_entry(v1::update::Type::Insert, e)
            .await
            .expect("insert");

        // PacketIn: the frame from port 1, ingress_port = 1 as metadata.
        let frame = ipv4_frame([10, 0, 0, 1], [10, 0, 9, 7], 64);
        rig.inject[0].send(frame.clone()).unwrap();
        let p = packet_in(&mut c).await.expect("a PacketIn");
        assert_eq!(p.payload, frame, "the frame, unchanged, after the header");
        let port_id = meta_id(&c, "packet_in", "ingress_port");
        let port = p
            .metadata
            .iter()
            .find(|m| m.metadata_id == port_id)
            .expect("ingress_port metadata");
        assert_eq!(port.value, vec![1], "canonical bytes of port 1");
        // Nothing went out of a real port.
        assert!(rig.out[1].recv_timeout(Duration::from_millis(200)).is_err());

        // PacketOut to port 2 (ports are 9 bits: value 0x0002).
        let egress = meta_id(&c, "packet_out", "egress_port");
        let down = ipv4_frame([10, 0, 0, 9], [10, 0, 7, 7], 9);
        c.packet_out(v1::PacketOut {
            payload: down.clone(),
            metadata: vec![v1::PacketMetadata {
                metadata_id: egress,
                value: vec![0, 2],
            }],
        })
        .await
        .unwrap();
        let got = rig.out[1]
            .recv_timeout(Duration::from_secs(3))
            .expect("sent out of port 2");
        assert_eq!(got, down, "the header is gone, the frame unchanged");

        // A value wider than the field: refused, the packet echoed back.
        let bad = v1::PacketOut {
            payload: down.clone(),
            metadata: vec![v1::PacketMetadata {
                metadata_id: egress,
                value: vec![0x02, 0x00],
            }],
        };
        c.packet_out(bad.clone()).await.unwrap();
        let e = stream_error(&mut c).await;
        assert_eq!(e.canonical_code, Code::InvalidArgument as i32);
        assert!(e.message.contains("egress_port"), "{}", e.message);
        assert_eq!(
            e.details,
            Some(v1::stream_error::Details::PacketOut(v1::PacketOutError {
                packet_out: Some(bad)
            }))
        );
        // An unknown metadata id: refused.
        c.packet_out(v1::PacketOut {
            payload: down.clone(),
            metadata: vec![v1::PacketMetadata {
                metadata_id: 77,
                value: vec![1],
            }],
        })
        .await
        .unwrap();
        let e = stream_error(&mut c).await;
        assert!(e.message.contains("id 77"), "{}", e.message);
        assert!(rig.out[0].recv_timeout(Duration::from_millis(200)).is_err());
        assert!(rig.out[1].recv_timeout(Duration::from_millis(200)).is_err());

        // A backup gets no PacketIn and may not send PacketOut.
        let mut b = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert_eq!(b.arbitrate(5).await.unwrap(), Code::AlreadyExists);
        b.packet_out(v1::PacketOut {
            payload: down.clone(),
            metadata: vec![v1::PacketMetadata {
                metadata_id: egress,
                value: vec![2],
            }],
        })
        .await
        .unwrap();
        let e = stream_error(&mut b).await;
        assert_eq!(e.canonical_code, Code::PermissionDenied as i32);
        assert!(rig.out[1].recv_timeout(Duration::from_millis(200)).is_err());
        rig.inject[0].send(frame.clone()).unwrap();
        assert!(packet_in(&mut c).await.is_some(), "the primary gets it");
        assert!(packet_in(&mut b).await.is_none(), "the backup does not");

        // The counters show it all (read through the stats extension).
        let stats = c.stats_json().await.expect("stats");
        let cpu = &stats["cpu_port"];
        assert_eq!(cpu["port"], 255);
        assert_eq!(cpu["to_cpu"], 2);
        assert_eq!(cpu["packet_in"], 2);
        assert_eq!(cpu["packet_out"], 1);
        assert_eq!(cpu["packet_out_refused"], 3);
    });
}

#[test]
fn packet_out_without_a_cpu_port_is_refused() {
    let rig = rig("programs/ipv4_cpu.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert_eq!(c.arbitrate(3).await.unwrap(), Code::Ok);
        c.packet_out(v1::PacketOut {
            payload: vec![0; 60],
            metadata: Vec::new(),
        })
        .await
        .unwrap();
        let e = stream_error(&mut c).await;
        assert_eq!(e.canonical_code, Code::FailedPrecondition as i32);
        assert!(e.message.contains("--cpu-port"), "{}", e.message);
    });
}

/// With roles, every role's primary receives the PacketIn (roles have no
/// filters here), a backup of either role does not, and the primary of a
/// non-default role may send PacketOut.
#[test]
fn packet_in_reaches_every_roles_primary() {
    let rig = cpu_rig("programs/ipv4_cpu.p4", 255);
    rt().block_on(async {
        let mut c = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        assert_eq!(c.arbitrate(10).await.unwrap(), Code::Ok);
        let mut other = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        other.role = "monitor".into();
        assert_eq!(other.arbitrate(10).await.unwrap(), Code::Ok);
        let mut backup = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        backup.role = "monitor".into();
        assert_eq!(backup.arbitrate(2).await.unwrap(), Code::AlreadyExists);
        let e = c
            .table_entry(
                "ipv4_lpm",
                &["10.0.9.0/24"],
                Some(("send_to_cpu", &[])),
                None,
            )
            .unwrap();
        c.write_entry(v1::update::Type::Insert, e).await.unwrap();
        let frame = ipv4_frame([10, 0, 0, 1], [10, 0, 9, 7], 64);
        rig.inject[0].send(frame.clone()).unwrap();
        for cl in [&mut c, &mut other] {
            let p = packet_in(cl).await.expect("a PacketIn for each primary");
            assert_eq!(p.payload, frame);
        }
        assert!(
            packet_in(&mut backup).await.is_none(),
            "a backup gets no PacketIn"
        );
        let egress = meta_id(&other, "packet_out", "egress_port");
        let down = ipv4_frame([10, 0, 0, 9], [10, 0, 7, 7], 9);
        other
            .packet_out(v1::PacketOut {
                payload: down.clone(),
                metadata: vec![v1::PacketMetadata {
                    metadata_id: egress,
                    value: vec![0, 2],
                }],
            })
            .await
            .unwrap();
        let got = rig.out[1]
            .recv_timeout(Duration::from_secs(3))
            .expect("the monitor primary's PacketOut leaves port 2");
        assert_eq!(got, down);
    });
}
