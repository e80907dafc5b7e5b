//! The evaluation's report: our numbers from the finished runs beside the
//! paper's ([`super::data`]), section by section, as one serialisable
//! [`PaperReport`], written as `report.md` (Markdown tables, "ours
//! [paper]" in each cell, with the SVG plots of [`super::plots`]; the
//! text is [`super::render`]'s), `report.json` and `report.csv` (one row
//! per compared value).
//!
//! Definitions follow `sim::report`: speedup = SUOpt's tail time ÷ the
//! mode's; traffic reduction = SUOpt's bytes received by the mode's tail
//! node ÷ the mode's; PR reduction = SAOpt's PRs of that node ÷ the
//! mode's. A run that is missing (interrupted, or its section not
//! selected) leaves its cells empty ("–"). Output is deterministic: the
//! sections, matrices and points in fixed order, wall times only in the
//! runs table.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::data::{self, Claim};
use super::render::{self, fmt_size};
use super::runs::RunRecord;
use super::{e2e, plots, PaperError, Results, RunLog, Section, Setup, Summary};
use crate::sim::compute::ComputeModel;
use crate::sim::config::SimConfig;
use crate::sim::matrix::paper::{self, PaperMatrix};
use crate::sim::topology::TopologySpec;
use crate::sim::Mode;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct PaperReport {
    /// How it was made.
    pub setup: SetupInfo,
    /// What the invocation did.
    pub summary: Summary,
    /// Table 6 beside the generated stand-ins.
    pub standins: Vec<StandinRow>,
    /// Figure 12, if selected.
    pub fig12: Option<Fig12>,
    /// Table 7, if selected.
    pub table7: Option<Vec<Table7Row>>,
    /// Table 8, if selected.
    pub table8: Option<Vec<Table8Row>>,
    /// Figure 15, if selected.
    pub fig15: Option<Sweep>,
    /// Figure 17, if selected.
    pub fig17: Option<Sweep>,
    /// Figure 18, if selected.
    pub fig18: Option<Sweep>,
    /// Figures 13 and 14 (SPADE), if selected.
    pub fig13: Option<e2e::Scaling>,
    /// Figure 19, if selected.
    pub fig19: Option<Vec<e2e::ActiveNodes>>,
    /// Figure 21 (CPU with DDR, then HBM), if selected.
    pub fig21: Option<Vec<e2e::Scaling>>,
    /// Figure 22, if selected.
    pub fig22: Option<Fig22>,
    /// The model ablation, if selected.
    pub model: Option<Vec<ModelRow>>,
    /// Every run, in plan order.
    pub runs: Vec<RunLog>,
}

/// The setup in the report (read back by [`options_of`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetupInfo {
    /// Scale divisor.
    pub scale: u32,
    /// `--quick`.
    pub quick: bool,
    /// Nodes.
    pub nodes: u32,
    /// Racks.
    pub racks: u32,
    /// Seed.
    pub seed: u64,
    /// The version keying the cache: the binary that made the runs.
    pub version: String,
    /// With `--report-only`, the binary that built the report from them.
    pub rendered_by: Option<String>,
    /// Sections.
    pub sections: Vec<Section>,
    /// Property Cache bytes per switch used (scaled).
    pub cache_bytes: u64,
    /// RIG batch per matrix used (scaled).
    pub rig_batch: Vec<(String, u32)>,
    /// The leaf-spine's routing (`--routing`).
    pub routing: String,
    /// Users' programs in place of bundled ones (none: the bundled ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<crate::sim::report::ProgramUse>,
    /// Users' commands after the simulator's control plane (none: its own
    /// alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<crate::sim::report::CommandsUse>,
}

/// One stand-in beside Table 6.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StandinRow {
    /// Short name.
    pub matrix: String,
    /// Generator spec.
    pub spec: String,
    /// Rows generated (`None` if no run of it finished).
    pub rows: Option<u32>,
    /// Nonzeros generated.
    pub nnz: Option<u64>,
    /// Table 6's rows ÷ scale.
    pub paper_rows: u64,
    /// Table 6's nonzeros ÷ scale.
    pub paper_nnz: u64,
}

