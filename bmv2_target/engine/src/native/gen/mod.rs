//! The generator: a loaded program ([`Code`]) to the Rust source of a
//! library with one function per parser and control, plus the list of
//! the program's nodes it left to the interpreter (escapes).
//!
//! The source is a function of the code alone (slot indices, table and
//! action ids, constants), so two loads of one artifact give the same
//! source and share one compiled library; the escape list points into the
//! code it was generated from and is rebuilt for every load.
//!
//! Split along the program: `expr.rs` expressions, `stmt.rs` statements
//! and blocks, `parser.rs` parsers and the header layouts; this file
//! assembles the library (the shared `abi.rs` and `prelude.rs`, the
//! interpreter's `word.rs` for the arithmetic, the entry-point table).

mod expr;
mod parser;
mod stmt;

use std::fmt::Write as _;

use netsparse_externs::artifact::{BinaryOp, UnaryOp};

use crate::code::{Code, S, X};

use super::abi::NATIVE_ABI;

/// An expression left to the interpreter.
#[derive(Clone, Copy, Debug)]
pub(crate) enum EscExpr {
    /// A `u64` expression.
    N(*const X<u64>),
    /// A `u128` expression.
    W(*const X<u128>),
}

/// How much of a program runs natively.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Statements translated (escaped ones included).
    pub stmts: usize,
    /// Statements left to the interpreter.
    pub escaped_stmts: usize,
    /// Expressions left to the interpreter.
    pub escaped_exprs: usize,
}

/// A generated library: its source and the escapes, by index.
pub(crate) struct Generated {
    /// The Rust source.
    pub source: String,
    /// Escaped statements, by the index the source passes.
    pub stmts: Vec<*const S>,
    /// Escaped expressions, likewise.
    pub exprs: Vec<EscExpr>,
    /// Counts.
    pub stats: GenStats,
}

/// The generator's state while it writes one library.
pub(super) struct Gen<'c> {
    code: &'c Code,
    /// Function definitions written so far.
    fns: Vec<String>,
    next: usize,
    stmts: Vec<*const S>,
    exprs: Vec<EscExpr>,
    stats: GenStats,
}

impl Gen<'_> {
    /// A fresh function name with `prefix`.
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }
}

/// Every binary operator, for the library's copy of the enum (the match
/// in [`binary_name`] keeps this list whole: a new operator fails to
/// compile there until it is added here too).
const BINARY_OPS: [BinaryOp; 20] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Mod,
    BinaryOp::SatAdd,
    BinaryOp::SatSub,
    BinaryOp::Shl,
    BinaryOp::Shr,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::Xor,
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
    BinaryOp::LAnd,
    BinaryOp::LOr,
];

/// The position of `op` in [`BINARY_OPS`] (exhaustive on purpose).
fn binary_name(op: BinaryOp) -> usize {
    match op {
        BinaryOp::Add => 0,
        BinaryOp::Sub => 1,
        BinaryOp::Mul => 2,
        BinaryOp::Div => 3,
        BinaryOp::Mod => 4,
        BinaryOp::SatAdd => 5,
        BinaryOp::SatSub => 6,
        BinaryOp::Shl => 7,
        BinaryOp::Shr => 8,
        BinaryOp::And => 9,
        BinaryOp::Or => 10,
        BinaryOp::Xor => 11,
        BinaryOp::Eq => 12,
        BinaryOp::Ne => 13,
        BinaryOp::Lt => 14,
        BinaryOp::Le => 15,
        BinaryOp::Gt => 16,
        BinaryOp::Ge => 17,
        BinaryOp::LAnd => 18,
        BinaryOp::LOr => 19,
    }
}

/// Every unary operator (kept whole as [`BINARY_OPS`] is).
const UNARY_OPS: [UnaryOp; 3] = [UnaryOp::Not, UnaryOp::BitNot, UnaryOp::Neg];

fn unary_name(op: UnaryOp) -> usize {
    match op {
        UnaryOp::Not => 0,
        UnaryOp::BitNot => 1,
        UnaryOp::Neg => 2,
    }
}

