//! Tables (exact, LPM, ternary, range, optional, mixed), const entries and
//! defaults, direct counters and meters, registers, counters, meters, hash
//! and random on compiled programs.

mod common;

use common::*;
use netsparse_bmv2::{ControlPlaneError, EntryHandle};
use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::{HashAlgo, KeyMatch};
use netsparse_externs::meter::MeterRates;
use netsparse_externs::{Datapath, Outputs, Time};

const PROG: &str = r#"
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> sel; bit<8> a; bit<8> b; bit<8> col; bit<16> tag; bit<32> d; bit<48> e; }
struct headers { h_t h; }
struct metadata { bit<2> color; bit<32> r; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) ex_counter;
    direct_meter<bit<2>>(MeterType.packets) lpm_meter;
    register<bit<32>>(8) regs;
    counter(4, CounterType.packets) pkts;
    meter(2, MeterType.packets) m;
    action set(bit<9> port, bit<16> tag) { sm.egress_spec = port; hdr.h.tag = tag; }
    action set_metered(bit<9> port) { sm.egress_spec = port; lpm_meter.read(meta.color); hdr.h.col = (bit<8>)meta.color; }
    action to1() { sm.egress_spec = 1; }
    table tern {
        key = { hdr.h.a: ternary; hdr.h.b: range; hdr.h.e: optional; }
        actions = { set; NoAction; }
        default_action = NoAction();
        size = 4;
    }
    table ex {
        key = { hdr.h.a: exact; hdr.h.e: exact; }
        actions = { set; @defaultonly NoAction; }
        default_action = NoAction();
        counters = ex_counter;
        size = 3;
    }
    table lpm {
        key = { hdr.h.a: exact; hdr.h.d: lpm; }
        actions = { set_metered; NoAction; }
        default_action = NoAction();
        meters = lpm_meter;
    }
    table consts {
        key = { hdr.h.a: exact; }
        actions = { set; }
        const entries = { 1: set(5, 0x101); 2: set(6, 0x202); }
        const default_action = set(7, 0x707);
    }
    apply {
        sm.egress_spec = 0;
        if (hdr.h.sel == 1) { tern.apply(); }
        else if (hdr.h.sel == 2) { ex.apply(); }
        else if (hdr.h.sel == 3) { lpm.apply(); }
        else if (hdr.h.sel == 4) { consts.apply(); }
        else if (hdr.h.sel == 5) {
            regs.read(meta.r, (bit<32>)hdr.h.a);
            hdr.h.d = meta.r;
            regs.write((bit<32>)hdr.h.a, meta.r + 1);
            pkts.count((bit<32>)hdr.h.a);
            m.execute_meter(32w0, hdr.h.col);
        }
        else if (hdr.h.sel == 6) {
            hash(hdr.h.d, HashAlgorithm.crc32, 32w0, { hdr.h.a, hdr.h.b }, 32w0);
            hash(hdr.h.tag, HashAlgorithm.crc16, 16w100, { hdr.h.a, hdr.h.b }, 16w1000);
            hash(hdr.h.e, HashAlgorithm.identity, 48w0, { hdr.h.a, hdr.h.b, hdr.h.col }, 48w0);
        }
        else if (hdr.h.sel == 7) {
            random(hdr.h.col, 8w10, 8w20);
            random(hdr.h.d, 32w0, 32w0xffffffff);
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#;

/// sel, a, b, col, tag(2), d(4), e(6) = 16 bytes.
fn pkt(sel: u8, a: u8, b: u8, d: u32, e: u64) -> Vec<u8> {
    let mut f = vec![sel, a, b, 0, 0, 0];
    f.extend_from_slice(&d.to_be_bytes());
    f.extend_from_slice(&e.to_be_bytes()[2..]);
    f
}

fn tag(out: &[(u32, Vec<u8>)]) -> (u32, u16) {
    assert_eq!(out.len(), 1, "{out:?}");
    (out[0].0, u16::from_be_bytes([out[0].1[4], out[0].1[5]]))
}

fn tern(v: u128, m: u128) -> KeyMatch {
    KeyMatch::Ternary { value: v, mask: m }
}

#[test]
fn ternary_range_optional_priorities() {
    let mut sw = p4_switch(PROG);
    let t = "tern";
    let any_e = KeyMatch::Any;
    let all_b = KeyMatch::Range { lo: 0, hi: 255 };
    sw.add_entry(
        t,
        &[tern(0x10, 0xf0), all_b.clone(), any_e.clone()],
        "set",
        &[1, 1],
        Some(10),
    )
    .unwrap();
    sw.add_entry(
        t,
        &[
            tern(0x12, 0xff),
            KeyMatch::Range { lo: 5, hi: 9 },
            any_e.clone(),
        ],
        "set",
        &[2, 2],
        Some(20),
    )
    .unwrap();
    // Same priority as the first, added later: loses ties.
    sw.add_entry(
        t,
        &[tern(0, 0), all_b.clone(), KeyMatch::Exact { value: 0xbeef }],
        "set",
        &[3, 3],
        Some(10),
    )
    .unwrap();
    assert_eq!(tag(&send(&mut sw, 0, &pkt(1, 0x12, 7, 0, 0))), (2, 2));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(1, 0x12, 10, 0, 0))), (1, 1));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(1, 0x12, 10, 0, 0xbeef))), (1, 1));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(1, 0x22, 10, 0, 0xbeef))), (3, 3));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(1, 0x22, 10, 0, 0xbeee))), (0, 0));
    // Errors name the entry.
    let e = sw.add_entry(
        t,
        &[tern(0, 0), all_b.clone(), any_e.clone()],
        "set",
        &[1, 1],
        None,
    );
    assert!(
        matches!(e, Err(ControlPlaneError::PriorityRequired { .. })),
        "{e:?}"
    );
    let e = sw.add_entry(
        t,
        &[tern(0, 0), KeyMatch::Range { lo: 9, hi: 5 }, any_e.clone()],
        "set",
        &[1, 1],
        Some(1),
    );
    assert!(
        matches!(e, Err(ControlPlaneError::EmptyRange { .. })),
        "{e:?}"
    );
    let e = sw.add_entry(
        t,
        &[
            tern(0, 0),
            KeyMatch::Lpm {
                value: 0,
                prefix_len: 4,
            },
            any_e.clone(),
        ],
        "set",
        &[1, 1],
        Some(1),
    );
    assert_eq!(
        e.unwrap_err().to_string(),
        "key `hdr.h.b` of table `I.tern` is Range: a lpm match is not allowed there"
    );
    // Same match and priority as entry 0: a duplicate (P4Runtime rule).
    assert!(matches!(
        sw.add_entry(
            t,
            &[tern(0x10, 0xf0), all_b.clone(), any_e.clone()],
            "set",
            &[9, 9],
            Some(10)
        ),
        Err(ControlPlaneError::Duplicate {
            handle: Some(0),
            ..
        })
    ));
    // A 4th entry fills the table (size 4); a 5th is refused.
    sw.add_entry(
        t,
        &[tern(0, 0), all_b.clone(), any_e.clone()],
        "set",
        &[1, 1],
        Some(10),
    )
    .unwrap();
    let dup = sw.add_entry(
        t,
        &[tern(0, 0), all_b.clone(), any_e.clone()],
        "set",
        &[1, 1],
        Some(10),
    );
    assert!(matches!(
        dup,
        Err(ControlPlaneError::TableFull { .. }) | Err(ControlPlaneError::Duplicate { .. })
    ));
    let full = sw.add_entry(t, &[tern(2, 2), all_b, any_e], "set", &[1, 1], Some(1));
    assert_eq!(
        full.unwrap_err().to_string(),
        "table `I.tern` is full (4 entries)"
    );
}

