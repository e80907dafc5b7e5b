//! The end-to-end figures of the evaluation, derived from the
//! communication runs Figure 12 already needs (SUOpt, SAOpt and NetSparse
//! at K = 16 and 128) and the compute model of [`crate::sim::compute`]:
//! Figure 13 (strong scaling of 128 nodes over one with SPADE
//! accelerators), Figure 14 (communication ÷ computation of SAOpt and
//! NetSparse), Figure 21 (the same scaling with Sapphire Rapids CPUs, DDR
//! and HBM) and Figure 19 (active nodes over time under NetSparse without
//! computation). This file owns their data, how they are built from the
//! runs, and their Markdown, CSV and SVG.
//!
//! A node's end-to-end time is its communication plus its share of one
//! SpMM iteration (no overlap, the compute model's default figure); the
//! single-node time is the whole matrix on one node; the ideal is the
//! slowest node's computation alone (the paper's dashed lines).

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::data;
use super::plots::keep;
use super::render::times;
use super::report::gmean;
use super::runs::RunRecord;
use super::PaperError;
use crate::sim::compute::{self, ComputeModel};
use crate::sim::matrix::paper::PaperMatrix;
use crate::sim::plot::{bar_chart, line_chart, Line, Series};
use crate::sim::Mode;
use netsparse_externs::Time;

/// Speedups of 128 nodes over one, per communication scheme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Speedups {
    /// With SUOpt.
    pub su: Option<f64>,
    /// With SAOpt.
    pub sa: Option<f64>,
    /// With NetSparse.
    pub netsparse: Option<f64>,
    /// Without communication (the slowest node's computation).
    pub ideal: Option<f64>,
}

/// One matrix at one K.
#[derive(Clone, Debug, Serialize)]
pub struct ScalingRow {
    /// Matrix.
    pub matrix: String,
    /// K.
    pub k: u32,
    /// The speedups.
    pub speedup: Speedups,
    /// Figure 14: the slowest node's communication ÷ computation, SAOpt.
    pub comm_per_comp_sa: Option<f64>,
    /// The same under NetSparse.
    pub comm_per_comp_netsparse: Option<f64>,
}

/// Strong scaling with one compute engine (Figure 13 or 21).
#[derive(Clone, Debug, Serialize)]
pub struct Scaling {
    /// Nodes of the cluster.
    pub nodes: u32,
    /// The compute model (`spade`, `cpu-ddr`, `cpu-hbm`).
    pub compute: String,
    /// Its rates: GFLOP/s and GB/s.
    pub gflops: f64,
    /// Memory bandwidth, GB/s.
    pub gbps: f64,
    /// Per matrix and K.
    pub rows: Vec<ScalingRow>,
    /// Gmeans over every matrix and K.
    pub gmean: Speedups,
    /// The paper's gmeans.
    pub paper: Speedups,
}

/// Figure 19 for one matrix: how many nodes are still communicating.
#[derive(Clone, Debug, Serialize)]
pub struct ActiveNodes {
    /// Matrix.
    pub matrix: String,
    /// The tail node's time, µs.
    pub tail_us: Option<f64>,
    /// The mean fraction of nodes active until the tail finishes (the
    /// area under the curve; 1 = perfectly balanced).
    pub mean_active: Option<f64>,
    /// Fraction of the tail's time by which half the nodes finished.
    pub half_done_at: Option<f64>,
    /// (fraction of the tail's time, active nodes) at each node's finish.
    pub curve: Vec<(f64, u32)>,
}

/// The runs a report section reads, by (matrix, mode, K).
pub trait Runs {
    /// The finished run, if any.
    fn run(&self, m: PaperMatrix, mode: Mode, k: u32) -> Option<&RunRecord>;
}

fn ratio(a: Time, b: Time) -> Option<f64> {
    (b.as_ps() > 0).then(|| a.as_ps() as f64 / b.as_ps() as f64)
}

/// The end-to-end combination of one run with `model` at `k`: (single
/// node, combined), or `None` for a run without per-node work (a cache
/// entry older than the field).
fn combine(r: &RunRecord, model: ComputeModel, k: u32) -> Option<(Time, compute::Combined)> {
    let rates = model.rates()?;
    let total: (u64, u64) = r
        .nodes
        .iter()
        .fold((0, 0), |(z, w), n| (z + n.nnz, w + n.rows));
    if total.0 == 0 {
        return None;
    }
    let comp: Vec<Time> = r
        .nodes
        .iter()
        .map(|n| rates.spmm_time(n.nnz, n.rows, k))
        .collect();
    let comm = r
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (i, Time::from_ps(n.time_ps)));
    Some((
        rates.spmm_time(total.0, total.1, k),
        compute::combine(comm, &comp),
    ))
}

