//! Loss and bad input: a dropped packet fails its command by watchdog while
//! everything else completes; malformed, unknown, duplicate and mismatched
//! input is counted, never panics and never touches another command's
//! buffer.

mod common;

use common::net::Net;
use common::{check_destination, expected, matrix, nic_program, nics};
use netsparse_externs::wire::{DeviceAddr, Frame, FrameBuilder, FrameHeader, PrRepr, PrType};
use netsparse_nic::testing::{batch_commands, gather_memory, Gather, DEST_BASE, IDX_BASE};
use netsparse_nic::{
    property_bytes, CompletionStatus, Datapath, DenseMemory, FailReason, Nic, NicConfig, Outputs,
    PostError, RegionKind, RigCommand, Time,
};

const PROP: u32 = 16;

fn frame(src: u32, dst: u32, ty: PrType, prop_len: u32, prs: &[(PrRepr, Vec<u8>)]) -> Vec<u8> {
    let mut buf = Vec::new();
    let h = FrameHeader::netsparse(DeviceAddr::Node(src), dst, 0).unwrap();
    let mut b = FrameBuilder::begin(&mut buf, &h, ty, dst, prop_len, 1500).unwrap();
    for (pr, payload) in prs {
        b.push_pr(pr, payload).unwrap();
    }
    b.finish();
    buf
}

fn prop(idx: u64, len: u32) -> Vec<u8> {
    let mut v = vec![0u8; len as usize];
    property_bytes(idx, &mut v);
    v
}

#[test]
fn a_lost_response_fails_its_command_by_watchdog_and_nothing_else_hangs() {
    let art = nic_program(&[]);
    // Node 0 gathers two disjoint idx sets (two commands, two units) from node 1.
    let a: Vec<u64> = (40..50).collect();
    let b: Vec<u64> = (50..60).collect();
    let idxs0: Vec<u64> = a.iter().chain(&b).copied().collect();
    let idxs1: Vec<u64> = vec![1, 2, 3];
    let bounds = vec![0, 32, 64];
    let watchdog_us = 40;
    let nics = nics(&art, &[idxs0, idxs1], &bounds, PROP, |c| {
        c.watchdog_us = watchdog_us;
        c.delay_cycles = 0;
    });
    let mut net = Net::new(Time::from_ns(450), nics);
    net.connect((0, 0), (1, 0));
    net.capture(true);
    // Drop the first response addressed to node 0 that answers unit 0.
    let mut done = false;
    net.drop_when(move |_, bytes| {
        let Ok(f) = Frame::parse(bytes) else {
            return false;
        };
        let hit = !done
            && f.concat.pr_type == PrType::Response
            && f.concat.dst == 0
            && f.prs().next().is_some_and(|p| p.tid == 0);
        done |= hit;
        hit
    });
    let cmds = vec![batch_commands(20, 10, PROP), batch_commands(3, 3, PROP)];
    let mut g = Gather::new(cmds, false);
    assert!(g.run(&mut net, Time::from_ms(10)));
    assert_eq!(net.dropped(), 1);
    // Node 0: command 0 failed by watchdog, command 1 completed.
    let c0 = g.completions[0].iter().find(|c| c.id.0 == 0).unwrap();
    let c1 = g.completions[0].iter().find(|c| c.id.0 == 1).unwrap();
    assert!(matches!(
        c0.status,
        CompletionStatus::Failed(FailReason::Watchdog { outstanding: 1, .. })
    ));
    assert!(c0.dest_invalid);
    let deadline = c0.stats.started_at + Time::from_us(watchdog_us);
    assert!(
        c0.at >= deadline && c0.at <= deadline + Time::from_us(1),
        "failed at {}",
        c0.at
    );
    assert_eq!(c1.status, CompletionStatus::Success);
    let s0 = net.nic(0).stats();
    assert_eq!(
        (
            s0.watchdog_failures,
            s0.commands_failed,
            s0.commands_completed
        ),
        (1, 1, 1)
    );
    // Node 1's own gather completed.
    assert!(g.completions[1]
        .iter()
        .all(|c| c.status == CompletionStatus::Success));
    // Nothing is left running anywhere.
    assert!(net.run_until_idle(Time::from_ms(20)));
    let nics = net.into_nics();
    assert!(nics.iter().all(|n| n.is_idle()));
    // Command 1's properties all arrived.
    let data = nics[0].memory().data(DEST_BASE).unwrap();
    for i in &b {
        let s = &data[*i as usize * PROP as usize..][..PROP as usize];
        assert_eq!(s, prop(*i, PROP).as_slice());
    }
}

