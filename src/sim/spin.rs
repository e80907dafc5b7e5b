//! sPIN workloads (`netsparse sim --workload pingpong|bcast|strided`): the
//! sPIN NIC model (`netsparse_nic::spin`) running the bundled sPIN programs
//! on a few nodes behind one switch, against an RDMA baseline run on the
//! same NICs, with sPIN's parameters (§4.1–4.3).
//!
//! # Model
//!
//! * **Network.** Every node is one [`SpinNicDev`] on one switch of the
//!   simulator's fabric (`netsparse_netsim`, built by `fabric.rs` as for
//!   the collectives: a v1model switch running `netsparse_spine.p4` with
//!   the topology's entries, which routes the sPIN frames by IPv4
//!   destination). The NIC paces what it sends at the link rate, at least
//!   `g` apart; each of the two links serialises the frame (store and
//!   forward) and adds `link_latency_ns` (0: sPIN's model has only L), and
//!   the switch adds its latency `L`.
//! * **Host.** A host CPU operation (post a send, notice a completion) costs
//!   `o`. A host send reaches the NIC one DMA latency after it is posted
//!   (the NIC reads the data). A message is visible to the host one DMA
//!   latency after its completion handler ended and the NIC's DMA engine
//!   wrote everything before it; the host notices it `o` later.
//! * **RDMA baseline.** The same NICs with no handlers: every message is
//!   deposited in host memory as a plain put (`SPIN_PROCEED` of
//!   `spin_strided.p4` without a datatype entry); whatever the program
//!   would do on the NIC, the host does after noticing the message
//!   (replying, forwarding to its children, unpacking a datatype with one
//!   copy per block at `host_copy_gbps` plus `host_block_ns`).
//!
//! The experiments measure simulated time only; the same inputs give the
//! same numbers.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use netsparse_bmv2::Switch;
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions};
use netsparse_engine::control::commands;
use netsparse_externs::artifact::Artifact;
use netsparse_externs::time::serialization_time;
use netsparse_netsim::{DeviceId, Engine, EngineConfig};
use netsparse_nic::spin::{MessageDone, SpinConfig, SpinNicDev};
use netsparse_nic::{Datapath, Outputs, Time};
use serde::Serialize;

use super::fabric::{self, FabricError, FabricParams};
use super::topology::{Device, Topology};
use crate::programs::{Bundled, ProgramCache};

/// sPIN's simulation parameters (§4.1), and the assumptions of this model.
#[derive(Clone, Debug, Serialize)]
pub struct SpinParams {
    /// Host CPU overhead per send or receive (LogGP o), ns.
    pub o_ns: f64,
    /// Least gap between packets a NIC sends (LogGP g), ns.
    pub g_ns: f64,
    /// Link rate, Gbit/s (G = 2.5 ps per byte at 400).
    pub link_gbps: u64,
    /// Switch latency (L), ns: the switch's pipeline latency.
    pub switch_ns: u64,
    /// Propagation delay of each of the two links a frame crosses, ns
    /// (sPIN's model has none beside L: 0).
    pub link_latency_ns: u64,
    /// HPUs per NIC.
    pub hpus: u32,
    /// HPU clock, MHz.
    pub hpu_mhz: u64,
    /// DMA latency, ns: 250 discrete, 50 integrated.
    pub dma_ns: u64,
    /// DMA bandwidth, bytes per ns (assumed: PCIe 5 x16 ≈ 64 GB/s).
    pub dma_bytes_per_ns: u64,
    /// Overhead bytes per DMA write (assumed: a PCIe transaction header).
    pub dma_overhead_bytes: u64,
    /// Payload bytes per packet (assumed: 4 KiB).
    pub mtu_payload: u32,
    /// Host copy bandwidth for the RDMA baseline's unpack, Gbit/s (assumed).
    pub host_copy_gbps: u64,
    /// Host cost per copied block in the RDMA baseline's unpack, ns (assumed).
    pub host_block_ns: f64,
}

