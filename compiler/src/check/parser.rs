//! Parsers: states, transitions to states, `accept` and `reject`, and
//! `select` with its keysets and values.

use super::{did_you_mean, Checker, Ctx, Sym};
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, Keyset, Target, Type};

use super::decl::const_bits;

impl Checker<'_> {
    pub(super) fn parser_decl(&mut self, p: &ast::ParserDecl) {
        if self.reject_generic(&p.type_params, "parser", &p.name)
            | self.reject_ctor_params(&p.ctor_params, "parser", &p.name)
        {
            return;
        }
        let h = self.m.parsers.append(ir::Parser {
            name: p.name.name.clone(),
            params: Vec::new(),
            local_inits: Vec::new(),
            instances: Vec::new(),
            states: Vec::new(),
            start: 0,
            span: p.span,
        });
        let saved = std::mem::replace(
            &mut self.ctx,
            Ctx {
                in_parser: true,
                ..Ctx::default()
            },
        );
        self.push_scope();
        let params = self.param_vars(&p.params, "a parser");
        let mut ok = params.is_some();
        if !ok {
            self.broken_blocks.push(ir::BlockRef::Parser(h));
        }
        let params = params.unwrap_or_default();
        let mut local_inits = Vec::new();
        let mut instances = Vec::new();
        for l in &p.locals {
            match l {
                ast::Local::Const(k) => {
                    if let Some((ty, v)) = self.const_decl(k) {
                        self.declare(&k.name, Sym::Const(ty, v));
                    }
                }
                ast::Local::Var(v) => {
                    if let Some(s) = self.control_local_var(v) {
                        local_inits.push(s);
                    }
                }
                ast::Local::Instantiation(i) => {
                    if let Some(ih) = self.instantiation(i) {
                        self.declare(&i.name, Sym::Instance(ih));
                        instances.push(ih);
                    } else {
                        self.poison(&i.name);
                    }
                }
                ast::Local::ValueSet(v) => {
                    let d = Diagnostic::error(
                        codes::UNSUPPORTED,
                        "`value_set` is not supported by this compiler",
                        v.span,
                    )
                    .with_hint(
                        "use constant keysets in the `select`, or a table in the ingress control",
                    );
                    self.emit(d);
                    ok = false;
                }
                ast::Local::Action(a) => {
                    self.err(
                        codes::NOT_ALLOWED_HERE,
                        "parsers cannot declare actions",
                        a.name.span,
                    );
                    ok = false;
                }
                ast::Local::Table(t) => {
                    self.err(
                        codes::NOT_ALLOWED_HERE,
                        "parsers cannot declare tables",
                        t.name.span,
                    );
                    ok = false;
                }
            }
        }
        // State names first: transitions may go forward.
        let mut names: Vec<String> = Vec::new();
        for s in &p.states {
            let n = &s.name.name;
            if n == "accept" || n == "reject" {
                self.err(
                    codes::DUPLICATE,
                    format!("`{n}` is a built-in state and cannot be declared"),
                    s.name.span,
                );
                ok = false;
            } else if let Some(i) = names.iter().position(|x| x == n) {
                let d = Diagnostic::error(
                    codes::DUPLICATE,
                    format!("state `{n}` is declared twice"),
                    s.name.span,
                )
                .with_secondary(p.states[i].name.span, "first declared here");
                self.emit(d);
                ok = false;
            }
            names.push(n.clone());
        }
        let start = names.iter().position(|n| n == "start");
        if start.is_none() {
            let d = Diagnostic::error(
                codes::NO_START,
                format!("parser `{}` has no `start` state", p.name.name),
                p.name.span,
            )
            .with_hint("parsing begins in the state named `start`: add `state start { ... }`");
            self.emit(d);
            ok = false;
        }
        let mut states = Vec::new();
        for s in &p.states {
            // The state's locals are in scope in its transition's `select`.
            self.push_scope();
            let body = ir::Block {
                stmts: self.stmt_list(&s.body),
            };
            let transition = match &s.transition {
                None => Some(ir::Transition::Direct(Target::Reject)),
                Some(ast::Transition::Direct(id)) => {
                    self.state_target(id, &names).map(ir::Transition::Direct)
                }
                Some(ast::Transition::Select { exprs, cases, span }) => {
                    self.select(exprs, cases, *span, &names)
                }
            };
            self.pop_scope();
            match transition {
                Some(transition) => states.push(ir::State {
                    name: s.name.name.clone(),
                    body,
                    transition,
                    span: s.span,
                }),
                None => ok = false,
            }
        }
        self.pop_scope();
        self.ctx = saved;
        if ok {
            if let Some(start) = start {
                // Unreachable states are a warning.
                let mut reached = vec![false; states.len()];
                let mut todo = vec![start];
                while let Some(i) = todo.pop() {
                    if reached[i] {
                        continue;
                    }
                    reached[i] = true;
                    let targets: Vec<Target> = match &states[i].transition {
                        ir::Transition::Direct(t) => vec![*t],
                        ir::Transition::Select { cases, .. } => cases.iter().map(|c| c.1).collect(),
                    };
                    for t in targets {
                        if let Target::State(j) = t {
                            todo.push(j);
                        }
                    }
                }
                self.endless_loops(&states, &reached);
                for (i, s) in p.states.iter().enumerate() {
                    if !reached[i] {
                        let d = Diagnostic::warning(
                            codes::UNREACHABLE_STATE,
                            format!("state `{}` is never reached from `start`", s.name.name),
                            s.name.span,
                        )
                        .with_hint("remove it, or add a transition to it");
                        self.emit(d);
                    }
                }
            }
        }
        let pr = &mut self.m.parsers[h];
        pr.params = params;
        pr.local_inits = local_inits;
        pr.instances = instances;
        pr.states = states;
        pr.start = start.unwrap_or(0);
        self.declare(&p.name, Sym::Parser(h));
    }

    pub(super) fn state_target(&mut self, id: &ast::Ident, names: &[String]) -> Option<Target> {
        match id.name.as_str() {
            "accept" => return Some(Target::Accept),
            "reject" => return Some(Target::Reject),
            _ => {}
        }
        if let Some(i) = names.iter().position(|n| *n == id.name) {
            return Some(Target::State(i));
        }
        let mut d = Diagnostic::error(
            codes::UNKNOWN_STATE,
            format!("there is no state `{}` in this parser", id.name),
            id.span,
        )
        .with_label("unknown state");
        let cands = names.iter().map(String::as_str).chain(["accept", "reject"]);
        if let Some(b) = did_you_mean(&id.name, cands) {
            d = d.with_hint(format!("did you mean `{b}`?"));
        }
        self.emit(d);
        None
    }

    pub(super) fn select(
        &mut self,
        exprs: &[ast::Expr],
        cases: &[ast::SelectCase],
        span: Span,
        names: &[String],
    ) -> Option<ir::Transition> {
        let mut keys = Vec::new();
        for e in exprs {
            let x = self.expr(e)?;
            if self.m.scalar_width(&x.ty).is_none() {
                let tn = self.m.type_name(&x.ty);
                self.err(
                    codes::SELECT_KEYSET,
                    format!("cannot select on a value of type `{tn}`"),
                    e.span,
                );
                return None;
            }
            keys.push(x);
        }
        let _ = span;
        let mut out = Vec::new();
        let mut ok = true;
        for c in cases {
            let target = self.state_target(&c.next, names);
            let all_any = c.keysets.len() == 1
                && matches!(
                    c.keysets[0],
                    ast::Keyset::Default(_) | ast::Keyset::DontCare(_)
                );
            let keysets = if all_any {
                Some(vec![Keyset::Any; keys.len()])
            } else if c.keysets.len() != keys.len() {
                let d = Diagnostic::error(
                    codes::SELECT_KEYSET,
                    format!(
                        "this case has {} keyset(s) but the select has {} expression(s)",
                        c.keysets.len(),
                        keys.len()
                    ),
                    c.span,
                );
                self.emit(d);
                None
            } else {
                let mut v = Vec::new();
                let mut good = true;
                for (ks, k) in c.keysets.iter().zip(&keys) {
                    match self.select_keyset(ks, &k.ty) {
                        Some(x) => v.push(x),
                        None => good = false,
                    }
                }
                good.then_some(v)
            };
            match (keysets, target) {
                (Some(k), Some(t)) => out.push((k, t)),
                _ => ok = false,
            }
        }
        ok.then_some(ir::Transition::Select { keys, cases: out })
    }

    pub(super) fn select_keyset(&mut self, ks: &ast::Keyset, ty: &Type) -> Option<Keyset> {
        match ks {
            ast::Keyset::Default(_) | ast::Keyset::DontCare(_) => Some(Keyset::Any),
            ast::Keyset::Expr(e) => {
                let v = self.select_value(e, ty)?;
                Some(Keyset::Value(v))
            }
            ast::Keyset::Mask(v, m) => {
                let v = self.select_value(v, ty)?;
                let m = self.select_value(m, ty)?;
                Some(Keyset::Mask(v & m, m))
            }
            ast::Keyset::Range(lo, hi) => {
                let l = self.select_value(lo, ty)?;
                let h = self.select_value(hi, ty)?;
                if l > h {
                    self.err(
                        codes::SELECT_KEYSET,
                        format!("empty range: {l} > {h}"),
                        lo.span.to(hi.span),
                    );
                    return None;
                }
                Some(Keyset::Range(l, h))
            }
        }
    }

    pub(super) fn select_value(&mut self, e: &ast::Expr, ty: &Type) -> Option<u128> {
        let x = self.expr(e)?;
        if x.ty != *ty && x.ty != Type::InfInt {
            let (en, fnm) = (self.m.type_name(ty), self.m.type_name(&x.ty));
            let code = match (ty.int_width(), x.ty.int_width()) {
                (Some((a, _)), Some((b, _))) if a != b => codes::WIDTH_MISMATCH,
                _ => codes::SELECT_KEYSET,
            };
            let d = Diagnostic::error(
                code,
                format!("this keyset is `{fnm}`, but the select expression is `{en}`"),
                e.span,
            )
            .with_label(format!("this is `{fnm}`"));
            self.emit(d);
            return None;
        }
        let x = self.coerce(x, ty)?;
        match const_bits(&x) {
            Some(v) => Some(v),
            None => {
                let d = Diagnostic::error(
                    codes::NOT_CONSTANT,
                    "select keysets must be compile-time constants",
                    e.span,
                )
                .with_hint("value sets (`value_set`) are not supported; use constants");
                self.emit(d);
                None
            }
        }
    }
}

