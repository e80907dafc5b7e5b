//! Triggered operations (GPU-triggered networking, LeBeane's dissertation
//! §6.1.1–6.1.2): operations registered ahead of time as {operation, tag,
//! threshold}, a counter per tag, and triggers — stores of a tag — that
//! count; an operation fires when its tag's counter reaches its threshold.
//!
//! # Semantics
//!
//! * `post_triggered(now, tag, threshold, op)` checks the operation at once
//!   (a bad RIG command or put is refused with the `post_rig` error) and
//!   registers it; the registration reaches the NIC one PCIe latency after
//!   `now`, like a doorbell.
//! * `trigger(now, tag)` is a store of `tag` issued at `now`; it reaches the
//!   NIC one PCIe latency later, where it increments the tag's counter and
//!   fires, in registration order, every operation of the tag whose
//!   threshold the counter has now reached. Several operations may wait on
//!   one tag with different thresholds.
//! * A trigger may arrive before the registration it is meant for (the
//!   early-trigger rule): it is counted, and an operation registered later
//!   whose threshold is already reached fires at its registration
//!   (counted as early).
//! * A fired RIG command is queued on a client unit at the firing time
//!   without a doorbell (its work request has been on the NIC since the
//!   registration); a fired put writes its value by DMA and completes on the
//!   completion queue after the write.
//! * The table is bounded: `trigger_ops` operations registered and not yet
//!   fired, `trigger_tags` tags with a counter. A registration beyond either
//!   is refused with a typed error; a trigger of a new tag when every
//!   counter is in use is dropped; both are counted, neither panics.
//!   Counters persist after their operations fire (a later registration on
//!   the tag sees the count) until `release_tag`.
//!
//! Triggers on their way are timed events of the NIC's clocked core (in
//! arrival order, ties in issue order), so the NIC stays a synchronous state
//! machine with explicit time and runs the same under any driver.

use std::collections::BTreeMap;

use netsparse_externs::Time;

use super::Nic;
use crate::core::CmdState;
use crate::memory::{HostMemory, MemError, Region, RegionKind};
use crate::stats::CommandStats;
use crate::verbs::{
    CommandId, CompletionStatus, FailReason, PostError, PutCommand, RigCommand, TriggerError,
    TriggeredId, TriggeredOp,
};

/// An operation waiting for its tag's counter.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    id: u32,
    threshold: u64,
    op: TriggeredOp,
}

/// The trigger table: counters, waiting operations and triggers in flight.
#[derive(Debug, Default)]
pub(super) struct TriggerTable {
    /// Per tag in use: the triggers counted so far.
    counters: BTreeMap<u64, u64>,
    /// Per tag: operations waiting for their threshold, in registration order.
    waiting: BTreeMap<u64, Vec<Waiting>>,
    /// Operations waiting, over all tags.
    waiting_ops: usize,
    /// Triggers on their way: (arrival, issue sequence) → tag.
    inbound: BTreeMap<(Time, u64), u64>,
    seq: u64,
    /// Per registered operation (`TriggeredId`): the command it became
    /// once fired.
    fired: Vec<Option<CommandId>>,
}

impl TriggerTable {
    /// When the next trigger reaches the NIC.
    pub(super) fn next_arrival(&self) -> Option<Time> {
        self.inbound.keys().next().map(|k| k.0)
    }
}

impl<M: HostMemory> Nic<M> {
    /// Register `op` to fire when `tag`'s counter reaches `threshold`
    /// (GPU-TN's triggered operation), at host time `now`. If triggers that
    /// arrived earlier already reached the threshold, it fires at once.
    pub fn post_triggered(
        &mut self,
        now: Time,
        tag: u64,
        threshold: u64,
        op: TriggeredOp,
    ) -> Result<TriggeredId, TriggerError> {
        let r = self.register(now, tag, threshold, op);
        if r.is_err() {
            self.core.stats.triggered_rejected += 1;
        }
        r
    }

