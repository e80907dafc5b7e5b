//! Block-sparse AllReduce on the simulated cluster
//! (`netsparse sim --collective allreduce`): ring AllReduce against
//! OmNICCL's aggregator (Gu, Fei, Canini, NAIC '24) running the compiled
//! `programs/omniccl_agg.p4` on a SmartNIC, on the leaf-spine cluster of
//! the event loop with the compiled `netsparse_spine.p4` on every switch.
//!
//! * **Cluster.** `workers + 1` nodes in `racks` racks (the last node is
//!   the aggregator; it idles under `ring`); every ToR and spine a v1model
//!   switch running `netsparse_spine.p4` with the simulator's routes; links
//!   and switch latency as the NetSparse runs (Table 5 by default).
//! * **Algorithms.** `ring`: reduce-scatter + all-gather streamed per block
//!   ([`workers::RingWorker`]), every block sent. `omniccl`: vote / send /
//!   update rounds of depth `d`, pipelined over a window of rounds
//!   ([`workers::OmniWorker`], [`netsparse_nic::coll::Aggregator`]).
//!   `omnireduce`: OmniReduce's parallel streams — `--depth` independent
//!   streams of depth-1 rounds over the blocks `j mod streams`, each block
//!   sent with its sender's next nonzero index (the vote), on the same
//!   aggregator program.
//! * **Where the aggregator runs** (`--agg-at`): `nic`, a SmartNIC of its
//!   own (node `workers`) running `programs/omniccl_agg.p4`; or `switch`,
//!   the middle pipes of the ToR of that node's rack, a NetSparse
//!   multi-pipe switch running `programs/omniccl_switch.p4` (the workers
//!   still address node `workers`, which idles; the switch consumes their
//!   PRs and sends the indices and sums to each worker's port).
//! * **Verification.** Every block a worker receives as a result is checked
//!   against the direct sum ([`tensor::Tensors::expected`]); a run passes
//!   when every worker holds every block it needs exactly once, and the
//!   aggregator refused nothing.
//!
//! Results are simulated time only: the same parameters give the same
//! report.

pub mod tensor;
pub mod workers;

use std::sync::Arc;

use netsparse_bmv2::{NsCollStats, NsCollective, NsConfig, NsSwitch, Switch};
use netsparse_engine::control::commands;
use netsparse_externs::coll::CollConfig;
use netsparse_externs::wire::DeviceAddr;
use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_netsim::{DeviceId, Engine, EngineConfig, EngineError, FaultInjector, Outcome};
use netsparse_nic::coll::{
    AggConfig, AggStats, Aggregator, PrSender, MAX_BLOCK_BYTES, MAX_ROUNDS, MAX_STREAMS,
};
use serde::Serialize;
use thiserror::Error;

use super::fabric::{self, FabricError, FabricParams};
use super::report::{CommandsUse, ProgramUse};
use super::topology::{Device, Topology, PR_TYPE_RESPONSE};
use crate::programs::{Bundled, ProgramCache};
use tensor::{Bounds, Tensors};
use workers::{OmniWorker, RingWorker, Shared, WorkerResult};

/// An AllReduce algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algo {
    /// Dense ring AllReduce.
    Ring,
    /// The aggregator at depth 1.
    OmniReduce,
    /// OmNICCL at depth d.
    Omniccl,
}

impl Algo {
    /// Its CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::OmniReduce => "omnireduce",
            Algo::Omniccl => "omniccl",
        }
    }
}

impl std::str::FromStr for Algo {
    type Err = String;
    fn from_str(s: &str) -> Result<Algo, String> {
        match s {
            "ring" => Ok(Algo::Ring),
            "omnireduce" => Ok(Algo::OmniReduce),
            "omniccl" => Ok(Algo::Omniccl),
            o => Err(format!(
                "unknown algorithm {o:?}: use ring, omnireduce or omniccl"
            )),
        }
    }
}

impl std::fmt::Display for Algo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the aggregator of `omniccl` and `omnireduce` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AggAt {
    /// A SmartNIC of its own (`programs/omniccl_agg.p4`).
    #[default]
    Nic,
    /// The middle pipes of the aggregator node's ToR, a NetSparse switch
    /// (`programs/omniccl_switch.p4`).
    Switch,
}

