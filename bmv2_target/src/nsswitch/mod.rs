//! The NetSparse multi-pipe switch (§6.2.1, Figure 8): runs
//! `NetSparseSwitch` artifacts.
//!
//! ```text
//!  port p ─▶ ingress pipe p/(P/G) ─▶ crossbar 1 ─▶ middle pipe m ─▶ crossbar 2 ─▶ egress pipe ─▶ port
//! ```
//!
//! For each frame arriving on port `p` at `now`:
//!
//! 1. **Ingress pipe** `p / (P/G)`: every header invalid and every slot zero;
//!    `ns_switch_md_t` = {ingress_port `p`, egress_spec 0, egress_port 0,
//!    drop 0, packet_length, parser_error}; the ingress parser (a parser
//!    error does not drop: the packet continues with `parser_error` set, as
//!    in the v1model switch), the ingress control, then — unless `md.drop`
//!    or `egress_spec` is not a port (both counted) — the ingress deparser.
//! 2. **Crossbar 1** classifies the deparsed bytes with the externs wire
//!    parser ([`netsparse_externs::wire::Frame`]): a NetSparse *response*
//!    goes to the middle pipe of its ingress pipe, a NetSparse *read* to the
//!    middle pipe of its egress pipe (`egress_spec`'s). A frame that is UDP
//!    to port 4791 but malformed above UDP also goes to the middle pipe of
//!    its egress pipe, whose Deconcatenator counts and drops it. Anything
//!    else passes straight to its egress pipe, untouched (counted as
//!    passthrough by the middle pipe of that index).
//! 3. **Middle pipe**: the Deconcatenator validates the packet (malformed:
//!    counted by kind, logged at WARN, dropped — the switch keeps forwarding
//!    everything else); with a Property Cache, a property length other than
//!    the cache mode is counted and dropped too. Then `ns_pr_md_t` = {the
//!    packet's pr_type, dst, prop_len, ingress_port, egress_port =
//!    egress_spec, drop 0} and the per-packet part of the middle control
//!    runs (`md.drop` drops the packet). For each PR in order: `pr` and `md`
//!    are loaded (md from the per-packet result, drop 0) and the per-PR part
//!    runs. `Lookup` probes the pipe's cache with the current `pr.idx`; a hit
//!    makes the cached property the PR's payload. `Insert` stores the PR's
//!    payload (the response's own, or the one a hit attached). After the
//!    per-PR part, unless `md.drop`, the PR is checked — a response needs a
//!    payload, a read must have none, the type must be read or response, the
//!    egress port must exist, `prop_len` must not change, `dst` must be
//!    addressable — and a failing PR is dropped and counted as a program
//!    error of the pipe. (When the per-PR part is the compiler's plain
//!    copy-in / control / copy-out of one applied control, the copies are
//!    elided and `pr`/`md` are loaded into the control's locals directly:
//!    same results, less interpretation; see `elide.rs`.) The PR is then
//!    concatenated, keyed by (type, dst,
//!    egress port): unchanged PRs are queued as they arrived
//!    (`Concatenator::push_raw`), changed ones re-encoded.
//! 4. **Cache pipeline**: with a Property Cache in the program, every PR
//!    enters the Concatenator `latency` after its packet (the pipelined
//!    shift queue of §6.2.1). The delay is the same for every PR, so it is
//!    modelled exactly as a shift of the Concatenator's clock: PRs are
//!    queued at their arrival time, the Concatenator's timers are serviced
//!    `latency` late, and every packet it builds leaves `latency` after the
//!    Concatenator's flush time (a per-pipe FIFO of built packets serviced
//!    by [`Datapath::on_timer`]/[`Datapath::next_deadline`]).
//! 5. **Concatenator**: a Concatenation Queue leaves when full (MTU) or when
//!    its first PR has waited DelayCycles; it becomes one frame built by
//!    [`netsparse_externs::wire`] from the switch's own addresses (config) to
//!    the destination node's (addressing convention), BTH PSN counting per
//!    middle pipe.
//! 6. **Crossbar 2** sends it to the egress pipe of the queue's port.
//! 7. **Egress pipe**: a fresh state, `ns_switch_md_t` = {ingress_port (the
//!    arrival port, or [`ORIGINATED_PORT`] for packets the switch built),
//!    egress_spec = egress_port = the port, drop 0, packet_length}, the
//!    egress parser, control (`md.drop` drops, counted) and deparser; the
//!    bytes leave on the port.
//!
//! Outputs are emitted at the `now` of the call that produced them; a pcap
//! driver calls `on_timer` at every `next_deadline`, so a queue leaves at
//! exactly its deadline (plus the cache latency), and flushes everything
//! at the end of input. All pipes run the same program with one set of
//! table entries (the control plane programs every pipe alike); stateful
//! externs (registers, counters, meters) are shared by the pipes.
//!
//! No allocation per packet or per PR in steady state: packet states, the
//! deparse buffer, the pool of built-packet buffers and the units reuse
//! their memory.

pub mod config;
mod elide;
pub mod stats;
pub mod testing;

use std::collections::VecDeque;

use netsparse_externs::artifact::{
    Arch, Artifact, FieldId, FieldKind, NsSwitchMetadata, Package, Prim,
};
use netsparse_externs::cache::{CacheCapacity, CacheConfig, CacheMode, PropertyCache};
use netsparse_externs::concat::{ConcatStats, Concatenator, CqKey, Flushed};
use netsparse_externs::deconcat::{DeconcatConfig, DeconcatStats, Deconcatenator};
use netsparse_externs::wire::{
    pr_capacity, DeviceAddr, Frame, FrameHeader, Layer, PrRepr, PrType, WireError, MAX_NODE_ID,
    PR_HEADER_LEN,
};
use netsparse_externs::{Datapath, Outputs, Time};
use thiserror::Error;

