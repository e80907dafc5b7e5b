//! P4Runtime benchmarks: Write throughput through gRPC into a running
//! NetSparse switch (inserts in batches of 1,000 and one per Write; each
//! batch deleted again, untimed, so the table stays the same size), and the
//! per-packet cost of having the server on: the v1model switch's packet
//! loop (256 LPM routes) with and without the mailbox check the live driver
//! makes per loop turn.
//!
//! `CARGO_TARGET_DIR=... cargo bench -p netsparse --bench p4runtime`

#[path = "../tests/p4rt_support/mod.rs"]
mod p4rt_support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_engine::control::ControlPlane;
use netsparse_externs::artifact::KeyMatch;
use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_p4rt::client::{update, Client};
use netsparse_p4rt::proto::v1;
use p4rt_support::*;

fn writes(c: &mut Criterion) {
    let rig = ns_rig("programs/netsparse_tor.p4");
    let rt = rt();
    let mut client = rt.block_on(async {
        let mut cl = Client::connect(&rig.addr, 1, WAIT).await.unwrap();
        cl.arbitrate(1).await.unwrap();
        cl
    });
    let batch = |cl: &Client, ty: v1::update::Type, from: u32, n: u32| -> Vec<v1::Update> {
        (from..from + n)
            .map(|i| {
                let k = i.to_string();
                let e = cl
                    .table_entry("node_port", &[k.as_str()], Some(("set_port", &["3"])), None)
                    .unwrap();
                update(ty, v1::entity::Entity::TableEntry(e))
            })
            .collect()
    };
    let mut g = c.benchmark_group("p4runtime_write");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for n in [1000u32, 1] {
        g.throughput(Throughput::Elements(u64::from(n)));
        g.bench_function(format!("insert, {n} per Write"), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let ins = batch(&client, v1::update::Type::Insert, 0, n);
                    let del = batch(&client, v1::update::Type::Delete, 0, n);
                    let t = Instant::now();
                    rt.block_on(client.write(ins)).unwrap();
                    timed += t.elapsed();
                    rt.block_on(client.write(del)).unwrap();
                }
                timed
            })
        });
    }
    g.finish();
    drop(client);
    drop(rig);
}

fn packet_loop(c: &mut Criterion) {
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
    let mut g = c.benchmark_group("p4runtime_packet_loop");
    g.throughput(Throughput::Elements(frames.len() as u64));
    for with in [false, true] {
        let name = if with {
            "server on (mailbox checked per packet)"
        } else {
            "server off"
        };
        let mut now = 0u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                for f in &frames {
                    if with {
                        mailbox.poll(&mut sw);
                    }
                    now += 100;
                    sw.on_packet(Time::from_ns(now), 1, black_box(f), &mut out);
                    out.clear();
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, writes, packet_loop);
criterion_main!(benches);
