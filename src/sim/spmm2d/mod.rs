//! Brock, Buluç and Yelick's RDMA SpMM on the simulated cluster
//! (`netsparse sim --kernel spmm2d`): C = A·B with A the sparse matrix and
//! B dense with K columns, on a √p×√p grid of tiles over the leaf-spine
//! cluster: every ToR the NetSparse switch running the compiled
//! `netsparse_tor.p4` (as in the gather's `netsparse` mode, with its
//! Property Cache off: nothing is gathered), every spine a v1model switch
//! running `netsparse_spine.p4`, all with the simulator's routes.
//!
//! * **Algorithms** ([`Alg`]). `s-c`, stationary C: the owner of C(i, j)
//!   READs A(i, k) and B(k, j), k from (i + j) mod √p, fetching stage s + 1
//!   while computing stage s. `s-a`, stationary A: the owner of A(i, k)
//!   READs B(k, j), computes the partial C(i, j) and pushes it to its owner
//!   (FETCH_ADD on the owner's queue tail, then WRITE into the slot it
//!   returned); the owner accumulates it. `ws-rand` and `ws-la`: work
//!   stealing: a unit (i, j, k) of tile (i, j) is reserved with a FETCH_ADD
//!   on the tile's work counter; a process drains its own tile, then
//!   steals from tiles in random order (`ws-rand`) or from its own row and
//!   column first (`ws-la`: it already holds some of their operands'
//!   neighbours), pushing stolen partials like `s-a`.
//! * **Compute**: the roofline of [`crate::sim::compute::Rates`] (`--compute`,
//!   `--compute-gflops`, `--compute-gbps`; default SPADE's rates); one task
//!   at a time per process.
//! * **Verification**: every process's C tile against the direct product,
//!   word for word (integer values, wrapping `u32` arithmetic: exact).
//! * **Cost model** ([`model`]): an alpha-beta + roofline prediction of
//!   each algorithm, reported beside the simulated breakdown.
//!
//! # Verbs
//!
//! Each node's NIC is the RDMA responder of [`netsparse_nic::rdma`]
//! (READ, WRITE with an acknowledgement, FETCH_ADD over the regions the
//! process registered: [`proc::REG_A`], [`proc::REG_B`] read-only,
//! [`proc::REG_QUEUE`] write-only, [`proc::REG_COUNTERS`] atomic); the wire
//! format (verbs as NetSparse PRs, so they are concatenated, framed and
//! routed like every other PR) is documented there. Payloads are chunks
//! of [`CHUNK`] bytes (the last one of a tile zero-padded). A request the
//! responder refuses (unregistered region, out of bounds, wrong length,
//! misaligned atomic, not permitted, unknown verb) is counted per reason
//! and answered with a NAK; the requester counts it and never finishes,
//! and the run reports both by name once the network is idle. Tile sizes
//! are known to every process (replicated metadata, as in the paper's
//! implementation).
//!
//! Results are simulated time only: the same parameters give the same
//! report.

pub mod data;
pub mod model;
pub mod proc;

use std::sync::Arc;

use netsparse_bmv2::{NsConfig, NsSwitch, Switch};
use netsparse_engine::control::commands;
use netsparse_externs::cache::CacheCapacity;
use netsparse_externs::wire::DeviceAddr;
use netsparse_externs::{Datapath, Outputs, Time};
use netsparse_netsim::{Capture, DeviceId, Engine, EngineConfig, EngineError, Outcome};
use netsparse_nic::coll::PrSender;
use serde::Serialize;
use thiserror::Error;

use super::compute::Rates;
use super::fabric::{self, FabricError, FabricParams};
use super::matrix::CsrMatrix;
use super::report::{CommandsUse, ProgramUse};
use super::tiling::grid_side;
use super::topology::{Device, TableTemplates, Topology};
use crate::programs::{Bundled, ProgramCache, UserCommands};
use data::Operands;
use proc::{Proc, ProcStats};

/// Payload bytes per READ response and WRITE PR.
pub const CHUNK: u32 = 1024;

/// A 2D SpMM algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Alg {
    /// Stationary C.
    #[serde(rename = "s-c")]
    StationaryC,
    /// Stationary A.
    #[serde(rename = "s-a")]
    StationaryA,
    /// Work stealing, random victims.
    #[serde(rename = "ws-rand")]
    StealRandom,
    /// Work stealing, own row and column first.
    #[serde(rename = "ws-la")]
    StealLocal,
}

