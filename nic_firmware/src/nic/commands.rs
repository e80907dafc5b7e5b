//! RIG commands on the NIC: posting (validation against the registered
//! host memory, the choice of client unit, the doorbell latency), starting
//! a command on its unit and arming its watchdog, completion (when every
//! idx went through host_to_net and every issued PR was answered and
//! written), the watchdog and failures (§7.1), and `answer_all_pending` for
//! runs without responders.

use netsparse_externs::Time;

use super::client::Stall;
use super::Nic;
use crate::core::CmdState;
use crate::memory::{HostMemory, RegionKind};
use crate::stats::CommandStats;
use crate::verbs::{CommandId, Completion, CompletionStatus, FailReason, PostError, RigCommand};

impl<M: HostMemory> Nic<M> {
    /// Post a RIG command (`ibv_post_send` with `IBV_WR_RIG`) at `now`.
    pub fn post_rig(&mut self, now: Time, cmd: RigCommand) -> Result<CommandId, PostError> {
        let r = self.check_command(&cmd);
        let dest = match r {
            Ok(d) => d,
            Err(e) => {
                self.core.stats.commands_rejected += 1;
                return Err(e);
            }
        };
        let now = now.max(self.now);
        Ok(self.enqueue_rig(cmd, dest, now, now + self.cfg.dma_one_way()))
    }

    /// Queue a checked command, posted at `now`, on the least-loaded client
    /// unit, which can start it from `visible_at`.
    pub(super) fn enqueue_rig(
        &mut self,
        cmd: RigCommand,
        dest: crate::memory::Region,
        now: Time,
        visible_at: Time,
    ) -> CommandId {
        let id = self.core.cmds.len() as u32;
        let unit = (0..self.units.len())
            .min_by_key(|&u| {
                (
                    self.units[u].queue.len() + usize::from(self.units[u].active.is_some()),
                    u,
                )
            })
            .unwrap_or(0);
        self.core.cmds.push(CmdState {
            cmd,
            dest,
            unit: unit as u16,
            visible_at,
            processed: 0,
            outstanding: 0,
            done: false,
            last_write: Time::ZERO,
            first_unroutable: None,
            stats: CommandStats {
                unit: unit as u16,
                posted_at: now,
                ..CommandStats::default()
            },
        });
        self.units[unit].queue.push_back(id);
        self.refresh_unit(unit);
        self.next_cached = None;
        self.core.stats.commands_posted += 1;
        CommandId(id)
    }

    pub(super) fn check_command(
        &self,
        cmd: &RigCommand,
    ) -> Result<crate::memory::Region, PostError> {
        let max = self.cfg.max_prop_len();
        if cmd.property_size == 0 || cmd.property_size > max {
            return Err(PostError::BadPropertySize {
                size: cmd.property_size,
                max,
            });
        }
        let len = cmd
            .count
            .checked_mul(8)
            .ok_or(PostError::TooManyIdxs { count: cmd.count })?;
        if len > 0 {
            match self.core.mem.region(cmd.idx_addr, len) {
                Some(r) if r.kind == RegionKind::Idxs => {}
                Some(r) => {
                    return Err(PostError::BadIdxArray {
                        addr: cmd.idx_addr,
                        len,
                        source: crate::memory::MemError::WrongKind {
                            addr: cmd.idx_addr,
                            len,
                            kind: r.kind,
                            want: RegionKind::Idxs,
                        },
                    })
                }
                None => {
                    return Err(PostError::BadIdxArray {
                        addr: cmd.idx_addr,
                        len,
                        source: crate::memory::MemError::Unmapped {
                            addr: cmd.idx_addr,
                            len,
                        },
                    })
                }
            }
        }
        let plen = u64::from(cmd.property_size);
        match self.core.mem.region(cmd.dest_addr, plen) {
            Some(r) if r.kind == RegionKind::Destination => Ok(r),
            Some(r) => Err(PostError::BadDestination {
                addr: cmd.dest_addr,
                source: crate::memory::MemError::WrongKind {
                    addr: cmd.dest_addr,
                    len: plen,
                    kind: r.kind,
                    want: RegionKind::Destination,
                },
            }),
            None => Err(PostError::BadDestination {
                addr: cmd.dest_addr,
                source: crate::memory::MemError::Unmapped {
                    addr: cmd.dest_addr,
                    len: plen,
                },
            }),
        }
    }

