//! Replay ipv4_forward packets through the v1model switch in-process:
//! `programs/ipv4_forward.p4` compiled, 300 LPM routes, 4096 pre-built
//! frames per iteration (criterion reports elements = packets per second).
//!
//! `cargo bench -p netsparse-bmv2 --bench switch`

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsparse_bmv2::testing::{install_routes, ipv4_forward, ipv4_workload};
use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::artifact::Artifact;
use netsparse_externs::{Datapath, Outputs, Time};

fn compiled() -> Artifact {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs/ipv4_forward.p4");
    let mut sources = SourceMap::default();
    compile_file(&mut sources, &path, &CompileOptions::default())
        .map(|c| c.artifact)
        .unwrap_or_else(|d| panic!("ipv4_forward.p4 does not compile: {d:?}"))
}

fn replay(c: &mut Criterion) {
    let w = ipv4_workload(300, 4096, 1);
    let mut g = c.benchmark_group("ipv4_forward");
    g.throughput(Throughput::Elements(w.frames.len() as u64));
    for (name, artifact) in [("compiled", compiled()), ("hand_built", ipv4_forward())] {
        let mut sw = Switch::new(&artifact, SwitchConfig::default()).expect("load");
        install_routes(&mut sw, &w).expect("routes");
        let mut out = Outputs::new();
        g.bench_function(name, |b| {
            b.iter(|| {
                for f in &w.frames {
                    sw.on_packet(Time::ZERO, 1, f, &mut out);
                    out.clear();
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
