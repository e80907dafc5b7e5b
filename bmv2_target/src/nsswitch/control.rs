//! What the control plane does to a running NetSparse switch beyond the
//! engine's tables and externs: Property Cache invalidation and mode
//! change, a read-only cache peek, and the `cache_invalidate` /
//! `cache_mode` commands of the runtime command language.

use netsparse_externs::cache::CacheMode;

use netsparse_engine::{ControlPlane, Engine};

use super::{NsConfigError, NsSwitch};

impl NsSwitch {
    /// Control plane: invalidate every middle pipe's Property Cache (before
    /// a kernel).
    pub fn cache_invalidate(&mut self) {
        for p in &mut self.pipes {
            p.cache.invalidate_all();
        }
    }

    /// Control plane: configure the property length (cache mode, 16..=512
    /// bytes, a power of two) of every middle pipe; invalidates the caches.
    pub fn set_cache_mode(&mut self, bytes: u32) -> Result<(), NsConfigError> {
        let mode = CacheMode::new(bytes).map_err(|_| NsConfigError::Invalid {
            key: "cache.mode",
            detail: format!("{bytes} bytes is not a power of two in 16..=512"),
        })?;
        let mut cfg = self.cfg.clone();
        cfg.cache.mode = mode;
        cfg.validate()?;
        self.cfg = cfg;
        for p in &mut self.pipes {
            p.cache.configure(mode);
        }
        Ok(())
    }

    /// The cached property of `idx` in middle pipe `pipe`, without touching
    /// LRU state or counters (for tests and tools).
    pub fn cache_peek(&self, pipe: usize, idx: u64) -> Option<&[u8]> {
        self.pipes.get(pipe).and_then(|p| p.cache.peek(idx))
    }
}

impl ControlPlane for NsSwitch {
    fn engine(&self) -> &Engine {
        self.prog.engine()
    }

    fn engine_mut(&mut self) -> &mut Engine {
        self.prog.engine_mut()
    }

    /// `cache_invalidate` and `cache_mode <bytes>`.
    fn command(
        &mut self,
        cmd: &str,
        args: &[&str],
    ) -> Option<Result<bool, netsparse_engine::control::commands::LineError>> {
        use netsparse_engine::control::commands::LineError;
        match cmd {
            "cache_invalidate" => Some(if args.is_empty() {
                self.cache_invalidate();
                Ok(false)
            } else {
                Err(LineError::Syntax("usage: cache_invalidate".into()))
            }),
            "cache_mode" => Some(match args {
                [b] => match b.parse::<u32>() {
                    Ok(bytes) => self
                        .set_cache_mode(bytes)
                        .map(|()| false)
                        .map_err(|e| LineError::Syntax(e.to_string())),
                    Err(_) => Err(LineError::Syntax(format!("bad property length `{b}`"))),
                },
                _ => Err(LineError::Syntax("usage: cache_mode <bytes>".into())),
            }),
            _ => None,
        }
    }
}