#[test]
fn exact_direct_counter_delete_modify_size() {
    let mut sw = p4_switch(PROG);
    let m = |a, e| [KeyMatch::Exact { value: a }, KeyMatch::Exact { value: e }];
    let h = sw
        .add_entry("I.ex", &m(1, 0xaabb), "I.set", &[3, 0x33], None)
        .unwrap();
    sw.add_entry("ex", &m(2, 0xaabb), "set", &[4, 0x44], None)
        .unwrap();
    assert_eq!(tag(&send(&mut sw, 0, &pkt(2, 1, 0, 0, 0xaabb))), (3, 0x33));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(2, 1, 0, 0, 0xaabb))), (3, 0x33));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(2, 2, 0, 0, 0xaabb))), (4, 0x44));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(2, 3, 0, 0, 0xaabb))), (0, 0));
    let c = sw.direct_counter_read("ex", h).unwrap();
    assert_eq!((c.packets, c.bytes), (2, 32));
    // Duplicates, key widths, parameter widths, @defaultonly.
    assert!(matches!(
        sw.add_entry("ex", &m(1, 0xaabb), "set", &[3, 3], None),
        Err(ControlPlaneError::Duplicate {
            handle: Some(0),
            ..
        })
    ));
    assert!(matches!(
        sw.add_entry("ex", &m(256, 0), "set", &[3, 3], None),
        Err(ControlPlaneError::KeyTooWide { .. })
    ));
    assert!(matches!(
        sw.add_entry("ex", &m(5, 0), "set", &[512, 3], None),
        Err(ControlPlaneError::ParamTooWide { .. })
    ));
    assert!(matches!(
        sw.add_entry("ex", &m(5, 0), "set", &[1], None),
        Err(ControlPlaneError::ParamCount {
            expected: 2,
            got: 1,
            ..
        })
    ));
    assert!(matches!(
        sw.add_entry("ex", &m(5, 0), "NoAction", &[], None),
        Err(ControlPlaneError::DefaultOnly { .. })
    ));
    assert!(matches!(
        sw.add_entry("ex", &m(5, 0), "set", &[1, 1], Some(3)),
        Err(ControlPlaneError::PriorityNotAllowed { .. })
    ));
    assert!(matches!(
        sw.add_entry("ex", &[KeyMatch::Exact { value: 1 }], "set", &[1, 1], None),
        Err(ControlPlaneError::KeyCount {
            expected: 2,
            got: 1,
            ..
        })
    ));
    // Modify and delete by handle.
    sw.modify_entry("ex", h, "set", &[9, 0x99]).unwrap();
    assert_eq!(tag(&send(&mut sw, 0, &pkt(2, 1, 0, 0, 0xaabb))), (9, 0x99));
    sw.delete_entry("ex", h).unwrap();
    assert_eq!(tag(&send(&mut sw, 0, &pkt(2, 1, 0, 0, 0xaabb))), (0, 0));
    assert!(matches!(
        sw.delete_entry("ex", h),
        Err(ControlPlaneError::NoSuchEntry { .. })
    ));
    assert!(matches!(
        sw.delete_entry("ex", EntryHandle(77)),
        Err(ControlPlaneError::NoSuchEntry { handle: 77, .. })
    ));
    // Size 3.
    sw.add_entry("ex", &m(7, 0), "set", &[1, 1], None).unwrap();
    sw.add_entry("ex", &m(8, 0), "set", &[1, 1], None).unwrap();
    assert_eq!(
        sw.add_entry("ex", &m(9, 0), "set", &[1, 1], None)
            .unwrap_err()
            .to_string(),
        "table `I.ex` is full (3 entries)"
    );
    sw.counter_reset("ex_counter").unwrap();
    assert_eq!(
        sw.entries("ex")
            .unwrap()
            .iter()
            .map(|e| e.counter.packets)
            .sum::<u64>(),
        0
    );
    // Default actions.
    sw.set_default("ex", "set", &[6, 0x66]).unwrap();
    assert_eq!(tag(&send(&mut sw, 0, &pkt(2, 50, 0, 0, 0))), (6, 0x66));
}

