//! One-sided RDMA verbs served by the NIC (issue 15, item 3): the
//! responder side of RoCE-style READ, WRITE and FETCH_ADD over a table of
//! memory regions the host registered, and the requester's encoders and
//! decoder of the same wire format.
//!
//! # Wire format
//!
//! Every verb is a NetSparse PR, sent through a [`PrSender`] like every
//! other PR (so it is concatenated, framed and routed by the switches'
//! programs): `src` = the sending node, `tid` = the verb, `req_id` = the
//! requester's tag (echoed in every answer), `idx` = a remote address with
//! a count, operand or flag in its top 24 bits. Addresses are
//! [`addr`]`(region, offset)` = `region << 32 | offset` (an 8-bit region
//! id, the rkey of this format, and a 32-bit byte offset). Payloads are
//! chunks of the responder's [`RdmaConfig::chunk`] bytes:
//!
//! | verb | PR type | `idx` | payload |
//! |---|---|---|---|
//! | [`READ_REQ`] 0x41 | read | chunks << 40 \| address | — |
//! | [`READ_RESP`] 0x42 | response | the chunk's address | the chunk |
//! | [`WRITE`] 0x43 | response | [`ACK_REQ`]? \| address | one chunk |
//! | [`WRITE_ACK`] 0x44 | read | the address of the acknowledged chunk | — |
//! | [`FADD_REQ`] 0x45 | read | operand << 40 \| address | — |
//! | [`FADD_RESP`] 0x46 | read | the value before the add | — |
//! | [`NAK`] 0x47 | read | reason << 56 \| verb << 48 \| address | — |
//!
//! **WRITE acknowledgement.** A WRITE whose `idx` carries [`ACK_REQ`] (the
//! requester sets it on the last chunk of a message, like RoCE's AckReq
//! bit on a message's last packet) is answered with a [`WRITE_ACK`] once
//! its chunk is in memory. The fabric is lossless and keeps the order of a
//! node pair's PRs of one type (one route, FIFO concatenation queues), so
//! the acknowledgement of a message's last chunk tells the requester that
//! every chunk of the message is in; a refused chunk is answered with a
//! [`NAK`] that arrives before it.
//!
//! **Bad input.** A request to a region that is not registered, past a
//! region's end, with a wrong length (a READ of no chunks, a WRITE whose
//! payload is not one chunk, a READ or FETCH_ADD carrying a payload), a
//! FETCH_ADD to an address that is not 8-byte aligned, a verb the region's
//! access rights do not allow, or an unknown verb is refused: counted per
//! reason ([`RdmaStats::refused`]), nothing in memory changes, and a
//! [`NAK`] naming the reason goes back to the requester (so a requester
//! can report the failure instead of waiting; with
//! [`RdmaConfig::nak`] off the request is dropped silently).
//!
//! **Timing.** The responder serves a request when its PR arrives, in no
//! time of its own: it is a line-rate engine (the NIC's link, through the
//! [`PrSender`]'s pacing, is the only cost), as a hardware RDMA responder
//! that keeps up with its port. There is no per-request cost parameter.
//!
//! No allocation per request: READ responses are queued straight from the
//! registered memory, WRITEs copy into it.

use netsparse_externs::wire::{PrRepr, PrType};
use netsparse_externs::Time;
use serde::Serialize;
use thiserror::Error;

use crate::coll::PrSender;

/// READ request.
pub const READ_REQ: u16 = 0x41;
/// READ response: one chunk.
pub const READ_RESP: u16 = 0x42;
/// WRITE of one chunk.
pub const WRITE: u16 = 0x43;
/// Acknowledgement of a WRITE that asked for one.
pub const WRITE_ACK: u16 = 0x44;
/// FETCH_ADD request.
pub const FADD_REQ: u16 = 0x45;
/// FETCH_ADD response: the old value.
pub const FADD_RESP: u16 = 0x46;
/// Negative acknowledgement of a refused request.
pub const NAK: u16 = 0x47;

