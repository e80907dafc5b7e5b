//! Values over 128 bits ([`a::MAX_WIDTH`]). The artifact computes on at most
//! 128 bits, so a wider value is held in parts of 128 bits (most significant
//! first, the first taking the remainder: [`wide_parts`]) and every operator
//! on it is lowered to operators on the parts: bitwise operators per part,
//! `+`, `-` and the saturating ones with a carry chain, `*` by 64-bit limbs,
//! comparisons from the most significant part, slices, `++`, casts and shifts
//! by a constant by regrouping bits, shifts by a run-time amount through a
//! barrel of constant shifts. Intermediate parts go to temporaries, so no
//! expression is copied into several others and the artifact grows linearly.
//! Semantics are P4's: unsigned values wrap modulo 2^W, `int<W>` is two's
//! complement in W bits.

use netsparse_externs::artifact::{self as a, FieldId, HeaderRef, LValue};

use crate::ast::{BinOp, Span, UnOp};
use crate::ir::{self, ExprKind, Type, Value};

use super::storage::wide_parts;
use super::*;

const MAXW: u16 = a::MAX_WIDTH;

/// A bit string: segments most significant first, each an expression and its width.
type Segs = Vec<(a::Expr, u16)>;

fn bin(op: a::BinaryOp, width: u16, signed: bool, l: a::Expr, r: a::Expr) -> a::Expr {
    a::Expr::Binary {
        op,
        width,
        signed,
        lhs: Box::new(l),
        rhs: Box::new(r),
    }
}

fn mux(c: a::Expr, t: a::Expr, e: a::Expr, width: u16) -> a::Expr {
    a::Expr::Mux {
        cond: Box::new(c),
        then: Box::new(t),
        otherwise: Box::new(e),
        width,
    }
}

/// `x` of width `from` zero- or sign-extended (or truncated) to `to` bits, unsigned.
fn resize(x: a::Expr, from: u16, sign: bool, to: u16) -> a::Expr {
    if from == to {
        return x;
    }
    a::Expr::Cast {
        arg: Box::new(x),
        arg_width: from,
        arg_signed: sign,
        width: to,
        signed: false,
    }
}

/// Bits `hi..=lo` of `x` (width `w`).
fn slice(x: &a::Expr, w: u16, hi: u16, lo: u16) -> a::Expr {
    if lo == 0 && hi + 1 == w {
        return x.clone();
    }
    if let a::Expr::Const { value, .. } = x {
        return konst(value >> lo, hi - lo + 1, false);
    }
    a::Expr::Slice {
        arg: Box::new(x.clone()),
        hi,
        lo,
    }
}

/// Whether an expression is cheap to repeat (a constant or a slot).
fn is_atom(x: &a::Expr) -> bool {
    matches!(x, a::Expr::Const { .. } | a::Expr::Field { .. })
}

/// Bits `lo .. lo + w` of the bit string `segs` (bit 0 = the last segment's
/// least significant bit), as one expression of `w <= 128` bits.
fn gather(segs: &[(a::Expr, u16)], lo: u32, w: u16) -> a::Expr {
    let hi = lo + u32::from(w) - 1;
    let mut out: Option<(a::Expr, u16)> = None;
    let mut end = segs.iter().map(|(_, sw)| u32::from(*sw)).sum::<u32>();
    for (x, sw) in segs {
        let (s_lo, s_hi) = (end - u32::from(*sw), end - 1);
        end -= u32::from(*sw);
        if s_hi < lo || s_lo > hi {
            continue;
        }
        let (o_lo, o_hi) = (lo.max(s_lo), hi.min(s_hi));
        let piece = slice(x, *sw, (o_hi - s_lo) as u16, (o_lo - s_lo) as u16);
        let pw = (o_hi - o_lo + 1) as u16;
        out = Some(match out {
            None => (piece, pw),
            Some((acc, aw)) => (
                a::Expr::Concat {
                    lhs: Box::new(acc),
                    rhs: Box::new(piece),
                    rhs_width: pw,
                    width: aw + pw,
                    signed: false,
                },
                aw + pw,
            ),
        });
    }
    out.map_or_else(|| konst(0, w, false), |(x, _)| x)
}

