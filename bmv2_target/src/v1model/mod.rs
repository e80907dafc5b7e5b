//! The v1model switch: BMv2 simple_switch semantics over the engine.
//!
//! For each frame (all decisions follow `docs/simple_switch.md` and
//! `simple_switch.cpp` of p4lang/behavioral-model):
//!
//! 1. **Per-packet reset**: every header invalid, every slot zero; then
//!    `ingress_port`, `packet_length` (frame bytes), `instance_type` (0,
//!    NORMAL) and `ingress_global_timestamp` (µs of the driver clock).
//! 2. **Parser**. A parser error (`verify` failing, `PacketTooShort` on an
//!    extract or lookahead past the end, `NoMatch` in a select without
//!    default, `StackOutOfBounds`, `ParserTimeout` after
//!    [`MAX_PARSER_STEPS`] transitions) does **not** drop the
//!    packet: as in simple_switch it continues to ingress with
//!    `parser_error` set; headers extracted before the error stay valid and
//!    the unparsed bytes from the failing point on are the payload.
//! 3. **VerifyChecksum**, then **Ingress**. A `verify_checksum` mismatch
//!    sets `checksum_error` (no drop).
//! 4. **After ingress**, in simple_switch's order: a requested clone (the
//!    last `clone` call) makes an I2E copy of the packet *as it arrived*,
//!    re-parsed, metadata reset except the preserved field list,
//!    `instance_type` 1, sent to egress on each port of the mirror session;
//!    then resubmit (original packet, metadata reset except the field list
//!    and `ingress_port`, `instance_type` 6, ingress again) wins over
//!    multicast (`mcast_grp` ≠ 0: one copy per (port, rid) of the group,
//!    `instance_type` 5, `egress_rid` set; an unconfigured group drops),
//!    which wins over drop (`egress_spec` = 511, set by `mark_to_drop`, which
//!    also clears `mcast_grp`), else unicast to `egress_spec` with
//!    `instance_type` 0.
//! 5. **Egress** with `egress_port` set, `egress_spec` initialised to 0 (any
//!    value but the drop port, as simple_switch does), `packet_length` the
//!    packet's length and `egress_global_timestamp`. Queueing metadata
//!    (`enq_*`, `deq_*`) is 0: there is no queue model.
//! 6. **After egress**: an E2E clone copies the packet's current headers,
//!    metadata reset except the field list, `instance_type` 2, to egress on
//!    the session's ports; then `egress_spec` = 511 drops; then
//!    **ComputeChecksum** and the **Deparser** (valid headers in order, then
//!    the unparsed payload); `truncate(n)` keeps the first `n` bytes; a
//!    recirculation request sends the deparsed packet back to ingress
//!    (metadata reset except the field list and `ingress_port`,
//!    `instance_type` 4); otherwise it leaves on `egress_port`.
//!
//! Externs follow simple_switch too: registers, counters and meters with
//! an out-of-range index read 0 / do nothing (counted); a `direct_counter`
//! counts every hit of its table (`count()` calls add nothing); a
//! `direct_meter` runs on every hit and `read()` gives that colour (nothing
//! is written on a miss); `hash(dst, algo, base, data, max)` is
//! `base + H % max`, and `base + H` when `max` is 0 — this project's
//! `v1model.p4` contract (BMv2's documentation says `base` for `max` 0);
//! field lists are packed most significant field first, right-aligned in
//! whole bytes; `random` draws from a generator seeded by
//! [`SwitchConfig::seed`].
//!
//! Resubmits and recirculations are capped per arriving frame
//! ([`SwitchConfig::max_passes`]); beyond the cap the packet is dropped and
//! counted. `assert`/`assume` failures drop the packet (BMv2 aborts the
//! process instead) and are counted. Deviation from simple_switch, on
//! purpose: resubmitted and recirculated packets keep their `ingress_port`
//! (BMv2 zeroes it with the rest of the metadata unless it is in the
//! preserved field list).

use std::collections::{BTreeMap, VecDeque};

use crate::replication::Replication;

use netsparse_externs::artifact::Artifact;
use netsparse_externs::{Datapath, Outputs, Time};
use serde::Serialize;

