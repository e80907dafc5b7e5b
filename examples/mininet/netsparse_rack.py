#!/usr/bin/env python3
"""A NetSparse rack in Mininet: hosts only, NetSparse switches as processes.

Builds the leaf-spine topology that `netsparse topo gen leaf-spine` writes
(the same file `netsparse topo up` reads) with Mininet's Python API:

* every host and every switch is a Mininet *host* (a network namespace):
  `Mininet(controller=None, switch=None)`, no Open vSwitch anywhere;
* every link is a plain veth pair (`mininet.link.Link`, no TCLink/netem);
  interface `NODE-ethPORT` is switch port PORT;
* inside each switch host, `netsparse switch` runs the switch's program on
  its interfaces with its command file (ToRs: netsparse_tor.p4 with the
  Property Cache; spines: netsparse_spine.p4);
* then `netsparse topo gather --attach FILE` runs every host's NIC endpoint
  (netsparse_nic.p4) inside the host's namespace, gathers the matrix's remote
  properties, checks every one, and prints the simulator's statistics
  (bytes, PRs per packet, cache hits on each ToR).

It never calls `mn -c` (Mininet's cleanup kills processes by name): the
switch processes it started are stopped by pid and `net.stop()` removes
what Mininet created.

Usage (as root, from the repository, after `cargo build --release`):

    sudo python3 examples/mininet/netsparse_rack.py --racks 2 --hosts 2 \\
        --matrix m.mtx --k 16

Options: --netsparse-bin PATH (default target/release/netsparse, then
target/debug/netsparse), --programs DIR (default programs), --ipv4 (plain
ipv4_forward.p4 routers instead of the NetSparse switches), --keep (leave
the network up until Enter is pressed), --work-dir DIR.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

try:
    from mininet.link import Link
    from mininet.log import setLogLevel
    from mininet.net import Mininet
except ImportError:
    sys.exit(
        "error: Mininet's Python package is not installed for this interpreter "
        f"({sys.executable}).\n"
        "Install it, e.g. `apt-get install --no-install-recommends mininet` "
        "(Debian/Ubuntu; then run this script with /usr/bin/python3), or "
        "`pip install mininet` plus Mininet's `mnexec` helper from a Mininet "
        "source build. Open vSwitch is not needed."
    )

READY = "switch running"  # v1model: "switch running on ...", NetSparse: "switch running (...)"
GRPC_ADDR = "127.0.0.1:9559"  # each switch host has its own loopback


def find_netsparse(given):
    if given:
        return os.path.abspath(given)
    for c in ("target/release/netsparse", "target/debug/netsparse"):
        if os.path.exists(c):
            return os.path.abspath(c)
    sys.exit("error: no netsparse binary: run `cargo build --release` or give --netsparse-bin")


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=False)


def split_end(end, switches):
    """`tor0-p2` -> ("tor0", 2); a host name alone is port 0."""
    node, sep, port = end.rpartition("-p")
    if sep and node in switches and port.isdigit():
        return node, int(port)
    return end, 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--racks", type=int, default=2)
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--matrix", required=True, help="Matrix Market file")
    ap.add_argument("--k", type=int, default=16, help="property size in 4-byte values")
    ap.add_argument("--netsparse-bin")
    ap.add_argument("--programs", default="programs")
    ap.add_argument("--ipv4", action="store_true", help="ipv4_forward.p4 switches")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--work-dir")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("error: Mininet needs root")
    ns = find_netsparse(a.netsparse_bin)
    work = os.path.abspath(a.work_dir or tempfile.mkdtemp(prefix="netsparse-mininet-"))
    os.makedirs(work, exist_ok=True)
    topo_file = os.path.join(work, "rack.json")
    gen = [ns, "topo", "gen", "leaf-spine", "--racks", str(a.racks), "--hosts",
           str(a.hosts), "--programs", a.programs, "--k", str(a.k), "-o", topo_file]
    if a.ipv4:
        gen += ["--nic-program", os.path.join(a.programs, "netsparse_nic.p4")]
    else:
        gen += ["--netsparse"]
    if run(gen).returncode != 0:
        sys.exit("error: topo gen failed")
    with open(topo_file) as f:
        topo = json.load(f)
    hosts, switches = topo["hosts"], topo["switches"]

    setLogLevel("warning")
    net = Mininet(topo=None, controller=None, switch=None, build=False)
    nodes = {}
    for name, h in sorted(hosts.items()):
        nodes[name] = net.addHost(name, ip=h["ip"], mac=h["mac"])
    for name in sorted(switches):
        nodes[name] = net.addHost(name, ip=None)
    ports = {name: {} for name in nodes}
    for l in topo["links"]:
        (an, ap_), (bn, bp) = split_end(l[0], switches), split_end(l[1], switches)
        i1, i2 = f"{an}-eth{ap_}", f"{bn}-eth{bp}"
        net.addLink(nodes[an], nodes[bn], port1=ap_, port2=bp,
                    intfName1=i1, intfName2=i2, cls=Link)
        ports[an][ap_], ports[bn][bp] = i1, i2
    procs = []
    try:
        net.build()
        net.start()
        # Static neighbours, as `topo up` sets them (switches do not forward ARP).
        for name, h in hosts.items():
            for other, o in hosts.items():
                if other != name:
                    ip = o["ip"].split("/")[0]
                    nodes[name].cmd(f"ip neigh replace {ip} lladdr {o['mac']} "
                                    f"dev {name}-eth0 nud permanent")
        # One netsparse switch process per switch host.
        for name, s in sorted(switches.items()):
            cmd = [ns, "switch", s["program"]]
            for p, intf in sorted(ports[name].items()):
                cmd += ["-i", f"{p}@{intf}"]
            cmd += ["--entries", os.path.join(os.path.dirname(topo_file), s["cli_input"]),
                    "--stats-json", os.path.join(work, f"{name}-stats.json"),
                    # P4Runtime inside the switch host's namespace: `topo
                    # gather` invalidates the Property Caches through it.
                    "--grpc-server-addr", GRPC_ADDR]
            log = open(os.path.join(work, f"{name}.log"), "w")
            p = nodes[name].popen(cmd, stdout=log, stderr=subprocess.STDOUT)
            procs.append((name, p, log.name))
        deadline = time.time() + 60
        for name, p, logname in procs:
            while True:
                if p.poll() is not None:
                    sys.exit(f"error: the switch process of {name} exited:\n"
                             + open(logname).read())
                if READY in open(logname).read():
                    break
                if time.time() > deadline:
                    sys.exit(f"error: {name} did not start (log {logname})")
                time.sleep(0.05)
        attach = {
            "run_id": "mininet",
            "hosts": [{"name": n, "node": int(n[1:]), "netns": f"/proc/{nodes[n].pid}/ns/net",
                       "iface": f"{n}-eth0"} for n in sorted(hosts)],
            "switches": [{"name": n, "pid": p.pid, "stats": os.path.join(work, f"{n}-stats.json"),
                          "grpc_addr": GRPC_ADDR}
                         for n, p, _ in procs],
            "nic_program": os.path.abspath(os.path.join(a.programs, "netsparse_nic.p4")),
            "work_dir": work,
        }
        attach_file = os.path.join(work, "attach.json")
        with open(attach_file, "w") as f:
            json.dump(attach, f, indent=2)
        rc = run([ns, "topo", "gather", "--attach", attach_file, "--matrix",
                  os.path.abspath(a.matrix), "--k", str(a.k)]).returncode
        if a.keep:
            input("network is up (Mininet hosts: " + " ".join(sorted(nodes)) + "); Enter stops it ")
    finally:
        for name, p, _ in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for name, p, _ in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        net.stop()
    print(f"logs and counters in {work}")
    sys.exit(rc)


if __name__ == "__main__":
    main()
