//! Control-flow graphs, the table-dependency graph, stage assignment and the
//! resource check.
//!
//! Both graphs are built on the lowered program (after inlining), where every
//! read and write is a field slot, so dependencies are exact per slot:
//!
//! * **match** dependency A → B: B's key (or a condition guarding B) reads a
//!   slot that A's actions write;
//! * **action** dependency A → B: both write the same slot, or B's actions read
//!   a slot A's actions write;
//! * **successor** dependency A → B: B is applied only on a branch of A's
//!   result (`hit`, `miss`, `action_run`).
//!
//! Stages are assigned by longest path (match and action dependencies cost a
//! stage, successor dependencies do not), as in RMT/Tofino compilers; a limit
//! on tables per stage pushes tables to later stages.
//!
//! What each statement, action and table reads and writes (the slots the
//! dependencies are made of) is computed in `graph_effects.rs`.

use std::collections::BTreeSet;

use netsparse_externs::artifact::{self as a, Artifact, HeaderRef, LValue, TableId};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ast::Span;
use crate::codes;
use crate::diag::Diagnostic;
use crate::TargetLimits;

/// A node of a control-flow graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CfgNode {
    /// Where the control starts.
    Entry,
    /// Where it ends.
    Exit,
    /// A table application.
    Table(String),
    /// An `if` condition.
    Condition(String),
    /// A `switch` selector.
    Switch(String),
    /// A direct action call.
    Action(String),
    /// An extern call or packet operation.
    Extern(String),
}

impl CfgNode {
    /// The node's text.
    pub fn label(&self) -> String {
        match self {
            CfgNode::Entry => "entry".into(),
            CfgNode::Exit => "exit".into(),
            CfgNode::Table(t) => format!("apply {t}"),
            CfgNode::Condition(c) => format!("if {c}"),
            CfgNode::Switch(s) => format!("switch {s}"),
            CfgNode::Action(x) => format!("call {x}"),
            CfgNode::Extern(x) => x.clone(),
        }
    }
}

/// The control-flow graph of one control (or middle pipe).
#[derive(Clone, Debug)]
pub struct Cfg {
    /// Control name.
    pub name: String,
    /// Nodes and labelled edges.
    pub graph: DiGraph<CfgNode, String>,
}

/// Kinds of table dependencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DepKind {
    /// B matches on what A writes.
    Match,
    /// A and B write the same field (or B's actions read what A writes).
    Action,
    /// B runs only on a branch of A's result.
    Successor,
}

impl DepKind {
    /// The label used in graphs and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            DepKind::Match => "match",
            DepKind::Action => "action",
            DepKind::Successor => "successor",
        }
    }

    fn cost(self) -> u32 {
        match self {
            DepKind::Match | DepKind::Action => 1,
            DepKind::Successor => 0,
        }
    }
}

/// A table in a dependency graph.
#[derive(Clone, Debug)]
pub struct TableNode {
    /// The artifact table.
    pub table: TableId,
    /// Its name.
    pub name: String,
    /// Its stage (0-based).
    pub stage: u32,
}

/// The table-dependency graph of one control.
#[derive(Clone, Debug)]
pub struct TableGraph {
    /// Control name.
    pub control: String,
    /// Tables (in order of first application) and dependencies.
    pub graph: DiGraph<TableNode, DepKind>,
    /// Number of stages used.
    pub stages: u32,
}

/// The analysis results attached to the IR module.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// One CFG per control (parsers excluded).
    pub cfgs: Vec<Cfg>,
    /// One table graph per control that applies tables.
    pub table_graphs: Vec<TableGraph>,
}

impl Analysis {
    /// The stage of a table, if it is applied anywhere.
    pub fn stage_of(&self, name: &str) -> Option<u32> {
        self.table_graphs
            .iter()
            .flat_map(|g| g.graph.node_weights())
            .find(|n| n.name == name)
            .map(|n| n.stage)
    }
}

