//! Links: the physical parameters of a link ([`LinkParams`]: bandwidth and
//! one-way propagation delay, or a fixed delay with no serialisation time)
//! and the traffic counters of one link direction ([`LinkCounters`]),
//! including the NetSparse split into header and property payload bytes.

use serde::Serialize;

use netsparse_externs::wire::{Frame, PrType};
use netsparse_externs::Time;

/// A link's physical parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LinkParams {
    /// Bandwidth in Gb/s (each direction); [`LinkParams::UNLIMITED_GBPS`]
    /// for a link without serialisation time.
    pub gbps: u64,
    /// One-way propagation delay.
    pub latency: Time,
}

impl Default for LinkParams {
    /// Table 5: 400 Gb/s, 450 ns one way.
    fn default() -> LinkParams {
        LinkParams {
            gbps: 400,
            latency: Time::from_ns(450),
        }
    }
}

impl LinkParams {
    /// The bandwidth of a link that takes no time to serialise a frame:
    /// `serialization_time(len, u64::MAX)` rounds `len · 8000 / u64::MAX`
    /// picoseconds down to 0 for every frame shorter than 2^61 bytes.
    pub const UNLIMITED_GBPS: u64 = u64::MAX;

    /// A link with a fixed one-way `delay` and no serialisation time: every
    /// frame arrives exactly `delay` after it was sent and frames never queue
    /// behind each other (the model of the NIC tests and their pcap goldens).
    pub fn fixed_delay(delay: Time) -> LinkParams {
        LinkParams {
            gbps: Self::UNLIMITED_GBPS,
            latency: delay,
        }
    }

    /// Whether this link has no serialisation time.
    pub fn is_unlimited(&self) -> bool {
        self.gbps == Self::UNLIMITED_GBPS
    }
}

/// Traffic counters of one link direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkCounters {
    /// Frames sent.
    pub packets: u64,
    /// Frame bytes sent.
    pub bytes: u64,
    /// NetSparse frames among them.
    pub netsparse_packets: u64,
    /// Bytes of NetSparse frames that are not property payload (Ethernet to
    /// concatenation header, PR headers, padding).
    pub header_bytes: u64,
    /// Property payload bytes of NetSparse response PRs.
    pub payload_bytes: u64,
    /// PRs carried (reads and responses).
    pub prs: u64,
    /// Read PRs carried.
    pub read_prs: u64,
    /// Response PRs carried.
    pub response_prs: u64,
    /// NetSparse packets of read PRs.
    pub read_packets: u64,
    /// NetSparse packets of response PRs.
    pub response_packets: u64,
    /// Frames that are not NetSparse (valid foreign traffic).
    pub other_packets: u64,
    /// Their bytes.
    pub other_bytes: u64,
    /// Frames that look like NetSparse but do not parse (counted, still delivered).
    pub malformed_packets: u64,
    /// Time the link spent transmitting, in picoseconds.
    pub busy_ps: u64,
    /// Sum over frames of the time spent waiting in the output queue, ps.
    pub queue_delay_ps: u64,
    /// Largest single queueing delay, ps.
    pub max_queue_delay_ps: u64,
    /// Time the link spent paused by flow control (its head frame waiting
    /// for room in the receiver's buffer), ps.
    pub paused_ps: u64,
    /// Most bytes in the output queue when a frame joined it (the frame,
    /// those waiting before it, and what was left to send of the frame on
    /// the wire); tracked under flow control only.
    pub peak_backlog_bytes: u64,
}

