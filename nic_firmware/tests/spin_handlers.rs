//! The sPIN NIC's handler semantics, on the bundled example programs and
//! small programs written here: the header handler before any payload
//! handler, payload handlers on out-of-order packets, the completion
//! handler last with the right dropped-byte count, flow-control drops when
//! no HPU is free, cycle budgets, timeouts, and handler time from the
//! operation count.

use std::path::{Path, PathBuf};

use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_file, CompileOptions};
use netsparse_engine::control::commands;
use netsparse_externs::artifact::{spin_rc, Artifact};
use netsparse_nic::spin::wire::{self, message_frames};
use netsparse_nic::spin::{HandlerKind, SpinConfig, SpinNicDev};
use netsparse_nic::{Datapath, Outputs, Time};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn compile(path: &Path) -> Artifact {
    let mut sources = SourceMap::new();
    match compile_file(&mut sources, path, &CompileOptions::default()) {
        Ok(c) => c.artifact,
        Err(d) => panic!(
            "{} does not compile:\n{}",
            path.display(),
            netsparse_compiler::diag::render_all(&d, &sources)
        ),
    }
}

fn program(name: &str) -> Artifact {
    compile(&root().join("programs").join(name))
}

fn source(text: &str) -> Artifact {
    let dir = std::env::temp_dir().join(format!("spin-handlers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("p{}.p4", text.len()));
    std::fs::write(&path, text).unwrap();
    compile(&path)
}

fn nic(art: &Artifact, cfg: SpinConfig, entries: &str) -> SpinNicDev {
    let mut n = SpinNicDev::new(art, cfg).expect("loads");
    commands::apply(n.control(), entries, "entries").expect("entries apply");
    n.set_trace(true);
    n
}

fn deliver(n: &mut SpinNicDev, at: Time, frame: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Outputs::new();
    n.on_packet(at, 0, frame, &mut out);
    out.iter().map(|(_, f)| f.to_vec()).collect()
}

fn run(n: &mut SpinNicDev) -> Vec<(Time, Vec<u8>)> {
    let mut sent = Vec::new();
    n.run_until_idle(|t, f| sent.push((t, f.to_vec())));
    sent
}

const STRIDED: &str = "table_add Layout.datatype vector 0x77 => 0x1000 4 8\n";

#[test]
fn header_first_payloads_out_of_order_completion_last() {
    let art = program("spin_strided.p4");
    let mut n = nic(&art, SpinConfig::default(), STRIDED);
    let data: Vec<u8> = (0..256u32).map(|i| i as u8).collect();
    let frames = message_frames(3, 0, 9, 0x77, 0, &data, 64);
    assert_eq!(frames.len(), 4);
    // Out of order, 10 ns apart.
    for (k, i) in [3usize, 1, 0, 2].iter().enumerate() {
        deliver(&mut n, Time::from_ns(10 * k as u64), &frames[*i]);
    }
    run(&mut n);
    let t = n.trace().to_vec();
    assert_eq!(t.len(), 6, "{t:#?}");
    assert_eq!(t[0].kind, HandlerKind::Header);
    let payloads: Vec<_> = t
        .iter()
        .filter(|r| r.kind == HandlerKind::Payload)
        .collect();
    assert_eq!(
        payloads.iter().map(|r| r.seq).collect::<Vec<_>>(),
        vec![3, 1, 0, 2]
    );
    for p in &payloads {
        assert!(p.start >= t[0].end, "payload before the header ended");
    }
    let c = t.last().unwrap();
    assert_eq!(c.kind, HandlerKind::Completion);
    assert!(payloads.iter().all(|p| c.start >= p.end));
    let done: Vec<_> = n.poll_completions().collect();
    assert_eq!(done.len(), 1);
    assert_eq!(
        (done[0].rc, done[0].dropped_bytes, done[0].flow_control),
        (spin_rc::SUCCESS, 0, false)
    );
    // Block 4, stride 8: stream byte k at 0x1000 + (k/4)*8 + k%4.
    let host = n.host();
    for k in 0..256usize {
        assert_eq!(host[0x1000 + (k / 4) * 8 + k % 4], k as u8, "byte {k}");
        assert_eq!(host[0x1000 + (k / 4) * 8 + 4 + k % 4], 0, "gap after {k}");
    }
    assert_eq!(n.counters()[0], 256);
    let s = n.stats();
    assert_eq!((s.header_handlers, s.payload_handlers), (1, 4));
    assert_eq!(s.completion_handlers, 1);
    // 256 bytes in blocks of 4: 64 DMA writes.
    assert_eq!(s.dma_writes, 64);
}

#[test]
fn no_free_hpu_drops_and_the_completion_sees_it() {
    let art = program("spin_strided.p4");
    let cfg = SpinConfig {
        hpus: 1,
        buffer_packets: 1,
        ..SpinConfig::default()
    };
    let mut n = nic(&art, cfg, STRIDED);
    let data = vec![1u8; 256];
    let frames = message_frames(3, 0, 9, 0x77, 0, &data, 64);
    for f in &frames {
        deliver(&mut n, Time::ZERO, f); // all at once
    }
    run(&mut n);
    let s = n.stats().clone();
    // The header takes the HPU, packet 0 waits in the buffer, 1-3 drop.
    assert_eq!(s.flow_control_drops, 3);
    assert_eq!(s.flow_control_bytes, 192);
    assert_eq!(s.payload_handlers, 1);
    let done: Vec<_> = n.poll_completions().collect();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].dropped_bytes, 192);
    assert!(done[0].flow_control);
    assert_eq!(done[0].rc, spin_rc::FAIL);
    assert_eq!(n.counters()[0], 64);
    assert_eq!(s.messages_failed, 1);
}

