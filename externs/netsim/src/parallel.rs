//! Parallel windows: [`Engine::run_parallel`] runs the devices of one
//! stretch of simulated time on several threads and gives the same results,
//! byte for byte, as [`Engine::run`].
//!
//! The method is conservative synchronous windows, with the links'
//! propagation delay as the lookahead. No frame arrives sooner than the
//! smallest link delay `L` after it was sent, so in the window `[T, T + L)`
//! that starts at the next event `T`, nothing one device does can reach
//! another device inside the window. Each device with work in the window
//! (frames arriving in it, or a deadline in it) processes its events on its
//! own, in the order the serial loop would, into its own output buffer, and
//! logs every event: its time, which arrival or its deadline, where its
//! frames end, and the device's next deadline afterwards. Then the calling
//! thread merges the logs in the serial loop's global (time, sequence)
//! order and does everything that touches shared state exactly as the
//! serial loop does: counters, sequence numbers, the frame pool, the links
//! (serialisation, taps, arrival events), the deadline heap and the limits.
//!
//! Sequence numbers of deadlines set inside the window are unknown while
//! the devices run; a device only needs their order against its own other
//! events, which its local order gives (they are later than every number
//! handed out before the window), and the merge hands out the real numbers
//! in the global order. The stop flag and the progress callback are
//! consulted between windows.
//!
//! Windows with few events run on the calling thread alone (same code, no
//! thread hand-off), as every window does with one thread; an engine with a
//! link without propagation delay has no lookahead and runs the serial
//! loop.
//!
//! The frames a window delivers were written a window earlier, after a
//! round of every other device's work, and have mostly left the CPU's
//! cache; so a device prefetches its next arrivals while it handles one,
//! the gathering the next link's first frame in flight while it takes one,
//! and the merge each device's next log entry (its frames' headers, and
//! the pool's record of the frame it releases) as soon as it keys it. The
//! prefetches are hints only (x86_64; nothing elsewhere) and change no
//! result.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use netsparse_externs::hint::prefetch as prefetch_one;
use netsparse_externs::{Datapath, Outputs, Time};

use crate::engine::{
    Engine, EngineError, Event, EventKind, EventOrder, FramePool, Kept, Outcome, PROGRESS_EVERY,
};
use crate::flow::INTERNAL;
use crate::link::FrameClass;
use crate::tap::LinkTap;

/// Windows with fewer events than this run on the calling thread: handing
/// them to another thread costs more than it saves.
const MIN_PARALLEL_EVENTS: usize = 48;

/// `Entry::arrival` of a deadline.
const DEADLINE: u32 = u32::MAX;

/// Marks a flow-control wake event's device in a merge key.
const WAKE: u32 = 1 << 31;

/// The serial loop's order of an event, (time, class, sequence, device),
/// packed so that comparing keys compares those four in turn: time in the
/// high 64 bits of the first word, the class (0, or 1 for a deadline under
/// [`EventOrder::ArrivalsFirst`]) in bit 63, the sequence number below it.
type MergeKey = (u128, u32);

/// Pack an event's order into a [`MergeKey`]; `seq` is below 2^63 (the
/// engine's sequence numbers count events, or it is a device index).
fn merge_key(time: Time, class: u8, seq: u64, device: u32) -> MergeKey {
    debug_assert!(seq < 1 << 63 && class <= 1);
    (
        (u128::from(time.as_ps()) << 64) | (u128::from(class) << 63) | u128::from(seq),
        device,
    )
}

/// The time of a [`MergeKey`].
fn key_time(k: &MergeKey) -> Time {
    Time::from_ps((k.0 >> 64) as u64)
}

/// One event a device processed in a window. Aligned to its 32 bytes so
/// that no entry straddles two cache lines: the merge prefetches an entry
/// by its first line.
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct Entry {
    time: Time,
    /// Index into the device's arrivals, or [`DEADLINE`].
    arrival: u32,
    /// End of the event's frames in the device's outputs.
    frames_end: u32,
    /// The device's next deadline after the event.
    next: Option<Time>,
}

/// A frame arriving at a device in the window. Aligned to its 32 bytes,
/// as [`Entry`] is.
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct Arrival {
    time: Time,
    /// The arrival event's sequence number.
    seq: u64,
    port: u32,
    /// The frame's pool buffer.
    buf: u32,
    /// The length charged to the receiver's buffer (0: not charged).
    len: u64,
}

// The alignment keeps each record within one cache line only while it is
// 32 bytes: a field added to either must keep it so, or change the
// alignment and the prefetches with it.
const _: () = assert!(std::mem::size_of::<Entry>() == 32 && std::mem::size_of::<Arrival>() == 32);

/// One device's work in the current window.
#[derive(Debug, Default)]
pub(crate) struct DevWork {
    /// Frames arriving in the window, in (time, sequence) order.
    arrivals: Vec<Arrival>,
    log: Vec<Entry>,
    out: Outputs,
    /// Each frame of `out`, classified for the link counters as it was
    /// emitted.
    classes: Vec<FrameClass>,
    /// The pool arena that keeps `out`'s bytes once the merge is done, if
    /// the merge put any of its frames in flight.
    arena: Option<u32>,
    /// The engine's `timer_at` for the device when the window starts.
    timer_at: Option<Time>,
    /// Its queued deadline then: (time, sequence).
    timer: Option<(Time, u64)>,
    /// Events expected (for balancing the threads).
    load: usize,
    active: bool,
    /// Merge cursor: next log entry, and frames dispatched so far.
    cursor: u32,
    frames_done: u32,
}

