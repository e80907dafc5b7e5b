//! SVG plots of simulation results (plotters): speedup per mode over SU,
//! ablation bars (Table 8 style), parameter sweep lines (Figures 15, 17
//! and 18 style) and the host models' kernel/gather timelines.
//!
//! Bar charts are grouped (one group per category, one bar per series) on a
//! logarithmic y axis, since speedups and traffic reductions span orders of
//! magnitude. Line charts have a linear y axis and optionally a logarithmic
//! x axis. Non-finite and non-positive values are left out of log axes.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use thiserror::Error;

use super::report::Report;

/// A plot could not be drawn.
#[derive(Debug, Error)]
pub enum PlotError {
    /// No finite positive value to plot.
    #[error("{0}: nothing to plot (no finite positive values)")]
    Empty(String),
    /// The drawing backend failed (I/O, fonts).
    #[error("drawing {path}: {message}")]
    Draw {
        /// The output file.
        path: String,
        /// The backend's message.
        message: String,
    },
}

/// One named series of values.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// One value per category (bar charts).
    pub values: Vec<f64>,
}

/// One named line of `(x, y)` points.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Legend name.
    pub name: String,
    /// Points, in x order.
    pub points: Vec<(f64, f64)>,
}

const SIZE: (u32, u32) = (900, 540);

fn color(i: usize) -> RGBColor {
    const P: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    P[i % P.len()]
}

fn draw_err(path: &Path) -> impl Fn(String) -> PlotError + '_ {
    move |message| PlotError::Draw {
        path: path.display().to_string(),
        message,
    }
}

