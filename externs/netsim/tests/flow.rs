//! Lossless flow control with toy devices: an incast through one switch
//! port keeps the switch's buffer within its size, loses nothing and keeps
//! the congested port at line rate; a cycle of full buffers is reported as
//! a deadlock with the cycle; parallel windows give the serial results
//! with flow control on; bad buffer settings are refused.

use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_netsim::{
    BufferKind, BufferSpec, DeviceId, Engine, EngineConfig, EngineError, LinkParams,
};

/// Sends `count` frames of `len` bytes on port 0 at time 0, each tagged
/// with its destination port at the switch in byte 0; counts what it gets.
struct Host {
    count: u32,
    len: usize,
    dest: u8,
    sent: bool,
    got: u32,
    first: Option<Time>,
    last: Option<Time>,
}

impl Datapath for Host {
    fn on_packet(&mut self, now: Time, _port: u32, _frame: &[u8], _out: &mut Outputs) {
        self.got += 1;
        self.first.get_or_insert(now);
        self.last = Some(now);
    }
    fn on_timer(&mut self, _now: Time, out: &mut Outputs) {
        self.sent = true;
        let mut f = vec![0u8; self.len];
        f[0] = self.dest;
        for i in 0..self.count {
            f[1..5].copy_from_slice(&i.to_be_bytes());
            out.push(0, &f);
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        (!self.sent && self.count > 0).then_some(Time::ZERO)
    }
}

/// Forwards every frame to the port its byte 0 names.
struct Switch;

impl Datapath for Switch {
    fn on_packet(&mut self, _now: Time, _port: u32, frame: &[u8], out: &mut Outputs) {
        out.push(u32::from(frame[0]), frame);
    }
    fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}
    fn next_deadline(&self) -> Option<Time> {
        None
    }
}

/// Either device, for static dispatch in one engine.
enum Toy {
    Host(Host),
    Switch(Switch),
}

impl Datapath for Toy {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        match self {
            Toy::Host(h) => h.on_packet(now, port, frame, out),
            Toy::Switch(s) => s.on_packet(now, port, frame, out),
        }
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        match self {
            Toy::Host(h) => h.on_timer(now, out),
            Toy::Switch(s) => s.on_timer(now, out),
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        match self {
            Toy::Host(h) => h.next_deadline(),
            Toy::Switch(s) => s.next_deadline(),
        }
    }
}

const GBPS: u64 = 100;
const LEN: usize = 1000;
/// 1000 B at 100 Gb/s.
const SER_PS: u64 = 80_000;

fn link() -> LinkParams {
    LinkParams {
        gbps: GBPS,
        latency: Time::from_ns(1_000),
    }
}

/// `senders` hosts each sending `count` frames to the sink through one
/// switch (ports 0..senders to the senders, port `senders` to the sink);
/// the switch has a shared buffer of `buffer` bytes if given.
fn incast(senders: u32, count: u32, buffer: Option<u64>) -> (Engine<Toy>, Vec<DeviceId>) {
    let mut e: Engine<Toy> = Engine::new(EngineConfig::default());
    let sw = e.add_device(Box::new(Toy::Switch(Switch)), Time::from_ns(300), "switch");
    let mut hosts = Vec::new();
    for i in 0..=senders {
        let is_sink = i == senders;
        let h = Host {
            count: if is_sink { 0 } else { count },
            len: LEN,
            dest: senders as u8,
            sent: false,
            got: 0,
            first: None,
            last: None,
        };
        let label = if is_sink {
            "sink".to_string()
        } else {
            format!("h{i}")
        };
        let id = e.add_device(Box::new(Toy::Host(h)), Time::ZERO, label);
        e.connect(id, 0, sw, i, link()).unwrap();
        hosts.push(id);
    }
    if let Some(capacity) = buffer {
        e.set_buffer(
            sw,
            Some(BufferSpec {
                capacity,
                kind: BufferKind::Shared,
            }),
        )
        .unwrap();
    }
    (e, hosts)
}

fn host(e: &Engine<Toy>, d: DeviceId) -> &Host {
    match e.device(d) {
        Some(Toy::Host(h)) => h,
        _ => panic!("not a host"),
    }
}

#[test]
fn an_incast_stays_within_the_buffer_loses_nothing_and_runs_at_line_rate() {
    let (senders, count, buffer) = (4u32, 200u32, 32_000u64);
    let (mut e, hosts) = incast(senders, count, Some(buffer));
    e.run().unwrap();
    let sw: DeviceId = 0;
    let sink = *hosts.last().unwrap();
    let total = senders * count;
    // Nothing lost.
    assert_eq!(host(&e, sink).got, total);
    // The buffer never held more than its size.
    // (Split over the switch's 5 ports: 6,400 B each.)
    let b = e.buffer_stats(sw).unwrap();
    let port = buffer / u64::from(senders + 1);
    assert_eq!(b.capacity, Some(buffer));
    assert_eq!(b.port_capacity, Some(port));
    assert!(
        b.peak_port_bytes <= port,
        "peak {} > {port}",
        b.peak_port_bytes
    );
    assert!(b.peak_bytes <= buffer, "peak {} > {buffer}", b.peak_bytes);
    assert!(
        b.peak_port_bytes > port - 2 * LEN as u64,
        "the buffer filled: {b:?}"
    );
    assert!(b.paused_frames > 0);
    // The senders were paused, the congested port never idled: the frames
    // reached the sink back to back.
    let paused: u64 = hosts[..senders as usize]
        .iter()
        .map(|&h| e.tx_counters(h, 0).unwrap().paused_ps)
        .sum();
    assert!(paused > 0);
    let h = host(&e, sink);
    let span = (h.last.unwrap() - h.first.unwrap()).as_ps();
    assert_eq!(span, u64::from(total - 1) * SER_PS, "not at line rate");
    let out = e.tx_counters(sw, senders).unwrap();
    assert_eq!(out.packets, u64::from(total));
    assert_eq!(out.busy_ps, u64::from(total) * SER_PS);
}

