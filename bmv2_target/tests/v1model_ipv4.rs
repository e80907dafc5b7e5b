//! ipv4_forward on the v1model switch (hand-built artifact).

mod common;

use common::*;
use netsparse_bmv2::testing::ipv4_forward;
use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::KeyMatch;

#[test]
fn forwards_rewrites_and_fixes_checksum() {
    let mut sw = switch(&ipv4_forward());
    sw.add_entry(
        "MyIngress.ipv4_lpm",
        &[KeyMatch::Lpm {
            value: 0x0a00_0100,
            prefix_len: 24,
        }],
        "MyIngress.ipv4_forward",
        &[0x0800_0000_0111, 3],
        None,
    )
    .unwrap();
    let pkt = ipv4_udp([10, 0, 1, 7], 64, b"hello");
    let out = send(&mut sw, 1, &pkt);
    assert_eq!(out.len(), 1);
    let (port, f) = &out[0];
    assert_eq!(*port, 3);
    assert_eq!(f.len(), pkt.len());
    assert_eq!(&f[0..6], &[0x08, 0, 0, 0, 0x01, 0x11]);
    assert_eq!(&f[6..12], &pkt[0..6]);
    assert_eq!(f[22], 63);
    assert!(ipv4_checksum_ok(f));
    assert_eq!(&f[34..], &pkt[34..]);
    // Miss: default drop.
    let out = send(&mut sw, 1, &ipv4_udp([10, 0, 2, 7], 64, b"x"));
    assert!(out.is_empty());
    let st = sw.stats();
    assert_eq!(st.total.drops.ingress_drop, 1);
    assert_eq!(st.total.tx_packets, 1);
}
