//! The devices' timers of the event loop: at most one live deadline per
//! device, in an indexed binary min-heap ordered like every event, by
//! (time, sequence number).
//!
//! A device's deadline moves often (a NIC's or a switch's next deadline
//! changes with almost every packet). Queueing every new deadline as an
//! event and skipping the superseded ones when they come up fills the event
//! heap with dead entries; here a new deadline replaces the old one in
//! place (`O(log D)` for `D` devices, a few hundred at most), so the event
//! heap holds frames in flight only.

use netsparse_externs::Time;

/// `pos` of a device without a deadline.
const NONE: u32 = u32::MAX;

/// One live deadline: (time, sequence number, device).
pub(crate) type Deadline = (Time, u64, u32);

/// The live deadlines, one per device at most.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timers {
    heap: Vec<Deadline>,
    /// Per device: its index in `heap`, or [`NONE`].
    pos: Vec<u32>,
}

impl Timers {
    /// Make room for device `pos.len()`.
    pub(crate) fn add_device(&mut self) {
        self.pos.push(NONE);
    }

    /// Deadlines queued.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The earliest deadline.
    pub(crate) fn peek(&self) -> Option<Deadline> {
        self.heap.first().copied()
    }

    /// Set device `d`'s deadline to `(time, seq)`; true if it replaced one.
    pub(crate) fn set(&mut self, d: u32, time: Time, seq: u64) -> bool {
        let p = self.pos[d as usize];
        if p == NONE {
            self.heap.push((time, seq, d));
            let i = self.heap.len() - 1;
            self.pos[d as usize] = i as u32;
            self.up(i);
            false
        } else {
            let i = p as usize;
            let old = self.heap[i];
            self.heap[i] = (time, seq, d);
            if (time, seq) < (old.0, old.1) {
                self.up(i);
            } else {
                self.down(i);
            }
            true
        }
    }

    /// Every queued deadline, in heap order.
    pub(crate) fn entries(&self) -> &[Deadline] {
        &self.heap
    }

    /// Device `d`'s deadline, if it has one.
    pub(crate) fn get(&self, d: u32) -> Option<Deadline> {
        match self.pos.get(d as usize) {
            Some(&p) if p != NONE => Some(self.heap[p as usize]),
            _ => None,
        }
    }

    /// Remove device `d`'s deadline; true if it had one.
    pub(crate) fn remove(&mut self, d: u32) -> bool {
        let p = self.pos[d as usize];
        if p == NONE {
            return false;
        }
        self.take(p as usize);
        true
    }

    fn take(&mut self, i: usize) -> Deadline {
        let last = self.heap.len() - 1;
        self.swap(i, last);
        let x = self.heap.pop().unwrap_or((Time::ZERO, 0, 0));
        self.pos[x.2 as usize] = NONE;
        if i < self.heap.len() {
            self.up(i);
            self.down(i);
        }
        x
    }

    fn key(&self, i: usize) -> (Time, u64) {
        (self.heap[i].0, self.heap[i].1)
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i].2 as usize] = i as u32;
        self.pos[self.heap[j].2 as usize] = j as u32;
    }

    /// Move the deadline at `i` up to its place. The moving deadline is
    /// held aside and each parent it passes moves down into the hole, so a
    /// level costs one copy and one index update rather than a swap's two.
    fn up(&mut self, mut i: usize) {
        let x = self.heap[i];
        let k = (x.0, x.1);
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.heap[parent];
            if k < (p.0, p.1) {
                self.heap[i] = p;
                self.pos[p.2 as usize] = i as u32;
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = x;
        self.pos[x.2 as usize] = i as u32;
    }

    /// Move the deadline at `i` down to its place, past every child that
    /// is strictly earlier (the earlier child, the left one on a tie), as
    /// [`Timers::up`] moves up.
    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let x = self.heap[i];
        let k = (x.0, x.1);
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.key(r) < self.key(l) {
                r
            } else {
                l
            };
            let ch = self.heap[c];
            if (ch.0, ch.1) < k {
                self.heap[i] = ch;
                self.pos[ch.2 as usize] = i as u32;
                i = c;
            } else {
                break;
            }
        }
        self.heap[i] = x;
        self.pos[x.2 as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator (tests only).
    struct Rng(u64);
    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Random sets, removals and pops agree with a plain list of deadlines.
    #[test]
    fn agrees_with_a_reference() {
        let devices = 40u32;
        let mut t = Timers::default();
        for _ in 0..devices {
            t.add_device();
        }
        let mut reference: Vec<Option<(Time, u64)>> = vec![None; devices as usize];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for seq in 0..20_000u64 {
            let d = (rng.next_u64() % u64::from(devices)) as u32;
            match rng.next_u64() % 4 {
                0 | 1 => {
                    let time = Time::from_ps(rng.next_u64() % 1000);
                    let replaced = t.set(d, time, seq);
                    assert_eq!(replaced, reference[d as usize].is_some());
                    reference[d as usize] = Some((time, seq));
                }
                2 => {
                    assert_eq!(t.remove(d), reference[d as usize].is_some());
                    reference[d as usize] = None;
                }
                _ => {
                    let want = reference
                        .iter()
                        .enumerate()
                        .filter_map(|(i, x)| x.map(|(tm, s)| (tm, s, i as u32)))
                        .min();
                    // The engine's timer event: the earliest, then its removal.
                    assert_eq!(t.peek(), want);
                    if let Some((_, _, i)) = want {
                        assert!(t.remove(i));
                        reference[i as usize] = None;
                    }
                }
            }
            assert_eq!(t.len(), reference.iter().flatten().count());
            t.check();
        }
    }

    impl Timers {
        /// Every deadline no earlier than its parent, and every device's
        /// index pointing at its deadline.
        fn check(&self) {
            for (i, x) in self.heap.iter().enumerate() {
                assert_eq!(self.pos[x.2 as usize], i as u32, "index of device {}", x.2);
                if i > 0 {
                    assert!(self.key((i - 1) / 2) <= self.key(i), "heap order at {i}");
                }
            }
            let indexed = self.pos.iter().filter(|&&p| p != NONE).count();
            assert_eq!(indexed, self.heap.len());
        }
    }
}