#[test]
fn enough_buffer_means_no_drops() {
    let art = program("spin_strided.p4");
    let cfg = SpinConfig {
        hpus: 1,
        buffer_packets: 4,
        ..SpinConfig::default()
    };
    let mut n = nic(&art, cfg, STRIDED);
    for f in &message_frames(3, 0, 9, 0x77, 0, &[1u8; 256], 64) {
        deliver(&mut n, Time::ZERO, f);
    }
    run(&mut n);
    assert_eq!(n.stats().flow_control_drops, 0);
    let done: Vec<_> = n.poll_completions().collect();
    assert_eq!((done[0].rc, done[0].dropped_bytes), (spin_rc::SUCCESS, 0));
    // One HPU: the runs do not overlap.
    let t = n.trace();
    for w in t.windows(2) {
        assert!(w[1].start >= w[0].end);
    }
}

#[test]
fn handler_time_is_operations_at_the_clock_plus_extern_cycles() {
    let art = program("spin_strided.p4");
    let cfg = SpinConfig {
        cycles_per_op: 3,
        ..SpinConfig::default()
    };
    let mut n = nic(&art, cfg, STRIDED);
    for f in &message_frames(3, 0, 9, 0x77, 0, &[1u8; 64], 64) {
        deliver(&mut n, Time::ZERO, f);
    }
    run(&mut n);
    for r in n.trace() {
        assert!(r.ops > 0);
        // 2.5 GHz: 400 ps per cycle.
        assert_eq!((r.end - r.start).as_ps(), r.cycles * 400);
        if r.kind == HandlerKind::Payload {
            // 64 bytes at block 4 from offset 0: 16 DMA commands.
            assert_eq!(r.cycles, r.ops * 3 + 16);
        } else {
            assert_eq!(r.cycles, r.ops * 3);
        }
    }
}