/// Bits of an address in `idx`; the count, operand or flag sits above.
pub const ADDR_BITS: u32 = 40;
/// The address part of an `idx`.
pub const ADDR_MASK: u64 = (1 << ADDR_BITS) - 1;
/// Bit of a WRITE's `idx` that asks for a [`WRITE_ACK`].
pub const ACK_REQ: u64 = 1 << 63;
/// Largest count (READ chunks) or operand (FETCH_ADD) a request carries.
pub const MAX_OPERAND: u64 = (1 << 24) - 1;
/// Largest chunk.
pub const MAX_CHUNK: u32 = 4096;

/// The address of byte `offset` of `region`.
pub const fn addr(region: u8, offset: u32) -> u64 {
    ((region as u64) << 32) | offset as u64
}

/// Whether `tid` is one of the verbs of this format.
pub const fn is_verb(tid: u16) -> bool {
    tid >= READ_REQ && tid <= NAK
}

/// What a registered region allows remote requesters to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Access {
    /// READ.
    pub read: bool,
    /// WRITE.
    pub write: bool,
    /// FETCH_ADD.
    pub atomic: bool,
}

impl Access {
    /// READ only.
    pub const READ: Access = Access {
        read: true,
        write: false,
        atomic: false,
    };
    /// WRITE only.
    pub const WRITE: Access = Access {
        read: false,
        write: true,
        atomic: false,
    };
    /// FETCH_ADD only.
    pub const ATOMIC: Access = Access {
        read: false,
        write: false,
        atomic: true,
    };
}

/// Why a request was refused (the code a [`NAK`] carries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Error)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// No region with that id is registered.
    #[error("unregistered region")]
    Unregistered = 1,
    /// The access runs past the region's end.
    #[error("out of bounds")]
    OutOfBounds = 2,
    /// A READ of no chunks, a WRITE whose payload is not one chunk, a READ
    /// or FETCH_ADD with a payload, or a count above [`MAX_OPERAND`].
    #[error("wrong length")]
    BadLength = 3,
    /// A FETCH_ADD to an address that is not 8-byte aligned.
    #[error("misaligned atomic")]
    Misaligned = 4,
    /// The region does not allow this verb.
    #[error("access not permitted")]
    NotPermitted = 5,
    /// A `tid` that is no verb a responder serves.
    #[error("unknown opcode")]
    UnknownOpcode = 6,
}

impl Refusal {
    /// Decode a NAK's reason code.
    pub const fn from_code(c: u8) -> Option<Refusal> {
        Some(match c {
            1 => Refusal::Unregistered,
            2 => Refusal::OutOfBounds,
            3 => Refusal::BadLength,
            4 => Refusal::Misaligned,
            5 => Refusal::NotPermitted,
            6 => Refusal::UnknownOpcode,
            _ => return None,
        })
    }
}

/// Refused requests, per reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Refusals {
    /// [`Refusal::Unregistered`].
    pub unregistered: u64,
    /// [`Refusal::OutOfBounds`].
    pub out_of_bounds: u64,
    /// [`Refusal::BadLength`].
    pub bad_length: u64,
    /// [`Refusal::Misaligned`].
    pub misaligned: u64,
    /// [`Refusal::NotPermitted`].
    pub not_permitted: u64,
    /// [`Refusal::UnknownOpcode`].
    pub unknown_opcode: u64,
}

impl Refusals {
    /// Every refusal.
    pub fn total(&self) -> u64 {
        self.unregistered
            + self.out_of_bounds
            + self.bad_length
            + self.misaligned
            + self.not_permitted
            + self.unknown_opcode
    }

    fn count(&mut self, r: Refusal) {
        *match r {
            Refusal::Unregistered => &mut self.unregistered,
            Refusal::OutOfBounds => &mut self.out_of_bounds,
            Refusal::BadLength => &mut self.bad_length,
            Refusal::Misaligned => &mut self.misaligned,
            Refusal::NotPermitted => &mut self.not_permitted,
            Refusal::UnknownOpcode => &mut self.unknown_opcode,
        } += 1;
    }
}

/// The responder's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RdmaStats {
    /// READ requests served.
    pub reads: u64,
    /// READ response chunks sent.
    pub read_chunks: u64,
    /// WRITE chunks stored.
    pub writes: u64,
    /// WRITE acknowledgements sent.
    pub acks: u64,
    /// FETCH_ADDs performed.
    pub fetch_adds: u64,
    /// NAKs sent.
    pub naks: u64,
    /// Refused requests, per reason.
    pub refused: Refusals,
}

