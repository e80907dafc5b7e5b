//! Test support, used only by tests (of this crate and the root package):
//! a tiny in-process network ([`Wire`]: datapaths connected port to port
//! by links with a fixed one-way delay, driven in simulated time, with
//! frame capture for pcap goldens and fault injection), [`Gather`], which
//! drives RIG commands on a set of NICs over it, and [`nics`] /
//! [`check_destination`], which set up and check a gather's NICs. The
//! workloads themselves live in [`crate::workload`] and are re-exported
//! here for the tests' convenience.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use netsparse_externs::{Datapath, Outputs, Time};

use crate::memory::{DenseMemory, HostMemory};
use crate::nic::Nic;
use crate::verbs::{Completion, PostError, RigCommand};
pub use crate::workload::*;

/// A (device, port) pair.
pub type Endpoint = (usize, u32);

/// A frame as it left a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// Send order, from 0.
    pub seq: u64,
    /// When it left.
    pub at: Time,
    /// Sending device and port.
    pub from: Endpoint,
    /// Receiving device and port (`None`: the port is not connected).
    pub to: Option<Endpoint>,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Dropped by the fault hook.
    pub dropped: bool,
}

type DropHook = Box<dyn FnMut(u64, &[u8]) -> bool>;

/// A frame in flight: (arrival, send sequence, device, port, buffer).
type InFlight = Reverse<(Time, u64, usize, u32, usize)>;

