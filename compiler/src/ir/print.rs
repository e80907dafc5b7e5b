//! `--emit ir`: a stable text form of the typed IR.
//!
//! Declarations from the bundled includes are summarised, not printed.
//! Every constant shows its width (`16w2048`), every call its resolved
//! target, and every table its pipeline stage (when the graph pass ran).

use super::*;
use crate::check::builtin_label;

struct P<'m> {
    m: &'m Module,
    out: String,
    indent: usize,
}

/// Print a module as text.
pub fn print_module(m: &Module) -> String {
    let mut p = P {
        m,
        out: String::new(),
        indent: 0,
    };
    p.module();
    p.out
}

fn dir(d: Option<Direction>) -> &'static str {
    match d {
        Some(Direction::In) => "in ",
        Some(Direction::Out) => "out ",
        Some(Direction::InOut) => "inout ",
        None => "",
    }
}

impl P<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn ty(&self, t: &Type) -> String {
        self.m.type_name(t)
    }

    fn module(&mut self) {
        let m = self.m;
        self.line(&format!("// IR of `{}`", m.name));
        self.line(&format!("errors {{ {} }}", m.errors.join(", ")));
        self.line(&format!("match_kinds {{ {} }}", m.match_kinds.join(", ")));
        for c in m.constants.iter().filter(|c| !c.bundled) {
            let v = self.value(&c.value, &c.ty);
            self.line(&format!("const {}: {} = {v};", c.name, self.ty(&c.ty)));
        }
        for (_, e) in m.enums.iter().filter(|(_, e)| !e.bundled) {
            let members: Vec<String> = e
                .members
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect();
            let under = e
                .underlying
                .as_ref()
                .map(|u| format!(" {}", self.ty(u)))
                .unwrap_or_default();
            self.line(&format!(
                "enum{under} {} {{ {} }}",
                e.name,
                members.join(", ")
            ));
        }
        for (_, n) in m.newtypes.iter() {
            self.line(&format!("type {} = {};", n.name, self.ty(&n.underlying)));
        }
        for (_, s) in m.structs.iter().filter(|(_, s)| !s.bundled) {
            let kw = if s.is_header { "header" } else { "struct" };
            self.line(&format!("{kw} {} {{", s.name));
            self.indent += 1;
            for f in &s.fields {
                let fl = if f.field_lists.is_empty() {
                    String::new()
                } else {
                    format!(" @field_list({:?})", f.field_lists)
                };
                self.line(&format!("{}: {};{fl}", f.name, self.ty(&f.ty)));
            }
            self.indent -= 1;
            self.line("}");
        }
        let bundled_actions = m
            .actions
            .iter()
            .filter(|(_, a)| a.owner.is_none() && a.bundled)
            .count();
        let bundled_externs = m.extern_objects.iter().filter(|(_, e)| e.bundled).count()
            + m.extern_fns.iter().filter(|(_, e)| e.bundled).count();
        self.line(&format!(
            "// bundled: {bundled_externs} extern declaration(s), {bundled_actions} action(s), {} block type(s)",
            m.block_types.len()
        ));
        for (_, e) in m.extern_objects.iter().filter(|(_, e)| !e.bundled) {
            self.line(&format!("extern {};", e.name));
        }
        for (_, e) in m.extern_fns.iter().filter(|(_, e)| !e.bundled) {
            self.line(&format!("extern function {};", e.sig.name));
        }
        for (h, a) in m.actions.iter() {
            if a.owner.is_none() && !a.bundled {
                self.action(h);
            }
        }
        for (_, f) in m.functions.iter() {
            let params = self.params(&f.params);
            self.line(&format!(
                "function {}({params}) -> {} {{",
                f.name,
                self.ty(&f.ret)
            ));
            self.indent += 1;
            self.block_body(&f.body);
            self.indent -= 1;
            self.line("}");
        }
        for (h, _) in m.parsers.iter() {
            self.parser(h);
        }
        for (h, c) in m.controls.iter() {
            if !c.bundled {
                self.control(h);
            }
        }
        for (_, i) in m.instances.iter() {
            let _ = i;
        }
        if let Some(main) = &m.main {
            self.line(&format!("main = {} ({:?}) {{", main.package, main.arch));
            self.indent += 1;
            for s in &main.shared {
                self.line(&format!(
                    "shared {}: {} (pipe {}, {})",
                    s.name,
                    self.ty(&s.ty),
                    s.pipe,
                    s.key
                ));
            }
            for a in &main.args {
                let b = match a.block {
                    BlockRef::Parser(p) => format!("parser {}", m.parsers[p].name),
                    BlockRef::Control(c) => format!("control {}", m.controls[c].name),
                };
                let binds: Vec<String> = a
                    .bindings
                    .iter()
                    .map(|x| match x {
                        Some(k) => main.shared[*k].name.clone(),
                        None => "packet".into(),
                    })
                    .collect();
                self.line(&format!(
                    "{} = {b} as {} ({})",
                    a.param,
                    a.instance_name,
                    binds.join(", ")
                ));
            }
            self.indent -= 1;
            self.line("}");
        }
    }

    fn params(&self, ps: &[Handle<Var>]) -> String {
        ps.iter()
            .map(|p| {
                let v = &self.m.vars[*p];
                let d = match v.kind {
                    VarKind::Param(d) => dir(d),
                    VarKind::Local => "",
                };
                format!("{d}{}: {}", v.name, self.ty(&v.ty))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn parser(&mut self, h: Handle<Parser>) {
        let p = &self.m.parsers[h];
        let params = self.params(&p.params);
        self.line(&format!("parser {}({params}) {{", p.name));
        self.indent += 1;
        for s in &p.local_inits {
            self.stmt(s);
        }
        for (i, st) in p.states.iter().enumerate() {
            let start = if i == p.start { " // start" } else { "" };
            self.line(&format!("state {} {{{start}", st.name));
            self.indent += 1;
            self.block_body(&st.body);
            let t = match &st.transition {
                Transition::Direct(t) => format!("transition {};", self.target(p, *t)),
                Transition::Select { keys, cases } => {
                    let ks: Vec<String> = keys.iter().map(|k| self.expr(k)).collect();
                    let cs: Vec<String> = cases
                        .iter()
                        .map(|(sets, t)| {
                            let s: Vec<String> = sets.iter().map(keyset).collect();
                            format!("({}): {}", s.join(", "), self.target(p, *t))
                        })
                        .collect();
                    format!(
                        "transition select({}) {{ {} }}",
                        ks.join(", "),
                        cs.join("; ")
                    )
                }
            };
            self.line(&t);
            self.indent -= 1;
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
    }

    fn target(&self, p: &Parser, t: Target) -> String {
        match t {
            Target::Accept => "accept".into(),
            Target::Reject => "reject".into(),
            Target::State(i) => p.states.get(i).map_or("?".into(), |s| s.name.clone()),
        }
    }

    fn control(&mut self, h: Handle<Control>) {
        let c = &self.m.controls[h];
        let params = self.params(&c.params);
        let per_pr = if c.per_pr { " // per-PR" } else { "" };
        self.line(&format!("control {}({params}) {{{per_pr}", c.name));
        self.indent += 1;
        for i in &c.instances {
            let inst = &self.m.instances[*i];
            let what = match &inst.kind {
                InstanceKind::Extern { kind, .. } => format!("{kind:?}"),
                InstanceKind::Control(x) => format!("control {}", self.m.controls[*x].name),
                InstanceKind::Parser(x) => format!("parser {}", self.m.parsers[*x].name),
            };
            self.line(&format!("instance {}: {what};", inst.name));
        }
        for a in &c.actions {
            self.action(*a);
        }
        for t in &c.tables {
            self.table(*t, &c.name);
        }
        self.line("apply {");
        self.indent += 1;
        for s in &c.local_inits {
            self.stmt(s);
        }
        self.block_body(&c.apply);
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
    }

    fn action(&mut self, h: Handle<Action>) {
        let a = &self.m.actions[h];
        let params = self.params(&a.params);
        let cp = a
            .cp_name
            .as_ref()
            .map(|n| format!(" @name({n:?})"))
            .unwrap_or_default();
        self.line(&format!("action {}({params}){cp} {{", a.name));
        self.indent += 1;
        self.block_body(&a.body);
        self.indent -= 1;
        self.line("}");
    }

    fn table(&mut self, h: Handle<Table>, control: &str) {
        let t = &self.m.tables[h];
        let stage = self
            .m
            .analysis
            .as_ref()
            .and_then(|an| {
                let name = match &t.cp_name {
                    Some(n) if n.starts_with('.') => n[1..].to_string(),
                    Some(n) => format!("{control}.{n}"),
                    None => format!("{control}.{}", t.name),
                };
                an.stage_of(&name)
            })
            .map(|s| format!(" // stage {s}"))
            .unwrap_or_default();
        self.line(&format!("table {} {{{stage}", t.name));
        self.indent += 1;
        for k in &t.keys {
            let e = self.expr(&k.expr);
            self.line(&format!(
                "key {:?} = {e}: {:?} ({} bits);",
                k.name, k.match_kind, k.width
            ));
        }
        for ta in &t.actions {
            let bound: Vec<String> = ta.bound.iter().map(|a| self.arg(a)).collect();
            let mut flags = String::new();
            if ta.default_only {
                flags.push_str(" @defaultonly");
            }
            if ta.table_only {
                flags.push_str(" @tableonly");
            }
            if ta.implicit {
                flags.push_str(" // implicit");
            }
            self.line(&format!(
                "action {}({}){flags};",
                self.m.actions[ta.action].name,
                bound.join(", ")
            ));
        }
        let def = t
            .actions
            .get(t.default_action)
            .map_or("?".to_string(), |a| self.m.actions[a.action].name.clone());
        self.line(&format!(
            "default_action = {def}({}){};",
            t.default_args
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if t.default_const { " const" } else { "" }
        ));
        for e in &t.entries {
            let keys: Vec<String> = e.keys.iter().map(|k| format!("{k:?}")).collect();
            let act = t
                .actions
                .get(e.action)
                .map_or("?".to_string(), |a| self.m.actions[a.action].name.clone());
            let args: Vec<String> = e.args.iter().map(|v| v.to_string()).collect();
            let prio = e
                .priority
                .map(|p| format!(" priority {p}"))
                .unwrap_or_default();
            self.line(&format!(
                "entry ({}) -> {act}({}){prio};",
                keys.join(", "),
                args.join(", ")
            ));
        }
        let mut extra = format!("size = {}", t.size);
        if t.entries_const {
            extra.push_str(", const entries");
        }
        if let Some(c) = t.direct_counter {
            extra.push_str(&format!(", counters = {}", self.m.instances[c].name));
        }
        if let Some(c) = t.direct_meter {
            extra.push_str(&format!(", meters = {}", self.m.instances[c].name));
        }
        self.line(&format!("{extra};"));
        self.indent -= 1;
        self.line("}");
    }

    fn block_body(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign(l, r) => {
                let t = format!("{} = {};", self.expr(l), self.expr(r));
                self.line(&t);
            }
            StmtKind::Call(c) => {
                let t = format!("{};", self.call(c));
                self.line(&t);
            }
            StmtKind::If(c, t, e) => {
                let cs = self.expr(c);
                self.line(&format!("if ({cs}) {{"));
                self.indent += 1;
                self.block_body(t);
                self.indent -= 1;
                if e.stmts.is_empty() {
                    self.line("}");
                } else {
                    self.line("} else {");
                    self.indent += 1;
                    self.block_body(e);
                    self.indent -= 1;
                    self.line("}");
                }
            }
            StmtKind::Switch(sw) => {
                let sel = self.expr(&sw.selector);
                self.line(&format!("switch ({sel}) {{"));
                self.indent += 1;
                for c in &sw.cases {
                    let labels: Vec<String> = c
                        .labels
                        .iter()
                        .map(|l| match l {
                            SwitchLabel::Action(a) => self.m.actions[*a].name.clone(),
                            SwitchLabel::Value(v) => v.to_string(),
                        })
                        .collect();
                    self.line(&format!("{}: {{", labels.join(", ")));
                    self.indent += 1;
                    self.block_body(&c.body);
                    self.indent -= 1;
                    self.line("}");
                }
                if let Some(d) = &sw.default {
                    self.line("default: {");
                    self.indent += 1;
                    self.block_body(d);
                    self.indent -= 1;
                    self.line("}");
                }
                self.indent -= 1;
                self.line("}");
            }
            StmtKind::Block(b) => {
                self.line("{");
                self.indent += 1;
                self.block_body(b);
                self.indent -= 1;
                self.line("}");
            }
            StmtKind::Return(v) => {
                let t = match v {
                    Some(v) => format!("return {};", self.expr(v)),
                    None => "return;".into(),
                };
                self.line(&t);
            }
            StmtKind::Exit => self.line("exit;"),
            StmtKind::VarDecl(v, init) => {
                let var = &self.m.vars[*v];
                let t = match init {
                    Some(e) => {
                        format!("var {}: {} = {};", var.name, self.ty(&var.ty), self.expr(e))
                    }
                    None => format!("var {}: {};", var.name, self.ty(&var.ty)),
                };
                self.line(&t);
            }
            StmtKind::Loop(l) => {
                let c = self.expr(&l.cond);
                self.line(&format!("loop while ({c}) {{"));
                self.indent += 1;
                self.block_body(&l.body);
                self.indent -= 1;
                if !l.updates.stmts.is_empty() {
                    self.line("} updates {");
                    self.indent += 1;
                    self.block_body(&l.updates);
                    self.indent -= 1;
                }
                self.line("}");
            }
            StmtKind::Break => self.line("break;"),
            StmtKind::Continue => self.line("continue;"),
        }
    }

    fn arg(&self, a: &Arg) -> String {
        match a {
            Arg::In(e) => self.expr(e),
            Arg::Out(e, d) => format!("{}{}", dir(Some(*d)), self.expr(e)),
            Arg::Skip(_) => "_".into(),
        }
    }

    fn call(&self, c: &Call) -> String {
        let args: Vec<String> = c.args.iter().map(|a| self.arg(a)).collect();
        let args = args.join(", ");
        match &c.callee {
            Callee::Action(a) => format!("action {}({args})", self.m.actions[*a].name),
            Callee::Function(f) => format!("{}({args})", self.m.functions[*f].name),
            Callee::ApplyControl(i) | Callee::ApplyParser(i) => {
                format!("{}.apply({args})", self.m.instances[*i].name)
            }
            Callee::ApplyTable(t) => format!("{}.apply()", self.m.tables[*t].name),
            Callee::Builtin {
                op,
                receiver,
                type_args,
            } => {
                let recv = match receiver.as_deref() {
                    Some(Receiver::Instance(i)) => format!("{}.", self.m.instances[*i].name),
                    Some(Receiver::Expr(e)) => format!("{}.", self.expr(e)),
                    None => String::new(),
                };
                let targs = if type_args.is_empty() {
                    String::new()
                } else {
                    let ts: Vec<String> = type_args.iter().map(|t| self.ty(t)).collect();
                    format!("<{}>", ts.join(", "))
                };
                format!("{recv}{}{targs}({args})", builtin_label(*op))
            }
        }
    }

    fn value(&self, v: &Value, ty: &Type) -> String {
        match (v, ty) {
            (Value::Bool(b), _) => b.to_string(),
            (Value::Int(i), _) => i.to_string(),
            (Value::Str(s), _) => format!("{s:?}"),
            (Value::Bits(b), Type::Bit(w)) => format!("{w}w{b}"),
            (Value::Bits(b), Type::Int(w)) => {
                format!("{w}s{}", crate::check::consts::to_signed(*b, *w))
            }
            (Value::Bits(b), Type::Error) => format!(
                "error.{}",
                self.m.errors.get(*b as usize).map_or("?", |s| s.as_str())
            ),
            (Value::Bits(b), Type::Enum(e)) => {
                let def = &self.m.enums[*e];
                let member = def
                    .members
                    .iter()
                    .find(|(_, x)| x == b)
                    .map_or("?", |(n, _)| n.as_str());
                format!("{}.{member}", def.name)
            }
            (Value::Bits(b), other) => format!("({}){b}", self.ty(other)),
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Const(v) => self.value(v, &e.ty),
            ExprKind::Var(v) => self.m.vars[*v].name.clone(),
            ExprKind::Field(b, i) => {
                let name = match &b.ty {
                    Type::Header(s) | Type::Struct(s) => self.m.structs[*s]
                        .fields
                        .get(*i as usize)
                        .map_or("?".to_string(), |f| f.name.clone()),
                    _ => "?".into(),
                };
                format!("{}.{name}", self.expr(b))
            }
            ExprKind::Index(b, i) => format!("{}[{}]", self.expr(b), self.expr(i)),
            ExprKind::Next(b) => format!("{}.next", self.expr(b)),
            ExprKind::Last(b) => format!("{}.last", self.expr(b)),
            ExprKind::LastIndex(b) => format!("{}.lastIndex", self.expr(b)),
            ExprKind::IsValid(b) => format!("{}.isValid()", self.expr(b)),
            ExprKind::Unary(op, x) => format!("{}{}", op.as_str(), self.expr(x)),
            ExprKind::Binary(op, l, r) => {
                format!("({} {} {})", self.expr(l), op.as_str(), self.expr(r))
            }
            ExprKind::Slice(b, hi, lo) => format!("{}[{hi}:{lo}]", self.expr(b)),
            ExprKind::Concat(l, r) => format!("({} ++ {})", self.expr(l), self.expr(r)),
            ExprKind::Cast(x) => format!("(({}) {})", self.ty(&e.ty), self.expr(x)),
            ExprKind::Mux(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            ExprKind::List(items) => {
                let xs: Vec<String> = items.iter().map(|x| self.expr(x)).collect();
                format!("{{ {} }}", xs.join(", "))
            }
            ExprKind::Call(c) => self.call(c),
            ExprKind::TableResult(c, f) => {
                let field = match f {
                    TableResultField::Hit => "hit",
                    TableResultField::Miss => "miss",
                    TableResultField::ActionRun => "action_run",
                };
                format!("{}.{field}", self.expr(c))
            }
        }
    }
}

fn keyset(k: &Keyset) -> String {
    match k {
        Keyset::Any => "_".into(),
        Keyset::Value(v) => format!("{v:#x}"),
        Keyset::Mask(v, m) => format!("{v:#x} &&& {m:#x}"),
        Keyset::Range(l, h) => format!("{l:#x} .. {h:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_module_prints_header() {
        let m = Module::new("empty");
        let text = print_module(&m);
        assert!(text.starts_with("// IR of `empty`\n"));
        assert!(text.contains("errors { NoError, PacketTooShort"));
    }
}