    fn register(
        &mut self,
        now: Time,
        tag: u64,
        threshold: u64,
        op: TriggeredOp,
    ) -> Result<TriggeredId, TriggerError> {
        if threshold == 0 {
            return Err(TriggerError::ZeroThreshold { tag });
        }
        match &op {
            TriggeredOp::Rig(c) => {
                self.check_command(c)?;
            }
            TriggeredOp::Put(p) => {
                self.check_put(p)?;
            }
        }
        let at = now.max(self.now) + self.cfg.dma_one_way();
        // Triggers that reach the NIC before this registration count first.
        self.deliver_triggers(at);
        let cap = self.cfg.trigger_ops;
        if self.trig.waiting_ops >= cap {
            return Err(TriggerError::TableFull { capacity: cap });
        }
        let tags = self.cfg.trigger_tags;
        if !self.trig.counters.contains_key(&tag) && self.trig.counters.len() >= tags {
            return Err(TriggerError::TagsFull {
                tag,
                capacity: tags,
            });
        }
        let count = *self.trig.counters.entry(tag).or_insert(0);
        let id = self.trig.fired.len() as u32;
        self.trig.fired.push(None);
        self.core.stats.triggered_registered += 1;
        self.next_cached = None;
        if count >= threshold {
            self.core.stats.triggered_early += 1;
            self.fire(id, op, at);
        } else {
            self.trig
                .waiting
                .entry(tag)
                .or_default()
                .push(Waiting { id, threshold, op });
            self.trig.waiting_ops += 1;
        }
        Ok(TriggeredId(id))
    }

    /// A store of `tag` issued at host time `now` (a GPU kernel's trigger);
    /// it counts when it reaches the NIC, one PCIe latency later.
    pub fn trigger(&mut self, now: Time, tag: u64) {
        let at = now.max(self.now) + self.cfg.dma_one_way();
        self.trig.inbound.insert((at, self.trig.seq), tag);
        self.trig.seq += 1;
        self.next_cached = None;
    }

    /// Free `tag`'s counter (its count is forgotten). Refused (false) while
    /// operations wait on the tag or triggers of it are on their way.
    pub fn release_tag(&mut self, tag: u64) -> bool {
        let busy =
            self.trig.waiting.contains_key(&tag) || self.trig.inbound.values().any(|&t| t == tag);
        !busy && self.trig.counters.remove(&tag).is_some()
    }

    /// The triggers counted for `tag` (`None`: the tag has no counter).
    pub fn trigger_count(&self, tag: u64) -> Option<u64> {
        self.trig.counters.get(&tag).copied()
    }

    /// Triggered operations registered and not yet fired.
    pub fn triggered_waiting(&self) -> usize {
        self.trig.waiting_ops
    }

    /// The command a fired triggered operation became (its completion
    /// carries this id); `None` while it waits or for an unknown id.
    pub fn triggered_command(&self, id: TriggeredId) -> Option<CommandId> {
        self.trig.fired.get(id.0 as usize).copied().flatten()
    }

    /// Count every trigger that reaches the NIC by `upto`, in arrival order.
    pub(super) fn deliver_triggers(&mut self, upto: Time) {
        while let Some(entry) = self.trig.inbound.first_entry() {
            let at = entry.key().0;
            if at > upto {
                break;
            }
            let tag = entry.remove();
            self.count_trigger(tag, at);
        }
    }

    fn count_trigger(&mut self, tag: u64, at: Time) {
        self.core.stats.triggers_received += 1;
        if !self.trig.counters.contains_key(&tag)
            && self.trig.counters.len() >= self.cfg.trigger_tags
        {
            self.core.stats.triggers_dropped += 1;
            return;
        }
        let count = {
            let c = self.trig.counters.entry(tag).or_insert(0);
            *c += 1;
            *c
        };
        let Some(list) = self.trig.waiting.get_mut(&tag) else {
            return;
        };
        if list.iter().all(|w| w.threshold > count) {
            return;
        }
        let mut ready = Vec::new();
        list.retain(|w| {
            let go = w.threshold <= count;
            if go {
                ready.push(*w);
            }
            !go
        });
        if list.is_empty() {
            self.trig.waiting.remove(&tag);
        }
        self.trig.waiting_ops -= ready.len();
        for w in ready {
            self.fire(w.id, w.op, at);
        }
    }