use netsparse_engine::code::{Code, NSlot, V1Slots};
use netsparse_engine::compile::{self, V1Blocks};
use netsparse_engine::exec::ParseEnd;
use netsparse_engine::runtime::{EngineStats, Runtime};
use netsparse_engine::{Engine, LoadError, PacketState};

pub use netsparse_engine::Replica;

mod control;
pub use control::McNodeHandle;

/// `instance_type` values (simple_switch's `PktInstanceType`).
pub mod instance_type {
    /// A packet that arrived on a port.
    pub const NORMAL: u32 = 0;
    /// An ingress-to-egress clone.
    pub const INGRESS_CLONE: u32 = 1;
    /// An egress-to-egress clone.
    pub const EGRESS_CLONE: u32 = 2;
    /// Recirculated.
    pub const RECIRC: u32 = 4;
    /// A multicast copy.
    pub const REPLICATION: u32 = 5;
    /// Resubmitted.
    pub const RESUBMIT: u32 = 6;
}

/// State transitions a parser may take per packet before it stops with
/// `ParserTimeout` (guards against parsers that loop without consuming input).
pub const MAX_PARSER_STEPS: u32 = netsparse_engine::exec::MAX_PARSER_STEPS;

/// The drop port (`egress_spec` value that drops), as simple_switch's default.
pub const DROP_PORT: u32 = 511;
/// Ports are 9 bits in v1model: 0..=510 usable, 511 drops.
pub const MAX_PORTS: usize = 512;

/// Switch options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchConfig {
    /// Seed of the generator behind `random()` and the `random` hash.
    pub seed: u64,
    /// Frames longer than this many bytes are dropped as malformed.
    pub max_frame: usize,
    /// Per-packet trace (parser states, headers, tables, egress decision) via
    /// `tracing` at INFO. Nothing is formatted when off.
    pub trace: bool,
    /// Log the first N bytes of every packet in and out (0 = off).
    pub dump_bytes: usize,
    /// Ingress passes allowed per arriving frame beyond the first (resubmit
    /// and recirculate), after which the packet is dropped and counted.
    pub max_passes: u32,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            seed: 0,
            max_frame: 9216,
            trace: false,
            dump_bytes: 0,
            max_passes: 16,
        }
    }
}

/// Why packets were dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DropStats {
    /// Frames longer than [`SwitchConfig::max_frame`].
    pub malformed_oversize: u64,
    /// Frames on a port number ≥ 511 (PSA: also packets sent to a port
    /// the switch does not have).
    pub bad_port: u64,
    /// `egress_spec` = 511 at the end of ingress (`mark_to_drop`; PSA:
    /// `ostd.drop`).
    pub ingress_drop: u64,
    /// `egress_spec` = 511 at the end of egress (PSA: `ostd.drop`).
    pub egress_drop: u64,
    /// An `assert`/`assume` failed.
    pub assertion: u64,
    /// Resubmit/recirculate loop beyond the cap.
    pub loop_cap: u64,
    /// Multicast to an unconfigured (or empty) group.
    pub no_mcast_group: u64,
    /// Deparsed to zero bytes.
    pub empty: u64,
}

impl DropStats {
    /// Sum of all reasons.
    pub fn total(&self) -> u64 {
        self.malformed_oversize
            + self.bad_port
            + self.ingress_drop
            + self.egress_drop
            + self.assertion
            + self.loop_cap
            + self.no_mcast_group
            + self.empty
    }

    fn add(&mut self, o: &DropStats) {
        self.malformed_oversize += o.malformed_oversize;
        self.bad_port += o.bad_port;
        self.ingress_drop += o.ingress_drop;
        self.egress_drop += o.egress_drop;
        self.assertion += o.assertion;
        self.loop_cap += o.loop_cap;
        self.no_mcast_group += o.no_mcast_group;
        self.empty += o.empty;
    }
}

/// Counters of one port. Drops and errors are counted against the port the
/// packet arrived on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PortStats {
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets that reached ingress with a parser error.
    pub parser_errors: u64,
    /// Packets that reached ingress with `checksum_error` set.
    pub checksum_errors: u64,
    /// Drops by reason.
    pub drops: DropStats,
}

impl PortStats {
    fn is_zero(&self) -> bool {
        *self == PortStats::default()
    }

