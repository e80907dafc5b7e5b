//! Storage: field slots for scalars, headers with bit layouts, temporaries,
//! the places of variables per instance, and the leaves of a place.

use netsparse_externs::artifact::{self as a, FieldId, FieldKind, HeaderId, StackId};

use crate::ir::{self, Handle, Type};

use super::*;

impl Lower<'_> {
    // ----- storage -------------------------------------------------------------------

    pub(super) fn scalar_of(&self, ty: &Type) -> Option<(u16, bool)> {
        Some((self.m.scalar_width(ty)?, self.m.scalar_signed(ty)))
    }

    pub(super) fn new_field(
        &mut self,
        name: String,
        width: u16,
        signed: bool,
        kind: FieldKind,
    ) -> FieldId {
        let id = FieldId(u32_of(self.fields.len()));
        self.fields.push(a::Field {
            name,
            width,
            signed,
            kind,
        });
        id
    }

    pub(super) fn new_header(&mut self, name: String, s: Handle<ir::StructDef>) -> HeaderId {
        let hid = HeaderId(u32_of(self.headers.len()));
        let def = &self.m.structs[s];
        let mut fields = Vec::new();
        let mut offset = 0u32;
        let mut slots = Vec::new();
        for f in &def.fields {
            self.header_slots(&format!("{name}.{}", f.name), &f.ty, &mut slots);
        }
        for (fname, w, signed) in slots {
            let fid = self.new_field(fname, w, signed, FieldKind::Header(hid));
            fields.push(a::HeaderField {
                field: fid,
                bit_offset: offset,
                width: w,
            });
            offset += u32::from(w);
        }
        let varbit_parts = def.fields.iter().find(|f| f.varbit).map_or(0, |f| {
            wide_parts(self.m.scalar_width(&f.ty).unwrap_or(1)).len()
        });
        let varbit_parts = if varbit_parts > 1 {
            u32_of(varbit_parts)
        } else {
            0
        };
        let varbit_len = def.fields.iter().any(|f| f.varbit).then(|| {
            self.new_field(
                format!("{name}.$varbit_len"),
                32,
                false,
                FieldKind::Header(hid),
            )
        });
        self.headers.push(a::Header {
            name,
            type_name: def.name.clone(),
            fields,
            bit_width: offset,
            varbit_len,
            varbit_parts,
            controller_header: def.controller_header.clone(),
        });
        hid
    }

    /// Allocate slots for a value of type `ty` named `name`.
    pub(super) fn alloc(&mut self, name: &str, ty: &Type, kind: FieldKind) -> Place {
        match ty {
            Type::Header(s) => Place::Header(self.new_header(name.to_string(), *s)),
            Type::Struct(s) => {
                let fields = self.m.structs[*s].fields.clone();
                Place::Struct(
                    fields
                        .iter()
                        .map(|f| self.alloc(&format!("{name}.{}", f.name), &f.ty, kind))
                        .collect(),
                )
            }
            // A stack of header_unions: a fixed array of unions (constant
            // indices only, checked before).
            Type::Stack(s, n) if self.m.structs[*s].is_union => Place::Struct(
                (0..*n)
                    .map(|i| self.alloc(&format!("{name}[{i}]"), &Type::Struct(*s), kind))
                    .collect(),
            ),
            Type::Stack(s, n) => {
                let elements = (0..*n)
                    .map(|i| self.new_header(format!("{name}[{i}]"), *s))
                    .collect();
                let next_index = self.new_field(format!("{name}.$next"), 32, false, kind);
                let sid = StackId(u32_of(self.stacks.len()));
                self.stacks.push(a::HeaderStack {
                    name: name.to_string(),
                    elements,
                    next_index,
                });
                Place::Stack(sid)
            }
            Type::List(ts) => Place::Struct(
                ts.iter()
                    .enumerate()
                    .map(|(i, t)| self.alloc(&format!("{name}.{i}"), t, kind))
                    .collect(),
            ),
            Type::Extern(..) => Place::Packet,
            other => {
                let (w, signed) = self.scalar_of(other).unwrap_or((1, false));
                let parts = wide_parts(w);
                if parts.len() == 1 {
                    Place::Scalar(self.new_field(name.to_string(), w, signed, kind))
                } else {
                    Place::Wide(
                        parts
                            .into_iter()
                            .enumerate()
                            .map(|(k, pw)| self.new_field(format!("{name}${k}"), pw, false, kind))
                            .collect(),
                    )
                }
            }
        }
    }

    pub(super) fn temp(&mut self, ty: &Type) -> Place {
        self.temps += 1;
        let name = format!("$t{}", self.temps);
        self.alloc(&name, ty, FieldKind::Local)
    }

    pub(super) fn var_place(&mut self, inst: usize, v: Handle<ir::Var>) -> Place {
        if let Some(p) = self.insts[inst].vars.get(&v) {
            return p.clone();
        }
        if let Some(p) = self.insts[0].vars.get(&v) {
            return p.clone();
        }
        let var = &self.m.vars[v];
        let name = join(&self.insts[inst].path, &var.name);
        let ty = var.ty.clone();
        let p = self.alloc(&name, &ty, FieldKind::Local);
        self.insts[inst].vars.insert(v, p.clone());
        p
    }

    pub(super) fn leaves(&self, p: &Place, out: &mut Vec<FieldId>) {
        match p {
            Place::Scalar(f) => out.push(*f),
            Place::Wide(fs) => out.extend(fs.iter().copied()),
            Place::Header(h) => out.extend(self.headers[h.index()].fields.iter().map(|f| f.field)),
            Place::Stack(s) => {
                for h in &self.stacks[s.index()].elements {
                    out.extend(self.headers[h.index()].fields.iter().map(|f| f.field));
                }
            }
            Place::Struct(ps) => {
                for q in ps {
                    self.leaves(q, out);
                }
            }
            Place::Packet => {}
        }
    }
}