/// Bits `lo .. lo + w` of `segs` as the parts of a `w`-bit value.
fn regroup(segs: &[(a::Expr, u16)], lo: u32, w: u16) -> Vec<a::Expr> {
    let widths = wide_parts(w);
    let mut off = u32::from(w);
    widths
        .iter()
        .map(|pw| {
            off -= u32::from(*pw);
            gather(segs, lo + off, *pw)
        })
        .collect()
}

/// The parts of a `w`-bit constant: `v` sign-extended from 128 bits (the
/// checker's encoding of a constant over 128 bits).
fn const_parts(v: u128, w: u16) -> Vec<a::Expr> {
    let ext = if v >> 127 != 0 { u128::MAX } else { 0 };
    let widths = wide_parts(w);
    let n = widths.len();
    widths
        .iter()
        .enumerate()
        .map(|(k, pw)| konst(if k + 1 == n { v } else { ext }, *pw, false))
        .collect()
}

/// `n` bits all equal to the 1-bit `bit` (`None`: zeros), as segments.
fn fill(bit: Option<&a::Expr>, n: u32) -> Segs {
    let mut out = Vec::new();
    let mut left = n;
    while left > 0 {
        let c = left.min(u32::from(MAXW)) as u16;
        out.push((
            match bit {
                Some(b) => resize(b.clone(), 1, true, c),
                None => konst(0, c, false),
            },
            c,
        ));
        left -= u32::from(c);
    }
    out
}

fn segs_of(ps: &[a::Expr], w: u16) -> Segs {
    ps.iter().cloned().zip(wide_parts(w)).collect()
}

/// The sign bit (most significant) of a value's parts.
fn top_bit(ps: &[a::Expr], w: u16) -> a::Expr {
    let pw = wide_parts(w)[0];
    slice(&ps[0], pw, pw - 1, pw - 1)
}

/// Whether `x` reads one of `fs` (or any stack field, when `stack`).
fn reads(x: &a::Expr, fs: &[FieldId], stack: bool) -> bool {
    match x {
        a::Expr::Field { field } => fs.contains(field),
        a::Expr::StackField { .. } => stack,
        a::Expr::Unary { arg, .. } | a::Expr::Slice { arg, .. } | a::Expr::Cast { arg, .. } => {
            reads(arg, fs, stack)
        }
        a::Expr::Binary { lhs, rhs, .. } | a::Expr::Concat { lhs, rhs, .. } => {
            reads(lhs, fs, stack) || reads(rhs, fs, stack)
        }
        a::Expr::Mux {
            cond,
            then,
            otherwise,
            ..
        } => reads(cond, fs, stack) || reads(then, fs, stack) || reads(otherwise, fs, stack),
        _ => false,
    }
}

