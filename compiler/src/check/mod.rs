//! The checker: name resolution, types and P4's width rules, directions,
//! actions, tables, parsers and the architecture — AST in, [`ir::Module`] out.
//!
//! Declarations are processed in source order (P4 requires declaration before
//! use). Every problem is a [`Diagnostic`] with a code from [`crate::codes`];
//! the checker keeps going after an error to report as many as it can, and
//! returns the module only if there were none.
//!
//! Submodules: `types` (type resolution, unification,
//! coercion), `expr` (expressions and constant folding), `stmt` (statements
//! and calls), `decl` (parsers, controls, actions, tables), `arch` (the main
//! package and architecture rules).

mod arch;
mod args;
mod call;
pub(crate) mod consts;
mod decl;
mod expr;
mod loops;
mod ops;
mod parser;
mod psa;
mod psa_externs;
mod stmt;
mod table;
mod types;
mod unions_varbits;

use std::collections::HashMap;

use crate::ast::{self, Span};
use crate::codes;
use crate::diag::{Diagnostic, Severity};
use crate::ir::{self, Builtin, Handle, Module, Type, Value};
use crate::source::SourceMap;

pub use arch::{arch_spec, builtin_label, ArchParam, ArchSpec, ARCHES};

/// Check a parsed program. On success returns the module and the warnings;
/// on failure every diagnostic (errors and warnings).
pub fn check(
    program: &ast::Program,
    sources: &SourceMap,
    name: &str,
) -> Result<(Module, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut c = Checker::new(sources, name);
    for decl in &program.decls {
        c.top_decl(decl);
        let span = decl_span(decl);
        if !c.is_bundled(span) {
            c.last_span = Some(span);
        }
    }
    c.finish();
    if c.diags.iter().any(|d| d.severity == Severity::Error) {
        Err(c.diags)
    } else {
        Ok((c.m, c.diags))
    }
}

/// What a name refers to.
#[derive(Clone, Debug)]
pub(crate) enum Sym {
    /// A type (header, struct, enum, typedef'd type, `type` declaration).
    Type(Type),
    /// An extern object type.
    ExternObject(Handle<ir::ExternObjectDef>),
    /// Extern functions (overloads by arity).
    ExternFns(Vec<Handle<ir::ExternFnDef>>),
    /// A parser declaration.
    Parser(Handle<ir::Parser>),
    /// A control declaration.
    Control(Handle<ir::Control>),
    /// A parser type, control type or package.
    BlockType(Handle<ir::BlockTypeDef>),
    /// A constant.
    Const(Type, Value),
    /// An action.
    Action(Handle<ir::Action>),
    /// A function.
    Function(Handle<ir::Function>),
    /// An instance.
    Instance(Handle<ir::Instance>),
    /// A variable or parameter.
    Var(Handle<ir::Var>),
    /// A table.
    Table(Handle<ir::Table>),
}

impl Sym {
    fn describe(&self) -> &'static str {
        match self {
            Sym::Type(_) => "a type",
            Sym::ExternObject(_) => "an extern type",
            Sym::ExternFns(_) => "an extern function",
            Sym::Parser(_) => "a parser",
            Sym::Control(_) => "a control",
            Sym::BlockType(_) => "a parser, control or package type",
            Sym::Const(..) => "a constant",
            Sym::Action(_) => "an action",
            Sym::Function(_) => "a function",
            Sym::Instance(_) => "an instance",
            Sym::Var(_) => "a variable",
            Sym::Table(_) => "a table",
        }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    sym: Sym,
    span: Span,
}

/// Where the checker is.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ctx {
    /// The control being checked.
    control: Option<Handle<ir::Control>>,
    /// In a parser (state bodies).
    in_parser: bool,
    /// In an action body.
    in_action: bool,
    /// In a function body: its return type.
    function_ret: Option<Type>,
    /// In a control's apply block: the block nesting depth (0 = top level).
    apply_depth: Option<u32>,
    /// Loops around the statement being checked (0: not in a loop).
    loop_depth: u32,
    /// Checking a direct operand of `==`/`!=`, where a varbit field may be read.
    varbit_operand: bool,
    /// Checking the data argument of a v1model checksum or hash function: a
    /// direct item of its list may be a varbit field (its current length).
    varbit_data: bool,
}

