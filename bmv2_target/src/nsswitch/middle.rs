//! A middle pipe (§6.2.1): the Deconcatenator splits a NetSparse packet
//! into PRs, the engine's per-PR path runner runs the per-packet part of
//! the middle control once and the per-PR part once per PR with the pipe's
//! Property Cache as its target primitives (`Lookup`, `Insert`), and every
//! PR that survives is checked and handed to the Concatenator.

use netsparse_externs::artifact::{coll_status, Prim};
use netsparse_externs::cache::PropertyCache;
use netsparse_externs::coll::CollUnit;
use netsparse_externs::concat::{CqKey, Flushed};
use netsparse_externs::wire::{Frame, PrType, WireError, MAX_NODE_ID};
use netsparse_externs::Time;

use netsparse_engine::program::{TargetCall, TargetPrims, TargetResult};
use netsparse_engine::prpath::PrMeta;
use netsparse_engine::PacketState;

use super::egress::build;
use super::{NsSwitch, Pipe, ProgramErrors};

/// PRs ahead of the current one whose cache set is prefetched.
const PREFETCH_SET: usize = 8;
/// PRs ahead of the current read whose cached property is prefetched.
const PREFETCH_LINE: usize = 4;

/// Where the PR's payload comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    /// A read: none.
    None,
    /// The response's own property.
    Own,
    /// The property a cache hit attached.
    Cached,
}

/// The target primitives of the per-PR part: the pipe's Property Cache.
struct PrPrims<'a> {
    cache: &'a mut PropertyCache,
    /// The packet's property length is not the cache's mode: lookups miss
    /// and inserts store nothing.
    bypass: bool,
    now: Time,
    idx: usize,
    /// The packet's property length (a hit's segment may be longer: short
    /// properties are padded in the 16-byte mode).
    prop_len: usize,
    own: &'a [u8],
    payload: Payload,
    hit: &'a mut Vec<u8>,
    errors: &'a mut ProgramErrors,
    /// The collective unit, when configured.
    coll: Option<&'a mut CollUnit>,
}

impl TargetPrims for PrPrims<'_> {
    fn call(&mut self, st: &mut PacketState, call: TargetCall<'_>) -> TargetResult {
        match call.prim {
            Prim::CacheLookup { .. } => {
                if self.bypass {
                    return TargetResult::Value(0);
                }
                let idx = st.n[self.idx];
                match self.cache.lookup(self.now, idx).hit {
                    Some(p) => {
                        copy_property(self.hit, &p[..self.prop_len.min(p.len())]);
                        self.payload = Payload::Cached;
                        TargetResult::Value(1)
                    }
                    None => TargetResult::Value(0),
                }
            }
            Prim::CacheInsert { .. } => {
                let idx = st.n[self.idx];
                let data: &[u8] = match self.payload {
                    Payload::Own => self.own,
                    Payload::Cached => self.hit,
                    Payload::None => {
                        self.errors.insert_without_payload += 1;
                        return TargetResult::Done;
                    }
                };
                if self.bypass || self.cache.capacity() == Some(0) {
                    // Another length, or switched off: nothing is stored.
                    return TargetResult::Done;
                }
                // A wrong length is counted by the cache (`wrong_length`);
                // the switch checked the packet's length against the mode.
                let _ = self.cache.insert(self.now, idx, data);
                TargetResult::Done
            }
            Prim::Coll { op, .. } => {
                let Some(unit) = self.coll.as_deref_mut() else {
                    self.errors.unsupported += 1;
                    return TargetResult::Value(u128::from(coll_status::REFUSED));
                };
                // The block is the PR's own payload (a cache hit does not
                // make one).
                match unit.call(*op, call.args, self.own) {
                    Some(v) => TargetResult::Value(u128::from(v)),
                    None => TargetResult::Done,
                }
            }
            _ => {
                self.errors.unsupported += 1;
                TargetResult::Value(0)
            }
        }
    }
}

