//! The PSA switch: BMv2 psa_switch semantics over the engine, for
//! `PSA_Switch` programs (`<psa.p4>` / `<bmv2/psa.p4>`).
//!
//! For each frame (the order of decisions follows BMv2's
//! `targets/psa_switch` and the PSA specification v1.2):
//!
//! 1. **Ingress parser** with `istd.ingress_port` and `istd.packet_path`
//!    (`NORMAL`, `RESUBMIT` or `RECIRCULATE`). A parser error does not drop
//!    the packet: it reaches Ingress with `istd.parser_error` set.
//! 2. **Ingress** with `ingress_timestamp` (µs of the driver clock) and the
//!    output metadata at the specification's initial values: `drop` true,
//!    `clone`, `resubmit`, `multicast_group`, `class_of_service` 0.
//! 3. **After ingress**: `ostd.clone` makes I2E clones of the packet *as it
//!    arrived* on each replica of clone session `clone_session_id`
//!    (`packet_path` `CLONE_I2E`, `instance` the replica's rid), even when
//!    the packet is dropped; then `ostd.drop` drops; else `ostd.resubmit`
//!    sends the packet as it arrived back to ingress (`RESUBMIT`);
//!    else the **IngressDeparser**'s packet: `multicast_group` ≠ 0 makes one
//!    copy per (port, rid) of the group (`NORMAL_MULTICAST`, `instance` the
//!    rid; an unconfigured or empty group drops, counted), else the packet
//!    goes to `ostd.egress_port` (`NORMAL_UNICAST`, `instance` 0). The
//!    IngressDeparser runs for every packet, before these decisions (it
//!    writes the metadata the clone, resubmit and egress parser receive);
//!    its output is what goes to egress.
//! 4. **Egress parser** over the deparsed packet with
//!    `istd.egress_port` and `packet_path`, then **Egress** with the
//!    output metadata at `clone` false, `drop` false; `edstd.egress_port`
//!    is the egress port; then the **EgressDeparser**.
//! 5. **After egress**: `ostd.clone` makes E2E clones of the deparsed
//!    packet (`CLONE_E2E`) to the session's ports; then `ostd.drop` drops;
//!    else an egress port of `PSA_PORT_RECIRCULATE` (0xfffffffa) sends the
//!    packet back to ingress (`RECIRCULATE`, `ingress_port`
//!    `PSA_PORT_RECIRCULATE`); else it leaves on the egress port.
//!
//! Metadata between blocks follows the specification (BMv2 resets it):
//! `NM` written by the IngressDeparser reaches the EgressParser of normal
//! packets, `CI2EM` that of I2E clones, `CE2EM` that of E2E clones,
//! `RESUBM` the IngressParser of resubmitted packets and `RECIRCM` that of
//! recirculated ones; all other metadata starts at 0. Resubmitted packets
//! keep their `ingress_port`.
//!
//! Resubmits and recirculations are capped per arriving frame
//! ([`SwitchConfig::max_passes`]); beyond the cap the packet is dropped and
//! counted, as are packets to ports the switch does not have. Externs
//! (Counter, DirectCounter, Register) are the engine's, as on v1model.

use std::collections::VecDeque;

use netsparse_externs::artifact::{psa_packet_path as path, Arch, Artifact, FieldId, Package};
use netsparse_externs::{Datapath, Outputs, Time};

use netsparse_engine::code::NSlot;
use netsparse_engine::compile;
use netsparse_engine::exec::ParseEnd;
use netsparse_engine::runtime::{EngineStats, Runtime};
use netsparse_engine::state::Loc;
use netsparse_engine::{Engine, LoadError, PacketState, Replica};

use crate::replication::Replication;
use crate::v1model::{PortStats, SwitchConfig, SwitchStats, MAX_PORTS};

mod control;
mod slots;

use slots::{Blocks, Md, Pairs, Which};

/// `PSA_PORT_RECIRCULATE` of `<psa.p4>` (BMv2's value).
pub const PSA_PORT_RECIRCULATE: u32 = 0xffff_fffa;
/// `PSA_PORT_CPU` of `<psa.p4>` (BMv2's value).
pub const PSA_PORT_CPU: u32 = 0xffff_fffd;
/// Ports 0..=510 exist on the wire, as on the v1model switch.
pub const PORT_LIMIT: u32 = (MAX_PORTS - 1) as u32;

enum Stage {
    Ingress,
    Egress,
}

