//! Constant evaluation: P4_16 arithmetic on compile-time values.
//!
//! Fixed-width values are bit patterns in a `u128` (see [`Value`]);
//! infinite-precision `int` values are `i128` with every operation checked
//! (overflow is a diagnostic, never a wrap).

use crate::ast::{BinOp, UnOp};
use crate::ir::Value;

/// All-ones mask of `w` bits.
pub fn mask(w: u16) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

/// The signed value of the `w`-bit two's-complement pattern `v`.
pub fn to_signed(v: u128, w: u16) -> i128 {
    let v = v & mask(w);
    if w == 0 {
        return 0;
    }
    if w >= 128 {
        return v as i128;
    }
    let sign = 1u128 << (w - 1);
    if v & sign != 0 {
        (v | !mask(w)) as i128
    } else {
        v as i128
    }
}

/// The `w`-bit pattern of `i` (wrapping).
pub fn from_i128(i: i128, w: u16) -> u128 {
    (i as u128) & mask(w)
}

/// Whether `i` fits `bit<w>` (unsigned) or `int<w>` (signed).
/// For `bit<w>`, negative values down to `-(2^(w-1))` are accepted and wrap
/// (P4 programmers write `-1` for all ones).
pub fn fits(i: i128, w: u16, signed: bool) -> bool {
    if w >= 128 {
        return true;
    }
    let half = 1i128 << (w - 1);
    if signed {
        i >= -half && i < half
    } else if w >= 127 {
        // Every non-negative i128 is below 2^127.
        i >= -half
    } else {
        i >= -half && i < (1i128 << w)
    }
}

/// Fold a binary operator on two constants of the same fixed-width type.
/// Comparisons return `Value::Bool`. `Err` carries a message (division by zero).
pub fn fold_bits(op: BinOp, a: u128, b: u128, w: u16, signed: bool) -> Result<Value, String> {
    let m = mask(w);
    let sa = to_signed(a, w);
    let sb = to_signed(b, w);
    let v = match op {
        BinOp::Add => a.wrapping_add(b) & m,
        BinOp::Sub => a.wrapping_sub(b) & m,
        BinOp::Mul => a.wrapping_mul(b) & m,
        BinOp::Div | BinOp::Mod => {
            if b == 0 {
                return Err("division by zero".into());
            }
            if signed {
                let r = if op == BinOp::Div {
                    sa.checked_div(sb)
                } else {
                    sa.checked_rem(sb)
                };
                from_i128(r.unwrap_or(0), w)
            } else if op == BinOp::Div {
                a / b
            } else {
                a % b
            }
        }
        BinOp::SatAdd => {
            if signed {
                let r = sa.saturating_add(sb);
                let (lo, hi) = signed_bounds(w);
                from_i128(r.clamp(lo, hi), w)
            } else {
                a.saturating_add(b).min(m)
            }
        }
        BinOp::SatSub => {
            if signed {
                let r = sa.saturating_sub(sb);
                let (lo, hi) = signed_bounds(w);
                from_i128(r.clamp(lo, hi), w)
            } else {
                a.saturating_sub(b)
            }
        }
        BinOp::Shl => {
            if b >= u128::from(w) {
                0
            } else {
                (a << b) & m
            }
        }
        BinOp::Shr => {
            if signed {
                let s = if b >= u128::from(w) { 127 } else { b as u32 };
                from_i128(sa >> s.min(127), w)
            } else if b >= u128::from(w) {
                0
            } else {
                a >> b
            }
        }
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::Eq => return Ok(Value::Bool(a == b)),
        BinOp::Ne => return Ok(Value::Bool(a != b)),
        BinOp::Lt => return Ok(Value::Bool(if signed { sa < sb } else { a < b })),
        BinOp::Le => return Ok(Value::Bool(if signed { sa <= sb } else { a <= b })),
        BinOp::Gt => return Ok(Value::Bool(if signed { sa > sb } else { a > b })),
        BinOp::Ge => return Ok(Value::Bool(if signed { sa >= sb } else { a >= b })),
        BinOp::Concat | BinOp::And | BinOp::Or => {
            return Err(format!("`{}` is not an arithmetic operator", op.as_str()))
        }
    };
    Ok(Value::Bits(v))
}

fn signed_bounds(w: u16) -> (i128, i128) {
    if w >= 128 {
        (i128::MIN, i128::MAX)
    } else {
        let half = 1i128 << (w - 1);
        (-half, half - 1)
    }
}