/// Figure 12.
#[derive(Clone, Debug, Serialize)]
pub struct Fig12 {
    /// One block per K.
    pub per_k: Vec<Fig12K>,
    /// Our gmean of NetSparse vs SUOpt over every matrix and K.
    pub gmean_vs_su: Option<f64>,
    /// Our gmean of NetSparse vs SAOpt.
    pub gmean_vs_sa: Option<f64>,
    /// The paper's (33x).
    pub paper_gmean_vs_su: f64,
    /// The paper's (15x).
    pub paper_gmean_vs_sa: f64,
}

/// Figure 12 at one K.
#[derive(Clone, Debug, Serialize)]
pub struct Fig12K {
    /// K.
    pub k: u32,
    /// One row per matrix.
    pub rows: Vec<Fig12Row>,
    /// Gmean of NetSparse vs SUOpt over the matrices.
    pub gmean_netsparse: Option<f64>,
    /// Gmean of SAOpt vs SUOpt.
    pub gmean_sa: Option<f64>,
}

/// Figure 12, one matrix at one K.
#[derive(Clone, Debug, Serialize)]
pub struct Fig12Row {
    /// Matrix.
    pub matrix: String,
    /// NetSparse vs SUOpt.
    pub netsparse: Option<f64>,
    /// SAOpt vs SUOpt.
    pub sa: Option<f64>,
    /// NetSparse vs SAOpt.
    pub netsparse_vs_sa: Option<f64>,
    /// The paper's NetSparse bar where printed, and where.
    pub paper_netsparse: Option<f64>,
    /// Table 7's traffic reduction × line utilisation (K = 16 only): what
    /// the paper's NetSparse speedup must be about, since speedup =
    /// traffic reduction × utilisation.
    pub paper_implied: Option<f64>,
    /// The paper says SAOpt is slower than SUOpt here.
    pub paper_sa_slower: bool,
}

/// Table 7, one matrix: ours and the paper's.
#[derive(Clone, Debug, Serialize)]
pub struct Table7Row {
    /// Matrix.
    pub matrix: String,
    /// Ours (`None` cells where not run).
    pub ours: Table7Ours,
    /// The paper's.
    pub paper: data::Table7Row,
}

/// Our Table 7 columns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Table7Ours {
    /// F+C rate.
    pub fc_rate: Option<f64>,
    /// PRs per packet.
    pub prs_per_packet: Option<f64>,
    /// Property Cache hit rate (tail node's ToR).
    pub cache_hit_rate: Option<f64>,
    /// Goodput.
    pub goodput: Option<f64>,
    /// Line utilisation.
    pub line_util: Option<f64>,
    /// Traffic reduction vs SUOpt.
    pub traffic_reduction_vs_su: Option<f64>,
    /// SAOpt goodput.
    pub goodput_sa: Option<f64>,
    /// PR reduction vs SAOpt.
    pub pr_reduction_vs_sa: Option<f64>,
    /// Speedup vs SUOpt (not a Table 7 column; for reading it).
    pub speedup_vs_su: Option<f64>,
}

/// Table 8, one cell group.
#[derive(Clone, Debug, Serialize)]
pub struct Table8Row {
    /// Matrix.
    pub matrix: String,
    /// K.
    pub k: u32,
    /// Step (Table 8's name).
    pub step: String,
    /// Our speedup vs SUOpt.
    pub speedup: Option<f64>,
    /// Our tail traffic reduction vs SUOpt.
    pub traffic_reduction: Option<f64>,
    /// Our tail goodput.
    pub goodput: Option<f64>,
    /// The paper's cell.
    pub paper: Option<data::Table8Cell>,
}

/// One point of the model ablation for one matrix (or the gmean over
/// them, matrix `gmean`).
#[derive(Clone, Debug, Serialize)]
pub struct ModelRow {
    /// Matrix, or `gmean`.
    pub matrix: String,
    /// Which part is off (or changed).
    pub part: String,
    /// NetSparse's speedup over SUOpt, both under this model.
    pub speedup: Option<f64>,
    /// Its change against every part on, percent.
    pub change_pct: Option<f64>,
}