pub use config::{NsCacheConfig, NsConfig, NsConfigError};
pub use stats::{
    CacheCounters, FlushCounters, MalformedCounters, NsStats, PipeStats, ProgramErrors,
};

use netsparse_engine::exec::ParseEnd;
use netsparse_engine::program::{BlockId, Program, Slot, TargetCall, TargetPrims, TargetResult};
use netsparse_engine::{ControlPlane, Engine, LoadError, PacketState};

/// `md.ingress_port` in the egress pipe for packets the switch built from a
/// Concatenation Queue (their PRs may come from several ports).
pub const ORIGINATED_PORT: u32 = 0xFFFF;

/// PRs ahead of the current one whose cache set is prefetched.
const PREFETCH_SET: usize = 8;
/// PRs ahead of the current read whose cached property is prefetched.
const PREFETCH_LINE: usize = 4;
/// Offset of the idx in a PR header.
const IDX_OFFSET: usize = 6;

/// Why a NetSparse switch could not be built.
#[derive(Debug, Error)]
pub enum NsSwitchError {
    /// The artifact cannot run here.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A bad shape.
    #[error("switch configuration: {0}")]
    Config(#[from] NsConfigError),
}

/// Slots of one pipe's `ns_switch_md_t`.
#[derive(Clone, Copy, Debug)]
struct MdSlots {
    ingress_port: Slot,
    egress_spec: Slot,
    egress_port: Slot,
    drop: Slot,
    packet_length: Slot,
    parser_error: Slot,
}

impl MdSlots {
    fn resolve(p: &Program, m: &NsSwitchMetadata) -> Result<MdSlots, LoadError> {
        Ok(MdSlots {
            ingress_port: p.slot(m.ingress_port)?,
            egress_spec: p.slot(m.egress_spec)?,
            egress_port: p.slot(m.egress_port)?,
            drop: p.slot(m.drop)?,
            packet_length: p.slot(m.packet_length)?,
            parser_error: p.slot(m.parser_error)?,
        })
    }
}

/// The middle pipe's `pr` and `md` slots, as indexes into the state's
/// `u64` array (all are at most 64 bits; values written fit their widths).
#[derive(Clone, Copy, Debug)]
struct PrSlots {
    src: usize,
    tid: usize,
    idx: usize,
    req_id: usize,
    pr_type: usize,
    dst: usize,
    prop_len: usize,
    ingress_port: usize,
    egress_port: usize,
    drop: usize,
}

/// Parser and control ids of the package, and the middle blocks.
#[derive(Clone, Copy, Debug)]
struct Blocks {
    ingress_parser: u32,
    ingress: u32,
    ingress_deparser: u32,
    egress_parser: u32,
    egress: u32,
    egress_deparser: u32,
    per_packet: Option<BlockId>,
    per_pr: BlockId,
}

/// Counters a pipe keeps itself (the units keep theirs).
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    packets_in: u64,
    bytes_in: u64,
    packets_out: u64,
    bytes_out: u64,
    rx_malformed: u64,
    ingress_parser_errors: u64,
    ingress_drops: u64,
    bad_egress_spec: u64,
    netsparse_packets: u64,
    passthrough_packets: u64,
    packets_dropped: u64,
    prs_in: u64,
    prs_dropped: u64,
    cache_mode_mismatch: u64,
    errors: ProgramErrors,
    egress_parser_errors: u64,
    egress_drops: u64,
}

/// Counters of the packets a pipe builds (kept apart from [`Counters`]:
/// the Concatenator's flush callback updates them while the PR loop runs).
#[derive(Clone, Copy, Debug, Default)]
struct BuildCounters {
    prs_out: u64,
    packets: u64,
    unbuildable_prs: u64,
}

/// A packet built from a Concatenation Queue, waiting to cross crossbar 2.
#[derive(Debug)]
struct Built {
    /// When it leaves the middle pipe (flush time + cache latency).
    due: Time,
    port: u32,
    prs: u32,
    frame: Vec<u8>,
}

/// One middle pipe's units and its queue of built packets.
#[derive(Debug)]
struct Pipe {
    deconcat: Deconcatenator,
    cache: PropertyCache,
    concat: Concatenator,
    /// Built packets in flush order (which is due order).
    built: VecDeque<Built>,
    /// Spare frame buffers.
    pool: Vec<Vec<u8>>,
    psn: u32,
    c: Counters,
    bc: BuildCounters,
    /// Unit counters at the last `reset_stats` (the units cannot be reset).
    base_deconcat: DeconcatStats,
    base_concat: ConcatStats,
}

/// What the flush callback needs to build packets.
#[derive(Clone, Copy, Debug)]
struct Origin {
    id: u32,
    mac: [u8; 6],
    ipv4: [u8; 4],
    /// Cache latency: a packet leaves this long after its flush.
    latency: Time,
    trace: bool,
}

