//! The event loop: devices, links and simulated time. This file owns
//! [`Engine`], its configuration, errors and counters, and the event loop;
//! how frames move between devices (onto links, under flow control, off
//! them) is in `engine_links.rs`, link parameters and link counters in
//! `link.rs`, the devices' deadlines in `timers.rs`, and the middleware on
//! the links in `tap.rs`.
//!
//! The engine owns every device (anything implementing [`Datapath`]: the
//! behavioural NIC and switch, or the cluster simulator's small devices)
//! and the full-duplex links between their ports, and drives them in
//! simulated [`Time`]:
//!
//! * **Events** are frame arrivals and device timers, processed in order of
//!   (time, sequence number): ties go to the event scheduled first, so runs
//!   are deterministic. [`EventOrder::ArrivalsFirst`] breaks ties the other
//!   way the NIC tests were written for: at one instant frames arrive
//!   before deadlines fire, and deadlines fire in device order.
//! * **Timers**: after every call into a device the engine asks
//!   `next_deadline()` and, if it changed, replaces the device's one live
//!   deadline (an indexed heap beside the event heap, `timers.rs`; the old
//!   deadline is counted as stale). Deadlines and frame arrivals are taken
//!   in one (time, sequence number) order. A deadline at
//!   or before the current time after `on_timer` breaks the `Datapath`
//!   contract and stops the run with [`EngineError::DeadlineNotAdvancing`]
//!   rather than spinning.
//! * **Pipeline latency**: frames a device emits at time `t` are ready to
//!   leave at `t + latency(device)` (300 ns for a switch, Table 5; 0 for
//!   NICs, whose delays their own cores model).
//! * **Links** are full duplex; each direction is a FIFO output queue with
//!   bandwidth and propagation delay: a frame ready at `r` starts at
//!   `max(r, busy_until)`, takes `serialization_time(len, gbps)`, and
//!   arrives (store and forward: its last bit) one propagation delay after
//!   it finishes. [`LinkParams::fixed_delay`] is a link with no
//!   serialisation time: every frame arrives a fixed delay after it left.
//!   The network is **lossless**: no frame is ever dropped (unless a
//!   fault-injecting tap says so). Queues are unbounded unless a device is
//!   given a finite buffer ([`Engine::set_buffer`]): then credit-based flow
//!   control pauses the links into it while it is full (`flow.rs`), the
//!   back-pressure of an InfiniBand-like fabric (§7.1, §8.2), and a cycle
//!   of full buffers stops the run with [`EngineError::FlowControlDeadlock`].
//! * **Counters** per link direction: packets and bytes, and for NetSparse
//!   frames (classified with `externs::wire`) the split into header bytes
//!   and property payload bytes, and the PRs carried.
//! * **Buffers**: frames in flight live in a pool of recycled byte arenas
//!   (the parallel merge keeps each device's window output whole rather
//!   than copying its frames out); in steady state no frame allocates.
//! * **Limits**: a cap on processed events and on simulated time, each a
//!   clear error; a stop flag (set from a Ctrl-C handler) ends the run
//!   cleanly at the next check with whatever statistics were gathered.
//! * **Taps**: every emitted frame passes the engine's [`LinkTap`] (capture,
//!   fault injection; none by default) before it reaches its link.
//! * **Threads**: [`Engine::run_parallel`] (`parallel.rs`) runs windows of
//!   simulated time one link delay long with the devices spread over
//!   threads, and gives the serial loop's results byte for byte.
//! * **Driving**: [`Engine::run`] to the end, or [`Engine::step`] /
//!   [`Engine::run_until`] one event or one stretch of time at a time, with
//!   devices reachable in between ([`Engine::device_mut`]: the engine
//!   re-reads a touched device's deadline before the next event).

use std::any::Any;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use serde::Serialize;
use thiserror::Error;

use netsparse_externs::time::serialization_time;
use netsparse_externs::{Datapath, Outputs, Time};

use crate::flow::{BufferSpec, BufferStats, DevBuffer, INTERNAL};
use crate::link::{FrameClass, LinkCounters, LinkParams};
pub(crate) use crate::pool::FramePool;
use crate::tap::{LinkTap, NoTap, TapFrame};
use crate::timers::Timers;

#[path = "engine_links.rs"]
mod links;
pub(crate) use links::Kept;

