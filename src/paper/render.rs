//! Rendering the evaluation's report: [`markdown`] (the `report.md` text:
//! a summary, then one section per table and figure with "ours \[paper\]"
//! cells and the plots, then every run) and [`csv`] (one row per compared
//! value). The data come from [`super::report::build`].

use std::fmt::Write as _;

use super::data;
use super::gib;
use super::report::PaperReport;
use crate::sim::Mode;

/// Bytes as "0", "N KiB" or "N MiB".
pub fn fmt_size(b: u64) -> String {
    if b == 0 {
        "0".into()
    } else if b % (1 << 20) == 0 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

/// A speedup as "12.3x" (3 significant digits), "–" when missing.
pub(super) fn times(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| {
        if v >= 100.0 {
            format!("{v:.0}x")
        } else if v >= 10.0 {
            format!("{v:.1}x")
        } else {
            format!("{v:.2}x")
        }
    })
}

fn pc(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.1}%", 100.0 * v))
}

fn num(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.1}"))
}

/// "ours [paper]".
fn pair(ours: String, paper: String) -> String {
    format!("{ours} [{paper}]")
}

fn table(s: &mut String, head: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(s, "| {} |", head.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(head.len()));
    for r in rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s.push('\n');
}

/// The report as Markdown; `plots` are the SVG files by section name.
pub fn markdown(r: &PaperReport, plots: &[(String, String)]) -> String {
    let mut s = String::new();
    let st = &r.setup;
    let su = &r.summary;
    let _ = writeln!(s, "# NetSparse evaluation on the paper's stand-ins\n");
    let _ = writeln!(
        s,
        "Made by `netsparse paper` ({}) at 1/{} of the paper's matrix sizes on {} nodes in {} racks \
         (Table 5's cluster), seed {}{}. Each cell reads **ours [paper]**; \"–\" marks a value the \
         paper does not print or a run that has not finished.\n",
        st.version,
        st.scale,
        st.nodes,
        st.racks,
        st.seed,
        if st.quick { ", `--quick` (fewer sweep points)" } else { "" }
    );
    let run_secs: f64 = r
        .runs
        .iter()
        .filter(|x| x.finished)
        .map(|x| x.wall_secs)
        .sum();
    if su.report_only {
        let _ = writeln!(
            s,
            "Runs: {} planned, all from the cache; this report was rebuilt from them by \
             `netsparse paper --report-only` ({}), which executed nothing. The runs' own wall \
             times (in the Runs table) sum to {run_secs:.1} s.\n",
            su.runs_planned,
            st.rendered_by.as_deref().unwrap_or("?"),
        );
    } else {
        let _ = writeln!(
            s,
            "Runs: {} planned, {} executed now, {} from the cache, {} missing{}; wall time {:.1} s \
             (the runs' own wall times sum to {run_secs:.1} s); peak memory {} (estimated {}, \
             limit {}).\n",
            su.runs_planned,
            su.runs_executed,
            su.runs_cached,
            su.runs_missing,
            if su.interrupted {
                " (interrupted: run the same command again to resume)"
            } else {
                ""
            },
            su.wall_secs,
            su.peak_rss.map_or("?".to_string(), gib),
            gib(su.peak_estimate()),
            gib(su.memory_limit)
        );
    }
    let _ = writeln!(
        s,
        "Scaled parameters: RIG batch {} (the paper's 32k/8k ÷ {}); Property Cache {} per switch \
         (32 MB ÷ {}, rounded to a size the cache takes); leaf-spine routing `{}`. \
         Everything else is Table 5's.\n",
        st.rig_batch
            .iter()
            .map(|(m, b)| format!("{m} {b}"))
            .collect::<Vec<_>>()
            .join(", "),
        st.scale,
        fmt_size(st.cache_bytes),
        st.scale,
        st.routing
    );
    for p in &st.programs {
        let _ = writeln!(
            s,
            "Users' programs: the {} program is `{}` (digest {}) in place of the bundled `{}`.\n",
            p.role, p.file, p.digest, p.bundled
        );
    }
    for c in &st.commands {
        let _ = writeln!(
            s,
            "Users' commands: `{}` (digest {}) on every device that runs the {} program, after the simulator's control plane.\n",
            c.file, c.digest, c.role
        );
    }
    let verified = r.runs.iter().filter(|x| x.finished && x.verified).count();
    if su.failed.is_empty() {
        let _ = writeln!(
            s,
            "Verification: every finished run checked every gathered property ({verified} runs passed).\n"
        );
    } else {
        let _ = writeln!(
            s,
            "Verification: **FAILED** in {}: {}.\n",
            su.failed.len(),
            su.failed.join(", ")
        );
    }
    for c in &su.corrupt {
        let _ = writeln!(s, "Corrupt cache file, run repeated: {c}\n");
    }

    let _ = writeln!(s, "## Stand-ins (Table 6)\n");
    let rows: Vec<Vec<String>> = r
        .standins
        .iter()
        .map(|x| {
            vec![
                x.matrix.clone(),
                format!("`{}`", x.spec),
                pair(
                    x.rows.map_or("–".into(), |v| v.to_string()),
                    x.paper_rows.to_string(),
                ),
                pair(
                    x.nnz.map_or("–".into(), |v| v.to_string()),
                    x.paper_nnz.to_string(),
                ),
            ]
        })
        .collect();
    table(
        &mut s,
        &[
            "matrix",
            "generator",
            "rows [Table 6 ÷ S]",
            "nonzeros [Table 6 ÷ S]",
        ],
        &rows,
    );
    let plot = |s: &mut String, name: &str| {
        for (sec, file) in plots {
            if sec == name {
                let _ = writeln!(s, "![{sec}]({file})\n");
            }
        }
    };

    if let Some(f) = &r.fig12 {
        let _ = writeln!(s, "## Figure 12: communication speedup over SUOpt\n");
        let _ = writeln!(
            s,
            "NetSparse and SAOpt vs SUOpt per matrix. The paper prints the bars only through Table 8's \
             Switch row (arabic, europe) and §9.4 (europe, K = 16: 132x); at K = 16 the column \
             \"implied\" is Table 7's traffic reduction × line utilisation, which the speedup \
             equals. \"SA < SU\" marks where §9.1 says SAOpt is slower than SUOpt.\n"
        );
        for b in &f.per_k {
            let _ = writeln!(s, "### K = {}\n", b.k);
            let mut rows: Vec<Vec<String>> = b
                .rows
                .iter()
                .map(|x| {
                    vec![
                        x.matrix.clone(),
                        pair(
                            x.netsparse.map_or("–".into(), x_s),
                            x_opt(x.paper_netsparse),
                        ),
                        x_opt(x.paper_implied),
                        format!(
                            "{}{}",
                            x_opt(x.sa),
                            if x.paper_sa_slower { " [SA < SU]" } else { "" }
                        ),
                        x_opt(x.netsparse_vs_sa),
                    ]
                })
                .collect();
            rows.push(vec![
                "**gmean**".into(),
                x_opt(b.gmean_netsparse),
                "".into(),
                x_opt(b.gmean_sa),
                "".into(),
            ]);
            table(
                &mut s,
                &[
                    "matrix",
                    "NetSparse vs SU",
                    "implied (Table 7)",
                    "SAOpt vs SU",
                    "NetSparse vs SA",
                ],
                &rows,
            );
            plot(&mut s, &format!("fig12-k{}", b.k));
        }
        let _ = writeln!(
            s,
            "Over every matrix and K: NetSparse vs SUOpt gmean {}, vs SAOpt {}.\n",
            pair(times(f.gmean_vs_su), times(Some(f.paper_gmean_vs_su))),
            pair(times(f.gmean_vs_sa), times(Some(f.paper_gmean_vs_sa)))
        );
    }

    if let Some(t) = &r.table7 {
        let _ = writeln!(s, "## Table 7: the tail node under NetSparse (K = 16)\n");
        let rows: Vec<Vec<String>> = t
            .iter()
            .map(|x| {
                let (o, p) = (&x.ours, &x.paper);
                vec![
                    x.matrix.clone(),
                    pair(pc(o.fc_rate), pc(Some(p.fc_rate))),
                    pair(num(o.prs_per_packet), num(Some(p.prs_per_packet))),
                    pair(pc(o.cache_hit_rate), pc(Some(p.cache_hit_rate))),
                    pair(pc(o.goodput), pc(Some(p.goodput))),
                    pair(pc(o.line_util), pc(Some(p.line_util))),
                    pair(
                        times(o.traffic_reduction_vs_su),
                        times(Some(p.traffic_reduction_vs_su)),
                    ),
                    pair(pc(o.goodput_sa), pc(Some(p.goodput_sa))),
                    pair(
                        times(o.pr_reduction_vs_sa),
                        times(Some(p.pr_reduction_vs_sa)),
                    ),
                    times(o.speedup_vs_su),
                ]
            })
            .collect();
        table(
            &mut s,
            &[
                "matrix",
                "F+C rate",
                "PRs/pkt",
                "P$ hit",
                "Gput",
                "Line util",
                "-Trfc vs SU",
                "Gput SA",
                "-#PR vs SA",
                "speedup vs SU (ours)",
            ],
            &rows,
        );
        plot(&mut s, "table7");
    }

    if let Some(t) = &r.table8 {
        let _ = writeln!(s, "## Table 8: ablation vs SUOpt\n");
        let _ = writeln!(
            s,
            "Each step adds one mechanism: RIG units, the Idx Filter, coalescing, NIC concatenation, \
             the NetSparse switch (Property Cache and switch concatenation).\n"
        );
        let mut mats: Vec<&str> = t.iter().map(|r| r.matrix.as_str()).collect();
        mats.dedup();
        for m in mats {
            let _ = writeln!(s, "### {m}\n");
            let steps: Vec<&str> = Mode::ABLATION.iter().map(|m| m.table8_name()).collect();
            let rows: Vec<Vec<String>> = steps
                .iter()
                .map(|step| {
                    let mut row = vec![step.to_string()];
                    for k in data::KS {
                        let c = t
                            .iter()
                            .find(|r| r.matrix == m && r.k == k && r.step == *step);
                        let p = c.and_then(|c| c.paper);
                        row.push(pair(
                            times(c.and_then(|c| c.speedup)),
                            p.map_or("–".into(), |p| format!("{:.1}", p.speedup)),
                        ));
                        row.push(pair(
                            times(c.and_then(|c| c.traffic_reduction)),
                            times(p.map(|p| p.traffic_reduction)),
                        ));
                        row.push(pair(
                            pc(c.and_then(|c| c.goodput)),
                            pc(p.map(|p| p.goodput)),
                        ));
                    }
                    row
                })
                .collect();
            table(
                &mut s,
                &[
                    "step",
                    "K=1 Spd",
                    "K=1 -Trfc",
                    "K=1 Gput",
                    "K=16 Spd",
                    "K=16 -Trfc",
                    "K=16 Gput",
                    "K=128 Spd",
                    "K=128 -Trfc",
                    "K=128 Gput",
                ],
                &rows,
            );
            plot(&mut s, &format!("table8-{m}"));
        }
    }

    if let Some(rows) = &r.model {
        let _ = writeln!(s, "## Model ablation\n");
        let _ = writeln!(
            s,
            "NetSparse's speedup over SUOpt (K = 16) with every part of the system model on, \
             then with each part switched off or changed in turn (both modes under the same \
             model), and the change against every part on. This tells how much each part of \
             the model moves the headline; the paper has no such table.\n"
        );
        let mut mats: Vec<&str> = rows.iter().map(|r| r.matrix.as_str()).collect();
        mats.dedup();
        let mut parts: Vec<&str> = Vec::new();
        for r in rows {
            if !parts.contains(&r.part.as_str()) {
                parts.push(&r.part);
            }
        }
        let body: Vec<Vec<String>> = parts
            .iter()
            .map(|part| {
                let mut row = vec![part.to_string()];
                for m in &mats {
                    let c = rows.iter().find(|r| r.matrix == *m && r.part == *part);
                    let spd = times(c.and_then(|c| c.speedup));
                    row.push(match c.and_then(|c| c.change_pct) {
                        Some(p) if !p.is_nan() && c.is_some_and(|c| c.part != parts[0]) => {
                            format!("{spd} ({p:+.1}%)")
                        }
                        _ => spd,
                    });
                }
                row
            })
            .collect();
        let mut head = vec!["model"];
        head.extend(mats.iter().copied());
        table(&mut s, &head, &body);
    }

    for (name, title, sw) in [
        ("fig15", "Figure 15: RIG batch size", &r.fig15),
        ("fig17", "Figure 17: concatenation delay cycles", &r.fig17),
        ("fig18", "Figure 18: Property Cache size", &r.fig18),
    ] {
        let Some(sw) = sw else { continue };
        let _ = writeln!(s, "## {title}\n");
        let _ = writeln!(
            s,
            "NetSparse (K = 16) speedup over {} = {}, per matrix. The paper plots these values \
             without printing them; what its text says is listed below the table.\n",
            sw.parameter, sw.baseline
        );
        let mut head: Vec<&str> = vec!["matrix"];
        head.extend(sw.points.iter().map(String::as_str));
        let mut rows: Vec<Vec<String>> = sw
            .rows
            .iter()
            .map(|row| {
                let mut v = vec![row.matrix.clone()];
                v.extend(row.speedup.iter().map(|&p| times(p)));
                v
            })
            .collect();
        let mut used = vec!["(used at this scale)".to_string()];
        used.extend(sw.used.iter().cloned());
        rows.push(used);
        table(&mut s, &head, &rows);
        plot(&mut s, name);
        for c in &sw.claims {
            let ours = match (c.claim.matrix, c.ours_best) {
                (Some(m), Some(b)) => format!(" — ours: best {m} speedup {}", times(Some(b))),
                _ => String::new(),
            };
            let paper = c
                .claim
                .value
                .map_or(String::new(), |v| format!(" [{}]", times(Some(v))));
            let _ = writeln!(
                s,
                "- Paper ({}): {}{paper}{ours}",
                c.claim.source, c.claim.text
            );
        }
        s.push('\n');
    }

    fn has<'a>(plots: &[(String, String)], name: &'a str) -> Option<&'a str> {
        plots.iter().any(|(n, _)| n == name).then_some(name)
    }
    if let Some(sc) = &r.fig13 {
        super::e2e::markdown_scaling(
            &mut s,
            "Figures 13 and 14: end-to-end strong scaling with SPADE, and communication ÷ computation",
            sc,
            has(plots, "fig13"),
        );
    }
    if let Some(rows) = &r.fig19 {
        super::e2e::markdown_active(&mut s, rows, has(plots, "fig19"));
    }
    if let Some(v) = &r.fig21 {
        for sc in v {
            let name = format!("fig21-{}", sc.compute);
            super::e2e::markdown_scaling(
                &mut s,
                &format!(
                    "Figure 21: end-to-end strong scaling with CPUs ({})",
                    sc.compute
                ),
                sc,
                has(plots, &name),
            );
        }
    }
    if let Some(fg) = &r.fig22 {
        let _ = writeln!(s, "## Figure 22: other network topologies\n");
        let _ = writeln!(
            s,
            "NetSparse speedup over SUOpt at K = 16 on each network (SUOpt's model has no network, \
             so it is the same for all), and in parentheses how much faster NetSparse runs on \
             that network than on leaf-spine (leaf-spine's time ÷ the network's). The paper prints no values for Figure 22; the leaf-spine column gives its \
             Figure 12 value at K = 16 in brackets, and its text is listed below. Every switch of \
             the HyperX and the Dragonfly has hosts and runs the ToR program with a Property Cache \
             of the configured size.\n"
        );
        let mut head: Vec<&str> = vec!["matrix"];
        head.extend(fg.topologies.iter().map(String::as_str));
        let mut rows: Vec<Vec<String>> = fg
            .rows
            .iter()
            .map(|rw| {
                let mut v = vec![rw.matrix.clone()];
                for (i, su) in rw.vs_su.iter().enumerate() {
                    v.push(if i == 0 {
                        pair(times(*su), times(rw.paper_leaf_spine))
                    } else {
                        format!(
                            "{} ({} of leaf-spine)",
                            times(*su),
                            times(rw.vs_leaf_spine.get(i).copied().flatten())
                        )
                    });
                }
                v
            })
            .collect();
        let mut g = vec!["gmean".to_string()];
        g.extend(fg.gmean.iter().map(|&v| times(v)));
        rows.push(g);
        table(&mut s, &head, &rows);
        plot(&mut s, "fig22");
        for c in &fg.claims {
            let on = c
                .network
                .as_ref()
                .map_or("the slowest other network".to_string(), |n| {
                    format!("`{n}`")
                });
            let ours = match (c.claim.matrix, c.ours_vs_leaf_spine) {
                (Some(m), Some(v)) => format!(
                    " — ours: {m} at {} of its leaf-spine speed on {on}",
                    times(Some(v))
                ),
                (None, Some(v)) => {
                    format!(" — ours: gmean at {} of leaf-spine on {on}", times(Some(v)))
                }
                _ => String::new(),
            };
            let paper = c
                .claim
                .value
                .map_or(String::new(), |v| format!(" [below {}]", times(Some(v))));
            let _ = writeln!(
                s,
                "- Paper ({}): {}{paper}{ours}",
                c.claim.source, c.claim.text
            );
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Runs\n");
    let rows: Vec<Vec<String>> = r
        .runs
        .iter()
        .map(|x| {
            vec![
                format!("`{}`", x.label),
                match (x.finished, x.cached) {
                    (false, _) => "missing".into(),
                    (true, true) => "cache".into(),
                    (true, false) => "run".into(),
                },
                if x.finished {
                    format!("{:.1} s", x.wall_secs)
                } else {
                    "–".into()
                },
                x.peak_rss.filter(|_| x.finished).map_or("–".into(), gib),
                match (x.finished, x.verified) {
                    (false, _) => "–".into(),
                    (true, true) => "yes".into(),
                    (true, false) => "**FAILED**".into(),
                },
            ]
        })
        .collect();
    table(
        &mut s,
        &[
            "run",
            "from",
            "wall time when run",
            "process memory at its highest while it ran",
            "verified",
        ],
        &rows,
    );
    s
}

fn x_s(v: f64) -> String {
    times(Some(v))
}

fn x_opt(v: Option<f64>) -> String {
    times(v)
}

/// One CSV row per compared value: section, matrix, K, point, metric,
/// ours, paper (empty where absent).
pub fn csv(r: &PaperReport) -> String {
    let mut s = String::from("section,matrix,k,point,metric,ours,paper\n");
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    let mut row =
        |sec: &str, m: &str, k: &str, pt: &str, metric: &str, o: Option<f64>, p: Option<f64>| {
            let _ = writeln!(s, "{sec},{m},{k},{pt},{metric},{},{}", f(o), f(p));
        };
    if let Some(fg) = &r.fig12 {
        for b in &fg.per_k {
            let k = b.k.to_string();
            for x in &b.rows {
                row(
                    "fig12",
                    &x.matrix,
                    &k,
                    "",
                    "netsparse_vs_su",
                    x.netsparse,
                    x.paper_netsparse,
                );
                row(
                    "fig12",
                    &x.matrix,
                    &k,
                    "",
                    "netsparse_vs_su_implied",
                    None,
                    x.paper_implied,
                );
                row("fig12", &x.matrix, &k, "", "sa_vs_su", x.sa, None);
                row(
                    "fig12",
                    &x.matrix,
                    &k,
                    "",
                    "netsparse_vs_sa",
                    x.netsparse_vs_sa,
                    None,
                );
            }
            row(
                "fig12",
                "gmean",
                &k,
                "",
                "netsparse_vs_su",
                b.gmean_netsparse,
                None,
            );
            row("fig12", "gmean", &k, "", "sa_vs_su", b.gmean_sa, None);
        }
        row(
            "fig12",
            "gmean",
            "all",
            "",
            "netsparse_vs_su",
            fg.gmean_vs_su,
            Some(fg.paper_gmean_vs_su),
        );
        row(
            "fig12",
            "gmean",
            "all",
            "",
            "netsparse_vs_sa",
            fg.gmean_vs_sa,
            Some(fg.paper_gmean_vs_sa),
        );
    }
    if let Some(t) = &r.table7 {
        for x in t {
            let (o, p) = (&x.ours, &x.paper);
            for (metric, ov, pv) in [
                ("fc_rate", o.fc_rate, p.fc_rate),
                ("prs_per_packet", o.prs_per_packet, p.prs_per_packet),
                ("cache_hit_rate", o.cache_hit_rate, p.cache_hit_rate),
                ("goodput", o.goodput, p.goodput),
                ("line_util", o.line_util, p.line_util),
                (
                    "traffic_reduction_vs_su",
                    o.traffic_reduction_vs_su,
                    p.traffic_reduction_vs_su,
                ),
                ("goodput_sa", o.goodput_sa, p.goodput_sa),
                (
                    "pr_reduction_vs_sa",
                    o.pr_reduction_vs_sa,
                    p.pr_reduction_vs_sa,
                ),
            ] {
                row("table7", &x.matrix, "16", "", metric, ov, Some(pv));
            }
        }
    }
    if let Some(t) = &r.table8 {
        for x in t {
            let k = x.k.to_string();
            row(
                "table8",
                &x.matrix,
                &k,
                &x.step,
                "speedup",
                x.speedup,
                x.paper.map(|p| p.speedup),
            );
            row(
                "table8",
                &x.matrix,
                &k,
                &x.step,
                "traffic_reduction",
                x.traffic_reduction,
                x.paper.map(|p| p.traffic_reduction),
            );
            row(
                "table8",
                &x.matrix,
                &k,
                &x.step,
                "goodput",
                x.goodput,
                x.paper.map(|p| p.goodput),
            );
        }
    }
    if let Some(rows) = &r.model {
        for x in rows {
            row(
                "model", &x.matrix, "16", &x.part, "speedup", x.speedup, None,
            );
            row(
                "model",
                &x.matrix,
                "16",
                &x.part,
                "change_pct",
                x.change_pct,
                None,
            );
        }
    }
    for (name, sw) in [
        ("fig15", &r.fig15),
        ("fig17", &r.fig17),
        ("fig18", &r.fig18),
    ] {
        let Some(sw) = sw else { continue };
        for rw in &sw.rows {
            for (pt, v) in sw.points.iter().zip(&rw.speedup) {
                let paper = sw
                    .claims
                    .iter()
                    .find(|c| c.claim.matrix == Some(rw.matrix.as_str()) && c.claim.value.is_some())
                    .and_then(|c| c.claim.value)
                    .filter(|_| Some(pt) == sw.points.last());
                row(name, &rw.matrix, "16", pt, "speedup_vs_baseline", *v, paper);
            }
        }
    }
    if let Some(sc) = &r.fig13 {
        super::e2e::csv_scaling("fig13", sc, &mut row);
    }
    for sc in r.fig21.iter().flatten() {
        super::e2e::csv_scaling("fig21", sc, &mut row);
    }
    for a in r.fig19.iter().flatten() {
        row(
            "fig19",
            &a.matrix,
            "16",
            "",
            "mean_active_fraction",
            a.mean_active,
            None,
        );
        row(
            "fig19",
            &a.matrix,
            "16",
            "",
            "half_done_at",
            a.half_done_at,
            None,
        );
    }
    if let Some(fg) = &r.fig22 {
        for rw in &fg.rows {
            for (i, (t, v)) in fg.topologies.iter().zip(&rw.vs_su).enumerate() {
                let paper = rw.paper_leaf_spine.filter(|_| i == 0);
                row("fig22", &rw.matrix, "16", t, "netsparse_vs_su", *v, paper);
                let ls = rw.vs_leaf_spine.get(i).copied().flatten();
                row(
                    "fig22",
                    &rw.matrix,
                    "16",
                    t,
                    "netsparse_vs_leaf_spine",
                    ls,
                    None,
                );
            }
        }
        for (t, g) in fg.topologies.iter().zip(&fg.gmean) {
            row("fig22", "gmean", "16", t, "netsparse_vs_su", *g, None);
        }
    }
    s
}