/// Build the packet of a flushed Concatenation Queue into a pooled buffer
/// and queue it (due at the flush time plus the cache latency).
fn build(
    f: Flushed<'_>,
    o: &Origin,
    psn: &mut u32,
    bc: &mut BuildCounters,
    pool: &mut Vec<Vec<u8>>,
    built: &mut VecDeque<Built>,
) {
    let header = FrameHeader::netsparse(DeviceAddr::Switch(o.id), f.key.dst, *psn).map(|mut h| {
        h.eth_src = o.mac;
        h.ip_src = o.ipv4;
        h
    });
    let mut frame = pool.pop().unwrap_or_default();
    frame.clear();
    match header.and_then(|h| f.write_frame_with(&mut frame, &h)) {
        Ok(_) => {
            *psn = psn.wrapping_add(1);
            bc.prs_out += u64::from(f.num_prs);
            bc.packets += 1;
            if o.trace {
                tracing::info!(
                    "queue ({:?}, dst {}, port {}) left ({:?}) with {} PRs",
                    f.key.pr_type,
                    f.key.dst,
                    f.key.port,
                    f.reason,
                    f.num_prs
                );
            }
            built.push_back(Built {
                due: f.at + o.latency,
                port: f.key.port,
                prs: f.num_prs,
                frame,
            });
        }
        Err(e) => {
            // Unreachable: destinations are checked per PR and every PR fits.
            bc.unbuildable_prs += u64::from(f.num_prs);
            tracing::warn!("cannot build the packet of queue {:?}: {e}", f.key);
            pool.push(frame);
        }
    }
}

/// Where the PR's payload comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    /// A read: none.
    None,
    /// The response's own property.
    Own,
    /// The property a cache hit attached.
    Cached,
}

/// The target primitives of the per-PR part: the pipe's Property Cache.
struct PrPrims<'a> {
    cache: &'a mut PropertyCache,
    now: Time,
    idx: usize,
    own: &'a [u8],
    payload: Payload,
    hit: &'a mut Vec<u8>,
    errors: &'a mut ProgramErrors,
}

impl TargetPrims for PrPrims<'_> {
    fn call(&mut self, st: &mut PacketState, call: TargetCall<'_>) -> TargetResult {
        match call.prim {
            Prim::CacheLookup { .. } => {
                let idx = st.n[self.idx];
                match self.cache.lookup(self.now, idx).hit {
                    Some(p) => {
                        copy_property(self.hit, p);
                        self.payload = Payload::Cached;
                        TargetResult::Value(1)
                    }
                    None => TargetResult::Value(0),
                }
            }
            Prim::CacheInsert { .. } => {
                let idx = st.n[self.idx];
                let data: &[u8] = match self.payload {
                    Payload::Own => self.own,
                    Payload::Cached => self.hit,
                    Payload::None => {
                        self.errors.insert_without_payload += 1;
                        return TargetResult::Done;
                    }
                };
                // A wrong length is counted by the cache (`wrong_length`);
                // the switch checked the packet's length against the mode.
                let _ = self.cache.insert(self.now, idx, data);
                TargetResult::Done
            }
            _ => {
                self.errors.unsupported += 1;
                TargetResult::Value(0)
            }
        }
    }
}

/// `dst = src` for a property (a multiple of 16 bytes, as every cache mode
/// is), in 16-byte moves the compiler inlines: no library call per hit.
#[inline]
fn copy_property(dst: &mut Vec<u8>, src: &[u8]) {
    dst.resize(src.len(), 0);
    let mut d = dst.chunks_exact_mut(16);
    let mut s = src.chunks_exact(16);
    for (d, s) in d.by_ref().zip(s.by_ref()) {
        let w: [u8; 16] = s.try_into().unwrap_or([0; 16]);
        d.copy_from_slice(&w);
    }
    d.into_remainder().copy_from_slice(s.remainder());
}

/// The target primitives outside the per-PR part: none (the compiler
/// rejects cache calls there); anything that gets here is counted.
struct NoPrims<'a> {
    errors: &'a mut ProgramErrors,
}

impl TargetPrims for NoPrims<'_> {
    fn call(&mut self, _st: &mut PacketState, _call: TargetCall<'_>) -> TargetResult {
        self.errors.unsupported += 1;
        TargetResult::Value(0)
    }
}

/// Crossbar 1's view of a deparsed ingress packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Read,
    Response,
    /// UDP to 4791 but malformed above UDP: the middle pipe drops it.
    Malformed,
    /// Not NetSparse: straight to the egress pipe.
    Other,
}

fn classify(bytes: &[u8]) -> Class {
    match Frame::parse(bytes) {
        Ok(f) => match f.concat.pr_type {
            PrType::Read => Class::Read,
            PrType::Response => Class::Response,
        },
        Err(e) if e.is_foreign() => Class::Other,
        // Errors found before the UDP destination port was checked: NetSparse
        // only if the bytes say UDP to 4791.
        Err(
            WireError::Truncated {
                layer: Layer::Ethernet | Layer::Ipv4 | Layer::Udp,
                ..
            }
            | WireError::BadIpv4Header { .. }
            | WireError::BadIpv4TotalLength { .. }
            | WireError::Fragmented { .. },
        ) if !to_rocev2_port(bytes) => Class::Other,
        Err(_) => Class::Malformed,
    }
}

/// Whether `bytes` is Ethernet / IPv4 / UDP to port 4791 as far as its
/// headers go (lengths and checksums unchecked).
fn to_rocev2_port(bytes: &[u8]) -> bool {
    let ethertype = bytes.get(12..14) == Some(&[0x08, 0x00][..]);
    let Some(&vihl) = bytes.get(14) else {
        return false;
    };
    let ihl = usize::from(vihl & 0x0f) * 4;
    let udp = bytes.get(14 + 9) == Some(&17);
    let port = bytes.get(14 + ihl + 2..14 + ihl + 4).is_some_and(|p| {
        u16::from_be_bytes([p[0], p[1]]) == netsparse_externs::wire::ROCEV2_UDP_PORT
    });
    ethertype && vihl >> 4 == 4 && ihl >= 20 && udp && port
}

