//! The interface every datapath core implements (switch, NIC), and the
//! reusable output buffer they write frames into.
//!
//! Cores are synchronous state machines with explicit time (ARCHITECTURE.md,
//! "The datapath core is a clocked state machine"): a driver delivers frames
//! with [`Datapath::on_packet`], wakes the core at [`Datapath::next_deadline`]
//! with [`Datapath::on_timer`], and collects emitted frames from [`Outputs`].
//! No threads, sleeps or wall-clock reads inside a core, so the pcap driver,
//! the AF_PACKET driver and the simulator produce the same bytes.

use std::ops::Range;

use crate::time::Time;

/// A synchronous, clocked datapath core.
pub trait Datapath {
    /// A frame arrived on `port` at `now`. Emitted frames are appended to `out`.
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs);
    /// Time reached `now` (≥ the last `next_deadline()`): fire every deadline
    /// that is due (concatenation queues, cache latency, watchdogs).
    fn on_timer(&mut self, now: Time, out: &mut Outputs);
    /// The earliest pending deadline, if any. Must be strictly later than the
    /// `now` of the last `on_timer` call, or `None`, so drivers terminate.
    fn next_deadline(&self) -> Option<Time>;
}

/// One emitted frame: where it goes and where its bytes are in the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFrame {
    /// Egress port.
    pub port: u32,
    /// Byte range in [`Outputs::bytes`].
    pub range: Range<usize>,
}

/// Frames emitted by a core during one call, in emission order. The driver
/// clears it after consuming it; the allocations are reused, so steady-state
/// packet processing does not allocate.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    bytes: Vec<u8>,
    frames: Vec<OutFrame>,
}

impl Outputs {
    /// An empty buffer.
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Forget all frames (keeps the capacity).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.frames.clear();
    }

    /// Emit a copy of `frame` on `port`.
    pub fn push(&mut self, port: u32, frame: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(frame);
        self.frames.push(OutFrame {
            port,
            range: start..self.bytes.len(),
        });
    }

    /// Emit a frame built in place: `build` appends the frame's bytes to the
    /// given vector (which may already hold earlier frames: append only).
    /// Returns what `build` returned. If `build` appends nothing, no frame is
    /// emitted.
    pub fn push_with<R>(&mut self, port: u32, build: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        let start = self.bytes.len();
        let r = build(&mut self.bytes);
        if self.bytes.len() > start {
            self.frames.push(OutFrame {
                port,
                range: start..self.bytes.len(),
            });
        }
        r
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Forget all frames and trade the byte arena for `spare` (emptied):
    /// the caller keeps the bytes the records indexed, without a copy.
    pub fn clear_into(&mut self, spare: &mut Vec<u8>) {
        spare.clear();
        std::mem::swap(&mut self.bytes, spare);
        self.frames.clear();
    }

    /// No frames.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The frames in emission order, as (port, bytes).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        self.frames
            .iter()
            .map(|f| (f.port, &self.bytes[f.range.clone()]))
    }

    /// The raw frame records.
    pub fn frames(&self) -> &[OutFrame] {
        &self.frames
    }

    /// The byte arena the records index into.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Take the frames emitted on `port` out of the records from index
    /// `from` on: each goes to `take`, the others stay in order (their
    /// bytes compacted in place, nothing allocated). The number taken.
    /// A CPU port uses it to hand frames to a controller instead of a wire.
    pub fn divert(&mut self, from: usize, port: u32, mut take: impl FnMut(&[u8])) -> usize {
        let from = from.min(self.frames.len());
        if !self.frames[from..].iter().any(|f| f.port == port) {
            return 0;
        }
        let mut keep = from;
        let mut at = self.frames[from].range.start;
        let mut taken = 0;
        for i in from..self.frames.len() {
            let f = self.frames[i].clone();
            if f.port == port {
                take(&self.bytes[f.range]);
                taken += 1;
                continue;
            }
            let len = f.range.len();
            self.bytes.copy_within(f.range, at);
            self.frames[keep] = OutFrame {
                port: f.port,
                range: at..at + len,
            };
            at += len;
            keep += 1;
        }
        self.frames.truncate(keep);
        self.bytes.truncate(at);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_into_a_spare_hands_over_the_bytes() {
        let mut o = Outputs::new();
        o.push(1, &[1, 2]);
        o.push(2, &[3]);
        let mut spare = vec![9; 4];
        o.clear_into(&mut spare);
        assert_eq!(spare, vec![1, 2, 3]);
        assert!(o.is_empty() && o.bytes().is_empty());
        o.push(4, &[5]);
        assert_eq!(o.iter().collect::<Vec<_>>(), vec![(4, &[5][..])]);
    }

    #[test]
    fn divert_takes_one_port_and_keeps_the_rest_in_order() {
        let mut o = Outputs::new();
        o.push(1, &[1]);
        o.push(255, &[2, 2]);
        o.push(2, &[3, 3, 3]);
        o.push(255, &[4]);
        o.push(1, &[5, 5]);
        let mut got = Vec::new();
        // Frames before `from` are never taken.
        assert_eq!(o.divert(2, 255, |b| got.push(b.to_vec())), 1);
        assert_eq!(got, vec![vec![4]]);
        let kept: Vec<(u32, Vec<u8>)> = o.iter().map(|(p, b)| (p, b.to_vec())).collect();
        assert_eq!(
            kept,
            vec![
                (1, vec![1]),
                (255, vec![2, 2]),
                (2, vec![3, 3, 3]),
                (1, vec![5, 5])
            ]
        );
        assert_eq!(o.divert(0, 255, |b| got.push(b.to_vec())), 1);
        assert_eq!(got, vec![vec![4], vec![2, 2]]);
        let kept: Vec<(u32, Vec<u8>)> = o.iter().map(|(p, b)| (p, b.to_vec())).collect();
        assert_eq!(
            kept,
            vec![(1, vec![1]), (2, vec![3, 3, 3]), (1, vec![5, 5])]
        );
        assert_eq!(o.bytes().len(), 6);
        assert_eq!(o.divert(0, 255, |_| panic!("nothing left to take")), 0);
        assert_eq!(o.divert(9, 1, |_| panic!("out of range")), 0);
    }

    #[test]
    fn outputs_keep_order_and_reuse() {
        let mut o = Outputs::new();
        o.push(3, &[1, 2, 3]);
        let n = o.push_with(1, |b| {
            b.extend_from_slice(&[9, 9]);
            2
        });
        assert_eq!(n, 2);
        o.push_with(7, |_| ()); // empty: not emitted
        let got: Vec<_> = o.iter().map(|(p, b)| (p, b.to_vec())).collect();
        assert_eq!(got, vec![(3, vec![1, 2, 3]), (1, vec![9, 9])]);
        let cap = o.bytes.capacity();
        o.clear();
        assert!(o.is_empty());
        assert_eq!(o.bytes.capacity(), cap);
    }
}
