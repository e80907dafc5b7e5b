//! The behavioural switch: loads a pipeline artifact and runs it.
//!
//! * [`Switch`] ([`v1model`]): a v1model single-pipe switch with BMv2
//!   simple_switch semantics, implementing [`netsparse_externs::Datapath`].
//! * [`NsSwitch`] ([`nsswitch`]): the NetSparse multi-pipe switch (ingress
//!   pipes → crossbar 1 → middle pipes with the Deconcatenator, Property
//!   Cache and Concatenator → crossbar 2 → egress pipes) for
//!   `NetSparseSwitch` programs, shaped by an [`NsConfig`] (Table 5 defaults).
//! * [`control`]: the control plane (typed API, runtime JSON, BMv2 command files).
//! * [`drivers`]: pcap-file replay and live AF_PACKET interfaces, generic
//!   over any `Datapath`.
//! * [`testing`]: hand-built artifacts (ipv4_forward) for tests and benches.
//! * [`program`]: the engine for other targets (the NetSparse NIC): named
//!   statement lists run with target-specific primitives.
//!
//! The engine validates an artifact completely at load time and translates
//! it into pre-resolved trees (no names, no maps but exact-match tables on
//! the packet path, a 64-bit fast path for fields up to 64 bits); packets
//! are processed without heap allocation in the steady state.
#![warn(missing_docs)]

pub mod control;
pub mod drivers;
pub(crate) mod engine;
pub mod error;
pub mod nsswitch;
pub mod program;
pub mod tables;
pub mod testing;
pub mod v1model;

pub use engine::{DigestMsg, EngineStats, PacketState};
pub use error::{ControlPlaneError, EntriesError, LoadError};
pub use nsswitch::{NsConfig, NsStats, NsSwitch};
pub use tables::{EntryHandle, KeySpec};
pub use v1model::{DropStats, PortStats, Replica, Switch, SwitchConfig, SwitchStats};
