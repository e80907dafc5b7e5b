//! Counters of the NetSparse switch, per pipe, that a user (the CLI summary
//! and JSON) or the simulator reads after a run.
//!
//! Pipe `g` counts the frames received on its ports (its ingress pipe), the
//! work of middle pipe `g` (PRs, cache, Concatenation Queues, malformed
//! packets, program errors) and the frames sent on its ports (its egress
//! pipe). `NsSwitch::stats` and `NsSwitch::reset_stats` gather them from
//! the pipes and their units.

use std::fmt::Write as _;

use serde::Serialize;

use super::{BuildCounters, Counters, NsSwitch};
use crate::EngineStats;

/// Cache counters of one middle pipe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheCounters {
    /// Lookups.
    pub lookups: u64,
    /// Lookups that hit.
    pub hits: u64,
    /// Lookups that missed.
    pub misses: u64,
    /// Inserts that stored a new property.
    pub inserts: u64,
    /// Inserts that evicted another property.
    pub evictions: u64,
    /// Inserts that found the property cached already.
    pub present: u64,
    /// Control-plane invalidations.
    pub invalidations: u64,
    /// Properties cached at the time of the snapshot.
    pub occupancy: u64,
}

/// Why Concatenation Queues left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlushCounters {
    /// Reached the MTU.
    pub full: u64,
    /// Their first PR waited DelayCycles.
    pub expired: u64,
    /// Forced out (end of input, control plane).
    pub forced: u64,
    /// A PR with another property length arrived for the queue's key.
    pub prop_len_change: u64,
    /// Evicted because `max_queues` queues (or the virtual-CQ pool) were in use.
    pub evicted: u64,
}

/// Malformed NetSparse packets dropped by a middle pipe, by kind (the
/// Deconcatenator's validation, plus the cache-mode check).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MalformedCounters {
    /// Cut short inside a header or a PR.
    pub truncated: u64,
    /// Bad IPv4/UDP framing (lengths, fragments, header checksum).
    pub bad_ip: u64,
    /// A concatenation-header type that is neither read nor response.
    pub unknown_type: u64,
    /// A PR count that overruns the packet.
    pub count_overrun: u64,
    /// Bytes after the last PR.
    pub trailing_bytes: u64,
    /// Read PRs carrying payloads.
    pub read_with_payload: u64,
    /// Property length 0 on a response, or above what fits the MTU.
    pub bad_prop_len: u64,
    /// No PRs.
    pub empty: u64,
}

impl MalformedCounters {
    /// Every malformed packet.
    pub fn total(&self) -> u64 {
        self.truncated
            + self.bad_ip
            + self.unknown_type
            + self.count_overrun
            + self.trailing_bytes
            + self.read_with_payload
            + self.bad_prop_len
            + self.empty
    }
}

/// Inconsistent results of the middle-pipe program; each drops the PR (or
/// the packet) concerned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProgramErrors {
    /// A PR that leaves as a response without a property (its type was
    /// changed without a cache hit).
    pub response_without_payload: u64,
    /// A PR that leaves as a read with a property (a hit whose type was not
    /// changed, or a response turned into a read).
    pub read_with_payload: u64,
    /// A PR type other than read (1) or response (2) at `Concatenate`.
    pub bad_type: u64,
    /// An egress port that does not exist.
    pub bad_port: u64,
    /// `md.prop_len` changed (the packet's property length is fixed).
    pub prop_len_changed: u64,
    /// `Insert` on a PR without a property.
    pub insert_without_payload: u64,
    /// A destination node outside the addressing convention (the packet
    /// cannot be built).
    pub unaddressable: u64,
    /// A primitive this target does not provide.
    pub unsupported: u64,
    /// PRs the Concatenator refused (they do not fit the MTU).
    pub rejected: u64,
}

impl ProgramErrors {
    /// Every program error.
    pub fn total(&self) -> u64 {
        self.response_without_payload
            + self.read_with_payload
            + self.bad_type
            + self.bad_port
            + self.prop_len_changed
            + self.insert_without_payload
            + self.unaddressable
            + self.unsupported
            + self.rejected
    }
}