impl Default for SpinParams {
    fn default() -> SpinParams {
        SpinParams {
            o_ns: 65.0,
            g_ns: 6.7,
            link_gbps: 400,
            switch_ns: 50,
            link_latency_ns: 0,
            hpus: 8,
            hpu_mhz: 2500,
            dma_ns: 250,
            dma_bytes_per_ns: 64,
            dma_overhead_bytes: 24,
            mtu_payload: 4096,
            host_copy_gbps: 100,
            host_block_ns: 2.0,
        }
    }
}

impl SpinParams {
    fn o(&self) -> Time {
        Time::from_ps((self.o_ns * 1000.0) as u64)
    }

    fn dma(&self) -> Time {
        Time::from_ns(self.dma_ns)
    }

    fn nic(&self, node: u32) -> SpinConfig {
        SpinConfig {
            node,
            hpus: self.hpus,
            hpu_clock_mhz: self.hpu_mhz,
            dma_latency_ns: self.dma_ns,
            dma_bytes_per_ns: self.dma_bytes_per_ns,
            dma_overhead_bytes: self.dma_overhead_bytes,
            mtu_payload: self.mtu_payload,
            link_gbps: self.link_gbps,
            tx_gap_ps: (self.g_ns * 1000.0) as u64,
            host_mem_bytes: 32 << 20,
            buffer_packets: 4096,
            max_messages: 64,
            budget_cycles: 1 << 30,
            timeout_ns: 1 << 40,
            ..SpinConfig::default()
        }
    }
}

/// One row of a workload's results.
#[derive(Clone, Debug, Serialize)]
pub struct SpinRow {
    /// Message size (pingpong, bcast) or block size (strided), bytes.
    pub size: u64,
    /// sPIN: the measured time, ns.
    pub spin_ns: f64,
    /// RDMA baseline: the measured time, ns.
    pub rdma_ns: f64,
    /// Strided: receive bandwidth, Gbit/s (sPIN, RDMA).
    pub spin_gbps: Option<f64>,
    /// RDMA baseline bandwidth, Gbit/s.
    pub rdma_gbps: Option<f64>,
}

fn compile(file: &str, text: &str) -> anyhow::Result<Artifact> {
    let mut sources = SourceMap::new();
    compile_source(&mut sources, file, text, &CompileOptions::default())
        .map(|c| c.artifact)
        .map_err(|d| {
            anyhow::anyhow!(
                "programs/{file} does not compile:\n{}",
                netsparse_compiler::diag::render_all(&d, &sources)
            )
        })
}

/// The bundled sPIN programs.
pub struct SpinPrograms {
    pingpong: Artifact,
    bcast: Artifact,
    strided: Artifact,
    /// The fabric's switch program (`netsparse_spine.p4`).
    spine: Arc<Artifact>,
}

impl SpinPrograms {
    /// Compile them.
    pub fn load() -> anyhow::Result<SpinPrograms> {
        Ok(SpinPrograms {
            pingpong: compile(
                "spin_pingpong.p4",
                include_str!("../../programs/spin_pingpong.p4"),
            )?,
            bcast: compile(
                "spin_bcast.p4",
                include_str!("../../programs/spin_bcast.p4"),
            )?,
            strided: compile(
                "spin_strided.p4",
                include_str!("../../programs/spin_strided.p4"),
            )?,
            spine: ProgramCache::new()
                .get(Bundled::Spine, &[])
                .map_err(|e| anyhow!("programs/netsparse_spine.p4: {e}"))?,
        })
    }
}

/// A host action at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Put {
    node: u32,
    dst: u32,
    bits: u64,
    addr: u64,
    len: u32,
}

/// A node's NIC or the switch they hang off, as one device type of the
/// event loop.
enum SpinDev {
    Nic(Box<SpinNicDev>),
    Switch(Box<Switch>),
}

impl Datapath for SpinDev {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        match self {
            SpinDev::Nic(d) => d.on_packet(now, port, frame, out),
            SpinDev::Switch(d) => d.on_packet(now, port, frame, out),
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        match self {
            SpinDev::Nic(d) => d.on_timer(now, out),
            SpinDev::Switch(d) => d.on_timer(now, out),
        }
    }

