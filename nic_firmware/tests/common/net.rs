//! The NIC tests' network (shared by `nic_firmware/tests` and the root
//! package's `tests/nic_*.rs`): the `netsparse-netsim` engine with
//! fixed-delay links, arrivals-first event order, frames on unconnected
//! ports discarded, and a fault injector in front of a capture on the
//! links. NICs are devices `0..n` (node `n` is device `n`), other devices
//! follow. Test support: panics on engine errors and wrong device types.
#![allow(dead_code)]

use netsparse_netsim::{
    AnyDevice, Capture, Captured, DeviceId, Engine, EngineConfig, EventOrder, FaultInjector,
    LinkParams, UnconnectedPorts,
};
use netsparse_nic::testing::GatherNetwork;
use netsparse_nic::{DenseMemory, Nic, Time};

/// The taps: faults first, so the capture records the verdict.
pub type Taps = (FaultInjector, Capture);

/// NICs (and other datapaths) on fixed-delay links.
pub struct Net {
    /// The engine, for anything the helpers below do not cover.
    pub engine: Engine<dyn AnyDevice, Taps>,
    delay: Time,
    nics: usize,
}

impl Net {
    /// `nics` as devices `0..nics.len()`; every link has one-way `delay`
    /// and no serialisation time; capture off.
    pub fn new(delay: Time, nics: Vec<Nic<DenseMemory>>) -> Net {
        let cfg = EngineConfig {
            order: EventOrder::ArrivalsFirst,
            unconnected: UnconnectedPorts::Discard,
            ..EngineConfig::default()
        };
        let mut capture = Capture::new();
        capture.set_enabled(false);
        let mut engine: Engine<dyn AnyDevice, Taps> =
            Engine::with_tap(cfg, (FaultInjector::new(), capture));
        let count = nics.len();
        for (n, nic) in nics.into_iter().enumerate() {
            engine.add_device(Box::new(nic), Time::ZERO, format!("nic{n}"));
        }
        Net {
            engine,
            delay,
            nics: count,
        }
    }

    /// Add another device (no pipeline latency); returns its id.
    pub fn add(&mut self, dev: Box<dyn AnyDevice>, label: &str) -> DeviceId {
        self.engine.add_device(dev, Time::ZERO, label)
    }

    /// Connect two (device, port) endpoints, full duplex.
    pub fn connect(&mut self, a: (DeviceId, u32), b: (DeviceId, u32)) {
        self.engine
            .connect(a.0, a.1, b.0, b.1, LinkParams::fixed_delay(self.delay))
            .expect("connect");
    }

    /// Record every frame sent from now on (or stop).
    pub fn capture(&mut self, on: bool) {
        self.engine.tap_mut().1.set_enabled(on);
    }

    /// The frames recorded so far, in send order.
    pub fn captured(&self) -> impl Iterator<Item = Captured<'_>> + '_ {
        self.engine.tap().1.frames()
    }

    /// Drop every frame for which `rule(send sequence number, bytes)` is true.
    pub fn drop_when(&mut self, rule: impl FnMut(u64, &[u8]) -> bool + 'static) {
        self.engine.tap_mut().0.drop_when(rule);
    }

    /// Frames dropped by the fault rule.
    pub fn dropped(&self) -> u64 {
        self.engine.tap().0.dropped()
    }

    /// NIC `n`.
    pub fn nic(&self, n: usize) -> &Nic<DenseMemory> {
        self.engine
            .get::<Nic<DenseMemory>>(n as DeviceId)
            .expect("a NIC")
    }

    /// NIC `n`, mutably.
    pub fn nic_mut(&mut self, n: usize) -> &mut Nic<DenseMemory> {
        self.engine
            .get_mut::<Nic<DenseMemory>>(n as DeviceId)
            .expect("a NIC")
    }

    /// Every NIC, in node order.
    pub fn nics(&self) -> impl Iterator<Item = &Nic<DenseMemory>> + '_ {
        (0..self.nics).map(|n| self.nic(n))
    }

    /// Take the NICs back (ending the run).
    pub fn into_nics(self) -> Vec<Nic<DenseMemory>> {
        let count = self.nics;
        self.engine
            .into_devices()
            .into_iter()
            .take(count)
            .map(|d| *d.into_any().downcast::<Nic<DenseMemory>>().expect("a NIC"))
            .collect()
    }

    /// Device `d` as its concrete type.
    pub fn get<X: 'static>(&self, d: DeviceId) -> &X {
        self.engine.get::<X>(d).expect("device of that type")
    }

    /// The current time.
    pub fn now(&self) -> Time {
        self.engine.now()
    }

    /// Process every event up to and including `until`; the clock ends at `until`.
    pub fn run_until(&mut self, until: Time) {
        self.engine.run_until(until).expect("engine");
    }

    /// Process events until none is left or `limit` is reached; returns
    /// whether the network went idle.
    pub fn run_until_idle(&mut self, limit: Time) -> bool {
        self.engine.run_until_idle(limit).expect("engine")
    }
}

impl GatherNetwork<DenseMemory> for Net {
    fn now(&self) -> Time {
        self.engine.now()
    }

    fn nic_mut(&mut self, n: usize) -> Option<&mut Nic<DenseMemory>> {
        if n < self.nics {
            self.engine.get_mut::<Nic<DenseMemory>>(n as DeviceId)
        } else {
            None
        }
    }

    fn step(&mut self, until: Time) -> bool {
        self.engine.step(until).expect("engine")
    }
}
