//! Interoperability with a real P4Runtime client: p4runtime-shell (the
//! p4lang project's Python shell, from PyPI, over the official P4Runtime
//! protobuf package) drives `netsparse switch programs/ipv4_cpu.p4
//! --grpc-server-addr 127.0.0.1:0 --cpu-port 255` running between two
//! network namespaces. It pushes the pipeline (our P4Info text and
//! artifact), inserts, modifies and deletes LPM entries while packets flow,
//! reads a counter, receives a PacketIn and sends a PacketOut, and writes
//! and reads back a multicast group.
//!
//! Needs root, iproute2, python3 with venv, and PyPI: the test creates a
//! virtualenv under the target directory (reused by later runs) and
//! installs p4runtime-shell into it; when any of that is missing it prints
//! why and returns. The Python side is a small line protocol on stdin and
//! stdout (written below; answers marked `@@`), so each step is checked
//! here.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use netsparse_bmv2::drivers::live::{AfPacket, PortIo};

mod live_support;

use live_support::*;

/// The client: one command per line in, one JSON-ish answer line out.
const CLIENT: &str = r#"
import sys, threading
import p4runtime_sh.shell as sh

def out(s):
    # The shell prints entries as it writes them: answers are marked.
    sys.stdout.write("@@ " + s + "\n"); sys.stdout.flush()

sniffed = []
sniffer = None
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    try:
        if w[0] == "setup":
            sh.setup(device_id=1, grpc_addr=w[1], election_id=(0, 1),
                     config=sh.FwdPipeConfig(w[2], w[3]))
            out("ok")
        elif w[0] in ("insert", "modify"):
            te = sh.TableEntry("ipv4_lpm")(action="ipv4_forward")
            te.match["hdr.ipv4.dstAddr"] = w[1]
            te.action["dstAddr"] = w[2]
            te.action["port"] = w[3]
            te.insert() if w[0] == "insert" else te.modify()
            out("ok")
        elif w[0] == "insert_cpu":
            te = sh.TableEntry("ipv4_lpm")(action="send_to_cpu")
            te.match["hdr.ipv4.dstAddr"] = w[1]
            te.insert()
            out("ok")
        elif w[0] == "delete":
            te = sh.TableEntry("ipv4_lpm")
            te.match["hdr.ipv4.dstAddr"] = w[1]
            te.delete()
            out("ok")
        elif w[0] == "count":
            n = 0
            for e in sh.TableEntry("ipv4_lpm").read():
                n += 1
            out("entries %d" % n)
        elif w[0] == "counter":
            c = sh.CounterEntry("port_pkts")
            c.index = int(w[1])
            for x in c.read():
                out("packets %d" % x.data.packet_count)
                break
            else:
                out("packets none")
        elif w[0] == "sniff":
            sniffed.clear()
            def run(t=float(w[1])):
                for m in sh.PacketIn().sniff(timeout=t):
                    sniffed.append(m)
            sniffer = threading.Thread(target=run)
            sniffer.start()
            out("ok")
        elif w[0] == "sniffed":
            sniffer.join()
            if not sniffed:
                out("none")
            else:
                p = sniffed[0].packet
                md = {m.metadata_id: int.from_bytes(m.value, "big") for m in p.metadata}
                out("packet_in %d %s %s" % (len(sniffed), md.get(1, -1), p.payload.hex()))
        elif w[0] == "packet_out":
            p = sh.PacketOut()
            p.payload = bytes.fromhex(w[2])
            p.metadata["egress_port"] = w[1]
            p.send()
            out("ok")
        elif w[0] == "mcast":
            me = sh.MulticastGroupEntry(int(w[1]))
            for p in w[2:]:
                me.add(int(p), 1)
            me.insert()
            got = []
            for e in sh.MulticastGroupEntry(int(w[1])).read():
                got = sorted(r.egress_port for r in e.msg().multicast_group_entry.replicas)
            out("mcast " + " ".join(str(x) for x in got))
        elif w[0] == "quit":
            sh.teardown()
            out("bye")
            break
        else:
            out("error unknown command " + w[0])
    except Exception as e:
        out("error " + repr(e).replace("\n", " "))
"#;

