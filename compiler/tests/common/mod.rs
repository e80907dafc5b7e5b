//! Shared helpers of the compiler's integration tests: compiling snippets and
//! checking an artifact's internal consistency.
#![allow(dead_code)]

use netsparse_compiler::diag::{render_all, Diagnostic, Severity};
use netsparse_compiler::source::SourceMap;
use netsparse_compiler::{compile_source, CompileOptions, Compiled, TargetLimits};
use netsparse_externs::artifact::{self as a, Artifact, FieldKind, HeaderRef, LValue, Next};

/// The v1model boilerplate around a test's declarations and ingress body.
pub fn v1model(decls: &str, ingress_locals: &str, ingress_apply: &str) -> String {
    format!(
        r#"#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<16> b; bit<32> c; bit<8> d; }}
struct headers {{ h_t h; h_t g; }}
struct metadata {{ bit<8> x; bit<16> y; bit<32> z; bool flag; }}
{decls}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control VC(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
{ingress_locals}
    apply {{
{ingress_apply}
    }}
}}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr); }} }}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"#
    )
}

/// Compile a program text; on failure return the rendered diagnostics and the codes.
pub fn compile(text: &str) -> Result<Compiled, (String, Vec<&'static str>)> {
    compile_with(text, TargetLimits::default())
}

/// Compile with target limits.
pub fn compile_with(
    text: &str,
    limits: TargetLimits,
) -> Result<Compiled, (String, Vec<&'static str>)> {
    let mut sources = SourceMap::new();
    let opts = CompileOptions {
        limits,
        ..CompileOptions::default()
    };
    match compile_source(&mut sources, "test.p4", text, &opts) {
        Ok(c) => {
            let problems = validate(&c.artifact);
            assert!(problems.is_empty(), "invalid artifact: {problems:#?}");
            Ok(c)
        }
        Err(diags) => Err((render_all(&diags, &sources), error_codes(&diags))),
    }
}

/// The codes of the error (not warning) diagnostics.
pub fn error_codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.code)
        .collect()
}

/// Compile and expect success.
#[track_caller]
pub fn ok(text: &str) -> Compiled {
    match compile(text) {
        Ok(c) => c,
        Err((rendered, _)) => panic!("expected the program to compile:\n{rendered}"),
    }
}

/// Compile and expect failure with exactly `code` (every error has it).
#[track_caller]
pub fn fails(text: &str, code: &str) -> String {
    match compile(text) {
        Ok(_) => panic!("expected error {code}, but the program compiled"),
        Err((rendered, codes)) => {
            assert!(!codes.is_empty(), "no errors:\n{rendered}");
            assert!(
                codes.iter().all(|c| *c == code),
                "expected only {code}, got {codes:?}:\n{rendered}"
            );
            rendered
        }
    }
}

// ----- artifact validation -------------------------------------------------------------

struct V<'a> {
    a: &'a Artifact,
    problems: Vec<String>,
    where_: String,
}

/// Check an artifact's internal consistency: every id in range, every
/// assignment's widths agree, every slice within its operand, header layouts
/// contiguous, tables' actions/entries/defaults coherent. Returns the problems.
pub fn validate(art: &Artifact) -> Vec<String> {
    let mut v = V {
        a: art,
        problems: Vec::new(),
        where_: String::new(),
    };
    v.all();
    v.problems
}

