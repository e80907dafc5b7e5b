//! Frames in flight: the pool that holds their bytes between the device
//! that emitted them and the one they arrive at, addressed by `u32`
//! handles that events, links and the parallel windows carry. It owns the
//! byte arenas and their recycling; the engine (`engine.rs`,
//! `engine_links.rs`, `parallel.rs`) decides when frames enter and leave.

use netsparse_externs::Outputs;

/// The frames in flight, by handle. A frame's bytes lie in an *arena*:
/// either the window output of the device that emitted it, which the
/// parallel merge keeps whole rather than copying each frame out of it
/// ([`FramePool::arena`], [`FramePool::keep`]), or the pool's own copy
/// arena (frames injected, or emitted by the serial loop). An arena goes
/// back to the spares once none of its frames is in flight; the copy arena
/// is emptied in place then, and replaced when it grows past
/// [`COPY_ARENA_BYTES`] with frames still in it.
///
/// A frame that waits long (in a paused buffer, behind a congested link)
/// keeps its whole arena alive, so arenas can come to hold many times the
/// bytes actually in flight: [`FramePool::compact`] copies the frames of
/// sparse arenas into the copy arena and frees them, and freed storage is
/// kept for reuse only up to half what is in use (or 64 MiB).
#[derive(Debug, Default)]
pub(crate) struct FramePool {
    arenas: Vec<Vec<u8>>,
    /// Frames in flight in each arena, plus one while an arena is being
    /// filled (the copy arena, or a device's output during the merge).
    live: Vec<u32>,
    /// Arenas not in use (with no storage).
    spare: Vec<u32>,
    /// Empty byte vectors of arenas no longer in use, by ⌊log2 capacity⌋:
    /// a device's output trades its bytes for one about as large as they
    /// are, so that capacities do not drift up to the largest output of
    /// all as they change hands.
    storage: Vec<Vec<Vec<u8>>>,
    /// Where each handle's frame lies.
    frames: Vec<FrameAt>,
    /// Handles not in use.
    free: Vec<u32>,
    /// The arena [`FramePool::alloc`] copies into.
    copy: Option<u32>,
    /// Bytes of the frames in flight in each arena.
    live_bytes: Vec<usize>,
    /// Capacity of the arenas in use, all together.
    held: usize,
    /// Bytes of the frames in flight, all together.
    in_flight: usize,
    /// Capacity kept in `storage`.
    stored: usize,
    /// `held` must pass this too before the next compaction (twice what
    /// the last one left, and the slack), so that the handles are scanned
    /// only after the arenas have grown again, not window after window.
    compact_at: usize,
    /// [`COMPACT_SLACK`] unless a test sets a smaller one.
    slack: Option<usize>,
}

/// A released handle's arena (no frame).
const NO_ARENA: u32 = u32::MAX;

/// Arenas hold more than this many times the bytes in flight (and
/// [`COMPACT_SLACK`] more) before the pool's compaction moves frames;
/// an arena less than 1 / this used is a sparse one it empties.
pub const COMPACT_RATIO: usize = 2;
/// Arena bytes beyond the bytes in flight that never call for compaction.
pub const COMPACT_SLACK: usize = 256 << 20;
/// Storage kept for reuse however little is in use.
const STORE_MIN: usize = 64 << 20;
/// Spare storage is kept up to 1 / this of the arenas in use.
pub const STORE_SHARE: usize = 2;
/// Arenas smaller than this are left alone by compaction.
const COMPACT_MIN_ARENA: usize = 64 << 10;

/// Where a frame lies: `arena[start..start + len]`.
#[derive(Clone, Copy, Debug)]
struct FrameAt {
    arena: u32,
    len: u32,
    start: usize,
}

/// Size past which the copy arena is replaced rather than grown.
const COPY_ARENA_BYTES: usize = 1 << 20;