const LOOPING: &str = r#"
#include <spin.p4>
struct s_t { bit<32> x; }
control H(in spin_msg_t msg, inout s_t st, inout spin_md_t md) { apply { } }
control P(in spin_msg_t msg, in spin_pkt_t pkt, inout s_t st, inout spin_md_t md) {
    apply {
        for (bit<32> i = 0; i < 1000000; i = i + 1) { st.x = st.x + 1; }
        SpinCount(0, 1);
    }
}
control C(in spin_msg_t msg, inout s_t st, inout spin_md_t md) {
    apply { if (md.dropped_bytes != 0) { md.rc = SPIN_FAIL; } }
}
SpinNic(H(), P(), C()) main;
"#;

#[test]
fn a_handler_over_its_budget_is_stopped_and_counted() {
    let art = source(LOOPING);
    let cfg = SpinConfig {
        budget_cycles: 500,
        budget_cycles_per_byte: 0,
        ..SpinConfig::default()
    };
    let mut n = nic(&art, cfg, "");
    for f in &message_frames(1, 0, 5, 0, 0, &[0u8; 128], 64) {
        deliver(&mut n, Time::ZERO, f);
    }
    run(&mut n);
    let s = n.stats();
    assert_eq!(s.budget_exceeded, 2);
    // Stopped before SpinCount.
    assert_eq!(n.counters()[0], 0);
    for r in n.trace().iter().filter(|r| r.kind == HandlerKind::Payload) {
        assert!(r.stopped);
        assert_eq!(r.cycles, 500);
        assert_eq!(r.end - r.start, Time::from_ns(200));
    }
    let done: Vec<_> = n.poll_completions().collect();
    assert_eq!((done[0].rc, done[0].dropped_bytes), (spin_rc::FAIL, 128));
}

#[test]
fn an_incomplete_message_times_out_with_an_error() {
    let art = program("spin_strided.p4");
    let cfg = SpinConfig {
        timeout_ns: 10_000,
        ..SpinConfig::default()
    };
    let mut n = nic(&art, cfg, STRIDED);
    let frames = message_frames(3, 0, 9, 0x77, 0, &[1u8; 256], 64);
    deliver(&mut n, Time::ZERO, &frames[0]);
    deliver(&mut n, Time::from_ns(5), &frames[2]);
    run(&mut n);
    let done: Vec<_> = n.poll_completions().collect();
    assert_eq!(done.len(), 1);
    assert!(done[0].timed_out);
    assert_eq!(done[0].dropped_bytes, 128);
    assert_eq!(done[0].rc, spin_rc::FAIL);
    assert!(done[0].at >= Time::from_ns(10_000));
    // A packet after the completion is late, not a new message.
    deliver(&mut n, Time::from_ms(1), &frames[1]);
    run(&mut n);
    assert_eq!(n.stats().late_packets, 1);
    assert_eq!(n.stats().messages, 1);
    assert_eq!(n.poll_completions().count(), 0);
}

#[test]
fn unmatched_messages_are_dropped_by_the_header_handler() {
    let art = program("spin_pingpong.p4");
    let mut n = nic(&art, SpinConfig::default(), "");
    for f in &message_frames(2, 0, 1, 0x5, 0, &[7u8; 100], 64) {
        deliver(&mut n, Time::ZERO, f);
    }
    let sent = run(&mut n);
    assert!(sent.is_empty());
    let s = n.stats();
    assert_eq!((s.messages_dropped, s.payload_handlers), (1, 0));
    let done: Vec<_> = n.poll_completions().collect();
    assert_eq!((done[0].dropped_bytes, done[0].rc), (100, spin_rc::FAIL));
}

