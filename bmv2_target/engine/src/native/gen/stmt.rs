//! Statements and blocks to Rust. Each [`Block`] becomes a function that
//! counts its statements as the interpreter's `Exec::block` does and
//! returns a flow code; a statement with no native form here (loops,
//! extern calls other than `mark_to_drop`, target primitives and hashes
//! or checksums over plain fields, stack operations, varbits, headers past
//! the first 256 or longer than 64 bytes) is an escape: the interpreter
//! runs it through a callback, on the same packet state.
//!
//! Flows follow `exec.rs` case by case: a block returns the first flow
//! that is not `NEXT`; an inlined block and an action turn `RETURN` into
//! `NEXT`; `if`, `switch` and `apply` pass their branch's flow on.

use std::fmt::Write as _;

use crate::code::{Data, HRef, LV, P, S};
use crate::layout::{Chunk, MAX_CHUNKS};
use crate::state::Loc;
use crate::word::mask128;

use super::expr::line;
use super::Gen;
use crate::native::HASH_ALGOS;

/// Return from the enclosing function when `call`'s flow is not `NEXT`.
fn checked(call: &str) -> String {
    format!("{{ let f = {call}; if f != FLOW_NEXT {{ return f; }} }}")
}

impl Gen<'_> {
    /// The function running block `b` (counted, as `Exec::block`); its name.
    pub(super) fn block(&mut self, b: &[S]) -> String {
        let name = self.fresh("b");
        let mut body = String::new();
        for s in b {
            let code = self.stmt(s);
            line(&mut body, &code);
        }
        let mut f = String::new();
        let _ = writeln!(
            f,
            "#[inline]\nunsafe fn {name}(c: *mut NCtx) -> u32 {{\n if count(c, {}) {{ return FLOW_EXIT; }}\n{body} FLOW_NEXT\n}}",
            b.len()
        );
        self.fns.push(f);
        name
    }

    /// A call running block `b` whose flow the caller handles (`FLOW_NEXT`
    /// for an empty block, which the interpreter skips).
    fn block_call(&mut self, b: &[S]) -> String {
        if b.is_empty() {
            "FLOW_NEXT".to_owned()
        } else {
            format!("{}(c)", self.block(b))
        }
    }

    /// One statement, in a block: Rust statements that return the flow
    /// when it is not `NEXT`.
    pub(super) fn stmt(&mut self, s: &S) -> String {
        self.stats.stmts += 1;
        match s {
            S::Copy(d, s) => format!("st(c, {d}, ld(c, {s}));"),
            S::SetConst(d, v) => format!("st(c, {d}, {v:#x}u64);"),
            S::SetN(i, e) => {
                let e = self.expr(e);
                format!("{{ let v: u64 = {e}; st(c, {i}, v); }}")
            }
            S::SetW(i, e) => {
                let e = self.expr(e);
                format!("{{ let v: u128 = {e}; stw(c, {i}, v); }}")
            }
            S::Set(lv @ (LV::Slot(..) | LV::Slice(..)), e) => {
                let e = self.vx(e);
                format!("{{ let x: u128 = {e}; {} }}", store_lv(lv, "x"))
            }
            S::SetValid(HRef::Static(h), v) if *h < 256 => format!("vset(c, {h}, {v});"),
            S::If(x) => {
                let (cond, then, otherwise) = &**x;
                let cond = self.expr(cond);
                let (t, e) = (self.block_call(then), self.block_call(otherwise));
                checked(&format!("if ({cond}) != 0 {{ {t} }} else {{ {e} }}"))
            }
            S::Switch(sw) => {
                let sel = self.vx(&sw.sel);
                let mut chain = String::new();
                for (label, body) in sw.labels.iter() {
                    let call = self.block_call(&sw.bodies[*body as usize]);
                    let _ = write!(chain, "if v == {label:#x}u128 {{ {call} }} else ");
                }
                let dflt = self.block_call(&sw.default);
                let _ = write!(chain, "{{ {dflt} }}");
                format!("{{ let v: u128 = {sel}; {} }}", checked(&chain))
            }
            S::Apply(t) => {
                let keys: Vec<String> = self.code.tables[*t as usize]
                    .keys
                    .iter()
                    .map(|k| self.vx(k))
                    .collect();
                let n = keys.len();
                format!(
                    "{{ let k: [u128; {n}] = [{}]; let a = apply(c, {t}, &k); {} }}",
                    keys.join(", "),
                    checked("run_action(c, a)")
                )
            }
            S::Call(a) => checked(&format!("a{a}(c)")),
            S::Inlined(b) => {
                let call = self.block_call(b);
                format!(
                    "{{ let f = {call}; if f != FLOW_NEXT && f != FLOW_RETURN {{ return f; }} }}"
                )
            }
            S::Break => "return FLOW_BREAK;".to_owned(),
            S::Continue => "return FLOW_CONTINUE;".to_owned(),
            S::Return => "return FLOW_RETURN;".to_owned(),
            S::Exit => "return FLOW_EXIT;".to_owned(),
            S::Verify(cond, err) => {
                let cond = self.expr(cond);
                format!("if ({cond}) == 0 {{ return FLOW_REJECT_BASE + {err}; }}")
            }
            S::Extract(HRef::Static(h)) if self.fast_header(*h) => {
                let bits = self.code.headers[*h as usize].bit_width;
                let k = self.escape_stmt(s);
                format!(
                    "if (*c).cursor % 8 == 0 && (*c).cursor + {bits} <= (*c).frame_len * 8 {{ x{h}(c); }} else {} ",
                    checked(&format!("esc_stmt(c, {k})"))
                )
            }
            S::Prim(p) if matches!(**p, P::MarkToDrop | P::Target(_)) => self.prim(s, p),
            S::Prim(p) if native_digest(p) => self.digest(p),
            S::Emit(HRef::Static(h)) if self.fast_header(*h) => {
                format!("if vld(c, {h}) && !(*c).out.is_null() {{ e{h}(c); }}")
            }
            // Loops, extern calls, stack and header copies, varbits,
            // dynamic header references, and headers the fast layouts do
            // not cover.
            _ => {
                let k = self.escape_stmt(s);
                format!(
                    "/* {} */ {}",
                    describe(s),
                    checked(&format!("esc_stmt(c, {k})"))
                )
            }
        }
    }

    /// The extern calls with a native form: `mark_to_drop`, and target
    /// primitives (operands evaluated here, the target called back).
    fn prim(&mut self, s: &S, p: &P) -> String {
        match p {
            P::Target(t) => {
                let args: Vec<String> = t.args.iter().take(4).map(|a| self.vx(a)).collect();
                // Listed with the escapes (the callback finds the primitive
                // there) but not counted as one: no interpreter runs.
                let k = self.escape_stmt(s);
                self.stats.escaped_stmts -= 1;
                checked(&format!(
                    "{{ let k: [u128; {}] = [{}]; target(c, {k}, &k) }}",
                    args.len(),
                    args.join(", ")
                ))
            }
            _ => {
                let v1 = &self.code.v1;
                format!(
                    "st(c, {}, {:#x}u64); st(c, {}, 0u64);",
                    v1.egress_spec.idx,
                    511 & v1.egress_spec.mask,
                    v1.mcast_grp.idx
                )
            }
        }
    }

    /// `hash`, `update_checksum` and `verify_checksum` over a layout the
    /// fast path covers, without the payload, with a deterministic
    /// algorithm (the caller checked [`native_digest`]): the data's bytes
    /// built here, one word per chunk as `Plan::fill` builds them, the
    /// digest computed by the engine through a callback, the result stored
    /// here; the interpreter's `Exec::prim` case by case.
    fn digest(&mut self, p: &P) -> String {
        let (data, algo) = match p {
            P::Hash { data, algo, .. }
            | P::UpdateChecksum { data, algo, .. }
            | P::VerifyChecksum { data, algo, .. } => (data, *algo),
            _ => unreachable!("checked by native_digest"),
        };
        let Data::Plan(plan) = data else {
            unreachable!("checked by native_digest")
        };
        let algo = HASH_ALGOS.iter().position(|a| *a == algo).unwrap_or(0);
        let mut fill = String::new();
        for (i, ch) in plan.chunks.iter().enumerate() {
            let short = 8 * (8 - u32::from(ch.bytes));
            let _ = write!(
                fill,
                "put_word(hb.as_mut_ptr(), {}, ({}) << {short}); ",
                8 * i,
                chunk_value(ch)
            );
        }
        let size = 8 * plan.chunks.len().max(1);
        let digest = format!(
            "{{ let mut hb = [0u8; {size}]; {fill}hash(c, {algo}, hb.as_ptr(), {}) }}",
            plan.bytes
        );
        match p {
            P::Hash { dst, base, max, .. } => {
                let (base, max) = (self.vx(base), self.vx(max));
                format!(
                    "{{ let base = ({base}) as u64; let max = ({max}) as u64; let h: u64 = {digest}; let h = if max == 0 {{ h }} else {{ h % max }}; let v: u128 = base.wrapping_add(h) as u128; {} }}",
                    store_lv(dst, "v")
                )
            }
            P::UpdateChecksum { cond, dst, .. } => {
                let cond = self.expr(cond);
                format!(
                    "if ({cond}) != 0 {{ let v: u128 = ({digest}) as u128; {} }}",
                    store_lv(dst, "v")
                )
            }
            P::VerifyChecksum {
                cond,
                checksum,
                checksum_width,
                ..
            } => {
                let cond = self.expr(cond);
                let want = self.vx(checksum);
                let m = mask128(*checksum_width);
                let err = self.code.v1.checksum_error;
                format!(
                    "if ({cond}) != 0 {{ let got: u128 = (({digest}) as u128) & {m:#x}u128; let want: u128 = {want}; if got != want {{ st(c, {}, {:#x}u64); }} }}",
                    err.idx,
                    1 & err.mask
                )
            }
            _ => unreachable!("checked by native_digest"),
        }
    }

    /// Can header `h` be extracted and emitted natively: among the inline
    /// validity bits, no varbit, a fast-path layout?
    pub(super) fn fast_header(&self, h: u32) -> bool {
        let hi = &self.code.headers[h as usize];
        h < 256 && hi.varbit.is_none() && hi.plan.chunks.len() <= MAX_CHUNKS
    }

    /// Register an escaped statement; its index.
    pub(super) fn escape_stmt(&mut self, s: &S) -> u32 {
        self.stmts.push(s as *const S);
        self.stats.escaped_stmts += 1;
        (self.stmts.len() - 1) as u32
    }
}