/// ⌊log2 n⌋ (0 for 0).
fn floor_log2(n: usize) -> usize {
    (usize::BITS - 1).saturating_sub(n.leading_zeros()) as usize
}

impl FramePool {
    /// Frame handles made so far (the most frames ever in flight at once).
    pub(crate) fn handles(&self) -> usize {
        self.frames.len()
    }

    /// The bytes of frame `h`.
    #[inline]
    pub(crate) fn bytes(&self, h: u32) -> &[u8] {
        let f = self.frames[h as usize];
        &self.arenas[f.arena as usize][f.start..f.start + f.len as usize]
    }

    /// Hint that frame `h`'s place will be wanted soon.
    #[inline]
    pub(crate) fn prefetch(&self, h: u32) {
        if let Some(f) = self.frames.get(h as usize) {
            netsparse_externs::hint::prefetch(f);
        }
    }

    /// An arena to fill, held until [`FramePool::keep`] or
    /// [`FramePool::unhold`].
    pub(crate) fn arena(&mut self) -> u32 {
        let a = match self.spare.pop() {
            Some(a) => a,
            None => {
                self.arenas.push(Vec::new());
                self.live.push(0);
                self.live_bytes.push(0);
                (self.arenas.len() - 1) as u32
            }
        };
        self.live[a as usize] = 1;
        a
    }

    /// Arena `a` (from [`FramePool::arena`]) takes the bytes of `out`,
    /// whose records [`FramePool::alloc_in`] indexed; `out` is left empty
    /// with spare storage at least as large as those bytes if the pool has
    /// one (else the largest smaller one, else none); then the hold taken
    /// by [`FramePool::arena`] is dropped.
    pub(crate) fn keep(&mut self, a: u32, out: &mut Outputs) {
        // Storage that holds as many bytes, else the nearest smaller.
        let len = out.bytes().len();
        let k = floor_log2(len.max(1)) + usize::from(!len.is_power_of_two());
        let fits = (k..self.storage.len()).chain((0..k.min(self.storage.len())).rev());
        let mut bytes = fits
            .filter_map(|b| self.storage[b].pop())
            .next()
            .unwrap_or_default();
        self.stored -= bytes.capacity();
        out.clear_into(&mut bytes);
        self.held += bytes.capacity();
        self.arenas[a as usize] = bytes;
        self.unhold(a);
    }

    /// Drop one hold on arena `a`: with nothing left in flight it is
    /// emptied, and becomes a spare unless it is the copy arena.
    fn unhold(&mut self, a: u32) {
        let l = &mut self.live[a as usize];
        *l -= 1;
        if *l == 0 {
            let mut bytes = std::mem::take(&mut self.arenas[a as usize]);
            let cap = bytes.capacity();
            self.held -= cap;
            // Kept for reuse while the store is no larger than half what
            // is in use (or 64 MiB); else given back.
            if cap > 0 && self.stored + cap <= (self.held / STORE_SHARE).max(STORE_MIN) {
                bytes.clear();
                let b = floor_log2(cap);
                if self.storage.len() <= b {
                    self.storage.resize_with(b + 1, Vec::new);
                }
                self.storage[b].push(bytes);
                self.stored += cap;
            }
            self.spare.push(a);
        } else if *l == 1 && self.copy == Some(a) {
            // Only the copy arena's own hold is left: fill it from the start.
            self.arenas[a as usize].clear();
        }
    }

    fn handle(&mut self, at: FrameAt) -> u32 {
        self.live[at.arena as usize] += 1;
        self.live_bytes[at.arena as usize] += at.len as usize;
        self.in_flight += at.len as usize;
        match self.free.pop() {
            Some(h) => {
                self.frames[h as usize] = at;
                // The next one is likely wanted soon: start loading it.
                if let Some(&n) = self.free.last() {
                    netsparse_externs::hint::prefetch(&self.frames[n as usize]);
                }
                h
            }
            None => {
                self.frames.push(at);
                (self.frames.len() - 1) as u32
            }
        }
    }