/// Links between datapaths and the frames in flight on them.
pub struct Wire {
    delay: Time,
    links: Vec<(Endpoint, Endpoint)>,
    queue: BinaryHeap<InFlight>,
    bufs: Vec<Vec<u8>>,
    free: Vec<usize>,
    seq: u64,
    now: Time,
    out: Outputs,
    capture: bool,
    captured: Vec<Captured>,
    drop_hook: Option<DropHook>,
    /// Frames dropped by the fault hook.
    pub dropped: u64,
    /// Frames sent on a port with no link.
    pub unconnected: u64,
    /// Frames delivered.
    pub delivered: u64,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("delay", &self.delay)
            .field("links", &self.links)
            .field("in_flight", &self.queue.len())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl Wire {
    /// No links yet; every link has one-way delay `delay`.
    pub fn new(delay: Time) -> Wire {
        Wire {
            delay,
            links: Vec::new(),
            queue: BinaryHeap::new(),
            bufs: Vec::new(),
            free: Vec::new(),
            seq: 0,
            now: Time::ZERO,
            out: Outputs::new(),
            capture: false,
            captured: Vec::new(),
            drop_hook: None,
            dropped: 0,
            unconnected: 0,
            delivered: 0,
        }
    }

    /// Connect two endpoints (full duplex).
    pub fn connect(&mut self, a: Endpoint, b: Endpoint) {
        self.links.push((a, b));
    }

    /// Record every frame sent from now on.
    pub fn capture(&mut self, on: bool) {
        self.capture = on;
    }

    /// The frames recorded so far, in send order.
    pub fn captured(&self) -> &[Captured] {
        &self.captured
    }

    /// Drop every frame for which `hook(send sequence number, bytes)` is true.
    pub fn drop_when(&mut self, hook: impl FnMut(u64, &[u8]) -> bool + 'static) {
        self.drop_hook = Some(Box::new(hook));
    }

    /// The current time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Frames in flight.
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    fn peer(&self, e: Endpoint) -> Option<Endpoint> {
        self.links.iter().find_map(|&(a, b)| {
            if a == e {
                Some(b)
            } else if b == e {
                Some(a)
            } else {
                None
            }
        })
    }

    /// The earliest event: (time, Some(device) for a deadline / None for an arrival).
    fn next_event(&self, devs: &[&mut dyn Datapath]) -> Option<(Time, Option<usize>)> {
        let arrival = self.queue.peek().map(|Reverse(x)| x.0);
        let mut best: Option<(Time, Option<usize>)> = arrival.map(|t| (t, None));
        for (i, d) in devs.iter().enumerate() {
            if let Some(t) = d.next_deadline() {
                let t = t.max(self.now);
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, Some(i)));
                }
            }
        }
        best
    }

    /// Process one event at or before `until`; false if there is none.
    pub fn step(&mut self, devs: &mut [&mut dyn Datapath], until: Time) -> bool {
        let Some((t, who)) = self.next_event(devs) else {
            return false;
        };
        if t > until {
            return false;
        }
        self.now = t;
        self.out.clear();
        let from = match who {
            None => {
                let Some(Reverse((_, _, dev, port, buf))) = self.queue.pop() else {
                    return false;
                };
                self.delivered += 1;
                if let Some(d) = devs.get_mut(dev) {
                    d.on_packet(t, port, &self.bufs[buf], &mut self.out);
                }
                self.free.push(buf);
                dev
            }
            Some(i) => {
                devs[i].on_timer(t, &mut self.out);
                i
            }
        };
        let out = std::mem::take(&mut self.out);
        for (port, bytes) in out.iter() {
            self.send(t, (from, port), bytes);
        }
        self.out = out;
        true
    }

    fn send(&mut self, t: Time, from: Endpoint, bytes: &[u8]) {
        let seq = self.seq;
        self.seq += 1;
        let to = self.peer(from);
        let dropped = match self.drop_hook.as_mut() {
            Some(h) => h(seq, bytes),
            None => false,
        };
        if self.capture {
            self.captured.push(Captured {
                seq,
                at: t,
                from,
                to,
                bytes: bytes.to_vec(),
                dropped,
            });
        }
        if dropped {
            self.dropped += 1;
            return;
        }
        let Some((dev, port)) = to else {
            self.unconnected += 1;
            return;
        };
        let buf = match self.free.pop() {
            Some(b) => {
                self.bufs[b].clear();
                self.bufs[b].extend_from_slice(bytes);
                b
            }
            None => {
                self.bufs.push(bytes.to_vec());
                self.bufs.len() - 1
            }
        };
        self.queue
            .push(Reverse((t + self.delay, seq, dev, port, buf)));
    }

    /// Process every event up to and including `until`; the clock ends at `until`.
    pub fn run_until(&mut self, devs: &mut [&mut dyn Datapath], until: Time) {
        while self.step(devs, until) {}
        self.now = self.now.max(until);
    }

    /// Process events until none is left or `limit` is reached; returns
    /// whether the network went idle (false: stopped at the limit).
    pub fn run_until_idle(&mut self, devs: &mut [&mut dyn Datapath], limit: Time) -> bool {
        while self.step(devs, limit) {}
        self.next_event(devs).is_none()
    }
}

// ----- gathers --------------------------------------------------------------------------

/// Drives one gather per NIC: each NIC posts its commands all at once, or
/// one after another (`serial`: the next is posted when the previous one
/// completes), and collects the completions.
#[derive(Clone, Debug)]
pub struct Gather {
    /// Commands per NIC.
    pub commands: Vec<Vec<RigCommand>>,
    /// Post each NIC's commands one after another.
    pub serial: bool,
    /// Completions per NIC, in arrival order.
    pub completions: Vec<Vec<Completion>>,
    /// `post_rig` errors per NIC.
    pub rejected: Vec<Vec<PostError>>,
    next: Vec<usize>,
}

impl Gather {
    /// A gather of `commands[n]` on NIC `n`.
    pub fn new(commands: Vec<Vec<RigCommand>>, serial: bool) -> Gather {
        let n = commands.len();
        Gather {
            commands,
            serial,
            completions: vec![Vec::new(); n],
            rejected: vec![Vec::new(); n],
            next: vec![0; n],
        }
    }

    fn post<M: HostMemory>(&mut self, n: usize, nic: &mut Nic<M>, now: Time) {
        while let Some(c) = self.commands[n].get(self.next[n]).copied() {
            self.next[n] += 1;
            match nic.post_rig(now, c) {
                Ok(_) => {
                    if self.serial {
                        return;
                    }
                }
                Err(e) => self.rejected[n].push(e),
            }
        }
    }