    fn next_deadline(&self) -> Option<Time> {
        match self {
            SpinDev::Nic(d) => d.next_deadline(),
            SpinDev::Switch(d) => d.next_deadline(),
        }
    }
}

/// The nodes on one switch of the simulator's leaf-spine fabric (one rack:
/// a v1model switch running `netsparse_spine.p4` with the topology's
/// entries, which routes the sPIN frames by their IPv4 destination), in the
/// same event loop (`netsparse_netsim`) as every other simulation, plus the
/// hosts' sends waiting to reach their NICs.
struct Net {
    engine: Engine<SpinDev>,
    p: SpinParams,
    /// Device ids of the nodes' NICs.
    nic_ids: Vec<DeviceId>,
    /// (time the NIC sees it, posting order, the send)
    puts: BinaryHeap<Reverse<(Time, u64, Put)>>,
    seq: u64,
}

impl Net {
    fn new(nics: Vec<SpinNicDev>, p: &SpinParams, spine: &Artifact) -> anyhow::Result<Net> {
        let n = u32::try_from(nics.len()).context("too many nodes")?;
        let topo = Topology::new(n, 1, None).map_err(|e| anyhow!("sPIN fabric: {e}"))?;
        // No simulated-time limit: a NIC's message timeout (`timeout_ns`,
        // 2^40 ns here) may be its last deadline; the event cap still holds.
        let mut engine: Engine<SpinDev> = Engine::new(EngineConfig {
            max_time: Time::MAX,
            ..EngineConfig::default()
        });
        let mut nics: Vec<Option<SpinNicDev>> = nics.into_iter().map(Some).collect();
        let fabric = FabricParams {
            seed: 1,
            link_latency_ns: p.link_latency_ns,
            switch_latency_ns: p.switch_ns,
        };
        let node = |i: u32| -> Result<SpinDev, String> {
            nics.get_mut(i as usize)
                .and_then(Option::take)
                .map(|d| SpinDev::Nic(Box::new(d)))
                .ok_or_else(|| format!("node {i} has no NIC"))
        };
        let gbps = p.link_gbps;
        fabric::build(
            &mut engine,
            &topo,
            spine,
            None,
            fabric,
            node,
            SpinDev::Switch,
            |_, _| None,
            |_, _| gbps,
        )
        .map_err(|e| match e {
            FabricError::Build(m) => anyhow!("sPIN fabric: {m}"),
            FabricError::Engine(e) => anyhow!("sPIN fabric: {e}"),
        })?;
        let nic_ids = (0..n)
            .map(|i| topo.device_index(Device::Node(i)) as DeviceId)
            .collect();
        Ok(Net {
            engine,
            p: p.clone(),
            nic_ids,
            puts: BinaryHeap::new(),
            seq: 0,
        })
    }

    /// The host of `node` posts a send at `t` (its CPU's `o` is the caller's).
    fn put(&mut self, t: Time, p: Put) {
        self.seq += 1;
        self.puts.push(Reverse((t + self.p.dma(), self.seq, p)));
    }

    fn nic(&mut self, node: u32) -> Option<&mut SpinNicDev> {
        let id = *self.nic_ids.get(node as usize)?;
        match self.engine.device_mut(id)? {
            SpinDev::Nic(d) => Some(d),
            SpinDev::Switch(_) => None,
        }
    }

    /// Run until nothing is left; `on_done(net, node, time the host notices, done)`
    /// may post more sends. A host's send reaches its NIC before any network
    /// event at the same instant.
    fn run(
        &mut self,
        mut on_done: impl FnMut(&mut Net, u32, Time, MessageDone),
    ) -> anyhow::Result<()> {
        let mut done = Vec::new();
        loop {
            let put_t = self.puts.peek().map(|Reverse((t, ..))| *t);
            let stepped = match put_t {
                Some(t) => {
                    let before = Time::from_ps(t.as_ps().saturating_sub(1));
                    self.engine.step(before).context("sPIN fabric")?
                }
                None => self.engine.step(Time::MAX).context("sPIN fabric")?,
            };
            if !stepped {
                let Some(Reverse((t, _, p))) = self.puts.pop() else {
                    break;
                };
                let Some(n) = self.nic(p.node) else {
                    bail!("a send from node {} that has no NIC", p.node);
                };
                n.post_put(t, p.dst, p.bits, p.addr, p.len);
            }
            for node in 0..self.nic_ids.len() as u32 {
                if let Some(n) = self.nic(node) {
                    done.extend(n.poll_completions());
                }
                for d in done.drain(..) {
                    let seen = d.at.max(d.dma_done) + self.p.dma() + self.p.o();
                    on_done(self, node, seen, d);
                }
            }
        }
        Ok(())
    }
}