    /// A handle for the frame at `range` of the bytes arena `a` will hold.
    pub(crate) fn alloc_in(&mut self, a: u32, range: std::ops::Range<usize>) -> u32 {
        self.handle(FrameAt {
            arena: a,
            len: u32::try_from(range.len()).expect("a frame shorter than 4 GiB"),
            start: range.start,
        })
    }

    /// A handle for a copy of `bytes`.
    pub(crate) fn alloc(&mut self, bytes: &[u8]) -> u32 {
        let a = self.copy_arena_for(bytes.len());
        let start = self.append(a, bytes);
        self.alloc_in(a, start..start + bytes.len())
    }

    /// Append `bytes` to arena `a` (counting its growth in `held`); where
    /// they start.
    fn append(&mut self, a: u32, bytes: &[u8]) -> usize {
        let arena = &mut self.arenas[a as usize];
        let (start, cap) = (arena.len(), arena.capacity());
        arena.extend_from_slice(bytes);
        self.held = self.held + arena.capacity() - cap;
        start
    }

    /// Frame `h` is no longer in flight.
    pub(crate) fn release(&mut self, h: u32) {
        self.free.push(h);
        let f = &mut self.frames[h as usize];
        let (a, len) = (f.arena, f.len as usize);
        f.arena = NO_ARENA;
        self.live_bytes[a as usize] -= len;
        self.in_flight -= len;
        self.unhold(a);
    }

    /// When the arenas hold more than [`COMPACT_RATIO`] times the bytes in
    /// flight (plus [`COMPACT_SLACK`], and twice what the last compaction
    /// left), copy the frames of every arena that is at least
    /// [`COMPACT_MIN_ARENA`] large and less than half used into the copy
    /// arena, which frees those arenas. One pass over the handles: its
    /// cost is paid only after the arenas doubled. Handles keep
    /// their frames, so nothing the engine holds changes; only bytes move.
    /// Call it between events (no frame's bytes borrowed, no output being
    /// filled). Returns the arenas freed.
    pub(crate) fn compact(&mut self) -> usize {
        self.trim_store();
        let slack = self.slack.unwrap_or(COMPACT_SLACK);
        if self.held <= COMPACT_RATIO * self.in_flight + slack || self.held <= self.compact_at {
            return 0;
        }
        let sparse: Vec<bool> = (0..self.arenas.len())
            .map(|a| {
                let cap = self.arenas[a].capacity();
                self.live[a] > 0
                    && self.copy != Some(a as u32)
                    && cap >= COMPACT_MIN_ARENA
                    && self.live_bytes[a] * COMPACT_RATIO < cap
            })
            .collect();
        let mut freed = 0;
        for h in 0..self.frames.len() {
            let f = self.frames[h];
            if f.arena == NO_ARENA || !sparse[f.arena as usize] {
                continue;
            }
            let old = f.arena;
            let c = self.copy_arena_for(f.len as usize);
            // The source is set aside while the copy arena grows (a sparse
            // arena is never the copy arena).
            let src = std::mem::take(&mut self.arenas[old as usize]);
            let start = self.append(c, &src[f.start..f.start + f.len as usize]);
            self.arenas[old as usize] = src;
            self.frames[h] = FrameAt {
                arena: c,
                len: f.len,
                start,
            };
            self.live[c as usize] += 1;
            self.live_bytes[c as usize] += f.len as usize;
            self.live_bytes[old as usize] -= f.len as usize;
            if self.live[old as usize] == 1 {
                freed += 1;
            }
            self.unhold(old);
        }
        self.compact_at = 2 * self.held + slack;
        freed
    }