    /// Retire every outstanding PR as if its response had arrived at `now`
    /// (the Pending PR Table entry is completed and the Idx Filter bit set;
    /// nothing is written to host memory). For benchmarks and tests that
    /// leave the responders out; returns how many were retired.
    pub fn answer_all_pending(&mut self, now: Time) -> u64 {
        self.next_cached = None;
        let mut n = 0;
        let mut list = std::mem::take(&mut self.scratch);
        for u in 0..self.core.pending.len() {
            list.clear();
            list.extend(
                self.core.pending[u]
                    .table
                    .iter()
                    .map(|(r, _, e)| (r, e.cmd, e.idx)),
            );
            for &(req, cmd, idx) in &list {
                self.core.pending[u].table.remove_by_req_id(req);
                let _ = self.core.filter.set(idx);
                let cs = &mut self.core.cmds[cmd as usize];
                cs.outstanding = cs.outstanding.saturating_sub(1);
                self.core.touched.push(cmd);
                n += 1;
            }
            if !list.is_empty() {
                self.core.woken.push(u as u16);
            }
        }
        self.scratch = list;
        self.apply_effects(now.max(self.now));
        n as u64
    }

    pub(super) fn start_command(&mut self, u: usize, c: u32, at: Time) {
        let unit = &mut self.units[u];
        unit.active = Some(c);
        unit.requested = 0;
        unit.buf.clear();
        unit.t = unit.t.max(at);
        let cs = &mut self.core.cmds[c as usize];
        cs.stats.started_at = at;
        self.watchdogs.insert((at + self.cfg.watchdog(), c));
        if cs.cmd.count == 0 {
            self.units[u].active = None;
            self.core.touched.push(c);
        } else {
            self.maybe_fetch(u, at);
        }
    }

    pub(super) fn maybe_complete(&mut self, c: u32, e: Time) {
        let unit = self.core.cmds[c as usize].unit;
        let generating = self.units[usize::from(unit)].active == Some(c);
        let cs = &mut self.core.cmds[c as usize];
        if cs.done || generating || cs.processed < cs.cmd.count || cs.outstanding > 0 {
            return;
        }
        let status = match cs.first_unroutable {
            Some(first) => CompletionStatus::Failed(FailReason::Unroutable {
                count: cs.stats.unroutable,
                first,
            }),
            None => CompletionStatus::Success,
        };
        self.finish(c, status, e);
    }

    pub(super) fn finish(&mut self, c: u32, status: CompletionStatus, e: Time) {
        let one_way = self.cfg.dma_one_way();
        let cs = &mut self.core.cmds[c as usize];
        cs.done = true;
        let at = e.max(cs.last_write) + one_way;
        cs.stats.finished_at = at;
        let failed = status != CompletionStatus::Success;
        if failed {
            self.core.stats.commands_failed += 1;
        } else {
            self.core.stats.commands_completed += 1;
        }
        let wd = cs.stats.started_at + self.cfg.watchdog();
        self.watchdogs.remove(&(wd, c));
        self.completions.insert(
            (at, c),
            Completion {
                id: CommandId(c),
                status,
                at,
                dest_invalid: failed,
                stats: cs.stats.clone(),
            },
        );
    }

    pub(super) fn fire_watchdog(&mut self, c: u32, e: Time) {
        let cs = &self.core.cmds[c as usize];
        if cs.done {
            return;
        }
        let outstanding = cs.outstanding + (cs.cmd.count - cs.processed.min(cs.cmd.count));
        self.core.stats.watchdog_failures += 1;
        tracing::warn!(
            node = self.cfg.node,
            command = c,
            outstanding,
            "RIG command failed by watchdog"
        );
        self.fail_command(
            c,
            FailReason::Watchdog {
                timeout_us: self.cfg.watchdog_us,
                outstanding,
            },
            e,
        );
    }

