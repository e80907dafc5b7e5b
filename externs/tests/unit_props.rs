//! Property tests of the queues and the cache: the Concatenator neither loses
//! nor duplicates PRs, respects the MTU and the delay, and virtual CQs carry
//! the same PRs as physical ones; the Property Cache behaves like a
//! reference LRU model.

use std::collections::BTreeMap;

use netsparse_externs::cache::{
    CacheCapacity, CacheConfig, CacheMode, InsertOutcome, PropertyCache, SEGMENTS,
};
use netsparse_externs::concat::{
    ConcatConfig, Concatenator, CqKey, FlushReason, Flushed, VirtualCqConfig,
};
use netsparse_externs::wire::{ConcatPacket, ConcatRepr, PrRepr, PrType};
use netsparse_externs::Time;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Advance time by `dt` ns, then push a PR.
    Push {
        dt: u64,
        read: bool,
        dst: u32,
        port: u32,
        big: bool,
    },
    /// Advance time by `dt` ns and service timers.
    Tick { dt: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    // Dense arrivals over few keys, so CQs often fill (17 responses of 64 B,
    // 80 reads) as well as expire.
    let dt = prop_oneof![6 => Just(0u64), 2 => 0u64..4, 1 => 0u64..400];
    prop_oneof![
        12 => (dt, prop::bool::weighted(0.3), 0u32..3, 0u32..2, prop::bool::weighted(0.1))
            .prop_map(|(dt, read, dst, port, big)| Op::Push { dt, read, dst, port, big }),
        1 => (0u64..2000).prop_map(|dt| Op::Tick { dt }),
    ]
}

/// One PR that left, as seen by the checker.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct OutPr {
    key: CqKey,
    prop_len: u32,
    idx: u64,
    payload: Vec<u8>,
}

struct Run {
    outs: Vec<OutPr>,
    /// (flush time, idx) in flush order.
    times: Vec<(Time, u64)>,
    max_ip_len: usize,
    reasons: Vec<FlushReason>,
}

fn record(run: &mut Run) -> impl FnMut(Flushed<'_>) + '_ {
    move |f| {
        let mut layer = ConcatRepr {
            pr_type: f.key.pr_type,
            dst: f.key.dst,
            prop_len: f.prop_len,
            num_prs: f.num_prs,
        }
        .to_bytes()
        .to_vec();
        layer.extend_from_slice(f.prs);
        let p = ConcatPacket::new_checked(&layer[..]).expect("a flushed CQ is a valid layer");
        run.max_ip_len = run.max_ip_len.max(40 + layer.len());
        run.reasons.push(f.reason);
        for v in p.prs() {
            run.times.push((f.at, v.idx));
            run.outs.push(OutPr {
                key: f.key,
                prop_len: f.prop_len,
                idx: v.idx,
                payload: v.payload.to_vec(),
            });
        }
    }
}

const DELAY_NS: u64 = 1000;

/// Replay `ops` on a Concatenator, servicing timers exactly at their
/// deadlines. Returns what came out and what went in (idx → (arrival, PR)).
fn replay(cfg: ConcatConfig, ops: &[Op]) -> (Run, BTreeMap<u64, (Time, OutPr)>) {
    let mut c = Concatenator::new(cfg).expect("valid config");
    let mut run = Run {
        outs: Vec::new(),
        times: Vec::new(),
        max_ip_len: 0,
        reasons: Vec::new(),
    };
    let mut ins = BTreeMap::new();
    let mut now = Time::ZERO;
    for (i, op) in ops.iter().enumerate() {
        let dt = match op {
            Op::Push { dt, .. } | Op::Tick { dt } => *dt,
        };
        let target = now + Time::from_ns(dt);
        while let Some(d) = c.next_deadline() {
            if d > target {
                break;
            }
            c.on_timer(d, record(&mut run));
        }
        now = target;
        if let Op::Push {
            read,
            dst,
            port,
            big,
            ..
        } = *op
        {
            let pr_type = if read { PrType::Read } else { PrType::Response };
            let prop_len = if big { 512 } else { 64 };
            let key = CqKey { pr_type, dst, port };
            let idx = i as u64;
            let payload: Vec<u8> = if read {
                Vec::new()
            } else {
                (0..prop_len).map(|b| (b as u64 ^ idx) as u8).collect()
            };
            let pr = PrRepr {
                src: 7,
                tid: 1,
                idx,
                req_id: i as u32,
            };
            c.push(now, key, prop_len, &pr, &payload, record(&mut run))
                .expect("valid PR");
            ins.insert(
                idx,
                (
                    now,
                    OutPr {
                        key,
                        prop_len,
                        idx,
                        payload,
                    },
                ),
            );
        } else {
            c.on_timer(now, record(&mut run));
        }
    }
    c.flush_all(record(&mut run));
    assert_eq!(c.next_deadline(), None);
    assert_eq!(c.open_queues(), 0);
    assert_eq!(c.stats().prs_in, c.stats().prs_out);
    (run, ins)
}

fn phys() -> ConcatConfig {
    ConcatConfig {
        mtu: 1500,
        delay: Time::from_ns(DELAY_NS),
        max_queues: 64,
        virtual_cqs: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn concatenator_conserves_prs_and_bounds(ops in prop::collection::vec(op(), 0..400)) {
        let (run, ins) = replay(phys(), &ops);
        // Multiset out == multiset in (idxs are unique, so compare sorted lists).
        let mut outs = run.outs.clone();
        outs.sort();
        let mut expected: Vec<OutPr> = ins.values().map(|(_, p)| p.clone()).collect();
        expected.sort();
        prop_assert_eq!(outs, expected);
        // Every packet fits the MTU.
        prop_assert!(run.max_ip_len <= 1500, "{}", run.max_ip_len);
        // No PR waits longer than the delay (timers are serviced at their
        // deadlines, and the final flush_all comes before any deadline).
        for (at, idx) in &run.times {
            let (arrival, _) = ins[idx];
            prop_assert!(*at >= arrival);
            prop_assert!(*at - arrival <= Time::from_ns(DELAY_NS), "idx {} waited {}", idx, *at - arrival);
        }
        // Per key, PRs leave in arrival order.
        let mut last: BTreeMap<CqKey, u64> = BTreeMap::new();
        for o in &run.outs {
            if let Some(prev) = last.insert(o.key, o.idx) {
                prop_assert!(prev < o.idx);
            }
        }
    }

    #[test]
    fn virtual_cqs_carry_the_same_prs(ops in prop::collection::vec(op(), 0..400), chunks in 12usize..40) {
        let (prun, _) = replay(phys(), &ops);
        let vcfg = ConcatConfig {
            virtual_cqs: Some(VirtualCqConfig { chunk_bytes: 128, chunks }),
            ..phys()
        };
        let (vrun, ins) = replay(vcfg, &ops);
        let mut p = prun.outs;
        let mut v = vrun.outs;
        p.sort();
        v.sort();
        prop_assert_eq!(&p, &v);
        prop_assert_eq!(v.len(), ins.len());
        prop_assert!(vrun.max_ip_len <= 1500);
    }
}

/// The generator above exercises every flush reason (so the properties
/// are checked on full, expired and property-length flushes alike).
#[test]
fn op_generator_covers_every_flush_reason() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = prop::collection::vec(op(), 300..400);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let ops = strategy.new_tree(&mut runner).expect("generate").current();
        let (run, _) = replay(phys(), &ops);
        seen.extend(run.reasons.iter().map(|r| format!("{r:?}")));
    }
    for r in ["Full", "Expired", "PropLenChange", "Forced"] {
        assert!(seen.contains(r), "{r} never happened: {seen:?}");
    }
}