/// The responder's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaConfig {
    /// This node's id (the `src` of its answers).
    pub node: u32,
    /// Payload bytes per READ response and WRITE (1..=[`MAX_CHUNK`]).
    pub chunk: u32,
    /// Answer refused requests with a [`NAK`] (else drop them silently).
    pub nak: bool,
}

/// Why a responder or a registration was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RdmaError {
    /// A chunk of 0 or more than [`MAX_CHUNK`] bytes.
    #[error("chunk of {0} bytes (must be 1..={MAX_CHUNK})")]
    BadChunk(u32),
    /// Region 0 is not a region (an address of 0 means none).
    #[error("region 0 is reserved")]
    ReservedRegion,
    /// The region id is registered already.
    #[error("region {0} is registered already")]
    Registered(u8),
    /// More bytes than a 32-bit offset reaches.
    #[error("region {region}: {len} bytes (at most 4 GiB)")]
    TooLarge {
        /// The region.
        region: u8,
        /// Its length.
        len: usize,
    },
}

#[derive(Debug)]
struct Region {
    bytes: Vec<u8>,
    access: Access,
}

/// What serving a PR did, for the node that owns the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// A READ or FETCH_ADD was answered (memory unchanged, or a counter
    /// changed).
    Answered,
    /// A WRITE stored `len` bytes at `offset` of `region`.
    Wrote {
        /// The region.
        region: u8,
        /// The byte offset.
        offset: u32,
        /// Bytes stored.
        len: u32,
    },
    /// The request was refused (counted; NAK'd if configured).
    Refused(Refusal),
    /// Not a request: an answer for this node's requester side
    /// ([`decode_reply`]).
    Reply,
}

/// An answer to one of this node's requests, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A READ response chunk at `address`.
    ReadChunk {
        /// The chunk's remote address.
        address: u64,
    },
    /// The acknowledgement of the WRITE chunk at `address`.
    WriteAck {
        /// Its remote address.
        address: u64,
    },
    /// A FETCH_ADD's old value.
    FetchAdd {
        /// The value before the add.
        old: u64,
    },
    /// A refused request.
    Nak {
        /// Why (None: a code this format does not define).
        reason: Option<Refusal>,
        /// The refused verb.
        verb: u8,
        /// The address it named.
        address: u64,
    },
}

/// Decode an answer PR (`None` for requests and unknown tids).
pub fn decode_reply(tid: u16, idx: u64) -> Option<Reply> {
    Some(match tid {
        READ_RESP => Reply::ReadChunk { address: idx },
        WRITE_ACK => Reply::WriteAck {
            address: idx & ADDR_MASK,
        },
        FADD_RESP => Reply::FetchAdd { old: idx },
        NAK => Reply::Nak {
            reason: Refusal::from_code((idx >> 56) as u8),
            verb: (idx >> 48) as u8,
            address: idx & ADDR_MASK,
        },
        _ => return None,
    })
}

/// The requester's side: queue verbs on a node's [`PrSender`].
#[derive(Clone, Copy, Debug)]
pub struct Requester {
    /// This node.
    pub node: u32,
    /// The chunk of every responder.
    pub chunk: u32,
}

impl Requester {
    fn pr(&self, tid: u16, idx: u64, tag: u32) -> PrRepr {
        PrRepr {
            src: self.node,
            tid,
            idx,
            req_id: tag,
        }
    }

