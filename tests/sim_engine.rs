//! The event loop against hand-computed arrival times, with toy devices.
//!
//! Link arithmetic used below: at 400 Gb/s a byte takes 20 ps, so 1000 B
//! take 20 ns and 500 B 10 ns; at 100 Gb/s 1000 B take 80 ns. A frame
//! arrives one propagation delay after its last bit leaves.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use netsparse::sim::devices::{DelayForwarder, NodeRouter, Reflector, Sink, Source};
use netsparse::sim::engine::{Engine, EngineConfig, EngineError, LinkParams, Outcome};
use netsparse::sim::topology::{Device, Topology};
use netsparse_externs::wire::{DeviceAddr, FrameBuilder, FrameHeader, PrRepr, PrType};
use netsparse_externs::{Datapath, Outputs, Time};

const NS: fn(u64) -> Time = Time::from_ns;

fn link(gbps: u64, ns: u64) -> LinkParams {
    LinkParams {
        gbps,
        latency: Time::from_ns(ns),
    }
}

fn frame(len: usize, dst_node: u32) -> Vec<u8> {
    // An IPv4 frame addressed to `dst_node` (not NetSparse: protocol 0).
    let mut f = vec![0u8; len.max(34)];
    f[12] = 0x08;
    f[13] = 0x00;
    f[14] = 0x45;
    let total = ((f.len() - 14) as u16).to_be_bytes();
    f[16..18].copy_from_slice(&total);
    f[30..34].copy_from_slice(&DeviceAddr::Node(dst_node).ipv4().unwrap());
    f
}

/// Sends scheduled frames and records arrivals.
#[derive(Default)]
struct Host {
    send: Vec<(Time, Vec<u8>)>,
    next: usize,
    got: Vec<(Time, usize)>,
}

