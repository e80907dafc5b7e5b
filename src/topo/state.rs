//! The run directory's `state.json`: what a run created, recorded before
//! each resource is created (write-ahead), so `down` can undo a run that
//! crashed half-way. Written through a temporary file and a rename, so the
//! file is always a complete document.
//!
//! ```json
//! { "version": 1, "run_id": "5a2f", "status": "up",
//!   "topology": "/abs/topo.json",
//!   "plan": { ... names ... },
//!   "resources": [
//!     {"kind": "netns", "name": "ns5a2f-s1"},
//!     {"kind": "veth", "netns": "ns5a2f-h1", "name": "5a2f-h1-p0",
//!      "peer_netns": "ns5a2f-s1", "peer": "5a2f-s1-p1"},
//!     {"kind": "process", "node": "s1", "what": "switch", "netns": "ns5a2f-s1",
//!      "pid": 4242, "start_time": 123456, "log": "/run/dir/s1/switch.log",
//!      "grpc_addr": "127.0.0.1:9559"}
//!   ] }
//! ```
//!
//! A `process` entry is written with `pid: null` before the fork and
//! completed right after; processes in the run's namespaces are also found
//! through `/proc/PID/ns/net`, so a crash between the two writes leaves no
//! orphan either.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::Plan;
use super::TopoError;

/// Version of the state file format.
pub const STATE_VERSION: u32 = 1;
/// The state file's name in a run directory.
pub const STATE_FILE: &str = "state.json";

/// One resource of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resource {
    /// A network namespace.
    Netns {
        /// Its name.
        name: String,
    },
    /// A veth pair (deleting one end deletes both).
    Veth {
        /// Namespace of the first end.
        netns: String,
        /// First end.
        name: String,
        /// Namespace of the peer.
        peer_netns: String,
        /// The peer.
        peer: String,
    },
    /// A process started in a namespace.
    Process {
        /// The node it serves.
        node: String,
        /// `"switch"` or `"nic"`.
        what: String,
        /// Its namespace.
        netns: String,
        /// Its pid (`None` until it was spawned).
        pid: Option<u32>,
        /// Its start time (`/proc/PID/stat` field 22).
        start_time: Option<u64>,
        /// Its log file.
        log: PathBuf,
        /// Its P4Runtime address inside its namespace (switches).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grpc_addr: Option<String>,
    },
}

/// The state of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    /// [`STATE_VERSION`].
    pub version: u32,
    /// The run id.
    pub run_id: String,
    /// `"creating"`, `"up"`, `"failed"` (up failed and was undone) or `"down"`.
    pub status: String,
    /// The topology file.
    pub topology: PathBuf,
    /// The names.
    pub plan: Plan,
    /// What exists (or may exist), in creation order.
    pub resources: Vec<Resource>,
}

impl RunState {
    /// The state file of run directory `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(STATE_FILE)
    }

    /// Read `dir/state.json` (`Ok(None)` if there is none).
    pub fn load(dir: &Path) -> Result<Option<RunState>, TopoError> {
        let path = RunState::path(dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(TopoError::Io {
                    path,
                    detail: e.to_string(),
                })
            }
        };
        let st: RunState = serde_json::from_str(&text).map_err(|e| TopoError::State {
            path: path.clone(),
            detail: format!("not a run state file: {e}"),
        })?;
        if st.version != STATE_VERSION {
            return Err(TopoError::State {
                path,
                detail: format!(
                    "state version {} (this netsparse reads {STATE_VERSION})",
                    st.version
                ),
            });
        }
        Ok(Some(st))
    }

    /// Write `dir/state.json` atomically and durably.
    pub fn save(&self, dir: &Path) -> Result<(), TopoError> {
        let path = RunState::path(dir);
        let tmp = dir.join(".state.json.tmp");
        let io = |p: &Path, e: std::io::Error| TopoError::Io {
            path: p.to_owned(),
            detail: e.to_string(),
        };
        let text = serde_json::to_string_pretty(self).map_err(|e| TopoError::State {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        {
            use std::io::Write as _;
            let mut f = std::fs::File::create(&tmp).map_err(|e| io(&tmp, e))?;
            f.write_all(text.as_bytes()).map_err(|e| io(&tmp, e))?;
            f.sync_all().map_err(|e| io(&tmp, e))?;
        }
        std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))
    }

    /// Record `r` (before creating it) and save.
    pub fn record(&mut self, dir: &Path, r: Resource) -> Result<usize, TopoError> {
        self.resources.push(r);
        self.save(dir)?;
        Ok(self.resources.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn round_trips() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(RunState::load(d.path()).unwrap(), None);
        let mut st = RunState {
            version: STATE_VERSION,
            run_id: "ab".into(),
            status: "creating".into(),
            topology: "/t.json".into(),
            plan: Plan {
                run_id: "ab".into(),
                nodes: BTreeMap::new(),
            },
            resources: Vec::new(),
        };
        st.record(
            d.path(),
            Resource::Netns {
                name: "nsab-x".into(),
            },
        )
        .unwrap();
        st.record(
            d.path(),
            Resource::Process {
                node: "s1".into(),
                what: "switch".into(),
                netns: "nsab-s1".into(),
                pid: None,
                start_time: None,
                log: "/l".into(),
                grpc_addr: Some("127.0.0.1:9559".into()),
            },
        )
        .unwrap();
        assert_eq!(RunState::load(d.path()).unwrap(), Some(st));
        std::fs::write(RunState::path(d.path()), "{").unwrap();
        assert!(RunState::load(d.path()).is_err());
    }
}