fn nics(
    n: u32,
    p: &SpinParams,
    art: impl Fn(u32) -> (Artifact, String),
) -> anyhow::Result<Vec<SpinNicDev>> {
    (0..n)
        .map(|i| {
            let (a, entries) = art(i);
            let mut d = SpinNicDev::new(&a, p.nic(i)).context("sPIN NIC")?;
            commands::apply(d.control(), &entries, "entries").context("sPIN NIC entries")?;
            Ok(d)
        })
        .collect()
}

const PING: u64 = 0x1;
const PONG: u64 = 0x2;

/// Half the round-trip time of a ping-pong of `size` bytes, ns: (sPIN, RDMA).
pub fn pingpong(progs: &SpinPrograms, p: &SpinParams, size: u32) -> anyhow::Result<(f64, f64)> {
    let mut out = [0.0; 2];
    for (k, spin) in [true, false].into_iter().enumerate() {
        let list = nics(2, p, |i| {
            if spin && i == 1 {
                (
                    progs.pingpong.clone(),
                    format!("table_add Ping.ping_match pong {PING:#x} => {PONG:#x} 0x100000\n"),
                )
            } else {
                (progs.strided.clone(), String::new())
            }
        })?;
        let mut net = Net::new(list, p, &progs.spine)?;
        net.put(
            p.o(),
            Put {
                node: 0,
                dst: 1,
                bits: PING,
                addr: 0,
                len: size,
            },
        );
        let mut rtt = None;
        net.run(|net, node, seen, d| {
            if node == 0 && d.match_bits == PONG {
                rtt = Some(seen);
            } else if node == 1 && !spin {
                // The host replies once it noticed the ping.
                net.put(
                    seen + net.p.o(),
                    Put {
                        node: 1,
                        dst: 0,
                        bits: PONG,
                        addr: 0,
                        len: d.length,
                    },
                );
            }
        })?;
        let Some(rtt) = rtt else {
            bail!("pingpong of {size} bytes: no pong arrived");
        };
        out[k] = rtt.as_ps() as f64 / 2000.0;
    }
    Ok((out[0], out[1]))
}

/// Children of `node` in the binomial tree of `n` nodes rooted at 0.
pub fn binomial_children(node: u32, n: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut step = n.next_power_of_two();
    while step > 1 {
        step /= 2;
        if node % (2 * step) == 0 && node + step < n {
            out.push(node + step);
        }
    }
    out
}

const BCAST: u64 = 0xB0;