    /// Start a fired operation at `at` (checked again: host memory may have
    /// changed since the registration).
    fn fire(&mut self, id: u32, op: TriggeredOp, at: Time) {
        self.core.stats.triggered_fired += 1;
        self.next_cached = None;
        let cmd = match op {
            TriggeredOp::Rig(c) => match self.check_command(&c) {
                Ok(dest) => Some(self.enqueue_rig(c, dest, at, at)),
                Err(e) => {
                    self.core.stats.commands_rejected += 1;
                    tracing::warn!(
                        node = self.cfg.node,
                        id,
                        "triggered RIG command refused: {e}"
                    );
                    None
                }
            },
            TriggeredOp::Put(p) => Some(self.put(p, at)),
        };
        if let Some(slot) = self.trig.fired.get_mut(id as usize) {
            *slot = cmd;
        }
    }

    fn check_put(&self, p: &PutCommand) -> Result<Region, PostError> {
        match self.core.mem.region(p.dest_addr, 8) {
            Some(r) if r.kind == RegionKind::Destination => Ok(r),
            Some(r) => Err(PostError::BadDestination {
                addr: p.dest_addr,
                source: MemError::WrongKind {
                    addr: p.dest_addr,
                    len: 8,
                    kind: r.kind,
                    want: RegionKind::Destination,
                },
            }),
            None => Err(PostError::BadDestination {
                addr: p.dest_addr,
                source: MemError::Unmapped {
                    addr: p.dest_addr,
                    len: 8,
                },
            }),
        }
    }

