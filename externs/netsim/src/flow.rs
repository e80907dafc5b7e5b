//! Lossless flow control: the finite buffers of devices and the credits
//! that guard them. This file owns a device's buffer model
//! ([`BufferSpec`]), its run-time state (occupancy, the releases still to
//! come, the links paused in front of it) and its statistics
//! ([`BufferStats`]); the engine (`engine.rs`) calls it where frames are
//! put on links and where they arrive.
//!
//! The model is InfiniBand-like credit-based flow control (§7.1 and
//! Table 5 of the paper), with the credit loop taken as instantaneous:
//!
//! * A device with a buffer model has, at each connected port, an **input
//!   buffer** of an equal share of its capacity (a switch's 96 MB packet
//!   buffer split over its ports). A frame holds the input buffer of the
//!   port it arrived on from the moment its sender puts it on the link
//!   (the credit) until it has left the device: for a
//!   [`BufferKind::Shared`] buffer (a switch), until the last bit of every
//!   frame the device emitted while handling it has left its output queue;
//!   for a [`BufferKind::Receive`] buffer (a NIC, which consumes a frame
//!   when it arrives), until it arrives. Frames a device emits from its
//!   own timers (a concatenation queue flushed, a delayed answer) come from
//!   its internal memory and hold no input buffer; they are counted in its
//!   peak.
//! * A sender may put a frame on a link only if the receiver's input
//!   buffer at that port has room for it. Otherwise the frame waits in the
//!   link's output queue, the link is **paused**, and so is every later
//!   frame on it (FIFO). A frame queued behind others on a busy link takes
//!   its credit when it joins the queue (its start of serialisation is
//!   then fixed), which can only pause a sender earlier than a real credit
//!   loop would.
//! * A paused link resumes at the first instant the receiver has room for
//!   its head frame: when a frame charged to that input buffer finishes
//!   leaving the receiver (a *wake* event at that time) or arrives at a
//!   receive buffer. Paused links in front of one device resume in the
//!   order they paused, so none starves.
//! * Nothing is ever dropped. Frames the device emits for a frame it
//!   received may be larger than it (a Property Cache hit answering a
//!   read), so an input buffer can pass its share by those; the peak is
//!   reported.
//! * Input buffers per port make up*/down* routes (leaf-spine) free of
//!   deadlock; where routes do form a cycle of full buffers, and nothing
//!   in flight or leaving a buffer can break it, the run stops with the
//!   cycle.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use serde::Serialize;

use netsparse_externs::Time;

/// What a device's buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BufferKind {
    /// One buffer for the frames in flight to the device and those in its
    /// output queues (a switch's shared packet buffer).
    Shared,
    /// Frames in flight to the device only; the device consumes a frame
    /// when it arrives (a NIC's RX buffer).
    Receive,
}

/// A device's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BufferSpec {
    /// Capacity in bytes (at least one frame).
    pub capacity: u64,
    /// What it holds.
    pub kind: BufferKind,
}

/// A device's buffer over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferStats {
    /// Capacity in bytes, all ports together (`None`: unbounded, not
    /// modelled).
    pub capacity: Option<u64>,
    /// Each connected port's input buffer, bytes.
    pub port_capacity: Option<u64>,
    /// Peak bytes held by the device (every input buffer and the frames
    /// of its own timers).
    pub peak_bytes: u64,
    /// Peak bytes held by one input buffer, as admission counts them.
    pub peak_port_bytes: u64,
    /// Peak bytes in the device's own output queues.
    pub peak_queued_bytes: u64,
    /// Frames that had to wait for room in one of its input buffers.
    pub paused_frames: u64,
}

/// Charged to no input buffer: frames a device emitted from its timers.
pub(crate) const INTERNAL: u32 = u32::MAX;

/// One input buffer.
#[derive(Clone, Copy, Debug, Default)]
struct PortBuf {
    /// Bytes in flight to the port (credits held by the sender).
    reserved: u64,
    /// Bytes charged to the port in the device's output queues.
    queued: u64,
}

/// A device's buffer at run time.
#[derive(Debug)]
pub(crate) struct DevBuffer {
    pub(crate) spec: Option<BufferSpec>,
    port_capacity: u64,
    ports: Vec<PortBuf>,
    /// Bytes of the device's timers' frames in its output queues.
    internal: u64,
    /// Bytes held in all.
    total: u64,
    /// Bytes in its output queues in all.
    queued: u64,
    /// When queued bytes leave, per output port: (end of serialisation,
    /// bytes, port charged or [`INTERNAL`]). A link serialises its frames
    /// in order, so each port's releases come in time order and a FIFO
    /// holds them; `fronts` orders the ports by their first release.
    releases: Vec<VecDeque<(Time, u64, u32)>>,
    /// (first release, output port) of every port with releases pending.
    fronts: BinaryHeap<Reverse<(Time, u32)>>,
    /// The earliest release pending ([`Time::MAX`] when none): what
    /// `fronts` has on top, kept beside the counters so that a prune with
    /// nothing to release reads no more than this.
    first: Time,
    /// Links into the device whose head frame waits for room, in the order
    /// they paused.
    pub(crate) paused_in: VecDeque<u32>,
    /// The wake event queued for the device, if any.
    pub(crate) wake_at: Option<Time>,
    pub(crate) stats: BufferStats,
}