#[test]
fn pingpong_answers_from_the_nic() {
    let art = program("spin_pingpong.p4");
    let mut n = nic(
        &art,
        SpinConfig::default(),
        "table_add Ping.ping_match pong 0x1 => 0x2 0x100\n",
    );
    let data: Vec<u8> = (0..200u8).collect();
    let mut sent = Vec::new();
    for f in &message_frames(2, 0, 44, 0x1, 0, &data, 64) {
        sent.extend(
            deliver(&mut n, Time::ZERO, f)
                .into_iter()
                .map(|f| (Time::ZERO, f)),
        );
    }
    sent.extend(run(&mut n));
    assert_eq!(sent.len(), 4);
    let mut back = vec![0u8; 200];
    for (_, f) in &sent {
        let p = wire::parse(f).unwrap();
        assert_eq!((p.hdr.src, p.hdr.dst, p.hdr.match_bits), (0, 2, 0x2));
        assert_eq!((p.hdr.msg_id, p.hdr.msg_len), (44, 200));
        let off = p.hdr.offset as usize;
        back[off..off + p.len as usize].copy_from_slice(wire::payload(f, &p));
    }
    assert_eq!(back, data);
    assert_eq!(&n.host()[0x100..0x100 + 200], data.as_slice());
    assert_eq!(n.counters()[..2], [1, 200]);
}

#[test]
fn bcast_forwards_to_the_children() {
    let art = program("spin_bcast.p4");
    let cfg = SpinConfig {
        node: 4,
        ..SpinConfig::default()
    };
    let mut n = nic(
        &art,
        cfg,
        "table_add Tree.bcast_tree children 0xB0 => 2 6 5 0 0 0x2000\n",
    );
    let data = vec![0xABu8; 300];
    let mut sent = Vec::new();
    for f in &message_frames(0, 4, 3, 0xB0, 0, &data, 128) {
        sent.extend(deliver(&mut n, Time::ZERO, f));
    }
    sent.extend(run(&mut n).into_iter().map(|(_, f)| f));
    let mut to: Vec<(u32, u32)> = sent
        .iter()
        .map(|f| {
            let p = wire::parse(f).unwrap();
            (p.hdr.dst, p.hdr.offset)
        })
        .collect();
    to.sort();
    assert_eq!(
        to,
        vec![(5, 0), (5, 128), (5, 256), (6, 0), (6, 128), (6, 256)]
    );
    assert_eq!(&n.host()[0x2000..0x2000 + 300], data.as_slice());
    assert_eq!(n.stats().puts_from_device, 6);
}

#[test]
fn accumulate_adds_every_contribution() {
    let art = program("spin_accumulate.p4");
    let mut n = nic(
        &art,
        SpinConfig::default(),
        "table_add Reduce.accumulate_into into 0xACC => 0x4000 0x3000\n",
    );
    let elems = 100u32;
    for src in 1..=3u32 {
        let data: Vec<u8> = (0..elems).flat_map(|i| (i * src).to_le_bytes()).collect();
        for f in message_frames(src, 0, 1, 0xACC, 0, &data, 128).iter().rev() {
            deliver(&mut n, Time::ZERO, f);
        }
    }
    run(&mut n);
    let host = n.host();
    for i in 0..elems as usize {
        let at = 0x4000 + 4 * i;
        let v = u32::from_le_bytes(host[at..at + 4].try_into().unwrap());
        assert_eq!(v, 6 * i as u32, "element {i}");
    }
    assert_eq!(
        u64::from_le_bytes(host[0x3000..0x3008].try_into().unwrap()),
        3
    );
    assert_eq!(n.hpu_mem()[0], 3);
    assert_eq!(n.poll_completions().count(), 3);
}