/// A sensitivity sweep (Figures 15, 17, 18): NetSparse time relative to a
/// baseline point, per matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    /// What is swept.
    pub parameter: String,
    /// The baseline's label.
    pub baseline: String,
    /// Point labels (full-scale values).
    pub points: Vec<String>,
    /// The values actually used at this scale, per point.
    pub used: Vec<String>,
    /// One row per matrix: speedup over the baseline per point.
    pub rows: Vec<SweepRow>,
    /// What the paper says.
    pub claims: Vec<ClaimCheck>,
}

/// Figure 22: NetSparse vs SUOpt per network, K = 16.
#[derive(Clone, Debug, Serialize)]
pub struct Fig22 {
    /// The networks, as `--topology` specs, leaf-spine first.
    pub topologies: Vec<String>,
    /// One row per matrix.
    pub rows: Vec<Fig22Row>,
    /// Gmean of NetSparse vs SUOpt per network.
    pub gmean: Vec<Option<f64>>,
    /// What the paper says, with ours.
    pub claims: Vec<Fig22Claim>,
}

/// Figure 22, one matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Fig22Row {
    /// Matrix.
    pub matrix: String,
    /// NetSparse vs SUOpt per network (SUOpt does not depend on it).
    pub vs_su: Vec<Option<f64>>,
    /// NetSparse on each network ÷ NetSparse on leaf-spine.
    pub vs_leaf_spine: Vec<Option<f64>>,
    /// The paper's leaf-spine bar (Figure 12 at K = 16: Table 8's Switch
    /// row, or Table 7's traffic reduction × line utilisation).
    pub paper_leaf_spine: Option<f64>,
}

/// A statement about Figure 22 and what ours shows.
#[derive(Clone, Debug, Serialize)]
pub struct Fig22Claim {
    /// The paper's statement.
    pub claim: Claim,
    /// The network it is about (as in [`Fig22::topologies`]); `None`: all
    /// but leaf-spine.
    pub network: Option<String>,
    /// Ours, as the network's speed ÷ leaf-spine's: of the claim's matrix,
    /// or else the gmean; on its network, or else the lowest over the
    /// networks other than leaf-spine.
    pub ours_vs_leaf_spine: Option<f64>,
}

/// One matrix of a sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    /// Matrix.
    pub matrix: String,
    /// Speedup over the baseline per point.
    pub speedup: Vec<Option<f64>>,
}

/// A statement of the paper and what ours shows for it.
#[derive(Clone, Debug, Serialize)]
pub struct ClaimCheck {
    /// The paper's statement.
    pub claim: Claim,
    /// Our best speedup over the baseline for the claim's matrix.
    pub ours_best: Option<f64>,
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Speedup of `r` over SUOpt's `su`.
fn speedup(su: &RunRecord, r: &RunRecord) -> Option<f64> {
    ratio(su.time_ps(), r.time_ps())
}

/// Traffic reduction of `r`'s tail node vs the same node under `su`.
fn traffic(su: &RunRecord, r: &RunRecord) -> Option<f64> {
    let n = r.tail.node as usize;
    ratio(su.nodes.get(n)?.rx_bytes, r.nodes.get(n)?.rx_bytes)
}

/// PR reduction of `r`'s tail node vs the same node under `sa`.
fn pr_reduction(sa: &RunRecord, r: &RunRecord) -> Option<f64> {
    let n = r.tail.node as usize;
    ratio(sa.nodes.get(n)?.prs?, r.nodes.get(n)?.prs?)
}

/// The geometric mean of the present values (`None` if none).
pub fn gmean(v: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0u32);
    for x in v.into_iter().flatten() {
        if x > 0.0 && x.is_finite() {
            s += x.ln();
            n += 1;
        }
    }
    (n > 0).then(|| (s / f64::from(n)).exp())
}

