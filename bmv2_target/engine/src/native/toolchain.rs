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
//!
//! The cache is bounded: a library taken from it has its modification time
//! renewed, and after each compile the least recently used libraries past
//! `$NETSPARSE_NATIVE_CACHE_MAX` (default [`DEFAULT_CACHE_MAX`]) are
//! removed with their sources, as are a crashed compile's temporary files
//! once a day old. Removing a library another process has loaded is safe
//! (the loaded copy stays mapped); one that another process is about to
//! load makes that process compile it again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

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
            touch(&so);
            loaded.insert(hash, l);
            return Ok(l);
        }
        // A stale or damaged file: build it again below.
    }
    compile(source, hash, &dir, &so)?;
    let l = open(&so, hash)?;
    loaded.insert(hash, l);
    let removed = prune(&dir, cache_max(), SystemTime::now());
    if removed > 0 {
        tracing::debug!(
            "native code cache {}: {removed} file(s) removed",
            dir.display()
        );
    }
    Ok(l)
}

/// Libraries the cache keeps when `$NETSPARSE_NATIVE_CACHE_MAX` is unset
/// (a few KB each, with their sources some 40 KB).
pub const DEFAULT_CACHE_MAX: usize = 512;

/// How old a crashed compile's temporary file must be to be removed.
const STALE_TEMP: Duration = Duration::from_secs(24 * 3600);

/// `$NETSPARSE_NATIVE_CACHE_MAX` as a number of libraries: `Ok(None)`
/// unset, `Err` with the reason when it is not a whole number of 1 or
/// more (the CLI refuses such a value before running anything).
pub fn cache_max_from_env() -> Result<Option<usize>, String> {
    match std::env::var("NETSPARSE_NATIVE_CACHE_MAX") {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!(
                "NETSPARSE_NATIVE_CACHE_MAX={v:?}: expected the number of native libraries \
                 the cache keeps, 1 or more (default {DEFAULT_CACHE_MAX})"
            )),
        },
    }
}

/// The number of libraries the cache keeps: `$NETSPARSE_NATIVE_CACHE_MAX`,
/// else (unset or invalid, which is warned about) [`DEFAULT_CACHE_MAX`].
fn cache_max() -> usize {
    cache_max_from_env()
        .unwrap_or_else(|e| {
            static WARNED: OnceLock<()> = OnceLock::new();
            WARNED.get_or_init(|| tracing::warn!("{e}"));
            None
        })
        .unwrap_or(DEFAULT_CACHE_MAX)
}

/// Mark `so` as just used (its modification time, which [`prune`] orders
/// by). Best effort: a read-only cache is still a cache.
fn touch(so: &Path) {
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(so) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// What a file in the cache directory is, by its name.
#[derive(Debug, PartialEq, Eq)]
enum CacheFile {
    /// `ns<16 hex>.so`: a library (its source is `ns<16 hex>.rs`).
    Library,
    /// `ns<16 hex>.<pid>.<n>.so` or `.rs`: a compile's temporary file.
    Temp,
    /// Anything else (the library's source, or not ours): left alone.
    Other,
}

fn classify(name: &str) -> CacheFile {
    let Some(rest) = name.strip_prefix("ns") else {
        return CacheFile::Other;
    };
    let hex = rest.get(..16).unwrap_or("");
    if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return CacheFile::Other;
    }
    match &rest[16..] {
        ".so" => CacheFile::Library,
        tail => {
            // `.<pid>.<n>.so` or `.<pid>.<n>.rs`.
            let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            let mut parts = tail.split('.');
            let temp = parts.next() == Some("")
                && parts.next().is_some_and(num)
                && parts.next().is_some_and(num)
                && matches!(parts.next(), Some("so" | "rs"))
                && parts.next().is_none();
            if temp {
                CacheFile::Temp
            } else {
                CacheFile::Other
            }
        }
    }
}

