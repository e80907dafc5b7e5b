//! Block Merge (OmNICCL §2): the `d` smallest block indices voted in one
//! round, kept in O(d) state with O(d) work per vote message.
//!
//! The list is a sorted singly linked list of at most `d` nodes in fixed
//! arrays (no allocation after construction). A worker's votes arrive in
//! ascending order, so each worker has a cursor (the node its last vote
//! landed on): the next vote scans forward from there, and the scans of one
//! message of `d` votes walk the list at most once. Inserting and evicting
//! the largest entry (when the list is full) are O(1) (a `prev` link for the
//! tail). [`BlockMerge::steps`] counts the nodes scanned, so tests can check
//! the bound.

/// No node.
const NIL: u32 = u32::MAX;

/// What [`BlockMerge::vote`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    /// The index is now among the `d` smallest (or already was).
    Kept,
    /// Larger than the `d` smallest: not kept.
    Dropped,
    /// Out of order for this worker (votes must ascend): refused.
    Refused,
}

/// The `d` smallest indices voted so far in one round.
#[derive(Clone, Debug)]
pub struct BlockMerge {
    depth: usize,
    idx: Vec<u64>,
    next: Vec<u32>,
    prev: Vec<u32>,
    live: Vec<bool>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    len: usize,
    /// Per worker: (node, its index) of the last vote kept, and the last
    /// index voted (ascending check).
    cursor: Vec<(u32, u64)>,
    last: Vec<Option<u64>>,
    steps: u64,
}

impl BlockMerge {
    /// An empty list for `workers` workers and depth `depth` (at least 1).
    pub fn new(workers: usize, depth: usize) -> BlockMerge {
        let depth = depth.max(1);
        BlockMerge {
            depth,
            idx: vec![0; depth],
            next: vec![NIL; depth],
            prev: vec![NIL; depth],
            live: vec![false; depth],
            free: (0..depth as u32).rev().collect(),
            head: NIL,
            tail: NIL,
            len: 0,
            cursor: vec![(NIL, 0); workers],
            last: vec![None; workers],
            steps: 0,
        }
    }

    /// Forget every vote (a new round in this slot).
    pub fn clear(&mut self) {
        self.live.iter_mut().for_each(|l| *l = false);
        self.free.clear();
        self.free.extend((0..self.depth as u32).rev());
        self.head = NIL;
        self.tail = NIL;
        self.len = 0;
        self.cursor.iter_mut().for_each(|c| *c = (NIL, 0));
        self.last.iter_mut().for_each(|l| *l = None);
    }

    /// Nodes scanned by every vote since construction.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Indices kept.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no index is kept.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// State in bytes (the arrays; O(d + workers)).
    pub fn state_bytes(&self) -> usize {
        self.depth * (8 + 4 + 4 + 1) + self.cursor.len() * (4 + 8 + 16)
    }

    /// Merge `idx` voted by `worker` (`worker` < workers, checked by the caller).
    pub fn vote(&mut self, worker: usize, idx: u64) -> Vote {
        if self.last[worker].is_some_and(|l| idx <= l) {
            return Vote::Refused;
        }
        self.last[worker] = Some(idx);
        if self.len == self.depth && idx >= self.idx[self.tail as usize] {
            return if idx == self.idx[self.tail as usize] {
                Vote::Kept
            } else {
                Vote::Dropped
            };
        }
        // Scan from the worker's cursor if it is still the node it was.
        let (c, ci) = self.cursor[worker];
        let mut prev = if c != NIL && self.live[c as usize] && self.idx[c as usize] == ci {
            c
        } else {
            NIL
        };
        let mut cur = if prev == NIL {
            self.head
        } else {
            self.next[prev as usize]
        };
        while cur != NIL && self.idx[cur as usize] < idx {
            self.steps += 1;
            prev = cur;
            cur = self.next[cur as usize];
        }
        if cur != NIL && self.idx[cur as usize] == idx {
            self.cursor[worker] = (cur, idx);
            return Vote::Kept;
        }
        if self.len == self.depth {
            // Evict the largest; it is not `prev` (idx < its index).
            let t = self.tail;
            self.tail = self.prev[t as usize];
            if self.tail != NIL {
                self.next[self.tail as usize] = NIL;
            } else {
                self.head = NIL;
            }
            if cur == t {
                cur = NIL;
            }
            self.live[t as usize] = false;
            self.free.push(t);
            self.len -= 1;
        }
        let Some(n) = self.free.pop() else {
            return Vote::Dropped;
        };
        let u = n as usize;
        self.idx[u] = idx;
        self.live[u] = true;
        self.prev[u] = prev;
        self.next[u] = cur;
        if prev == NIL {
            self.head = n;
        } else {
            self.next[prev as usize] = n;
        }
        if cur == NIL {
            self.tail = n;
        } else {
            self.prev[cur as usize] = n;
        }
        self.len += 1;
        self.cursor[worker] = (n, idx);
        Vote::Kept
    }

