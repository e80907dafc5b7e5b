//! Shared by the live tests that run `netsparse switch` between two network
//! namespaces (`switch_live`, `p4runtime_live`): root and iproute2 checks,
//! namespaces and veths named after a tag and the process id (removed on
//! drop, also on panic), UDP frames and waiting for one on a socket.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use etherparse::PacketBuilder;
use netsparse_bmv2::drivers::live::{AfPacket, PortIo};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Namespaces, veths and the switch; everything is removed on drop.
pub struct Topo {
    pub nsa: String,
    pub nsb: String,
    pub switch: Option<Child>,
}

impl Drop for Topo {
    fn drop(&mut self) {
        if let Some(mut c) = self.switch.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Deleting a namespace deletes its veth end, which deletes the peer.
        let _ = ip(&["netns", "del", &self.nsa]);
        let _ = ip(&["netns", "del", &self.nsb]);
    }
}

pub fn skip_reason() -> Option<String> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if uid.as_deref() != Some("0") {
        return Some("not running as root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("`ip` (iproute2) is not installed".into());
    }
    None
}

pub fn setup(tag: &str, pid: u32) -> Result<(Topo, String, String, String, String), String> {
    let topo = Topo {
        nsa: format!("{tag}na{pid}"),
        nsb: format!("{tag}nb{pid}"),
        switch: None,
    };
    let (vsa, vna, vsb, vnb) = (
        format!("{tag}sa{pid}"),
        format!("{tag}va{pid}"),
        format!("{tag}sb{pid}"),
        format!("{tag}vb{pid}"),
    );
    ip(&["netns", "add", &topo.nsa])?;
    ip(&["netns", "add", &topo.nsb])?;
    for (s, n, ns) in [(&vsa, &vna, &topo.nsa), (&vsb, &vnb, &topo.nsb)] {
        ip(&["link", "add", s, "type", "veth", "peer", "name", n])?;
        ip(&["link", "set", n, "netns", ns])?;
        ip(&["link", "set", s, "up"])?;
        ip(&["netns", "exec", ns, "ip", "link", "set", n, "up"])?;
        // Less background noise (router solicitations...); best effort.
        let _ = Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                "sh",
                "-c",
                "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6",
            ])
            .output();
    }
    Ok((topo, vsa, vna, vsb, vnb))
}

pub fn udp(dst_mac: [u8; 6], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 0xaa], dst_mac)
        .ipv4([10, 0, 1, 1], dst, 64)
        .udp(7000, 7001);
    let mut v = Vec::new();
    b.write(&mut v, payload).unwrap();
    v
}

/// Wait for an IPv4 frame to `dst` on `sock` (other traffic is ignored).
pub fn expect_ipv4(sock: &AfPacket, dst: [u8; 4], within: Duration) -> Option<Vec<u8>> {
    let end = Instant::now() + within;
    let mut buf = vec![0u8; 2048];
    while Instant::now() < end {
        if let Ok(Some(n)) = sock.recv(&mut buf, Duration::from_millis(100)) {
            let f = &buf[..n.min(buf.len())];
            if f.len() >= 34 && f[12..14] == [8, 0] && f[30..34] == dst {
                return Some(f.to_vec());
            }
        }
    }
    None
}

/// A `netsparse switch` started by [`start_switch`]: its stderr lines so
/// far, the rest arriving on `lines`.
pub struct Started {
    pub log: Vec<String>,
    pub lines: mpsc::Receiver<String>,
    pub reader: JoinHandle<()>,
}

impl Started {
    /// Stop `topo`'s switch with SIGINT (killed after 20 s, failing the
    /// test); its exit status and every line it wrote.
    pub fn stop_with_sigint(self, topo: &mut Topo) -> (ExitStatus, Vec<String>) {
        let mut child = topo.switch.take().expect("a running switch");
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let end = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > end {
                let _ = child.kill();
                panic!("the switch did not stop on SIGINT");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let _ = self.reader.join();
        let mut log = self.log;
        log.extend(self.lines.try_iter());
        (status, log)
    }

    /// The P4Runtime address the switch printed.
    pub fn grpc_addr(&self) -> Option<String> {
        self.log
            .iter()
            .find_map(|l| l.strip_prefix("P4Runtime server listening on "))
            .and_then(|r| r.split_whitespace().next())
            .map(str::to_owned)
    }
}

/// Start `netsparse switch ARGS` into `topo.switch` and wait (up to 60 s)
/// until it says it is running; panics with its output if it exits first.
pub fn start_switch(topo: &mut Topo, args: &[String]) -> Started {
    let mut child = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .arg("switch")
        .args(args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    topo.switch = Some(child);
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut log: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !log.iter().any(|l| l.contains("switch running")) {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(l) => log.push(l),
            Err(_) if Instant::now() > deadline => panic!("the switch did not start: {log:?}"),
            Err(_) => {
                if let Some(Ok(Some(st))) = topo.switch.as_mut().map(Child::try_wait) {
                    panic!("the switch exited with {st}: {log:?}");
                }
            }
        }
    }
    Started {
        log,
        lines: rx,
        reader,
    }
}

/// Send `frame` from `a` up to three times; the IPv4 frame to `dst` seen
/// at `b`, if any.
pub fn passes(a: &AfPacket, b: &AfPacket, frame: &[u8], dst: [u8; 4]) -> Option<Vec<u8>> {
    for _ in 0..3 {
        a.send(frame).unwrap();
        if let Some(f) = expect_ipv4(b, dst, Duration::from_millis(700)) {
            return Some(f);
        }
    }
    None
}
