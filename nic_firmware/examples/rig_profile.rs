//! Profile one client RIG unit: `cargo run --release -p netsparse-nic
//! --example rig_profile [ITERATIONS]`. Prints idxs/s against the thread's
//! CPU time (independent of other load on the machine).

use std::path::Path;

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::time::thread_cpu_time;
use netsparse_nic::testing::{bench_idxs, ClientUnitBench};

fn main() {
    let iters: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs/netsparse_nic.p4");
    let mut sources = SourceMap::new();
    let art = compile_file(&mut sources, &path, &CompileOptions::default())
        .expect("netsparse_nic.p4 compiles")
        .artifact;
    let idxs = bench_idxs(200_000, 1 << 18, 42);
    let mut cpu = 0.0f64;
    let mut total = 0u64;
    let mut last = None;
    for _ in 0..iters {
        let mut w = ClientUnitBench::new(&art, &idxs, 1 << 18, 16).expect("bench NIC");
        let t0 = thread_cpu_time();
        total += w.run();
        cpu += thread_cpu_time() - t0;
        last = Some(w);
    }
    let rate = total as f64 / cpu;
    println!("{total} idxs in {cpu:.3} s CPU: {:.2} M idxs/s", rate / 1e6);
    if let Some(w) = last {
        print!("{}", w.nic().stats().summary());
    }
}
