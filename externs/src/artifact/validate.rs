//! The consistency check of an artifact, in one place: every id in range,
//! every width agreeing (field slots and header layouts, operands and
//! assignments, slices inside their operand, constants that fit), header
//! layouts contiguous, parser transitions and select keysets, tables'
//! actions, defaults and const entries coherent, direct resources pointing
//! back at their tables, and the package's slots of the widths the
//! architecture defines. The compiler's tests run it on every artifact they
//! produce, and the engine runs it before loading one, so a hand-edited
//! artifact is refused with the JSON pointer of what is wrong (RFC 6901:
//! `/tables/4/entries/2`, `/controls/1/body/3/then/0`).

use super::*;

/// One inconsistency: where (a JSON pointer into the artifact), in which
/// named element, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// JSON pointer of the offending value (e.g. `/tables/4/entries/2`).
    pub path: String,
    /// The name of the enclosing element (table, control, field...).
    pub what: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.path, self.what, self.message)
    }
}

/// Check `art`'s internal consistency; every problem found, in artifact
/// order (empty: consistent).
pub fn validate(art: &Artifact) -> Vec<Problem> {
    let mut v = V {
        a: art,
        problems: Vec::new(),
        base: String::new(),
        what: String::new(),
        segs: Vec::new(),
        loops: 0,
    };
    v.all();
    v.problems
}

/// The checker's state: the artifact, what it found, and where it is (a
/// JSON pointer base, the enclosing element's name, the path below it).
/// Its structural half (ids, layouts, parsers, tables, the package) is
/// here; its code half (expressions, statements, primitives) is in
/// `validate_code.rs`.
pub(super) struct V<'a> {
    pub(super) a: &'a Artifact,
    problems: Vec<Problem>,
    base: String,
    what: String,
    pub(super) segs: Vec<String>,
    /// `Loop` bodies around the statement being checked.
    pub(super) loops: u32,
}

