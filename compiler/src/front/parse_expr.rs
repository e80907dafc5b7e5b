//! Building the AST of types and expressions: type references (with
//! their widths and type arguments), expressions with P4_16's precedence
//! (the Pratt parser of `parse.rs`) and depth bound, arguments, and
//! literals: integers (validated as written) and strings.

use super::*;

impl Builder<'_> {
    // ------------------------------------------------------------ types

    pub(super) fn type_ref(&self, p: P<'_>) -> R<TypeRef> {
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

    // ------------------------------------------------------------ expressions

    pub(super) fn expr(&self, p: P<'_>) -> R<Expr> {
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
    pub(super) fn postfix(&self, p: P<'_>) -> R<(Expr, u32)> {
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

    pub(super) fn args(&self, p: P<'_>) -> R<Vec<Argument>> {
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

    pub(super) fn prefixed_name(&self, p: P<'_>) -> R<Expr> {
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
fn parse_int(text: &str) -> Result<IntLit, (String, Option<String>)> {
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
