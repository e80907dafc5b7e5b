//! The state the RIG externs act on — Idx Filter, Pending PR Tables, RIG
//! commands, host memory — and their implementation as the engine's
//! target-specific primitives.
//!
//! The engine runs a NIC path's statements and calls [`Core`] for every RIG
//! extern with its evaluated operands (see `Prim` in the artifact schema);
//! the PR's payload is held here, not in the packet state. Effects that need
//! the units (waking a stalled unit, failing a command, completing one) are
//! queued in `woken`/`to_fail`/`touched` and applied by the NIC after the run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use netsparse_engine::program::{TargetCall, TargetPrims, TargetResult};
use netsparse_engine::PacketState;
use netsparse_externs::artifact::Prim;
use netsparse_externs::hint;
use netsparse_externs::rig::{req_slot, IdxFilter, PendingTable, ReqId, RigError};
use netsparse_externs::Time;

use crate::filtermem::FilterMemory;

use crate::config::NicConfig;
use crate::memory::{HostMemory, Region};
use crate::stats::{CommandStats, NicStats};
use crate::verbs::{FailReason, RigCommand};

/// What a client unit keeps per outstanding PR.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendEntry {
    /// The command that issued it.
    pub cmd: u32,
    /// The idx it requests.
    pub idx: u64,
}

/// Synthetic Pending PR Table keys (for a second PR of an idx already
/// pending, when the program issues without coalescing) have this bit set.
const SYNTHETIC: u64 = 1 << 63;

/// A client unit's Pending PR Table and the last request id retired in
/// each slot (to tell duplicate responses from unknown ones).
#[derive(Clone, Debug)]
pub(crate) struct UnitPending {
    pub table: PendingTable<PendEntry>,
    pub retired: Vec<Option<ReqId>>,
    synth: u64,
}

impl UnitPending {
    pub fn new(capacity: usize) -> Result<UnitPending, RigError> {
        Ok(UnitPending {
            table: PendingTable::new(capacity)?,
            retired: vec![None; capacity],
            synth: 0,
        })
    }

    /// Register a PR for `idx`. `Ok(None)` when the table is full.
    fn insert(&mut self, idx: u64, e: PendEntry) -> Option<ReqId> {
        if self.table.is_full() {
            return None;
        }
        let mut key = idx;
        for _ in 0..8 {
            match self.table.insert(key, e) {
                Ok(r) => return Some(r),
                Err(_) => {
                    // The idx (or a synthetic key) is taken: several PRs for
                    // one idx are outstanding (coalescing off).
                    self.synth = self.synth.wrapping_add(1);
                    key = SYNTHETIC | self.synth;
                }
            }
        }
        None
    }

    /// Remove every entry of command `cmd` (a failed command). Returns how many.
    pub fn release_command(&mut self, cmd: u32) -> usize {
        let ids: Vec<ReqId> = self
            .table
            .iter()
            .filter(|(_, _, e)| e.cmd == cmd)
            .map(|(r, _, _)| r)
            .collect();
        for r in &ids {
            self.table.remove_by_req_id(*r);
        }
        ids.len()
    }
}

/// A RIG command's state.
#[derive(Clone, Debug)]
pub(crate) struct CmdState {
    pub cmd: RigCommand,
    /// The registered destination region containing `dest_addr`.
    pub dest: Region,
    pub unit: u16,
    /// When the unit can see it (doorbell latency after posting).
    pub visible_at: Time,
    /// Idxs run through host_to_net.
    pub processed: u64,
    /// Issued PRs not answered yet.
    pub outstanding: u64,
    /// Completed or failed.
    pub done: bool,
    /// When the last property write reaches host memory.
    pub last_write: Time,
    pub first_unroutable: Option<u64>,
    pub stats: CommandStats,
}

/// The local slice of the property array that server units serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropertySlice {
    /// Host address of the property of `first_idx`.
    pub base_addr: u64,
    /// First idx of the slice.
    pub first_idx: u64,
    /// Idxs in the slice.
    pub count: u64,
    /// Bytes per property.
    pub prop_len: u32,
}

/// Per-run context of the PR being processed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PrCtx {
    pub now: Time,
    /// When this PR's HostWrite reaches host memory (IdxFilterSet after it
    /// takes effect then).
    pub write_done: Option<Time>,
    /// The unit whose Pending PR Table `PendingContains`/`PendingInsert` use.
    pub unit: u16,
    /// host_to_net: the command served.
    pub cmd: u32,
    /// host_to_net: PendingInsert found the table full.
    pub stalled: bool,
    /// host_to_net: the request id PendingInsert registered.
    pub inserted: Option<ReqId>,
    /// net_to_host: HostRead put a property in the payload.
    pub served: bool,
    /// net_to_host: the entry PendingComplete retired (tid, req_id, cmd).
    pub retired: Option<(u16, ReqId, u32)>,
}

