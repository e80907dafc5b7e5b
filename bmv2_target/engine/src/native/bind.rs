//! Running a generated library on the engine's state: the context a call
//! is given, the callbacks through which the library reaches the
//! interpreter (escapes, table lookups, output, events), and the checks
//! that make a call safe.
//!
//! While a native function runs, the packet state and the runtime are
//! reached only through raw pointers taken from the caller's exclusive
//! borrows: the library reads and writes slots through the context, and a
//! callback rebuilds the interpreter's `Exec` from the same pointers. No
//! reference is held across a callback on either side.

use std::ffi::c_void;
use std::sync::Arc;

use crate::code::{Code, TargetP, P, S};
use crate::eval::eval;
use crate::exec::{Exec, Flow};
use crate::runtime::Runtime;
use crate::state::PacketState;
use crate::target::TargetPrims;

use super::abi::{
    BlockFn, Callbacks, NCtx, EVENT_PARSER_TIMEOUT, FLOW_BREAK, FLOW_CONTINUE, FLOW_EXIT,
    FLOW_NEXT, FLOW_REJECT_BASE, FLOW_REJECT_NONE, FLOW_RETURN,
};
use super::gen::{EscExpr, GenStats};
use super::toolchain::Lib;
use super::HASH_ALGOS;
use netsparse_externs::hash;

/// A program's native code, bound to the [`Code`] it was generated from.
pub struct Native {
    lib: Lib,
    /// The code the escapes point into (kept alive by this `Arc`).
    code: Arc<Code>,
    stmts: Box<[*const S]>,
    /// By the same index: the target primitive of each escaped statement
    /// that is one (null for the others), so the target callback reaches
    /// it in one load.
    targets: Box<[*const TargetP]>,
    exprs: Box<[EscExpr]>,
    stats: GenStats,
    hash: u64,
}

// SAFETY: the escapes point into `code`, which is immutable and kept alive
// by the `Arc` this value holds; the library's table is an immutable
// static of a library that is never unloaded.
unsafe impl Send for Native {}
// SAFETY: as above; nothing here is mutated after construction.
unsafe impl Sync for Native {}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Native")
            .field("hash", &format_args!("{:#018x}", self.hash))
            .field("stats", &self.stats)
            .finish()
    }
}

/// The engine's side of one native call, reached from the callbacks
/// through [`NCtx::env`].
struct Env<'a> {
    code: &'a Code,
    rt: *mut Runtime,
    st: *mut PacketState,
    /// The deparser's output (null elsewhere).
    out: *mut Vec<u8>,
    hook: Option<*mut (dyn TargetPrims + 'a)>,
    native: &'a Native,
}

static CALLBACKS: Callbacks = Callbacks {
    stmt: cb_stmt,
    expr: cb_expr,
    apply: cb_apply,
    target: cb_target,
    hash: cb_hash,
    grow: cb_grow,
    event: cb_event,
};

impl Native {
    /// Bind `lib`, generated from `code` with these escapes.
    pub(crate) fn new(
        lib: Lib,
        code: Arc<Code>,
        stmts: Vec<*const S>,
        exprs: Vec<EscExpr>,
        stats: GenStats,
        hash: u64,
    ) -> Native {
        let targets = stmts
            .iter()
            .map(|&s| {
                // SAFETY: the escapes point into `code`, alive here.
                match unsafe { &*s } {
                    S::Prim(p) => match &**p {
                        P::Target(t) => &**t as *const TargetP,
                        _ => std::ptr::null(),
                    },
                    _ => std::ptr::null(),
                }
            })
            .collect();
        Native {
            lib,
            code,
            targets,
            stmts: stmts.into_boxed_slice(),
            exprs: exprs.into_boxed_slice(),
            stats,
            hash,
        }
    }

    /// How much of the program runs natively.
    pub fn stats(&self) -> GenStats {
        self.stats
    }

    /// The library's cache key.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// May this code run on `code` and `st`? (The same code it was
    /// generated from, a state sized for it.)
    #[inline]
    pub(crate) fn fits(&self, code: &Arc<Code>, st: &PacketState) -> bool {
        Arc::ptr_eq(&self.code, code) && st.n.len() >= code.n_narrow && st.w.len() >= code.n_wide
    }

    /// Parser `id`'s function.
    #[inline]
    pub(crate) fn parser(&self, id: u32) -> Option<BlockFn> {
        let vt = self.lib.vt;
        if id < vt.n_parsers {
            // SAFETY: `parsers` holds `n_parsers` functions (the library's
            // static array, checked against this program at load).
            Some(unsafe { *vt.parsers.add(id as usize) })
        } else {
            None
        }
    }

