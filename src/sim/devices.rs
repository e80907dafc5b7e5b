//! Small native devices for the event loop: traffic sources and sinks, a
//! reflector, a delayed forwarder and a forwarding-by-node router.
//!
//! They exercise the engine and the topology without the behavioural NIC
//! and switch (tests check arrival times against hand computation; the
//! router checks the leaf-spine routing end to end). Each implements
//! [`Datapath`] like the real devices do.

use std::collections::VecDeque;

use netsparse_externs::wire::{DeviceAddr, ETH_HEADER_LEN};
use netsparse_externs::{Datapath, Outputs, Time};

use super::topology::{Device, Topology};

/// Sends every frame back out of the port it came in on, at once.
#[derive(Clone, Debug, Default)]
pub struct Reflector {
    /// Frames reflected.
    pub reflected: u64,
}

impl Datapath for Reflector {
    fn on_packet(&mut self, _now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.reflected += 1;
        out.push(port, frame);
    }
    fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}
    fn next_deadline(&self) -> Option<Time> {
        None
    }
}

/// Forwards frames from `in_port` to `out_port` (and back the other way)
/// after a fixed delay, modelled with its own timer. Buffers are recycled.
#[derive(Clone, Debug)]
pub struct DelayForwarder {
    delay: Time,
    ports: (u32, u32),
    queue: VecDeque<(Time, u32, usize)>,
    bufs: Vec<Vec<u8>>,
    free: Vec<usize>,
    /// Frames forwarded.
    pub forwarded: u64,
}

impl DelayForwarder {
    /// Forward between ports `a` and `b`, each frame `delay` after it arrived.
    pub fn new(a: u32, b: u32, delay: Time) -> DelayForwarder {
        DelayForwarder {
            delay,
            ports: (a, b),
            queue: VecDeque::new(),
            bufs: Vec::new(),
            free: Vec::new(),
            forwarded: 0,
        }
    }
}

impl Datapath for DelayForwarder {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], _out: &mut Outputs) {
        let to = if port == self.ports.0 {
            self.ports.1
        } else {
            self.ports.0
        };
        let slot = match self.free.pop() {
            Some(i) => {
                self.bufs[i].clear();
                self.bufs[i].extend_from_slice(frame);
                i
            }
            None => {
                self.bufs.push(frame.to_vec());
                self.bufs.len() - 1
            }
        };
        self.queue.push_back((now + self.delay, to, slot));
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        while let Some(&(t, port, slot)) = self.queue.front() {
            if t > now {
                break;
            }
            self.queue.pop_front();
            out.push(port, &self.bufs[slot]);
            self.free.push(slot);
            self.forwarded += 1;
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.queue.front().map(|&(t, _, _)| t)
    }
}

/// Emits a fixed list of frames at given times (each on a given port).
#[derive(Clone, Debug, Default)]
pub struct Source {
    frames: VecDeque<(Time, u32, Vec<u8>)>,
    /// Frames sent.
    pub sent: u64,
    /// Frames received (and discarded).
    pub received: u64,
}

impl Source {
    /// Send `frames` as `(time, port, bytes)`; they are sorted by time
    /// (stable, so equal times keep their order).
    pub fn new(mut frames: Vec<(Time, u32, Vec<u8>)>) -> Source {
        frames.sort_by_key(|f| f.0);
        Source {
            frames: frames.into(),
            sent: 0,
            received: 0,
        }
    }
}

impl Datapath for Source {
    fn on_packet(&mut self, _now: Time, _port: u32, _frame: &[u8], _out: &mut Outputs) {
        self.received += 1;
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        while self.frames.front().is_some_and(|f| f.0 <= now) {
            if let Some((_, port, bytes)) = self.frames.pop_front() {
                out.push(port, &bytes);
                self.sent += 1;
            }
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.frames.front().map(|f| f.0)
    }
}

/// Records every arrival: time, port and length (a test probe).
#[derive(Clone, Debug, Default)]
pub struct Sink {
    /// `(arrival time, port, frame length)` in arrival order.
    pub arrivals: Vec<(Time, u32, usize)>,
    /// Bytes received.
    pub bytes: u64,
}

impl Datapath for Sink {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], _out: &mut Outputs) {
        self.arrivals.push((now, port, frame.len()));
        self.bytes += frame.len() as u64;
    }
    fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}
    fn next_deadline(&self) -> Option<Time> {
        None
    }
}

/// A plain switch forwarding IPv4 frames by destination node: the IPv4
/// destination is mapped to a node with the addressing convention and
/// looked up in a node → port table (filled from the topology's routes).
/// Frames for unknown destinations, and non-IPv4 frames, are dropped and
/// counted in `unroutable`.
#[derive(Clone, Debug, Default)]
pub struct NodeRouter {
    ports: Vec<u32>,
    /// Frames forwarded.
    pub forwarded: u64,
    /// Frames dropped for want of a route.
    pub unroutable: u64,
}

/// Marks "no route" in a [`NodeRouter`] table.
const NO_ROUTE: u32 = u32::MAX;

impl NodeRouter {
    /// A router with `table[node] = port`.
    pub fn new(table: Vec<u32>) -> NodeRouter {
        NodeRouter {
            ports: table,
            forwarded: 0,
            unroutable: 0,
        }
    }

    /// The router for switch `d` of topology `t`.
    pub fn for_switch(t: &Topology, d: Device) -> NodeRouter {
        NodeRouter::new(
            (0..t.nodes())
                .map(|n| t.route(d, n).unwrap_or(NO_ROUTE))
                .collect(),
        )
    }

    fn port_for(&self, frame: &[u8]) -> Option<u32> {
        const IP_DST: usize = ETH_HEADER_LEN + 16;
        if frame.len() < IP_DST + 4 || frame[12..14] != [0x08, 0x00] {
            return None;
        }
        let ip = [
            frame[IP_DST],
            frame[IP_DST + 1],
            frame[IP_DST + 2],
            frame[IP_DST + 3],
        ];
        match DeviceAddr::from_ipv4(ip)? {
            DeviceAddr::Node(n) => self
                .ports
                .get(n as usize)
                .copied()
                .filter(|&p| p != NO_ROUTE),
            DeviceAddr::Switch(_) => None,
        }
    }
}

impl Datapath for NodeRouter {
    fn on_packet(&mut self, _now: Time, _port: u32, frame: &[u8], out: &mut Outputs) {
        match self.port_for(frame) {
            Some(p) => {
                self.forwarded += 1;
                out.push(p, frame);
            }
            None => self.unroutable += 1,
        }
    }
    fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}
    fn next_deadline(&self) -> Option<Time> {
        None
    }
}