#[test]
fn without_a_buffer_model_the_same_incast_queues_without_bound() {
    let (senders, count) = (4u32, 200u32);
    let (mut unbounded, hosts) = incast(senders, count, None);
    unbounded.run().unwrap();
    let (mut bounded, _) = incast(senders, count, Some(32_000));
    bounded.run().unwrap();
    let sink = *hosts.last().unwrap();
    // Same delivery, same finish: the congested port is the bottleneck
    // either way.
    assert_eq!(host(&unbounded, sink).got, host(&bounded, sink).got);
    assert_eq!(host(&unbounded, sink).last, host(&bounded, sink).last);
    // But without flow control the switch's output queue holds what the
    // buffer could not: most of the incast.
    let q = unbounded.tx_counters(0, senders).unwrap();
    let qb = bounded.tx_counters(0, senders).unwrap();
    assert!(q.max_queue_delay_ps > 100 * qb.max_queue_delay_ps / 10);
    assert_eq!(unbounded.buffer_stats(0).unwrap().capacity, None);
    assert_eq!(q.paused_ps, 0);
}

#[test]
fn a_buffer_smaller_than_the_bandwidth_delay_product_costs_throughput() {
    // One frame of input buffer per port against a round trip of 1 µs +
    // serialisation: each sender has one frame at a time in the switch, and
    // the congested port idles while the next one travels.
    let (mut e, hosts) = incast(2, 50, Some(3 * LEN as u64));
    e.run().unwrap();
    let sink = *hosts.last().unwrap();
    let h = host(&e, sink);
    assert_eq!(h.got, 100);
    let span = (h.last.unwrap() - h.first.unwrap()).as_ps();
    assert!(span > 99 * SER_PS * 5, "span {span} ps");
    assert!(e.buffer_stats(0).unwrap().peak_port_bytes <= LEN as u64);
}

#[test]
fn a_cycle_of_full_buffers_is_reported_as_a_deadlock() {
    // Two switches, each with one host; both hosts flood the other host.
    // Each switch's buffer fills with frames for the other switch, whose
    // buffer is full with frames for it.
    let mut e: Engine<Toy> = Engine::new(EngineConfig::default());
    let a = e.add_device(Box::new(Toy::Switch(Switch)), Time::from_ns(300), "sw-a");
    let b = e.add_device(Box::new(Toy::Switch(Switch)), Time::from_ns(300), "sw-b");
    e.connect(a, 1, b, 1, link()).unwrap();
    for (i, sw) in [a, b].into_iter().enumerate() {
        let h = Host {
            count: 100,
            len: LEN,
            // Port 1 at the near switch (to the other switch); the far
            // switch forwards on port 1 too (back): frames ping-pong.
            dest: 1,
            sent: false,
            got: 0,
            first: None,
            last: None,
        };
        let id = e.add_device(Box::new(Toy::Host(h)), Time::ZERO, format!("h{i}"));
        e.connect(id, 0, sw, 0, link()).unwrap();
        e.set_buffer(
            sw,
            Some(BufferSpec {
                capacity: 16 * LEN as u64,
                kind: BufferKind::Shared,
            }),
        )
        .unwrap();
    }
    match e.run() {
        Err(EngineError::FlowControlDeadlock { frames, cycle, .. }) => {
            assert!(frames > 0);
            assert!(
                cycle == "sw-a -> sw-b -> sw-a" || cycle == "sw-b -> sw-a -> sw-b",
                "{cycle}"
            );
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn parallel_windows_give_the_serial_results_under_flow_control() {
    let outcome = |threads: usize| {
        let (mut e, hosts) = incast(6, 120, Some(12_000));
        if threads == 0 {
            e.run().unwrap();
        } else {
            e.run_parallel(threads, &mut |_| true).unwrap();
        }
        let mut s = format!("{:?} {:?}\n", e.stats().events, e.buffer_stats(0));
        for (a, b, c) in e.link_counters() {
            s += &format!("{a}->{b} {c:?}\n");
        }
        for h in hosts {
            let h = host(&e, h);
            s += &format!("{} {:?} {:?}\n", h.got, h.first, h.last);
        }
        s
    };
    let serial = outcome(0);
    assert!(serial.contains("paused_ps"));
    assert_eq!(outcome(1), serial);
    assert_eq!(outcome(2), serial);
    assert_eq!(outcome(3), serial);
}

#[test]
fn bad_buffers_are_refused() {
    let (mut e, _) = incast(1, 1, None);
    assert!(matches!(
        e.set_buffer(
            0,
            Some(BufferSpec {
                capacity: 0,
                kind: BufferKind::Shared
            })
        ),
        Err(EngineError::BufferTooSmall { .. })
    ));
    assert!(matches!(
        e.set_buffer(99, None),
        Err(EngineError::NoDevice(99))
    ));
    // A frame larger than the input buffer it must enter stops the run,
    // naming both ends, rather than waiting for ever (1,999 B over the
    // switch's 2 ports: 999 B each).
    e.set_buffer(
        0,
        Some(BufferSpec {
            capacity: 1999,
            kind: BufferKind::Shared,
        }),
    )
    .unwrap();
    let err = e.run().unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::FrameExceedsBuffer {
                len: 1000,
                capacity: 999,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("h0") && err.to_string().contains("switch"));
}