/// Node 0 alone (its reads go nowhere): returns the NIC and the read PRs it sent.
fn lone_node(idxs: &[u64], tweak: impl Fn(&mut NicConfig)) -> (Nic<DenseMemory>, Vec<PrRepr>) {
    let art = nic_program(&[]);
    let bounds = vec![0, 32, 64];
    let mut nic = nics(&art, &[idxs.to_vec(), vec![]], &bounds, PROP, tweak).remove(0);
    for c in batch_commands(idxs.len() as u64, 1 << 20, PROP) {
        assert_eq!(nic.post_rig(Time::ZERO, c).unwrap().0, 0);
    }
    let mut net = Net::new(Time::from_ns(100), vec![nic]);
    net.capture(true);
    net.run_until(Time::from_us(5));
    let reads: Vec<PrRepr> = net
        .captured()
        .flat_map(|c| {
            let f = Frame::parse(c.bytes).unwrap();
            assert_eq!(f.concat.pr_type, PrType::Read);
            f.prs().map(|p| p.repr()).collect::<Vec<_>>()
        })
        .collect();
    (net.into_nics().remove(0), reads)
}

fn deliver(nic: &mut Nic<DenseMemory>, at: Time, bytes: &[u8]) -> Outputs {
    let mut out = Outputs::new();
    nic.on_timer(at, &mut out);
    nic.on_packet(at, 0, bytes, &mut out);
    out
}

#[test]
fn bad_responses_are_counted_and_change_nothing() {
    let (mut nic, reads) = lone_node(&[40, 41, 42], |_| {});
    assert_eq!(reads.len(), 3);
    let t = Time::from_us(6);
    let resp =
        |pr: &PrRepr, len: u32| frame(1, 0, PrType::Response, len, &[(*pr, prop(pr.idx, len))]);
    // Unknown request id, unknown unit.
    let mut bogus = reads[0];
    bogus.req_id ^= 0x0005_0000;
    deliver(&mut nic, t, &resp(&bogus, PROP));
    let mut bogus_tid = reads[0];
    bogus_tid.tid = 999;
    deliver(&mut nic, t, &resp(&bogus_tid, PROP));
    // Wrong property length: refused, the request stays pending.
    deliver(&mut nic, t, &resp(&reads[0], PROP / 2));
    // Right id, wrong idx.
    let mut wrong_idx = reads[1];
    wrong_idx.idx = 43;
    deliver(&mut nic, t, &resp(&wrong_idx, PROP));
    let s = nic.stats();
    assert_eq!(s.responses_unknown, 2);
    assert_eq!(s.responses_wrong_length, 1);
    assert_eq!(s.responses_wrong_idx, 1);
    assert_eq!((s.responses_received, s.properties_written), (0, 0));
    let dest = nic.memory().data(DEST_BASE).unwrap();
    assert!(dest.iter().all(|b| *b == 0), "nothing written");
    // The real responses complete the command.
    let all: Vec<_> = reads.iter().map(|r| (*r, prop(r.idx, PROP))).collect();
    let good = frame(1, 0, PrType::Response, PROP, &all);
    deliver(&mut nic, t, &good);
    nic.on_timer(Time::from_us(10), &mut Outputs::new());
    let c = nic.poll_cq().expect("completed");
    assert_eq!(c.status, CompletionStatus::Success);
    // A duplicate of them is counted and changes nothing.
    let before = nic.memory().data(DEST_BASE).unwrap().to_vec();
    deliver(&mut nic, Time::from_us(11), &good);
    let s = nic.stats();
    assert_eq!(s.responses_duplicate, 3);
    assert_eq!(s.responses_received, 3);
    assert_eq!(nic.memory().data(DEST_BASE).unwrap(), before.as_slice());
    check_destination(&nic, &[40, 41, 42].into_iter().collect(), 64, PROP);
    assert!(nic.poll_cq().is_none());
}