/// Strong scaling with `model` over the matrices and Figure 13's Ks.
pub fn scaling(
    runs: &dyn Runs,
    nodes: u32,
    matrices: &[PaperMatrix],
    model: ComputeModel,
    paper: Speedups,
) -> Scaling {
    let rates = model.rates().unwrap_or(compute::Rates {
        gflops: 0.0,
        gbps: 0.0,
    });
    let mut rows = Vec::new();
    for k in data::E2E_KS {
        for &m in matrices {
            let at = |mode| runs.run(m, mode, k).and_then(|r| combine(r, model, k));
            let (su, sa, ns) = (at(Mode::Su), at(Mode::Sa), at(Mode::NetSparse));
            let speed =
                |x: Option<(Time, compute::Combined)>| x.and_then(|(s, c)| ratio(s, c.end_to_end));
            let ideal = ns.or(su).and_then(|(s, c)| ratio(s, c.comp_max));
            let split = |x: Option<(Time, compute::Combined)>| {
                x.and_then(|(_, c)| ratio(c.slowest.0, c.slowest.1))
            };
            rows.push(ScalingRow {
                matrix: m.name().into(),
                k,
                speedup: Speedups {
                    su: speed(su),
                    sa: speed(sa),
                    netsparse: speed(ns),
                    ideal,
                },
                comm_per_comp_sa: split(sa),
                comm_per_comp_netsparse: split(ns),
            });
        }
    }
    let g = |f: fn(&Speedups) -> Option<f64>| gmean(rows.iter().map(|r| f(&r.speedup)));
    Scaling {
        nodes,
        compute: model.name().into(),
        gflops: rates.gflops,
        gbps: rates.gbps,
        gmean: Speedups {
            su: g(|s| s.su),
            sa: g(|s| s.sa),
            netsparse: g(|s| s.netsparse),
            ideal: g(|s| s.ideal),
        },
        paper,
        rows,
    }
}

/// Figure 19: active nodes over time under NetSparse at K = 16.
pub fn active_nodes(runs: &dyn Runs, matrices: &[PaperMatrix]) -> Vec<ActiveNodes> {
    matrices
        .iter()
        .map(|&m| {
            let r = runs.run(m, Mode::NetSparse, 16);
            let mut t: Vec<u64> =
                r.map_or_else(Vec::new, |r| r.nodes.iter().map(|n| n.time_ps).collect());
            t.sort_unstable();
            let tail = t.last().copied().unwrap_or(0);
            let n = t.len() as u32;
            let frac = |x: u64| {
                if tail == 0 {
                    0.0
                } else {
                    x as f64 / tail as f64
                }
            };
            let mut curve = vec![(0.0, n)];
            for (i, &x) in t.iter().enumerate() {
                curve.push((frac(x), n - 1 - i as u32));
            }
            ActiveNodes {
                matrix: m.name().into(),
                tail_us: (tail > 0).then(|| tail as f64 / 1e6),
                mean_active: (tail > 0 && n > 0)
                    .then(|| t.iter().map(|&x| frac(x)).sum::<f64>() / f64::from(n)),
                half_done_at: (tail > 0 && n > 0).then(|| frac(t[(t.len() - 1) / 2])),
                curve,
            }
        })
        .collect()
}

/// The Markdown of one scaling figure.
pub fn markdown_scaling(s: &mut String, title: &str, sc: &Scaling, plot: Option<&str>) {
    let _ = writeln!(s, "## {title}\n");
    let _ = writeln!(
        s,
        "End-to-end speedup of {} nodes over one for one SpMM iteration, with `{}` computing \
         ({:.0} GFLOP/s, {:.0} GB/s per node; see `sim::compute`), no overlap of communication \
         and computation. Gmeans over every matrix at K = 16 and 128, ours [paper].\n",
        sc.nodes, sc.compute, sc.gflops, sc.gbps
    );
    let _ = writeln!(s, "| matrix | K | SUOpt | SAOpt | NetSparse | no communication | comm ÷ comp SAOpt | comm ÷ comp NetSparse |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    let two = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.2}"));
    for r in &sc.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.matrix,
            r.k,
            times(r.speedup.su),
            times(r.speedup.sa),
            times(r.speedup.netsparse),
            times(r.speedup.ideal),
            two(r.comm_per_comp_sa),
            two(r.comm_per_comp_netsparse)
        );
    }
    let pair = |o: Option<f64>, p: Option<f64>| format!("{} [{}]", times(o), times(p));
    let _ = writeln!(
        s,
        "| **gmean** | | {} | {} | {} | {} | | |\n",
        pair(sc.gmean.su, sc.paper.su),
        pair(sc.gmean.sa, sc.paper.sa),
        pair(sc.gmean.netsparse, sc.paper.netsparse),
        pair(sc.gmean.ideal, sc.paper.ideal)
    );
    if let Some(p) = plot {
        let _ = writeln!(s, "![{p}]({p}.svg)\n");
    }
}

