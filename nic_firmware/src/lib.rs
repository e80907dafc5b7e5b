//! The behavioural NetSparse SmartNIC (§4–5 of the paper, Figures 3–5).
//!
//! A [`Nic`] runs a compiled NIC program (a `NetSparseNic` artifact, e.g.
//! `programs/netsparse_nic.p4`) with the shared P4 runtime
//! (`netsparse_engine::program`, the P4 runtime the switches use too),
//! around the NIC's units:
//!
//! * **client RIG units** that fetch idxs from host memory by DMA and run the
//!   program's host_to_net control once per idx (filtering, coalescing,
//!   destination solving, Pending PR Table registration);
//! * **server RIG units** that serve read PRs from the node's slice of the
//!   property array;
//! * the shared **Idx Filter**, one **Pending PR Table** per client unit,
//!   the **Concatenator** and **Deconcatenator** of `netsparse_externs`;
//! * a **host memory** model ([`HostMemory`], [`DenseMemory`]) with DMA
//!   latency and bandwidth, and a verbs-like host API ([`Nic::post_rig`],
//!   [`Nic::poll_cq`]) with a watchdog per command (§7.1), and triggered
//!   operations ([`Nic::post_triggered`], [`Nic::trigger`]: GPU-TN's
//!   {operation, tag, counter, threshold}, see `nic/triggered.rs`).
//!
//! Like the switch, the NIC is a clocked state machine ([`Datapath`]):
//! drivers deliver frames, wake it at [`Datapath::next_deadline`] and collect
//! what it sends on its one port (0). See [`nic`] for the timing model.
//! [`workload`] lays out a gather's host memory and RIG commands (CLI,
//! benchmarks, tests); [`testing`] drives gathers for tests over any
//! network ([`testing::GatherNetwork`]; the tests use the
//! `netsparse-netsim` engine, a dev-dependency only).
//!
//! [`coll`] is the OmNICCL aggregator: a `NetSparseNic` program with the
//! collective externs of `<collective.p4>` (block-sparse AllReduce).
//!
//! [`rdma`] is the one-sided RDMA responder (READ, WRITE with an
//! acknowledgement, FETCH_ADD over registered memory regions) and its
//! requester's encoders, used by the simulator's RDMA SpMM processes.
//!
//! [`spin`] is a second NIC on the same engine: a sPIN NIC whose message
//! handlers (`SpinNic` programs of `<spin.p4>`) run on handler processing units.
//!
//! Property values are deterministic: [`property_word`] defines the source
//! property array, so drivers generate it and verify gathers without storing it.
#![warn(missing_docs)]

pub mod coll;
pub mod config;
mod core;
pub mod filtermem;
pub mod memory;
pub mod nic;
mod program;
pub mod rdma;
pub mod spin;
pub mod stats;
pub mod testing;
pub mod verbs;
pub mod workload;

pub use crate::config::{ConfigError, NicConfig};
pub use crate::core::PropertySlice;
pub use crate::filtermem::{FilterMemoryConfig, FilterMemoryStats};
pub use crate::memory::{
    is_property, property_bytes, property_word, DenseMemory, HostMemory, MemError, Region,
    RegionKind,
};
pub use crate::nic::{Nic, NicError};
pub use crate::stats::{CommandStats, NicStats};
pub use crate::verbs::{
    CommandId, Completion, CompletionStatus, FailReason, PostError, PutCommand, RigCommand,
    TriggerError, TriggeredId, TriggeredOp, IBV_WR_RIG,
};
pub use netsparse_externs::{Datapath, Outputs, Time};