struct Lookup<'a> {
    setup: &'a Setup,
    results: &'a Results,
}

impl e2e::Runs for Lookup<'_> {
    fn run(&self, m: PaperMatrix, mode: Mode, k: u32) -> Option<&RunRecord> {
        self.at(m, mode, k)
    }
}

impl Lookup<'_> {
    fn get(&self, m: PaperMatrix, mode: Mode, cfg: &SimConfig) -> Option<&RunRecord> {
        self.results.get(&self.setup.key(m, mode, cfg))
    }
    fn at(&self, m: PaperMatrix, mode: Mode, k: u32) -> Option<&RunRecord> {
        self.get(m, mode, &self.setup.config(m, k))
    }
}

/// Build the report from the finished runs.
pub fn build(setup: &Setup, results: &Results, summary: &Summary) -> PaperReport {
    let l = Lookup { setup, results };
    let scale = u64::from(setup.opts.scale);
    let standins = setup
        .matrices
        .iter()
        .map(|&m| {
            let (rows, nnz) = data::table6(m);
            let any = Mode::ALL
                .iter()
                .find_map(|&mode| data::KS.iter().find_map(|&k| l.at(m, mode, k)));
            StandinRow {
                matrix: m.name().into(),
                spec: super::runs::spec(m, setup.opts.scale),
                rows: any.map(|r| r.matrix_rows),
                nnz: any.map(|r| r.matrix_nnz),
                paper_rows: (rows / scale).max(paper::NODES * 4),
                paper_nnz: nnz / scale,
            }
        })
        .collect();
    PaperReport {
        setup: SetupInfo {
            scale: setup.opts.scale,
            quick: setup.opts.quick,
            nodes: setup.opts.nodes,
            racks: setup.opts.racks,
            seed: setup.opts.seed,
            version: setup.opts.version.clone(),
            rendered_by: setup.opts.report_only.then(super::binary_version),
            sections: setup.sections.clone(),
            cache_bytes: setup.config(PaperMatrix::Arabic, 16).cache_bytes,
            rig_batch: setup
                .matrices
                .iter()
                .map(|&m| (m.name().to_string(), setup.config(m, 16).rig_batch))
                .collect(),
            routing: setup.opts.routing.name().to_string(),
            programs: setup.opts.programs.iter().map(|(w, u)| w.used(u)).collect(),
            commands: setup
                .opts
                .commands
                .iter()
                .map(|(w, c)| c.used(*w))
                .collect(),
        },
        summary: summary.clone(),
        standins,
        fig12: setup.has(Section::Fig12).then(|| fig12(&l)),
        table7: setup.has(Section::Table7).then(|| table7(&l)),
        table8: setup.has(Section::Table8).then(|| table8(&l)),
        fig15: setup.has(Section::Fig15).then(|| fig15(&l)),
        fig17: setup.has(Section::Fig17).then(|| fig17(&l)),
        fig18: setup.has(Section::Fig18).then(|| fig18(&l)),
        fig13: setup.has(Section::Fig13).then(|| {
            e2e::scaling(
                &l,
                setup.opts.nodes,
                &setup.matrices,
                ComputeModel::Spade,
                data::FIG13_PAPER,
            )
        }),
        fig19: setup
            .has(Section::Fig19)
            .then(|| e2e::active_nodes(&l, &setup.matrices)),
        fig21: setup.has(Section::Fig21).then(|| {
            vec![
                e2e::scaling(
                    &l,
                    setup.opts.nodes,
                    &setup.matrices,
                    ComputeModel::CpuDdr,
                    data::FIG21_DDR_PAPER,
                ),
                e2e::scaling(
                    &l,
                    setup.opts.nodes,
                    &setup.matrices,
                    ComputeModel::CpuHbm,
                    data::FIG21_HBM_PAPER,
                ),
            ]
        }),
        fig22: setup.has(Section::Fig22).then(|| fig22(&l)),
        model: setup.has(Section::Model).then(|| model(&l)),
        runs: results.log.clone(),
    }
}