/// The accepted names, for errors.
pub const ALGS: &str = "s-c, s-a, ws-rand, ws-la";

impl Alg {
    /// Its CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Alg::StationaryC => "s-c",
            Alg::StationaryA => "s-a",
            Alg::StealRandom => "ws-rand",
            Alg::StealLocal => "ws-la",
        }
    }
}

impl std::str::FromStr for Alg {
    type Err = String;
    fn from_str(s: &str) -> Result<Alg, String> {
        match s {
            "s-c" => Ok(Alg::StationaryC),
            "s-a" => Ok(Alg::StationaryA),
            "ws-rand" => Ok(Alg::StealRandom),
            "ws-la" => Ok(Alg::StealLocal),
            o => Err(format!("unknown algorithm {o:?}: use {ALGS}")),
        }
    }
}

impl std::fmt::Display for Alg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Largest K.
pub const MAX_K: u32 = 4096;

/// The parameters of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spmm2dParams {
    /// Algorithms, in order.
    pub algs: Vec<Alg>,
    /// Nodes (a perfect square).
    pub nodes: u32,
    /// Racks.
    pub racks: u32,
    /// Columns of B.
    pub k: u32,
    /// Seed of B's values and of the stealing orders.
    pub seed: u64,
    /// The compute engine's rates.
    pub rates: Rates,
    /// Link rate, Gb/s.
    pub link_gbps: u64,
    /// One-way link latency, ns.
    pub link_latency_ns: u64,
    /// Switch pipeline latency, ns.
    pub switch_latency_ns: u64,
    /// Simulated-time limit, ms.
    pub max_sim_time_ms: u64,
}

impl Default for Spmm2dParams {
    fn default() -> Spmm2dParams {
        Spmm2dParams {
            algs: vec![
                Alg::StationaryC,
                Alg::StationaryA,
                Alg::StealRandom,
                Alg::StealLocal,
            ],
            nodes: 16,
            racks: 1,
            k: 16,
            seed: 1,
            rates: Rates {
                gflops: 4096.0,
                gbps: 800.0,
            },
            link_gbps: 400,
            link_latency_ns: 450,
            switch_latency_ns: 300,
            max_sim_time_ms: 10_000,
        }
    }
}

/// Why a run could not be done.
#[derive(Debug, Error)]
pub enum Spmm2dError {
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
    #[error("simulation ({alg}): {err}")]
    Engine {
        /// The algorithm.
        alg: Alg,
        /// The error.
        err: EngineError,
    },
}

impl Spmm2dParams {
    /// Check every parameter against the matrix; the error names the flag,
    /// its value and the valid range.
    pub fn validate(&self, m: &CsrMatrix) -> Result<u32, Spmm2dError> {
        let bad =
            |name, value: String, range: String| Err(Spmm2dError::Param { name, value, range });
        if self.algs.is_empty() {
            return bad("alg", String::new(), format!("one or more of {ALGS}"));
        }
        let Ok(g) = grid_side(u64::from(self.nodes)) else {
            return bad(
                "nodes",
                self.nodes.to_string(),
                "a perfect square (4, 9, 16, ..., 256): the nodes form a √p×√p grid".into(),
            );
        };
        if !(4..=256).contains(&self.nodes) {
            return bad(
                "nodes",
                self.nodes.to_string(),
                "a perfect square from 4 to 256".into(),
            );
        }
        if self.k == 0 || self.k > MAX_K {
            return bad(
                "k",
                self.k.to_string(),
                format!("1 to {MAX_K} columns of B"),
            );
        }
        if g > m.rows() || g > m.cols() {
            return bad(
                "nodes",
                self.nodes.to_string(),
                format!(
                    "a {g}x{g} grid needs at least {g} rows and columns; the matrix is {} x {}",
                    m.rows(),
                    m.cols()
                ),
            );
        }
        let positive = |x: f64| x > 0.0 && x.is_finite();
        if !positive(self.rates.gflops) || !positive(self.rates.gbps) {
            return bad(
                "compute-gflops",
                format!("{} (memory {} GB/s)", self.rates.gflops, self.rates.gbps),
                "positive finite rates".into(),
            );
        }
        if self.link_gbps == 0 {
            return bad("link-gbps", "0".into(), "a positive rate in Gb/s".into());
        }
        Topology::new(self.nodes, self.racks, None).map_err(|e| Spmm2dError::Param {
            name: "racks",
            value: self.racks.to_string(),
            range: e.to_string(),
        })?;
        // A tile must be addressable: offsets are 32 bits.
        let ops = Operands::new(m, self.k, g, self.seed);
        for t in 0..g {
            for u in 0..g {
                let big = ops.a_bytes(t, u).max(ops.b_bytes(t, u)) * u64::from(g);
                if big >= 1 << 32 {
                    return bad(
                        "nodes",
                        self.nodes.to_string(),
                        format!("more nodes: tile ({t}, {u}) would exceed 4 GiB"),
                    );
                }
            }
        }
        Ok(g)
    }
}