/// Does `p` have a native form in [`Gen::digest`]: a hash or checksum
/// over a fast-path layout, without the payload, with a deterministic
/// algorithm, into a slot or a slice?
fn native_digest(p: &P) -> bool {
    let (data, algo, dst, with_payload) = match p {
        P::Hash {
            data, algo, dst, ..
        } => (data, algo, Some(dst), false),
        P::UpdateChecksum {
            data,
            algo,
            dst,
            with_payload,
            ..
        } => (data, algo, Some(dst), *with_payload),
        P::VerifyChecksum {
            data,
            algo,
            with_payload,
            ..
        } => (data, algo, None, *with_payload),
        _ => return false,
    };
    let plan = matches!(data, Data::Plan(p) if p.chunks.len() <= MAX_CHUNKS);
    let dst = dst.is_none_or(|d| matches!(d, LV::Slot(..) | LV::Slice(..)));
    plan && dst && !with_payload && HASH_ALGOS.contains(algo)
}

/// A layout chunk's value (right-aligned, big-endian) from the slots, as
/// `Chunk::value` builds it.
pub(super) fn chunk_value(ch: &Chunk) -> String {
    let mut terms: Vec<String> = Vec::new();
    for f in ch.simple.iter() {
        terms.push(format!(
            "((ld(c, {}) & {:#x}u64) << {})",
            f.slot, f.mask, f.shift
        ));
    }
    for p in ch.parts.iter() {
        let v = if p.wide {
            format!("((ldw(c, {}) >> {}) as u64)", p.slot, p.field_shift)
        } else {
            format!("(ld(c, {}) >> {})", p.slot, p.field_shift)
        };
        terms.push(format!("(({v} & {:#x}u64) << {})", p.mask, p.chunk_shift));
    }
    if terms.is_empty() {
        "0u64".to_owned()
    } else {
        terms.join(" | ")
    }
}

