//! Graphviz output: one digraph per control-flow graph, one per table-dependency graph.

use std::fmt::Write as _;

use crate::graph::{Analysis, CfgNode};

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Render the analysis as a sequence of `digraph`s (`dot -Tsvg` renders each).
pub fn render(program: &str, an: &Analysis) -> String {
    let mut s = String::new();
    for cfg in &an.cfgs {
        let _ = writeln!(s, "digraph \"cfg {}\" {{", esc(&cfg.name));
        let _ = writeln!(
            s,
            "  label=\"{}: control-flow graph of {}\";\n  labelloc=t;\n  node [shape=box, fontname=\"Helvetica\"];",
            esc(program),
            esc(&cfg.name)
        );
        for n in cfg.graph.node_indices() {
            let node = &cfg.graph[n];
            let shape = match node {
                CfgNode::Entry | CfgNode::Exit => "oval",
                CfgNode::Condition(_) | CfgNode::Switch(_) => "diamond",
                CfgNode::Table(_) => "box3d",
                CfgNode::Action(_) | CfgNode::Extern(_) => "box",
            };
            let _ = writeln!(
                s,
                "  n{} [label=\"{}\", shape={shape}];",
                n.index(),
                esc(&node.label())
            );
        }
        for e in cfg.graph.edge_indices() {
            if let Some((a, b)) = cfg.graph.edge_endpoints(e) {
                let label = &cfg.graph[e];
                if label.is_empty() {
                    let _ = writeln!(s, "  n{} -> n{};", a.index(), b.index());
                } else {
                    let _ = writeln!(
                        s,
                        "  n{} -> n{} [label=\"{}\"];",
                        a.index(),
                        b.index(),
                        esc(label)
                    );
                }
            }
        }
        s.push_str("}\n");
    }
    for tg in &an.table_graphs {
        let _ = writeln!(s, "digraph \"tables {}\" {{", esc(&tg.control));
        let _ = writeln!(
            s,
            "  label=\"{}: table dependencies of {} ({} stage(s))\";\n  labelloc=t;\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];",
            esc(program),
            esc(&tg.control),
            tg.stages
        );
        for n in tg.graph.node_indices() {
            let node = &tg.graph[n];
            let _ = writeln!(
                s,
                "  t{} [label=\"{}\\nstage {}\"];",
                n.index(),
                esc(&node.name),
                node.stage
            );
        }
        for e in tg.graph.edge_indices() {
            if let Some((a, b)) = tg.graph.edge_endpoints(e) {
                let kind = tg.graph[e];
                let style = match kind {
                    crate::graph::DepKind::Match => "solid",
                    crate::graph::DepKind::Action => "dashed",
                    crate::graph::DepKind::Successor => "dotted",
                };
                let _ = writeln!(
                    s,
                    "  t{} -> t{} [label=\"{}\", style={style}];",
                    a.index(),
                    b.index(),
                    kind.as_str()
                );
            }
        }
        s.push_str("}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(esc("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
