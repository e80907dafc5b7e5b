//! Benchmarks of the hardware units.
//!
//! * `middle_pipe/k16_{wide,hot}`: the per-PR work of one NetSparse middle pipe with
//!   K = 16 (64-byte properties): deconcatenate a frame, Property Cache
//!   insert (responses) or lookup (reads; a hit becomes a response to the
//!   requester), concatenate per (type, destination, port) and build the
//!   output frames. Throughput is in PRs. Target: ≥ 20,000,000 PRs/s.
//!   Half the reads hit. "wide" touches 65,536 idxs (cache state beyond
//!   the CPU's L2, so memory latency dominates); "hot" 4,096.
//! * `concat/push_k16_{runs,scattered}`: the Concatenator alone (82-byte
//!   response PRs over 128 destinations).
//! * `wire/parse_full_frame`: `Frame::parse` of a full 17-PR response frame
//!   plus iterating its PRs.
//!
//! Run: `CARGO_TARGET_DIR=/work/target-externs cargo bench -p netsparse-externs --bench units`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsparse_externs::cache::{CacheConfig, CacheMode, PropertyCache};
use netsparse_externs::concat::{ConcatConfig, Concatenator, CqKey, Flushed};
use netsparse_externs::deconcat::Deconcatenator;
use netsparse_externs::hash::SplitMix64;
use netsparse_externs::wire::{DeviceAddr, Frame, FrameBuilder, FrameHeader, PrRepr, PrType};
use netsparse_externs::Time;

const K: u32 = 16;
const PROP: u32 = K * 4;
const RACK: u32 = 16;
const NODES: u32 = 128;
/// How many PRs ahead the middle pipe prefetches cache sets (and half as
/// many ahead, the property bytes of hits).
const PREFETCH_AHEAD: usize = 8;
/// Distinct idxs of the "wide" trace: 65,536 properties, about 7 MB of
/// cache state touched at random (beyond the CPU's L2).
const IDXS_WIDE: u64 = 1 << 16;
/// Distinct idxs of the "hot" trace (cache state fits the CPU's L2).
const IDXS_HOT: u64 = 1 << 12;

/// One middle pipe: Deconcatenator, Property Cache, Concatenator, and the
/// buffer output frames are built into.
struct MiddlePipe {
    de: Deconcatenator,
    cache: PropertyCache,
    cat: Concatenator,
    out: Vec<u8>,
    frames_out: u64,
    psn: u32,
}

fn emit_frame(out: &mut Vec<u8>, frames_out: &mut u64, psn: &mut u32, f: Flushed<'_>) {
    if f.write_frame(out, DeviceAddr::Switch(0), *psn).is_ok() {
        *frames_out += 1;
    }
    *psn = psn.wrapping_add(1);
}

impl MiddlePipe {
    fn new() -> MiddlePipe {
        MiddlePipe {
            de: Deconcatenator::default(),
            cache: PropertyCache::new(
                CacheConfig::table5(),
                CacheMode::new(PROP).expect("valid mode"),
            )
            .expect("valid geometry"),
            cat: Concatenator::new(ConcatConfig::switch_default()).expect("valid config"),
            out: Vec::with_capacity(1 << 20),
            frames_out: 0,
            psn: 0,
        }
    }

