//! Live topologies on one Linux machine (issue 7): hosts and switches as
//! network namespaces, links as veth pairs, `netsparse switch` (and NIC)
//! processes inside the namespaces — the `netsparse topo` sub-command.
//!
//! * [`spec`]: the topology file (the p4lang tutorials' `topology.json`
//!   shape), parsed and validated before anything is created.
//! * [`plan`]: the names a run uses (namespaces, interfaces), all prefixed
//!   with a short run id and within `IFNAMSIZ`.
//! * [`state`]: the run directory's `state.json`, a journal of every
//!   resource, written *before* the resource is created, so [`run::down`]
//!   removes exactly what [`run::up`] created, even after a crash.
//! * [`run`]: `up` and `down`.
//! * [`gen`]: the leaf-spine generator (on top of
//!   [`crate::sim::topology::Topology`]).
//! * [`net`]: `ip`, `setns`, and process identity from `/proc`.
//! * [`gather`]: the RIG gather of a matrix over a live topology.

pub mod gather;
pub mod gen;
pub mod net;
pub mod plan;
pub mod run;
pub mod spec;
pub mod state;

use std::path::PathBuf;

use thiserror::Error;

/// Why a topology operation failed. Every variant names what and where.
#[derive(Debug, Error)]
pub enum TopoError {
    /// The file is not JSON.
    #[error("{file}:{line}:{column}: malformed JSON: {detail}")]
    Json {
        /// The file.
        file: String,
        /// Line (1-based).
        line: usize,
        /// Column (1-based).
        column: usize,
        /// The parser's message.
        detail: String,
    },
    /// A key has the wrong shape or value.
    #[error("{file}: `{key}`: {detail}")]
    Schema {
        /// The file.
        file: String,
        /// The key path, e.g. `switches.s1.program`.
        key: String,
        /// What is wrong.
        detail: String,
    },
    /// A link names a node that does not exist.
    #[error("{file}: `links[{link}]`: unknown endpoint `{endpoint}`: {detail}")]
    UnknownNode {
        /// The file.
        file: String,
        /// Index of the link.
        link: usize,
        /// The endpoint text.
        endpoint: String,
        /// What is wrong.
        detail: String,
    },
    /// Two links use the same port.
    #[error("{file}: port {endpoint} is used by `links[{first}]` and `links[{second}]`")]
    DuplicatePort {
        /// The file.
        file: String,
        /// The port, `NODE-pN`.
        endpoint: String,
        /// First link using it.
        first: usize,
        /// Second link using it.
        second: usize,
    },
    /// A file named by the topology does not exist.
    #[error("`{key}`: no such file {path}")]
    MissingFile {
        /// The key naming it.
        key: String,
        /// The resolved path.
        path: PathBuf,
    },
    /// A program does not compile or load, or its entries do not apply.
    #[error("`{key}`: {detail}")]
    Program {
        /// The key naming it, e.g. `switches.s1.program`.
        key: String,
        /// The diagnostics.
        detail: String,
    },
    /// A namespace or interface the run would create exists already.
    #[error("{what} `{name}` already exists (another run with id {run_id}? pick another --run-id or `topo down` it)")]
    Exists {
        /// `"network namespace"` or `"interface"`.
        what: &'static str,
        /// Its name.
        name: String,
        /// The run id.
        run_id: String,
    },
    /// A name does not fit.
    #[error("{what}: {detail}")]
    Name {
        /// What was named.
        what: String,
        /// What is wrong.
        detail: String,
    },
    /// A command failed.
    #[error("`{command}` failed: {detail}")]
    Command {
        /// The command line.
        command: String,
        /// Its stderr or the spawn error.
        detail: String,
    },
    /// A process exited while the topology was coming up.
    #[error("{node}: the {what} process exited during `up` ({status}); everything was undone. Its log ({log}) ends with:\n{tail}")]
    ProcessDied {
        /// The node.
        node: String,
        /// `"switch"` or `"nic"`.
        what: &'static str,
        /// Its exit status.
        status: String,
        /// Its log file.
        log: PathBuf,
        /// The last lines of the log.
        tail: String,
    },
    /// A process did not become ready in time.
    #[error(
        "{node}: the {what} process did not report it was running within {seconds} s (log: {log})"
    )]
    NotReady {
        /// The node.
        node: String,
        /// `"switch"` or `"nic"`.
        what: &'static str,
        /// The timeout.
        seconds: u64,
        /// Its log file.
        log: PathBuf,
    },
    /// The run directory's state is unusable.
    #[error("{path}: {detail}")]
    State {
        /// The state file or run directory.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {detail}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        detail: String,
    },
    /// `up` failed and undoing it failed too.
    #[error("{cause}\n(undo was incomplete: {undo})")]
    UndoFailed {
        /// The original error.
        cause: Box<TopoError>,
        /// What could not be removed.
        undo: String,
    },
    /// The environment cannot run topologies.
    #[error("{0}")]
    Unsupported(String),
}