fn fig12(l: &Lookup) -> Fig12 {
    let mut per_k = Vec::new();
    for k in data::KS {
        let rows: Vec<Fig12Row> = l
            .setup
            .matrices
            .iter()
            .map(|&m| {
                let su = l.at(m, Mode::Su, k);
                let sa = l.at(m, Mode::Sa, k);
                let ns = l.at(m, Mode::NetSparse, k);
                let p7 = data::table7(m);
                Fig12Row {
                    matrix: m.name().into(),
                    netsparse: su.zip(ns).and_then(|(a, b)| speedup(a, b)),
                    sa: su.zip(sa).and_then(|(a, b)| speedup(a, b)),
                    netsparse_vs_sa: sa
                        .zip(ns)
                        .and_then(|(a, b)| ratio(a.time_ps(), b.time_ps())),
                    paper_netsparse: data::fig12_netsparse(m, k).map(|x| x.0),
                    paper_implied: (k == 16).then_some(p7.traffic_reduction_vs_su * p7.line_util),
                    paper_sa_slower: data::fig12_sa_slower_than_su(m, k),
                }
            })
            .collect();
        per_k.push(Fig12K {
            k,
            gmean_netsparse: gmean(rows.iter().map(|r| r.netsparse)),
            gmean_sa: gmean(rows.iter().map(|r| r.sa)),
            rows,
        });
    }
    Fig12 {
        gmean_vs_su: gmean(
            per_k
                .iter()
                .flat_map(|b| b.rows.iter().map(|r| r.netsparse)),
        ),
        gmean_vs_sa: gmean(
            per_k
                .iter()
                .flat_map(|b| b.rows.iter().map(|r| r.netsparse_vs_sa)),
        ),
        paper_gmean_vs_su: data::FIG12_GMEAN_NETSPARSE_VS_SU,
        paper_gmean_vs_sa: data::FIG12_GMEAN_NETSPARSE_VS_SA,
        per_k,
    }
}

fn table7(l: &Lookup) -> Vec<Table7Row> {
    l.setup
        .matrices
        .iter()
        .map(|&m| {
            let su = l.at(m, Mode::Su, 16);
            let sa = l.at(m, Mode::Sa, 16);
            let ns = l.at(m, Mode::NetSparse, 16);
            let ours = match ns {
                None => Table7Ours::default(),
                Some(n) => Table7Ours {
                    fc_rate: n.tail.fc_rate,
                    prs_per_packet: n.tail.prs_per_packet,
                    cache_hit_rate: n.tail.cache_hit_rate,
                    goodput: Some(n.tail.goodput),
                    line_util: Some(n.tail.line_util),
                    traffic_reduction_vs_su: su.and_then(|s| traffic(s, n)),
                    goodput_sa: sa.map(|s| s.tail.goodput),
                    pr_reduction_vs_sa: sa.and_then(|s| pr_reduction(s, n)),
                    speedup_vs_su: su.and_then(|s| speedup(s, n)),
                },
            };
            Table7Row {
                matrix: m.name().into(),
                ours,
                paper: data::table7(m),
            }
        })
        .collect()
}

fn table8(l: &Lookup) -> Vec<Table8Row> {
    let mut out = Vec::new();
    for m in l.setup.table8_matrices() {
        for k in data::KS {
            let su = l.at(m, Mode::Su, k);
            for &step in Mode::ABLATION {
                let r = l.at(m, step, k);
                out.push(Table8Row {
                    matrix: m.name().into(),
                    k,
                    step: step.table8_name().into(),
                    speedup: su.zip(r).and_then(|(s, r)| speedup(s, r)),
                    traffic_reduction: su.zip(r).and_then(|(s, r)| traffic(s, r)),
                    goodput: r.map(|r| r.tail.goodput),
                    paper: data::table8(m, step, k),
                });
            }
        }
    }
    out
}