impl Windows {
    /// Device `d`'s work, marking it active in the window.
    #[inline]
    fn activate(&mut self, d: u32) -> &mut DevWork {
        let w = &mut self.work[d as usize];
        if !w.active {
            w.active = true;
            self.active.push(d);
        }
        w
    }
}

impl DevWork {
    /// Done with the window: forget its arrivals, log and outputs. The
    /// output's bytes go to the pool as an arena if frames in flight still
    /// point into them.
    fn end_window(&mut self, pool: &mut FramePool) {
        self.arrivals.clear();
        self.log.clear();
        self.classes.clear();
        match self.arena.take() {
            Some(a) => pool.keep(a, &mut self.out),
            None => self.out.clear(),
        }
        self.active = false;
    }
}

/// The engine's reusable state for parallel windows.
#[derive(Debug, Default)]
pub(crate) struct Windows {
    work: Vec<DevWork>,
    active: Vec<u32>,
    /// Each active device's next logged event, by [`MergeKey`]: a device's
    /// entry is replaced in place once its event is done.
    merge: BinaryHeap<Reverse<MergeKey>>,
    /// The window's flow-control wake events not yet merged, by
    /// [`MergeKey`] (device | [`WAKE`]): queued by the gathering, and by
    /// the merge itself, which empties it.
    wake_heap: BinaryHeap<Reverse<MergeKey>>,
    /// Windows run, and how many of them used more than one thread.
    pub(crate) windows: u64,
    pub(crate) parallel_windows: u64,
    /// Wall-clock time of the windows (instrumentation only): see
    /// [`WindowTimes`].
    times: WindowTimes,
}

/// Where the wall-clock time of [`Engine::run_parallel`]'s windows went:
/// the part every thread works on (the devices' events) and the part the
/// calling thread does alone (gathering the arrivals, merging the logs).
/// Instrumentation of the run, not part of what it simulates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WindowTimes {
    /// In the devices' part of the windows.
    pub devices: Duration,
    /// In the serial part (gather and merge).
    pub serial: Duration,
}

impl WindowTimes {
    /// How many times faster the windows could run if the devices' part
    /// took no time at all (unlimited cores, Amdahl's bound): all over the
    /// serial part. `None` before any window ran.
    pub fn speedup_bound(&self) -> Option<f64> {
        let serial = self.serial.as_secs_f64();
        (serial > 0.0).then(|| (serial + self.devices.as_secs_f64()) / serial)
    }
}

/// A device and its work while [`Engine::run_parallel`] runs: the devices
/// leave the engine for the run, so that the worker threads, which live as
/// long as the run, can reach them.
struct Slot<D: ?Sized> {
    dev: Option<Box<D>>,
    work: DevWork,
}

/// One parallel window's device queue, shared by the threads.
struct Job {
    /// Devices, longest first.
    items: Vec<u32>,
    /// Next item to take.
    next: AtomicUsize,
    /// Items finished.
    finished: AtomicUsize,
    /// A device panicked on a worker thread.
    panicked: AtomicBool,
    end: Time,
    order: EventOrder,
    base_seq: u64,
}

/// The worker threads' mailbox: the current job, by epoch.
#[derive(Default)]
struct Crew {
    /// Threads in all, the calling one included.
    threads: usize,
    state: Mutex<CrewState>,
    wake: Condvar,
}

#[derive(Default)]
struct CrewState {
    epoch: u64,
    job: Option<Arc<Job>>,
    shutdown: bool,
}

/// Lock, ignoring poisoning (a panic elsewhere is propagated by the thread
/// scope; the data is only read or replaced).
fn lock<X: ?Sized>(m: &Mutex<X>) -> MutexGuard<'_, X> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Crew {
    fn publish(&self, job: Arc<Job>) {
        let mut st = lock(&self.state);
        st.epoch += 1;
        st.job = Some(job);
        self.wake.notify_all();
    }

    fn shutdown(&self) {
        lock(&self.state).shutdown = true;
        self.wake.notify_all();
    }

    /// A worker thread: run each new job until shut down.
    fn worker<D: Datapath + Send + ?Sized>(
        &self,
        slots: &[Mutex<Slot<D>>],
        bufs: &RwLock<FramePool>,
    ) {
        let mut seen = 0;
        loop {
            let job = {
                let mut st = lock(&self.state);
                loop {
                    if st.shutdown {
                        return;
                    }
                    if st.epoch != seen {
                        seen = st.epoch;
                        break st.job.clone();
                    }
                    st = self.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                }
            };
            if let Some(job) = job {
                run_job(&job, slots, bufs);
            }
        }
    }
}

/// Shuts the crew down when dropped.
struct ShutDownOnDrop<'a>(&'a Crew);

impl Drop for ShutDownOnDrop<'_> {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

/// Counts an item finished even if its device panics.
struct Finish<'a>(&'a Job);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.panicked.store(true, AtomicOrdering::Release);
        }
        self.0.finished.fetch_add(1, AtomicOrdering::Release);
    }
}

