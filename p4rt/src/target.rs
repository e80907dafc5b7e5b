//! What the P4Runtime server needs of a running datapath beyond the
//! engine's [`ControlPlane`]: loading a new pipeline in place and its
//! counters as JSON (the `--stats-json` document). Implemented for the
//! v1model switch, the PSA switch, the NetSparse multi-pipe switch and the
//! NetSparse SmartNIC.

use netsparse_bmv2::nsswitch::NsSwitch;
use netsparse_bmv2::{PsaSwitch, Switch};
use netsparse_engine::control::ControlPlane;
use netsparse_externs::artifact::{Arch, Artifact};
use netsparse_nic::memory::HostMemory;
use netsparse_nic::Nic;

/// A datapath the server can drive.
pub trait Target: ControlPlane + 'static {
    /// The architecture of the programs it runs.
    fn arch(&self) -> Arch;
    /// Replace the running program with `artifact` (same options and
    /// shape; tables start empty). On error the old program keeps running.
    fn load(&mut self, artifact: &Artifact) -> Result<(), String>;
    /// Its counters (what `--stats-json` writes under [`Target::stats_key`]).
    fn stats_json(&self) -> serde_json::Value;
    /// The key of [`Target::stats_json`] in the statistics document.
    fn stats_key(&self) -> &'static str {
        "switch"
    }
    /// The CPU port's counters (what `--stats-json` writes under
    /// `"cpu_port"`), if it has one.
    fn cpu_port_json(&self) -> Option<serde_json::Value> {
        None
    }
    /// Queue a PacketOut frame (its `packet_out` header included) as an
    /// arrival on the CPU port. Only a [`CpuPort`](crate::packetio::CpuPort)
    /// has one.
    fn packet_out(&mut self, frame: Vec<u8>) -> Result<(), String> {
        let _ = frame;
        Err("this switch has no CPU port (start it with --cpu-port N)".into())
    }
}

impl Target for Switch {
    fn arch(&self) -> Arch {
        Arch::V1Model
    }
    fn load(&mut self, artifact: &Artifact) -> Result<(), String> {
        let sw = Switch::new(artifact, self.config().clone()).map_err(|e| e.to_string())?;
        *self = sw;
        Ok(())
    }
    fn stats_json(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).unwrap_or_default()
    }
}

impl Target for NsSwitch {
    fn arch(&self) -> Arch {
        Arch::NetSparseSwitch
    }
    fn load(&mut self, artifact: &Artifact) -> Result<(), String> {
        let sw = NsSwitch::new(artifact, self.config().clone()).map_err(|e| e.to_string())?;
        *self = sw;
        Ok(())
    }
    fn stats_json(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).unwrap_or_default()
    }
}

impl Target for PsaSwitch {
    fn arch(&self) -> Arch {
        Arch::Psa
    }
    fn load(&mut self, artifact: &Artifact) -> Result<(), String> {
        let sw = PsaSwitch::new(artifact, self.config().clone()).map_err(|e| e.to_string())?;
        *self = sw;
        Ok(())
    }
    fn stats_json(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).unwrap_or_default()
    }
}

/// A running NIC keeps its program: its host memory, partition and served
/// properties were set up for it at start, so a new pipeline is refused
/// (restart `netsparse nic` with the new program).
impl<M: HostMemory + Send + 'static> Target for Nic<M> {
    fn arch(&self) -> Arch {
        Arch::NetSparseNic
    }
    fn load(&mut self, artifact: &Artifact) -> Result<(), String> {
        let _ = artifact;
        Err("the NIC's program is fixed while it runs (its host memory, partition and properties were set up for it); restart `netsparse nic` with the new program".into())
    }
    fn stats_json(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).unwrap_or_default()
    }
    fn stats_key(&self) -> &'static str {
        "nic"
    }
}