/// Store the `u128` variable `v` in a slot (masked to its width) or a
/// slice, as `eval::store_lv` does (assignments, digests); the caller
/// checked that `dst` is not a stack field.
fn store_lv(dst: &LV, v: &str) -> String {
    match dst {
        LV::Slot(loc, w) => {
            let m = mask128(*w);
            format!("{{ let v: u128 = {v} & {m:#x}u128; {} }}", store(*loc, "v"))
        }
        LV::Slice(loc, lo, m) => {
            let keep = !m.wrapping_shl(*lo);
            format!(
                "{{ let old: u128 = {}; let new = (old & {keep:#x}u128) | (({v} & {m:#x}u128) << {lo}); {} }}",
                load(*loc),
                store(*loc, "new")
            )
        }
        LV::Stack(_) => unreachable!("stack fields escape: checked by the callers"),
    }
}

/// A slot read as `u128`.
fn load(loc: Loc) -> String {
    match loc {
        Loc::N(i) => format!("(ld(c, {i}) as u128)"),
        Loc::W(i) => format!("ldw(c, {i})"),
    }
}

/// Store the `u128` variable `v` (already fitting) in a slot.
fn store(loc: Loc, v: &str) -> String {
    match loc {
        Loc::N(i) => format!("st(c, {i}, {v} as u64);"),
        Loc::W(i) => format!("stw(c, {i}, {v});"),
    }
}