/// Take devices off `job`'s queue and run them until none is left.
fn run_job<D: Datapath + Send + ?Sized>(
    job: &Job,
    slots: &[Mutex<Slot<D>>],
    bufs: &RwLock<FramePool>,
) {
    loop {
        let i = job.next.fetch_add(1, AtomicOrdering::Relaxed);
        let Some(&d) = job.items.get(i) else { break };
        let _finish = Finish(job);
        let bufs = bufs.read().unwrap_or_else(|p| p.into_inner());
        let mut slot = lock(&slots[d as usize]);
        let Slot { dev, work } = &mut *slot;
        if let Some(dev) = dev.as_deref_mut() {
            run_device(dev, work, &bufs, job.end, job.order, job.base_seq);
        }
    }
}

/// Process one device's events of the window `[.., end)` in serial order.
fn run_device<D: Datapath + ?Sized>(
    dev: &mut D,
    w: &mut DevWork,
    bufs: &FramePool,
    end: Time,
    order: EventOrder,
    base_seq: u64,
) {
    let mut timer_at = w.timer_at;
    let mut timer = w.timer;
    let mut local = base_seq;
    let mut next_arrival = 0usize;
    loop {
        let arrival = w.arrivals.get(next_arrival).copied();
        let deadline = timer.filter(|t| t.0 < end);
        let (time, index) = match (arrival, deadline) {
            (None, None) => break,
            (Some(Arrival { time: at, seq, .. }), Some((tt, tseq))) => {
                let arrival_first = match order {
                    EventOrder::Sequence => (at, seq) < (tt, tseq),
                    EventOrder::ArrivalsFirst => at <= tt,
                };
                if arrival_first {
                    (at, next_arrival as u32)
                } else {
                    (tt, DEADLINE)
                }
            }
            (Some(Arrival { time: at, .. }), None) => (at, next_arrival as u32),
            (None, Some((tt, _))) => (tt, DEADLINE),
        };
        if index == DEADLINE {
            timer = None;
            timer_at = None;
            dev.on_timer(time, &mut w.out);
        } else {
            let Arrival { port, buf, .. } = w.arrivals[next_arrival];
            // The next frame was written a window ago and is likely out of
            // the cache by now: start loading it while this one runs.
            // (And the one after it: its buffer's place in the pool.)
            if let Some(after) = w.arrivals.get(next_arrival + 1) {
                prefetch(bufs.bytes(after.buf));
            }
            if let Some(later) = w.arrivals.get(next_arrival + 2) {
                bufs.prefetch(later.buf);
            }
            dev.on_packet(time, port, bufs.bytes(buf), &mut w.out);
            next_arrival += 1;
        }
        for f in &w.out.frames()[w.classes.len()..] {
            w.classes
                .push(FrameClass::of(&w.out.bytes()[f.range.clone()]));
        }
        let next = dev.next_deadline();
        w.log.push(Entry {
            time,
            arrival: index,
            frames_end: w.out.len() as u32,
            next,
        });
        if index == DEADLINE && next.is_some_and(|n| n <= time) {
            // The merge stops the run here with DeadlineNotAdvancing.
            break;
        }
        if next != timer_at {
            timer_at = next;
            local += 1;
            timer = next.map(|n| (n.max(time), local));
        }
    }
}

/// Ask the CPU to bring the first lines of `bytes` (up to 512) into its
/// cache: a hint with no effect on results.
#[inline]
fn prefetch(bytes: &[u8]) {
    for line in bytes.chunks(64).take(8) {
        prefetch_one(&line[0]);
    }
}

