//! P4Runtime figures (ignored by default; run with
//! `cargo test --release --test p4runtime_bench -- --ignored --nocapture`):
//! Write throughput in entries per second through gRPC into a running
//! NetSparse switch (batches of 1,000 and of 1), and the per-packet cost
//! of having the server on: the v1model switch (256 LPM routes) packet loop with and
//! without the mailbox check the live driver makes per loop turn.

mod p4rt_support;

use std::time::Instant;

use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_engine::control::ControlPlane;
use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_p4rt::client::{update, Client};
use netsparse_p4rt::proto::v1;
use p4rt_support::*;

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn write_throughput() {
    let rig = ns_rig("programs/netsparse_tor.p4");
    let rt = rt();
    rt.block_on(async {
        let mut c = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        c.arbitrate(1).await.unwrap();
        let entry = |c: &Client, i: u32| {
            let k = i.to_string();
            let e = c
                .table_entry("node_port", &[k.as_str()], Some(("set_port", &["3"])), None)
                .unwrap();
            update(v1::update::Type::Insert, v1::entity::Entity::TableEntry(e))
        };
        // Batches of 1,000.
        let n = 40_000u32;
        let t = Instant::now();
        for b in 0..n / 1000 {
            let ups: Vec<_> = (b * 1000..(b + 1) * 1000).map(|i| entry(&c, i)).collect();
            c.write(ups).await.unwrap();
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "Write, batches of 1000: {n} entries in {s:.3} s = {:.0} entries/s",
            f64::from(n) / s
        );
        // One entry per Write.
        let m = 2_000u32;
        let t = Instant::now();
        for i in n..n + m {
            c.write(vec![entry(&c, i)]).await.unwrap();
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "Write, one entry each: {m} entries in {s:.3} s = {:.0} entries/s ({:.0} us per Write)",
            f64::from(m) / s,
            s * 1e6 / f64::from(m)
        );
    });
}

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn packet_cost_of_the_server() {
    let artifact = compile("programs/ipv4_forward.p4");
    let mut sw = Switch::new(&artifact, SwitchConfig::default()).unwrap();
    for i in 0..256u32 {
        sw.add_entry(
            "ipv4_lpm",
            &[KeyMatch::Lpm {
                value: u128::from(0x0a00_0000 | (i << 8)),
                prefix_len: 24,
            }],
            "ipv4_forward",
            &[0x0000_0000_0202, 2],
            None,
        )
        .unwrap();
    }
    let frames: Vec<Vec<u8>> = (0..=255u8)
        .map(|i| ipv4_frame([10, 9, 0, 1], [10, 0, i, 7], 64))
        .collect();
    let (_poster, mailbox) = netsparse_p4rt::mailbox::mailbox::<Switch>();
    let mut out = Outputs::new();
    let n = 1_000_000usize;
    let mut run = |sw: &mut Switch, with: bool| {
        let t = Instant::now();
        for i in 0..n {
            if with {
                mailbox.poll(sw);
            }
            sw.on_packet(
                Time::from_ns(i as u64 * 100),
                1,
                &frames[i % frames.len()],
                &mut out,
            );
            out.clear();
        }
        n as f64 / t.elapsed().as_secs_f64()
    };
    let mut off = Vec::new();
    let mut on = Vec::new();
    for _ in 0..3 {
        off.push(run(&mut sw, false));
        on.push(run(&mut sw, true));
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "packets/s, server off: {:.2} M, on (mailbox checked per packet): {:.2} M ({:+.1} %)",
        best(&off) / 1e6,
        best(&on) / 1e6,
        (best(&on) / best(&off) - 1.0) * 100.0
    );
}