/// The interpreter's arithmetic, as the library compiles it: `word.rs`
/// with the artifact's operator enums replaced by local copies.
fn word_module() -> Result<String, String> {
    const WORD: &str = include_str!("../../word.rs");
    const USE: &str = "use netsparse_externs::artifact::{BinaryOp, UnaryOp};";
    if !WORD.contains(USE) {
        return Err("word.rs no longer imports the operators as the generator expects".into());
    }
    let mut ops =
        String::from("#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub enum BinaryOp {\n");
    for (i, op) in BINARY_OPS.iter().enumerate() {
        debug_assert_eq!(binary_name(*op), i);
        let _ = writeln!(ops, "    {op:?},");
    }
    ops.push_str("}\n#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub enum UnaryOp {\n");
    for (i, op) in UNARY_OPS.iter().enumerate() {
        debug_assert_eq!(unary_name(*op), i);
        let _ = writeln!(ops, "    {op:?},");
    }
    ops.push_str("}\n");
    Ok(WORD.replace(USE, &ops))
}

/// Generate the library of `code`.
pub(crate) fn generate(code: &Code) -> Result<Generated, String> {
    let mut g = Gen {
        code,
        fns: Vec::new(),
        next: 0,
        stmts: Vec::new(),
        exprs: Vec::new(),
        stats: GenStats::default(),
    };
    for h in 0..code.headers.len() {
        if g.fast_header(h as u32) {
            g.header_fns(h);
        }
    }
    let mut actions = Vec::with_capacity(code.actions.len());
    for (i, a) in code.actions.iter().enumerate() {
        let b = g.block(&a.body);
        g.fns.push(format!(
            "unsafe fn a{i}(c: *mut NCtx) -> u32 {{ let f = {b}(c); if f == FLOW_RETURN {{ FLOW_NEXT }} else {{ f }} }}\n"
        ));
        actions.push(format!("a{i}"));
    }
    let mut parsers = Vec::with_capacity(code.parsers.len());
    for (i, p) in code.parsers.iter().enumerate() {
        parsers.push(g.parser(i, p));
    }
    let mut controls = Vec::with_capacity(code.controls.len());
    for (i, c) in code.controls.iter().enumerate() {
        let b = g.block(&c.body);
        g.fns.push(format!(
            "unsafe extern \"C\" fn c{i}(c: *mut NCtx) -> u32 {{ {b}(c) }}\n"
        ));
        controls.push(format!("c{i}"));
    }

    let mut src = String::with_capacity(64 * 1024);
    let _ = writeln!(
        src,
        "// Generated by netsparse-engine (native ABI {NATIVE_ABI}) from a loaded P4 program: \
         one function per parser and control. Do not edit; it is rebuilt from the program.\n\
         #![allow(unused, unreachable_code, unused_unsafe, non_snake_case, clippy::all)]\n\
         #![no_std]\n\
         #[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! {{ loop {{}} }}\n\
         mod abi {{\n{}\n}}\n\
         mod word {{\n{}\nuse core as std;\n}}\n\
         mod p {{\n{}\n}}\n\
         use abi::*;\nuse p::*;\nuse word::*;\n",
        include_str!("../abi.rs"),
        word_module()?,
        include_str!("../prelude.rs"),
    );
    let _ = writeln!(
        src,
        "static ACTIONS: [unsafe fn(*mut NCtx) -> u32; {}] = [{}];\n\
         #[inline]\nunsafe fn run_action(c: *mut NCtx, a: u32) -> u32 {{\n match ACTIONS.get(a as usize) {{ Some(f) => f(c), None => FLOW_NEXT }}\n}}",
        actions.len(),
        actions.join(", ")
    );
    for f in &g.fns {
        src.push_str(f);
        src.push('\n');
    }
    let _ = writeln!(
        src,
        "static PARSERS: [BlockFn; {}] = [{}];\n\
         static CONTROLS: [BlockFn; {}] = [{}];\n\
         struct Table(Vtable);\n\
         // SAFETY: the table only points at the two static arrays above.\n\
         unsafe impl Sync for Table {{}}\n\
         static VTABLE: Table = Table(Vtable {{ abi: {NATIVE_ABI}, hash: HASH, n_parsers: {}, parsers: PARSERS.as_ptr(), n_controls: {}, controls: CONTROLS.as_ptr() }});\n\
         #[no_mangle]\npub extern \"C\" fn netsparse_native_vtable() -> *const Vtable {{ &VTABLE.0 }}",
        parsers.len(),
        parsers.join(", "),
        controls.len(),
        controls.join(", "),
        parsers.len(),
        controls.len(),
    );
    Ok(Generated {
        source: src,
        stmts: g.stmts,
        exprs: g.exprs,
        stats: g.stats,
    })
}

/// FNV-1a over `bytes`, continuing from `h` (a cache key that does not
/// change between Rust releases, unlike `DefaultHasher`).
pub(crate) fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// FNV-1a's starting value.
pub(crate) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;