/// Index of a device in the engine.
pub type DeviceId = u32;

/// Events processed between two checks of the stop flag.
pub const STOP_CHECK_EVERY: u64 = 4096;
/// Events processed between two progress callbacks.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// Why a run could not go on.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EngineError {
    /// A device id that was never added.
    #[error("no device {0}")]
    NoDevice(DeviceId),
    /// A port connected twice.
    #[error("{device} port {port} is already connected")]
    PortInUse {
        /// The device's label.
        device: String,
        /// The port.
        port: u32,
    },
    /// A link of zero bandwidth.
    #[error("link {a} <-> {b}: bandwidth 0 Gb/s (links need a positive bandwidth)")]
    ZeroBandwidth {
        /// One end (label:port).
        a: String,
        /// The other end.
        b: String,
    },
    /// A device emitted a frame on a port without a cable (under
    /// [`UnconnectedPorts::Error`]).
    #[error("at {now}: {device} sent a frame on port {port}, which is not connected")]
    UnconnectedPort {
        /// The device's label.
        device: String,
        /// The port.
        port: u32,
        /// Simulated time.
        now: Time,
    },
    /// A device asked to be woken at or before the time it was just woken.
    #[error("at {now}: {device} returned next_deadline {deadline} after on_timer; deadlines must advance")]
    DeadlineNotAdvancing {
        /// The device's label.
        device: String,
        /// Simulated time.
        now: Time,
        /// The deadline it returned.
        deadline: Time,
    },
    /// The event cap was reached.
    #[error("event limit reached: {limit} events processed by simulated time {now} (raise the limit, or the run may not terminate)")]
    EventLimit {
        /// The cap.
        limit: u64,
        /// Simulated time then.
        now: Time,
    },
    /// A device's buffer set smaller than one byte.
    #[error("{device}: a buffer of 0 bytes cannot hold a frame (give at least one MTU, or no buffer model)")]
    BufferTooSmall {
        /// The device's label.
        device: String,
    },
    /// A frame larger than the buffer it must enter: it could never be sent.
    #[error("at {now}: a {len}-byte frame from {from} cannot enter {to}'s {capacity}-byte buffer (buffers must hold the largest frame)")]
    FrameExceedsBuffer {
        /// The sender's label.
        from: String,
        /// The receiver's label.
        to: String,
        /// The frame's charged length.
        len: u64,
        /// The receiver's capacity.
        capacity: u64,
        /// Simulated time.
        now: Time,
    },
    /// Every remaining frame waits for room in a full buffer: the buffers
    /// wait on each other in a cycle.
    #[error("at {now}: flow-control deadlock: {frames} frame(s) wait on paused links and nothing in flight or leaving a buffer can drain them; buffers waiting on each other: {cycle}")]
    FlowControlDeadlock {
        /// Simulated time.
        now: Time,
        /// Frames left waiting.
        frames: u64,
        /// The devices whose full buffers wait on each other, as
        /// `a -> b -> ... -> a` (or the chain of waits, if it ends).
        cycle: String,
    },
    /// The simulated-time cap was reached.
    #[error("simulated-time limit {limit} reached with events still pending (raise the limit, or the run may not terminate)")]
    TimeLimit {
        /// The cap.
        limit: Time,
    },
}

/// How events at the same instant are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EventOrder {
    /// By sequence number: the event scheduled first goes first, whether a
    /// frame arrival or a deadline (the cluster simulator).
    #[default]
    Sequence,
    /// Frame arrivals (in send order) before deadlines, and deadlines in
    /// device order (the NIC tests and their pcap goldens).
    ArrivalsFirst,
}

/// What a frame emitted on a port without a link does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnconnectedPorts {
    /// The run stops with [`EngineError::UnconnectedPort`].
    #[default]
    Error,
    /// The frame is shown to the tap, then discarded and counted
    /// ([`Engine::unconnected`]): a device alone, whose output a test reads
    /// from a capture.
    Discard,
}