    /// Control `id`'s function.
    #[inline]
    pub(crate) fn control(&self, id: u32) -> Option<BlockFn> {
        let vt = self.lib.vt;
        if id < vt.n_controls {
            // SAFETY: as in `parser`.
            Some(unsafe { *vt.controls.add(id as usize) })
        } else {
            None
        }
    }

    /// Run `f` on `st` with the runtime `rt`, the deparser output `out`
    /// and the target's primitives `hook`; returns the flow code. The
    /// caller checked [`Native::fits`] for `st` and that tracing is off.
    #[inline]
    pub(crate) fn call(
        &self,
        f: BlockFn,
        rt: &mut Runtime,
        st: &mut PacketState,
        out: Option<&mut Vec<u8>>,
        hook: Option<&mut dyn TargetPrims>,
    ) -> u32 {
        let out: *mut Vec<u8> = match out {
            Some(o) => o,
            None => std::ptr::null_mut(),
        };
        let rt: *mut Runtime = rt;
        let st: *mut PacketState = st;
        let mut env = Env {
            code: &self.code,
            rt,
            st,
            out,
            hook: hook.map(|h| h as *mut (dyn TargetPrims + '_)),
            native: self,
        };
        // SAFETY: `st` and `rt` come from exclusive borrows that outlive
        // the call; the pointers into them stay valid because nothing
        // resizes the slot arrays or the frame during a run (the state
        // fits this program: checked by the caller).
        unsafe {
            let s = &mut *st;
            let mut ctx = NCtx {
                n: s.n.as_mut_ptr(),
                w: s.w.as_mut_ptr(),
                valid: s.valid.inline_mut().as_mut_ptr(),
                frame: s.frame.as_ptr(),
                frame_len: s.frame.len(),
                cursor: s.cursor,
                short: s.short.as_ptr() as *const u8,
                ops: &mut (*rt).ops,
                op_limit: (*rt).op_limit,
                out: std::ptr::null_mut(),
                out_len: 0,
                out_cap: 0,
                env: &mut env as *mut Env<'_> as *mut c_void,
                cb: &CALLBACKS,
            };
            if !out.is_null() {
                refresh_out(&mut ctx, &mut *out);
            }
            let flow = f(&mut ctx);
            if !out.is_null() {
                commit_out(&mut ctx, &mut *out);
            }
            (*st).cursor = ctx.cursor;
            flow
        }
    }
}

/// Point the context's output at the spare capacity of `out`.
///
/// # Safety
/// `ctx.out_len` bytes at `ctx.out` were written (and committed before).
unsafe fn refresh_out(ctx: &mut NCtx, out: &mut Vec<u8>) {
    if out.capacity() - out.len() < 256 {
        out.reserve(256);
    }
    ctx.out = out.as_mut_ptr().add(out.len());
    ctx.out_len = 0;
    ctx.out_cap = out.capacity() - out.len();
}

/// Make the bytes the library wrote part of `out`.
///
/// # Safety
/// The library wrote `ctx.out_len` bytes at `ctx.out`, the spare
/// capacity of `out` that [`refresh_out`] handed it.
unsafe fn commit_out(ctx: &mut NCtx, out: &mut Vec<u8>) {
    debug_assert!(ctx.out_len <= ctx.out_cap);
    out.set_len(out.len() + ctx.out_len);
    ctx.out_len = 0;
    ctx.out_cap = out.capacity() - out.len();
    ctx.out = out.as_mut_ptr().add(out.len());
}

/// Point the context at the state's arrays again after a callback (which
/// holds the state exclusively and may, in principle, have moved them).
///
/// # Safety
/// `st` is the call's packet state, still sized for the program.
#[inline]
unsafe fn resync(ctx: &mut NCtx, st: &mut PacketState) {
    ctx.n = st.n.as_mut_ptr();
    ctx.w = st.w.as_mut_ptr();
    ctx.valid = st.valid.inline_mut().as_mut_ptr();
    ctx.frame = st.frame.as_ptr();
    ctx.frame_len = st.frame.len();
    ctx.cursor = st.cursor;
}

/// A flow as its code.
fn encode(f: Flow) -> u32 {
    match f {
        Flow::Next => FLOW_NEXT,
        Flow::Return => FLOW_RETURN,
        Flow::Exit => FLOW_EXIT,
        Flow::Break => FLOW_BREAK,
        Flow::Continue => FLOW_CONTINUE,
        Flow::Reject(None) => FLOW_REJECT_NONE,
        Flow::Reject(Some(e)) => FLOW_REJECT_BASE + e,
    }
}

/// Rebuild the interpreter over the call's state.
///
/// # Safety
/// `env` is the live environment of the call `ctx` belongs to.
unsafe fn exec<'e>(env: &'e mut Env<'_>) -> (Exec<'e>, &'e mut PacketState) {
    let ex = Exec {
        code: env.code,
        rt: &mut *env.rt,
        emit: if env.out.is_null() {
            None
        } else {
            Some(&mut *env.out)
        },
        hook: match env.hook {
            Some(h) => Some(&mut *h),
            None => None,
        },
    };
    (ex, &mut *env.st)
}

unsafe extern "C" fn cb_stmt(ctx: *mut NCtx, k: u32) -> u32 {
    // SAFETY: called by the library with the context `Native::call` built.
    unsafe {
        let ctx = &mut *ctx;
        let env = &mut *(ctx.env as *mut Env<'_>);
        let Some(&s) = env.native.stmts.get(k as usize) else {
            return FLOW_EXIT;
        };
        if !env.out.is_null() {
            commit_out(ctx, &mut *env.out);
        }
        (*env.st).cursor = ctx.cursor;
        let f = {
            let (mut ex, st) = exec(env);
            ex.stmt(st, &*s)
        };
        resync(ctx, &mut *env.st);
        if !env.out.is_null() {
            refresh_out(ctx, &mut *env.out);
        }
        encode(f)
    }
}

unsafe extern "C" fn cb_expr(ctx: *mut NCtx, k: u32, out: *mut u128) {
    // SAFETY: as in `cb_stmt`; expressions do not touch the output.
    unsafe {
        let ctx = &mut *ctx;
        let env = &mut *(ctx.env as *mut Env<'_>);
        (*env.st).cursor = ctx.cursor;
        let st = &*env.st;
        *out = match env.native.exprs.get(k as usize) {
            Some(EscExpr::N(x)) => u128::from(eval(&**x, env.code, st)),
            Some(EscExpr::W(x)) => eval(&**x, env.code, st),
            None => 0,
        };
    }
}

unsafe extern "C" fn cb_apply(ctx: *mut NCtx, t: u32, keys: *const u128, n: u32) -> u32 {
    // SAFETY: as in `cb_stmt`; `keys` points at `n` values on the
    // library's stack.
    unsafe {
        let ctx = &mut *ctx;
        let env = &mut *(ctx.env as *mut Env<'_>);
        let keys = std::slice::from_raw_parts(keys, n as usize);
        (*env.st).cursor = ctx.cursor;
        let a = {
            let (mut ex, st) = exec(env);
            ex.lookup(st, t, keys)
        };
        resync(ctx, &mut *env.st);
        a
    }
}

unsafe extern "C" fn cb_target(ctx: *mut NCtx, k: u32, args: *const u128, n: u32) -> u32 {
    // SAFETY: as in `cb_stmt`; `args` points at `n` values on the
    // library's stack. Target primitives do not touch the output.
    unsafe {
        let ctx = &mut *ctx;
        let env = &mut *(ctx.env as *mut Env<'_>);
        let Some(t) = env.native.targets.get(k as usize).and_then(|&t| t.as_ref()) else {
            return FLOW_EXIT;
        };
        let args = std::slice::from_raw_parts(args, n as usize);
        (*env.st).cursor = ctx.cursor;
        let f = {
            let (mut ex, st) = exec(env);
            ex.target_with(st, t, args)
        };
        resync(ctx, &mut *env.st);
        encode(f)
    }
}

unsafe extern "C" fn cb_hash(_ctx: *mut NCtx, algo: u32, data: *const u8, len: usize) -> u64 {
    // SAFETY: `data` points at `len` bytes on the library's stack.
    let data = unsafe { std::slice::from_raw_parts(data, len) };
    match HASH_ALGOS.get(algo as usize) {
        Some(&a) => hash::compute(a, data),
        None => 0,
    }
}

unsafe extern "C" fn cb_grow(ctx: *mut NCtx, need: usize) {
    // SAFETY: as in `cb_stmt`; only deparsers (output set) call it.
    unsafe {
        let ctx = &mut *ctx;
        let env = &mut *(ctx.env as *mut Env<'_>);
        if env.out.is_null() {
            return;
        }
        let out = &mut *env.out;
        commit_out(ctx, out);
        out.reserve(need);
        refresh_out(ctx, out);
    }
}

unsafe extern "C" fn cb_event(ctx: *mut NCtx, what: u32) {
    // SAFETY: as in `cb_stmt`.
    unsafe {
        let env = &mut *((*ctx).env as *mut Env<'_>);
        if what == EVENT_PARSER_TIMEOUT {
            (*env.rt).stats.parser_timeouts += 1;
        }
    }
}