/// What every process knows: the grid, the tile sizes, the rates.
#[derive(Debug)]
pub struct Geom {
    /// Grid side.
    pub g: u32,
    /// Payload bytes per chunk.
    pub chunk: u32,
    /// The algorithm.
    pub alg: Alg,
    /// Seed of the stealing orders.
    pub seed: u64,
    /// The compute rates.
    pub rates: Rates,
    rows: Vec<u32>,
    inner: Vec<u32>,
    kb: Vec<u32>,
    a_bytes: Vec<u64>,
}

impl Geom {
    /// Rows of row block `t`.
    pub fn tile_rows(&self, t: u32) -> u32 {
        self.rows[t as usize + 1] - self.rows[t as usize]
    }
    /// Rows of inner block `t`.
    pub fn inner_rows(&self, t: u32) -> u32 {
        self.inner[t as usize + 1] - self.inner[t as usize]
    }
    /// Columns of K's block `u`.
    pub fn tile_k(&self, u: u32) -> u32 {
        self.kb[u as usize + 1] - self.kb[u as usize]
    }
    /// Bytes of A's tile (t, u).
    pub fn a_bytes(&self, t: u32, u: u32) -> u64 {
        self.a_bytes[(t * self.g + u) as usize]
    }
    /// Bytes of B's tile (t, u).
    pub fn b_bytes(&self, t: u32, u: u32) -> u64 {
        4 * u64::from(self.inner_rows(t)) * u64::from(self.tile_k(u))
    }
}

/// One algorithm's results (Table 2's breakdown: means over processes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlgResult {
    /// The algorithm.
    pub alg: Alg,
    /// When the last process finished, ns.
    pub time_ns: f64,
    /// Mean compute time per process, ns.
    pub compute_ns: f64,
    /// Mean accumulation time, ns.
    pub accumulate_ns: f64,
    /// Mean time waiting for data before its own finish, ns
    /// (finish − compute − accumulation).
    pub communication_ns: f64,
    /// Mean time between its finish and the last process's, ns.
    pub imbalance_ns: f64,
    /// The slowest process's compute time, ns.
    pub max_compute_ns: f64,
    /// READ requests.
    pub reads: u64,
    /// READ response payload bytes.
    pub read_bytes: u64,
    /// WRITE payload bytes.
    pub write_bytes: u64,
    /// FETCH_ADDs.
    pub fetch_adds: u64,
    /// Reservations that found a tile exhausted.
    pub failed_steals: u64,
    /// Units computed per process, max / mean.
    pub unit_imbalance: f64,
    /// Compute time per process, max / mean (the load imbalance of the
    /// work each process did).
    pub compute_imbalance: f64,
    /// Frames on every link direction.
    pub frames: u64,
    /// Every C tile equals the direct product and nothing went wrong.
    pub verified: bool,
    /// What went wrong (names the process).
    pub problems: Vec<String>,
    /// Per process.
    pub procs: Vec<ProcStats>,
    /// The analytic cost model's figures for the same run ([`model`]).
    pub model: Option<model::ModelResult>,
}

/// A run's report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spmm2dReport {
    /// The parameters.
    pub params: Spmm2dParams,
    /// Grid side.
    pub grid: u32,
    /// Per algorithm.
    pub results: Vec<AlgResult>,
    /// Users' programs that ran in place of bundled ones (`--tor-program`,
    /// `--spine-program`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramUse>,
    /// Users' commands applied after the simulator's (`--tor-commands`,
    /// `--spine-commands`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandsUse>,
}

impl Spmm2dReport {
    /// Whether every algorithm verified.
    pub fn verified(&self) -> bool {
        self.results.iter().all(|r| r.verified)
    }
}