/// Limits and the stop flag of a run.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Stop with [`EngineError::EventLimit`] after this many events.
    pub max_events: u64,
    /// Stop with [`EngineError::TimeLimit`] before processing an event later than this.
    pub max_time: Time,
    /// When set (e.g. by a Ctrl-C handler) the run ends cleanly.
    pub stop: Option<Arc<AtomicBool>>,
    /// How simultaneous events are ordered.
    pub order: EventOrder,
    /// What frames on unconnected ports do.
    pub unconnected: UnconnectedPorts,
    /// Bytes added to every NetSparse frame's length on the links
    /// (serialisation time and counters; the frame's bytes are unchanged),
    /// for header accounting other than the wire format's: e.g. −6 charges
    /// Table 5's 50 B upper and 12 B concatenation headers instead of the
    /// 54 B and 14 B the frames carry. 0: charge what is sent.
    pub netsparse_header_adjust: i64,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            max_events: 10_000_000_000,
            max_time: Time::from_secs(100),
            stop: None,
            order: EventOrder::default(),
            unconnected: UnconnectedPorts::default(),
            netsparse_header_adjust: 0,
        }
    }
}

/// One direction of a link.
#[derive(Clone, Debug)]
pub(crate) struct LinkDir {
    pub(crate) to_device: DeviceId,
    pub(crate) to_port: u32,
    pub(crate) params: LinkParams,
    busy_until: Time,
    counters: LinkCounters,
    /// Frames in flight, in arrival order: (arrival, sequence, buffer,
    /// charged length). Arrival times on one direction never decrease (the
    /// link serializes), so only the head needs a place in the event heap.
    pub(crate) in_flight: VecDeque<(Time, u64, u32, u64)>,
    /// Frames waiting for room in the receiver's buffer (flow control):
    /// (buffer, charged length, ready time, the sender's input port it is
    /// charged to). Not empty exactly while the link is paused.
    waiting: VecDeque<(u32, u64, Time, u32)>,
    /// Their bytes.
    waiting_bytes: u64,
    /// When the link paused, while it is.
    paused_since: Option<Time>,
}

/// Per-device counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceCounters {
    /// Frames delivered to the device.
    pub frames_in: u64,
    /// Frames the device emitted.
    pub frames_out: u64,
    /// Timer calls.
    pub timers: u64,
    /// Arrival time of the last frame delivered, if any.
    pub last_rx: Option<Time>,
    /// Time of the last frame emitted, if any.
    pub last_tx: Option<Time>,
}

/// Engine-wide counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EngineStats {
    /// Events processed (arrivals and live timers).
    pub events: u64,
    /// Frame arrivals processed.
    pub arrivals: u64,
    /// Timer events that fired.
    pub timers: u64,
    /// Deadlines replaced or cancelled before they fired.
    pub stale_timers: u64,
    /// Current simulated time.
    pub now: Time,
    /// Events still queued.
    pub pending: u64,
    /// Frame buffers allocated by the pool (stays flat in steady state).
    pub buffers_allocated: u64,
    /// Flow-control wake events (a paused link tried again; not counted
    /// in `events`).
    pub wakes: u64,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// No events left: every device is idle.
    Idle,
    /// The stop flag was set; statistics are partial.
    Stopped,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum EventKind {
    /// A frame injected from outside the network.
    Arrival {
        device: DeviceId,
        port: u32,
        buf: u32,
    },
    /// The first frame in flight on link direction `link` arrives.
    LinkHead { link: u32 },
    /// Bytes leave `device`'s buffer: links paused in front of it try again.
    Wake { device: DeviceId },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub(crate) time: Time,
    pub(crate) seq: u64,
    pub(crate) kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Event) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Event) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event.
    fn cmp(&self, o: &Event) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// A [`Datapath`] that can be downcast to its concrete type, so results can
