//! Building and loading generated libraries: the machine's `rustc` turns
//! a generated source into a shared library in a cache directory, keyed by
//! the source's hash, and the library is loaded once per process and
//! never unloaded (its functions may run until the process ends).
//!
//! The cache directory is `$NETSPARSE_NATIVE_DIR`, else
//! `$XDG_CACHE_HOME/netsparse/native`, else `~/.cache/netsparse/native`,
//! else the system's temporary directory. A library is written under a
//! temporary name and renamed into place, so processes that build the
//! same program at once (parallel test binaries) never load a partial
//! file; each library's source stays beside it (`ns<hash>.rs`) for
//! reading. The compiler is `$NETSPARSE_RUSTC`, else `$RUSTC`, else `rustc`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use super::abi::{Vtable, NATIVE_ABI, VTABLE_SYMBOL};
use super::gen::{fnv1a, FNV_START};
use super::NativeError;

/// A loaded library: its table of entry points. The library itself is
/// leaked on purpose (never unloaded), so the table lives as long as the
/// process.
#[derive(Clone, Copy)]
pub(crate) struct Lib {
    /// The table the library exports.
    pub vt: &'static Vtable,
}

// SAFETY: the table and everything it points at are immutable statics of
// a library that is never unloaded.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

/// What this process did to get native code: libraries compiled, taken
/// from the cache, and the time spent compiling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildCounts {
    /// Libraries compiled by this process.
    pub compiled: u64,
    /// Libraries found in the cache directory.
    pub cached: u64,
    /// Milliseconds spent in `rustc`.
    pub compile_ms: u64,
}

static COMPILED: AtomicU64 = AtomicU64::new(0);
static CACHED: AtomicU64 = AtomicU64::new(0);
static COMPILE_MS: AtomicU64 = AtomicU64::new(0);

/// The counts so far.
pub fn build_counts() -> BuildCounts {
    BuildCounts {
        compiled: COMPILED.load(Ordering::Relaxed),
        cached: CACHED.load(Ordering::Relaxed),
        compile_ms: COMPILE_MS.load(Ordering::Relaxed),
    }
}

/// The compiler to run.
fn rustc() -> String {
    std::env::var("NETSPARSE_RUSTC")
        .or_else(|_| std::env::var("RUSTC"))
        .unwrap_or_else(|_| "rustc".to_owned())
}

/// `rustc -vV`, once per process (part of the cache key: a library built
/// by another compiler is built again). `Err` when there is no compiler.
fn rustc_version() -> Result<&'static str, NativeError> {
    static V: OnceLock<Result<String, String>> = OnceLock::new();
    let v = V.get_or_init(|| {
        let rc = rustc();
        match Command::new(&rc).arg("-vV").output() {
            Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
            Ok(o) => Err(format!(
                "`{rc} -vV` failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("cannot run `{rc}`: {e}")),
        }
    });
    v.as_deref().map_err(|e| NativeError::NoCompiler(e.clone()))
}

/// The cache directory.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("NETSPARSE_NATIVE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("netsparse").join("native");
    }
    if let Some(d) = std::env::var_os("HOME") {
        return PathBuf::from(d)
            .join(".cache")
            .join("netsparse")
            .join("native");
    }
    std::env::temp_dir().join("netsparse-native")
}

/// The cache key of `source`: the source, the ABI and the compiler.
pub(crate) fn key(source: &str) -> Result<u64, NativeError> {
    let v = rustc_version()?;
    let h = fnv1a(FNV_START, source.as_bytes());
    let h = fnv1a(h, &NATIVE_ABI.to_le_bytes());
    Ok(fnv1a(h, v.as_bytes()))
}

