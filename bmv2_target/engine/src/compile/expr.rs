//! Expressions and l-values: every operand resolved to a slot or a
//! constant, every width checked, every operator built at its word.

use netsparse_externs::artifact::{BinaryOp, Expr, LValue};

use crate::code::*;
use crate::error::LoadError;
use crate::word::{is_comparison, is_logical, is_shift, mask128};

use super::cx::*;

impl Cx<'_> {
    /// Compile an expression.
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Ty, LoadError> {
        Ok(match e {
            Expr::Const {
                value,
                width,
                signed,
            } => {
                self.check_width(*width, "constant")?;
                if value & !mask128(*width) != 0 {
                    return Err(
                        self.invalid(format!("constant {value:#x} does not fit {width} bits"))
                    );
                }
                Ty {
                    vx: const_vx(*value, *width),
                    width: *width,
                    signed: *signed,
                }
            }
            Expr::VarbitField { .. } => {
                return Err(self.invalid("a varbit field outside a hash or checksum data list"));
            }
            Expr::Field { field } => {
                let f = self.field(*field)?;
                Ty {
                    vx: slot_vx(f.loc),
                    width: f.width,
                    signed: self.a.fields[field.index()].signed,
                }
            }
            Expr::StackField {
                header,
                field_index,
            } => {
                let (place, width, signed) = self.header_field(header, *field_index)?;
                let vx = match place {
                    Ok(loc) => slot_vx(loc),
                    Err(r) => {
                        let b = Box::new((r, *field_index));
                        if narrow(width) {
                            VX::N(X::StackField(b))
                        } else {
                            VX::W(X::StackField(b))
                        }
                    }
                };
                Ty { vx, width, signed }
            }
            Expr::IsValid { header } => {
                let vx = match self.href(header)? {
                    HRef::Static(h) => VX::N(X::Valid(h)),
                    HRef::Dyn(r) => VX::N(X::ValidDyn(r)),
                };
                Ty {
                    vx,
                    width: 1,
                    signed: false,
                }
            }
            Expr::Unary {
                op,
                width,
                signed,
                arg,
            } => {
                self.check_width(*width, "unary expression")?;
                let a = self.expr(arg)?;
                if a.width != *width {
                    return Err(self.invalid(format!(
                        "unary {op:?} of width {width} has an operand of width {}",
                        a.width
                    )));
                }
                if *op == netsparse_externs::artifact::UnaryOp::Not && *width != 1 {
                    return Err(self.invalid("`!` needs a bool (width 1)"));
                }
                let vx = if narrow(*width) {
                    unary_node::<u64>(*op, *width, a.vx)
                } else {
                    unary_node::<u128>(*op, *width, a.vx)
                };
                Ty {
                    vx,
                    width: *width,
                    signed: *signed,
                }
            }
            Expr::Binary {
                op,
                width,
                signed,
                lhs,
                rhs,
            } => {
                self.check_width(*width, "binary expression")?;
                let l = self.expr(lhs)?;
                let r = self.expr(rhs)?;
                if is_comparison(*op) {
                    if *width != 1 || l.width != r.width {
                        return Err(self.invalid(format!(
                            "comparison {op:?}: width {width}, operands {} and {} (need 1, equal)",
                            l.width, r.width
                        )));
                    }
                    let vx = if narrow(l.width) {
                        cmp_node::<u64>(*op, l.width, *signed, l.vx, r.vx)
                    } else {
                        cmp_node::<u128>(*op, l.width, *signed, l.vx, r.vx)
                    };
                    Ty {
                        vx: recast(vx, 1),
                        width: 1,
                        signed: false,
                    }
                } else if is_logical(*op) {
                    if *width != 1 || l.width != 1 || r.width != 1 {
                        return Err(self.invalid(format!("logical {op:?} needs bool operands")));
                    }
                    let pair = Box::new([to_n(l.vx), to_n(r.vx)]);
                    let x = if *op == BinaryOp::LAnd {
                        X::LAnd(pair)
                    } else {
                        X::LOr(pair)
                    };
                    Ty {
                        vx: VX::N(x),
                        width: 1,
                        signed: false,
                    }
                } else {
                    if l.width != *width || (!is_shift(*op) && r.width != *width) {
                        return Err(self.invalid(format!(
                            "{op:?} of width {width} has operands of width {} and {}",
                            l.width, r.width
                        )));
                    }
                    let vx = if narrow(*width) {
                        arith_node::<u64>(*op, *width, *signed, l.vx, r.vx)
                    } else {
                        arith_node::<u128>(*op, *width, *signed, l.vx, r.vx)
                    };
                    Ty {
                        vx,
                        width: *width,
                        signed: *signed,
                    }
                }
            }
            Expr::Slice { arg, hi, lo } => {
                let a = self.expr(arg)?;
                if *hi >= a.width || lo > hi {
                    return Err(
                        self.invalid(format!("slice [{hi}:{lo}] of a {}-bit value", a.width))
                    );
                }
                let w = hi - lo + 1;
                let vx = if narrow(a.width) {
                    slice_node::<u64>(a.vx, *lo, w)
                } else {
                    slice_node::<u128>(a.vx, *lo, w)
                };
                Ty {
                    vx: recast(vx, w),
                    width: w,
                    signed: false,
                }
            }
            Expr::Concat {
                lhs,
                rhs,
                rhs_width,
                width,
                signed,
            } => {
                self.check_width(*width, "concatenation")?;
                let l = self.expr(lhs)?;
                let r = self.expr(rhs)?;
                if r.width != *rhs_width
                    || u32::from(l.width) + u32::from(r.width) != u32::from(*width)
                {
                    return Err(self.invalid(format!(
                        "concatenation of widths {} and {} declared as {rhs_width} / {width}",
                        l.width, r.width
                    )));
                }
                let vx = if narrow(*width) {
                    concat_node::<u64>(l.vx, r.vx, *rhs_width, *width)
                } else {
                    concat_node::<u128>(l.vx, r.vx, *rhs_width, *width)
                };
                Ty {
                    vx,
                    width: *width,
                    signed: *signed,
                }
            }
            Expr::Cast {
                arg,
                arg_width,
                arg_signed,
                width,
                signed,
            } => {
                self.check_width(*width, "cast")?;
                let a = self.expr(arg)?;
                if a.width != *arg_width {
                    return Err(self.invalid(format!(
                        "cast from width {arg_width} of an operand of width {}",
                        a.width
                    )));
                }
                let node_w = (*width).max(*arg_width);
                let vx = if narrow(node_w) {
                    cast_node::<u64>(a.vx, *arg_width, *arg_signed, *width)
                } else {
                    cast_node::<u128>(a.vx, *arg_width, *arg_signed, *width)
                };
                Ty {
                    vx: recast(vx, *width),
                    width: *width,
                    signed: *signed,
                }
            }
            Expr::Mux {
                cond,
                then,
                otherwise,
                width,
            } => {
                self.check_width(*width, "conditional expression")?;
                let c = self.expr(cond)?;
                let t = self.expr(then)?;
                let o = self.expr(otherwise)?;
                if c.width != 1 || t.width != *width || o.width != *width {
                    return Err(self.invalid(format!(
                        "conditional expression: condition width {}, branches {} and {} (need 1, {width}, {width})",
                        c.width, t.width, o.width
                    )));
                }
                let signed = t.signed;
                let c = to_n(c.vx);
                let vx = if narrow(*width) {
                    mux_node::<u64>(c, t.vx, o.vx)
                } else {
                    mux_node::<u128>(c, t.vx, o.vx)
                };
                Ty {
                    vx,
                    width: *width,
                    signed,
                }
            }
            Expr::Lookahead { bit_offset, width } => {
                if self.ctx != Ctx::Parser {
                    return Err(self.invalid("lookahead outside a parser"));
                }
                self.check_width(*width, "lookahead")?;
                let vx = if narrow(*width) {
                    VX::N(X::Lookahead(*bit_offset, *width))
                } else {
                    VX::W(X::Lookahead(*bit_offset, *width))
                };
                Ty {
                    vx,
                    width: *width,
                    signed: false,
                }
            }
        })
    }

    /// Compile an expression that must have width `w`.
    pub(super) fn expr_w(&mut self, e: &Expr, w: u16, what: &str) -> Result<VX, LoadError> {
        let t = self.expr(e)?;
        if t.width != w {
            return Err(self.invalid(format!("{what} has width {} (expected {w})", t.width)));
        }
        Ok(t.vx)
    }

    /// Compile a boolean condition.
    pub(super) fn cond(&mut self, e: &Expr, what: &str) -> Result<X<u64>, LoadError> {
        Ok(to_n(self.expr_w(e, 1, what)?))
    }

    /// Compile an index expression (saturating into u64).
    pub(super) fn index(&mut self, e: &Expr) -> Result<X<u64>, LoadError> {
        Ok(to_n_sat(self.expr(e)?.vx))
    }

    /// Compile an l-value: the target and its width.
    pub(super) fn lvalue(&mut self, lv: &LValue) -> Result<(LV, u16), LoadError> {
        Ok(match lv {
            LValue::Field { field } => {
                let f = self.field(*field)?;
                (LV::Slot(f.loc, f.width), f.width)
            }
            LValue::Slice { field, hi, lo } => {
                let f = self.field(*field)?;
                if *hi >= f.width || lo > hi {
                    return Err(self.invalid(format!(
                        "slice assignment [{hi}:{lo}] of {} ({} bits)",
                        f.name, f.width
                    )));
                }
                let w = hi - lo + 1;
                (LV::Slice(f.loc, u32::from(*lo), mask128(w)), w)
            }
            LValue::StackField {
                header,
                field_index,
            } => {
                let (place, width, _) = self.header_field(header, *field_index)?;
                match place {
                    Ok(loc) => (LV::Slot(loc, width), width),
                    Err(r) => (LV::Stack(Box::new((r, *field_index))), width),
                }
            }
        })
    }
}
