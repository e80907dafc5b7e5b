//! The engine's NIC-test features with toy devices: fixed-delay links,
//! arrivals-first order, stepping, unconnected ports, and the capture and
//! fault-injection taps composed.

use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_netsim::{
    AnyDevice, Capture, Engine, EngineConfig, EngineError, EventOrder, FaultInjector, LinkParams,
    UnconnectedPorts,
};

/// Sends `burst` frames (byte `i` of length `len`) on port 0 at each of its
/// times, records what it receives, and answers nothing.
#[derive(Default)]
struct Host {
    at: Vec<Time>,
    next: usize,
    burst: u8,
    len: usize,
    got: Vec<(Time, u8)>,
    timers: Vec<Time>,
}

impl Datapath for Host {
    fn on_packet(&mut self, now: Time, _port: u32, frame: &[u8], _out: &mut Outputs) {
        self.got.push((now, frame[0]));
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.timers.push(now);
        while self.at.get(self.next).is_some_and(|t| *t <= now) {
            for i in 0..self.burst {
                out.push(0, &vec![i; self.len]);
            }
            self.next += 1;
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.at.get(self.next).copied()
    }
}

fn host(at: &[u64], burst: u8, len: usize) -> Box<Host> {
    Box::new(Host {
        at: at.iter().map(|ns| Time::from_ns(*ns)).collect(),
        burst,
        len,
        ..Host::default()
    })
}

fn nic_test_config() -> EngineConfig {
    EngineConfig {
        order: EventOrder::ArrivalsFirst,
        unconnected: UnconnectedPorts::Discard,
        ..EngineConfig::default()
    }
}

#[test]
fn a_fixed_delay_link_delivers_every_frame_exactly_one_delay_later() {
    let mut e: Engine = Engine::new(EngineConfig::default());
    let a = e.add_device(host(&[10, 10, 11], 3, 9000), Time::ZERO, "a");
    let b = e.add_device(host(&[], 0, 0), Time::ZERO, "b");
    e.connect(a, 0, b, 0, LinkParams::fixed_delay(Time::from_ns(450)))
        .unwrap();
    e.run().unwrap();
    let got = &e.get::<Host>(b).unwrap().got;
    let want: Vec<(Time, u8)> = [460, 460, 461]
        .iter()
        .flat_map(|t| (0..3).map(move |i| (Time::from_ns(*t), i)))
        .collect();
    assert_eq!(got, &want);
    let c = e.tx_counters(a, 0).unwrap();
    assert_eq!((c.packets, c.busy_ps, c.queue_delay_ps), (9, 0, 0));
}

#[test]
fn taps_compose_faults_before_capture() {
    let mut e: Engine<dyn AnyDevice, (FaultInjector, Capture)> =
        Engine::with_tap(nic_test_config(), (FaultInjector::new(), Capture::new()));
    let a = e.add_device(host(&[5], 4, 60), Time::ZERO, "a");
    let b = e.add_device(host(&[], 0, 0), Time::ZERO, "b");
    e.connect(a, 0, b, 0, LinkParams::fixed_delay(Time::from_ns(100)))
        .unwrap();
    // Drop the second frame sent and every frame starting with byte 3.
    e.tap_mut()
        .0
        .drop_when(|seq, bytes| seq == 1 || bytes[0] == 3);
    assert!(e.run_until_idle(Time::from_us(1)).unwrap());
    assert_eq!(e.tap().0.dropped(), 2);
    let cap: Vec<(u64, Time, bool, u8)> = e
        .tap()
        .1
        .frames()
        .map(|c| (c.seq, c.at, c.dropped, c.bytes[0]))
        .collect();
    let t = Time::from_ns(5);
    assert_eq!(
        cap,
        vec![
            (0, t, false, 0),
            (1, t, true, 1),
            (2, t, false, 2),
            (3, t, true, 3)
        ]
    );
    assert!(e
        .tap()
        .1
        .frames()
        .all(|c| c.from == (a, 0) && c.to == Some((b, 0)) && c.bytes.len() == 60));
    let got = &e.get::<Host>(b).unwrap().got;
    assert_eq!(got, &vec![(Time::from_ns(105), 0), (Time::from_ns(105), 2)]);
    // Dropped frames never reached the link.
    assert_eq!(e.tx_counters(a, 0).unwrap().packets, 2);
}

#[test]
fn unconnected_ports_are_an_error_or_discarded() {
    let mut e: Engine = Engine::new(EngineConfig::default());
    e.add_device(host(&[1], 1, 60), Time::ZERO, "alone");
    assert!(matches!(
        e.run(),
        Err(EngineError::UnconnectedPort { port: 0, .. })
    ));

    let mut e: Engine<dyn AnyDevice, Capture> = Engine::with_tap(nic_test_config(), Capture::new());
    e.add_device(host(&[1, 2], 2, 60), Time::ZERO, "alone");
    assert!(e.run_until(Time::from_us(5)).unwrap());
    assert_eq!(e.now(), Time::from_us(5));
    assert_eq!(e.unconnected(), 4);
    assert_eq!(e.tap().len(), 4);
    assert!(e.tap().frames().all(|c| c.to.is_none() && !c.dropped));
}

#[test]
fn arrivals_first_order_and_stepping() {
    // a sends at 0 (arrives at b at 10); b's own deadline is also at 10.
    // Arrivals first: b receives before its timer fires, and at equal
    // deadlines the lower device id goes first.
    let mut e: Engine = Engine::new(nic_test_config());
    let a = e.add_device(host(&[0, 10], 1, 60), Time::ZERO, "a");
    let b = e.add_device(host(&[10], 0, 0), Time::ZERO, "b");
    e.connect(a, 0, b, 0, LinkParams::fixed_delay(Time::from_ns(10)))
        .unwrap();
    let mut trace = Vec::new();
    while e.step(Time::from_ns(10)).unwrap() {
        let hb = e.get::<Host>(b).unwrap();
        let ha = e.get::<Host>(a).unwrap();
        trace.push((
            e.now().as_ns(),
            ha.timers.len(),
            hb.got.len(),
            hb.timers.len(),
        ));
    }
    assert_eq!(
        trace,
        vec![(0, 1, 0, 0), (10, 1, 1, 0), (10, 2, 1, 0), (10, 2, 1, 1)]
    );
    // Nothing is left before 20 ns; the frame sent at 10 arrives then.
    assert!(!e.step(Time::from_ns(19)).unwrap());
    assert!(e.run_until_idle(Time::from_ns(20)).unwrap());
    assert_eq!(e.get::<Host>(b).unwrap().got.len(), 2);
}

#[test]
fn a_device_touched_between_steps_has_its_deadline_re_read() {
    let mut e: Engine = Engine::new(nic_test_config());
    let a = e.add_device(host(&[], 1, 60), Time::ZERO, "a");
    let b = e.add_device(host(&[], 0, 0), Time::ZERO, "b");
    e.connect(a, 0, b, 0, LinkParams::fixed_delay(Time::from_ns(10)))
        .unwrap();
    assert!(e.run_until_idle(Time::from_us(1)).unwrap());
    e.get_mut::<Host>(a).unwrap().at.push(Time::from_ns(50));
    assert!(e.run_until_idle(Time::from_us(1)).unwrap());
    assert_eq!(e.get::<Host>(b).unwrap().got, vec![(Time::from_ns(60), 0)]);
    let devices = e.into_devices();
    assert_eq!(devices.len(), 2);
}
