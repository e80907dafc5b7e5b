//! The transmit side: Concatenation Queue expiry, flushed CQs framed into
//! the TX buffer, and link pacing at the line rate (a frame is emitted on
//! port 0 when its transmission starts).

use std::collections::VecDeque;

use netsparse_externs::concat::{Concatenator, CqKey, Flushed};
use netsparse_externs::framer::Framer;
use netsparse_externs::time::serialization_time;
use netsparse_externs::wire::{PrRepr, PrType};
use netsparse_externs::{Outputs, Time};

use super::Nic;
use crate::config::NicConfig;
use crate::memory::HostMemory;
use crate::stats::NicStats;

/// One frame in the TX buffer.
#[derive(Clone, Copy, Debug)]
pub(super) struct TxFrame {
    pub(super) start: Time,
    pub(super) len: usize,
}

/// The TX buffer and the link pacing: frame bytes queued back to back in
/// `bytes[head..]`.
#[derive(Clone, Debug, Default)]
pub(super) struct Tx {
    pub(super) frames: VecDeque<TxFrame>,
    pub(super) bytes: Vec<u8>,
    pub(super) head: usize,
    pub(super) link_free: Time,
}

impl Tx {
    /// Bytes waiting in the TX buffer.
    pub(super) fn queued(&self) -> usize {
        self.bytes.len() - self.head
    }
}

/// Queue a PR in the Concatenator at `e`; flushed CQs go to the TX buffer.
/// With DelayCycles 0 the PR's CQ leaves at once. False if the PR was refused.
#[allow(clippy::too_many_arguments)]
pub(super) fn push_pr(
    concat: &mut Concatenator,
    tx: &mut Tx,
    frame: &mut Vec<u8>,
    framer: &mut Framer,
    stats: &mut NicStats,
    cfg: &NicConfig,
    e: Time,
    key: CqKey,
    prop_len: u32,
    pr: &PrRepr,
    payload: &[u8],
) -> bool {
    let r = concat.push(e, key, prop_len, pr, payload, |f| {
        enqueue_frame(tx, frame, framer, stats, cfg, &f)
    });
    if r.is_err() {
        return false;
    }
    if cfg.delay_cycles == 0 {
        concat.on_timer(e, |f| enqueue_frame(tx, frame, framer, stats, cfg, &f));
    }
    true
}

/// A flushed CQ becomes a frame in the TX buffer, paced at line rate.
pub(super) fn enqueue_frame(
    tx: &mut Tx,
    frame: &mut Vec<u8>,
    framer: &mut Framer,
    stats: &mut NicStats,
    cfg: &NicConfig,
    f: &Flushed<'_>,
) {
    frame.clear();
    let len = match framer.frame(f, frame) {
        Ok(n) => n,
        Err(e) => {
            stats.program_errors += u64::from(f.num_prs);
            tracing::warn!(node = cfg.node, "could not build a frame: {e}");
            return;
        }
    };
    let start = f.at.max(tx.link_free);
    tx.link_free = start + serialization_time(len as u64, cfg.link_gbps);
    tx.frames.push_back(TxFrame { start, len });
    tx.bytes.extend_from_slice(&frame[..len]);
    stats.tx_packets += 1;
    stats.tx_prs += u64::from(f.num_prs);
    stats.tx_bytes += len as u64;
    if f.key.pr_type == PrType::Response {
        stats.tx_payload_bytes += u64::from(f.num_prs) * u64::from(f.prop_len);
    }
    stats.tx_buffer_peak = stats.tx_buffer_peak.max(tx.queued() as u64);
}

impl<M: HostMemory> Nic<M> {
    pub(super) fn concat_expire(&mut self, e: Time) {
        let (tx, frame, framer, stats, cfg) = (
            &mut self.tx,
            &mut self.frame,
            &mut self.framer,
            &mut self.core.stats,
            &self.cfg,
        );
        self.concat
            .on_timer(e, |f| enqueue_frame(tx, frame, framer, stats, cfg, &f));
    }

