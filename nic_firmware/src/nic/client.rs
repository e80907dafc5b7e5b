//! The client RIG units: idx fetch by DMA into the double-buffered Idx
//! Buffer, batches of host_to_net runs (filtering, coalescing, destination
//! solving, Pending PR Table registration), stalls on a full Pending PR
//! Table or TX buffer and the wake-ups that end them, and the effects of a
//! run (issued PRs, touched commands) applied after it.

use std::collections::VecDeque;

use netsparse_engine::prpath::PrMeta;
use netsparse_externs::concat::CqKey;
use netsparse_externs::wire::{PrRepr, PrType, MAX_NODE_ID};
use netsparse_externs::Time;

use super::tx::push_pr;
use super::{Nic, NS_COALESCED, NS_FILTERED, NS_LOCAL, NS_UNROUTABLE};
use crate::core::PrCtx;
use crate::memory::HostMemory;
use crate::program::{NicProgram, RIG_COMMAND, RIG_NODE, RIG_OUTCOME, RIG_UNIT};

/// Idxs ahead of the one running whose Idx Filter state is prefetched.
const PREFETCH_IDXS: usize = 8;
use crate::verbs::FailReason;

/// Why a client unit is stalled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stall {
    PendingFull,
    TxFull,
}

/// A client RIG unit.
#[derive(Clone, Debug)]
pub(super) struct ClientUnit {
    pub(super) queue: VecDeque<u32>,
    pub(super) active: Option<u32>,
    /// Idxs of the active command requested by DMA (arrived or in flight).
    pub(super) requested: u64,
    /// In-flight chunk: (arrival, command, first idx position, count).
    pub(super) dma: Option<(Time, u32, u64, u64)>,
    /// Fetched, not yet processed idxs.
    pub(super) buf: VecDeque<u64>,
    /// When the next batch may start.
    pub(super) t: Time,
    pub(super) stall: Option<(Stall, Time)>,
}

/// How a run of host_to_net for one idx ended.
pub(super) enum H2n {
    /// The idx was processed (issued or dropped).
    Done,
    /// PendingInsert found the table full: the idx must be run again.
    Stalled,
}

impl<M: HostMemory> Nic<M> {
    pub(super) fn unit_step(&mut self, u: usize, e: Time) {
        // 1. An Idx Buffer chunk arrives.
        if let Some((done, cmd, first, count)) = self.units[u].dma {
            if done <= e {
                self.units[u].dma = None;
                if self.units[u].active == Some(cmd) {
                    self.fetch_arrived(u, cmd, first, count, done);
                }
            }
        }
        if self.units[u].stall.is_none() {
            // 2. Start the next command.
            let unit = &self.units[u];
            if unit.active.is_none() {
                if let Some(&c) = unit.queue.front() {
                    let at = unit.t.max(self.core.cmds[c as usize].visible_at);
                    if at <= e {
                        self.units[u].queue.pop_front();
                        self.start_command(u, c, at);
                    }
                }
            }
            // 3. A batch of idxs.
            let unit = &self.units[u];
            if unit.active.is_some() && !unit.buf.is_empty() && unit.t <= e {
                if self.tx_full() {
                    self.units[u].stall = Some((Stall::TxFull, e));
                } else {
                    self.process_batch(u, e);
                }
            }
        }
        // 4. Keep the Idx Buffer fed.
        self.maybe_fetch(u, e);
        self.refresh_unit(u);
    }

    pub(super) fn maybe_fetch(&mut self, u: usize, e: Time) {
        let chunk = self.cfg.chunk_idxs() as u64;
        let unit = &self.units[u];
        let Some(c) = unit.active else { return };
        let count = self.core.cmds[c as usize].cmd.count;
        if unit.dma.is_some() || unit.requested >= count || unit.buf.len() as u64 > chunk {
            return;
        }
        let n = chunk.min(count - unit.requested);
        let done = e + self.cfg.dma_read(n * 8);
        let first = unit.requested;
        let unit = &mut self.units[u];
        unit.dma = Some((done, c, first, n));
        unit.requested += n;
    }

    pub(super) fn fetch_arrived(&mut self, u: usize, cmd: u32, first: u64, count: u64, at: Time) {
        let addr = self.core.cmds[cmd as usize]
            .cmd
            .idx_addr
            .saturating_add(first.saturating_mul(8));
        self.idx_bytes.clear();
        self.idx_bytes.resize((count * 8) as usize, 0);
        if self.core.mem.read(addr, &mut self.idx_bytes).is_err() {
            self.core.to_fail.push((
                cmd,
                FailReason::BadAddress {
                    addr,
                    len: count * 8,
                    what: "the idx array could not be read by DMA".into(),
                },
            ));
            return;
        }
        let unit = &mut self.units[u];
        for c in self.idx_bytes.chunks_exact(8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            unit.buf.push_back(u64::from_le_bytes(w));
        }
        unit.t = unit.t.max(at);
    }

