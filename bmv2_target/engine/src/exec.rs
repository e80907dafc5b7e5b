//! Statement execution: parsers, controls, actions, tables, deparsers and
//! extern calls over one [`PacketState`].
//!
//! The executor is a plain recursive walk over pre-resolved [`S`] trees. It
//! never allocates on the packet path (scratch buffers live in the
//! [`Runtime`]) and formats nothing unless per-packet tracing is on.

use netsparse_externs::artifact::HashAlgo;
use netsparse_externs::hash;

use super::code::{Block, CTrans, Code, DataItem, HRef, NextS, VarbitInfo, LV, P, S, X};
use super::eval::{eval, eval_vx, resolve_dyn, store_lv};
use super::runtime::{DigestMsg, ExternRt, Runtime, MAX_CHECKSUM_BYTES, MAX_DIGESTS};
use super::state::{read_bits, BitWriter, CloneReq, PacketState};

/// `error.PacketTooShort`.
pub const ERR_PACKET_TOO_SHORT: u32 = 1;
/// `error.NoMatch`.
pub const ERR_NO_MATCH: u32 = 2;
/// `error.StackOutOfBounds`.
pub const ERR_STACK_OUT_OF_BOUNDS: u32 = 3;
/// `error.HeaderTooShort`.
pub const ERR_HEADER_TOO_SHORT: u32 = 4;
/// `error.ParserTimeout`.
pub const ERR_PARSER_TIMEOUT: u32 = 5;
/// `error.ParserInvalidArgument`.
pub const ERR_PARSER_INVALID_ARGUMENT: u32 = 6;

/// State transitions a parser may take for one packet before it is stopped
/// with `ParserTimeout` (guards against programs that loop without
/// consuming input).
pub const MAX_PARSER_STEPS: u32 = 4096;

/// Iterations one execution of a loop may run before the engine stops it
/// (counted in `EngineStats::loop_limits`; the packet goes on after the
/// loop). BMv2 has no such bound: a loop that never ends hangs it.
pub const MAX_LOOP_ITERATIONS: u32 = 1 << 20;

/// How a statement finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Continue with the next statement.
    Next,
    /// `return`: leave the innermost inlined block / action / control.
    Return,
    /// `exit`: leave the top-level control.
    Exit,
    /// Parser reject with this error (`None`: explicit `reject`, error unchanged).
    Reject(Option<u32>),
    /// `break`: leave the innermost loop.
    Break,
    /// `continue`: go on with the innermost loop's updates.
    Continue,
}

/// How a parser finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseEnd {
    /// Reached `accept`.
    Accept,
    /// Rejected; the error (if one was raised).
    Reject(Option<u32>),
}

/// The executor: program code, the mutable runtime and, in a deparser, the
/// output buffer.
pub struct Exec<'a> {
    /// The program.
    pub code: &'a Code,
    /// Its mutable state.
    pub rt: &'a mut Runtime,
    /// Where `emit` writes (deparser only).
    pub emit: Option<&'a mut Vec<u8>>,
    /// The target's implementation of target-specific primitives.
    pub hook: Option<&'a mut dyn crate::target::TargetPrims>,
}