#[allow(clippy::large_enum_variant)]
enum Dev {
    Proc(Box<Proc>),
    Switch(Box<Switch>),
    Tor(Box<NsSwitch>),
}

impl Datapath for Dev {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        match self {
            Dev::Proc(d) => d.on_packet(now, port, frame, out),
            Dev::Switch(d) => d.on_packet(now, port, frame, out),
            Dev::Tor(d) => d.on_packet(now, port, frame, out),
        }
    }
    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        match self {
            Dev::Proc(d) => d.on_timer(now, out),
            Dev::Switch(d) => d.on_timer(now, out),
            Dev::Tor(d) => d.on_timer(now, out),
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        match self {
            Dev::Proc(d) => d.next_deadline(),
            Dev::Switch(d) => d.next_deadline(),
            Dev::Tor(d) => d.next_deadline(),
        }
    }
}

/// Run every algorithm of `p` on `m` (validated first).
pub fn run(
    m: &CsrMatrix,
    p: &Spmm2dParams,
    programs: &mut ProgramCache,
) -> Result<Spmm2dReport, Spmm2dError> {
    let g = p.validate(m)?;
    let ops = Operands::new(m, p.k, g, p.seed);
    let expected = ops.direct();
    let mut a_bytes = Vec::with_capacity((g * g) as usize);
    for t in 0..g {
        for u in 0..g {
            a_bytes.push(ops.a_bytes(t, u));
        }
    }
    let mut results = Vec::with_capacity(p.algs.len());
    for &alg in &p.algs {
        let geo = Arc::new(Geom {
            g,
            chunk: CHUNK,
            alg,
            seed: p.seed,
            rates: p.rates,
            rows: ops.rows.clone(),
            inner: ops.inner.clone(),
            kb: ops.kb.clone(),
            a_bytes: a_bytes.clone(),
        });
        results.push(run_alg(p, &ops, &expected, geo, programs, None)?);
    }
    Ok(Spmm2dReport {
        params: p.clone(),
        grid: g,
        results,
        programs: programs.uses(),
        commands: programs.command_uses(),
    })
}

/// A frame of a [`trace`]: when it left which device for which.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracedFrame {
    /// When it left its device, ns.
    pub at_ns: u64,
    /// The sending device (`h0`, `tor0`, ...).
    pub from: String,
    /// The receiving device.
    pub to: String,
    /// The frame.
    pub bytes: Vec<u8>,
}

/// Run one algorithm of `p` on `m` and record every frame on every link,
/// in send order (for goldens and inspection).
pub fn trace(
    m: &CsrMatrix,
    p: &Spmm2dParams,
    alg: Alg,
    programs: &mut ProgramCache,
) -> Result<(AlgResult, Vec<TracedFrame>), Spmm2dError> {
    let g = p.validate(m)?;
    let ops = Operands::new(m, p.k, g, p.seed);
    let expected = ops.direct();
    let geo = Arc::new(Geom {
        g,
        chunk: CHUNK,
        alg,
        seed: p.seed,
        rates: p.rates,
        rows: ops.rows.clone(),
        inner: ops.inner.clone(),
        kb: ops.kb.clone(),
        a_bytes: (0..g * g).map(|x| ops.a_bytes(x / g, x % g)).collect(),
    });
    let mut frames = Vec::new();
    let r = run_alg(p, &ops, &expected, geo, programs, Some(&mut frames))?;
    Ok((r, frames))
}

/// Build every switch of `p`'s topology as a run does, with the user's
/// `--tor-commands` and `--spine-commands` after the simulator's entries,
/// and drop them: a command on a key the control plane installs is found
/// before the matrix is read, naming the switch and the line. Nothing to
/// do without user commands.
pub fn check_switch_commands(
    p: &Spmm2dParams,
    programs: &mut ProgramCache,
) -> Result<(), Spmm2dError> {
    let spine_commands = programs.commands(Bundled::Spine).cloned();
    let tor_commands = programs.commands(Bundled::Tor).cloned();
    if spine_commands.is_none() && tor_commands.is_none() {
        return Ok(());
    }
    let topo = Topology::new(p.nodes, p.racks, None).map_err(|e| build_err(e.to_string()))?;
    let spine = programs.get(Bundled::Spine, &[])?;
    let tor = programs.get(Bundled::Tor, &[])?;
    let templates = TableTemplates::default();
    for d in topo.devices() {
        let entries = topo.control_plane(d, &templates);
        match d {
            Device::Node(_) => continue,
            Device::Tor(r) => {
                tor_switch(&topo, &tor, p, r, &entries, tor_commands.as_ref())
                    .map_err(|e| build_err(format!("{d}: {e}")))?;
            }
            _ => {
                fabric::v1_switch(d, &spine, &entries, p.seed, spine_commands.as_ref())
                    .map_err(build_err)?;
            }
        }
    }
    Ok(())
}