/// be read from devices after a run. Every `'static` `Datapath` is one.
pub trait AnyDevice: Datapath + Any {
    /// `self` as [`Any`].
    fn as_any(&self) -> &dyn Any;
    /// `self` as mutable [`Any`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The boxed device as a boxed [`Any`], to take it back by value.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Datapath + Any> AnyDevice for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// The event loop. `D` is the device type: `dyn AnyDevice` (the default) to
/// mix kinds through trait objects and downcast them after the run
/// ([`Engine::get`]), `dyn Datapath`, or a concrete type (e.g. an enum of
/// the NIC and the switch) for static dispatch. `T` is the middleware on
/// the links ([`NoTap`] by default).
pub struct Engine<D: Datapath + ?Sized = dyn AnyDevice, T: LinkTap = NoTap> {
    pub(crate) devices: Vec<Box<D>>,
    pub(crate) labels: Vec<String>,
    pub(crate) latency: Vec<Time>,
    pub(crate) port_links: Vec<Vec<Option<u32>>>,
    pub(crate) links: Vec<LinkDir>,
    pub(crate) dev_counters: Vec<DeviceCounters>,
    pub(crate) timer_at: Vec<Option<Time>>,
    pub(crate) timers: Timers,
    pub(crate) heap: BinaryHeap<Event>,
    pub(crate) seq: u64,
    pub(crate) pool: FramePool,
    pub(crate) out: Outputs,
    pub(crate) now: Time,
    pub(crate) stats: EngineStats,
    pub(crate) cfg: EngineConfig,
    pub(crate) started: bool,
    pub(crate) tap: T,
    /// Frames emitted so far (the taps' send sequence numbers).
    pub(crate) sent: u64,
    /// Frames discarded on unconnected ports.
    pub(crate) unconnected: u64,
    /// Devices handed out mutably since the run started: their deadlines
    /// are re-read before the next event.
    pub(crate) touched: Vec<DeviceId>,
    /// The per-device work of parallel windows (`parallel.rs`), kept
    /// between windows so that they do not allocate.
    pub(crate) par: crate::parallel::Windows,
    /// Each device's buffer (flow control; unmodelled by default).
    pub(crate) bufs: Vec<DevBuffer>,
    /// Whether any device's buffer is modelled.
    pub(crate) flow: bool,
}

impl<D: Datapath + ?Sized> Engine<D> {
    /// An empty network without a tap.
    pub fn new(cfg: EngineConfig) -> Engine<D> {
        Engine::with_tap(cfg, NoTap)
    }
}

impl<D: Datapath + ?Sized, T: LinkTap> Engine<D, T> {
    /// An empty network whose emitted frames pass `tap`.
    pub fn with_tap(cfg: EngineConfig, tap: T) -> Engine<D, T> {
        Engine {
            devices: Vec::new(),
            labels: Vec::new(),
            latency: Vec::new(),
            port_links: Vec::new(),
            links: Vec::new(),
            dev_counters: Vec::new(),
            timer_at: Vec::new(),
            timers: Timers::default(),
            heap: BinaryHeap::new(),
            seq: 0,
            pool: FramePool::default(),
            out: Outputs::new(),
            now: Time::ZERO,
            stats: EngineStats::default(),
            cfg,
            started: false,
            tap,
            sent: 0,
            unconnected: 0,
            touched: Vec::new(),
            par: crate::parallel::Windows::default(),
            bufs: Vec::new(),
            flow: false,
        }
    }

    /// The tap.
    pub fn tap(&self) -> &T {
        &self.tap
    }

    /// The tap, mutably (e.g. to set a fault rule or turn capture on).
    pub fn tap_mut(&mut self) -> &mut T {
        &mut self.tap
    }

    /// Frames discarded on unconnected ports ([`UnconnectedPorts::Discard`]).
    pub fn unconnected(&self) -> u64 {
        self.unconnected
    }

    /// Add a device whose emitted frames are ready `latency` after the call
    /// that emitted them. `label` names it in errors and reports.
    pub fn add_device(&mut self, dev: Box<D>, latency: Time, label: impl Into<String>) -> DeviceId {
        self.devices.push(dev);
        self.labels.push(label.into());
        self.latency.push(latency);
        self.port_links.push(Vec::new());
        self.dev_counters.push(DeviceCounters::default());
        self.timer_at.push(None);
        self.timers.add_device();
        self.bufs.push(DevBuffer::default());
        (self.devices.len() - 1) as DeviceId
    }

    /// Give device `d` a finite buffer, guarded by lossless flow control
    /// on the links into it (`flow.rs`), or none (`None`, the default:
    /// unbounded, not modelled). Set before the run.
    pub fn set_buffer(&mut self, d: DeviceId, spec: Option<BufferSpec>) -> Result<(), EngineError> {
        self.check_device(d)?;
        if spec.is_some_and(|s| s.capacity == 0) {
            return Err(EngineError::BufferTooSmall {
                device: self.labels[d as usize].clone(),
            });
        }
        // Split over the connected ports when the run starts.
        self.bufs[d as usize].spec = spec;
        self.flow = self.bufs.iter().any(DevBuffer::tracked);
        Ok(())
    }

