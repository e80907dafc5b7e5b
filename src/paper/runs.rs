//! One run of the evaluation: what identifies it ([`RunKey`]: stand-in,
//! mode and full configuration, plus the binary's version), what is kept of
//! it ([`RunRecord`]: per-node times, traffic and PRs, the tail node's
//! Table 7 columns, the verification outcome), how it is executed through
//! the simulator's library API ([`execute`], verifying every gathered
//! property like `netsparse sim`), and how much memory it needs
//! ([`estimate`]), computed from the stand-in's shape before anything is
//! generated.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use crate::programs::ProgramCache;
use crate::sim::cluster::{self, RunOptions};
use crate::sim::compute;
use crate::sim::config::SimConfig;
use crate::sim::matrix::paper::{self, PaperMatrix};
use crate::sim::matrix::{CsrMatrix, GenSpec};
use crate::sim::memory::current_rss;
use crate::sim::partition::{OwnerNeeds, Partition};
use crate::sim::report::{MatrixSummary, ModeResult};
use crate::sim::{simulate_with, Mode, Progress, SimError};

/// Everything that determines a run's result: the cache's key. Two runs
/// with equal keys give byte-identical records (seeded generator, stable
/// event order), so a stored record can stand for a new run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunKey {
    /// The stand-in, as a generator spec (`paper:arabic/8`).
    pub matrix: String,
    /// The mode (`su`, `sa`, `rig`, ..., `netsparse`).
    pub mode: String,
    /// Every simulation parameter (the generator's seed among them).
    pub config: SimConfig,
    /// The program that produced it: see [`super::binary_version`].
    pub version: String,
    /// Users' programs in place of bundled ones (none: the bundled ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramKey>,
    /// Users' control-plane commands (none: the simulator's own alone),
    /// by the role of the devices they fill and their text's digest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<ProgramKey>,
}

/// A user's program in a run's key: its role and the digest of its text
/// (where the file lives does not change the run).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramKey {
    /// `NIC`, `ToR` or `spine`.
    pub role: String,
    /// [`crate::programs::UserProgram::digest`].
    pub digest: String,
}

impl RunKey {
    /// A short, stable label for progress and errors.
    pub fn label(&self) -> String {
        format!("{} K={} {}", self.matrix, self.config.k, self.mode)
    }
}

/// One node's figures in a run (what the comparisons need).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// Communication time, ps.
    pub time_ps: u64,
    /// Bytes received (headers and payload).
    pub rx_bytes: u64,
    /// Read PRs issued (SAOpt and the NetSparse modes).
    pub prs: Option<u64>,
    /// The node's share of one SpMM iteration: nonzeros of the rows it
    /// owns (for the end-to-end figures' compute model).
    #[serde(default)]
    pub nnz: u64,
    /// Rows it owns.
    #[serde(default)]
    pub rows: u64,
}

/// The tail node's Table 7 columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TailRecord {
    /// The tail node.
    pub node: u32,
    /// Its communication time, ps (the mode's time).
    pub time_ps: u64,
    /// Header bytes received.
    pub rx_header: u64,
    /// Payload bytes received.
    pub rx_payload: u64,
    /// Goodput (fraction of the line rate).
    pub goodput: f64,
    /// Line utilisation.
    pub line_util: f64,
    /// Filtered-or-coalesced share.
    pub fc_rate: Option<f64>,
    /// Response PRs per packet.
    pub prs_per_packet: Option<f64>,
    /// Property Cache hit rate at its ToR.
    pub cache_hit_rate: Option<f64>,
}

/// The verification of a NetSparse run, in short.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyRecord {
    /// Every needed property arrived intact and every command completed.
    pub passed: bool,
    /// Distinct remote properties needed over all nodes.
    pub needed: u64,
    /// Of which gathered correctly.
    pub ok: u64,
    /// The first problems, if any.
    pub first: Vec<String>,
}

/// What is kept of a finished run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Per node, in node order.
    pub nodes: Vec<NodeRecord>,
    /// The tail node.
    pub tail: TailRecord,
    /// Property Cache hit rate over every ToR.
    pub cache_hit_rate_all: Option<f64>,
    /// The end-of-run check (NetSparse modes).
    pub verification: Option<VerifyRecord>,
    /// Rows and nonzeros of the generated matrix.
    pub matrix_rows: u32,
    /// Nonzeros of the generated matrix.
    pub matrix_nnz: u64,
    /// Wall time of the run, seconds (a measurement: not compared).
    pub wall_secs: f64,
    /// Events the simulator processed (NetSparse modes).
    pub events: Option<u64>,
    /// The process's resident memory at its highest while the run went,
    /// bytes: sampled when it started and ended and at every progress
    /// report (every 65,536 events), so a brief spike between samples is
    /// missed. The process holds the stand-in's matrix too, and with
    /// `--jobs` above 1 the runs beside this one. A measurement: not
    /// compared; `None` where `/proc` cannot be read, and in cache files
    /// written before it was recorded.
    #[serde(default)]
    pub peak_rss: Option<u64>,
}