    /// READ `chunks` chunks from `address` of node `dst`; the answers are
    /// `chunks` [`Reply::ReadChunk`]s tagged `tag`.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &self,
        tx: &mut PrSender,
        now: Time,
        dst: u32,
        address: u64,
        chunks: u64,
        tag: u32,
    ) {
        let idx = (chunks.min(MAX_OPERAND) << ADDR_BITS) | (address & ADDR_MASK);
        tx.push(
            now,
            PrType::Read,
            dst,
            self.chunk,
            &self.pr(READ_REQ, idx, tag),
            &[],
        );
    }

    /// FETCH_ADD `operand` (at most [`MAX_OPERAND`]) to the 8-byte word at
    /// `address` of node `dst`; the answer is a [`Reply::FetchAdd`] tagged
    /// `tag`.
    pub fn fetch_add(
        &self,
        tx: &mut PrSender,
        now: Time,
        dst: u32,
        address: u64,
        operand: u64,
        tag: u32,
    ) {
        let idx = (operand.min(MAX_OPERAND) << ADDR_BITS) | (address & ADDR_MASK);
        tx.push(
            now,
            PrType::Read,
            dst,
            self.chunk,
            &self.pr(FADD_REQ, idx, tag),
            &[],
        );
    }

    /// WRITE `data` (any length; the last chunk zero-padded, an empty
    /// message one zero chunk) at `address` of node `dst`, asking for a
    /// [`Reply::WriteAck`] of the last chunk, tagged `tag`. Returns the
    /// chunks sent.
    pub fn write(
        &self,
        tx: &mut PrSender,
        now: Time,
        dst: u32,
        address: u64,
        data: &[u8],
        tag: u32,
    ) -> u64 {
        let ch = self.chunk as usize;
        let n = data.len().div_ceil(ch).max(1);
        let mut pad = [0u8; MAX_CHUNK as usize];
        for c in 0..n {
            let part = data.get(c * ch..).unwrap_or(&[]);
            let part = &part[..part.len().min(ch)];
            let a = (address & ADDR_MASK) + (c * ch) as u64;
            let idx = if c + 1 == n { a | ACK_REQ } else { a };
            let pr = self.pr(WRITE, idx, tag);
            if part.len() == ch {
                tx.push(now, PrType::Response, dst, self.chunk, &pr, part);
            } else {
                pad[..part.len()].copy_from_slice(part);
                pad[part.len()..ch].fill(0);
                tx.push(now, PrType::Response, dst, self.chunk, &pr, &pad[..ch]);
            }
        }
        n as u64
    }
}

/// The responder: the registered-memory table and the verbs it serves.
#[derive(Debug)]
pub struct Responder {
    cfg: RdmaConfig,
    regions: Vec<Option<Region>>,
    stats: RdmaStats,
}

impl Responder {
    /// A responder with no registered memory.
    pub fn new(cfg: RdmaConfig) -> Result<Responder, RdmaError> {
        if cfg.chunk == 0 || cfg.chunk > MAX_CHUNK {
            return Err(RdmaError::BadChunk(cfg.chunk));
        }
        Ok(Responder {
            cfg,
            regions: (0..=u8::MAX).map(|_| None).collect(),
            stats: RdmaStats::default(),
        })
    }

    /// Its parameters.
    pub fn config(&self) -> RdmaConfig {
        self.cfg
    }

    /// Its counters.
    pub fn stats(&self) -> RdmaStats {
        self.stats
    }

    /// Register `bytes` as region `region` (1..=255) with `access`.
    pub fn register(
        &mut self,
        region: u8,
        bytes: Vec<u8>,
        access: Access,
    ) -> Result<(), RdmaError> {
        if region == 0 {
            return Err(RdmaError::ReservedRegion);
        }
        if bytes.len() > u32::MAX as usize {
            return Err(RdmaError::TooLarge {
                region,
                len: bytes.len(),
            });
        }
        let slot = &mut self.regions[usize::from(region)];
        if slot.is_some() {
            return Err(RdmaError::Registered(region));
        }
        *slot = Some(Region { bytes, access });
        Ok(())
    }

    /// Remove region `region`, returning its bytes.
    pub fn deregister(&mut self, region: u8) -> Option<Vec<u8>> {
        self.regions[usize::from(region)].take().map(|r| r.bytes)
    }

    /// The host's view of region `region`.
    pub fn memory(&self, region: u8) -> Option<&[u8]> {
        self.regions[usize::from(region)]
            .as_ref()
            .map(|r| &r.bytes[..])
    }

    /// The host's mutable view of region `region`.
    pub fn memory_mut(&mut self, region: u8) -> Option<&mut [u8]> {
        self.regions[usize::from(region)]
            .as_mut()
            .map(|r| &mut r.bytes[..])
    }