/// A sweep over `points` with configurations from `cfg`, relative to the
/// point at index `base`.
#[allow(clippy::too_many_arguments)]
fn sweep<P: Copy>(
    l: &Lookup,
    parameter: &str,
    points: &[P],
    base: usize,
    label: impl Fn(P) -> String,
    used: impl Fn(&SimConfig) -> String,
    cfg: impl Fn(PaperMatrix, P) -> SimConfig,
    claims: Vec<Claim>,
) -> Sweep {
    let rows: Vec<SweepRow> = l
        .setup
        .matrices
        .iter()
        .map(|&m| {
            let b = l.get(m, Mode::NetSparse, &cfg(m, points[base]));
            SweepRow {
                matrix: m.name().into(),
                speedup: points
                    .iter()
                    .map(|&p| {
                        let r = l.get(m, Mode::NetSparse, &cfg(m, p))?;
                        ratio(b?.time_ps(), r.time_ps())
                    })
                    .collect(),
            }
        })
        .collect();
    let first = l
        .setup
        .matrices
        .first()
        .copied()
        .unwrap_or(PaperMatrix::Arabic);
    let claims = claims
        .into_iter()
        .map(|c| {
            let ours_best = c.matrix.and_then(|name| {
                let row = rows.iter().find(|r| r.matrix == name)?;
                row.speedup.iter().flatten().copied().reduce(f64::max)
            });
            ClaimCheck {
                claim: c,
                ours_best,
            }
        })
        .collect();
    Sweep {
        parameter: parameter.into(),
        baseline: label(points[base]),
        points: points.iter().map(|&p| label(p)).collect(),
        used: points.iter().map(|&p| used(&cfg(first, p))).collect(),
        rows,
        claims,
    }
}

fn fig15(l: &Lookup) -> Sweep {
    let pts = l.setup.fig15_points();
    let base = pts
        .iter()
        .position(|&b| b == data::FIG15_BASELINE)
        .unwrap_or(0);
    sweep(
        l,
        "RIG batch (nonzeros per RIG command, at full scale)",
        &pts,
        base,
        |b| format!("{}k", b / 1024),
        |c| c.rig_batch.to_string(),
        |m, b| l.setup.fig15_config(m, b),
        data::fig15_claims(),
    )
}

fn fig17(l: &Lookup) -> Sweep {
    let pts = l.setup.fig17_points();
    sweep(
        l,
        "NIC concatenation delay cycles (switch: a quarter)",
        &pts,
        0,
        |d| d.to_string(),
        |c| format!("{}/{}", c.nic_delay_cycles, c.switch_delay_cycles),
        |m, d| l.setup.fig17_config(m, d),
        data::fig17_claims(),
    )
}

fn fig18(l: &Lookup) -> Sweep {
    let pts = l.setup.fig18_points();
    sweep(
        l,
        "Property Cache per switch (at full scale)",
        &pts,
        0,
        |c| c.map_or("inf".to_string(), |mb| format!("{mb} MB")),
        |c| {
            if c.cache_unbounded {
                "unbounded".to_string()
            } else {
                fmt_size(c.cache_bytes)
            }
        },
        |m, c| l.setup.fig18_config(m, c),
        data::fig18_claims(),
    )
}