impl Lower<'_> {
    /// Whether a value of this type is over 128 bits.
    pub(super) fn is_wide(&self, ty: &Type) -> bool {
        self.m.scalar_width(ty).is_some_and(|w| w > MAXW)
    }

    /// Whether a scalar expression of at most 128 bits has an operand over
    /// 128 bits (so it is computed from parts).
    pub(super) fn has_wide_operand(&self, e: &ir::Expr) -> bool {
        match &e.kind {
            ExprKind::Slice(b, ..) | ExprKind::Cast(b) => self.is_wide(&b.ty),
            ExprKind::Binary(_, l, r) => self.is_wide(&l.ty) || self.is_wide(&r.ty),
            _ => false,
        }
    }

    /// `x` in a temporary unless it is a constant or a slot.
    fn atom(&mut self, x: a::Expr, w: u16, pre: &mut Vec<a::Stmt>) -> a::Expr {
        if is_atom(&x) {
            return x;
        }
        let Place::Scalar(t) = self.temp(&Type::Bit(w)) else {
            return x;
        };
        pre.push(a::Stmt::Assign {
            dst: LValue::Field { field: t },
            src: x,
        });
        a::Expr::Field { field: t }
    }

    fn atoms(&mut self, ps: Vec<a::Expr>, w: u16, pre: &mut Vec<a::Stmt>) -> Vec<a::Expr> {
        ps.into_iter()
            .zip(wide_parts(w))
            .map(|(x, pw)| self.atom(x, pw, pre))
            .collect()
    }

    /// The parts of scalar expression `e` (one part up to 128 bits).
    pub(super) fn parts(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<Vec<a::Expr>> {
        let span = e.span;
        let (w, signed) = self.scalar_of(&e.ty)?;
        if w <= MAXW && !self.has_wide_operand(e) {
            return Some(vec![self.expr(idx, e, pre)?]);
        }
        match &e.kind {
            ExprKind::Const(Value::Bits(v)) => Some(const_parts(*v, w)),
            ExprKind::Var(_)
            | ExprKind::Field(..)
            | ExprKind::Index(..)
            | ExprKind::Next(_)
            | ExprKind::Last(_) => {
                let lp = self.place(idx, e, pre)?;
                self.read_parts(lp, w, span)
            }
            ExprKind::Slice(b, hi, lo) => {
                let bw = self.scalar_of(&b.ty)?.0;
                let ps = self.parts(idx, b, pre)?;
                let ps = self.atoms(ps, bw, pre);
                Some(regroup(&segs_of(&ps, bw), u32::from(*lo), hi - lo + 1))
            }
            ExprKind::Concat(l, r) => {
                let lw = self.scalar_of(&l.ty)?.0;
                let rw = self.scalar_of(&r.ty)?.0;
                let lp = self.parts(idx, l, pre)?;
                let lp = self.atoms(lp, lw, pre);
                let rp = self.parts(idx, r, pre)?;
                let rp = self.atoms(rp, rw, pre);
                let mut segs = segs_of(&lp, lw);
                segs.extend(segs_of(&rp, rw));
                Some(regroup(&segs, 0, w))
            }
            ExprKind::Cast(x) => {
                let (xw, xs) = self.scalar_of(&x.ty)?;
                let ps = self.parts(idx, x, pre)?;
                let ps = self.atoms(ps, xw, pre);
                let mut segs = Vec::new();
                if w > xw {
                    let sign = xs.then(|| top_bit(&ps, xw));
                    segs = fill(sign.as_ref(), u32::from(w - xw));
                }
                segs.extend(segs_of(&ps, xw));
                Some(regroup(&segs, 0, w))
            }
            ExprKind::Unary(op, x) => {
                let ps = self.parts(idx, x, pre)?;
                match op {
                    UnOp::Plus => Some(ps),
                    UnOp::BitNot => Some(
                        ps.into_iter()
                            .zip(wide_parts(w))
                            .map(|(p, pw)| a::Expr::Unary {
                                op: a::UnaryOp::BitNot,
                                width: pw,
                                signed: false,
                                arg: Box::new(p),
                            })
                            .collect(),
                    ),
                    UnOp::Neg => {
                        let zero = const_parts(0, w);
                        let ps = self.atoms(ps, w, pre);
                        Some(self.sub(&zero, &ps, w, pre).0)
                    }
                    UnOp::Not => {
                        self.inexpressible("`!` of a value over 128 bits", span);
                        None
                    }
                }
            }
            ExprKind::Binary(op, l, r) => self.wide_binary(idx, *op, l, r, w, signed, span, pre),
            ExprKind::Mux(c, x, y) => {
                let cond = self.expr(idx, c, pre)?;
                let t = self.temp(&e.ty);
                let mut px = Vec::new();
                let xs = self.parts(idx, x, &mut px)?;
                self.store_parts(LPlace::Static(t.clone()), xs, w, span, &mut px);
                let mut py = Vec::new();
                let ys = self.parts(idx, y, &mut py)?;
                self.store_parts(LPlace::Static(t.clone()), ys, w, span, &mut py);
                pre.push(a::Stmt::If {
                    cond,
                    then: px,
                    otherwise: py,
                });
                self.read_parts(LPlace::Static(t), w, span)
            }
            ExprKind::Call(c) => match self.call(idx, c, &e.ty, pre)? {
                CallResult::Place(p) => self.read_parts(LPlace::Static(p), w, span),
                _ => {
                    self.inexpressible("this call's result over 128 bits", span);
                    None
                }
            },
            _ => {
                self.inexpressible("this expression over 128 bits", span);
                None
            }
        }
    }

    /// A scalar of at most 128 bits computed from operands over 128 bits:
    /// a slice, a cast, a comparison or a shift by a wide amount.
    pub(super) fn narrow_of_wide(
        &mut self,
        idx: usize,
        e: &ir::Expr,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<a::Expr> {
        match &e.kind {
            ExprKind::Binary(op, l, r) if !matches!(op, BinOp::Shl | BinOp::Shr) => {
                let (lw, signed) = self.scalar_of(&l.ty)?;
                // Varbit fields: equal lengths and equal values.
                let lens = match op {
                    BinOp::Eq | BinOp::Ne => {
                        match (self.varbit_len(idx, l, pre), self.varbit_len(idx, r, pre)) {
                            (Some(x), Some(y)) => Some(bin(a::BinaryOp::Eq, 1, false, x, y)),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let lp = self.parts(idx, l, pre)?;
                let lp = self.atoms(lp, lw, pre);
                let rp = self.parts(idx, r, pre)?;
                let rp = self.atoms(rp, lw, pre);
                let Some(lens) = lens else {
                    return self.compare(*op, &lp, &rp, signed, e.span);
                };
                let both = bin(
                    a::BinaryOp::LAnd,
                    1,
                    false,
                    lens,
                    self.compare(BinOp::Eq, &lp, &rp, signed, e.span)?,
                );
                Some(if *op == BinOp::Ne {
                    a::Expr::Unary {
                        op: a::UnaryOp::Not,
                        width: 1,
                        signed: false,
                        arg: Box::new(both),
                    }
                } else {
                    both
                })
            }
            _ => self.parts(idx, e, pre)?.pop(),
        }
    }

    /// `l op r` for comparison operators on parts (atoms) of equal widths.
    fn compare(
        &mut self,
        op: BinOp,
        l: &[a::Expr],
        r: &[a::Expr],
        signed: bool,
        span: Span,
    ) -> Option<a::Expr> {
        let eq = |k: usize| bin(a::BinaryOp::Eq, 1, false, l[k].clone(), r[k].clone());
        let all_eq =
            || (1..l.len()).fold(eq(0), |acc, k| bin(a::BinaryOp::LAnd, 1, false, acc, eq(k)));
        // Lexicographic `x < y` from the least significant part up; only the
        // top part is compared signed.
        let lt = |x: &[a::Expr], y: &[a::Expr]| {
            let n = x.len();
            let part_lt = |k: usize| {
                bin(
                    a::BinaryOp::Lt,
                    1,
                    signed && k == 0,
                    x[k].clone(),
                    y[k].clone(),
                )
            };
            let mut acc = part_lt(n - 1);
            for k in (0..n - 1).rev() {
                let e = bin(a::BinaryOp::Eq, 1, false, x[k].clone(), y[k].clone());
                acc = bin(
                    a::BinaryOp::LOr,
                    1,
                    false,
                    part_lt(k),
                    bin(a::BinaryOp::LAnd, 1, false, e, acc),
                );
            }
            acc
        };
        let not = |x: a::Expr| a::Expr::Unary {
            op: a::UnaryOp::Not,
            width: 1,
            signed: false,
            arg: Box::new(x),
        };
        Some(match op {
            BinOp::Eq => all_eq(),
            BinOp::Ne => not(all_eq()),
            BinOp::Lt => lt(l, r),
            BinOp::Gt => lt(r, l),
            BinOp::Le => not(lt(r, l)),
            BinOp::Ge => not(lt(l, r)),
            _ => {
                self.inexpressible(&format!("`{}` on values over 128 bits", op.as_str()), span);
                return None;
            }
        })
    }

    /// `l + r + carry_in` on parts (atoms) of a `w`-bit value: the sum's parts
    /// and the carry out of the most significant bit.
    fn add(
        &mut self,
        l: &[a::Expr],
        r: &[a::Expr],
        w: u16,
        carry_in: Option<a::Expr>,
        pre: &mut Vec<a::Stmt>,
    ) -> (Vec<a::Expr>, a::Expr) {
        let widths = wide_parts(w);
        let mut out = vec![konst(0, 1, false); widths.len()];
        let mut carry = carry_in;
        for k in (0..widths.len()).rev() {
            let pw = widths[k];
            let (x, y) = (l[k].clone(), r[k].clone());
            if pw < MAXW {
                let e = pw + 1;
                let mut s = bin(
                    a::BinaryOp::Add,
                    e,
                    false,
                    resize(x, pw, false, e),
                    resize(y, pw, false, e),
                );
                if let Some(c) = carry.take() {
                    s = bin(a::BinaryOp::Add, e, false, s, resize(c, 1, false, e));
                }
                let s = self.atom(s, e, pre);
                out[k] = slice(&s, e, pw - 1, 0);
                carry = Some(slice(&s, e, pw, pw));
            } else {
                let t = bin(a::BinaryOp::Add, MAXW, false, x.clone(), y);
                let t = self.atom(t, MAXW, pre);
                let c1 = bin(a::BinaryOp::Lt, 1, false, t.clone(), x);
                let (s, c) = match carry.take() {
                    None => (t, c1),
                    Some(c) => {
                        let s = bin(
                            a::BinaryOp::Add,
                            MAXW,
                            false,
                            t,
                            resize(c.clone(), 1, false, MAXW),
                        );
                        let s = self.atom(s, MAXW, pre);
                        let c2 = bin(
                            a::BinaryOp::LAnd,
                            1,
                            false,
                            c,
                            bin(a::BinaryOp::Eq, 1, false, s.clone(), konst(0, MAXW, false)),
                        );
                        (s, bin(a::BinaryOp::LOr, 1, false, c1, c2))
                    }
                };
                out[k] = s;
                carry = Some(self.atom(c, 1, pre));
            }
        }
        (out, carry.unwrap_or_else(|| konst(0, 1, false)))
    }

    /// `l - r` on parts (atoms): the difference and the carry out (1 when
    /// `l >= r` unsigned, no borrow).
    fn sub(
        &mut self,
        l: &[a::Expr],
        r: &[a::Expr],
        w: u16,
        pre: &mut Vec<a::Stmt>,
    ) -> (Vec<a::Expr>, a::Expr) {
        let inv: Vec<a::Expr> = r
            .iter()
            .zip(wide_parts(w))
            .map(|(p, pw)| a::Expr::Unary {
                op: a::UnaryOp::BitNot,
                width: pw,
                signed: false,
                arg: Box::new(p.clone()),
            })
            .collect();
        let inv = self.atoms(inv, w, pre);
        self.add(l, &inv, w, Some(konst(1, 1, false)), pre)
    }

    /// `l * r` modulo 2^w on parts (atoms): schoolbook on 64-bit limbs, each
    /// limb product exact in 128 bits.
    fn mul(
        &mut self,
        l: &[a::Expr],
        r: &[a::Expr],
        w: u16,
        pre: &mut Vec<a::Stmt>,
    ) -> Vec<a::Expr> {
        let n = usize::from(w.div_ceil(64));
        let limbs = |ps: &[a::Expr]| -> Vec<a::Expr> {
            // Least significant limb first.
            let segs = segs_of(ps, w);
            (0..n)
                .map(|i| {
                    let lo = 64 * i as u32;
                    let lw = (u32::from(w) - lo).min(64) as u16;
                    resize(gather(&segs, lo, lw), lw, false, MAXW)
                })
                .collect()
        };
        let (xl, yl) = (limbs(l), limbs(r));
        let xl: Vec<a::Expr> = xl.into_iter().map(|x| self.atom(x, MAXW, pre)).collect();
        let yl: Vec<a::Expr> = yl.into_iter().map(|x| self.atom(x, MAXW, pre)).collect();
        // acc[i]: the 64-bit limb i of the result, carried along in 128 bits.
        let mut acc: Vec<a::Expr> = vec![konst(0, MAXW, false); n];
        for i in 0..n {
            let mut carry = konst(0, MAXW, false);
            for j in 0..n - i {
                // t = acc[i+j] + x[i]*y[j] + carry < 2^128 (each term < 2^64, the product < 2^128 - 2^65 + 1).
                let p = bin(a::BinaryOp::Mul, MAXW, false, xl[i].clone(), yl[j].clone());
                let t = bin(
                    a::BinaryOp::Add,
                    MAXW,
                    false,
                    bin(a::BinaryOp::Add, MAXW, false, p, acc[i + j].clone()),
                    carry,
                );
                let t = self.atom(t, MAXW, pre);
                acc[i + j] = self.atom(resize(slice(&t, MAXW, 63, 0), 64, false, MAXW), MAXW, pre);
                carry = slice(&t, MAXW, 127, 64);
                carry = resize(carry, 64, false, MAXW);
            }
        }
        let segs: Segs = acc
            .iter()
            .rev()
            .map(|x| (slice(x, MAXW, 63, 0), 64u16))
            .collect();
        regroup(&segs, 0, w)
    }

    /// `l op r` whose result is over 128 bits.
    #[allow(clippy::too_many_arguments)]
    fn wide_binary(
        &mut self,
        idx: usize,
        op: BinOp,
        l: &ir::Expr,
        r: &ir::Expr,
        w: u16,
        signed: bool,
        span: Span,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<Vec<a::Expr>> {
        let lp = self.parts(idx, l, pre)?;
        let lp = self.atoms(lp, w, pre);
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            return self.shift(idx, op == BinOp::Shl, &lp, r, w, signed, pre);
        }
        let rp = self.parts(idx, r, pre)?;
        let rp = self.atoms(rp, w, pre);
        let per_part = |aop| {
            lp.iter()
                .zip(&rp)
                .zip(wide_parts(w))
                .map(|((x, y), pw)| bin(aop, pw, false, x.clone(), y.clone()))
                .collect::<Vec<_>>()
        };
        match op {
            BinOp::BitAnd => Some(per_part(a::BinaryOp::And)),
            BinOp::BitOr => Some(per_part(a::BinaryOp::Or)),
            BinOp::BitXor => Some(per_part(a::BinaryOp::Xor)),
            BinOp::Add => Some(self.add(&lp, &rp, w, None, pre).0),
            BinOp::Sub => Some(self.sub(&lp, &rp, w, pre).0),
            BinOp::Mul => Some(self.mul(&lp, &rp, w, pre)),
            BinOp::SatAdd | BinOp::SatSub => {
                let add = op == BinOp::SatAdd;
                let (s, c) = if add {
                    self.add(&lp, &rp, w, None, pre)
                } else {
                    self.sub(&lp, &rp, w, pre)
                };
                let s = self.atoms(s, w, pre);
                let widths = wide_parts(w);
                if !signed {
                    // Unsigned: a carry out of `+` saturates high, a borrow of `-` low.
                    let c = self.atom(c, 1, pre);
                    return Some(
                        s.iter()
                            .zip(&widths)
                            .map(|(x, pw)| {
                                let lim = konst(if add { u128::MAX } else { 0 }, *pw, false);
                                if add {
                                    mux(c.clone(), lim, x.clone(), *pw)
                                } else {
                                    mux(c.clone(), x.clone(), lim, *pw)
                                }
                            })
                            .collect(),
                    );
                }
                // Signed: overflow when the operands' signs (after negating
                // the right one for `-`) agree and the result's differs.
                let (sl, sr, ss) = (top_bit(&lp, w), top_bit(&rp, w), top_bit(&s, w));
                let same = bin(
                    if add {
                        a::BinaryOp::Eq
                    } else {
                        a::BinaryOp::Ne
                    },
                    1,
                    false,
                    sl.clone(),
                    sr,
                );
                let ovf = bin(
                    a::BinaryOp::LAnd,
                    1,
                    false,
                    same,
                    bin(a::BinaryOp::Ne, 1, false, ss, sl.clone()),
                );
                let ovf = self.atom(ovf, 1, pre);
                let neg = self.atom(sl, 1, pre);
                Some(
                    s.iter()
                        .zip(&widths)
                        .enumerate()
                        .map(|(k, (x, pw))| {
                            let (min, max) = if k == 0 {
                                (1u128 << (pw - 1), crate::check::consts::mask(pw - 1))
                            } else {
                                (0, u128::MAX)
                            };
                            let lim = mux(
                                neg.clone(),
                                konst(min, *pw, false),
                                konst(max, *pw, false),
                                *pw,
                            );
                            mux(ovf.clone(), lim, x.clone(), *pw)
                        })
                        .collect(),
                )
            }
            _ => {
                self.wide_refused(
                    &format!("`{}` of {w}-bit values", op.as_str()),
                    "divide a slice or cast of at most 128 bits (or shift by a power of two)",
                    span,
                );
                None
            }
        }
    }

    /// A construct over 128 bits this target does not compute.
    pub(super) fn wide_refused(&mut self, what: &str, hint: &str, span: Span) {
        let d = Diagnostic::error(
            codes::NOT_EXPRESSIBLE,
            format!("{what}: not supported on values over 128 bits by this target"),
            span,
        )
        .with_hint(hint.to_string());
        self.diags.push(d);
    }

    /// The parts of `v << n` / `v >> n` for a constant `n` (`fill` the bits
    /// shifted in on the right shift: the sign bit, or zeros).
    fn shift_const(
        v: &[a::Expr],
        w: u16,
        left: bool,
        n: u32,
        sign: Option<&a::Expr>,
    ) -> Vec<a::Expr> {
        let n = n.min(u32::from(w));
        let mut segs = Vec::new();
        if left {
            segs.extend(segs_of(v, w));
            segs.extend(fill(None, n));
            regroup(&segs, 0, w)
        } else {
            segs.extend(fill(sign, n));
            segs.extend(segs_of(v, w));
            regroup(&segs, n, w)
        }
    }

    /// `v << r` / `v >> r` (`>>` arithmetic when signed) on a wide value's parts.
    #[allow(clippy::too_many_arguments)]
    fn shift(
        &mut self,
        idx: usize,
        left: bool,
        v: &[a::Expr],
        r: &ir::Expr,
        w: u16,
        signed: bool,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<Vec<a::Expr>> {
        let sign = (signed && !left).then(|| top_bit(v, w));
        let sign = sign.map(|s| self.atom(s, 1, pre));
        if let ExprKind::Const(Value::Bits(n)) = &r.kind {
            if !self.is_wide(&r.ty) {
                let n = u32::try_from(*n).unwrap_or(u32::MAX);
                return Some(Self::shift_const(v, w, left, n, sign.as_ref()));
            }
        }
        let amt = self.narrow_amount(idx, r, pre)?;
        let aw = self.scalar_of(&r.ty)?.0.min(MAXW);
        let mut cur = v.to_vec();
        let mut j = 0u32;
        while (1u32 << j) < u32::from(w) && j < u32::from(aw) {
            let bit = slice(&amt, aw, j as u16, j as u16);
            let shifted = Self::shift_const(&cur, w, left, 1 << j, sign.as_ref());
            let next: Vec<a::Expr> = shifted
                .into_iter()
                .zip(&cur)
                .zip(wide_parts(w))
                .map(|((s, c), pw)| mux(bit.clone(), s, c.clone(), pw))
                .collect();
            cur = self.atoms(next, w, pre);
            j += 1;
        }
        // An amount of at least `w` leaves only the fill.
        if aw >= 16 || (1u32 << aw) > u32::from(w) {
            let big = bin(
                a::BinaryOp::Ge,
                1,
                false,
                amt.clone(),
                konst(u128::from(w), aw, false),
            );
            let big = self.atom(big, 1, pre);
            let filled = Self::shift_const(&cur, w, left, u32::from(w), sign.as_ref());
            cur = filled
                .into_iter()
                .zip(cur)
                .zip(wide_parts(w))
                .map(|((f, c), pw)| mux(big.clone(), f, c, pw))
                .collect();
        }
        Some(cur)
    }

    /// A shift amount as one value of at most 128 bits (an amount over 128
    /// bits with a bit set above the low 128 is all ones: past any width).
    pub(super) fn narrow_amount(
        &mut self,
        idx: usize,
        r: &ir::Expr,
        pre: &mut Vec<a::Stmt>,
    ) -> Option<a::Expr> {
        let rw = self.scalar_of(&r.ty)?.0;
        if rw <= MAXW {
            let x = self.expr(idx, r, pre)?;
            return Some(self.atom(x, rw, pre));
        }
        let ps = self.parts(idx, r, pre)?;
        let ps = self.atoms(ps, rw, pre);
        let n = ps.len();
        let widths = wide_parts(rw);
        let high = (0..n - 1)
            .map(|k| {
                bin(
                    a::BinaryOp::Ne,
                    1,
                    false,
                    ps[k].clone(),
                    konst(0, widths[k], false),
                )
            })
            .reduce(|x, y| bin(a::BinaryOp::LOr, 1, false, x, y))?;
        let x = mux(high, konst(u128::MAX, MAXW, false), ps[n - 1].clone(), MAXW);
        Some(self.atom(x, MAXW, pre))
    }

    /// The parts of the value at a place.
    pub(super) fn read_parts(&mut self, lp: LPlace, w: u16, span: Span) -> Option<Vec<a::Expr>> {
        match lp {
            LPlace::Static(Place::Wide(fs)) => {
                Some(fs.iter().map(|f| a::Expr::Field { field: *f }).collect())
            }
            LPlace::DynWide(r, first) => Some(
                (0..wide_parts(w).len())
                    .map(|k| a::Expr::StackField {
                        header: r.clone(),
                        field_index: first + k as u32,
                    })
                    .collect(),
            ),
            LPlace::WideSlice(fs, total, _, lo) => {
                let ps: Vec<a::Expr> = fs.iter().map(|f| a::Expr::Field { field: *f }).collect();
                Some(regroup(&segs_of(&ps, total), u32::from(lo), w))
            }
            other => Some(vec![self.read(other, span)?]),
        }
    }

    /// Store the parts of a `w`-bit value into a place.
    pub(super) fn store_parts(
        &mut self,
        dst: LPlace,
        ps: Vec<a::Expr>,
        w: u16,
        span: Span,
        out: &mut Vec<a::Stmt>,
    ) {
        // Parts that read the destination are computed before any is written.
        let (fs, stack): (Vec<FieldId>, bool) = match &dst {
            LPlace::Static(Place::Wide(fs)) | LPlace::WideSlice(fs, ..) => (fs.clone(), false),
            LPlace::DynWide(..) => (Vec::new(), true),
            _ => (Vec::new(), false),
        };
        let ps = if ps.len() > 1 && ps.iter().any(|p| reads(p, &fs, stack)) {
            let widths = wide_parts(w);
            let mut v = Vec::new();
            for (p, pw) in ps.into_iter().zip(widths) {
                let Place::Scalar(t) = self.temp(&Type::Bit(pw)) else {
                    return;
                };
                out.push(a::Stmt::Assign {
                    dst: LValue::Field { field: t },
                    src: p,
                });
                v.push(a::Expr::Field { field: t });
            }
            v
        } else {
            ps
        };
        match dst {
            LPlace::Static(Place::Wide(fs)) => {
                for (f, p) in fs.into_iter().zip(ps) {
                    out.push(a::Stmt::Assign {
                        dst: LValue::Field { field: f },
                        src: p,
                    });
                }
            }
            LPlace::DynWide(r, first) => {
                for (k, p) in ps.into_iter().enumerate() {
                    out.push(a::Stmt::Assign {
                        dst: LValue::StackField {
                            header: r.clone(),
                            field_index: first + k as u32,
                        },
                        src: p,
                    });
                }
            }
            LPlace::WideSlice(fs, total, hi, lo) => {
                let ps = self.atoms(ps, w, out);
                let segs = segs_of(&ps, w);
                let mut end = u32::from(total);
                for (f, pw) in fs.into_iter().zip(wide_parts(total)) {
                    let (p_lo, p_hi) = (end - u32::from(pw), end - 1);
                    end -= u32::from(pw);
                    let (o_lo, o_hi) = (u32::from(lo).max(p_lo), u32::from(hi).min(p_hi));
                    if o_lo > o_hi {
                        continue;
                    }
                    let src = gather(&segs, o_lo - u32::from(lo), (o_hi - o_lo + 1) as u16);
                    let dst = if o_lo == p_lo && o_hi == p_hi {
                        LValue::Field { field: f }
                    } else {
                        LValue::Slice {
                            field: f,
                            hi: (o_hi - p_lo) as u16,
                            lo: (o_lo - p_lo) as u16,
                        }
                    };
                    out.push(a::Stmt::Assign { dst, src });
                }
            }
            other => {
                let Some(lv) = self.lvalue(other, span) else {
                    return;
                };
                let Some(p) = ps.into_iter().next() else {
                    return;
                };
                out.push(a::Stmt::Assign { dst: lv, src: p });
            }
        }
    }

    /// The place of a field of a run-time stack element: a slot, or the
    /// parts of a field over 128 bits.
    pub(super) fn dyn_field(&self, r: HeaderRef, first: u32, ty: &Type) -> LPlace {
        match self.m.scalar_width(ty) {
            Some(w) if w > MAXW => LPlace::DynWide(r, first),
            _ => LPlace::DynField(r, first),
        }
    }
}
