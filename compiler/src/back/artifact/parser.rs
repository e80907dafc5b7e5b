//! Parsers: states, select transitions and their keysets.

use netsparse_externs::artifact::{self as a, Next};

use crate::ir::{self, Callee, Handle, InstanceKind, StmtKind, Target, Type};

use super::*;

impl Lower<'_> {
    // ----- parsers ---------------------------------------------------------------------

    pub(super) fn parser(&mut self, idx: usize, p: Handle<ir::Parser>) -> Option<a::Parser> {
        let mut states = Vec::new();
        let ends = (Next::Accept, Next::Reject);
        let start = self.parser_states(idx, p, &mut states, ends, String::new())?;
        Some(a::Parser {
            name: self.insts[idx].path.clone(),
            states,
            start,
        })
    }

    /// Lower the states of parser `p` (instance `idx`) into `states`, where
    /// `accept` and `reject` go to `ends` and state names get `prefix`. A
    /// state that applies a sub-parser is split there: the part before copies
    /// the arguments in and jumps to the sub-parser's (inlined) start; the
    /// sub-parser's accept goes to a continuation state that copies out and
    /// runs the rest, its reject to a state that copies out and rejects (so
    /// headers extracted before the reject are kept, as in a flat parser).
    /// Returns the entry state (`$init` when there are local initializers).
    pub(super) fn parser_states(
        &mut self,
        idx: usize,
        p: Handle<ir::Parser>,
        states: &mut Vec<a::ParserState>,
        ends: (Next, Next),
        prefix: String,
    ) -> Option<a::StateId> {
        let (accept, reject) = ends;
        let pr = &self.m.parsers[p];
        let placeholder = |name: String| a::ParserState {
            name,
            body: Vec::new(),
            transition: a::Transition::Direct { next: Next::Reject },
        };
        // Reserve one id per source state first: transitions may go forward.
        let init = (!pr.local_inits.is_empty()).then(|| {
            states.push(placeholder(format!("{prefix}$init")));
            a::StateId(u32_of(states.len() - 1))
        });
        let base = states.len();
        for s in &pr.states {
            states.push(placeholder(format!("{prefix}{}", s.name)));
        }
        let target = |t: Target| match t {
            Target::Accept => accept,
            Target::Reject => reject,
            Target::State(i) => Next::State(a::StateId(u32_of(base + i))),
        };
        let entry = a::StateId(u32_of(base + pr.start));
        if let Some(id) = init {
            let body = self.block(idx, &pr.local_inits);
            states[id.index()].body = body;
            states[id.index()].transition = a::Transition::Direct {
                next: Next::State(entry),
            };
        }
        for (si, s) in pr.states.iter().enumerate() {
            let transition = match &s.transition {
                ir::Transition::Direct(t) => a::Transition::Direct { next: target(*t) },
                ir::Transition::Select { keys, cases } => {
                    let mut ks = Vec::new();
                    for k in keys {
                        let mut pre = Vec::new();
                        let e = self.expr(idx, k, &mut pre)?;
                        if !pre.is_empty() {
                            self.inexpressible("a select expression with a call in it", k.span);
                            return None;
                        }
                        ks.push(e);
                    }
                    let cases = cases
                        .iter()
                        .map(|(sets, t)| a::SelectCase {
                            keysets: sets
                                .iter()
                                .map(|k| match *k {
                                    ir::Keyset::Any => a::KeySet::Any,
                                    ir::Keyset::Value(value) => a::KeySet::Value { value },
                                    ir::Keyset::Mask(value, mask) => {
                                        a::KeySet::Mask { value, mask }
                                    }
                                    ir::Keyset::Range(lo, hi) => a::KeySet::Range { lo, hi },
                                })
                                .collect(),
                            next: target(*t),
                        })
                        .collect();
                    a::Transition::Select { keys: ks, cases }
                }
            };
            // Split the body at each sub-parser application.
            let mut cur = base + si;
            let mut pending: Vec<ir::Stmt> = Vec::new();
            let mut part = 0;
            for st in &s.body.stmts {
                let StmtKind::Call(call) = &st.kind else {
                    pending.push(st.clone());
                    continue;
                };
                let Callee::ApplyParser(i) = call.callee else {
                    pending.push(st.clone());
                    continue;
                };
                let Some(InstRef::Control(sub)) = self.lookup_instance(idx, i) else {
                    return None;
                };
                let InstanceKind::Parser(sp) = self.m.instances[i].kind else {
                    return None;
                };
                let mut body = self.block(idx, &pending);
                pending.clear();
                let mut outs = Vec::new();
                for (pv, arg) in self.m.parsers[sp].params.clone().iter().zip(&call.args) {
                    let ty = self.m.vars[*pv].ty.clone();
                    if matches!(ty, Type::Extern(..)) {
                        continue; // packet_in: the one packet being parsed
                    }
                    let place = self.var_place(sub, *pv);
                    self.copy_in(idx, &place, &ty, arg, &mut body, &mut outs)?;
                }
                part += 1;
                states.push(placeholder(format!("{prefix}{}$after{part}", s.name)));
                let cont = states.len() - 1;
                states.push(placeholder(format!("{prefix}{}$reject{part}", s.name)));
                let rej = states.len() - 1;
                let sub_prefix = format!("{prefix}{}.", self.m.instances[i].name);
                let sub_ends = (
                    Next::State(a::StateId(u32_of(cont))),
                    Next::State(a::StateId(u32_of(rej))),
                );
                let sub_entry = self.parser_states(sub, sp, states, sub_ends, sub_prefix)?;
                states[cur].body = body;
                states[cur].transition = a::Transition::Direct {
                    next: Next::State(sub_entry),
                };
                let mut copy_back = Vec::new();
                self.copy_out(&outs, &mut copy_back);
                states[rej].body = copy_back.clone();
                states[rej].transition = a::Transition::Direct { next: reject };
                states[cont].body = copy_back;
                cur = cont;
            }
            let rest = self.block(idx, &pending);
            states[cur].body.extend(rest);
            states[cur].transition = transition;
        }
        // Local initializers run first, each time the parser is entered.
        Some(init.unwrap_or(entry))
    }
}
