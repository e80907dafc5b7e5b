//! The on-disk cache of finished runs, which makes `netsparse paper`
//! resumable: one JSON file per run under the output directory's
//! `cache/`, named by a hash of its [`RunKey`] and holding the key itself
//! beside the [`RunRecord`]. A run is written only once it has finished
//! (through a temporary file and a rename, so an interrupted write never
//! leaves half a file under the real name); a file that cannot be read,
//! does not parse, has another format or holds another key is reported as
//! corrupt and its run executed again, never trusted.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::runs::{RunKey, RunRecord};

/// Version of the file layout; files of another version are not used.
pub const FORMAT: u32 = 1;

/// The cache could not be written.
#[derive(Debug, Error)]
#[error("cache {path}: {source}")]
pub struct CacheError {
    /// The file or directory.
    pub path: String,
    /// The OS error.
    pub source: std::io::Error,
}

/// What the cache holds for a key.
#[derive(Debug)]
pub enum Lookup {
    /// A finished run with exactly this key.
    Hit(Box<RunRecord>),
    /// Nothing stored.
    Miss,
    /// A file exists but cannot be trusted (the reason); run again.
    Corrupt(String),
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: RunKey,
    record: RunRecord,
}

/// The run cache in one directory.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

/// FNV-1a, 64 bits: a stable hash (unlike `std`'s, which may change
/// between Rust releases) for file names, and the digests of users'
/// programs ([`crate::programs::UserProgram`]).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A stable hash of `bytes` as 16 hex digits.
pub fn hash_hex(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a(bytes))
}

impl Cache {
    /// The cache in `dir`, created if missing.
    pub fn open(dir: &Path) -> Result<Cache, CacheError> {
        std::fs::create_dir_all(dir).map_err(|source| CacheError {
            path: dir.display().to_string(),
            source,
        })?;
        Ok(Cache {
            dir: dir.to_path_buf(),
        })
    }

    /// The cache in `dir` for reading only: nothing is created, and a
    /// missing directory holds no runs.
    pub fn reader(dir: &Path) -> Cache {
        Cache {
            dir: dir.to_path_buf(),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`.
    pub fn path(&self, key: &RunKey) -> PathBuf {
        let canonical = serde_json::to_vec(key).unwrap_or_default();
        let m = key.matrix.replace([':', '/'], "-");
        self.dir.join(format!(
            "{m}-k{}-{}-{}.json",
            key.config.k,
            key.mode.trim_start_matches('+'),
            hash_hex(&canonical)
        ))
    }

    /// Look `key` up.
    pub fn get(&self, key: &RunKey) -> Lookup {
        let path = self.path(key);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Corrupt(format!("{}: cannot read: {e}", path.display())),
        };
        let entry: Entry = match serde_json::from_slice(&text) {
            Ok(e) => e,
            Err(e) => return Lookup::Corrupt(format!("{}: not a cached run: {e}", path.display())),
        };
        if entry.format != FORMAT {
            return Lookup::Corrupt(format!(
                "{}: cache format {} (this binary writes {FORMAT})",
                path.display(),
                entry.format
            ));
        }
        if entry.key != *key {
            return Lookup::Corrupt(format!(
                "{}: holds a different run ({})",
                path.display(),
                entry.key.label()
            ));
        }
        Lookup::Hit(Box::new(entry.record))
    }

    /// Store a finished run.
    pub fn put(&self, key: &RunKey, record: &RunRecord) -> Result<PathBuf, CacheError> {
        let path = self.path(key);
        let err = |source| CacheError {
            path: path.display().to_string(),
            source,
        };
        let entry = Entry {
            format: FORMAT,
            key: key.clone(),
            record: record.clone(),
        };
        let text = serde_json::to_vec_pretty(&entry)
            .map_err(|e| err(std::io::Error::new(ErrorKind::InvalidData, e)))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::SimConfig;

    #[test]
    fn hash_is_stable() {
        // FNV-1a test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        let key = RunKey {
            matrix: "paper:uk/8".into(),
            mode: "+filter".into(),
            config: SimConfig::default(),
            version: "v".into(),
            programs: Vec::new(),
            commands: Vec::new(),
        };
        let c = Cache {
            dir: PathBuf::from("d"),
        };
        let p = c.path(&key);
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("paper-uk-8-k16-filter-"), "{name}");
        assert_eq!(c.path(&key), p);
    }
}