    /// The kept indices in ascending order, appended to `out`.
    pub fn sorted_into(&self, out: &mut Vec<u64>) {
        let mut cur = self.head;
        while cur != NIL {
            out.push(self.idx[cur as usize]);
            cur = self.next[cur as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(m: &BlockMerge) -> Vec<u64> {
        let mut v = Vec::new();
        m.sorted_into(&mut v);
        v
    }

    #[test]
    fn keeps_the_d_smallest_of_the_union() {
        let mut m = BlockMerge::new(3, 4);
        for i in [1, 5, 9, 13] {
            assert_eq!(m.vote(0, i), Vote::Kept);
        }
        for (i, want) in [
            (2, Vote::Kept),
            (5, Vote::Kept),
            (6, Vote::Kept),
            (20, Vote::Dropped),
        ] {
            assert_eq!(m.vote(1, i), want, "{i}");
        }
        assert_eq!(sorted(&m), vec![1, 2, 5, 6]);
        for i in [0, 3, 4, 7] {
            m.vote(2, i);
        }
        assert_eq!(sorted(&m), vec![0, 1, 2, 3]);
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn refuses_votes_out_of_order_and_clears() {
        let mut m = BlockMerge::new(1, 2);
        assert_eq!(m.vote(0, 7), Vote::Kept);
        assert_eq!(m.vote(0, 7), Vote::Refused);
        assert_eq!(m.vote(0, 3), Vote::Refused);
        assert_eq!(sorted(&m), vec![7]);
        m.clear();
        assert!(m.is_empty());
        assert_eq!(m.vote(0, 3), Vote::Kept);
        assert_eq!(sorted(&m), vec![3]);
    }

    #[test]
    fn work_per_message_is_linear_in_depth() {
        // n workers each vote d ascending indices, interleaved so that every
        // list position is contested: the scans stay O(d) per message.
        let (n, d) = (8usize, 256usize);
        let mut m = BlockMerge::new(n, d);
        for w in 0..n {
            for k in 0..d {
                m.vote(w, (k * n + w) as u64);
            }
        }
        let want: Vec<u64> = (0..d as u64).collect();
        assert_eq!(sorted(&m), want);
        assert!(
            m.steps() <= (2 * n * d) as u64,
            "{} nodes scanned for {n} messages of {d}",
            m.steps()
        );
    }

    #[test]
    fn matches_a_sort_of_the_union_on_random_votes() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..50 {
            let (n, d) = (1 + (rnd() % 5) as usize, 1 + (rnd() % 9) as usize);
            let mut m = BlockMerge::new(n, d);
            let mut all = Vec::new();
            for w in 0..n {
                let mut v: Vec<u64> = (0..d).map(|_| rnd() % 40).collect();
                v.sort_unstable();
                v.dedup();
                for &i in &v {
                    assert_ne!(m.vote(w, i), Vote::Refused);
                }
                all.extend(v);
            }
            all.sort_unstable();
            all.dedup();
            all.truncate(d);
            assert_eq!(sorted(&m), all);
        }
    }
}