fn fig22(l: &Lookup) -> Fig22 {
    let topos = l.setup.fig22_points();
    let rows: Vec<Fig22Row> = l
        .setup
        .matrices
        .iter()
        .map(|&m| {
            let su = l.at(m, Mode::Su, 16);
            let runs: Vec<Option<&RunRecord>> = topos
                .iter()
                .map(|&t| l.get(m, Mode::NetSparse, &l.setup.fig22_config(m, t)))
                .collect();
            let base = runs.first().copied().flatten();
            let p7 = data::table7(m);
            Fig22Row {
                matrix: m.name().into(),
                vs_su: runs
                    .iter()
                    .map(|r| su.zip(*r).and_then(|(a, b)| speedup(a, b)))
                    .collect(),
                vs_leaf_spine: runs
                    .iter()
                    .map(|r| {
                        base.zip(*r)
                            .and_then(|(a, b)| ratio(a.time_ps(), b.time_ps()))
                    })
                    .collect(),
                paper_leaf_spine: data::fig12_netsparse(m, 16)
                    .map(|x| x.0)
                    .or(Some(p7.traffic_reduction_vs_su * p7.line_util)),
            }
        })
        .collect();
    let gmean_of = |f: &dyn Fn(&Fig22Row) -> &Vec<Option<f64>>| -> Vec<Option<f64>> {
        (0..topos.len())
            .map(|i| gmean(rows.iter().map(|r| f(r).get(i).copied().flatten())))
            .collect()
    };
    let g = gmean_of(&|r| &r.vs_su);
    let g_ls = gmean_of(&|r| &r.vs_leaf_spine);
    let claims = data::fig22_claims()
        .into_iter()
        .map(|(c, kind)| {
            let ratios = match c.matrix {
                Some(name) => rows
                    .iter()
                    .find(|r| r.matrix == name)
                    .map_or(&[][..], |r| &r.vs_leaf_spine[..]),
                None => &g_ls[..],
            };
            let (network, ours) = claim_network(&topos, kind, ratios);
            Fig22Claim {
                network,
                ours_vs_leaf_spine: ours,
                claim: c,
            }
        })
        .collect();
    Fig22 {
        topologies: topos.iter().map(|t| t.to_string()).collect(),
        rows,
        gmean: g,
        claims,
    }
}

/// What a Figure 22 claim about network `kind` (`None`: every network
/// but leaf-spine, the first of `topos`) is compared with: the network's
/// name and its entry of `ratios` (one per network, its speed ÷
/// leaf-spine's), or the lowest over the others.
fn claim_network(
    topos: &[TopologySpec],
    kind: Option<&str>,
    ratios: &[Option<f64>],
) -> (Option<String>, Option<f64>) {
    match kind {
        Some(k) => match topos.iter().position(|t| t.kind() == k) {
            Some(i) => (Some(topos[i].to_string()), ratios.get(i).copied().flatten()),
            None => (Some(k.to_string()), None),
        },
        None => (
            None,
            ratios.iter().skip(1).flatten().copied().reduce(f64::min),
        ),
    }
}

fn model(l: &Lookup) -> Vec<ModelRow> {
    let mut out = Vec::new();
    let mut per_part: Vec<(&str, Vec<Option<f64>>)> = Vec::new();
    for &m in &l.setup.matrices {
        let pts = l.setup.model_points(m);
        let speedups: Vec<Option<f64>> = pts
            .iter()
            .map(|(_, cfg)| {
                let su = l.get(m, Mode::Su, cfg)?;
                let ns = l.get(m, Mode::NetSparse, cfg)?;
                speedup(su, ns)
            })
            .collect();
        for (i, ((part, _), &s)) in pts.iter().zip(&speedups).enumerate() {
            if per_part.len() <= i {
                per_part.push((part, Vec::new()));
            }
            per_part[i].1.push(s);
            out.push(ModelRow {
                matrix: m.name().into(),
                part: part.to_string(),
                speedup: s,
                change_pct: change(s, speedups[0]),
            });
        }
    }
    let gm: Vec<Option<f64>> = per_part
        .iter()
        .map(|(_, v)| gmean(v.iter().copied()))
        .collect();
    for ((part, _), &g) in per_part.iter().zip(&gm) {
        out.push(ModelRow {
            matrix: "gmean".into(),
            part: part.to_string(),
            speedup: g,
            change_pct: change(g, gm.first().copied().flatten()),
        });
    }
    out
}

/// `v` against `base`, percent.
fn change(v: Option<f64>, base: Option<f64>) -> Option<f64> {
    let (v, b) = (v?, base?);
    (b > 0.0).then(|| (v / b - 1.0) * 100.0)
}

/// The part of a written `report.json` that says how it was made.
#[derive(Deserialize)]
struct Written {
    setup: SetupInfo,
    standins: Vec<StandinRow>,
}

