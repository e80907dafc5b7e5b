//! The cluster simulator behind `netsparse sim` (issue 6).
//!
//! * [`matrix`]: CSR matrices, the Matrix Market reader/writer, generators.
//! * [`partition`]: the 1D row/property partition and per-node remote needs.
//! * [`topology`]: the leaf-spine cluster, symmetric routing, control-plane
//!   entries and the tutorials' topology JSON.
//! * [`engine`]: the event loop over [`Datapath`](netsparse_externs::Datapath)
//!   devices and links in simulated time; [`devices`]: small native devices.
//! * [`analytic`]: the SUOpt and SAOpt baselines of §8.1.
//! * [`config`]: Table 5's parameters, TOML, range checks.
//! * [`report`]: Table 7's columns as a table, JSON and CSV; [`plot`]: SVG.
//! * [`rng`]: the seeded generators' PRNG.
//!
//! [`simulate`] runs the selected modes on a partitioned matrix and returns
//! a [`report::Report`].
//!
//! # Plugging in the NetSparse devices
//!
//! The NetSparse modes run the behavioural NIC and switch in the event loop:
//!
//! 1. `let t = cfg.topology()?;` and
//!    `Engine::leaf_spine(&t, cfg.engine_config(stop), cfg.link(),
//!    cfg.switch_latency(), &mut |d| ...)` with one device per
//!    [`topology::Device`] (a NIC per node, the ToR program per ToR, the
//!    spine program per spine). `DeviceId`s are
//!    [`topology::LeafSpine::device_index`]; switch addresses come from
//!    [`topology::LeafSpine::switch_addr`].
//! 2. Fill each switch's tables from
//!    [`topology::LeafSpine::control_plane`] (templates matching the
//!    programs' table and action names), and each NIC's host memory from
//!    [`partition::Partition::node`] (its idx list and owners).
//! 3. `engine.run_with_progress(..)`; per node, `engine.rx_counters(node, 0)`
//!    gives the bytes (header/payload) and PRs on its link, and
//!    [`engine::Engine::get`] the device for its own counters (completion
//!    time, filter/coalesce counts, cache hits).
//! 4. Build [`report::NodeResult`]s, push a [`report::ModeResult`] into the
//!    report, and call [`report::Report::compare`]; add the mode names to
//!    [`Mode`] once they work.

pub mod analytic;
pub mod config;
pub mod devices;
pub mod engine;
pub mod matrix;
pub mod partition;
pub mod plot;
pub mod report;
pub mod rng;
pub mod topology;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use config::{ConfigError, SimConfig};
use matrix::CsrMatrix;
use partition::Partition;
use report::{MatrixSummary, Report};

/// A communication mode the simulator can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// SUOpt (§8.1).
    Su,
    /// SAOpt (§8.1).
    Sa,
}

impl Mode {
    /// Every mode, in report order.
    pub const ALL: &'static [Mode] = &[Mode::Su, Mode::Sa];

    /// The mode's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Su => "su",
            Mode::Sa => "sa",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown mode name.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown mode {0:?} (available: su, sa)")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "su" | "suopt" => Ok(Mode::Su),
            "sa" | "saopt" => Ok(Mode::Sa),
            other => Err(UnknownMode(other.to_string())),
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
    #[error("no mode selected (available: su, sa)")]
    NoModes,
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
    cfg.validate()?;
    if part.nodes() != cfg.nodes {
        return Err(SimError::NodeMismatch {
            partition: part.nodes(),
            nodes: cfg.nodes,
        });
    }
    if modes.is_empty() {
        return Err(SimError::NoModes);
    }
    let mut report = Report::new(summary, cfg.clone());
    let mut seen = Vec::new();
    for &mode in modes {
        if seen.contains(&mode) {
            continue;
        }
        seen.push(mode);
        match mode {
            Mode::Su => report.modes.push(analytic::su(part, cfg)),
            Mode::Sa => {
                let total = u64::from(part.nodes());
                let mut go_on = true;
                let a = partition::analyze(m, part, cfg.sa_cores, &mut |done| {
                    go_on = progress(Progress {
                        phase: "SAOpt: per-core remote idxs",
                        done: u64::from(done),
                        total,
                    });
                    go_on
                });
                let partial = a.nodes.len() < part.nodes() as usize;
                report.modes.push(analytic::sa(&a, cfg, partial));
                if partial || !go_on {
                    report.stopped = true;
                    break;
                }
            }
        }
    }
    report.compare();
    Ok(report)
}