/// The bodies of the artifact's controls (and the middle pipe), by name.
fn control_bodies(art: &Artifact) -> Vec<(String, Vec<&[a::Stmt]>)> {
    let mut out: Vec<(String, Vec<&[a::Stmt]>)> = Vec::new();
    match &art.package {
        a::Package::V1Switch(_) => {
            for c in &art.controls {
                out.push((c.name.clone(), vec![c.body.as_slice()]));
            }
        }
        a::Package::NetSparseSwitch(ns) => {
            for (i, c) in art.controls.iter().enumerate() {
                out.push((c.name.clone(), vec![c.body.as_slice()]));
                if a::ControlId(i as u32) == ns.ingress_deparser {
                    out.push((
                        ns.middle.path.name.clone(),
                        vec![
                            ns.middle.path.per_packet.as_slice(),
                            ns.middle.path.per_pr.as_slice(),
                        ],
                    ));
                }
            }
        }
        a::Package::SpinNic(_) | a::Package::Psa(_) => {
            for c in &art.controls {
                out.push((c.name.clone(), vec![c.body.as_slice()]));
            }
        }
        a::Package::NetSparseNic(nic) => {
            // host_to_net is one per-idx part (ending in Concatenate);
            // net_to_host is split at Deconcatenate like a middle pipe.
            let h = &nic.host_to_net.path;
            out.push((h.name.clone(), vec![h.per_pr.as_slice()]));
            let n = &nic.net_to_host.path;
            out.push((
                n.name.clone(),
                vec![n.per_packet.as_slice(), n.per_pr.as_slice()],
            ));
        }
    }
    out
}

/// Build the graphs and check the target limits.
pub fn analyse(
    art: &Artifact,
    table_spans: &[Span],
    limits: &TargetLimits,
) -> Result<Analysis, Vec<Diagnostic>> {
    let fx = Effects::new(art);
    let mut analysis = Analysis::default();
    let mut diags = Vec::new();
    for (name, parts) in control_bodies(art) {
        analysis.cfgs.push(build_cfg(art, &name, &parts));
        let tg = table_graph(art, &fx, &name, &parts, limits);
        if let Some(tg) = tg {
            check_stages(&tg, table_spans, limits, &mut diags);
            analysis.table_graphs.push(tg);
        }
    }
    if let Some(max) = limits.max_tables {
        if art.tables.len() > max as usize {
            let extra = &art.tables[max as usize];
            let span = table_spans.get(max as usize).copied().unwrap_or_default();
            let d = Diagnostic::error(
                codes::MAX_TABLES,
                format!(
                    "the program has {} tables, but the target has room for {max}",
                    art.tables.len()
                ),
                span,
            )
            .with_label(format!("table `{}` is one too many", extra.name))
            .with_hint("merge tables, or raise --max-tables");
            diags.push(d);
        }
    }
    if diags.is_empty() {
        Ok(analysis)
    } else {
        Err(diags)
    }
}

