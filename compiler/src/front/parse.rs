//! pest pairs → AST.
//!
//! The grammar (`grammar.pest`) recognises the program; this module turns its
//! pairs into [`ast`] nodes, resolves operator precedence with a Pratt parser
//! (P4_16 table), validates integer literals, maps every span back to the
//! original files, and bounds the depth of what it builds (each limit is an
//! `E0003` diagnostic) so that no consumer of the AST can overflow its stack.
//!
//! This file holds the builder, annotations, declarations, blocks and
//! statements; types and expressions are in `parse_expr.rs`, parser states,
//! actions and tables in `parse_tables.rs`, assignments and loops in
//! `parse_loops.rs`, and the wording of syntax errors in `parse_errors.rs`.

use std::cell::{Cell, RefCell};
use std::sync::LazyLock;

use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};
use pest::Parser as _;

use crate::ast::*;
use crate::diag::Diagnostic;

use super::spanmap::SpanMap;

#[path = "parse_errors.rs"]
mod errors;
#[path = "parse_expr.rs"]
mod expr;
#[path = "parse_loops.rs"]
mod loops;
#[path = "parse_tables.rs"]
mod tables;

#[derive(pest_derive::Parser)]
#[grammar = "front/grammar.pest"]
struct P4Parser;

/// Maximum depth of an expression tree.
pub(crate) const MAX_EXPR_DEPTH: u32 = 256;
/// Maximum recursion of the builder (statements in statements, types in types...).
pub(crate) const MAX_NEST: usize = 256;
/// Maximum run of prefix operators (including casts) on one operand.
pub(crate) const MAX_PREFIX_RUN: usize = 64;

/// Operator precedence of P4_16 (spec appendix grammar), lowest first:
/// `||`, `&&`, `== !=`, `< > <= >=`, `|`, `^`, `&`, `<< >>`,
/// `++ + - |+| |-|`, `* / %`, prefix. The ternary is handled by the grammar.
static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::op_or, Assoc::Left))
        .op(Op::infix(Rule::op_and, Assoc::Left))
        .op(Op::infix(Rule::op_eq, Assoc::Left) | Op::infix(Rule::op_ne, Assoc::Left))
        .op(Op::infix(Rule::op_lt, Assoc::Left)
            | Op::infix(Rule::op_gt, Assoc::Left)
            | Op::infix(Rule::op_le, Assoc::Left)
            | Op::infix(Rule::op_ge, Assoc::Left))
        .op(Op::infix(Rule::op_bor, Assoc::Left))
        .op(Op::infix(Rule::op_bxor, Assoc::Left))
        .op(Op::infix(Rule::op_band, Assoc::Left))
        .op(Op::infix(Rule::op_shl, Assoc::Left) | Op::infix(Rule::op_shr, Assoc::Left))
        .op(Op::infix(Rule::op_concat, Assoc::Left)
            | Op::infix(Rule::op_add, Assoc::Left)
            | Op::infix(Rule::op_sub, Assoc::Left)
            | Op::infix(Rule::op_satadd, Assoc::Left)
            | Op::infix(Rule::op_satsub, Assoc::Left))
        .op(Op::infix(Rule::op_mul, Assoc::Left)
            | Op::infix(Rule::op_div, Assoc::Left)
            | Op::infix(Rule::op_mod, Assoc::Left))
        .op(Op::prefix(Rule::op_not)
            | Op::prefix(Rule::op_bnot)
            | Op::prefix(Rule::op_neg)
            | Op::prefix(Rule::op_pos)
            | Op::prefix(Rule::cast))
});

/// The builder stopped; the reason is already in its diagnostics.
#[derive(Debug)]
struct Stop;

type R<T> = Result<T, Stop>;
type P<'i> = Pair<'i, Rule>;
/// Name, type parameters, parameters and body pair of a parser/control/package.
type BlockHead<'i> = (Option<Ident>, Vec<Ident>, Vec<Param>, Option<P<'i>>);