/// The Markdown of Figure 19.
pub fn markdown_active(s: &mut String, rows: &[ActiveNodes], plot: Option<&str>) {
    let _ = writeln!(
        s,
        "## Figure 19: active nodes over time (NetSparse, K = 16, no computation)\n"
    );
    let _ = writeln!(
        s,
        "How many nodes are still gathering as the run goes on, time relative to the tail \
         node's. The paper: \"almost all matrices (except queen) have significant imbalance \
         in communication\" (§9.4); it prints no values.\n"
    );
    let _ = writeln!(
        s,
        "| matrix | tail | mean active fraction | half the nodes done at |"
    );
    let _ = writeln!(s, "|---|---|---|---|");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            r.matrix,
            r.tail_us.map_or("–".into(), |v| format!("{v:.1} µs")),
            r.mean_active
                .map_or("–".into(), |v| format!("{:.0}%", 100.0 * v)),
            r.half_done_at
                .map_or("–".into(), |v| format!("{:.0}% of the tail", 100.0 * v))
        );
    }
    s.push('\n');
    if let Some(p) = plot {
        let _ = writeln!(s, "![{p}]({p}.svg)\n");
    }
}

/// A CSV row writer: (section, matrix, k, point, metric, ours, paper).
pub type CsvRow<'a> = dyn FnMut(&str, &str, &str, &str, &str, Option<f64>, Option<f64>) + 'a;

/// CSV rows of a scaling figure: (section, matrix, k, point, metric, ours, paper).
pub fn csv_scaling(section: &str, sc: &Scaling, row: &mut CsvRow<'_>) {
    for r in &sc.rows {
        let k = r.k.to_string();
        for (what, v) in [
            ("su", r.speedup.su),
            ("sa", r.speedup.sa),
            ("netsparse", r.speedup.netsparse),
            ("ideal", r.speedup.ideal),
        ] {
            row(
                section,
                &r.matrix,
                &k,
                &sc.compute,
                &format!("{what}_vs_single_node"),
                v,
                None,
            );
        }
        row(
            section,
            &r.matrix,
            &k,
            &sc.compute,
            "comm_per_comp_sa",
            r.comm_per_comp_sa,
            None,
        );
        row(
            section,
            &r.matrix,
            &k,
            &sc.compute,
            "comm_per_comp_netsparse",
            r.comm_per_comp_netsparse,
            None,
        );
    }
    for (what, o, p) in [
        ("su", sc.gmean.su, sc.paper.su),
        ("sa", sc.gmean.sa, sc.paper.sa),
        ("netsparse", sc.gmean.netsparse, sc.paper.netsparse),
        ("ideal", sc.gmean.ideal, sc.paper.ideal),
    ] {
        row(
            section,
            "gmean",
            "16+128",
            &sc.compute,
            &format!("{what}_vs_single_node"),
            o,
            p,
        );
    }
}

/// Draw a scaling figure's bars; `Ok(false)` when there is nothing to draw.
pub fn plot_scaling(path: &Path, title: &str, sc: &Scaling) -> Result<bool, PaperError> {
    let cats: Vec<String> = sc
        .rows
        .iter()
        .map(|r| format!("{} K={}", r.matrix, r.k))
        .chain(["gmean".to_string()])
        .collect();
    let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let series: Vec<Series> = [
        (
            "SUOpt",
            (|s: &Speedups| s.su) as fn(&Speedups) -> Option<f64>,
        ),
        ("SAOpt", |s| s.sa),
        ("NetSparse", |s| s.netsparse),
        ("no communication", |s| s.ideal),
    ]
    .into_iter()
    .map(|(name, f)| Series {
        name: name.into(),
        values: sc
            .rows
            .iter()
            .map(|r| nan(f(&r.speedup)))
            .chain([nan(f(&sc.gmean))])
            .collect(),
    })
    .collect();
    keep(bar_chart(
        path,
        title,
        "speedup over one node",
        &cats,
        &series,
    ))
}