fn check_stages(
    tg: &TableGraph,
    spans: &[Span],
    limits: &TargetLimits,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(max) = limits.max_stages else { return };
    if tg.stages <= max {
        return;
    }
    // The table in the last stage and the chain that put it there.
    let Some(last) = tg
        .graph
        .node_indices()
        .max_by_key(|n| (tg.graph[*n].stage, std::cmp::Reverse(n.index())))
    else {
        return;
    };
    let mut chain = vec![last];
    let mut cur = last;
    loop {
        let pred = tg
            .graph
            .edges_directed(cur, petgraph::Direction::Incoming)
            .filter(|e| tg.graph[e.source()].stage + e.weight().cost() == tg.graph[cur].stage)
            .map(|e| e.source())
            .min_by_key(|n| n.index());
        match pred {
            Some(p) => {
                chain.push(p);
                cur = p;
            }
            None => break,
        }
    }
    chain.reverse();
    let mut text = String::new();
    for (i, n) in chain.iter().enumerate() {
        if i > 0 {
            let kind = tg
                .graph
                .find_edge(chain[i - 1], *n)
                .map(|e| tg.graph[e].as_str())
                .unwrap_or("?");
            text.push_str(&format!(" --{kind}--> "));
        }
        let node = &tg.graph[*n];
        text.push_str(&format!("{} (stage {})", node.name, node.stage));
    }
    let node = &tg.graph[last];
    let span = spans.get(node.table.index()).copied().unwrap_or_default();
    let per_stage = limits.max_tables_per_stage.filter(|_| {
        // Would the chain alone fit? Then the per-stage limit is to blame.
        chain_stages(tg, last) <= max
    });
    let d = match per_stage {
        Some(per) => Diagnostic::error(
            codes::MAX_TABLES_PER_STAGE,
            format!(
                "control `{}` needs {} stages with at most {per} table(s) per stage; the target has {max}",
                tg.control, tg.stages
            ),
            span,
        )
        .with_label(format!("table `{}` lands in stage {}", node.name, node.stage))
        .with_hint("raise --max-tables-per-stage, or make tables independent so they share stages"),
        None => Diagnostic::error(
            codes::MAX_STAGES,
            format!(
                "control `{}` needs {} stage(s), but the target has {max}",
                tg.control, tg.stages
            ),
            span,
        )
        .with_label(format!("table `{}` lands in stage {}", node.name, node.stage))
        .with_note(format!("dependency chain: {text}"))
        .with_hint("remove a dependency (e.g. match on a field no earlier table writes) or raise --max-stages"),
    };
    diags.push(d);
}

/// Stages needed by the longest dependency chain ending at `n` (ignoring per-stage limits).
fn chain_stages(tg: &TableGraph, n: NodeIndex) -> u32 {
    let mut memo: Vec<Option<u32>> = vec![None; tg.graph.node_count()];
    fn go(tg: &TableGraph, n: NodeIndex, memo: &mut Vec<Option<u32>>) -> u32 {
        if let Some(v) = memo[n.index()] {
            return v;
        }
        let v = tg
            .graph
            .edges_directed(n, petgraph::Direction::Incoming)
            .map(|e| go(tg, e.source(), memo) + e.weight().cost())
            .max()
            .unwrap_or(0);
        memo[n.index()] = Some(v);
        v
    }
    go(tg, n, &mut memo) + 1
}

use petgraph::visit::EdgeRef;

#[path = "graph_effects.rs"]
mod effects;
use effects::{Effects, Set};

// ----- table graphs --------------------------------------------------------------------

struct Application {
    table: TableId,
    /// Slots read by the key and by the conditions guarding the application.
    match_reads: Set,
    /// Tables whose result guards the application.
    guards: BTreeSet<u32>,
    /// The branches taken to reach it: (branch point, arm).
    path: Vec<(u32, u32)>,
}

/// Two applications on different arms of the same `if`/`switch` never both run.
fn exclusive(a: &Application, b: &Application) -> bool {
    a.path
        .iter()
        .any(|(p, arm)| b.path.iter().any(|(q, arm2)| p == q && arm != arm2))
}

struct Walk {
    cond_reads: Vec<Set>,
    path: Vec<(u32, u32)>,
    next_branch: u32,
}