impl Checker<'_> {
    /// Report every cycle of unconditional transitions among reachable
    /// states whose bodies call nothing (no extract, advance or verify):
    /// such a parser never ends ([`codes::PARSER_LOOP`]). Loops through a
    /// `select`, or through a state that calls something, may end and are
    /// left alone.
    fn endless_loops(&mut self, states: &[ir::State], reached: &[bool]) {
        let calls = |s: &ir::State| {
            s.body
                .stmts
                .iter()
                .any(|st| !matches!(st.kind, ir::StmtKind::Assign(..)))
        };
        let next = |i: usize| match states[i].transition {
            ir::Transition::Direct(Target::State(j)) => Some(j),
            _ => None,
        };
        // Each state has at most one unconditional successor: follow the
        // chains, colouring states by the walk that first met them.
        let mut walk = vec![usize::MAX; states.len()];
        for first in 0..states.len() {
            if !reached[first] || walk[first] != usize::MAX {
                continue;
            }
            let mut i = first;
            loop {
                walk[i] = first;
                match next(i) {
                    Some(j) if walk[j] == usize::MAX => i = j,
                    Some(j) if walk[j] == first => {
                        // A new cycle through j.
                        let mut cycle = vec![j];
                        let mut k = next(j).unwrap_or(j);
                        while k != j {
                            cycle.push(k);
                            k = next(k).unwrap_or(j);
                        }
                        if !cycle.iter().any(|&c| calls(&states[c])) {
                            let names: Vec<&str> =
                                cycle.iter().map(|&c| states[c].name.as_str()).collect();
                            let d = Diagnostic::error(
                                codes::PARSER_LOOP,
                                format!(
                                    "the parser never ends: {} -> {} transition unconditionally \
                                     and extract nothing",
                                    names.join(" -> "),
                                    names[0]
                                ),
                                states[j].span,
                            )
                            .with_hint(
                                "extract a header in the loop, or leave it through a select",
                            );
                            self.emit(d);
                        }
                        break;
                    }
                    _ => break,
                }
            }
        }
    }
}