/// A use of a builtin, recorded for the architecture checks after `main`.
#[derive(Clone, Debug)]
pub(crate) struct BuiltinUse {
    op: Builtin,
    span: Span,
    control: Option<Handle<ir::Control>>,
    in_action: bool,
    top_level: bool,
}

/// The checker's state.
pub(crate) struct Checker<'a> {
    m: Module,
    sources: &'a SourceMap,
    diags: Vec<Diagnostic>,
    top: HashMap<String, Entry>,
    scopes: Vec<HashMap<String, Entry>>,
    ctx: Ctx,
    declared_errors: HashMap<String, Span>,
    builtin_uses: Vec<BuiltinUse>,
    no_action: Option<Handle<ir::Action>>,
    main_seen: bool,
    /// Top-level package instances (PSA's pipelines), for `main`.
    pkg_insts: Vec<ast::Instantiation>,
    /// Controls invoked directly (`C.apply()`) in the control being checked.
    direct_instances: Vec<Handle<ir::Instance>>,
    /// Parsers/controls whose parameters had errors (not checked against the package).
    broken_blocks: Vec<ir::BlockRef>,
    /// The last declaration of the program itself (not of a bundled include).
    last_span: Option<Span>,
    /// Typedefs whose type holds a `varbit` outside a header (p4c allows
    /// `typedef tuple<..., varbit<N>> t;`): resolved, and refused, only
    /// where they are used.
    deferred_typedefs: HashMap<String, ast::TypeRef>,
}