fn collect_applications(
    art: &Artifact,
    fx: &Effects<'_>,
    stmts: &[a::Stmt],
    w: &mut Walk,
    out: &mut Vec<Application>,
) {
    for s in stmts {
        match s {
            a::Stmt::ApplyTable { table } => {
                let mut reads = Set::new();
                if let Some(t) = art.tables.get(table.index()) {
                    for k in &t.keys {
                        fx.expr(&k.expr, &mut reads);
                    }
                }
                for c in &w.cond_reads {
                    reads.extend(c);
                }
                let guards = guards_of(art, &reads);
                out.push(Application {
                    table: *table,
                    match_reads: reads,
                    guards,
                    path: w.path.clone(),
                });
            }
            a::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let mut r = Set::new();
                fx.expr(cond, &mut r);
                let id = w.next_branch;
                w.next_branch += 1;
                w.cond_reads.push(r);
                for (arm, body) in [then, otherwise].into_iter().enumerate() {
                    w.path.push((id, arm as u32));
                    collect_applications(art, fx, body, w, out);
                    w.path.pop();
                }
                w.cond_reads.pop();
            }
            a::Stmt::Switch {
                selector,
                cases,
                default,
            } => {
                let mut r = Set::new();
                fx.expr(selector, &mut r);
                let id = w.next_branch;
                w.next_branch += 1;
                w.cond_reads.push(r);
                let bodies = cases
                    .iter()
                    .map(|c| &c.body)
                    .chain(std::iter::once(default));
                for (arm, body) in bodies.enumerate() {
                    w.path.push((id, arm as u32));
                    collect_applications(art, fx, body, w, out);
                    w.path.pop();
                }
                w.cond_reads.pop();
            }
            a::Stmt::Inlined { body, .. } => collect_applications(art, fx, body, w, out),
            _ => {}
        }
    }
}

/// Tables whose hidden result slots are among `reads`.
fn guards_of(art: &Artifact, reads: &Set) -> BTreeSet<u32> {
    art.tables
        .iter()
        .enumerate()
        .filter(|(_, t)| reads.contains(&t.hit.0) || reads.contains(&t.action_run.0))
        .map(|(i, _)| i as u32)
        .collect()
}

fn table_graph(
    art: &Artifact,
    fx: &Effects<'_>,
    name: &str,
    parts: &[&[a::Stmt]],
    limits: &TargetLimits,
) -> Option<TableGraph> {
    let mut apps = Vec::new();
    let mut walk = Walk {
        cond_reads: Vec::new(),
        path: Vec::new(),
        next_branch: 0,
    };
    for p in parts {
        collect_applications(art, fx, p, &mut walk, &mut apps);
    }
    if apps.is_empty() {
        return None;
    }
    // One node per table, in order of first application; merge the reads of repeats.
    let mut order: Vec<Application> = Vec::new();
    for ap in apps {
        match order.iter_mut().find(|o| o.table == ap.table) {
            Some(o) => {
                o.match_reads.extend(ap.match_reads);
                o.guards.extend(ap.guards);
                // Applied on several paths: keep only the branch points they share.
                o.path.retain(|x| ap.path.contains(x));
            }
            None => order.push(ap),
        }
    }
    let mut g: DiGraph<TableNode, DepKind> = DiGraph::new();
    let nodes: Vec<NodeIndex> = order
        .iter()
        .map(|ap| {
            g.add_node(TableNode {
                table: ap.table,
                name: art
                    .tables
                    .get(ap.table.index())
                    .map(|t| t.name.clone())
                    .unwrap_or_default(),
                stage: 0,
            })
        })
        .collect();
    let effects: Vec<(Set, Set)> = order
        .iter()
        .map(|ap| {
            art.tables
                .get(ap.table.index())
                .map(|t| fx.table_actions(t))
                .unwrap_or_default()
        })
        .collect();
    for j in 0..order.len() {
        for i in 0..j {
            let (_, wi) = &effects[i];
            let (rj, wj) = &effects[j];
            if exclusive(&order[i], &order[j]) {
                continue;
            }
            let kind = if !wi.is_disjoint(&order[j].match_reads) {
                Some(DepKind::Match)
            } else if !wi.is_disjoint(wj) || !wi.is_disjoint(rj) {
                Some(DepKind::Action)
            } else if order[j].guards.contains(&order[i].table.0) {
                Some(DepKind::Successor)
            } else {
                None
            };
            if let Some(k) = kind {
                g.add_edge(nodes[i], nodes[j], k);
            }
        }
    }
    // Longest path, then the per-stage limit pushes tables later.
    let mut per_stage: Vec<u32> = Vec::new();
    let mut max_stage = 0;
    for &n in &nodes {
        let mut stage = g
            .edges_directed(n, petgraph::Direction::Incoming)
            .map(|e| g[e.source()].stage + e.weight().cost())
            .max()
            .unwrap_or(0);
        if let Some(limit) = limits.max_tables_per_stage {
            let limit = limit.max(1);
            while per_stage.get(stage as usize).copied().unwrap_or(0) >= limit {
                stage += 1;
            }
        }
        if per_stage.len() <= stage as usize {
            per_stage.resize(stage as usize + 1, 0);
        }
        per_stage[stage as usize] += 1;
        g[n].stage = stage;
        max_stage = max_stage.max(stage);
    }
    Some(TableGraph {
        control: name.to_string(),
        graph: g,
        stages: max_stage + 1,
    })
}

