//! The behavioural switch: loads a pipeline artifact and runs it.
//!
//! * [`Switch`] ([`v1model`]): a v1model single-pipe switch with BMv2
//!   simple_switch semantics, implementing [`netsparse_externs::Datapath`].
//! * [`NsSwitch`] ([`nsswitch`]): the NetSparse multi-pipe switch (ingress
//!   pipes → crossbar 1 → middle pipes with the Deconcatenator, Property
//!   Cache and Concatenator → crossbar 2 → egress pipes) for
//!   `NetSparseSwitch` programs, shaped by an [`NsConfig`] (Table 5 defaults).
//! * [`PsaSwitch`] ([`psa`]): BMv2 psa_switch semantics for `PSA_Switch`
//!   programs (ingress and egress pipelines, packet replication, clones,
//!   resubmit, recirculate), sharing [`replication`] with the v1model switch.
//! * The control plane is the engine's ([`netsparse_engine::ControlPlane`]);
//!   the v1model switch adds multicast and mirroring to it.
//! * [`drivers`]: pcap-file replay and live AF_PACKET interfaces, generic
//!   over any `Datapath`.
//! * [`workload`]: routes and frames for `netsparse bench` and the benches;
//!   [`testing`]: hand-built artifacts (ipv4_forward) for tests and benches.
//!
//! Both switches run on the P4 runtime of `netsparse-engine`, as the NIC
//! does: this crate holds what is particular to a switch (v1model's
//! standard metadata, replication and recirculation; the NetSparse pipes
//! and crossbars) and its drivers.
#![warn(missing_docs)]

pub mod drivers;
pub mod nsswitch;
pub mod psa;
pub mod replication;
pub mod testing;
pub mod v1model;
pub mod workload;

pub use netsparse_engine::{
    ControlPlane, ControlPlaneError, DigestMsg, EngineStats, EntriesError, EntryHandle, KeySpec,
    LoadError, PacketState, Replica,
};
pub use nsswitch::{NsCollStats, NsCollective, NsConfig, NsStats, NsSwitch};
pub use psa::PsaSwitch;
pub use v1model::{DropStats, McNodeHandle, PortStats, Switch, SwitchConfig, SwitchStats};
