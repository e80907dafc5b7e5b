//! The cluster simulator behind `netsparse sim` (issue 6).
//!
//! * [`matrix`]: CSR matrices, the Matrix Market reader/writer, generators.
//! * [`partition`]: the 1D row/property partition and per-node remote needs.
//! * [`locality`]: the paper's workload statistics (Table 1 redundancy, Table 4
//!   destination locality, §3 intra-rack sharing).
//! * [`topology`]: the leaf-spine cluster, symmetric routing, control-plane
//!   entries and the tutorials' topology JSON.
//! * [`engine`]: the event loop over [`Datapath`](netsparse_externs::Datapath)
//!   devices and links in simulated time (the `netsparse-netsim` crate,
//!   re-exported under this name; the leaf-spine cluster is built on it by
//!   [`topology::Topology::engine`]); [`devices`]: small native devices.
//! * [`analytic`]: the SUOpt and SAOpt baselines of §8.1.
//! * [`config`]: Table 5's parameters, TOML, range checks.
//! * [`compute`]: the per-node SpMM computation model (SPADE, CPUs) for
//!   end-to-end time and strong scaling.
//! * [`hostmodel`]: when the hosts post their RIG commands (post-at-zero,
//!   or triggered by the compute kernel's chunks) and how much
//!   communication overlaps computation.
//! * [`report`]: Table 7's columns as a table, JSON and CSV; [`plot`]: SVG.
//! * [`linkflows`]: `--link-flows`, a link tap that counts the flows
//!   (PR type, requester, owner) crossing named link directions.
//! * [`rng`]: the seeded generators' PRNG.
//! * [`spmm2d`]: Brock et al.'s RDMA SpMM (stationary C, stationary A,
//!   work stealing) with one-sided READ/WRITE/FETCH_ADD PRs on the cluster.
//! * [`tiling`]: the √P×√P 2D tiling of Brock et al.'s RDMA SpMM and its
//!   load-imbalance statistics (`matrix info --tiles`).
//! * `build`: the devices of a run built on several threads, in device
//!   order.
//! * [`memory`]: the peak-memory estimate checked before a run allocates
//!   anything large, and the process's resident-memory figures.
//!
//! * [`cluster`]: the NetSparse modes (Table 8's ablation steps up to full
//!   NetSparse) on the leaf-spine cluster running the compiled programs
//!   ([`crate::programs`]: embedded, compiled once per run), with a host model per
//!   node and [`hostmem`]'s memory-light host memory; end-of-run
//!   verification of every gathered property (and optionally SpMM).
//!
//! [`simulate`] runs the selected modes on a partitioned matrix and returns
//! a [`report::Report`]; [`simulate_with`] adds the NetSparse options and a
//! program cache shared by the runs of a sweep; [`points::simulate_points`]
//! runs a sweep's points, several simulated runs at once with
//! [`cluster::RunOptions::jobs`].
//!
//! # Devices in the event loop
//!
//! [`cluster::run_mode`] builds one [`cluster::ClusterDevice`] per
//! [`topology::Device`] in [`topology::Topology::device_index`] order (so a
//! device's [`engine::DeviceId`] is its dense index), fills each switch's
//! tables from [`topology::Topology::control_plane`], posts each node's RIG
//! commands, runs the [`engine::Engine`] until it is idle and reads the
//! results: per node, `engine.rx_counters(node, 0)` for the bytes and PRs on
//! its link, the NIC's own counters and completion queue, each ToR's cache
//! counters.

pub mod analytic;
mod build;
pub mod cluster;
pub mod collective;
pub mod compute;
pub mod config;
pub mod devices;
pub mod fabric;
mod fabric_use;
pub mod hostmem;
pub mod hostmodel;
pub mod linkflows;
pub mod locality;
pub mod matrix;
pub mod memory;
pub mod partition;
pub mod plot;
pub mod points;
pub mod report;
pub mod rng;
pub mod spin;
pub mod spmm2d;
pub mod tiling;
pub mod topology;
pub mod user_commands;

pub use netsparse_netsim as engine;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use config::{ConfigError, SimConfig};
use matrix::CsrMatrix;
use partition::Partition;
use report::{MatrixSummary, Report};

/// A communication mode the simulator can run: the two software baselines
/// of §8.1 and the cumulative ablation steps of Table 8, the last of which
/// is full NetSparse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// SUOpt (§8.1).
    Su,
    /// SAOpt (§8.1).
    Sa,
    /// Table 8 "RIG": RIG units on the SmartNICs, no filtering, no
    /// coalescing, no NIC concatenation (DelayCycles 0); the ToRs forward
    /// plainly (they run `netsparse_spine.p4`).
    Rig,
    /// Table 8 "Filter": RIG + the Idx Filter.
    #[serde(rename = "+filter")]
    Filter,
    /// Table 8 "Coalesce": + the Pending PR Table check.
    #[serde(rename = "+coalesce")]
    Coalesce,
    /// Table 8 "Conc_NIC": + NIC concatenation (NIC DelayCycles).
    #[serde(rename = "+nic-concat")]
    NicConcat,
    /// Table 8 "Switch" = full NetSparse: + the NetSparse ToR switches
    /// (`netsparse_tor.p4`: Property Cache and switch concatenation).
    #[serde(rename = "netsparse")]
    NetSparse,
}