/// The counters of pipe `pipe` (its ingress, middle and egress pipes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PipeStats {
    /// Pipe index.
    pub pipe: u32,
    /// Frames received on the pipe's ports.
    pub packets_in: u64,
    /// Bytes received on the pipe's ports.
    pub bytes_in: u64,
    /// Frames sent on the pipe's ports.
    pub packets_out: u64,
    /// Bytes sent on the pipe's ports.
    pub bytes_out: u64,
    /// Received frames shorter than Ethernet or longer than `max_frame`.
    pub rx_malformed: u64,
    /// Ingress parser errors (the packet continues to the ingress control).
    pub ingress_parser_errors: u64,
    /// Dropped by the ingress control (`md.drop`).
    pub ingress_drops: u64,
    /// Ingress chose an `egress_spec` that is not a port.
    pub bad_egress_spec: u64,
    /// NetSparse packets the middle pipe deconcatenated.
    pub netsparse_packets: u64,
    /// Other packets that went through the middle pipe untouched.
    pub passthrough_packets: u64,
    /// NetSparse packets whose property length is not the Property Cache's
    /// mode (another kernel's PRs, RDMA verbs' 1 KiB chunks): their PRs ran
    /// the program with every `Lookup` a miss and every `Insert` a no-op.
    pub cache_bypass_packets: u64,
    /// NetSparse packets dropped by the per-packet part (`md.drop`).
    pub packets_dropped: u64,
    /// PRs deconcatenated.
    pub prs_in: u64,
    /// PRs sent in rebuilt packets.
    pub prs_out: u64,
    /// PRs dropped by the per-PR part (`md.drop`).
    pub prs_dropped: u64,
    /// Packets built from Concatenation Queues.
    pub concat_packets: u64,
    /// PRs per built packet (`prs_out / concat_packets`).
    pub prs_per_packet: f64,
    /// PRs waiting (in the cache pipeline or a queue) at the snapshot.
    pub prs_pending: u64,
    /// Time the middle pipe spent accepting PRs (`pr_cycles` each), ps:
    /// its utilisation is this over the run's duration.
    pub busy_ps: u64,
    /// Time NetSparse packets waited for their middle pipe, summed, ps.
    pub wait_ps: u64,
    /// The longest such wait, ps.
    pub max_wait_ps: u64,
    /// Property Cache counters.
    pub cache: CacheCounters,
    /// Concatenation Queue flushes by cause.
    pub flushes: FlushCounters,
    /// Malformed packets dropped, by kind.
    pub malformed: MalformedCounters,
    /// Program errors.
    pub program_errors: ProgramErrors,
    /// Egress parser errors.
    pub egress_parser_errors: u64,
    /// Dropped by the egress control (`md.drop`).
    pub egress_drops: u64,
}

impl PipeStats {
    /// Add `o` into `self` (all counters; `prs_per_packet` recomputed).
    pub fn add(&mut self, o: &PipeStats) {
        macro_rules! sum {
            ($($f:ident).+) => { $( self.$f += o.$f; )+ };
        }
        sum!(packets_in);
        sum!(bytes_in);
        sum!(packets_out);
        sum!(bytes_out);
        sum!(rx_malformed);
        sum!(ingress_parser_errors);
        sum!(ingress_drops);
        sum!(bad_egress_spec);
        sum!(netsparse_packets);
        sum!(passthrough_packets);
        sum!(cache_bypass_packets);
        sum!(packets_dropped);
        sum!(prs_in);
        sum!(prs_out);
        sum!(prs_dropped);
        sum!(concat_packets);
        sum!(prs_pending);
        sum!(busy_ps);
        sum!(wait_ps);
        self.max_wait_ps = self.max_wait_ps.max(o.max_wait_ps);
        sum!(egress_parser_errors);
        sum!(egress_drops);
        let (c, d) = (&mut self.cache, &o.cache);
        c.lookups += d.lookups;
        c.hits += d.hits;
        c.misses += d.misses;
        c.inserts += d.inserts;
        c.evictions += d.evictions;
        c.present += d.present;
        c.invalidations += d.invalidations;
        c.occupancy += d.occupancy;
        let (f, g) = (&mut self.flushes, &o.flushes);
        f.full += g.full;
        f.expired += g.expired;
        f.forced += g.forced;
        f.prop_len_change += g.prop_len_change;
        f.evicted += g.evicted;
        let (m, n) = (&mut self.malformed, &o.malformed);
        m.truncated += n.truncated;
        m.bad_ip += n.bad_ip;
        m.unknown_type += n.unknown_type;
        m.count_overrun += n.count_overrun;
        m.trailing_bytes += n.trailing_bytes;
        m.read_with_payload += n.read_with_payload;
        m.bad_prop_len += n.bad_prop_len;
        m.empty += n.empty;
        let (p, q) = (&mut self.program_errors, &o.program_errors);
        p.response_without_payload += q.response_without_payload;
        p.read_with_payload += q.read_with_payload;
        p.bad_type += q.bad_type;
        p.bad_port += q.bad_port;
        p.prop_len_changed += q.prop_len_changed;
        p.insert_without_payload += q.insert_without_payload;
        p.unaddressable += q.unaddressable;
        p.unsupported += q.unsupported;
        p.rejected += q.rejected;
        self.prs_per_packet = ratio(self.prs_out, self.concat_packets);
    }
}

pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Whole-switch counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NsStats {
    /// Per pipe, by index.
    pub pipes: Vec<PipeStats>,
    /// Sum over pipes (`pipe` is the number of pipes).
    pub total: PipeStats,
    /// Frames received on a port number the switch does not have.
    pub bad_port: u64,
    /// Engine counters (extern index errors, parser timeouts, ...).
    pub engine: EngineStats,
}

impl NsStats {
    /// A human-readable table: one line per pipe and a total line, then the
    /// malformed-packet kinds and program errors that occurred.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:>5} {:>8} {:>8} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            "pipe",
            "pkts in",
            "pkts out",
            "PRs in",
            "PRs out",
            "PRs/pkt",
            "hits",
            "misses",
            "inserts",
            "evict",
            "full",
            "expir",
            "forced",
            "malf",
            "progerr",
            "pass"
        );
        let row = |s: &mut String, name: &str, p: &PipeStats| {
            let _ = writeln!(
                s,
                "{:>5} {:>8} {:>8} {:>8} {:>8} {:>7.2} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
                name,
                p.packets_in,
                p.packets_out,
                p.prs_in,
                p.prs_out,
                p.prs_per_packet,
                p.cache.hits,
                p.cache.misses,
                p.cache.inserts,
                p.cache.evictions,
                p.flushes.full,
                p.flushes.expired,
                p.flushes.forced,
                p.malformed.total(),
                p.program_errors.total(),
                p.passthrough_packets
            );
        };
        for p in &self.pipes {
            row(&mut s, &p.pipe.to_string(), p);
        }
        row(&mut s, "total", &self.total);
        let t = &self.total;
        let m = &t.malformed;
        let e = &t.program_errors;
        let lines = [
            ("malformed: truncated", m.truncated),
            ("malformed: bad IPv4/UDP framing", m.bad_ip),
            ("malformed: unknown PR type", m.unknown_type),
            ("malformed: PR count overruns the packet", m.count_overrun),
            ("malformed: trailing bytes", m.trailing_bytes),
            ("malformed: read PRs with payloads", m.read_with_payload),
            ("malformed: bad property length", m.bad_prop_len),
            ("malformed: no PRs", m.empty),
            (
                "program error: response without a property",
                e.response_without_payload,
            ),
            ("program error: read with a property", e.read_with_payload),
            ("program error: bad PR type", e.bad_type),
            ("program error: bad egress port", e.bad_port),
            ("program error: property length changed", e.prop_len_changed),
            (
                "program error: Insert without a property",
                e.insert_without_payload,
            ),
            ("program error: unaddressable destination", e.unaddressable),
            ("program error: unsupported primitive", e.unsupported),
            ("program error: PR refused by the Concatenator", e.rejected),
            ("frames shorter than Ethernet or too long", t.rx_malformed),
            ("frames on ports the switch does not have", self.bad_port),
            ("ingress parser errors", t.ingress_parser_errors),
            ("dropped by ingress", t.ingress_drops),
            ("bad egress_spec from ingress", t.bad_egress_spec),
            (
                "packets past the cache (property length not its mode)",
                t.cache_bypass_packets,
            ),
            ("packets dropped by the middle pipe", t.packets_dropped),
            ("PRs dropped by the middle pipe", t.prs_dropped),
            (
                "CQ flushes: property length change",
                t.flushes.prop_len_change,
            ),
            ("CQ flushes: evicted", t.flushes.evicted),
            ("egress parser errors", t.egress_parser_errors),
            ("dropped by egress", t.egress_drops),
            ("PRs still pending", t.prs_pending),
            (
                "extern index out of range",
                self.engine.extern_index_out_of_range,
            ),
            ("parser timeouts", self.engine.parser_timeouts),
            ("loop limits", self.engine.loop_limits),
        ];
        for (what, n) in lines {
            if n > 0 {
                let _ = writeln!(s, "{what}: {n}");
            }
        }
        s
    }
}