impl LinkCounters {
    /// Add `other`'s counts to these.
    pub fn add(&mut self, o: &LinkCounters) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.netsparse_packets += o.netsparse_packets;
        self.header_bytes += o.header_bytes;
        self.payload_bytes += o.payload_bytes;
        self.prs += o.prs;
        self.read_prs += o.read_prs;
        self.response_prs += o.response_prs;
        self.read_packets += o.read_packets;
        self.response_packets += o.response_packets;
        self.other_packets += o.other_packets;
        self.other_bytes += o.other_bytes;
        self.malformed_packets += o.malformed_packets;
        self.busy_ps += o.busy_ps;
        self.queue_delay_ps += o.queue_delay_ps;
        self.max_queue_delay_ps = self.max_queue_delay_ps.max(o.max_queue_delay_ps);
        self.paused_ps += o.paused_ps;
        self.peak_backlog_bytes = self.peak_backlog_bytes.max(o.peak_backlog_bytes);
    }

    /// Count `frame` and return the bytes it occupies on the link: its
    /// length, plus `netsparse_adjust` for a NetSparse frame (header
    /// accounting other than the wire format's; at least the payload).
    #[cfg(test)]
    pub(crate) fn count_frame(&mut self, frame: &[u8], netsparse_adjust: i64) -> u64 {
        self.count(FrameClass::of(frame), frame.len(), netsparse_adjust)
    }

    /// [`LinkCounters::count_frame`] for a frame of `len` bytes already
    /// classified.
    pub(crate) fn count(&mut self, class: FrameClass, len: usize, netsparse_adjust: i64) -> u64 {
        let mut len = len as u64;
        self.packets += 1;
        match class {
            FrameClass::NetSparse {
                pr_type,
                prs,
                prop_len,
            } => {
                let n = u64::from(prs);
                let payload = match pr_type {
                    PrType::Response => n * u64::from(prop_len),
                    PrType::Read => 0,
                };
                len = len.saturating_add_signed(netsparse_adjust).max(payload);
                self.bytes += len;
                self.netsparse_packets += 1;
                self.payload_bytes += payload;
                self.header_bytes += len - payload.min(len);
                self.prs += n;
                match pr_type {
                    PrType::Read => {
                        self.read_prs += n;
                        self.read_packets += 1;
                    }
                    PrType::Response => {
                        self.response_prs += n;
                        self.response_packets += 1;
                    }
                }
            }
            FrameClass::Other { malformed } => {
                self.bytes += len;
                self.other_packets += 1;
                self.other_bytes += len;
                if malformed {
                    self.malformed_packets += 1;
                }
            }
        }
        len
    }
}

/// What a link's counters need to know of a frame, read once from its
/// bytes: the parallel windows do it on the thread that emitted the frame,
/// while its bytes are in that core's cache, so that the serial merge
/// reads none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameClass {
    /// A NetSparse frame.
    NetSparse {
        /// Its PRs' type.
        pr_type: PrType,
        /// PRs carried.
        prs: u32,
        /// Property bytes per response PR.
        prop_len: u32,
    },
    /// Any other frame; `malformed` if it looks like NetSparse but does
    /// not parse.
    Other {
        /// Looks like NetSparse, does not parse.
        malformed: bool,
    },
}

impl FrameClass {
    /// Classify `frame`.
    pub(crate) fn of(frame: &[u8]) -> FrameClass {
        match Frame::parse(frame) {
            Ok(f) => FrameClass::NetSparse {
                pr_type: f.concat.pr_type,
                prs: f.concat.num_prs,
                prop_len: f.concat.prop_len,
            },
            Err(e) => FrameClass::Other {
                malformed: !e.is_foreign(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsparse_externs::time::serialization_time;

    #[test]
    fn an_unlimited_link_takes_no_time_to_serialise() {
        let l = LinkParams::fixed_delay(Time::from_ns(450));
        assert!(l.is_unlimited());
        for len in [0u64, 1, 64, 1500, 9000, 1 << 40] {
            assert_eq!(serialization_time(len, l.gbps), Time::ZERO);
        }
        assert!(!LinkParams::default().is_unlimited());
    }

    /// Header accounting changes what a NetSparse frame costs on the link
    /// and in the counters, never other frames, and never below the payload.
    #[test]
    fn header_accounting_applies_to_netsparse_frames_only() {
        use netsparse_externs::wire::{DeviceAddr, FrameBuilder, FrameHeader, PrRepr};
        let h = FrameHeader::netsparse(DeviceAddr::Node(1), 2, 1).unwrap();
        let mut frame = Vec::new();
        let mut b = FrameBuilder::begin(&mut frame, &h, PrType::Response, 2, 16, 1500).unwrap();
        for idx in 0..3u64 {
            let pr = PrRepr {
                src: 2,
                tid: 0,
                idx,
                req_id: 7,
            };
            b.push_pr(&pr, &[0xab; 16]).unwrap();
        }
        b.finish();
        let (mut wire, mut paper) = (LinkCounters::default(), LinkCounters::default());
        let len = frame.len() as u64;
        assert_eq!(wire.count_frame(&frame, 0), len);
        assert_eq!(paper.count_frame(&frame, -6), len - 6);
        assert_eq!(wire.payload_bytes, 48);
        assert_eq!(paper.payload_bytes, 48);
        assert_eq!(paper.header_bytes, wire.header_bytes - 6);
        assert_eq!(paper.bytes, wire.bytes - 6);
        // Never below the payload.
        let mut c = LinkCounters::default();
        assert_eq!(c.count_frame(&frame, -(len as i64) - 100), 48);
        assert_eq!(c.header_bytes, 0);
        // Other frames are charged as they are.
        let other = [0u8; 60];
        assert_eq!(c.count_frame(&other, -6), 60);
    }
}
