//! The report's SVG figures, drawn with the simulator's chart helpers
//! ([`crate::sim::plot`]): Figure 12 per K (NetSparse and SAOpt vs SUOpt
//! per matrix and their gmean, with the paper's bars where it prints
//! them), Table 7's traffic reduction ours beside the paper's, Table 8
//! per matrix (speedup per step and K, ours beside the paper's), and the
//! three sweeps (speedup over the baseline point per matrix). A chart with
//! nothing to show (no finished run) is skipped, not an error.

use std::path::Path;

use super::report::PaperReport;
use super::PaperError;
use crate::sim::plot::{bar_chart, PlotError, Series};

fn nan(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

/// Draw one chart; `Ok(false)` when it had nothing to show.
pub(super) fn keep(r: Result<(), PlotError>) -> Result<bool, PaperError> {
    match r {
        Ok(()) => Ok(true),
        Err(PlotError::Empty(_)) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Draw every chart the report has data for into `out`; returns
/// (section, file name) pairs for the Markdown.
pub fn draw(r: &PaperReport, out: &Path) -> Result<Vec<(String, String)>, PaperError> {
    let mut files = Vec::new();
    let mut add = |name: String, drawn: bool| {
        if drawn {
            files.push((name.clone(), format!("{name}.svg")));
        }
    };
    if let Some(f) = &r.fig12 {
        for b in &f.per_k {
            let mut cats: Vec<String> = b.rows.iter().map(|x| x.matrix.clone()).collect();
            cats.push("gmean".into());
            let mut ns: Vec<f64> = b.rows.iter().map(|x| nan(x.netsparse)).collect();
            ns.push(nan(b.gmean_netsparse));
            let mut sa: Vec<f64> = b.rows.iter().map(|x| nan(x.sa)).collect();
            sa.push(nan(b.gmean_sa));
            let mut paper: Vec<f64> = b
                .rows
                .iter()
                .map(|x| nan(x.paper_netsparse.or(x.paper_implied)))
                .collect();
            paper.push(f64::NAN);
            let name = format!("fig12-k{}", b.k);
            let drawn = keep(bar_chart(
                &out.join(format!("{name}.svg")),
                &format!("Figure 12, K = {}: communication speedup over SUOpt", b.k),
                "speedup over SUOpt",
                &cats,
                &[
                    Series {
                        name: "NetSparse (ours)".into(),
                        values: ns,
                    },
                    Series {
                        name: "SAOpt (ours)".into(),
                        values: sa,
                    },
                    Series {
                        name: "NetSparse (paper)".into(),
                        values: paper,
                    },
                ],
            ))?;
            add(name, drawn);
        }
    }
    if let Some(t) = &r.table7 {
        let cats: Vec<String> = t.iter().map(|x| x.matrix.clone()).collect();
        let drawn = keep(bar_chart(
            &out.join("table7.svg"),
            "Table 7: tail-node traffic reduction vs SUOpt (K = 16)",
            "traffic reduction",
            &cats,
            &[
                Series {
                    name: "ours".into(),
                    values: t
                        .iter()
                        .map(|x| nan(x.ours.traffic_reduction_vs_su))
                        .collect(),
                },
                Series {
                    name: "paper".into(),
                    values: t.iter().map(|x| x.paper.traffic_reduction_vs_su).collect(),
                },
            ],
        ))?;
        add("table7".into(), drawn);
    }
    if let Some(t) = &r.table8 {
        let mut mats: Vec<&str> = t.iter().map(|x| x.matrix.as_str()).collect();
        mats.dedup();
        for m in mats {
            let rows: Vec<_> = t.iter().filter(|x| x.matrix == m).collect();
            let mut steps: Vec<String> = Vec::new();
            for x in &rows {
                if !steps.contains(&x.step) {
                    steps.push(x.step.clone());
                }
            }
            let mut series = Vec::new();
            for k in super::data::KS {
                let cell = |s: &String| rows.iter().find(|x| x.k == k && &x.step == s);
                series.push(Series {
                    name: format!("K={k} ours"),
                    values: steps
                        .iter()
                        .map(|s| nan(cell(s).and_then(|x| x.speedup)))
                        .collect(),
                });
                series.push(Series {
                    name: format!("K={k} paper"),
                    values: steps
                        .iter()
                        .map(|s| nan(cell(s).and_then(|x| x.paper.map(|p| p.speedup))))
                        .collect(),
                });
            }
            let name = format!("table8-{m}");
            let drawn = keep(bar_chart(
                &out.join(format!("{name}.svg")),
                &format!("Table 8, {m}: speedup over SUOpt per ablation step"),
                "speedup over SUOpt",
                &steps,
                &series,
            ))?;
            add(name, drawn);
        }
    }
    for (name, title, sw) in [
        ("fig15", "Figure 15: speedup over a 16k RIG batch", &r.fig15),
        (
            "fig17",
            "Figure 17: speedup over no concatenation",
            &r.fig17,
        ),
        (
            "fig18",
            "Figure 18: speedup over no Property Cache",
            &r.fig18,
        ),
    ] {
        let Some(sw) = sw else { continue };
        let series: Vec<Series> = sw
            .rows
            .iter()
            .map(|row| Series {
                name: row.matrix.clone(),
                values: row.speedup.iter().map(|&v| nan(v)).collect(),
            })
            .collect();
        let drawn = keep(bar_chart(
            &out.join(format!("{name}.svg")),
            title,
            &format!("speedup over {}", sw.baseline),
            &sw.points,
            &series,
        ))?;
        add(name.into(), drawn);
    }
    if let Some(sc) = &r.fig13 {
        let drawn = super::e2e::plot_scaling(
            &out.join("fig13.svg"),
            "Figure 13: 128 SPADE nodes over one (end to end)",
            sc,
        )?;
        add("fig13".into(), drawn);
    }
    if let Some(rows) = &r.fig19 {
        add(
            "fig19".into(),
            super::e2e::plot_active(&out.join("fig19.svg"), rows)?,
        );
    }
    for sc in r.fig21.iter().flatten() {
        let name = format!("fig21-{}", sc.compute);
        let drawn = super::e2e::plot_scaling(
            &out.join(format!("{name}.svg")),
            &format!(
                "Figure 21: 128 CPU nodes ({}) over one (end to end)",
                sc.compute
            ),
            sc,
        )?;
        add(name, drawn);
    }
    if let Some(fg) = &r.fig22 {
        let mut cats: Vec<String> = fg.rows.iter().map(|x| x.matrix.clone()).collect();
        cats.push("gmean".into());
        let series: Vec<Series> = fg
            .topologies
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut values: Vec<f64> = fg
                    .rows
                    .iter()
                    .map(|x| nan(x.vs_su.get(i).copied().flatten()))
                    .collect();
                values.push(nan(fg.gmean.get(i).copied().flatten()));
                Series {
                    name: t.split(':').next().unwrap_or(t).to_string(),
                    values,
                }
            })
            .collect();
        let drawn = keep(bar_chart(
            &out.join("fig22.svg"),
            "Figure 22, K = 16: NetSparse speedup over SUOpt per network",
            "speedup over SUOpt",
            &cats,
            &series,
        ))?;
        add("fig22".into(), drawn);
    }
    Ok(files)
}
