//! pest pairs → AST.
//!
//! The grammar (`grammar.pest`) recognises the program; this module turns its
//! pairs into [`ast`] nodes, resolves operator precedence with a Pratt parser
//! (P4_16 table), validates integer literals, maps every span back to the
//! original files, and bounds the depth of what it builds (each limit is an
//! `E0003` diagnostic) so that no consumer of the AST can overflow its stack.

use std::cell::{Cell, RefCell};
use std::sync::LazyLock;

use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};
use pest::Parser as _;

use crate::ast::*;
use crate::diag::Diagnostic;

use super::spanmap::SpanMap;

#[path = "parse_loops.rs"]
mod loops;

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

    fn parser_state(&self, p: P<'_>) -> R<ParserState> {
        let span = self.span(&p);
        let (annotations, rest) = self.split_annotations(p)?;
        let mut name = None;
        let mut body = Vec::new();
        let mut transition = None;
        for k in rest {
            match k.as_rule() {
                Rule::name => name = Some(self.ident(k)),
                Rule::stmt => body.push(self.stmt(k)?),
                Rule::transition => transition = Some(self.transition(k)?),
                _ => {}
            }
        }
        Ok(ParserState {
            annotations,
            name: self.named(name, span)?,
            body,
            transition,
            span,
        })
    }

    fn transition(&self, p: P<'_>) -> R<Transition> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let t = self.need(&mut it, span)?;
        if t.as_rule() == Rule::prefixed_name {
            let ts = self.span(&t);
            let mut it = self.kids(t).filter(|k| k.as_rule() == Rule::name);
            return Ok(Transition::Direct(self.ident(self.need(&mut it, ts)?)));
        }
        let sspan = self.span(&t);
        let mut exprs = Vec::new();
        let mut cases = Vec::new();
        for k in self.kids(t) {
            match k.as_rule() {
                Rule::expr_list => {
                    for e in self.kids(k) {
                        exprs.push(self.expr(e)?);
                    }
                }
                Rule::select_case => {
                    let cs = self.span(&k);
                    let mut it = self.kids(k);
                    let keysets = self.keyset(self.need(&mut it, cs)?)?;
                    let next = self.ident(self.need(&mut it, cs)?);
                    cases.push(SelectCase {
                        keysets,
                        next,
                        span: cs,
                    });
                }
                _ => {}
            }
        }
        Ok(Transition::Select {
            exprs,
            cases,
            span: sspan,
        })
    }

    /// A `keyset` pair: one keyset, or several for a tuple.
    fn keyset(&self, p: P<'_>) -> R<Vec<Keyset>> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let k = self.need(&mut it, span)?;
        if k.as_rule() == Rule::tuple_keyset {
            let mut out = Vec::new();
            for s in self.kids(k) {
                out.push(self.simple_keyset(s)?);
            }
            Ok(out)
        } else {
            Ok(vec![self.simple_keyset(k)?])
        }
    }

    fn simple_keyset(&self, p: P<'_>) -> R<Keyset> {
        let span = self.span(&p);
        let mut parts = p.into_inner();
        let first = self.need(&mut parts, span)?;
        match first.as_rule() {
            Rule::kw_default => return Ok(Keyset::Default(span)),
            Rule::dontcare => return Ok(Keyset::DontCare(span)),
            _ => {}
        }
        let a = self.expr(first)?;
        match parts.next() {
            None => Ok(Keyset::Expr(a)),
            Some(op) => {
                let is_mask = op.as_rule() == Rule::p_mask;
                let b = self.expr(self.need(&mut parts, span)?)?;
                Ok(if is_mask {
                    Keyset::Mask(a, b)
                } else {
                    Keyset::Range(a, b)
                })
            }
        }
    }

    fn action_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<ActionDecl> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let name = self.ident(self.need(&mut it, span)?);
        let params = self.params(self.need(&mut it, span)?)?;
        let body = self.block(self.need(&mut it, span)?)?;
        Ok(ActionDecl {
            annotations,
            name,
            params,
            body,
            span,
        })
    }

    fn table_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<TableDecl> {
        let span = self.span(&p);
        let mut name = None;
        let mut properties = Vec::new();
        for k in self.kids(p) {
            let ps = self.span(&k);
            let is_const = has(&k, Rule::kw_const);
            match k.as_rule() {
                Rule::name => name = Some(self.ident(k)),
                Rule::key_prop => {
                    let mut elems = Vec::new();
                    for e in self.kids(k) {
                        let es = self.span(&e);
                        let mut anns = Vec::new();
                        let mut expr = None;
                        let mut kind = None;
                        for x in self.kids(e) {
                            match x.as_rule() {
                                Rule::expr => expr = Some(self.expr(x)?),
                                Rule::name => kind = Some(self.ident(x)),
                                Rule::annotation => anns.push(self.annotation(x)?),
                                _ => {}
                            }
                        }
                        let Some(expr) = expr else {
                            return Err(self.stop(Diagnostic::error(
                                "E0099",
                                "internal error: key without expression",
                                es,
                            )));
                        };
                        elems.push(KeyElement {
                            annotations: anns,
                            expr,
                            match_kind: self.named(kind, es)?,
                            span: es,
                        });
                    }
                    properties.push(TableProperty::Key(elems, ps));
                }
                Rule::actions_prop => {
                    let mut refs = Vec::new();
                    for a in self.kids(k) {
                        refs.push(self.action_ref(a)?);
                    }
                    properties.push(TableProperty::Actions(refs, ps));
                }
                Rule::default_action_prop => {
                    let mut it = self.kids(k);
                    let action = self.action_ref(self.need(&mut it, ps)?)?;
                    properties.push(TableProperty::DefaultAction {
                        action,
                        is_const,
                        span: ps,
                    });
                }
                Rule::entries_prop => {
                    let mut entries = Vec::new();
                    for e in self.kids(k) {
                        entries.push(self.entry(e)?);
                    }
                    properties.push(TableProperty::Entries {
                        entries,
                        is_const,
                        span: ps,
                    });
                }
                Rule::other_prop => {
                    let mut it = self.kids(k);
                    let pname = self.ident(self.need(&mut it, ps)?);
                    let value = self.expr(self.need(&mut it, ps)?)?;
                    properties.push(TableProperty::Other {
                        name: pname,
                        value,
                        is_const,
                        span: ps,
                    });
                }
                _ => {}
            }
        }
        Ok(TableDecl {
            annotations,
            name: self.named(name, span)?,
            properties,
            span,
        })
    }

    fn action_ref(&self, p: P<'_>) -> R<ActionRef> {
        let span = self.span(&p);
        let (annotations, rest) = self.split_annotations(p)?;
        let mut name = None;
        let mut args = None;
        for k in rest {
            match k.as_rule() {
                Rule::prefixed_name => name = Some(self.prefixed_name(k)?),
                Rule::args => args = Some(self.args(k)?),
                _ => {}
            }
        }
        let Some(name) = name else {
            return Err(self.stop(Diagnostic::error(
                "E0099",
                "internal error: action reference without name",
                span,
            )));
        };
        Ok(ActionRef {
            annotations,
            name,
            args,
            span,
        })
    }

    fn entry(&self, p: P<'_>) -> R<TableEntry> {
        let span = self.span(&p);
        let (mut annotations, rest) = self.split_annotations(p)?;
        let mut priority = None;
        let mut keysets = Vec::new();
        let mut action = None;
        for k in rest {
            match k.as_rule() {
                Rule::entry_priority => {
                    let ps = self.span(&k);
                    let mut it = self.kids(k);
                    priority = Some(self.expr(self.need(&mut it, ps)?)?);
                }
                Rule::keyset => keysets = self.keyset(k)?,
                Rule::action_ref => action = Some(self.action_ref(k)?),
                Rule::annotation => annotations.push(self.annotation(k)?),
                _ => {}
            }
        }
        let Some(action) = action else {
            return Err(self.stop(Diagnostic::error(
                "E0099",
                "internal error: entry without action",
                span,
            )));
        };
        Ok(TableEntry {
            annotations,
            priority,
            keysets,
            action,
            span,
        })
    }

    // ------------------------------------------------------------ types

    fn type_ref(&self, p: P<'_>) -> R<TypeRef> {
        let span = self.span(&p);
        self.enter(span)?;
        let r = self.type_ref_inner(p, span);
        self.leave();
        r
    }

    fn type_ref_inner(&self, p: P<'_>, span: Span) -> R<TypeRef> {
        let mut it = self.kids(p);
        let base = self.need(&mut it, span)?;
        let mut ty = self.base_type(base)?;
        for s in it {
            // stack_size
            let ss = self.span(&s);
            let mut si = self.kids(s);
            let size = self.expr(self.need(&mut si, ss)?)?;
            let span = ty.span.to(ss);
            ty = TypeRef {
                kind: TypeRefKind::Stack {
                    elem: Box::new(ty),
                    size: Box::new(size),
                },
                span,
            };
        }
        Ok(ty)
    }

    fn base_type(&self, p: P<'_>) -> R<TypeRef> {
        let span = self.span(&p);
        let rule = p.as_rule();
        let kind = match rule {
            Rule::bit_type | Rule::int_type | Rule::varbit_type => {
                let width = match self.kids(p).next() {
                    Some(w) => Some(Box::new(self.width(w)?)),
                    None => None,
                };
                match (rule, width) {
                    (Rule::bit_type, Some(w)) => TypeRefKind::Bit(w),
                    (Rule::bit_type, None) => TypeRefKind::Bit(Box::new(Expr {
                        kind: ExprKind::Int(IntLit {
                            value: 1,
                            width: None,
                            text: "1".to_owned(),
                            wide: None,
                        }),
                        span,
                    })),
                    (Rule::int_type, Some(w)) => TypeRefKind::Int(w),
                    (Rule::int_type, None) => TypeRefKind::InfInt,
                    (_, Some(w)) => TypeRefKind::Varbit(w),
                    (_, None) => {
                        return Err(self.stop(Diagnostic::error(
                            "E0099",
                            "internal error: varbit without width",
                            span,
                        )))
                    }
                }
            }
            Rule::bool_type => TypeRefKind::Bool,
            Rule::string_type => TypeRefKind::String,
            Rule::void_type => TypeRefKind::Void,
            Rule::error_type => TypeRefKind::Error,
            Rule::match_kind_type => TypeRefKind::MatchKind,
            Rule::dontcare_type => TypeRefKind::DontCare,
            Rule::tuple_type => {
                let mut args = Vec::new();
                if let Some(ta) = self.kids(p).next() {
                    args = self.type_args(ta)?;
                }
                TypeRefKind::Tuple(args)
            }
            Rule::named_type => {
                let mut name = None;
                let mut dot_prefix = false;
                let mut args = Vec::new();
                for k in self.kids(p) {
                    match k.as_rule() {
                        Rule::prefixed_name => {
                            dot_prefix = has(&k, Rule::dot_prefix);
                            name = self
                                .kids(k)
                                .find(|n| n.as_rule() == Rule::name)
                                .map(|n| self.ident(n));
                        }
                        Rule::type_args => args = self.type_args(k)?,
                        _ => {}
                    }
                }
                TypeRefKind::Named {
                    name: self.named(name, span)?,
                    dot_prefix,
                    args,
                }
            }
            _ => {
                return Err(self.stop(Diagnostic::error(
                    "E0099",
                    "internal error: unknown type",
                    span,
                )));
            }
        };
        Ok(TypeRef { kind, span })
    }

    fn type_args(&self, p: P<'_>) -> R<Vec<TypeRef>> {
        let mut out = Vec::new();
        for k in self.kids(p) {
            out.push(self.type_ref(k)?);
        }
        Ok(out)
    }

    fn width(&self, p: P<'_>) -> R<Expr> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let w = self.need(&mut it, span)?;
        match w.as_rule() {
            Rule::number => Ok(self.number(w)),
            Rule::prefixed_name => self.prefixed_name(w),
            _ => self.expr(w),
        }
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

    // ------------------------------------------------------------ expressions

    fn expr(&self, p: P<'_>) -> R<Expr> {
        Ok(self.expr_d(p)?.0)
    }

    /// An expression with the depth of its tree.
    fn expr_d(&self, p: P<'_>) -> R<(Expr, u32)> {
        let span = self.span(&p);
        self.enter(span)?;
        let r = self.expr_d_inner(p, span);
        self.leave();
        r
    }

    fn depth_ok(&self, d: u32, at: Span) -> R<u32> {
        if d > MAX_EXPR_DEPTH {
            Err(self.too_deep("expression", at, MAX_EXPR_DEPTH as usize))
        } else {
            Ok(d)
        }
    }

    fn expr_d_inner(&self, p: P<'_>, span: Span) -> R<(Expr, u32)> {
        let mut it = self.kids(p);
        let bin = self.need(&mut it, span)?;
        let (c, dc) = self.bin_expr(bin)?;
        let Some(a) = it.next() else {
            return Ok((c, dc));
        };
        let (a, da) = self.expr_d(a)?;
        let (b, db) = self.expr_d(self.need(&mut it, span)?)?;
        let d = self.depth_ok(dc.max(da).max(db) + 1, span)?;
        let s = c.span.to(b.span);
        Ok((
            Expr {
                kind: ExprKind::Ternary(Box::new(c), Box::new(a), Box::new(b)),
                span: s,
            },
            d,
        ))
    }

    fn bin_expr(&self, p: P<'_>) -> R<(Expr, u32)> {
        // Bound runs of prefix operators (casts included) before the Pratt
        // parser recurses on them.
        let mut run = 0usize;
        for k in p.clone().into_inner() {
            if matches!(
                k.as_rule(),
                Rule::op_not | Rule::op_bnot | Rule::op_neg | Rule::op_pos | Rule::cast
            ) {
                run += 1;
                if run > MAX_PREFIX_RUN {
                    return Err(self.too_deep(
                        "prefix operators and casts",
                        self.span(&k),
                        MAX_PREFIX_RUN,
                    ));
                }
            } else {
                run = 0;
            }
        }
        PRATT
            .map_primary(|q| self.postfix(q))
            .map_prefix(|op, rhs| {
                let (e, d) = rhs?;
                let ospan = self.span(&op);
                let span = ospan.to(e.span);
                let d = self.depth_ok(d + 1, ospan)?;
                let kind = match op.as_rule() {
                    Rule::op_not => ExprKind::Unary(UnOp::Not, Box::new(e)),
                    Rule::op_bnot => ExprKind::Unary(UnOp::BitNot, Box::new(e)),
                    Rule::op_neg => ExprKind::Unary(UnOp::Neg, Box::new(e)),
                    Rule::op_pos => ExprKind::Unary(UnOp::Plus, Box::new(e)),
                    _ => {
                        let mut it = self.kids(op);
                        let ty = self.type_ref_from_cast(&mut it, ospan)?;
                        ExprKind::Cast(ty, Box::new(e))
                    }
                };
                Ok((Expr { kind, span }, d))
            })
            .map_infix(|lhs, op, rhs| {
                let (l, dl) = lhs?;
                let (r, dr) = rhs?;
                let ospan = self.span(&op);
                let d = self.depth_ok(dl.max(dr) + 1, ospan)?;
                let bop = match op.as_rule() {
                    Rule::op_or => BinOp::Or,
                    Rule::op_and => BinOp::And,
                    Rule::op_eq => BinOp::Eq,
                    Rule::op_ne => BinOp::Ne,
                    Rule::op_lt => BinOp::Lt,
                    Rule::op_gt => BinOp::Gt,
                    Rule::op_le => BinOp::Le,
                    Rule::op_ge => BinOp::Ge,
                    Rule::op_bor => BinOp::BitOr,
                    Rule::op_bxor => BinOp::BitXor,
                    Rule::op_band => BinOp::BitAnd,
                    Rule::op_shl => BinOp::Shl,
                    Rule::op_shr => BinOp::Shr,
                    Rule::op_concat => BinOp::Concat,
                    Rule::op_add => BinOp::Add,
                    Rule::op_sub => BinOp::Sub,
                    Rule::op_satadd => BinOp::SatAdd,
                    Rule::op_satsub => BinOp::SatSub,
                    Rule::op_mul => BinOp::Mul,
                    Rule::op_div => BinOp::Div,
                    _ => BinOp::Mod,
                };
                let span = l.span.to(r.span);
                Ok((
                    Expr {
                        kind: ExprKind::Binary(bop, Box::new(l), Box::new(r)),
                        span,
                    },
                    d,
                ))
            })
            .parse(p.into_inner())
    }

    /// The type of a `cast` pair: a built-in or named base type plus stack sizes.
    fn type_ref_from_cast<'i>(&self, it: &mut impl Iterator<Item = P<'i>>, at: Span) -> R<TypeRef> {
        let base = self.need(it, at)?;
        self.enter(at)?;
        let mut ty = self.base_type(base);
        if let Ok(t) = &mut ty {
            for s in it.by_ref() {
                let ss = self.span(&s);
                let mut si = self.kids(s);
                let size = match si.next() {
                    Some(e) => self.expr(e),
                    None => Err(self.stop(Diagnostic::error(
                        "E0099",
                        "internal error: empty stack size",
                        ss,
                    ))),
                };
                let size = match size {
                    Ok(x) => x,
                    Err(e) => {
                        self.leave();
                        return Err(e);
                    }
                };
                let span = t.span.to(ss);
                let elem = std::mem::replace(
                    t,
                    TypeRef {
                        kind: TypeRefKind::Void,
                        span,
                    },
                );
                *t = TypeRef {
                    kind: TypeRefKind::Stack {
                        elem: Box::new(elem),
                        size: Box::new(size),
                    },
                    span,
                };
            }
        }
        self.leave();
        ty
    }

    /// A `postfix_expr`: primary then `.m`, `[i]`, `[h:l]`, `(args)` left to right.
    fn postfix(&self, p: P<'_>) -> R<(Expr, u32)> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let (mut e, mut d) = self.primary(self.need(&mut it, span)?)?;
        for op in it {
            let ospan = self.span(&op);
            let full = e.span.to(ospan);
            match op.as_rule() {
                Rule::member_op => {
                    let mut mi = self.kids(op);
                    let m = self.ident(self.need(&mut mi, ospan)?);
                    d = self.depth_ok(d + 1, ospan)?;
                    e = Expr {
                        kind: ExprKind::Member(Box::new(e), m),
                        span: full,
                    };
                }
                Rule::bracket_op => {
                    let mut bi = self.kids(op);
                    let (a, da) = self.expr_d(self.need(&mut bi, ospan)?)?;
                    match bi.next() {
                        None => {
                            d = self.depth_ok(d.max(da) + 1, ospan)?;
                            e = Expr {
                                kind: ExprKind::Index(Box::new(e), Box::new(a)),
                                span: full,
                            };
                        }
                        Some(lo) => {
                            let (lo, dl) = self.expr_d(lo)?;
                            d = self.depth_ok(d.max(da).max(dl) + 1, ospan)?;
                            e = Expr {
                                kind: ExprKind::Slice(Box::new(e), Box::new(a), Box::new(lo)),
                                span: full,
                            };
                        }
                    }
                }
                _ => {
                    let mut type_args = Vec::new();
                    let mut args = Vec::new();
                    let mut da = 0;
                    for k in self.kids(op) {
                        match k.as_rule() {
                            Rule::call_type_args => {
                                if let Some(ta) = self.kids(k).next() {
                                    type_args = self.type_args(ta)?;
                                }
                            }
                            _ => {
                                let (a, dd) = self.args_d(k)?;
                                args = a;
                                da = dd;
                            }
                        }
                    }
                    d = self.depth_ok(d.max(da) + 1, ospan)?;
                    e = Expr {
                        kind: ExprKind::Call {
                            callee: Box::new(e),
                            type_args,
                            args,
                        },
                        span: full,
                    };
                }
            }
        }
        Ok((e, d))
    }

    fn args(&self, p: P<'_>) -> R<Vec<Argument>> {
        Ok(self.args_d(p)?.0)
    }

    fn args_d(&self, p: P<'_>) -> R<(Vec<Argument>, u32)> {
        let mut out = Vec::new();
        let mut depth = 0;
        for a in self.kids(p) {
            let span = self.span(&a);
            let parts: Vec<P<'_>> = self.kids(a).collect();
            let (name, e) = match parts.len() {
                2 => {
                    let mut it = parts.into_iter();
                    let n = self.need(&mut it, span)?;
                    (Some(self.ident(n)), self.need(&mut it, span)?)
                }
                _ => {
                    let mut it = parts.into_iter();
                    (None, self.need(&mut it, span)?)
                }
            };
            let (value, d) = self.expr_d(e)?;
            depth = depth.max(d);
            out.push(Argument { name, value, span });
        }
        Ok((out, depth))
    }

    fn prefixed_name(&self, p: P<'_>) -> R<Expr> {
        let span = self.span(&p);
        let dot_prefix = has(&p, Rule::dot_prefix);
        let mut it = self.kids(p).filter(|k| k.as_rule() == Rule::name);
        let name = self.ident(self.need(&mut it, span)?);
        Ok(Expr {
            kind: ExprKind::Name { name, dot_prefix },
            span,
        })
    }

    fn primary(&self, p: P<'_>) -> R<(Expr, u32)> {
        let span = self.span(&p);
        let kind = match p.as_rule() {
            Rule::number => return Ok((self.number(p), 1)),
            Rule::string_lit => ExprKind::Str(unescape(p.as_str())),
            Rule::kw_true => ExprKind::Bool(true),
            Rule::kw_false => ExprKind::Bool(false),
            Rule::dontcare => ExprKind::DontCare,
            Rule::paren_expr => {
                let mut it = self.kids(p);
                return self.expr_d(self.need(&mut it, span)?);
            }
            Rule::struct_init => {
                let mut fields = Vec::new();
                let mut depth = 0;
                for kv in self.kids(p) {
                    let ks = self.span(&kv);
                    let mut it = self.kids(kv);
                    let n = self.ident(self.need(&mut it, ks)?);
                    let (e, d) = self.expr_d(self.need(&mut it, ks)?)?;
                    depth = depth.max(d);
                    fields.push((n, e));
                }
                let d = self.depth_ok(depth + 1, span)?;
                return Ok((
                    Expr {
                        kind: ExprKind::StructInit(fields),
                        span,
                    },
                    d,
                ));
            }
            Rule::list_expr => {
                let mut items = Vec::new();
                let mut depth = 0;
                for e in self.kids(p) {
                    let (e, d) = self.expr_d(e)?;
                    depth = depth.max(d);
                    items.push(e);
                }
                let d = self.depth_ok(depth + 1, span)?;
                return Ok((
                    Expr {
                        kind: ExprKind::List(items),
                        span,
                    },
                    d,
                ));
            }
            Rule::error_name => ExprKind::Name {
                name: Ident {
                    name: "error".to_owned(),
                    span,
                },
                dot_prefix: false,
            },
            Rule::prefixed_name => return Ok((self.prefixed_name(p)?, 1)),
            _ => {
                return Err(self.stop(Diagnostic::error(
                    "E0099",
                    "internal error: unknown expression",
                    span,
                )));
            }
        };
        Ok((Expr { kind, span }, 1))
    }

    /// An integer literal; an invalid one is reported and yields 0.
    fn number(&self, p: P<'_>) -> Expr {
        let span = self.span(&p);
        let text = p.as_str();
        let lit = match parse_int(text) {
            Ok(l) => l,
            Err((msg, hint)) => {
                let mut d = Diagnostic::error(
                    "E0002",
                    format!("invalid integer literal `{text}`: {msg}"),
                    span,
                );
                if let Some(h) = hint {
                    d = d.with_hint(h);
                }
                self.push(d);
                IntLit {
                    value: 0,
                    width: None,
                    text: text.to_owned(),
                    wide: None,
                }
            }
        };
        Expr {
            kind: ExprKind::Int(lit),
            span,
        }
    }

    // ------------------------------------------------------------ errors

    fn syntax_error(&self, e: pest::error::Error<Rule>) -> Diagnostic {
        let pos = match e.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((s, _)) => s,
        };
        let pos = pos.min(self.text.len());
        let (found, tok_len) = describe_found(self.text, pos);
        let at_end = self.text[pos..].trim().is_empty();
        let span = if at_end {
            // Point at the last character of the program, not past it.
            let last = self.text[..pos].trim_end().len();
            let first = self.text[..last]
                .chars()
                .next_back()
                .map_or(last, |c| last - c.len_utf8());
            self.map.span(first, last)
        } else {
            self.map.span(pos, pos + tok_len)
        };
        let found = if at_end {
            "end of input".to_owned()
        } else {
            found
        };
        match e.variant {
            ErrorVariant::CustomError { message } => {
                if message.contains("limit") {
                    Diagnostic::error("E0003", "program nested too deeply to parse", span)
                        .with_label("the parser's nesting limit is exceeded here")
                        .with_hint("split the construct into smaller parts")
                } else {
                    Diagnostic::error("E0001", format!("syntax error: {message}"), span)
                }
            }
            ErrorVariant::ParsingError { positives, .. } => {
                let mut items: Vec<(u8, &'static str)> =
                    positives.iter().filter_map(|r| describe_rule(*r)).collect();
                items.sort();
                items.dedup();
                let has_specific = items.iter().any(|(c, _)| *c < 2);
                if has_specific {
                    items.retain(|(c, _)| *c < 2);
                }
                let names: Vec<&str> = items.iter().map(|(_, n)| *n).collect();
                let expected = join_or(&names);
                let msg = if expected.is_empty() {
                    format!("unexpected {found}")
                } else {
                    format!("expected {expected}")
                };
                let mut d =
                    Diagnostic::error("E0001", msg, span).with_label(format!("unexpected {found}"));
                let word = &self.text[pos..pos + tok_len];
                if names.contains(&"a name") && is_reserved(word) {
                    d = d.with_note(format!(
                        "`{word}` is a reserved keyword and cannot be used as a name"
                    ));
                }
                if names == ["`;`"] {
                    d = d.with_hint("a `;` is probably missing at the end of the previous declaration or statement");
                }
                if names.contains(&"`}`") {
                    if let Some(open) = unclosed_brace(&self.text[..pos]) {
                        d = d.with_secondary(
                            self.map.span(open, open + 1),
                            "this `{` is not closed",
                        );
                    }
                }
                if at_end {
                    d.labels[0].message = "the program ends here".to_owned();
                }
                d
            }
        }
    }
}