#[test]
fn lpm_with_exact_part_and_direct_meter() {
    let mut sw = p4_switch(PROG);
    let lpm = |a, v, l| {
        [
            KeyMatch::Exact { value: a },
            KeyMatch::Lpm {
                value: v,
                prefix_len: l,
            },
        ]
    };
    sw.add_entry("lpm", &lpm(1, 0x0a00_0000, 8), "set_metered", &[2], None)
        .unwrap();
    let h = sw
        .add_entry("lpm", &lpm(1, 0x0a01_0000, 16), "set_metered", &[3], None)
        .unwrap();
    sw.add_entry("lpm", &lpm(2, 0, 0), "set_metered", &[4], None)
        .unwrap();
    let port = |sw: &mut netsparse_bmv2::Switch, a, d| {
        send(sw, 0, &pkt(3, a, 0, d, 0)).first().map(|o| o.0)
    };
    assert_eq!(port(&mut sw, 1, 0x0a01_0203), Some(3));
    assert_eq!(port(&mut sw, 1, 0x0a02_0203), Some(2));
    assert_eq!(port(&mut sw, 1, 0x0b02_0203), Some(0));
    assert_eq!(port(&mut sw, 2, 0x0b02_0203), Some(4));
    assert!(matches!(
        sw.add_entry("lpm", &lpm(1, 0, 33), "set_metered", &[2], None),
        Err(ControlPlaneError::PrefixTooLong {
            len: 33,
            width: 32,
            ..
        })
    ));
    // Direct meter on the /16 entry: 1 packet/µs, bursts of 2 committed and
    // 3 peak; all packets at the same instant → green, green, yellow, red.
    sw.meter_set_rates(
        "lpm_meter",
        Some(u64::from(h.0)),
        MeterRates {
            cir: 1.0,
            cbs: 2,
            pir: 1.0,
            pbs: 3,
        },
    )
    .unwrap();
    let colors: Vec<u8> = (0..4)
        .map(|_| send(&mut sw, 0, &pkt(3, 1, 0, 0x0a01_0101, 0))[0].1[3])
        .collect();
    assert_eq!(colors, vec![0, 0, 1, 2]);
}

