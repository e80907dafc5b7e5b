//! Replay N ipv4_forward packets and print packets/s:
//! `cargo run --release -p netsparse-bmv2 --example replay -- 1000000 [PROGRAM.p4]`

use std::time::Instant;

use netsparse_bmv2::testing::{install_routes, ipv4_forward, ipv4_workload};
use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_externs::{Datapath, Outputs, Time};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let artifact = match std::env::args().nth(2) {
        Some(p) => {
            let mut sources = netsparse_compiler::source::SourceMap::default();
            match netsparse_compiler::compile_file(
                &mut sources,
                std::path::Path::new(&p),
                &netsparse_compiler::CompileOptions::default(),
            ) {
                Ok(c) => c.artifact,
                Err(d) => {
                    eprintln!("{p}: {d:?}");
                    std::process::exit(2);
                }
            }
        }
        None => ipv4_forward(),
    };
    let w = ipv4_workload(300, 4096, 1);
    let mut sw = match Switch::new(&artifact, SwitchConfig::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = install_routes(&mut sw, &w) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let mut out = Outputs::new();
    let cpu0 = netsparse_externs::time::thread_cpu_time();
    let t = Instant::now();
    let mut sent = 0usize;
    for i in 0..n {
        sw.on_packet(Time::ZERO, 1, &w.frames[i % w.frames.len()], &mut out);
        sent += out.len();
        out.clear();
    }
    let dt = t.elapsed().as_secs_f64();
    let cpu = netsparse_externs::time::thread_cpu_time() - cpu0;
    println!(
        "{n} packets in {dt:.3} s wall ({:.0} packets/s), {cpu:.3} s CPU ({:.0} packets/s per core) ({sent} out)",
        n as f64 / dt,
        n as f64 / cpu
    );
}
