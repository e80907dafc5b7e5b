//! Types: resolution of written types, type declarations, unification of
//! type parameters, and implicit conversions (only `int` literals convert).

use super::consts;
use super::{Checker, Sym};
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, Expr, ExprKind, Type, Value};

/// The widest header field (`bit<N>`, `int<N>`, `varbit<N>`): held in parts
/// of at most 128 bits, extracted, emitted, copied and compared whole.
pub const WIDE_MAX: u16 = 4096;

/// A substitution of type parameters.
pub(crate) type Subst = Vec<(String, Type)>;

/// Apply a substitution.
pub(crate) fn subst_apply(t: &Type, s: &Subst) -> Type {
    match t {
        Type::Var(v) => s
            .iter()
            .find(|(n, _)| n == v)
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| t.clone()),
        Type::List(ts) => Type::List(ts.iter().map(|t| subst_apply(t, s)).collect()),
        Type::Extern(h, ts) => Type::Extern(*h, ts.iter().map(|t| subst_apply(t, s)).collect()),
        Type::BlockType(h, ts) => {
            Type::BlockType(*h, ts.iter().map(|t| subst_apply(t, s)).collect())
        }
        _ => t.clone(),
    }
}

/// Unify `pattern` (may contain `Var`s) with `actual`, extending `s`.
pub(crate) fn unify(pattern: &Type, actual: &Type, s: &mut Subst) -> bool {
    match pattern {
        Type::Var(v) => {
            if let Some((_, bound)) = s.iter().find(|(n, _)| n == v) {
                let bound = bound.clone();
                if bound.has_vars() {
                    return unify(&bound, actual, s);
                }
                return bound == *actual;
            }
            if let Type::Var(a) = actual {
                if a == v {
                    return true;
                }
            }
            s.push((v.clone(), actual.clone()));
            true
        }
        Type::List(ps) => match actual {
            Type::List(as_) => {
                ps.len() == as_.len() && ps.iter().zip(as_).all(|(p, a)| unify(p, a, s))
            }
            _ => false,
        },
        Type::Extern(h, ps) => match actual {
            Type::Extern(h2, as_) => {
                h == h2 && ps.len() == as_.len() && ps.iter().zip(as_).all(|(p, a)| unify(p, a, s))
            }
            _ => false,
        },
        _ => pattern == actual,
    }
}

