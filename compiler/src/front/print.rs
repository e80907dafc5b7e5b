//! AST → P4 text (`--emit ast`).
//!
//! The output is stable (no spans, fixed layout, 4-space indentation) and
//! faithful: parsing it again gives the same AST up to spans. Nested binary,
//! ternary, unary and cast operands are always parenthesised, so the tree
//! shape (precedence) is visible at a glance.

use std::fmt::Write as _;

use crate::ast::*;

/// Print a whole program.
pub(crate) fn program(p: &Program) -> String {
    let mut pr = Printer::default();
    for (i, d) in p.decls.iter().enumerate() {
        if i > 0 {
            pr.out.push('\n');
        }
        pr.decl(d);
    }
    pr.out
}

#[derive(Default)]
struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    fn pad(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    fn line(&mut self, s: &str) {
        self.pad();
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// Annotations each on its own line.
    fn annotations_block(&mut self, anns: &[Annotation]) {
        for a in anns {
            let s = annotation(a);
            self.line(&s);
        }
    }

    /// Annotations inline, each followed by a space (a `@pragma`, which
    /// extends to the end of its line, by a line break).
    fn inline_annotations(&self, anns: &[Annotation]) -> String {
        let mut s = String::new();
        for a in anns {
            s.push_str(&annotation(a));
            if a.name.name == "pragma" {
                s.push('\n');
                for _ in 0..=self.indent {
                    s.push_str("    ");
                }
            } else {
                s.push(' ');
            }
        }
        s
    }

    fn decl(&mut self, d: &Decl) {
        match d {
            Decl::Constant(c) => {
                self.annotations_block(&c.annotations);
                let s = const_text(c);
                self.line(&s);
            }
            Decl::Header(s) => self.struct_like("header", s),
            Decl::HeaderUnion(s) => self.struct_like("header_union", s),
            Decl::Struct(s) => self.struct_like("struct", s),
            Decl::Typedef(t) => {
                self.annotations_block(&t.annotations);
                let kw = if t.is_new_type { "type" } else { "typedef" };
                let s = format!("{kw} {} {};", ty(&t.ty), t.name.name);
                self.line(&s);
            }
            Decl::Enum(e) => {
                self.annotations_block(&e.annotations);
                let under = e
                    .underlying
                    .as_ref()
                    .map(|u| format!("{} ", ty(u)))
                    .unwrap_or_default();
                self.line(&format!("enum {under}{} {{", e.name.name));
                self.indent += 1;
                for m in &e.members {
                    let s = match &m.value {
                        Some(v) => format!("{} = {},", m.name.name, expr(v)),
                        None => format!("{},", m.name.name),
                    };
                    self.line(&s);
                }
                self.indent -= 1;
                self.line("}");
            }
            Decl::Error(m) => self.line(&format!("error {{ {} }}", names(&m.members))),
            Decl::MatchKind(m) => self.line(&format!("match_kind {{ {} }}", names(&m.members))),
            Decl::ExternFunction(f) => {
                self.annotations_block(&f.annotations);
                let s = format!("extern {};", proto(f));
                self.line(&s);
            }
            Decl::ExternObject(x) => {
                self.annotations_block(&x.annotations);
                self.line(&format!(
                    "extern {}{} {{",
                    x.name.name,
                    type_params(&x.type_params)
                ));
                self.indent += 1;
                for m in &x.methods {
                    let s = format!("{}{};", self.inline_annotations(&m.annotations), proto(m));
                    self.line(&s);
                }
                self.indent -= 1;
                self.line("}");
            }
            Decl::Parser(p) => {
                self.annotations_block(&p.annotations);
                let head = format!(
                    "parser {}{}({}){} {{",
                    p.name.name,
                    type_params(&p.type_params),
                    self.params(&p.params),
                    self.ctor_params(&p.ctor_params)
                );
                self.line(&head);
                self.indent += 1;
                for l in &p.locals {
                    self.local(l);
                }
                for s in &p.states {
                    self.state(s);
                }
                self.indent -= 1;
                self.line("}");
            }
            Decl::ParserType(b) => self.block_type("parser", b),
            Decl::Control(c) => {
                self.annotations_block(&c.annotations);
                let head = format!(
                    "control {}{}({}){} {{",
                    c.name.name,
                    type_params(&c.type_params),
                    self.params(&c.params),
                    self.ctor_params(&c.ctor_params)
                );
                self.line(&head);
                self.indent += 1;
                for l in &c.locals {
                    self.local(l);
                }
                self.block_stmt("apply", &c.apply);
                self.indent -= 1;
                self.line("}");
            }
            Decl::ControlType(b) => self.block_type("control", b),
            Decl::Package(b) => self.block_type("package", b),
            Decl::Action(a) => self.action(a),
            Decl::Function(f) => {
                self.annotations_block(&f.proto.annotations);
                let head = proto(&f.proto);
                self.block_stmt(&head, &f.body);
            }
            Decl::Instantiation(i) => self.instantiation(i),
        }
    }

    fn struct_like(&mut self, kw: &str, s: &StructDecl) {
        self.annotations_block(&s.annotations);
        self.line(&format!(
            "{kw} {}{} {{",
            s.name.name,
            type_params(&s.type_params)
        ));
        self.indent += 1;
        for f in &s.fields {
            let line = format!(
                "{}{} {};",
                self.inline_annotations(&f.annotations),
                ty(&f.ty),
                f.name.name
            );
            self.line(&line);
        }
        self.indent -= 1;
        self.line("}");
    }

    fn block_type(&mut self, kw: &str, b: &BlockTypeDecl) {
        self.annotations_block(&b.annotations);
        let s = format!(
            "{kw} {}{}({});",
            b.name.name,
            type_params(&b.type_params),
            self.params(&b.params)
        );
        self.line(&s);
    }

    fn params(&self, ps: &[Param]) -> String {
        let v: Vec<String> = ps
            .iter()
            .map(|p| {
                let dir = match p.direction {
                    Some(Direction::In) => "in ",
                    Some(Direction::Out) => "out ",
                    Some(Direction::InOut) => "inout ",
                    None => "",
                };
                let def = p
                    .default
                    .as_ref()
                    .map(|d| format!(" = {}", expr(d)))
                    .unwrap_or_default();
                format!(
                    "{}{dir}{} {}{def}",
                    self.inline_annotations(&p.annotations),
                    ty(&p.ty),
                    p.name.name
                )
            })
            .collect();
        v.join(", ")
    }

    fn ctor_params(&self, ps: &[Param]) -> String {
        if ps.is_empty() {
            String::new()
        } else {
            format!("({})", self.params(ps))
        }
    }

    fn local(&mut self, l: &Local) {
        match l {
            Local::Const(c) => {
                self.annotations_block(&c.annotations);
                let s = const_text(c);
                self.line(&s);
            }
            Local::Var(v) => {
                self.annotations_block(&v.annotations);
                let s = var_text(v);
                self.line(&s);
            }
            Local::Instantiation(i) => self.instantiation(i),
            Local::Action(a) => self.action(a),
            Local::Table(t) => self.table(t),
            Local::ValueSet(v) => {
                self.annotations_block(&v.annotations);
                let s = format!(
                    "value_set<{}>({}) {};",
                    ty(&v.ty),
                    expr(&v.size),
                    v.name.name
                );
                self.line(&s);
            }
        }
    }

    fn instantiation(&mut self, i: &Instantiation) {
        self.annotations_block(&i.annotations);
        let s = format!("{}({}) {};", ty(&i.ty), args(&i.args), i.name.name);
        self.line(&s);
    }

    fn action(&mut self, a: &ActionDecl) {
        self.annotations_block(&a.annotations);
        let head = format!("action {}({})", a.name.name, self.params(&a.params));
        self.block_stmt(&head, &a.body);
    }

    fn state(&mut self, s: &ParserState) {
        self.annotations_block(&s.annotations);
        self.line(&format!("state {} {{", s.name.name));
        self.indent += 1;
        for st in &s.body {
            self.stmt(st);
        }
        match &s.transition {
            None => {}
            Some(Transition::Direct(n)) => self.line(&format!("transition {};", n.name)),
            Some(Transition::Select { exprs, cases, .. }) => {
                let es: Vec<String> = exprs.iter().map(expr).collect();
                self.line(&format!("transition select({}) {{", es.join(", ")));
                self.indent += 1;
                for c in cases {
                    let s = format!("{}: {};", keysets(&c.keysets), c.next.name);
                    self.line(&s);
                }
                self.indent -= 1;
                self.line("}");
            }
        }
        self.indent -= 1;
        self.line("}");
    }

    fn table(&mut self, t: &TableDecl) {
        self.annotations_block(&t.annotations);
        self.line(&format!("table {} {{", t.name.name));
        self.indent += 1;
        for p in &t.properties {
            match p {
                TableProperty::Key(elems, _) => {
                    self.line("key = {");
                    self.indent += 1;
                    for e in elems {
                        let anns: Vec<String> = e.annotations.iter().map(annotation).collect();
                        let tail = if anns.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", anns.join(" "))
                        };
                        let s = format!("{}: {}{tail};", expr(&e.expr), e.match_kind.name);
                        self.line(&s);
                    }
                    self.indent -= 1;
                    self.line("}");
                }
                TableProperty::Actions(refs, _) => {
                    self.line("actions = {");
                    self.indent += 1;
                    for r in refs {
                        let s = format!("{};", self.action_ref(r));
                        self.line(&s);
                    }
                    self.indent -= 1;
                    self.line("}");
                }
                TableProperty::DefaultAction {
                    action, is_const, ..
                } => {
                    let c = if *is_const { "const " } else { "" };
                    let s = format!("{c}default_action = {};", self.action_ref(action));
                    self.line(&s);
                }
                TableProperty::Entries {
                    entries, is_const, ..
                } => {
                    let c = if *is_const { "const " } else { "" };
                    self.line(&format!("{c}entries = {{"));
                    self.indent += 1;
                    for e in entries {
                        let prio = e
                            .priority
                            .as_ref()
                            .map(|p| format!("priority = {}: ", expr(p)))
                            .unwrap_or_default();
                        let s = format!(
                            "{}{prio}{}: {};",
                            self.inline_annotations(&e.annotations),
                            keysets(&e.keysets),
                            self.action_ref(&e.action)
                        );
                        self.line(&s);
                    }
                    self.indent -= 1;
                    self.line("}");
                }
                TableProperty::Other {
                    name,
                    value,
                    is_const,
                    ..
                } => {
                    let c = if *is_const { "const " } else { "" };
                    let s = format!("{c}{} = {};", name.name, expr(value));
                    self.line(&s);
                }
            }
        }
        self.indent -= 1;
        self.line("}");
    }

    fn action_ref(&self, r: &ActionRef) -> String {
        let a = r
            .args
            .as_ref()
            .map(|a| format!("({})", args(a)))
            .unwrap_or_default();
        format!(
            "{}{}{a}",
            self.inline_annotations(&r.annotations),
            expr(&r.name)
        )
    }

    /// `head {` statements `}`.
    fn block_stmt(&mut self, head: &str, b: &Block) {
        if head.is_empty() {
            self.line("{");
        } else {
            self.line(&format!("{head} {{"));
        }
        self.indent += 1;
        for s in &b.stmts {
            self.stmt(s);
        }
        self.indent -= 1;
        self.line("}");
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign(l, r) => self.line(&format!("{} = {};", expr(l), expr(r))),
            StmtKind::Call(e) => self.line(&format!("{};", expr(e))),
            StmtKind::If(c, t, e) => self.if_stmt("if", c, t, e.as_deref()),
            StmtKind::Block(b) => self.block_stmt("", b),
            StmtKind::Switch(e, cases) => {
                self.line(&format!("switch ({}) {{", expr(e)));
                self.indent += 1;
                for c in cases {
                    let label = match &c.label {
                        SwitchLabel::Default(_) => "default".to_owned(),
                        SwitchLabel::Expr(e) => expr(e),
                    };
                    match &c.body {
                        Some(b) => self.block_stmt(&format!("{label}:"), b),
                        None => self.line(&format!("{label}:")),
                    }
                }
                self.indent -= 1;
                self.line("}");
            }
            StmtKind::Return(Some(e)) => self.line(&format!("return {};", expr(e))),
            StmtKind::Return(None) => self.line("return;"),
            StmtKind::Exit => self.line("exit;"),
            StmtKind::Empty => self.line(";"),
            StmtKind::Var(v) => {
                let s = var_text(v);
                self.line(&s);
            }
            StmtKind::Const(c) => {
                let s = const_text(c);
                self.line(&s);
            }
            StmtKind::OpAssign(op, l, r) => {
                self.line(&format!("{} {}= {};", expr(l), op.as_str(), expr(r)))
            }
            StmtKind::Break => self.line("break;"),
            StmtKind::Continue => self.line("continue;"),
            StmtKind::For(f) => {
                let simple = |ss: &[Stmt]| {
                    ss.iter()
                        .map(|s| simple_text(s).trim_end_matches(';').to_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let cond = f.cond.as_ref().map(expr).unwrap_or_default();
                let head = format!("for ({}; {cond}; {})", simple(&f.init), simple(&f.updates));
                self.loop_body(&head, &f.body);
            }
            StmtKind::ForIn(f) => {
                let var = match &f.ty {
                    Some(t) => format!("{} {}", ty(t), f.var.name),
                    None => f.var.name.clone(),
                };
                let coll = match &f.collection {
                    ForInCollection::Range(a, b) => format!("{} .. {}", expr(a), expr(b)),
                    ForInCollection::Expr(e) => expr(e),
                };
                self.loop_body(&format!("for ({var} in {coll})"), &f.body);
            }
        }
    }

    /// A loop head and its body (a block, or one statement indented).
    fn loop_body(&mut self, head: &str, body: &Stmt) {
        match &body.kind {
            StmtKind::Block(b) => self.block_stmt(head, b),
            _ => {
                self.line(head);
                self.indent += 1;
                self.stmt(body);
                self.indent -= 1;
            }
        }
    }

    fn if_stmt(&mut self, head: &str, c: &Expr, t: &Stmt, e: Option<&Stmt>) {
        let cond = expr(c);
        match &t.kind {
            StmtKind::Block(b) => {
                self.block_open(&format!("{head} ({cond})"), b);
                match e {
                    None => self.line("}"),
                    Some(e) => self.else_part("} else", e),
                }
            }
            _ => {
                self.line(&format!("{head} ({cond})"));
                self.indent += 1;
                self.stmt(t);
                self.indent -= 1;
                if let Some(e) = e {
                    self.else_part("else", e);
                }
            }
        }
    }

    /// `head {` and the statements, leaving the closing brace to the caller.
    fn block_open(&mut self, head: &str, b: &Block) {
        self.line(&format!("{head} {{"));
        self.indent += 1;
        for s in &b.stmts {
            self.stmt(s);
        }
        self.indent -= 1;
    }

    fn else_part(&mut self, lead: &str, e: &Stmt) {
        match &e.kind {
            StmtKind::If(c, t, e2) => self.if_stmt(&format!("{lead} if"), c, t, e2.as_deref()),
            StmtKind::Block(b) => {
                self.block_open(lead, b);
                self.line("}");
            }
            _ => {
                self.line(lead);
                self.indent += 1;
                self.stmt(e);
                self.indent -= 1;
            }
        }
    }
}

fn names(ids: &[Ident]) -> String {
    ids.iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn type_params(tps: &[Ident]) -> String {
    if tps.is_empty() {
        String::new()
    } else {
        format!("<{}>", names(tps))
    }
}

fn const_text(c: &ConstDecl) -> String {
    format!("const {} {} = {};", ty(&c.ty), c.name.name, expr(&c.value))
}

/// A declaration, assignment or call of a `for` header, as one statement.
fn simple_text(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Var(v) => var_text(v),
        StmtKind::Assign(l, r) => format!("{} = {};", expr(l), expr(r)),
        StmtKind::Call(e) => format!("{};", expr(e)),
        _ => String::new(),
    }
}

fn var_text(v: &VarDecl) -> String {
    match &v.init {
        Some(e) => format!("{} {} = {};", ty(&v.ty), v.name.name, expr(e)),
        None => format!("{} {};", ty(&v.ty), v.name.name),
    }
}

fn proto(f: &FunctionProto) -> String {
    let params = Printer::default().params(&f.params);
    let tps = type_params(&f.type_params);
    match &f.ret {
        Some(r) => format!("{} {}{tps}({params})", ty(r), f.name.name),
        None => format!("{}{tps}({params})", f.name.name),
    }
}

fn annotation(a: &Annotation) -> String {
    match &a.body {
        AnnotationBody::Empty => format!("@{}", a.name.name),
        AnnotationBody::Exprs(es) => {
            let v: Vec<String> = es.iter().map(expr).collect();
            format!("@{}({})", a.name.name, v.join(", "))
        }
        AnnotationBody::Tokens(t) if a.name.name == "pragma" => format!("@pragma {t}"),
        AnnotationBody::Tokens(t) => format!("@{}({t})", a.name.name),
    }
}

fn keysets(ks: &[Keyset]) -> String {
    let v: Vec<String> = ks.iter().map(keyset).collect();
    if v.len() == 1 {
        v.join("")
    } else {
        format!("({})", v.join(", "))
    }
}

fn keyset(k: &Keyset) -> String {
    match k {
        Keyset::Default(_) => "default".to_owned(),
        Keyset::DontCare(_) => "_".to_owned(),
        Keyset::Expr(e) => expr(e),
        Keyset::Mask(a, b) => format!("{} &&& {}", expr(a), expr(b)),
        Keyset::Range(a, b) => format!("{} .. {}", expr(a), expr(b)),
    }
}

fn args(a: &[Argument]) -> String {
    let v: Vec<String> = a
        .iter()
        .map(|a| match &a.name {
            Some(n) => format!("{} = {}", n.name, expr(&a.value)),
            None => expr(&a.value),
        })
        .collect();
    v.join(", ")
}

/// A type as written.
pub(crate) fn ty(t: &TypeRef) -> String {
    match &t.kind {
        TypeRefKind::Bool => "bool".to_owned(),
        TypeRefKind::Bit(w) => format!("bit<{}>", width(w)),
        TypeRefKind::Int(w) => format!("int<{}>", width(w)),
        TypeRefKind::Varbit(w) => format!("varbit<{}>", width(w)),
        TypeRefKind::InfInt => "int".to_owned(),
        TypeRefKind::Error => "error".to_owned(),
        TypeRefKind::MatchKind => "match_kind".to_owned(),
        TypeRefKind::String => "string".to_owned(),
        TypeRefKind::Void => "void".to_owned(),
        TypeRefKind::DontCare => "_".to_owned(),
        TypeRefKind::Named {
            name,
            dot_prefix,
            args,
        } => {
            let dot = if *dot_prefix { "." } else { "" };
            if args.is_empty() {
                format!("{dot}{}", name.name)
            } else {
                let v: Vec<String> = args.iter().map(ty).collect();
                format!("{dot}{}<{}>", name.name, v.join(", "))
            }
        }
        TypeRefKind::Stack { elem, size } => format!("{}[{}]", ty(elem), expr(size)),
        TypeRefKind::Tuple(ts) => {
            let v: Vec<String> = ts.iter().map(ty).collect();
            format!("tuple<{}>", v.join(", "))
        }
    }
}

fn width(w: &Expr) -> String {
    match &w.kind {
        ExprKind::Int(_) | ExprKind::Name { .. } => expr(w),
        _ => format!("({})", expr(w)),
    }
}

/// Does `e` need parentheses as an operand?
fn compound(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Binary(..) | ExprKind::Ternary(..) | ExprKind::Unary(..) | ExprKind::Cast(..)
    )
}