// ----- control-flow graphs ---------------------------------------------------------------

fn build_cfg(art: &Artifact, name: &str, parts: &[&[a::Stmt]]) -> Cfg {
    let mut g: DiGraph<CfgNode, String> = DiGraph::new();
    let entry = g.add_node(CfgNode::Entry);
    let exit = g.add_node(CfgNode::Exit);
    let mut preds = vec![(entry, String::new())];
    let mut b = CfgBuilder { art, g, exit };
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            // The middle pipe: the per-PR part runs after Deconcatenate.
            let n = b.node(CfgNode::Extern("Deconcatenate".into()), preds);
            preds = vec![(n, String::new())];
        }
        preds = b.stmts(p, preds);
    }
    if parts.len() > 1 {
        let n = b.node(CfgNode::Extern("Concatenate".into()), preds);
        preds = vec![(n, String::new())];
    }
    for (p, l) in preds {
        b.g.add_edge(p, exit, l);
    }
    Cfg {
        name: name.to_string(),
        graph: b.g,
    }
}

struct CfgBuilder<'a> {
    art: &'a Artifact,
    g: DiGraph<CfgNode, String>,
    exit: NodeIndex,
}

type Preds = Vec<(NodeIndex, String)>;

impl CfgBuilder<'_> {
    fn node(&mut self, n: CfgNode, preds: Preds) -> NodeIndex {
        let id = self.g.add_node(n);
        for (p, l) in preds {
            self.g.add_edge(p, id, l);
        }
        id
    }

    fn stmts(&mut self, stmts: &[a::Stmt], mut preds: Preds) -> Preds {
        for s in stmts {
            preds = self.stmt(s, preds);
        }
        preds
    }

    fn stmt(&mut self, s: &a::Stmt, preds: Preds) -> Preds {
        let art = self.art;
        match s {
            a::Stmt::ApplyTable { table } => {
                let name = art
                    .tables
                    .get(table.index())
                    .map_or("?".into(), |t| t.name.clone());
                let n = self.node(CfgNode::Table(name), preds);
                vec![(n, String::new())]
            }
            a::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let n = self.node(CfgNode::Condition(expr_text(art, cond)), preds);
                let mut t = self.stmts(then, vec![(n, "true".into())]);
                let f = self.stmts(otherwise, vec![(n, "false".into())]);
                t.extend(f);
                t
            }
            a::Stmt::Switch {
                selector,
                cases,
                default,
            } => {
                let n = self.node(CfgNode::Switch(expr_text(art, selector)), preds);
                let run_of = action_run_table(art, selector);
                let mut all = Vec::new();
                for c in cases {
                    let label: Vec<String> = c
                        .values
                        .iter()
                        .map(|v| match run_of {
                            Some(t) => art.tables[t]
                                .actions
                                .iter()
                                .find(|ta| u128::from(ta.action.0) == *v)
                                .map_or(v.to_string(), |ta| ta.name.clone()),
                            None => v.to_string(),
                        })
                        .collect();
                    all.extend(self.stmts(&c.body, vec![(n, label.join(", "))]));
                }
                all.extend(self.stmts(default, vec![(n, "default".into())]));
                all
            }
            a::Stmt::CallAction { action } => {
                let name = art
                    .actions
                    .get(action.index())
                    .map_or("?".into(), |x| x.name.clone());
                let n = self.node(CfgNode::Action(name), preds);
                vec![(n, String::new())]
            }
            a::Stmt::Inlined { body, .. } => self.stmts(body, preds),
            a::Stmt::Loop {
                cond,
                body,
                updates,
            } => {
                // `break`/`continue` are drawn as falling through.
                let n = self.node(
                    CfgNode::Condition(format!("loop while {}", expr_text(art, cond))),
                    preds,
                );
                let b = self.stmts(body, vec![(n, "true".into())]);
                for (p, l) in self.stmts(updates, b) {
                    self.g.add_edge(p, n, l);
                }
                vec![(n, "false".into())]
            }
            a::Stmt::Return | a::Stmt::Exit => {
                for (p, l) in preds {
                    self.g.add_edge(p, self.exit, l);
                }
                Vec::new()
            }
            a::Stmt::Prim(p) => {
                let n = self.node(CfgNode::Extern(prim_name(p).to_string()), preds);
                vec![(n, String::new())]
            }
            a::Stmt::Emit { header } => {
                let n = self.node(
                    CfgNode::Extern(format!("emit {}", href_text(art, header))),
                    preds,
                );
                vec![(n, String::new())]
            }
            a::Stmt::Extract { header } | a::Stmt::ExtractVarbit { header, .. } => {
                let n = self.node(
                    CfgNode::Extern(format!("extract {}", href_text(art, header))),
                    preds,
                );
                vec![(n, String::new())]
            }
            _ => preds,
        }
    }
}

