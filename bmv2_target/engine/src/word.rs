//! P4_16 arithmetic on fixed-width values, shared by the 64-bit fast path
//! (`u64`, every value of width ≤ 64) and the 128-bit path (`u128`).
//!
//! A value of width `w` is held in the low `w` bits of its word, the other
//! bits zero (the artifact's value convention). Every function here returns a
//! value masked to its result width. Signed operations sign-extend to `i128`
//! (rare in programs, so they share one implementation for both words).

use std::fmt::Debug;

use netsparse_externs::artifact::{BinaryOp, UnaryOp};

/// A machine word the evaluator computes in.
pub trait Word: Copy + Eq + Ord + Default + Debug + Send + Sync + 'static {
    /// The other word size (u64 ↔ u128), for mixed-width expressions.
    type Other: Word<Other = Self>;
    /// Bits in the word.
    const BITS: u32;
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Truncate a `u128` to this word.
    fn from_u128(v: u128) -> Self;
    /// Widen to `u128`.
    fn to_u128(self) -> u128;
    /// Convert from the other word (truncating when narrowing).
    fn from_other(o: Self::Other) -> Self;
    /// Convert from the other word, saturating at the maximum (shift amounts).
    fn from_other_sat(o: Self::Other) -> Self;
    /// Shift amount as u32, saturating.
    fn as_amount(self) -> u32;
    /// `a + b` wrapping in the word.
    fn wadd(self, b: Self) -> Self;
    /// `a - b` wrapping in the word.
    fn wsub(self, b: Self) -> Self;
    /// `a * b` wrapping in the word.
    fn wmul(self, b: Self) -> Self;
    /// `a + b` if no carry out of the word.
    fn cadd(self, b: Self) -> Option<Self>;
    /// Unsigned division (`b != 0`).
    fn div(self, b: Self) -> Self;
    /// Unsigned remainder (`b != 0`).
    fn rem(self, b: Self) -> Self;
    /// `a << s` with `s < BITS`.
    fn shl(self, s: u32) -> Self;
    /// `a >> s` with `s < BITS`.
    fn shr(self, s: u32) -> Self;
    /// `a & b`.
    fn and(self, b: Self) -> Self;
    /// `a | b`.
    fn or(self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(self, b: Self) -> Self;
    /// `!a`.
    fn not(self) -> Self;
}

macro_rules! impl_word {
    ($t:ty, $other:ty, $bits:expr) => {
        impl Word for $t {
            type Other = $other;
            const BITS: u32 = $bits;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn from_u128(v: u128) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_u128(self) -> u128 {
                self as u128
            }
            #[inline(always)]
            fn from_other(o: $other) -> Self {
                o as $t
            }
            #[inline(always)]
            fn from_other_sat(o: $other) -> Self {
                if (o as u128) > (<$t>::MAX as u128) {
                    <$t>::MAX
                } else {
                    o as $t
                }
            }
            #[inline(always)]
            fn as_amount(self) -> u32 {
                if self > (u32::MAX as $t) {
                    u32::MAX
                } else {
                    self as u32
                }
            }
            #[inline(always)]
            fn wadd(self, b: Self) -> Self {
                self.wrapping_add(b)
            }
            #[inline(always)]
            fn wsub(self, b: Self) -> Self {
                self.wrapping_sub(b)
            }
            #[inline(always)]
            fn wmul(self, b: Self) -> Self {
                self.wrapping_mul(b)
            }
            #[inline(always)]
            fn cadd(self, b: Self) -> Option<Self> {
                self.checked_add(b)
            }
            #[inline(always)]
            fn div(self, b: Self) -> Self {
                self / b
            }
            #[inline(always)]
            fn rem(self, b: Self) -> Self {
                self % b
            }
            #[inline(always)]
            fn shl(self, s: u32) -> Self {
                self << s
            }
            #[inline(always)]
            fn shr(self, s: u32) -> Self {
                self >> s
            }
            #[inline(always)]
            fn and(self, b: Self) -> Self {
                self & b
            }
            #[inline(always)]
            fn or(self, b: Self) -> Self {
                self | b
            }
            #[inline(always)]
            fn xor(self, b: Self) -> Self {
                self ^ b
            }
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
        }
    };
}

impl_word!(u64, u128, 64);
impl_word!(u128, u64, 128);

/// All-ones mask of `width` bits (`width` ≥ the word size gives all ones).
#[inline(always)]
pub fn mask<W: Word>(width: u16) -> W {
    if u32::from(width) >= W::BITS {
        W::ZERO.not()
    } else {
        W::ONE.shl(u32::from(width)).wsub(W::ONE)
    }
}

