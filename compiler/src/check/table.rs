//! Tables: keys and match kinds, action references and action data,
//! default actions, const entries and their keysets, size and direct
//! resources (counters, meters).

use netsparse_externs::artifact::{KeyMatch, MatchKind};

use super::consts::mask;
use super::{did_you_mean, Checker, Sym};
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, ExternInstKind, Handle, InstanceKind, ParamDef, Type};

use super::decl::{const_bits, expr_text};

impl Checker<'_> {
    pub(super) fn table_decl(
        &mut self,
        t: &ast::TableDecl,
        owner: Handle<ir::Control>,
    ) -> Option<Handle<ir::Table>> {
        let mut keys: Vec<ir::Key> = Vec::new();
        let mut actions: Vec<ir::TableAction> = Vec::new();
        let mut has_actions = false;
        let mut size: u32 = 1024;
        let mut direct_counter = None;
        let mut direct_meter = None;
        let mut seen: Vec<(String, Span)> = Vec::new();
        let mut lpm_seen: Option<Span> = None;
        let prop_name = |p: &ast::TableProperty| -> (String, Span) {
            match p {
                ast::TableProperty::Key(_, s) => ("key".into(), *s),
                ast::TableProperty::Actions(_, s) => ("actions".into(), *s),
                ast::TableProperty::DefaultAction { span, .. } => ("default_action".into(), *span),
                ast::TableProperty::Entries { span, .. } => ("entries".into(), *span),
                ast::TableProperty::Other { name, span, .. } => (name.name.clone(), *span),
            }
        };
        for p in &t.properties {
            let (n, s) = prop_name(p);
            if let Some((_, prev)) = seen.iter().find(|(x, _)| *x == n) {
                let d = Diagnostic::error(
                    codes::TABLE_PROPERTY,
                    format!("table property `{n}` is given twice"),
                    s,
                )
                .with_secondary(*prev, "first given here");
                self.emit(d);
                continue;
            }
            seen.push((n, s));
        }
        // Entries are read against the key and the actions, so they come
        // after both (p4c refuses the other order too).
        let at = |name: &str| seen.iter().find(|(x, _)| x == name).map(|(_, s)| *s);
        if let Some(e) = at("entries") {
            for before in ["key", "actions"] {
                if let Some(k) = at(before).filter(|k| k.start > e.start) {
                    let d = Diagnostic::error(
                        codes::TABLE_PROPERTY,
                        format!("`entries` must come after `{before}`"),
                        e,
                    )
                    .with_secondary(k, format!("`{before}` is given here"))
                    .with_hint(format!("move `entries` below `{before}`"));
                    self.emit(d);
                }
            }
        }
        // Pass 1: keys, actions, other properties.
        for p in &t.properties {
            match p {
                ast::TableProperty::Key(elems, _) => {
                    for k in elems {
                        if let Some(key) = self.table_key(k, &mut lpm_seen) {
                            keys.push(key)
                        }
                    }
                }
                ast::TableProperty::Actions(refs, _) => {
                    has_actions = true;
                    for r in refs {
                        if let Some(ta) = self.table_action(r) {
                            if actions.iter().any(|x| x.action == ta.action) {
                                self.err(codes::DUPLICATE, "this action is listed twice", r.span);
                            } else {
                                actions.push(ta);
                            }
                        }
                    }
                }
                ast::TableProperty::Other {
                    name, value, span, ..
                } => match name.name.as_str() {
                    "size" => match self.const_int(value, "`size`") {
                        Some(v) if (0..=i128::from(u32::MAX)).contains(&v) => size = v as u32,
                        Some(v) => {
                            self.err(
                                codes::TABLE_SIZE,
                                format!("table size {v} is out of range"),
                                value.span,
                            );
                        }
                        None => {}
                    },
                    // PSA names them `psa_direct_counter` / `psa_direct_meter`.
                    "counters" | "meters" | "psa_direct_counter" | "psa_direct_meter" => {
                        let want_counter =
                            matches!(name.name.as_str(), "counters" | "psa_direct_counter");
                        match self.direct_resource(value, want_counter) {
                            Some(h) if want_counter => direct_counter = Some(h),
                            Some(h) => direct_meter = Some(h),
                            None => {}
                        }
                    }
                    "implementation"
                    | "support_timeout"
                    | "idle_timeout_with_auto_delete"
                    | "psa_implementation"
                    | "psa_idle_timeout"
                    | "psa_empty_group_action" => {
                        let d = Diagnostic::error(
                            codes::UNSUPPORTED,
                            format!(
                                "table property `{}` is not supported by this target",
                                name.name
                            ),
                            *span,
                        );
                        self.emit(d);
                    }
                    other => {
                        let mut d = Diagnostic::error(
                            codes::TABLE_PROPERTY,
                            format!("unknown table property `{other}`"),
                            name.span,
                        );
                        let known = [
                            "key",
                            "actions",
                            "default_action",
                            "entries",
                            "size",
                            "counters",
                            "meters",
                        ];
                        if let Some(b) = did_you_mean(other, known.into_iter()) {
                            d = d.with_hint(format!("did you mean `{b}`?"));
                        }
                        self.emit(d);
                    }
                },
                _ => {}
            }
        }
        if !has_actions {
            let d = Diagnostic::error(
                codes::TABLE_PROPERTY,
                format!("table `{}` has no `actions` property", t.name.name),
                t.name.span,
            )
            .with_hint("add e.g. `actions = { NoAction; }`");
            self.emit(d);
        }
        // Pass 2: default action and entries, which refer to the action list.
        let mut default: Option<(usize, Vec<u128>, bool)> = None;
        let mut entries = Vec::new();
        let mut entries_const = false;
        for p in &t.properties {
            match p {
                ast::TableProperty::DefaultAction {
                    action, is_const, ..
                } => {
                    if let Some((i, args)) = self.default_action(action, &actions, &t.name.name) {
                        default = Some((i, args, *is_const))
                    }
                }
                ast::TableProperty::Entries {
                    entries: es,
                    is_const,
                    ..
                } => {
                    entries_const = *is_const;
                    self.check_entry_priorities(es, &keys, &t.name.name);
                    let mut bmv2_prio = Vec::new();
                    for e in es {
                        if let Some(x) = self.table_entry(e, &keys, &actions, &t.name.name) {
                            bmv2_prio.push(e.priority.is_none() && x.priority.is_some());
                            entries.push(x)
                        }
                    }
                    // BMv2's `@priority(n)`: the smallest n wins, and an entry
                    // without one has its position (from 1) as n. Entries
                    // here use P4Runtime's order (the largest wins).
                    if bmv2_prio.iter().any(|b| *b) {
                        for (k, x) in entries.iter_mut().enumerate() {
                            let n = match (bmv2_prio.get(k), x.priority) {
                                (Some(true), Some(n)) => n,
                                _ => k as u32 + 1,
                            };
                            x.priority = Some(u32::MAX - n.min(u32::MAX - 1));
                        }
                    }
                }
                _ => {}
            }
        }
        let (default_action, default_args, default_const) = match default {
            Some(d) => d,
            None => {
                let na = self.no_action_handle();
                let i = match actions.iter().position(|a| a.action == na) {
                    Some(i) => i,
                    None => {
                        actions.push(ir::TableAction {
                            action: na,
                            bound: Vec::new(),
                            default_only: true,
                            table_only: false,
                            implicit: true,
                        });
                        actions.len() - 1
                    }
                };
                (i, Vec::new(), false)
            }
        };
        // A table with errors is still declared, so that its uses do not
        // cascade into "undefined" errors (the compilation fails anyway).
        Some(self.m.tables.append(ir::Table {
            name: t.name.name.clone(),
            cp_name: Self::annotation_str(&t.annotations, "name"),
            p4rt_id: Self::annotation_ints(&t.annotations, "id").first().copied(),
            owner,
            keys,
            actions,
            default_action,
            default_args,
            default_const,
            entries,
            entries_const,
            size,
            direct_counter,
            direct_meter,
            span: t.name.span,
        }))
    }

    /// The top-level `NoAction` (declared by core.p4, or made up).
    pub(super) fn no_action_handle(&mut self) -> Handle<ir::Action> {
        if let Some(h) = self.no_action {
            return h;
        }
        let h = self.m.actions.append(ir::Action {
            name: "NoAction".into(),
            cp_name: None,
            p4rt_id: None,
            owner: None,
            params: Vec::new(),
            body: ir::Block::default(),
            synthetic: true,
            bundled: true,
            span: Span::default(),
        });
        self.no_action = Some(h);
        h
    }

    pub(super) fn table_key(
        &mut self,
        k: &ast::KeyElement,
        lpm_seen: &mut Option<Span>,
    ) -> Option<ir::Key> {
        let x = self.expr(&k.expr)?;
        let Some(width) = self.m.scalar_width(&x.ty) else {
            let tn = self.m.type_name(&x.ty);
            let d = Diagnostic::error(
                codes::KEY_TYPE,
                format!("a table key cannot have type `{tn}`"),
                k.expr.span,
            )
            .with_hint(
                "match on bit<N>, int<N>, bool, enum or error values (e.g. the fields of a header)",
            );
            self.emit(d);
            return None;
        };
        if x.ty == Type::InfInt {
            self.err(codes::KEY_TYPE, "a table key needs a width", k.expr.span);
            return None;
        }
        let kind_name = k.match_kind.name.as_str();
        if !self.m.match_kinds.iter().any(|m| m == kind_name) {
            let mut d = Diagnostic::error(
                codes::MATCH_KIND,
                format!("unknown match kind `{kind_name}`"),
                k.match_kind.span,
            )
            .with_label("not a match kind");
            let kinds = self.m.match_kinds.clone();
            if let Some(b) = did_you_mean(kind_name, kinds.iter().map(String::as_str)) {
                d = d.with_hint(format!("did you mean `{b}`?"));
            } else {
                d = d.with_note(format!("declared match kinds: {}", kinds.join(", ")));
            }
            self.emit(d);
            return None;
        }
        let mk = match kind_name {
            "exact" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            "range" => MatchKind::Range,
            "optional" => MatchKind::Optional,
            "selector" => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED,
                    "match kind `selector` needs an action selector, which this target does not implement",
                    k.match_kind.span,
                );
                self.emit(d);
                return None;
            }
            other => {
                self.err(
                    codes::UNSUPPORTED,
                    format!("match kind `{other}` is not supported by this target"),
                    k.match_kind.span,
                );
                return None;
            }
        };
        if mk == MatchKind::Lpm {
            if let Some(prev) = *lpm_seen {
                let d = Diagnostic::error(
                    codes::TWO_LPM,
                    "a table may have at most one `lpm` key",
                    k.match_kind.span,
                )
                .with_secondary(prev, "the first `lpm` key")
                .with_hint("make the other keys `ternary` or `exact`");
                self.emit(d);
                return None;
            }
            *lpm_seen = Some(k.match_kind.span);
        }
        // The control plane names a key by its expression: a field, a
        // slice, an index, `isValid()`, or a field masked with a constant
        // (`f & 0xff`). Anything else needs `@name`, as in p4c.
        let masked = match &k.expr.kind {
            ast::ExprKind::Binary(ast::BinOp::BitAnd, a, b) => {
                matches!(b.kind, ast::ExprKind::Int(_)) && expr_text(a).is_some()
                    || matches!(a.kind, ast::ExprKind::Int(_)) && expr_text(b).is_some()
            }
            _ => false,
        };
        let name = match Self::annotation_str(&k.annotations, "name").or_else(|| expr_text(&k.expr))
        {
            Some(n) => n,
            None if masked => self
                .sources
                .snippet(k.expr.span)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            None => {
                let d = Diagnostic::error(
                    codes::KEY_TYPE,
                    "a complex key expression needs a `@name` annotation",
                    k.expr.span,
                )
                .with_hint("the control plane names keys by their expression; write e.g. `h.a + h.b : exact @name(\"sum\");`");
                self.emit(d);
                return None;
            }
        };
        Some(ir::Key {
            name,
            expr: x,
            width,
            match_kind: mk,
            span: k.span,
        })
    }

    /// `priority =` on entries: only tables with a ternary, range or
    /// optional key order their entries by priority, and once one entry
    /// gives a priority the first must too (later ones may count on from
    /// it). p4c refuses both; BMv2's `@priority` annotations are not
    /// affected.
    fn check_entry_priorities(&mut self, es: &[ast::TableEntry], keys: &[ir::Key], table: &str) {
        let Some(first_given) = es.iter().find_map(|e| e.priority.as_ref()) else {
            return;
        };
        let ordered = keys.iter().any(|k| {
            matches!(
                k.match_kind,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        });
        if !ordered {
            let d = Diagnostic::error(
                codes::BAD_ENTRY,
                format!(
                    "entries of table `{table}` cannot have priorities: every key is `exact` or `lpm`"
                ),
                first_given.span,
            )
            .with_hint("priorities order entries that can overlap (ternary, range or optional keys)");
            self.emit(d);
        } else if let Some(first) = es.first().filter(|e| e.priority.is_none()) {
            let d = Diagnostic::error(
                codes::BAD_ENTRY,
                format!(
                    "the first entry of table `{table}` needs a `priority =`, since a later one has one"
                ),
                first.span,
            )
            .with_secondary(first_given.span, "a priority given here");
            self.emit(d);
        }
    }

    pub(super) fn resolve_action_ref(&mut self, r: &ast::ActionRef) -> Option<Handle<ir::Action>> {
        let ast::ExprKind::Name { name, dot_prefix } = &r.name.kind else {
            self.err(codes::WRONG_KIND, "expected an action name", r.name.span);
            return None;
        };
        match self.resolve(name, *dot_prefix)? {
            Sym::Action(a) => Some(a),
            other => {
                self.err(
                    codes::WRONG_KIND,
                    format!("`{}` is {}, not an action", name.name, other.describe()),
                    r.name.span,
                );
                None
            }
        }
    }

    pub(super) fn split_params(&self, a: Handle<ir::Action>) -> (Vec<ParamDef>, Vec<ParamDef>) {
        let params = self.var_params(&self.m.actions[a].params.clone());
        params.into_iter().partition(|p| p.direction.is_some())
    }

    pub(super) fn table_action(&mut self, r: &ast::ActionRef) -> Option<ir::TableAction> {
        let a = self.resolve_action_ref(r)?;
        let (dir, data) = self.split_params(a);
        let aname = self.m.actions[a].name.clone();
        let bound = match &r.args {
            None if !dir.is_empty() => {
                let names: Vec<String> = dir.iter().map(|p| format!("`{}`", p.name)).collect();
                let d = Diagnostic::error(
                    codes::ACTION_ARGS,
                    format!(
                        "action `{aname}` has directional parameter(s) {} that the table must bind",
                        names.join(", ")
                    ),
                    r.span,
                )
                .with_hint(format!("write `{aname}(<argument>)` in the `actions` list"));
                self.emit(d);
                return None;
            }
            None => Vec::new(),
            Some(args) => {
                if args.len() > dir.len() {
                    let d = Diagnostic::error(
                        codes::ACTION_ARGS,
                        format!(
                            "`{aname}` has {} directional parameter(s) but {} argument(s) are given",
                            dir.len(),
                            args.len()
                        ),
                        r.span,
                    )
                    .with_note(format!(
                        "its action data ({}) come from table entries and the control plane",
                        data.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ")
                    ));
                    self.emit(d);
                    return None;
                }
                let mut subst = Vec::new();
                self.bind_args(&dir, args, &mut subst, &aname, r.span)?
            }
        };
        Some(ir::TableAction {
            action: a,
            bound,
            default_only: Self::has_annotation(&r.annotations, "defaultonly"),
            table_only: Self::has_annotation(&r.annotations, "tableonly"),
            implicit: false,
        })
    }

    /// Action data of a default action or an entry: compile-time constants.
    pub(super) fn action_data(
        &mut self,
        a: Handle<ir::Action>,
        args: Option<&Vec<ast::Argument>>,
        span: Span,
    ) -> Option<Vec<u128>> {
        let (dir, data) = self.split_params(a);
        let aname = self.m.actions[a].name.clone();
        let args: Vec<&ast::Argument> = match args {
            None if data.is_empty() => return Some(Vec::new()),
            None => {
                let d = Diagnostic::error(
                    codes::ACTION_ARGS,
                    format!("action `{aname}` needs its action data here"),
                    span,
                )
                .with_hint(format!(
                    "write `{aname}({})`",
                    data.iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                self.emit(d);
                return None;
            }
            Some(args) if args.len() == data.len() => args.iter().collect(),
            Some(args) if args.len() == dir.len() + data.len() => {
                args.iter().skip(dir.len()).collect()
            }
            Some(args) => {
                self.err(
                    codes::ARG_COUNT,
                    format!(
                        "action `{aname}` takes {} action data argument(s), {} given",
                        data.len(),
                        args.len()
                    ),
                    span,
                );
                return None;
            }
        };
        let mut out = Vec::new();
        for (p, a) in data.iter().zip(args) {
            let x = self.expr_as(&a.value, &p.ty)?;
            match const_bits(&x) {
                Some(v) => out.push(v),
                None => {
                    let d = Diagnostic::error(
                        codes::ACTION_DATA_CONST,
                        format!(
                            "action data `{}` must be a compile-time constant here",
                            p.name
                        ),
                        a.span,
                    )
                    .with_label("computed at run time")
                    .with_hint("table entries and default actions carry constant action data");
                    self.emit(d);
                    return None;
                }
            }
        }
        Some(out)
    }

    pub(super) fn default_action(
        &mut self,
        r: &ast::ActionRef,
        actions: &[ir::TableAction],
        table: &str,
    ) -> Option<(usize, Vec<u128>)> {
        let a = self.resolve_action_ref(r)?;
        let aname = self.m.actions[a].name.clone();
        let Some(i) = actions.iter().position(|x| x.action == a) else {
            let d = Diagnostic::error(
                codes::DEFAULT_NOT_LISTED,
                format!("default action `{aname}` is not in the `actions` of table `{table}`"),
                r.span,
            )
            .with_hint(format!("add `{aname};` to the table's `actions`"));
            self.emit(d);
            return None;
        };
        if actions[i].table_only {
            let d = Diagnostic::error(
                codes::DEFAULT_ONLY,
                format!("action `{aname}` is `@tableonly`: it cannot be the default action"),
                r.span,
            );
            self.emit(d);
            return None;
        }
        let args = self.action_data(a, r.args.as_ref(), r.span)?;
        Some((i, args))
    }

    pub(super) fn table_entry(
        &mut self,
        e: &ast::TableEntry,
        keys: &[ir::Key],
        actions: &[ir::TableAction],
        table: &str,
    ) -> Option<ir::Entry> {
        if e.keysets.len() != keys.len() {
            let d = Diagnostic::error(
                codes::BAD_ENTRY,
                format!(
                    "this entry has {} keyset(s) but table `{table}` has {} key(s)",
                    e.keysets.len(),
                    keys.len()
                ),
                e.span,
            );
            self.emit(d);
            return None;
        }
        let mut matches = Vec::new();
        for (ks, key) in e.keysets.iter().zip(keys) {
            matches.push(self.entry_keyset(ks, key)?);
        }
        let a = self.resolve_action_ref(&e.action)?;
        let aname = self.m.actions[a].name.clone();
        let Some(ai) = actions.iter().position(|x| x.action == a) else {
            let d = Diagnostic::error(
                codes::ACTION_NOT_LISTED,
                format!("action `{aname}` is not in the `actions` of table `{table}`"),
                e.action.span,
            )
            .with_hint(format!("add `{aname};` to the table's `actions`"));
            self.emit(d);
            return None;
        };
        if actions[ai].default_only {
            let d = Diagnostic::error(
                codes::DEFAULT_ONLY,
                format!("action `{aname}` is `@defaultonly`: entries cannot use it"),
                e.action.span,
            );
            self.emit(d);
            return None;
        }
        let args = self.action_data(a, e.action.args.as_ref(), e.action.span)?;
        let prio_expr = e.priority.as_ref().or_else(|| {
            e.annotations
                .iter()
                .find(|a| a.name.name == "priority")
                .and_then(|a| match &a.body {
                    ast::AnnotationBody::Exprs(es) => es.first(),
                    _ => None,
                })
        });
        let priority = match prio_expr {
            Some(p) => {
                let v = self.const_int(p, "a priority")?;
                match u32::try_from(v) {
                    Ok(v) => Some(v),
                    Err(_) => {
                        self.err(
                            codes::BAD_ENTRY,
                            format!("priority {v} is out of range"),
                            p.span,
                        );
                        return None;
                    }
                }
            }
            None => None,
        };
        Some(ir::Entry {
            keys: matches,
            action: ai,
            args,
            priority,
        })
    }

    pub(super) fn keyset_value(&mut self, e: &ast::Expr, ty: &Type) -> Option<u128> {
        let x = self.expr_as(e, ty)?;
        match const_bits(&x) {
            Some(v) => Some(v),
            None => {
                self.err(
                    codes::NOT_CONSTANT,
                    "keyset values must be compile-time constants",
                    e.span,
                );
                None
            }
        }
    }

    pub(super) fn entry_keyset(&mut self, ks: &ast::Keyset, key: &ir::Key) -> Option<KeyMatch> {
        let ty = key.expr.ty.clone();
        let w = key.width;
        let bad = |me: &mut Self, span: Span, what: &str| {
            let d = Diagnostic::error(
                codes::BAD_ENTRY,
                format!("{what} cannot match a `{:?}` key", key.match_kind).to_lowercase(),
                span,
            )
            .with_note(format!(
                "key `{}` is matched with `{}`",
                key.name,
                kind_str(key.match_kind)
            ));
            me.emit(d);
            None
        };
        match ks {
            ast::Keyset::Default(s) | ast::Keyset::DontCare(s) => {
                if key.match_kind == MatchKind::Exact {
                    return bad(self, *s, "`_` (don't care)");
                }
                Some(KeyMatch::Any)
            }
            ast::Keyset::Expr(e) => {
                let v = self.keyset_value(e, &ty)?;
                Some(match key.match_kind {
                    MatchKind::Exact | MatchKind::Optional => KeyMatch::Exact { value: v },
                    MatchKind::Lpm => KeyMatch::Lpm {
                        value: v,
                        prefix_len: w,
                    },
                    MatchKind::Ternary => KeyMatch::Ternary {
                        value: v,
                        mask: mask(w),
                    },
                    MatchKind::Range => KeyMatch::Range { lo: v, hi: v },
                })
            }
            ast::Keyset::Mask(ve, me) => {
                let v = self.keyset_value(ve, &ty)?;
                // A serializable enum's mask is a value of its underlying type.
                let mty = match &ty {
                    Type::Enum(h) => self.m.enums[*h].underlying.clone().unwrap_or(ty.clone()),
                    t => t.clone(),
                };
                let m = self.keyset_value(me, &mty)?;
                match key.match_kind {
                    MatchKind::Ternary => Some(KeyMatch::Ternary {
                        value: v & m,
                        mask: m,
                    }),
                    MatchKind::Lpm => {
                        let plen = m.count_ones() as u16;
                        let prefix = if plen == 0 {
                            0
                        } else {
                            mask(w) & !mask(w - plen)
                        };
                        if m != prefix {
                            let d = Diagnostic::error(
                                codes::BAD_ENTRY,
                                format!("mask {m:#x} is not a prefix mask (leading ones, then zeros)"),
                                me.span,
                            )
                            .with_hint("an `lpm` key takes `value &&& prefix_mask`, or use a `ternary` key");
                            self.emit(d);
                            return None;
                        }
                        Some(KeyMatch::Lpm {
                            value: v & m,
                            prefix_len: plen,
                        })
                    }
                    _ => bad(self, ve.span.to(me.span), "a `&&&` mask"),
                }
            }
            ast::Keyset::Range(lo, hi) => {
                let l = self.keyset_value(lo, &ty)?;
                let h = self.keyset_value(hi, &ty)?;
                if key.match_kind != MatchKind::Range {
                    return bad(self, lo.span.to(hi.span), "a `..` range");
                }
                if l > h {
                    let d = Diagnostic::error(
                        codes::BAD_ENTRY,
                        format!("empty range: {l} > {h}"),
                        lo.span.to(hi.span),
                    );
                    self.emit(d);
                    return None;
                }
                Some(KeyMatch::Range { lo: l, hi: h })
            }
        }
    }

    pub(super) fn direct_resource(
        &mut self,
        value: &ast::Expr,
        counter: bool,
    ) -> Option<Handle<ir::Instance>> {
        let what = if counter {
            "direct_counter"
        } else {
            "direct_meter"
        };
        let prop = if counter { "counters" } else { "meters" };
        let found = match &value.kind {
            ast::ExprKind::Name { name, dot_prefix } => match self.resolve(name, *dot_prefix)? {
                Sym::Instance(i) => match &self.m.instances[i].kind {
                    InstanceKind::Extern {
                        kind: ExternInstKind::DirectCounter { .. },
                        ..
                    } if counter => Some(i),
                    InstanceKind::Extern {
                        kind: ExternInstKind::DirectMeter { .. },
                        ..
                    } if !counter => Some(i),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        if found.is_none() {
            let d = Diagnostic::error(
                codes::DIRECT_RESOURCE,
                format!("`{prop}` must name a `{what}` instance"),
                value.span,
            )
            .with_hint(format!(
                "declare one in the control, e.g. `{what}(...) my_{prop};`"
            ));
            self.emit(d);
            return None;
        }
        if let Some(i) = found {
            let used = self
                .m
                .tables
                .iter()
                .any(|(_, t)| t.direct_counter == Some(i) || t.direct_meter == Some(i));
            if used {
                self.err(
                    codes::DIRECT_RESOURCE,
                    format!("this `{what}` is already attached to another table"),
                    value.span,
                );
                return None;
            }
        }
        found
    }
}

fn kind_str(k: MatchKind) -> &'static str {
    match k {
        MatchKind::Exact => "exact",
        MatchKind::Lpm => "lpm",
        MatchKind::Ternary => "ternary",
        MatchKind::Range => "range",
        MatchKind::Optional => "optional",
    }
}
