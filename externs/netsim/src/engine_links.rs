//! Frames between devices: what a device emitted goes through the tap onto
//! its links ([`Engine::dispatch_frames`]), waits there for credits when the
//! receiver's buffer is full (flow control, `flow.rs`), serialises onto the
//! link (`commit`) and arrives (`take_frame`); paused links resume when
//! bytes leave the receiver (`wake`, `resume`), and a cycle of full buffers
//! that nothing can drain stops the run (`check_stuck`).

use super::*;

/// A device's window output as the parallel merge dispatches it: its
/// frames classified when emitted, and the pool arena (taken when the
/// first frame goes in flight) that will hold its bytes from the end of
/// the merge on ([`FramePool::keep`](super::FramePool::keep)).
pub(crate) struct Kept<'a> {
    pub(crate) arena: &'a mut Option<u32>,
    pub(crate) classes: &'a [FrameClass],
}

impl<D: Datapath + ?Sized, T: LinkTap> Engine<D, T> {
    /// The frame a popped arrival event delivers: (device, port, pool
    /// buffer, charged length; 0 for an injected frame). A link head takes
    /// the first frame in flight off its link and queues the link's next
    /// frame, if any, as the new head. `None` for a wake event.
    pub(crate) fn take_frame(&mut self, ev: Event) -> Option<(DeviceId, u32, u32, u64)> {
        match ev.kind {
            EventKind::Arrival { device, port, buf } => Some((device, port, buf, 0)),
            EventKind::LinkHead { link } => {
                let l = &mut self.links[link as usize];
                let (_, _, buf, len) = l.in_flight.pop_front()?;
                let (device, port) = (l.to_device, l.to_port);
                if let Some(&(time, seq, _, _)) = l.in_flight.front() {
                    self.heap.push(Event {
                        time,
                        seq,
                        kind: EventKind::LinkHead { link },
                    });
                }
                Some((device, port, buf, len))
            }
            EventKind::Wake { .. } => None,
        }
    }

    /// Hint that the frame of the event now first on the heap is wanted
    /// next: when it is a link's head, start loading that link's first frame
    /// in flight (written when it was sent, a window or more ago, and likely
    /// out of the cache). No effect on results.
    #[inline]
    pub(crate) fn prefetch_next_frame(&self) {
        if let Some(Event {
            kind: EventKind::LinkHead { link },
            ..
        }) = self.heap.peek()
        {
            if let Some(f) = self.links[*link as usize].in_flight.front() {
                netsparse_externs::hint::prefetch(f);
            }
        }
    }

    /// After a frame arrived at device `d` (its credit returned) and `d`'s
    /// outputs were queued: links paused in front of `d` try again.
    #[inline]
    pub(crate) fn after_arrival(&mut self, d: usize) -> Result<(), EngineError> {
        if self.bufs[d].paused_in.is_empty() {
            return Ok(());
        }
        self.resume(d)
    }

    /// A wake event for `device` at `time`: bytes left its buffer.
    pub(crate) fn wake(&mut self, device: DeviceId, time: Time) -> Result<(), EngineError> {
        self.stats.wakes += 1;
        let d = device as usize;
        if self.bufs[d].wake_at != Some(time) {
            return Ok(()); // superseded by an earlier wake
        }
        self.bufs[d].wake_at = None;
        self.resume(d)
    }

    /// Put the waiting frames of the links paused in front of device `d` on
    /// their links while `d`'s input buffers have room, trying the links in
    /// the order they paused (each input buffer is separate: a link that
    /// must still wait does not hold up the others); then queue a wake for
    /// `d`'s next release if some link is still paused.
    fn resume(&mut self, d: usize) -> Result<(), EngineError> {
        let now = self.now;
        self.bufs[d].prune(now);
        let mut paused = std::mem::take(&mut self.bufs[d].paused_in);
        paused.retain(|&link| {
            let from = self.links[(link ^ 1) as usize].to_device as usize;
            let to_port = self.links[link as usize].to_port;
            loop {
                let l = &mut self.links[link as usize];
                let Some(&(buf, len, ready, charge)) = l.waiting.front() else {
                    break;
                };
                if !self.bufs[d].admits(to_port, len) {
                    break;
                }
                l.waiting.pop_front();
                l.waiting_bytes -= len;
                self.commit(link, from, ready.max(now), ready, (buf, len, charge));
            }
            let l = &mut self.links[link as usize];
            if !l.waiting.is_empty() {
                return true;
            }
            if let Some(since) = l.paused_since.take() {
                l.counters.paused_ps += (now - since).as_ps();
            }
            false
        });
        // Links that paused meanwhile (none can: `d`'s buffers only free
        // up here) would be in the new queue; keep the old order first.
        paused.append(&mut self.bufs[d].paused_in);
        self.bufs[d].paused_in = paused;
        if !self.bufs[d].paused_in.is_empty() {
            self.schedule_wake(d);
        }
        Ok(())
    }