    pub(super) fn tx_full(&self) -> bool {
        self.tx.queued() + self.cfg.mtu + 14 > self.cfg.tx_buffer_bytes
    }

    pub(super) fn process_batch(&mut self, u: usize, e: Time) {
        let Some(cmd) = self.units[u].active else {
            return;
        };
        let n = (self.cfg.batch_idxs as usize).min(self.units[u].buf.len());
        let mut done = 0u64;
        // Idx Filter state is spread over every node's filter: ask for the
        // next idxs' while this one runs.
        for &idx in self.units[u].buf.iter().take(PREFETCH_IDXS.min(n)) {
            self.core.prefetch_idx(u, idx);
        }
        for i in 0..n {
            // The front is this idx (each one done is popped).
            if let Some(&next) = self.units[u].buf.get(PREFETCH_IDXS) {
                self.core.prefetch_idx(u, next);
            }
            if i > 0 && self.tx_full() {
                self.units[u].stall = Some((Stall::TxFull, e + self.clock.cycles(i as u64)));
                break;
            }
            let Some(&idx) = self.units[u].buf.front() else {
                break;
            };
            match self.run_h2n(u as u16, cmd, idx, e) {
                H2n::Done => {
                    self.units[u].buf.pop_front();
                    done += 1;
                }
                H2n::Stalled => {
                    self.units[u].stall =
                        Some((Stall::PendingFull, e + self.clock.cycles(i as u64)));
                    break;
                }
            }
            if !self.core.to_fail.is_empty() {
                break;
            }
        }
        // The batch's Idx Filter lookups beyond the unit's own cycle.
        let mem = self.core.fmem.take_cycles(u);
        let unit = &mut self.units[u];
        unit.t = e + self.clock.cycles(done.max(1) + mem);
        let cs = &mut self.core.cmds[cmd as usize];
        if !cs.done && cs.processed >= cs.cmd.count {
            // Every idx went through host_to_net: the unit moves on.
            self.units[u].active = None;
            self.core.touched.push(cmd);
        }
    }

    /// Run host_to_net for one idx at time `e`.
    pub(super) fn run_h2n(&mut self, unit: u16, cmd: u32, idx: u64, e: Time) -> H2n {
        let node = self.cfg.node;
        let prop_size = self.core.cmds[cmd as usize].cmd.property_size;
        self.core.ctx = PrCtx {
            now: e,
            unit,
            cmd,
            ..PrCtx::default()
        };
        let NicProgram { program, h2n, .. } = &mut self.prog;
        let md = PrMeta {
            pr_type: u64::from(PrType::Read.as_u16()),
            dst: 0,
            prop_len: u64::from(prop_size),
            ingress_port: 0,
            egress_port: 0,
        };
        h2n.begin(program, &mut self.st, md, |_, _| {}, &mut self.core);
        let pr = PrRepr {
            src: node,
            tid: unit,
            idx,
            req_id: 0,
        };
        let rig = |n: &mut [u64], x: &[usize]| {
            n[x[RIG_NODE]] = u64::from(node);
            n[x[RIG_UNIT]] = u64::from(unit);
            n[x[RIG_COMMAND]] = u64::from(cmd);
        };
        let out = h2n.run_pr(program, &mut self.st, &pr, rig, &mut self.core);
        let ctx = self.core.ctx;
        if ctx.stalled {
            return H2n::Stalled;
        }
        let outcome = h2n.extra_value(&self.st, RIG_OUTCOME);
        let dropped = out.dropped;
        let pr_type = out.md.pr_type;
        let dst = out.md.dst;
        let prop_len = out.md.prop_len as u32;
        let pr = out.pr;
        let core = &mut self.core;
        let cs = &mut core.cmds[cmd as usize];
        cs.processed += 1;
        cs.stats.idxs_read += 1;
        core.stats.idxs_read += 1;
        let mut issued = false;
        if !dropped {
            let ok = pr_type == u64::from(PrType::Read.as_u16())
                && ctx.inserted.is_some_and(|r| r == pr.req_id)
                && dst <= u64::from(MAX_NODE_ID)
                && prop_len == prop_size;
            if ok {
                let key = CqKey {
                    pr_type: PrType::Read,
                    dst: dst as u32,
                    port: 0,
                };
                let pushed = push_pr(
                    &mut self.concat,
                    &mut self.tx,
                    &mut self.frame,
                    &mut self.framer,
                    &mut core.stats,
                    &self.cfg,
                    e,
                    key,
                    prop_len,
                    &pr,
                    &[],
                );
                issued = pushed;
            }
            if !issued {
                core.stats.program_errors += 1;
            }
        }
        let cs = &mut core.cmds[cmd as usize];
        if issued {
            cs.outstanding += 1;
            cs.stats.issued += 1;
            core.stats.prs_issued += 1;
        } else {
            if let Some(r) = ctx.inserted {
                // Registered but not sent: take it back.
                if let Some(p) = core.pending.get_mut(usize::from(unit)) {
                    p.table.remove_by_req_id(r);
                }
            }
            let (c, n) = match (dropped, outcome) {
                (true, NS_FILTERED) => (&mut cs.stats.filtered, &mut core.stats.prs_filtered),
                (true, NS_COALESCED) => (&mut cs.stats.coalesced, &mut core.stats.prs_coalesced),
                (true, NS_LOCAL) => (&mut cs.stats.local, &mut core.stats.prs_local),
                (true, NS_UNROUTABLE) => {
                    cs.first_unroutable.get_or_insert(idx);
                    (&mut cs.stats.unroutable, &mut core.stats.prs_unroutable)
                }
                _ => (
                    &mut cs.stats.dropped_other,
                    &mut core.stats.prs_dropped_other,
                ),
            };
            *c += 1;
            *n += 1;
        }
        H2n::Done
    }