impl Default for DevBuffer {
    /// No buffer model, nothing held.
    fn default() -> DevBuffer {
        DevBuffer {
            spec: None,
            port_capacity: 0,
            ports: Vec::new(),
            internal: 0,
            total: 0,
            queued: 0,
            releases: Vec::new(),
            fronts: BinaryHeap::new(),
            first: Time::MAX,
            paused_in: VecDeque::new(),
            wake_at: None,
            stats: BufferStats::default(),
        }
    }
}

impl DevBuffer {
    /// Model `spec` over `ports` connected ports (`None`: no model).
    pub(crate) fn set(&mut self, spec: Option<BufferSpec>, ports: u32) {
        self.spec = spec;
        self.ports = vec![PortBuf::default(); ports as usize];
        self.port_capacity = spec.map_or(0, |s| s.capacity / u64::from(ports.max(1)));
        self.stats.capacity = spec.map(|s| s.capacity);
        self.stats.port_capacity = spec.map(|_| self.port_capacity);
    }

    /// Whether the device's buffer is modelled.
    #[inline]
    pub(crate) fn tracked(&self) -> bool {
        self.spec.is_some()
    }

    /// Set each input buffer's capacity (the capacity split over the
    /// ports that are connected).
    pub(crate) fn set_port_capacity(&mut self, bytes: u64) {
        self.port_capacity = bytes;
        self.stats.port_capacity = self.spec.map(|_| bytes);
    }

    /// Each input buffer's capacity (0 when not modelled).
    pub(crate) fn port_capacity(&self) -> u64 {
        self.port_capacity
    }

    fn held(&self, port: u32) -> u64 {
        let p = self.ports[port as usize];
        match self.spec.map(|s| s.kind) {
            Some(BufferKind::Shared) => p.reserved + p.queued,
            _ => p.reserved,
        }
    }

    /// Forget the bytes that finished leaving by `now`.
    #[inline]
    pub(crate) fn prune(&mut self, now: Time) {
        debug_assert_eq!(self.first, self.next_release().unwrap_or(Time::MAX));
        if self.first > now {
            return;
        }
        self.release_until(now);
    }

    /// [`DevBuffer::prune`] when some release is due by `now`.
    #[inline(never)]
    fn release_until(&mut self, now: Time) {
        while let Some(mut top) = self.fronts.peek_mut() {
            let Reverse((t, out)) = *top;
            if t > now {
                break;
            }
            let q = &mut self.releases[out as usize];
            while let Some(&(t, len, port)) = q.front() {
                if t > now {
                    break;
                }
                q.pop_front();
                self.queued -= len;
                self.total -= len;
                match self.ports.get_mut(port as usize) {
                    Some(p) => p.queued -= len,
                    None => self.internal -= len,
                }
            }
            // The port's next release takes its place (one sift), or the
            // port leaves the order.
            match q.front() {
                Some(&(t, _, _)) => *top = Reverse((t, out)),
                None => {
                    std::collections::binary_heap::PeekMut::pop(top);
                }
            }
        }
        self.first = self.next_release().unwrap_or(Time::MAX);
    }

    /// Whether a frame of `len` bytes may be sent to the device's `port`
    /// now (call [`DevBuffer::prune`] first).
    #[inline]
    pub(crate) fn admits(&self, port: u32, len: u64) -> bool {
        !self.tracked() || self.held(port) + len <= self.port_capacity
    }