/// The library of `source` (whose key is `hash`): from this process's
/// table, else from the cache directory, else compiled now.
pub(crate) fn library(source: &str, hash: u64) -> Result<Lib, NativeError> {
    static LOADED: OnceLock<Mutex<HashMap<u64, Lib>>> = OnceLock::new();
    let table = LOADED.get_or_init(|| Mutex::new(HashMap::new()));
    // Held while compiling: other loads of the same program wait for it
    // rather than compile it again.
    let mut loaded = table.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(l) = loaded.get(&hash) {
        return Ok(*l);
    }
    let dir = cache_dir();
    let so = dir.join(format!("ns{hash:016x}.so"));
    if so.is_file() {
        if let Ok(l) = open(&so, hash) {
            CACHED.fetch_add(1, Ordering::Relaxed);
            loaded.insert(hash, l);
            return Ok(l);
        }
        // A stale or damaged file: build it again below.
    }
    compile(source, hash, &dir, &so)?;
    let l = open(&so, hash)?;
    loaded.insert(hash, l);
    Ok(l)
}

/// Compile `source` into `so`.
fn compile(source: &str, hash: u64, dir: &Path, so: &Path) -> Result<(), NativeError> {
    let io = |what: &str, p: &Path, e: std::io::Error| {
        NativeError::Io(format!("{what} {}: {e}", p.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create", dir, e))?;
    let unique = format!("ns{hash:016x}.{}.{}", std::process::id(), unique_suffix());
    let src = dir.join(format!("{unique}.rs"));
    let tmp = dir.join(format!("{unique}.so"));
    std::fs::write(&src, source).map_err(|e| io("cannot write", &src, e))?;
    let t0 = Instant::now();
    let out = Command::new(rustc())
        .args(["--edition=2021", "--crate-type=cdylib", "--crate-name"])
        .arg(format!("ns{hash:016x}"))
        .args([
            "-C",
            "opt-level=3",
            "-C",
            "panic=abort",
            "-C",
            "debuginfo=0",
            "-C",
            "codegen-units=16",
            "--cap-lints=allow",
            "-o",
        ])
        .arg(&tmp)
        .arg(&src)
        .output()
        .map_err(|e| NativeError::NoCompiler(format!("cannot run `{}`: {e}", rustc())))?;
    COMPILE_MS.fetch_add(t0.elapsed().as_millis() as u64, Ordering::Relaxed);
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let msg = String::from_utf8_lossy(&out.stderr);
        let head: String = msg.lines().take(30).collect::<Vec<_>>().join("\n");
        return Err(NativeError::Compile(format!(
            "rustc failed on {} (kept for inspection):\n{head}",
            src.display()
        )));
    }
    // The source stays beside its library, for reading.
    let _ = std::fs::rename(&src, so.with_extension("rs"));
    std::fs::rename(&tmp, so).map_err(|e| io("cannot move the library to", so, e))?;
    COMPILED.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// A number no other compile of this process uses.
fn unique_suffix() -> u64 {
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Load `so` and check that it is the library of `hash` for this ABI.
fn open(so: &Path, hash: u64) -> Result<Lib, NativeError> {
    let bad = |e: String| NativeError::Load(format!("{}: {e}", so.display()));
    // SAFETY: the library is one this module compiled from generated
    // source (its initialisers do nothing); it is leaked below, so it is
    // never unloaded while its functions may run.
    let lib = unsafe { libloading::Library::new(so) }.map_err(|e| bad(e.to_string()))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    // SAFETY: the symbol is the generated `extern "C" fn() -> *const
    // Vtable`; its type is fixed by this ABI version.
    let vt = unsafe {
        let f = lib
            .get::<unsafe extern "C" fn() -> *const Vtable>(VTABLE_SYMBOL.as_bytes())
            .map_err(|e| bad(e.to_string()))?;
        f()
    };
    if vt.is_null() {
        return Err(bad("the library's table is null".into()));
    }
    // SAFETY: not null; a static of the library, which is never unloaded.
    let vt: &'static Vtable = unsafe { &*vt };
    if vt.abi != NATIVE_ABI || vt.hash != hash {
        return Err(bad(format!(
            "built for ABI {} and program {:#018x}, expected ABI {NATIVE_ABI} and {hash:#018x}",
            vt.abi, vt.hash
        )));
    }
    Ok(Lib { vt })
}