    pub(super) fn tx_step(&mut self, e: Time, out: &mut Outputs) {
        while let Some(f) = self.tx.frames.front().copied() {
            if f.start > e {
                break;
            }
            self.tx.frames.pop_front();
            let tx = &mut self.tx;
            let end = (tx.head + f.len).min(tx.bytes.len());
            out.push(0, &tx.bytes[tx.head..end]);
            tx.head = end;
            if tx.frames.is_empty() {
                tx.bytes.clear();
                tx.head = 0;
                // A server answering a burst of reads can queue far more
                // than the TX buffer (nothing holds its reads back); give
                // the burst's memory back once it has left, keeping room
                // for a full buffer, so a cluster's NICs do not each keep
                // their largest burst for the rest of the run.
                if tx.bytes.capacity() > 2 * self.cfg.tx_buffer_bytes {
                    tx.bytes.shrink_to(self.cfg.tx_buffer_bytes);
                }
            } else if tx.head > 1 << 20 && tx.head * 2 > tx.bytes.len() {
                tx.bytes.drain(..tx.head);
                tx.head = 0;
            }
        }
        self.wake_tx(e);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{deliver, from_peer, node0, peer_reads, run, PROP};
    use crate::workload::batch_commands;
    use netsparse_externs::time::serialization_time;
    use netsparse_externs::wire::PrType;
    use netsparse_externs::Time;

    #[test]
    fn frames_leave_back_to_back_at_the_line_rate() {
        // No concatenation delay: every read PR is its own frame.
        let idxs: Vec<u64> = (64..80).collect();
        let mut nic = node0(&idxs, |c| {
            c.delay_cycles = 0;
            c.link_gbps = 1;
        });
        nic.post_rig(Time::ZERO, batch_commands(16, 16, PROP)[0])
            .expect("accepted");
        let sent = run(&mut nic, Time::from_ms(1));
        assert_eq!(sent.len(), 16);
        for w in sent.windows(2) {
            let gap = w[1].0 - w[0].0;
            assert!(
                gap >= serialization_time(w[0].1.len() as u64, 1),
                "{gap:?} between frames of {} bytes",
                w[0].1.len()
            );
        }
        let s = nic.stats();
        assert_eq!((s.tx_packets, s.tx_prs), (16, 16));
    }

    #[test]
    fn a_burst_of_responses_gives_its_memory_back_once_sent() {
        // A slow link and one response per frame: 20 frames of 64 reads
        // queue about 20 times the 2 KiB TX buffer of responses.
        let mut nic = node0(&[], |c| {
            c.delay_cycles = 0;
            c.link_gbps = 1;
            c.tx_buffer_bytes = 2048;
        });
        let frame = from_peer(PrType::Read, &peer_reads(0..64));
        for i in 0..20 {
            deliver(&mut nic, Time::from_ns(i), &frame);
        }
        let sent = run(&mut nic, Time::from_ms(10));
        assert_eq!(sent.len(), 20 * 64, "one frame per response");
        let s = nic.stats();
        assert_eq!(s.reads_served, 20 * 64);
        assert!(s.tx_buffer_peak > 8 * 2048, "peak {}", s.tx_buffer_peak);
        assert_eq!(nic.tx.queued(), 0);
        assert!(
            nic.tx.bytes.capacity() <= 2 * 2048,
            "the burst's {} bytes are still held",
            nic.tx.bytes.capacity()
        );
    }

    #[test]
    fn with_a_delay_prs_to_one_destination_share_frames() {
        let idxs: Vec<u64> = (64..80).collect();
        let mut nic = node0(&idxs, |_| {});
        nic.post_rig(Time::ZERO, batch_commands(16, 16, PROP)[0])
            .expect("accepted");
        let sent = run(&mut nic, Time::from_ms(1));
        let s = nic.stats();
        assert_eq!(s.tx_prs, 16);
        assert!(sent.len() < 16, "{} frames", sent.len());
    }
}