impl AggAt {
    /// Its CLI name.
    pub fn name(self) -> &'static str {
        match self {
            AggAt::Nic => "nic",
            AggAt::Switch => "switch",
        }
    }
}

impl std::str::FromStr for AggAt {
    type Err = String;
    fn from_str(s: &str) -> Result<AggAt, String> {
        match s {
            "nic" => Ok(AggAt::Nic),
            "switch" => Ok(AggAt::Switch),
            o => Err(format!("unknown aggregator place {o:?}: use nic or switch")),
        }
    }
}

/// Cycles each PR occupies a middle pipe of the aggregating switch (the
/// cluster simulator's one PR per cycle per pipe, §6.2).
pub const SWITCH_PR_CYCLES: u64 = 1;

/// Largest tensor, bytes.
pub const MAX_BYTES: u64 = 1 << 30;
/// Most workers.
pub const MAX_WORKERS: u32 = 256;
/// Largest depth (and number of omnireduce streams).
pub const MAX_DEPTH: u32 = MAX_STREAMS;

/// The parameters of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveParams {
    /// Algorithms, in order.
    pub algos: Vec<Algo>,
    /// Tensor size N, bytes.
    pub bytes: u64,
    /// Block size b, bytes.
    pub block: u32,
    /// Blocks per OmNICCL round, d.
    pub depth: u32,
    /// Probability that a worker's block is nonzero.
    pub density: f64,
    /// Probability that a block's nonzero-ness is shared by every worker
    /// (0: independent patterns; 1: the same pattern everywhere).
    pub overlap: f64,
    /// Workers, n.
    pub workers: u32,
    /// Seed of the tensors.
    pub seed: u64,
    /// Rounds in flight at the aggregator.
    pub window: u32,
    /// Racks (workers + 1 nodes must divide by it).
    pub racks: u32,
    /// Link rate, Gb/s.
    pub link_gbps: u64,
    /// The aggregator's link rate, Gb/s (`--agg-at nic`).
    pub agg_gbps: u64,
    /// Where the aggregator runs.
    pub agg_at: AggAt,
    /// One-way link latency, ns.
    pub link_latency_ns: u64,
    /// Switch pipeline latency, ns.
    pub switch_latency_ns: u64,
    /// Simulated-time limit, ms.
    pub max_sim_time_ms: u64,
    /// Test hook: lose the frame with this send sequence number (every
    /// algorithm's run), so that the run cannot complete.
    #[serde(skip)]
    pub drop_frame: Option<u64>,
}

impl Default for CollectiveParams {
    fn default() -> CollectiveParams {
        CollectiveParams {
            algos: vec![Algo::Ring, Algo::OmniReduce, Algo::Omniccl],
            bytes: 1 << 20,
            block: 256,
            depth: 64,
            density: 0.25,
            overlap: 0.0,
            workers: 4,
            seed: 1,
            window: 4,
            racks: 1,
            link_gbps: 400,
            agg_gbps: 400,
            agg_at: AggAt::Nic,
            link_latency_ns: 450,
            switch_latency_ns: 300,
            max_sim_time_ms: 10_000,
            drop_frame: None,
        }
    }
}