impl<'a> Checker<'a> {
    fn new(sources: &'a SourceMap, name: &str) -> Checker<'a> {
        Checker {
            m: Module::new(name),
            sources,
            diags: Vec::new(),
            top: HashMap::new(),
            scopes: Vec::new(),
            ctx: Ctx::default(),
            declared_errors: HashMap::new(),
            builtin_uses: Vec::new(),
            no_action: None,
            main_seen: false,
            pkg_insts: Vec::new(),
            direct_instances: Vec::new(),
            broken_blocks: Vec::new(),
            last_span: None,
            deferred_typedefs: HashMap::new(),
        }
    }

    // ----- diagnostics -------------------------------------------------------

    fn emit(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn err(&mut self, code: &'static str, msg: impl Into<String>, span: Span) {
        self.diags.push(Diagnostic::error(code, msg, span));
    }

    /// Whether a span is inside a bundled include (`<core.p4>`...).
    fn is_bundled(&self, span: Span) -> bool {
        self.sources
            .file(span.file)
            .is_some_and(|f| f.name.starts_with('<'))
    }

    // ----- scopes --------------------------------------------------------------

    fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Declare `name` in the innermost scope (or the top level).
    fn declare(&mut self, name: &ast::Ident, sym: Sym) {
        let scope = match self.scopes.last_mut() {
            Some(s) => s,
            None => &mut self.top,
        };
        if let Some(prev) = scope.get(&name.name) {
            let prev_span = prev.span;
            let d = Diagnostic::error(
                codes::DUPLICATE,
                format!("`{}` is declared twice", name.name),
                name.span,
            )
            .with_label("redeclared here")
            .with_secondary(prev_span, "first declared here")
            .with_hint("rename one of the declarations");
            self.diags.push(d);
            return;
        }
        scope.insert(
            name.name.clone(),
            Entry {
                sym,
                span: name.span,
            },
        );
    }

    /// Look a name up, innermost scope first (`dot`: top level only).
    fn lookup(&self, name: &str, dot: bool) -> Option<&Sym> {
        if !dot {
            for s in self.scopes.iter().rev() {
                if let Some(e) = s.get(name) {
                    return Some(&e.sym);
                }
            }
        }
        self.top.get(name).map(|e| &e.sym)
    }

    /// Look a name up or report it undefined (with a "did you mean" hint).
    fn resolve(&mut self, name: &ast::Ident, dot: bool) -> Option<Sym> {
        if let Some(s) = self.lookup(&name.name, dot) {
            return Some(s.clone());
        }
        self.undefined(name, dot);
        None
    }

    fn undefined(&mut self, name: &ast::Ident, dot: bool) {
        let mut names: Vec<&str> = self.top.keys().map(String::as_str).collect();
        if !dot {
            for s in &self.scopes {
                names.extend(s.keys().map(String::as_str));
            }
        }
        let mut d = Diagnostic::error(
            codes::UNDEFINED,
            format!("cannot find `{}` in this scope", name.name),
            name.span,
        )
        .with_label("not declared");
        if let Some(best) = did_you_mean(&name.name, names.iter().copied()) {
            d = d.with_hint(format!(
                "a declaration with a similar name exists: `{best}`"
            ));
        }
        self.diags.push(d);
    }

    // ----- top level -----------------------------------------------------------

    fn top_decl(&mut self, decl: &ast::Decl) {
        use ast::Decl;
        match decl {
            Decl::Constant(c) => {
                if let Some((ty, value)) = self.const_decl(c) {
                    let bundled = self.is_bundled(c.span);
                    self.m.constants.push(ir::ConstDef {
                        name: c.name.name.clone(),
                        ty: ty.clone(),
                        value: value.clone(),
                        bundled,
                    });
                    self.declare(&c.name, Sym::Const(ty, value));
                }
            }
            Decl::Header(s) => {
                self.struct_decl(s, true);
            }
            Decl::Struct(s) => {
                self.struct_decl(s, false);
            }
            Decl::HeaderUnion(s) => self.union_decl(s),
            Decl::Typedef(t) => self.typedef_decl(t),
            Decl::Enum(e) => self.enum_decl(e),
            Decl::Error(list) => {
                for m in &list.members {
                    if let Some(prev) = self.declared_errors.get(&m.name) {
                        let d = Diagnostic::error(
                            codes::DUPLICATE,
                            format!("error `{}` is declared twice", m.name),
                            m.span,
                        )
                        .with_secondary(*prev, "first declared here");
                        self.emit(d);
                        continue;
                    }
                    self.declared_errors.insert(m.name.clone(), m.span);
                    if !self.m.errors.contains(&m.name) {
                        self.m.errors.push(m.name.clone());
                    }
                }
            }
            Decl::MatchKind(list) => {
                for m in &list.members {
                    if self.m.match_kinds.contains(&m.name) {
                        if self.is_bundled(m.span) {
                            // <netsparse.p4> and <v1model.p4> both declare `range`.
                            continue;
                        }
                        self.err(
                            codes::DUPLICATE,
                            format!("match kind `{}` is declared twice", m.name),
                            m.span,
                        );
                        continue;
                    }
                    self.m.match_kinds.push(m.name.clone());
                }
            }
            Decl::ExternFunction(f) => self.extern_fn_decl(f),
            Decl::ExternObject(o) => self.extern_object_decl(o),
            Decl::Parser(p) => self.parser_decl(p),
            Decl::ParserType(b) => self.block_type_decl(b, ir::BlockKind::Parser),
            Decl::Control(c) => self.control_decl(c),
            Decl::ControlType(b) => self.block_type_decl(b, ir::BlockKind::Control),
            Decl::Package(b) => self.block_type_decl(b, ir::BlockKind::Package),
            Decl::Action(a) => {
                if let Some(h) = self.action_decl(a, None) {
                    if a.name.name == "NoAction" && a.params.is_empty() {
                        self.no_action = Some(h);
                    }
                    self.declare(&a.name, Sym::Action(h));
                }
            }
            Decl::Function(f) => self.function_decl(f),
            Decl::Instantiation(i) => {
                if i.name.name == "main" {
                    self.main_seen = true;
                    self.main_decl(i);
                } else if self.names_package(&i.ty) {
                    // A pipeline package (PSA's IngressPipeline/EgressPipeline),
                    // checked as part of `main`.
                    self.pkg_insts.push(i.clone());
                } else if let Some(h) = self.instantiation(i) {
                    if matches!(
                        self.m.instances[h].kind,
                        ir::InstanceKind::Control(_) | ir::InstanceKind::Parser(_)
                    ) {
                        // P4_16: controls and parsers are instantiated
                        // inside other controls and parsers (or as package
                        // arguments), never at the top level.
                        self.err(
                            codes::WRONG_KIND,
                            format!(
                                "`{}`: a control or parser cannot be instantiated at the top level",
                                i.name.name
                            ),
                            i.span,
                        );
                    }
                    self.declare(&i.name, Sym::Instance(h));
                }
            }
        }
    }

    fn finish(&mut self) {
        if !self.main_seen {
            // Point just after the program's last declaration.
            let span = self
                .last_span
                .map(|s| Span {
                    file: s.file,
                    start: s.end,
                    end: s.end,
                })
                .unwrap_or_default();
            let d = Diagnostic::error(
                codes::MAIN_PACKAGE,
                "the program has no `main` package instantiation",
                span,
            )
            .with_hint(
                "end the program with e.g. `V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), \
                 MyEgress(), MyComputeChecksum(), MyDeparser()) main;`",
            );
            self.emit(d);
            return;
        }
        self.arch_checks();
    }

    /// Record a builtin call for the architecture checks.
    fn record_builtin(&mut self, op: Builtin, span: Span) {
        self.builtin_uses.push(BuiltinUse {
            op,
            span,
            control: self.ctx.control,
            in_action: self.ctx.in_action,
            top_level: self.ctx.apply_depth == Some(0) && !self.ctx.in_action,
        });
    }

    /// A string-valued annotation such as `@name("x")`.
    fn annotation_str(anns: &[ast::Annotation], name: &str) -> Option<String> {
        anns.iter()
            .find(|a| a.name.name == name)
            .and_then(|a| match &a.body {
                ast::AnnotationBody::Exprs(es) => es.first().and_then(|e| match &e.kind {
                    ast::ExprKind::Str(s) => Some(s.clone()),
                    _ => None,
                }),
                _ => None,
            })
    }

    fn has_annotation(anns: &[ast::Annotation], name: &str) -> bool {
        anns.iter().any(|a| a.name.name == name)
    }

    /// The integer arguments of an annotation such as `@field_list(1, 2)`.
    fn annotation_ints(anns: &[ast::Annotation], name: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for a in anns.iter().filter(|a| a.name.name == name) {
            if let ast::AnnotationBody::Exprs(es) = &a.body {
                for e in es {
                    if let ast::ExprKind::Int(lit) = &e.kind {
                        if let Ok(v) = u32::try_from(lit.value) {
                            out.push(v);
                        }
                    }
                }
            }
        }
        out
    }
}

/// The span of a top-level declaration.
fn decl_span(d: &ast::Decl) -> Span {
    use ast::Decl;
    match d {
        Decl::Constant(c) => c.span,
        Decl::Header(s) | Decl::HeaderUnion(s) | Decl::Struct(s) => s.span,
        Decl::Typedef(t) => t.span,
        Decl::Enum(e) => e.span,
        Decl::Error(l) | Decl::MatchKind(l) => l.span,
        Decl::ExternFunction(f) => f.span,
        Decl::ExternObject(o) => o.span,
        Decl::Parser(p) => p.span,
        Decl::ParserType(b) | Decl::ControlType(b) | Decl::Package(b) => b.span,
        Decl::Control(c) => c.span,
        Decl::Action(a) => a.span,
        Decl::Function(f) => f.proto.span,
        Decl::Instantiation(i) => i.span,
    }
}

/// The closest candidate to `name` by edit distance, if close enough.
pub(crate) fn did_you_mean<'n>(
    name: &str,
    candidates: impl Iterator<Item = &'n str>,
) -> Option<String> {
    let len = name.chars().count();
    let limit = (len / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || c.starts_with('$') {
            continue;
        }
        let d = edit_distance(name, c);
        // One-letter names are too short for a useful guess.
        if d > limit || (len <= 2 && d > 0 && !c.eq_ignore_ascii_case(name)) {
            continue;
        }
        let better = match best {
            None => true,
            Some((bd, bn)) => d < bd || (d == bd && c < bn),
        };
        if better {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

/// Levenshtein distance (case differences count as half a change: rounded).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 8 {
        return usize::MAX;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = if a[i - 1] == b[j - 1] {
                0
            } else if a[i - 1].eq_ignore_ascii_case(&b[j - 1]) {
                // A case difference is a cheap mistake.
                0
            } else {
                1
            };
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ipv4", "ipv4"), 0);
        assert_eq!(edit_distance("Ipv4", "ipv4"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn suggestions() {
        let names = ["ipv4_lpm", "ipv4_forward", "drop"];
        assert_eq!(
            did_you_mean("ipv4_lmp", names.iter().copied()),
            Some("ipv4_lpm".to_string())
        );
        assert_eq!(did_you_mean("dorp", names.iter().copied()), None);
        assert_eq!(
            did_you_mean("dro", names.iter().copied()),
            Some("drop".to_string())
        );
        assert_eq!(did_you_mean("zzzzzz", names.iter().copied()), None);
    }
}