/// `u128` mask of `width` bits.
#[inline(always)]
pub fn mask128(width: u16) -> u128 {
    mask::<u128>(width)
}

/// Sign-extend the low `width` bits of `v` to `i128`.
#[inline]
pub fn sext(v: u128, width: u16) -> i128 {
    if width == 0 {
        return 0;
    }
    if width >= 128 {
        return v as i128;
    }
    let sh = 128 - u32::from(width);
    ((v << sh) as i128) >> sh
}

/// Two's complement of `v` in `width` bits.
#[inline]
fn from_i128<W: Word>(v: i128, width: u16) -> W {
    W::from_u128(v as u128).and(mask::<W>(width))
}

/// The smallest and largest `int<width>` values.
fn signed_bounds(width: u16) -> (i128, i128) {
    if width >= 128 {
        (i128::MIN, i128::MAX)
    } else if width == 0 {
        (0, 0)
    } else {
        let max = (1i128 << (width - 1)) - 1;
        (-max - 1, max)
    }
}

/// Unary operator on a `width`-bit value.
#[inline]
pub fn unary<W: Word>(op: UnaryOp, width: u16, a: W) -> W {
    match op {
        UnaryOp::Not => a.xor(W::ONE).and(W::ONE),
        UnaryOp::BitNot => a.not().and(mask::<W>(width)),
        UnaryOp::Neg => W::ZERO.wsub(a).and(mask::<W>(width)),
    }
}

/// Arithmetic, bitwise and shift operators (not comparisons or logical
/// operators) on `width`-bit operands; `b` is the shift amount for shifts.
#[inline]
pub fn arith<W: Word>(op: BinaryOp, width: u16, signed: bool, a: W, b: W) -> W {
    let m = mask::<W>(width);
    match op {
        BinaryOp::Add => a.wadd(b).and(m),
        BinaryOp::Sub => a.wsub(b).and(m),
        BinaryOp::Mul => a.wmul(b).and(m),
        BinaryOp::Div | BinaryOp::Mod if signed => {
            let (x, y) = (sext(a.to_u128(), width), sext(b.to_u128(), width));
            if y == 0 {
                return W::ZERO;
            }
            let r = if op == BinaryOp::Div {
                x.wrapping_div(y)
            } else {
                x.wrapping_rem(y)
            };
            from_i128(r, width)
        }
        BinaryOp::Div => {
            if b == W::ZERO {
                W::ZERO
            } else {
                a.div(b)
            }
        }
        BinaryOp::Mod => {
            if b == W::ZERO {
                W::ZERO
            } else {
                a.rem(b)
            }
        }
        BinaryOp::SatAdd | BinaryOp::SatSub if signed => {
            let (x, y) = (sext(a.to_u128(), width), sext(b.to_u128(), width));
            let (lo, hi) = signed_bounds(width);
            let r = if op == BinaryOp::SatAdd {
                x.checked_add(y)
            } else {
                x.checked_sub(y)
            };
            let r = match r {
                Some(v) => v.clamp(lo, hi),
                // Only possible at width 128: overflow direction is the sign of y.
                None if (op == BinaryOp::SatAdd) == (y > 0) => hi,
                None => lo,
            };
            from_i128(r, width)
        }
        BinaryOp::SatAdd => match a.cadd(b) {
            Some(s) if s <= m => s,
            _ => m,
        },
        BinaryOp::SatSub => {
            if a > b {
                a.wsub(b)
            } else {
                W::ZERO
            }
        }
        BinaryOp::Shl => shl(width, a, b.as_amount()),
        BinaryOp::Shr => shr(width, signed, a, b.as_amount()),
        BinaryOp::And => a.and(b),
        BinaryOp::Or => a.or(b),
        BinaryOp::Xor => a.xor(b),
        // Comparisons and logical operators are evaluated by `compare` and
        // the evaluator (short-circuit); reaching here means a mis-compiled
        // node, which the loader rejects.
        _ => W::ZERO,
    }
}

/// `a << amount` in `width` bits (≥ width → 0).
#[inline]
pub fn shl<W: Word>(width: u16, a: W, amount: u32) -> W {
    if amount >= u32::from(width) || amount >= W::BITS {
        W::ZERO
    } else {
        a.shl(amount).and(mask::<W>(width))
    }
}