/// Time until every node's host has the broadcast of `size` bytes from
/// node 0 over a binomial tree of `n` nodes, ns: (sPIN, RDMA).
pub fn bcast(
    progs: &SpinPrograms,
    p: &SpinParams,
    n: u32,
    size: u32,
) -> anyhow::Result<(f64, f64)> {
    if !(2..=16).contains(&n) {
        bail!("bcast needs 2 to 16 nodes (spin_bcast.p4 forwards to at most 4 children), got {n}");
    }
    let mut out = [0.0; 2];
    for (k, spin) in [true, false].into_iter().enumerate() {
        let list = nics(n, p, |i| {
            if spin {
                let mut c = binomial_children(i, n);
                let cnt = c.len();
                c.resize(4, 0);
                (
                    progs.bcast.clone(),
                    format!(
                        "table_add Tree.bcast_tree children {BCAST:#x} => {cnt} {} {} {} {} 0\n",
                        c[0], c[1], c[2], c[3]
                    ),
                )
            } else {
                (progs.strided.clone(), String::new())
            }
        })?;
        let mut net = Net::new(list, p, &progs.spine)?;
        // The root's host posts one send per child, o apart.
        for (j, c) in binomial_children(0, n).into_iter().enumerate() {
            net.put(
                Time::from_ps(p.o().as_ps() * (j as u64 + 1)),
                Put {
                    node: 0,
                    dst: c,
                    bits: BCAST,
                    addr: 0,
                    len: size,
                },
            );
        }
        let mut last = Time::ZERO;
        let mut got = 0u32;
        net.run(|net, node, seen, d| {
            got += 1;
            last = last.max(seen);
            if !spin {
                for (j, c) in binomial_children(node, n).into_iter().enumerate() {
                    net.put(
                        seen + Time::from_ps(net.p.o().as_ps() * (j as u64 + 1)),
                        Put {
                            node,
                            dst: c,
                            bits: BCAST,
                            addr: 0,
                            len: d.length,
                        },
                    );
                }
            }
        })?;
        if got != n - 1 {
            bail!("bcast: {got} of {} nodes received the message", n - 1);
        }
        out[k] = last.as_ps() as f64 / 1000.0;
    }
    Ok((out[0], out[1]))
}

const STRIDED: u64 = 0x77;

/// Receive time of a `total`-byte message into a vector datatype of
/// `block`-byte blocks at stride 2 × block, ns: (sPIN, RDMA + host unpack).
pub fn strided(
    progs: &SpinPrograms,
    p: &SpinParams,
    total: u32,
    block: u32,
) -> anyhow::Result<(f64, f64)> {
    let mut out = [0.0; 2];
    for (k, spin) in [true, false].into_iter().enumerate() {
        let list = nics(2, p, |i| {
            let e = if spin && i == 1 {
                format!(
                    "table_add Layout.datatype vector {STRIDED:#x} => 0 {block} {}\n",
                    2 * block
                )
            } else {
                String::new()
            };
            (progs.strided.clone(), e)
        })?;
        let mut net = Net::new(list, p, &progs.spine)?;
        net.put(
            p.o(),
            Put {
                node: 0,
                dst: 1,
                bits: STRIDED,
                addr: 0,
                len: total,
            },
        );
        let mut seen_at = None;
        net.run(|_, node, seen, d| {
            if node == 1 && d.rc == 0 {
                seen_at = Some(seen);
            }
        })?;
        let Some(mut t) = seen_at else {
            bail!("strided receive of {total} bytes did not complete");
        };
        if !spin {
            let blocks = u64::from(total.div_ceil(block));
            let copy = serialization_time(u64::from(total), p.host_copy_gbps);
            t = t + copy + Time::from_ps((p.host_block_ns * 1000.0) as u64 * blocks);
        }
        out[k] = t.as_ps() as f64 / 1000.0;
    }
    Ok((out[0], out[1]))
}