    /// Give back stored storage, largest first, past half what is in use
    /// (or 64 MiB): the arenas in use shrank since it was stored.
    fn trim_store(&mut self) {
        let limit = (self.held / STORE_SHARE).max(STORE_MIN);
        while self.stored > limit {
            let Some(bucket) = self.storage.iter_mut().rev().find(|b| !b.is_empty()) else {
                break;
            };
            if let Some(v) = bucket.pop() {
                self.stored -= v.capacity();
            }
        }
    }

    /// The copy arena, replaced first if `len` more bytes would take it
    /// past [`COPY_ARENA_BYTES`].
    fn copy_arena_for(&mut self, len: usize) -> u32 {
        match self.copy {
            Some(a) if self.arenas[a as usize].len() + len <= COPY_ARENA_BYTES => a,
            old => {
                if let Some(old) = old {
                    self.copy = None;
                    self.unhold(old);
                }
                let a = self.arena();
                self.copy = Some(a);
                a
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device's output kept whole: its frames read back from the pool
    /// after the output is cleared for the next window, and the arena's
    /// storage serves again once the last of them is released.
    #[test]
    fn a_kept_output_holds_its_frames_until_the_last_is_released() {
        let mut pool = FramePool::default();
        let mut out = Outputs::new();
        out.push(0, &[1; 60]);
        out.push(1, &[2; 1500]);
        out.push(2, &[3; 9]);
        let a = pool.arena();
        // The middle frame does not travel (a tap took it, say).
        let hs: Vec<u32> = [0, 2]
            .iter()
            .map(|&i| pool.alloc_in(a, out.frames()[i].range.clone()))
            .collect();
        pool.keep(a, &mut out);
        assert!(out.is_empty() && out.bytes().is_empty());
        // The next window's output reuses nothing still in flight.
        out.push(0, &[9; 100]);
        assert_eq!(pool.bytes(hs[0]), &[1; 60][..]);
        assert_eq!(pool.bytes(hs[1]), &[3; 9][..]);
        pool.release(hs[0]);
        assert_eq!(pool.bytes(hs[1]), &[3; 9][..]);
        assert!(pool.spare.is_empty(), "a frame is still in flight");
        pool.release(hs[1]);
        assert_eq!(pool.spare, vec![a]);
        // Its storage (the first output's, at least 1569 bytes) serves an output
        // of about that size rather than a fresh allocation.
        let mut big = Outputs::new();
        big.push(0, &[7; 1100]);
        let b = pool.arena();
        assert_eq!(b, a, "the spare arena is reused");
        let h = pool.alloc_in(b, big.frames()[0].range.clone());
        pool.keep(b, &mut big);
        assert!(
            pool.storage.iter().all(Vec::is_empty),
            "the stored vector was taken"
        );
        assert!(big.bytes().is_empty());
        assert_eq!(pool.bytes(h), &[7; 1100][..]);
        assert_eq!(pool.handles(), 2, "handles are recycled");
    }

    /// An output none of whose frames travels goes back at once.
    #[test]
    fn an_output_with_no_frame_in_flight_is_not_held() {
        let mut pool = FramePool::default();
        let mut out = Outputs::new();
        out.push(0, &[5; 64]);
        let a = pool.arena();
        pool.keep(a, &mut out);
        assert_eq!(pool.spare, vec![a]);
        assert_eq!(pool.live[a as usize], 0);
    }

    /// Copies share an arena, which empties in place when nothing in it is
    /// in flight, and is replaced (not grown) past its size while frames
    /// in it are; those stay intact.
    #[test]
    fn the_copy_arena_is_reused_in_place_and_replaced_when_full() {
        let mut pool = FramePool::default();
        let first = pool.alloc(&[1; 1000]);
        let a = pool.copy.unwrap();
        pool.release(first);
        assert!(pool.arenas[a as usize].is_empty(), "emptied in place");
        let n = COPY_ARENA_BYTES / 1000;
        let hs: Vec<u32> = (0..=n).map(|i| pool.alloc(&[i as u8; 1000])).collect();
        let b = pool.copy.unwrap();
        assert_ne!(a, b, "a full copy arena is replaced");
        assert!(pool.arenas[a as usize].len() <= COPY_ARENA_BYTES);
        for (i, &h) in hs.iter().enumerate() {
            assert_eq!(pool.bytes(h), &[i as u8; 1000][..]);
        }
        for &h in &hs {
            pool.release(h);
        }
        assert_eq!(pool.spare, vec![a], "the old arena is free once drained");
        assert!(pool.arenas[b as usize].is_empty());
        assert_eq!(pool.live[b as usize], 1, "only the copy arena's own hold");
    }

    /// The pool's counters, recomputed from its arenas and frames.
    fn recount(pool: &FramePool) -> (usize, usize) {
        let held = (0..pool.arenas.len())
            .filter(|&a| pool.live[a] > 0)
            .map(|a| pool.arenas[a].capacity())
            .sum();
        let in_flight = pool
            .frames
            .iter()
            .filter(|f| f.arena != NO_ARENA)
            .map(|f| f.len as usize)
            .sum();
        (held, in_flight)
    }

    /// Window outputs of 256 KiB that each keep one frame in flight for
    /// long (waiting behind a paused link) pin their whole arenas; a
    /// compaction moves those frames into the copy arena, frees the
    /// arenas, and every frame still reads back its bytes; the counters
    /// stay what the arenas and frames say, through random releases.
    #[test]
    fn compaction_frees_sparse_outputs_and_keeps_every_frame() {
        let mut pool = FramePool {
            slack: Some(1 << 20),
            ..FramePool::default()
        };
        let mut kept: Vec<(u32, u8, usize)> = Vec::new();
        let mut x = 12345u64;
        let mut rand = move |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for w in 0..400u32 {
            let mut out = Outputs::new();
            let mut hs = Vec::new();
            for i in 0..170u32 {
                let len = 1500 - (i as usize % 7) * 100;
                out.push(i % 4, &vec![(w as u8).wrapping_add(i as u8); len]);
            }
            let a = pool.arena();
            for i in 0..out.frames().len() {
                hs.push(pool.alloc_in(a, out.frames()[i].range.clone()));
            }
            pool.keep(a, &mut out);
            // All but one frame (sometimes two) leave at once.
            for (i, h) in hs.into_iter().enumerate() {
                if i == 3 || (i == 99 && rand(3) == 0) {
                    let v = (w as u8).wrapping_add(i as u8);
                    kept.push((h, v, 1500 - (i % 7) * 100));
                } else {
                    pool.release(h);
                }
            }
            // And some long waiters leave too.
            if !kept.is_empty() && rand(2) == 0 {
                let (h, _, _) = kept.swap_remove(rand(kept.len() as u64) as usize);
                pool.release(h);
            }
            assert_eq!(recount(&pool), (pool.held, pool.in_flight), "window {w}");
            if w == 250 {
                let before = pool.held;
                assert!(
                    before > COMPACT_RATIO * pool.in_flight + (1 << 20),
                    "the test should pin far more than is in flight: {before}"
                );
                let freed = pool.compact();
                assert!(freed > 100, "{freed} arenas freed");
                assert!(pool.held * 8 < before, "held {} of {before}", pool.held);
                assert_eq!(recount(&pool), (pool.held, pool.in_flight));
                assert_eq!(pool.compact(), 0, "nothing to do right after");
            }
            for &(h, v, len) in &kept {
                assert_eq!(pool.bytes(h), &vec![v; len][..], "window {w}");
            }
        }
        for (h, _, _) in kept {
            pool.release(h);
        }
        // Only the copy arena, which holds itself, is left.
        let copy = pool.copy.map_or(0, |c| pool.arenas[c as usize].capacity());
        assert_eq!((pool.held, pool.in_flight), (copy, 0));
        pool.compact();
        assert!(
            pool.stored <= STORE_MIN,
            "the store keeps {} bytes",
            pool.stored
        );
    }
}