    /// Perform a put at `at`: a DMA write of its value, then a completion.
    fn put(&mut self, p: PutCommand, at: Time) -> CommandId {
        let id = self.core.cmds.len() as u32;
        let checked = self.check_put(&p);
        let dest = checked.clone().unwrap_or(Region {
            start: p.dest_addr,
            len: 0,
            kind: RegionKind::Destination,
        });
        let written = checked.is_ok()
            && self
                .core
                .mem
                .write(p.dest_addr, &p.value.to_le_bytes())
                .is_ok();
        let done = at + self.cfg.dma_write(8);
        self.core.cmds.push(CmdState {
            cmd: RigCommand {
                idx_addr: 0,
                dest_addr: p.dest_addr,
                count: 0,
                property_size: 8,
            },
            dest,
            unit: 0,
            visible_at: at,
            processed: 0,
            outstanding: 0,
            done: false,
            last_write: if written { done } else { at },
            first_unroutable: None,
            stats: CommandStats {
                posted_at: at,
                started_at: at,
                written: u64::from(written),
                ..CommandStats::default()
            },
        });
        self.core.stats.puts += 1;
        let status = if written {
            CompletionStatus::Success
        } else {
            CompletionStatus::Failed(FailReason::BadAddress {
                addr: p.dest_addr,
                len: 8,
                what: "put destination is not a registered destination buffer".into(),
            })
        };
        self.finish(id, status, at);
        CommandId(id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{node0, run, PROP};
    use crate::memory::HostMemory;
    use crate::verbs::{
        CompletionStatus, PostError, PutCommand, RigCommand, TriggerError, TriggeredOp,
    };
    use crate::workload::{batch_commands, DEST_BASE, IDX_BASE};
    use netsparse_externs::Time;

    /// Node 0 owns idxs 0..64: a command over local idxs completes without
    /// a peer.
    fn local_cmd() -> RigCommand {
        batch_commands(2, 2, PROP)[0]
    }

    #[test]
    fn an_operation_fires_when_its_tag_reaches_the_threshold() {
        let mut nic = node0(&[3, 5], |_| {});
        let id = nic
            .post_triggered(Time::ZERO, 7, 3, TriggeredOp::Rig(local_cmd()))
            .expect("registered");
        nic.trigger(Time::from_us(1), 7);
        nic.trigger(Time::from_us(2), 7);
        run(&mut nic, Time::from_us(10));
        assert_eq!(nic.trigger_count(7), Some(2));
        assert_eq!(nic.triggered_command(id), None, "2 of 3 triggers");
        assert_eq!(nic.stats().commands_posted, 0);
        assert!(nic.poll_cq().is_none());
        nic.trigger(Time::from_us(10), 7);
        run(&mut nic, Time::from_us(30));
        let cmd = nic
            .triggered_command(id)
            .expect("fired at the third trigger");
        // The trigger's store reaches the NIC one PCIe latency (200 ns)
        // later; the command starts then, with no doorbell.
        let s = nic.command_stats(cmd).expect("stats");
        assert_eq!(s.posted_at, Time::from_ps(10_200_000));
        assert_eq!(s.started_at, Time::from_ps(10_200_000));
        let c = nic.poll_cq().expect("completed");
        assert_eq!((c.id, c.status), (cmd, CompletionStatus::Success));
        let st = nic.stats();
        assert_eq!(
            (
                st.triggered_registered,
                st.triggered_fired,
                st.triggered_early,
                st.triggers_received
            ),
            (1, 1, 0, 3)
        );
        assert_eq!(nic.triggered_waiting(), 0);
        assert!(nic.is_idle());
    }

    #[test]
    fn a_trigger_before_its_registration_fires_the_operation_at_registration() {
        let mut nic = node0(&[3, 5], |_| {});
        nic.trigger(Time::ZERO, 9);
        nic.trigger(Time::from_ns(100), 9);
        run(&mut nic, Time::from_us(5));
        assert_eq!(nic.trigger_count(9), Some(2), "counted with no operation");
        // Threshold 2 already reached: fires when the registration arrives.
        let id = nic
            .post_triggered(Time::from_us(5), 9, 2, TriggeredOp::Rig(local_cmd()))
            .expect("registered");
        let cmd = nic.triggered_command(id).expect("fired at once");
        assert_eq!(
            nic.command_stats(cmd).expect("stats").posted_at,
            Time::from_ps(5_200_000)
        );
        // Threshold 3 is not reached yet: waits for one more trigger.
        let later = nic
            .post_triggered(Time::from_us(5), 9, 3, TriggeredOp::Rig(local_cmd()))
            .expect("registered");
        assert_eq!(nic.triggered_command(later), None);
        // A trigger still on its way when the registration arrives counts
        // first: issued at 6 us, it arrives at 6.2 us, with a registration
        // issued at 6.1 us arriving at 6.3 us.
        nic.trigger(Time::from_us(6), 11);
        let third = nic
            .post_triggered(Time::from_ns(6_100), 11, 1, TriggeredOp::Rig(local_cmd()))
            .expect("registered");
        assert!(nic.triggered_command(third).is_some());
        run(&mut nic, Time::from_us(30));
        let st = nic.stats();
        assert_eq!((st.triggered_early, st.triggered_fired), (2, 2));
        assert_eq!(nic.triggered_waiting(), 1);
        let done: Vec<_> = std::iter::from_fn(|| nic.poll_cq()).collect();
        assert_eq!(done.len(), 2);
        assert!(done.iter().all(|c| c.status == CompletionStatus::Success));
    }

    #[test]
    fn several_operations_on_one_tag_fire_at_their_own_thresholds() {
        let mut nic = node0(&[3, 5], |_| {});
        let put = PutCommand {
            dest_addr: DEST_BASE + 8,
            value: 0x1122_3344_5566_7788,
        };
        let ids = [
            nic.post_triggered(Time::ZERO, 5, 2, TriggeredOp::Rig(local_cmd())),
            nic.post_triggered(Time::ZERO, 5, 1, TriggeredOp::Put(put)),
            nic.post_triggered(Time::ZERO, 5, 2, TriggeredOp::Rig(local_cmd())),
            nic.post_triggered(Time::ZERO, 6, 1, TriggeredOp::Rig(local_cmd())),
        ]
        .map(|r| r.expect("registered"));
        nic.trigger(Time::from_us(1), 5);
        run(&mut nic, Time::from_us(3));
        let fired =
            |nic: &crate::Nic<crate::DenseMemory>| ids.map(|i| nic.triggered_command(i).is_some());
        assert_eq!(fired(&nic), [false, true, false, false]);
        let mut word = [0u8; 8];
        nic.memory().read(DEST_BASE + 8, &mut word).expect("mapped");
        assert_eq!(
            u64::from_le_bytes(word),
            put.value,
            "the put wrote its value"
        );
        let c = nic.poll_cq().expect("the put completed");
        assert_eq!(c.status, CompletionStatus::Success);
        // The put's DMA write (200 ns + 8 bytes) and the completion's
        // PCIe latency after the trigger's arrival at 1.2 us.
        assert_eq!(c.at, Time::from_ps(1_200_000 + 200_031 + 200_000));
        nic.trigger(Time::from_us(3), 5);
        run(&mut nic, Time::from_us(30));
        assert_eq!(fired(&nic), [true, true, true, false]);
        // The two RIG commands fired together, in registration order.
        let a = nic.triggered_command(ids[0]).expect("fired");
        let b = nic.triggered_command(ids[2]).expect("fired");
        assert!(a < b);
        assert_eq!(nic.stats().puts, 1);
        assert_eq!(nic.triggered_waiting(), 1);
    }

    #[test]
    fn a_full_table_refuses_with_a_typed_error_and_counts() {
        let mut nic = node0(&[3, 5], |c| {
            c.trigger_ops = 2;
            c.trigger_tags = 2;
        });
        let op = TriggeredOp::Rig(local_cmd());
        nic.post_triggered(Time::ZERO, 1, 1, op).expect("slot 1");
        nic.post_triggered(Time::ZERO, 1, 2, op).expect("slot 2");
        let e = nic.post_triggered(Time::ZERO, 2, 1, op).unwrap_err();
        assert_eq!(e, TriggerError::TableFull { capacity: 2 });
        assert!(e.to_string().contains("trigger_ops"), "{e}");
        // A fired operation frees its slot.
        nic.trigger(Time::ZERO, 1);
        run(&mut nic, Time::from_us(1));
        nic.post_triggered(Time::from_us(1), 2, 1, op)
            .expect("a slot is free");
        // Tags 1 and 2 hold the two counters: a third tag is refused at
        // registration and dropped at a trigger.
        nic.trigger(Time::from_us(1), 1);
        run(&mut nic, Time::from_us(2));
        let e = nic.post_triggered(Time::from_us(2), 3, 1, op).unwrap_err();
        assert_eq!(
            e,
            TriggerError::TagsFull {
                tag: 3,
                capacity: 2
            }
        );
        nic.trigger(Time::from_us(2), 3);
        run(&mut nic, Time::from_us(3));
        assert_eq!(nic.trigger_count(3), None);
        // Releasing a tag with no waiting operation frees its counter;
        // a tag with one waiting is kept.
        assert!(!nic.release_tag(2), "an operation waits on tag 2");
        assert_eq!(nic.trigger_count(2), Some(0));
        assert!(nic.release_tag(1));
        nic.post_triggered(Time::from_us(3), 3, 1, op)
            .expect("a counter is free");
        let st = nic.stats();
        assert_eq!(
            (
                st.triggered_rejected,
                st.triggers_dropped,
                st.triggered_registered
            ),
            (2, 1, 4)
        );
    }

    #[test]
    fn bad_operations_and_thresholds_are_refused_at_registration() {
        let mut nic = node0(&[3, 5], |_| {});
        let op = TriggeredOp::Rig(local_cmd());
        assert_eq!(
            nic.post_triggered(Time::ZERO, 1, 0, op),
            Err(TriggerError::ZeroThreshold { tag: 1 })
        );
        let unmapped = RigCommand {
            idx_addr: IDX_BASE + (1 << 30),
            ..local_cmd()
        };
        assert!(matches!(
            nic.post_triggered(Time::ZERO, 1, 1, TriggeredOp::Rig(unmapped)),
            Err(TriggerError::Op(PostError::BadIdxArray { .. }))
        ));
        let put_into_idxs = PutCommand {
            dest_addr: IDX_BASE,
            value: 1,
        };
        let e = nic
            .post_triggered(Time::ZERO, 1, 1, TriggeredOp::Put(put_into_idxs))
            .unwrap_err();
        assert!(matches!(
            e,
            TriggerError::Op(PostError::BadDestination { .. })
        ));
        assert!(e.to_string().contains("destination"), "{e}");
        let st = nic.stats();
        assert_eq!((st.triggered_rejected, st.triggered_registered), (3, 0));
        assert_eq!(nic.trigger_count(1), None, "nothing registered");
    }
}