impl Exec<'_> {
    /// Run a block. Plain assignments run inline; everything else goes
    /// through [`Exec::stmt`]. An `if` that ends the block continues with
    /// the branch taken in place (its flow is the block's), and an empty
    /// branch is skipped: fewer nested calls, the same statements run.
    #[inline]
    pub fn block(&mut self, st: &mut PacketState, mut b: &[S]) -> Flow {
        'tail: loop {
            let n = b.len();
            self.rt.ops += n as u64;
            if self.rt.ops > self.rt.op_limit {
                return Flow::Exit;
            }
            for (i, s) in b.iter().enumerate() {
                match s {
                    S::Copy(d, s) => {
                        let v = st.n[*s as usize];
                        st.n[*d as usize] = v;
                    }
                    S::SetConst(d, v) => st.n[*d as usize] = *v,
                    S::SetN(i, e) => {
                        let v = eval(e, self.code, st);
                        st.n[*i as usize] = v;
                    }
                    S::Emit(HRef::Static(h)) => {
                        if st.valid.get(*h as usize) {
                            if let Some(out) = self.emit.as_deref_mut() {
                                emit_header(self.code, st, *h as usize, out);
                            }
                        }
                    }
                    S::If(x) => {
                        let (c, then, otherwise) = &**x;
                        let body = if eval(c, self.code, st) != 0 {
                            then
                        } else {
                            otherwise
                        };
                        if i + 1 == n {
                            b = body;
                            continue 'tail;
                        }
                        if !body.is_empty() {
                            let f = self.block(st, body);
                            if f != Flow::Next {
                                return f;
                            }
                        }
                    }
                    S::Apply(t) => {
                        let f = self.apply(st, *t);
                        if f != Flow::Next {
                            return f;
                        }
                    }
                    S::Prim(p) => {
                        let f = match &**p {
                            P::Target(t) => self.target(st, t),
                            p => self.prim(st, p),
                        };
                        if f != Flow::Next {
                            return f;
                        }
                    }
                    S::Inlined(b) => match self.block(st, b) {
                        Flow::Next | Flow::Return => {}
                        f => return f,
                    },
                    _ => {
                        let f = self.stmt(st, s);
                        if f != Flow::Next {
                            return f;
                        }
                    }
                }
            }
            return Flow::Next;
        }
    }

    /// Run a top-level control: `return` and `exit` both end it.
    pub fn control(&mut self, st: &mut PacketState, id: u32) {
        let code = self.code;
        let c = &code.controls[id as usize];
        if self.rt.trace {
            tracing::info!("control {}", c.name);
        }
        let _ = self.block(st, &c.body);
    }

    /// Run a parser from its start state over `st.frame`.
    pub fn parser(&mut self, st: &mut PacketState, id: u32) -> ParseEnd {
        let code = self.code;
        let p = &code.parsers[id as usize];
        if self.rt.trace {
            tracing::info!("parser {}", p.name);
        }
        let mut state = p.start;
        let mut steps = 0u32;
        loop {
            steps += 1;
            if steps > MAX_PARSER_STEPS {
                self.rt.stats.parser_timeouts += 1;
                return ParseEnd::Reject(Some(ERR_PARSER_TIMEOUT));
            }
            let s = &p.states[state as usize];
            if self.rt.trace {
                tracing::info!("parser state {} (cursor {} bits)", s.name, st.cursor);
            }
            for stmt in s.body.iter() {
                let f = match stmt {
                    S::Extract(HRef::Static(h)) => match self.extract_fast(st, *h) {
                        Some(f) => f,
                        None => self.stmt(st, stmt),
                    },
                    _ => self.stmt(st, stmt),
                };
                if st.short.get() {
                    return ParseEnd::Reject(Some(ERR_PACKET_TOO_SHORT));
                }
                if let Flow::Reject(e) = f {
                    return ParseEnd::Reject(e);
                }
            }
            let next = match &s.trans {
                CTrans::Direct(n) => *n,
                CTrans::Select1 { key, cases } => {
                    let k = eval(key, code, st);
                    if st.short.get() {
                        return ParseEnd::Reject(Some(ERR_PACKET_TOO_SHORT));
                    }
                    match cases.iter().find(|(v, m, _)| k & m == *v) {
                        Some((_, _, n)) => *n,
                        None => return ParseEnd::Reject(Some(ERR_NO_MATCH)),
                    }
                }
                CTrans::Select { keys, cases } => {
                    self.rt.keybuf.clear();
                    for k in keys.iter() {
                        let v = eval_vx(k, code, st);
                        self.rt.keybuf.push(v);
                    }
                    if st.short.get() {
                        return ParseEnd::Reject(Some(ERR_PACKET_TOO_SHORT));
                    }
                    let kb = &self.rt.keybuf;
                    match cases
                        .iter()
                        .find(|c| c.sets.iter().zip(kb).all(|(s, &k)| s.matches(k)))
                    {
                        Some(c) => c.next,
                        None => return ParseEnd::Reject(Some(ERR_NO_MATCH)),
                    }
                }
            };
            match next {
                NextS::State(n) => state = n,
                NextS::Accept => return ParseEnd::Accept,
                NextS::Reject => return ParseEnd::Reject(None),
            }
        }
    }

    /// Resolve a header reference (for statements).
    #[inline]
    fn href(&self, st: &PacketState, h: &HRef) -> Option<usize> {
        match h {
            HRef::Static(h) => Some(*h as usize),
            HRef::Dyn(r) => resolve_dyn(r, self.code, st),
        }
    }

    /// Run one statement.
    #[inline(never)]
    pub fn stmt(&mut self, st: &mut PacketState, s: &S) -> Flow {
        let code = self.code;
        match s {
            S::Copy(d, s) => {
                let v = st.n[*s as usize];
                st.n[*d as usize] = v;
            }
            S::SetConst(d, v) => st.n[*d as usize] = *v,
            S::SetN(i, e) => {
                let v = eval(e, code, st);
                st.n[*i as usize] = v;
            }
            S::SetW(i, e) => {
                let v = eval(e, code, st);
                st.w[*i as usize] = v;
            }
            S::Set(lv, e) => {
                let v = eval_vx(e, code, st);
                store_lv(lv, code, st, v);
            }
            S::SetValid(h, valid) => {
                if let Some(h) = self.href(st, h) {
                    st.valid.set(h, *valid);
                }
            }
            S::CopyHeader(d, s) => {
                if let (Some(d), Some(s)) = (self.href(st, d), self.href(st, s)) {
                    copy_header(code, st, d, s);
                }
            }
            S::Push(stack, count) => push_front(code, st, *stack, *count),
            S::Pop(stack, count) => pop_front(code, st, *stack, *count),
            S::If(b) => {
                let (c, then, otherwise) = &**b;
                return if eval(c, code, st) != 0 {
                    self.block(st, then)
                } else {
                    self.block(st, otherwise)
                };
            }
            S::Switch(sw) => {
                let v = eval_vx(&sw.sel, code, st);
                let body = match sw.labels.iter().find(|(l, _)| *l == v) {
                    Some((_, i)) => &sw.bodies[*i as usize],
                    None => &sw.default,
                };
                return self.block(st, body);
            }
            S::Apply(t) => return self.apply(st, *t),
            S::Call(a) => return self.action(st, *a),
            S::Inlined(b) => {
                return match self.block(st, b) {
                    Flow::Return => Flow::Next,
                    f => f,
                }
            }
            S::Return => return Flow::Return,
            S::Exit => return Flow::Exit,
            S::Break => return Flow::Break,
            S::Continue => return Flow::Continue,
            S::Loop(l) => return self.run_loop(st, l),
            S::Extract(h) => return self.extract(st, h, None),
            S::ExtractVarbit(h, bits) => {
                let bits = eval(bits, code, st);
                return self.extract(st, h, Some(bits));
            }
            S::Advance(e) => {
                let bits = eval(e, code, st);
                let end = (st.cursor as u64).saturating_add(bits);
                if end > (st.frame.len() as u64) * 8 {
                    return Flow::Reject(Some(ERR_PACKET_TOO_SHORT));
                }
                st.cursor = end as usize;
            }
            S::Verify(c, err) => {
                if eval(c, code, st) == 0 {
                    return Flow::Reject(Some(*err));
                }
            }
            S::Emit(h) => {
                if let Some(h) = self.href(st, h) {
                    if st.valid.get(h) {
                        if let Some(out) = self.emit.as_deref_mut() {
                            emit_header(code, st, h, out);
                        }
                    }
                }
            }
            S::Prim(p) => return self.prim(st, p),
        }
        Flow::Next
    }

    /// Run a loop: `(cond, body, updates)`.
    fn run_loop(&mut self, st: &mut PacketState, l: &(X<u64>, Block, Block)) -> Flow {
        let (cond, body, updates) = l;
        let mut n = 0u32;
        while eval(cond, self.code, st) != 0 {
            if n == MAX_LOOP_ITERATIONS {
                self.rt.stats.loop_limits += 1;
                if self.rt.trace {
                    tracing::warn!(
                        "loop stopped after {MAX_LOOP_ITERATIONS} iterations (loop_limits)"
                    );
                }
                break;
            }
            n += 1;
            match self.block(st, body) {
                Flow::Next | Flow::Continue => {}
                Flow::Break => break,
                f => return f,
            }
            match self.block(st, updates) {
                Flow::Next | Flow::Continue | Flow::Break => {}
                f => return f,
            }
        }
        Flow::Next
    }

    /// Run an action body (`return` ends the action).
    #[inline]
    pub fn action(&mut self, st: &mut PacketState, a: u32) -> Flow {
        let code = self.code;
        match self.block(st, &code.actions[a as usize].body) {
            Flow::Return => Flow::Next,
            f => f,
        }
    }

    /// `packet.extract(h)` of a known header at a byte boundary with enough
    /// bytes left and tracing off: the common case, inline. `None` means
    /// "take the general path".
    #[inline(always)]
    fn extract_fast(&mut self, st: &mut PacketState, h: u32) -> Option<Flow> {
        let hi = &self.code.headers[h as usize];
        let bits = hi.bit_width as usize;
        let cursor = st.cursor;
        if self.rt.trace || cursor % 8 != 0 || cursor + bits > st.frame.len() * 8 {
            return None;
        }
        let PacketState { frame, n, w, .. } = st;
        hi.plan.extract(frame, cursor / 8, n, w);
        st.valid.set(h as usize, true);
        st.cursor = cursor + bits;
        Some(Flow::Next)
    }

    /// `packet.extract(h)`, or `packet.extract(h, var_bits)` of a header
    /// with a varbit field.
    #[inline(never)]
    fn extract(&mut self, st: &mut PacketState, h: &HRef, var_bits: Option<u64>) -> Flow {
        let code = self.code;
        let (hid, next_of) = match h {
            HRef::Static(h) => (*h as usize, None),
            HRef::Dyn(r) => match resolve_dyn(r, code, st) {
                Some(h) => (
                    h,
                    matches!(r.sel, super::code::Sel::Next).then_some(r.stack),
                ),
                None => return Flow::Reject(Some(ERR_STACK_OUT_OF_BOUNDS)),
            },
        };
        let hi = &code.headers[hid];
        let mut bits = hi.bit_width as usize;
        let mut var_len = 0usize;
        if let (Some(vb), Some(n)) = (&hi.varbit, var_bits) {
            if n > u64::from(vb.max) {
                return Flow::Reject(Some(ERR_HEADER_TOO_SHORT));
            }
            if n % 8 != 0 {
                return Flow::Reject(Some(ERR_PARSER_INVALID_ARGUMENT));
            }
            var_len = n as usize;
            bits += var_len;
        }
        if st.cursor + bits > st.frame.len() * 8 {
            if self.rt.trace {
                tracing::info!(
                    "extract {}: packet too short ({} bits needed at bit {}, {} available)",
                    hi.name,
                    bits,
                    st.cursor,
                    st.frame.len() * 8
                );
            }
            return Flow::Reject(Some(ERR_PACKET_TOO_SHORT));
        }
        let base = st.cursor;
        if base % 8 == 0 {
            let PacketState { frame, n, w, .. } = st;
            hi.plan.extract(frame, base / 8, n, w);
        } else {
            for f in hi.fields.iter() {
                let v = read_bits(&st.frame, base + f.bit_off as usize, f.width);
                st.store_raw(f.loc, v);
            }
        }
        if let Some(vb) = &hi.varbit {
            store_varbit(st, vb, base + hi.bit_width as usize, var_len);
        }
        st.valid.set(hid, true);
        st.cursor += bits;
        if let Some(stack) = next_of {
            let ni = code.stacks[stack as usize].next_index as usize;
            st.n[ni] += 1;
        }
        if self.rt.trace {
            let vals: Vec<String> = hi
                .fields
                .iter()
                .map(|f| format!("{:#x}", st.load(f.loc)))
                .collect();
            tracing::info!("extracted {}: [{}]", hi.name, vals.join(", "));
        }
        Flow::Next
    }

    /// Apply a table.
    #[inline(never)]
    fn apply(&mut self, st: &mut PacketState, t: u32) -> Flow {
        let code = self.code;
        let ct = &code.tables[t as usize];
        // Keys on the stack (up to 4), else in the reusable buffer.
        let mut small = [0u128; 4];
        let mut big = std::mem::take(&mut self.rt.keybuf);
        let nk = ct.keys.len();
        let keys: &[u128] = if nk <= small.len() {
            for (slot, k) in small.iter_mut().zip(ct.keys.iter()) {
                *slot = eval_vx(k, code, st);
            }
            &small[..nk]
        } else {
            big.clear();
            for k in ct.keys.iter() {
                big.push(eval_vx(k, code, st));
            }
            &big
        };
        let action = self.lookup(st, t, keys);
        self.rt.keybuf = big;
        self.action(st, action)
    }

    /// Look table `t` up with `keys`: write the action data, the direct
    /// counter and meter, the `hit` and `action_run` slots; the action to
    /// run (the caller runs it). Native code calls this too.
    #[inline]
    pub(crate) fn lookup(&mut self, st: &mut PacketState, t: u32, keys: &[u128]) -> u32 {
        let code = self.code;
        let ct = &code.tables[t as usize];
        let rt = &mut *self.rt;
        let tr = &rt.tables[t as usize];
        let found = tr.lookup(keys, &mut rt.scratch);
        let (action, hit) = match found.and_then(|h| tr.entry(h).map(|e| (h, e))) {
            Some((_, e)) => {
                write_args(code, st, e.action, &e.args);
                (e.action, true)
            }
            None => {
                write_args(code, st, tr.default_action, &tr.default_args);
                (tr.default_action, false)
            }
        };
        if rt.trace {
            let keys: Vec<String> = keys.iter().map(|k| format!("{k:#x}")).collect();
            let args: Vec<String> = code.actions[action as usize]
                .params
                .iter()
                .map(|(loc, _)| format!("{:#x}", st.load(*loc)))
                .collect();
            tracing::info!(
                "table {}: key [{}] {} -> {}({})",
                ct.name,
                keys.join(", "),
                match found {
                    Some(h) => format!("hit entry {h}"),
                    None => "miss".to_owned(),
                },
                code.actions[action as usize].name,
                args.join(", ")
            );
        }
        st.direct_color = None;
        if let Some(h) = found.filter(|_| hit) {
            let len = st.frame.len() as u32;
            let now = rt.now;
            let tr = &mut rt.tables[t as usize];
            let dm = tr.direct_meter;
            let counted = tr.direct_counter.is_some();
            if let Some(e) = tr.entry_mut(h) {
                if counted {
                    e.counter.packets = e.counter.packets.wrapping_add(1);
                    e.counter.bytes = e.counter.bytes.wrapping_add(u64::from(len));
                }
                if let (Some((m, _)), Some(meter)) = (dm, e.meter.as_deref_mut()) {
                    st.direct_color = Some((m, meter.execute(now, len).as_u8()));
                }
            }
        }
        ct.hit.set(st, u64::from(hit));
        ct.action_run.set(st, u64::from(action));
        action
    }

    /// Pack `data` (most significant first, right-aligned in whole bytes)
    /// into the runtime's hash buffer.
    fn pack(&mut self, st: &PacketState, data: &super::code::Data) {
        let code = self.code;
        let buf = &mut self.rt.hashbuf;
        buf.clear();
        match data {
            super::code::Data::Plan(p) => p.emit(st, buf),
            super::code::Data::General(items) => {
                // A varbit adds its current length (whole bytes, capped at its maximum).
                let vbytes = |h: u32| {
                    code.headers[h as usize].varbit.as_ref().map_or(0, |vb| {
                        (st.n[vb.len as usize].min(u64::from(vb.max)) / 8) as usize
                    })
                };
                let total: usize = items
                    .iter()
                    .map(|it| match it {
                        DataItem::Value(_, w) => usize::from(*w),
                        DataItem::Varbit(h) => 8 * vbytes(*h),
                    })
                    .sum();
                let lead = (total.div_ceil(8) * 8 - total) as u32;
                let mut w = BitWriter::new(buf, lead);
                for it in items.iter() {
                    match it {
                        DataItem::Value(x, width) => w.put(eval_vx(x, code, st), *width),
                        DataItem::Varbit(h) => {
                            if let Some(vb) = &code.headers[*h as usize].varbit {
                                for k in (0..vbytes(*h)).rev() {
                                    w.put(u128::from(varbit_byte(st, vb, k)), 8);
                                }
                            }
                        }
                    }
                }
                w.finish();
            }
        }
    }

    /// Hash `data` (and the payload when `with_payload`) with `algo`.
    #[inline]
    fn hash_data(
        &mut self,
        st: &PacketState,
        data: &super::code::Data,
        algo: HashAlgo,
        with_payload: bool,
    ) -> u64 {
        if let (super::code::Data::Plan(p), false) = (data, with_payload) {
            if algo != HashAlgo::Random {
                let mut buf = [0u8; 8 * super::layout::MAX_CHUNKS];
                if let Some(n) = p.fill(st, &mut buf) {
                    return hash::compute(algo, &buf[..n]);
                }
            }
        }
        self.pack(st, data);
        if with_payload {
            let off = st.payload_off.min(st.frame.len());
            self.rt.hashbuf.extend_from_slice(&st.frame[off..]);
        }
        self.digest_buf(algo)
    }

    /// Compute `algo` over the packed buffer.
    fn digest_buf(&mut self, algo: HashAlgo) -> u64 {
        match algo {
            HashAlgo::Random => self.rt.rng.next_u64(),
            a => hash::compute(a, &self.rt.hashbuf),
        }
    }

    /// An extern call.
    #[inline(never)]
    fn prim(&mut self, st: &mut PacketState, p: &P) -> Flow {
        let code = self.code;
        match p {
            P::MarkToDrop => {
                code.v1.egress_spec.set(st, 511);
                code.v1.mcast_grp.set(st, 0);
            }
            P::RegRead { reg, dst, index } => {
                let i = eval(index, code, st);
                let v = match &self.rt.externs[*reg as usize] {
                    ExternRt::Register(r) => r.read(i).ok(),
                    _ => None,
                };
                let v = v.unwrap_or_else(|| {
                    self.rt.stats.extern_index_out_of_range += 1;
                    0
                });
                store_lv(dst, code, st, v);
            }
            P::RegWrite { reg, index, value } => {
                let i = eval(index, code, st);
                let v = eval_vx(value, code, st);
                let ok = match &mut self.rt.externs[*reg as usize] {
                    ExternRt::Register(r) => r.write(i, v).is_ok(),
                    _ => false,
                };
                if !ok {
                    self.rt.stats.extern_index_out_of_range += 1;
                }
            }
            P::Count { counter, index } => {
                let i = eval(index, code, st);
                let len = st.frame.len() as u32;
                let ok = match &mut self.rt.externs[*counter as usize] {
                    ExternRt::Counter(c) => c.count(i, len).is_ok(),
                    _ => false,
                };
                if !ok {
                    self.rt.stats.extern_index_out_of_range += 1;
                }
            }
            P::Meter { meter, index, dst } => {
                let i = eval(index, code, st);
                let len = st.frame.len() as u32;
                let now = self.rt.now;
                let color = match &mut self.rt.externs[*meter as usize] {
                    ExternRt::Meter(m) => m.execute(i, now, len).ok(),
                    _ => None,
                };
                match color {
                    Some(c) => store_lv(dst, code, st, u128::from(c.as_u8())),
                    None => self.rt.stats.extern_index_out_of_range += 1,
                }
            }
            P::ReadDirectMeter { meter, dst } => {
                if let Some((m, color)) = st.direct_color {
                    if m == *meter {
                        store_lv(dst, code, st, u128::from(color));
                    }
                }
            }
            P::CountDirect => {}
            P::Hash {
                dst,
                algo,
                base,
                data,
                max,
            } => {
                let base = eval_vx(base, code, st) as u64;
                let max = eval_vx(max, code, st) as u64;
                let h = self.hash_data(st, data, *algo, false);
                let h = if max == 0 { h } else { h % max };
                store_lv(dst, code, st, u128::from(base.wrapping_add(h)));
            }
            P::VerifyChecksum {
                cond,
                data,
                checksum,
                checksum_width,
                algo,
                with_payload,
            } => {
                if eval(cond, code, st) != 0 {
                    let got = u128::from(self.hash_data(st, data, *algo, *with_payload))
                        & super::word::mask128(*checksum_width);
                    let want = eval_vx(checksum, code, st);
                    if got != want {
                        code.v1.checksum_error.set(st, 1);
                        if self.rt.trace {
                            tracing::info!(
                                "verify_checksum: mismatch (packet has {want:#x}, computed {got:#x})"
                            );
                        }
                    }
                }
            }
            P::UpdateChecksum {
                cond,
                data,
                dst,
                algo,
                with_payload,
            } => {
                if eval(cond, code, st) != 0 {
                    let v = self.hash_data(st, data, *algo, *with_payload);
                    store_lv(dst, code, st, u128::from(v));
                }
            }
            P::Random { dst, lo, hi } => {
                let lo = eval_vx(lo, code, st) as u64;
                let hi = eval_vx(hi, code, st) as u64;
                let v = self.rt.rng.range_inclusive(lo, hi);
                store_lv(dst, code, st, u128::from(v));
            }
            P::Digest {
                receiver,
                name,
                data,
            } => {
                self.rt.stats.digests += 1;
                let msg = DigestMsg {
                    receiver: eval_vx(receiver, code, st),
                    name: name.clone(),
                    fields: data
                        .iter()
                        .map(|(n, x)| (n.clone(), eval_vx(x, code, st)))
                        .collect(),
                };
                tracing::info!(
                    "digest {} to receiver {}: {}",
                    msg.name,
                    msg.receiver,
                    msg.fields
                        .iter()
                        .map(|(n, v)| format!("{n}={v:#x}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                if self.rt.digests.len() >= MAX_DIGESTS {
                    self.rt.digests.pop_front();
                    self.rt.stats.digests_dropped += 1;
                }
                self.rt.digests.push_back(msg);
            }
            P::LogMsg { parts, args } => {
                self.rt.stats.log_msgs += 1;
                if self.rt.trace || tracing::enabled!(tracing::Level::INFO) {
                    let mut text = String::new();
                    for (i, part) in parts.iter().enumerate() {
                        text.push_str(part);
                        if let Some(a) = args.get(i) {
                            text.push_str(&eval_vx(a, code, st).to_string());
                        }
                    }
                    tracing::info!("log_msg: {text}");
                }
            }
            P::Clone {
                kind,
                session,
                list,
            } => {
                let session = eval_vx(session, code, st);
                st.fx.clone = Some(CloneReq {
                    kind: *kind,
                    session: u32::try_from(session).unwrap_or(u32::MAX),
                    list: *list,
                });
            }
            P::Resubmit { list } => st.fx.resubmit = Some(*list),
            P::Recirculate { list } => st.fx.recirculate = Some(*list),
            P::Truncate { length } => {
                let l = eval_vx(length, code, st);
                st.fx.truncate = Some(u32::try_from(l).unwrap_or(u32::MAX));
            }
            P::Assert { cond, assume } => {
                if eval(cond, code, st) == 0 {
                    self.rt.stats.assertions_failed += 1;
                    st.fx.assert_failed = true;
                    tracing::warn!(
                        "{} failed: the packet is dropped",
                        if *assume { "assume" } else { "assert" }
                    );
                    return Flow::Exit;
                }
            }
            P::ChecksumClear { ext } => match &mut self.rt.externs[*ext as usize] {
                ExternRt::Checksum { buf, .. } => buf.clear(),
                ExternRt::InternetChecksum { sum } => *sum = 0,
                _ => {}
            },
            P::ChecksumUpdate {
                ext,
                data,
                subtract,
            } => {
                self.pack(st, data);
                let rt = &mut *self.rt;
                match &mut rt.externs[*ext as usize] {
                    ExternRt::Checksum { buf, .. } => {
                        if buf.len() + rt.hashbuf.len() > MAX_CHECKSUM_BYTES {
                            rt.stats.checksum_overflows += 1;
                        } else {
                            buf.extend_from_slice(&rt.hashbuf);
                        }
                    }
                    ExternRt::InternetChecksum { sum } => {
                        *sum = hash::psa_internet_checksum(*sum, &rt.hashbuf, *subtract);
                    }
                    _ => {}
                }
            }
            P::ChecksumGet { ext, dst, state } => {
                let v = match &self.rt.externs[*ext as usize] {
                    ExternRt::Checksum { algo, buf } => hash::compute(*algo, buf),
                    ExternRt::InternetChecksum { sum } if *state => u64::from(*sum),
                    ExternRt::InternetChecksum { sum } => u64::from(!*sum),
                    _ => 0,
                };
                store_lv(dst, code, st, u128::from(v));
            }
            P::ChecksumSetState { ext, value } => {
                let v = eval(value, code, st) as u16;
                if let ExternRt::InternetChecksum { sum } = &mut self.rt.externs[*ext as usize] {
                    *sum = v;
                }
            }
            P::Target(t) => return self.target(st, t),
        }
        Flow::Next
    }

    /// A target-specific primitive: evaluate the operands, call the target,
    /// store its value. Without a target every call stores 0.
    #[inline(never)]
    fn target(&mut self, st: &mut PacketState, t: &super::code::TargetP) -> Flow {
        let code = self.code;
        let mut vals = [0u128; 4];
        for (v, x) in vals.iter_mut().zip(t.args.iter()) {
            *v = eval_vx(x, code, st);
        }
        let n = t.args.len().min(vals.len());
        self.target_with(st, t, &vals[..n])
    }

    /// Call target primitive `t` with its operands' values `vals` and store
    /// its value (native code evaluates the operands itself and calls this).
    #[inline]
    pub(crate) fn target_with(
        &mut self,
        st: &mut PacketState,
        t: &super::code::TargetP,
        vals: &[u128],
    ) -> Flow {
        use crate::target::{TargetCall, TargetResult};
        let code = self.code;
        let r = match (
            self.hook.as_deref_mut(),
            code.target_prims.get(t.prim as usize),
        ) {
            (Some(h), Some(prim)) => h.call(
                st,
                TargetCall {
                    prim,
                    args: vals,
                    ops: self.rt.ops,
                },
            ),
            _ => TargetResult::Value(0),
        };
        match r {
            TargetResult::Done => Flow::Next,
            TargetResult::Value(v) => {
                match &t.dst {
                    Some(LV::Slot(loc, w)) => st.store(*loc, *w, v),
                    Some(d) => store_lv(d, code, st, v),
                    None => {}
                }
                Flow::Next
            }
            TargetResult::Exit => Flow::Exit,
        }
    }
}

/// Write an action's data into its parameter slots.
#[inline]
fn write_args(code: &Code, st: &mut PacketState, action: u32, args: &[u128]) {
    for ((loc, _), v) in code.actions[action as usize].params.iter().zip(args) {
        st.store_raw(*loc, *v);
    }
}

/// Append header `h`'s bytes to `out`.
#[inline]
pub fn emit_header(code: &Code, st: &PacketState, h: usize, out: &mut Vec<u8>) {
    let hi = &code.headers[h];
    hi.plan.emit(st, out);
    if let Some(vb) = &hi.varbit {
        // Extraction only stores whole bytes; a length set otherwise is capped.
        let bytes = (st.n[vb.len as usize].min(u64::from(vb.max)) / 8) as usize;
        out.extend((0..bytes).rev().map(|k| varbit_byte(st, vb, k)));
    }
}

/// Store the `len` bits at frame bit `base` into varbit `vb`, right-aligned
/// across its parts, and its length.
#[inline]
fn store_varbit(st: &mut PacketState, vb: &VarbitInfo, base: usize, len: usize) {
    for (m, loc) in vb.parts.iter().rev().enumerate() {
        // This part holds value bits [lo, lo + 128), bit 0 the last on the wire.
        let lo = 128 * m;
        let v = if lo >= len {
            0
        } else {
            let hi = (lo + 128).min(len);
            read_bits(&st.frame, base + len - hi, (hi - lo) as u16)
        };
        st.store_raw(*loc, v);
    }
    st.n[vb.len as usize] = len as u64;
}

/// Byte `k` (0 = least significant) of varbit `vb`'s value.
#[inline]
pub(crate) fn varbit_byte(st: &PacketState, vb: &VarbitInfo, k: usize) -> u8 {
    let m = k / 16;
    match vb.parts.len().checked_sub(m + 1) {
        Some(p) => (st.load(vb.parts[p]) >> (8 * (k % 16))) as u8,
        None => 0,
    }
}

/// Copy every field and the validity of header `s` to header `d` (same layout).
#[inline(never)]
fn copy_header(code: &Code, st: &mut PacketState, d: usize, s: usize) {
    if d == s {
        return;
    }
    let (df, sf) = (&code.headers[d].fields, &code.headers[s].fields);
    for (a, b) in df.iter().zip(sf.iter()) {
        let v = st.load(b.loc);
        st.store_raw(a.loc, v);
    }
    if let (Some(a), Some(b)) = (&code.headers[d].varbit, &code.headers[s].varbit) {
        for (pa, pb) in a.parts.iter().zip(b.parts.iter()) {
            let v = st.load(*pb);
            st.store_raw(*pa, v);
        }
        st.n[a.len as usize] = st.n[b.len as usize];
    }
    let v = st.valid.get(s);
    st.valid.set(d, v);
}

/// `stack.push_front(count)`.
#[inline(never)]
fn push_front(code: &Code, st: &mut PacketState, stack: u32, count: u32) {
    let s = &code.stacks[stack as usize];
    let n = s.elements.len();
    let c = (count as usize).min(n);
    for i in (c..n).rev() {
        copy_header(code, st, s.elements[i] as usize, s.elements[i - c] as usize);
    }
    for &e in &s.elements[..c] {
        st.valid.set(e as usize, false);
    }
    let ni = s.next_index as usize;
    st.n[ni] = (st.n[ni] + c as u64).min(n as u64);
}

/// `stack.pop_front(count)`.
#[inline(never)]
fn pop_front(code: &Code, st: &mut PacketState, stack: u32, count: u32) {
    let s = &code.stacks[stack as usize];
    let n = s.elements.len();
    let c = (count as usize).min(n);
    for i in 0..n - c {
        copy_header(code, st, s.elements[i] as usize, s.elements[i + c] as usize);
    }
    for &e in &s.elements[n - c..] {
        st.valid.set(e as usize, false);
    }
    let ni = s.next_index as usize;
    st.n[ni] = st.n[ni].saturating_sub(c as u64);
}