impl V<'_> {
    pub(super) fn bad(&mut self, msg: String) {
        let mut path = self.base.clone();
        for s in &self.segs {
            path.push('/');
            path.push_str(s);
        }
        self.problems.push(Problem {
            path,
            what: self.what.clone(),
            message: msg,
        });
    }

    /// Problems found from here on are at JSON pointer `path`, in the
    /// element named `what`.
    fn at(&mut self, path: String, what: &str) {
        self.base = path;
        self.what = what.to_owned();
        self.segs.clear();
    }

    /// A per-PR path (middle pipe or NIC path) at JSON pointer `at`: its
    /// statements and the widths of its `pr` and `md` slots.
    fn pr_path(&mut self, at: &str, p: &PrPath) {
        self.at(at.to_string(), &p.name);
        self.stmts_at("per_packet", &p.per_packet);
        self.stmts_at("per_pr", &p.per_pr);
        for (f, w) in [
            (p.pr.src, 32),
            (p.pr.tid, 16),
            (p.pr.idx, 64),
            (p.pr.req_id, 32),
            (p.pr_meta.pr_type, 16),
            (p.pr_meta.dst, 32),
            (p.pr_meta.prop_len, 32),
            (p.pr_meta.drop, 1),
        ] {
            if self.field(f) != w {
                self.bad(format!("PR slot {} should be {w} bits", f.0));
            }
        }
    }

    /// Check the statements of list `seg` (a member name under the current
    /// path), each at its index.
    pub(super) fn stmts_at(&mut self, seg: &str, s: &[Stmt]) {
        self.segs.push(seg.to_owned());
        for (i, x) in s.iter().enumerate() {
            self.segs.push(i.to_string());
            self.stmt(x);
            self.segs.pop();
        }
        self.segs.pop();
    }

    pub(super) fn field(&mut self, f: FieldId) -> u16 {
        match self.a.fields.get(f.index()) {
            Some(x) => x.width,
            None => {
                self.bad(format!("field id {} out of range", f.0));
                0
            }
        }
    }

    fn all(&mut self) {
        let a = self.a;
        self.at(String::new(), &a.program);
        if a.format != ARTIFACT_FORMAT || a.version != ARTIFACT_VERSION {
            self.bad(format!(
                "format {:?} version {} (expected {ARTIFACT_FORMAT:?} version {ARTIFACT_VERSION})",
                a.format, a.version
            ));
        }
        self.at("/errors".into(), "errors");
        if a.errors.len() < CORE_ERRORS.len()
            || a.errors.iter().zip(CORE_ERRORS).any(|(e, c)| e != c)
        {
            self.bad(format!(
                "the error list must start with P4's core errors {CORE_ERRORS:?}"
            ));
        }
        for (i, f) in a.fields.iter().enumerate() {
            self.at(format!("/fields/{i}"), &f.name);
            if f.width == 0 || f.width > MAX_WIDTH {
                self.bad(format!("width {}", f.width));
            }
            if let FieldKind::Header(h) = f.kind {
                match a.headers.get(h.index()) {
                    Some(hd)
                        if hd.fields.iter().any(|x| x.field.index() == i)
                            || hd.varbit_len.is_some_and(|l| l.index() == i) => {}
                    _ => self.bad("header field not listed in its header".into()),
                }
            }
        }
        for (i, h) in a.headers.iter().enumerate() {
            self.at(format!("/headers/{i}"), &h.name);
            let mut off = 0;
            for hf in &h.fields {
                let w = self.field(hf.field);
                if w != hf.width {
                    self.bad(format!("layout width {} != slot width {w}", hf.width));
                }
                if hf.bit_offset != off {
                    self.bad(format!("offset {} expected {off}", hf.bit_offset));
                }
                off += u32::from(hf.width);
                if let Some(f) = a.fields.get(hf.field.index()) {
                    if f.kind != FieldKind::Header(HeaderId(i as u32)) {
                        self.bad("header field slot has the wrong kind".into());
                    }
                }
            }
            if off != h.bit_width {
                self.bad(format!("bit_width {} != {off}", h.bit_width));
            }
            if let Some(len) = h.varbit_len {
                if self.field(len) != 32 {
                    self.bad("varbit_len must be 32 bits".into());
                }
                if h.fields.len() < (h.varbit_parts.max(1)) as usize {
                    self.bad("varbit_len in a header without enough fields".into());
                }
                if let Some(f) = a.fields.get(len.index()) {
                    if f.kind != FieldKind::Header(HeaderId(i as u32)) {
                        self.bad("varbit_len slot has the wrong kind".into());
                    }
                }
            }
        }
        for (i, s) in a.stacks.iter().enumerate() {
            self.at(format!("/stacks/{i}"), &s.name);
            if s.elements.is_empty() {
                self.bad("empty stack".into());
            }
            for e in &s.elements {
                if a.headers.get(e.index()).is_none() {
                    self.bad(format!("element {} out of range", e.0));
                }
            }
            if self.field(s.next_index) != 32 {
                self.bad("next_index must be 32 bits".into());
            }
        }
        for (i, p) in a.parsers.iter().enumerate() {
            self.at(format!("/parsers/{i}"), &p.name);
            if p.start.index() >= p.states.len() {
                self.bad("start out of range".into());
            }
            for (j, s) in p.states.iter().enumerate() {
                self.at(
                    format!("/parsers/{i}/states/{j}"),
                    &format!("{}.{}", p.name, s.name),
                );
                self.stmts_at("body", &s.body);
                let nexts: Vec<Next> = match &s.transition {
                    Transition::Direct { next } => vec![*next],
                    Transition::Select { keys, cases } => {
                        for k in keys {
                            self.expr(k);
                        }
                        for c in cases {
                            if c.keysets.len() != keys.len() {
                                self.bad("keyset count != key count".into());
                            }
                        }
                        cases.iter().map(|c| c.next).collect()
                    }
                };
                for n in nexts {
                    if let Next::State(st) = n {
                        if st.index() >= p.states.len() {
                            self.bad("transition out of range".into());
                        }
                    }
                }
            }
        }
        for (i, c) in a.controls.iter().enumerate() {
            self.at(format!("/controls/{i}"), &c.name);
            self.stmts_at("body", &c.body);
        }
        for (i, act) in a.actions.iter().enumerate() {
            self.at(format!("/actions/{i}"), &act.name);
            for p in &act.params {
                let w = self.field(p.field);
                if w != p.width {
                    self.bad(format!("param {} width {} != slot {w}", p.name, p.width));
                }
                if a.fields.get(p.field.index()).map(|f| f.kind) != Some(FieldKind::ActionParam) {
                    self.bad(format!("param {} slot is not an action parameter", p.name));
                }
            }
            self.stmts_at("body", &act.body);
        }
        for (ti, t) in a.tables.iter().enumerate() {
            self.at(format!("/tables/{ti}"), &t.name);
            for k in &t.keys {
                let w = self.expr(&k.expr);
                if w != k.width {
                    self.bad(format!("key {} width {} != expr {w}", k.name, k.width));
                }
            }
            let ids: Vec<ActionId> = t.actions.iter().map(|x| x.action).collect();
            for id in &ids {
                if a.actions.get(id.index()).is_none() {
                    self.bad(format!("action {} out of range", id.0));
                }
            }
            let nparams = |id: ActionId| a.actions.get(id.index()).map_or(0, |x| x.params.len());
            if !ids.contains(&t.default_action.action) {
                self.bad("the default action is not in the table's action list".into());
            }
            if t.default_action.args.len() != nparams(t.default_action.action) {
                self.bad("default action data count".into());
            }
            for e in &t.entries {
                if e.keys.len() != t.keys.len() {
                    self.bad("entry key count".into());
                }
                if !ids.contains(&e.action) {
                    self.bad("entry action not among the table's actions".into());
                }
                if e.args.len() != nparams(e.action) {
                    self.bad("entry action data count".into());
                }
                for (m, k) in e.keys.iter().zip(&t.keys) {
                    let max = if k.width >= 128 {
                        u128::MAX
                    } else {
                        (1u128 << k.width) - 1
                    };
                    let vals: Vec<u128> = match m {
                        KeyMatch::Exact { value } => vec![*value],
                        KeyMatch::Lpm { value, prefix_len } => {
                            if *prefix_len > k.width {
                                self.bad("prefix longer than key".into());
                            }
                            vec![*value]
                        }
                        KeyMatch::Ternary { value, mask } => vec![*value, *mask],
                        KeyMatch::Range { lo, hi } => {
                            if lo > hi {
                                self.bad("empty range".into());
                            }
                            vec![*lo, *hi]
                        }
                        KeyMatch::Any => vec![],
                    };
                    if vals.iter().any(|v| *v > max) {
                        self.bad(format!("entry value wider than key {}", k.name));
                    }
                }
            }
            if self.field(t.hit) != 1 || self.field(t.action_run) != 32 {
                self.bad("hidden slot widths".into());
            }
            for (ext, want_counter) in [(t.direct_counter, true), (t.direct_meter, false)] {
                if let Some(e) = ext {
                    match a.externs.get(e.index()).map(|x| &x.kind) {
                        Some(ExternKind::DirectCounter { table, .. })
                            if want_counter && table.index() == ti => {}
                        Some(ExternKind::DirectMeter { table, .. })
                            if !want_counter && table.index() == ti => {}
                        _ => self.bad("direct resource does not point back at its table".into()),
                    }
                }
            }
        }
        for (i, e) in a.externs.iter().enumerate() {
            self.at(format!("/externs/{i}"), &e.name);
            if let ExternKind::DirectCounter { table, .. } | ExternKind::DirectMeter { table, .. } =
                &e.kind
            {
                if a.tables.get(table.index()).is_none() {
                    self.bad("table out of range".into());
                }
            }
        }
        self.at("/package".into(), "package");
        match &a.package {
            Package::V1Switch(p) => {
                if a.parsers.get(p.parser.index()).is_none() {
                    self.bad("parser out of range".into());
                }
                for c in [
                    p.verify_checksum,
                    p.ingress,
                    p.egress,
                    p.compute_checksum,
                    p.deparser,
                ] {
                    if a.controls.get(c.index()).is_none() {
                        self.bad("control out of range".into());
                    }
                }
                let sm = &p.standard_metadata;
                for (f, w) in [
                    (sm.ingress_port, 9),
                    (sm.egress_spec, 9),
                    (sm.egress_port, 9),
                    (sm.instance_type, 32),
                    (sm.packet_length, 32),
                    (sm.enq_qdepth, 19),
                    (sm.ingress_global_timestamp, 48),
                    (sm.mcast_grp, 16),
                    (sm.checksum_error, 1),
                    (sm.priority, 3),
                ] {
                    if self.field(f) != w {
                        self.bad(format!("standard metadata slot {} should be {w} bits", f.0));
                    }
                }
                for f in &p.user_metadata {
                    self.field(*f);
                }
            }
            Package::NetSparseSwitch(p) => {
                for x in [p.ingress_parser, p.egress_parser] {
                    if a.parsers.get(x.index()).is_none() {
                        self.bad("parser out of range".into());
                    }
                }
                for c in [p.ingress, p.ingress_deparser, p.egress, p.egress_deparser] {
                    if a.controls.get(c.index()).is_none() {
                        self.bad("control out of range".into());
                    }
                }
                for md in [&p.ingress_metadata, &p.egress_metadata] {
                    for (f, w) in [
                        (md.ingress_port, 16),
                        (md.egress_spec, 16),
                        (md.drop, 1),
                        (md.packet_length, 32),
                    ] {
                        if self.field(f) != w {
                            self.bad(format!("switch metadata slot {} should be {w} bits", f.0));
                        }
                    }
                }
                let m = &p.middle;
                self.pr_path("/package/middle", &m.path);
                if let Some(c) = m.cache {
                    if !matches!(
                        a.externs.get(c.index()).map(|e| &e.kind),
                        Some(ExternKind::PropertyCache)
                    ) {
                        self.bad("cache is not a property cache".into());
                    }
                }
            }
            Package::NetSparseNic(p) => {
                for (key, path) in [
                    ("host_to_net", &p.host_to_net),
                    ("net_to_host", &p.net_to_host),
                ] {
                    self.pr_path(&format!("/package/{key}"), &path.path);
                    for (f, w) in [
                        (path.rig.node, 32),
                        (path.rig.unit, 16),
                        (path.rig.command, 32),
                        (path.rig.outcome, 8),
                    ] {
                        if self.field(f) != w {
                            self.bad(format!("RIG slot {} should be {w} bits", f.0));
                        }
                    }
                }
                if !p.host_to_net.path.per_packet.is_empty() {
                    self.bad("host_to_net has a per-packet part".into());
                }
            }
            Package::Psa(p) => {
                for x in [p.ingress_parser, p.egress_parser] {
                    if a.parsers.get(x.index()).is_none() {
                        self.bad("parser out of range".into());
                    }
                }
                for c in [p.ingress, p.ingress_deparser, p.egress, p.egress_deparser] {
                    if a.controls.get(c.index()).is_none() {
                        self.bad("control out of range".into());
                    }
                }
                for (_, f) in p.metadata.all() {
                    self.field(f);
                }
                for b in [&p.normalized, &p.clone_i2e, &p.recirculate] {
                    if b.from.len() != b.to.len() {
                        self.bad("PSA bridge lists of different lengths".into());
                    }
                    for (f, t) in b.from.iter().zip(&b.to) {
                        if self.field(*f) != self.field(*t) {
                            self.bad(format!(
                                "PSA bridge slots {} and {} differ in width",
                                f.0, t.0
                            ));
                        }
                    }
                }
                for f in p.resubmit_meta.iter().chain(&p.clone_e2e_meta) {
                    self.field(*f);
                }
            }
            Package::SpinNic(p) => {
                for c in [p.header_handler, p.payload_handler, p.completion_handler] {
                    if a.controls.get(c.index()).is_none() {
                        self.bad(format!("handler control {} out of range", c.0));
                    }
                }
                let (m, k, d) = (&p.msg, &p.pkt, &p.md);
                for (f, w) in [
                    (m.src, 32),
                    (m.msg_id, 32),
                    (m.match_bits, 64),
                    (m.length, 32),
                    (m.user, 64),
                    (k.offset, 32),
                    (k.length, 32),
                    (k.seq, 32),
                    (d.rc, 8),
                    (d.node, 32),
                    (d.hpu, 16),
                    (d.dropped_bytes, 32),
                    (d.flow_control, 1),
                    (d.timed_out, 1),
                ] {
                    if self.field(f) != w {
                        self.bad(format!("sPIN slot {} should be {w} bits", f.0));
                    }
                }
                for f in &p.state {
                    self.field(*f);
                }
            }
        }
    }
}