/// The options the `report.json` at `path` was made with, on `base` (which
/// keeps its output directory, threads, jobs, memory limit and stop flag):
/// its scale, sweeps, sections, stand-ins, cluster, seed and routing, and
/// the version of its runs, so that [`super::run`] with `report_only`
/// plans exactly its runs.
pub fn options_of(
    path: &Path,
    base: &super::PaperOptions,
) -> Result<super::PaperOptions, PaperError> {
    let bad = |detail: String| PaperError::Report {
        path: path.display().to_string(),
        detail,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let w: Written = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let matrices = w
        .standins
        .iter()
        .map(|m| super::parse_matrix(&m.matrix))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("standins: {e}")))?;
    let routing = w
        .setup
        .routing
        .parse()
        .map_err(|e| bad(format!("setup.routing: {e}")))?;
    // The users' files come back without their text: nothing is
    // compiled or applied for a report.
    let role = |field: &str, role: &str| {
        crate::programs::Bundled::of_role(role)
            .ok_or_else(|| bad(format!("setup.{field}: no program has the role {role:?}")))
    };
    let mut programs = Vec::new();
    for p in &w.setup.programs {
        let file = crate::programs::UserProgram {
            path: p.file.clone().into(),
            text: String::new(),
            digest: p.digest.clone(),
        };
        programs.push((role("programs", &p.role)?, file));
    }
    let mut commands = Vec::new();
    for c in &w.setup.commands {
        let file = crate::programs::UserCommands {
            path: c.file.clone().into(),
            text: String::new(),
            digest: c.digest.clone(),
        };
        commands.push((role("commands", &c.role)?, file));
    }
    Ok(super::PaperOptions {
        programs,
        commands,
        scale: w.setup.scale,
        quick: w.setup.quick,
        only: w.setup.sections,
        matrices,
        nodes: w.setup.nodes,
        racks: w.setup.racks,
        seed: w.setup.seed,
        routing,
        version: w.setup.version,
        ..base.clone()
    })
}

/// Write `report.md`, `report.json`, `report.csv` and the plots into
/// `out`; returns the files written.
pub fn write(r: &PaperReport, out: &Path) -> Result<Vec<PathBuf>, PaperError> {
    let mut files = Vec::new();
    let plots = plots::draw(r, out)?;
    let mut put = |name: &str, text: String| -> Result<(), PaperError> {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|source| PaperError::Io {
            path: p.display().to_string(),
            source,
        })?;
        files.push(p);
        Ok(())
    };
    put("report.md", render::markdown(r, &plots))?;
    put(
        "report.json",
        serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")),
    )?;
    put("report.csv", render::csv(r))?;
    files.extend(plots.iter().map(|(_, f)| out.join(f)));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A claim about one network is compared with that network's ratio,
    /// not the slowest other one's; a claim about all with the lowest.
    #[test]
    fn fig22_claims_compare_their_own_network() {
        let topos: Vec<TopologySpec> = data::FIG22_TOPOLOGIES
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        // leaf-spine, hyperx, dragonfly: as the committed full report's stokes.
        let stokes = [Some(1.0), Some(1.66), Some(1.28)];
        let (net, v) = claim_network(&topos, Some("hyperx"), &stokes);
        assert_eq!(v, Some(1.66));
        assert!(net.unwrap().starts_with("hyperx"));
        let (net, v) = claim_network(&topos, Some("dragonfly"), &stokes);
        assert_eq!(v, Some(1.28));
        assert!(net.unwrap().starts_with("dragonfly"));
        assert_eq!(claim_network(&topos, None, &stokes), (None, Some(1.28)));
        // A network that was not run: named, with no value.
        let (net, v) = claim_network(&topos[..1], Some("hyperx"), &stokes[..1]);
        assert_eq!((net.as_deref(), v), (Some("hyperx"), None));
        // Every claim of the paper's text names a network the figure runs.
        for (_, kind) in data::fig22_claims() {
            if let Some(k) = kind {
                assert!(topos.iter().any(|t| t.kind() == k), "{k}");
            }
        }
    }
}
