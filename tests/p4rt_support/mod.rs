//! Shared by the P4Runtime tests: a switch (v1model or NetSparse) running
//! on the live driver over in-memory ports, with the P4Runtime server on
//! 127.0.0.1:0 and the datapath draining the server's mailbox between
//! packets, exactly as `netsparse switch --grpc-server-addr` does.
#![allow(dead_code)]

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use netsparse_bmv2::drivers::live::{self, LiveOptions, PortIo, Wake};
use netsparse_bmv2::drivers::PortSpec;
use netsparse_bmv2::nsswitch::{NsConfig, NsSwitch};
use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_externs::artifact::Artifact;
use netsparse_externs::Datapath;
use netsparse_p4rt::target::Target;

pub const WAIT: Duration = Duration::from_secs(10);

/// An in-memory port: frames pushed into `inject` arrive at the switch,
/// frames the switch sends land in `sent`.
struct MemPort {
    rx: Mutex<mpsc::Receiver<Vec<u8>>>,
    sent: mpsc::Sender<Vec<u8>>,
}

impl PortIo for MemPort {
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        let rx = self.rx.lock().map_err(|_| io::Error::other("poisoned"))?;
        match rx.recv_timeout(timeout) {
            Ok(f) => {
                let n = f.len().min(buf.len());
                buf[..n].copy_from_slice(&f[..n]);
                Ok(Some(f.len()))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(timeout);
                Ok(None)
            }
        }
    }
    fn send(&self, frame: &[u8]) -> io::Result<()> {
        let _ = self.sent.send(frame.to_vec());
        Ok(())
    }
}

/// A running switch with its server.
pub struct Rig {
    /// The server's address.
    pub addr: String,
    /// Frames into ports 1 and 2.
    pub inject: Vec<mpsc::Sender<Vec<u8>>>,
    /// Frames out of ports 1 and 2.
    pub out: Vec<mpsc::Receiver<Vec<u8>>>,
    stop: Arc<AtomicBool>,
    dp: Option<JoinHandle<()>>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.dp.take() {
            let _ = h.join();
        }
    }
}

pub fn compile(path: &str) -> Artifact {
    let mut sources = SourceMap::new();
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    compile_file(&mut sources, &p, &CompileOptions::default())
        .unwrap_or_else(|_| panic!("{path} compiles"))
        .artifact
}

/// A v1model switch running `program` on ports 1 and 2, server on.
pub fn rig(program: &str) -> Rig {
    let artifact = compile(program);
    let sw = Switch::new(&artifact, SwitchConfig::default()).expect("switch");
    rig_with(sw, &artifact)
}

/// A NetSparse switch (default shape) running `program`, server on.
pub fn ns_rig(program: &str) -> Rig {
    let artifact = compile(program);
    let sw = NsSwitch::new(&artifact, NsConfig::default()).expect("NetSparse switch");
    rig_with(sw, &artifact)
}

/// A v1model switch running `program` with CPU port `cpu` (as
/// `--cpu-port`), server on.
pub fn cpu_rig(program: &str, cpu: u32) -> Rig {
    let artifact = compile(program);
    let sw = Switch::new(&artifact, SwitchConfig::default()).expect("switch");
    let (sw, queue) = netsparse_p4rt::packetio::CpuPort::new(sw, cpu);
    rig_inner(sw, &artifact, Some(queue))
}

/// `sw` on the live driver over in-memory ports 1 and 2, server on.
pub fn rig_with<T: Target + Datapath + Send>(sw: T, artifact: &Artifact) -> Rig {
    rig_inner(sw, artifact, None)
}

fn rig_inner<T: Target + Datapath + Send>(
    sw: T,
    artifact: &Artifact,
    queue: Option<netsparse_p4rt::packetio::PacketInQueue>,
) -> Rig {
    let mut sw = sw;
    let (poster, mailbox) = netsparse_p4rt::mailbox::mailbox::<T>();
    let h = netsparse_p4rt::server::spawn_with_cpu_port(
        "127.0.0.1:0".parse().unwrap(),
        poster,
        artifact.clone(),
        artifact.to_json().into_bytes(),
        1,
        queue,
    )
    .expect("server starts");
    println!("P4Runtime server on {}", h.addr);
    let mut inject = Vec::new();
    let mut out = Vec::new();
    let mut ports = Vec::new();
    for (port, name) in [(1u32, "p1"), (2, "p2")] {
        let (itx, irx) = mpsc::channel();
        let (otx, orx) = mpsc::channel();
        inject.push(itx);
        out.push(orx);
        let spec: PortSpec = format!("{port}@{name}").parse().unwrap();
        ports.push((
            spec,
            Arc::new(MemPort {
                rx: Mutex::new(irx),
                sent: otx,
            }),
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let opts = LiveOptions {
        poll: Duration::from_millis(2),
        control: Some(mailbox.wake_flag()),
        ..LiveOptions::default()
    };
    let stop2 = Arc::clone(&stop);
    let dp = std::thread::spawn(move || {
        let mut hook = |sw: &mut T, _: &[live::LivePortStats], why: Wake| {
            if why == Wake::Control {
                mailbox.drain(sw);
            }
        };
        live::run_with_hook(&mut sw, ports, stop2, &opts, &mut hook).expect("driver runs");
    });
    Rig {
        addr: h.addr.to_string(),
        inject,
        out,
        stop,
        dp: Some(dp),
    }
}

/// An Ethernet + IPv4 frame to `dst` from `src` with `ttl`.
pub fn ipv4_frame(src: [u8; 4], dst: [u8; 4], ttl: u8) -> Vec<u8> {
    let mut f = vec![0u8; 14 + 20 + 8];
    f[0..6].copy_from_slice(&[0, 0, 0, 0, 0, 0xaa]);
    f[6..12].copy_from_slice(&[0, 0, 0, 0, 0, 0xbb]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&28u16.to_be_bytes());
    ip[8] = ttl;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let mut sum: u32 = 0;
    for c in ip.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f
}

impl Rig {
    /// Send a frame into port 1; the frame that leaves on port 2 (or
    /// `None` after a short wait).
    pub fn send_1_to_2(&self, frame: Vec<u8>) -> Option<Vec<u8>> {
        self.inject[0].send(frame).unwrap();
        self.out[1].recv_timeout(Duration::from_millis(500)).ok()
    }
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}
