//! Load an [`Artifact`]: validate it completely and translate it into the
//! executable [`Code`] plus the initial [`Runtime`] state.
//!
//! Validation covers every id (in range), every width (1..=128, operands and
//! assignments agreeing, slices inside their operand, constants that fit),
//! header layouts (contiguous fields, whole bytes), statements in the right
//! kind of block (extract/verify/advance/lookahead in parsers, emit in the
//! deparser), table definitions and const entries, and the package. Anything
//! the target cannot run is [`LoadError::Unsupported`]; anything
//! inconsistent is [`LoadError::Invalid`]; both name the place.

use netsparse_externs::artifact::{
    Action, Arch, Artifact, BinaryOp, Entry, Expr, ExternKind, HeaderRef, KeySet, LValue, Next,
    Package, Prim, Stmt, Transition, V1Switch, ARTIFACT_FORMAT, ARTIFACT_VERSION, MAX_WIDTH,
};
use netsparse_externs::meter::MeterArray;
use netsparse_externs::stateful::{CounterArray, RegisterArray};

use super::code::*;
use super::runtime::ExternRt;
use super::state::Loc;
use super::word::{is_comparison, is_logical, is_shift, mask128, Word};
use crate::error::LoadError;
use crate::tables::{KeySpec, TableActionInfo, TableRt};

/// Most keys a table may have on this target.
pub const MAX_TABLE_KEYS: usize = 64;
/// Most cells a register, counter or meter array may have on this target.
pub const MAX_EXTERN_CELLS: u32 = 1 << 24;
/// Most entries a table may be declared with on this target.
pub const MAX_TABLE_SIZE: u32 = 1 << 24;

/// The names of P4's core errors, in core.p4 order.
pub const CORE_ERRORS: [&str; 7] = [
    "NoError",
    "PacketTooShort",
    "NoMatch",
    "StackOutOfBounds",
    "HeaderTooShort",
    "ParserTimeout",
    "ParserInvalidArgument",
];

/// The blocks of a v1model package.
#[derive(Clone, Copy, Debug)]
pub struct V1Blocks {
    /// The parser.
    pub parser: u32,
    /// The `VerifyChecksum` control.
    pub verify_checksum: u32,
    /// The ingress control.
    pub ingress: u32,
    /// The egress control.
    pub egress: u32,
    /// The `ComputeChecksum` control.
    pub compute_checksum: u32,
    /// The deparser control.
    pub deparser: u32,
}

/// A loaded program.
#[derive(Debug)]
pub struct Loaded {
    /// The executable program.
    pub code: Code,
    /// Every artifact field's slot, by field id.
    pub fields: Vec<FieldInfo>,
    /// The tables, empty of control-plane entries.
    pub tables: Vec<TableRt>,
    /// Extern instances, by extern id.
    pub externs: Vec<ExternRt>,
    /// Extern instances' fully-qualified names, by extern id.
    pub extern_names: Vec<String>,
    /// The v1model package's blocks (zeros for other architectures).
    pub v1: V1Blocks,
}

/// A typed compiled expression.
struct Ty {
    vx: VX,
    width: u16,
    signed: bool,
}

/// Conversion between a compiled expression and a word class.
trait Class: Word {
    fn take(v: VX, sat: bool) -> X<Self>;
    fn give(x: X<Self>) -> VX;
}

impl Class for u64 {
    fn take(v: VX, sat: bool) -> X<u64> {
        match v {
            VX::N(x) => x,
            VX::W(x) if sat => X::CrossSat(Box::new(x)),
            VX::W(x) => X::Cross(Box::new(x)),
        }
    }
    fn give(x: X<u64>) -> VX {
        VX::N(x)
    }
}

impl Class for u128 {
    fn take(v: VX, _sat: bool) -> X<u128> {
        match v {
            VX::W(x) => x,
            VX::N(x) => X::Cross(Box::new(x)),
        }
    }
    fn give(x: X<u128>) -> VX {
        VX::W(x)
    }
}

fn to_n(v: VX) -> X<u64> {
    u64::take(v, false)
}

fn to_n_sat(v: VX) -> X<u64> {
    u64::take(v, true)
}

fn to_w(v: VX) -> X<u128> {
    u128::take(v, false)
}

/// Re-express `v` in the class of `width`.
fn recast(v: VX, width: u16) -> VX {
    if width <= 64 {
        VX::N(to_n(v))
    } else {
        VX::W(to_w(v))
    }
}

fn narrow(width: u16) -> bool {
    width <= 64
}

fn slot_vx(loc: Loc) -> VX {
    match loc {
        Loc::N(i) => VX::N(X::Slot(i)),
        Loc::W(i) => VX::W(X::Slot(i)),
    }
}

fn const_vx(value: u128, width: u16) -> VX {
    if narrow(width) {
        VX::N(X::Const(value as u64))
    } else {
        VX::W(X::Const(value))
    }
}

fn arith_node<W: Class>(op: BinaryOp, width: u16, signed: bool, l: VX, r: VX) -> VX {
    let shift = is_shift(op);
    W::give(X::Arith(Box::new(Arith {
        op,
        width,
        signed,
        lhs: W::take(l, false),
        rhs: W::take(r, shift),
    })))
}

fn cmp_node<W: Class>(op: BinaryOp, width: u16, signed: bool, l: VX, r: VX) -> VX {
    W::give(X::Cmp(Box::new(Cmp {
        op,
        width,
        signed,
        lhs: W::take(l, false),
        rhs: W::take(r, false),
    })))
}

fn slice_node<W: Class>(a: VX, lo: u16, width: u16) -> VX {
    W::give(X::Slice(
        Box::new(W::take(a, false)),
        u32::from(lo),
        super::word::mask::<W>(width),
    ))
}

fn concat_node<W: Class>(l: VX, r: VX, rhs_width: u16, width: u16) -> VX {
    W::give(X::Concat(Box::new(Concat {
        lhs: W::take(l, false),
        rhs: W::take(r, false),
        rhs_width: u32::from(rhs_width),
        mask: super::word::mask::<W>(width),
    })))
}

fn cast_node<W: Class>(a: VX, arg_width: u16, arg_signed: bool, width: u16) -> VX {
    W::give(X::Cast(Box::new(Cast {
        arg: W::take(a, false),
        arg_width,
        arg_signed,
        width,
    })))
}