/// Parse the preprocessed `text` into a program.
pub(crate) fn parse_program(text: &str, map: &SpanMap) -> Result<Program, Vec<Diagnostic>> {
    let b = Builder {
        text,
        map,
        diags: RefCell::new(Vec::new()),
        nest: Cell::new(0),
    };
    let pairs = match P4Parser::parse(Rule::program, text) {
        Ok(p) => p,
        Err(e) => return Err(vec![b.syntax_error(e)]),
    };
    let mut decls = Vec::new();
    let mut ok = true;
    for program in pairs {
        for p in program.into_inner() {
            if p.as_rule() == Rule::decl {
                match b.decl(p) {
                    Ok(Some(d)) => decls.push(d),
                    Ok(None) => {}
                    Err(Stop) => {
                        ok = false;
                        break;
                    }
                }
            }
        }
    }
    let diags = b.diags.into_inner();
    if ok && diags.is_empty() {
        Ok(Program { decls })
    } else {
        Err(diags)
    }
}

/// Punctuation and keyword rules: skipped when walking children.
fn is_token(r: Rule) -> bool {
    matches!(
        r,
        Rule::p_semi
            | Rule::p_comma
            | Rule::p_colon
            | Rule::p_lbrace
            | Rule::p_rbrace
            | Rule::p_lparen
            | Rule::p_rparen
            | Rule::p_lbracket
            | Rule::p_rbracket
            | Rule::p_langle
            | Rule::p_rangle
            | Rule::p_assign
            | Rule::p_question
            | Rule::p_dot
            | Rule::kw_abstract
            | Rule::kw_action
            | Rule::kw_actions
            | Rule::kw_apply
            | Rule::kw_bit
            | Rule::kw_bool
            | Rule::kw_break
            | Rule::kw_const
            | Rule::kw_continue
            | Rule::kw_control
            | Rule::kw_default_action
            | Rule::kw_else
            | Rule::kw_entries
            | Rule::kw_enum
            | Rule::kw_exit
            | Rule::kw_extern
            | Rule::kw_for
            | Rule::kw_header
            | Rule::kw_header_union
            | Rule::kw_if
            | Rule::kw_int
            | Rule::kw_key
            | Rule::kw_match_kind
            | Rule::kw_package
            | Rule::kw_parser
            | Rule::kw_priority
            | Rule::kw_return
            | Rule::kw_select
            | Rule::kw_state
            | Rule::kw_string
            | Rule::kw_struct
            | Rule::kw_switch
            | Rule::kw_table
            | Rule::kw_transition
            | Rule::kw_tuple
            | Rule::kw_type
            | Rule::kw_typedef
            | Rule::kw_value_set
            | Rule::kw_varbit
            | Rule::kw_void
            | Rule::EOI
    )
}

/// Does `p` have a direct child with rule `r`?
fn has(p: &P<'_>, r: Rule) -> bool {
    p.clone().into_inner().any(|k| k.as_rule() == r)
}

struct Builder<'a> {
    text: &'a str,
    map: &'a SpanMap,
    diags: RefCell<Vec<Diagnostic>>,
    nest: Cell<usize>,
}

impl<'a> Builder<'a> {
    // ------------------------------------------------------------ helpers

    fn span(&self, p: &P<'_>) -> Span {
        let s = p.as_span();
        self.map.span(s.start(), s.end())
    }

    fn push(&self, d: Diagnostic) {
        self.diags.borrow_mut().push(d);
    }

    fn stop(&self, d: Diagnostic) -> Stop {
        self.push(d);
        Stop
    }