/// Offset of the innermost `{` in `text` that is not closed, skipping
/// comments and strings.
fn unclosed_brace(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut stack = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 4 + p);
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'{' => {
                stack.push(i);
                i += 1;
            }
            b'}' => {
                stack.pop();
                i += 1;
            }
            _ => i += 1,
        }
    }
    stack.pop()
}

/// Is `w` a reserved word of the language?
fn is_reserved(w: &str) -> bool {
    matches!(
        w,
        "abstract"
            | "action"
            | "bit"
            | "bool"
            | "break"
            | "const"
            | "continue"
            | "control"
            | "default"
            | "else"
            | "enum"
            | "error"
            | "exit"
            | "extern"
            | "false"
            | "for"
            | "header_union"
            | "header"
            | "if"
            | "inout"
            | "int"
            | "in"
            | "match_kind"
            | "out"
            | "package"
            | "parser"
            | "return"
            | "select"
            | "string"
            | "struct"
            | "switch"
            | "table"
            | "this"
            | "transition"
            | "true"
            | "tuple"
            | "typedef"
            | "value_set"
            | "varbit"
            | "void"
    )
}

/// "a, b or c".
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [a] => (*a).to_owned(),
        [rest @ .., last] => {
            let shown: Vec<&str> = rest.iter().take(7).copied().collect();
            let more = if rest.len() > 7 { ", ..." } else { "" };
            format!("{}{more} or {last}", shown.join(", "))
        }
    }
}