fn mux_node<W: Class>(c: X<u64>, t: VX, e: VX) -> VX {
    W::give(X::Mux(Box::new(Mux {
        cond: c,
        then: W::take(t, false),
        otherwise: W::take(e, false),
    })))
}

fn unary_node<W: Class>(op: netsparse_externs::artifact::UnaryOp, width: u16, a: VX) -> VX {
    W::give(X::Unary(op, width, Box::new(W::take(a, false))))
}

/// What kind of block statements are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    Parser,
    Control,
    Deparser,
    Action,
}

struct Cx<'a> {
    /// Target-specific primitives are allowed (left to the target's hook).
    target: bool,
    target_prims: Vec<Prim>,
    a: &'a Artifact,
    fields: Vec<FieldInfo>,
    lists: Vec<Box<[Loc]>>,
    ctx: Ctx,
    place: String,
}

impl Cx<'_> {
    fn invalid(&self, detail: impl Into<String>) -> LoadError {
        LoadError::Invalid {
            detail: detail.into(),
            place: self.place.clone(),
        }
    }

    fn unsupported(&self, what: impl Into<String>) -> LoadError {
        LoadError::Unsupported {
            what: what.into(),
            place: self.place.clone(),
        }
    }

    fn field(&self, id: netsparse_externs::artifact::FieldId) -> Result<&FieldInfo, LoadError> {
        self.fields.get(id.index()).ok_or_else(|| {
            self.invalid(format!(
                "field id {} out of range ({} fields)",
                id.0,
                self.fields.len()
            ))
        })
    }

    fn nslot(&self, id: netsparse_externs::artifact::FieldId) -> Result<NSlot, LoadError> {
        let f = self.field(id)?;
        match f.loc {
            Loc::N(idx) => Ok(NSlot {
                idx,
                mask: super::word::mask::<u64>(f.width),
            }),
            Loc::W(_) => Err(self.unsupported(format!(
                "standard metadata field {} wider than 64 bits",
                f.name
            ))),
        }
    }

    fn check_width(&self, w: u16, what: &str) -> Result<(), LoadError> {
        if w == 0 || w > MAX_WIDTH {
            return Err(self.invalid(format!("{what} has width {w} (must be 1..=128)")));
        }
        Ok(())
    }

    fn stack(&self, id: netsparse_externs::artifact::StackId) -> Result<u32, LoadError> {
        if id.index() >= self.a.stacks.len() {
            return Err(self.invalid(format!("stack id {} out of range", id.0)));
        }
        Ok(id.0)
    }

    fn header_id(&self, id: netsparse_externs::artifact::HeaderId) -> Result<u32, LoadError> {
        if id.index() >= self.a.headers.len() {
            return Err(self.invalid(format!("header id {} out of range", id.0)));
        }
        Ok(id.0)
    }

    /// Compile a header reference.
    fn href(&mut self, h: &HeaderRef) -> Result<HRef, LoadError> {
        Ok(match h {
            HeaderRef::Static { header } => HRef::Static(self.header_id(*header)?),
            HeaderRef::Index { stack, index } => {
                let s = self.stack(*stack)?;
                let i = self.expr(index)?;
                HRef::Dyn(Box::new(DynRef {
                    stack: s,
                    sel: Sel::Index(to_n_sat(i.vx)),
                }))
            }
            HeaderRef::Next { stack } => HRef::Dyn(Box::new(DynRef {
                stack: self.stack(*stack)?,
                sel: Sel::Next,
            })),
            HeaderRef::Last { stack } => HRef::Dyn(Box::new(DynRef {
                stack: self.stack(*stack)?,
                sel: Sel::Last,
            })),
        })
    }

    /// The layout header of a reference (a stack's first element).
    fn layout_of(&self, h: &HeaderRef) -> Result<&netsparse_externs::artifact::Header, LoadError> {
        self.a
            .header_of_ref(h)
            .ok_or_else(|| self.invalid("header reference to an empty or unknown stack"))
    }

    /// A field reached through a header reference: a static slot, or a
    /// run-time stack access.
    fn header_field(
        &mut self,
        h: &HeaderRef,
        fi: u32,
    ) -> Result<(Result<Loc, DynRef>, u16, bool), LoadError> {
        let layout = self.layout_of(h)?;
        let hf = *layout.fields.get(fi as usize).ok_or_else(|| {
            self.invalid(format!(
                "field index {fi} out of range for header {}",
                layout.name
            ))
        })?;
        let signed = self
            .a
            .fields
            .get(hf.field.index())
            .is_some_and(|f| f.signed);
        let width = hf.width;
        match self.href(h)? {
            HRef::Static(hid) => {
                let f = self.a.headers[hid as usize].fields[fi as usize];
                Ok((Ok(self.field(f.field)?.loc), width, signed))
            }
            HRef::Dyn(r) => Ok((Err(*r), width, signed)),
        }
    }

    /// Compile an expression.
    fn expr(&mut self, e: &Expr) -> Result<Ty, LoadError> {
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
    fn expr_w(&mut self, e: &Expr, w: u16, what: &str) -> Result<VX, LoadError> {
        let t = self.expr(e)?;
        if t.width != w {
            return Err(self.invalid(format!("{what} has width {} (expected {w})", t.width)));
        }
        Ok(t.vx)
    }

    /// Compile a boolean condition.
    fn cond(&mut self, e: &Expr, what: &str) -> Result<X<u64>, LoadError> {
        Ok(to_n(self.expr_w(e, 1, what)?))
    }

    /// Compile an index expression (saturating into u64).
    fn index(&mut self, e: &Expr) -> Result<X<u64>, LoadError> {
        Ok(to_n_sat(self.expr(e)?.vx))
    }

    /// Compile an l-value: the target and its width.
    fn lvalue(&mut self, lv: &LValue) -> Result<(LV, u16), LoadError> {
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

    fn block(&mut self, b: &[Stmt]) -> Result<Block, LoadError> {
        b.iter().map(|s| self.stmt(s)).collect()
    }

    fn check_header_pair(&self, d: &HeaderRef, s: &HeaderRef) -> Result<(), LoadError> {
        let (dl, sl) = (self.layout_of(d)?, self.layout_of(s)?);
        let same = dl.fields.len() == sl.fields.len()
            && dl
                .fields
                .iter()
                .zip(&sl.fields)
                .all(|(a, b)| a.width == b.width);
        if !same {
            return Err(self.invalid(format!(
                "header assignment between different layouts ({} and {})",
                dl.name, sl.name
            )));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<S, LoadError> {
        Ok(match s {
            Stmt::Assign { dst, src } => {
                let (lv, w) = self.lvalue(dst)?;
                let v = self.expr_w(src, w, "assigned value")?;
                match lv {
                    LV::Slot(Loc::N(i), _) => match to_n(v) {
                        X::Slot(j) => S::Copy(i, j),
                        X::Const(c) => S::SetConst(i, c),
                        x => S::SetN(i, x),
                    },
                    LV::Slot(Loc::W(i), _) => S::SetW(i, to_w(v)),
                    lv => S::Set(lv, v),
                }
            }
            Stmt::SetValid { header } => S::SetValid(self.href(header)?, true),
            Stmt::SetInvalid { header } => S::SetValid(self.href(header)?, false),
            Stmt::CopyHeader { dst, src } => {
                self.check_header_pair(dst, src)?;
                S::CopyHeader(self.href(dst)?, self.href(src)?)
            }
            Stmt::PushFront { stack, count } => S::Push(self.stack(*stack)?, *count),
            Stmt::PopFront { stack, count } => S::Pop(self.stack(*stack)?, *count),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.cond(cond, "if condition")?;
                S::If(Box::new((c, self.block(then)?, self.block(otherwise)?)))
            }
            Stmt::Switch {
                selector,
                cases,
                default,
            } => {
                let sel = self.expr(selector)?;
                let m = mask128(sel.width);
                let mut labels = Vec::new();
                let mut bodies = Vec::new();
                for (i, c) in cases.iter().enumerate() {
                    for v in &c.values {
                        if v & !m != 0 {
                            return Err(self.invalid(format!(
                                "switch label {v:#x} does not fit the {}-bit selector",
                                sel.width
                            )));
                        }
                        labels.push((*v, i as u32));
                    }
                    bodies.push(self.block(&c.body)?);
                }
                S::Switch(Box::new(SwitchS {
                    sel: sel.vx,
                    labels: labels.into_boxed_slice(),
                    bodies: bodies.into_boxed_slice(),
                    default: self.block(default)?,
                }))
            }
            Stmt::ApplyTable { table } => {
                if self.ctx == Ctx::Parser || self.ctx == Ctx::Deparser {
                    return Err(self.unsupported("applying a table in a parser or deparser"));
                }
                if table.index() >= self.a.tables.len() {
                    return Err(self.invalid(format!("table id {} out of range", table.0)));
                }
                S::Apply(table.0)
            }
            Stmt::CallAction { action } => {
                if action.index() >= self.a.actions.len() {
                    return Err(self.invalid(format!("action id {} out of range", action.0)));
                }
                S::Call(action.0)
            }
            Stmt::Inlined { body, .. } => S::Inlined(self.block(body)?),
            Stmt::Return => S::Return,
            Stmt::Exit => {
                if self.ctx == Ctx::Parser {
                    return Err(self.invalid("exit in a parser"));
                }
                S::Exit
            }
            Stmt::Extract { header } => {
                self.parser_only("extract")?;
                S::Extract(self.href(header)?)
            }
            Stmt::Advance { bits } => {
                self.parser_only("advance")?;
                S::Advance(self.index(bits)?)
            }
            Stmt::Verify { cond, error } => {
                self.parser_only("verify")?;
                if *error as usize >= self.a.errors.len() {
                    return Err(self.invalid(format!("error index {error} out of range")));
                }
                S::Verify(self.cond(cond, "verify condition")?, *error)
            }
            Stmt::Emit { header } => {
                if self.ctx != Ctx::Deparser {
                    return Err(self.invalid("emit outside the deparser"));
                }
                S::Emit(self.href(header)?)
            }
            Stmt::Prim(p) => S::Prim(Box::new(self.prim(p)?)),
        })
    }

    fn parser_only(&self, what: &str) -> Result<(), LoadError> {
        if self.ctx != Ctx::Parser {
            return Err(self.invalid(format!("{what} outside a parser")));
        }
        Ok(())
    }

    fn extern_of(
        &self,
        id: netsparse_externs::artifact::ExternId,
        want: &'static str,
        ok: impl Fn(&ExternKind) -> bool,
    ) -> Result<u32, LoadError> {
        let e = self
            .a
            .externs
            .get(id.index())
            .ok_or_else(|| self.invalid(format!("extern id {} out of range", id.0)))?;
        if !ok(&e.kind) {
            return Err(self.invalid(format!("extern {} is used as a {want}", e.name)));
        }
        Ok(id.0)
    }

    fn data(&mut self, data: &[Expr]) -> Result<Data, LoadError> {
        let items: Vec<(VX, u16)> = data
            .iter()
            .map(|e| {
                let t = self.expr(e)?;
                Ok((t.vx, t.width))
            })
            .collect::<Result<_, LoadError>>()?;
        let slots: Option<Vec<(Loc, u16)>> = items
            .iter()
            .map(|(v, w)| match v {
                VX::N(X::Slot(i)) => Some((Loc::N(*i), *w)),
                VX::W(X::Slot(i)) => Some((Loc::W(*i), *w)),
                _ => None,
            })
            .collect();
        Ok(match slots {
            Some(s) => {
                let total: u32 = s.iter().map(|(_, w)| u32::from(*w)).sum();
                let lead = (8 - total % 8) % 8;
                Data::Plan(super::layout::Plan::new(&s, lead))
            }
            None => Data::General(items.into_boxed_slice()),
        })
    }

    fn list(&mut self, fields: &[netsparse_externs::artifact::FieldId]) -> Result<u32, LoadError> {
        let locs: Box<[Loc]> = fields
            .iter()
            .map(|f| self.field(*f).map(|f| f.loc))
            .collect::<Result<_, _>>()?;
        self.lists.push(locs);
        Ok((self.lists.len() - 1) as u32)
    }

    fn prim(&mut self, p: &Prim) -> Result<P, LoadError> {
        if self.target && matches!(p, Prim::MarkToDrop | Prim::VerifyChecksum { .. }) {
            return Err(self.unsupported(
                "v1model standard-metadata primitives (mark_to_drop, verify_checksum) on this target",
            ));
        }
        Ok(match p {
            Prim::MarkToDrop => P::MarkToDrop,
            Prim::RegisterRead {
                register,
                dst,
                index,
            } => {
                let reg = self.extern_of(*register, "register", |k| {
                    matches!(k, ExternKind::Register { .. })
                })?;
                let (dst, w) = self.lvalue(dst)?;
                if let ExternKind::Register { width, .. } = self.a.externs[reg as usize].kind {
                    if width != w {
                        return Err(self.invalid(format!(
                            "register read of {width}-bit cells into a {w}-bit destination"
                        )));
                    }
                }
                P::RegRead {
                    reg,
                    dst,
                    index: self.index(index)?,
                }
            }
            Prim::RegisterWrite {
                register,
                index,
                value,
            } => {
                let reg = self.extern_of(*register, "register", |k| {
                    matches!(k, ExternKind::Register { .. })
                })?;
                let v = self.expr(value)?;
                if let ExternKind::Register { width, .. } = self.a.externs[reg as usize].kind {
                    if width != v.width {
                        return Err(self.invalid(format!(
                            "register write of a {}-bit value into {width}-bit cells",
                            v.width
                        )));
                    }
                }
                P::RegWrite {
                    reg,
                    index: self.index(index)?,
                    value: v.vx,
                }
            }
            Prim::Count { counter, index } => P::Count {
                counter: self.extern_of(*counter, "counter", |k| {
                    matches!(k, ExternKind::Counter { .. })
                })?,
                index: self.index(index)?,
            },
            Prim::ExecuteMeter { meter, index, dst } => P::Meter {
                meter: self
                    .extern_of(*meter, "meter", |k| matches!(k, ExternKind::Meter { .. }))?,
                index: self.index(index)?,
                dst: self.lvalue(dst)?.0,
            },
            Prim::ReadDirectMeter { meter, dst } => P::ReadDirectMeter {
                meter: self.extern_of(*meter, "direct_meter", |k| {
                    matches!(k, ExternKind::DirectMeter { .. })
                })?,
                dst: self.lvalue(dst)?.0,
            },
            Prim::CountDirect { counter } => {
                self.extern_of(*counter, "direct_counter", |k| {
                    matches!(k, ExternKind::DirectCounter { .. })
                })?;
                P::CountDirect
            }
            Prim::Hash {
                dst,
                algo,
                base,
                data,
                max,
            } => P::Hash {
                dst: self.lvalue(dst)?.0,
                algo: *algo,
                base: self.expr(base)?.vx,
                data: self.data(data)?,
                max: self.expr(max)?.vx,
            },
            Prim::VerifyChecksum {
                cond,
                data,
                checksum,
                algo,
                with_payload,
            } => {
                let c = self.expr(checksum)?;
                P::VerifyChecksum {
                    cond: self.cond(cond, "verify_checksum condition")?,
                    data: self.data(data)?,
                    checksum: c.vx,
                    checksum_width: c.width,
                    algo: *algo,
                    with_payload: *with_payload,
                }
            }
            Prim::UpdateChecksum {
                cond,
                data,
                dst,
                algo,
                with_payload,
            } => P::UpdateChecksum {
                cond: self.cond(cond, "update_checksum condition")?,
                data: self.data(data)?,
                dst: self.lvalue(dst)?.0,
                algo: *algo,
                with_payload: *with_payload,
            },
            Prim::Random { dst, lo, hi } => P::Random {
                dst: self.lvalue(dst)?.0,
                lo: self.expr(lo)?.vx,
                hi: self.expr(hi)?.vx,
            },
            Prim::Digest {
                receiver,
                name,
                data,
            } => P::Digest {
                receiver: self.expr(receiver)?.vx,
                name: name.clone(),
                data: data
                    .iter()
                    .map(|(n, e)| Ok((n.clone(), self.expr(e)?.vx)))
                    .collect::<Result<_, LoadError>>()?,
            },
            Prim::LogMsg { format, args } => {
                let parts: Box<[String]> = format.split("{}").map(str::to_owned).collect();
                P::LogMsg {
                    parts,
                    args: args
                        .iter()
                        .map(|e| Ok(self.expr(e)?.vx))
                        .collect::<Result<_, LoadError>>()?,
                }
            }
            Prim::Clone {
                kind,
                session,
                preserve,
            } => P::Clone {
                kind: *kind,
                session: self.expr(session)?.vx,
                list: self.list(preserve)?,
            },
            Prim::Resubmit { preserve } => P::Resubmit {
                list: self.list(preserve)?,
            },
            Prim::Recirculate { preserve } => P::Recirculate {
                list: self.list(preserve)?,
            },
            Prim::Truncate { length } => P::Truncate {
                length: self.expr(length)?.vx,
            },
            Prim::Assert { cond } => P::Assert {
                cond: self.cond(cond, "assert condition")?,
                assume: false,
            },
            Prim::Assume { cond } => P::Assert {
                cond: self.cond(cond, "assume condition")?,
                assume: true,
            },
            Prim::CacheLookup { .. } | Prim::CacheInsert { .. } if !self.target => {
                return Err(self.unsupported(
                    "Property Cache Lookup/Insert (NetSparse middle pipes) in a v1model program",
                ))
            }
            Prim::IdxFilterTest { .. }
            | Prim::IdxFilterSet { .. }
            | Prim::PendingContains { .. }
            | Prim::PendingInsert { .. }
            | Prim::PendingComplete { .. }
            | Prim::HostRead { .. }
            | Prim::HostWrite { .. }
                if !self.target =>
            {
                return Err(
                    self.unsupported("RIG externs (the NetSparse SmartNIC) in a v1model program")
                )
            }
            target => return self.target_prim(target),
        })
    }

    /// A primitive left to the target: its operands and destination.
    fn target_prim(&mut self, p: &Prim) -> Result<P, LoadError> {
        let (args, dst): (Vec<&Expr>, Option<&LValue>) = match p {
            Prim::CacheLookup { dst, .. } => (vec![], Some(dst)),
            Prim::CacheInsert { .. } => (vec![], None),
            Prim::IdxFilterTest { idx, dst } | Prim::PendingContains { idx, dst } => {
                (vec![idx], Some(dst))
            }
            Prim::IdxFilterSet { idx } => (vec![idx], None),
            Prim::PendingInsert { idx, req_id } => (vec![idx], Some(req_id)),
            Prim::PendingComplete {
                tid,
                req_id,
                idx,
                prop_len,
                dst,
            } => (vec![tid, req_id, idx, prop_len], Some(dst)),
            Prim::HostRead { idx, prop_len, dst } => (vec![idx, prop_len], Some(dst)),
            Prim::HostWrite { tid, req_id, idx } => (vec![tid, req_id, idx], None),
            _ => return Err(self.invalid("a v1model primitive compiled as a target primitive")),
        };
        let mut vx = Vec::with_capacity(args.len());
        for e in args {
            vx.push(self.expr(e)?.vx);
        }
        let dst = match dst {
            Some(d) => Some(self.lvalue(d)?.0),
            None => None,
        };
        let prim = u32::try_from(self.target_prims.len()).unwrap_or(u32::MAX);
        self.target_prims.push(p.clone());
        Ok(P::Target(Box::new(TargetP {
            prim,
            args: vx.into_boxed_slice(),
            dst,
        })))
    }

    fn next(&self, n: &Next, states: usize) -> Result<NextS, LoadError> {
        Ok(match n {
            Next::State(s) if s.index() < states => NextS::State(s.0),
            Next::State(s) => {
                return Err(self.invalid(format!("parser state id {} out of range", s.0)))
            }
            Next::Accept => NextS::Accept,
            Next::Reject => NextS::Reject,
        })
    }
}

/// A statement list a target runs besides the artifact's controls (a NIC
/// path, a middle pipe's per-PR part): compiled as an extra control after
/// the artifact's, with target-specific primitives left to the target.
pub struct ExtraBlock<'b> {
    /// Name, for logs.
    pub name: &'b str,
    /// The statements.
    pub body: &'b [Stmt],
}

/// Load an artifact of any architecture for a target that supplies the
/// package semantics itself ([`crate::program::Program`]): the artifact's
/// parsers, controls, tables and externs, plus `extra` blocks as controls
/// `a.controls.len()..`. No v1model standard metadata.
pub fn load_generic(a: &Artifact, extra: &[ExtraBlock<'_>]) -> Result<Loaded, LoadError> {
    load_inner(a, false, extra)
}

/// Load an artifact for the v1model target.
pub fn load(a: &Artifact) -> Result<Loaded, LoadError> {
    load_inner(a, true, &[])
}

fn load_inner(a: &Artifact, v1model: bool, extra: &[ExtraBlock<'_>]) -> Result<Loaded, LoadError> {
    let top = |detail: String| LoadError::Invalid {
        detail,
        place: format!("program {}", a.program),
    };
    if a.format != ARTIFACT_FORMAT {
        return Err(top(format!(
            "format is {:?}, expected {ARTIFACT_FORMAT:?}",
            a.format
        )));
    }
    if a.version != ARTIFACT_VERSION {
        return Err(top(format!(
            "version {} (this build reads version {ARTIFACT_VERSION})",
            a.version
        )));
    }
    let pkg: Option<&V1Switch> = match (&a.arch, &a.package) {
        _ if !v1model => None,
        (Arch::V1Model, Package::V1Switch(p)) => Some(p),
        (Arch::V1Model, _) => return Err(top("arch v1model with a non-V1Switch package".into())),
        (Arch::NetSparseNic, _) => {
            return Err(LoadError::Unsupported {
                what: "architecture netsparse_nic (NIC programs run on netsparse-nic)".into(),
                place: format!("program {}", a.program),
            })
        }
        (Arch::NetSparseSwitch, _) => {
            return Err(LoadError::Unsupported {
                what: "architecture netsparse_switch in the v1model switch (NetSparse switch programs run on the multi-pipe `NsSwitch`)".into(),
                place: format!("program {}", a.program),
            })
        }
    };

    // Field slots.
    let mut fields = Vec::with_capacity(a.fields.len());
    let (mut nn, mut nw) = (0u32, 0u32);
    for (i, f) in a.fields.iter().enumerate() {
        if f.width == 0 || f.width > MAX_WIDTH {
            return Err(LoadError::Invalid {
                detail: format!("field {} has width {} (must be 1..=128)", f.name, f.width),
                place: format!("field {i}"),
            });
        }
        let loc = if f.width <= 64 {
            nn += 1;
            Loc::N(nn - 1)
        } else {
            nw += 1;
            Loc::W(nw - 1)
        };
        fields.push(FieldInfo {
            name: f.name.clone(),
            loc,
            width: f.width,
        });
    }
    // A scratch slot for the standard metadata of non-v1model programs
    // (v1model primitives are rejected there, so it is never used).
    let scratch = nn;
    nn += 1;
    let mut cx = Cx {
        target: pkg.is_none(),
        target_prims: Vec::new(),
        a,
        fields,
        lists: Vec::new(),
        ctx: Ctx::Control,
        place: format!("program {}", a.program),
    };

    // Errors.
    if a.errors.len() < CORE_ERRORS.len() || a.errors.iter().zip(CORE_ERRORS).any(|(e, c)| e != c) {
        return Err(cx.invalid(format!(
            "the error list must start with P4's core errors {CORE_ERRORS:?}, found {:?}",
            a.errors.iter().take(7).collect::<Vec<_>>()
        )));
    }

    // Headers.
    let mut headers = Vec::with_capacity(a.headers.len());
    for (hi, h) in a.headers.iter().enumerate() {
        cx.place = format!("header {}", h.name);
        let mut off = 0u32;
        let mut hf = Vec::with_capacity(h.fields.len());
        for f in &h.fields {
            let fi = cx.field(f.field)?;
            if fi.width != f.width {
                return Err(cx.invalid(format!(
                    "field {} is {} bits in the layout but its slot is {} bits",
                    fi.name, f.width, fi.width
                )));
            }
            if f.bit_offset != off {
                return Err(cx.invalid(format!(
                    "field {} at bit {} (expected {off}: fields must be contiguous)",
                    fi.name, f.bit_offset
                )));
            }
            if let netsparse_externs::artifact::FieldKind::Header(owner) =
                a.fields[f.field.index()].kind
            {
                if owner.index() != hi {
                    return Err(cx.invalid(format!(
                        "field {} belongs to header id {}",
                        fi.name, owner.0
                    )));
                }
            }
            off += u32::from(f.width);
            hf.push(HField {
                loc: fi.loc,
                bit_off: f.bit_offset,
                width: f.width,
            });
        }
        if off != h.bit_width {
            return Err(cx.invalid(format!(
                "bit_width {} but the fields add up to {off}",
                h.bit_width
            )));
        }
        if h.bit_width % 8 != 0 {
            return Err(cx.unsupported(format!(
                "header {} is {} bits, not a whole number of bytes",
                h.name, h.bit_width
            )));
        }
        let plan =
            super::layout::Plan::new(&hf.iter().map(|f| (f.loc, f.width)).collect::<Vec<_>>(), 0);
        headers.push(HeaderInfo {
            name: h.name.clone(),
            bit_width: h.bit_width,
            fields: hf.into_boxed_slice(),
            plan,
        });
    }

    // Stacks.
    let mut stacks = Vec::with_capacity(a.stacks.len());
    for s in &a.stacks {
        cx.place = format!("header stack {}", s.name);
        let first = s
            .elements
            .first()
            .ok_or_else(|| cx.invalid("stack with no elements"))?;
        let elems: Vec<u32> = s
            .elements
            .iter()
            .map(|h| cx.header_id(*h))
            .collect::<Result<_, _>>()?;
        let layout: Vec<u16> = a.headers[first.index()]
            .fields
            .iter()
            .map(|f| f.width)
            .collect();
        for &e in &elems {
            let l: Vec<u16> = a.headers[e as usize]
                .fields
                .iter()
                .map(|f| f.width)
                .collect();
            if l != layout {
                return Err(cx.invalid("stack elements with different layouts"));
            }
        }
        let ni = cx.field(s.next_index)?;
        let Loc::N(ni_slot) = ni.loc else {
            return Err(cx.invalid("nextIndex slot wider than 64 bits"));
        };
        stacks.push(StackInfo {
            elements: elems.into_boxed_slice(),
            next_index: ni_slot,
        });
    }

    // Standard metadata.
    cx.place = "package V1Switch".into();
    let none = NSlot {
        idx: scratch,
        mask: 0,
    };
    let v1 = match pkg {
        None => V1Slots {
            ingress_port: none,
            egress_spec: none,
            egress_port: none,
            instance_type: none,
            packet_length: none,
            enq_timestamp: none,
            enq_qdepth: none,
            deq_timedelta: none,
            deq_qdepth: none,
            ingress_global_timestamp: none,
            egress_global_timestamp: none,
            mcast_grp: none,
            egress_rid: none,
            checksum_error: none,
            parser_error: none,
            priority: none,
        },
        Some(pkg) => {
            let sm = &pkg.standard_metadata;
            let v1 = V1Slots {
                ingress_port: cx.nslot(sm.ingress_port)?,
                egress_spec: cx.nslot(sm.egress_spec)?,
                egress_port: cx.nslot(sm.egress_port)?,
                instance_type: cx.nslot(sm.instance_type)?,
                packet_length: cx.nslot(sm.packet_length)?,
                enq_timestamp: cx.nslot(sm.enq_timestamp)?,
                enq_qdepth: cx.nslot(sm.enq_qdepth)?,
                deq_timedelta: cx.nslot(sm.deq_timedelta)?,
                deq_qdepth: cx.nslot(sm.deq_qdepth)?,
                ingress_global_timestamp: cx.nslot(sm.ingress_global_timestamp)?,
                egress_global_timestamp: cx.nslot(sm.egress_global_timestamp)?,
                mcast_grp: cx.nslot(sm.mcast_grp)?,
                egress_rid: cx.nslot(sm.egress_rid)?,
                checksum_error: cx.nslot(sm.checksum_error)?,
                parser_error: cx.nslot(sm.parser_error)?,
                priority: cx.nslot(sm.priority)?,
            };
            // User metadata is zeroed with every other slot per packet; only check ids.
            for f in &pkg.user_metadata {
                cx.field(*f)?;
            }
            for (what, id) in [
                ("parser", pkg.parser.index() < a.parsers.len()),
                (
                    "verifyChecksum",
                    pkg.verify_checksum.index() < a.controls.len(),
                ),
                ("ingress", pkg.ingress.index() < a.controls.len()),
                ("egress", pkg.egress.index() < a.controls.len()),
                (
                    "computeChecksum",
                    pkg.compute_checksum.index() < a.controls.len(),
                ),
                ("deparser", pkg.deparser.index() < a.controls.len()),
            ] {
                if !id {
                    return Err(cx.invalid(format!("{what} id out of range")));
                }
            }
            v1
        }
    };

    // Externs.
    let mut externs = Vec::with_capacity(a.externs.len());
    let mut names = Vec::with_capacity(a.externs.len());
    for e in &a.externs {
        cx.place = format!("extern {}", e.name);
        let too_big = |size: u32| size > MAX_EXTERN_CELLS;
        let rt = match &e.kind {
            ExternKind::Register { width, size } => {
                if too_big(*size) {
                    return Err(
                        cx.unsupported(format!("{size} register cells (max {MAX_EXTERN_CELLS})"))
                    );
                }
                ExternRt::Register(
                    RegisterArray::new(*width, *size as usize)
                        .map_err(|err| cx.invalid(err.to_string()))?,
                )
            }
            ExternKind::Counter { size, unit } => {
                if too_big(*size) {
                    return Err(
                        cx.unsupported(format!("{size} counter cells (max {MAX_EXTERN_CELLS})"))
                    );
                }
                ExternRt::Counter(CounterArray::new(*size as usize, *unit))
            }
            ExternKind::Meter { size, unit } => {
                if too_big(*size) {
                    return Err(cx.unsupported(format!("{size} meters (max {MAX_EXTERN_CELLS})")));
                }
                ExternRt::Meter(MeterArray::new(*size as usize, *unit))
            }
            ExternKind::DirectCounter { table, .. } => {
                if table.index() >= a.tables.len() {
                    return Err(cx.invalid(format!("table id {} out of range", table.0)));
                }
                ExternRt::DirectCounter { table: table.0 }
            }
            ExternKind::DirectMeter { table, .. } => {
                if table.index() >= a.tables.len() {
                    return Err(cx.invalid(format!("table id {} out of range", table.0)));
                }
                ExternRt::DirectMeter { table: table.0 }
            }
            // The target owns the cache (CacheLookup/CacheInsert go to its hook).
            ExternKind::PropertyCache if pkg.is_none() => ExternRt::PropertyCache,
            ExternKind::PropertyCache => {
                return Err(cx
                    .unsupported("a Property Cache (NetSparse middle pipes) in a v1model program"))
            }
        };
        externs.push(rt);
        names.push(e.name.clone());
    }

    // Actions.
    let mut actions = Vec::with_capacity(a.actions.len());
    for act in &a.actions {
        cx.place = format!("action {}", act.name);
        actions.push(compile_action(&mut cx, act)?);
    }

    // Parsers.
    let mut parsers = Vec::with_capacity(a.parsers.len());
    for p in &a.parsers {
        cx.place = format!("parser {}", p.name);
        cx.ctx = Ctx::Parser;
        let n = p.states.len();
        if p.start.index() >= n {
            return Err(cx.invalid("start state out of range"));
        }
        let mut states = Vec::with_capacity(n);
        for s in &p.states {
            cx.place = format!("parser {} state {}", p.name, s.name);
            let body = cx.block(&s.body)?;
            let trans = match &s.transition {
                Transition::Direct { next } => CTrans::Direct(cx.next(next, n)?),
                Transition::Select { keys, cases } => {
                    let mut ks = Vec::with_capacity(keys.len());
                    let mut widths = Vec::with_capacity(keys.len());
                    for k in keys {
                        let t = cx.expr(k)?;
                        widths.push(t.width);
                        ks.push(t.vx);
                    }
                    let mut cs = Vec::with_capacity(cases.len());
                    for c in cases {
                        if c.keysets.len() != keys.len() {
                            return Err(cx.invalid(format!(
                                "select case with {} keysets for {} keys",
                                c.keysets.len(),
                                keys.len()
                            )));
                        }
                        let mut sets = Vec::with_capacity(keys.len());
                        for (ksx, &w) in c.keysets.iter().zip(&widths) {
                            let m = mask128(w);
                            let fit = |v: u128| -> Result<u128, LoadError> {
                                if v & !m != 0 {
                                    Err(cx.invalid(format!(
                                        "select value {v:#x} does not fit the {w}-bit key"
                                    )))
                                } else {
                                    Ok(v)
                                }
                            };
                            sets.push(match ksx {
                                KeySet::Any => CKeySet::Mask(0, 0),
                                KeySet::Value { value } => CKeySet::Mask(fit(*value)?, m),
                                KeySet::Mask { value, mask } => {
                                    let mask = fit(*mask)?;
                                    CKeySet::Mask(fit(*value)? & mask, mask)
                                }
                                KeySet::Range { lo, hi } => CKeySet::Range(fit(*lo)?, fit(*hi)?),
                            });
                        }
                        cs.push(CCase {
                            sets: sets.into_boxed_slice(),
                            next: cx.next(&c.next, n)?,
                        });
                    }
                    let simple = ks.len() == 1
                        && widths[0] <= 64
                        && cs.iter().all(|c| matches!(c.sets[0], CKeySet::Mask(..)));
                    if simple {
                        let cases = cs
                            .iter()
                            .map(|c| match c.sets[0] {
                                CKeySet::Mask(v, m) => (v as u64, m as u64, c.next),
                                CKeySet::Range(..) => (0, 0, c.next),
                            })
                            .collect();
                        CTrans::Select1 {
                            key: to_n(ks.pop().map_or(VX::N(X::Const(0)), |k| k)),
                            cases,
                        }
                    } else {
                        CTrans::Select {
                            keys: ks.into_boxed_slice(),
                            cases: cs.into_boxed_slice(),
                        }
                    }
                }
            };
            states.push(CState {
                name: s.name.clone(),
                body,
                trans,
            });
        }
        parsers.push(CParser {
            name: p.name.clone(),
            states: states.into_boxed_slice(),
            start: p.start.0,
        });
    }

    // Controls.
    let ns_deparsers = match &a.package {
        Package::NetSparseSwitch(ns) if pkg.is_none() => [
            Some(ns.ingress_deparser.index()),
            Some(ns.egress_deparser.index()),
        ],
        _ => [None, None],
    };
    let mut controls = Vec::with_capacity(a.controls.len());
    for (ci, c) in a.controls.iter().enumerate() {
        cx.place = format!("control {}", c.name);
        cx.ctx =
            if pkg.is_some_and(|p| ci == p.deparser.index()) || ns_deparsers.contains(&Some(ci)) {
                Ctx::Deparser
            } else {
                Ctx::Control
            };
        controls.push(CControl {
            name: c.name.clone(),
            body: cx.block(&c.body)?,
        });
    }

    // Target blocks.
    for b in extra {
        cx.place = format!("block {}", b.name);
        cx.ctx = Ctx::Control;
        controls.push(CControl {
            name: b.name.to_owned(),
            body: cx.block(b.body)?,
        });
    }

    // Tables.
    let mut ctables = Vec::with_capacity(a.tables.len());
    let mut rtables = Vec::with_capacity(a.tables.len());
    cx.ctx = Ctx::Control;
    for (ti, t) in a.tables.iter().enumerate() {
        cx.place = format!("table {}", t.name);
        if t.keys.len() > MAX_TABLE_KEYS {
            return Err(cx.unsupported(format!("{} keys (max {MAX_TABLE_KEYS})", t.keys.len())));
        }
        if t.size > MAX_TABLE_SIZE {
            return Err(cx.unsupported(format!("size {} (max {MAX_TABLE_SIZE})", t.size)));
        }
        let mut keys = Vec::with_capacity(t.keys.len());
        let mut specs = Vec::with_capacity(t.keys.len());
        for k in &t.keys {
            cx.check_width(k.width, &format!("key {}", k.name))?;
            keys.push(cx.expr_w(&k.expr, k.width, &format!("key {}", k.name))?);
            specs.push(KeySpec {
                name: k.name.clone(),
                width: k.width,
                kind: k.match_kind,
            });
        }
        let mut acts = Vec::with_capacity(t.actions.len());
        for ta in &t.actions {
            if ta.action.index() >= a.actions.len() {
                return Err(cx.invalid(format!("action id {} out of range", ta.action.0)));
            }
            acts.push(TableActionInfo {
                action: ta.action.0,
                name: ta.name.clone(),
                default_only: ta.default_only,
                table_only: ta.table_only,
            });
        }
        if cx.field(t.hit)?.width != 1 {
            return Err(cx.invalid("hit slot is not 1 bit wide"));
        }
        let hit = cx.nslot(t.hit)?;
        let action_run = cx.nslot(t.action_run)?;
        if (a.actions.len() as u64).saturating_sub(1) > action_run.mask {
            return Err(cx.invalid("action_run slot too narrow for the action ids"));
        }
        let da = &t.default_action;
        if !t.actions.iter().any(|x| x.action == da.action) {
            return Err(cx.invalid("the default action is not in the table's action list"));
        }
        check_args(&cx, &a.actions[da.action.index()], &da.args)?;
        let mut rt = TableRt::new(
            t.name.clone(),
            specs.into_boxed_slice(),
            acts.into_boxed_slice(),
            t.size,
            da.action.0,
            da.args.clone().into_boxed_slice(),
        );
        rt.default_const = da.is_const;
        for (what, ext, want) in [
            ("direct counter", t.direct_counter, true),
            ("direct meter", t.direct_meter, false),
        ] {
            if let Some(e) = ext {
                match a.externs.get(e.index()).map(|x| &x.kind) {
                    Some(ExternKind::DirectCounter { table, .. })
                        if want && table.index() == ti =>
                    {
                        rt.direct_counter = Some(e.0);
                    }
                    Some(ExternKind::DirectMeter { table, unit })
                        if !want && table.index() == ti =>
                    {
                        rt.direct_meter = Some((e.0, *unit));
                    }
                    _ => {
                        return Err(cx.invalid(format!(
                            "{what} extern id {} does not belong to this table",
                            e.0
                        )))
                    }
                }
            }
        }
        let n = t.entries.len();
        for (i, e) in t.entries.iter().enumerate() {
            insert_program_entry(&cx, &mut rt, a, e, i, n)?;
        }
        rt.entries_const = t.entries_const;
        rtables.push(rt);
        ctables.push(CTable {
            name: t.name.clone(),
            keys: keys.into_boxed_slice(),
            hit,
            action_run,
        });
    }

    let non_header: Box<[Loc]> = a
        .fields
        .iter()
        .zip(cx.fields.iter())
        .filter(|(f, _)| !matches!(f.kind, netsparse_externs::artifact::FieldKind::Header(_)))
        .map(|(_, fi)| fi.loc)
        .collect();
    let n_narrow = nn as usize;
    let n_wide = nw as usize;
    let code = Code {
        n_narrow,
        n_wide,
        headers: headers.into_boxed_slice(),
        stacks: stacks.into_boxed_slice(),
        errors: a.errors.clone().into_boxed_slice(),
        parsers: parsers.into_boxed_slice(),
        controls: controls.into_boxed_slice(),
        actions: actions.into_boxed_slice(),
        tables: ctables.into_boxed_slice(),
        lists: cx.lists.into_boxed_slice(),
        v1,
        non_header,
        target_prims: std::mem::take(&mut cx.target_prims).into_boxed_slice(),
    };
    Ok(Loaded {
        fields: std::mem::take(&mut cx.fields),
        code,
        tables: rtables,
        externs,
        extern_names: names,
        v1: match pkg {
            Some(pkg) => V1Blocks {
                parser: pkg.parser.0,
                verify_checksum: pkg.verify_checksum.0,
                ingress: pkg.ingress.0,
                egress: pkg.egress.0,
                compute_checksum: pkg.compute_checksum.0,
                deparser: pkg.deparser.0,
            },
            None => V1Blocks {
                parser: 0,
                verify_checksum: 0,
                ingress: 0,
                egress: 0,
                compute_checksum: 0,
                deparser: 0,
            },
        },
    })
}

fn compile_action(cx: &mut Cx<'_>, act: &Action) -> Result<CAction, LoadError> {
    let mut params = Vec::with_capacity(act.params.len());
    for p in &act.params {
        let f = cx.field(p.field)?;
        if f.width != p.width {
            return Err(cx.invalid(format!(
                "parameter {} is {} bits but its slot is {} bits",
                p.name, p.width, f.width
            )));
        }
        params.push((f.loc, f.width));
    }
    cx.ctx = Ctx::Action;
    let body = cx.block(&act.body)?;
    cx.ctx = Ctx::Control;
    Ok(CAction {
        name: act.name.clone(),
        params: params.into_boxed_slice(),
        param_names: act.params.iter().map(|p| p.name.clone()).collect(),
        body,
    })
}

fn check_args(cx: &Cx<'_>, act: &Action, args: &[u128]) -> Result<(), LoadError> {
    if args.len() != act.params.len() {
        return Err(cx.invalid(format!(
            "action {} takes {} arguments, {} given",
            act.name,
            act.params.len(),
            args.len()
        )));
    }
    for (p, v) in act.params.iter().zip(args) {
        if v & !mask128(p.width) != 0 {
            return Err(cx.invalid(format!(
                "argument {v:#x} does not fit parameter {} of {} ({} bits)",
                p.name, act.name, p.width
            )));
        }
    }
    Ok(())
}

fn insert_program_entry(
    cx: &Cx<'_>,
    rt: &mut TableRt,
    a: &Artifact,
    e: &Entry,
    i: usize,
    n: usize,
) -> Result<(), LoadError> {
    let err = |d: String| LoadError::Invalid {
        detail: format!("entry {i}: {d}"),
        place: cx.place.clone(),
    };
    if !rt.actions.iter().any(|x| x.action == e.action.0) {
        return Err(err("action not in the table's action list".into()));
    }
    check_args(cx, &a.actions[e.action.index()], &e.args).map_err(|x| err(x.to_string()))?;
    let keys = rt.normalize(&e.keys).map_err(|x| err(x.to_string()))?;
    let prio = if rt.needs_priority() {
        // Explicit priorities as given (higher wins); entries without one
        // rank by position, earlier first, as p4c and BMv2 do for const
        // entries.
        e.priority.unwrap_or((n - i) as u32)
    } else {
        0
    };
    // Duplicates among program entries: the first one wins (later ones are
    // unreachable); report them as invalid.
    rt.insert(
        keys,
        e.action.0,
        e.args.clone().into_boxed_slice(),
        prio,
        true,
    )
    .map_err(|x| err(x.to_string()))?;
    Ok(())
}
