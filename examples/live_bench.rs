//! Live forwarding benchmark: `netsparse switch` running `ipv4_forward.p4`
//! between two veths, each in its own host namespace, driven by a fast
//! sender. Needs root and iproute2.
//!
//! ```text
//!  netns h1            netns s1 (netsparse switch)          netns h2
//!  <id>-h1-p0 ──veth── <id>-s1-p1 [port 1]  [port 2] <id>-s1-p2 ──veth── <id>-h2-p0
//!  sender: sendmmsg batches of 60-byte frames     receiver: the veth's rx_packets counter
//! ```
//!
//! The topology is brought up with `netsparse topo up` (the library) and
//! removed at the end (also on error). The sender is a thread of this
//! process inside h1's namespace: `sendmmsg` batches of 64 pre-built
//! minimum-size Ethernet/IPv4/UDP frames (60 bytes, 64 distinct UDP source
//! ports) to 10.0.2.2. The switch routes them out of port 2 with the
//! destination MAC rewritten to one that is not h2's, so h2's kernel drops
//! them right after counting them (no IP processing cost). The figure that
//! counts is the receiver's: the `rx_packets` counter of h2's veth over
//! the measurement window (`ip -s -j link`), i.e. frames the switch
//! delivered. Sender-side: frames `sendmmsg` accepted. With `--pin`, the
//! sender thread runs on CPU 0 and the switch process on CPU 1. The switch
//! does not record pcaps (`topo up --no-pcap`) unless `--pcap` is given.
//!
//! Run (release build of the binary first):
//!
//! ```text
//! cargo build --release && cargo run --release --example live_bench -- --seconds 5 --pin
//! ```

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsparse::topo::run::{self, UpOptions};
use netsparse::topo::spec::Topology;
use netsparse_bmv2::drivers::tpacket::{RingOptions, RingPort};

struct Opts {
    seconds: f64,
    warmup: f64,
    pin: bool,
    pcap: bool,
    exe: PathBuf,
    batch: usize,
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        seconds: 5.0,
        warmup: 1.0,
        pin: false,
        pcap: false,
        exe: std::env::current_exe()
            .ok()
            .and_then(|e| e.parent()?.parent().map(|d| d.join("netsparse")))
            .unwrap_or_else(|| PathBuf::from("target/release/netsparse")),
        batch: 64,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--seconds" => o.seconds = val("--seconds")?.parse().map_err(|e| format!("{e}"))?,
            "--warmup" => o.warmup = val("--warmup")?.parse().map_err(|e| format!("{e}"))?,
            "--batch" => o.batch = val("--batch")?.parse().map_err(|e| format!("{e}"))?,
            "--netsparse" => o.exe = PathBuf::from(val("--netsparse")?),
            "--pin" => o.pin = true,
            "--pcap" => o.pcap = true,
            "-h" | "--help" => {
                return Err("usage: live_bench [--seconds S] [--warmup S] [--batch N] [--pin] [--pcap] [--netsparse PATH]".into())
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(o)
}

/// Pin process or thread `pid` (0: the calling thread) to `cpu`, best effort.
fn pin_to(pid: i32, cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    let _ = rustix::thread::sched_setaffinity(rustix::process::Pid::from_raw(pid), &set);
}

fn rx_packets(netns: &str, iface: &str) -> Result<u64, String> {
    let o = Command::new("ip")
        .args(["-n", netns, "-s", "-j", "link", "show", "dev", iface])
        .output()
        .map_err(|e| e.to_string())?;
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).map_err(|e| format!("ip -j: {e}"))?;
    v[0]["stats64"]["rx"]["packets"]
        .as_u64()
        .ok_or_else(|| format!("no rx counter in {v}"))
}

/// CPU time (user + system) of process `pid`, in seconds.
fn process_cpu(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = s.rfind(')').map(|i| &s[i + 1..]).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    let hz = rustix::param::clock_ticks_per_second().max(1) as f64;
    f.iter().sum::<u64>() as f64 / hz
}

/// CPU time of the calling thread, in seconds.
fn thread_cpu() -> f64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn frames() -> Vec<Vec<u8>> {
    (0..64u16)
        .map(|i| {
            let mut f = Vec::new();
            etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 1, 1], [2, 0, 0, 0, 0, 0xfe])
                .ipv4([10, 0, 1, 1], [10, 0, 2, 2], 64)
                .udp(10000 + i, 9)
                .write(&mut f, &[0u8; 18])
                .expect("build a frame");
            f
        })
        .collect()
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run::check_environment() {
        eprintln!("live_bench: {e}");
        std::process::exit(2);
    }
    if !o.exe.exists() {
        eprintln!(
            "live_bench: {} not found (cargo build --release first, or --netsparse PATH)",
            o.exe.display()
        );
        std::process::exit(2);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::write(
        dir.path().join("s1.txt"),
        "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.0/24 => 02:00:00:00:02:fe 2\n\
         table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.1.0/24 => 02:00:00:00:01:fe 1\n",
    )
    .expect("write entries");
    let topo_file = dir.path().join("bench.json");
    std::fs::write(
        &topo_file,
        format!(
            r#"{{"hosts": {{"h1": {{"ip": "10.0.1.1/24"}}, "h2": {{"ip": "10.0.2.2/24"}}}},
                "switches": {{"s1": {{"program": "{}", "entries": "s1.txt"}}}},
                "links": [["h1", "s1-p1"], ["h2", "s1-p2"]]}}"#,
            root.join("programs/ipv4_forward.p4").display()
        ),
    )
    .expect("write topology");
    let topo = Topology::read(&topo_file).expect("topology");
    let opts = UpOptions {
        pcap: o.pcap,
        ..UpOptions::new(o.exe.clone())
    };
    let (st, run_dir) = match run::up(&topo, &opts) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("live_bench: topo up: {e}");
            std::process::exit(2);
        }
    };
    let result = bench(&o, &st);
    let _ = run::down(&run_dir);
    match result {
        Ok(()) => {}
        Err(e) => {
            eprintln!("live_bench: {e}");
            std::process::exit(1);
        }
    }
}

