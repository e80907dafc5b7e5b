//! Statements and blocks: assignments, conditionals, table applies,
//! header operations (extract, emit, validity, copies), parser transitions,
//! each checked against the kind of block it appears in.

use netsparse_externs::artifact::{Expr, ExternKind, HeaderRef, Next, Stmt};

use crate::code::*;
use crate::error::LoadError;
use crate::state::Loc;
use crate::word::mask128;

use super::cx::*;

impl Cx<'_> {
    pub(super) fn block(&mut self, b: &[Stmt]) -> Result<Block, LoadError> {
        b.iter().map(|s| self.stmt(s)).collect()
    }

    pub(super) fn check_header_pair(&self, d: &HeaderRef, s: &HeaderRef) -> Result<(), LoadError> {
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

    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<S, LoadError> {
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
            Stmt::Loop {
                cond,
                body,
                updates,
            } => {
                let c = self.cond(cond, "loop condition")?;
                S::Loop(Box::new((c, self.block(body)?, self.block(updates)?)))
            }
            Stmt::Break => S::Break,
            Stmt::Continue => S::Continue,
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
            Stmt::ExtractVarbit { header, bits } => {
                self.parser_only("extract")?;
                S::ExtractVarbit(self.href(header)?, self.index(bits)?)
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

    pub(super) fn parser_only(&self, what: &str) -> Result<(), LoadError> {
        if self.ctx != Ctx::Parser {
            return Err(self.invalid(format!("{what} outside a parser")));
        }
        Ok(())
    }

    pub(super) fn extern_of(
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

    pub(super) fn data(&mut self, data: &[Expr]) -> Result<Data, LoadError> {
        let items: Vec<DataItem> = data
            .iter()
            .map(|e| match e {
                Expr::VarbitField { header } => {
                    let h = header.index();
                    if self.a.headers.get(h).and_then(|h| h.varbit_len).is_none() {
                        return Err(self.invalid("varbit data item of a header without one"));
                    }
                    Ok(DataItem::Varbit(h as u32))
                }
                _ => {
                    let t = self.expr(e)?;
                    Ok(DataItem::Value(t.vx, t.width))
                }
            })
            .collect::<Result<_, LoadError>>()?;
        let slots: Option<Vec<(Loc, u16)>> = items
            .iter()
            .map(|it| match it {
                DataItem::Value(VX::N(X::Slot(i)), w) => Some((Loc::N(*i), *w)),
                DataItem::Value(VX::W(X::Slot(i)), w) => Some((Loc::W(*i), *w)),
                _ => None,
            })
            .collect();
        Ok(match slots {
            Some(s) => {
                let total: u32 = s.iter().map(|(_, w)| u32::from(*w)).sum();
                let lead = (8 - total % 8) % 8;
                Data::Plan(crate::layout::Plan::new(&s, lead))
            }
            None => Data::General(items.into_boxed_slice()),
        })
    }

    pub(super) fn list(
        &mut self,
        fields: &[netsparse_externs::artifact::FieldId],
    ) -> Result<u32, LoadError> {
        let locs: Box<[Loc]> = fields
            .iter()
            .map(|f| self.field(*f).map(|f| f.loc))
            .collect::<Result<_, _>>()?;
        self.lists.push(locs);
        Ok((self.lists.len() - 1) as u32)
    }

    pub(super) fn next(&self, n: &Next, states: usize) -> Result<NextS, LoadError> {
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