    /// Device `d`'s buffer statistics (all zero for a device without a
    /// buffer model).
    pub fn buffer_stats(&self, d: DeviceId) -> Option<BufferStats> {
        self.bufs.get(d as usize).map(|b| b.stats)
    }

    fn check_device(&self, d: DeviceId) -> Result<(), EngineError> {
        if (d as usize) < self.devices.len() {
            Ok(())
        } else {
            Err(EngineError::NoDevice(d))
        }
    }

    /// Connect `(a, pa)` and `(b, pb)` with a full-duplex link. Returns the
    /// index of the a→b direction; b→a is the next index.
    pub fn connect(
        &mut self,
        a: DeviceId,
        pa: u32,
        b: DeviceId,
        pb: u32,
        params: LinkParams,
    ) -> Result<u32, EngineError> {
        self.check_device(a)?;
        self.check_device(b)?;
        if params.gbps == 0 {
            return Err(EngineError::ZeroBandwidth {
                a: format!("{}:{pa}", self.labels[a as usize]),
                b: format!("{}:{pb}", self.labels[b as usize]),
            });
        }
        for (d, p) in [(a, pa), (b, pb)] {
            if self.port_links[d as usize]
                .get(p as usize)
                .is_some_and(|l| l.is_some())
            {
                return Err(EngineError::PortInUse {
                    device: self.labels[d as usize].clone(),
                    port: p,
                });
            }
        }
        if a == b && pa == pb {
            return Err(EngineError::PortInUse {
                device: self.labels[a as usize].clone(),
                port: pa,
            });
        }
        let ab = self.links.len() as u32;
        for (from, fp, to, tp) in [(a, pa, b, pb), (b, pb, a, pa)] {
            let id = self.links.len() as u32;
            self.links.push(LinkDir {
                to_device: to,
                to_port: tp,
                params,
                busy_until: Time::ZERO,
                counters: LinkCounters::default(),
                in_flight: VecDeque::new(),
                waiting: VecDeque::new(),
                waiting_bytes: 0,
                paused_since: None,
            });
            let ports = &mut self.port_links[from as usize];
            if ports.len() <= fp as usize {
                ports.resize(fp as usize + 1, None);
            }
            ports[fp as usize] = Some(id);
        }
        Ok(ab)
    }

    /// Deliver `frame` to `device`'s `port` at time `at` (an external
    /// source, e.g. a test or a trace).
    pub fn inject(
        &mut self,
        at: Time,
        device: DeviceId,
        port: u32,
        frame: &[u8],
    ) -> Result<(), EngineError> {
        self.check_device(device)?;
        let buf = self.pool.alloc(frame);
        self.stats.buffers_allocated = self.pool.handles() as u64;
        self.push(at.max(self.now), EventKind::Arrival { device, port, buf });
        Ok(())
    }

    fn push(&mut self, time: Time, kind: EventKind) {
        self.seq += 1;
        self.heap.push(Event {
            time,
            seq: self.seq,
            kind,
        });
    }

    /// Run until no events remain, the stop flag is set, or a limit is hit.
    pub fn run(&mut self) -> Result<Outcome, EngineError> {
        self.run_with_progress(&mut |_| {})
    }

    /// [`Engine::run`], calling `progress` every [`PROGRESS_EVERY`] events
    /// and once at the end.
    pub fn run_with_progress(
        &mut self,
        progress: &mut dyn FnMut(&EngineStats),
    ) -> Result<Outcome, EngineError> {
        self.run_observed(&mut |e: &Engine<D, T>| {
            progress(&e.stats);
            true
        })
    }