struct Job {
    stage: Stage,
    st: Box<PacketState>,
    /// Ingress passes so far (resubmit/recirculate).
    passes: u32,
    /// The port the frame arrived on (drops are counted against it).
    in_port: u32,
}

/// The behavioural PSA switch.
pub struct PsaSwitch {
    pub(crate) engine: Engine,
    b: Blocks,
    md: Md,
    normalized: Pairs,
    clone_i2e: Pairs,
    recirculate: Pairs,
    resubmit_meta: Box<[Loc]>,
    clone_e2e_meta: Box<[Loc]>,
    cfg: SwitchConfig,
    /// Spare states (boxed: they move between pool and queue as one pointer).
    #[allow(clippy::vec_box)]
    pool: Vec<Box<PacketState>>,
    jobs: VecDeque<Job>,
    scratch: Vec<u8>,
    /// The arriving frame, for I2E clones.
    arrived: Vec<u8>,
    port_stats: Vec<PortStats>,
    counters: SwitchStats,
    /// Multicast groups and clone sessions.
    pub(crate) repl: Replication,
    packet_id: u64,
}

impl std::fmt::Debug for PsaSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PsaSwitch")
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

impl PsaSwitch {
    /// Validate a `PSA_Switch` artifact and load it (with its const
    /// entries). Anything this target cannot run is a [`LoadError`] naming it.
    pub fn new(artifact: &Artifact, cfg: SwitchConfig) -> Result<PsaSwitch, LoadError> {
        let place = || format!("program {}", artifact.program);
        let p = match (&artifact.arch, &artifact.package) {
            (Arch::Psa, Package::Psa(p)) => p,
            (arch, _) => {
                return Err(LoadError::Unsupported {
                    what: format!(
                        "architecture {arch:?}: the PSA switch runs PSA_Switch programs (v1model programs run on the v1model switch)"
                    ),
                    place: place(),
                })
            }
        };
        let loaded = compile::load_generic(artifact, &[])?;
        let loc = |f: FieldId| -> Result<(Loc, u16), LoadError> {
            loaded
                .fields
                .get(f.index())
                .map(|fi| (fi.loc, fi.width))
                .ok_or_else(|| LoadError::Invalid {
                    detail: format!("field id {} out of range", f.0),
                    place: place(),
                })
        };
        let md = Md::resolve(&p.metadata, &loc)?;
        let b = Blocks::resolve(p, artifact, &place)?;
        let bridge = |x: &netsparse_externs::artifact::PsaBridge| Pairs::resolve(x, &loc, &place);
        let locs = |v: &[FieldId]| -> Result<Box<[Loc]>, LoadError> {
            v.iter().map(|f| loc(*f).map(|l| l.0)).collect()
        };
        let normalized = bridge(&p.normalized)?;
        let clone_i2e = bridge(&p.clone_i2e)?;
        let recirculate = bridge(&p.recirculate)?;
        let resubmit_meta = locs(&p.resubmit_meta)?;
        let clone_e2e_meta = locs(&p.clone_e2e_meta)?;
        let mut rt = Runtime::new(loaded.tables, loaded.externs, loaded.extern_names, cfg.seed);
        rt.trace = cfg.trace;
        Ok(PsaSwitch {
            engine: Engine::new(loaded.code, rt),
            b,
            md,
            normalized,
            clone_i2e,
            recirculate,
            resubmit_meta,
            clone_e2e_meta,
            cfg,
            pool: Vec::new(),
            jobs: VecDeque::new(),
            scratch: Vec::with_capacity(2048),
            arrived: Vec::with_capacity(2048),
            port_stats: vec![PortStats::default(); MAX_PORTS],
            counters: SwitchStats::default(),
            repl: Replication::new(PORT_LIMIT),
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

    /// A snapshot of the counters (the v1model switch's layout; the drop
    /// reasons `ingress_drop`/`egress_drop` count `ostd.drop`).
    pub fn stats(&self) -> SwitchStats {
        let mut s = self.counters.clone();
        s.ports.clear();
        s.total = PortStats::default();
        for (p, ps) in self.port_stats.iter().enumerate() {
            if *ps != PortStats::default() {
                s.ports.insert(p as u32, *ps);
                s.total.accumulate(ps);
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

    #[inline]
    fn port_stats(&mut self, port: u32) -> &mut PortStats {
        let i = (port as usize).min(MAX_PORTS - 1);
        &mut self.port_stats[i]
    }

    /// A fresh state holding `frame`, with `keep` copied from `from`.
    fn fresh(&mut self, frame: &[u8], from: &PacketState, keep: &[Loc]) -> Box<PacketState> {
        let mut s = self.take_state();
        s.reset();
        s.frame.clear();
        s.frame.extend_from_slice(frame);
        for &l in keep {
            s.store_raw(l, from.load(l));
        }
        s
    }

    /// A fresh egress state for `frame`, with bridge `which` copied from `from`.
    fn egress_state(
        &mut self,
        frame: &[u8],
        from: &PacketState,
        which: Which,
        packet_path: u64,
    ) -> Box<PacketState> {
        let mut s = self.fresh(frame, from, &[]);
        let pairs = match which {
            Which::Normalized => &self.normalized,
            Which::CloneI2e => &self.clone_i2e,
        };
        for &(f, t) in pairs.iter() {
            s.store_raw(t, from.load(f));
        }
        set(&mut s, self.md.ep_packet_path, packet_path);
        s
    }

    /// The ingress pass of a job.
    fn ingress(&mut self, now: Time, mut job: Job) {
        let (b, md) = (self.b, self.md);
        let in_port = job.in_port;
        let st = &mut *job.st;
        set(st, md.ig_ingress_timestamp, us(now));
        let end = self.engine.parse(st, b.ingress_parser);
        set(st, md.ig_ingress_port, md.ip_ingress_port.get(st));
        set(st, md.ig_packet_path, md.ip_packet_path.get(st));
        if let ParseEnd::Reject(e) = end {
            if let Some(e) = e {
                set(st, md.ig_parser_error, u64::from(e));
            }
            self.port_stats(in_port).parser_errors += 1;
            if self.cfg.trace {
                tracing::info!("ingress parser error (the packet continues to ingress)");
            }
        }
        for s in [
            md.ig_class_of_service,
            md.ig_clone,
            md.ig_resubmit,
            md.ig_multicast_group,
        ] {
            set(st, s, 0);
        }
        set(st, md.ig_drop, 1);
        self.engine.control(st, b.ingress);
        if st.fx.assert_failed {
            self.port_stats(in_port).drops.assertion += 1;
            self.recycle(job.st);
            return;
        }
        // The IngressDeparser runs for every packet: it writes the clone,
        // resubmit and normalized metadata the next parser receives.
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        self.engine
            .deparse(&mut job.st, b.ingress_deparser, &mut buf);
        self.scratch = buf;
        let st = &*job.st;
        let cos = md.ig_class_of_service.get(st);
        if md.ig_clone.get(st) != 0 {
            let session = md.ig_clone_session_id.get(st) as u32;
            self.clone_i2e(&job.st, session, in_port);
        }
        if md.ig_drop.get(&job.st) != 0 {
            if self.cfg.trace {
                tracing::info!("dropped at the end of ingress (ostd.drop)");
            }
            self.port_stats(in_port).drops.ingress_drop += 1;
            self.recycle(job.st);
            return;
        }
        if md.ig_resubmit.get(&job.st) != 0 {
            self.resubmit(job);
            return;
        }
        let buf = std::mem::take(&mut self.scratch);
        let st = &*job.st;
        let mcast = md.ig_multicast_group.get(st);
        if mcast != 0 {
            let n = u16::try_from(mcast)
                .ok()
                .and_then(|g| self.repl.group(g))
                .map_or(0, <[Replica]>::len);
            if n == 0 {
                self.port_stats(in_port).drops.no_mcast_group += 1;
            }
            if self.cfg.trace {
                tracing::info!("multicast group {mcast}: {n} copies");
            }
            for i in 0..n {
                let rep = self.repl.group(mcast as u16).map_or(NO_REPLICA, |r| r[i]);
                let mut c =
                    self.egress_state(&buf, &job.st, Which::Normalized, path::NORMAL_MULTICAST);
                set(&mut c, self.md.eg_class_of_service, cos);
                set(&mut c, self.md.eg_instance, u64::from(rep.rid));
                set(&mut c, self.md.ep_egress_port, u64::from(rep.port));
                self.counters.multicast_copies += 1;
                self.jobs.push_back(Job {
                    stage: Stage::Egress,
                    st: c,
                    passes: job.passes,
                    in_port,
                });
            }
        } else {
            let port = md.ig_egress_port.get(st);
            let mut c = self.egress_state(&buf, &job.st, Which::Normalized, path::NORMAL_UNICAST);
            set(&mut c, self.md.eg_class_of_service, cos);
            set(&mut c, self.md.ep_egress_port, port);
            if self.cfg.trace {
                tracing::info!("egress port {port}");
            }
            self.jobs.push_back(Job {
                stage: Stage::Egress,
                st: c,
                passes: job.passes,
                in_port,
            });
        }
        self.scratch = buf;
        self.recycle(job.st);
    }

    /// Make the I2E clones of a packet at the end of ingress (of the
    /// packet as it arrived, re-parsed by the egress parser; their
    /// `class_of_service` is 0, as on BMv2).
    fn clone_i2e(&mut self, st: &PacketState, session: u32, in_port: u32) {
        let Some(n) = self.repl.session(session).map(<[Replica]>::len) else {
            self.counters.clone_no_session += 1;
            if self.cfg.trace {
                tracing::info!("I2E clone to unconfigured session {session}: no clone");
            }
            return;
        };
        let mut frame = std::mem::take(&mut self.arrived);
        frame.clear();
        frame.extend_from_slice(&st.frame);
        for i in 0..n {
            let rep = self.repl.session(session).map_or(NO_REPLICA, |r| r[i]);
            let mut c = self.egress_state(&frame, st, Which::CloneI2e, path::CLONE_I2E);
            set(&mut c, self.md.eg_instance, u64::from(rep.rid));
            set(&mut c, self.md.ep_egress_port, u64::from(rep.port));
            self.counters.clones += 1;
            if self.cfg.trace {
                tracing::info!("I2E clone (session {session}) to port {}", rep.port);
            }
            self.jobs.push_back(Job {
                stage: Stage::Egress,
                st: c,
                passes: 0,
                in_port,
            });
        }
        self.arrived = frame;
    }

    /// Send the packet as it arrived back to ingress, keeping `RESUBM`.
    fn resubmit(&mut self, job: Job) {
        let in_port = job.in_port;
        if job.passes >= self.cfg.max_passes {
            self.port_stats(in_port).drops.loop_cap += 1;
            self.recycle(job.st);
            return;
        }
        let keep = std::mem::take(&mut self.resubmit_meta);
        let mut r = self.fresh(&job.st.frame, &job.st, &keep);
        self.resubmit_meta = keep;
        let port = self.md.ip_ingress_port.get(&job.st);
        set(&mut r, self.md.ip_ingress_port, port);
        set(&mut r, self.md.ip_packet_path, path::RESUBMIT);
        self.counters.resubmits += 1;
        if self.cfg.trace {
            tracing::info!("resubmit");
        }
        self.jobs.push_back(Job {
            stage: Stage::Ingress,
            st: r,
            passes: job.passes + 1,
            in_port,
        });
        self.recycle(job.st);
    }

    /// The egress pass of a job.
    fn egress(&mut self, now: Time, mut job: Job, out: &mut Outputs) {
        let (b, md) = (self.b, self.md);
        let in_port = job.in_port;
        let st = &mut *job.st;
        let port = md.ep_egress_port.get(st);
        set(st, md.eg_egress_timestamp, us(now));
        let end = self.engine.parse(st, b.egress_parser);
        set(st, md.eg_egress_port, port);
        set(st, md.eg_packet_path, md.ep_packet_path.get(st));
        if let ParseEnd::Reject(e) = end {
            if let Some(e) = e {
                set(st, md.eg_parser_error, u64::from(e));
            }
            self.port_stats(in_port).parser_errors += 1;
        }
        set(st, md.eg_clone, 0);
        set(st, md.eg_drop, 0);
        self.engine.control(st, b.egress);
        if st.fx.assert_failed {
            self.port_stats(in_port).drops.assertion += 1;
            self.recycle(job.st);
            return;
        }
        set(st, md.ed_egress_port, port);
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        self.engine.deparse(st, b.egress_deparser, &mut buf);
        let st = &*job.st;
        if md.eg_clone.get(st) != 0 {
            let session = md.eg_clone_session_id.get(st) as u32;
            self.clone_e2e(&buf, &job.st, session, in_port, job.passes);
        }
        if md.eg_drop.get(&job.st) != 0 {
            if self.cfg.trace {
                tracing::info!("dropped at the end of egress (ostd.drop)");
            }
            self.port_stats(in_port).drops.egress_drop += 1;
        } else if port == u64::from(PSA_PORT_RECIRCULATE) {
            self.recirculate(&buf, &job, in_port);
        } else if port >= u64::from(PORT_LIMIT) {
            if self.cfg.trace {
                tracing::info!("dropped: egress port {port} does not exist");
            }
            self.port_stats(in_port).drops.bad_port += 1;
        } else if buf.is_empty() {
            self.port_stats(in_port).drops.empty += 1;
        } else {
            let port = port as u32;
            out.push_with(port, |o| o.extend_from_slice(&buf));
            let ps = self.port_stats(port);
            ps.tx_packets += 1;
            ps.tx_bytes += buf.len() as u64;
            if self.cfg.trace {
                tracing::info!("sent on port {port} ({} bytes)", buf.len());
            }
        }
        self.scratch = buf;
        self.recycle(job.st);
    }

    /// E2E clones of the deparsed packet, keeping `CE2EM`.
    fn clone_e2e(
        &mut self,
        bytes: &[u8],
        st: &PacketState,
        session: u32,
        in_port: u32,
        passes: u32,
    ) {
        let Some(n) = self.repl.session(session).map(<[Replica]>::len) else {
            self.counters.clone_no_session += 1;
            return;
        };
        let keep = std::mem::take(&mut self.clone_e2e_meta);
        for i in 0..n {
            let rep = self.repl.session(session).map_or(NO_REPLICA, |r| r[i]);
            let mut c = self.fresh(bytes, st, &keep);
            set(&mut c, self.md.ep_packet_path, path::CLONE_E2E);
            set(&mut c, self.md.ep_egress_port, u64::from(rep.port));
            set(&mut c, self.md.eg_instance, u64::from(rep.rid));
            self.counters.clones += 1;
            if self.cfg.trace {
                tracing::info!("E2E clone (session {session}) to port {}", rep.port);
            }
            self.jobs.push_back(Job {
                stage: Stage::Egress,
                st: c,
                passes,
                in_port,
            });
        }
        self.clone_e2e_meta = keep;
    }

    /// Send the deparsed packet back to ingress, carrying `RECIRCM`.
    fn recirculate(&mut self, bytes: &[u8], job: &Job, in_port: u32) {
        if job.passes >= self.cfg.max_passes {
            self.port_stats(in_port).drops.loop_cap += 1;
            return;
        }
        let mut r = self.fresh(bytes, &job.st, &[]);
        for &(f, t) in self.recirculate.iter() {
            r.store_raw(t, job.st.load(f));
        }
        set(
            &mut r,
            self.md.ip_ingress_port,
            u64::from(PSA_PORT_RECIRCULATE),
        );
        set(&mut r, self.md.ip_packet_path, path::RECIRCULATE);
        self.counters.recirculations += 1;
        if self.cfg.trace {
            tracing::info!("recirculate ({} bytes)", bytes.len());
        }
        self.jobs.push_back(Job {
            stage: Stage::Ingress,
            st: r,
            passes: job.passes + 1,
            in_port,
        });
    }

    /// Process one frame to completion (all its copies, in FIFO order).
    fn process(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.engine.rt.now = now;
        self.packet_id += 1;
        let span = self
            .cfg
            .trace
            .then(|| tracing::info_span!("packet", id = self.packet_id, port).entered());
        if port >= PORT_LIMIT {
            self.port_stats[MAX_PORTS - 1].drops.bad_port += 1;
            return;
        }
        let ps = &mut self.port_stats[port as usize];
        ps.rx_packets += 1;
        ps.rx_bytes += frame.len() as u64;
        if frame.len() > self.cfg.max_frame {
            ps.drops.malformed_oversize += 1;
            return;
        }
        let mut st = self.take_state();
        st.reset();
        st.frame.clear();
        st.frame.extend_from_slice(frame);
        set(&mut st, self.md.ip_ingress_port, u64::from(port));
        set(&mut st, self.md.ip_packet_path, path::NORMAL);
        self.jobs.push_back(Job {
            stage: Stage::Ingress,
            st,
            passes: 0,
            in_port: port,
        });
        while let Some(job) = self.jobs.pop_front() {
            match job.stage {
                Stage::Ingress => self.ingress(now, job),
                Stage::Egress => self.egress(now, job, out),
            }
        }
        drop(span);
    }
}

const NO_REPLICA: Replica = Replica { port: 0, rid: 0 };

impl Datapath for PsaSwitch {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.process(now, port, frame, out);
    }

    /// The PSA switch has no timers (no queue model).
    fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}

    fn next_deadline(&self) -> Option<Time> {
        None
    }
}
