//! Expression evaluation and assignment over a [`PacketState`].

use super::code::{Cmp, Code, DynRef, Sel, LV, VX, X};
use super::state::{read_bits, PacketState, SlotWord};
use super::word::{arith, cast, compare, unary};

/// Evaluate `x` in word `W`: leaves inline, everything else out of line.
#[inline(always)]
pub fn eval<W: SlotWord>(x: &X<W>, c: &Code, st: &PacketState) -> W
where
    W::Other: SlotWord,
{
    match x {
        X::Const(v) => *v,
        X::Slot(i) => W::load_slot(st, *i),
        X::Valid(h) => {
            if st.valid.get(*h as usize) {
                W::ONE
            } else {
                W::ZERO
            }
        }
        X::Cmp(b) => eval_cmp(b, c, st),
        _ => eval_node(x, c, st),
    }
}

/// Evaluate a comparison: a small frame of its own, as conditions are
/// the commonest inner node.
#[inline(never)]
fn eval_cmp<W: SlotWord>(b: &Cmp<W>, c: &Code, st: &PacketState) -> W
where
    W::Other: SlotWord,
{
    if compare(
        b.op,
        b.width,
        b.signed,
        eval(&b.lhs, c, st),
        eval(&b.rhs, c, st),
    ) {
        W::ONE
    } else {
        W::ZERO
    }
}

/// Evaluate an inner node.
#[inline(never)]
fn eval_node<W: SlotWord>(x: &X<W>, c: &Code, st: &PacketState) -> W
where
    W::Other: SlotWord,
{
    match x {
        X::Const(v) => *v,
        X::Slot(i) => W::load_slot(st, *i),
        X::StackField(b) => {
            let (r, fi) = &**b;
            match resolve_dyn(r, c, st) {
                Some(h) => {
                    let f = c.headers[h].fields[*fi as usize];
                    W::from_u128(st.load(f.loc))
                }
                None => W::ZERO,
            }
        }
        X::Valid(h) => {
            if st.valid.get(*h as usize) {
                W::ONE
            } else {
                W::ZERO
            }
        }
        X::ValidDyn(r) => match resolve_dyn(r, c, st) {
            Some(h) if st.valid.get(h) => W::ONE,
            _ => W::ZERO,
        },
        X::Unary(op, w, a) => unary(*op, *w, eval(a, c, st)),
        X::Arith(b) => arith(
            b.op,
            b.width,
            b.signed,
            eval(&b.lhs, c, st),
            eval(&b.rhs, c, st),
        ),
        X::Cmp(b) => {
            if compare(
                b.op,
                b.width,
                b.signed,
                eval(&b.lhs, c, st),
                eval(&b.rhs, c, st),
            ) {
                W::ONE
            } else {
                W::ZERO
            }
        }
        X::LAnd(b) => {
            if eval(&b[0], c, st) != W::ZERO && eval(&b[1], c, st) != W::ZERO {
                W::ONE
            } else {
                W::ZERO
            }
        }
        X::LOr(b) => {
            if eval(&b[0], c, st) != W::ZERO || eval(&b[1], c, st) != W::ZERO {
                W::ONE
            } else {
                W::ZERO
            }
        }
        X::Slice(a, lo, m) => eval(a, c, st).shr(*lo).and(*m),
        X::Concat(b) => eval(&b.lhs, c, st)
            .shl(b.rhs_width)
            .or(eval(&b.rhs, c, st))
            .and(b.mask),
        X::Cast(b) => cast(eval(&b.arg, c, st), b.arg_width, b.arg_signed, b.width),
        X::Mux(b) => {
            if eval(&b.cond, c, st) != 0 {
                eval(&b.then, c, st)
            } else {
                eval(&b.otherwise, c, st)
            }
        }
        X::Lookahead(off, w) => {
            let bit = st.cursor + *off as usize;
            if bit + usize::from(*w) > st.frame.len() * 8 {
                st.short.set(true);
                W::ZERO
            } else {
                W::from_u128(read_bits(&st.frame, bit, *w))
            }
        }
        X::Cross(a) => W::from_other(eval(a, c, st)),
        X::CrossSat(a) => W::from_other_sat(eval(a, c, st)),
    }
}

/// Evaluate an expression of either word as `u128`.
#[inline]
pub fn eval_vx(v: &VX, c: &Code, st: &PacketState) -> u128 {
    match v {
        VX::N(x) => u128::from(eval(x, c, st)),
        VX::W(x) => eval(x, c, st),
    }
}

/// The header id a stack reference selects now, or `None` when out of range.
#[inline]
pub fn resolve_dyn(r: &DynRef, c: &Code, st: &PacketState) -> Option<usize> {
    let s = &c.stacks[r.stack as usize];
    let next = st.n[s.next_index as usize];
    let idx = match &r.sel {
        Sel::Index(e) => eval(e, c, st),
        Sel::Next => next,
        Sel::Last => next.checked_sub(1)?,
    };
    usize::try_from(idx)
        .ok()
        .and_then(|i| s.elements.get(i))
        .map(|&h| h as usize)
}

/// Store `v` into an l-value (masked to its width; out-of-range stack
/// elements are a no-op, as in BMv2).
#[inline]
pub fn store_lv(lv: &LV, c: &Code, st: &mut PacketState, v: u128) {
    match lv {
        LV::Slot(loc, w) => st.store(*loc, *w, v),
        LV::Slice(loc, lo, m) => {
            let old = st.load(*loc);
            let new = (old & !(*m << *lo)) | ((v & *m) << *lo);
            st.store_raw(*loc, new);
        }
        LV::Stack(b) => {
            let (r, fi) = &**b;
            if let Some(h) = resolve_dyn(r, c, st) {
                let f = c.headers[h].fields[*fi as usize];
                st.store(f.loc, f.width, v);
            }
        }
    }
}