    /// Children of `p` without punctuation and keywords.
    fn kids<'i>(&self, p: P<'i>) -> impl Iterator<Item = P<'i>> {
        p.into_inner().filter(|k| !is_token(k.as_rule()))
    }

    /// The next child, or an internal error at `at`.
    fn need<'i>(&self, it: &mut impl Iterator<Item = P<'i>>, at: Span) -> R<P<'i>> {
        it.next().ok_or_else(|| {
            self.stop(Diagnostic::error(
                "E0099",
                "internal error: unexpected shape of the syntax tree",
                at,
            ))
        })
    }

    fn enter(&self, at: Span) -> R<()> {
        let n = self.nest.get() + 1;
        self.nest.set(n);
        if n > MAX_NEST {
            return Err(self.too_deep("declarations, statements or types", at, MAX_NEST));
        }
        Ok(())
    }

    fn leave(&self) {
        self.nest.set(self.nest.get().saturating_sub(1));
    }

    fn too_deep(&self, what: &str, at: Span, limit: usize) -> Stop {
        self.stop(
            Diagnostic::error("E0003", format!("{what} nested too deeply"), at)
                .with_label(format!("the limit of {limit} is exceeded here"))
                .with_hint(
                    "split the construct into smaller parts (local variables, constants, actions)",
                ),
        )
    }

    // ------------------------------------------------------------ names

    /// A `name`, `ident` or `member_name` pair.
    fn ident(&self, p: P<'_>) -> Ident {
        let span = self.span(&p);
        let name = p.as_str().trim().to_owned();
        Ident { name, span }
    }

    fn type_params(&self, p: P<'_>) -> Vec<Ident> {
        self.kids(p).map(|k| self.ident(k)).collect()
    }

    // ------------------------------------------------------------ annotations

    fn annotation(&self, p: P<'_>) -> R<Annotation> {
        let span = self.span(&p);
        let Some(inner) = p.into_inner().next() else {
            return Err(self.stop(Diagnostic::error(
                "E0099",
                "internal error: empty annotation",
                span,
            )));
        };
        if inner.as_rule() == Rule::pragma_annotation {
            let s = inner.as_span();
            let name = Ident {
                name: "pragma".to_owned(),
                span: self.map.span(s.start() + 1, s.start() + 7),
            };
            let body = inner
                .into_inner()
                .next()
                .map(|t| t.as_str().trim().to_owned())
                .unwrap_or_default();
            return Ok(Annotation {
                name,
                body: AnnotationBody::Tokens(body),
                span,
            });
        }
        let mut it = inner.into_inner();
        let head = self.need(&mut it, span)?;
        let hs = head.as_span();
        let name = Ident {
            name: head.as_str()[1..].to_owned(),
            span: self.map.span(hs.start() + 1, hs.end()),
        };
        let body = match it.next() {
            None => AnnotationBody::Empty,
            Some(b) if b.as_rule() == Rule::ann_exprs => {
                let mut exprs = Vec::new();
                for e in self.kids(b) {
                    exprs.push(self.expr(e)?);
                }
                AnnotationBody::Exprs(exprs)
            }
            Some(b) => {
                let t = b.as_str();
                AnnotationBody::Tokens(t[1..t.len().saturating_sub(1)].trim().to_owned())
            }
        };
        Ok(Annotation { name, body, span })
    }

    /// Split leading annotations from the rest of the children.
    fn split_annotations<'i>(&self, p: P<'i>) -> R<(Vec<Annotation>, Vec<P<'i>>)> {
        let mut anns = Vec::new();
        let mut rest = Vec::new();
        for k in p.into_inner() {
            if k.as_rule() == Rule::annotation {
                anns.push(self.annotation(k)?);
            } else if !is_token(k.as_rule()) {
                rest.push(k);
            }
        }
        Ok((anns, rest))
    }

    // ------------------------------------------------------------ declarations

    fn decl(&self, p: P<'_>) -> R<Option<Decl>> {
        let span = self.span(&p);
        let (anns, rest) = self.split_annotations(p)?;
        let Some(b) = rest.into_iter().next() else {
            return Ok(None);
        };
        let d = match b.as_rule() {
            Rule::const_decl => Decl::Constant(self.const_decl(b, anns)?),
            Rule::header_decl => Decl::Header(self.struct_decl(b, anns)?),
            Rule::header_union_decl => Decl::HeaderUnion(self.struct_decl(b, anns)?),
            Rule::struct_decl => Decl::Struct(self.struct_decl(b, anns)?),
            Rule::typedef_decl => Decl::Typedef(self.typedef_decl(b, anns)?),
            Rule::enum_decl => Decl::Enum(self.enum_decl(b, anns)?),
            Rule::error_decl => Decl::Error(self.member_list(b)),
            Rule::match_kind_decl => Decl::MatchKind(self.member_list(b)),
            Rule::extern_decl => self.extern_decl(b, anns)?,
            Rule::parser_decl => self.parser_decl(b, anns)?,
            Rule::control_decl => self.control_decl(b, anns)?,
            Rule::package_decl => Decl::Package(self.block_type(b, anns)?),
            Rule::action_decl => Decl::Action(self.action_decl(b, anns)?),
            Rule::instantiation => Decl::Instantiation(self.instantiation(b, anns)?),
            Rule::function_decl => {
                let span = self.span(&b);
                let mut it = self.kids(b);
                let proto = self.function_proto(self.need(&mut it, span)?, anns)?;
                let body = self.block(self.need(&mut it, span)?)?;
                Decl::Function(FunctionDecl { proto, body })
            }
            _ => {
                return Err(self.stop(Diagnostic::error(
                    "E0099",
                    "internal error: unknown declaration",
                    span,
                )))
            }
        };
        Ok(Some(d))
    }

    fn const_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<ConstDecl> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let ty = self.type_ref(self.need(&mut it, span)?)?;
        let name = self.ident(self.need(&mut it, span)?);
        let value = self.expr(self.need(&mut it, span)?)?;
        Ok(ConstDecl {
            annotations,
            ty,
            name,
            value,
            span,
        })
    }

    fn struct_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<StructDecl> {
        let span = self.span(&p);
        let mut name = None;
        let mut type_params = Vec::new();
        let mut fields = Vec::new();
        for k in self.kids(p) {
            match k.as_rule() {
                Rule::name => name = Some(self.ident(k)),
                Rule::type_params => type_params = self.type_params(k),
                Rule::field => {
                    let fspan = self.span(&k);
                    let (anns, rest) = self.split_annotations(k)?;
                    let mut it = rest.into_iter();
                    let ty = self.type_ref(self.need(&mut it, fspan)?)?;
                    let fname = self.ident(self.need(&mut it, fspan)?);
                    fields.push(StructField {
                        annotations: anns,
                        ty,
                        name: fname,
                        span: fspan,
                    });
                }
                _ => {}
            }
        }
        Ok(StructDecl {
            annotations,
            name: self.named(name, span)?,
            type_params,
            fields,
            span,
        })
    }

    fn named(&self, name: Option<Ident>, span: Span) -> R<Ident> {
        name.ok_or_else(|| {
            self.stop(Diagnostic::error(
                "E0099",
                "internal error: declaration without a name",
                span,
            ))
        })
    }

    fn typedef_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<TypedefDecl> {
        let span = self.span(&p);
        let is_new_type = has(&p, Rule::kw_type);
        let mut it = self.kids(p);
        let ty = self.type_ref(self.need(&mut it, span)?)?;
        let name = self.ident(self.need(&mut it, span)?);
        Ok(TypedefDecl {
            annotations,
            ty,
            name,
            is_new_type,
            span,
        })
    }

    fn enum_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<EnumDecl> {
        let span = self.span(&p);
        let mut underlying = None;
        let mut name = None;
        let mut members = Vec::new();
        for k in self.kids(p) {
            match k.as_rule() {
                Rule::enum_underlying => {
                    let us = self.span(&k);
                    let mut it = self.kids(k);
                    underlying = Some(self.type_ref(self.need(&mut it, us)?)?);
                }
                Rule::name => name = Some(self.ident(k)),
                Rule::enum_member => {
                    let ms = self.span(&k);
                    let mut it = self.kids(k);
                    let mname = self.ident(self.need(&mut it, ms)?);
                    let value = match it.next() {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    };
                    members.push(EnumMember { name: mname, value });
                }
                _ => {}
            }
        }
        Ok(EnumDecl {
            annotations,
            underlying,
            name: self.named(name, span)?,
            members,
            span,
        })
    }

    fn member_list(&self, p: P<'_>) -> MemberList {
        let span = self.span(&p);
        let members = self
            .kids(p)
            .flat_map(|l| self.kids(l))
            .map(|n| self.ident(n))
            .collect();
        MemberList { members, span }
    }

    fn extern_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<Decl> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let inner = self.need(&mut it, span)?;
        if inner.as_rule() == Rule::extern_function {
            let fs = self.span(&inner);
            let mut it = self.kids(inner);
            let mut proto = self.function_proto(self.need(&mut it, fs)?, annotations)?;
            proto.span = span;
            return Ok(Decl::ExternFunction(proto));
        }
        let mut name = None;
        let mut type_params = Vec::new();
        let mut methods = Vec::new();
        for k in self.kids(inner) {
            match k.as_rule() {
                Rule::name => name = Some(self.ident(k)),
                Rule::type_params => type_params = self.type_params(k),
                Rule::method_decl => {
                    let ms = self.span(&k);
                    if has(&k, Rule::kw_abstract) {
                        self.push(
                            Diagnostic::error("E0040", "abstract methods are not supported", ms)
                                .with_hint("declare the method without `abstract`; this compiler has no abstract-method initializers"),
                        );
                    }
                    let (anns, rest) = self.split_annotations(k)?;
                    let mut it = rest.into_iter();
                    let proto = self.need(&mut it, ms)?;
                    let mut m = if proto.as_rule() == Rule::function_proto {
                        self.function_proto(proto, anns)?
                    } else {
                        let mut it = self.kids(proto);
                        let cname = self.ident(self.need(&mut it, ms)?);
                        let params = self.params(self.need(&mut it, ms)?)?;
                        FunctionProto {
                            annotations: anns,
                            ret: None,
                            name: cname,
                            type_params: Vec::new(),
                            params,
                            span: ms,
                        }
                    };
                    m.span = ms;
                    methods.push(m);
                }
                _ => {}
            }
        }
        Ok(Decl::ExternObject(ExternObjectDecl {
            annotations,
            name: self.named(name, span)?,
            type_params,
            methods,
            span,
        }))
    }

    fn function_proto(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<FunctionProto> {
        let span = self.span(&p);
        let mut ret = None;
        let mut name = None;
        let mut type_params = Vec::new();
        let mut params = Vec::new();
        for k in self.kids(p) {
            match k.as_rule() {
                Rule::type_ref => ret = Some(self.type_ref(k)?),
                Rule::name => name = Some(self.ident(k)),
                Rule::type_params => type_params = self.type_params(k),
                Rule::params => params = self.params(k)?,
                _ => {}
            }
        }
        Ok(FunctionProto {
            annotations,
            ret,
            name: self.named(name, span)?,
            type_params,
            params,
            span,
        })
    }

    fn params(&self, p: P<'_>) -> R<Vec<Param>> {
        let mut out = Vec::new();
        for k in self.kids(p) {
            let span = self.span(&k);
            let (annotations, rest) = self.split_annotations(k)?;
            let mut direction = None;
            let mut ty = None;
            let mut name = None;
            let mut default = None;
            for r in rest {
                match r.as_rule() {
                    Rule::direction => {
                        direction = match r.as_str().trim() {
                            "in" => Some(Direction::In),
                            "out" => Some(Direction::Out),
                            _ => Some(Direction::InOut),
                        }
                    }
                    Rule::type_ref => ty = Some(self.type_ref(r)?),
                    Rule::name => name = Some(self.ident(r)),
                    Rule::expr => default = Some(self.expr(r)?),
                    _ => {}
                }
            }
            let Some(ty) = ty else {
                return Err(self.stop(Diagnostic::error(
                    "E0099",
                    "internal error: parameter without type",
                    span,
                )));
            };
            out.push(Param {
                annotations,
                direction,
                ty,
                name: self.named(name, span)?,
                default,
                span,
            });
        }
        Ok(out)
    }

    /// Name, type parameters and parameters shared by parser/control/package.
    fn block_head<'i>(&self, p: P<'i>) -> R<BlockHead<'i>> {
        let mut name = None;
        let mut tps = Vec::new();
        let mut params = Vec::new();
        let mut body = None;
        for k in self.kids(p) {
            match k.as_rule() {
                Rule::name => name = Some(self.ident(k)),
                Rule::type_params => tps = self.type_params(k),
                Rule::params => params = self.params(k)?,
                Rule::parser_body | Rule::control_body => body = Some(k),
                _ => {}
            }
        }
        Ok((name, tps, params, body))
    }

    fn block_type(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<BlockTypeDecl> {
        let span = self.span(&p);
        let (name, type_params, params, _) = self.block_head(p)?;
        Ok(BlockTypeDecl {
            annotations,
            name: self.named(name, span)?,
            type_params,
            params,
            span,
        })
    }

    fn parser_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<Decl> {
        let span = self.span(&p);
        let (name, type_params, params, body) = self.block_head(p)?;
        let name = self.named(name, span)?;
        let Some(body) = body else {
            return Ok(Decl::ParserType(BlockTypeDecl {
                annotations,
                name,
                type_params,
                params,
                span,
            }));
        };
        let mut ctor_params = Vec::new();
        let mut locals = Vec::new();
        let mut states = Vec::new();
        for k in self.kids(body) {
            match k.as_rule() {
                Rule::ctor_params => {
                    if let Some(ps) = self.kids(k).next() {
                        ctor_params = self.params(ps)?;
                    }
                }
                Rule::parser_local | Rule::control_local => locals.push(self.local(k)?),
                Rule::parser_state => states.push(self.parser_state(k)?),
                _ => {}
            }
        }
        Ok(Decl::Parser(ParserDecl {
            annotations,
            name,
            type_params,
            params,
            ctor_params,
            locals,
            states,
            span,
        }))
    }

    fn control_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<Decl> {
        let span = self.span(&p);
        let (name, type_params, params, body) = self.block_head(p)?;
        let name = self.named(name, span)?;
        let Some(body) = body else {
            return Ok(Decl::ControlType(BlockTypeDecl {
                annotations,
                name,
                type_params,
                params,
                span,
            }));
        };
        let mut ctor_params = Vec::new();
        let mut locals = Vec::new();
        let mut apply = None;
        for k in self.kids(body) {
            match k.as_rule() {
                Rule::ctor_params => {
                    if let Some(ps) = self.kids(k).next() {
                        ctor_params = self.params(ps)?;
                    }
                }
                Rule::control_local => locals.push(self.local(k)?),
                Rule::block => apply = Some(self.block(k)?),
                _ => {}
            }
        }
        let Some(apply) = apply else {
            return Err(self.stop(Diagnostic::error(
                "E0099",
                "internal error: control without apply",
                span,
            )));
        };
        Ok(Decl::Control(ControlDecl {
            annotations,
            name,
            type_params,
            params,
            ctor_params,
            locals,
            apply,
            span,
        }))
    }

    fn local(&self, p: P<'_>) -> R<Local> {
        let span = self.span(&p);
        let (anns, rest) = self.split_annotations(p)?;
        let mut it = rest.into_iter();
        let b = self.need(&mut it, span)?;
        Ok(match b.as_rule() {
            Rule::const_decl => Local::Const(self.const_decl(b, anns)?),
            Rule::action_decl => Local::Action(self.action_decl(b, anns)?),
            Rule::table_decl => Local::Table(self.table_decl(b, anns)?),
            Rule::instantiation => Local::Instantiation(self.instantiation(b, anns)?),
            Rule::value_set_decl => {
                let vs = self.span(&b);
                let mut it = self.kids(b);
                let ty = self.type_ref(self.need(&mut it, vs)?)?;
                let size = self.expr(self.need(&mut it, vs)?)?;
                let name = self.ident(self.need(&mut it, vs)?);
                Local::ValueSet(ValueSetDecl {
                    annotations: anns,
                    ty,
                    size,
                    name,
                    span: vs,
                })
            }
            _ => Local::Var(self.var_decl(b, anns)?),
        })
    }

    fn var_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<VarDecl> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let ty = self.type_ref(self.need(&mut it, span)?)?;
        let name = self.ident(self.need(&mut it, span)?);
        let init = match it.next() {
            Some(e) => Some(self.expr(e)?),
            None => None,
        };
        Ok(VarDecl {
            annotations,
            ty,
            name,
            init,
            span,
        })
    }

    fn instantiation(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<Instantiation> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let ty = self.type_ref(self.need(&mut it, span)?)?;
        let args = self.args(self.need(&mut it, span)?)?;
        let name = self.ident(self.need(&mut it, span)?);
        Ok(Instantiation {
            annotations,
            ty,
            args,
            name,
            span,
        })
    }

    // ------------------------------------------------------------ statements

    fn block(&self, p: P<'_>) -> R<Block> {
        let span = self.span(&p);
        self.enter(span)?;
        let mut stmts = Vec::new();
        for k in self.kids(p) {
            match self.stmt(k) {
                Ok(s) => stmts.push(s),
                Err(e) => {
                    self.leave();
                    return Err(e);
                }
            }
        }
        self.leave();
        Ok(Block { stmts, span })
    }

    fn stmt(&self, p: P<'_>) -> R<Stmt> {
        let span = self.span(&p);
        self.enter(span)?;
        let r = self.stmt_inner(p, span);
        self.leave();
        r
    }

    fn stmt_inner(&self, p: P<'_>, span: Span) -> R<Stmt> {
        // Annotations on statements (`@atomic { ... }`, `@likely`...) carry no
        // meaning for this target; like p4c, accept and drop them.
        let (_anns, rest) = self.split_annotations(p)?;
        let mut it = rest.into_iter();
        let b = self.need(&mut it, span)?;
        let kind = match b.as_rule() {
            Rule::block => StmtKind::Block(self.block(b)?),
            Rule::if_stmt => {
                let mut it = self.kids(b);
                let cond = self.expr(self.need(&mut it, span)?)?;
                let then = self.stmt(self.need(&mut it, span)?)?;
                let els = match it.next() {
                    Some(e) => Some(Box::new(self.stmt(e)?)),
                    None => None,
                };
                StmtKind::If(cond, Box::new(then), els)
            }
            Rule::switch_stmt => {
                let mut it = self.kids(b);
                let e = self.expr(self.need(&mut it, span)?)?;
                let mut cases = Vec::new();
                for c in it {
                    let cs = self.span(&c);
                    let mut parts = c.into_inner().filter(|k| k.as_rule() != Rule::p_colon);
                    let l = self.need(&mut parts, cs)?;
                    let label = if l.as_rule() == Rule::kw_default {
                        SwitchLabel::Default(self.span(&l))
                    } else {
                        SwitchLabel::Expr(self.expr(l)?)
                    };
                    let body = match parts.next() {
                        Some(bl) => Some(self.block(bl)?),
                        None => None,
                    };
                    cases.push(SwitchCase {
                        label,
                        body,
                        span: cs,
                    });
                }
                StmtKind::Switch(e, cases)
            }
            Rule::return_stmt => {
                let e = match self.kids(b).next() {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                StmtKind::Return(e)
            }
            Rule::exit_stmt => StmtKind::Exit,
            Rule::empty_stmt => StmtKind::Empty,
            Rule::const_stmt => {
                let mut it = self.kids(b);
                StmtKind::Const(self.const_decl(self.need(&mut it, span)?, Vec::new())?)
            }
            Rule::var_stmt => {
                let mut it = self.kids(b);
                StmtKind::Var(self.var_decl(self.need(&mut it, span)?, Vec::new())?)
            }
            Rule::assign_stmt => self.assignment(b, span)?,
            Rule::break_stmt => StmtKind::Break,
            Rule::continue_stmt => StmtKind::Continue,
            Rule::for_stmt => self.for_stmt(b, span)?,
            _ => {
                let mut it = self.kids(b);
                let e = self.postfix(self.need(&mut it, span)?)?.0;
                if !matches!(e.kind, ExprKind::Call { .. }) {
                    self.push(
                        Diagnostic::error("E0001", "expected a statement", e.span)
                            .with_label("this expression is not a call")
                            .with_hint("only calls (`f(x);`, `t.apply();`) and assignments (`x = e;`) can be statements"),
                    );
                }
                StmtKind::Call(e)
            }
        };
        Ok(Stmt { kind, span })
    }
}