    /// Wake units that got a Pending PR Table entry back at `e`.
    pub(super) fn wake_pending(&mut self, u: u16, e: Time) {
        let Some(unit) = self.units.get_mut(usize::from(u)) else {
            return;
        };
        if let Some((Stall::PendingFull, since)) = unit.stall {
            let cycles = self.clock.to_cycles(e.saturating_sub(since));
            unit.stall = None;
            unit.t = unit.t.max(e);
            self.core.stats.stall_cycles_pending += cycles;
            if let Some(c) = unit.active {
                self.core.cmds[c as usize].stats.stall_cycles_pending += cycles;
            }
            self.refresh_unit(usize::from(u));
        }
    }

    pub(super) fn wake_tx(&mut self, e: Time) {
        if self.tx_full() {
            return;
        }
        for u in 0..self.units.len() {
            let unit = &mut self.units[u];
            if let Some((Stall::TxFull, since)) = unit.stall {
                let cycles = self.clock.to_cycles(e.saturating_sub(since));
                unit.stall = None;
                unit.t = unit.t.max(e);
                self.core.stats.stall_cycles_tx += cycles;
                if let Some(c) = unit.active {
                    self.core.cmds[c as usize].stats.stall_cycles_tx += cycles;
                }
                self.refresh_unit(u);
            }
        }
    }

    /// Apply what the RIG externs queued: wake units, fail and complete commands.
    pub(super) fn apply_effects(&mut self, e: Time) {
        while let Some(u) = self.core.woken.pop() {
            self.wake_pending(u, e);
        }
        while let Some((c, reason)) = self.core.to_fail.pop() {
            self.fail_command(c, reason, e);
        }
        while let Some(c) = self.core.touched.pop() {
            self.maybe_complete(c, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{node0, run, PROP};
    use crate::workload::batch_commands;
    use netsparse_externs::wire::Frame;
    use netsparse_externs::Time;

    #[test]
    fn a_repeated_idx_is_coalesced_while_pending_then_filtered() {
        let mut nic = node0(&[70, 70, 3, 70], |_| {});
        nic.post_rig(Time::ZERO, batch_commands(4, 4, PROP)[0])
            .expect("accepted");
        let sent = run(&mut nic, Time::from_us(5));
        let idxs: Vec<u64> = sent
            .iter()
            .flat_map(|(_, f)| {
                Frame::parse(f)
                    .expect("a NetSparse frame")
                    .prs()
                    .map(|p| p.idx)
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(
            idxs,
            [70],
            "one read PR for the three 70s, none for local 3"
        );
        let s = nic.stats();
        assert_eq!((s.prs_issued, s.prs_coalesced, s.prs_local), (1, 2, 1));
        // Once answered, the Idx Filter drops the next request outright.
        nic.answer_all_pending(Time::from_us(5));
        run(&mut nic, Time::from_us(20));
        nic.post_rig(Time::from_us(20), batch_commands(1, 1, PROP)[0])
            .expect("accepted");
        assert!(run(&mut nic, Time::from_us(40)).is_empty());
        assert_eq!(nic.stats().prs_filtered, 1);
    }

    #[test]
    fn a_full_pending_table_stalls_the_unit_and_drops_nothing() {
        let idxs: Vec<u64> = (64..96).collect();
        let mut nic = node0(&idxs, |c| c.pending_entries = 4);
        nic.post_rig(Time::ZERO, batch_commands(32, 32, PROP)[0])
            .expect("accepted");
        run(&mut nic, Time::from_us(5));
        assert_eq!(nic.stats().prs_issued, 4, "the table holds four");
        let mut t = 5;
        while nic.stats().prs_issued < 32 {
            nic.answer_all_pending(Time::from_us(t));
            t += 5;
            run(&mut nic, Time::from_us(t));
            assert!(t < 1000, "the unit never resumed");
        }
        let s = nic.stats();
        assert!(s.stall_cycles_pending > 0);
        assert_eq!(s.prs_issued + s.prs_dropped_other + s.prs_unroutable, 32);
        assert_eq!(s.prs_dropped_other, 0);
    }
}