    /// Add `o`'s counts to these.
    pub(crate) fn accumulate(&mut self, o: &PortStats) {
        self.rx_packets += o.rx_packets;
        self.rx_bytes += o.rx_bytes;
        self.tx_packets += o.tx_packets;
        self.tx_bytes += o.tx_bytes;
        self.parser_errors += o.parser_errors;
        self.checksum_errors += o.checksum_errors;
        self.drops.add(&o.drops);
    }
}

/// Whole-switch counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SwitchStats {
    /// Per port (only ports with traffic), by port number.
    pub ports: BTreeMap<u32, PortStats>,
    /// Sum over ports.
    pub total: PortStats,
    /// Clones made (I2E and E2E copies sent to egress).
    pub clones: u64,
    /// Resubmitted passes.
    pub resubmits: u64,
    /// Recirculated passes.
    pub recirculations: u64,
    /// Multicast copies.
    pub multicast_copies: u64,
    /// Clones to an unconfigured mirror session (ignored, as in BMv2).
    pub clone_no_session: u64,
    /// Engine counters.
    pub engine: EngineStats,
}

impl SwitchStats {
    /// A human-readable counters table (one line per port, then totals and
    /// drop reasons).
    pub fn summary(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:>6} {:>10} {:>12} {:>10} {:>12} {:>8} {:>8} {:>8}",
            "port", "rx pkts", "rx bytes", "tx pkts", "tx bytes", "drops", "perr", "csumerr"
        );
        let mut row = |name: &str, p: &PortStats| {
            let _ = writeln!(
                s,
                "{:>6} {:>10} {:>12} {:>10} {:>12} {:>8} {:>8} {:>8}",
                name,
                p.rx_packets,
                p.rx_bytes,
                p.tx_packets,
                p.tx_bytes,
                p.drops.total(),
                p.parser_errors,
                p.checksum_errors
            );
        };
        for (port, p) in &self.ports {
            row(&port.to_string(), p);
        }
        row("total", &self.total);
        let d = &self.total.drops;
        let reasons = [
            ("frame longer than the maximum", d.malformed_oversize),
            ("bad port number", d.bad_port),
            (
                "dropped in ingress (egress_spec 511; PSA: ostd.drop)",
                d.ingress_drop,
            ),
            (
                "dropped in egress (egress_spec 511; PSA: ostd.drop)",
                d.egress_drop,
            ),
            ("assert/assume failed", d.assertion),
            ("resubmit/recirculate loop cap", d.loop_cap),
            ("unconfigured multicast group", d.no_mcast_group),
            ("deparsed to nothing", d.empty),
        ];
        for (what, n) in reasons {
            if n > 0 {
                let _ = writeln!(s, "drops: {what}: {n}");
            }
        }
        for (what, n) in [
            ("clones", self.clones),
            ("resubmits", self.resubmits),
            ("recirculations", self.recirculations),
            ("multicast copies", self.multicast_copies),
            ("clones to unconfigured sessions", self.clone_no_session),
            (
                "extern index out of range",
                self.engine.extern_index_out_of_range,
            ),
            ("digests", self.engine.digests),
            ("digests dropped", self.engine.digests_dropped),
            ("checksum overflows", self.engine.checksum_overflows),
            ("log_msg calls", self.engine.log_msgs),
            ("parser timeouts", self.engine.parser_timeouts),
            ("loop limits", self.engine.loop_limits),
        ] {
            if n > 0 {
                let _ = writeln!(s, "{what}: {n}");
            }
        }
        s
    }
}

enum Stage {
    Ingress,
    Egress,
}

struct Job {
    stage: Stage,
    st: Box<PacketState>,
    /// Ingress passes so far (resubmit/recirculate).
    passes: u32,
}

/// The behavioural v1model switch.
pub struct Switch {
    pub(crate) engine: Engine,
    v1: V1Blocks,
    sm: V1Slots,
    pub(crate) cfg: SwitchConfig,
    /// Spare states. Boxed on purpose: states move between the pool and the
    /// job queue as one pointer instead of a few hundred bytes.
    #[allow(clippy::vec_box)]
    pool: Vec<Box<PacketState>>,
    jobs: VecDeque<Job>,
    scratch: Vec<u8>,
    port_stats: Vec<PortStats>,
    pub(crate) counters: SwitchStats,
    /// Multicast groups and mirror sessions.
    pub(crate) repl: Replication,
    packet_id: u64,
}