/// What an escaped statement is, for a comment in the source.
fn describe(s: &S) -> String {
    let name = match s {
        S::Prim(p) => return format!("extern call {}", prim_name(p)),
        S::Set(..) => "assignment to a stack field",
        S::SetValid(..) => "setValid/setInvalid",
        S::CopyHeader(..) => "header copy",
        S::Push(..) => "push_front",
        S::Pop(..) => "pop_front",
        S::Loop(..) => "loop",
        S::Extract(..) => "extract",
        S::ExtractVarbit(..) => "extract with a varbit",
        S::Advance(..) => "advance",
        S::Emit(..) => "emit",
        _ => "statement",
    };
    name.to_owned()
}

/// The name of an extern call.
fn prim_name(p: &P) -> &'static str {
    match p {
        P::MarkToDrop => "mark_to_drop",
        P::RegRead { .. } => "register.read",
        P::RegWrite { .. } => "register.write",
        P::Count { .. } => "counter.count",
        P::Meter { .. } => "meter.execute",
        P::ReadDirectMeter { .. } => "direct_meter.read",
        P::CountDirect => "direct_counter.count",
        P::Hash { .. } => "hash",
        P::VerifyChecksum { .. } => "verify_checksum",
        P::UpdateChecksum { .. } => "update_checksum",
        P::Random { .. } => "random",
        P::Digest { .. } => "digest",
        P::LogMsg { .. } => "log_msg",
        P::Clone { .. } => "clone",
        P::Resubmit { .. } => "resubmit",
        P::Recirculate { .. } => "recirculate",
        P::Truncate { .. } => "truncate",
        P::Assert { .. } => "assert",
        P::ChecksumClear { .. } => "Checksum.clear",
        P::ChecksumUpdate { .. } => "Checksum.update",
        P::ChecksumGet { .. } => "Checksum.get",
        P::ChecksumSetState { .. } => "InternetChecksum.set_state",
        P::Target(_) => "a target primitive",
    }
}
