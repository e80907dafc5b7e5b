//! Parsers and header layouts to Rust: a parser becomes one function that
//! walks its states in a loop with the interpreter's step limit, and each
//! header that the fast layouts cover gets an extraction and an emission
//! function unrolled from its [`Plan`](crate::layout::Plan) (one
//! big-endian load or store per chunk, one shift and mask per field).

use std::fmt::Write as _;

use crate::code::{CKeySet, CParser, CTrans, NextS};
use crate::exec::{ERR_NO_MATCH, ERR_PACKET_TOO_SHORT, ERR_PARSER_TIMEOUT, MAX_PARSER_STEPS};

use super::expr::line;
use super::stmt::chunk_value;
use super::Gen;

/// The Rust for going to `n`.
fn goto(n: NextS) -> String {
    match n {
        NextS::State(s) => format!("{{ state = {s}; }}"),
        NextS::Accept => "{ return FLOW_NEXT; }".to_owned(),
        NextS::Reject => "{ return FLOW_REJECT_NONE; }".to_owned(),
    }
}

impl Gen<'_> {
    /// The function of parser `id`; its name.
    pub(super) fn parser(&mut self, id: usize, p: &CParser) -> String {
        let name = format!("p{id}");
        let short = format!("return FLOW_REJECT_BASE + {ERR_PACKET_TOO_SHORT};");
        let mut states = String::new();
        for (i, s) in p.states.iter().enumerate() {
            let mut body = String::new();
            for stmt in s.body.iter() {
                // A statement's flow is looked at for a reject only, after
                // the short-packet check (as `Exec::parser` does).
                let code = self.stmt(stmt);
                let f = self.fresh("s");
                self.fns.push(format!(
                    "#[inline(always)]\nunsafe fn {f}(c: *mut NCtx) -> u32 {{\n{code}\n FLOW_NEXT\n}}\n"
                ));
                let _ = writeln!(
                    body,
                    "  {{ let f = {f}(c); if short(c) {{ {short} }} if f >= FLOW_REJECT_NONE {{ return f; }} }}"
                );
            }
            let trans = match &s.trans {
                CTrans::Direct(n) => goto(*n),
                CTrans::Select1 { key, cases } => {
                    let key = self.expr(key);
                    let mut chain = format!("let k: u64 = {key}; if short(c) {{ {short} }} ");
                    for (v, m, n) in cases.iter() {
                        let _ = write!(chain, "if k & {m:#x}u64 == {v:#x}u64 {} else ", goto(*n));
                    }
                    let _ = write!(chain, "{{ return FLOW_REJECT_BASE + {ERR_NO_MATCH}; }}");
                    chain
                }
                CTrans::Select { keys, cases } => {
                    let mut chain = String::new();
                    for (j, k) in keys.iter().enumerate() {
                        let k = self.vx(k);
                        let _ = write!(chain, "let k{j}: u128 = {k}; ");
                    }
                    let _ = write!(chain, "if short(c) {{ {short} }} ");
                    for case in cases.iter() {
                        let conds: Vec<String> = case
                            .sets
                            .iter()
                            .enumerate()
                            .map(|(j, set)| match set {
                                CKeySet::Mask(v, m) => format!("k{j} & {m:#x}u128 == {v:#x}u128"),
                                CKeySet::Range(lo, hi) => {
                                    format!("({lo:#x}u128 <= k{j} && k{j} <= {hi:#x}u128)")
                                }
                            })
                            .collect();
                        let cond = if conds.is_empty() {
                            "true".to_owned()
                        } else {
                            conds.join(" && ")
                        };
                        let _ = write!(chain, "if {cond} {} else ", goto(case.next));
                    }
                    let _ = write!(chain, "{{ return FLOW_REJECT_BASE + {ERR_NO_MATCH}; }}");
                    chain
                }
            };
            let _ = writeln!(states, " {i} => {{\n{body}  {trans}\n }}");
        }
        let mut f = String::new();
        let _ = writeln!(
            f,
            "unsafe extern \"C\" fn {name}(c: *mut NCtx) -> u32 {{\n let mut state: u32 = {};\n let mut steps: u32 = 0;\n loop {{\n  steps += 1;\n  if steps > {MAX_PARSER_STEPS} {{ event(c, EVENT_PARSER_TIMEOUT); return FLOW_REJECT_BASE + {ERR_PARSER_TIMEOUT}; }}\n  match state {{\n{states}  _ => return FLOW_REJECT_NONE,\n  }}\n }}\n}}",
            p.start
        );
        self.fns.push(f);
        name
    }

    /// The extraction (`x{h}`) and emission (`e{h}`) functions of header
    /// `h` (one the fast layouts cover).
    pub(super) fn header_fns(&mut self, h: usize) {
        let hi = &self.code.headers[h];
        let plan = &hi.plan;
        // Extraction: the caller checked that the cursor is at a byte and
        // the header fits.
        let mut x = String::new();
        line(&mut x, " let base = (*c).cursor / 8;");
        let mut pos = 0usize;
        for (i, ch) in plan.chunks.iter().enumerate() {
            let _ = writeln!(x, " let c{i} = load_be(c, base + {pos}, {});", ch.bytes);
            pos += usize::from(ch.bytes);
            for f in ch.simple.iter() {
                let _ = writeln!(
                    x,
                    " st(c, {}, (c{i} >> {}) & {:#x}u64);",
                    f.slot, f.shift, f.mask
                );
            }
            for p in ch.parts.iter() {
                let v = format!("((c{i} >> {}) & {:#x}u64)", p.chunk_shift, p.mask);
                let _ = match (p.wide, p.first) {
                    (true, true) => writeln!(
                        x,
                        " stw(c, {}, ({v} as u128) << {});",
                        p.slot, p.field_shift
                    ),
                    (true, false) => writeln!(
                        x,
                        " stw(c, {s}, ldw(c, {s}) | (({v} as u128) << {}));",
                        p.field_shift,
                        s = p.slot
                    ),
                    (false, true) => writeln!(x, " st(c, {}, {v} << {});", p.slot, p.field_shift),
                    (false, false) => writeln!(
                        x,
                        " st(c, {s}, ld(c, {s}) | ({v} << {}));",
                        p.field_shift,
                        s = p.slot
                    ),
                };
            }
        }
        let _ = writeln!(x, " vset(c, {h}, true);\n (*c).cursor += {};", hi.bit_width);
        self.fns.push(format!(
            "#[inline]\nunsafe fn x{h}(c: *mut NCtx) {{\n{x}}}\n"
        ));
        // Emission: one word per chunk, its bytes the most significant.
        let mut e = String::new();
        let _ = writeln!(e, " reserve(c, {});", plan.bytes);
        for ch in plan.chunks.iter() {
            let value = chunk_value(ch);
            let short = 8 * (8 - u32::from(ch.bytes));
            let _ = writeln!(e, " put(c, ({value}) << {short}, {});", ch.bytes);
        }
        self.fns.push(format!(
            "#[inline]\nunsafe fn e{h}(c: *mut NCtx) {{\n{e}}}\n"
        ));
    }
}