impl Checker<'_> {
    /// Resolve a written type. `tparams` are the type parameters in scope.
    pub(super) fn resolve_type(&mut self, t: &ast::TypeRef, tparams: &[String]) -> Option<Type> {
        use ast::TypeRefKind as K;
        match &t.kind {
            K::Bool => Some(Type::Bool),
            K::InfInt => Some(Type::InfInt),
            K::Error => Some(Type::Error),
            K::MatchKind => Some(Type::MatchKind),
            K::String => Some(Type::Str),
            K::Void => Some(Type::Void),
            K::DontCare => Some(Type::DontCare),
            K::Bit(w) => self.width(w, t.span, "bit").map(Type::Bit),
            K::Int(w) => self.width(w, t.span, "int").map(Type::Int),
            K::Varbit(_) => {
                let d = Diagnostic::error(
                    codes::VARBIT,
                    "`varbit` is only supported as the type of a header field",
                    t.span,
                )
                .with_label("variable-size value")
                .with_hint("declare it as the last field of a header and extract it with a length");
                self.emit(d);
                None
            }
            K::Named {
                name,
                dot_prefix,
                args,
            } => {
                if !dot_prefix && args.is_empty() && tparams.contains(&name.name) {
                    return Some(Type::Var(name.name.clone()));
                }
                if self.lookup(&name.name, *dot_prefix).is_none() {
                    if let Some(d) = self.deferred_typedefs.get(&name.name).cloned() {
                        return self.resolve_type(&d, tparams);
                    }
                }
                let sym = self.resolve(name, *dot_prefix)?;
                let mut targs = Vec::new();
                for a in args {
                    targs.push(self.resolve_type(a, tparams)?);
                }
                match sym {
                    Sym::Type(ty) => {
                        if !targs.is_empty() {
                            self.err(
                                codes::TYPE_INFERENCE,
                                format!("type `{}` takes no type arguments", name.name),
                                t.span,
                            );
                            return None;
                        }
                        Some(ty)
                    }
                    Sym::ExternObject(h) => {
                        let params = self.m.extern_objects[h].type_params.clone();
                        if targs.len() > params.len() {
                            self.err(
                                codes::TYPE_INFERENCE,
                                format!(
                                    "`{}` takes {} type argument(s), found {}",
                                    name.name,
                                    params.len(),
                                    targs.len()
                                ),
                                t.span,
                            );
                            return None;
                        }
                        // Missing type arguments stay parameters, inferred per call.
                        for p in params.iter().skip(targs.len()) {
                            targs.push(Type::Var(p.clone()));
                        }
                        Some(Type::Extern(h, targs))
                    }
                    Sym::BlockType(h) => {
                        let n = self.m.block_types[h].type_params.len();
                        if targs.len() != n && !targs.is_empty() {
                            self.err(
                                codes::TYPE_INFERENCE,
                                format!(
                                    "`{}` takes {n} type argument(s), found {}",
                                    name.name,
                                    targs.len()
                                ),
                                t.span,
                            );
                            return None;
                        }
                        if targs.is_empty() {
                            targs = self.m.block_types[h]
                                .type_params
                                .iter()
                                .map(|p| Type::Var(p.clone()))
                                .collect();
                        }
                        Some(Type::BlockType(h, targs))
                    }
                    Sym::Parser(h) => Some(Type::Parser(h)),
                    Sym::Control(h) => Some(Type::Control(h)),
                    other => {
                        let d = Diagnostic::error(
                            codes::WRONG_KIND,
                            format!("`{}` is {}, not a type", name.name, other.describe()),
                            name.span,
                        )
                        .with_label("expected a type");
                        self.emit(d);
                        None
                    }
                }
            }
            K::Stack { elem, size } => {
                let et = self.resolve_type(elem, tparams)?;
                let n = self.const_int(size, "a header stack size")?;
                // A stack of header_unions: indexed by constants only.
                let et = match et {
                    Type::Struct(s) if self.m.structs[s].is_union => Type::Header(s),
                    t => t,
                };
                let Type::Header(h) = et else {
                    let d = Diagnostic::error(
                        codes::TYPE_NOT_ALLOWED,
                        format!(
                            "header stacks must hold headers, not `{}`",
                            self.m.type_name(&et)
                        ),
                        elem.span,
                    );
                    self.emit(d);
                    return None;
                };
                if !(1..=256).contains(&n) {
                    self.err(
                        codes::WIDTH_RANGE,
                        format!("header stack size {n} is outside 1..=256"),
                        size.span,
                    );
                    return None;
                }
                Some(Type::Stack(h, n as u32))
            }
            K::Tuple(ts) => {
                let mut out = Vec::new();
                for t in ts {
                    out.push(self.resolve_type(t, tparams)?);
                }
                Some(Type::List(out))
            }
        }
    }

    /// Evaluate a width expression and check it against the widest value
    /// ([`WIDE_MAX`]); a value over 128 bits is held in 128-bit parts.
    fn width(&mut self, e: &ast::Expr, span: Span, what: &str) -> Option<u16> {
        let w = self.const_int(e, "a width")?;
        if w < 1 || w > i128::from(WIDE_MAX) {
            let d = Diagnostic::error(
                codes::WIDTH_RANGE,
                format!("`{what}<{w}>`: widths must be between 1 and {WIDE_MAX} bits"),
                span,
            )
            .with_label(format!("{w} bits"))
            .with_note(format!(
                "this target holds a value of up to {WIDE_MAX} bits (over 128 bits in \
                 128-bit parts)"
            ))
            .with_hint(format!(
                "split the value into several fields of at most {WIDE_MAX} bits"
            ));
            self.emit(d);
            return None;
        }
        Some(w as u16)
    }

    /// `const T x = e;` → its type and folded value.
    pub(super) fn const_decl(&mut self, c: &ast::ConstDecl) -> Option<(Type, Value)> {
        let ty = self.resolve_type(&c.ty, &[])?;
        let e = self.expr_as(&c.value, &ty)?;
        match e.kind {
            ExprKind::Const(v) => Some((ty, v)),
            _ => {
                let d = Diagnostic::error(
                    codes::NOT_CONSTANT,
                    format!(
                        "the value of constant `{}` is not a compile-time constant",
                        c.name.name
                    ),
                    c.value.span,
                )
                .with_label("computed at run time");
                self.emit(d);
                None
            }
        }
    }

    /// Whether a type may be a header field.
    fn header_field_ok(&self, t: &Type) -> bool {
        match t {
            Type::Bit(_) | Type::Int(_) | Type::Bool => true,
            // A struct of header-field types: its fields in order on the wire.
            Type::Struct(s) => {
                let def = &self.m.structs[*s];
                !def.is_union
                    && def
                        .fields
                        .iter()
                        .all(|f| !f.varbit && self.header_field_ok(&f.ty))
            }
            Type::Enum(e) => self.m.enums[*e].underlying.is_some(),
            Type::NewType(n) => self.header_field_ok(&self.m.newtypes[*n].underlying),
            _ => false,
        }
    }

    /// Whether a type may be a struct field or a variable.
    pub(super) fn data_type_ok(&self, t: &Type) -> bool {
        matches!(
            t,
            Type::Bit(_)
                | Type::Int(_)
                | Type::Bool
                | Type::Error
                | Type::Enum(_)
                | Type::NewType(_)
                | Type::Header(_)
                | Type::Struct(_)
                | Type::Stack(..)
        )
    }

    /// The type (`bit<N>`, N the maximum) of header field `f` declared
    /// `varbit<N>`: one per header, the last field, N in 1..=128.
    fn varbit_width(
        &mut self,
        w: &ast::Expr,
        last: bool,
        before: usize,
        f: &ast::StructField,
    ) -> Option<Type> {
        let n = self.const_int(w, "a varbit width")?;
        let layout = "put the variable part in a header of its own, as its only or last field";
        let why = if before > 0 {
            Some(("a header may have only one varbit field", layout))
        } else if !last {
            Some((
                "a varbit field must be the last field of this target's headers",
                layout,
            ))
        } else if !(1..=i128::from(WIDE_MAX)).contains(&n) {
            Some((
                "varbit widths must be between 1 and 4096 bits",
                "parse the options with fixed-size headers selected on their length, or skip \
                 them with `packet.advance(bits)`",
            ))
        } else {
            None
        };
        if let Some((why, hint)) = why {
            let d = Diagnostic::error(codes::VARBIT, why, f.ty.span).with_hint(hint);
            self.emit(d);
            return None;
        }
        Some(Type::Bit(n as u16))
    }

    /// Whether `t` is a stack of header_unions.
    pub(super) fn is_union_stack(&self, t: &Type) -> bool {
        matches!(t, Type::Stack(h, _) if self.m.structs[*h].is_union)
    }

    /// The type of an element of a stack of `h`: a header, or a
    /// header_union (a struct).
    pub(super) fn stack_elem(&self, h: ir::Handle<ir::StructDef>) -> Type {
        if self.m.structs[h].is_union {
            Type::Struct(h)
        } else {
            Type::Header(h)
        }
    }

    /// Report an operation that stacks of header_unions do not support.
    pub(super) fn union_stack_unsupported(&mut self, what: &str, span: Span) {
        let d = Diagnostic::error(
            codes::HEADER_UNION,
            format!("{what} of a stack of header_unions is not supported by this compiler"),
            span,
        )
        .with_hint("index the stack with constants: `u[0].member`");
        self.emit(d);
    }

    /// A `header_union`: a struct of headers at most one of which is valid.
    pub(super) fn union_decl(&mut self, s: &ast::StructDecl) {
        let Some(ty) = self.struct_decl(s, false) else {
            return;
        };
        let Type::Struct(h) = ty else {
            return;
        };
        let fields = self.m.structs[h].fields.clone();
        for (f, af) in fields.iter().zip(&s.fields) {
            if !matches!(f.ty, Type::Header(_)) {
                let d = Diagnostic::error(
                    codes::TYPE_NOT_ALLOWED,
                    format!(
                        "a header_union member must be a header, not `{}`",
                        self.m.type_name(&f.ty)
                    ),
                    af.ty.span,
                )
                .with_hint("declare the member's type with `header`");
                self.emit(d);
            }
        }
        self.m.structs[h].is_union = true;
    }

    /// Declare a header or struct; its type (`None`: not declared).
    pub(super) fn struct_decl(&mut self, s: &ast::StructDecl, is_header: bool) -> Option<Type> {
        if !s.type_params.is_empty() {
            self.err(
                codes::GENERIC_DECL,
                format!(
                    "generic {} `{}` is not supported",
                    kind_word(is_header),
                    s.name.name
                ),
                s.name.span,
            );
            return None;
        }
        let mut fields: Vec<ir::FieldDef> = Vec::new();
        let mut ok = true;
        let mut varbits = 0;
        for (k, f) in s.fields.iter().enumerate() {
            let varbit = match &f.ty.kind {
                ast::TypeRefKind::Varbit(w) if is_header => Some(w),
                _ => None,
            };
            let resolved = match varbit {
                Some(w) => self.varbit_width(w, k + 1 == s.fields.len(), varbits, f),
                None => self.resolve_type(&f.ty, &[]),
            };
            let Some(ty) = resolved else {
                ok = false;
                continue;
            };
            if varbit.is_some() {
                varbits += 1;
            }
            if fields.iter().any(|x| x.name == f.name.name) {
                self.err(
                    codes::DUPLICATE,
                    format!("field `{}` is declared twice", f.name.name),
                    f.name.span,
                );
                ok = false;
                continue;
            }
            let allowed = if is_header {
                self.header_field_ok(&ty)
            } else {
                self.data_type_ok(&ty)
            };
            if !allowed {
                let d = Diagnostic::error(
                    codes::TYPE_NOT_ALLOWED,
                    format!(
                        "a {} field cannot have type `{}`",
                        kind_word(is_header),
                        self.m.type_name(&ty)
                    ),
                    f.ty.span,
                )
                .with_hint(if is_header {
                    "header fields are bit<N>, int<N>, bool, serializable enums or structs of them"
                } else {
                    "struct fields are values: bit<N>, int<N>, bool, error, enums, headers, \
                     structs or header stacks"
                });
                self.emit(d);
                ok = false;
                continue;
            }
            fields.push(ir::FieldDef {
                name: f.name.name.clone(),
                ty,
                field_lists: Self::annotation_ints(&f.annotations, "field_list"),
                varbit: varbit.is_some(),
            });
        }
        if is_header {
            let total: u32 = fields
                .iter()
                .filter_map(|f| self.m.scalar_width(&f.ty))
                .map(u32::from)
                .sum();
            if total % 8 != 0 && ok {
                let d = Diagnostic::warning(
                    codes::TYPE_NOT_ALLOWED,
                    format!(
                        "header `{}` is {total} bits, not a whole number of bytes",
                        s.name.name
                    ),
                    s.name.span,
                )
                .with_note("extract and emit work on bits, but most targets expect whole bytes");
                self.emit(d);
            }
        }
        // Declared even with bad fields (already reported), so uses do not cascade.
        let bundled = self.is_bundled(s.span);
        let h = self.m.structs.append(ir::StructDef {
            name: s.name.name.clone(),
            is_header,
            is_union: false,
            fields,
            controller_header: if is_header {
                Self::annotation_str(&s.annotations, "controller_header")
            } else {
                None
            },
            bundled,
            span: s.span,
        });
        let ty = if is_header {
            Type::Header(h)
        } else {
            Type::Struct(h)
        };
        self.declare(&s.name, Sym::Type(ty.clone()));
        Some(ty)
    }

    pub(super) fn typedef_decl(&mut self, t: &ast::TypedefDecl) {
        self.check_p4runtime_translation(&t.annotations);
        if !t.is_new_type && has_varbit(&t.ty) {
            self.deferred_typedefs
                .insert(t.name.name.clone(), t.ty.clone());
            return;
        }
        let Some(ty) = self.resolve_type(&t.ty, &[]) else {
            return;
        };
        if t.is_new_type {
            if self.m.scalar_width(&ty).is_none() {
                let d = Diagnostic::error(
                    codes::TYPE_NOT_ALLOWED,
                    format!(
                        "`type` needs a bit<N>, int<N> or bool representation, found `{}`",
                        self.m.type_name(&ty)
                    ),
                    t.ty.span,
                );
                self.emit(d);
                return;
            }
            let h = self.m.newtypes.append(ir::NewTypeDef {
                name: t.name.name.clone(),
                underlying: ty,
            });
            self.declare(&t.name, Sym::Type(Type::NewType(h)));
        } else {
            self.declare(&t.name, Sym::Type(ty));
        }
    }

    pub(super) fn enum_decl(&mut self, e: &ast::EnumDecl) {
        let underlying = match &e.underlying {
            Some(t) => {
                let ty = self.resolve_type(t, &[]);
                match ty {
                    Some(ty @ (Type::Bit(_) | Type::Int(_))) => Some(ty),
                    Some(other) => {
                        let d = Diagnostic::error(
                            codes::TYPE_NOT_ALLOWED,
                            format!(
                                "a serializable enum needs a bit<N> or int<N> type, found `{}`",
                                self.m.type_name(&other)
                            ),
                            t.span,
                        );
                        self.emit(d);
                        return;
                    }
                    None => return,
                }
            }
            None => None,
        };
        let mut members: Vec<(String, u128)> = Vec::new();
        for (i, m) in e.members.iter().enumerate() {
            if members.iter().any(|(n, _)| *n == m.name.name) {
                self.err(
                    codes::DUPLICATE,
                    format!("enum member `{}` is declared twice", m.name.name),
                    m.name.span,
                );
                continue;
            }
            let value = match (&underlying, &m.value) {
                (Some(u), Some(v)) => {
                    let Some(x) = self.expr_as(v, u) else {
                        continue;
                    };
                    match x.kind {
                        ExprKind::Const(Value::Bits(b)) => b,
                        _ => {
                            self.err(
                                codes::NOT_CONSTANT,
                                "enum member values must be compile-time constants",
                                v.span,
                            );
                            continue;
                        }
                    }
                }
                (Some(_), None) => {
                    self.err(
                        codes::INITIALIZER,
                        format!(
                            "member `{}` of serializable enum `{}` needs a value",
                            m.name.name, e.name.name
                        ),
                        m.name.span,
                    );
                    continue;
                }
                (None, Some(v)) => {
                    self.err(
                        codes::INITIALIZER,
                        "only serializable enums (`enum bit<N> E`) give members values",
                        v.span,
                    );
                    continue;
                }
                (None, None) => i as u128,
            };
            members.push((m.name.name.clone(), value));
        }
        let bundled = self.is_bundled(e.span);
        let h = self.m.enums.append(ir::EnumDef {
            name: e.name.name.clone(),
            underlying,
            members,
            bundled,
        });
        self.declare(&e.name, Sym::Type(Type::Enum(h)));
    }

    /// Parameters of a signature.
    pub(super) fn param_defs(
        &mut self,
        params: &[ast::Param],
        tparams: &[String],
    ) -> Option<Vec<ir::ParamDef>> {
        let mut out = Vec::new();
        let mut ok = true;
        for p in params {
            match self.resolve_type(&p.ty, tparams) {
                Some(ty) => out.push(ir::ParamDef {
                    name: p.name.name.clone(),
                    direction: p.direction,
                    ty,
                    has_default: p.default.is_some(),
                }),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn signature(
        &mut self,
        f: &ast::FunctionProto,
        outer: &[String],
        ctor_of: Option<Type>,
    ) -> Option<ir::Signature> {
        let mut tparams: Vec<String> = outer.to_vec();
        tparams.extend(f.type_params.iter().map(|t| t.name.clone()));
        let params = self.param_defs(&f.params, &tparams)?;
        let ret = match (&f.ret, ctor_of) {
            (Some(r), _) => self.resolve_type(r, &tparams)?,
            (None, Some(t)) => t,
            (None, None) => Type::Void,
        };
        Some(ir::Signature {
            name: f.name.name.clone(),
            type_params: f.type_params.iter().map(|t| t.name.clone()).collect(),
            params,
            ret,
            span: f.span,
        })
    }

    pub(super) fn extern_fn_decl(&mut self, f: &ast::FunctionProto) {
        let Some(sig) = self.signature(f, &[], None) else {
            return;
        };
        let arity = sig.params.len();
        let bundled = self.is_bundled(f.span);
        let h = self.m.extern_fns.append(ir::ExternFnDef { sig, bundled });
        // Overloads by arity share one symbol.
        let existing = self
            .top
            .get(&f.name.name)
            .filter(|_| self.scopes.is_empty())
            .map(|e| e.sym.clone());
        if let Some(Sym::ExternFns(mut list)) = existing {
            if list
                .iter()
                .any(|o| self.m.extern_fns[*o].sig.params.len() == arity)
            {
                self.err(
                    codes::DUPLICATE,
                    format!(
                        "extern function `{}` with {arity} parameter(s) is declared twice",
                        f.name.name
                    ),
                    f.name.span,
                );
                return;
            }
            list.push(h);
            if let Some(e) = self.top.get_mut(&f.name.name) {
                e.sym = Sym::ExternFns(list);
            }
            return;
        }
        self.declare(&f.name, Sym::ExternFns(vec![h]));
    }

    pub(super) fn extern_object_decl(&mut self, o: &ast::ExternObjectDecl) {
        let tparams: Vec<String> = o.type_params.iter().map(|t| t.name.clone()).collect();
        let bundled = self.is_bundled(o.span);
        // Declare first so that methods may mention the type itself.
        let h = self.m.extern_objects.append(ir::ExternObjectDef {
            name: o.name.name.clone(),
            type_params: tparams.clone(),
            ctors: Vec::new(),
            methods: Vec::new(),
            bundled,
        });
        self.declare(&o.name, Sym::ExternObject(h));
        let self_ty = Type::Extern(h, tparams.iter().map(|p| Type::Var(p.clone())).collect());
        let mut ctors = Vec::new();
        let mut methods = Vec::new();
        for m in &o.methods {
            let is_ctor = m.ret.is_none() && m.name.name == o.name.name;
            if m.ret.is_none() && !is_ctor {
                self.err(
                    codes::WRONG_KIND,
                    format!(
                        "method `{}` of extern `{}` needs a return type",
                        m.name.name, o.name.name
                    ),
                    m.name.span,
                );
                continue;
            }
            if let Some(sig) = self.signature(m, &tparams, is_ctor.then(|| self_ty.clone())) {
                if is_ctor {
                    ctors.push(sig);
                } else {
                    methods.push(sig);
                }
            }
        }
        let def = &mut self.m.extern_objects[h];
        def.ctors = ctors;
        def.methods = methods;
    }

    pub(super) fn block_type_decl(&mut self, b: &ast::BlockTypeDecl, kind: ir::BlockKind) {
        let tparams: Vec<String> = b.type_params.iter().map(|t| t.name.clone()).collect();
        let Some(params) = self.param_defs(&b.params, &tparams) else {
            return;
        };
        let h = self.m.block_types.append(ir::BlockTypeDef {
            kind,
            name: b.name.name.clone(),
            type_params: tparams,
            params,
            span: b.span,
        });
        self.declare(&b.name, Sym::BlockType(h));
    }

    // ----- conversions -----------------------------------------------------------

    /// Convert `e` to type `to`: the identity, an `int` literal given a width,
    /// or a serializable enum to its representation. Anything else is a
    /// diagnostic (P4 has no implicit widening or narrowing).
    pub(super) fn coerce(&mut self, e: Expr, to: &Type) -> Option<Expr> {
        if e.ty == *to || *to == Type::DontCare {
            return Some(e);
        }
        if let Type::Var(_) = to {
            return Some(e);
        }
        match (&e.ty, to) {
            (Type::InfInt, Type::Bit(w) | Type::Int(w)) => {
                let signed = matches!(to, Type::Int(_));
                let ExprKind::Const(Value::Int(i)) = e.kind else {
                    self.err(
                        codes::NOT_CONSTANT,
                        "an `int` value must be a compile-time constant",
                        e.span,
                    );
                    return None;
                };
                if !consts::fits(i, *w, signed) {
                    let tn = self.m.type_name(to);
                    let d = Diagnostic::error(
                        codes::LITERAL_RANGE,
                        format!("the value {i} does not fit in `{tn}`"),
                        e.span,
                    )
                    .with_label(format!("needs more than {w} bits"))
                    .with_note(if signed {
                        format!(
                            "`{tn}` holds {} to {}",
                            -(1i128 << (w - 1).min(126)),
                            (1i128 << (w - 1).min(126)) - 1
                        )
                    } else {
                        format!("`{tn}` holds 0 to {}", consts::mask(*w))
                    })
                    .with_hint("use a wider type, or a smaller value");
                    self.emit(d);
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Const(Value::Bits(consts::from_i128(i, *w))),
                    ty: to.clone(),
                    span: e.span,
                })
            }
            (Type::Enum(h), _) if self.m.enums[*h].underlying.as_ref() == Some(to) => {
                let span = e.span;
                let kind = match e.kind {
                    ExprKind::Const(v) => ExprKind::Const(v),
                    other => ExprKind::Cast(Box::new(Expr {
                        kind: other,
                        ty: e.ty.clone(),
                        span,
                    })),
                };
                Some(Expr {
                    kind,
                    ty: to.clone(),
                    span,
                })
            }
            (Type::InfInt, Type::Enum(h)) if self.m.enums[*h].underlying.is_some() => {
                let d = Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("expected `{}`, found an integer", self.m.type_name(to)),
                    e.span,
                )
                .with_hint(format!(
                    "use a member such as `{}.{}`, or cast: `({}) value`",
                    self.m.enums[*h].name,
                    self.m.enums[*h]
                        .members
                        .first()
                        .map_or("X", |m| m.0.as_str()),
                    self.m.enums[*h].name
                ));
                self.emit(d);
                None
            }
            _ => {
                self.mismatch(to, &e.ty, e.span);
                None
            }
        }
    }

    /// Report that `found` was given where `expected` was needed.
    pub(super) fn mismatch(&mut self, expected: &Type, found: &Type, span: Span) {
        let en = self.m.type_name(expected);
        let fnm = self.m.type_name(found);
        let d = match (expected.int_width(), found.int_width()) {
            (Some((we, se)), Some((wf, sf))) if se == sf && we != wf => {
                let dir = if wf > we { "narrowing" } else { "widening" };
                Diagnostic::error(
                    codes::WIDTH_MISMATCH,
                    format!("expected `{en}`, found `{fnm}`: P4 has no implicit {dir}"),
                    span,
                )
                .with_label(format!("this is `{fnm}`"))
                .with_hint(format!("cast explicitly: `({en})(...)`"))
            }
            (Some(_), Some(_)) => Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!("expected `{en}`, found `{fnm}`"),
                span,
            )
            .with_label(format!("this is `{fnm}`"))
            .with_hint(format!("cast explicitly: `({en})(...)`")),
            _ => Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!("expected `{en}`, found `{fnm}`"),
                span,
            )
            .with_label(format!("this is `{fnm}`")),
        };
        self.emit(d);
    }

    /// `@p4runtime_translation("uri", T)`: the controller-side type T, when
    /// given, is `string` or `bit<W>` (as the P4Runtime specification says);
    /// anything else (`bool`, `int<W>`, a struct...) is refused as by p4c.
    fn check_p4runtime_translation(&mut self, anns: &[ast::Annotation]) {
        for a in anns
            .iter()
            .filter(|a| a.name.name == "p4runtime_translation")
        {
            let ast::AnnotationBody::Tokens(raw) = &a.body else {
                continue;
            };
            let Some(second) = second_argument(raw) else {
                continue;
            };
            let t: String = second.split_whitespace().collect();
            if t == "string" || t.starts_with("bit<") {
                continue;
            }
            let d = Diagnostic::error(
                codes::TYPE_NOT_ALLOWED,
                format!(
                    "@p4runtime_translation: the controller's type must be `string` or `bit<W>`, not `{t}`"
                ),
                a.span,
            );
            self.emit(d);
        }
    }
}

/// The text after the first top-level comma of an annotation's raw
/// argument list (quotes and brackets respected), without its closing
/// parenthesis.
fn second_argument(raw: &str) -> Option<&str> {
    let inner = raw.trim().trim_start_matches('(');
    let inner = inner.strip_suffix(')').unwrap_or(inner);
    let (mut depth, mut quoted) = (0i32, false);
    for (i, c) in inner.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '<' | '[' | '{' if !quoted => depth += 1,
            ')' | '>' | ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => return Some(inner[i + 1..].trim()),
            _ => {}
        }
    }
    None
}

fn kind_word(is_header: bool) -> &'static str {
    if is_header {
        "header"
    } else {
        "struct"
    }
}

/// Whether a written type holds a `varbit` (in a tuple or type argument).
fn has_varbit(t: &ast::TypeRef) -> bool {
    use ast::TypeRefKind as K;
    match &t.kind {
        K::Varbit(_) => true,
        K::Tuple(ts) => ts.iter().any(has_varbit),
        K::Named { args, .. } => args.iter().any(has_varbit),
        _ => false,
    }
}