    fn note_peak(&mut self, port: u32) {
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.total);
        self.stats.peak_queued_bytes = self.stats.peak_queued_bytes.max(self.queued);
        if (port as usize) < self.ports.len() {
            let held = self.held(port);
            self.stats.peak_port_bytes = self.stats.peak_port_bytes.max(held);
        }
    }

    /// A frame of `len` bytes, charged to input `port` (or [`INTERNAL`]),
    /// entered the device's output queue at `now`.
    pub(crate) fn enqueue(&mut self, port: u32, len: u64, now: Time) {
        if !self.tracked() {
            return;
        }
        self.prune(now);
        self.queued += len;
        match self.ports.get_mut(port as usize) {
            Some(p) => p.queued += len,
            None => self.internal += len,
        }
        self.total += len;
        self.note_peak(port);
    }

    /// A frame of its output queue, charged to `port`, finishes leaving
    /// output port `out` at `end` (no earlier than the port's frames before
    /// it: a link sends in order).
    pub(crate) fn will_release(&mut self, end: Time, len: u64, port: u32, out: u32) {
        if !self.tracked() {
            return;
        }
        let o = out as usize;
        if o >= self.releases.len() {
            self.releases.resize_with(o + 1, VecDeque::new);
        }
        let q = &mut self.releases[o];
        debug_assert!(q.back().is_none_or(|b| b.0 <= end), "releases out of order");
        if q.is_empty() {
            self.fronts.push(Reverse((end, out)));
            self.first = self.first.min(end);
        }
        q.push_back((end, len, port));
    }

    /// A frame of `len` bytes was put on a link to the device's `port`.
    pub(crate) fn reserve(&mut self, port: u32, len: u64) {
        if self.tracked() {
            self.ports[port as usize].reserved += len;
            self.total += len;
            self.note_peak(port);
        }
    }

    /// A frame of `len` bytes in flight to the device's `port` arrived.
    pub(crate) fn arrived(&mut self, port: u32, len: u64) {
        if self.tracked() && len > 0 {
            self.ports[port as usize].reserved -= len;
            self.total -= len;
        }
    }

    /// The earliest time bytes leave the device (after the last prune).
    pub(crate) fn next_release(&self) -> Option<Time> {
        self.fronts.peek().map(|r| r.0 .0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(capacity: u64, kind: BufferKind, ports: u32) -> DevBuffer {
        let mut b = DevBuffer::default();
        b.set(Some(BufferSpec { capacity, kind }), ports);
        b
    }

    #[test]
    fn a_shared_buffer_holds_a_frame_until_what_it_caused_has_left() {
        let mut b = buffer(2000, BufferKind::Shared, 2);
        assert_eq!(b.port_capacity(), 1000);
        b.reserve(0, 400);
        assert!(b.admits(0, 600));
        assert!(!b.admits(0, 601));
        // Arrived, and forwarded: now charged to the output queue.
        b.arrived(0, 400);
        b.enqueue(0, 400, Time::ZERO);
        assert!(!b.admits(0, 601));
        assert!(b.admits(1, 1000));
        b.will_release(Time::from_ns(10), 400, 0, 1);
        b.prune(Time::from_ns(9));
        assert!(!b.admits(0, 601));
        b.prune(Time::from_ns(10));
        assert!(b.admits(0, 1000));
        assert_eq!(b.stats.peak_port_bytes, 400);
        assert_eq!(b.stats.peak_queued_bytes, 400);
    }

    #[test]
    fn releases_on_several_output_ports_leave_in_time_order() {
        let mut b = buffer(10_000, BufferKind::Shared, 3);
        // Port 0's input charged for frames leaving on outputs 1 and 2;
        // each output's frames end in order, the outputs interleave.
        for (end, len, out) in [(5, 100, 1), (3, 10, 2), (9, 1000, 1), (4, 1, 2)] {
            b.enqueue(0, len, Time::ZERO);
            b.will_release(Time::from_ns(end), len, 0, out);
        }
        assert_eq!(b.next_release(), Some(Time::from_ns(3)));
        b.prune(Time::from_ns(4));
        assert_eq!(b.queued, 1100, "the 10- and 1-byte frames left");
        assert_eq!(b.next_release(), Some(Time::from_ns(5)));
        b.prune(Time::from_ns(8));
        assert_eq!((b.queued, b.next_release()), (1000, Some(Time::from_ns(9))));
        b.prune(Time::from_ns(9));
        assert_eq!((b.queued, b.total, b.next_release()), (0, 0, None));
        assert_eq!(b.stats.peak_queued_bytes, 1111);
    }

    #[test]
    fn timer_frames_hold_no_input_buffer() {
        let mut b = buffer(1000, BufferKind::Shared, 1);
        b.enqueue(INTERNAL, 5000, Time::ZERO);
        assert!(b.admits(0, 1000));
        assert_eq!(b.stats.peak_bytes, 5000);
        b.will_release(Time::from_ns(1), 5000, INTERNAL, 0);
        b.prune(Time::from_ns(1));
        assert_eq!(b.total, 0);
    }

    #[test]
    fn a_receive_buffer_ignores_the_output_queues() {
        let mut b = buffer(100, BufferKind::Receive, 1);
        b.enqueue(0, 10_000, Time::ZERO);
        assert!(b.admits(0, 100));
        b.reserve(0, 60);
        assert!(!b.admits(0, 41));
        assert_eq!(b.stats.peak_queued_bytes, 10_000);
        assert_eq!(b.stats.peak_port_bytes, 60);
    }

    #[test]
    fn an_unmodelled_buffer_admits_everything_and_tracks_nothing() {
        let mut b = DevBuffer::default();
        b.enqueue(0, u64::MAX / 2, Time::ZERO);
        b.reserve(0, u64::MAX / 2);
        assert!(b.admits(0, u64::MAX / 4));
        assert_eq!(b.stats, BufferStats::default());
        assert_eq!(b.next_release(), None);
    }
}