    pub(super) fn fail_command(&mut self, c: u32, reason: FailReason, e: Time) {
        if self.core.cmds[c as usize].done {
            return;
        }
        let u = usize::from(self.core.cmds[c as usize].unit);
        let freed = self.core.pending[u].release_command(c);
        let unit = &mut self.units[u];
        if unit.active == Some(c) {
            unit.active = None;
            unit.buf.clear();
            unit.dma = None;
            unit.t = unit.t.max(e);
        }
        unit.queue.retain(|&q| q != c);
        let pending_stall = unit.stall.is_some_and(|s| s.0 == Stall::PendingFull);
        self.refresh_unit(u);
        if freed > 0 || pending_stall {
            self.wake_pending(u as u16, e);
        }
        self.finish(c, CompletionStatus::Failed(reason), e);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{node0, run, PROP};
    use crate::verbs::{CompletionStatus, FailReason, PostError, RigCommand};
    use crate::workload::{batch_commands, DEST_BASE, IDX_BASE};
    use netsparse_externs::Time;

    #[test]
    fn posts_go_to_the_least_loaded_unit_and_bad_commands_are_refused() {
        let mut nic = node0(&[70, 71, 72, 73], |c| c.client_units = 2);
        let cmds = batch_commands(4, 1, PROP);
        let units: Vec<u16> = cmds
            .iter()
            .map(|c| {
                let id = nic.post_rig(Time::ZERO, *c).expect("accepted");
                nic.command_stats(id).expect("stats").unit
            })
            .collect();
        assert_eq!(units, [0, 1, 0, 1]);
        let zero = RigCommand {
            property_size: 0,
            ..cmds[0]
        };
        assert!(matches!(
            nic.post_rig(Time::ZERO, zero),
            Err(PostError::BadPropertySize { size: 0, .. })
        ));
        let unmapped = RigCommand {
            idx_addr: IDX_BASE + (1 << 30),
            ..cmds[0]
        };
        assert!(matches!(
            nic.post_rig(Time::ZERO, unmapped),
            Err(PostError::BadIdxArray { .. })
        ));
        let dest_is_idxs = RigCommand {
            dest_addr: IDX_BASE,
            ..cmds[0]
        };
        assert!(matches!(
            nic.post_rig(Time::ZERO, dest_is_idxs),
            Err(PostError::BadDestination { .. })
        ));
        let s = nic.stats();
        assert_eq!((s.commands_posted, s.commands_rejected), (4, 3));
        assert_eq!(DEST_BASE, cmds[0].dest_addr);
    }

    #[test]
    fn the_watchdog_fails_a_command_whose_responses_never_come() {
        let mut nic = node0(&[70, 3], |c| c.watchdog_us = 20);
        let id = nic
            .post_rig(Time::ZERO, batch_commands(2, 2, PROP)[0])
            .expect("accepted");
        run(&mut nic, Time::from_us(100));
        let c = nic.poll_cq().expect("a completion");
        assert_eq!(c.id, id);
        assert!(c.dest_invalid);
        assert!(
            matches!(
                c.status,
                CompletionStatus::Failed(FailReason::Watchdog {
                    timeout_us: 20,
                    outstanding: 1
                })
            ),
            "{:?}",
            c.status
        );
        let s = nic.stats();
        assert_eq!((s.watchdog_failures, s.commands_failed), (1, 1));
        assert!(nic.is_idle());
    }

    #[test]
    fn answering_every_pending_pr_completes_the_command() {
        let mut nic = node0(&[70, 71, 70], |_| {});
        nic.post_rig(Time::ZERO, batch_commands(3, 3, PROP)[0])
            .expect("accepted");
        run(&mut nic, Time::from_us(5));
        assert!(nic.poll_cq().is_none(), "two PRs are still outstanding");
        assert_eq!(nic.answer_all_pending(Time::from_us(5)), 2);
        run(&mut nic, Time::from_us(50));
        let c = nic.poll_cq().expect("completed");
        assert_eq!(c.status, CompletionStatus::Success);
        assert_eq!((c.stats.issued, c.stats.coalesced), (2, 1));
    }
}