#[test]
fn reads_outside_the_slice_are_dropped_and_counted() {
    let (mut nic, _) = lone_node(&[], |_| {});
    let read = |idx: u64| {
        (
            PrRepr {
                src: 1,
                tid: 3,
                idx,
                req_id: 7,
            },
            Vec::new(),
        )
    };
    // Node 0 owns 0..32: 31 is served, 32 and 1000 are not.
    let f = frame(1, 0, PrType::Read, PROP, &[read(31), read(32), read(1000)]);
    let mut out = deliver(&mut nic, Time::from_us(1), &f);
    nic.on_timer(Time::from_us(10), &mut out);
    let s = nic.stats();
    assert_eq!((s.reads_served, s.reads_outside_slice), (1, 2));
    let sent: Vec<_> = out.iter().map(|(_, b)| b.to_vec()).collect();
    assert_eq!(sent.len(), 1);
    let f = Frame::parse(&sent[0]).unwrap();
    assert_eq!(
        (f.concat.pr_type, f.concat.dst, f.concat.num_prs),
        (PrType::Response, 1, 1)
    );
    let pr = f.prs().next().unwrap();
    assert_eq!((pr.idx, pr.tid, pr.req_id), (31, 3, 7));
    assert_eq!(pr.payload, prop(31, PROP).as_slice());
    // A read for another property length is refused too.
    let f = frame(1, 0, PrType::Read, PROP * 2, &[read(5)]);
    deliver(&mut nic, Time::from_us(11), &f);
    assert_eq!(nic.stats().reads_outside_slice, 3);
}

#[test]
fn malformed_and_misdelivered_frames_are_counted() {
    let (mut nic, _) = lone_node(&[], |_| {});
    let good = frame(
        1,
        0,
        PrType::Read,
        PROP,
        &[(
            PrRepr {
                src: 1,
                tid: 0,
                idx: 3,
                req_id: 1,
            },
            vec![],
        )],
    );
    let t = Time::from_us(1);
    deliver(&mut nic, t, &good[..good.len() - 5]); // truncated
    deliver(&mut nic, t, &[0u8; 10]); // not even Ethernet
    let mut foreign = good.clone();
    foreign[12] = 0x86; // IPv6 EtherType: not ours
    deliver(&mut nic, t, &foreign);
    let mut bad_sum = good.clone();
    bad_sum[24] ^= 0xff; // IPv4 checksum
    deliver(&mut nic, t, &bad_sum);
    let other = frame(
        1,
        2,
        PrType::Read,
        PROP,
        &[(
            PrRepr {
                src: 1,
                tid: 0,
                idx: 3,
                req_id: 1,
            },
            vec![],
        )],
    );
    deliver(&mut nic, t, &other); // for node 2
    let s = nic.stats();
    assert_eq!(s.rx_malformed, 3, "{}", s.summary());
    assert_eq!(s.rx_foreign, 1);
    assert_eq!(s.packets_dropped, 1);
    assert_eq!(s.reads_served, 0);
}

