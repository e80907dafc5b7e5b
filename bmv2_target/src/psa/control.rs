//! The PSA switch's control plane: the engine's [`ControlPlane`] (tables,
//! registers, counters) plus the packet replication engine's multicast
//! groups and clone sessions, with the same command-file commands as the
//! v1model switch (`mirroring_*`, `mc_*`).

use netsparse_engine::control::commands::LineError;
use netsparse_engine::{ControlPlane, ControlPlaneError, Engine, Replica};

use super::PsaSwitch;
use crate::replication::Replication;

impl ControlPlane for PsaSwitch {
    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    fn mc_group_set(&mut self, group: u16, replicas: &[Replica]) -> Result<(), ControlPlaneError> {
        self.repl.mc_group_set(group, replicas)
    }

    fn mc_group_remove(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        self.repl.mc_group_delete(group)
    }

    fn mc_groups(&self) -> Vec<(u16, Vec<Replica>)> {
        self.repl.groups()
    }

    fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        self.repl.mirroring_set(session, replicas)
    }

    fn mirroring_remove(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        self.repl.mirroring_delete(session)
    }

    fn mirroring_sessions(&self) -> Vec<(u32, Vec<Replica>)> {
        self.repl.sessions()
    }

    fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, LineError>> {
        self.repl.command(cmd, args)
    }
}

impl PsaSwitch {
    /// The multicast groups and clone sessions.
    pub fn replication(&mut self) -> &mut Replication {
        &mut self.repl
    }
}
