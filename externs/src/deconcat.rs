//! The Deconcatenator: one NetSparse packet → its PRs, with validation.
//!
//! Structural checks come from [`crate::wire`] (truncation, PR count that
//! overruns the packet, trailing bytes, unknown type, reads carrying
//! payloads); on top of them the Deconcatenator enforces the semantic rules
//! of a NetSparse endpoint: responses carry a non-empty property of at most
//! `max_prop_len` bytes, packets carry at least one PR, and (optionally) the
//! IPv4 header checksum is right. Every packet is counted: valid, foreign
//! (not NetSparse: pass it on), or malformed by kind (count and drop).
//!
//! Validation happens once per packet, before any PR is handed out, so a
//! malformed packet never yields a partial set of PRs.

use thiserror::Error;

use crate::wire::{
    pr_capacity, ConcatPacket, ConcatRepr, Frame, PrIter, PrType, WireError, DEFAULT_MTU,
    PR_HEADER_LEN,
};

/// Validation parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeconcatConfig {
    /// Largest accepted property length (default: the most one PR can carry
    /// in a 1500-byte MTU, 1428 bytes).
    pub max_prop_len: u32,
    /// Check the IPv4 header checksum of frames.
    pub verify_ipv4_checksum: bool,
}

impl Default for DeconcatConfig {
    fn default() -> DeconcatConfig {
        DeconcatConfig {
            max_prop_len: (pr_capacity(DEFAULT_MTU) - PR_HEADER_LEN) as u32,
            verify_ipv4_checksum: true,
        }
    }
}

/// Why a packet was not deconcatenated.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DeconcatError {
    /// A wire-format error (see [`WireError::is_foreign`] for pass-through traffic).
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A response packet with property length 0.
    #[error("response packet with property length 0")]
    ZeroPropLen,
    /// A property length above the configured maximum.
    #[error("property length {prop_len} above the maximum {max}")]
    PropLenTooLarge {
        /// The packet's `prop_len`.
        prop_len: u32,
        /// The configured maximum.
        max: u32,
    },
    /// A packet with no PRs.
    #[error("NetSparse packet with no PRs")]
    Empty,
}

impl DeconcatError {
    /// Valid traffic that is not NetSparse (forward it unchanged).
    pub fn is_foreign(&self) -> bool {
        matches!(self, DeconcatError::Wire(w) if w.is_foreign())
    }
}

/// Counters: packets, PRs and each malformed kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeconcatStats {
    /// Valid NetSparse packets.
    pub packets: u64,
    /// PRs in valid packets.
    pub prs: u64,
    /// Read packets among `packets`.
    pub read_packets: u64,
    /// Response packets among `packets`.
    pub response_packets: u64,
    /// Frames that are not NetSparse.
    pub foreign: u64,
    /// Truncated at some layer.
    pub truncated: u64,
    /// Bad IPv4/UDP framing: header, total length, fragment, UDP length, checksum.
    pub bad_ip: u64,
    /// Unknown PR type.
    pub unknown_type: u64,
    /// PR count that overruns the packet.
    pub count_overrun: u64,
    /// Bytes after the last PR.
    pub trailing_bytes: u64,
    /// Read PRs carrying payloads.
    pub read_with_payload: u64,
    /// Property length 0 on a response, or above the maximum.
    pub bad_prop_len: u64,
    /// No PRs.
    pub empty: u64,
}

impl DeconcatStats {
    /// All malformed packets.
    pub fn malformed(&self) -> u64 {
        self.truncated
            + self.bad_ip
            + self.unknown_type
            + self.count_overrun
            + self.trailing_bytes
            + self.read_with_payload
            + self.bad_prop_len
            + self.empty
    }
}

/// A validated packet: its header and its PRs.
#[derive(Clone, Debug)]
pub struct Deconcatenated<'a> {
    /// The concatenation header.
    pub concat: ConcatRepr,
    /// The parsed frame (when deconcatenating a whole frame).
    pub frame: Option<Frame<'a>>,
    /// The PRs, in order (exactly `concat.num_prs`).
    pub prs: PrIter<'a>,
}

/// A validating Deconcatenator with counters.
#[derive(Clone, Debug, Default)]
pub struct Deconcatenator {
    cfg: DeconcatConfig,
    stats: DeconcatStats,
}

impl Deconcatenator {
    /// A Deconcatenator with `cfg`.
    pub fn new(cfg: DeconcatConfig) -> Deconcatenator {
        Deconcatenator {
            cfg,
            stats: DeconcatStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &DeconcatConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &DeconcatStats {
        &self.stats
    }

    /// Deconcatenate a whole Ethernet frame.
    pub fn frame<'a>(&mut self, bytes: &'a [u8]) -> Result<Deconcatenated<'a>, DeconcatError> {
        self.parsed(Frame::parse(bytes))
    }