    /// Process one frame that arrived on `in_port` at `now`.
    fn on_frame(&mut self, now: Time, in_port: u32, frame: &[u8]) {
        let MiddlePipe {
            de,
            cache,
            cat,
            out,
            frames_out,
            psn,
        } = self;
        let mut sink = |f: Flushed<'_>| emit_frame(out, frames_out, psn, f);
        let Ok(d) = de.frame(frame) else {
            return;
        };
        let c = d.concat;
        match c.pr_type {
            PrType::Response => {
                let key = CqKey {
                    pr_type: PrType::Response,
                    dst: c.dst,
                    port: c.dst % RACK,
                };
                let mut ahead = d.prs.clone().skip(PREFETCH_AHEAD);
                for pr in d.prs {
                    if let Some(next) = ahead.next() {
                        cache.prefetch(next.idx);
                    }
                    let _ = cache.insert(now, pr.idx, pr.payload);
                    let _ = cat.push_raw(now, key, c.prop_len, pr.raw, &mut sink);
                }
            }
            PrType::Read => {
                let miss_key = CqKey {
                    pr_type: PrType::Read,
                    dst: c.dst,
                    port: RACK + c.dst % RACK,
                };
                let mut ahead = d.prs.clone().skip(PREFETCH_AHEAD);
                let mut near = d.prs.clone().skip(PREFETCH_AHEAD / 2);
                for pr in d.prs {
                    if let Some(next) = ahead.next() {
                        cache.prefetch(next.idx);
                    }
                    if let Some(next) = near.next() {
                        cache.prefetch_line(next.idx);
                    }
                    match cache.lookup(now, pr.idx).hit {
                        Some(prop) => {
                            let key = CqKey {
                                pr_type: PrType::Response,
                                dst: pr.src,
                                port: in_port,
                            };
                            let _ = cat.push(now, key, c.prop_len, &pr.repr(), prop, &mut sink);
                        }
                        None => {
                            let _ = cat.push_raw(now, miss_key, c.prop_len, pr.raw, &mut sink);
                        }
                    }
                }
            }
        }
    }

    fn on_timer(&mut self, now: Time) {
        let MiddlePipe {
            cat,
            out,
            frames_out,
            psn,
            ..
        } = self;
        cat.on_timer(now, |f| emit_frame(out, frames_out, psn, f));
    }
}

/// A trace of full frames: responses from remote nodes into the rack and
/// reads from rack nodes to remote nodes, alternating; idxs below `idxs`.
fn trace(frames: usize, idxs: u64) -> (Vec<Vec<u8>>, u64) {
    let mut rng = SplitMix64::new(1);
    let mut out = Vec::with_capacity(frames);
    let mut prs = 0;
    let mut inserted: Vec<u64> = Vec::new();
    let payload = [0x5au8; PROP as usize];
    for i in 0..frames {
        let (pr_type, src, dst) = if i % 2 == 0 {
            (
                PrType::Response,
                RACK + (rng.next_u64() % u64::from(NODES - RACK)) as u32,
                (rng.next_u64() % u64::from(RACK)) as u32,
            )
        } else {
            (
                PrType::Read,
                (rng.next_u64() % u64::from(RACK)) as u32,
                RACK + (rng.next_u64() % u64::from(NODES - RACK)) as u32,
            )
        };
        let h = FrameHeader::netsparse(DeviceAddr::Node(src), dst, i as u32).expect("ids in range");
        let mut buf = Vec::new();
        let mut b = FrameBuilder::begin(&mut buf, &h, pr_type, dst, PROP, 1500).expect("fits");
        // Full packets: 17 responses or 80 reads. Half the reads ask for an
        // idx some response of the trace carries (they hit once the cache is
        // warm), half for a uniform idx (they mostly miss).
        while b.remaining_prs() > 0 {
            let idx = if pr_type == PrType::Read && !inserted.is_empty() && rng.next_u64() % 2 == 0
            {
                inserted[(rng.next_u64() % inserted.len() as u64) as usize]
            } else {
                rng.next_u64() % idxs
            };
            if pr_type == PrType::Response {
                inserted.push(idx);
            }
            let pr = PrRepr {
                src: if pr_type == PrType::Read { src } else { dst },
                tid: 0,
                idx,
                req_id: prs as u32,
            };
            let p: &[u8] = if pr_type == PrType::Response {
                &payload
            } else {
                &[]
            };
            b.push_pr(&pr, p).expect("room checked");
            prs += 1;
        }
        b.finish();
        out.push(buf);
    }
    (out, prs)
}