#[test]
fn bad_commands_are_rejected_or_fail_with_a_reason() {
    let art = nic_program(&[]);
    let bounds = vec![0u64, 32, 64];
    // Node 0 with a destination buffer too small for idx 40 at PROP bytes,
    // and a second, correct command with its own buffer.
    let (mut mem, slice) = gather_memory(&bounds, 0, PROP, &[40, 41, 100]).unwrap();
    mem.register(0x9000_0000, 16 * PROP as u64, RegionKind::Destination)
        .unwrap();
    mem.register_idxs(0xA000_0000, &[41]).unwrap();
    let cfg = NicConfig {
        node: 0,
        filter_columns: 64,
        watchdog_us: 100,
        ..NicConfig::default()
    };
    let mut nic = Nic::new(&art, cfg, mem).unwrap();
    nic.install_partition(&bounds).unwrap();
    nic.serve_properties(slice).unwrap();
    let good = RigCommand {
        idx_addr: IDX_BASE,
        dest_addr: DEST_BASE,
        count: 2,
        property_size: PROP,
    };
    // Rejected at post time.
    type Check = fn(&PostError) -> bool;
    let cases: Vec<(RigCommand, Check)> = vec![
        (
            RigCommand {
                idx_addr: 0x5,
                ..good
            },
            |e| matches!(e, PostError::BadIdxArray { .. }),
        ),
        (RigCommand { count: 4, ..good }, |e| {
            matches!(e, PostError::BadIdxArray { .. })
        }),
        (
            RigCommand {
                dest_addr: IDX_BASE,
                ..good
            },
            |e| matches!(e, PostError::BadDestination { .. }),
        ),
        (
            RigCommand {
                dest_addr: 0x7,
                ..good
            },
            |e| matches!(e, PostError::BadDestination { .. }),
        ),
        (
            RigCommand {
                property_size: 0,
                ..good
            },
            |e| matches!(e, PostError::BadPropertySize { .. }),
        ),
        (
            RigCommand {
                property_size: 5000,
                ..good
            },
            |e| matches!(e, PostError::BadPropertySize { .. }),
        ),
        (
            RigCommand {
                count: u64::MAX,
                ..good
            },
            |e| matches!(e, PostError::TooManyIdxs { .. }),
        ),
    ];
    for (c, ok) in &cases {
        let e = nic.post_rig(Time::ZERO, *c).unwrap_err();
        assert!(ok(&e), "{c:?}: {e}");
        assert!(!e.to_string().is_empty());
    }
    assert_eq!(nic.stats().commands_rejected, cases.len() as u64);
    // Accepted, but idx 41's slot (41 * 16 bytes) is beyond the small buffer.
    let small = nic
        .post_rig(
            Time::ZERO,
            RigCommand {
                idx_addr: 0xA000_0000,
                dest_addr: 0x9000_0000,
                count: 1,
                property_size: PROP,
            },
        )
        .unwrap();
    // Accepted, but idx 100 has no owner node.
    let unroutable = nic
        .post_rig(
            Time::ZERO,
            RigCommand {
                idx_addr: IDX_BASE + 16,
                count: 1,
                ..good
            },
        )
        .unwrap();
    let ok_cmd = nic
        .post_rig(Time::ZERO, RigCommand { count: 1, ..good })
        .unwrap();
    // Serve the reads by answering them as node 1 would.
    let mut net = Net::new(Time::from_ns(100), vec![nic]);
    net.capture(true);
    net.run_until(Time::from_us(5));
    let reads: Vec<PrRepr> = net
        .captured()
        .flat_map(|c| {
            Frame::parse(c.bytes)
                .unwrap()
                .prs()
                .map(|p| p.repr())
                .collect::<Vec<_>>()
        })
        .collect();
    let mut nic = net.into_nics().remove(0);
    assert_eq!(reads.len(), 2, "idx 41 (small) and idx 40 (ok)");
    for r in &reads {
        deliver(
            &mut nic,
            Time::from_us(6),
            &frame(1, 0, PrType::Response, PROP, &[(*r, prop(r.idx, PROP))]),
        );
    }
    nic.on_timer(Time::from_us(20), &mut Outputs::new());
    let mut comps = Vec::new();
    while let Some(c) = nic.poll_cq() {
        comps.push(c);
    }
    let of = |id| comps.iter().find(|c| c.id == id).unwrap();
    assert!(
        matches!(
            of(small).status,
            CompletionStatus::Failed(FailReason::BadAddress { .. })
        ),
        "{:?}",
        of(small)
    );
    assert!(of(small).dest_invalid);
    assert!(matches!(
        of(unroutable).status,
        CompletionStatus::Failed(FailReason::Unroutable {
            count: 1,
            first: 100
        })
    ));
    assert_eq!(of(ok_cmd).status, CompletionStatus::Success);
    let s = nic.stats();
    assert_eq!(s.writes_refused, 1);
    assert_eq!(s.prs_unroutable, 1);
    // The small buffer is untouched; the good one holds idx 40 only.
    assert!(nic
        .memory()
        .data(0x9000_0000)
        .unwrap()
        .iter()
        .all(|b| *b == 0));
    check_destination(&nic, &[40].into_iter().collect(), 64, PROP);
}

#[test]
fn config_errors_and_foreign_programs_are_reported() {
    let art = nic_program(&[]);
    let bad = NicConfig {
        client_units: 40,
        ..NicConfig::default()
    };
    let e = Nic::new(&art, bad, DenseMemory::new()).unwrap_err();
    assert!(e.to_string().contains("client_units"), "{e}");
    // A v1model artifact is not a NIC program.
    let mut v1 = art.clone();
    v1.arch = netsparse_externs::artifact::Arch::V1Model;
    let e = Nic::new(&v1, NicConfig::default(), DenseMemory::new()).unwrap_err();
    assert!(e.to_string().contains("NetSparseNic"), "{e}");
    // Partitions must be N + 1 non-decreasing bounds from 0.
    let mut nic = Nic::new(&art, NicConfig::default(), DenseMemory::new()).unwrap();
    assert!(nic.install_partition(&[0]).is_err());
    assert!(nic.install_partition(&[0, 10, 5]).is_err());
    assert!(nic.install_partition(&[0, 10, 10, 20]).is_ok());
    // Serving a slice that is not registered is refused.
    let s = netsparse_nic::PropertySlice {
        base_addr: 0x100,
        first_idx: 0,
        count: 4,
        prop_len: 8,
    };
    assert!(nic.serve_properties(s).is_err());
    let _ = expected(&[], &[0, 1], 0);
    let _ = matrix(8, 1, 1, 1);
}