/// Why a run could not be done.
#[derive(Debug, Error)]
pub enum CollectiveError {
    /// A parameter out of range (checked before anything runs).
    #[error("--{name} {value}: {range}")]
    Param {
        /// The flag.
        name: &'static str,
        /// Its value.
        value: String,
        /// The valid range.
        range: String,
    },
    /// A bundled program does not compile.
    #[error(transparent)]
    Program(#[from] crate::programs::ProgramError),
    /// The cluster could not be built.
    #[error("building the cluster: {0}")]
    Build(String),
    /// The event loop stopped with an error.
    #[error("simulation ({algo}): {err}")]
    Engine {
        /// The algorithm.
        algo: Algo,
        /// The error.
        err: EngineError,
    },
}

impl CollectiveParams {
    /// Check every parameter; the error names the flag and its range.
    pub fn validate(&self) -> Result<(), CollectiveError> {
        let bad =
            |name, value: String, range: String| Err(CollectiveError::Param { name, value, range });
        if self.algos.is_empty() {
            return bad(
                "algo",
                String::new(),
                "one or more of ring, omnireduce, omniccl".into(),
            );
        }
        if !(2..=MAX_WORKERS).contains(&self.workers) {
            return bad(
                "workers",
                self.workers.to_string(),
                format!("2 to {MAX_WORKERS}"),
            );
        }
        if self.block < 4 || self.block % 4 != 0 || self.block > MAX_BLOCK_BYTES {
            return bad(
                "block",
                self.block.to_string(),
                format!(
                    "a multiple of 4 from 4 to {MAX_BLOCK_BYTES} bytes (one PR in a 1500-byte MTU)"
                ),
            );
        }
        if self.bytes == 0 || self.bytes % u64::from(self.block) != 0 || self.bytes > MAX_BYTES {
            return bad(
                "bytes",
                self.bytes.to_string(),
                format!(
                    "a positive multiple of --block {} up to {MAX_BYTES} (1 GiB)",
                    self.block
                ),
            );
        }
        if !(1..=MAX_DEPTH).contains(&self.depth) {
            return bad(
                "depth",
                self.depth.to_string(),
                format!("1 to {MAX_DEPTH} blocks per round (omnireduce: streams)"),
            );
        }
        let blocks = self.bytes / u64::from(self.block);
        if blocks / u64::from(self.depth) >= u64::from(MAX_ROUNDS) - 2 {
            return bad(
                "depth",
                self.depth.to_string(),
                format!(
                    "at least {} for {blocks} blocks (a stream has at most {} rounds)",
                    blocks / (u64::from(MAX_ROUNDS) - 2) + 1,
                    MAX_ROUNDS - 2
                ),
            );
        }
        if !(0.0..=1.0).contains(&self.density) {
            return bad(
                "density",
                self.density.to_string(),
                "a fraction of nonzero blocks in [0, 1]".into(),
            );
        }
        if !(0.0..=1.0).contains(&self.overlap) {
            return bad(
                "overlap",
                self.overlap.to_string(),
                "a fraction of blocks whose pattern every worker shares, in [0, 1]".into(),
            );
        }
        if !(2..=64).contains(&self.window) {
            return bad(
                "window",
                self.window.to_string(),
                "2 to 64 rounds in flight".into(),
            );
        }
        if self.link_gbps == 0 || self.agg_gbps == 0 {
            return bad(
                "link-gbps",
                format!("{} (aggregator {})", self.link_gbps, self.agg_gbps),
                "a positive rate in Gb/s".into(),
            );
        }
        if self.agg_at == AggAt::Switch && self.agg_gbps != self.link_gbps {
            return bad(
                "agg-gbps",
                self.agg_gbps.to_string(),
                format!(
                    "only with --agg-at nic: the switch aggregator sends and receives on every worker's own link (--link-gbps {})",
                    self.link_gbps
                ),
            );
        }
        if self.max_sim_time_ms == 0 {
            return bad("max-sim-time-ms", "0".into(), "at least 1 ms".into());
        }
        let nodes = self.workers + 1;
        if self.racks == 0 || nodes % self.racks != 0 {
            return bad(
                "racks",
                self.racks.to_string(),
                format!("a divisor of workers + 1 = {nodes} (the aggregator is a node of its own)"),
            );
        }
        Topology::new(nodes, self.racks, None).map_err(|e| CollectiveError::Param {
            name: "racks",
            value: self.racks.to_string(),
            range: e.to_string(),
        })?;
        Ok(())
    }