fn action_run_table(art: &Artifact, e: &a::Expr) -> Option<usize> {
    let a::Expr::Field { field } = e else {
        return None;
    };
    art.tables.iter().position(|t| t.action_run == *field)
}

/// The name of a primitive, for graphs.
pub fn prim_name(p: &a::Prim) -> &'static str {
    use a::Prim::*;
    match p {
        MarkToDrop => "mark_to_drop",
        RegisterRead { .. } => "register.read",
        RegisterWrite { .. } => "register.write",
        Count { .. } => "counter.count",
        ExecuteMeter { .. } => "meter.execute_meter",
        ReadDirectMeter { .. } => "direct_meter.read",
        CountDirect { .. } => "direct_counter.count",
        Hash { .. } => "hash",
        VerifyChecksum { .. } => "verify_checksum",
        UpdateChecksum { .. } => "update_checksum",
        Random { .. } => "random",
        Digest { .. } => "digest",
        LogMsg { .. } => "log_msg",
        Clone { .. } => "clone",
        Resubmit { .. } => "resubmit",
        Recirculate { .. } => "recirculate",
        Truncate { .. } => "truncate",
        Assert { .. } => "assert",
        Assume { .. } => "assume",
        CacheLookup { .. } => "Lookup",
        CacheInsert { .. } => "Insert",
        IdxFilterTest { .. } => "IdxFilterTest",
        IdxFilterSet { .. } => "IdxFilterSet",
        PendingContains { .. } => "PendingContains",
        PendingInsert { .. } => "PendingInsert",
        PendingComplete { .. } => "PendingComplete",
        HostRead { .. } => "HostRead",
        HostWrite { .. } => "HostWrite",
        ChecksumClear { .. } => "checksum.clear",
        ChecksumUpdate {
            subtract: false, ..
        } => "checksum.add",
        ChecksumUpdate { subtract: true, .. } => "checksum.subtract",
        ChecksumGet { state: false, .. } => "checksum.get",
        ChecksumGet { state: true, .. } => "checksum.get_state",
        ChecksumSetState { .. } => "checksum.set_state",
        Spin { op, .. } => op.name(),
        Coll { op, .. } => op.name(),
    }
}