    /// Queue a wake for device `d` at its next release, unless one is
    /// queued for that time or earlier.
    fn schedule_wake(&mut self, d: usize) {
        let b = &mut self.bufs[d];
        b.prune(self.now);
        let Some(at) = b.next_release() else {
            // Only frames in flight to `d` hold its buffer: their arrivals
            // resume the paused links.
            return;
        };
        if b.wake_at.is_some_and(|w| w <= at) {
            return;
        }
        b.wake_at = Some(at);
        self.seq += 1;
        self.heap.push(Event {
            time: at,
            seq: self.seq,
            kind: EventKind::Wake {
                device: d as DeviceId,
            },
        });
    }

    /// Start a frame on link direction `link` from device `from`: it starts
    /// serialising at `max(at, busy)` (it was ready at `ready`), takes its
    /// credit at the receiver and leaves the sender's queue, where it is
    /// charged to input `charge`, when sent. `frame`: (pool buffer, charged
    /// length, charge).
    fn commit(&mut self, link: u32, from: usize, at: Time, ready: Time, frame: (u32, u64, u32)) {
        let (buf, len, charge) = frame;
        let l = &mut self.links[link as usize];
        let start = at.max(l.busy_until);
        let ser = serialization_time(len, l.params.gbps);
        let end = start + ser;
        l.busy_until = end;
        let wait = (start - ready).as_ps();
        l.counters.queue_delay_ps += wait;
        l.counters.max_queue_delay_ps = l.counters.max_queue_delay_ps.max(wait);
        l.counters.busy_ps += ser.as_ps();
        self.seq += 1;
        let arrival = end + l.params.latency;
        if l.in_flight.is_empty() {
            self.heap.push(Event {
                time: arrival,
                seq: self.seq,
                kind: EventKind::LinkHead { link },
            });
        }
        l.in_flight.push_back((arrival, self.seq, buf, len));
        let (to, to_port) = (l.to_device as usize, l.to_port);
        self.bufs[to].reserve(to_port, len);
        let out = self.links[(link ^ 1) as usize].to_port;
        self.bufs[from].will_release(end, len, charge, out);
        if !self.bufs[from].paused_in.is_empty() {
            // The sender's own frames now have a time to leave.
            self.schedule_wake(from);
        }
    }

    /// Whether the buffers deadlocked: frames wait on paused links while
    /// nothing is in flight anywhere (so no buffer can ever drain: device
    /// timers can only add frames). Checked when the network goes idle and
    /// every [`PROGRESS_EVERY`] events.
    pub(crate) fn check_stuck(&mut self) -> Result<(), EngineError> {
        if !self.flow {
            return Ok(());
        }
        let frames: u64 = self.links.iter().map(|l| l.waiting.len() as u64).sum();
        if frames == 0 || self.links.iter().any(|l| !l.in_flight.is_empty()) {
            return Ok(());
        }
        let now = self.now;
        for b in &mut self.bufs {
            b.prune(now);
            if b.next_release().is_some() {
                return Ok(());
            }
        }
        // Follow the waits: a paused link from a to b means a waits on b.
        let waits_on = |dev: usize| -> Option<usize> {
            self.port_links[dev]
                .iter()
                .flatten()
                .map(|&id| &self.links[id as usize])
                .find(|l| !l.waiting.is_empty())
                .map(|l| l.to_device as usize)
        };
        let first = self
            .links
            .iter()
            .position(|l| !l.waiting.is_empty())
            .map(|i| self.links[i ^ 1].to_device as usize)
            .unwrap_or(0);
        let mut path = vec![first];
        let mut cur = first;
        while let Some(next) = waits_on(cur) {
            if let Some(pos) = path.iter().position(|&p| p == next) {
                path.drain(..pos);
                path.push(next);
                break;
            }
            path.push(next);
            cur = next;
        }
        let cycle = path
            .iter()
            .map(|&p| self.labels[p].as_str())
            .collect::<Vec<_>>()
            .join(" -> ");
        Err(EngineError::FlowControlDeadlock {
            now: self.now,
            frames,
            cycle,
        })
    }

    /// Put the frames device `d` just emitted on their links, through the
    /// tap; they are charged to its input port `charge` (the port of the
    /// frame it handled, or [`INTERNAL`]).
    pub(super) fn dispatch(&mut self, d: usize, charge: u32) -> Result<(), EngineError> {
        if self.out.is_empty() {
            return Ok(());
        }
        let out = std::mem::take(&mut self.out);
        let r = self.dispatch_frames(d, &out, 0..out.len(), charge, None);
        self.out = out;
        self.out.clear();
        r
    }