/// The widths of the artifact fields holding a header field of `w` bits:
/// `[w]` up to 128 bits, else parts of 128 bits, most significant first, the
/// first taking the remainder (so every part boundary sits on a byte
/// boundary of the field's low end).
pub(super) fn wide_parts(w: u16) -> Vec<u16> {
    let max = a::MAX_WIDTH;
    if w <= max {
        return vec![w];
    }
    let n = w.div_ceil(max);
    let first = w - (n - 1) * max;
    std::iter::once(first)
        .chain(std::iter::repeat_n(max, usize::from(n - 1)))
        .collect()
}

impl Lower<'_> {
    /// The artifact fields (name, width, signed) of a header field `name` of
    /// type `ty`: one, or 128-bit parts of a field over 128 bits (most
    /// significant first, the first taking the remainder, named `f$0`,
    /// `f$1`...), or a struct's fields in order.
    fn header_slots(&self, name: &str, ty: &Type, out: &mut Vec<(String, u16, bool)>) {
        if let Type::Struct(s) = ty {
            for f in &self.m.structs[*s].fields {
                self.header_slots(&format!("{name}.{}", f.name), &f.ty, out);
            }
            return;
        }
        let (w, signed) = self.scalar_of(ty).unwrap_or((1, false));
        let parts = wide_parts(w);
        if parts.len() == 1 {
            out.push((name.to_string(), w, signed));
        } else {
            for (k, pw) in parts.into_iter().enumerate() {
                out.push((format!("{name}${k}"), pw, false));
            }
        }
    }

    /// How many artifact fields a header field of type `ty` takes.
    fn slot_count(&self, ty: &Type) -> usize {
        match ty {
            Type::Struct(s) => self.m.structs[*s]
                .fields
                .iter()
                .map(|f| self.slot_count(&f.ty))
                .sum(),
            _ => wide_parts(self.m.scalar_width(ty).unwrap_or(1)).len(),
        }
    }

    /// The index among header `s`'s artifact fields of its IR field `i`
    /// (fields over 128 bits and struct fields take several).
    pub(super) fn art_field(&self, s: Handle<ir::StructDef>, i: usize) -> usize {
        self.m.structs[s]
            .fields
            .iter()
            .take(i)
            .map(|f| self.slot_count(&f.ty))
            .sum()
    }

    /// The place of IR field `i` of header instance `h` (of type `s`): a
    /// scalar slot, or a struct of the slots of a struct-typed field.
    pub(super) fn header_field_place(
        &self,
        h: HeaderId,
        s: Handle<ir::StructDef>,
        i: usize,
    ) -> Option<Place> {
        let ty = self.m.structs[s].fields.get(i)?.ty.clone();
        let mut k = self.art_field(s, i);
        self.slots_place(h, &ty, &mut k)
    }

    fn slots_place(&self, h: HeaderId, ty: &Type, k: &mut usize) -> Option<Place> {
        if let Type::Struct(s) = ty {
            let mut ps = Vec::new();
            for f in &self.m.structs[*s].fields {
                ps.push(self.slots_place(h, &f.ty, k)?);
            }
            return Some(Place::Struct(ps));
        }
        let n = self.slot_count(ty);
        let fs = self.headers[h.index()].fields.get(*k..*k + n)?;
        let p = if n == 1 {
            Place::Scalar(fs[0].field)
        } else {
            Place::Wide(fs.iter().map(|f| f.field).collect())
        };
        *k += n;
        Some(p)
    }

    /// The number of artifact fields of header `s`.
    pub(super) fn art_field_count(&self, s: Handle<ir::StructDef>) -> usize {
        self.art_field(s, self.m.structs[s].fields.len())
    }
}