#[test]
fn bad_frames_and_bad_configs_are_refused() {
    let art = program("spin_strided.p4");
    let mut n = nic(&art, SpinConfig::default(), STRIDED);
    deliver(&mut n, Time::ZERO, &[0u8; 20]);
    let f = &message_frames(3, 1, 9, 0x77, 0, &[1u8; 64], 64)[0]; // for node 1
    deliver(&mut n, Time::ZERO, f);
    assert_eq!((n.stats().malformed, n.stats().not_for_us), (1, 1));
    // Packets of message 9 that disagree on its length, and a duplicate.
    let good = message_frames(3, 0, 9, 0x77, 0, &[1u8; 128], 64);
    let liar = message_frames(3, 0, 9, 0x77, 0, &[1u8; 192], 64);
    deliver(&mut n, Time::ZERO, &good[0]);
    deliver(&mut n, Time::ZERO, &liar[2]);
    deliver(&mut n, Time::ZERO, &good[0]);
    deliver(&mut n, Time::ZERO, &good[1]);
    run(&mut n);
    assert_eq!(n.stats().inconsistent_packets, 1);
    assert_eq!(n.stats().duplicate_packets, 1);
    let done: Vec<_> = n.poll_completions().collect();
    assert_eq!((done.len(), done[0].dropped_bytes), (1, 0));
    let bad = SpinConfig {
        hpus: 0,
        ..SpinConfig::default()
    };
    let e = SpinNicDev::new(&art, bad).unwrap_err().to_string();
    assert!(e.contains("hpus"), "{e}");
    let rig = compile(&root().join("programs/netsparse_nic.p4"));
    let e = SpinNicDev::new(&rig, SpinConfig::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("SpinNic"), "{e}");
}

const ONE_OP: &str = r#"
#include <spin.p4>
struct s_t { bit<32> x; }
control H(in spin_msg_t msg, inout s_t st, inout spin_md_t md) { apply { } }
control P(in spin_msg_t msg, in spin_pkt_t pkt, inout s_t st, inout spin_md_t md) {
    apply { SpinCount(0, 1); }
}
control C(in spin_msg_t msg, inout s_t st, inout spin_md_t md) { apply { } }
SpinNic(H(), P(), C()) main;
"#;

/// Flow-control drops of 4000 packets arriving every `gap`, with payload
/// handlers of `cycles_per_op` × (the handler's operations) cycles, on 8
/// HPUs at 2.5 GHz with a 16-packet buffer: (handler time, drops).
fn littles_law_run(art: &Artifact, gap: Time, cycles_per_op: u64) -> (Time, u64) {
    let cfg = SpinConfig {
        cycles_per_op,
        buffer_packets: 16,
        budget_cycles: 1 << 20,
        ..SpinConfig::default()
    };
    let mut n = nic(art, cfg, "");
    let frames = message_frames(1, 0, 1, 0, 0, &vec![0u8; 64 * 4000], 64);
    for (i, f) in frames.iter().enumerate() {
        let now = Time::from_ps(gap.as_ps() * i as u64);
        while let Some(d) = n.next_deadline().filter(|d| *d < now) {
            n.on_timer(d, &mut Outputs::new());
        }
        deliver(&mut n, now, f);
    }
    run(&mut n);
    let t = n
        .trace()
        .iter()
        .find(|r| r.kind == HandlerKind::Payload)
        .map(|r| r.end - r.start)
        .unwrap();
    (t, n.stats().flow_control_drops)
}

/// sPIN §4.4.2: packets arrive at most every g = 6.7 ns; by Little's law 8
/// HPUs keep up when a handler takes at most 8 × 6.7 = 53.6 ns.
#[test]
fn littles_law_eight_hpus_keep_up_below_53_ns() {
    let art = source(ONE_OP);
    let g = Time::from_ps(6_700);
    // The handler's operation count at 1 cycle per op.
    let (t1, _) = littles_law_run(&art, g, 1);
    let ops = t1.as_ps() / 400;
    assert!(ops >= 1);
    let mut seen = Vec::new();
    for target_ns in [20u64, 40, 50, 53, 54, 60, 80] {
        let cpo = (target_ns * 1000 / 400 / ops).max(1);
        let (t, drops) = littles_law_run(&art, g, cpo);
        seen.push((t.as_ps(), drops));
        if t.as_ps() <= 8 * 6_700 {
            assert_eq!(drops, 0, "handler {} ps: drops", t.as_ps());
        } else {
            assert!(drops > 0, "handler {} ps: no drops", t.as_ps());
        }
    }
    // Both sides of the bound were exercised.
    assert!(seen.iter().any(|(t, _)| *t <= 53_600) && seen.iter().any(|(t, _)| *t > 53_600));
    println!("handler ps, drops of 4000: {seen:?}");
}