impl<D: Datapath + Send + ?Sized, T: LinkTap> Engine<D, T> {
    /// [`Engine::run_observed`] with the devices of each window of
    /// simulated time spread over `threads` threads (the calling one
    /// included). Results — every device's state, every counter, every
    /// frame a tap sees, in order — are those of the serial loop; the stop
    /// flag and `observe` are consulted between windows rather than every
    /// few thousand events. `threads` = 1 runs the windows on the calling
    /// thread (about 10 % faster than the serial loop on the cluster
    /// simulator: each device works through its events of a window in one
    /// go); `threads` = 0, or a link without propagation delay (no
    /// lookahead), runs the serial loop.
    pub fn run_parallel(
        &mut self,
        threads: usize,
        observe: &mut dyn FnMut(&Engine<D, T>) -> bool,
    ) -> Result<Outcome, EngineError> {
        let lookahead = self.links.iter().map(|l| l.params.latency).min();
        let Some(lookahead) = lookahead.filter(|l| *l > Time::ZERO) else {
            return self.run_observed(observe);
        };
        if threads == 0 {
            return self.run_observed(observe);
        }
        self.start()?;
        let mut par = std::mem::take(&mut self.par);
        par.work.resize_with(self.devices.len(), DevWork::default);
        let slots: Vec<Mutex<Slot<D>>> = self
            .devices
            .drain(..)
            .map(|dev| {
                Mutex::new(Slot {
                    dev: Some(dev),
                    work: DevWork::default(),
                })
            })
            .collect();
        let bufs = RwLock::new(FramePool::default());
        let crew = Crew {
            threads,
            ..Crew::default()
        };
        let result = std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(|| crew.worker(&slots, &bufs));
            }
            // Shut the crew down however the windows end, a panic included
            // (or the scope would wait for the workers forever).
            let _crew_down = ShutDownOnDrop(&crew);
            self.windows(&mut par, &slots, &bufs, &crew, lookahead, observe)
        });
        self.devices = slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .dev
                    .expect("every device is back in its slot between windows")
            })
            .collect();
        for w in &mut par.work {
            w.end_window(&mut self.pool);
        }
        par.active.clear();
        self.par = par;
        let outcome = result?;
        self.sync_stats();
        observe(self);
        Ok(outcome)
    }

    /// Windows run by [`Engine::run_parallel`] so far, and how many of them
    /// were spread over more than one thread (the serial loop runs none).
    pub fn window_counts(&self) -> (u64, u64) {
        (self.par.windows, self.par.parallel_windows)
    }

    /// The wall-clock time of the windows run so far, devices' part and
    /// serial part (zero for the serial loop).
    pub fn window_times(&self) -> WindowTimes {
        self.par.times
    }

    fn windows(
        &mut self,
        par: &mut Windows,
        slots: &[Mutex<Slot<D>>],
        bufs: &RwLock<FramePool>,
        crew: &Crew,
        lookahead: Time,
        observe: &mut dyn FnMut(&Engine<D, T>) -> bool,
    ) -> Result<Outcome, EngineError> {
        let stop = self.cfg.stop.clone();
        let mut next_progress = (self.stats.events / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
        loop {
            if stop
                .as_ref()
                .is_some_and(|s| s.load(AtomicOrdering::Relaxed))
            {
                return Ok(Outcome::Stopped);
            }
            let Some((start, _)) = self.next_event() else {
                self.check_stuck()?;
                return Ok(Outcome::Idle);
            };
            self.check_limits(start)?;
            let end = Time::from_ps(start.as_ps().saturating_add(lookahead.as_ps()));
            let t0 = Instant::now();
            let events = self.gather(par, end);
            par.windows += 1;
            let parallel =
                crew.threads > 1 && events >= MIN_PARALLEL_EVENTS && par.active.len() > 1;
            if parallel {
                par.parallel_windows += 1;
            }
            let t1 = Instant::now();
            self.run_window(par, slots, bufs, crew, end, parallel);
            let t2 = Instant::now();
            let merged = self.merge(par, end);
            for &d in &par.active {
                par.work[d as usize].end_window(&mut self.pool);
            }
            par.active.clear();
            // Frames that wait long keep their device's whole window
            // output alive: move them out of sparse outputs.
            self.pool.compact();
            let t3 = Instant::now();
            par.times.devices += t2 - t1;
            par.times.serial += (t1 - t0) + (t3 - t2);
            // Empty unless the merge stopped with an error.
            par.wake_heap.clear();
            merged?;
            if self.stats.events >= next_progress {
                next_progress = (self.stats.events / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
                self.check_stuck()?;
                self.sync_stats();
                // The devices come back for the observer, then leave again.
                self.devices = slots.iter().filter_map(|m| lock(m).dev.take()).collect();
                let go = observe(self);
                for (m, dev) in slots.iter().zip(self.devices.drain(..)) {
                    lock(m).dev = Some(dev);
                }
                if !go {
                    return Ok(Outcome::Stopped);
                }
            }
        }
    }

    /// Take every frame arriving before `end` off the event heap and the
    /// links into its device's work, and mark the devices with a deadline
    /// before `end`. Returns the number of events expected.
    fn gather(&mut self, par: &mut Windows, end: Time) -> usize {
        let mut events = 0;
        while let Some(ev) = self.heap.peek().copied() {
            if ev.time >= end {
                break;
            }
            self.heap.pop();
            self.prefetch_next_frame();
            if let EventKind::Wake { device } = ev.kind {
                // Engine work: the merge does it in order.
                par.wake_heap
                    .push(Reverse(merge_key(ev.time, 0, ev.seq, device | WAKE)));
                continue;
            }
            if let EventKind::LinkHead { link } = ev.kind {
                events += self.drain_link(par, link, end);
                continue;
            }
            let Some((device, port, buf, len)) = self.take_frame(ev) else {
                continue;
            };
            let w = par.activate(device);
            w.arrivals.push(Arrival {
                time: ev.time,
                seq: ev.seq,
                port,
                buf,
                len,
            });
            events += 1;
        }
        for &(time, _, d) in self.timers.entries() {
            if time < end {
                par.activate(d);
                events += 1;
            }
        }
        for &d in &par.active {
            let w = &mut par.work[d as usize];
            // A device fed by several links got each link's frames in one
            // run: put them in the serial loop's (time, sequence) order.
            if !w.arrivals.is_sorted_by_key(|a| (a.time, a.seq)) {
                w.arrivals.sort_unstable_by_key(|a| (a.time, a.seq));
            }
            w.timer_at = self.timer_at[d as usize];
            w.timer = self.timers.get(d).map(|(t, s, _)| (t, s));
            w.load = w.arrivals.len() + 1;
            w.cursor = 0;
            w.frames_done = 0;
        }
        events
    }

    /// Move every frame of link direction `link` that arrives before `end`
    /// into its receiver's work (the link's head event was just taken off
    /// the heap), and queue the link's next frame, if any, as its new head.
    /// One heap operation per link and window rather than two per frame;
    /// the receiver's arrivals are put in order at the end of the gather.
    /// Returns the frames moved.
    fn drain_link(&mut self, par: &mut Windows, link: u32, end: Time) -> usize {
        let l = &mut self.links[link as usize];
        let (device, port) = (l.to_device, l.to_port);
        let w = par.activate(device);
        let mut moved = 0;
        while let Some(&(time, seq, buf, len)) = l.in_flight.front() {
            if time >= end {
                self.heap.push(Event {
                    time,
                    seq,
                    kind: EventKind::LinkHead { link },
                });
                break;
            }
            l.in_flight.pop_front();
            w.arrivals.push(Arrival {
                time,
                seq,
                port,
                buf,
                len,
            });
            moved += 1;
        }
        moved
    }

    /// Let every active device process its events of the window: on this
    /// thread alone, or shared with the crew.
    fn run_window(
        &mut self,
        par: &mut Windows,
        slots: &[Mutex<Slot<D>>],
        bufs: &RwLock<FramePool>,
        crew: &Crew,
        end: Time,
        parallel: bool,
    ) {
        let order = self.cfg.order;
        let base = self.seq;
        if !parallel {
            for &d in &par.active {
                let mut slot = lock(&slots[d as usize]);
                if let Some(dev) = slot.dev.as_deref_mut() {
                    run_device(dev, &mut par.work[d as usize], &self.pool, end, order, base);
                }
            }
            return;
        }
        // One queue, longest first; every thread (this one included) takes
        // the next device until none is left, so a worker the OS schedules
        // late only finds the queue empty.
        par.active
            .sort_unstable_by_key(|&d| (Reverse(par.work[d as usize].load), d));
        for &d in &par.active {
            std::mem::swap(
                &mut lock(&slots[d as usize]).work,
                &mut par.work[d as usize],
            );
        }
        std::mem::swap(
            &mut *bufs.write().unwrap_or_else(|p| p.into_inner()),
            &mut self.pool,
        );
        let job = Arc::new(Job {
            items: par.active.clone(),
            next: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            end,
            order,
            base_seq: base,
        });
        crew.publish(job.clone());
        run_job(&job, slots, bufs);
        // What is left is in progress on a worker.
        let mut spins = 0u32;
        while job.finished.load(AtomicOrdering::Acquire) < job.items.len() {
            if spins < 1_000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
        if job.panicked.load(AtomicOrdering::Acquire) {
            panic!("a device panicked on a simulation thread");
        }
        std::mem::swap(
            &mut *bufs.write().unwrap_or_else(|p| p.into_inner()),
            &mut self.pool,
        );
        for &d in &par.active {
            std::mem::swap(
                &mut lock(&slots[d as usize]).work,
                &mut par.work[d as usize],
            );
        }
    }

    /// The merge key of device `d`'s next logged event, as the serial loop
    /// orders events.
    fn entry_key(&self, par: &Windows, d: u32) -> Option<MergeKey> {
        let w = &par.work[d as usize];
        let e = w.log.get(w.cursor as usize)?;
        // The merge reads the headers of the entry's frames (to count them
        // on their links) and copies them into the pool; they were written
        // a window ago, maybe on another core: start loading the first two.
        let (frames, bytes) = (w.out.frames(), w.out.bytes());
        for f in frames
            .get(w.frames_done as usize..e.frames_end as usize)
            .unwrap_or_default()
            .iter()
            .take(2)
        {
            if let Some(head) = bytes.get(f.range.clone()) {
                prefetch(head.get(..128).unwrap_or(head));
            }
        }
        // The device's entry after this one, and the arrival it most
        // likely is, will be wanted once this one is merged.
        if let Some(after) = w.log.get(w.cursor as usize + 1) {
            prefetch_one(after);
            if let Some(a) = w.arrivals.get((e.arrival as usize).wrapping_add(1)) {
                prefetch_one(a);
            }
        }
        Some(if e.arrival == DEADLINE {
            match self.cfg.order {
                EventOrder::Sequence => {
                    let seq = self.timers.get(d).map_or(0, |(_, s, _)| s);
                    merge_key(e.time, 0, seq, d)
                }
                EventOrder::ArrivalsFirst => merge_key(e.time, 1, u64::from(d), d),
            }
        } else {
            let a = &w.arrivals[e.arrival as usize];
            // Merging it releases its frame: start loading the pool's record.
            self.pool.prefetch(a.buf);
            merge_key(e.time, 0, a.seq, d)
        })
    }

    /// Replay the window's logs in the serial loop's order on the shared
    /// state, with the flow-control wake events of the window (`end` is
    /// its end) in their places.
    fn merge(&mut self, par: &mut Windows, end: Time) -> Result<(), EngineError> {
        par.merge.clear();
        for i in 0..par.active.len() {
            let d = par.active[i];
            if let Some(k) = self.entry_key(par, d) {
                par.merge.push(Reverse(k));
            }
        }
        loop {
            let next = par.merge.peek().map(|r| r.0);
            let wake = par.wake_heap.peek().map(|r| r.0);
            // A wake event first when it is earlier than every device's
            // next event (keys never tie: WAKE marks the device).
            let key = match (next, wake) {
                (None, None) => break,
                (Some(n), Some(w)) if w < n => None,
                (None, Some(_)) => None,
                (Some(n), _) => Some(n),
            };
            let Some(key) = key else {
                let Some(Reverse(w)) = par.wake_heap.pop() else {
                    break;
                };
                let time = key_time(&w);
                self.check_limits(time)?;
                self.now = time;
                self.wake(w.1 & !WAKE, time)?;
                self.wakes_into_merge(par, end);
                continue;
            };
            // The device's entry stays on top of `merge` while its event
            // runs (wakes go to `wake_heap`), then is replaced in place.
            let (time, d) = (key_time(&key), key.1);
            let di = d as usize;
            let w = &mut par.work[di];
            let e = w.log[w.cursor as usize];
            self.check_limits(time)?;
            self.now = time;
            self.stats.events += 1;
            let after_timer = e.arrival == DEADLINE;
            let mut charge = INTERNAL;
            if after_timer {
                // The deadline stays queued until the device's next one
                // replaces it (`apply_deadline`, below), as in the serial
                // loop: nothing in between reads it.
                self.stats.timers += 1;
                self.dev_counters[di].timers += 1;
            } else {
                let Arrival { port, buf, len, .. } = w.arrivals[e.arrival as usize];
                charge = port;
                self.stats.arrivals += 1;
                let c = &mut self.dev_counters[di];
                c.frames_in += 1;
                c.last_rx = Some(time);
                self.pool.release(buf);
                self.bufs[di].arrived(port, len);
            }
            let frames = w.frames_done as usize..e.frames_end as usize;
            if !frames.is_empty() {
                let DevWork {
                    out,
                    arena,
                    classes,
                    ..
                } = w;
                let kept = Kept { arena, classes };
                let sent = self.dispatch_frames(di, out, frames, charge, Some(kept));
                if sent.is_err() && after_timer {
                    self.drop_fired_deadline(di);
                }
                sent?;
            }
            if !after_timer {
                self.after_arrival(di)?;
            }
            if self.flow {
                self.wakes_into_merge(par, end);
            }
            self.apply_deadline(di, e.next, after_timer)?;
            let w = &mut par.work[di];
            w.frames_done = e.frames_end;
            w.cursor += 1;
            let following = self.entry_key(par, d);
            if let Some(mut top) = par.merge.peek_mut() {
                match following {
                    Some(k) => top.0 = k,
                    None => {
                        std::collections::binary_heap::PeekMut::pop(top);
                    }
                }
            }
        }
        Ok(())
    }

    /// Move the wake events queued on the heap for times inside the window
    /// (by the merge itself: nothing else is on the heap before `end`)
    /// into the merge.
    fn wakes_into_merge(&mut self, par: &mut Windows, end: Time) {
        while let Some(ev) = self.heap.peek().copied() {
            let EventKind::Wake { device } = ev.kind else {
                break;
            };
            if ev.time >= end {
                break;
            }
            self.heap.pop();
            par.wake_heap
                .push(Reverse(merge_key(ev.time, 0, ev.seq, device | WAKE)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Capture;
    use crate::engine::{EngineConfig, EventOrder};
    use crate::link::LinkParams;

    /// A device that answers frames after pseudo-random delays (its own
    /// deadlines), on pseudo-random ports, and ticks every 40 ns for a
    /// while (a deadline that stays queued while frames sent after it was
    /// set arrive at the same instant), so that arrivals and deadlines meet
    /// at equal times in both orders; it records a digest of everything it
    /// saw.
    struct Chatter {
        ports: u32,
        tick: Option<Time>,
        state: u64,
        pending: Vec<(Time, u32, Vec<u8>)>,
        digest: u64,
        seen: u64,
    }

    impl Chatter {
        fn new(seed: u64, ports: u32) -> Chatter {
            Chatter {
                ports,
                tick: Some(Time::ZERO),
                state: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
                pending: Vec::new(),
                digest: 0,
                seen: 0,
            }
        }
        fn rand(&mut self) -> u64 {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.state
        }
        fn mix(&mut self, x: u64) {
            self.digest = (self.digest ^ x).wrapping_mul(0x100_0000_01b3);
        }
    }

    impl Datapath for Chatter {
        fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
            self.seen += 1;
            self.mix(now.as_ps() ^ u64::from(port) << 48);
            for &b in frame {
                self.mix(u64::from(b));
            }
            let hops = frame[0];
            if hops == 0 {
                return;
            }
            let mut next = frame.to_vec();
            next[0] = hops - 1;
            let p = (self.rand() % u64::from(self.ports)) as u32;
            match self.rand() % 4 {
                // At once, or after 0, 1 or 40 ns: on the same nanosecond
                // grid as the fixed-delay links, so deadlines and arrivals
                // meet at equal times.
                0 => out.push(p, &next),
                k => {
                    let delay = [0, 0, 1_000, 40_000][k as usize];
                    self.pending
                        .push((Time::from_ps(now.as_ps() + delay), p, next));
                }
            }
        }
        fn on_timer(&mut self, now: Time, out: &mut Outputs) {
            self.mix(now.as_ps());
            if let Some(t) = self.tick.filter(|&t| t <= now) {
                let next = Time::from_ns(t.as_ps() / 1000 + 40);
                self.tick = (next < Time::from_ns(3_000)).then_some(next);
                if self.rand() % 8 == 0 {
                    out.push(1, &[3, 0xee]);
                }
            }
            let mut i = 0;
            while i < self.pending.len() {
                if self.pending[i].0 <= now {
                    let (_, p, f) = self.pending.remove(i);
                    out.push(p, &f);
                } else {
                    i += 1;
                }
            }
        }
        fn next_deadline(&self) -> Option<Time> {
            self.pending.iter().map(|p| p.0).chain(self.tick).min()
        }
    }

    /// A ring of `n` chatters, each with 3 ports (to the previous, to the
    /// next, and to the one opposite), and `frames` injected frames.
    fn network(order: EventOrder, n: u32, frames: u32) -> Engine<Chatter, Capture> {
        let mut e = Engine::with_tap(
            EngineConfig {
                order,
                ..EngineConfig::default()
            },
            Capture::new(),
        );
        for d in 0..n {
            e.add_device(
                Box::new(Chatter::new(u64::from(d) + 1, 3)),
                Time::from_ns(d as u64 % 3 * 10),
                format!("c{d}"),
            );
        }
        // The ring: fixed delays (arrivals on a nanosecond grid); across:
        // 100 Gb/s links (serialisation and queueing).
        for d in 0..n {
            let ring = LinkParams::fixed_delay(Time::from_ns(40));
            e.connect(d, 1, (d + 1) % n, 0, ring).unwrap();
        }
        let across = LinkParams {
            gbps: 100,
            latency: Time::from_ns(40),
        };
        for d in 0..n / 2 {
            e.connect(d, 2, d + n / 2, 2, across).unwrap();
        }
        for i in 0..frames {
            let len = 60 + (i as usize * 7) % 200;
            let mut f = vec![0u8; len];
            f[0] = 40;
            f[1..5].copy_from_slice(&i.to_le_bytes());
            // Several frames per instant, to several devices.
            e.inject(Time::from_ns(u64::from(i / 4) * 3), i % n, 0, &f)
                .unwrap();
        }
        e
    }

    fn outcome(e: &Engine<Chatter, Capture>) -> String {
        let mut s = format!("{:?}\n", e.stats());
        for d in 0..e.device_count() as u32 {
            let c = e.device(d).unwrap();
            s += &format!("{d} {} {:x} {:?}\n", c.seen, c.digest, e.device_counters(d));
        }
        for (a, b, c) in e.link_counters() {
            s += &format!("{a}->{b} {c:?}\n");
        }
        for f in e.tap().frames() {
            s += &format!("{} {} {:?} {:?} {:?}\n", f.seq, f.at, f.from, f.to, f.bytes);
        }
        s
    }

    /// Packed merge keys order events as the (time, class, sequence,
    /// device) tuples they pack, including at the edges of each field.
    #[test]
    fn merge_keys_order_as_their_tuples() {
        let times = [0u64, 1, 449_999, 450_000, u64::MAX - 1, u64::MAX];
        let seqs = [0u64, 1, 2, (1 << 63) - 2, (1 << 63) - 1];
        let devices = [0u32, 1, 127, WAKE, WAKE | 3];
        let mut all = Vec::new();
        for &t in &times {
            for class in [0u8, 1] {
                for &q in &seqs {
                    for &d in &devices {
                        all.push((Time::from_ps(t), class, q, d));
                    }
                }
            }
        }
        for a in &all {
            let ka = merge_key(a.0, a.1, a.2, a.3);
            assert_eq!(key_time(&ka), a.0);
            for b in &all {
                let kb = merge_key(b.0, b.1, b.2, b.3);
                assert_eq!(ka.cmp(&kb), a.cmp(b), "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn parallel_windows_give_the_serial_results() {
        for (order, n) in [
            (EventOrder::Sequence, 16),
            (EventOrder::Sequence, 4),
            (EventOrder::ArrivalsFirst, 16),
            (EventOrder::ArrivalsFirst, 4),
        ] {
            let mut serial = network(order, n, 400);
            assert_eq!(serial.run().unwrap(), Outcome::Idle);
            let want = outcome(&serial);
            assert!(serial.stats().events > 10_000, "{:?}", serial.stats());
            for threads in [2, 3] {
                let mut par = network(order, n, 400);
                let got = par.run_parallel(threads, &mut |_| true).unwrap();
                assert_eq!(got, Outcome::Idle);
                let (windows, parallel) = par.window_counts();
                assert!(parallel > 0 && windows > parallel, "{windows} {parallel}");
                // Both parts of the windows were timed.
                let t = par.window_times();
                assert!(
                    t.devices > Duration::ZERO && t.serial > Duration::ZERO,
                    "{t:?}"
                );
                assert!(t.speedup_bound().is_some_and(|b| b > 1.0), "{t:?}");
                let have = outcome(&par);
                if have != want {
                    let line = want
                        .lines()
                        .zip(have.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    panic!(
                        "{order:?}, {n} devices, {threads} threads: first difference at line {line}:\n  serial   {}\n  parallel {}",
                        want.lines().nth(line).unwrap_or(""),
                        have.lines().nth(line).unwrap_or("")
                    );
                }
            }
        }
    }

    #[test]
    fn a_link_without_delay_runs_the_serial_loop() {
        let mut e = network(EventOrder::Sequence, 4, 8);
        e.connect(0, 5, 1, 5, LinkParams::fixed_delay(Time::ZERO))
            .unwrap();
        e.run_parallel(2, &mut |_| true).unwrap();
        assert_eq!(e.window_counts(), (0, 0));
        assert_eq!(e.window_times(), WindowTimes::default());
        assert_eq!(e.window_times().speedup_bound(), None);
        assert!(e.stats().events > 0);
    }

    #[test]
    fn limits_stop_a_parallel_run_as_they_stop_a_serial_one() {
        let mut a = network(EventOrder::Sequence, 16, 400);
        let mut b = network(EventOrder::Sequence, 16, 400);
        for e in [&mut a, &mut b] {
            e.cfg.max_events = 5_000;
        }
        let ea = a.run().unwrap_err();
        let eb = b.run_parallel(2, &mut |_| true).unwrap_err();
        assert_eq!(ea, eb);
    }

    /// One deadline, maybe a frame sent when it fires, and a log.
    struct Scripted {
        deadline: Option<Time>,
        send_on: Option<u32>,
        log: Vec<(Time, &'static str)>,
    }

    impl Datapath for Scripted {
        fn on_packet(&mut self, now: Time, _port: u32, _frame: &[u8], _out: &mut Outputs) {
            self.log.push((now, "frame"));
        }
        fn on_timer(&mut self, now: Time, out: &mut Outputs) {
            self.log.push((now, "deadline"));
            self.deadline = None;
            if let Some(p) = self.send_on {
                out.push(p, &[1, 2, 3]);
            }
        }
        fn next_deadline(&self) -> Option<Time> {
            self.deadline
        }
    }

    /// Device 0's deadline at 100 ns is queued (sequence 1) before device
    /// 1's deadline at 60 ns (sequence 2) sends it a frame that arrives at
    /// 100 ns (sequence 3): under `Sequence` the deadline goes first, under
    /// `ArrivalsFirst` the frame; both loops must agree.
    #[test]
    fn equal_times_keep_the_serial_order() {
        for (order, want) in [
            (EventOrder::Sequence, ["deadline", "frame"]),
            (EventOrder::ArrivalsFirst, ["frame", "deadline"]),
        ] {
            for threads in [1, 2] {
                let mut e: Engine<Scripted> = Engine::new(EngineConfig {
                    order,
                    ..EngineConfig::default()
                });
                for (deadline, send_on) in [(100, None), (60, Some(0))] {
                    let dev = Scripted {
                        deadline: Some(Time::from_ns(deadline)),
                        send_on,
                        log: Vec::new(),
                    };
                    e.add_device(Box::new(dev), Time::ZERO, "d");
                }
                e.connect(1, 0, 0, 0, LinkParams::fixed_delay(Time::from_ns(40)))
                    .unwrap();
                e.run_parallel(threads, &mut |_| true).unwrap();
                let log = &e.device(0).unwrap().log;
                let got: Vec<_> = log.iter().map(|l| l.1).collect();
                assert_eq!(got, want, "{order:?}, {threads} thread(s): {log:?}");
                assert!(log.iter().all(|l| l.0 == Time::from_ns(100)));
            }
        }
    }

    /// Ticks every 10 ns, sending a frame each time, until its tick
    /// `stall_at`, which asks for a deadline at the same instant.
    struct Stall {
        next: Option<Time>,
        ticks: u32,
        stall_at: u32,
    }

    impl Datapath for Stall {
        fn on_packet(&mut self, _now: Time, _port: u32, _frame: &[u8], _out: &mut Outputs) {}
        fn on_timer(&mut self, now: Time, out: &mut Outputs) {
            self.ticks += 1;
            out.push(0, &[self.ticks as u8; 64]);
            self.next = Some(if self.ticks == self.stall_at {
                now
            } else {
                now + Time::from_ns(10)
            });
        }
        fn next_deadline(&self) -> Option<Time> {
            self.next
        }
    }

    /// A deadline that does not advance stops the windows with the serial
    /// loop's error, after the same events.
    #[test]
    fn a_deadline_that_does_not_advance_stops_both_loops_alike() {
        let build = || {
            let mut e: Engine<Stall> = Engine::new(EngineConfig::default());
            // Without the check the devices would tick for ever.
            e.cfg.max_events = 10_000;
            for (i, stall_at) in [(0u32, 1_000), (1, 7)] {
                let dev = Stall {
                    next: Some(Time::from_ns(10 + u64::from(i))),
                    ticks: 0,
                    stall_at,
                };
                e.add_device(Box::new(dev), Time::ZERO, format!("s{i}"));
            }
            e.connect(0, 0, 1, 0, LinkParams::fixed_delay(Time::from_ns(40)))
                .unwrap();
            e
        };
        let mut serial = build();
        let want = serial.run().unwrap_err();
        assert!(
            matches!(&want, EngineError::DeadlineNotAdvancing { device, .. } if device == "s1"),
            "{want:?}"
        );
        for threads in [1, 2] {
            let mut par = build();
            let got = par.run_parallel(threads, &mut |_| true).unwrap_err();
            assert_eq!(got, want, "{threads} thread(s)");
            assert_eq!(par.stats().events, serial.stats().events);
            assert_eq!(par.stats().timers, serial.stats().timers);
            assert_eq!(par.device(1).unwrap().ticks, 7);
        }
    }

    /// A device that panics at its first frame.
    struct Bomb;

    impl Datapath for Bomb {
        fn on_packet(&mut self, _now: Time, _port: u32, _frame: &[u8], _out: &mut Outputs) {
            panic!("bomb");
        }
        fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}
        fn next_deadline(&self) -> Option<Time> {
            None
        }
    }

    /// A device panicking in a parallel window propagates the panic (on
    /// whichever thread it ran) instead of leaving the run hanging.
    #[test]
    fn a_panicking_device_does_not_hang_the_run() {
        let mut e: Engine<Bomb> = Engine::new(EngineConfig::default());
        for d in 0..64u32 {
            e.add_device(Box::new(Bomb), Time::ZERO, format!("b{d}"));
        }
        for d in 0..32u32 {
            e.connect(d, 0, d + 32, 0, LinkParams::fixed_delay(Time::from_ns(10)))
                .unwrap();
        }
        for d in 0..64u32 {
            e.inject(Time::ZERO, d, 0, &[1, 2, 3]).unwrap();
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            e.run_parallel(2, &mut |_| true)
        }));
        assert!(r.is_err(), "the panic propagates");
    }
}