/// Run `workload` over `sizes` (message sizes; block sizes for `strided`).
pub fn run_workload(
    workload: &str,
    p: &SpinParams,
    nodes: u32,
    sizes: &[u64],
) -> anyhow::Result<Vec<SpinRow>> {
    let progs = SpinPrograms::load()?;
    let mut rows = Vec::new();
    for &s in sizes {
        let size = u32::try_from(s).with_context(|| format!("size {s} is over 4 GiB"))?;
        if size == 0 {
            bail!("sizes must be at least 1 byte");
        }
        let row = match workload {
            "pingpong" => {
                let (a, b) = pingpong(&progs, p, size)?;
                SpinRow {
                    size: s,
                    spin_ns: a,
                    rdma_ns: b,
                    spin_gbps: None,
                    rdma_gbps: None,
                }
            }
            "bcast" => {
                let (a, b) = bcast(&progs, p, nodes, size)?;
                SpinRow {
                    size: s,
                    spin_ns: a,
                    rdma_ns: b,
                    spin_gbps: None,
                    rdma_gbps: None,
                }
            }
            "strided" => {
                let total = 4u32 << 20;
                let (a, b) = strided(&progs, p, total, size)?;
                let gbps = |ns: f64| f64::from(total) * 8.0 / ns;
                SpinRow {
                    size: s,
                    spin_ns: a,
                    rdma_ns: b,
                    spin_gbps: Some(gbps(a)),
                    rdma_gbps: Some(gbps(b)),
                }
            }
            other => bail!("unknown workload {other:?}: use pingpong, bcast or strided"),
        };
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_cross_the_compiled_switch_on_the_event_loop() {
        let p = SpinParams::default();
        let progs = SpinPrograms::load().unwrap();
        let list = nics(3, &p, |_| (progs.strided.clone(), String::new())).unwrap();
        let mut net = Net::new(list, &p, &progs.spine).unwrap();
        let len = 3 * p.mtu_payload;
        net.put(
            p.o(),
            Put {
                node: 0,
                dst: 2,
                bits: STRIDED,
                addr: 0,
                len,
            },
        );
        let mut got = Vec::new();
        net.run(|_, node, seen, d| got.push((node, seen, d.length, d.rc)))
            .unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        let (node, seen, length, rc) = got[0];
        assert_eq!((node, length, rc), (2, len, 0));
        // The switch routed all three packets to node 2's link, none to 1's.
        let rx = |n: usize| net.engine.rx_counters(net.nic_ids[n], 0).unwrap();
        assert_eq!(rx(2).packets, 3);
        assert_eq!(rx(1).packets, 0);
        // Store and forward: the last packet is serialised twice and waits
        // L in the switch, so the message is seen no earlier than
        // o + DMA + 2 serialisations + L + DMA + o after time 0.
        let frame = u64::from(p.mtu_payload) + 74;
        let floor = p.o()
            + p.dma()
            + serialization_time(frame, p.link_gbps)
            + serialization_time(frame, p.link_gbps)
            + Time::from_ns(p.switch_ns)
            + p.dma()
            + p.o();
        assert!(seen >= floor, "seen {seen:?} before {floor:?}");
    }

    #[test]
    fn spin_beats_rdma_in_each_workload() {
        let p = SpinParams::default();
        let progs = SpinPrograms::load().unwrap();
        // Ping-pong: no host on the reply path.
        let (s, r) = pingpong(&progs, &p, 64).unwrap();
        assert!(s < r, "pingpong 64 B: sPIN {s} ns, RDMA {r} ns");
        // The RDMA reply waits for two DMA latencies and two o more per
        // round trip: half of that on the half round trip.
        assert!(r - s > 0.9 * (250.0 + 65.0), "{s} {r}");
        let (s, r) = bcast(&progs, &p, 8, 4096).unwrap();
        assert!(s < r, "bcast: sPIN {s} ns, RDMA {r} ns");
        assert!(bcast(&progs, &p, 17, 64).is_err());
    }

    #[test]
    fn strided_receive_reaches_line_rate_from_small_blocks() {
        let p = SpinParams::default();
        let progs = SpinPrograms::load().unwrap();
        let total = 1u32 << 20;
        let gbps = |ns: f64| f64::from(total) * 8.0 / ns;
        let (s4, r4) = strided(&progs, &p, total, 4).unwrap();
        let (s256, r256) = strided(&progs, &p, total, 256).unwrap();
        // 4 B blocks: DMA writes dominate; 256 B: within 5 % of the link.
        assert!(gbps(s4) < 0.5 * 400.0, "{}", gbps(s4));
        assert!(gbps(s256) > 0.9 * 400.0, "{}", gbps(s256));
        // The baseline unpacks on the host: far below the link either way.
        assert!(gbps(r256) < 0.5 * 400.0 && r4 > s4);
    }

    #[test]
    fn binomial_tree_of_eight() {
        assert_eq!(binomial_children(0, 8), vec![4, 2, 1]);
        assert_eq!(binomial_children(4, 8), vec![6, 5]);
        assert_eq!(binomial_children(6, 8), vec![7]);
        assert!(binomial_children(7, 8).is_empty());
        assert_eq!(binomial_children(0, 5), vec![4, 2, 1]);
        assert_eq!(binomial_children(2, 5), vec![3]);
    }
}
