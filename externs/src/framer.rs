//! The framing half of the concatenating transmitter: every device that
//! concatenates PRs — the switch's middle pipes and the SmartNIC's TX —
//! turns a flushed Concatenation Queue into one RoCEv2 frame here, from its
//! own addresses to the destination node's, with its own BTH packet sequence
//! number (24 bits, counting frames built). Where the frame goes next (a
//! pipe's FIFO, the NIC's paced TX buffer) is the device's business.

use crate::concat::Flushed;
use crate::wire::{DeviceAddr, FrameHeader, WireError};

/// Builds the frames of one device's flushed Concatenation Queues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Framer {
    src: DeviceAddr,
    mac: Option<[u8; 6]>,
    ipv4: Option<[u8; 4]>,
    psn: u32,
}

impl Framer {
    /// Frames from `src`, with the addressing convention's MAC and IPv4
    /// addresses for it.
    pub fn new(src: DeviceAddr) -> Framer {
        Framer {
            src,
            mac: None,
            ipv4: None,
            psn: 0,
        }
    }

    /// Use these source addresses instead of the convention's (a switch
    /// configured with its own).
    pub fn with_addresses(mut self, mac: [u8; 6], ipv4: [u8; 4]) -> Framer {
        self.mac = Some(mac);
        self.ipv4 = Some(ipv4);
        self
    }

    /// Append the frame of `f` to `buf` with the next sequence number;
    /// returns its length. A frame that cannot be built (a destination the
    /// addressing convention cannot name) consumes no sequence number.
    pub fn frame(&mut self, f: &Flushed<'_>, buf: &mut Vec<u8>) -> Result<usize, WireError> {
        let mut h = FrameHeader::netsparse(self.src, f.key.dst, self.psn)?;
        if let Some(mac) = self.mac {
            h.eth_src = mac;
        }
        if let Some(ip) = self.ipv4 {
            h.ip_src = ip;
        }
        let n = f.write_frame_with(buf, &h)?;
        self.psn = self.psn.wrapping_add(1);
        Ok(n)
    }

    /// The sequence number the next frame gets (low 24 bits on the wire).
    pub fn next_psn(&self) -> u32 {
        self.psn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concat::{CqKey, FlushReason};
    use crate::time::Time;
    use crate::wire::{Frame, PrType};

    fn flushed(dst: u32) -> Flushed<'static> {
        Flushed {
            key: CqKey {
                pr_type: PrType::Read,
                dst,
                port: 0,
            },
            prop_len: 16,
            num_prs: 0,
            reason: FlushReason::Full,
            at: Time::ZERO,
            first_at: Time::ZERO,
            prs: &[],
        }
    }

    #[test]
    fn frames_match_the_wire_builder_and_count_sequence_numbers() {
        let mut fr = Framer::new(DeviceAddr::Node(3));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        fr.frame(&flushed(5), &mut a).expect("first");
        fr.frame(&flushed(5), &mut b).expect("second");
        assert_eq!(fr.next_psn(), 2);
        for (psn, got) in [(0, &a), (1, &b)] {
            let mut want = Vec::new();
            flushed(5)
                .write_frame(&mut want, DeviceAddr::Node(3), psn)
                .expect("reference frame");
            assert_eq!(got, &want);
        }
        let f = Frame::parse(&b).expect("a NetSparse frame");
        assert_eq!(f.src_device(), Some(DeviceAddr::Node(3)));
    }

    #[test]
    fn own_addresses_replace_the_convention_and_failures_keep_the_psn() {
        let mut fr = Framer::new(DeviceAddr::Switch(1)).with_addresses([2; 6], [10, 9, 8, 7]);
        let mut buf = Vec::new();
        fr.frame(&flushed(5), &mut buf).expect("an empty CQ frames");
        assert_eq!(&buf[6..12], &[2; 6]);
        assert_eq!(&buf[26..30], &[10, 9, 8, 7]);
        let mut bad = Vec::new();
        assert!(fr.frame(&flushed(u32::MAX), &mut bad).is_err());
        assert_eq!(fr.next_psn(), 1);
    }
}