    /// Whether every posted command has completed.
    pub fn done(&self) -> bool {
        (0..self.commands.len()).all(|n| {
            self.next[n] == self.commands[n].len()
                && self.completions[n].len() + self.rejected[n].len() == self.commands[n].len()
        })
    }

    /// Run the gather on `nics` (devices `0..nics.len()` of `wire`) and
    /// `others` (the devices after them) until every command completed
    /// (true) or `limit` is reached / nothing is left to do (false).
    pub fn run<M: HostMemory>(
        &mut self,
        wire: &mut Wire,
        nics: &mut [Nic<M>],
        others: &mut [&mut dyn Datapath],
        limit: Time,
    ) -> bool {
        let now = wire.now();
        for (n, nic) in nics.iter_mut().enumerate() {
            if self.next[n] == 0 {
                self.post(n, nic, now);
            }
        }
        loop {
            if self.done() {
                return true;
            }
            let progressed = {
                let mut devs: Vec<&mut dyn Datapath> = nics
                    .iter_mut()
                    .map(|n| n as &mut dyn Datapath)
                    .chain(others.iter_mut().map(|o| &mut **o as &mut dyn Datapath))
                    .collect();
                wire.step(&mut devs, limit)
            };
            let now = wire.now();
            for (n, nic) in nics.iter_mut().enumerate() {
                while let Some(c) = nic.poll_cq() {
                    self.completions[n].push(c);
                    if self.serial {
                        self.post(n, nic, now);
                    }
                }
            }
            if !progressed {
                return self.done();
            }
        }
    }
}

// ----- benchmark workload -----------------------------------------------------------------

/// One NIC per node of a 1D partition (`bounds`), each with its
/// [`gather_memory`] (idxs `idxs[n]`), the partition installed and its
/// property slice served; `tweak` adjusts every node's configuration.
/// Test support: panics if the set-up is invalid.
pub fn nics(
    artifact: &netsparse_externs::artifact::Artifact,
    idxs: &[Vec<u64>],
    bounds: &[u64],
    prop_len: u32,
    tweak: impl Fn(&mut crate::NicConfig),
) -> Vec<Nic<DenseMemory>> {
    (0..idxs.len())
        .map(|n| {
            let (mem, slice) = gather_memory(bounds, n, prop_len, &idxs[n]).expect("gather memory");
            let mut cfg = crate::NicConfig {
                node: n as u32,
                filter_columns: bounds.last().copied().unwrap_or(0),
                ..crate::NicConfig::default()
            };
            tweak(&mut cfg);
            let mut nic = Nic::new(artifact, cfg, mem).expect("NIC");
            nic.install_partition(bounds).expect("partition");
            nic.serve_properties(slice).expect("property slice");
            nic
        })
        .collect()
}

/// Check a NIC's destination array after a gather: the property of every
/// idx in `needed` in its slot, zeros in every other slot of the `columns`.
/// Returns the number of properties checked. Test support: panics (naming
/// the node and slot) on the first wrong slot.
pub fn check_destination(
    nic: &Nic<DenseMemory>,
    needed: &std::collections::BTreeSet<u64>,
    columns: u64,
    prop_len: u32,
) -> u64 {
    let data = nic
        .memory()
        .data(DEST_BASE)
        .expect("destination registered");
    let p = prop_len as usize;
    for c in 0..columns {
        let slot = &data[c as usize * p..(c as usize + 1) * p];
        if needed.contains(&c) {
            assert!(
                crate::is_property(c, slot),
                "node {}: wrong property in slot {c}",
                nic.config().node
            );
        } else {
            assert!(
                slot.iter().all(|b| *b == 0),
                "node {}: slot {c} written but not needed",
                nic.config().node
            );
        }
    }
    needed.len() as u64
}
