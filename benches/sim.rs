//! Simulator benchmarks: Matrix Market reading (10M nonzeros), the
//! per-node/per-core remote analysis, event-loop throughput, and a full
//! NetSparse gather on the simulated cluster (compiled NIC, ToR and spine
//! programs; throughput in remote nonzeros, i.e. idxs through the RIG units),
//! and the block-sparse AllReduce of `--collective allreduce`.
//!
//! `CARGO_TARGET_DIR=... cargo bench -p netsparse --bench sim`

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use netsparse::programs::ProgramCache;
use netsparse::sim::cluster::RunOptions;
use netsparse::sim::config::SimConfig;
use netsparse::sim::devices::Reflector;
use netsparse::sim::engine::{Engine, EngineConfig, LinkParams};
use netsparse::sim::matrix::gen::{GenSpec, RmatParams};
use netsparse::sim::matrix::{read_mtx_file, write_mtx_file, CooBuilder, CsrMatrix, ReadOptions};
use netsparse::sim::partition::{analyze, Partition};
use netsparse::sim::report::MatrixSummary;
use netsparse::sim::{simulate_with, Mode};
use netsparse_externs::Time;

const NNZ: u64 = 10_000_000;

/// The readers' matrix: 10 M uniformly random entries.
fn uniform_10m() -> CsrMatrix {
    let (m, _) = GenSpec::Uniform {
        rows: 1 << 20,
        cols: 1 << 20,
        nnz: NNZ,
    }
    .generate(1)
    .expect("generator");
    m
}

fn write_files(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let m = uniform_10m();
    let pattern = dir.join("u10m_pattern.mtx");
    write_mtx_file(&m, &pattern, " benchmark").expect("write");
    // The same structure with real values, as most published files have.
    let mut b = CooBuilder::new(u64::from(m.rows()), u64::from(m.cols()), true).expect("dims");
    b.reserve(m.nnz() as usize);
    for (r, c, _) in m.iter() {
        b.push(
            u64::from(r),
            u64::from(c),
            f64::from(r % 1000) * 0.001 + f64::from(c % 7) * 1.25e-3,
        )
        .expect("in range");
    }
    let (mv, _) = b.build();
    let real = dir.join("u10m_real.mtx");
    write_mtx_file(&mv, &real, " benchmark").expect("write");
    (pattern, real)
}

/// The pattern's transpose, its entries in column order as SuiteSparse
/// writes its files: the reader must group them by row.
fn write_column_ordered(dir: &Path) -> std::path::PathBuf {
    use std::io::Write as _;
    let m = uniform_10m();
    let path = dir.join("u10m_by_column.mtx");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    writeln!(w, "%%MatrixMarket matrix coordinate pattern general").expect("write");
    writeln!(w, "{} {} {}", m.cols(), m.rows(), m.nnz()).expect("write");
    for (r, c, _) in m.iter() {
        writeln!(w, "{} {}", c + 1, r + 1).expect("write");
    }
    w.flush().expect("write");
    path
}

fn mtx_read(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (pattern, real) = write_files(dir.path());
    let mut g = c.benchmark_group("mtx_read_10M");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(30));
    g.throughput(Throughput::Elements(NNZ));
    g.bench_function("pattern", |b| {
        b.iter(|| {
            let (m, _) = read_mtx_file(&pattern, ReadOptions::default()).expect("read");
            black_box(m.nnz())
        })
    });
    let by_column = write_column_ordered(dir.path());
    g.bench_function("pattern_column_order", |b| {
        b.iter(|| {
            let (m, _) = read_mtx_file(&by_column, ReadOptions::default()).expect("read");
            black_box(m.nnz())
        })
    });
    g.bench_function("real_keep_values", |b| {
        b.iter(|| {
            let (m, _) = read_mtx_file(&real, ReadOptions { values: true }).expect("read");
            black_box(m.nnz())
        })
    });
    g.bench_function("real_structure_only", |b| {
        b.iter(|| {
            let (m, _) = read_mtx_file(&real, ReadOptions { values: false }).expect("read");
            black_box(m.nnz())
        })
    });
    g.finish();
}

