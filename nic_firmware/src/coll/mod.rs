//! Collectives on the SmartNIC: the OmNICCL aggregator (Gu, Fei, Canini,
//! NAIC '24, §2) running a compiled `NetSparseNic` program that calls the
//! collective externs of `<collective.p4>` (`programs/omniccl_agg.p4`).
//!
//! * [`Aggregator`] is the device: it deconcatenates every frame it
//!   receives, runs the program's net_to_host control once per packet and
//!   once per PR (the engine's per-PR path runner, as the NetSparse NIC
//!   does), implements the externs with the shared collective unit
//!   ([`netsparse_externs::coll::CollUnit`]: Block Merge, accumulators,
//!   round counters; the NetSparse switch's middle pipes use the same) and
//!   performs the broadcasts the program asks for (`SendIndices`,
//!   `SendSums`) through a paced [`PrSender`].
//! * [`sender::PrSender`] is the concatenating, paced transmitter the
//!   simulator's workers use too; [`merge::BlockMerge`] is Block Merge.
//!
//! Every PR of the protocol is a NetSparse PR: `src` = sender node,
//! `tid` = kind ([`VOTE`], [`BLOCK`], [`DONE`], [`NEXT`], [`SUM`]),
//! `req_id` = round id ([`round_id`]: a stream and its round; OmNICCL runs
//! one stream, OmniReduce many), `idx` = block index (or a count), payload
//! = the block
//! (for [`BLOCK`] and [`SUM`]). Worker `w` is node `w`; the aggregator is
//! a node of its own. Blocks are little-endian `u32` words summed with
//! wrapping, so results are exact.
//!
//! Timing: the aggregator processes PRs at line rate (no per-PR cost
//! beyond its link); its broadcasts leave paced at its link rate.

pub mod sender;

pub use netsparse_externs::coll::{
    coll_pr, kind_type, merge, round_id, rounds, split_round, Broadcast, CollConfig,
    CollConfigError, BLOCK, DONE, MAX_BLOCK_BYTES, MAX_ROUNDS, MAX_STREAMS, NEXT, NONE,
    STREAM_SHIFT, SUM, VOTE,
};

use netsparse_engine::program::{Program, TargetCall, TargetPrims, TargetResult};
use netsparse_engine::prpath::{load_paths, PathSpec, PrMeta, PrPathRunner};
use netsparse_engine::{LoadError, PacketState};
use netsparse_externs::artifact::{Arch, Artifact, Package, Prim};
use netsparse_externs::coll::CollUnit;
use netsparse_externs::concat::ConcatConfigError;
use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
use netsparse_externs::wire::{PrType, DEFAULT_MTU};
use netsparse_externs::{Datapath, Outputs, Time};
use thiserror::Error;

use rounds::Refusals;
pub use sender::{PrSender, SenderStats};

/// The aggregator's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AggConfig {
    /// Its node id (workers are nodes `0..workers`).
    pub node: u32,
    /// Workers, n.
    pub workers: u32,
    /// Blocks per round, d.
    pub depth: u32,
    /// Block size in bytes, b (a multiple of 4, at most [`MAX_BLOCK_BYTES`]).
    pub block: u32,
    /// Rounds in flight (slots) per stream, at least 2.
    pub window: u32,
    /// Independent streams of rounds (1 for OmNICCL), 1..=[`MAX_STREAMS`].
    pub streams: u32,
    /// Link rate, Gb/s.
    pub link_gbps: u64,
}

impl AggConfig {
    /// The aggregator unit's shape.
    pub fn unit(&self) -> CollConfig {
        CollConfig {
            workers: self.workers,
            depth: self.depth,
            block: self.block,
            window: self.window,
            streams: self.streams,
        }
    }
}

