//! Native execution: a loaded program's parsers and controls generated
//! as Rust, compiled by the machine's `rustc` into a shared library and
//! run instead of the interpreter, for any program, with the same results
//! byte for byte.
//!
//! * [`gen`] writes the library from the loaded [`Code`]: expressions,
//!   statements, table applies, header extraction and emission become
//!   straight-line Rust over the same slot arrays the interpreter uses,
//!   calling the interpreter's own arithmetic (`word.rs`). Whatever has no
//!   native form (loops, extern calls, stack operations, varbits, ...) is
//!   an *escape*: the library calls back and the interpreter runs that one
//!   statement or expression on the same state. So every program runs,
//!   and the native share grows as the generator learns constructs.
//! * `toolchain` compiles and caches libraries by the hash of their
//!   source (and of the compiler), and loads each once per process.
//! * `bind` runs a library's function on a packet state: the context,
//!   the callbacks, and the checks (same code, state of the right size,
//!   tracing off — a traced packet always takes the interpreter, whose
//!   log is the reference).
//!
//! Whether loads attach native code is a process-wide [`EngineMode`]
//! ([`set_mode`]; the CLI's `--engine`). The engine's default is the
//! interpreter; `Auto` uses native code when it can be built and the
//! interpreter otherwise (the first failure is kept in [`status`]).

pub mod abi;
mod bind;
pub mod gen;
pub mod prelude;
mod toolchain;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

pub use bind::Native;
pub use gen::GenStats;
pub use toolchain::{build_counts, cache_dir, cache_max_from_env, BuildCounts, DEFAULT_CACHE_MAX};

use crate::code::Code;
use netsparse_externs::artifact::HashAlgo;

/// The hash algorithms generated code computes through
/// [`abi::Callbacks::hash`], numbered by their place here (`Random` is not
/// among them: it draws from the runtime's generator, and escapes).
pub(crate) const HASH_ALGOS: [HashAlgo; 7] = [
    HashAlgo::Crc32,
    HashAlgo::Crc32Custom,
    HashAlgo::Crc16,
    HashAlgo::Crc16Custom,
    HashAlgo::Identity,
    HashAlgo::Csum16,
    HashAlgo::Xor16,
];

/// How loads run a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineMode {
    /// The interpreter only.
    Interp,
    /// Native code; a program whose library cannot be built runs
    /// interpreted and the failure is recorded (see [`status`]).
    Native,
    /// Native code where it can be built, quietly the interpreter otherwise.
    Auto,
}

impl EngineMode {
    /// Parse `interp`, `native` or `auto`.
    pub fn parse(s: &str) -> Option<EngineMode> {
        match s {
            "interp" | "interpreter" => Some(EngineMode::Interp),
            "native" => Some(EngineMode::Native),
            "auto" => Some(EngineMode::Auto),
            _ => None,
        }
    }

    /// The name [`EngineMode::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            EngineMode::Interp => "interp",
            EngineMode::Native => "native",
            EngineMode::Auto => "auto",
        }
    }
}

/// Why a program has no native code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NativeError {
    /// No usable compiler.
    #[error("no Rust compiler for native code: {0}")]
    NoCompiler(String),
    /// The generator could not write the library.
    #[error("cannot generate native code: {0}")]
    Generate(String),
    /// `rustc` refused the generated source.
    #[error("{0}")]
    Compile(String),
    /// The library could not be loaded or is not the expected one.
    #[error("cannot load native code: {0}")]
    Load(String),
    /// Writing the cache.
    #[error("native code cache: {0}")]
    Io(String),
}

static MODE: AtomicU8 = AtomicU8::new(0);

/// Set how later loads run programs (for the whole process).
pub fn set_mode(m: EngineMode) {
    MODE.store(
        match m {
            EngineMode::Interp => 0,
            EngineMode::Native => 1,
            EngineMode::Auto => 2,
        },
        Ordering::Relaxed,
    );
}

/// How loads run programs now.
pub fn mode() -> EngineMode {
    match MODE.load(Ordering::Relaxed) {
        1 => EngineMode::Native,
        2 => EngineMode::Auto,
        _ => EngineMode::Interp,
    }
}

/// What native execution did in this process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Loads that got native code.
    pub attached: u64,
    /// Loads that fell back to the interpreter.
    pub fell_back: u64,
    /// The first failure.
    pub first_error: Option<NativeError>,
    /// Statements of attached programs, and how many of them escape.
    pub stmts: u64,
    /// Escaped statements of attached programs.
    pub escaped_stmts: u64,
}

static STATUS: Mutex<Status> = Mutex::new(Status {
    attached: 0,
    fell_back: 0,
    first_error: None,
    stmts: 0,
    escaped_stmts: 0,
});

/// What native execution did in this process so far (with the libraries
/// compiled and taken from the cache in [`build_counts`]).
pub fn status() -> Status {
    STATUS.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The generated library of `code` and its cache key: the source ends
/// with the key (`const HASH`), as the library checks it on loading.
fn generate(code: &Code) -> Result<(gen::Generated, u64), NativeError> {
    let mut g = gen::generate(code).map_err(NativeError::Generate)?;
    let hash = toolchain::key(&g.source)?;
    g.source
        .push_str(&format!("const HASH: u64 = {hash:#018x};\n"));
    Ok((g, hash))
}

/// The Rust source of `code`'s library, exactly as [`build`] compiles it
/// (and as the cache keeps it beside the library): `netsparse compile
/// --emit rust`. Needs the compiler only for its version, part of the key.
pub fn source(code: &Code) -> Result<String, NativeError> {
    generate(code).map(|(g, _)| g.source)
}

/// Native code for `code`, built or taken from the caches.
pub fn build(code: &Arc<Code>) -> Result<Native, NativeError> {
    let (g, hash) = generate(code)?;
    let lib = toolchain::library(&g.source, hash)?;
    let vt = lib.vt;
    if vt.n_parsers as usize != code.parsers.len() || vt.n_controls as usize != code.controls.len()
    {
        return Err(NativeError::Load(format!(
            "library {hash:#018x} has {} parsers and {} controls, the program {} and {}",
            vt.n_parsers,
            vt.n_controls,
            code.parsers.len(),
            code.controls.len()
        )));
    }
    Ok(Native::new(
        lib,
        Arc::clone(code),
        g.stmts,
        g.exprs,
        g.stats,
        hash,
    ))
}

/// Native code for `code` as the current [`mode`] asks, recording the
/// outcome in [`status`].
pub(crate) fn attach(code: &Arc<Code>) -> Option<Arc<Native>> {
    let m = mode();
    if m == EngineMode::Interp {
        return None;
    }
    let r = build(code);
    let mut s = STATUS.lock().unwrap_or_else(|p| p.into_inner());
    match r {
        Ok(n) => {
            s.attached += 1;
            let st = n.stats();
            s.stmts += st.stmts as u64;
            s.escaped_stmts += st.escaped_stmts as u64;
            Some(Arc::new(n))
        }
        Err(e) => {
            s.fell_back += 1;
            if s.first_error.is_none() {
                if m == EngineMode::Native {
                    tracing::error!("{e}; running the interpreter");
                } else {
                    tracing::debug!("{e}; running the interpreter");
                }
                s.first_error = Some(e);
            }
            None
        }
    }
}