/// `a >> amount` in `width` bits; arithmetic when `signed` (≥ width → 0 or all ones).
#[inline]
pub fn shr<W: Word>(width: u16, signed: bool, a: W, amount: u32) -> W {
    if signed {
        let x = sext(a.to_u128(), width);
        let s = amount.min(u32::from(width).saturating_sub(1)).min(127);
        from_i128(x >> s, width)
    } else if amount >= u32::from(width) || amount >= W::BITS {
        W::ZERO
    } else {
        a.shr(amount)
    }
}

/// A comparison of two `width`-bit operands: 1 or 0.
#[inline]
pub fn compare<W: Word>(op: BinaryOp, width: u16, signed: bool, a: W, b: W) -> bool {
    use std::cmp::Ordering;
    let ord = if signed {
        sext(a.to_u128(), width).cmp(&sext(b.to_u128(), width))
    } else {
        a.cmp(&b)
    };
    match op {
        BinaryOp::Eq => ord == Ordering::Equal,
        BinaryOp::Ne => ord != Ordering::Equal,
        BinaryOp::Lt => ord == Ordering::Less,
        BinaryOp::Le => ord != Ordering::Greater,
        BinaryOp::Gt => ord == Ordering::Greater,
        BinaryOp::Ge => ord != Ordering::Less,
        _ => false,
    }
}

/// `(T) a`: from `arg_width` bits (sign-extended when `arg_signed`) to `width` bits.
#[inline]
pub fn cast<W: Word>(a: W, arg_width: u16, arg_signed: bool, width: u16) -> W {
    if arg_signed && width > arg_width {
        from_i128(sext(a.to_u128(), arg_width), width)
    } else {
        a.and(mask::<W>(width))
    }
}

/// Is `op` a comparison (result width 1, operands share a width)?
pub fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

/// Is `op` a short-circuit logical operator?
pub fn is_logical(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::LAnd | BinaryOp::LOr)
}

/// Is `op` a shift (right operand of any width)?
pub fn is_shift(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::Shl | BinaryOp::Shr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(mask::<u64>(1), 1);
        assert_eq!(mask::<u64>(64), u64::MAX);
        assert_eq!(mask::<u128>(128), u128::MAX);
        assert_eq!(mask::<u128>(65), (1u128 << 65) - 1);
    }

    #[test]
    fn saturating() {
        assert_eq!(arith::<u64>(BinaryOp::SatAdd, 8, false, 200, 100), 255);
        assert_eq!(arith::<u64>(BinaryOp::SatSub, 8, false, 10, 100), 0);
        // int<8>: 100 |+| 100 = 127; -100 |-| 100 = -128.
        assert_eq!(arith::<u64>(BinaryOp::SatAdd, 8, true, 100, 100), 127);
        assert_eq!(arith::<u64>(BinaryOp::SatSub, 8, true, 0x9c, 100), 0x80);
        assert_eq!(
            arith::<u128>(BinaryOp::SatAdd, 128, false, u128::MAX, 1),
            u128::MAX
        );
        assert_eq!(
            arith::<u128>(BinaryOp::SatAdd, 128, true, i128::MAX as u128, 1),
            i128::MAX as u128
        );
        assert_eq!(
            arith::<u128>(BinaryOp::SatSub, 128, true, i128::MIN as u128, 1),
            i128::MIN as u128
        );
    }

    #[test]
    fn shifts() {
        assert_eq!(shl::<u64>(8, 0xff, 8), 0);
        assert_eq!(shl::<u64>(8, 0xff, 4), 0xf0);
        assert_eq!(shr::<u64>(8, true, 0x80, 100), 0xff);
        assert_eq!(shr::<u64>(8, true, 0x40, 100), 0);
        assert_eq!(shr::<u64>(8, false, 0x80, 7), 1);
        assert_eq!(shl::<u128>(128, 1, 127), 1u128 << 127);
        assert_eq!(shl::<u64>(64, 1, 64), 0);
    }

    #[test]
    fn signed_compare_and_cast() {
        // int<4>: -1 (0xf) < 1
        assert!(compare::<u64>(BinaryOp::Lt, 4, true, 0xf, 1));
        assert!(!compare::<u64>(BinaryOp::Lt, 4, false, 0xf, 1));
        assert_eq!(cast::<u64>(0xf, 4, true, 8), 0xff);
        assert_eq!(cast::<u64>(0xf, 4, false, 8), 0x0f);
        assert_eq!(cast::<u64>(0x1ff, 9, false, 8), 0xff);
    }
}