/// A reference set-associative LRU cache: per (group, set) a recency list of full idxs.
struct Model {
    sets: u64,
    ways: usize,
    g: u32,
    lists: BTreeMap<u64, Vec<u64>>,
}

impl Model {
    fn set_of(&self, idx: u64) -> u64 {
        let set = idx % self.sets;
        let seg = (idx / self.sets) % u64::from(SEGMENTS);
        (seg >> self.g) * self.sets + set
    }
    fn lookup(&mut self, idx: u64) -> bool {
        let s = self.set_of(idx);
        let l = self.lists.entry(s).or_default();
        if let Some(p) = l.iter().position(|&x| x == idx) {
            let x = l.remove(p);
            l.insert(0, x);
            true
        } else {
            false
        }
    }
    fn insert(&mut self, idx: u64) -> InsertOutcome {
        if self.lookup(idx) {
            return InsertOutcome::Present;
        }
        let ways = self.ways;
        let s = self.set_of(idx);
        let l = self.lists.entry(s).or_default();
        l.insert(0, idx);
        if l.len() > ways {
            InsertOutcome::Evicted(l.pop().expect("non-empty"))
        } else {
            InsertOutcome::Inserted
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn cache_matches_reference_lru(
        mode_log in 0u32..6,
        ways in 1u32..5,
        sets_log in 0u32..3,
        ops in prop::collection::vec((any::<bool>(), 0u64..400, any::<bool>()), 1..400),
    ) {
        let m = 16u32 << mode_log;
        let sets = 1u64 << sets_log;
        let mode = CacheMode::new(m).unwrap();
        let cfg = CacheConfig {
            capacity: CacheCapacity::Bytes(512 * u64::from(ways) * sets),
            ways,
            latency: Time::from_ns(8),
        };
        let mut c = PropertyCache::new(cfg, mode).unwrap();
        let mut model = Model { sets, ways: ways as usize, g: mode.ignored_segment_bits(), lists: BTreeMap::new() };
        for (insert, small, high) in ops {
            // Mix small idxs with idxs that differ only in high tag bits.
            let idx = if high { small | (0xABCD << 40) } else { small };
            let data: Vec<u8> = (0..m).map(|i| (idx as u32 ^ i) as u8).collect();
            if insert {
                prop_assert_eq!(c.insert(Time::ZERO, idx, &data), Ok(model.insert(idx)));
            } else {
                let hit = c.lookup(Time::ZERO, idx).hit.map(<[u8]>::to_vec);
                let expect = model.lookup(idx);
                prop_assert_eq!(hit.is_some(), expect, "idx {}", idx);
                if let Some(h) = hit {
                    prop_assert_eq!(h, data);
                }
            }
        }
        let cached: u64 = model.lists.values().map(|l| l.len() as u64).sum();
        prop_assert_eq!(c.occupancy(), cached);
        let s = c.stats();
        prop_assert_eq!(s.lookups, s.hits + s.misses);
    }
}
