//! PRs per second through one middle pipe of the NetSparse switch running
//! the compiled `programs/netsparse_tor.p4` (Table 5 shape: 32 ports in 8
//! pipes, 32 MiB cache in 64-byte mode): K = 16 (64-byte properties),
//! full packets alternating responses (inserts) and reads (lookups; hits
//! become responses), idxs drawn from a wide range, every packet meeting in
//! middle pipe 0. Each iteration replays 2048 packets through the whole
//! switch (ingress, crossbar, middle pipe, Concatenator timers, egress);
//! criterion's elements are PRs.
//!
//! `cargo bench -p netsparse-bmv2 --bench middle_pipe`
//! (also `netsparse bench middle-pipe`).

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsparse_bmv2::nsswitch::testing::{install_tor_routes, middle_workload};
use netsparse_bmv2::nsswitch::{NsConfig, NsSwitch};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::{Datapath, Outputs, Time};

fn middle_pipe(c: &mut Criterion) {
    let path = std::env::var("NS_BENCH_PROGRAM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs/netsparse_tor.p4")
        });
    let mut sources = SourceMap::default();
    let artifact = compile_file(&mut sources, &path, &CompileOptions::default())
        .map(|c| c.artifact)
        .unwrap_or_else(|d| panic!("netsparse_tor.p4 does not compile: {d:?}"));
    let cfg = NsConfig::default();
    let range: u64 = std::env::var("NS_BENCH_RANGE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 22);
    let w = middle_workload(2048, 64, range, cfg.ports_per_pipe(), 1).expect("workload");
    let mut sw = NsSwitch::new(&artifact, cfg).expect("load");
    install_tor_routes(&mut sw, &w.routes).expect("routes");
    let mut out = Outputs::new();
    let mut now = Time::ZERO;
    let mut g = c.benchmark_group("middle_pipe");
    g.throughput(Throughput::Elements(w.prs));
    if std::env::var_os("NS_BENCH_CPU_ONLY").is_none() {
        g.bench_function("tor_k16", |b| {
            b.iter(|| {
                for (port, f) in &w.frames {
                    now += Time::from_ns(50);
                    while let Some(d) = sw.next_deadline().filter(|d| *d <= now) {
                        sw.on_timer(d, &mut out);
                        out.clear();
                    }
                    sw.on_packet(now, *port, f, &mut out);
                    out.clear();
                }
            })
        });
    }
    g.finish();
    // Per-core figure, independent of other load: thread CPU time.
    let cpu0 = netsparse_externs::time::thread_cpu_time();
    let reps: u64 = std::env::var("NS_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    for _ in 0..reps {
        for (port, f) in &w.frames {
            now += Time::from_ns(50);
            while let Some(d) = sw.next_deadline().filter(|d| *d <= now) {
                sw.on_timer(d, &mut out);
                out.clear();
            }
            sw.on_packet(now, *port, f, &mut out);
            out.clear();
        }
    }
    let cpu = netsparse_externs::time::thread_cpu_time() - cpu0;
    eprintln!(
        "cpu: {:.0} PRs/s per core ({} PRs in {cpu:.3} s of thread CPU time)",
        (w.prs * reps) as f64 / cpu.max(1e-9),
        w.prs * reps
    );
    let s = sw.stats();
    eprintln!(
        "pipe 0: {} PRs in, {} hits, {} misses, {} inserts ({} already cached), {:.1} PRs/packet out",
        s.pipes[0].prs_in,
        s.pipes[0].cache.hits,
        s.pipes[0].cache.misses,
        s.pipes[0].cache.inserts,
        s.pipes[0].cache.present,
        s.pipes[0].prs_per_packet
    );
}

criterion_group!(benches, middle_pipe);
criterion_main!(benches);
