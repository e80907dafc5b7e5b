//! The v1model switch's control plane: the engine's target-neutral
//! [`ControlPlane`] (tables, registers, counters, meters, digests) plus what
//! only this target has — BMv2's packet replication engine (multicast
//! groups and nodes) and mirror (clone) sessions — and their command-file
//! commands (`mirroring_*`, `mc_*`), kept in [`crate::replication`].

use netsparse_engine::control::commands::LineError;
use netsparse_engine::{ControlPlane, ControlPlaneError, Engine};

use super::{Replica, Switch};
pub use crate::replication::McNodeHandle;

impl ControlPlane for Switch {
    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    fn mc_group_set(&mut self, group: u16, replicas: &[Replica]) -> Result<(), ControlPlaneError> {
        Switch::mc_group_set(self, group, replicas)
    }

    fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        Switch::mirroring_set(self, session, replicas)
    }

    fn mc_group_remove(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        Switch::mc_group_delete(self, group)
    }

    fn mc_groups(&self) -> Vec<(u16, Vec<Replica>)> {
        self.repl.groups()
    }

    fn mirroring_remove(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        Switch::mirroring_delete(self, session)
    }

    fn mirroring_sessions(&self) -> Vec<(u32, Vec<Replica>)> {
        self.repl.sessions()
    }

    fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, LineError>> {
        self.repl.command(cmd, args)
    }
}

impl Switch {
    /// Mirror session `session` sends clones to `port` (BMv2 `mirroring_add`).
    pub fn mirroring_add(&mut self, session: u32, port: u32) -> Result<(), ControlPlaneError> {
        self.repl.mirroring_add(session, port)
    }

    /// Mirror session `session` sends a clone to each replica (P4Runtime
    /// clone session entries).
    pub fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        self.repl.mirroring_set(session, replicas)
    }

    /// Remove a mirror session.
    pub fn mirroring_delete(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        self.repl.mirroring_delete(session)
    }

    /// Create an empty multicast group (BMv2 `mc_mgrp_create`).
    pub fn mc_group_create(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        self.repl.mc_group_create(group)
    }

    /// Delete a multicast group.
    pub fn mc_group_delete(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        self.repl.mc_group_delete(group)
    }

    /// Create a multicast node: replication id `rid` on `ports`.
    pub fn mc_node_create(
        &mut self,
        rid: u16,
        ports: &[u32],
    ) -> Result<McNodeHandle, ControlPlaneError> {
        self.repl.mc_node_create(rid, ports)
    }

    /// Attach a node to a group.
    pub fn mc_node_associate(
        &mut self,
        group: u16,
        node: McNodeHandle,
    ) -> Result<(), ControlPlaneError> {
        self.repl.mc_node_associate(group, node)
    }

    /// Detach a node from a group.
    pub fn mc_node_dissociate(
        &mut self,
        group: u16,
        node: McNodeHandle,
    ) -> Result<(), ControlPlaneError> {
        self.repl.mc_node_dissociate(group, node)
    }

    /// Replace a group's replicas (P4Runtime multicast group entries):
    /// creates the group if needed, one node per distinct rid.
    pub fn mc_group_set(
        &mut self,
        group: u16,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        self.repl.mc_group_set(group, replicas)
    }

    /// The (port, rid) copies group `group` makes, in order.
    pub fn mc_group_replicas(&self, group: u16) -> Option<&[Replica]> {
        self.repl.group(group)
    }
}