    fn tensors(&self) -> Tensors {
        Tensors {
            seed: self.seed,
            workers: self.workers,
            blocks: self.bytes / u64::from(self.block),
            block: self.block,
            density: self.density,
            overlap: self.overlap,
        }
    }
}

/// One algorithm's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlgoResult {
    /// The algorithm.
    pub algo: Algo,
    /// Depth used (1 for omnireduce; 0 for ring).
    pub depth: u32,
    /// Streams of rounds (`--depth` for omnireduce, 1 for omniccl, 0 for ring).
    pub streams: u32,
    /// When the last worker held the whole result, ns.
    pub time_ns: f64,
    /// Simulated time when the network went idle, ns.
    pub idle_ns: f64,
    /// Every worker holds exactly the direct sum, and nothing was refused.
    pub verified: bool,
    /// What went wrong, if anything (names the worker).
    pub problems: Vec<String>,
    /// The bound this algorithm is compared with, ns.
    pub bound_ns: f64,
    /// bound / time.
    pub efficiency: f64,
    /// Most payload blocks one worker sent.
    pub max_worker_blocks_sent: u64,
    /// Most frame bytes one node sent.
    pub max_node_bytes_sent: u64,
    /// Frames on every link direction.
    pub frames: u64,
    /// Events processed.
    pub events: u64,
    /// Where the aggregator ran (not ring).
    pub agg_at: Option<AggAt>,
    /// The NIC aggregator's counters (not ring).
    pub aggregator: Option<AggStats>,
    /// The share of the run the NIC aggregator's link spent sending (its
    /// frame bytes at `--agg-gbps` over the time): near 1, the run is
    /// bound by the aggregator's link (n copies of every sum go out).
    pub agg_link_busy: Option<f64>,
    /// The switch aggregator's counters (`--agg-at switch`, not ring).
    pub switch_aggregator: Option<NsCollStats>,
    /// OmNICCL's aggregator memory, (n + 2)·b·d bytes (d: blocks per
    /// round over every stream), for comparison.
    pub paper_aggregator_bytes: Option<u64>,
}

/// A run's report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveReport {
    /// The parameters.
    pub params: CollectiveParams,
    /// Blocks per tensor.
    pub blocks: u64,
    /// Nonzero blocks per worker.
    pub nonzero_blocks: Vec<u64>,
    /// Blocks nonzero at some worker.
    pub union_blocks: u64,
    /// The bandwidth bounds.
    pub bounds: Bounds,
    /// Per algorithm.
    pub results: Vec<AlgoResult>,
    /// Users' programs that ran in place of bundled ones (`--spine-program`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramUse>,
    /// Users' commands applied after the simulator's (`--spine-commands`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandsUse>,
}

impl CollectiveReport {
    /// Whether every algorithm verified.
    pub fn verified(&self) -> bool {
        self.results.iter().all(|r| r.verified)
    }
}

/// One device of the run.
#[allow(clippy::large_enum_variant)]
enum Dev {
    Agg(Box<Aggregator>),
    Omni(Box<OmniWorker>),
    Ring(Box<RingWorker>),
    Idle,
    Switch(Box<Switch>),
    NsAgg(Box<NsSwitch>),
}

impl Datapath for Dev {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        match self {
            Dev::Agg(d) => d.on_packet(now, port, frame, out),
            Dev::Omni(d) => d.on_packet(now, port, frame, out),
            Dev::Ring(d) => d.on_packet(now, port, frame, out),
            Dev::Idle => {}
            Dev::Switch(d) => d.on_packet(now, port, frame, out),
            Dev::NsAgg(d) => d.on_packet(now, port, frame, out),
        }
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        match self {
            Dev::Agg(d) => d.on_timer(now, out),
            Dev::Omni(d) => d.on_timer(now, out),
            Dev::Ring(d) => d.on_timer(now, out),
            Dev::Idle => {}
            Dev::Switch(d) => d.on_timer(now, out),
            Dev::NsAgg(d) => d.on_timer(now, out),
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        match self {
            Dev::Agg(d) => d.next_deadline(),
            Dev::Omni(d) => d.next_deadline(),
            Dev::Ring(d) => d.next_deadline(),
            Dev::Idle => None,
            Dev::Switch(d) => d.next_deadline(),
            Dev::NsAgg(d) => d.next_deadline(),
        }
    }
}

fn build_err(what: String) -> CollectiveError {
    CollectiveError::Build(what)
}

/// Run every algorithm of `p` (validated first).
pub fn run(
    p: &CollectiveParams,
    programs: &mut ProgramCache,
) -> Result<CollectiveReport, CollectiveError> {
    p.validate()?;
    let t = p.tensors();
    let (expected, count) = t.expected();
    let nonzero_blocks: Vec<u64> = (0..p.workers)
        .map(|w| (0..t.blocks).filter(|&j| t.nonzero(w, j)).count() as u64)
        .collect();
    let union_blocks = count.iter().filter(|&&c| c > 0).count() as u64;
    let bounds = Bounds::of(&t, p.link_gbps, p.agg_gbps);
    let sh = Arc::new(Shared {
        tensors: t,
        expected,
        count,
    });
    let mut results = Vec::with_capacity(p.algos.len());
    for &algo in &p.algos {
        results.push(run_algo(p, algo, &sh, &bounds, programs)?);
    }
    Ok(CollectiveReport {
        params: p.clone(),
        blocks: sh.tensors.blocks,
        nonzero_blocks,
        union_blocks,
        bounds,
        results,
        programs: programs.uses(),
        commands: programs.command_uses(),
    })
}