/// Why an aggregator could not be built.
#[derive(Debug, Error)]
pub enum AggError {
    /// A parameter out of range.
    #[error(transparent)]
    Config(#[from] CollConfigError),
    /// The program does not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The transmitter's configuration.
    #[error("aggregator transmitter: {0}")]
    Sender(#[from] ConcatConfigError),
}

/// The aggregator's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AggStats {
    /// Frames received.
    pub rx_frames: u64,
    /// Frames the Deconcatenator refused.
    pub rx_malformed: u64,
    /// Packets the program dropped whole.
    pub packets_dropped: u64,
    /// PRs processed.
    pub prs: u64,
    /// Votes, blocks and DONE markers accepted.
    pub votes: u64,
    /// Blocks accumulated.
    pub blocks: u64,
    /// DONE markers accepted.
    pub dones: u64,
    /// Rounds whose sums were sent (every stream).
    pub rounds: u64,
    /// Refused extern calls, by reason.
    pub refused: Refusals,
    /// Extern calls the program made out of place (`SendSums` of a round
    /// that is not complete, an extern other than the collective ones).
    pub program_errors: u64,
    /// Block Merge nodes scanned (O(d) per vote message).
    pub merge_steps: u64,
    /// Bytes of round state (accumulators, Block Merge, counters).
    pub state_bytes: u64,
    /// What was sent.
    pub tx: SenderStats,
}

/// The externs' side: the collective unit and the PR's payload.
#[derive(Debug)]
struct AggCore {
    unit: CollUnit,
    payload: Vec<u8>,
    stats: AggStats,
}

impl TargetPrims for AggCore {
    fn call(&mut self, _st: &mut PacketState, call: TargetCall<'_>) -> TargetResult {
        let Prim::Coll { op, .. } = call.prim else {
            self.stats.program_errors += 1;
            return TargetResult::Value(0);
        };
        match self.unit.call(*op, call.args, &self.payload) {
            Some(v) => TargetResult::Value(u128::from(v)),
            None => TargetResult::Done,
        }
    }
}

/// The OmNICCL aggregator on a SmartNIC (see the module docs).
#[derive(Debug)]
pub struct Aggregator {
    cfg: AggConfig,
    program: Program,
    n2h: PrPathRunner,
    st: PacketState,
    deconcat: Deconcatenator,
    core: AggCore,
    tx: PrSender,
}

impl Aggregator {
    /// Load `artifact` (a `NetSparseNic` program) as the aggregator.
    pub fn new(artifact: &Artifact, cfg: AggConfig) -> Result<Aggregator, AggError> {
        let unit = CollUnit::new(cfg.unit())?;
        let place = || format!("program {}", artifact.program);
        let nic = match (&artifact.arch, &artifact.package) {
            (Arch::NetSparseNic, Package::NetSparseNic(n)) => n,
            (arch, _) => {
                return Err(LoadError::Unsupported {
                    what: format!(
                        "architecture {arch:?}: the aggregator runs NetSparseNic programs"
                    ),
                    place: place(),
                }
                .into())
            }
        };
        let rig = [
            nic.net_to_host.rig.node,
            nic.net_to_host.rig.unit,
            nic.net_to_host.rig.command,
            nic.net_to_host.rig.outcome,
        ];
        let specs = [PathSpec {
            path: &nic.net_to_host.path,
            extras: &rig,
        }];
        let (program, mut paths) = load_paths(artifact, &specs, 0)?;
        let Some(n2h) = paths.pop() else {
            return Err(LoadError::Invalid {
                detail: "the aggregator needs the net_to_host path".into(),
                place: place(),
            }
            .into());
        };
        let st = program.new_state();
        Ok(Aggregator {
            cfg,
            program,
            n2h,
            st,
            deconcat: Deconcatenator::new(DeconcatConfig::default()),
            core: AggCore {
                unit,
                payload: Vec::with_capacity(cfg.block as usize),
                stats: AggStats::default(),
            },
            tx: PrSender::new(cfg.node, cfg.link_gbps, DEFAULT_MTU)?,
        })
    }

    /// Counters.
    pub fn stats(&self) -> AggStats {
        let mut s = self.core.stats;
        let c = self.core.unit.counters();
        s.votes = c.votes;
        s.blocks = c.blocks;
        s.dones = c.dones;
        s.rounds = c.rounds;
        s.refused = c.refused;
        s.program_errors += c.program_errors;
        s.merge_steps = c.merge_steps;
        s.state_bytes = c.state_bytes;
        s.tx = self.tx.stats();
        s
    }

    /// The lowest round of `stream` not finished (every round before it
    /// was summed and sent).
    pub fn rounds_finished(&self, stream: u32) -> u32 {
        self.core.unit.rounds_finished(stream)
    }

    /// Send the broadcasts the program asked for through the paced
    /// transmitter: indices worker by worker; sums block by block over the
    /// workers, so that every worker's CQ fills and leaves in turn (no
    /// worker waits for all the others' sums).
    fn do_actions(&mut self, now: Time) {
        let (node, workers) = (self.cfg.node, self.cfg.workers);
        let tx = &mut self.tx;
        self.core.unit.run_actions(|b| {
            let bl = b.block as u32;
            if b.kind == NEXT {
                for w in 0..workers {
                    for k in 0..b.depth {
                        let pr = coll_pr(node, NEXT, b.round_id, b.index(k));
                        tx.push(now, PrType::Read, w, bl, &pr, &[]);
                    }
                }
            } else {
                for (k, &idx) in b.chosen.iter().enumerate() {
                    for w in 0..workers {
                        let pr = coll_pr(node, SUM, b.round_id, idx);
                        tx.push(now, PrType::Response, w, bl, &pr, b.sum(k));
                    }
                }
            }
            tx.flush(now);
        });
    }
}

impl Datapath for Aggregator {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.core.stats.rx_frames += 1;
        let d = match self.deconcat.frame(frame) {
            Ok(d) => d,
            Err(_) => {
                self.core.stats.rx_malformed += 1;
                return;
            }
        };
        let node = self.cfg.node;
        let md = PrMeta {
            pr_type: u64::from(d.concat.pr_type.as_u16()),
            dst: u64::from(d.concat.dst),
            prop_len: u64::from(d.concat.prop_len),
            ingress_port: u64::from(port),
            egress_port: 0,
        };
        let set = |v: &mut [u64], x: &[usize]| {
            v[x[0]] = u64::from(node);
            v[x[1]] = 0;
            v[x[2]] = 0;
            v[x[3]] = 0;
        };
        if !self
            .n2h
            .begin(&mut self.program, &mut self.st, md, set, &mut self.core)
        {
            self.core.stats.packets_dropped += 1;
            return;
        }
        for v in d.prs {
            self.core.stats.prs += 1;
            self.core.payload.clear();
            self.core.payload.extend_from_slice(v.payload);
            // Every PR is consumed by the program: what it would send on is
            // ignored; the broadcasts are the firmware's.
            let _ = self.n2h.run_pr(
                &mut self.program,
                &mut self.st,
                &v.repr(),
                set,
                &mut self.core,
            );
            if self.core.unit.has_actions() {
                self.do_actions(now);
            }
        }
        self.tx.emit(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.tx.on_timer(now);
        self.tx.emit(now, out);
    }

    fn next_deadline(&self) -> Option<Time> {
        self.tx.next_deadline()
    }
}