/// Keep at most `keep` libraries in `dir`: remove the least recently used
/// ones (oldest modification time; ties by name) with their sources, and
/// temporary files older than [`STALE_TEMP`] at `now`. Returns the files
/// removed. Errors (a file another process removed first, a read-only
/// directory) are skipped: pruning is best effort.
fn prune(dir: &Path, keep: usize, now: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut libs = Vec::new();
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let kind = classify(name);
        if kind == CacheFile::Other {
            continue;
        }
        let Ok(mtime) = e.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        match kind {
            CacheFile::Library => libs.push((mtime, name.to_owned())),
            CacheFile::Temp => {
                let old = now.duration_since(mtime).is_ok_and(|age| age > STALE_TEMP);
                if old && std::fs::remove_file(e.path()).is_ok() {
                    removed += 1;
                }
            }
            CacheFile::Other => {}
        }
    }
    if libs.len() <= keep {
        return removed;
    }
    libs.sort();
    let excess = libs.len() - keep;
    for (_, name) in &libs[..excess] {
        let so = dir.join(name);
        if std::fs::remove_file(&so).is_ok() {
            removed += 1;
        }
        if std::fs::remove_file(so.with_extension("rs")).is_ok() {
            removed += 1;
        }
    }
    removed
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_file_names() {
        assert_eq!(classify("ns0123456789abcdef.so"), CacheFile::Library);
        assert_eq!(classify("ns0123456789abcdef.rs"), CacheFile::Other);
        assert_eq!(classify("ns0123456789abcdef.4242.7.so"), CacheFile::Temp);
        assert_eq!(classify("ns0123456789abcdef.4242.7.rs"), CacheFile::Temp);
        assert_eq!(classify("ns0123456789abcdef.x.7.rs"), CacheFile::Other);
        assert_eq!(classify("ns0123456789abcde.so"), CacheFile::Other);
        assert_eq!(classify("ns0123456789abcdeg.so"), CacheFile::Other);
        assert_eq!(classify("notes.so"), CacheFile::Other);
        assert_eq!(classify("ns"), CacheFile::Other);
    }

    /// Pruning removes the least recently used libraries past the bound,
    /// with their sources, and old temporary files; it keeps the rest and
    /// anything that is not the cache's.
    #[test]
    fn prune_keeps_the_most_recently_used() {
        let dir = std::env::temp_dir().join(format!("ns-prune-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let now = SystemTime::now();
        let at = |name: &str, age_secs: u64| {
            let p = dir.join(name);
            std::fs::write(&p, name).unwrap();
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.set_modified(now - Duration::from_secs(age_secs)).unwrap();
        };
        // Five libraries, used 50, 40, ... 10 s ago; library 2 renewed.
        for i in 0..5u64 {
            let lib = format!("ns{i:016x}.so");
            at(&lib, 50 - 10 * i);
            at(&format!("ns{i:016x}.rs"), 50 - 10 * i);
        }
        at(&format!("ns{:016x}.so", 2), 1);
        // A crashed compile two days ago, one in progress, a stranger.
        at("ns00000000000000aa.77.0.rs", 2 * 86_400);
        at("ns00000000000000aa.77.0.so", 2 * 86_400);
        at("ns00000000000000bb.78.0.rs", 5);
        at("README", 3 * 86_400);

        assert_eq!(prune(&dir, 3, now), 2 + 4);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let lib = |i: u64, ext: &str| format!("ns{i:016x}.{ext}");
        let mut want = vec![
            lib(2, "rs"),
            lib(2, "so"),
            lib(3, "rs"),
            lib(3, "so"),
            lib(4, "rs"),
            lib(4, "so"),
            "ns00000000000000bb.78.0.rs".to_owned(),
            "README".to_owned(),
        ];
        want.sort();
        assert_eq!(left, want);
        // Within the bound: nothing more to remove.
        assert_eq!(prune(&dir, 3, now), 0);
        assert_eq!(prune(&dir, 8, now), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