fn run_algo(
    p: &CollectiveParams,
    algo: Algo,
    sh: &Arc<Shared>,
    bounds: &Bounds,
    programs: &mut ProgramCache,
) -> Result<AlgoResult, CollectiveError> {
    let n = p.workers;
    let agg_node = n;
    let topo = Topology::new(n + 1, p.racks, None).map_err(|e| build_err(e.to_string()))?;
    let spine = programs.get(Bundled::Spine, &[])?;
    let spine_commands = programs.commands(Bundled::Spine).cloned();
    let in_switch = algo != Algo::Ring && p.agg_at == AggAt::Switch;
    let agg_art = if in_switch {
        programs.get(Bundled::OmnicclSwitch, &[])?
    } else {
        programs.get(Bundled::OmnicclAgg, &[])?
    };
    let (depth, streams) = match algo {
        Algo::Ring => (0, 0),
        Algo::OmniReduce => (1, p.depth),
        Algo::Omniccl => (p.depth, 1),
    };
    let cfg = EngineConfig {
        max_time: Time::from_ms(p.max_sim_time_ms),
        ..EngineConfig::default()
    };
    let mut engine: Engine<Dev, FaultInjector> = Engine::with_tap(cfg, FaultInjector::new());
    if let Some(k) = p.drop_frame {
        engine.tap_mut().drop_when(move |seq, _| seq == k);
    }
    let fabric = FabricParams {
        seed: p.seed,
        link_latency_ns: p.link_latency_ns,
        switch_latency_ns: p.switch_latency_ns,
    };
    let node = |w: u32| -> Result<Dev, String> {
        let gbps = if w == agg_node {
            p.agg_gbps
        } else {
            p.link_gbps
        };
        let tx = PrSender::new(w, gbps, netsparse_externs::wire::DEFAULT_MTU)
            .map_err(|e| format!("h{w}: {e}"))?;
        Ok(match (algo, w == agg_node) {
            (Algo::Ring, true) => Dev::Idle,
            (_, true) if in_switch => Dev::Idle,
            (Algo::Ring, false) => Dev::Ring(Box::new(RingWorker::new(w, n, sh.clone(), tx))),
            (_, true) => {
                let cfg = AggConfig {
                    node: agg_node,
                    workers: n,
                    depth,
                    block: p.block,
                    window: p.window,
                    streams,
                    link_gbps: p.agg_gbps,
                };
                let a = Aggregator::new(&agg_art, cfg)
                    .map_err(|e| format!("the aggregator (h{w}): {e}"))?;
                Dev::Agg(Box::new(a))
            }
            (_, false) => Dev::Omni(Box::new(OmniWorker::new(
                w,
                agg_node,
                depth,
                streams,
                sh.clone(),
                tx,
            ))),
        })
    };
    let agg_tor = Device::Tor(topo.rack_of(agg_node));
    let unit = CollConfig {
        workers: n,
        depth,
        block: p.block,
        window: p.window,
        streams,
    };
    let custom = |d: Device, entries: &str| -> Option<Result<Dev, String>> {
        (in_switch && d == agg_tor).then(|| {
            agg_switch(&topo, &agg_art, p, d, entries, unit, agg_node)
                .map(|s| Dev::NsAgg(Box::new(s)))
        })
    };
    let agg = Device::Node(agg_node);
    let gbps = |a: Device, b: Device| {
        if a == agg || b == agg {
            p.agg_gbps
        } else {
            p.link_gbps
        }
    };
    fabric::build(
        &mut engine,
        &topo,
        &spine,
        spine_commands.as_ref(),
        fabric,
        node,
        Dev::Switch,
        custom,
        gbps,
    )
    .map_err(|e| match e {
        FabricError::Build(m) => build_err(m),
        FabricError::Engine(err) => CollectiveError::Engine { algo, err },
    })?;
    let outcome = engine
        .run()
        .map_err(|err| CollectiveError::Engine { algo, err })?;
    let mut problems = Vec::new();
    if outcome != Outcome::Idle {
        problems.push("the run was stopped before the network went idle".into());
    }
    let mut finish = 0u64;
    let mut max_sent = 0u64;
    let mut max_bytes = 0u64;
    let mut aggregator = None;
    let mut switch_aggregator = None;
    let mut voting_open = Vec::new();
    if in_switch {
        let id = topo.device_index(agg_tor) as DeviceId;
        if let Some(Dev::NsAgg(sw)) = engine.device(id) {
            let st = sw.stats();
            let errs = st.total.program_errors.total();
            let malformed = st.total.malformed.total();
            if let Some(c) = sw.collective_stats() {
                if c.unit.refused.total() > 0 || c.unit.program_errors > 0 || c.prs_rejected > 0 {
                    problems.push(format!(
                        "the switch aggregator ({agg_tor}) refused {} calls ({:?}), {} collective program errors, {} PRs it could not send",
                        c.unit.refused.total(),
                        c.unit.refused,
                        c.unit.program_errors,
                        c.prs_rejected
                    ));
                }
                switch_aggregator = Some(c);
            }
            if errs > 0 || malformed > 0 {
                problems.push(format!(
                    "the switch aggregator ({agg_tor}): {errs} program errors ({:?}), {malformed} malformed packets",
                    st.total.program_errors
                ));
            }
        }
    }
    for node in 0..=n {
        let id = topo.device_index(Device::Node(node)) as DeviceId;
        let sent = engine.tx_counters(id, 0).unwrap_or_default();
        max_bytes = max_bytes.max(sent.bytes);
        let r: Option<WorkerResult> = match engine.device(id) {
            Some(Dev::Omni(w)) => {
                if !w.finished_voting() {
                    voting_open.push(node);
                }
                Some(w.result())
            }
            Some(Dev::Ring(w)) => Some(w.result()),
            Some(Dev::Agg(a)) => {
                let s = a.stats();
                if s.refused.total() > 0 || s.program_errors > 0 || s.rx_malformed > 0 {
                    problems.push(format!(
                        "the aggregator (h{node}) refused {} calls ({:?}), {} program errors, {} malformed frames",
                        s.refused.total(),
                        s.refused,
                        s.program_errors,
                        s.rx_malformed
                    ));
                }
                aggregator = Some(s);
                None
            }
            _ => None,
        };
        let Some(r) = r else { continue };
        max_sent = max_sent.max(r.blocks_sent);
        finish = finish.max(r.finished_ps);
        if !r.ok() {
            problems.push(format!(
                "worker h{node}: {} of {} result blocks correct, {} wrong, {} unexpected, {} malformed frames",
                r.blocks_ok, r.blocks_needed, r.wrong, r.unexpected, r.malformed
            ));
        }
    }
    if !voting_open.is_empty() {
        problems.push(format!(
            "workers {voting_open:?} never saw the last round (the aggregator stalled at round {})",
            aggregator
                .map(|s| s.rounds)
                .or(switch_aggregator.map(|s| s.unit.rounds))
                .unwrap_or(0)
        ));
    }
    let frames = engine
        .link_counters()
        .iter()
        .map(|(_, _, c)| c.packets)
        .sum();
    let time_ns = finish as f64 / 1000.0;
    let bound_ns = match algo {
        Algo::Ring => bounds.dense_ring_ns,
        // The switch aggregator has no link of its own: every worker's
        // link carries its blocks in and its sums out.
        _ if in_switch => bounds.sparse_worker_ns,
        _ => bounds.sparse_worker_ns.max(bounds.sparse_aggregator_ns),
    };
    let (b, d) = (u64::from(p.block), u64::from(depth) * u64::from(streams));
    Ok(AlgoResult {
        algo,
        depth,
        streams,
        time_ns,
        idle_ns: engine.now().as_ps() as f64 / 1000.0,
        verified: problems.is_empty(),
        problems,
        bound_ns,
        efficiency: if time_ns > 0.0 {
            bound_ns / time_ns
        } else {
            0.0
        },
        max_worker_blocks_sent: max_sent,
        max_node_bytes_sent: max_bytes,
        frames,
        events: engine.stats().events,
        agg_at: (algo != Algo::Ring).then_some(p.agg_at),
        agg_link_busy: aggregator.filter(|_| time_ns > 0.0).map(|s| {
            // bytes · 8 / (Gb/s) = ns.
            s.tx.bytes as f64 * 8.0 / p.agg_gbps as f64 / time_ns
        }),
        aggregator,
        switch_aggregator,
        paper_aggregator_bytes: (algo != Algo::Ring).then(|| (u64::from(n) + 2) * b * d),
    })
}