impl RunRecord {
    /// The mode's communication time (the tail node's), ps.
    pub fn time_ps(&self) -> u64 {
        self.tail.time_ps
    }

    /// Whether the run verified (SU and SA have nothing to verify).
    pub fn verified(&self) -> bool {
        self.verification.as_ref().is_none_or(|v| v.passed)
    }

    /// Keep what matters of a mode's results; every rate rounded by [`r12`].
    /// `work` is each node's (nonzeros, rows) ([`compute::node_work`]).
    fn from_mode(
        m: &ModeResult,
        summary: &MatrixSummary,
        work: &[(u64, u64)],
        wall_secs: f64,
    ) -> RunRecord {
        let nodes = m
            .nodes
            .iter()
            .map(|n| {
                let (nnz, rows) = work.get(n.node as usize).copied().unwrap_or_default();
                NodeRecord {
                    time_ps: n.time.as_ps(),
                    rx_bytes: n.rx.total(),
                    prs: n.prs,
                    nnz,
                    rows,
                }
            })
            .collect();
        let tail = m
            .tail_node()
            .map_or_else(TailRecord::default, |t| TailRecord {
                node: t.node,
                time_ps: t.time.as_ps(),
                rx_header: t.rx.header,
                rx_payload: t.rx.payload,
                goodput: r12(t.goodput),
                line_util: r12(t.line_util),
                fc_rate: t.fc_rate.map(r12),
                prs_per_packet: t.prs_per_packet.map(r12),
                cache_hit_rate: t.cache_hit_rate.map(r12),
            });
        RunRecord {
            nodes,
            tail,
            cache_hit_rate_all: m.cache_hit_rate.map(r12),
            verification: m.verification.as_ref().map(|v| VerifyRecord {
                passed: v.passed(),
                needed: v.needed,
                ok: v.ok,
                first: v.first.iter().take(5).cloned().collect(),
            }),
            matrix_rows: summary.rows,
            matrix_nnz: summary.nnz,
            wall_secs: r12(wall_secs),
            events: m.run.as_ref().map(|r| r.events),
            peak_rss: None,
        }
    }
}

/// `x` rounded to 12 significant digits. serde_json's parser (without its
/// `float_roundtrip` feature) may miss the last bit of a 17-digit number,
/// so a rate read back from the cache could differ from the one computed;
/// at 12 digits it parses exactly, and a report from cached runs is
/// identical to one from fresh runs.
pub fn r12(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    format!("{x:.11e}").parse().unwrap_or(x)
}

/// A generated stand-in with its partition, shared by the runs on it.
pub struct Prepared {
    /// The matrix.
    pub matrix: CsrMatrix,
    /// What it is.
    pub summary: MatrixSummary,
    /// The contiguous 1D partition over the configured nodes.
    pub partition: Partition,
    /// Its per-(node, owner) needs, counted by the first run that routes
    /// by them (`owner-load`) and shared by the rest.
    pub owner_needs: OnceLock<Arc<OwnerNeeds>>,
}

/// Generate stand-in `m` at 1/`scale` with `seed`, partitioned over `nodes`.
pub fn prepare(m: PaperMatrix, scale: u32, seed: u64, nodes: u32) -> Result<Prepared, SimError> {
    let (matrix, info) = GenSpec::Paper { matrix: m, scale }
        .generate(seed)
        .map_err(|e| SimError::Cluster(format!("generating {}: {e}", spec(m, scale))))?;
    let summary = MatrixSummary {
        name: spec(m, scale),
        rows: matrix.rows(),
        cols: matrix.cols(),
        nnz: matrix.nnz(),
        duplicates: info.duplicates,
    };
    let partition = Partition::equal(&matrix, nodes)
        .map_err(|e| SimError::Cluster(format!("partitioning {}: {e}", summary.name)))?;
    Ok(Prepared {
        matrix,
        summary,
        partition,
        owner_needs: OnceLock::new(),
    })
}