    /// A FETCH_ADD by the host itself on its own memory (no access check,
    /// not counted as a served request): the old value.
    pub fn local_fetch_add(&mut self, address: u64, operand: u64) -> Result<u64, Refusal> {
        let (region, off) = split(address);
        let r = self.regions[usize::from(region)]
            .as_mut()
            .ok_or(Refusal::Unregistered)?;
        fetch_add(&mut r.bytes, off, operand)
    }

    /// Serve one received PR: a request is performed against the
    /// registered memory and answered through `tx`; an answer is left to
    /// the requester ([`Served::Reply`]).
    pub fn serve(&mut self, now: Time, tx: &mut PrSender, pr: &PrRepr, payload: &[u8]) -> Served {
        if decode_reply(pr.tid, pr.idx).is_some() {
            return Served::Reply;
        }
        match self.perform(now, tx, pr, payload) {
            Ok(s) => s,
            Err(r) => {
                self.stats.refused.count(r);
                if self.cfg.nak {
                    let idx =
                        (r as u64) << 56 | u64::from(pr.tid as u8) << 48 | (pr.idx & ADDR_MASK);
                    let nak = PrRepr {
                        src: self.cfg.node,
                        tid: NAK,
                        idx,
                        req_id: pr.req_id,
                    };
                    tx.push(now, PrType::Read, pr.src, self.cfg.chunk, &nak, &[]);
                    self.stats.naks += 1;
                }
                Served::Refused(r)
            }
        }
    }

    fn region(&mut self, region: u8, need: fn(&Access) -> bool) -> Result<&mut Region, Refusal> {
        let r = self.regions[usize::from(region)]
            .as_mut()
            .ok_or(Refusal::Unregistered)?;
        if need(&r.access) {
            Ok(r)
        } else {
            Err(Refusal::NotPermitted)
        }
    }

    fn perform(
        &mut self,
        now: Time,
        tx: &mut PrSender,
        pr: &PrRepr,
        payload: &[u8],
    ) -> Result<Served, Refusal> {
        let (node, ch) = (self.cfg.node, self.cfg.chunk);
        let chunk = ch as usize;
        let (region, off) = split(pr.idx);
        let top = pr.idx >> ADDR_BITS;
        match pr.tid {
            READ_REQ => {
                if top == 0 || !payload.is_empty() {
                    return Err(Refusal::BadLength);
                }
                let r = self.region(region, |a| a.read)?;
                let end = (off as u64).checked_add(top * ch as u64);
                if end.is_none_or(|e| e > r.bytes.len() as u64) {
                    return Err(Refusal::OutOfBounds);
                }
                for c in 0..top as usize {
                    let o = off as usize + c * chunk;
                    let resp = PrRepr {
                        src: node,
                        tid: READ_RESP,
                        idx: addr(region, o as u32),
                        req_id: pr.req_id,
                    };
                    tx.push(
                        now,
                        PrType::Response,
                        pr.src,
                        ch,
                        &resp,
                        &r.bytes[o..o + chunk],
                    );
                }
                self.stats.reads += 1;
                self.stats.read_chunks += top;
                Ok(Served::Answered)
            }
            WRITE => {
                if top & !(ACK_REQ >> ADDR_BITS) != 0 || payload.len() != chunk {
                    return Err(Refusal::BadLength);
                }
                let r = self.region(region, |a| a.write)?;
                let o = off as usize;
                if o.checked_add(chunk).is_none_or(|e| e > r.bytes.len()) {
                    return Err(Refusal::OutOfBounds);
                }
                r.bytes[o..o + chunk].copy_from_slice(payload);
                self.stats.writes += 1;
                if pr.idx & ACK_REQ != 0 {
                    let ack = PrRepr {
                        src: node,
                        tid: WRITE_ACK,
                        idx: pr.idx & ADDR_MASK,
                        req_id: pr.req_id,
                    };
                    tx.push(now, PrType::Read, pr.src, ch, &ack, &[]);
                    self.stats.acks += 1;
                }
                Ok(Served::Wrote {
                    region,
                    offset: off,
                    len: ch,
                })
            }
            FADD_REQ => {
                if !payload.is_empty() {
                    return Err(Refusal::BadLength);
                }
                let r = self.region(region, |a| a.atomic)?;
                let old = fetch_add(&mut r.bytes, off, top)?;
                let resp = PrRepr {
                    src: node,
                    tid: FADD_RESP,
                    idx: old,
                    req_id: pr.req_id,
                };
                tx.push(now, PrType::Read, pr.src, ch, &resp, &[]);
                self.stats.fetch_adds += 1;
                Ok(Served::Answered)
            }
            _ => Err(Refusal::UnknownOpcode),
        }
    }
}