/// The aggregator node's ToR as a NetSparse switch running
/// `omniccl_switch.p4`: the ToR's shape and entries, `coll_node` serving the
/// aggregator node, the collective configured with each worker's port.
fn agg_switch(
    topo: &Topology,
    art: &netsparse_externs::artifact::Artifact,
    p: &CollectiveParams,
    d: Device,
    entries: &str,
    unit: CollConfig,
    agg_node: u32,
) -> Result<NsSwitch, String> {
    let Device::Tor(r) = d else {
        return Err("the switch aggregator is a ToR".into());
    };
    let addr = DeviceAddr::Switch(r);
    let cfg = NsConfig {
        ports: topo.tor_ports(),
        pipes: topo.tor_pipes(),
        pr_cycles: SWITCH_PR_CYCLES,
        switch_id: r,
        mac: addr.mac().map_err(|e| e.to_string())?,
        ipv4: addr.ipv4().map_err(|e| e.to_string())?,
        seed: p.seed,
        ..NsConfig::default()
    };
    let mut sw = NsSwitch::new(art, cfg).map_err(|e| e.to_string())?;
    let entries = format!("{entries}table_add coll_node serve {agg_node} =>\n");
    commands::apply(&mut sw, &entries, &format!("{d}-commands.txt")).map_err(|e| e.to_string())?;
    let worker_ports = (0..unit.workers)
        .map(|w| {
            topo.type_route(d, PR_TYPE_RESPONSE, w)
                .ok_or_else(|| format!("no route to worker h{w}"))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    sw.configure_collective(NsCollective {
        unit,
        node: agg_node,
        worker_ports,
    })
    .map_err(|e| e.to_string())?;
    Ok(sw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_parameters_name_the_flag_and_range() {
        let ok = CollectiveParams::default();
        assert!(ok.validate().is_ok());
        let cases: Vec<(CollectiveParams, &str, &str)> = vec![
            (
                CollectiveParams {
                    block: 0,
                    ..ok.clone()
                },
                "--block 0",
                "multiple of 4",
            ),
            (
                CollectiveParams {
                    block: 2048,
                    ..ok.clone()
                },
                "--block 2048",
                "1428",
            ),
            (
                CollectiveParams {
                    bytes: 1000,
                    ..ok.clone()
                },
                "--bytes 1000",
                "multiple of --block 256",
            ),
            (
                CollectiveParams {
                    density: 1.5,
                    ..ok.clone()
                },
                "--density 1.5",
                "[0, 1]",
            ),
            (
                CollectiveParams {
                    density: -0.1,
                    ..ok.clone()
                },
                "--density -0.1",
                "[0, 1]",
            ),
            (
                CollectiveParams {
                    depth: 0,
                    ..ok.clone()
                },
                "--depth 0",
                "1 to 4096",
            ),
            (
                CollectiveParams {
                    overlap: -0.5,
                    ..ok.clone()
                },
                "--overlap -0.5",
                "[0, 1]",
            ),
            (
                CollectiveParams {
                    agg_at: AggAt::Switch,
                    agg_gbps: 800,
                    ..ok.clone()
                },
                "--agg-gbps 800",
                "--agg-at nic",
            ),
            (
                CollectiveParams {
                    workers: 1,
                    ..ok.clone()
                },
                "--workers 1",
                "2 to 256",
            ),
            (
                CollectiveParams {
                    racks: 2,
                    ..ok.clone()
                },
                "--racks 2",
                "divisor of workers + 1 = 5",
            ),
            (
                CollectiveParams {
                    algos: vec![],
                    ..ok.clone()
                },
                "--algo",
                "ring",
            ),
        ];
        for (p, flag, range) in cases {
            let e = p.validate().expect_err(flag).to_string();
            assert!(e.starts_with(flag) && e.contains(range), "{e}");
        }
    }
}