fn build_err(what: String) -> Spmm2dError {
    Spmm2dError::Build(what)
}

/// ToR `r`: the NetSparse switch running `netsparse_tor.p4` with the
/// topology's entries, one PR per cycle per middle pipe, its Property
/// Cache off (verbs are not properties: no READ may be answered from a
/// cache, and their chunks are longer than any cache mode).
fn tor_switch(
    topo: &Topology,
    art: &netsparse_externs::artifact::Artifact,
    p: &Spmm2dParams,
    r: u32,
    entries: &str,
    user: Option<&UserCommands>,
) -> Result<NsSwitch, String> {
    let addr = DeviceAddr::Switch(r);
    let mut cfg = NsConfig {
        ports: topo.tor_ports(),
        pipes: topo.tor_pipes(),
        pr_cycles: super::collective::SWITCH_PR_CYCLES,
        switch_id: r,
        mac: addr.mac().map_err(|e| e.to_string())?,
        ipv4: addr.ipv4().map_err(|e| e.to_string())?,
        seed: p.seed,
        ..NsConfig::default()
    };
    cfg.cache.capacity = CacheCapacity::Disabled;
    let mut sw = NsSwitch::new(art, cfg).map_err(|e| e.to_string())?;
    commands::apply(&mut sw, entries, &format!("tor{r}-commands.txt"))
        .map_err(|e| e.to_string())?;
    if let Some(c) = user {
        commands::apply(&mut sw, &c.text, &c.name())
            .map_err(|e| format!("the ToR commands after the simulator's own entries: {e}"))?;
    }
    Ok(sw)
}