/// A virtualenv with p4runtime-shell, made (once) under the target
/// directory; `Err` says why it cannot be had.
fn venv() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4runtime-shell-venv");
    let py = dir.join("bin/python");
    let ok = |py: &Path| {
        Command::new(py)
            .args(["-c", "import p4runtime_sh.shell"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if py.exists() && ok(&py) {
        return Ok(py);
    }
    let o = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&dir)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "python3 -m venv: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let o = Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "p4runtime-shell",
        ])
        .output()
        .map_err(|e| format!("pip: {e}"))?;
    if !o.status.success() || !ok(&py) {
        let err = String::from_utf8_lossy(&o.stderr);
        let tail: Vec<&str> = err.lines().rev().take(3).collect();
        return Err(format!(
            "pip install p4runtime-shell failed (is PyPI reachable?): {}",
            tail.join(" | ")
        ));
    }
    Ok(py)
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Client {
    fn start(py: &Path) -> Client {
        let mut child = Command::new(py)
            .args(["-u", "-c", CLIENT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                match l.strip_prefix("@@ ") {
                    Some(answer) => {
                        if tx.send(answer.to_owned()).is_err() {
                            break;
                        }
                    }
                    None => println!("p4runtime-shell: {l}"),
                }
            }
        });
        Client {
            child,
            stdin,
            lines,
        }
    }

    /// Send one command; its answer (panics after 60 s).
    fn cmd(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let r = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("p4runtime-shell did not answer `{line}`"));
        println!("p4runtime-shell {line} -> {r}");
        r
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn p4runtime_shell_drives_the_switch() {
    if let Some(why) = skip_reason() {
        println!("skipping the p4runtime-shell test: {why}");
        return;
    }
    let py = match venv() {
        Ok(p) => p,
        Err(why) => {
            println!("skipping the p4runtime-shell test: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let p4info = dir.path().join("ipv4_cpu.p4info.txt");
    let artifact = dir.path().join("ipv4_cpu.json");
    let program = root().join("programs/ipv4_cpu.p4");
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .arg("compile")
        .arg(&program)
        .arg("-o")
        .arg(&artifact)
        .arg("--p4runtime-files")
        .arg(&p4info)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let pid = std::process::id();
    let (mut topo, vsa, vna, vsb, vnb) = match setup("r", pid) {
        Ok(t) => t,
        Err(e) => {
            println!("skipping the p4runtime-shell test: cannot build the namespaces ({e})");
            return;
        }
    };
    let args = [
        program.display().to_string(),
        "-i".into(),
        format!("1@{vsa}"),
        "-i".into(),
        format!("2@{vsb}"),
        "--grpc-server-addr".into(),
        "127.0.0.1:0".into(),
        "--cpu-port".into(),
        "255".into(),
    ];
    let started = start_switch(&mut topo, &args);
    let addr = started
        .grpc_addr()
        .expect("the server's address is printed");
    let a = AfPacket::open_in_netns(&vna, &Path::new("/var/run/netns").join(&topo.nsa)).unwrap();
    let b = AfPacket::open_in_netns(&vnb, &Path::new("/var/run/netns").join(&topo.nsb)).unwrap();

    let mut c = Client::start(&py);
    let setup_cmd = format!("setup {addr} {} {}", p4info.display(), artifact.display());
    assert_eq!(c.cmd(&setup_cmd), "ok");
    let frame = udp([2, 0, 0, 0, 0, 0x51], [10, 0, 2, 5], b"p4runtime-shell");
    assert!(
        passes(&a, &b, &frame, [10, 0, 2, 5]).is_none(),
        "no entries: dropped"
    );

    // Insert: forwarded with the entry's MAC and a decremented TTL.
    assert_eq!(c.cmd("insert 10.0.2.0/24 02:00:00:00:02:02 2"), "ok");
    assert_eq!(c.cmd("count"), "entries 1");
    let got = passes(&a, &b, &frame, [10, 0, 2, 5]).expect("forwarded after insert");
    assert_eq!(&got[0..6], &[2, 0, 0, 0, 2, 2]);
    assert_eq!(got[22], frame[22] - 1, "TTL decremented");

    // Modify: the new MAC.
    assert_eq!(c.cmd("modify 10.0.2.0/24 02:00:00:00:02:99 2"), "ok");
    let got = passes(&a, &b, &frame, [10, 0, 2, 5]).expect("forwarded after modify");
    assert_eq!(&got[0..6], &[2, 0, 0, 0, 2, 0x99]);

    // A duplicate insert is refused and changes nothing.
    assert!(c
        .cmd("insert 10.0.2.0/24 02:00:00:00:02:02 2")
        .starts_with("error"));
    let got = passes(&a, &b, &frame, [10, 0, 2, 5]).expect("still forwarded");
    assert_eq!(&got[0..6], &[2, 0, 0, 0, 2, 0x99]);

    // The per-port counter saw the frames from port 1.
    let n: u64 = c
        .cmd("counter 1")
        .strip_prefix("packets ")
        .and_then(|v| v.parse().ok())
        .expect("a packet count");
    assert!(n >= 3, "port 1 counted {n} packets");

    // Delete: dropped again.
    assert_eq!(c.cmd("delete 10.0.2.0/24"), "ok");
    assert!(
        passes(&a, &b, &frame, [10, 0, 2, 5]).is_none(),
        "dropped after delete"
    );

    // PacketIn: a route to the CPU; the frame arrives with its ingress port.
    assert_eq!(c.cmd("insert_cpu 10.0.9.0/24"), "ok");
    assert_eq!(c.cmd("sniff 3"), "ok");
    std::thread::sleep(Duration::from_millis(300));
    let to_cpu = udp([2, 0, 0, 0, 0, 0x51], [10, 0, 9, 7], b"to the controller");
    a.send(&to_cpu).unwrap();
    let got = c.cmd("sniffed");
    let want = format!("1 {}", hex(&to_cpu));
    assert!(
        got.starts_with("packet_in ") && got.ends_with(&want),
        "PacketIn with ingress_port 1 and the frame as payload: {got}"
    );

    // PacketOut: out of port 2 as given, without the packet_out header.
    let down = udp([2, 0, 0, 0, 0, 0x77], [10, 0, 7, 7], b"from the controller");
    assert_eq!(c.cmd(&format!("packet_out 2 {}", hex(&down))), "ok");
    let got = expect_ipv4(&b, [10, 0, 7, 7], Duration::from_secs(3)).expect("PacketOut sent");
    assert_eq!(got, down);
    // A PacketOut to a port that does not fit 9 bits is refused by the
    // server (the shell itself may refuse it first); the switch runs on.
    let _ = c.cmd(&format!("packet_out 4096 {}", hex(&down)));
    assert_eq!(c.cmd("count"), "entries 1");
    // A multicast group written and read back by the shell.
    assert_eq!(c.cmd("mcast 3 1 2"), "mcast 1 2");
    assert_eq!(c.cmd("quit"), "bye");
    drop(started);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