    /// [`Engine::run`], calling `observe` with the whole engine (devices
    /// included, e.g. to sum their counters for a progress bar) every
    /// [`PROGRESS_EVERY`] events and once at the end. `observe` returning
    /// `false` stops the run like the stop flag ([`Outcome::Stopped`]).
    pub fn run_observed(
        &mut self,
        observe: &mut dyn FnMut(&Engine<D, T>) -> bool,
    ) -> Result<Outcome, EngineError> {
        self.start()?;
        let stop = self.cfg.stop.clone();
        let outcome = loop {
            if self.stats.events % STOP_CHECK_EVERY == 0
                && stop
                    .as_ref()
                    .is_some_and(|s| s.load(AtomicOrdering::Relaxed))
            {
                break Outcome::Stopped;
            }
            let Some((time, is_timer)) = self.next_event() else {
                self.check_stuck()?;
                break Outcome::Idle;
            };
            self.check_limits(time)?;
            if !self.process(time, is_timer)? {
                continue;
            }
            if self.stats.events % STOP_CHECK_EVERY == 0 {
                self.pool.compact();
            }
            if self.stats.events % PROGRESS_EVERY == 0 {
                self.check_stuck()?;
                self.sync_stats();
                if !observe(self) {
                    break Outcome::Stopped;
                }
            }
        };
        self.sync_stats();
        observe(self);
        Ok(outcome)
    }

    /// Process the next event if there is one at or before `until`; false
    /// if there is none (the network is idle, or its next event is later).
    /// Limits apply as in [`Engine::run`]; the stop flag is not consulted.
    pub fn step(&mut self, until: Time) -> Result<bool, EngineError> {
        self.start()?;
        let Some((time, is_timer)) = self.next_event() else {
            return Ok(false);
        };
        if time > until {
            return Ok(false);
        }
        self.check_limits(time)?;
        self.process(time, is_timer)?;
        Ok(true)
    }

    /// Process every event up to and including `until`, then move the
    /// clock to `until` (if it is not past it already). Returns whether the
    /// network is idle: no event left at all.
    pub fn run_until(&mut self, until: Time) -> Result<bool, EngineError> {
        while self.step(until)? {}
        self.now = self.now.max(until);
        self.sync_stats();
        Ok(self.next_event().is_none())
    }

    /// Process events until none is left or the next one is later than
    /// `limit` (the clock stays at the last event). Returns whether the
    /// network went idle (false: stopped at the limit).
    pub fn run_until_idle(&mut self, limit: Time) -> Result<bool, EngineError> {
        while self.step(limit)? {}
        self.sync_stats();
        Ok(self.next_event().is_none())
    }

    /// Schedule every device's first deadline (once), and re-read the
    /// deadlines of devices touched since.
    pub(crate) fn start(&mut self) -> Result<(), EngineError> {
        if !self.started {
            self.started = true;
            self.touched.clear();
            for (d, b) in self.bufs.iter_mut().enumerate() {
                let ports = &self.port_links[d];
                let connected = ports.iter().flatten().count().max(1) as u32;
                let spec = b.spec;
                b.set(spec, ports.len().max(1) as u32);
                if let Some(s) = spec {
                    b.set_port_capacity(s.capacity / u64::from(connected));
                }
            }
            for d in 0..self.devices.len() {
                self.reschedule(d, false)?;
            }
        }
        while let Some(d) = self.touched.pop() {
            self.reschedule(d as usize, false)?;
        }
        Ok(())
    }

    /// The earliest of the next arrival and the next live deadline (a
    /// replaced deadline is gone: it cannot trip the limits), as (time,
    /// whether it is a deadline).
    #[inline]
    pub(crate) fn next_event(&self) -> Option<(Time, bool)> {
        let arrival = self.heap.peek().map(|e| (e.time, e.seq));
        let timer = self.timers.peek();
        match (arrival, timer) {
            (None, None) => None,
            (Some(a), Some((t, s, _))) => {
                let timer_first = match self.cfg.order {
                    EventOrder::Sequence => (t, s) < a,
                    EventOrder::ArrivalsFirst => t < a.0,
                };
                Some(if timer_first { (t, true) } else { (a.0, false) })
            }
            (Some((t, _)), None) => Some((t, false)),
            (None, Some((t, _, _))) => Some((t, true)),
        }
    }

    /// The limits, checked before processing an event at `time`.
    #[inline]
    pub(crate) fn check_limits(&mut self, time: Time) -> Result<(), EngineError> {
        if time > self.cfg.max_time {
            // Device timers (watchdogs, retries) can keep a run whose
            // buffers deadlocked going until the limit: say which it is.
            self.check_stuck()?;
            self.sync_stats();
            return Err(EngineError::TimeLimit {
                limit: self.cfg.max_time,
            });
        }
        if self.stats.events >= self.cfg.max_events {
            self.sync_stats();
            return Err(EngineError::EventLimit {
                limit: self.cfg.max_events,
                now: self.now,
            });
        }
        Ok(())
    }

