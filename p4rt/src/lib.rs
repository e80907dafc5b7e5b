//! P4Runtime for NetSparse: the protobuf messages and gRPC service
//! ([`proto`], generated at build time from `proto/`), P4Info built from a
//! pipeline artifact ([`p4info`]) with its text-format writer
//! ([`textfmt`]), the server a running switch or NIC serves ([`server`],
//! whose table updates are applied by the datapath thread between two
//! packets through a [`mailbox`]), PacketIn/PacketOut through a CPU port
//! ([`packetio`]), and the client helpers `netsparse ctl`
//! uses ([`client`]).
#![warn(missing_docs)]

pub mod client;
pub mod convert;
pub mod mailbox;
pub mod p4info;
pub mod packetio;
pub mod proto;
pub mod server;
pub mod target;
pub mod textfmt;

/// The gRPC crate the server and client are built on (its `Code`, `Status`).
pub use tonic;
