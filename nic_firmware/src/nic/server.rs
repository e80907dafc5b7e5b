//! The server RIG units: a read PR handed to a unit round-robin (the Q
//! Control) waits for the DMA read of its property, then its response joins
//! the Concatenator; each unit issues one read per cycle.

use std::collections::VecDeque;

use netsparse_externs::concat::CqKey;
use netsparse_externs::wire::{PrRepr, PrType};
use netsparse_externs::Time;

use super::tx::push_pr;
use super::Nic;
use crate::memory::HostMemory;

/// A response waiting for its property's DMA read.
#[derive(Clone, Copy, Debug)]
pub(super) struct PendingResponse {
    pub(super) ready: Time,
    pub(super) pr: PrRepr,
    pub(super) dst: u32,
    pub(super) prop_len: u32,
}

/// A server RIG unit.
#[derive(Clone, Debug, Default)]
pub(super) struct ServerUnit {
    pub(super) free_at: Time,
    pub(super) queue: VecDeque<PendingResponse>,
    pub(super) payloads: VecDeque<u8>,
}

impl<M: HostMemory> Nic<M> {
    /// Responses of server unit `s` whose property has been read by `e`
    /// join the Concatenator (each at its own ready time).
    pub(super) fn server_step(&mut self, s: usize, e: Time) {
        while let Some(r) = self.servers[s].queue.front().copied() {
            if r.ready > e {
                break;
            }
            let su = &mut self.servers[s];
            su.queue.pop_front();
            self.core.payload.clear();
            move_front(
                &mut su.payloads,
                r.prop_len as usize,
                &mut self.core.payload,
            );
            let key = CqKey {
                pr_type: PrType::Response,
                dst: r.dst,
                port: 0,
            };
            push_pr(
                &mut self.concat,
                &mut self.tx,
                &mut self.frame,
                &mut self.framer,
                &mut self.core.stats,
                &self.cfg,
                r.ready,
                key,
                r.prop_len,
                &r.pr,
                &self.core.payload,
            );
        }
        self.refresh_server(s);
    }
}

/// Move the first `n` bytes of `from` (all of them if it holds fewer) to
/// the end of `to`, a contiguous run at a time rather than byte by byte.
fn move_front(from: &mut VecDeque<u8>, n: usize, to: &mut Vec<u8>) {
    let n = n.min(from.len());
    let (a, b) = from.as_slices();
    let first = n.min(a.len());
    to.extend_from_slice(&a[..first]);
    to.extend_from_slice(&b[..n - first]);
    from.drain(..n);
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{deliver, from_peer, node0, peer_reads, run, PROP};
    use crate::memory::is_property;
    use netsparse_externs::wire::{Frame, PrRepr, PrType};
    use netsparse_externs::Time;

    #[test]
    fn moving_the_front_keeps_order_across_the_ring_s_wrap() {
        use std::collections::VecDeque;
        // A ring whose contents wrap: pop from the front, push at the back.
        let mut q: VecDeque<u8> = VecDeque::with_capacity(8);
        q.extend(0..6u8);
        q.drain(..4);
        q.extend(6..12u8);
        assert!(!q.as_slices().1.is_empty(), "the test needs a wrapped ring");
        let mut out = vec![0xAA];
        super::move_front(&mut q, 5, &mut out);
        assert_eq!(out, [0xAA, 4, 5, 6, 7, 8]);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), [9, 10, 11]);
        // Asking for more than is there moves what there is.
        super::move_front(&mut q, 10, &mut out);
        assert_eq!(out, [0xAA, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert!(q.is_empty());
    }

    #[test]
    fn a_read_is_answered_with_the_property_after_its_dma_read() {
        let mut nic = node0(&[], |_| {});
        let reads = peer_reads(5..8);
        let t0 = Time::from_us(1);
        assert!(deliver(&mut nic, t0, &from_peer(PrType::Read, &reads)).is_empty());
        let dma = nic.config().dma_one_way();
        let sent = run(&mut nic, Time::from_us(50));
        assert_eq!(sent.len(), 1, "one concatenated response frame");
        let (at, f) = &sent[0];
        assert!(*at >= t0 + dma + dma, "left before the property was read");
        let frame = Frame::parse(f).expect("a NetSparse frame");
        assert_eq!(frame.concat.pr_type, PrType::Response);
        assert_eq!(frame.concat.dst, 1);
        let prs: Vec<_> = frame.prs().collect();
        assert_eq!(prs.len(), 3);
        for (p, r) in prs.iter().zip(&reads) {
            assert_eq!(p.repr(), *r);
            assert_eq!(p.payload.len(), PROP as usize);
            assert!(is_property(p.idx, p.payload));
        }
        assert_eq!(nic.stats().reads_served, 3);
    }

    #[test]
    fn a_read_outside_the_served_slice_is_counted_not_answered() {
        let mut nic = node0(&[], |_| {});
        let far = PrRepr {
            src: 1,
            tid: 0,
            idx: 100,
            req_id: 1,
        };
        deliver(&mut nic, Time::from_us(1), &from_peer(PrType::Read, &[far]));
        assert!(run(&mut nic, Time::from_us(50)).is_empty());
        assert_eq!(nic.stats().reads_outside_slice, 1);
    }
}
