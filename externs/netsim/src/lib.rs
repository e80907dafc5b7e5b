//! `netsparse-netsim`: the one discrete-event network engine of the
//! toolchain. It owns [`Datapath`](netsparse_externs::Datapath) devices
//! (switches, NICs, small test devices) and the full-duplex links between
//! their ports, and drives them in simulated time with a deterministic
//! (time, sequence) event order. The cluster simulator (`netsparse sim`,
//! whose topologies stay in the CLI crate) and the NIC tests both run on
//! it; the NIC tests use fixed-delay links ([`LinkParams::fixed_delay`])
//! and [`EventOrder::ArrivalsFirst`].
//!
//! Middleware on the links is a [`LinkTap`], in the style of smoltcp's
//! `phy` wrappers: [`Capture`] records frames (pcap goldens),
//! [`FaultInjector`] drops the frames a rule picks; taps compose as tuples.
//!
//! Lossless flow control is optional: a device given a finite buffer
//! ([`Engine::set_buffer`]) pauses the links into it when it is full
//! (`flow.rs`).
//!
//! The crate depends on `netsparse-externs` only (the `Datapath` contract,
//! `Time`, and the wire format for the NetSparse link counters).

#![warn(missing_docs)]

mod capture;
mod engine;
mod fault;
mod flow;
mod link;
mod parallel;
mod pool;
mod tap;
mod timers;

pub use capture::{Capture, Captured};
pub use engine::{
    AnyDevice, DeviceCounters, DeviceId, Engine, EngineConfig, EngineError, EngineStats,
    EventOrder, Outcome, UnconnectedPorts, PROGRESS_EVERY, STOP_CHECK_EVERY,
};
pub use fault::FaultInjector;
pub use flow::{BufferKind, BufferSpec, BufferStats};
pub use link::{LinkCounters, LinkParams};
pub use parallel::WindowTimes;
pub use pool::{
    COMPACT_RATIO as POOL_HOLD_RATIO, COMPACT_SLACK as POOL_HOLD_SLACK,
    STORE_SHARE as POOL_STORE_SHARE,
};
pub use tap::{Endpoint, LinkTap, NoTap, TapFrame};
