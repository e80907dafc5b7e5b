//! Idxs per second through one client RIG unit, running the compiled
//! `programs/netsparse_nic.p4` (Idx Filter, Pending PR Table, destination
//! solver, PR generation, concatenation, framing and pacing).
//!
//! `cargo bench -p netsparse-nic --bench rig`

use std::path::Path;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_nic::testing::{bench_idxs, ClientUnitBench};

const IDXS: usize = 200_000;
const COLUMNS: u64 = 1 << 18;

fn client_unit(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs/netsparse_nic.p4");
    let mut sources = SourceMap::new();
    let art = compile_file(&mut sources, &path, &CompileOptions::default())
        .expect("netsparse_nic.p4 compiles")
        .artifact;
    let idxs = bench_idxs(IDXS, COLUMNS, 42);
    let mut g = c.benchmark_group("rig_client_unit");
    g.throughput(Throughput::Elements(IDXS as u64));
    g.sample_size(20);
    g.bench_function("netsparse_nic_16_nodes", |b| {
        b.iter_batched(
            || ClientUnitBench::new(&art, &idxs, COLUMNS, 16).expect("bench NIC"),
            |mut w| {
                assert_eq!(w.run(), IDXS as u64);
                // Dropped outside the measurement.
                w
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, client_unit);
criterion_main!(benches);
