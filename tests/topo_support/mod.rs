//! Helpers shared by the live-topology tests (`topo_live`, `topo_gather`).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Why the live tests cannot run here (not root, no iproute2), if so.
pub fn skip_reason() -> Option<String> {
    if !netsparse_bmv2::drivers::is_root() {
        return Some("not running as root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("`ip` (iproute2) is not installed".into());
    }
    None
}

/// Run the netsparse binary.
pub fn netsparse(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(args)
        .output()
        .expect("run netsparse")
}

/// An output's status, stdout and stderr, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `topo down` on the run directory when dropped (also on a failed test).
pub struct Guard(pub PathBuf);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = Command::new(env!("CARGO_BIN_EXE_netsparse"))
            .args(["topo", "down"])
            .arg(&self.0)
            .output();
    }
}
