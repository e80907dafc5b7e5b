//! BMv2's packet replication engine, shared by the v1model and PSA
//! switches: multicast groups made of nodes (a replication id and a set of
//! ports), mirror (clone) sessions, and their command-file commands
//! (`mirroring_*`, `mc_*`).
//!
//! Replica lists are expanded when a group changes, so a packet's
//! replication walks a ready slice.

use std::collections::BTreeMap;

use netsparse_engine::control::commands::{need, num, LineError};
use netsparse_engine::{ControlPlaneError, Replica};

/// Handle of a multicast node (BMv2 `mc_node_create`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct McNodeHandle(pub u32);

/// A multicast node (BMv2 PRE: a rid and a set of ports).
#[derive(Clone, Debug, PartialEq, Eq)]
struct McNode {
    rid: u16,
    ports: Vec<u32>,
}

/// The command-file commands [`Replication::command`] understands.
pub const REPLICATION_COMMANDS: [&str; 9] = [
    "mirroring_add",
    "mirroring_add_mc",
    "mirroring_get",
    "mirroring_delete",
    "mc_mgrp_create",
    "mc_mgrp_destroy",
    "mc_node_create",
    "mc_node_associate",
    "mc_node_dissociate",
];

/// Multicast groups and mirror sessions of one switch.
#[derive(Clone, Debug)]
pub struct Replication {
    /// Ports at or above this are refused (the target's port range).
    port_limit: u32,
    /// Mirror sessions: id → replicas.
    mirror: BTreeMap<u32, Vec<Replica>>,
    /// Mirror sessions that clone to a multicast group: id → group.
    mirror_mc: BTreeMap<u32, u16>,
    /// Multicast groups: id → node handles.
    mc_groups: BTreeMap<u16, Vec<u32>>,
    /// Multicast nodes by handle.
    mc_nodes: Vec<Option<McNode>>,
    /// Expanded replica lists per group (rebuilt on every change).
    mc_cache: BTreeMap<u16, Vec<Replica>>,
}

impl Replication {
    /// No groups, no sessions; ports must be below `port_limit`.
    pub fn new(port_limit: u32) -> Replication {
        Replication {
            port_limit,
            mirror: BTreeMap::new(),
            mirror_mc: BTreeMap::new(),
            mc_groups: BTreeMap::new(),
            mc_nodes: Vec::new(),
            mc_cache: BTreeMap::new(),
        }
    }

    fn check_port(&self, port: u32) -> Result<(), ControlPlaneError> {
        if port >= self.port_limit {
            return Err(ControlPlaneError::Replication(format!(
                "port {port} out of range (0..={})",
                self.port_limit - 1
            )));
        }
        Ok(())
    }

    /// The replicas of mirror session `session` (None: no such session; a
    /// session to a multicast group has that group's current replicas).
    #[inline]
    pub fn session(&self, session: u32) -> Option<&[Replica]> {
        if let Some(r) = self.mirror.get(&session) {
            return Some(r);
        }
        let g = self.mirror_mc.get(&session)?;
        Some(self.group(*g).unwrap_or(&[]))
    }

    /// The (port, rid) copies group `group` makes, in order (None: no such group).
    #[inline]
    pub fn group(&self, group: u16) -> Option<&[Replica]> {
        self.mc_cache.get(&group).map(Vec::as_slice)
    }

    /// Every group with its replicas.
    pub fn groups(&self) -> Vec<(u16, Vec<Replica>)> {
        self.mc_groups
            .keys()
            .map(|g| (*g, self.mc_cache.get(g).cloned().unwrap_or_default()))
            .collect()
    }

    /// Every mirror session with its replicas (sessions to a multicast
    /// group with the group's current replicas), by session id.
    pub fn sessions(&self) -> Vec<(u32, Vec<Replica>)> {
        let mut v: Vec<(u32, Vec<Replica>)> =
            self.mirror.iter().map(|(s, r)| (*s, r.clone())).collect();
        for s in self.mirror_mc.keys() {
            v.push((*s, self.session(*s).unwrap_or(&[]).to_vec()));
        }
        v.sort_by_key(|(s, _)| *s);
        v
    }