/// The NetSparse multi-pipe switch.
pub struct NsSwitch {
    prog: Program,
    b: Blocks,
    ig: MdSlots,
    eg: MdSlots,
    /// The package's `pr`/`md` slots (the per-packet part's).
    pp: PrSlots,
    /// The slots the per-PR part reads and writes: the package's, or the
    /// control's locals when its copy-in/copy-out is elided.
    pr: PrSlots,
    /// Header ids of the middle pipe's `pr` and of its local copy (kept
    /// valid).
    pr_headers: [Option<usize>; 2],
    /// The program uses a Property Cache.
    has_cache: bool,
    origin: Origin,
    cfg: NsConfig,
    pipes: Vec<Pipe>,
    ist: PacketState,
    mst: PacketState,
    est: PacketState,
    ibuf: Vec<u8>,
    hit: Vec<u8>,
    bad_port: u64,
    packet_id: u64,
}

impl std::fmt::Debug for NsSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NsSwitch")
            .field("cfg", &self.cfg)
            .field("has_cache", &self.has_cache)
            .finish_non_exhaustive()
    }
}

impl NsSwitch {
    /// Load a `NetSparseSwitch` artifact (with its const entries) into a
    /// switch of shape `cfg`.
    pub fn new(artifact: &Artifact, cfg: NsConfig) -> Result<NsSwitch, NsSwitchError> {
        cfg.validate()?;
        let place = || format!("program {}", artifact.program);
        let ns = match (&artifact.arch, &artifact.package) {
            (Arch::NetSparseSwitch, Package::NetSparseSwitch(ns)) => ns,
            (arch, _) => {
                return Err(LoadError::Unsupported {
                    what: format!(
                        "architecture {arch:?}: the NetSparse switch runs NetSparseSwitch programs (v1model programs run on the v1model switch)"
                    ),
                    place: place(),
                }
                .into())
            }
        };
        let m = &ns.middle;
        let pr_header = match artifact.fields.get(m.pr.src.index()).map(|f| f.kind) {
            Some(FieldKind::Header(h)) => Some(h),
            _ => None,
        };
        let elided = pr_header.and_then(|h| elide::elide(artifact, m, h));
        let per_pr = elided.as_ref().map_or(m.per_pr.as_slice(), |e| e.body);
        let local = |f| elided.as_ref().map_or(f, |e| e.local(f));
        let blocks: [(&str, &[_]); 2] = [
            (m.name.as_str(), m.per_packet.as_slice()),
            (m.name.as_str(), per_pr),
        ];
        let mut prog = Program::load(artifact, &blocks, cfg.seed)?;
        prog.set_trace(cfg.trace);
        let ig = MdSlots::resolve(&prog, &ns.ingress_metadata)?;
        let eg = MdSlots::resolve(&prog, &ns.egress_metadata)?;
        let narrow = |what: &str, f, min: u16| -> Result<usize, LoadError> {
            let s = prog.slot(f)?;
            match s.narrow_index() {
                Some(i) if s.width() >= min => Ok(i),
                _ => Err(LoadError::Invalid {
                    detail: format!("{what} is {} bits, expected {min}", s.width()),
                    place: place(),
                }),
            }
        };
        let slots = |f: &dyn Fn(FieldId) -> FieldId| -> Result<PrSlots, LoadError> {
            Ok(PrSlots {
                src: narrow("pr.src", f(m.pr.src), 32)?,
                tid: narrow("pr.tid", f(m.pr.tid), 16)?,
                idx: narrow("pr.idx", f(m.pr.idx), 64)?,
                req_id: narrow("pr.req_id", f(m.pr.req_id), 32)?,
                pr_type: narrow("md.pr_type", f(m.pr_meta.pr_type), 16)?,
                dst: narrow("md.dst", f(m.pr_meta.dst), 32)?,
                prop_len: narrow("md.prop_len", f(m.pr_meta.prop_len), 32)?,
                ingress_port: narrow("md.ingress_port", f(m.pr_meta.ingress_port), 9)?,
                egress_port: narrow("md.egress_port", f(m.pr_meta.egress_port), 9)?,
                drop: narrow("md.drop", f(m.pr_meta.drop), 1)?,
            })
        };
        let pp = slots(&|f| f)?;
        let pr = slots(&local)?;
        let pr_headers = [
            pr_header.map(|h| h.index()),
            elided.as_ref().map(|e| e.header.index()),
        ];
        let parsers = artifact.parsers.len();
        let controls = artifact.controls.len();
        for (what, ok) in [
            ("ingress_parser", ns.ingress_parser.index() < parsers),
            ("egress_parser", ns.egress_parser.index() < parsers),
            ("ingress", ns.ingress.index() < controls),
            ("ingress_deparser", ns.ingress_deparser.index() < controls),
            ("egress", ns.egress.index() < controls),
            ("egress_deparser", ns.egress_deparser.index() < controls),
        ] {
            if !ok {
                return Err(LoadError::Invalid {
                    detail: format!("{what} id out of range"),
                    place: place(),
                }
                .into());
            }
        }
        let b = Blocks {
            ingress_parser: ns.ingress_parser.0,
            ingress: ns.ingress.0,
            ingress_deparser: ns.ingress_deparser.0,
            egress_parser: ns.egress_parser.0,
            egress: ns.egress.0,
            egress_deparser: ns.egress_deparser.0,
            per_packet: (!m.per_packet.is_empty()).then(|| prog.block(0)),
            per_pr: prog.block(1),
        };
        let has_cache = m.cache.is_some();
        let mut pipes = Vec::with_capacity(cfg.pipes as usize);
        for _ in 0..cfg.pipes {
            pipes.push(Self::new_pipe(&cfg, has_cache)?);
        }
        let origin = Origin {
            id: cfg.switch_id,
            mac: cfg.mac,
            ipv4: cfg.ipv4,
            latency: if has_cache {
                cfg.cache_latency()
            } else {
                Time::ZERO
            },
            trace: cfg.trace,
        };
        Ok(NsSwitch {
            ist: prog.new_state(),
            est: prog.new_state(),
            mst: prog.new_state(),
            prog,
            b,
            ig,
            eg,
            pp,
            pr,
            pr_headers,
            has_cache,
            origin,
            pipes,
            ibuf: Vec::with_capacity(cfg.max_frame),
            hit: Vec::with_capacity(cfg.cache.mode.bytes() as usize),
            bad_port: 0,
            packet_id: 0,
            cfg,
        })
    }