/// A grouped bar chart on a log y axis, written as SVG to `path`.
pub fn bar_chart(
    path: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Series],
) -> Result<(), PlotError> {
    let good = |v: f64| v.is_finite() && v > 0.0;
    let vals: Vec<f64> = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| good(*v))
        .collect();
    if vals.is_empty() || categories.is_empty() {
        return Err(PlotError::Empty(title.to_string()));
    }
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let y_lo = 10f64.powf((lo.log10() - 0.3).floor()).min(0.5);
    let y_hi = 10f64.powf((hi.log10() + 0.3).ceil()).max(2.0);
    let n = categories.len();
    let err = draw_err(path);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, (y_lo..y_hi).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_desc)
        .y_label_formatter(&|y| format!("{y}"))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    // Category names centred under their groups.
    let label_style =
        TextStyle::from(("sans-serif", 15).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, name) in categories.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y_lo));
        root.draw(&Text::new(name.clone(), (px, py + 8), label_style.clone()))
            .map_err(|e| err(e.to_string()))?;
    }
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    for (si, s) in series.iter().enumerate() {
        let c = color(si);
        let bars: Vec<Rectangle<(f64, f64)>> = s
            .values
            .iter()
            .enumerate()
            .filter(|&(i, v)| i < n && good(*v))
            .map(|(i, &v)| {
                let x0 = i as f64 + 0.1 + si as f64 * width;
                Rectangle::new([(x0, y_lo), (x0 + width * 0.92, v)], c.filled())
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| err(e.to_string()))?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// A line chart (linear y; log10 x if `log_x`), written as SVG to `path`.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    log_x: bool,
) -> Result<(), PlotError> {
    let fx = |x: f64| if log_x { x.log10() } else { x };
    let pts: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|l| l.points.iter().copied())
        .filter(|&(x, y)| x.is_finite() && y.is_finite() && (!log_x || x > 0.0))
        .map(|(x, y)| (fx(x), y))
        .collect();
    if pts.is_empty() {
        return Err(PlotError::Empty(title.to_string()));
    }
    let (mut x0, mut x1) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let (mut y0, mut y1) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    if x1 - x0 < 1e-12 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = ((y1 - y0) * 0.1).max(1e-3);
    y0 = (y0 - pad).min(0.0);
    y1 += pad;
    let err = draw_err(path);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&move |x| {
            let v = if log_x { 10f64.powf(*x) } else { *x };
            if (v - v.round()).abs() < 1e-6 {
                format!("{}", v.round())
            } else {
                format!("{v:.3}")
            }
        })
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (li, l) in lines.iter().enumerate() {
        let c = color(li);
        let p: Vec<(f64, f64)> = l
            .points
            .iter()
            .copied()
            .filter(|&(x, y)| x.is_finite() && y.is_finite() && (!log_x || x > 0.0))
            .map(|(x, y)| (fx(x), y))
            .collect();
        chart
            .draw_series(LineSeries::new(p.clone(), c.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(l.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .draw_series(p.into_iter().map(|pt| Circle::new(pt, 3, c.filled())))
            .map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// Figure 12 style: communication speedup over SU of every mode of every
/// report (one group per matrix, one bar per mode).
pub fn speedup_chart(path: &Path, reports: &[&Report]) -> Result<(), PlotError> {
    let categories: Vec<String> = reports.iter().map(|r| r.matrix.name.clone()).collect();
    let mut modes: Vec<String> = Vec::new();
    for r in reports {
        for m in &r.modes {
            if !modes.contains(&m.mode) {
                modes.push(m.mode.clone());
            }
        }
    }
    let series: Vec<Series> = modes
        .iter()
        .map(|name| Series {
            name: name.clone(),
            values: reports
                .iter()
                .map(|r| {
                    r.mode(name)
                        .and_then(|m| m.speedup_vs_su)
                        .unwrap_or(f64::NAN)
                })
                .collect(),
        })
        .collect();
    let k = reports.first().map_or(0, |r| r.config.k);
    bar_chart(
        path,
        &format!("Communication speedup over SUOpt (K = {k})"),
        "speedup over SU (log)",
        &categories,
        &series,
    )
}

/// Table 8 style: one group per ablation step, one bar per metric
/// (e.g. `Spd` and `-Trfc`).
pub fn ablation_chart(
    path: &Path,
    title: &str,
    steps: &[String],
    metrics: &[Series],
) -> Result<(), PlotError> {
    bar_chart(path, title, "x over SU (log)", steps, metrics)
}

/// Table 8 style from one report: one group per NetSparse ablation step it
/// ran (in order), bars for the speedup and the tail node's traffic
/// reduction over SUOpt. `Err(PlotError::Empty)` without SU or ablation modes.
pub fn ablation_report_chart(path: &Path, report: &Report) -> Result<(), PlotError> {
    let steps: Vec<&super::report::ModeResult> = super::Mode::ABLATION
        .iter()
        .filter_map(|m| report.mode(m.name()))
        .collect();
    let names: Vec<String> = super::Mode::ABLATION
        .iter()
        .filter(|m| report.mode(m.name()).is_some())
        .map(|m| m.table8_name().to_string())
        .collect();
    let spd = Series {
        name: "Spd (speedup vs SU)".into(),
        values: steps
            .iter()
            .map(|m| m.speedup_vs_su.unwrap_or(f64::NAN))
            .collect(),
    };
    let trfc = Series {
        name: "-Trfc (tail traffic reduction vs SU)".into(),
        values: steps
            .iter()
            .map(|m| m.traffic_reduction_vs_su.unwrap_or(f64::NAN))
            .collect(),
    };
    ablation_chart(
        path,
        &format!(
            "Ablation vs SUOpt: {} (K = {})",
            report.matrix.name, report.config.k
        ),
        &names,
        &[spd, trfc],
    )
}

/// Figures 15, 17 and 18 style: for each mode, the speedup of every sweep
/// point over the first one (`relative`), or over SUOpt of the same point.
/// `values` are the swept values as given (points whose value is not a
/// number, e.g. `unbounded`, are left out). A log x axis when the values
/// span two decades or more.
pub fn sweep_chart(
    path: &Path,
    key: &str,
    values: &[String],
    reports: &[Report],
    modes: &[super::Mode],
    relative: bool,
) -> Result<(), PlotError> {
    let xs: Vec<Option<f64>> = values
        .iter()
        .map(|v| v.replace('_', "").parse::<f64>().ok())
        .collect();
    let mut lines = Vec::new();
    for mode in modes {
        let base = reports
            .first()
            .and_then(|r| r.mode(mode.name()))
            .map(|m| m.time().as_ps() as f64);
        let points = reports
            .iter()
            .zip(&xs)
            .filter_map(|(r, x)| {
                let m = r.mode(mode.name())?;
                let y = if relative {
                    let t = m.time().as_ps() as f64;
                    (t > 0.0).then(|| base.unwrap_or(f64::NAN) / t)?
                } else {
                    m.speedup_vs_su?
                };
                Some(((*x)?, y))
            })
            .collect();
        lines.push(Line {
            name: mode.name().to_string(),
            points,
        });
    }
    let finite: Vec<f64> = xs.iter().flatten().copied().filter(|x| *x > 0.0).collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log_x = finite.len() == xs.len() && lo > 0.0 && hi / lo >= 100.0;
    let (title, y) = if relative {
        (
            format!(
                "Speedup vs {key} = {} (first sweep point)",
                values.first().map_or("", String::as_str)
            ),
            "speedup over the first point",
        )
    } else {
        (format!("Speedup over SUOpt vs {key}"), "speedup over SU")
    };
    line_chart(path, &title, key, y, &lines, log_x)
}

/// The host models' timelines (`host.svg`): for every mode of every report
/// with a `host` block, one row for its tail node — the kernel from 0, the
/// gather (after the kernel for post-at-zero, from its first firing for
/// triggered) and the end-to-end time — so a sweep over `host-model` shows
/// post-at-zero and triggered one above the other.
pub fn host_chart(path: &Path, reports: &[Report]) -> Result<(), PlotError> {
    use super::hostmodel::HostModel;
    let us = |t: netsparse_externs::Time| t.as_ps() as f64 / 1e6;
    // (label, compute, gather start, gather end, end-to-end) in µs.
    let mut rows: Vec<(String, f64, f64, f64, f64)> = Vec::new();
    for r in reports {
        for m in &r.modes {
            let Some(h) = &m.host else { continue };
            let (start, end) = match h.model {
                HostModel::PostAtZero => (us(h.compute), us(h.compute + h.communication)),
                HostModel::Triggered => {
                    let n = h.nodes.get(h.tail as usize).copied().unwrap_or_default();
                    (us(n.comm_start.unwrap_or_default()), us(n.comm_end))
                }
            };
            let label = match h.model {
                HostModel::PostAtZero => format!("{} post-at-zero", m.mode),
                HostModel::Triggered => {
                    format!("{} triggered ({} nnz chunks)", m.mode, h.chunk_nnz)
                }
            };
            rows.push((label, us(h.compute), start, end, us(h.end_to_end)));
        }
    }
    let x_max = rows.iter().map(|r| r.4.max(r.3)).fold(0.0, f64::max);
    if rows.is_empty() || !(x_max.is_finite() && x_max > 0.0) {
        return Err(PlotError::Empty("host model timelines".into()));
    }
    let n = rows.len();
    let err = draw_err(path);
    let root = SVGBackend::new(path, (SIZE.0, 140 + 70 * n as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "One SpMM iteration: kernel and gather on the tail node",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(12)
        .build_cartesian_2d(0f64..x_max * 1.05, 0f64..n as f64)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("simulated time (µs)")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let (kc, gc) = (color(0), color(1));
    let y = |i: usize| (n - 1 - i) as f64;
    chart
        .draw_series(
            rows.iter()
                .enumerate()
                .map(|(i, r)| Rectangle::new([(0.0, y(i) + 0.55), (r.1, y(i) + 0.8)], kc.filled())),
        )
        .map_err(|e| err(e.to_string()))?
        .label("kernel (computation)")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], kc.filled()));
    chart
        .draw_series(
            rows.iter()
                .enumerate()
                .map(|(i, r)| Rectangle::new([(r.2, y(i) + 0.25), (r.3, y(i) + 0.5)], gc.filled())),
        )
        .map_err(|e| err(e.to_string()))?
        .label("gather (first command to last completion)")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], gc.filled()));
    chart
        .draw_series(rows.iter().enumerate().map(|(i, r)| {
            PathElement::new(
                vec![(r.4, y(i) + 0.1), (r.4, y(i) + 0.95)],
                BLACK.stroke_width(2),
            )
        }))
        .map_err(|e| err(e.to_string()))?
        .label("end-to-end")
        .legend(|(x, y)| PathElement::new(vec![(x + 6, y - 6), (x + 6, y + 6)], BLACK));
    let style =
        TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Left, VPos::Top));
    for (i, r) in rows.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(0.0, y(i) + 1.0));
        let text = format!(
            "{}: end-to-end {:.1} µs (kernel {:.1}, gather {:.1})",
            r.0,
            r.4,
            r.1,
            r.3 - r.2
        );
        root.draw(&Text::new(text, (px + 4, py + 2), style.clone()))
            .map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
