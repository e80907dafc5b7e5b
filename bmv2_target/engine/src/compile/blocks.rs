//! Actions, parsers (states, select transitions, a fast path for one
//! narrow key of value/mask cases) and controls (deparsers marked as such),
//! then the target's extra blocks as controls after the artifact's.

use netsparse_externs::artifact::{KeySet, Package, Transition, V1Switch};

use super::*;
use crate::code::*;
use crate::error::LoadError;
use crate::word::mask128;

use super::cx::*;
use super::tables::compile_action;

/// Actions, by action id.
pub(super) fn actions(cx: &mut Cx<'_>) -> Result<Vec<CAction>, LoadError> {
    let a = cx.a;
    let mut actions = Vec::with_capacity(a.actions.len());
    for act in &a.actions {
        cx.place = format!("action {}", act.name);
        actions.push(compile_action(cx, act)?);
    }

    Ok(actions)
}

/// Parsers, by parser id.
pub(super) fn parsers(cx: &mut Cx<'_>) -> Result<Vec<CParser>, LoadError> {
    let a = cx.a;
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

    Ok(parsers)
}

/// Controls, by control id, then the `extra` blocks.
pub(super) fn controls(
    cx: &mut Cx<'_>,
    pkg: Option<&V1Switch>,
    extra: &[ExtraBlock<'_>],
) -> Result<Vec<CControl>, LoadError> {
    let a = cx.a;
    let ns_deparsers = match &a.package {
        Package::NetSparseSwitch(ns) if pkg.is_none() => [
            Some(ns.ingress_deparser.index()),
            Some(ns.egress_deparser.index()),
        ],
        Package::Psa(p) if pkg.is_none() => [
            Some(p.ingress_deparser.index()),
            Some(p.egress_deparser.index()),
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

    Ok(controls)
}
