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
//!    everything else); with a Property Cache, a property length the cache
//!    mode does not hold (the mode's own, or below 16 bytes in the 16-byte
//!    mode, one padded segment each) is counted and dropped too; a hit
//!    attaches the first `prop_len` bytes of its segment. Then `ns_pr_md_t` = {the
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
//!    same results, less interpretation; see the engine's `prpath` runner.) The PR is then
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
//! With a collective configured ([`NsSwitch::configure_collective`]), the
//! per-PR part may call the collective externs of `<collective.p4>` (the
//! OmNICCL aggregator in the middle pipes; see `coll.rs`): one aggregator
//! state per switch, its broadcasts sent through the calling pipe's
//! Concatenator.
//!
//! No allocation per packet or per PR in steady state: packet states, the
//! deparse buffer, the pool of built-packet buffers and the units reuse
//! their memory.

mod coll;
pub mod config;
mod control;
mod egress;
mod ingress;
mod middle;
pub mod stats;
pub mod testing;
pub mod workload;

use std::collections::VecDeque;

use netsparse_externs::artifact::{Arch, Artifact, NsSwitchMetadata, Package};
use netsparse_externs::cache::{CacheCapacity, CacheConfig, PropertyCache};
use netsparse_externs::concat::{ConcatStats, Concatenator};
use netsparse_externs::deconcat::{DeconcatConfig, DeconcatStats, Deconcatenator};
use netsparse_externs::framer::Framer;
use netsparse_externs::wire::{pr_capacity, DeviceAddr, PR_HEADER_LEN};
use netsparse_externs::{Datapath, Outputs, Time};
use thiserror::Error;

pub use coll::{NsCollStats, NsCollective};
pub use config::{NsCacheConfig, NsConfig, NsConfigError};
pub use stats::{
    CacheCounters, FlushCounters, MalformedCounters, NsStats, PipeStats, ProgramErrors,
};

use netsparse_engine::program::{Program, Slot};
use netsparse_engine::prpath::{load_paths, PathSpec, PrPathRunner};
use netsparse_engine::{LoadError, PacketState};

/// `md.ingress_port` in the egress pipe for packets the switch built from a
/// Concatenation Queue (their PRs may come from several ports).
pub const ORIGINATED_PORT: u32 = 0xFFFF;

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

/// Parser and control ids of the package.
#[derive(Clone, Copy, Debug)]
struct Blocks {
    ingress_parser: u32,
    ingress: u32,
    ingress_deparser: u32,
    egress_parser: u32,
    egress: u32,
    egress_deparser: u32,
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
    cache_bypass: u64,
    busy_ps: u64,
    wait_ps: u64,
    max_wait_ps: u64,
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
    /// When the middle pipe can accept its next PR (the rate limit).
    free_at: Time,
    /// Spare frame buffers.
    pool: Vec<Vec<u8>>,
    /// Frames this pipe's flushed queues (its own BTH sequence numbers).
    framer: Framer,
    c: Counters,
    bc: BuildCounters,
    /// Unit counters at the last `reset_stats` (the units cannot be reset).
    base_deconcat: DeconcatStats,
    base_concat: ConcatStats,
}

/// What the flush callback needs to build packets.
#[derive(Clone, Copy, Debug)]
struct Origin {
    /// Cache latency: a packet leaves this long after its flush.
    latency: Time,
    trace: bool,
}

/// The NetSparse multi-pipe switch.
pub struct NsSwitch {
    prog: Program,
    b: Blocks,
    ig: MdSlots,
    eg: MdSlots,
    /// The middle pipes' per-PR path (every pipe runs the same program).
    path: PrPathRunner,
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
    /// The collective externs' state, once configured.
    coll: Option<Box<coll::SwitchColl>>,
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
        let spec = PathSpec {
            path: &ns.middle.path,
            extras: &[],
        };
        let (mut prog, mut paths) = load_paths(artifact, &[spec], cfg.seed)?;
        let path = paths.pop().ok_or_else(|| LoadError::Invalid {
            detail: "no middle pipe".into(),
            place: place(),
        })?;
        prog.set_trace(cfg.trace);
        let ig = MdSlots::resolve(&prog, &ns.ingress_metadata)?;
        let eg = MdSlots::resolve(&prog, &ns.egress_metadata)?;
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
        };
        let has_cache = ns.middle.cache.is_some();
        let mut pipes = Vec::with_capacity(cfg.pipes as usize);
        for _ in 0..cfg.pipes {
            pipes.push(Self::new_pipe(&cfg, has_cache)?);
        }
        let origin = Origin {
            latency: if has_cache {
                cfg.cache_latency()
            } else {
                Time::ZERO
            },
            trace: cfg.trace,
        };
        let collective = cfg.collective.clone();
        let mut sw = NsSwitch {
            ist: prog.new_state(),
            est: prog.new_state(),
            mst: prog.new_state(),
            prog,
            b,
            ig,
            eg,
            path,
            has_cache,
            origin,
            pipes,
            ibuf: Vec::with_capacity(cfg.max_frame),
            hit: Vec::with_capacity(cfg.cache.mode.bytes() as usize),
            bad_port: 0,
            packet_id: 0,
            coll: None,
            cfg,
        };
        if let Some(c) = collective {
            sw.configure_collective(c)?;
        }
        Ok(sw)
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
            free_at: Time::ZERO,
            pool: Vec::new(),
            framer: Framer::new(DeviceAddr::Switch(cfg.switch_id))
                .with_addresses(cfg.mac, cfg.ipv4),
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
    /// observes the package's `pr`/`md` slots; see [`netsparse_engine::prpath`]).
    pub fn per_pr_copies_elided(&self) -> bool {
        self.path.copies_elided()
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

    /// PRs waiting in Concatenation Queues and built packets.
    pub fn pending_prs(&self) -> u64 {
        self.pipes
            .iter()
            .map(|p| p.concat.pending_prs() + p.built.iter().map(|b| u64::from(b.prs)).sum::<u64>())
            .sum()
    }
}

impl Datapath for NsSwitch {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.process(now, port, frame, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.service(now, out);
    }

    /// Asked after every event: a plain loop over the pipes' two queue
    /// heads (an iterator chain of options cost about five times as much).
    fn next_deadline(&self) -> Option<Time> {
        let l = self.origin.latency;
        let mut next = Time::MAX;
        let mut any = false;
        for p in &self.pipes {
            if let Some(b) = p.built.front() {
                next = next.min(b.due);
                any = true;
            }
            if let Some(d) = p.concat.next_deadline() {
                next = next.min(d + l);
                any = true;
            }
        }
        any.then_some(next)
    }
}
