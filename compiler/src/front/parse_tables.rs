//! Building the AST of what parsers and controls hold: parser states and
//! their transitions (`select` keysets), actions, and tables with their
//! keys, action lists, properties and entries.

use super::*;

impl Builder<'_> {
    pub(super) fn parser_state(&self, p: P<'_>) -> R<ParserState> {
        let span = self.span(&p);
        let (annotations, rest) = self.split_annotations(p)?;
        let mut name = None;
        let mut body = Vec::new();
        let mut transition = None;
        for k in rest {
            match k.as_rule() {
                Rule::name => name = Some(self.ident(k)),
                Rule::stmt => body.push(self.stmt(k)?),
                Rule::transition => transition = Some(self.transition(k)?),
                _ => {}
            }
        }
        Ok(ParserState {
            annotations,
            name: self.named(name, span)?,
            body,
            transition,
            span,
        })
    }

    fn transition(&self, p: P<'_>) -> R<Transition> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let t = self.need(&mut it, span)?;
        if t.as_rule() == Rule::prefixed_name {
            let ts = self.span(&t);
            let mut it = self.kids(t).filter(|k| k.as_rule() == Rule::name);
            return Ok(Transition::Direct(self.ident(self.need(&mut it, ts)?)));
        }
        let sspan = self.span(&t);
        let mut exprs = Vec::new();
        let mut cases = Vec::new();
        for k in self.kids(t) {
            match k.as_rule() {
                Rule::expr_list => {
                    for e in self.kids(k) {
                        exprs.push(self.expr(e)?);
                    }
                }
                Rule::select_case => {
                    let cs = self.span(&k);
                    let mut it = self.kids(k);
                    let keysets = self.keyset(self.need(&mut it, cs)?)?;
                    let next = self.ident(self.need(&mut it, cs)?);
                    cases.push(SelectCase {
                        keysets,
                        next,
                        span: cs,
                    });
                }
                _ => {}
            }
        }
        Ok(Transition::Select {
            exprs,
            cases,
            span: sspan,
        })
    }

    /// A `keyset` pair: one keyset, or several for a tuple.
    fn keyset(&self, p: P<'_>) -> R<Vec<Keyset>> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let k = self.need(&mut it, span)?;
        if k.as_rule() == Rule::tuple_keyset {
            let mut out = Vec::new();
            for s in self.kids(k) {
                out.push(self.simple_keyset(s)?);
            }
            Ok(out)
        } else {
            Ok(vec![self.simple_keyset(k)?])
        }
    }

    fn simple_keyset(&self, p: P<'_>) -> R<Keyset> {
        let span = self.span(&p);
        let mut parts = p.into_inner();
        let first = self.need(&mut parts, span)?;
        match first.as_rule() {
            Rule::kw_default => return Ok(Keyset::Default(span)),
            Rule::dontcare => return Ok(Keyset::DontCare(span)),
            _ => {}
        }
        let a = self.expr(first)?;
        match parts.next() {
            None => Ok(Keyset::Expr(a)),
            Some(op) => {
                let is_mask = op.as_rule() == Rule::p_mask;
                let b = self.expr(self.need(&mut parts, span)?)?;
                Ok(if is_mask {
                    Keyset::Mask(a, b)
                } else {
                    Keyset::Range(a, b)
                })
            }
        }
    }

    pub(super) fn action_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<ActionDecl> {
        let span = self.span(&p);
        let mut it = self.kids(p);
        let name = self.ident(self.need(&mut it, span)?);
        let params = self.params(self.need(&mut it, span)?)?;
        let body = self.block(self.need(&mut it, span)?)?;
        Ok(ActionDecl {
            annotations,
            name,
            params,
            body,
            span,
        })
    }

    pub(super) fn table_decl(&self, p: P<'_>, annotations: Vec<Annotation>) -> R<TableDecl> {
        let span = self.span(&p);
        let mut name = None;
        let mut properties = Vec::new();
        for k in self.kids(p) {
            let ps = self.span(&k);
            let is_const = has(&k, Rule::kw_const);
            match k.as_rule() {
                Rule::name => name = Some(self.ident(k)),
                Rule::key_prop => {
                    let mut elems = Vec::new();
                    for e in self.kids(k) {
                        let es = self.span(&e);
                        let mut anns = Vec::new();
                        let mut expr = None;
                        let mut kind = None;
                        for x in self.kids(e) {
                            match x.as_rule() {
                                Rule::expr => expr = Some(self.expr(x)?),
                                Rule::name => kind = Some(self.ident(x)),
                                Rule::annotation => anns.push(self.annotation(x)?),
                                _ => {}
                            }
                        }
                        let Some(expr) = expr else {
                            return Err(self.stop(Diagnostic::error(
                                "E0099",
                                "internal error: key without expression",
                                es,
                            )));
                        };
                        elems.push(KeyElement {
                            annotations: anns,
                            expr,
                            match_kind: self.named(kind, es)?,
                            span: es,
                        });
                    }
                    properties.push(TableProperty::Key(elems, ps));
                }
                Rule::actions_prop => {
                    let mut refs = Vec::new();
                    for a in self.kids(k) {
                        refs.push(self.action_ref(a)?);
                    }
                    properties.push(TableProperty::Actions(refs, ps));
                }
                Rule::default_action_prop => {
                    let mut it = self.kids(k);
                    let action = self.action_ref(self.need(&mut it, ps)?)?;
                    properties.push(TableProperty::DefaultAction {
                        action,
                        is_const,
                        span: ps,
                    });
                }
                Rule::entries_prop => {
                    let mut entries = Vec::new();
                    for e in self.kids(k) {
                        entries.push(self.entry(e)?);
                    }
                    properties.push(TableProperty::Entries {
                        entries,
                        is_const,
                        span: ps,
                    });
                }
                Rule::other_prop => {
                    let mut it = self.kids(k);
                    let pname = self.ident(self.need(&mut it, ps)?);
                    let value = self.expr(self.need(&mut it, ps)?)?;
                    properties.push(TableProperty::Other {
                        name: pname,
                        value,
                        is_const,
                        span: ps,
                    });
                }
                _ => {}
            }
        }
        Ok(TableDecl {
            annotations,
            name: self.named(name, span)?,
            properties,
            span,
        })
    }

    fn action_ref(&self, p: P<'_>) -> R<ActionRef> {
        let span = self.span(&p);
        let (annotations, rest) = self.split_annotations(p)?;
        let mut name = None;
        let mut args = None;
        for k in rest {
            match k.as_rule() {
                Rule::prefixed_name => name = Some(self.prefixed_name(k)?),
                Rule::args => args = Some(self.args(k)?),
                _ => {}
            }
        }
        let Some(name) = name else {
            return Err(self.stop(Diagnostic::error(
                "E0099",
                "internal error: action reference without name",
                span,
            )));
        };
        Ok(ActionRef {
            annotations,
            name,
            args,
            span,
        })
    }

    fn entry(&self, p: P<'_>) -> R<TableEntry> {
        let span = self.span(&p);
        let (mut annotations, rest) = self.split_annotations(p)?;
        let mut priority = None;
        let mut keysets = Vec::new();
        let mut action = None;
        for k in rest {
            match k.as_rule() {
                Rule::entry_priority => {
                    let ps = self.span(&k);
                    let mut it = self.kids(k);
                    priority = Some(self.expr(self.need(&mut it, ps)?)?);
                }
                Rule::keyset => keysets = self.keyset(k)?,
                Rule::action_ref => action = Some(self.action_ref(k)?),
                Rule::annotation => annotations.push(self.annotation(k)?),
                _ => {}
            }
        }
        let Some(action) = action else {
            return Err(self.stop(Diagnostic::error(
                "E0099",
                "internal error: entry without action",
                span,
            )));
        };
        Ok(TableEntry {
            annotations,
            priority,
            keysets,
            action,
            span,
        })
    }
}
