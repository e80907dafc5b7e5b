//! Read and write sets: which field slots (and header validity bits) each
//! expression, statement, action and table reads and writes, following
//! action calls, header and stack operations and extern primitives. The
//! dependency graphs of `graph.rs` are made of these sets.

use super::*;

/// Slot ids: fields are `0..fields.len()`; a header's validity bit is `fields.len() + header`.
pub(super) type Set = BTreeSet<u32>;

pub(super) struct Effects<'a> {
    art: &'a Artifact,
    /// Per action: (reads, writes).
    actions: Vec<(Set, Set)>,
}

impl<'a> Effects<'a> {
    pub(super) fn new(art: &'a Artifact) -> Effects<'a> {
        let mut fx = Effects {
            art,
            actions: vec![(Set::new(), Set::new()); art.actions.len()],
        };
        // Actions only call actions defined before them (specialisations call
        // their base), but iterate to a fixed point to be safe.
        for _ in 0..4 {
            let mut changed = false;
            for i in 0..art.actions.len() {
                let (mut r, mut w) = (Set::new(), Set::new());
                fx.stmts(&art.actions[i].body, &mut r, &mut w);
                if r != fx.actions[i].0 || w != fx.actions[i].1 {
                    fx.actions[i] = (r, w);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        fx
    }

    fn validity(&self, h: a::HeaderId) -> u32 {
        self.art.fields.len() as u32 + h.0
    }

    fn header_ids(&self, r: &HeaderRef) -> Vec<a::HeaderId> {
        match r {
            HeaderRef::Static { header } => vec![*header],
            HeaderRef::Index { stack, .. }
            | HeaderRef::Next { stack }
            | HeaderRef::Last { stack } => self
                .art
                .stacks
                .get(stack.index())
                .map(|s| s.elements.clone())
                .unwrap_or_default(),
        }
    }

    fn href_reads(&self, r: &HeaderRef, reads: &mut Set) {
        match r {
            HeaderRef::Static { .. } => {}
            HeaderRef::Index { stack, index } => {
                self.expr(index, reads);
                if let Some(s) = self.art.stacks.get(stack.index()) {
                    reads.insert(s.next_index.0);
                }
            }
            HeaderRef::Next { stack } | HeaderRef::Last { stack } => {
                if let Some(s) = self.art.stacks.get(stack.index()) {
                    reads.insert(s.next_index.0);
                }
            }
        }
    }

    fn header_fields(&self, r: &HeaderRef, set: &mut Set, validity: bool) {
        for h in self.header_ids(r) {
            if let Some(hd) = self.art.headers.get(h.index()) {
                set.extend(hd.fields.iter().map(|f| f.field.0));
            }
            if validity {
                set.insert(self.validity(h));
            }
        }
    }

    fn stack_field(&self, r: &HeaderRef, i: u32, set: &mut Set) {
        for h in self.header_ids(r) {
            if let Some(f) = self
                .art
                .headers
                .get(h.index())
                .and_then(|hd| hd.fields.get(i as usize))
            {
                set.insert(f.field.0);
            }
        }
    }

    pub(super) fn expr(&self, e: &a::Expr, reads: &mut Set) {
        match e {
            a::Expr::Const { .. } | a::Expr::Lookahead { .. } => {}
            a::Expr::Field { field } => {
                reads.insert(field.0);
            }
            a::Expr::VarbitField { header } => {
                if let Some(hd) = self.art.headers.get(header.index()) {
                    reads.extend(hd.fields.iter().map(|f| f.field.0));
                    reads.extend(hd.varbit_len.map(|l| l.0));
                }
            }
            a::Expr::StackField {
                header,
                field_index,
            } => {
                self.href_reads(header, reads);
                self.stack_field(header, *field_index, reads);
            }
            a::Expr::IsValid { header } => {
                self.href_reads(header, reads);
                for h in self.header_ids(header) {
                    reads.insert(self.validity(h));
                }
            }
            a::Expr::Unary { arg, .. } | a::Expr::Slice { arg, .. } | a::Expr::Cast { arg, .. } => {
                self.expr(arg, reads)
            }
            a::Expr::Binary { lhs, rhs, .. } | a::Expr::Concat { lhs, rhs, .. } => {
                self.expr(lhs, reads);
                self.expr(rhs, reads);
            }
            a::Expr::Mux {
                cond,
                then,
                otherwise,
                ..
            } => {
                self.expr(cond, reads);
                self.expr(then, reads);
                self.expr(otherwise, reads);
            }
        }
    }

    fn lvalue(&self, l: &LValue, reads: &mut Set, writes: &mut Set) {
        match l {
            LValue::Field { field } | LValue::Slice { field, .. } => {
                writes.insert(field.0);
            }
            LValue::StackField {
                header,
                field_index,
            } => {
                self.href_reads(header, reads);
                self.stack_field(header, *field_index, writes);
            }
        }
    }

    fn stmts(&self, stmts: &[a::Stmt], r: &mut Set, w: &mut Set) {
        for s in stmts {
            self.stmt(s, r, w);
        }
    }

    fn stmt(&self, s: &a::Stmt, r: &mut Set, w: &mut Set) {
        match s {
            a::Stmt::Assign { dst, src } => {
                self.expr(src, r);
                self.lvalue(dst, r, w);
            }
            a::Stmt::SetValid { header } | a::Stmt::SetInvalid { header } => {
                self.href_reads(header, r);
                for h in self.header_ids(header) {
                    w.insert(self.validity(h));
                }
            }
            a::Stmt::CopyHeader { dst, src } => {
                self.href_reads(src, r);
                self.href_reads(dst, r);
                self.header_fields(src, r, true);
                self.header_fields(dst, w, true);
            }
            a::Stmt::PushFront { stack, .. } | a::Stmt::PopFront { stack, .. } => {
                if let Some(st) = self.art.stacks.get(stack.index()) {
                    for h in &st.elements {
                        let hr = HeaderRef::Static { header: *h };
                        self.header_fields(&hr, r, true);
                        self.header_fields(&hr, w, true);
                    }
                    r.insert(st.next_index.0);
                    w.insert(st.next_index.0);
                }
            }
            a::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond, r);
                self.stmts(then, r, w);
                self.stmts(otherwise, r, w);
            }
            a::Stmt::Switch {
                selector,
                cases,
                default,
            } => {
                self.expr(selector, r);
                for c in cases {
                    self.stmts(&c.body, r, w);
                }
                self.stmts(default, r, w);
            }
            a::Stmt::ApplyTable { table } => {
                if let Some(t) = self.art.tables.get(table.index()) {
                    for k in &t.keys {
                        self.expr(&k.expr, r);
                    }
                    for ta in &t.actions {
                        if let Some((ar, aw)) = self.actions.get(ta.action.index()) {
                            r.extend(ar);
                            w.extend(aw);
                        }
                    }
                    w.insert(t.hit.0);
                    w.insert(t.action_run.0);
                }
            }
            a::Stmt::CallAction { action } => {
                if let Some((ar, aw)) = self.actions.get(action.index()) {
                    r.extend(ar);
                    w.extend(aw);
                }
            }
            a::Stmt::Inlined { body, .. } => self.stmts(body, r, w),
            a::Stmt::Return | a::Stmt::Exit | a::Stmt::Break | a::Stmt::Continue => {}
            a::Stmt::Loop {
                cond,
                body,
                updates,
            } => {
                self.expr(cond, r);
                self.stmts(body, r, w);
                self.stmts(updates, r, w);
            }
            a::Stmt::Extract { header } | a::Stmt::ExtractVarbit { header, .. } => {
                if let a::Stmt::ExtractVarbit { bits, .. } = s {
                    self.expr(bits, r);
                }
                self.href_reads(header, r);
                self.header_fields(header, w, true);
                if let HeaderRef::Next { stack } = header {
                    if let Some(st) = self.art.stacks.get(stack.index()) {
                        w.insert(st.next_index.0);
                    }
                }
            }
            a::Stmt::Advance { bits } => self.expr(bits, r),
            a::Stmt::Verify { cond, .. } => self.expr(cond, r),
            a::Stmt::Emit { header } => {
                self.href_reads(header, r);
                self.header_fields(header, r, true);
            }
            a::Stmt::Prim(p) => self.prim(p, r, w),
        }
    }

    fn prim(&self, p: &a::Prim, r: &mut Set, w: &mut Set) {
        use a::Prim::*;
        match p {
            MarkToDrop | CountDirect { .. } | CacheInsert { .. } | ChecksumClear { .. } => {}
            ChecksumUpdate { data, .. } => {
                for d in data {
                    self.expr(d, r);
                }
            }
            ChecksumGet { dst, .. } => self.lvalue(dst, r, w),
            ChecksumSetState { value, .. } => self.expr(value, r),
            RegisterRead { dst, index, .. } => {
                self.expr(index, r);
                self.lvalue(dst, r, w);
            }
            RegisterWrite { index, value, .. } => {
                self.expr(index, r);
                self.expr(value, r);
            }
            Count { index, .. } => self.expr(index, r),
            ExecuteMeter { index, dst, .. } => {
                self.expr(index, r);
                self.lvalue(dst, r, w);
            }
            ReadDirectMeter { dst, .. } | CacheLookup { dst, .. } => self.lvalue(dst, r, w),
            Hash {
                dst,
                base,
                data,
                max,
                ..
            } => {
                self.expr(base, r);
                self.expr(max, r);
                for d in data {
                    self.expr(d, r);
                }
                self.lvalue(dst, r, w);
            }
            VerifyChecksum {
                cond,
                data,
                checksum,
                ..
            } => {
                self.expr(cond, r);
                self.expr(checksum, r);
                for d in data {
                    self.expr(d, r);
                }
            }
            UpdateChecksum {
                cond, data, dst, ..
            } => {
                self.expr(cond, r);
                for d in data {
                    self.expr(d, r);
                }
                self.lvalue(dst, r, w);
            }
            Random { dst, lo, hi } => {
                self.expr(lo, r);
                self.expr(hi, r);
                self.lvalue(dst, r, w);
            }
            Digest { receiver, data, .. } => {
                self.expr(receiver, r);
                for (_, d) in data {
                    self.expr(d, r);
                }
            }
            LogMsg { args, .. } => {
                for d in args {
                    self.expr(d, r);
                }
            }
            Clone { session, .. } => self.expr(session, r),
            Resubmit { .. } | Recirculate { .. } => {}
            Truncate { length } => self.expr(length, r),
            Assert { cond } | Assume { cond } => self.expr(cond, r),
            IdxFilterSet { idx } => self.expr(idx, r),
            IdxFilterTest { idx, dst } | PendingContains { idx, dst } => {
                self.expr(idx, r);
                self.lvalue(dst, r, w);
            }
            PendingInsert { idx, req_id } => {
                self.expr(idx, r);
                self.lvalue(req_id, r, w);
            }
            PendingComplete {
                tid,
                req_id,
                idx,
                prop_len,
                dst,
            } => {
                for e in [tid, req_id, idx, prop_len] {
                    self.expr(e, r);
                }
                self.lvalue(dst, r, w);
            }
            HostRead { idx, prop_len, dst } => {
                self.expr(idx, r);
                self.expr(prop_len, r);
                self.lvalue(dst, r, w);
            }
            HostWrite { tid, req_id, idx } => {
                for e in [tid, req_id, idx] {
                    self.expr(e, r);
                }
            }
            Spin { args, dst, .. } | Coll { args, dst, .. } => {
                for e in args {
                    self.expr(e, r);
                }
                if let Some(d) = dst {
                    self.lvalue(d, r, w);
                }
            }
        }
    }

    /// Reads and writes of a table's actions (not its hidden slots).
    pub(super) fn table_actions(&self, t: &a::Table) -> (Set, Set) {
        let (mut r, mut w) = (Set::new(), Set::new());
        for ta in &t.actions {
            if let Some((ar, aw)) = self.actions.get(ta.action.index()) {
                r.extend(ar);
                w.extend(aw);
            }
        }
        (r, w)
    }
}