    fn new_pipe(cfg: &NsConfig, has_cache: bool) -> Result<Pipe, NsSwitchError> {
        let cache_cfg = if has_cache {
            cfg.pipe_cache()
        } else {
            CacheConfig {
                capacity: CacheCapacity::Disabled,
                ..cfg.pipe_cache()
            }
        };
        let cache =
            PropertyCache::new(cache_cfg, cfg.cache.mode).map_err(|e| NsConfigError::Invalid {
                key: "cache",
                detail: e.to_string(),
            })?;
        let concat = Concatenator::new(cfg.concat()).map_err(|e| NsConfigError::Invalid {
            key: "mtu",
            detail: e.to_string(),
        })?;
        let deconcat = Deconcatenator::new(DeconcatConfig {
            max_prop_len: (pr_capacity(cfg.mtu).saturating_sub(PR_HEADER_LEN)) as u32,
            verify_ipv4_checksum: true,
        });
        Ok(Pipe {
            deconcat,
            cache,
            concat,
            built: VecDeque::new(),
            pool: Vec::new(),
            psn: 0,
            c: Counters::default(),
            bc: BuildCounters::default(),
            base_deconcat: DeconcatStats::default(),
            base_concat: ConcatStats::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &NsConfig {
        &self.cfg
    }

    /// Whether the per-PR part runs without its copy-in/copy-out (the
    /// program has the plain shape the compiler emits and nothing else
    /// observes the package's `pr`/`md` slots; see the `elide` module).
    pub fn per_pr_copies_elided(&self) -> bool {
        self.pr_headers[1].is_some()
    }

    /// Whether the program uses the Property Cache.
    pub fn has_cache(&self) -> bool {
        self.has_cache
    }

    /// Turn per-packet tracing on or off.
    pub fn set_trace(&mut self, on: bool) {
        self.cfg.trace = on;
        self.origin.trace = on;
        self.prog.set_trace(on);
    }

    /// Control plane: invalidate every middle pipe's Property Cache (before
    /// a kernel).
    pub fn cache_invalidate(&mut self) {
        for p in &mut self.pipes {
            p.cache.invalidate_all();
        }
    }

    /// Control plane: configure the property length (cache mode, 16..=512
    /// bytes, a power of two) of every middle pipe; invalidates the caches.
    pub fn set_cache_mode(&mut self, bytes: u32) -> Result<(), NsConfigError> {
        let mode = CacheMode::new(bytes).map_err(|_| NsConfigError::Invalid {
            key: "cache.mode",
            detail: format!("{bytes} bytes is not a power of two in 16..=512"),
        })?;
        let mut cfg = self.cfg.clone();
        cfg.cache.mode = mode;
        cfg.validate()?;
        self.cfg = cfg;
        for p in &mut self.pipes {
            p.cache.configure(mode);
        }
        Ok(())
    }

    /// The cached property of `idx` in middle pipe `pipe`, without touching
    /// LRU state or counters (for tests and tools).
    pub fn cache_peek(&self, pipe: usize, idx: u64) -> Option<&[u8]> {
        self.pipes.get(pipe).and_then(|p| p.cache.peek(idx))
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> NsStats {
        let mut out = NsStats {
            pipes: Vec::with_capacity(self.pipes.len()),
            total: PipeStats {
                pipe: self.pipes.len() as u32,
                ..PipeStats::default()
            },
            bad_port: self.bad_port,
            engine: self.prog.stats(),
        };
        for (i, p) in self.pipes.iter().enumerate() {
            let c = &p.c;
            let d = p.deconcat.stats();
            let bd = &p.base_deconcat;
            let q = p.concat.stats();
            let bq = &p.base_concat;
            let k = p.cache.stats();
            let mut errors = c.errors;
            errors.unaddressable += p.bc.unbuildable_prs;
            let s = PipeStats {
                pipe: i as u32,
                packets_in: c.packets_in,
                bytes_in: c.bytes_in,
                packets_out: c.packets_out,
                bytes_out: c.bytes_out,
                rx_malformed: c.rx_malformed,
                ingress_parser_errors: c.ingress_parser_errors,
                ingress_drops: c.ingress_drops,
                bad_egress_spec: c.bad_egress_spec,
                netsparse_packets: c.netsparse_packets,
                passthrough_packets: c.passthrough_packets,
                packets_dropped: c.packets_dropped,
                prs_in: c.prs_in,
                prs_out: p.bc.prs_out,
                prs_dropped: c.prs_dropped,
                concat_packets: p.bc.packets,
                prs_per_packet: stats::ratio(p.bc.prs_out, p.bc.packets),
                prs_pending: p.concat.pending_prs()
                    + p.built.iter().map(|b| u64::from(b.prs)).sum::<u64>(),
                cache: CacheCounters {
                    lookups: k.lookups,
                    hits: k.hits,
                    misses: k.misses,
                    inserts: k.inserts,
                    evictions: k.evictions,
                    present: k.present,
                    invalidations: k.invalidations,
                    occupancy: p.cache.occupancy(),
                },
                flushes: FlushCounters {
                    full: q.flushes_full - bq.flushes_full,
                    expired: q.flushes_expired - bq.flushes_expired,
                    forced: q.flushes_forced - bq.flushes_forced,
                    prop_len_change: q.flushes_prop_len - bq.flushes_prop_len,
                    evicted: (q.queue_limit + q.pool_exhausted)
                        - (bq.queue_limit + bq.pool_exhausted),
                },
                malformed: MalformedCounters {
                    truncated: d.truncated - bd.truncated,
                    bad_ip: d.bad_ip - bd.bad_ip,
                    unknown_type: d.unknown_type - bd.unknown_type,
                    count_overrun: d.count_overrun - bd.count_overrun,
                    trailing_bytes: d.trailing_bytes - bd.trailing_bytes,
                    read_with_payload: d.read_with_payload - bd.read_with_payload,
                    bad_prop_len: d.bad_prop_len - bd.bad_prop_len,
                    empty: d.empty - bd.empty,
                    cache_mode_mismatch: c.cache_mode_mismatch,
                },
                program_errors: errors,
                egress_parser_errors: c.egress_parser_errors,
                egress_drops: c.egress_drops,
            };
            out.total.add(&s);
            out.pipes.push(s);
        }
        out
    }

    /// Zero every counter (not table entries, cache contents or queues).
    pub fn reset_stats(&mut self) {
        self.bad_port = 0;
        for p in &mut self.pipes {
            p.c = Counters::default();
            p.bc = BuildCounters::default();
            p.cache.reset_stats();
            p.base_deconcat = *p.deconcat.stats();
            p.base_concat = *p.concat.stats();
        }
    }

    /// PRs waiting in Concatenation Queues and built packets.
    pub fn pending_prs(&self) -> u64 {
        self.pipes
            .iter()
            .map(|p| p.concat.pending_prs() + p.built.iter().map(|b| u64::from(b.prs)).sum::<u64>())
            .sum()
    }

    /// Flush every Concatenation Queue now (reason `forced`) and send every
    /// waiting packet to `out` at `now`, e.g. at the end of a simulation.
    pub fn flush_all(&mut self, now: Time, out: &mut Outputs) {
        let o = self.origin;
        for m in 0..self.pipes.len() {
            let Pipe {
                concat,
                built,
                pool,
                psn,
                bc,
                ..
            } = &mut self.pipes[m];
            concat.flush_all(|f| build(f, &o, psn, bc, pool, built));
            self.release(m, Time::MAX, now, out);
        }
    }

    fn dump(&self, dir: &str, port: u32, bytes: &[u8]) {
        let n = bytes.len().min(self.cfg.dump_bytes);
        let hex: String = bytes[..n].iter().map(|b| format!("{b:02x}")).collect();
        tracing::info!("{dir} port {port} ({} bytes): {hex}", bytes.len());
    }

    /// Send the built packets of pipe `m` due by `due` through crossbar 2
    /// and their egress pipes, at `now`.
    fn release(&mut self, m: usize, due: Time, now: Time, out: &mut Outputs) {
        while self.pipes[m].built.front().is_some_and(|b| b.due <= due) {
            let Some(mut b) = self.pipes[m].built.pop_front() else {
                break;
            };
            if self.cfg.trace {
                tracing::info!(
                    "crossbar 2: built packet ({} bytes) to port {}",
                    b.frame.len(),
                    b.port
                );
            }
            std::mem::swap(&mut self.est.frame, &mut b.frame);
            self.egress(now, b.port, ORIGINATED_PORT, out);
            std::mem::swap(&mut self.est.frame, &mut b.frame);
            self.pipes[m].pool.push(b.frame);
        }
    }

    /// Service every pipe's timers at `now`.
    fn service(&mut self, now: Time, out: &mut Outputs) {
        let o = self.origin;
        let shifted = now.saturating_sub(o.latency);
        for m in 0..self.pipes.len() {
            let Pipe {
                concat,
                built,
                pool,
                psn,
                bc,
                ..
            } = &mut self.pipes[m];
            if now >= o.latency && concat.next_deadline().is_some_and(|d| d <= shifted) {
                concat.on_timer(shifted, |f| build(f, &o, psn, bc, pool, built));
            }
            self.release(m, now, now, out);
        }
    }

    /// Run the egress pipe of `port` over `self.est.frame`.
    fn egress(&mut self, now: Time, port: u32, in_port: u32, out: &mut Outputs) {
        let g = self.cfg.pipe_of(port) as usize;
        let eg = self.eg;
        let b = self.b;
        let st = &mut self.est;
        st.reset();
        let len = st.frame.len() as u128;
        st.set(eg.ingress_port, u128::from(in_port));
        st.set(eg.egress_spec, u128::from(port));
        st.set(eg.egress_port, u128::from(port));
        st.set(eg.packet_length, len);
        self.prog.set_now(now);
        let engine = self.prog.engine_mut();
        if let ParseEnd::Reject(e) = engine.parse(st, b.egress_parser) {
            if let Some(e) = e {
                st.set(eg.parser_error, u128::from(e));
            }
            self.pipes[g].c.egress_parser_errors += 1;
        }
        engine.control(st, b.egress);
        if st.get(eg.drop) != 0 {
            if self.cfg.trace {
                tracing::info!("dropped by egress (port {port})");
            }
            self.pipes[g].c.egress_drops += 1;
            return;
        }
        let n = out.push_with(port, |buf| {
            let start = buf.len();
            engine.deparse(st, b.egress_deparser, buf);
            buf.len() - start
        });
        if n == 0 {
            self.pipes[g].c.egress_drops += 1;
            return;
        }
        let c = &mut self.pipes[g].c;
        c.packets_out += 1;
        c.bytes_out += n as u64;
        if self.cfg.trace {
            tracing::info!("sent on port {port} ({n} bytes)");
        }
        if self.cfg.dump_bytes > 0 {
            if let Some((_, bytes)) = out.iter().last() {
                self.dump("out", port, bytes);
            }
        }
    }

    /// Process one arriving frame.
    fn process(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.service(now, out);
        self.packet_id += 1;
        let span = self
            .cfg
            .trace
            .then(|| tracing::info_span!("packet", id = self.packet_id, port).entered());
        if self.cfg.dump_bytes > 0 {
            self.dump("in", port, frame);
        }
        if port >= self.cfg.ports {
            self.bad_port += 1;
            return;
        }
        let g = self.cfg.pipe_of(port) as usize;
        {
            let c = &mut self.pipes[g].c;
            c.packets_in += 1;
            c.bytes_in += frame.len() as u64;
            if frame.len() < 14 || frame.len() > self.cfg.max_frame {
                c.rx_malformed += 1;
                if self.cfg.trace {
                    tracing::info!("dropped: a {}-byte frame", frame.len());
                }
                return;
            }
        }
        // Ingress pipe.
        let ig = self.ig;
        let b = self.b;
        self.prog.set_now(now);
        let st = &mut self.ist;
        st.reset();
        st.frame.clear();
        st.frame.extend_from_slice(frame);
        st.set(ig.ingress_port, u128::from(port));
        st.set(ig.packet_length, frame.len() as u128);
        let engine = self.prog.engine_mut();
        if let ParseEnd::Reject(e) = engine.parse(st, b.ingress_parser) {
            if let Some(e) = e {
                st.set(ig.parser_error, u128::from(e));
            }
            self.pipes[g].c.ingress_parser_errors += 1;
        }
        engine.control(st, b.ingress);
        if st.get(ig.drop) != 0 {
            if self.cfg.trace {
                tracing::info!("dropped by ingress");
            }
            self.pipes[g].c.ingress_drops += 1;
            return;
        }
        let spec = st.get(ig.egress_spec);
        if spec >= u128::from(self.cfg.ports) {
            if self.cfg.trace {
                tracing::info!("dropped: egress_spec {spec} is not a port");
            }
            self.pipes[g].c.bad_egress_spec += 1;
            return;
        }
        let spec = spec as u32;
        self.ibuf.clear();
        engine.deparse(st, b.ingress_deparser, &mut self.ibuf);
        if self.ibuf.is_empty() {
            self.pipes[g].c.ingress_drops += 1;
            return;
        }
        // Crossbar 1.
        let e = self.cfg.pipe_of(spec) as usize;
        let class = classify(&self.ibuf);
        if self.cfg.trace {
            tracing::info!("crossbar 1: {class:?}, egress port {spec}");
        }
        let m = match class {
            Class::Other => {
                self.pipes[e].c.passthrough_packets += 1;
                std::mem::swap(&mut self.est.frame, &mut self.ibuf);
                self.egress(now, spec, port, out);
                std::mem::swap(&mut self.est.frame, &mut self.ibuf);
                return;
            }
            Class::Response => g,
            Class::Read | Class::Malformed => e,
        };
        self.middle(m, now, port, spec);
        // Packets due now (no cache latency).
        self.release(m, now, now, out);
        drop(span);
    }

    /// Middle pipe `m` over the NetSparse packet in `self.ibuf`.
    fn middle(&mut self, m: usize, now: Time, in_port: u32, spec: u32) {
        let NsSwitch {
            prog,
            b,
            pp,
            pr: ps,
            pr_headers,
            has_cache,
            origin,
            cfg,
            pipes,
            mst,
            ibuf,
            hit,
            ..
        } = self;
        let Pipe {
            deconcat,
            cache,
            concat,
            built,
            pool,
            psn,
            c: pc,
            bc,
            ..
        } = &mut pipes[m];
        let d = match deconcat.frame(&ibuf[..]) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(
                    "middle pipe {m}: dropped a malformed NetSparse packet from port {in_port}: {e}"
                );
                return;
            }
        };
        let c = d.concat;
        if *has_cache && c.prop_len != cache.mode().bytes() {
            pc.cache_mode_mismatch += 1;
            tracing::warn!(
                "middle pipe {m}: dropped a NetSparse packet from port {in_port}: property length {} is not the cache mode ({} bytes)",
                c.prop_len,
                cache.mode().bytes()
            );
            return;
        }
        pc.netsparse_packets += 1;
        pc.prs_in += u64::from(c.num_prs);
        mst.reset();
        for h in pr_headers.iter().flatten() {
            mst.valid.set(*h, true);
        }
        let n = &mut mst.n;
        n[pp.pr_type] = u64::from(c.pr_type.as_u16());
        n[pp.dst] = u64::from(c.dst);
        n[pp.prop_len] = u64::from(c.prop_len);
        n[pp.ingress_port] = u64::from(in_port);
        n[pp.egress_port] = u64::from(spec);
        n[pp.drop] = 0;
        if let Some(block) = b.per_packet {
            let mut t = NoPrims {
                errors: &mut pc.errors,
            };
            prog.run(mst, block, &mut t);
            if mst.n[pp.drop] != 0 {
                pc.packets_dropped += 1;
                pc.prs_dropped += u64::from(c.num_prs);
                return;
            }
        }
        // ns_pr_md_t as the per-packet part left it, for every PR.
        let md = {
            let n = &mst.n;
            [
                n[pp.pr_type],
                n[pp.dst],
                n[pp.prop_len],
                n[pp.ingress_port],
                n[pp.egress_port],
            ]
        };
        let ports = u64::from(cfg.ports);
        let prop_len = u64::from(c.prop_len);
        let o = *origin;
        let mut sink = |f: Flushed<'_>| build(f, &o, psn, bc, pool, built);
        // The idx of PR `i`, for prefetching (0 past the end).
        let stride = c.stride();
        let bytes = d.frame.as_ref().map_or(&[][..], |f| f.pr_bytes());
        let idx_at = |i: usize| -> Option<u64> {
            let at = i.checked_mul(stride)?.checked_add(IDX_OFFSET)?;
            let b: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
            Some(u64::from_be_bytes(b))
        };
        let prefetch = *has_cache && cache.capacity().is_none_or(|c| c > 0);
        if prefetch {
            for i in 0..PREFETCH_SET {
                if let Some(idx) = idx_at(i) {
                    cache.prefetch(idx);
                }
            }
        }
        for (i, v) in d.prs.enumerate() {
            if prefetch {
                if let Some(idx) = idx_at(i + PREFETCH_SET) {
                    cache.prefetch(idx);
                }
                if PREFETCH_LINE > 0 && md[0] == u64::from(PrType::Read.as_u16()) {
                    if let Some(idx) = idx_at(i + PREFETCH_LINE) {
                        cache.prefetch_line(idx);
                    }
                }
            }
            let n = &mut mst.n;
            n[ps.src] = u64::from(v.src);
            n[ps.tid] = u64::from(v.tid);
            n[ps.idx] = v.idx;
            n[ps.req_id] = u64::from(v.req_id);
            n[ps.pr_type] = md[0];
            n[ps.dst] = md[1];
            n[ps.prop_len] = md[2];
            n[ps.ingress_port] = md[3];
            n[ps.egress_port] = md[4];
            n[ps.drop] = 0;
            let mut t = PrPrims {
                cache,
                now,
                idx: ps.idx,
                own: v.payload,
                payload: if v.payload.is_empty() {
                    Payload::None
                } else {
                    Payload::Own
                },
                hit,
                errors: &mut pc.errors,
            };
            prog.run(mst, b.per_pr, &mut t);
            let payload = t.payload;
            let n = &mst.n;
            if n[ps.drop] != 0 {
                pc.prs_dropped += 1;
                continue;
            }
            if n[ps.prop_len] != prop_len {
                pc.errors.prop_len_changed += 1;
                continue;
            }
            let pr_type = match n[ps.pr_type] {
                1 => PrType::Read,
                2 => PrType::Response,
                _ => {
                    pc.errors.bad_type += 1;
                    continue;
                }
            };
            let body: &[u8] = match (pr_type, payload) {
                (PrType::Read, Payload::None) => &[],
                (PrType::Response, Payload::Own) => v.payload,
                (PrType::Response, Payload::Cached) => &hit[..],
                (PrType::Response, Payload::None) => {
                    pc.errors.response_without_payload += 1;
                    continue;
                }
                (PrType::Read, _) => {
                    pc.errors.read_with_payload += 1;
                    continue;
                }
            };
            let port = n[ps.egress_port];
            if port >= ports {
                pc.errors.bad_port += 1;
                continue;
            }
            let dst = n[ps.dst];
            if dst > u64::from(MAX_NODE_ID) {
                pc.errors.unaddressable += 1;
                continue;
            }
            let key = CqKey {
                pr_type,
                dst: dst as u32,
                port: port as u32,
            };
            let repr = PrRepr {
                src: n[ps.src] as u32,
                tid: n[ps.tid] as u16,
                idx: n[ps.idx],
                req_id: n[ps.req_id] as u32,
            };
            let r = if payload != Payload::Cached && repr == v.repr() {
                concat.push_raw(now, key, c.prop_len, v.raw, &mut sink)
            } else {
                concat.push(now, key, c.prop_len, &repr, body, &mut sink)
            };
            if r.is_err() {
                pc.errors.rejected += 1;
            }
        }
    }
}

impl Datapath for NsSwitch {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.process(now, port, frame, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.service(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        let l = self.origin.latency;
        self.pipes
            .iter()
            .flat_map(|p| {
                [
                    p.built.front().map(|b| b.due),
                    p.concat.next_deadline().map(|d| d + l),
                ]
            })
            .flatten()
            .min()
    }
}

impl ControlPlane for NsSwitch {
    fn engine(&self) -> &Engine {
        self.prog.engine()
    }

    fn engine_mut(&mut self) -> &mut Engine {
        self.prog.engine_mut()
    }

    /// `cache_invalidate` and `cache_mode <bytes>`.
    fn command(
        &mut self,
        cmd: &str,
        args: &[&str],
    ) -> Option<Result<bool, netsparse_engine::control::commands::LineError>> {
        use netsparse_engine::control::commands::LineError;
        match cmd {
            "cache_invalidate" => Some(if args.is_empty() {
                self.cache_invalidate();
                Ok(false)
            } else {
                Err(LineError::Syntax("usage: cache_invalidate".into()))
            }),
            "cache_mode" => Some(match args {
                [b] => match b.parse::<u32>() {
                    Ok(bytes) => self
                        .set_cache_mode(bytes)
                        .map(|()| false)
                        .map_err(|e| LineError::Syntax(e.to_string())),
                    Err(_) => Err(LineError::Syntax(format!("bad property length `{b}`"))),
                },
                _ => Err(LineError::Syntax("usage: cache_mode <bytes>".into())),
            }),
            _ => None,
        }
    }
}