    /// Process the event [`Engine::next_event`] found at `time`; false if
    /// there was nothing to process after all.
    #[inline]
    pub(crate) fn process(&mut self, time: Time, is_timer: bool) -> Result<bool, EngineError> {
        self.now = time;
        if is_timer {
            // The deadline stays queued until the device's next one
            // replaces it (`apply_deadline`).
            let Some((_, _, device)) = self.timers.peek() else {
                return Ok(false);
            };
            let d = device as usize;
            self.stats.events += 1;
            self.stats.timers += 1;
            self.dev_counters[d].timers += 1;
            self.devices[d].on_timer(self.now, &mut self.out);
            if let Err(e) = self.dispatch(d, INTERNAL) {
                self.drop_fired_deadline(d);
                return Err(e);
            }
            self.reschedule(d, true)?;
        } else if let Some(ev) = self.heap.pop() {
            if let EventKind::Wake { device } = ev.kind {
                self.wake(device, ev.time)?;
                return Ok(false);
            }
            let Some((device, port, buf, len)) = self.take_frame(ev) else {
                return Ok(false);
            };
            let d = device as usize;
            self.stats.events += 1;
            self.stats.arrivals += 1;
            let c = &mut self.dev_counters[d];
            c.frames_in += 1;
            c.last_rx = Some(self.now);
            self.bufs[d].arrived(port, len);
            self.devices[d].on_packet(self.now, port, self.pool.bytes(buf), &mut self.out);
            self.pool.release(buf);
            self.dispatch(d, port)?;
            self.after_arrival(d)?;
            self.reschedule(d, false)?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    pub(crate) fn sync_stats(&mut self) {
        self.stats.now = self.now;
        self.stats.pending = self.pending();
        self.stats.buffers_allocated = self.pool.handles() as u64;
    }

    /// Events still queued: frames in flight (on links or injected) and
    /// live deadlines.
    fn pending(&self) -> u64 {
        let injected = self
            .heap
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Arrival { .. }))
            .count();
        let on_links: usize = self
            .links
            .iter()
            .map(|l| l.in_flight.len() + l.waiting.len())
            .sum();
        (injected + on_links + self.timers.len()) as u64
    }

    /// Schedule device `d`'s next deadline if it changed.
    fn reschedule(&mut self, d: usize, after_timer: bool) -> Result<(), EngineError> {
        let next = self.devices[d].next_deadline();
        self.apply_deadline(d, next, after_timer)
    }

    /// Make `next` device `d`'s deadline (what [`Engine::reschedule`] read
    /// from the device, or what a parallel window recorded). After a timer
    /// event (`after_timer`) the deadline that fired is still queued, in
    /// both loops: the next one takes its place in the timers' heap (one
    /// sift rather than a removal and an insertion), or it is removed.
    pub(crate) fn apply_deadline(
        &mut self,
        d: usize,
        next: Option<Time>,
        after_timer: bool,
    ) -> Result<(), EngineError> {
        if after_timer {
            if let Some(t) = next.filter(|t| *t <= self.now) {
                self.drop_fired_deadline(d);
                return Err(EngineError::DeadlineNotAdvancing {
                    device: self.labels[d].clone(),
                    now: self.now,
                    deadline: t,
                });
            }
            self.timer_at[d] = next;
            match next {
                Some(t) => {
                    let key = self.timer_key(d);
                    self.timers.set(d as DeviceId, t, key);
                }
                None => {
                    self.timers.remove(d as DeviceId);
                }
            }
            return Ok(());
        }
        if next == self.timer_at[d] {
            return Ok(());
        }
        self.timer_at[d] = next;
        let replaced = match next {
            Some(t) => {
                let key = self.timer_key(d);
                self.timers.set(d as DeviceId, t.max(self.now), key)
            }
            None => self.timers.remove(d as DeviceId),
        };
        if replaced {
            self.stats.stale_timers += 1;
        }
        Ok(())
    }

    /// Forget device `d`'s deadline that fired and is still queued, when
    /// its event stops the run before [`Engine::apply_deadline`].
    pub(crate) fn drop_fired_deadline(&mut self, d: usize) {
        self.timers.remove(d as DeviceId);
        self.timer_at[d] = None;
    }