/// Everything the RIG externs touch.
#[derive(Debug)]
pub(crate) struct Core<M> {
    pub cfg: NicConfig,
    pub mem: M,
    pub filter: IdxFilter,
    pub pending: Vec<UnitPending>,
    pub cmds: Vec<CmdState>,
    pub stats: NicStats,
    pub slice: Option<PropertySlice>,
    pub ctx: PrCtx,
    /// The current PR's payload.
    pub payload: Vec<u8>,
    /// Client units that got a free Pending PR Table entry.
    pub woken: Vec<u16>,
    /// Commands to fail.
    pub to_fail: Vec<(u32, FailReason)>,
    /// Commands whose completion must be checked.
    pub touched: Vec<u32>,
    /// Idx Filter bits set once their property's host write completes:
    /// (completion, idx), earliest first.
    pub filter_pending: BinaryHeap<Reverse<(Time, u64)>>,
    /// The memory the Idx Filter lives in.
    pub fmem: FilterMemory,
}

impl<M: HostMemory> Core<M> {
    /// Set the filter bits whose host writes completed by `now`.
    pub(crate) fn filter_catch_up(&mut self, now: Time) {
        while let Some(&Reverse((t, idx))) = self.filter_pending.peek() {
            if t > now {
                break;
            }
            self.filter_pending.pop();
            if self.filter.set(idx).is_err() {
                self.stats.filter_out_of_range += 1;
            }
        }
    }

    /// A hint with no effect on results: start loading the Idx Filter
    /// state a lookup of `idx` by client unit `unit` reads (its bit and
    /// the filter memory's sets), a few idxs before it runs.
    #[inline]
    pub(crate) fn prefetch_idx(&self, unit: usize, idx: u64) {
        self.filter.prefetch(idx);
        self.fmem.prefetch(unit, idx);
    }

    /// A hint with no effect on results: start loading the state a
    /// response retiring request `req_id` of `idx` at client unit `tid`
    /// reads (the unit's Pending PR Table and retired slot, then the Idx
    /// Filter state its write sets), a few PRs before it is processed.
    #[inline]
    pub(crate) fn prefetch_response(&self, tid: u16, req_id: u32, idx: u64) {
        if let Some(p) = self.pending.get(usize::from(tid)) {
            p.table.prefetch(req_id, idx);
            if let Some(r) = p.retired.get(req_slot(req_id)) {
                hint::prefetch(r);
            }
        }
        self.prefetch_idx(usize::from(tid), idx);
    }

    fn filter_test(&mut self, idx: u64) -> bool {
        self.filter_catch_up(self.ctx.now);
        self.fmem
            .access(usize::from(self.ctx.unit), idx, self.ctx.now, false);
        match self.filter.test(idx) {
            Ok(b) => b,
            Err(_) => {
                self.stats.filter_out_of_range += 1;
                false
            }
        }
    }

    fn filter_set(&mut self, idx: u64) {
        self.fmem
            .access(usize::from(self.ctx.unit), idx, self.ctx.now, true);
        if self.cfg.filter_set_at_write {
            if let Some(done) = self.ctx.write_done {
                self.filter_pending.push(Reverse((done, idx)));
                return;
            }
        }
        if self.filter.set(idx).is_err() {
            self.stats.filter_out_of_range += 1;
        }
    }

    fn pending_contains(&self, idx: u64) -> bool {
        self.pending
            .get(usize::from(self.ctx.unit))
            .is_some_and(|p| p.table.contains(idx))
    }

    fn pending_insert(&mut self, idx: u64) -> TargetResult {
        let e = PendEntry {
            cmd: self.ctx.cmd,
            idx,
        };
        let Some(p) = self.pending.get_mut(usize::from(self.ctx.unit)) else {
            self.stats.program_errors += 1;
            return TargetResult::Value(0);
        };
        match p.insert(idx, e) {
            Some(r) => {
                self.ctx.inserted = Some(r);
                TargetResult::Value(u128::from(r))
            }
            None => {
                // Full: the unit stalls; this run is abandoned and repeated.
                self.ctx.stalled = true;
                TargetResult::Exit
            }
        }
    }

    fn pending_complete(&mut self, tid: u64, req_id: u64, idx: u64, prop_len: u64) -> bool {
        let (Ok(tid), Ok(req)) = (u16::try_from(tid), u32::try_from(req_id)) else {
            self.stats.responses_unknown += 1;
            return false;
        };
        let Some(p) = self.pending.get_mut(usize::from(tid)) else {
            self.stats.responses_unknown += 1;
            return false;
        };
        let Some((_, e)) = p.table.get_by_req_id(req) else {
            let slot = req_slot(req);
            if p.retired.get(slot).copied().flatten() == Some(req) {
                self.stats.responses_duplicate += 1;
            } else {
                self.stats.responses_unknown += 1;
            }
            return false;
        };
        let e = *e;
        if e.idx != idx {
            self.stats.responses_wrong_idx += 1;
            return false;
        }
        let Some(c) = self.cmds.get_mut(e.cmd as usize) else {
            self.stats.responses_unknown += 1;
            return false;
        };
        if u64::from(c.cmd.property_size) != prop_len {
            self.stats.responses_wrong_length += 1;
            return false;
        }
        p.table.remove_by_req_id(req);
        if let Some(r) = p.retired.get_mut(req_slot(req)) {
            *r = Some(req);
        }
        c.outstanding = c.outstanding.saturating_sub(1);
        c.stats.responses += 1;
        self.stats.responses_received += 1;
        self.ctx.retired = Some((tid, req, e.cmd));
        self.woken.push(tid);
        self.touched.push(e.cmd);
        true
    }