    /// Deconcatenate a frame someone already parsed with [`Frame::parse`]
    /// (a switch's crossbar classifies by parsing: the frame is parsed once
    /// per hop). Validates, counts and splits exactly as [`Self::frame`].
    pub fn parsed<'a>(
        &mut self,
        parsed: Result<Frame<'a>, WireError>,
    ) -> Result<Deconcatenated<'a>, DeconcatError> {
        let r = parsed.map_err(DeconcatError::from).and_then(|f| {
            if self.cfg.verify_ipv4_checksum {
                f.verify_ipv4_checksum()?;
            }
            self.semantic(&f.concat)?;
            Ok(f)
        });
        match r {
            Ok(f) => {
                self.count_ok(&f.concat);
                Ok(Deconcatenated {
                    concat: f.concat,
                    prs: f.prs(),
                    frame: Some(f),
                })
            }
            Err(e) => {
                self.count_err(&e);
                Err(e)
            }
        }
    }

    /// Deconcatenate a concatenation layer (header and PRs, nothing after).
    pub fn layer<'a>(&mut self, bytes: &'a [u8]) -> Result<Deconcatenated<'a>, DeconcatError> {
        let p = ConcatPacket::new_unchecked(bytes);
        let r = ConcatRepr::parse(&p)
            .map_err(DeconcatError::from)
            .and_then(|c| {
                self.semantic(&c)?;
                Ok(c)
            });
        match r {
            Ok(concat) => {
                self.count_ok(&concat);
                Ok(Deconcatenated {
                    concat,
                    frame: None,
                    prs: p.into_prs(),
                })
            }
            Err(e) => {
                self.count_err(&e);
                Err(e)
            }
        }
    }

    fn semantic(&self, c: &ConcatRepr) -> Result<(), DeconcatError> {
        if c.prop_len > self.cfg.max_prop_len {
            return Err(DeconcatError::PropLenTooLarge {
                prop_len: c.prop_len,
                max: self.cfg.max_prop_len,
            });
        }
        if c.pr_type == PrType::Response && c.prop_len == 0 {
            return Err(DeconcatError::ZeroPropLen);
        }
        if c.num_prs == 0 {
            return Err(DeconcatError::Empty);
        }
        Ok(())
    }

    fn count_ok(&mut self, c: &ConcatRepr) {
        self.stats.packets += 1;
        self.stats.prs += u64::from(c.num_prs);
        match c.pr_type {
            PrType::Read => self.stats.read_packets += 1,
            PrType::Response => self.stats.response_packets += 1,
        }
    }

    fn count_err(&mut self, e: &DeconcatError) {
        let s = &mut self.stats;
        match e {
            DeconcatError::ZeroPropLen | DeconcatError::PropLenTooLarge { .. } => {
                s.bad_prop_len += 1
            }
            DeconcatError::Empty => s.empty += 1,
            DeconcatError::Wire(w) => match w {
                WireError::NotIpv4 { .. }
                | WireError::NotUdp { .. }
                | WireError::NotRoce { .. }
                | WireError::NotNetSparse { .. } => s.foreign += 1,
                WireError::Truncated { .. } => s.truncated += 1,
                WireError::BadIpv4Header { .. }
                | WireError::BadIpv4TotalLength { .. }
                | WireError::BadIpv4Checksum { .. }
                | WireError::Fragmented { .. }
                | WireError::BadUdpLength { .. } => s.bad_ip += 1,
                WireError::UnknownPrType { .. } => s.unknown_type += 1,
                WireError::PrCountOverrun { .. } => s.count_overrun += 1,
                WireError::TrailingBytes { .. } => s.trailing_bytes += 1,
                WireError::ReadWithPayload { .. } => s.read_with_payload += 1,
                // Build-side errors cannot come out of parsing; count them as
                // truncation so no packet goes uncounted.
                WireError::BufferTooSmall { .. }
                | WireError::ExceedsMtu { .. }
                | WireError::PayloadLength { .. }
                | WireError::DeviceIdOutOfRange { .. } => s.truncated += 1,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{DeviceAddr, FrameBuilder, FrameHeader, PrRepr};

    fn frame(pr_type: PrType, prop_len: u32, n: u32) -> Vec<u8> {
        let h = FrameHeader::netsparse(DeviceAddr::Node(1), 2, 0).unwrap();
        let mut buf = Vec::new();
        let mut b = FrameBuilder::begin(&mut buf, &h, pr_type, 2, prop_len, 1500).unwrap();
        let payload = vec![
            0x5a;
            if pr_type == PrType::Response {
                prop_len as usize
            } else {
                0
            }
        ];
        for i in 0..n {
            b.push_pr(
                &PrRepr {
                    src: 1,
                    tid: 0,
                    idx: u64::from(i),
                    req_id: i,
                },
                &payload,
            )
            .unwrap();
        }
        b.finish();
        buf
    }

    #[test]
    fn valid_packets_yield_their_prs() {
        let mut d = Deconcatenator::default();
        let f = frame(PrType::Response, 64, 3);
        let out = d.frame(&f).unwrap();
        assert_eq!(out.concat.num_prs, 3);
        assert_eq!(
            out.frame.as_ref().map(|f| f.src_device()),
            Some(Some(DeviceAddr::Node(1)))
        );
        let idxs: Vec<u64> = out.prs.map(|p| p.idx).collect();
        assert_eq!(idxs, [0, 1, 2]);
        let r = frame(PrType::Read, 64, 2);
        let out = d.layer(&r[54..]).unwrap();
        assert_eq!(out.prs.len(), 2);
        let s = d.stats();
        assert_eq!(
            (
                s.packets,
                s.prs,
                s.read_packets,
                s.response_packets,
                s.malformed()
            ),
            (2, 5, 1, 1, 0)
        );
    }

    #[test]
    fn malformed_kinds_are_counted() {
        let mut d = Deconcatenator::new(DeconcatConfig {
            max_prop_len: 128,
            ..DeconcatConfig::default()
        });
        let good = frame(PrType::Read, 16, 2);
        // Truncated.
        assert!(d.frame(&good[..20]).is_err());
        // Unknown type (byte 55 = low byte of pr_type).
        let mut u = good.clone();
        u[55] = 7;
        assert_eq!(
            d.frame(&u).unwrap_err(),
            DeconcatError::Wire(WireError::UnknownPrType { pr_type: 7 })
        );
        // Count overrun.
        let mut o = good.clone();
        o[67] = 3;
        assert!(matches!(
            d.frame(&o),
            Err(DeconcatError::Wire(WireError::PrCountOverrun { .. }))
        ));
        // Trailing bytes at the layer level.
        let mut t = good[54..].to_vec();
        t.push(0);
        assert!(matches!(
            d.layer(&t),
            Err(DeconcatError::Wire(WireError::TrailingBytes { .. }))
        ));
        // Reads carrying payload.
        let mut rp = good[54..].to_vec();
        rp.extend_from_slice(&[0; 32]);
        assert!(matches!(
            d.layer(&rp),
            Err(DeconcatError::Wire(WireError::ReadWithPayload { .. }))
        ));
        // Zero prop_len response, too-large prop_len, empty packet.
        let z = frame(PrType::Response, 0, 1);
        assert_eq!(d.frame(&z).unwrap_err(), DeconcatError::ZeroPropLen);
        let big = frame(PrType::Response, 256, 1);
        assert_eq!(
            d.frame(&big).unwrap_err(),
            DeconcatError::PropLenTooLarge {
                prop_len: 256,
                max: 128
            }
        );
        let e = frame(PrType::Read, 16, 0);
        assert_eq!(d.frame(&e).unwrap_err(), DeconcatError::Empty);
        // Bad checksum.
        let mut c = good.clone();
        c[24] ^= 0xff;
        assert!(matches!(
            d.frame(&c),
            Err(DeconcatError::Wire(WireError::BadIpv4Checksum { .. }))
        ));
        // Foreign traffic is not malformed.
        let mut f = good.clone();
        f[37] = 0x35; // UDP dst port 0x1235
        let err = d.frame(&f).unwrap_err();
        assert!(err.is_foreign());
        let s = *d.stats();
        assert_eq!(
            (
                s.truncated,
                s.unknown_type,
                s.count_overrun,
                s.trailing_bytes,
                s.read_with_payload,
                s.bad_prop_len,
                s.empty,
                s.bad_ip,
                s.foreign
            ),
            (1, 1, 1, 1, 1, 2, 1, 1, 1)
        );
        assert_eq!(s.malformed(), 9);
        assert_eq!(s.packets, 0);
        // Without checksum verification the bad-checksum frame is accepted.
        let mut lax = Deconcatenator::new(DeconcatConfig {
            verify_ipv4_checksum: false,
            ..DeconcatConfig::default()
        });
        assert!(lax.frame(&c).is_ok());
    }
}