/// What is at `pos`, for "unexpected ..." messages, and its length in bytes.
fn describe_found(text: &str, pos: usize) -> (String, usize) {
    let rest = &text[pos..];
    let Some(c) = rest.chars().next() else {
        return ("end of input".to_owned(), 0);
    };
    if c.is_ascii_alphanumeric() || c == '_' {
        let n = rest
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .unwrap_or(rest.len());
        let n = n.min(64);
        return (format!("`{}`", &rest[..n]), n);
    }
    if c == '"' {
        return ("a string".to_owned(), 1);
    }
    if c.is_control() || c == '\u{FFFD}' {
        return (format!("character U+{:04X}", c as u32), c.len_utf8());
    }
    (format!("`{c}`"), c.len_utf8())
}

/// Human name of a grammar rule, with a class: 0 punctuation/keywords,
/// 1 constructs, 2 operators and optional continuations (dropped when a
/// more specific expectation exists).
fn describe_rule(r: Rule) -> Option<(u8, &'static str)> {
    use Rule::*;
    Some(match r {
        p_semi => (0, "`;`"),
        p_comma => (0, "`,`"),
        p_colon => (0, "`:`"),
        p_lbrace => (0, "`{`"),
        p_rbrace => (0, "`}`"),
        p_lparen => (0, "`(`"),
        p_rparen => (0, "`)`"),
        p_lbracket => (2, "`[`"),
        p_rbracket => (0, "`]`"),
        p_langle => (2, "`<`"),
        p_rangle => (0, "`>`"),
        p_assign => (0, "`=`"),
        kw_apply => (0, "`apply`"),
        kw_transition | transition => (0, "`transition`"),
        kw_state | parser_state => (1, "a parser state"),
        kw_else => (2, "`else`"),
        kw_default => (0, "`default`"),
        kw_const => (2, "`const`"),
        name | ident | prefixed_name => (1, "a name"),
        member_name => (1, "a member name"),
        number => (1, "an integer"),
        string_lit => (1, "a string"),
        expr | bin_expr | postfix_expr | paren_expr | list_expr | struct_init | error_name
        | kw_true | kw_false | dontcare | op_not | op_bnot | op_neg | op_pos => {
            (1, "an expression")
        }
        expr_list => (1, "an expression"),
        type_ref | named_type | bit_type | int_type | varbit_type | bool_type | string_type
        | void_type | error_type | match_kind_type | dontcare_type | tuple_type => (1, "a type"),
        width => (1, "a width"),
        decl => (1, "a declaration"),
        stmt | block => (1, "a statement"),
        parser_local => (1, "a parser local declaration"),
        control_local => (1, "a control local declaration"),
        keyset | simple_keyset | tuple_keyset | select_case => (1, "a keyset"),
        key_prop | actions_prop | default_action_prop | entries_prop | other_prop => {
            (1, "a table property")
        }
        key_element => (1, "a key element (`expression : match_kind;`)"),
        action_ref => (1, "an action"),
        entry | entry_priority => (1, "a table entry"),
        param | params | direction => (1, "a parameter"),
        ctor_params => (2, "constructor parameters"),
        method_decl => (1, "a method declaration"),
        field => (1, "a field"),
        enum_member => (1, "an enum member"),
        name_list => (1, "a name"),
        switch_case => (1, "a switch case"),
        args | argument => (1, "an argument"),
        parser_body | control_body => (1, "a body `{ ... }`"),
        EOI => (1, "end of input"),
        _ => (2, "an operator"),
    })
}

