//! The interface between the engine and a native program: the context a
//! generated function runs in, the engine's callbacks, and the table of
//! entry points a generated library exports.
//!
//! This file is compiled twice: into the engine, and, as text, into every
//! generated library (`include_str!`), so the two sides of the boundary
//! are declared once. It therefore uses nothing but `core`: no crate
//! paths, no `use` of the engine's items.

/// Bumped whenever anything in this file changes meaning: a library built
/// for another version is not loaded.
pub const NATIVE_ABI: u32 = 2;

/// The name of the one symbol a generated library exports.
pub const VTABLE_SYMBOL: &str = "netsparse_native_vtable";

/// A statement ran to its end.
pub const FLOW_NEXT: u32 = 0;
/// `return`.
pub const FLOW_RETURN: u32 = 1;
/// `exit` (or the operation budget ran out, or a target primitive stopped the run).
pub const FLOW_EXIT: u32 = 2;
/// `break`.
pub const FLOW_BREAK: u32 = 3;
/// `continue`.
pub const FLOW_CONTINUE: u32 = 4;
/// A parser `reject` that keeps the current error.
pub const FLOW_REJECT_NONE: u32 = 5;
/// A parser reject with error `e` is `FLOW_REJECT_BASE + e`.
pub const FLOW_REJECT_BASE: u32 = 0x1000;

/// Rare run-time events a generated function reports through
/// [`Callbacks::event`]: a parser stopped by its step limit.
pub const EVENT_PARSER_TIMEOUT: u32 = 1;

/// What a generated function sees of one packet's state and of the engine.
/// The engine fills it before every call and reads `cursor` and `out_len`
/// back afterwards; every pointer is valid for the call's duration.
#[repr(C)]
pub struct NCtx {
    /// The packet state's `u64` slots.
    pub n: *mut u64,
    /// Its `u128` slots.
    pub w: *mut u128,
    /// Its first 256 header-validity bits (four words).
    pub valid: *mut u64,
    /// The packet bytes this pass started from.
    pub frame: *const u8,
    /// Their length.
    pub frame_len: usize,
    /// The parser cursor, in bits.
    pub cursor: usize,
    /// Set (non-zero) when a lookahead ran past the end of the packet.
    pub short: *const u8,
    /// The run's operation count (statements of every block entered).
    pub ops: *mut u64,
    /// A block entered with the count above this ends the run as `exit`.
    pub op_limit: u64,
    /// Where a deparser's next byte goes (null outside a deparser).
    pub out: *mut u8,
    /// Bytes written at `out` so far.
    pub out_len: usize,
    /// Bytes that may be written at `out`.
    pub out_cap: usize,
    /// The engine's side of the call, opaque here.
    pub env: *mut core::ffi::c_void,
    /// The engine's callbacks.
    pub cb: *const Callbacks,
}

/// The engine's functions a generated function calls.
#[repr(C)]
pub struct Callbacks {
    /// Run statement `k` of the library's escape list with the
    /// interpreter; returns its flow.
    pub stmt: unsafe extern "C" fn(ctx: *mut NCtx, k: u32) -> u32,
    /// Evaluate expression `k` of the escape list with the interpreter into
    /// `*out` (a `u64` expression's value zero-extended).
    pub expr: unsafe extern "C" fn(ctx: *mut NCtx, k: u32, out: *mut u128),
    /// Look up table `t` with the `n` key values at `keys`: writes the
    /// action data, the table's `hit` and `action_run` slots and its direct
    /// counter and meter, and returns the action to run.
    pub apply: unsafe extern "C" fn(ctx: *mut NCtx, t: u32, keys: *const u128, n: u32) -> u32,
    /// Call the target primitive of escaped statement `k` (a
    /// `P::Target`) with its `n` operand values at `args`, store its value
    /// in its destination; returns the flow.
    pub target: unsafe extern "C" fn(ctx: *mut NCtx, k: u32, args: *const u128, n: u32) -> u32,
    /// Hash the `len` bytes at `data` with the engine's algorithm number
    /// `algo` (an index into its list of deterministic hash algorithms;
    /// 0 for an unknown one).
    pub hash: unsafe extern "C" fn(ctx: *mut NCtx, algo: u32, data: *const u8, len: usize) -> u64,
    /// Make room for at least `need` more bytes at `out` (the engine keeps
    /// what was written and moves `out`, `out_len` and `out_cap`).
    pub grow: unsafe extern "C" fn(ctx: *mut NCtx, need: usize),
    /// Report one of the `EVENT_*` events.
    pub event: unsafe extern "C" fn(ctx: *mut NCtx, what: u32),
}

/// A parser or control of the program: returns a `FLOW_*` code (a parser
/// `FLOW_NEXT` when it accepts).
pub type BlockFn = unsafe extern "C" fn(ctx: *mut NCtx) -> u32;

/// What a generated library exports: which program it is and its blocks.
#[repr(C)]
pub struct Vtable {
    /// [`NATIVE_ABI`] of the generator that wrote it.
    pub abi: u32,
    /// Hash of the generated source (the cache key).
    pub hash: u64,
    /// Number of parsers.
    pub n_parsers: u32,
    /// One function per parser, by parser id.
    pub parsers: *const BlockFn,
    /// Number of controls (including a target's extra blocks).
    pub n_controls: u32,
    /// One function per control, by control id.
    pub controls: *const BlockFn,
}
