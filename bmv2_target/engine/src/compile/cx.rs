//! The loading context — the artifact, the place an error names, the
//! kind of block being translated, every field's slot — and the typed
//! expression nodes the translation builds: each value is compiled at the
//! cheapest word (`u64` up to 64 bits, `u128` above) that holds it.

use netsparse_externs::artifact::{Artifact, BinaryOp, HeaderRef, Prim, MAX_WIDTH};

use crate::code::*;
use crate::error::LoadError;
use crate::state::Loc;
use crate::word::{is_shift, Word};

/// A typed compiled expression.
pub(super) struct Ty {
    pub(super) vx: VX,
    pub(super) width: u16,
    pub(super) signed: bool,
}

/// Conversion between a compiled expression and a word class.
pub(super) trait Class: Word {
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

pub(super) fn to_n(v: VX) -> X<u64> {
    u64::take(v, false)
}

pub(super) fn to_n_sat(v: VX) -> X<u64> {
    u64::take(v, true)
}

pub(super) fn to_w(v: VX) -> X<u128> {
    u128::take(v, false)
}

/// Re-express `v` in the class of `width`.
pub(super) fn recast(v: VX, width: u16) -> VX {
    if width <= 64 {
        VX::N(to_n(v))
    } else {
        VX::W(to_w(v))
    }
}

pub(super) fn narrow(width: u16) -> bool {
    width <= 64
}

pub(super) fn slot_vx(loc: Loc) -> VX {
    match loc {
        Loc::N(i) => VX::N(X::Slot(i)),
        Loc::W(i) => VX::W(X::Slot(i)),
    }
}

pub(super) fn const_vx(value: u128, width: u16) -> VX {
    if narrow(width) {
        VX::N(X::Const(value as u64))
    } else {
        VX::W(X::Const(value))
    }
}

pub(super) fn arith_node<W: Class>(op: BinaryOp, width: u16, signed: bool, l: VX, r: VX) -> VX {
    let shift = is_shift(op);
    W::give(X::Arith(Box::new(Arith {
        op,
        width,
        signed,
        lhs: W::take(l, false),
        rhs: W::take(r, shift),
    })))
}

pub(super) fn cmp_node<W: Class>(op: BinaryOp, width: u16, signed: bool, l: VX, r: VX) -> VX {
    W::give(X::Cmp(Box::new(Cmp {
        op,
        width,
        signed,
        lhs: W::take(l, false),
        rhs: W::take(r, false),
    })))
}

pub(super) fn slice_node<W: Class>(a: VX, lo: u16, width: u16) -> VX {
    W::give(X::Slice(
        Box::new(W::take(a, false)),
        u32::from(lo),
        crate::word::mask::<W>(width),
    ))
}

pub(super) fn concat_node<W: Class>(l: VX, r: VX, rhs_width: u16, width: u16) -> VX {
    W::give(X::Concat(Box::new(Concat {
        lhs: W::take(l, false),
        rhs: W::take(r, false),
        rhs_width: u32::from(rhs_width),
        mask: crate::word::mask::<W>(width),
    })))
}

pub(super) fn cast_node<W: Class>(a: VX, arg_width: u16, arg_signed: bool, width: u16) -> VX {
    W::give(X::Cast(Box::new(Cast {
        arg: W::take(a, false),
        arg_width,
        arg_signed,
        width,
    })))
}

pub(super) fn mux_node<W: Class>(c: X<u64>, t: VX, e: VX) -> VX {
    W::give(X::Mux(Box::new(Mux {
        cond: c,
        then: W::take(t, false),
        otherwise: W::take(e, false),
    })))
}

pub(super) fn unary_node<W: Class>(
    op: netsparse_externs::artifact::UnaryOp,
    width: u16,
    a: VX,
) -> VX {
    W::give(X::Unary(op, width, Box::new(W::take(a, false))))
}

/// What kind of block statements are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ctx {
    Parser,
    Control,
    Deparser,
    Action,
}

pub(super) struct Cx<'a> {
    /// Target-specific primitives are allowed (left to the target's hook).
    pub(super) target: bool,
    pub(super) target_prims: Vec<Prim>,
    pub(super) a: &'a Artifact,
    pub(super) fields: Vec<FieldInfo>,
    pub(super) lists: Vec<Box<[Loc]>>,
    pub(super) ctx: Ctx,
    pub(super) place: String,
}

impl Cx<'_> {
    pub(super) fn invalid(&self, detail: impl Into<String>) -> LoadError {
        LoadError::Invalid {
            detail: detail.into(),
            place: self.place.clone(),
        }
    }

    pub(super) fn unsupported(&self, what: impl Into<String>) -> LoadError {
        LoadError::Unsupported {
            what: what.into(),
            place: self.place.clone(),
        }
    }

    pub(super) fn field(
        &self,
        id: netsparse_externs::artifact::FieldId,
    ) -> Result<&FieldInfo, LoadError> {
        self.fields.get(id.index()).ok_or_else(|| {
            self.invalid(format!(
                "field id {} out of range ({} fields)",
                id.0,
                self.fields.len()
            ))
        })
    }

    pub(super) fn nslot(
        &self,
        id: netsparse_externs::artifact::FieldId,
    ) -> Result<NSlot, LoadError> {
        let f = self.field(id)?;
        match f.loc {
            Loc::N(idx) => Ok(NSlot {
                idx,
                mask: crate::word::mask::<u64>(f.width),
            }),
            Loc::W(_) => Err(self.unsupported(format!(
                "standard metadata field {} wider than 64 bits",
                f.name
            ))),
        }
    }

    pub(super) fn check_width(&self, w: u16, what: &str) -> Result<(), LoadError> {
        if w == 0 || w > MAX_WIDTH {
            return Err(self.invalid(format!("{what} has width {w} (must be 1..=128)")));
        }
        Ok(())
    }

    pub(super) fn stack(&self, id: netsparse_externs::artifact::StackId) -> Result<u32, LoadError> {
        if id.index() >= self.a.stacks.len() {
            return Err(self.invalid(format!("stack id {} out of range", id.0)));
        }
        Ok(id.0)
    }

    pub(super) fn header_id(
        &self,
        id: netsparse_externs::artifact::HeaderId,
    ) -> Result<u32, LoadError> {
        if id.index() >= self.a.headers.len() {
            return Err(self.invalid(format!("header id {} out of range", id.0)));
        }
        Ok(id.0)
    }

    /// Compile a header reference.
    pub(super) fn href(&mut self, h: &HeaderRef) -> Result<HRef, LoadError> {
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
    pub(super) fn layout_of(
        &self,
        h: &HeaderRef,
    ) -> Result<&netsparse_externs::artifact::Header, LoadError> {
        self.a
            .header_of_ref(h)
            .ok_or_else(|| self.invalid("header reference to an empty or unknown stack"))
    }

    /// A field reached through a header reference: a static slot, or a
    /// run-time stack access.
    pub(super) fn header_field(
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
}