fn partition_analysis(c: &mut Criterion) {
    let (m, _) = GenSpec::Rmat(RmatParams {
        scale: 18,
        edge_factor: 16,
        ..RmatParams::default()
    })
    .generate(1)
    .expect("generator");
    let part = Partition::equal(&m, 128).expect("partition");
    let mut g = c.benchmark_group("analyze_rmat18");
    g.sample_size(10);
    g.throughput(Throughput::Elements(m.nnz()));
    g.bench_function("128_nodes_64_cores", |b| {
        b.iter(|| black_box(analyze(&m, &part, 64, &mut |_| true).nodes.len()))
    });
    g.finish();
}

fn event_loop(c: &mut Criterion) {
    const EVENTS: u64 = 1_000_000;
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS));
    g.bench_function("reflector_ping_pong_1M_events", |b| {
        b.iter(|| {
            let mut e: Engine = Engine::new(EngineConfig {
                max_events: EVENTS,
                ..EngineConfig::default()
            });
            let a = e.add_device(Box::new(Reflector::default()), Time::ZERO, "a");
            let r = e.add_device(Box::new(Reflector::default()), Time::from_ns(300), "b");
            e.connect(a, 0, r, 0, LinkParams::default()).expect("link");
            // 64 frames in flight.
            for i in 0..64 {
                e.inject(Time::from_ns(i), a, 0, &[0u8; 1500])
                    .expect("inject");
            }
            let _ = black_box(e.run());
            black_box(e.stats().events)
        })
    });
    g.finish();
}

fn netsparse_gather(c: &mut Criterion) {
    let (m, _) = GenSpec::Rmat(RmatParams {
        scale: 15,
        edge_factor: 10,
        ..RmatParams::default()
    })
    .generate(1)
    .expect("generator");
    let cfg = SimConfig {
        nodes: 32,
        racks: 4,
        rig_batch: 512,
        ..SimConfig::default()
    };
    let part = Partition::equal(&m, cfg.nodes).expect("partition");
    let summary = MatrixSummary {
        name: "rmat15".into(),
        rows: m.rows(),
        cols: m.cols(),
        nnz: m.nnz(),
        duplicates: 0,
    };
    let mut programs = ProgramCache::new();
    let mut g = c.benchmark_group("netsparse_gather_rmat15_32_nodes");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(m.nnz()));
    for mode in [Mode::Rig, Mode::NetSparse] {
        g.bench_function(mode.name(), |b| {
            b.iter(|| {
                let r = simulate_with(
                    &m,
                    summary.clone(),
                    &part,
                    &cfg,
                    &[mode],
                    &RunOptions::default(),
                    &mut programs,
                    &mut |_| true,
                )
                .expect("simulate");
                r.check().expect("verified");
                black_box(r.modes[0].time())
            })
        });
    }
    g.finish();
}

/// Block-sparse AllReduce (`--collective allreduce`): 4 workers, 4 MiB of
/// 1 KiB blocks, density 0.25, each algorithm; throughput in worker blocks
/// (4 × 4096 per run).
fn collective_allreduce(c: &mut Criterion) {
    use netsparse::sim::collective::{run, Algo, CollectiveParams};
    let mut programs = ProgramCache::new();
    let mut g = c.benchmark_group("allreduce_4mib_1kib_blocks_4_workers");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(4 * 4096));
    for algo in [Algo::Ring, Algo::Omniccl] {
        let p = CollectiveParams {
            algos: vec![algo],
            bytes: 4 << 20,
            block: 1024,
            depth: 64,
            density: 0.25,
            workers: 4,
            ..CollectiveParams::default()
        };
        g.bench_function(algo.name(), |b| {
            b.iter(|| {
                let r = run(&p, &mut programs).expect("runs");
                assert!(r.verified());
                black_box(r.results[0].time_ns)
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    mtx_read,
    partition_analysis,
    event_loop,
    netsparse_gather,
    collective_allreduce
);
criterion_main!(benches);