fn run_alg(
    p: &Spmm2dParams,
    ops: &Operands<'_>,
    expected: &[u32],
    geo: Arc<Geom>,
    programs: &mut ProgramCache,
    trace: Option<&mut Vec<TracedFrame>>,
) -> Result<AlgResult, Spmm2dError> {
    let (alg, g) = (geo.alg, geo.g);
    let topo = Topology::new(p.nodes, p.racks, None).map_err(|e| build_err(e.to_string()))?;
    let spine = programs.get(Bundled::Spine, &[])?;
    let tor = programs.get(Bundled::Tor, &[])?;
    let spine_commands = programs.commands(Bundled::Spine).cloned();
    let tor_commands = programs.commands(Bundled::Tor).cloned();
    let cfg = EngineConfig {
        max_time: Time::from_ms(p.max_sim_time_ms),
        ..EngineConfig::default()
    };
    let mut engine: Engine<Dev, Capture> = Engine::with_tap(cfg, Capture::new());
    engine.tap_mut().set_enabled(trace.is_some());
    let labels: Vec<String> = topo.devices().map(|d| d.to_string()).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let fabric = FabricParams {
        seed: p.seed,
        link_latency_ns: p.link_latency_ns,
        switch_latency_ns: p.switch_latency_ns,
    };
    let node = |n: u32| {
        let tx = PrSender::new(n, p.link_gbps, netsparse_externs::wire::DEFAULT_MTU)
            .map_err(|e| format!("h{n}: {e}"))?;
        ops.a_tile(n / g, n % g, &mut a);
        ops.b_tile(n / g, n % g, &mut b);
        let pr = Proc::new(n, geo.clone(), a.clone(), b.clone(), tx)
            .map_err(|e| format!("h{n}'s RDMA responder: {e}"))?;
        Ok(Dev::Proc(Box::new(pr)))
    };
    fabric::build(
        &mut engine,
        &topo,
        &spine,
        spine_commands.as_ref(),
        fabric,
        node,
        Dev::Switch,
        |d, entries| match d {
            Device::Tor(r) => {
                let user = tor_commands.as_ref();
                Some(tor_switch(&topo, &tor, p, r, entries, user).map(|s| Dev::Tor(Box::new(s))))
            }
            _ => None,
        },
        |_, _| p.link_gbps,
    )
    .map_err(|e| match e {
        FabricError::Build(m) => build_err(m),
        FabricError::Engine(err) => Spmm2dError::Engine { alg, err },
    })?;
    let outcome = engine
        .run()
        .map_err(|err| Spmm2dError::Engine { alg, err })?;
    if let Some(out) = trace {
        let label = |id: DeviceId| labels.get(id as usize).cloned().unwrap_or_default();
        out.extend(engine.tap().frames().map(|f| TracedFrame {
            at_ns: f.at.as_ns(),
            from: label(f.from.0),
            to: f.to.map_or_else(String::new, |e| label(e.0)),
            bytes: f.bytes.to_vec(),
        }));
    }
    let mut problems = Vec::new();
    if outcome != Outcome::Idle {
        problems.push("the run was stopped before the network went idle".into());
    }
    let k = p.k as usize;
    let mut procs = Vec::with_capacity((g * g) as usize);
    for n in 0..g * g {
        let id = topo.device_index(Device::Node(n)) as DeviceId;
        let Some(Dev::Proc(pr)) = engine.device(id) else {
            return Err(build_err(format!("h{n} is not a process")));
        };
        let s = pr.stats();
        let (t, u) = (n / g, n % g);
        if s.finish_ps == 0 {
            problems.push(format!(
                "process h{n} (tile {t},{u}) never finished: {} of {g} contributions to its C tile",
                s.contributions
            ));
        }
        if s.bad_access > 0 {
            let r = s.refused;
            problems.push(format!(
                "process h{n}'s NIC refused {} requests: {} to unregistered regions, {} out of bounds, {} of a wrong length, {} misaligned atomics, {} not permitted, {} unknown verbs",
                s.bad_access, r.unregistered, r.out_of_bounds, r.bad_length, r.misaligned, r.not_permitted, r.unknown_opcode
            ));
        }
        if let Some((from, nak)) = pr.first_nak() {
            problems.push(format!(
                "process h{n}: {} of its requests were refused (NAK), the first by h{from}: {nak:?}",
                s.naks
            ));
        }
        if s.unexpected + s.decode_errors + s.malformed > 0 {
            problems.push(format!(
                "process h{n}: {} unexpected PRs, {} tiles that did not decode, {} malformed frames",
                s.unexpected, s.decode_errors, s.malformed
            ));
        }
        let (r0, c0) = (ops.rows[t as usize] as usize, ops.kb[u as usize] as usize);
        let kc = ops.tile_k(u) as usize;
        let c = pr.c_tile();
        let wrong = (0..ops.tile_rows(t) as usize)
            .flat_map(|r| (0..kc).map(move |x| (r, x)))
            .filter(|&(r, x)| c[r * kc + x] != expected[(r0 + r) * k + c0 + x])
            .count();
        if wrong > 0 {
            problems.push(format!(
                "process h{n} (tile {t},{u}): {wrong} of {} C values differ from the direct product",
                c.len()
            ));
        }
        procs.push(s);
    }
    let n = procs.len() as f64;
    let finish = procs.iter().map(|s| s.finish_ps).max().unwrap_or(0);
    let mean = |f: &dyn Fn(&ProcStats) -> u64| procs.iter().map(f).sum::<u64>() as f64 / n / 1e3;
    let units: Vec<u64> = procs.iter().map(|s| s.units).collect();
    let frames = engine
        .link_counters()
        .iter()
        .map(|(_, _, c)| c.packets)
        .sum();
    Ok(AlgResult {
        alg,
        time_ns: finish as f64 / 1e3,
        compute_ns: mean(&|s| s.compute_ps),
        accumulate_ns: mean(&|s| s.accum_ps),
        communication_ns: mean(&|s| s.finish_ps.saturating_sub(s.compute_ps + s.accum_ps)),
        imbalance_ns: mean(&|s| finish - s.finish_ps),
        max_compute_ns: procs.iter().map(|s| s.compute_ps).max().unwrap_or(0) as f64 / 1e3,
        reads: procs.iter().map(|s| s.reads).sum(),
        read_bytes: procs.iter().map(|s| s.read_bytes).sum(),
        write_bytes: procs.iter().map(|s| s.write_bytes).sum(),
        fetch_adds: procs.iter().map(|s| s.fetch_adds).sum(),
        failed_steals: procs.iter().map(|s| s.failed_steals).sum(),
        unit_imbalance: super::tiling::imbalance(&units),
        compute_imbalance: super::tiling::imbalance(
            &procs.iter().map(|s| s.compute_ps).collect::<Vec<_>>(),
        ),
        frames,
        verified: problems.is_empty(),
        problems,
        procs,
        model: model::predict(ops, p, alg),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_names_round_trip_and_unknown_ones_list_the_valid() {
        for a in [
            Alg::StationaryC,
            Alg::StationaryA,
            Alg::StealRandom,
            Alg::StealLocal,
        ] {
            assert_eq!(a.name().parse::<Alg>(), Ok(a));
        }
        let e = "s-b".parse::<Alg>().unwrap_err();
        assert!(e.contains("\"s-b\"") && e.contains(ALGS), "{e}");
    }

    #[test]
    fn verbs_to_unregistered_memory_are_counted_and_nakd() {
        use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
        use netsparse_externs::wire::{PrRepr, PrType, DEFAULT_MTU};
        use netsparse_nic::rdma::{decode_reply, Refusal, Reply};
        use proc::{addr, ADDR_BITS, FADD_REQ, NAK, READ_REQ, REG_A, REG_COUNTERS, WRITE};
        let geo = Arc::new(Geom {
            g: 2,
            chunk: CHUNK,
            alg: Alg::StationaryA,
            seed: 1,
            rates: Spmm2dParams::default().rates,
            rows: vec![0, 2, 4],
            inner: vec![0, 2, 4],
            kb: vec![0, 1, 2],
            a_bytes: vec![4; 4],
        });
        let tx = PrSender::new(1, 400, DEFAULT_MTU).unwrap();
        let mut p = Proc::new(1, geo, vec![0; 4], vec![0; 8], tx).unwrap();
        let mut peer = PrSender::new(0, 400, DEFAULT_MTU).unwrap();
        let now = Time::ZERO;
        let pr = |tid, idx| PrRepr {
            src: 0,
            tid,
            idx,
            req_id: 7,
        };
        // FETCH_ADD to a counter that does not exist, a READ past A's
        // one chunk, a READ of no region, a WRITE past the queue.
        for (tid, idx) in [
            (FADD_REQ, (1 << ADDR_BITS) | addr(REG_COUNTERS, 16)),
            (READ_REQ, (2 << ADDR_BITS) | addr(REG_A, 0)),
            (READ_REQ, (1 << ADDR_BITS) | addr(9, 0)),
        ] {
            peer.push(now, PrType::Read, 1, CHUNK, &pr(tid, idx), &[]);
        }
        let chunk = vec![0u8; CHUNK as usize];
        let far = addr(proc::REG_QUEUE, 1 << 20);
        peer.push(now, PrType::Response, 1, CHUNK, &pr(WRITE, far), &chunk);
        peer.flush(now);
        let mut wire = Outputs::new();
        peer.emit(Time::from_ms(1), &mut wire);
        assert!(!wire.is_empty());
        let mut out = Outputs::new();
        let frames: Vec<Vec<u8>> = wire.iter().map(|(_, f)| f.to_vec()).collect();
        for f in &frames {
            p.on_packet(Time::from_ns(10), 0, f, &mut out);
        }
        let s = p.stats();
        assert_eq!(s.bad_access, 4, "{s:?}");
        assert_eq!((s.refused.out_of_bounds, s.refused.unregistered), (3, 1));
        // A malformed frame is counted too.
        p.on_packet(Time::from_ns(20), 0, &[1, 2, 3], &mut out);
        assert_eq!(p.stats().malformed, 1);
        // Nothing changed; every request was answered with a NAK naming
        // its reason.
        assert_eq!(p.c_tile(), &[0u32; 2]);
        let mut dc = Deconcatenator::new(DeconcatConfig::default());
        let mut reasons = Vec::new();
        for (_, f) in out.iter() {
            for v in dc.frame(f).unwrap().prs {
                assert_eq!((v.tid, v.req_id), (NAK, 7));
                match decode_reply(v.tid, v.idx) {
                    Some(Reply::Nak { reason, .. }) => reasons.push(reason),
                    r => panic!("not a NAK: {r:?}"),
                }
            }
        }
        reasons.sort_by_key(|r| r.map(|r| r as u8));
        assert_eq!(
            reasons,
            [
                Refusal::Unregistered,
                Refusal::OutOfBounds,
                Refusal::OutOfBounds,
                Refusal::OutOfBounds
            ]
            .map(Some)
        );
    }
}