#[test]
fn const_entries_and_const_default() {
    let mut sw = p4_switch(PROG);
    assert_eq!(tag(&send(&mut sw, 0, &pkt(4, 1, 0, 0, 0))), (5, 0x101));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(4, 2, 0, 0, 0))), (6, 0x202));
    assert_eq!(tag(&send(&mut sw, 0, &pkt(4, 3, 0, 0, 0))), (7, 0x707));
    assert!(matches!(
        sw.add_entry(
            "consts",
            &[KeyMatch::Exact { value: 3 }],
            "set",
            &[1, 1],
            None
        ),
        Err(ControlPlaneError::ConstEntries { .. })
    ));
    assert!(matches!(
        sw.set_default("consts", "set", &[1, 1]),
        Err(ControlPlaneError::ConstDefault { .. })
    ));
    let entries = sw.entries("consts").unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|e| e.is_const));
}

#[test]
fn registers_counters_meters() {
    let mut sw = p4_switch(PROG);
    sw.register_write("regs", 3, 41).unwrap();
    let out = send(&mut sw, 0, &pkt(5, 3, 0, 0, 0));
    assert_eq!(out[0].1[6..10], 41u32.to_be_bytes());
    assert_eq!(sw.register_read("regs", 3).unwrap(), 42);
    assert_eq!(sw.counter_read("pkts", 3).unwrap().packets, 1);
    // Out of range: data plane reads 0, writes and counts are ignored and counted.
    let out = send(&mut sw, 0, &pkt(5, 200, 0, 0, 0));
    assert_eq!(out[0].1[6..10], [0, 0, 0, 0]);
    assert_eq!(sw.stats().engine.extern_index_out_of_range, 3);
    assert!(matches!(
        sw.register_read("regs", 8),
        Err(ControlPlaneError::IndexOutOfRange { size: 8, .. })
    ));
    assert!(matches!(
        sw.register_write("regs", 0, 1 << 32),
        Err(ControlPlaneError::RegisterTooWide { .. })
    ));
    assert!(matches!(
        sw.register_read("pkts", 0),
        Err(ControlPlaneError::WrongKind { .. })
    ));
    sw.register_reset("regs").unwrap();
    assert_eq!(sw.register_read("regs", 3).unwrap(), 0);
    sw.counter_reset("pkts").unwrap();
    assert_eq!(sw.counter_read("pkts", 3).unwrap().packets, 0);
    // Meter 0: 1 packet per µs, burst 1 / 2. Packets 1 µs apart stay green.
    sw.meter_set_rates(
        "I.m",
        Some(0),
        MeterRates {
            cir: 1.0,
            cbs: 1,
            pir: 1.0,
            pbs: 2,
        },
    )
    .unwrap();
    let mut out = Outputs::new();
    let mut colors = Vec::new();
    for (i, t) in [0u64, 0, 0, 5, 5].iter().enumerate() {
        let _ = i;
        sw.on_packet(Time::from_us(*t), 0, &pkt(5, 0, 0, 0, 0), &mut out);
        colors.push(out.iter().last().map(|(_, f)| f[3]).unwrap());
        out.clear();
    }
    assert_eq!(colors, vec![0, 1, 2, 0, 1]);
    assert!(matches!(
        sw.meter_set_rates(
            "m",
            Some(0),
            MeterRates {
                cir: 2.0,
                cbs: 1,
                pir: 1.0,
                pbs: 1
            }
        ),
        Err(ControlPlaneError::Meter { .. })
    ));
}