/// What a NetSparse mode enables (each step of Table 8 adds one item).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Ablation {
    /// The Idx Filter (else `-D NS_NO_FILTER`).
    pub filter: bool,
    /// Coalescing in the Pending PR Table (else `-D NS_NO_COALESCE`).
    pub coalesce: bool,
    /// NIC concatenation (else NIC DelayCycles 0).
    pub nic_concat: bool,
    /// NetSparse ToRs (else the ToRs run `netsparse_spine.p4`).
    pub switch: bool,
}

impl Mode {
    /// Every mode, in report order.
    pub const ALL: &'static [Mode] = &[
        Mode::Su,
        Mode::Sa,
        Mode::Rig,
        Mode::Filter,
        Mode::Coalesce,
        Mode::NicConcat,
        Mode::NetSparse,
    ];

    /// The ablation steps of Table 8, in order.
    pub const ABLATION: &'static [Mode] = &[
        Mode::Rig,
        Mode::Filter,
        Mode::Coalesce,
        Mode::NicConcat,
        Mode::NetSparse,
    ];

    /// The mode's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Su => "su",
            Mode::Sa => "sa",
            Mode::Rig => "rig",
            Mode::Filter => "+filter",
            Mode::Coalesce => "+coalesce",
            Mode::NicConcat => "+nic-concat",
            Mode::NetSparse => "netsparse",
        }
    }

    /// Table 8's name of the step.
    pub fn table8_name(self) -> &'static str {
        match self {
            Mode::Su => "SUOpt",
            Mode::Sa => "SAOpt",
            Mode::Rig => "RIG",
            Mode::Filter => "Filter",
            Mode::Coalesce => "Coalesce",
            Mode::NicConcat => "Conc_NIC",
            Mode::NetSparse => "Switch",
        }
    }

    /// The mechanisms of a NetSparse mode (`None` for SU and SA).
    pub fn ablation(self) -> Option<Ablation> {
        let step = match self {
            Mode::Su | Mode::Sa => return None,
            Mode::Rig => 0,
            Mode::Filter => 1,
            Mode::Coalesce => 2,
            Mode::NicConcat => 3,
            Mode::NetSparse => 4,
        };
        Some(Ablation {
            filter: step >= 1,
            coalesce: step >= 2,
            nic_concat: step >= 3,
            switch: step >= 4,
        })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown mode name.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown mode {0:?} (available: su, sa, rig, +filter, +coalesce, +nic-concat, netsparse (= +switch))")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "su" | "suopt" => Ok(Mode::Su),
            "sa" | "saopt" => Ok(Mode::Sa),
            "rig" => Ok(Mode::Rig),
            "+filter" | "filter" => Ok(Mode::Filter),
            "+coalesce" | "coalesce" => Ok(Mode::Coalesce),
            "+nic-concat" | "nic-concat" | "+conc-nic" => Ok(Mode::NicConcat),
            "netsparse" | "+switch" | "switch" | "ns" => Ok(Mode::NetSparse),
            _ => Err(UnknownMode(s.trim().to_string())),
        }
    }
}

/// A simulation that cannot run.
#[derive(Debug, Error)]
pub enum SimError {
    /// Bad parameters.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The partition has a different number of nodes than the cluster.
    #[error("the partition has {partition} nodes but nodes = {nodes}")]
    NodeMismatch {
        /// Nodes of the partition.
        partition: u32,
        /// Nodes of the configuration.
        nodes: u32,
    },
    /// No mode selected.
    #[error(
        "no mode selected (available: su, sa, rig, +filter, +coalesce, +nic-concat, netsparse)"
    )]
    NoModes,
    /// A bundled program does not compile.
    #[error(transparent)]
    Program(#[from] crate::programs::ProgramError),
    /// The cluster could not be built (a device, its tables).
    #[error("building the cluster: {0}")]
    Cluster(String),
    /// A user's control-plane commands that their devices' program refuses.
    #[error("{0}")]
    Commands(String),
    /// The event loop stopped with an error (a limit, a device breaking
    /// the contract).
    #[error("simulation: {0}")]
    Engine(engine::EngineError),
}

/// Progress of a simulation, for progress bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// What is running.
    pub phase: &'static str,
    /// Units done.
    pub done: u64,
    /// Units in total.
    pub total: u64,
}

/// Run `modes` on matrix `m` partitioned by `part` under `cfg`.
/// `progress` is called as work proceeds; returning `false` stops the run
/// early, and the report then holds partial results marked as such.
pub fn simulate(
    m: &CsrMatrix,
    summary: MatrixSummary,
    part: &Partition,
    cfg: &SimConfig,
    modes: &[Mode],
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Report, SimError> {
    simulate_with(
        m,
        summary,
        part,
        cfg,
        modes,
        &cluster::RunOptions::default(),
        &mut crate::programs::ProgramCache::new(),
        progress,
    )
}

/// [`simulate`] with the NetSparse modes' options (SpMM check, stop flag,
/// test hooks) and a program cache shared by several runs (a sweep), so
/// each program variant is compiled once. The NetSparse modes'
/// verification outcome is in the report ([`Report::check`]).
#[allow(clippy::too_many_arguments)]
pub fn simulate_with(
    m: &CsrMatrix,
    summary: MatrixSummary,
    part: &Partition,
    cfg: &SimConfig,
    modes: &[Mode],
    opts: &cluster::RunOptions,
    programs: &mut crate::programs::ProgramCache,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Report, SimError> {
    let point = points::Point { cfg, part };
    let reports = points::simulate_points(m, &summary, &[point], modes, opts, programs, progress)?;
    Ok(reports
        .into_iter()
        .next()
        .expect("the first point always has a report"))
}
