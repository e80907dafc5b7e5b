//! The v1model switch's control plane: the engine's target-neutral
//! [`ControlPlane`] (tables, registers, counters, meters, digests) plus what
//! only this target has — BMv2's packet replication engine (multicast
//! groups and nodes) and mirror (clone) sessions — and their command-file
//! commands (`mirroring_*`, `mc_*`).

use netsparse_engine::control::commands::{need, num, LineError};
use netsparse_engine::{ControlPlane, ControlPlaneError, Engine};

use super::{McNode, Replica, Switch};

/// Handle of a multicast node (BMv2 `mc_node_create`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct McNodeHandle(pub u32);

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
        self.mc_groups
            .keys()
            .map(|g| (*g, self.mc_cache.get(g).cloned().unwrap_or_default()))
            .collect()
    }

    fn mirroring_remove(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        Switch::mirroring_delete(self, session)
    }

    fn mirroring_sessions(&self) -> Vec<(u32, Vec<Replica>)> {
        self.mirror.iter().map(|(s, r)| (*s, r.clone())).collect()
    }

    fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, LineError>> {
        const KNOWN: [&str; 7] = [
            "mirroring_add",
            "mirroring_delete",
            "mc_mgrp_create",
            "mc_mgrp_destroy",
            "mc_node_create",
            "mc_node_associate",
            "mc_node_dissociate",
        ];
        KNOWN
            .contains(&cmd)
            .then(|| replication_command(self, cmd, args))
    }
}

impl Switch {
    /// Mirror session `session` sends clones to `port` (BMv2 `mirroring_add`).
    pub fn mirroring_add(&mut self, session: u32, port: u32) -> Result<(), ControlPlaneError> {
        self.mirroring_set(session, &[Replica { port, rid: 0 }])
    }

    /// Mirror session `session` sends a clone to each replica (P4Runtime
    /// clone session entries).
    pub fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        for r in replicas {
            check_port(r.port)?;
        }
        self.mirror.insert(session, replicas.to_vec());
        Ok(())
    }

    /// Remove a mirror session.
    pub fn mirroring_delete(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        self.mirror
            .remove(&session)
            .map(|_| ())
            .ok_or_else(|| ControlPlaneError::Replication(format!("no mirror session {session}")))
    }

    /// Create an empty multicast group (BMv2 `mc_mgrp_create`).
    pub fn mc_group_create(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        if group == 0 {
            return Err(ControlPlaneError::Replication(
                "multicast group 0 means no multicast".into(),
            ));
        }
        if self.mc_groups.contains_key(&group) {
            return Err(ControlPlaneError::Replication(format!(
                "multicast group {group} already exists"
            )));
        }
        self.mc_groups.insert(group, Vec::new());
        self.rebuild_mc(group);
        Ok(())
    }

    /// Delete a multicast group.
    pub fn mc_group_delete(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        self.mc_groups
            .remove(&group)
            .ok_or_else(|| ControlPlaneError::Replication(format!("no multicast group {group}")))?;
        self.mc_cache.remove(&group);
        Ok(())
    }

    /// Create a multicast node: replication id `rid` on `ports`.
    pub fn mc_node_create(
        &mut self,
        rid: u16,
        ports: &[u32],
    ) -> Result<McNodeHandle, ControlPlaneError> {
        for p in ports {
            check_port(*p)?;
        }
        let mut ports = ports.to_vec();
        ports.sort_unstable();
        ports.dedup();
        self.mc_nodes.push(Some(McNode { rid, ports }));
        Ok(McNodeHandle((self.mc_nodes.len() - 1) as u32))
    }

    /// Attach a node to a group.
    pub fn mc_node_associate(
        &mut self,
        group: u16,
        node: McNodeHandle,
    ) -> Result<(), ControlPlaneError> {
        if self
            .mc_nodes
            .get(node.0 as usize)
            .is_none_or(Option::is_none)
        {
            return Err(ControlPlaneError::Replication(format!(
                "no multicast node {}",
                node.0
            )));
        }
        let g = self
            .mc_groups
            .get_mut(&group)
            .ok_or_else(|| ControlPlaneError::Replication(format!("no multicast group {group}")))?;
        if !g.contains(&node.0) {
            g.push(node.0);
        }
        self.rebuild_mc(group);
        Ok(())
    }

    /// Detach a node from a group.
    pub fn mc_node_dissociate(
        &mut self,
        group: u16,
        node: McNodeHandle,
    ) -> Result<(), ControlPlaneError> {
        let g = self
            .mc_groups
            .get_mut(&group)
            .ok_or_else(|| ControlPlaneError::Replication(format!("no multicast group {group}")))?;
        g.retain(|n| *n != node.0);
        self.rebuild_mc(group);
        Ok(())
    }

    /// Replace a group's replicas (P4Runtime multicast group entries):
    /// creates the group if needed, one node per distinct rid.
    pub fn mc_group_set(
        &mut self,
        group: u16,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        if group == 0 {
            return Err(ControlPlaneError::Replication(
                "multicast group 0 means no multicast".into(),
            ));
        }
        let mut by_rid: std::collections::BTreeMap<u16, Vec<u32>> = Default::default();
        for r in replicas {
            check_port(r.port)?;
            by_rid.entry(r.rid).or_default().push(r.port);
        }
        let mut nodes = Vec::new();
        for (rid, ports) in by_rid {
            nodes.push(self.mc_node_create(rid, &ports)?.0);
        }
        self.mc_groups.insert(group, nodes);
        self.rebuild_mc(group);
        Ok(())
    }

    fn rebuild_mc(&mut self, group: u16) {
        let mut reps = Vec::new();
        if let Some(nodes) = self.mc_groups.get(&group) {
            for n in nodes {
                if let Some(Some(node)) = self.mc_nodes.get(*n as usize) {
                    reps.extend(node.ports.iter().map(|&port| Replica {
                        port,
                        rid: node.rid,
                    }));
                }
            }
        }
        self.mc_cache.insert(group, reps);
    }

    /// The (port, rid) copies group `group` makes, in order.
    pub fn mc_group_replicas(&self, group: u16) -> Option<&[Replica]> {
        self.mc_cache.get(&group).map(Vec::as_slice)
    }
}