/// Draw Figure 19's curves.
pub fn plot_active(path: &Path, rows: &[ActiveNodes]) -> Result<bool, PaperError> {
    let lines: Vec<Line> = rows
        .iter()
        .filter(|r| r.curve.len() > 1)
        .map(|r| Line {
            name: r.matrix.clone(),
            points: r.curve.iter().map(|&(x, n)| (x, f64::from(n))).collect(),
        })
        .collect();
    keep(line_chart(
        path,
        "Figure 19: nodes still gathering (NetSparse, K = 16)",
        "time / tail node's time",
        "active nodes",
        &lines,
        false,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paper::runs::{NodeRecord, TailRecord};

    /// Two nodes, each owning 10,000 rows with 1,000,000 nonzeros.
    fn record(comm_ps: [u64; 2]) -> RunRecord {
        RunRecord {
            nodes: comm_ps
                .iter()
                .map(|&t| NodeRecord {
                    time_ps: t,
                    rx_bytes: 0,
                    prs: None,
                    nnz: 1_000_000,
                    rows: 10_000,
                })
                .collect(),
            tail: TailRecord::default(),
            cache_hit_rate_all: None,
            verification: None,
            matrix_rows: 20_000,
            matrix_nnz: 2_000_000,
            wall_secs: 0.0,
            events: None,
            peak_rss: None,
        }
    }

    struct Fake(RunRecord, RunRecord);
    impl Runs for Fake {
        fn run(&self, _: PaperMatrix, mode: Mode, _: u32) -> Option<&RunRecord> {
            match mode {
                Mode::Su => Some(&self.0),
                Mode::NetSparse => Some(&self.1),
                _ => None,
            }
        }
    }

    #[test]
    fn scaling_matches_a_hand_computation() {
        // SPADE at K = 16: one node's share (1e6 nonzeros, 1e4 rows) takes
        // 90.9 us (see sim::compute's test); the whole matrix on one node
        // 2e6 * 72 + 2e4 * 72 = 145,440,000 B at 800 GB/s = 181.8 us.
        let su = record([300_000_000, 100_000_000]); // 300 us, 100 us
        let ns = record([9_100_000, 1_000_000]); // 9.1 us, 1 us
        let sc = scaling(
            &Fake(su, ns),
            2,
            &[PaperMatrix::Queen],
            ComputeModel::Spade,
            data::FIG13_PAPER,
        );
        let r = &sc.rows[0];
        assert_eq!(r.k, 16);
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        // SUOpt: slowest node 300 + 90.9 us.
        assert!(close(r.speedup.su, 181.8 / 390.9), "{:?}", r.speedup);
        // NetSparse: 9.1 + 90.9 = 100 us.
        assert!(close(r.speedup.netsparse, 1.818), "{:?}", r.speedup);
        // Ideal: computation alone, 181.8 / 90.9 = 2.
        assert!(close(r.speedup.ideal, 2.0), "{:?}", r.speedup);
        assert!(close(r.comm_per_comp_netsparse, 9.1 / 90.9));
        assert_eq!(r.speedup.sa, None);
        assert_eq!(sc.gmean.sa, None);
        assert!(sc.gmean.netsparse.is_some());
        // Records from before the per-node work was kept give no figure.
        let mut old = record([1, 1]);
        for n in &mut old.nodes {
            n.nnz = 0;
            n.rows = 0;
        }
        let sc = scaling(
            &Fake(old.clone(), old),
            2,
            &[PaperMatrix::Queen],
            ComputeModel::Spade,
            data::FIG13_PAPER,
        );
        assert_eq!(sc.rows[0].speedup, Speedups::default());
    }

    #[test]
    fn active_nodes_count_down_at_each_finish() {
        let ns = record([40, 10]);
        let a = &active_nodes(&Fake(ns.clone(), ns), &[PaperMatrix::Uk])[0];
        assert_eq!(a.curve, vec![(0.0, 2), (0.25, 1), (1.0, 0)]);
        assert_eq!(a.mean_active, Some(0.625));
        assert_eq!(a.half_done_at, Some(0.25));
        assert_eq!(a.tail_us, Some(40.0 / 1e6));
    }
}