fn middle_pipe(c: &mut Criterion) {
    let mut g = c.benchmark_group("middle_pipe");
    for (name, idxs) in [("k16_wide", IDXS_WIDE), ("k16_hot", IDXS_HOT)] {
        let (frames, prs) = trace(512, idxs);
        let mut pipe = MiddlePipe::new();
        // Warm the cache.
        let mut now = Time::ZERO;
        let step = Time::from_ns(30); // one 1500 B frame at 400 Gb/s
        for (i, f) in frames.iter().enumerate() {
            pipe.on_frame(now, (i % 16) as u32, f);
            now += step;
        }
        g.throughput(Throughput::Elements(prs));
        g.bench_function(name, |b| {
            b.iter(|| {
                for (i, f) in frames.iter().enumerate() {
                    // The driver consumes the output frames of each call.
                    pipe.out.clear();
                    now += step;
                    if pipe.cat.next_deadline().is_some_and(|d| d <= now) {
                        pipe.on_timer(now);
                    }
                    pipe.on_frame(now, (i % 16) as u32, black_box(f));
                }
                black_box(pipe.frames_out)
            })
        });
        let s = pipe.cache.stats();
        eprintln!(
            "middle_pipe/{name}: {prs} PRs per iteration; cache hits {} / lookups {}; frames in {} out {}; malformed {}",
            s.hits,
            s.lookups,
            pipe.de.stats().packets,
            pipe.frames_out,
            pipe.de.stats().malformed()
        );
    }
    g.finish();
}

fn concat_push(c: &mut Criterion) {
    let payload = [0u8; PROP as usize];
    let n: u64 = 100_000;
    let mut rng = SplitMix64::new(2);
    let mut g = c.benchmark_group("concat");
    g.throughput(Throughput::Elements(n));
    // "runs": PRs arrive in runs of 17 for one destination (deconcatenated
    // packets); "scattered": every PR to a random one of 128 destinations,
    // so most CQs expire holding one PR (the worst case: one open and one
    // flush per PR).
    for (name, run) in [("push_k16_runs", 17u64), ("push_k16_scattered", 1)] {
        let dsts: Vec<u32> = (0..n / run)
            .flat_map(|_| {
                let d = (rng.next_u64() % u64::from(NODES)) as u32;
                (0..run).map(move |_| d)
            })
            .collect();
        let mut cat = Concatenator::new(ConcatConfig::switch_default()).expect("valid config");
        let mut now = Time::ZERO;
        let mut bytes = 0usize;
        g.bench_function(name, |b| {
            b.iter(|| {
                for (i, &dst) in dsts.iter().enumerate() {
                    now += Time::from_ps(500);
                    let key = CqKey {
                        pr_type: PrType::Response,
                        dst,
                        port: dst % 32,
                    };
                    let pr = PrRepr {
                        src: 1,
                        tid: 0,
                        idx: i as u64,
                        req_id: 0,
                    };
                    let _ = cat.push(now, key, PROP, &pr, &payload, |f| bytes += f.prs.len());
                }
                black_box(bytes)
            })
        });
        eprintln!("concat/{name}: {} PRs pushed in total", cat.stats().prs_in);
    }
    g.finish();
}

fn wire_parse(c: &mut Criterion) {
    let (frames, _) = trace(1, IDXS_HOT);
    let frame = &frames[0];
    let mut g = c.benchmark_group("wire");
    g.throughput(Throughput::Elements(1));
    g.bench_function("parse_full_frame", |b| {
        b.iter(|| {
            let f = Frame::parse(black_box(frame)).expect("valid frame");
            let mut x = 0u64;
            for p in f.prs() {
                x ^= p.idx ^ u64::from(p.payload[0]);
            }
            black_box(x)
        })
    });
    g.finish();
}

criterion_group!(benches, middle_pipe, concat_push, wire_parse);
criterion_main!(benches);