/// A BMv2 replication command (mirroring, multicast).
fn replication_command(sw: &mut Switch, cmd: &str, args: &[&str]) -> Result<bool, LineError> {
    match cmd {
        "mirroring_add" => {
            need(args, 2, "mirroring_add <session> <port>")?;
            sw.mirroring_add(num(args[0], "session")?, num(args[1], "port")?)?;
            Ok(false)
        }
        "mirroring_delete" => {
            need(args, 1, "mirroring_delete <session>")?;
            sw.mirroring_delete(num(args[0], "session")?)?;
            Ok(false)
        }
        "mc_mgrp_create" => {
            need(args, 1, "mc_mgrp_create <group>")?;
            sw.mc_group_create(num(args[0], "group")?)?;
            Ok(false)
        }
        "mc_mgrp_destroy" => {
            need(args, 1, "mc_mgrp_destroy <group>")?;
            sw.mc_group_delete(num(args[0], "group")?)?;
            Ok(false)
        }
        "mc_node_create" => {
            need(args, 1, "mc_node_create <rid> <port>...")?;
            let rid: u16 = num(args[0], "rid")?;
            let ports = args[1..]
                .iter()
                .map(|p| num::<u32>(p, "port"))
                .collect::<Result<Vec<_>, _>>()?;
            sw.mc_node_create(rid, &ports)?;
            Ok(false)
        }
        "mc_node_associate" | "mc_node_dissociate" => {
            need(args, 2, "mc_node_associate <group> <node handle>")?;
            let g: u16 = num(args[0], "group")?;
            let n = McNodeHandle(num(args[1], "node handle")?);
            if cmd == "mc_node_associate" {
                sw.mc_node_associate(g, n)?;
            } else {
                sw.mc_node_dissociate(g, n)?;
            }
            Ok(false)
        }
        other => Err(LineError::Syntax(format!("unknown command `{other}`"))),
    }
}

fn check_port(port: u32) -> Result<(), ControlPlaneError> {
    if port >= super::DROP_PORT {
        return Err(ControlPlaneError::Replication(format!(
            "port {port} out of range (0..=510)"
        )));
    }
    Ok(())
}