/// (region, offset) of an `idx`'s address.
pub const fn split(idx: u64) -> (u8, u32) {
    ((idx >> 32) as u8, idx as u32)
}

/// The 8-byte little-endian word at `off` += `operand` (wrapping); the old value.
fn fetch_add(bytes: &mut [u8], off: u32, operand: u64) -> Result<u64, Refusal> {
    if off % 8 != 0 {
        return Err(Refusal::Misaligned);
    }
    let o = off as usize;
    let w: &mut [u8] = bytes.get_mut(o..o + 8).ok_or(Refusal::OutOfBounds)?;
    let old = u64::from_le_bytes(w.try_into().map_err(|_| Refusal::OutOfBounds)?);
    w.copy_from_slice(&old.wrapping_add(operand).to_le_bytes());
    Ok(old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
    use netsparse_externs::wire::DEFAULT_MTU;
    use netsparse_externs::Outputs;

    const CH: u32 = 64;

    /// A PR as received: (type, destination, header, payload).
    type Got = (PrType, u32, PrRepr, Vec<u8>);

    /// Every PR `tx` sent, in order.
    fn sent(tx: &mut PrSender) -> Vec<Got> {
        tx.flush(Time::ZERO);
        let mut out = Outputs::new();
        tx.emit(Time::from_ms(10), &mut out);
        let mut dc = Deconcatenator::new(DeconcatConfig::default());
        let mut v = Vec::new();
        for (_, f) in out.iter() {
            let d = dc.frame(f).expect("well-formed");
            let (ty, dst) = (d.concat.pr_type, d.concat.dst);
            for p in d.prs {
                v.push((ty, dst, p.repr(), p.payload.to_vec()));
            }
        }
        v
    }

    fn responder(nak: bool) -> (Responder, PrSender) {
        let mut r = Responder::new(RdmaConfig {
            node: 1,
            chunk: CH,
            nak,
        })
        .unwrap();
        let mem: Vec<u8> = (0..3 * CH).map(|b| b as u8).collect();
        r.register(1, mem, Access::READ).unwrap();
        r.register(2, vec![0; 2 * CH as usize], Access::WRITE)
            .unwrap();
        r.register(3, vec![0; 16], Access::ATOMIC).unwrap();
        (r, PrSender::new(1, 400, DEFAULT_MTU).unwrap())
    }

    /// Requests from node 0's requester, served by `r`; its answers.
    fn exchange(
        r: &mut Responder,
        rtx: &mut PrSender,
        post: impl FnOnce(&Requester, &mut PrSender),
    ) -> (Vec<Served>, Vec<Got>) {
        let req = Requester { node: 0, chunk: CH };
        let mut tx = PrSender::new(0, 400, DEFAULT_MTU).unwrap();
        post(&req, &mut tx);
        let served = sent(&mut tx)
            .into_iter()
            .map(|(ty, dst, pr, payload)| {
                assert_eq!(dst, 1);
                // Requests travel as reads, WRITEs as responses.
                assert_eq!(ty == PrType::Response, pr.tid == WRITE);
                r.serve(Time::ZERO, rtx, &pr, &payload)
            })
            .collect();
        (served, sent(rtx))
    }

    #[test]
    fn read_returns_the_chunks_of_registered_memory() {
        let (mut r, mut rtx) = responder(true);
        let (served, got) = exchange(&mut r, &mut rtx, |q, tx| {
            q.read(tx, Time::ZERO, 1, addr(1, CH), 2, 77)
        });
        assert_eq!(served, vec![Served::Answered]);
        assert_eq!(got.len(), 2);
        for (c, (ty, dst, pr, payload)) in got.iter().enumerate() {
            let off = CH * (1 + c as u32);
            assert_eq!((*ty, *dst, pr.src, pr.req_id), (PrType::Response, 0, 1, 77));
            assert_eq!(
                decode_reply(pr.tid, pr.idx),
                Some(Reply::ReadChunk {
                    address: addr(1, off)
                })
            );
            let want: Vec<u8> = (off..off + CH).map(|b| b as u8).collect();
            assert_eq!(payload, &want);
        }
        let s = r.stats();
        assert_eq!((s.reads, s.read_chunks, s.refused.total()), (1, 2, 0));
    }

    #[test]
    fn write_stores_every_chunk_and_acknowledges_the_last() {
        let (mut r, mut rtx) = responder(true);
        // 1.5 chunks: the second is zero-padded.
        let data: Vec<u8> = (0..CH + CH / 2).map(|b| (b as u8) ^ 0x5a).collect();
        let (served, got) = exchange(&mut r, &mut rtx, |q, tx| {
            assert_eq!(q.write(tx, Time::ZERO, 1, addr(2, 0), &data, 9), 2);
        });
        assert_eq!(
            served,
            vec![
                Served::Wrote {
                    region: 2,
                    offset: 0,
                    len: CH
                },
                Served::Wrote {
                    region: 2,
                    offset: CH,
                    len: CH
                },
            ]
        );
        let mut want = data.clone();
        want.resize(2 * CH as usize, 0);
        assert_eq!(r.memory(2).unwrap(), &want[..]);
        // One acknowledgement, of the last chunk, to the requester.
        assert_eq!(got.len(), 1);
        let (ty, dst, pr, payload) = &got[0];
        assert_eq!(
            (*ty, *dst, pr.req_id, payload.len()),
            (PrType::Read, 0, 9, 0)
        );
        assert_eq!(
            decode_reply(pr.tid, pr.idx),
            Some(Reply::WriteAck {
                address: addr(2, CH)
            })
        );
        assert_eq!((r.stats().writes, r.stats().acks), (2, 1));
    }

    #[test]
    fn fetch_add_returns_the_old_value_and_adds() {
        let (mut r, mut rtx) = responder(true);
        let (_, got) = exchange(&mut r, &mut rtx, |q, tx| {
            q.fetch_add(tx, Time::ZERO, 1, addr(3, 8), 5, 1);
            q.fetch_add(tx, Time::ZERO, 1, addr(3, 8), 7, 2);
        });
        let olds: Vec<_> = got
            .iter()
            .map(|(_, _, pr, _)| (pr.req_id, decode_reply(pr.tid, pr.idx)))
            .collect();
        assert_eq!(
            olds,
            vec![
                (1, Some(Reply::FetchAdd { old: 0 })),
                (2, Some(Reply::FetchAdd { old: 5 }))
            ]
        );
        assert_eq!(r.local_fetch_add(addr(3, 8), 1), Ok(12));
        assert_eq!(r.memory(3).unwrap()[8], 13);
        assert_eq!(r.stats().fetch_adds, 2);
    }

    #[test]
    fn every_bad_request_is_counted_by_reason_nakd_and_changes_nothing() {
        let (mut r, mut rtx) = responder(true);
        let before: Vec<Vec<u8>> = (1..=3).map(|g| r.memory(g).unwrap().to_vec()).collect();
        let short = [1u8; CH as usize / 2];
        let full = [1u8; CH as usize];
        let cases: Vec<(u16, u64, &[u8], Refusal)> = vec![
            (
                FADD_REQ,
                (1 << ADDR_BITS) | addr(9, 0),
                &[],
                Refusal::Unregistered,
            ),
            (
                READ_REQ,
                (1 << ADDR_BITS) | addr(9, 0),
                &[],
                Refusal::Unregistered,
            ),
            (
                READ_REQ,
                (3 << ADDR_BITS) | addr(1, CH),
                &[],
                Refusal::OutOfBounds,
            ),
            (WRITE, addr(2, 2 * CH - 8), &full, Refusal::OutOfBounds),
            (
                FADD_REQ,
                (1 << ADDR_BITS) | addr(3, 16),
                &[],
                Refusal::OutOfBounds,
            ),
            (READ_REQ, addr(1, 0), &[], Refusal::BadLength),
            (WRITE, addr(2, 0), &short, Refusal::BadLength),
            (
                FADD_REQ,
                (1 << ADDR_BITS) | addr(3, 4),
                &[],
                Refusal::Misaligned,
            ),
            (WRITE, addr(1, 0), &full, Refusal::NotPermitted),
            (
                READ_REQ,
                (1 << ADDR_BITS) | addr(3, 0),
                &[],
                Refusal::NotPermitted,
            ),
            (
                FADD_REQ,
                (1 << ADDR_BITS) | addr(1, 0),
                &[],
                Refusal::NotPermitted,
            ),
            (0x48, addr(1, 0), &[], Refusal::UnknownOpcode),
            (0x01, addr(1, 0), &[], Refusal::UnknownOpcode),
        ];
        for (i, &(tid, idx, payload, why)) in cases.iter().enumerate() {
            let pr = PrRepr {
                src: 0,
                tid,
                idx,
                req_id: i as u32,
            };
            assert_eq!(
                r.serve(Time::ZERO, &mut rtx, &pr, payload),
                Served::Refused(why),
                "case {i}"
            );
        }
        let s = r.stats();
        let want = Refusals {
            unregistered: 2,
            out_of_bounds: 3,
            bad_length: 2,
            misaligned: 1,
            not_permitted: 3,
            unknown_opcode: 2,
        };
        assert_eq!(s.refused, want);
        assert_eq!((s.reads, s.writes, s.fetch_adds, s.naks), (0, 0, 0, 13));
        for (g, b) in (1..=3).zip(&before) {
            assert_eq!(r.memory(g).unwrap(), &b[..], "region {g} changed");
        }
        // One NAK per case, to the requester, naming the reason and verb.
        let naks = sent(&mut rtx);
        assert_eq!(naks.len(), cases.len());
        for ((_, dst, pr, _), (i, &(tid, idx, _, why))) in naks.iter().zip(cases.iter().enumerate())
        {
            assert_eq!((*dst, pr.req_id), (0, i as u32));
            assert_eq!(
                decode_reply(pr.tid, pr.idx),
                Some(Reply::Nak {
                    reason: Some(why),
                    verb: tid as u8,
                    address: idx & ADDR_MASK
                })
            );
        }
    }

    #[test]
    fn without_naks_refused_requests_are_dropped_silently() {
        let (mut r, mut rtx) = responder(false);
        let pr = PrRepr {
            src: 0,
            tid: FADD_REQ,
            idx: (1 << ADDR_BITS) | addr(7, 0),
            req_id: 1,
        };
        assert_eq!(
            r.serve(Time::ZERO, &mut rtx, &pr, &[]),
            Served::Refused(Refusal::Unregistered)
        );
        assert!(sent(&mut rtx).is_empty());
        assert_eq!((r.stats().refused.unregistered, r.stats().naks), (1, 0));
        // Answers are the requester's, not refused.
        let reply = PrRepr {
            tid: FADD_RESP,
            ..pr
        };
        assert_eq!(r.serve(Time::ZERO, &mut rtx, &reply, &[]), Served::Reply);
        assert_eq!(r.stats().refused.total(), 1);
    }

    #[test]
    fn registrations_are_checked() {
        let (mut r, _) = responder(true);
        assert_eq!(
            r.register(0, vec![], Access::READ),
            Err(RdmaError::ReservedRegion)
        );
        assert_eq!(
            r.register(1, vec![], Access::READ),
            Err(RdmaError::Registered(1))
        );
        assert_eq!(r.deregister(3).map(|b| b.len()), Some(16));
        assert!(r.memory(3).is_none());
        assert_eq!(r.local_fetch_add(addr(3, 0), 1), Err(Refusal::Unregistered));
        let bad = RdmaConfig {
            node: 0,
            chunk: 0,
            nak: true,
        };
        assert_eq!(Responder::new(bad).unwrap_err(), RdmaError::BadChunk(0));
    }
}