/// `dst = src` for a property (a multiple of 16 bytes, as every cache mode
/// is), in 16-byte moves the compiler inlines: no library call per hit.
#[inline]
fn copy_property(dst: &mut Vec<u8>, src: &[u8]) {
    dst.resize(src.len(), 0);
    let mut d = dst.chunks_exact_mut(16);
    let mut s = src.chunks_exact(16);
    for (d, s) in d.by_ref().zip(s.by_ref()) {
        let w: [u8; 16] = s.try_into().unwrap_or([0; 16]);
        d.copy_from_slice(&w);
    }
    d.into_remainder().copy_from_slice(s.remainder());
}

/// The target primitives outside the per-PR part: none (the compiler
/// rejects cache calls there); anything that gets here is counted.
struct NoPrims<'a> {
    errors: &'a mut ProgramErrors,
}

impl TargetPrims for NoPrims<'_> {
    fn call(&mut self, _st: &mut PacketState, _call: TargetCall<'_>) -> TargetResult {
        self.errors.unsupported += 1;
        TargetResult::Value(0)
    }
}

impl NsSwitch {
    /// Middle pipe `m` over a NetSparse packet, as crossbar 1 parsed it.
    pub(super) fn middle(
        &mut self,
        m: usize,
        now: Time,
        in_port: u32,
        spec: u32,
        parsed: Result<Frame<'_>, WireError>,
    ) {
        let NsSwitch {
            prog,
            path,
            has_cache,
            origin,
            cfg,
            pipes,
            mst,
            hit,
            coll,
            ..
        } = self;
        let Pipe {
            deconcat,
            cache,
            concat,
            built,
            free_at,
            pool,
            framer,
            c: pc,
            bc,
            ..
        } = &mut pipes[m];
        let d = match deconcat.parsed(parsed) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(
                    "middle pipe {m}: dropped a malformed NetSparse packet from port {in_port}: {e}"
                );
                return;
            }
        };
        let c = d.concat;
        // The cache holds properties of its mode's length. PRs of another
        // length (another kernel's, RDMA verbs' 1 KiB chunks) cross the pipe
        // without it: the program runs, every `Lookup` misses and every
        // `Insert` stores nothing. A switched-off cache stores nothing at all.
        let cache_on = *has_cache && cache.capacity() != Some(0);
        let bypass = cache_on && !cache.mode().holds(c.prop_len);
        if bypass {
            pc.cache_bypass += 1;
            if cfg.trace {
                tracing::info!(
                    "middle pipe {m}: property length {} is not the cache mode ({} bytes): the PRs bypass the cache",
                    c.prop_len,
                    cache.mode().bytes()
                );
            }
        }
        pc.netsparse_packets += 1;
        pc.prs_in += u64::from(c.num_prs);
        let md = PrMeta {
            pr_type: u64::from(c.pr_type.as_u16()),
            dst: u64::from(c.dst),
            prop_len: u64::from(c.prop_len),
            ingress_port: u64::from(in_port),
            egress_port: u64::from(spec),
        };
        let mut t = NoPrims {
            errors: &mut pc.errors,
        };
        if !path.begin(prog, mst, md, |_, _| {}, &mut t) {
            pc.packets_dropped += 1;
            pc.prs_dropped += u64::from(c.num_prs);
            return;
        }
        // The rate limit: PR `i` enters the pipe `i` PR times after the
        // packet's turn comes (the pipe may still be busy with earlier
        // packets); without a limit every PR enters at `now`.
        let step = cfg.pr_time();
        let start = if step == Time::ZERO {
            now
        } else {
            let start = now.max(*free_at);
            let wait = (start - now).as_ps();
            pc.wait_ps += wait;
            pc.max_wait_ps = pc.max_wait_ps.max(wait);
            let busy = Time::from_ps(step.as_ps().saturating_mul(u64::from(c.num_prs)));
            *free_at = start + busy;
            pc.busy_ps += busy.as_ps();
            start
        };
        let is_read = path.packet_md().pr_type == u64::from(PrType::Read.as_u16());
        let idx_slot = path.pr_slots().idx;
        let ports = u64::from(cfg.ports);
        let prop_len = u64::from(c.prop_len);
        let o = *origin;
        let mut sink = |f: Flushed<'_>| build(f, &o, framer, bc, pool, built);
        // The idx of PR `i`, for prefetching (`None` past the last).
        let all = d.prs.clone();
        let idx_at = |i: usize| all.get(i).map(|v| v.idx);
        let prefetch = !bypass && *has_cache && cache.capacity().is_none_or(|c| c > 0);
        if prefetch {
            for i in 0..PREFETCH_SET {
                if let Some(idx) = idx_at(i) {
                    cache.prefetch(idx);
                }
            }
        }
        for (i, v) in d.prs.enumerate() {
            let now = if step == Time::ZERO {
                now
            } else {
                start + Time::from_ps(step.as_ps().saturating_mul(i as u64))
            };
            if prefetch {
                if let Some(idx) = idx_at(i + PREFETCH_SET) {
                    cache.prefetch(idx);
                }
                if PREFETCH_LINE > 0 && is_read {
                    if let Some(idx) = idx_at(i + PREFETCH_LINE) {
                        cache.prefetch_line(idx);
                    }
                }
            }
            let mut t = PrPrims {
                cache,
                bypass,
                now,
                idx: idx_slot,
                prop_len: c.prop_len as usize,
                own: v.payload,
                payload: if v.payload.is_empty() {
                    Payload::None
                } else {
                    Payload::Own
                },
                hit,
                errors: &mut pc.errors,
                coll: coll.as_deref_mut().map(|c| &mut c.unit),
            };
            let repr = v.repr();
            let out = path.run_pr(prog, mst, &repr, |_, _| {}, &mut t);
            let payload = t.payload;
            if let Some(c) = coll.as_deref_mut().filter(|c| c.unit.has_actions()) {
                // The broadcasts leave through this pipe's Concatenator;
                // each originated PR occupies the pipe one PR time.
                let sent = c.broadcast(now, concat, &mut sink);
                if step != Time::ZERO {
                    let busy = Time::from_ps(step.as_ps().saturating_mul(sent));
                    *free_at = (*free_at).max(now) + busy;
                    pc.busy_ps += busy.as_ps();
                }
            }
            if out.dropped {
                pc.prs_dropped += 1;
                continue;
            }
            if out.md.prop_len != prop_len {
                pc.errors.prop_len_changed += 1;
                continue;
            }
            let pr_type = match out.md.pr_type {
                1 => PrType::Read,
                2 => PrType::Response,
                _ => {
                    pc.errors.bad_type += 1;
                    continue;
                }
            };
            let body: &[u8] = match (pr_type, payload) {
                (PrType::Read, Payload::None) => &[],
                (PrType::Response, Payload::Own) => v.payload,
                (PrType::Response, Payload::Cached) => &hit[..],
                (PrType::Response, Payload::None) => {
                    pc.errors.response_without_payload += 1;
                    continue;
                }
                (PrType::Read, _) => {
                    pc.errors.read_with_payload += 1;
                    continue;
                }
            };
            let port = out.md.egress_port;
            if port >= ports {
                pc.errors.bad_port += 1;
                continue;
            }
            let dst = out.md.dst;
            if dst > u64::from(MAX_NODE_ID) {
                pc.errors.unaddressable += 1;
                continue;
            }
            let key = CqKey {
                pr_type,
                dst: dst as u32,
                port: port as u32,
            };
            let r = if payload != Payload::Cached && out.pr == repr {
                concat.push_raw(now, key, c.prop_len, v.raw, &mut sink)
            } else {
                concat.push(now, key, c.prop_len, &out.pr, body, &mut sink)
            };
            if r.is_err() {
                pc.errors.rejected += 1;
            }
        }
    }
}