/// A header reference as text.
pub fn href_text(art: &Artifact, r: &HeaderRef) -> String {
    match r {
        HeaderRef::Static { header } => art
            .headers
            .get(header.index())
            .map_or("?".into(), |h| h.name.clone()),
        HeaderRef::Index { stack, index } => format!(
            "{}[{}]",
            art.stacks
                .get(stack.index())
                .map_or("?", |s| s.name.as_str()),
            expr_text(art, index)
        ),
        HeaderRef::Next { stack } => format!(
            "{}.next",
            art.stacks
                .get(stack.index())
                .map_or("?", |s| s.name.as_str())
        ),
        HeaderRef::Last { stack } => format!(
            "{}.last",
            art.stacks
                .get(stack.index())
                .map_or("?", |s| s.name.as_str())
        ),
    }
}

/// An artifact expression as compact text (field names instead of slot ids).
pub fn expr_text(art: &Artifact, e: &a::Expr) -> String {
    match e {
        a::Expr::Const { value, width, .. } => format!("{width}w{value}"),
        a::Expr::Field { field } => art
            .fields
            .get(field.index())
            .map_or("?".into(), |f| f.name.clone()),
        a::Expr::StackField {
            header,
            field_index,
        } => format!("{}.#{field_index}", href_text(art, header)),
        a::Expr::VarbitField { header } => format!(
            "{}.$varbit",
            art.headers
                .get(header.index())
                .map_or("?", |h| h.name.as_str())
        ),
        a::Expr::IsValid { header } => format!("{}.isValid()", href_text(art, header)),
        a::Expr::Unary { op, arg, .. } => {
            let o = match op {
                a::UnaryOp::Not => "!",
                a::UnaryOp::BitNot => "~",
                a::UnaryOp::Neg => "-",
            };
            format!("{o}{}", expr_text(art, arg))
        }
        a::Expr::Binary { op, lhs, rhs, .. } => {
            let o = match op {
                a::BinaryOp::Add => "+",
                a::BinaryOp::Sub => "-",
                a::BinaryOp::Mul => "*",
                a::BinaryOp::Div => "/",
                a::BinaryOp::Mod => "%",
                a::BinaryOp::SatAdd => "|+|",
                a::BinaryOp::SatSub => "|-|",
                a::BinaryOp::Shl => "<<",
                a::BinaryOp::Shr => ">>",
                a::BinaryOp::And => "&",
                a::BinaryOp::Or => "|",
                a::BinaryOp::Xor => "^",
                a::BinaryOp::Eq => "==",
                a::BinaryOp::Ne => "!=",
                a::BinaryOp::Lt => "<",
                a::BinaryOp::Le => "<=",
                a::BinaryOp::Gt => ">",
                a::BinaryOp::Ge => ">=",
                a::BinaryOp::LAnd => "&&",
                a::BinaryOp::LOr => "||",
            };
            format!("({} {o} {})", expr_text(art, lhs), expr_text(art, rhs))
        }
        a::Expr::Slice { arg, hi, lo } => format!("{}[{hi}:{lo}]", expr_text(art, arg)),
        a::Expr::Concat { lhs, rhs, .. } => {
            format!("({} ++ {})", expr_text(art, lhs), expr_text(art, rhs))
        }
        a::Expr::Cast {
            arg, width, signed, ..
        } => {
            format!(
                "({}<{width}>){}",
                if *signed { "int" } else { "bit" },
                expr_text(art, arg)
            )
        }
        a::Expr::Mux {
            cond,
            then,
            otherwise,
            ..
        } => format!(
            "({} ? {} : {})",
            expr_text(art, cond),
            expr_text(art, then),
            expr_text(art, otherwise)
        ),
        a::Expr::Lookahead { bit_offset, width } => format!("lookahead<bit<{width}>>@{bit_offset}"),
    }
}