/// The generator spec of stand-in `m` at 1/`scale`.
pub fn spec(m: PaperMatrix, scale: u32) -> String {
    if scale == 1 {
        format!("paper:{}", m.name())
    } else {
        format!("paper:{}/{scale}", m.name())
    }
}

/// How a run ended.
pub enum Outcome {
    /// It finished (verified or not: see [`RunRecord::verified`]).
    Done(Box<RunRecord>),
    /// Ctrl-C stopped it: nothing to keep.
    Stopped,
}

/// Run mode `mode` on `p` under `cfg` through the simulator's library API
/// (the same path as `netsparse sim`: every gathered property verified),
/// its event loop on `threads` threads (the results do not depend on it).
/// `progress(done, total)` reports the run's own progress; it returns
/// `false` to stop.
pub fn execute(
    p: &Prepared,
    cfg: &SimConfig,
    mode: Mode,
    programs: &mut ProgramCache,
    threads: usize,
    stop: Option<Arc<AtomicBool>>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Outcome, SimError> {
    let opts = RunOptions {
        spmm: false,
        corrupt_idx: None,
        stop,
        threads,
        // `paper` runs its own jobs, one mode each.
        jobs: 1,
        link_flows: Vec::new(),
        owner_needs: cluster::needs_owner_loads(cfg, &[mode]).then(|| {
            p.owner_needs
                .get_or_init(|| Arc::new(OwnerNeeds::count(&p.matrix, &p.partition)))
                .clone()
        }),
    };
    let start = std::time::Instant::now();
    let mut peak = current_rss();
    let mut sample = || peak = peak.max(current_rss());
    let report = simulate_with(
        &p.matrix,
        p.summary.clone(),
        &p.partition,
        cfg,
        &[mode],
        &opts,
        programs,
        &mut |pr: Progress| {
            sample();
            progress(pr.done, pr.total)
        },
    )?;
    sample();
    let wall = start.elapsed().as_secs_f64();
    if report.stopped {
        return Ok(Outcome::Stopped);
    }
    match report.modes.first() {
        Some(m) if !m.partial => {
            let mut rec = RunRecord::from_mode(
                m,
                &p.summary,
                &compute::node_work(&p.matrix, &p.partition),
                wall,
            );
            rec.peak_rss = peak;
            Ok(Outcome::Done(Box::new(rec)))
        }
        _ => Ok(Outcome::Stopped),
    }
}

/// Relative cost of one remote idx in each mode, for the progress bar's
/// estimate of the work left: the steps before NIC concatenation send one
/// PR per packet and cost several times more per idx.
fn mode_weight(mode: Mode) -> u64 {
    match mode {
        Mode::Su => 0,
        Mode::Sa => 0,
        // Measured at 1/8 scale (arabic, K = 16): about 16, 3.4, 2.8, 0.9
        // and 1.1 us of wall time per idx.
        Mode::Rig => 15,
        Mode::Filter => 4,
        Mode::Coalesce => 3,
        Mode::NicConcat | Mode::NetSparse => 1,
    }
}

/// Relative cost of one remote idx of each stand-in in the modes from
/// `+filter` on, in hundredths of arabic's. Measured with `paper --quick`
/// on the 2-core EPYC VM (2026-12-03): Figure 12's NetSparse runs went at
/// 2.1 (arabic), 0.32 (europe), 4.1 (queen), 1.1 (stokes) and 0.68 (uk) M
/// units per second at K = 16 without it, at 1.6–2.2 with it; europe's
/// `+filter`, `+coalesce` and `+nic-concat` runs then match arabic's
/// within 20 %. `rig` sends every idx alone whatever the matrix, and its
/// runs on europe and arabic went at 2.4 and 2.8 M/s without it, so it
/// does not apply there (docs/benchmarks.md, "2026-12-03 (late)").
fn matrix_weight(m: PaperMatrix) -> u64 {
    match m {
        PaperMatrix::Arabic => 100,
        PaperMatrix::Europe => 660,
        PaperMatrix::Queen => 52,
        PaperMatrix::Stokes => 190,
        PaperMatrix::Uk => 310,
    }
}

/// The estimated work of a run in abstract units (about one remote idx of
/// arabic in the NetSparse mode at K = 1 each), for the ETA and for
/// handing out the longest runs first under `--jobs`. SU and SA count one
/// unit per 64 nonzeros (one pass over the matrix). Wider properties make
/// more bytes and packets per idx: the full-size runs of Figure 12
/// (2026-11-26) took 2.1–3.2x as long at K = 128 as at K = 16 and
/// 0.5–1.1x at K = 1, which `1 + K/64` (3.0 / 1.25 / 1.02) follows. From
/// `+filter` on, each stand-in's idxs cost its `matrix_weight` of arabic's.
pub fn work_units(m: PaperMatrix, scale: u32, k: u32, mode: Mode) -> u64 {
    let s = paper::shape(m, scale);
    let remote = s.remote_nnz_per_node * paper::NODES;
    let per_matrix = match mode {
        Mode::Rig => 100,
        _ => matrix_weight(m),
    };
    match mode {
        Mode::Su => 1,
        Mode::Sa => (s.nnz / 64).max(1),
        _ => (remote * mode_weight(mode) * per_matrix * (64 + u64::from(k)) / 6400).max(1),
    }
}

pub use crate::sim::memory::MemoryEstimate;

/// Estimate the peak memory of running `mode` on stand-in `m` at 1/`scale`
/// under `cfg`, from the stand-in's shape alone (nothing is generated):
/// [`crate::sim::memory::estimate`] with the stand-in's remote nonzeros and
/// distinct remote idxs (its model is per 128 nodes; the totals do not
/// depend on the cluster's node count).
pub fn estimate(m: PaperMatrix, scale: u32, cfg: &SimConfig, mode: Mode) -> MemoryEstimate {
    let w = paper::shape(m, scale).workload();
    crate::sim::memory::estimate(&w, cfg, &[mode], false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stand_ins_weight_applies_from_filter_on_and_not_to_rig() {
        // Units per remote idx, relative to arabic's in the same mode.
        let per_idx = |m: PaperMatrix, mode: Mode| {
            let s = paper::shape(m, 8);
            work_units(m, 8, 16, mode) as f64 / (s.remote_nnz_per_node * paper::NODES) as f64
        };
        let relative = |m, mode| per_idx(m, mode) / per_idx(PaperMatrix::Arabic, mode);
        for mode in [
            Mode::Filter,
            Mode::Coalesce,
            Mode::NicConcat,
            Mode::NetSparse,
        ] {
            for (m, w) in [
                (PaperMatrix::Europe, 6.6),
                (PaperMatrix::Queen, 0.52),
                (PaperMatrix::Stokes, 1.9),
                (PaperMatrix::Uk, 3.1),
            ] {
                let r = relative(m, mode);
                assert!((r - w).abs() < 0.01, "{m:?} {mode}: {r}");
            }
        }
        for m in [PaperMatrix::Europe, PaperMatrix::Queen, PaperMatrix::Uk] {
            let r = relative(m, Mode::Rig);
            assert!((r - 1.0).abs() < 0.01, "{m:?} rig: {r}");
        }
        // And the mode's weight, and 1 + K/64, on top: arabic's rig idx at
        // K = 16 is 15 x 1.25 units.
        assert!((per_idx(PaperMatrix::Arabic, Mode::Rig) - 18.75).abs() < 0.01);
        assert_eq!(work_units(PaperMatrix::Europe, 8, 16, Mode::Su), 1);
    }

    #[test]
    fn rates_survive_the_cache_exactly() {
        for x in [
            0.8800306346814241,
            0.1 + 0.2,
            1.0 / 3.0,
            0.013475626300081367,
            413.1794101138853,
            2.2e-7,
        ] {
            let r = r12(x);
            assert!((r - x).abs() <= 1e-11 * x.abs(), "{x} -> {r}");
            let back: f64 = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
            assert_eq!(back.to_bits(), r.to_bits(), "{x}");
        }
    }

    #[test]
    fn estimates_grow_with_size() {
        let cfg = SimConfig::default();
        let small = estimate(PaperMatrix::Arabic, 64, &cfg, Mode::NetSparse);
        let big = estimate(PaperMatrix::Arabic, 1, &cfg, Mode::NetSparse);
        assert!(big.total() > 8 * small.matrix_bytes);
        // The full-size arabic stand-in: 640 M nonzeros, 2.56 GB of column
        // indices held (and built in place), within 16 GiB in all.
        assert!(big.matrix_bytes > 2_560_000_000, "{big:?}");
        assert!(big.total() < 16 << 30, "{big:?}");
        assert_eq!(spec(PaperMatrix::Uk, 1), "paper:uk");
        assert_eq!(spec(PaperMatrix::Uk, 8), "paper:uk/8");
    }
}