fn bench(o: &Opts, st: &netsparse::topo::state::RunState) -> Result<(), String> {
    let h1 = st.plan.nodes.get("h1").ok_or("no h1")?;
    let h2 = st.plan.nodes.get("h2").ok_or("no h2")?;
    let h1_if = h1.ifaces.get(&0).ok_or("no h1 port")?.clone();
    let h2_if = h2.ifaces.get(&0).ok_or("no h2 port")?.clone();
    let switch_pid = st
        .resources
        .iter()
        .find_map(|r| match r {
            netsparse::topo::state::Resource::Process { pid: Some(p), .. } => Some(*p),
            _ => None,
        })
        .ok_or("no switch process")?;
    if o.pin {
        pin_to(switch_pid as i32, 1);
    }
    let port = RingPort::open_in_netns(
        &h1_if,
        &netsparse::topo::net::netns_path(&h1.netns),
        &RingOptions {
            ring_bytes: 1 << 20,
        },
    )
    .map_err(|e| format!("sender socket: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let fs = frames();
    let arena: Vec<u8> = fs.concat();
    let mut ranges = Vec::new();
    let mut off = 0;
    for f in &fs {
        ranges.push((off, f.len()));
        off += f.len();
    }
    let ranges: Vec<(usize, usize)> = ranges.iter().cycle().take(o.batch).copied().collect();
    let (stop2, sent2, meas2, pin) = (
        Arc::clone(&stop),
        Arc::clone(&sent),
        Arc::clone(&measuring),
        o.pin,
    );
    // Returns the sender thread's CPU seconds during the measurement.
    let sender = std::thread::spawn(move || -> f64 {
        if pin {
            pin_to(0, 0);
        }
        let mut cpu0 = None;
        while !stop2.load(Ordering::Relaxed) {
            if cpu0.is_none() && meas2.load(Ordering::Relaxed) {
                cpu0 = Some(thread_cpu());
            }
            let (n, _) = port.send_batch(&arena, &ranges);
            sent2.fetch_add(n as u64, Ordering::Relaxed);
        }
        cpu0.map(|c| thread_cpu() - c).unwrap_or(0.0)
    });
    std::thread::sleep(Duration::from_secs_f64(o.warmup));
    measuring.store(true, Ordering::Relaxed);
    let (rx0, tx0, t0, sw0) = (
        rx_packets(&h2.netns, &h2_if)?,
        sent.load(Ordering::Relaxed),
        Instant::now(),
        process_cpu(switch_pid),
    );
    std::thread::sleep(Duration::from_secs_f64(o.seconds));
    let (rx1, tx1, dt, sw1) = (
        rx_packets(&h2.netns, &h2_if)?,
        sent.load(Ordering::Relaxed),
        t0.elapsed().as_secs_f64(),
        process_cpu(switch_pid),
    );
    stop.store(true, Ordering::Relaxed);
    let sender_cpu = sender.join().unwrap_or(0.0);
    let switch_cpu = sw1 - sw0;
    let rx = rx1 - rx0;
    let tx = tx1 - tx0;
    println!(
        "ipv4_forward over veth, 60-byte frames, {:.1} s{}:",
        dt,
        if o.pin {
            " (sender on CPU 0, switch on CPU 1)"
        } else {
            ""
        }
    );
    println!(
        "  sender:   {tx} frames accepted by sendmmsg, {:.0} frames/s",
        tx as f64 / dt
    );
    println!(
        "  receiver: {rx} frames on h2's veth (rx_packets), {:.0} packets/s",
        rx as f64 / dt
    );
    println!(
        "  delivered {:.1}% of what was sent (the rest was dropped at the switch's full receive ring)",
        100.0 * rx as f64 / tx.max(1) as f64
    );
    println!(
        "  CPU: sender thread {sender_cpu:.2} s ({:.0} frames per CPU-second), switch process {switch_cpu:.2} s ({:.0} packets per CPU-second; kernel work counted where it ran)",
        tx as f64 / sender_cpu.max(1e-9),
        rx as f64 / switch_cpu.max(1e-9)
    );
    Ok(())
}