    fn host_read(&mut self, idx: u64, prop_len: u64) -> bool {
        let Some(s) = self.slice else {
            self.stats.reads_outside_slice += 1;
            return false;
        };
        if u64::from(s.prop_len) != prop_len || idx < s.first_idx || idx - s.first_idx >= s.count {
            self.stats.reads_outside_slice += 1;
            return false;
        }
        let addr = s
            .base_addr
            .saturating_add((idx - s.first_idx).saturating_mul(prop_len));
        self.payload.clear();
        self.payload.resize(s.prop_len as usize, 0);
        if self.mem.read(addr, &mut self.payload).is_err() {
            self.payload.clear();
            self.stats.reads_outside_slice += 1;
            return false;
        }
        self.ctx.served = true;
        self.stats.reads_served += 1;
        true
    }

    fn host_write(&mut self, tid: u64, req_id: u64, idx: u64) {
        let cmd = match self.ctx.retired {
            Some((t, r, c)) if u64::from(t) == tid && u64::from(r) == req_id => Some(c),
            _ => u16::try_from(tid)
                .ok()
                .zip(u32::try_from(req_id).ok())
                .and_then(|(t, r)| {
                    let (_, e) = self.pending.get(usize::from(t))?.table.get_by_req_id(r)?;
                    (e.idx == idx).then_some(e.cmd)
                }),
        };
        let Some(c) = cmd.and_then(|c| self.cmds.get_mut(c as usize)) else {
            self.stats.writes_refused += 1;
            return;
        };
        if c.done || self.payload.len() != c.cmd.property_size as usize {
            self.stats.writes_refused += 1;
            return;
        }
        let len = self.payload.len() as u64;
        let addr = idx
            .checked_mul(u64::from(c.cmd.property_size))
            .and_then(|o| o.checked_add(c.cmd.dest_addr));
        let ok = addr.is_some_and(|a| c.dest.contains(a, len))
            && addr.is_some_and(|a| self.mem.write(a, &self.payload).is_ok());
        let id = cmd.unwrap_or(0);
        if !ok {
            self.stats.writes_refused += 1;
            let a = addr.unwrap_or(u64::MAX);
            self.to_fail.push((
                id,
                FailReason::BadAddress {
                    addr: a,
                    len,
                    what: format!(
                        "destination slot of idx {idx} is outside the destination buffer {:#x}+{}",
                        c.dest.start, c.dest.len
                    ),
                },
            ));
            return;
        }
        c.stats.written += 1;
        self.stats.properties_written += 1;
        let done = self.ctx.now + self.cfg.dma_write(len);
        if done > c.last_write {
            c.last_write = done;
        }
        self.ctx.write_done = Some(done);
        self.touched.push(id);
    }
}

#[inline]
fn arg(args: &[u128], i: usize) -> u64 {
    args.get(i).copied().unwrap_or(0) as u64
}

impl<M: HostMemory> TargetPrims for Core<M> {
    fn call(&mut self, _st: &mut PacketState, call: TargetCall<'_>) -> TargetResult {
        let a = call.args;
        match call.prim {
            Prim::IdxFilterTest { .. } => {
                TargetResult::Value(u128::from(self.filter_test(arg(a, 0))))
            }
            Prim::IdxFilterSet { .. } => {
                self.filter_set(arg(a, 0));
                TargetResult::Done
            }
            Prim::PendingContains { .. } => {
                TargetResult::Value(u128::from(self.pending_contains(arg(a, 0))))
            }
            Prim::PendingInsert { .. } => self.pending_insert(arg(a, 0)),
            Prim::PendingComplete { .. } => TargetResult::Value(u128::from(self.pending_complete(
                arg(a, 0),
                arg(a, 1),
                arg(a, 2),
                arg(a, 3),
            ))),
            Prim::HostRead { .. } => {
                TargetResult::Value(u128::from(self.host_read(arg(a, 0), arg(a, 1))))
            }
            Prim::HostWrite { .. } => {
                self.host_write(arg(a, 0), arg(a, 1), arg(a, 2));
                TargetResult::Done
            }
            _ => {
                // Not a NIC primitive (the compiler rejects these in NIC programs).
                self.stats.program_errors += 1;
                TargetResult::Value(0)
            }
        }
    }
}