impl V<'_> {
    fn bad(&mut self, msg: String) {
        self.problems.push(format!("{}: {msg}", self.where_));
    }

    fn field(&mut self, f: a::FieldId) -> u16 {
        match self.a.fields.get(f.index()) {
            Some(x) => x.width,
            None => {
                self.bad(format!("field {} out of range", f.0));
                0
            }
        }
    }

    fn all(&mut self) {
        let a = self.a;
        if a.format != a::ARTIFACT_FORMAT || a.version != a::ARTIFACT_VERSION {
            self.bad("bad format/version".into());
        }
        if a.errors.len() < 7 || a.errors[0] != "NoError" || a.errors[6] != "ParserInvalidArgument"
        {
            self.bad("core errors must come first".into());
        }
        for (i, f) in a.fields.iter().enumerate() {
            self.where_ = format!("field {i} ({})", f.name);
            if f.width == 0 || f.width > a::MAX_WIDTH {
                self.bad(format!("width {}", f.width));
            }
            if let FieldKind::Header(h) = f.kind {
                match a.headers.get(h.index()) {
                    Some(hd) if hd.fields.iter().any(|x| x.field.index() == i) => {}
                    _ => self.bad("header field not listed in its header".into()),
                }
            }
        }
        for (i, h) in a.headers.iter().enumerate() {
            self.where_ = format!("header {i} ({})", h.name);
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
                    if f.kind != FieldKind::Header(a::HeaderId(i as u32)) {
                        self.bad("header field slot has the wrong kind".into());
                    }
                }
            }
            if off != h.bit_width {
                self.bad(format!("bit_width {} != {off}", h.bit_width));
            }
        }
        for (i, s) in a.stacks.iter().enumerate() {
            self.where_ = format!("stack {i} ({})", s.name);
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
            self.where_ = format!("parser {i} ({})", p.name);
            if p.start.index() >= p.states.len() {
                self.bad("start out of range".into());
            }
            for s in &p.states {
                self.where_ = format!("parser {} state {}", p.name, s.name);
                self.stmts(&s.body);
                let nexts: Vec<Next> = match &s.transition {
                    a::Transition::Direct { next } => vec![*next],
                    a::Transition::Select { keys, cases } => {
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
        for c in &a.controls {
            self.where_ = format!("control {}", c.name);
            self.stmts(&c.body);
        }
        for (i, act) in a.actions.iter().enumerate() {
            self.where_ = format!("action {i} ({})", act.name);
            for p in &act.params {
                let w = self.field(p.field);
                if w != p.width {
                    self.bad(format!("param {} width {} != slot {w}", p.name, p.width));
                }
                if a.fields.get(p.field.index()).map(|f| f.kind) != Some(FieldKind::ActionParam) {
                    self.bad(format!("param {} slot is not an action parameter", p.name));
                }
            }
            self.stmts(&act.body);
        }
        for (ti, t) in a.tables.iter().enumerate() {
            self.where_ = format!("table {}", t.name);
            for k in &t.keys {
                let w = self.expr(&k.expr);
                if w != k.width {
                    self.bad(format!("key {} width {} != expr {w}", k.name, k.width));
                }
            }
            let ids: Vec<a::ActionId> = t.actions.iter().map(|x| x.action).collect();
            for id in &ids {
                if a.actions.get(id.index()).is_none() {
                    self.bad(format!("action {} out of range", id.0));
                }
            }
            let nparams = |id: a::ActionId| a.actions.get(id.index()).map_or(0, |x| x.params.len());
            if !ids.contains(&t.default_action.action) {
                self.bad("default action not among the table's actions".into());
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
                        a::KeyMatch::Exact { value } => vec![*value],
                        a::KeyMatch::Lpm { value, prefix_len } => {
                            if *prefix_len > k.width {
                                self.bad("prefix longer than key".into());
                            }
                            vec![*value]
                        }
                        a::KeyMatch::Ternary { value, mask } => vec![*value, *mask],
                        a::KeyMatch::Range { lo, hi } => {
                            if lo > hi {
                                self.bad("empty range".into());
                            }
                            vec![*lo, *hi]
                        }
                        a::KeyMatch::Any => vec![],
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
                        Some(a::ExternKind::DirectCounter { table, .. })
                            if want_counter && table.index() == ti => {}
                        Some(a::ExternKind::DirectMeter { table, .. })
                            if !want_counter && table.index() == ti => {}
                        _ => self.bad("direct resource does not point back at its table".into()),
                    }
                }
            }
        }
        for e in &a.externs {
            self.where_ = format!("extern {}", e.name);
            if let a::ExternKind::DirectCounter { table, .. }
            | a::ExternKind::DirectMeter { table, .. } = &e.kind
            {
                if a.tables.get(table.index()).is_none() {
                    self.bad("table out of range".into());
                }
            }
        }
        self.where_ = "package".into();
        match &a.package {
            a::Package::V1Switch(p) => {
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
            a::Package::NetSparseSwitch(p) => {
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
                self.where_ = format!("middle {}", m.name);
                self.stmts(&m.per_packet);
                self.stmts(&m.per_pr);
                for (f, w) in [
                    (m.pr.src, 32),
                    (m.pr.tid, 16),
                    (m.pr.idx, 64),
                    (m.pr.req_id, 32),
                    (m.pr_meta.pr_type, 16),
                    (m.pr_meta.dst, 32),
                    (m.pr_meta.prop_len, 32),
                    (m.pr_meta.drop, 1),
                ] {
                    if self.field(f) != w {
                        self.bad(format!("PR slot {} should be {w} bits", f.0));
                    }
                }
                if let Some(c) = m.cache {
                    if !matches!(
                        a.externs.get(c.index()).map(|e| &e.kind),
                        Some(a::ExternKind::PropertyCache)
                    ) {
                        self.bad("cache is not a property cache".into());
                    }
                }
            }
            a::Package::NetSparseNic(p) => {
                for path in [&p.host_to_net, &p.net_to_host] {
                    self.where_ = format!("NIC path {}", path.name);
                    self.stmts(&path.per_packet);
                    self.stmts(&path.per_pr);
                    for (f, w) in [
                        (path.pr.src, 32),
                        (path.pr.tid, 16),
                        (path.pr.idx, 64),
                        (path.pr.req_id, 32),
                        (path.pr_meta.pr_type, 16),
                        (path.pr_meta.dst, 32),
                        (path.pr_meta.prop_len, 32),
                        (path.pr_meta.drop, 1),
                        (path.rig.node, 32),
                        (path.rig.unit, 16),
                        (path.rig.command, 32),
                        (path.rig.outcome, 8),
                    ] {
                        if self.field(f) != w {
                            self.bad(format!("NIC slot {} should be {w} bits", f.0));
                        }
                    }
                }
                if !p.host_to_net.per_packet.is_empty() {
                    self.bad("host_to_net has a per-packet part".into());
                }
            }
        }
    }

    fn href(&mut self, r: &HeaderRef) -> Option<&a::Header> {
        match r {
            HeaderRef::Static { header } => {
                if self.a.headers.get(header.index()).is_none() {
                    self.bad(format!("header {} out of range", header.0));
                }
            }
            HeaderRef::Index { stack, index } => {
                self.expr(index);
                if self.a.stacks.get(stack.index()).is_none() {
                    self.bad("stack out of range".into());
                }
            }
            HeaderRef::Next { stack } | HeaderRef::Last { stack } => {
                if self.a.stacks.get(stack.index()).is_none() {
                    self.bad("stack out of range".into());
                }
            }
        }
        self.a.header_of_ref(r)
    }

    fn lvalue(&mut self, l: &LValue) -> u16 {
        match l {
            LValue::Field { field } => self.field(*field),
            LValue::Slice { field, hi, lo } => {
                let w = self.field(*field);
                if hi < lo || *hi >= w {
                    self.bad(format!("slice [{hi}:{lo}] of a {w}-bit field"));
                }
                hi.saturating_sub(*lo) + 1
            }
            LValue::StackField {
                header,
                field_index,
            } => {
                let w = self
                    .href(header)
                    .and_then(|h| h.fields.get(*field_index as usize))
                    .map(|f| f.width);
                w.unwrap_or_else(|| {
                    self.bad("stack field out of range".into());
                    0
                })
            }
        }
    }

    fn expr(&mut self, e: &a::Expr) -> u16 {
        match e {
            a::Expr::Const { value, width, .. } => {
                if *width < 128 && *value >> width != 0 {
                    self.bad(format!("constant {value} wider than {width} bits"));
                }
                *width
            }
            a::Expr::Field { field } => self.field(*field),
            a::Expr::StackField {
                header,
                field_index,
            } => {
                let w = self
                    .href(header)
                    .and_then(|h| h.fields.get(*field_index as usize))
                    .map(|f| f.width);
                w.unwrap_or_else(|| {
                    self.bad("stack field out of range".into());
                    0
                })
            }
            a::Expr::IsValid { header } => {
                self.href(header);
                1
            }
            a::Expr::Unary { op, width, arg, .. } => {
                let w = self.expr(arg);
                if w != *width || (*op == a::UnaryOp::Not && *width != 1) {
                    self.bad(format!("unary {op:?} width {width} on {w}"));
                }
                *width
            }
            a::Expr::Binary {
                op,
                width,
                lhs,
                rhs,
                ..
            } => {
                let (l, r) = (self.expr(lhs), self.expr(rhs));
                use a::BinaryOp::*;
                let ok = match op {
                    Shl | Shr => l == *width,
                    Eq | Ne | Lt | Le | Gt | Ge => l == r && *width == 1,
                    LAnd | LOr => l == 1 && r == 1 && *width == 1,
                    _ => l == *width && r == *width,
                };
                if !ok {
                    self.bad(format!("binary {op:?} width {width} on {l}, {r}"));
                }
                *width
            }
            a::Expr::Slice { arg, hi, lo } => {
                let w = self.expr(arg);
                if hi < lo || *hi >= w {
                    self.bad(format!("slice [{hi}:{lo}] of a {w}-bit value"));
                }
                hi.saturating_sub(*lo) + 1
            }
            a::Expr::Concat {
                lhs,
                rhs,
                rhs_width,
                width,
                ..
            } => {
                let (l, r) = (self.expr(lhs), self.expr(rhs));
                if r != *rhs_width || l + r != *width {
                    self.bad(format!(
                        "concat {l} ++ {r} as {width} (rhs_width {rhs_width})"
                    ));
                }
                *width
            }
            a::Expr::Cast {
                arg,
                arg_width,
                width,
                ..
            } => {
                let w = self.expr(arg);
                if w != *arg_width {
                    self.bad(format!("cast from {w} declared {arg_width}"));
                }
                *width
            }
            a::Expr::Mux {
                cond,
                then,
                otherwise,
                width,
            } => {
                let (c, t, o) = (self.expr(cond), self.expr(then), self.expr(otherwise));
                if c != 1 || t != *width || o != *width {
                    self.bad(format!("mux {c} ? {t} : {o} as {width}"));
                }
                *width
            }
            a::Expr::Lookahead { width, .. } => *width,
        }
    }

    fn assign(&mut self, dst: &LValue, src: &a::Expr) {
        let (d, s) = (self.lvalue(dst), self.expr(src));
        if d != s {
            self.bad(format!("assignment of {s} bits to {d} bits"));
        }
    }

    fn extern_kind(&mut self, e: a::ExternId, ok: fn(&a::ExternKind) -> bool) {
        match self.a.externs.get(e.index()) {
            Some(x) if ok(&x.kind) => {}
            _ => self.bad(format!("extern {} has the wrong kind", e.0)),
        }
    }

    fn stmts(&mut self, s: &[a::Stmt]) {
        for x in s {
            self.stmt(x);
        }
    }

    fn stmt(&mut self, s: &a::Stmt) {
        match s {
            a::Stmt::Assign { dst, src } => self.assign(dst, src),
            a::Stmt::SetValid { header }
            | a::Stmt::SetInvalid { header }
            | a::Stmt::Extract { header }
            | a::Stmt::Emit { header } => {
                self.href(header);
            }
            a::Stmt::CopyHeader { dst, src } => {
                let d = self.href(dst).map(|h| h.type_name.clone());
                let s = self.href(src).map(|h| h.type_name.clone());
                if d != s {
                    self.bad("header copy between different types".into());
                }
            }
            a::Stmt::PushFront { stack, .. } | a::Stmt::PopFront { stack, .. } => {
                if self.a.stacks.get(stack.index()).is_none() {
                    self.bad("stack out of range".into());
                }
            }
            a::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if self.expr(cond) != 1 {
                    self.bad("if condition is not 1 bit".into());
                }
                self.stmts(then);
                self.stmts(otherwise);
            }
            a::Stmt::Switch {
                selector,
                cases,
                default,
            } => {
                let w = self.expr(selector);
                for c in cases {
                    if c.values.iter().any(|v| w < 128 && *v >> w != 0) {
                        self.bad("switch value wider than selector".into());
                    }
                    self.stmts(&c.body);
                }
                self.stmts(default);
            }
            a::Stmt::ApplyTable { table } => {
                if self.a.tables.get(table.index()).is_none() {
                    self.bad("table out of range".into());
                }
            }
            a::Stmt::CallAction { action } => {
                if self.a.actions.get(action.index()).is_none() {
                    self.bad("action out of range".into());
                }
            }
            a::Stmt::Inlined { body, .. } => self.stmts(body),
            a::Stmt::Return | a::Stmt::Exit => {}
            a::Stmt::Advance { bits } => {
                self.expr(bits);
            }
            a::Stmt::Verify { cond, error } => {
                if self.expr(cond) != 1 {
                    self.bad("verify condition is not 1 bit".into());
                }
                if *error as usize >= self.a.errors.len() {
                    self.bad("verify error out of range".into());
                }
            }
            a::Stmt::Prim(p) => self.prim(p),
        }
    }

    fn prim(&mut self, p: &a::Prim) {
        use a::Prim::*;
        match p {
            MarkToDrop => {}
            RegisterRead {
                register,
                dst,
                index,
            } => {
                self.extern_kind(*register, |k| matches!(k, a::ExternKind::Register { .. }));
                let w = self.lvalue(dst);
                if let Some(a::ExternKind::Register { width, .. }) =
                    self.a.externs.get(register.index()).map(|e| &e.kind)
                {
                    if *width != w {
                        self.bad("register read into a slot of another width".into());
                    }
                }
                self.expr(index);
            }
            RegisterWrite {
                register,
                index,
                value,
            } => {
                self.extern_kind(*register, |k| matches!(k, a::ExternKind::Register { .. }));
                self.expr(index);
                let w = self.expr(value);
                if let Some(a::ExternKind::Register { width, .. }) =
                    self.a.externs.get(register.index()).map(|e| &e.kind)
                {
                    if *width != w {
                        self.bad("register write of another width".into());
                    }
                }
            }
            Count { counter, index } => {
                self.extern_kind(*counter, |k| matches!(k, a::ExternKind::Counter { .. }));
                self.expr(index);
            }
            ExecuteMeter { meter, index, dst } => {
                self.extern_kind(*meter, |k| matches!(k, a::ExternKind::Meter { .. }));
                self.expr(index);
                self.lvalue(dst);
            }
            ReadDirectMeter { meter, dst } => {
                self.extern_kind(*meter, |k| matches!(k, a::ExternKind::DirectMeter { .. }));
                self.lvalue(dst);
            }
            CountDirect { counter } => self.extern_kind(*counter, |k| {
                matches!(k, a::ExternKind::DirectCounter { .. })
            }),
            Hash {
                dst,
                base,
                data,
                max,
                ..
            } => {
                self.lvalue(dst);
                self.expr(base);
                self.expr(max);
                for d in data {
                    self.expr(d);
                }
            }
            VerifyChecksum {
                cond,
                data,
                checksum,
                ..
            } => {
                self.expr(cond);
                self.expr(checksum);
                for d in data {
                    self.expr(d);
                }
            }
            UpdateChecksum {
                cond, data, dst, ..
            } => {
                self.expr(cond);
                self.lvalue(dst);
                for d in data {
                    self.expr(d);
                }
            }
            Random { dst, lo, hi } => {
                let w = self.lvalue(dst);
                if self.expr(lo) != w || self.expr(hi) != w {
                    self.bad("random bounds width".into());
                }
            }
            Digest { receiver, data, .. } => {
                self.expr(receiver);
                for (_, d) in data {
                    self.expr(d);
                }
            }
            LogMsg { args, .. } => {
                for d in args {
                    self.expr(d);
                }
            }
            Clone {
                session, preserve, ..
            } => {
                self.expr(session);
                for f in preserve {
                    self.field(*f);
                }
            }
            Resubmit { preserve } | Recirculate { preserve } => {
                for f in preserve {
                    self.field(*f);
                }
            }
            Truncate { length } => {
                self.expr(length);
            }
            Assert { cond } | Assume { cond } => {
                if self.expr(cond) != 1 {
                    self.bad("assert condition is not 1 bit".into());
                }
            }
            CacheLookup { cache, dst } => {
                self.extern_kind(*cache, |k| matches!(k, a::ExternKind::PropertyCache));
                if self.lvalue(dst) != 1 {
                    self.bad("lookup result is not 1 bit".into());
                }
            }
            CacheInsert { cache } => {
                self.extern_kind(*cache, |k| matches!(k, a::ExternKind::PropertyCache))
            }
            IdxFilterSet { idx } => self.want(idx, 64, "RIG idx"),
            IdxFilterTest { idx, dst } | PendingContains { idx, dst } => {
                self.want(idx, 64, "RIG idx");
                if self.lvalue(dst) != 1 {
                    self.bad("RIG test result is not 1 bit".into());
                }
            }
            PendingInsert { idx, req_id } => {
                self.want(idx, 64, "RIG idx");
                if self.lvalue(req_id) != 32 {
                    self.bad("request id destination is not 32 bits".into());
                }
            }
            PendingComplete {
                tid,
                req_id,
                idx,
                prop_len,
                dst,
            } => {
                self.want(tid, 16, "tid");
                self.want(req_id, 32, "req_id");
                self.want(idx, 64, "RIG idx");
                self.want(prop_len, 32, "prop_len");
                if self.lvalue(dst) != 1 {
                    self.bad("PendingComplete result is not 1 bit".into());
                }
            }
            HostRead { idx, prop_len, dst } => {
                self.want(idx, 64, "RIG idx");
                self.want(prop_len, 32, "prop_len");
                if self.lvalue(dst) != 1 {
                    self.bad("HostRead result is not 1 bit".into());
                }
            }
            HostWrite { tid, req_id, idx } => {
                self.want(tid, 16, "tid");
                self.want(req_id, 32, "req_id");
                self.want(idx, 64, "RIG idx");
            }
        }
    }

    /// An operand of a fixed width.
    fn want(&mut self, e: &a::Expr, width: u16, what: &str) {
        if self.expr(e) != width {
            self.bad(format!("{what} operand is not {width} bits"));
        }
    }
}