    /// The sequence key of a deadline device `d` sets now.
    fn timer_key(&mut self, d: usize) -> u64 {
        match self.cfg.order {
            EventOrder::Sequence => {
                self.seq += 1;
                self.seq
            }
            EventOrder::ArrivalsFirst => d as u64,
        }
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Engine-wide counters.
    pub fn stats(&self) -> EngineStats {
        let mut s = self.stats;
        s.now = self.now;
        s.pending = self.pending();
        s.buffers_allocated = self.pool.handles() as u64;
        s
    }

    /// Number of devices.
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// Device `d`.
    pub fn device(&self, d: DeviceId) -> Option<&D> {
        self.devices.get(d as usize).map(|b| &**b)
    }

    /// Device `d`, mutably (e.g. to configure it before the run, or to post
    /// work between two steps: its deadline is re-read before the next
    /// event).
    pub fn device_mut(&mut self, d: DeviceId) -> Option<&mut D> {
        let dev = self.devices.get_mut(d as usize)?;
        if self.started {
            self.touched.push(d);
        }
        Some(&mut **dev)
    }

    /// Take the devices back, in [`DeviceId`] order (ending the run).
    pub fn into_devices(self) -> Vec<Box<D>> {
        self.devices
    }

    /// Device `d`'s label.
    pub fn label(&self, d: DeviceId) -> Option<&str> {
        self.labels.get(d as usize).map(String::as_str)
    }

    /// Device `d`'s counters.
    pub fn device_counters(&self, d: DeviceId) -> Option<DeviceCounters> {
        self.dev_counters.get(d as usize).copied()
    }

    /// Counters of the link direction leaving `(d, port)` (`None` if that
    /// port is not connected).
    pub fn tx_counters(&self, d: DeviceId, port: u32) -> Option<LinkCounters> {
        let id = self
            .port_links
            .get(d as usize)?
            .get(port as usize)
            .copied()
            .flatten()?;
        Some(self.links[id as usize].counters)
    }

    /// Counters of the link direction arriving at `(d, port)`: the direction
    /// leaving the peer. (`None` if that port is not connected.)
    pub fn rx_counters(&self, d: DeviceId, port: u32) -> Option<LinkCounters> {
        let id = self
            .port_links
            .get(d as usize)?
            .get(port as usize)
            .copied()
            .flatten()?;
        // Directions are created in pairs: a→b at even, b→a at odd indices.
        Some(self.links[(id ^ 1) as usize].counters)
    }

    /// Every link direction's counters, as (from device, to device, counters).
    pub fn link_counters(&self) -> Vec<(DeviceId, DeviceId, LinkCounters)> {
        self.links
            .iter()
            .enumerate()
            .map(|(i, l)| (self.links[i ^ 1].to_device, l.to_device, l.counters))
            .collect()
    }
}

impl<T: LinkTap> Engine<dyn AnyDevice, T> {
    /// Device `d` as its concrete type `X` (`None` if it is not an `X`).
    pub fn get<X: Any>(&self, d: DeviceId) -> Option<&X> {
        self.devices.get(d as usize)?.as_any().downcast_ref::<X>()
    }

    /// Device `d` as its concrete type `X`, mutably (its deadline is
    /// re-read before the next event, as with [`Engine::device_mut`]).
    pub fn get_mut<X: Any>(&mut self, d: DeviceId) -> Option<&mut X> {
        let dev = self
            .devices
            .get_mut(d as usize)?
            .as_any_mut()
            .downcast_mut::<X>()?;
        if self.started {
            self.touched.push(d);
        }
        Some(dev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_then_sequence_order() {
        let mut h = BinaryHeap::new();
        for (t, s) in [(5, 1), (3, 2), (5, 0), (3, 3)] {
            h.push(Event {
                time: Time(t),
                seq: s,
                kind: EventKind::Arrival {
                    device: 0,
                    port: 0,
                    buf: 0,
                },
            });
        }
        let order: Vec<(u64, u64)> =
            std::iter::from_fn(|| h.pop().map(|e| (e.time.0, e.seq))).collect();
        assert_eq!(order, vec![(3, 2), (3, 3), (5, 0), (5, 1)]);
    }
}