/// The contents of a string literal (with quotes) with `\"`, `\\`, `\n`,
/// `\t` resolved; other escapes are kept as written.
fn unescape(lit: &str) -> String {
    let inner = lit
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(lit);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Parse an integer literal as written (`5`, `0x1F`, `8w5`, `16w0x800`,
/// `8s5`, `0b1010`, `0o17`, `0d99`, `1_000`). Errors: (message, hint).
pub(crate) fn parse_int(text: &str) -> Result<IntLit, (String, Option<String>)> {
    let b = text.as_bytes();
    let digits = b
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(b.len());
    let mut width = None;
    let mut rest = text;
    if digits > 0 && digits < b.len() && (b[digits] == b'w' || b[digits] == b's') {
        let w: u32 = text[..digits]
            .parse()
            .map_err(|_| (format!("width `{}` is too large", &text[..digits]), None))?;
        if w == 0 {
            return Err((
                "a width must be at least 1".to_owned(),
                Some("write e.g. `8w5` for an 8-bit value".to_owned()),
            ));
        }
        width = Some((b[digits] == b's', w));
        rest = &text[digits + 1..];
        if rest.is_empty() {
            return Err((
                "a value must follow the width".to_owned(),
                Some(format!("write e.g. `{}5`", &text[..=digits])),
            ));
        }
    }
    let rb = rest.as_bytes();
    let (radix, body, prefix) = if rb.len() >= 2 && rb[0] == b'0' {
        match rb[1] {
            b'x' | b'X' => (16, &rest[2..], &rest[..2]),
            b'o' | b'O' => (8, &rest[2..], &rest[..2]),
            b'b' | b'B' => (2, &rest[2..], &rest[..2]),
            b'd' | b'D' => (10, &rest[2..], &rest[..2]),
            _ => (10, rest, ""),
        }
    } else {
        (10, rest, "")
    };
    let kind = match radix {
        16 => "hexadecimal",
        8 => "octal",
        2 => "binary",
        _ => "decimal",
    };
    // 64-bit limbs, least significant first (a literal with a width may
    // exceed 128 bits; the checker bounds it by its width).
    let mut limbs: Vec<u64> = vec![0];
    let mut any = false;
    for c in body.chars() {
        if c == '_' {
            continue;
        }
        let Some(v) = c.to_digit(radix) else {
            return Err((format!("`{c}` is not a {kind} digit"), None));
        };
        any = true;
        let mut carry = u128::from(v);
        for l in limbs.iter_mut() {
            let x = u128::from(*l) * u128::from(radix) + carry;
            *l = x as u64;
            carry = x >> 64;
        }
        if carry != 0 {
            limbs.push(carry as u64);
        }
        if limbs.len() * 64 > 4096 + 64 {
            return Err(("the value does not fit in 4096 bits".to_owned(), None));
        }
    }
    let wide128: Vec<u128> = limbs
        .chunks(2)
        .map(|c| u128::from(c[0]) | c.get(1).map_or(0, |h| u128::from(*h) << 64))
        .collect();
    let value = wide128[0];
    let wide = if wide128[1..].iter().any(|x| *x != 0) {
        if width.is_none() {
            return Err((
                "the value does not fit in 128 bits".to_owned(),
                Some("give a wider literal its width, e.g. `200w0x...`".to_owned()),
            ));
        }
        Some(wide128)
    } else {
        None
    };
    if !any {
        return Err((
            if prefix.is_empty() {
                "no digits".to_owned()
            } else {
                format!("no digits after `{prefix}`")
            },
            None,
        ));
    }
    Ok(IntLit {
        value,
        width,
        text: text.to_owned(),
        wide,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_literals() {
        let v = |t: &str| parse_int(t).map(|l| (l.value, l.width));
        assert_eq!(v("5"), Ok((5, None)));
        assert_eq!(v("0x1F"), Ok((31, None)));
        assert_eq!(v("0o17"), Ok((15, None)));
        assert_eq!(v("0b1010"), Ok((10, None)));
        assert_eq!(v("0d99"), Ok((99, None)));
        assert_eq!(v("1_000"), Ok((1000, None)));
        assert_eq!(v("8w5"), Ok((5, Some((false, 8)))));
        assert_eq!(v("8s5"), Ok((5, Some((true, 8)))));
        assert_eq!(v("16w0x800"), Ok((0x800, Some((false, 16)))));
        assert_eq!(v("32w0xFFFF_FFFF"), Ok((0xFFFF_FFFF, Some((false, 32)))));
        assert!(v("8w").is_err());
        assert!(v("0x").is_err());
        assert!(v("0w5").is_err());
        assert!(v("12abc").is_err());
        assert!(v("0b102").is_err());
        assert!(v("99999999999999999999999999999999999999999999").is_err());
        assert!(v("99999999999w1").is_err());
    }

    #[test]
    fn unescaping() {
        assert_eq!(unescape(r#""a\"b\\c""#), "a\"b\\c");
        assert_eq!(unescape(r#""x\q""#), "x\\q");
    }
}