/// Fold a binary operator on two infinite-precision integers.
pub fn fold_int(op: BinOp, a: i128, b: i128) -> Result<Value, String> {
    let overflow = || format!("integer overflow in compile-time `{}`", op.as_str());
    let v = match op {
        BinOp::Add => a.checked_add(b).ok_or_else(overflow)?,
        BinOp::Sub => a.checked_sub(b).ok_or_else(overflow)?,
        BinOp::Mul => a.checked_mul(b).ok_or_else(overflow)?,
        BinOp::Div => {
            if b == 0 {
                return Err("division by zero".into());
            }
            if a < 0 || b < 0 {
                return Err("`/` on negative compile-time integers is not defined in P4".into());
            }
            a / b
        }
        BinOp::Mod => {
            if b == 0 {
                return Err("modulo by zero".into());
            }
            if a < 0 || b < 0 {
                return Err("`%` on negative compile-time integers is not defined in P4".into());
            }
            a % b
        }
        BinOp::Shl => {
            if b < 0 {
                return Err("negative shift amount".into());
            }
            let s = u32::try_from(b).map_err(|_| overflow())?;
            if s >= 127 {
                if a == 0 {
                    0
                } else {
                    return Err(overflow());
                }
            } else {
                let r = a.checked_shl(s).ok_or_else(overflow)?;
                if (r >> s) != a {
                    return Err(overflow());
                }
                r
            }
        }
        BinOp::Shr => {
            if b < 0 {
                return Err("negative shift amount".into());
            }
            let s = u32::try_from(b).unwrap_or(127).min(127);
            a >> s
        }
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::Eq => return Ok(Value::Bool(a == b)),
        BinOp::Ne => return Ok(Value::Bool(a != b)),
        BinOp::Lt => return Ok(Value::Bool(a < b)),
        BinOp::Le => return Ok(Value::Bool(a <= b)),
        BinOp::Gt => return Ok(Value::Bool(a > b)),
        BinOp::Ge => return Ok(Value::Bool(a >= b)),
        BinOp::SatAdd | BinOp::SatSub | BinOp::Concat | BinOp::And | BinOp::Or => {
            return Err(format!(
                "`{}` needs operands with a width, not compile-time integers",
                op.as_str()
            ))
        }
    };
    Ok(Value::Int(v))
}

/// Fold a unary operator on a fixed-width value.
pub fn fold_unary_bits(op: UnOp, a: u128, w: u16) -> u128 {
    match op {
        UnOp::Neg => (!a).wrapping_add(1) & mask(w),
        UnOp::BitNot => !a & mask(w),
        UnOp::Not | UnOp::Plus => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_signs() {
        assert_eq!(mask(8), 0xff);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(to_signed(0xff, 8), -1);
        assert_eq!(to_signed(0x7f, 8), 127);
        assert_eq!(from_i128(-1, 4), 0xf);
        assert_eq!(to_signed(u128::MAX, 128), -1);
    }

    #[test]
    fn fits_rules() {
        assert!(fits(15, 4, false));
        assert!(!fits(16, 4, false));
        assert!(fits(-1, 4, false));
        assert!(fits(-8, 4, true));
        assert!(!fits(8, 4, true));
        assert!(fits(i128::MAX, 128, false));
        assert!(fits(i128::MAX, 127, false));
        assert!(fits(5, 127, false));
        assert!(!fits(-(1 << 126) - 1, 127, false));
    }

    #[test]
    fn folding() {
        assert_eq!(fold_bits(BinOp::Add, 255, 1, 8, false), Ok(Value::Bits(0)));
        assert_eq!(
            fold_bits(BinOp::SatAdd, 250, 10, 8, false),
            Ok(Value::Bits(255))
        );
        assert_eq!(
            fold_bits(BinOp::SatSub, 5, 10, 8, false),
            Ok(Value::Bits(0))
        );
        assert_eq!(
            fold_bits(BinOp::SatAdd, 0x7f, 1, 8, true),
            Ok(Value::Bits(0x7f))
        );
        assert_eq!(
            fold_bits(BinOp::Shr, 0x80, 7, 8, true),
            Ok(Value::Bits(0xff))
        );
        assert_eq!(fold_bits(BinOp::Shl, 1, 8, 8, false), Ok(Value::Bits(0)));
        assert_eq!(
            fold_bits(BinOp::Lt, 0xff, 1, 8, true),
            Ok(Value::Bool(true))
        );
        assert!(fold_bits(BinOp::Div, 1, 0, 8, false).is_err());
        assert_eq!(fold_int(BinOp::Shl, 1, 100), Ok(Value::Int(1 << 100)));
        assert!(fold_int(BinOp::Shl, 1, 127).is_err());
        assert!(fold_int(BinOp::Mul, i128::MAX, 2).is_err());
        assert_eq!(fold_unary_bits(UnOp::Neg, 1, 8), 0xff);
    }
}