impl std::fmt::Debug for Switch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Switch")
            .field("tables", &self.engine.code.tables.len())
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

#[inline]
fn us(now: Time) -> u64 {
    now.as_ps() / 1_000_000
}

#[inline(always)]
fn set(st: &mut PacketState, s: NSlot, v: u64) {
    s.set(st, v);
}

impl Switch {
    /// Validate `artifact` and load it (with its const entries). Anything
    /// this target cannot run is a [`LoadError::Unsupported`] naming it.
    pub fn new(artifact: &Artifact, cfg: SwitchConfig) -> Result<Switch, LoadError> {
        let loaded = compile::load(artifact)?;
        let mut rt = Runtime::new(loaded.tables, loaded.externs, loaded.extern_names, cfg.seed);
        rt.trace = cfg.trace;
        let sm = loaded.code.v1;
        let engine = Engine::new(loaded.code, rt);
        Ok(Switch {
            engine,
            v1: loaded.v1,
            sm,
            cfg,
            pool: Vec::new(),
            jobs: VecDeque::new(),
            scratch: Vec::with_capacity(2048),
            port_stats: vec![PortStats::default(); MAX_PORTS],
            counters: SwitchStats::default(),
            repl: Replication::new(DROP_PORT),
            packet_id: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }

    /// Turn per-packet tracing on or off.
    pub fn set_trace(&mut self, on: bool) {
        self.cfg.trace = on;
        self.engine.rt.trace = on;
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> SwitchStats {
        let mut s = self.counters.clone();
        s.ports.clear();
        s.total = PortStats::default();
        for (p, ps) in self.port_stats.iter().enumerate() {
            if !ps.is_zero() {
                s.ports.insert(p as u32, *ps);
                s.total.rx_packets += ps.rx_packets;
                s.total.rx_bytes += ps.rx_bytes;
                s.total.tx_packets += ps.tx_packets;
                s.total.tx_bytes += ps.tx_bytes;
                s.total.parser_errors += ps.parser_errors;
                s.total.checksum_errors += ps.checksum_errors;
                s.total.drops.add(&ps.drops);
            }
        }
        s.engine = self.engine.rt.stats.clone();
        s
    }

    /// Reset every counter (not table entries or extern state).
    pub fn reset_stats(&mut self) {
        self.port_stats.fill(PortStats::default());
        self.counters = SwitchStats::default();
        self.engine.rt.stats = EngineStats::default();
    }

    fn take_state(&mut self) -> Box<PacketState> {
        self.pool
            .pop()
            .unwrap_or_else(|| Box::new(self.engine.new_state()))
    }

    fn recycle(&mut self, st: Box<PacketState>) {
        self.pool.push(st);
    }

    /// Zero every non-header slot and copy the preserved `list` from `from`.
    fn reset_meta_preserving(code: &Code, st: &mut PacketState, from: &PacketState, list: u32) {
        for &loc in code.non_header.iter() {
            st.store_raw(loc, 0);
        }
        if let Some(l) = code.lists.get(list as usize) {
            for &loc in l.iter() {
                st.store_raw(loc, from.load(loc));
            }
        }
    }

    #[inline]
    fn port_stats(&mut self, port: u32) -> &mut PortStats {
        let i = (port as usize).min(MAX_PORTS - 1);
        &mut self.port_stats[i]
    }

    fn dump(&self, dir: &str, port: u32, bytes: &[u8]) {
        let n = bytes.len().min(self.cfg.dump_bytes);
        let hex: String = bytes[..n].iter().map(|b| format!("{b:02x}")).collect();
        tracing::info!("{dir} port {port} ({} bytes): {hex}", bytes.len());
    }

    /// The ingress pass of a job; returns the job to run through egress
    /// when the packet is unicast.
    fn ingress(&mut self, now: Time, mut job: Job, in_port: u32) -> Option<Job> {
        let v1 = self.v1;
        let st = &mut *job.st;
        if let ParseEnd::Reject(e) = self.engine.parse(st, v1.parser) {
            if let Some(e) = e {
                set(st, self.sm.parser_error, u64::from(e));
            }
            self.port_stats(in_port).parser_errors += 1;
            if self.cfg.trace {
                let e = self.sm.parser_error.get(st) as usize;
                tracing::info!(
                    "parser error {} (the packet continues to ingress)",
                    self.engine.code.errors.get(e).map_or("?", String::as_str)
                );
            }
        }
        self.engine.control(st, v1.verify_checksum);
        if self.sm.checksum_error.get(st) != 0 {
            self.port_stats(in_port).checksum_errors += 1;
        }
        self.engine.control(st, v1.ingress);
        if st.fx.assert_failed {
            self.port_stats(in_port).drops.assertion += 1;
            self.recycle(job.st);
            return None;
        }
        let egress_spec = self.sm.egress_spec.get(st) as u32;
        let mcast = self.sm.mcast_grp.get(st) as u16;

        // Ingress clone (I2E).
        if let Some(c) = st.fx.clone.take() {
            self.clone_ingress(&job.st, c.session, c.list, in_port, now);
        }
        let st = &mut *job.st;

        // Resubmit.
        if let Some(list) = st.fx.resubmit {
            if job.passes >= self.cfg.max_passes {
                self.port_stats(in_port).drops.loop_cap += 1;
            } else {
                let mut r = self.take_state();
                r.reset();
                r.frame.clone_from(&job.st.frame);
                Self::reset_meta_preserving(&self.engine.code, &mut r, &job.st, list);
                set(&mut r, self.sm.ingress_port, u64::from(in_port));
                set(
                    &mut r,
                    self.sm.instance_type,
                    u64::from(instance_type::RESUBMIT),
                );
                let len = r.frame.len();
                set(&mut r, self.sm.packet_length, len as u64);
                set(&mut r, self.sm.ingress_global_timestamp, us(now));
                if self.cfg.trace {
                    tracing::info!("resubmit");
                }
                self.counters.resubmits += 1;
                self.jobs.push_back(Job {
                    stage: Stage::Ingress,
                    st: r,
                    passes: job.passes + 1,
                });
            }
            self.recycle(job.st);
            return None;
        }

        // Multicast.
        if mcast != 0 {
            let n = self.repl.group(mcast).map_or(0, <[Replica]>::len);
            if n == 0 {
                self.port_stats(in_port).drops.no_mcast_group += 1;
                self.recycle(job.st);
                return None;
            }
            if self.cfg.trace {
                tracing::info!("multicast group {mcast}: {n} copies");
            }
            for i in 0..n {
                let rep = self
                    .repl
                    .group(mcast)
                    .map_or(Replica { port: 0, rid: 0 }, |r| r[i]);
                let mut c = self.take_state();
                c.copy_from(&job.st);
                set(
                    &mut c,
                    self.sm.instance_type,
                    u64::from(instance_type::REPLICATION),
                );
                set(&mut c, self.sm.egress_rid, u64::from(rep.rid));
                set(&mut c, self.sm.egress_port, u64::from(rep.port));
                c.fx = Default::default();
                self.counters.multicast_copies += 1;
                self.jobs.push_back(Job {
                    stage: Stage::Egress,
                    st: c,
                    passes: job.passes,
                });
            }
            self.recycle(job.st);
            return None;
        }

        // Drop or unicast.
        if egress_spec == DROP_PORT {
            if self.cfg.trace {
                tracing::info!("dropped at the end of ingress (egress_spec = 511)");
            }
            self.port_stats(in_port).drops.ingress_drop += 1;
            self.recycle(job.st);
            return None;
        }
        set(st, self.sm.instance_type, u64::from(instance_type::NORMAL));
        set(st, self.sm.egress_port, u64::from(egress_spec));
        if self.cfg.trace {
            tracing::info!("egress port {egress_spec}");
        }
        job.stage = Stage::Egress;
        Some(job)
    }

    /// Make the I2E clones of a packet at the end of ingress.
    fn clone_ingress(
        &mut self,
        st: &PacketState,
        session: u32,
        list: u32,
        in_port: u32,
        now: Time,
    ) {
        let n = match self.repl.session(session) {
            Some(r) => r.len(),
            None => {
                self.counters.clone_no_session += 1;
                return;
            }
        };
        let parser = self.v1.parser;
        for i in 0..n {
            let rep = self
                .repl
                .session(session)
                .map_or(Replica { port: 0, rid: 0 }, |r| r[i]);
            let mut c = self.take_state();
            c.reset();
            c.frame.clone_from(&st.frame);
            set(&mut c, self.sm.ingress_port, u64::from(in_port));
            // Re-parse the packet as it arrived (as simple_switch does).
            let _ = self.engine.parse(&mut c, parser);
            Self::reset_meta_preserving(&self.engine.code, &mut c, st, list);
            set(
                &mut c,
                self.sm.instance_type,
                u64::from(instance_type::INGRESS_CLONE),
            );
            let len = c.frame.len();
            set(&mut c, self.sm.packet_length, len as u64);
            set(&mut c, self.sm.egress_port, u64::from(rep.port));
            set(&mut c, self.sm.egress_rid, u64::from(rep.rid));
            set(&mut c, self.sm.ingress_global_timestamp, us(now));
            self.counters.clones += 1;
            if self.cfg.trace {
                tracing::info!("I2E clone (session {session}) to port {}", rep.port);
            }
            self.jobs.push_back(Job {
                stage: Stage::Egress,
                st: c,
                passes: 0,
            });
        }
    }

    /// The egress pass of a job.
    fn egress(&mut self, now: Time, mut job: Job, in_port: u32, out: &mut Outputs) {
        let v1 = self.v1;
        let st = &mut *job.st;
        set(st, self.sm.egress_spec, u64::from(DROP_PORT + 1));
        let len = st.frame.len();
        set(st, self.sm.packet_length, len as u64);
        set(st, self.sm.egress_global_timestamp, us(now));
        self.engine.control(st, v1.egress);
        if st.fx.assert_failed {
            self.port_stats(in_port).drops.assertion += 1;
            self.recycle(job.st);
            return;
        }
        // Egress clone (E2E).
        if let Some(c) = st.fx.clone.take() {
            let n = self.repl.session(c.session).map(<[Replica]>::len);
            match n {
                None => self.counters.clone_no_session += 1,
                Some(n) => {
                    for i in 0..n {
                        let rep = self
                            .repl
                            .session(c.session)
                            .map_or(Replica { port: 0, rid: 0 }, |r| r[i]);
                        let mut e = self.take_state();
                        e.copy_from(&job.st);
                        e.fx = Default::default();
                        Self::reset_meta_preserving(&self.engine.code, &mut e, &job.st, c.list);
                        set(
                            &mut e,
                            self.sm.instance_type,
                            u64::from(instance_type::EGRESS_CLONE),
                        );
                        set(&mut e, self.sm.egress_port, u64::from(rep.port));
                        set(&mut e, self.sm.egress_rid, u64::from(rep.rid));
                        self.counters.clones += 1;
                        if self.cfg.trace {
                            tracing::info!(
                                "E2E clone (session {}) to port {}",
                                c.session,
                                rep.port
                            );
                        }
                        self.jobs.push_back(Job {
                            stage: Stage::Egress,
                            st: e,
                            passes: job.passes,
                        });
                    }
                }
            }
        }
        let st = &mut *job.st;
        if self.sm.egress_spec.get(st) as u32 == DROP_PORT {
            if self.cfg.trace {
                tracing::info!("dropped at the end of egress (egress_spec = 511)");
            }
            self.port_stats(in_port).drops.egress_drop += 1;
            self.recycle(job.st);
            return;
        }
        self.engine.control(st, v1.compute_checksum);
        let truncate = st.fx.truncate.map(|t| t as usize);
        if let Some(list) = st.fx.recirculate {
            let mut buf = std::mem::take(&mut self.scratch);
            buf.clear();
            self.engine.deparse(st, v1.deparser, &mut buf);
            if let Some(t) = truncate {
                buf.truncate(t);
            }
            if job.passes >= self.cfg.max_passes {
                self.port_stats(in_port).drops.loop_cap += 1;
            } else {
                let mut r = self.take_state();
                r.reset();
                r.frame.clear();
                r.frame.extend_from_slice(&buf);
                Self::reset_meta_preserving(&self.engine.code, &mut r, &job.st, list);
                set(&mut r, self.sm.ingress_port, u64::from(in_port));
                set(
                    &mut r,
                    self.sm.instance_type,
                    u64::from(instance_type::RECIRC),
                );
                let len = r.frame.len();
                set(&mut r, self.sm.packet_length, len as u64);
                set(&mut r, self.sm.ingress_global_timestamp, us(now));
                self.counters.recirculations += 1;
                if self.cfg.trace {
                    tracing::info!("recirculate ({} bytes)", r.frame.len());
                }
                self.jobs.push_back(Job {
                    stage: Stage::Ingress,
                    st: r,
                    passes: job.passes + 1,
                });
            }
            self.scratch = buf;
            self.recycle(job.st);
            return;
        }
        let port = self.sm.egress_port.get(st) as u32;
        let engine = &mut self.engine;
        let deparser = v1.deparser;
        let n = out.push_with(port, |buf| {
            let start = buf.len();
            engine.deparse(st, deparser, buf);
            if let Some(t) = truncate {
                buf.truncate(start + t.min(buf.len() - start));
            }
            buf.len() - start
        });
        if n == 0 {
            self.port_stats(in_port).drops.empty += 1;
        } else {
            let ps = self.port_stats(port);
            ps.tx_packets += 1;
            ps.tx_bytes += n as u64;
            if self.cfg.dump_bytes > 0 {
                if let Some((_, bytes)) = out.iter().last() {
                    self.dump("out", port, bytes);
                }
            }
            if self.cfg.trace {
                tracing::info!("sent on port {port} ({n} bytes)");
            }
        }
        self.recycle(job.st);
    }

    /// Process one frame to completion (all its copies).
    fn process(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.engine.rt.now = now;
        self.packet_id += 1;
        let span = self
            .cfg
            .trace
            .then(|| tracing::info_span!("packet", id = self.packet_id, port).entered());
        if self.cfg.dump_bytes > 0 {
            self.dump("in", port, frame);
        }
        if port >= DROP_PORT {
            self.port_stats[MAX_PORTS - 1].drops.bad_port += 1;
            return;
        }
        let ps = &mut self.port_stats[port as usize];
        ps.rx_packets += 1;
        ps.rx_bytes += frame.len() as u64;
        // Frames shorter than an Ethernet header are not dropped here: as in
        // BMv2, they run through the parser (whose extracts then fail with
        // PacketTooShort, counted as parser errors) like any other frame.
        if frame.len() > self.cfg.max_frame {
            ps.drops.malformed_oversize += 1;
            if self.cfg.trace {
                tracing::info!(
                    "dropped: {} bytes exceeds the {}-byte maximum",
                    frame.len(),
                    self.cfg.max_frame
                );
            }
            return;
        }
        let mut st = self.take_state();
        st.reset();
        st.frame.clear();
        st.frame.extend_from_slice(frame);
        set(&mut st, self.sm.ingress_port, u64::from(port));
        set(&mut st, self.sm.packet_length, frame.len() as u64);
        set(&mut st, self.sm.ingress_global_timestamp, us(now));
        // The packet itself runs straight through; copies (clones,
        // multicast, resubmit, recirculate) queue behind it in FIFO order,
        // and once anything is queued the packet queues too, so the order
        // is simple_switch's.
        let mut next = Some(Job {
            stage: Stage::Ingress,
            st,
            passes: 0,
        });
        loop {
            let job = match next.take() {
                Some(j) => j,
                None => match self.jobs.pop_front() {
                    Some(j) => j,
                    None => break,
                },
            };
            match job.stage {
                Stage::Ingress => {
                    if let Some(e) = self.ingress(now, job, port) {
                        if self.jobs.is_empty() {
                            next = Some(e);
                        } else {
                            self.jobs.push_back(e);
                        }
                    }
                }
                Stage::Egress => self.egress(now, job, port, out),
            }
        }
        drop(span);
    }
}

impl Datapath for Switch {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.process(now, port, frame, out);
    }

    /// The v1model switch has no timers (no queue model).
    fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}

    fn next_deadline(&self) -> Option<Time> {
        None
    }
}