#[test]
fn hashes_match_the_reference_algorithms() {
    use netsparse_externs::hash::compute;
    let mut sw = p4_switch(PROG);
    let mut f = pkt(6, 0x12, 0x34, 0, 0);
    f[3] = 0x56;
    let out = send(&mut sw, 0, &f);
    let o = &out[0].1;
    let crc32 = u32::from_be_bytes([o[6], o[7], o[8], o[9]]);
    assert_eq!(u64::from(crc32), compute(HashAlgo::Crc32, &[0x12, 0x34]));
    let crc16 = u16::from_be_bytes([o[4], o[5]]);
    assert_eq!(
        u64::from(crc16),
        100 + compute(HashAlgo::Crc16, &[0x12, 0x34]) % 1000
    );
    assert_eq!(&o[10..16], &[0, 0, 0, 0x12, 0x34, 0x56]);
}

#[test]
fn random_is_in_range_and_seeded() {
    let run = |seed| {
        let mut sw = netsparse_bmv2::Switch::new(
            &p4(PROG),
            netsparse_bmv2::SwitchConfig {
                seed,
                ..Default::default()
            },
        )
        .unwrap();
        (0..50)
            .map(|_| {
                let o = send(&mut sw, 0, &pkt(7, 0, 0, 0, 0));
                (
                    o[0].1[3],
                    u32::from_be_bytes([o[0].1[6], o[0].1[7], o[0].1[8], o[0].1[9]]),
                )
            })
            .collect::<Vec<_>>()
    };
    let a = run(1);
    assert!(a.iter().all(|(c, _)| (10..=20).contains(c)));
    assert!(
        a.iter()
            .map(|(c, _)| *c)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 5
    );
    assert_eq!(a, run(1));
    assert_ne!(a, run(2));
}
