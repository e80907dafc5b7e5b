//! A tiny in-process network for tests and benchmarks: datapaths (NICs,
//! switches) connected port to port by links with a fixed one-way delay
//! ([`Wire`]), driven in simulated time. It can capture every frame (for
//! pcap goldens) and drop chosen frames (fault injection). [`Gather`]
//! drives RIG commands on a set of NICs over it, with host memory laid out
//! by [`gather_memory`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use netsparse_externs::{Datapath, Outputs, Time};

use crate::memory::{DenseMemory, HostMemory, MemError};
use crate::nic::Nic;
use crate::verbs::{Completion, PostError, RigCommand};
use crate::PropertySlice;

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

/// Host address of the idx array in [`gather_memory`]'s layout.
pub const IDX_BASE: u64 = 0x0001_0000_0000;
/// Host address of the destination array (one property slot per column).
pub const DEST_BASE: u64 = 0x0002_0000_0000;
/// Host address of the node's slice of the property array.
pub const PROP_BASE: u64 = 0x0003_0000_0000;

/// Host memory of node `node` for a gather over a 1D partition (`bounds`:
/// N + 1 values, node n owns columns `bounds[n]..bounds[n + 1]`): its idx
/// array `idxs` at [`IDX_BASE`], a destination array of one `prop_len`
/// slot per column at [`DEST_BASE`], and its slice of the property array
/// (values from [`crate::property_bytes`]) at [`PROP_BASE`].
pub fn gather_memory(
    bounds: &[u64],
    node: usize,
    prop_len: u32,
    idxs: &[u64],
) -> Result<(DenseMemory, PropertySlice), MemError> {
    let columns = bounds.last().copied().unwrap_or(0);
    let first = bounds.get(node).copied().unwrap_or(0);
    let count = bounds.get(node + 1).copied().unwrap_or(first) - first;
    let mut m = DenseMemory::new();
    if !idxs.is_empty() {
        m.register_idxs(IDX_BASE, idxs)?;
    }
    m.register_destination(DEST_BASE, columns.max(1) * u64::from(prop_len))?;
    if count > 0 {
        m.register_properties(PROP_BASE, first, count, prop_len)?;
    }
    Ok((
        m,
        PropertySlice {
            base_addr: PROP_BASE,
            first_idx: first,
            count,
            prop_len,
        },
    ))
}

/// RIG commands over the `count` idxs at [`IDX_BASE`], `batch` idxs each
/// (the last one shorter), all writing into [`DEST_BASE`].
pub fn batch_commands(count: u64, batch: u64, prop_len: u32) -> Vec<RigCommand> {
    let batch = batch.max(1);
    (0..count.div_ceil(batch))
        .map(|i| RigCommand {
            idx_addr: IDX_BASE + i * batch * 8,
            dest_addr: DEST_BASE,
            count: batch.min(count - i * batch),
            property_size: prop_len,
        })
        .collect()
}

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

/// The idx stream of the client-unit benchmark: `count` idxs over
/// `columns` columns, drawn (xorshift, `seed`) so that about 7/8 repeat an
/// idx of a 16K hot set (coalesced after their first PR) and 1/8 are
/// spread over all columns (mostly distinct: issued).
pub fn bench_idxs(count: usize, columns: u64, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let hot = 16_384.min(columns.max(1));
    (0..count)
        .map(|_| {
            let r = next();
            if r & 7 != 0 {
                (r >> 3) % hot * (columns / hot).max(1)
            } else {
                (r >> 3) % columns.max(1)
            }
        })
        .collect()
}

/// One client RIG unit processing one RIG command, in-process: idx DMA,
/// host_to_net per idx (Idx Filter, Pending PR Table, destination solver,
/// PendingInsert), concatenation, framing and TX pacing, with Table 5's
/// 256-entry Pending PR Table. No responder runs: after every timer event
/// the outstanding PRs are retired as if answered at once whenever 192 are
/// outstanding ([`Nic::answer_all_pending`]: entry retired, Idx Filter bit
/// set), so the unit never stalls and repeated idxs are filtered or
/// coalesced.
#[derive(Debug)]
pub struct ClientUnitBench {
    nic: Nic<DenseMemory>,
    out: Outputs,
    count: u64,
    answered: u64,
}

impl ClientUnitBench {
    /// A NIC (node 0 of `nodes`, equal partition of `columns`) with one
    /// client unit and the command over `idxs` posted.
    pub fn new(
        artifact: &netsparse_externs::artifact::Artifact,
        idxs: &[u64],
        columns: u64,
        nodes: u64,
    ) -> Result<ClientUnitBench, String> {
        let bounds: Vec<u64> = (0..=nodes).map(|n| n * columns / nodes.max(1)).collect();
        let (mem, slice) = gather_memory(&bounds, 0, 64, idxs).map_err(|e| e.to_string())?;
        let cfg = crate::NicConfig {
            node: 0,
            rig_units: 2,
            client_units: 1,
            filter_columns: columns,
            ..crate::NicConfig::default()
        };
        let mut nic = Nic::new(artifact, cfg, mem).map_err(|e| e.to_string())?;
        nic.install_partition(&bounds).map_err(|e| e.to_string())?;
        nic.serve_properties(slice).map_err(|e| e.to_string())?;
        for c in batch_commands(idxs.len() as u64, u64::MAX, 64) {
            nic.post_rig(Time::ZERO, c).map_err(|e| e.to_string())?;
        }
        Ok(ClientUnitBench {
            nic,
            out: Outputs::new(),
            count: idxs.len() as u64,
            answered: 0,
        })
    }

    /// Drive the NIC until its unit has run host_to_net for every idx (or
    /// stalls); returns the idxs processed.
    pub fn run(&mut self) -> u64 {
        while let Some(t) = self.nic.next_deadline() {
            self.out.clear();
            self.nic.on_timer(t, &mut self.out);
            if self.nic.stats_ref().prs_issued - self.answered >= 192 {
                self.answered += self.nic.answer_all_pending(t);
            }
            if self.nic.stats_ref().idxs_read >= self.count {
                break;
            }
        }
        self.nic.stats_ref().idxs_read
    }

    /// The NIC (statistics).
    pub fn nic(&self) -> &Nic<DenseMemory> {
        &self.nic
    }
}

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