    /// Mirror session `session` clones to every replica of multicast group
    /// `group` (BMv2 `mirroring_add_mc`); the group may be created later.
    pub fn mirroring_add_mc(&mut self, session: u32, group: u16) -> Result<(), ControlPlaneError> {
        if group == 0 {
            return Err(ControlPlaneError::Replication(
                "multicast group 0 means no multicast".into(),
            ));
        }
        self.mirror.remove(&session);
        self.mirror_mc.insert(session, group);
        Ok(())
    }

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
            self.check_port(r.port)?;
        }
        self.mirror_mc.remove(&session);
        self.mirror.insert(session, replicas.to_vec());
        Ok(())
    }

    /// Remove a mirror session.
    pub fn mirroring_delete(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        let port = self.mirror.remove(&session).is_some();
        let mc = self.mirror_mc.remove(&session).is_some();
        if port || mc {
            Ok(())
        } else {
            Err(ControlPlaneError::Replication(format!(
                "no mirror session {session}"
            )))
        }
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
            self.check_port(*p)?;
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
        let mut by_rid: BTreeMap<u16, Vec<u32>> = BTreeMap::new();
        for r in replicas {
            self.check_port(r.port)?;
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

    /// Run a BMv2 replication command (mirroring, multicast); `None` when
    /// `cmd` is not one of [`REPLICATION_COMMANDS`].
    pub fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, LineError>> {
        REPLICATION_COMMANDS
            .contains(&cmd)
            .then(|| self.run_command(cmd, args))
    }

    fn run_command(&mut self, cmd: &str, args: &[&str]) -> Result<bool, LineError> {
        match cmd {
            "mirroring_add" => {
                need(args, 2, "mirroring_add <session> <port>")?;
                self.mirroring_add(num(args[0], "session")?, num(args[1], "port")?)?;
            }
            "mirroring_add_mc" => {
                need(args, 2, "mirroring_add_mc <session> <group>")?;
                self.mirroring_add_mc(num(args[0], "session")?, num(args[1], "group")?)?;
            }
            "mirroring_get" => {
                need(args, 1, "mirroring_get <session>")?;
                let session: u32 = num(args[0], "session")?;
                let Some(reps) = self.session(session) else {
                    return Err(ControlPlaneError::Replication(format!(
                        "no mirror session {session}"
                    ))
                    .into());
                };
                tracing::info!("mirror session {session}: {reps:?}");
            }
            "mirroring_delete" => {
                need(args, 1, "mirroring_delete <session>")?;
                self.mirroring_delete(num(args[0], "session")?)?;
            }
            "mc_mgrp_create" => {
                need(args, 1, "mc_mgrp_create <group>")?;
                self.mc_group_create(num(args[0], "group")?)?;
            }
            "mc_mgrp_destroy" => {
                need(args, 1, "mc_mgrp_destroy <group>")?;
                self.mc_group_delete(num(args[0], "group")?)?;
            }
            "mc_node_create" => {
                need(args, 1, "mc_node_create <rid> <port>...")?;
                let rid: u16 = num(args[0], "rid")?;
                let ports = args[1..]
                    .iter()
                    .map(|p| num::<u32>(p, "port"))
                    .collect::<Result<Vec<_>, _>>()?;
                self.mc_node_create(rid, &ports)?;
            }
            "mc_node_associate" | "mc_node_dissociate" => {
                need(args, 2, "mc_node_associate <group> <node handle>")?;
                let g: u16 = num(args[0], "group")?;
                let n = McNodeHandle(num(args[1], "node handle")?);
                if cmd == "mc_node_associate" {
                    self.mc_node_associate(g, n)?;
                } else {
                    self.mc_node_dissociate(g, n)?;
                }
            }
            other => return Err(LineError::Syntax(format!("unknown command `{other}`"))),
        }
        Ok(false)
    }
}