impl Datapath for Host {
    fn on_packet(&mut self, now: Time, _port: u32, frame: &[u8], _out: &mut Outputs) {
        self.got.push((now, frame.len()));
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        while self.next < self.send.len() && self.send[self.next].0 <= now {
            out.push(0, &self.send[self.next].1);
            self.next += 1;
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        self.send.get(self.next).map(|s| s.0)
    }
}

fn host(send: Vec<(Time, Vec<u8>)>) -> Box<Host> {
    Box::new(Host {
        send,
        ..Host::default()
    })
}

#[test]
fn serialization_queueing_and_propagation() {
    let mut e: Engine<Host> = Engine::new(EngineConfig::default());
    let a = e.add_device(
        host(vec![
            (NS(0), frame(1000, 1)),
            (NS(0), frame(500, 1)),
            (NS(100), frame(1000, 1)),
        ]),
        Time::ZERO,
        "a",
    );
    let b = e.add_device(host(vec![]), Time::ZERO, "b");
    e.connect(a, 0, b, 0, link(400, 450)).unwrap();
    assert_eq!(e.run().unwrap(), Outcome::Idle);
    // f1: 0..20 ns, +450 = 470. f2 queued behind it: 20..30, 480.
    // f3 ready at 100: 100..120, 570.
    assert_eq!(
        e.device(b).unwrap().got,
        vec![(NS(470), 1000), (NS(480), 500), (NS(570), 1000)]
    );
    let tx = e.tx_counters(a, 0).unwrap();
    assert_eq!((tx.packets, tx.bytes, tx.other_packets), (3, 2500, 3));
    assert_eq!(tx.queue_delay_ps, 20_000);
    assert_eq!(tx.max_queue_delay_ps, 20_000);
    assert_eq!(tx.busy_ps, 50_000);
    assert_eq!(e.rx_counters(b, 0).unwrap(), tx);
    assert_eq!(e.now(), NS(570));
    let dc = e.device_counters(b).unwrap();
    assert_eq!((dc.frames_in, dc.last_rx), (3, Some(NS(570))));
}

#[test]
fn switch_latency_and_device_timers() {
    let mut e: Engine = Engine::new(EngineConfig::default());
    let a = e.add_device(
        Box::new(Source::new(vec![(NS(0), 0, frame(1000, 1))])),
        Time::ZERO,
        "src",
    );
    let f = e.add_device(
        Box::new(DelayForwarder::new(0, 1, Time::from_us(1))),
        NS(300),
        "fwd",
    );
    let s = e.add_device(Box::new(Sink::default()), Time::ZERO, "sink");
    e.connect(a, 0, f, 0, link(400, 450)).unwrap();
    e.connect(f, 1, s, 0, link(100, 100)).unwrap();
    e.run().unwrap();
    // Arrives at the forwarder at 470 ns; its timer fires at 1470 ns; the
    // frame is ready 300 ns later (1770), takes 80 ns at 100 Gb/s (1850)
    // and 100 ns to propagate: 1950 ns.
    assert_eq!(e.device_counters(s).unwrap().last_rx, Some(NS(1950)));
    let st = e.stats();
    assert_eq!((st.arrivals, st.timers), (2, 2)); // source timer + forwarder timer
}

#[test]
fn reflector_round_trip() {
    let mut e: Engine = Engine::new(EngineConfig::default());
    let h = e.add_device(
        Box::new(Source::new(vec![(NS(0), 0, frame(1000, 1))])),
        Time::ZERO,
        "h",
    );
    let r = e.add_device(Box::new(Reflector::default()), NS(300), "r");
    e.connect(h, 0, r, 0, link(400, 450)).unwrap();
    e.run().unwrap();
    // 470 at the reflector, ready 770, 790 on the wire, back at 1240.
    assert_eq!(e.device_counters(h).unwrap().last_rx, Some(NS(1240)));
    assert_eq!(e.device_counters(r).unwrap().last_tx, Some(NS(470)));
}

#[test]
fn equal_times_break_ties_by_schedule_order() {
    // h0 sends 1000 B at t = 0, h1 990 B at t = 0.2 ns: both arrive at the
    // ToR at exactly 470 ns. h0's arrival was scheduled first, so it is
    // processed first and leaves the uplink first.
    let t = Topology::new(4, 2, Some(1)).unwrap();
    let mut e: Engine = Engine::new(EngineConfig::default());
    let h0 = e.add_device(
        Box::new(Source::new(vec![(NS(0), 0, frame(1000, 2))])),
        Time::ZERO,
        "h0",
    );
    let h1 = e.add_device(
        Box::new(Source::new(vec![(Time::from_ps(200), 0, frame(990, 2))])),
        Time::ZERO,
        "h1",
    );
    let r = e.add_device(
        Box::new(NodeRouter::for_switch(&t, Device::Tor(0))),
        NS(300),
        "tor0",
    );
    let up = e.add_device(Box::new(Sink::default()), Time::ZERO, "spine0");
    e.connect(h0, 0, r, 0, link(400, 450)).unwrap();
    e.connect(h1, 0, r, 1, link(400, 450)).unwrap();
    e.connect(r, 2, up, 0, link(400, 450)).unwrap();
    e.run().unwrap();
    // Ready at 770 ns: 1000 B 770..790 -> 1240; 990 B 790..809.8 -> 1259.8.
    assert_eq!(
        e.get::<Sink>(up).unwrap().arrivals,
        vec![(NS(1240), 0, 1000), (Time::from_ps(1_259_800), 0, 990)]
    );
    let c = e.tx_counters(r, 2).unwrap();
    assert_eq!((c.packets, c.queue_delay_ps), (2, 20_000));
}

/// Moves its deadline on every packet: to `now + 1 us`, replacing the old.
#[derive(Default)]
struct Snooze {
    deadline: Option<Time>,
    fired: Vec<Time>,
}

impl Datapath for Snooze {
    fn on_packet(&mut self, now: Time, _port: u32, _frame: &[u8], _out: &mut Outputs) {
        self.deadline = Some(now + Time::from_us(1));
    }
    fn on_timer(&mut self, now: Time, _out: &mut Outputs) {
        self.fired.push(now);
        self.deadline = None;
    }
    fn next_deadline(&self) -> Option<Time> {
        self.deadline
    }
}

#[test]
fn stale_timers_are_skipped() {
    let mut e: Engine<dyn Datapath> = Engine::new(EngineConfig::default());
    let s = e.add_device(Box::new(Snooze::default()), Time::ZERO, "snooze");
    for t in [0u64, 300, 600, 5000] {
        e.inject(NS(t), s, 0, &[1, 2, 3]).unwrap();
    }
    e.run().unwrap();
    let st = e.stats();
    // Deadlines 1000, 1300, 1600 (fires: nothing arrived before it), 6000.
    assert_eq!(st.timers, 2);
    assert_eq!(st.stale_timers, 2);
    assert_eq!(st.arrivals, 4);
    assert_eq!(e.now(), NS(6000));
    assert_eq!(e.device_counters(s).unwrap().timers, 2);
}

#[test]
fn frame_buffers_are_recycled() {
    // 10,000 round trips between two reflectors reuse the same buffer.
    let mut e: Engine = Engine::new(EngineConfig {
        max_events: 10_000,
        ..EngineConfig::default()
    });
    let a = e.add_device(Box::new(Reflector::default()), Time::ZERO, "a");
    let b = e.add_device(Box::new(Reflector::default()), Time::ZERO, "b");
    e.connect(a, 0, b, 0, link(400, 450)).unwrap();
    e.inject(Time::ZERO, a, 0, &frame(1500, 0)).unwrap();
    let err = e.run().unwrap_err();
    assert_eq!(
        err,
        EngineError::EventLimit {
            limit: 10_000,
            now: e.now()
        }
    );
    assert!(err
        .to_string()
        .contains("event limit reached: 10000 events"));
    assert!(e.stats().buffers_allocated <= 2, "{:?}", e.stats());
    // Each hop: 30 ns serialization + 450 ns.
    assert_eq!(e.now(), Time::from_ns(480 * 9_999));
}

#[test]
fn limits_and_stop_flag() {
    let mk = |cfg: EngineConfig| {
        let mut e: Engine = Engine::new(cfg);
        let a = e.add_device(Box::new(Reflector::default()), Time::ZERO, "a");
        let b = e.add_device(Box::new(Reflector::default()), Time::ZERO, "b");
        e.connect(a, 0, b, 0, link(400, 450)).unwrap();
        e.inject(Time::ZERO, a, 0, &frame(100, 0)).unwrap();
        e
    };
    let mut e = mk(EngineConfig {
        max_time: Time::from_us(10),
        ..EngineConfig::default()
    });
    let err = e.run().unwrap_err();
    assert!(matches!(err, EngineError::TimeLimit { .. }), "{err}");
    assert!(e.now() <= Time::from_us(10));
    // A stop flag already set: the run ends at once, cleanly.
    let stop = Arc::new(AtomicBool::new(true));
    let mut e = mk(EngineConfig {
        stop: Some(stop.clone()),
        ..EngineConfig::default()
    });
    assert_eq!(e.run().unwrap(), Outcome::Stopped);
    assert_eq!(e.stats().pending, 1);
    // Cleared: the run continues from where it stopped (until the cap).
    stop.store(false, std::sync::atomic::Ordering::Relaxed);
    let mut calls = 0;
    let mut e2 = mk(EngineConfig {
        stop: Some(stop),
        max_events: 200_000,
        ..EngineConfig::default()
    });
    assert!(e2.run_with_progress(&mut |_| calls += 1).is_err());
    assert!(calls >= 3, "{calls}"); // every 65,536 events
}

/// Returns a deadline that never advances: a broken device.
struct Stuck;

impl Datapath for Stuck {
    fn on_packet(&mut self, _: Time, _: u32, _: &[u8], _: &mut Outputs) {}
    fn on_timer(&mut self, _: Time, _: &mut Outputs) {}
    fn next_deadline(&self) -> Option<Time> {
        Some(Time::from_ns(5))
    }
}

#[test]
fn device_and_wiring_errors() {
    let mut e: Engine = Engine::new(EngineConfig::default());
    let s = e.add_device(Box::new(Stuck), Time::ZERO, "stuck");
    let err = e.run().unwrap_err();
    assert!(
        err.to_string()
            .contains("stuck returned next_deadline 5.000ns after on_timer"),
        "{err}"
    );

    let mut e: Engine = Engine::new(EngineConfig::default());
    let a = e.add_device(Box::new(Reflector::default()), Time::ZERO, "a");
    let b = e.add_device(Box::new(Reflector::default()), Time::ZERO, "b");
    e.connect(a, 0, b, 0, link(400, 450)).unwrap();
    let err = e.connect(a, 0, b, 1, link(400, 450)).unwrap_err();
    assert_eq!(err.to_string(), "a port 0 is already connected");
    let err = e.connect(a, 1, b, 1, link(0, 450)).unwrap_err();
    assert!(
        err.to_string().contains("a:1 <-> b:1: bandwidth 0 Gb/s"),
        "{err}"
    );
    assert_eq!(
        e.connect(a, 1, 9, 0, link(1, 1)).unwrap_err(),
        EngineError::NoDevice(9)
    );
    assert!(e.inject(Time::ZERO, s + 7, 0, &[]).is_err());
    // A frame on an unconnected port is an error, not a silent drop.
    e.inject(Time::from_ns(3), a, 5, &frame(64, 0)).unwrap();
    let err = e.run().unwrap_err();
    assert!(
        err.to_string()
            .contains("a sent a frame on port 5, which is not connected"),
        "{err}"
    );
}

fn netsparse_frame(pr_type: PrType, prs: u32, prop_len: u32) -> Vec<u8> {
    let hdr = FrameHeader::netsparse(DeviceAddr::Node(0), 1, 0).unwrap();
    let mut buf = Vec::new();
    let mut b = FrameBuilder::begin(&mut buf, &hdr, pr_type, 1, prop_len, 1500).unwrap();
    let payload = vec![
        7u8;
        if pr_type == PrType::Response {
            prop_len as usize
        } else {
            0
        }
    ];
    for i in 0..prs {
        b.push_pr(
            &PrRepr {
                src: 0,
                tid: 1,
                idx: u64::from(i),
                req_id: i,
            },
            &payload,
        )
        .unwrap();
    }
    b.finish();
    buf
}

#[test]
fn counters_split_netsparse_header_and_payload() {
    let resp = netsparse_frame(PrType::Response, 3, 64);
    let read = netsparse_frame(PrType::Read, 5, 64);
    assert_eq!(resp.len(), 68 + 3 * 82);
    assert_eq!(read.len(), 68 + 5 * 18);
    let mut bad = resp.clone();
    bad[14 + 20 + 8 + 12 + 13] = 200; // num_prs overruns the packet
    let mut e: Engine = Engine::new(EngineConfig::default());
    let a = e.add_device(
        Box::new(Source::new(vec![
            (NS(0), 0, resp.clone()),
            (NS(0), 0, read.clone()),
            (NS(0), 0, frame(100, 1)),
            (NS(0), 0, bad),
        ])),
        Time::ZERO,
        "a",
    );
    let b = e.add_device(Box::new(Sink::default()), Time::ZERO, "b");
    e.connect(a, 0, b, 0, LinkParams::default()).unwrap();
    e.run().unwrap();
    let c = e.tx_counters(a, 0).unwrap();
    assert_eq!(c.netsparse_packets, 2);
    assert_eq!(c.payload_bytes, 3 * 64);
    assert_eq!(c.header_bytes, (resp.len() - 192 + read.len()) as u64);
    assert_eq!((c.prs, c.read_prs, c.response_prs), (8, 5, 3));
    assert_eq!((c.other_packets, c.malformed_packets), (2, 1));
    assert_eq!(c.bytes, (2 * resp.len() + read.len() + 100) as u64);
    // Delivered anyway: the engine counts, the devices decide.
    assert_eq!(e.device(b).unwrap().next_deadline(), None);
    assert_eq!(e.device_counters(b).unwrap().frames_in, 4);
    let all = e.link_counters();
    assert_eq!(all.len(), 2);
    assert_eq!((all[0].0, all[0].1), (a, b));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// One link direction is a FIFO: frames arrive in send order, each
        /// at max(ready, previous end) + serialization + propagation, computed
        /// here independently.
        #[test]
        fn link_is_a_fifo_with_exact_times(
            sends in proptest::collection::vec((0u64..2_000, 60usize..1600), 1..60),
            gbps in 1u64..800,
            prop_ns in 0u64..1000,
        ) {
            let mut frames: Vec<(Time, u32, Vec<u8>)> = sends
                .iter()
                .map(|&(t, len)| (Time::from_ns(t), 0, frame(len, 1)))
                .collect();
            frames.sort_by_key(|f| f.0);
            let mut e: Engine = Engine::new(EngineConfig::default());
            let a = e.add_device(Box::new(Source::new(frames.clone())), Time::ZERO, "a");
            let b = e.add_device(Box::new(Sink::default()), Time::ZERO, "b");
            e.connect(a, 0, b, 0, link(gbps, prop_ns)).unwrap();
            e.run().unwrap();
            let mut busy = 0u64;
            let want: Vec<(Time, u32, usize)> = frames
                .iter()
                .map(|(t, _, f)| {
                    let start = t.as_ps().max(busy);
                    busy = start + (f.len() as u64 * 8_000) / gbps;
                    (Time::from_ps(busy + prop_ns * 1_000), 0, f.len())
                })
                .collect();
            prop_assert_eq!(&e.get::<Sink>(b).unwrap().arrivals, &want);
        }
    }
}