impl NsSwitch {
    /// Properties the middle pipes' Property Caches can hold together
    /// (`None`: unbounded).
    pub fn cache_capacity(&self) -> Option<u64> {
        self.pipes
            .iter()
            .try_fold(0u64, |sum, p| Some(sum + p.cache.capacity()?))
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> NsStats {
        let mut out = NsStats {
            pipes: Vec::with_capacity(self.pipes.len()),
            total: PipeStats {
                pipe: self.pipes.len() as u32,
                ..PipeStats::default()
            },
            bad_port: self.bad_port,
            engine: self.prog.stats(),
        };
        for (i, p) in self.pipes.iter().enumerate() {
            let c = &p.c;
            let d = p.deconcat.stats();
            let bd = &p.base_deconcat;
            let q = p.concat.stats();
            let bq = &p.base_concat;
            let k = p.cache.stats();
            let mut errors = c.errors;
            errors.unaddressable += p.bc.unbuildable_prs;
            let s = PipeStats {
                pipe: i as u32,
                packets_in: c.packets_in,
                bytes_in: c.bytes_in,
                packets_out: c.packets_out,
                bytes_out: c.bytes_out,
                rx_malformed: c.rx_malformed,
                ingress_parser_errors: c.ingress_parser_errors,
                ingress_drops: c.ingress_drops,
                bad_egress_spec: c.bad_egress_spec,
                netsparse_packets: c.netsparse_packets,
                passthrough_packets: c.passthrough_packets,
                cache_bypass_packets: c.cache_bypass,
                packets_dropped: c.packets_dropped,
                prs_in: c.prs_in,
                prs_out: p.bc.prs_out,
                prs_dropped: c.prs_dropped,
                concat_packets: p.bc.packets,
                prs_per_packet: ratio(p.bc.prs_out, p.bc.packets),
                prs_pending: p.concat.pending_prs()
                    + p.built.iter().map(|b| u64::from(b.prs)).sum::<u64>(),
                busy_ps: c.busy_ps,
                wait_ps: c.wait_ps,
                max_wait_ps: c.max_wait_ps,
                cache: CacheCounters {
                    lookups: k.lookups,
                    hits: k.hits,
                    misses: k.misses,
                    inserts: k.inserts,
                    evictions: k.evictions,
                    present: k.present,
                    invalidations: k.invalidations,
                    occupancy: p.cache.occupancy(),
                },
                flushes: FlushCounters {
                    full: q.flushes_full - bq.flushes_full,
                    expired: q.flushes_expired - bq.flushes_expired,
                    forced: q.flushes_forced - bq.flushes_forced,
                    prop_len_change: q.flushes_prop_len - bq.flushes_prop_len,
                    evicted: (q.queue_limit + q.pool_exhausted)
                        - (bq.queue_limit + bq.pool_exhausted),
                },
                malformed: MalformedCounters {
                    truncated: d.truncated - bd.truncated,
                    bad_ip: d.bad_ip - bd.bad_ip,
                    unknown_type: d.unknown_type - bd.unknown_type,
                    count_overrun: d.count_overrun - bd.count_overrun,
                    trailing_bytes: d.trailing_bytes - bd.trailing_bytes,
                    read_with_payload: d.read_with_payload - bd.read_with_payload,
                    bad_prop_len: d.bad_prop_len - bd.bad_prop_len,
                    empty: d.empty - bd.empty,
                },
                program_errors: errors,
                egress_parser_errors: c.egress_parser_errors,
                egress_drops: c.egress_drops,
            };
            out.total.add(&s);
            out.pipes.push(s);
        }
        out
    }

    /// Zero every counter (not table entries, cache contents or queues).
    pub fn reset_stats(&mut self) {
        self.bad_port = 0;
        for p in &mut self.pipes {
            p.c = Counters::default();
            p.bc = BuildCounters::default();
            p.cache.reset_stats();
            p.base_deconcat = *p.deconcat.stats();
            p.base_concat = *p.concat.stats();
        }
    }
}
