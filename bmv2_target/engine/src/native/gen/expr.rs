//! Expressions to Rust: every [`X`] node becomes a Rust expression of its
//! own word (`u64` or `u128`) that calls the interpreter's arithmetic
//! (`word.rs`, compiled into the library) with the operator, width and
//! signedness as constants, so the compiler folds each call to the one
//! operation it is. Nodes with no native form here (stack references,
//! lookahead, validity past the first 256 headers) are escapes: the
//! interpreter evaluates them through a callback.

use std::fmt::Write as _;

use crate::code::{VX, X};
use crate::word::Word;

use super::{EscExpr, Gen};

/// A word the generator writes expressions in.
pub(super) trait GenWord: Word {
    /// The Rust type.
    const TY: &'static str;
    /// The slot load helper.
    const LOAD: &'static str;
    /// The escape helper.
    const ESC: &'static str;
    /// A literal.
    fn lit(self) -> String;
    /// Register an escaped expression of this word.
    fn escape(x: &X<Self>) -> EscExpr;
}

impl GenWord for u64 {
    const TY: &'static str = "u64";
    const LOAD: &'static str = "ld";
    const ESC: &'static str = "esc_n";
    fn lit(self) -> String {
        format!("{self:#x}u64")
    }
    fn escape(x: &X<u64>) -> EscExpr {
        EscExpr::N(x as *const X<u64>)
    }
}

impl GenWord for u128 {
    const TY: &'static str = "u128";
    const LOAD: &'static str = "ldw";
    const ESC: &'static str = "esc_w";
    fn lit(self) -> String {
        format!("{self:#x}u128")
    }
    fn escape(x: &X<u128>) -> EscExpr {
        EscExpr::W(x as *const X<u128>)
    }
}

impl Gen<'_> {
    /// `x` as a Rust expression of type `W`.
    pub(super) fn expr<W: GenWord>(&mut self, x: &X<W>) -> String
    where
        W::Other: GenWord<Other = W>,
    {
        let ty = W::TY;
        match x {
            X::Const(v) => v.lit(),
            X::Slot(i) => format!("{}(c, {i})", W::LOAD),
            X::Valid(h) if *h < 256 => format!("(vld(c, {h}) as {ty})"),
            X::Unary(op, w, a) => {
                let a = self.expr(a);
                format!("unary::<{ty}>(UnaryOp::{op:?}, {w}, {a})")
            }
            X::Arith(b) => {
                let (l, r) = (self.expr(&b.lhs), self.expr(&b.rhs));
                format!(
                    "arith::<{ty}>(BinaryOp::{:?}, {}, {}, {l}, {r})",
                    b.op, b.width, b.signed
                )
            }
            X::Cmp(b) => {
                let (l, r) = (self.expr(&b.lhs), self.expr(&b.rhs));
                format!(
                    "(compare::<{ty}>(BinaryOp::{:?}, {}, {}, {l}, {r}) as {ty})",
                    b.op, b.width, b.signed
                )
            }
            X::LAnd(b) => {
                let (l, r) = (self.expr(&b[0]), self.expr(&b[1]));
                format!("((({l}) != 0 && ({r}) != 0) as {ty})")
            }
            X::LOr(b) => {
                let (l, r) = (self.expr(&b[0]), self.expr(&b[1]));
                format!("((({l}) != 0 || ({r}) != 0) as {ty})")
            }
            X::Slice(a, lo, m) => {
                let a = self.expr(a);
                format!(
                    "<{ty} as Word>::and(<{ty} as Word>::shr({a}, {lo}), {})",
                    m.lit()
                )
            }
            X::Concat(b) => {
                let (l, r) = (self.expr(&b.lhs), self.expr(&b.rhs));
                format!(
                    "<{ty} as Word>::and(<{ty} as Word>::or(<{ty} as Word>::shl({l}, {}), {r}), {})",
                    b.rhs_width,
                    b.mask.lit()
                )
            }
            X::Cast(b) => {
                let a = self.expr(&b.arg);
                format!(
                    "cast::<{ty}>({a}, {}, {}, {})",
                    b.arg_width, b.arg_signed, b.width
                )
            }
            X::Mux(b) => {
                let cond = self.expr(&b.cond);
                let (t, e) = (self.expr(&b.then), self.expr(&b.otherwise));
                format!("(if ({cond}) != 0 {{ {t} }} else {{ {e} }})")
            }
            X::Cross(a) => {
                let a = self.expr(&**a);
                format!("<{ty} as Word>::from_other({a})")
            }
            X::CrossSat(a) => {
                let a = self.expr(&**a);
                format!("<{ty} as Word>::from_other_sat({a})")
            }
            // Stack references, lookahead, validity past the inline bits.
            X::Valid(_) | X::StackField(_) | X::ValidDyn(_) | X::Lookahead(..) => {
                let k = self.escape_expr(W::escape(x));
                format!("{}(c, {k})", W::ESC)
            }
        }
    }

    /// An expression of either word as a `u128` Rust expression.
    pub(super) fn vx(&mut self, v: &VX) -> String {
        match v {
            VX::N(x) => {
                let e = self.expr(x);
                format!("({e} as u128)")
            }
            VX::W(x) => self.expr(x),
        }
    }

    /// Register an escaped expression; its index.
    fn escape_expr(&mut self, e: EscExpr) -> u32 {
        self.exprs.push(e);
        self.stats.escaped_exprs += 1;
        (self.exprs.len() - 1) as u32
    }
}

/// Append `line` and a newline to `s`.
pub(super) fn line(s: &mut String, line: &str) {
    let _ = writeln!(s, "{line}");
}
