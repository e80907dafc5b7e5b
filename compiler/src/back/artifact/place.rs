//! Places and values: l-values, header references, reads, assignments
//! and copies of whole headers, structs and stacks.

use netsparse_externs::artifact::{self as a, HeaderRef, LValue};

use crate::ast::Span;
use crate::ir::{self, Builtin, Callee, ExprKind, Type, Value};

use super::*;

impl Lower<'_> {
    // ----- places and values -------------------------------------------------------------

    pub(super) fn href(&mut self, lp: LPlace, span: Span) -> Option<HeaderRef> {
        match lp {
            LPlace::Static(Place::Header(h)) => Some(HeaderRef::Static { header: h }),
            LPlace::DynHeader(r) => Some(r),
            _ => {
                self.inexpressible("expected a header here", span);
                None
            }
        }
    }

    pub(super) fn lvalue(&mut self, lp: LPlace, span: Span) -> Option<LValue> {
        match lp {
            LPlace::Static(Place::Scalar(f)) => Some(LValue::Field { field: f }),
            LPlace::Slice(f, hi, lo) => Some(LValue::Slice { field: f, hi, lo }),
            LPlace::DynField(r, i) => Some(LValue::StackField {
                header: r,
                field_index: i,
            }),
            _ => {
                self.inexpressible("expected a scalar l-value here", span);
                None
            }
        }
    }

    pub(super) fn read(&mut self, lp: LPlace, span: Span) -> Option<a::Expr> {
        match lp {
            LPlace::Static(Place::Scalar(f)) => Some(a::Expr::Field { field: f }),
            LPlace::Slice(f, hi, lo) => Some(a::Expr::Slice {
                arg: Box::new(a::Expr::Field { field: f }),
                hi,
                lo,
            }),
            LPlace::DynField(r, i) => Some(a::Expr::StackField {
                header: r,
                field_index: i,
            }),
            LPlace::WideSlice(_, _, hi, lo) if hi - lo < a::MAX_WIDTH => {
                self.read_parts(lp, hi - lo + 1, span)?.pop()
            }
            _ => {
                self.inexpressible("expected a scalar value here", span);
                None
            }
        }
    }

    pub(super) fn is_place_expr(e: &ir::Expr) -> bool {
        match &e.kind {
            ExprKind::Var(_) => true,
            ExprKind::Field(b, _)
            | ExprKind::Index(b, _)
            | ExprKind::Next(b)
            | ExprKind::Last(b) => Self::is_place_expr(b),
            ExprKind::Slice(b, ..) => Self::is_place_expr(b),
            _ => false,
        }
    }

    /// Where a place-like expression lives; calls returning aggregates are
    /// evaluated into a temporary first.
    pub(super) fn place(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<LPlace> {
        match &e.kind {
            ExprKind::Var(v) => Some(LPlace::Static(self.var_place(idx, *v))),
            ExprKind::Field(b, i) => {
                let i = *i;
                // A header's IR field index → its artifact field index.
                let ai = match b.ty {
                    Type::Header(s) => u32_of(self.art_field(s, i as usize)),
                    _ => i,
                };
                match self.place(idx, b, pre)? {
                    LPlace::Static(Place::Struct(ps)) => {
                        ps.get(i as usize).cloned().map(LPlace::Static)
                    }
                    LPlace::Static(Place::Header(h)) => match b.ty {
                        Type::Header(s) => self
                            .header_field_place(h, s, i as usize)
                            .map(LPlace::Static),
                        _ => None,
                    },
                    LPlace::DynHeader(_) if matches!(e.ty, Type::Struct(_)) => {
                        self.inexpressible("a struct field of a run-time stack element", e.span);
                        None
                    }
                    LPlace::DynHeader(r) => Some(self.dyn_field(r, ai, &e.ty)),
                    _ => {
                        self.inexpressible("this field access", e.span);
                        None
                    }
                }
            }
            ExprKind::Index(b, i) => {
                let base = self.place(idx, b, pre)?;
                if let (LPlace::Static(Place::Struct(elems)), ExprKind::Const(Value::Bits(v))) =
                    (&base, &i.kind)
                {
                    // An element of a stack of header_unions.
                    return Some(LPlace::Static(elems.get(*v as usize)?.clone()));
                }
                let LPlace::Static(Place::Stack(s)) = base else {
                    self.inexpressible("this stack index", e.span);
                    return None;
                };
                match &i.kind {
                    ExprKind::Const(Value::Bits(v)) => {
                        let h = *self.stacks[s.index()].elements.get(*v as usize)?;
                        Some(LPlace::Static(Place::Header(h)))
                    }
                    _ => {
                        let index = self.expr(idx, i, pre)?;
                        Some(LPlace::DynHeader(HeaderRef::Index {
                            stack: s,
                            index: Box::new(index),
                        }))
                    }
                }
            }
            ExprKind::Next(b) | ExprKind::Last(b) => {
                let LPlace::Static(Place::Stack(s)) = self.place(idx, b, pre)? else {
                    self.inexpressible("`next`/`last` of this stack", e.span);
                    return None;
                };
                Some(LPlace::DynHeader(if matches!(e.kind, ExprKind::Next(_)) {
                    HeaderRef::Next { stack: s }
                } else {
                    HeaderRef::Last { stack: s }
                }))
            }
            ExprKind::Slice(b, hi, lo) => match self.place(idx, b, pre)? {
                LPlace::Static(Place::Scalar(f)) => Some(LPlace::Slice(f, *hi, *lo)),
                LPlace::Slice(f, _, l2) => Some(LPlace::Slice(f, l2 + hi, l2 + lo)),
                LPlace::Static(Place::Wide(fs)) => {
                    let w = self.m.scalar_width(&b.ty)?;
                    Some(LPlace::WideSlice(fs, w, *hi, *lo))
                }
                LPlace::WideSlice(fs, w, _, l2) => Some(LPlace::WideSlice(fs, w, l2 + hi, l2 + lo)),
                _ => {
                    self.inexpressible("a slice of a field of a run-time stack element", e.span);
                    None
                }
            },
            ExprKind::Call(c) => match self.call(idx, c, &e.ty, pre)? {
                CallResult::Place(p) => Some(LPlace::Static(p)),
                CallResult::Expr(x) => {
                    let t = self.temp(&e.ty);
                    let lv = self.lvalue(LPlace::Static(t.clone()), e.span)?;
                    pre.push(a::Stmt::Assign { dst: lv, src: x });
                    Some(LPlace::Static(t))
                }
                _ => {
                    self.inexpressible("this call result", e.span);
                    None
                }
            },
            _ => {
                // A computed aggregate (an initializer): evaluate into a temporary.
                let t = self.temp(&e.ty);
                self.assign(idx, LPlace::Static(t.clone()), &e.ty, e, pre);
                Some(LPlace::Static(t))
            }
        }
    }

    /// `dst = src` for a value of type `ty`.
    pub(super) fn assign(
        &mut self,
        idx: usize,
        dst: LPlace,
        ty: &Type,
        src: &ir::Expr,
        out: &mut Vec<a::Stmt>,
    ) {
        let span = src.span;
        if let Some(w) = self.m.scalar_width(ty).filter(|w| *w > a::MAX_WIDTH) {
            if let Some(ps) = self.parts(idx, src, out) {
                self.store_parts(dst, ps, w, span, out);
            }
            return;
        }
        if let Some(w) = self.m.scalar_width(ty) {
            let Some(v) = self.expr(idx, src, out) else {
                return;
            };
            if matches!(dst, LPlace::WideSlice(..)) {
                // A slice of a value over 128 bits: the parts it covers.
                self.store_parts(dst, vec![v], w, span, out);
                return;
            }
            let Some(lv) = self.lvalue(dst, span) else {
                return;
            };
            out.push(a::Stmt::Assign { dst: lv, src: v });
            return;
        }
        match &src.kind {
            ExprKind::List(items) => match (ty, dst) {
                (Type::Header(s), dst) => {
                    let Some(href) = self.href(dst.clone(), span) else {
                        return;
                    };
                    out.push(a::Stmt::SetValid {
                        header: href.clone(),
                    });
                    let fields = self.m.structs[*s].fields.clone();
                    for (i, (f, it)) in fields.iter().zip(items).enumerate() {
                        let fdst = match &dst {
                            LPlace::Static(Place::Header(h)) => {
                                match self.header_field_place(*h, *s, i) {
                                    Some(p) => LPlace::Static(p),
                                    None => return,
                                }
                            }
                            _ if matches!(f.ty, Type::Struct(_)) => {
                                self.inexpressible(
                                    "a struct field of a run-time stack element",
                                    span,
                                );
                                return;
                            }
                            _ => LPlace::DynField(href.clone(), u32_of(self.art_field(*s, i))),
                        };
                        self.assign(idx, fdst, &f.ty, it, out);
                    }
                }
                (Type::Struct(s), LPlace::Static(Place::Struct(ps))) => {
                    let fields = self.m.structs[*s].fields.clone();
                    for ((f, it), p) in fields.iter().zip(items).zip(ps) {
                        self.assign(idx, LPlace::Static(p), &f.ty, it, out);
                    }
                }
                (Type::List(ts), LPlace::Static(Place::Struct(ps))) => {
                    for ((t, it), p) in ts.iter().zip(items).zip(ps) {
                        self.assign(idx, LPlace::Static(p), t, it, out);
                    }
                }
                _ => self.inexpressible("this initializer", span),
            },
            ExprKind::Call(c)
                if matches!(
                    &c.callee,
                    Callee::Builtin {
                        op: Builtin::Lookahead,
                        ..
                    }
                ) && matches!(ty, Type::Header(_)) =>
            {
                // `h = pkt.lookahead<h_t>()`: one lookahead per field.
                let Some(href) = self.href(dst.clone(), span) else {
                    return;
                };
                out.push(a::Stmt::SetValid {
                    header: href.clone(),
                });
                let Type::Header(s) = ty else { return };
                let mut offset = 0u32;
                // Artifact field index: a field over 128 bits takes one per part.
                let mut k = 0usize;
                for f in self.m.structs[*s].fields.iter() {
                    let Some((w, signed)) = self.scalar_of(&f.ty) else {
                        self.inexpressible("a lookahead of a header with a struct field", span);
                        return;
                    };
                    let parts = super::storage::wide_parts(w);
                    let wide = parts.len() > 1;
                    for pw in parts {
                        let mut e = a::Expr::Lookahead {
                            bit_offset: offset,
                            width: pw,
                        };
                        if signed && !wide {
                            e = a::Expr::Cast {
                                arg: Box::new(e),
                                arg_width: pw,
                                arg_signed: false,
                                width: pw,
                                signed: true,
                            };
                        }
                        offset += u32::from(pw);
                        let lv = match &dst {
                            LPlace::Static(Place::Header(h)) => {
                                match self.headers[h.index()].fields.get(k) {
                                    Some(hf) => LValue::Field { field: hf.field },
                                    None => return,
                                }
                            }
                            _ => LValue::StackField {
                                header: href.clone(),
                                field_index: u32_of(k),
                            },
                        };
                        k += 1;
                        out.push(a::Stmt::Assign { dst: lv, src: e });
                    }
                }
            }
            _ => {
                let Some(sp) = self.place(idx, src, out) else {
                    return;
                };
                self.copy(dst, sp, ty, span, out);
            }
        }
    }

    /// Copy an aggregate (or scalar) from one place to another.
    pub(super) fn copy(
        &mut self,
        dst: LPlace,
        src: LPlace,
        ty: &Type,
        span: Span,
        out: &mut Vec<a::Stmt>,
    ) {
        if let Some(w) = self.m.scalar_width(ty).filter(|w| *w > a::MAX_WIDTH) {
            if let Some(ps) = self.read_parts(src, w, span) {
                self.store_parts(dst, ps, w, span, out);
            }
            return;
        }
        if let (Some(w), LPlace::WideSlice(..)) = (self.m.scalar_width(ty), &dst) {
            if let Some(v) = self.read(src, span) {
                self.store_parts(dst, vec![v], w, span, out);
            }
            return;
        }
        if self.m.scalar_width(ty).is_some() {
            let (Some(lv), Some(v)) = (self.lvalue(dst, span), self.read(src, span)) else {
                return;
            };
            out.push(a::Stmt::Assign { dst: lv, src: v });
            return;
        }
        match ty {
            Type::Header(_) => {
                let (Some(d), Some(s)) = (self.href(dst, span), self.href(src, span)) else {
                    return;
                };
                out.push(a::Stmt::CopyHeader { dst: d, src: s });
            }
            Type::Struct(s) => {
                let (LPlace::Static(Place::Struct(dp)), LPlace::Static(Place::Struct(sp))) =
                    (dst, src)
                else {
                    self.inexpressible("this struct copy", span);
                    return;
                };
                let fields = self.m.structs[*s].fields.clone();
                for ((f, d), s) in fields.iter().zip(dp).zip(sp) {
                    self.copy(LPlace::Static(d), LPlace::Static(s), &f.ty, span, out);
                }
            }
            Type::List(ts) => {
                let (LPlace::Static(Place::Struct(dp)), LPlace::Static(Place::Struct(sp))) =
                    (dst, src)
                else {
                    self.inexpressible("this tuple copy", span);
                    return;
                };
                for ((t, d), s) in ts.iter().zip(dp).zip(sp) {
                    self.copy(LPlace::Static(d), LPlace::Static(s), t, span, out);
                }
            }
            Type::Stack(h, _) if self.m.structs[*h].is_union => {
                let (LPlace::Static(Place::Struct(dp)), LPlace::Static(Place::Struct(sp))) =
                    (dst, src)
                else {
                    self.inexpressible("this copy of a stack of header_unions", span);
                    return;
                };
                let t = Type::Struct(*h);
                for (d, s) in dp.into_iter().zip(sp) {
                    self.copy(LPlace::Static(d), LPlace::Static(s), &t, span, out);
                }
            }
            Type::Stack(..) => {
                let (LPlace::Static(Place::Stack(d)), LPlace::Static(Place::Stack(s))) = (dst, src)
                else {
                    self.inexpressible("this stack copy", span);
                    return;
                };
                let (ds, ss) = (
                    self.stacks[d.index()].clone(),
                    self.stacks[s.index()].clone(),
                );
                for (dh, sh) in ds.elements.iter().zip(&ss.elements) {
                    out.push(a::Stmt::CopyHeader {
                        dst: HeaderRef::Static { header: *dh },
                        src: HeaderRef::Static { header: *sh },
                    });
                }
                out.push(a::Stmt::Assign {
                    dst: LValue::Field {
                        field: ds.next_index,
                    },
                    src: a::Expr::Field {
                        field: ss.next_index,
                    },
                });
            }
            Type::Extern(..) => {}
            _ => self.inexpressible("this copy", span),
        }
    }
}
