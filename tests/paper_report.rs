//! `netsparse paper` at a tiny scale: the report has every section, each
//! of our numbers beside the paper's, plots, JSON and CSV, and every run
//! verified.

use std::path::Path;

use netsparse::paper::{self, progress::Silent, PaperOptions};
use netsparse::sim::matrix::paper::PaperMatrix;

/// The smallest stand-ins (1/max of the paper's size) of arabic and europe
/// (the two Table 8 uses) on 32 nodes in 4 racks, with the quick sweeps.
fn tiny(out: &Path) -> PaperOptions {
    PaperOptions {
        scale: paper::max_scale(),
        quick: true,
        matrices: vec![PaperMatrix::Arabic, PaperMatrix::Europe],
        out: out.to_path_buf(),
        nodes: 32,
        racks: 4,
        version: "test".into(),
        ..PaperOptions::default()
    }
}

#[test]
fn tiny_report_has_every_section_beside_the_paper() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let s = paper::run(&tiny(&out), &mut Silent).unwrap();
    assert!(s.failed.is_empty(), "verification failed: {:?}", s.failed);
    assert!(!s.interrupted);
    assert_eq!(s.runs_executed, s.runs_planned);
    assert_eq!(s.runs_missing, 0);

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for section in [
        "## Stand-ins (Table 6)",
        "## Figure 12",
        "### K = 1\n",
        "### K = 16\n",
        "### K = 128\n",
        "## Table 7",
        "## Table 8",
        "### arabic",
        "### europe",
        "## Figure 15",
        "## Figure 17",
        "## Figure 18",
        "## Runs",
    ] {
        assert!(md.contains(section), "no {section:?} in\n{md}");
    }
    // The paper's values beside ours: Table 7 arabic (F+C 97%, -Trfc
    // 283x), Table 8 arabic K = 16 Switch (184.1), europe K = 1 RIG (7.4),
    // the gmeans of Figure 12 (33x, 15x), Figure 18's 40% for arabic.
    for paper_value in [
        "[97.0%]", "[283x]", "[184.1]", "[7.4]", "[33.0x]", "[15.0x]", "[1.40x]",
    ] {
        assert!(md.contains(paper_value), "no {paper_value} in\n{md}");
    }
    assert!(
        md.contains("Verification: every finished run checked"),
        "{md}"
    );
    for svg in [
        "fig12-k1.svg",
        "fig12-k16.svg",
        "fig12-k128.svg",
        "table7.svg",
        "table8-arabic.svg",
        "table8-europe.svg",
        "fig15.svg",
        "fig17.svg",
        "fig18.svg",
    ] {
        let text = std::fs::read_to_string(out.join(svg)).unwrap();
        assert!(text.starts_with("<svg"), "{svg}");
        assert!(md.contains(&format!("({svg})")), "{svg} not linked");
    }

    // JSON: every cell of ours is filled, beside the paper's.
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    for block in j["fig12"]["per_k"].as_array().unwrap() {
        for row in block["rows"].as_array().unwrap() {
            assert!(row["netsparse"].as_f64().unwrap() > 0.0, "{row}");
            assert!(row["sa"].as_f64().unwrap() > 0.0, "{row}");
        }
    }
    let t8 = j["table8"].as_array().unwrap();
    assert_eq!(t8.len(), 2 * 3 * 5);
    for row in t8 {
        assert!(row["speedup"].as_f64().is_some(), "{row}");
        assert!(row["paper"]["speedup"].as_f64().is_some(), "{row}");
    }
    for row in j["table7"].as_array().unwrap() {
        assert!(row["ours"]["fc_rate"].as_f64().is_some(), "{row}");
        assert!(row["paper"]["fc_rate"].as_f64().is_some(), "{row}");
    }
    for f in ["fig15", "fig17", "fig18"] {
        for row in j[f]["rows"].as_array().unwrap() {
            for v in row["speedup"].as_array().unwrap() {
                assert!(v.as_f64().unwrap() > 0.0, "{f}: {row}");
            }
        }
    }

    // CSV: one row per compared value, the paper's column filled where it
    // prints one.
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("section,matrix,k,point,metric,ours,paper")
    );
    let t8_switch = csv
        .lines()
        .find(|l| l.starts_with("table8,arabic,16,Switch,speedup,"))
        .unwrap();
    assert!(t8_switch.ends_with(",184.1"), "{t8_switch}");
    assert!(csv
        .lines()
        .any(|l| l.starts_with("fig12,gmean,all,,netsparse_vs_su,") && l.ends_with(",33")));
}

/// The model ablation at the tiny scale: one row per part of the model
/// per matrix and a gmean, each NetSparse-vs-SUOpt speedup computed from
/// two verified runs under that model, the first row's change zero, and
/// the flow-control and routing rows run configurations that differ from
/// the default (their runs are in the runs table).
#[test]
fn model_ablation_switches_each_part_off_in_turn() {
    use netsparse::paper::Section;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let opts = PaperOptions {
        only: vec![Section::Model],
        matrices: vec![PaperMatrix::Queen],
        ..tiny(&out)
    };
    let s = paper::run(&opts, &mut Silent).unwrap();
    assert!(s.failed.is_empty(), "verification failed: {:?}", s.failed);
    assert_eq!(s.runs_executed, 8 * 2);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let rows = json["model"].as_array().expect("a model section");
    assert_eq!(rows.len(), 8 * 2, "queen and gmean: {rows:?}");
    for r in rows {
        let spd = r["speedup"].as_f64().unwrap_or(0.0);
        assert!(spd > 0.0, "{r}");
    }
    assert_eq!(rows[0]["change_pct"].as_f64(), Some(0.0));
    // One matrix: its gmean is its value.
    let (a, g) = (
        rows[0]["speedup"].as_f64().unwrap(),
        rows[6]["speedup"].as_f64().unwrap(),
    );
    assert!((a - g).abs() < 1e-9 * a, "{a} vs {g}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Model ablation"), "{md}");
    for part in [
        "no flow control",
        "rack-pair routing",
        "Table 5 header sizes",
    ] {
        assert!(md.contains(part), "no {part:?} in\n{md}");
    }
    for label in [
        "switch-buffer-bytes=0",
        "routing=rack-pair",
        "headers=paper",
    ] {
        assert!(md.contains(label), "no run labelled {label:?}");
    }
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    assert!(
        csv.lines().any(|l| l.starts_with("model,queen,16,")),
        "{csv}"
    );
}