    /// Put frames `range` of `out`, emitted by device `d` now, on their
    /// links, charged to `d`'s input `charge` (flow control). With `kept`
    /// (the parallel merge), the frames in flight stay in `out`'s bytes and
    /// are counted by their classes; without, each is classified here and
    /// copied into the pool.
    pub(crate) fn dispatch_frames(
        &mut self,
        d: usize,
        out: &Outputs,
        range: std::ops::Range<usize>,
        charge: u32,
        mut kept: Option<Kept<'_>>,
    ) -> Result<(), EngineError> {
        let ready = self.now + self.latency[d];
        let first = range.start;
        for (i, f) in out.frames()[range].iter().enumerate() {
            let bytes = &out.bytes()[f.range.clone()];
            let link = self.port_links[d].get(f.port as usize).copied().flatten();
            let frame = TapFrame {
                seq: self.sent,
                at: self.now,
                from: (d as DeviceId, f.port),
                to: link.map(|id| {
                    let l = &self.links[id as usize];
                    (l.to_device, l.to_port)
                }),
                bytes,
            };
            self.sent += 1;
            if self.tap.on_frame(&frame, false) {
                continue;
            }
            let Some(link_id) = link else {
                if self.cfg.unconnected == UnconnectedPorts::Discard {
                    self.unconnected += 1;
                    continue;
                }
                return Err(EngineError::UnconnectedPort {
                    device: self.labels[d].clone(),
                    port: f.port,
                    now: self.now,
                });
            };
            let class = match &kept {
                Some(k) => k.classes[first + i],
                None => FrameClass::of(bytes),
            };
            let len = self.links[link_id as usize].counters.count(
                class,
                bytes.len(),
                self.cfg.netsparse_header_adjust,
            );
            let c = &mut self.dev_counters[d];
            c.frames_out += 1;
            c.last_tx = Some(self.now);
            let buf = match &mut kept {
                Some(k) => {
                    let a = match *k.arena {
                        Some(a) => a,
                        None => *k.arena.insert(self.pool.arena()),
                    };
                    self.pool.alloc_in(a, f.range.clone())
                }
                None => self.pool.alloc(bytes),
            };
            if !self.flow {
                self.commit(link_id, d, ready, ready, (buf, len, charge));
                continue;
            }
            self.flow_dispatch(d, link_id, ready, (buf, len, charge))?;
        }
        Ok(())
    }

    /// [`Engine::dispatch_frames`] for one frame under flow control: it
    /// enters the sender's queue, and the link if the receiver has room and
    /// nothing waits before it; otherwise it waits and the link pauses.
    fn flow_dispatch(
        &mut self,
        d: usize,
        link_id: u32,
        ready: Time,
        frame: (u32, u64, u32),
    ) -> Result<(), EngineError> {
        let (buf, len, charge) = frame;
        let now = self.now;
        let l = &mut self.links[link_id as usize];
        let (to, to_port) = (l.to_device as usize, l.to_port);
        // Bytes ahead of this frame in the queue: those waiting, and what
        // is left to send of those started.
        let ahead: u64 = l.waiting_bytes
            + if l.params.is_unlimited() {
                0
            } else {
                let left = l.busy_until.as_ps().saturating_sub(now.as_ps());
                (left as u128 * u128::from(l.params.gbps) / 8000) as u64
            };
        l.counters.peak_backlog_bytes = l.counters.peak_backlog_bytes.max(ahead + len);
        self.bufs[d].enqueue(charge, len, now);
        let rx = &mut self.bufs[to];
        if rx.tracked() && len > rx.port_capacity() {
            return Err(EngineError::FrameExceedsBuffer {
                from: self.labels[d].clone(),
                to: format!("{}:{to_port}", self.labels[to]),
                len,
                capacity: rx.port_capacity(),
                now,
            });
        }
        rx.prune(now);
        let l = &mut self.links[link_id as usize];
        if l.waiting.is_empty() && self.bufs[to].admits(to_port, len) {
            self.commit(link_id, d, ready, ready, (buf, len, charge));
            return Ok(());
        }
        l.waiting.push_back((buf, len, ready, charge));
        l.waiting_bytes += len;
        self.bufs[to].stats.paused_frames += 1;
        if l.paused_since.is_none() {
            l.paused_since = Some(now);
            self.bufs[to].paused_in.push_back(link_id);
            self.schedule_wake(to);
        }
        Ok(())
    }
}