fn operand(e: &Expr) -> String {
    if compound(e) {
        format!("({})", expr(e))
    } else {
        expr(e)
    }
}

/// An expression.
pub(crate) fn expr(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e);
    s
}

fn write_expr(s: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Int(l) => s.push_str(&l.text),
        ExprKind::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        ExprKind::Str(t) => {
            s.push('"');
            for c in t.chars() {
                match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    '\n' => s.push_str("\\n"),
                    '\t' => s.push_str("\\t"),
                    c => s.push(c),
                }
            }
            s.push('"');
        }
        ExprKind::Name { name, dot_prefix } => {
            if *dot_prefix {
                s.push('.');
            }
            s.push_str(&name.name);
        }
        ExprKind::Member(b, m) => {
            let _ = write!(s, "{}.{}", operand(b), m.name);
        }
        ExprKind::Index(b, i) => {
            let _ = write!(s, "{}[{}]", operand(b), expr(i));
        }
        ExprKind::Slice(b, h, l) => {
            let _ = write!(s, "{}[{}:{}]", operand(b), expr(h), expr(l));
        }
        ExprKind::Call {
            callee,
            type_args,
            args: a,
        } => {
            s.push_str(&operand(callee));
            if !type_args.is_empty() {
                let v: Vec<String> = type_args.iter().map(ty).collect();
                let _ = write!(s, "<{}>", v.join(", "));
            }
            let _ = write!(s, "({})", args(a));
        }
        ExprKind::Unary(op, x) => {
            let _ = write!(s, "{}{}", op.as_str(), operand(x));
        }
        ExprKind::Binary(op, l, r) => {
            let _ = write!(s, "{} {} {}", operand(l), op.as_str(), operand(r));
        }
        ExprKind::Ternary(c, a, b) => {
            let _ = write!(s, "{} ? {} : {}", operand(c), operand(a), operand(b));
        }
        ExprKind::Cast(t, x) => {
            let _ = write!(s, "({}) {}", ty(t), operand(x));
        }
        ExprKind::List(items) => {
            let v: Vec<String> = items.iter().map(expr).collect();
            let _ = write!(s, "{{{}}}", v.join(", "));
        }
        ExprKind::StructInit(fields) => {
            let v: Vec<String> = fields
                .iter()
                .map(|(n, e)| format!("{} = {}", n.name, expr(e)))
                .collect();
            let _ = write!(s, "{{{}}}", v.join(", "));
        }
        ExprKind::DontCare => s.push('_'),
        ExprKind::Type(t) => s.push_str(&ty(t)),
    }
}
