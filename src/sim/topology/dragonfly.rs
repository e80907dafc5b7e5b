//! Dragonfly (Kim et al., ISCA '08): groups of switches, fully connected
//! inside a group by local links, the groups connected to each other by
//! global links. This file owns the geometry (port numbering, which global
//! link joins which groups) and the choice of global link; minimal routing
//! on top of it is in [`super::Topology`].
//!
//! Figure 22 of the paper: 32 switches in 4 groups of 8, 4 hosts and 4
//! global links per switch (the balanced a = 2p = 2h configuration).
//!
//! # Ports of switch `i` of group `G`
//!
//! Hosts `0..hosts`; local links `hosts + idx(j)` to switch `j ≠ i` of the
//! group (`idx(j)` = `j`'s rank among the others); global links
//! `hosts + (a − 1) + k` for `k < h`.
//!
//! # Global links
//!
//! A group has `a·h` global ports, numbered `l = i·h + k`. With `g` groups,
//! each pair of groups gets `M = ⌊a·h / (g − 1)⌋` links: port `l < M·(g − 1)`
//! of group `G` is link `m = l mod M` to group `G + 1 + ⌊l / M⌋ (mod g)`,
//! and meets port `o'·M + m` of that group, where `o' = g − 2 − ⌊l / M⌋` is
//! `G`'s offset from it. The remaining `a·h − M·(g − 1)` ports per group
//! stay unconnected (Figure 22: 30 of 32 used, 10 links per group pair).

use super::TopologyError;

/// A validated Dragonfly shape (without hosts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Dragonfly {
    groups: u32,
    routers: u32,
    global: u32,
}

impl Dragonfly {
    /// Figure 22's Dragonfly: 4 groups of 8 switches, 4 global links each.
    pub const PAPER: Dragonfly = Dragonfly {
        groups: 4,
        routers: 8,
        global: 4,
    };

    /// `groups` groups (2..=64) of `routers` switches (1..=64) with
    /// `global` global ports each (1..=64); every pair of groups must get
    /// at least one link (`routers · global ≥ groups − 1`).
    pub fn new(groups: u32, routers: u32, global: u32) -> Result<Dragonfly, TopologyError> {
        for (name, v, lo) in [
            ("dragonfly groups", groups, 2),
            ("dragonfly switches", routers, 1),
            ("dragonfly global", global, 1),
        ] {
            if !(lo..=64).contains(&v) {
                return Err(TopologyError::Parameter {
                    name,
                    value: v.to_string(),
                    range: format!("{lo}..=64"),
                });
            }
        }
        if routers * global < groups - 1 {
            return Err(TopologyError::Parameter {
                name: "dragonfly global",
                value: global.to_string(),
                range: format!(
                    "at least {} (switches x global links per group must reach the other {} groups)",
                    (groups - 1).div_ceil(routers),
                    groups - 1
                ),
            });
        }
        Ok(Dragonfly {
            groups,
            routers,
            global,
        })
    }

    /// Groups.
    pub fn groups(&self) -> u32 {
        self.groups
    }
    /// Switches per group.
    pub fn routers(&self) -> u32 {
        self.routers
    }
    /// Global ports per switch.
    pub fn global(&self) -> u32 {
        self.global
    }
    /// Switches.
    pub fn switches(&self) -> u64 {
        u64::from(self.groups) * u64::from(self.routers)
    }
    /// Switch-to-switch ports of one switch (local and global).
    pub fn fabric_ports(&self) -> u64 {
        u64::from(self.routers - 1) + u64::from(self.global)
    }
    /// Global links between each pair of groups.
    pub fn links_per_pair(&self) -> u32 {
        self.routers * self.global / (self.groups - 1)
    }

    /// The group of switch `r`.
    pub fn group(&self, r: u32) -> u32 {
        r / self.routers
    }

    /// The local port of switch `r` towards switch `other` of its group.
    pub fn local_port(&self, hosts: u32, r: u32, other: u32) -> u32 {
        let (i, j) = (r % self.routers, other % self.routers);
        hosts + if j < i { j } else { j - 1 }
    }

    /// The switch and port of group `from`'s end of link `m` to group `to`.
    pub fn global_end(&self, hosts: u32, from: u32, to: u32, m: u32) -> (u32, u32) {
        let o = (to + self.groups - from - 1) % self.groups;
        let l = o * self.links_per_pair() + m;
        (
            from * self.routers + l / self.global,
            hosts + self.routers - 1 + l % self.global,
        )
    }

    /// The (switch, port) at the other end of switch `r`'s fabric port
    /// `port`; `None` for host ports, unconnected global ports and ports
    /// past the end.
    pub fn peer(&self, hosts: u32, r: u32, port: u32) -> Option<(u32, u32)> {
        let rel = port.checked_sub(hosts)?;
        let (g, i) = (self.group(r), r % self.routers);
        if rel < self.routers - 1 {
            let j = if rel < i { rel } else { rel + 1 };
            let other = g * self.routers + j;
            return Some((other, self.local_port(hosts, other, r)));
        }
        let k = rel - (self.routers - 1);
        if k >= self.global {
            return None;
        }
        let l = i * self.global + k;
        let per = self.links_per_pair();
        if l >= per * (self.groups - 1) {
            return None;
        }
        let to = (g + 1 + l / per) % self.groups;
        Some(self.global_end(hosts, to, g, l % per))
    }

    /// The global link between the requester's group and the owner's
    /// switch that carries the owner's reads and responses: link
    /// `(owner's index in its group + a·[requester group > owner group]) mod
    /// M`, so the two directions of a group pair together use every link.
    pub fn link_for(&self, requester_group: u32, owner_switch: u32) -> u32 {
        let owner_group = self.group(owner_switch);
        let turn = if requester_group > owner_group {
            self.routers
        } else {
            0
        };
        (owner_switch % self.routers + turn) % self.links_per_pair()
    }
}

impl std::fmt::Display for Dragonfly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "dragonfly:groups={},switches={},global={}",
            self.groups, self.routers, self.global
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_links_pair_up_and_join_every_group_pair() {
        let d = Dragonfly::PAPER;
        assert_eq!(d.links_per_pair(), 10);
        let hosts = 4;
        let mut pairs = std::collections::BTreeMap::new();
        let mut unconnected = 0;
        for r in 0..32 {
            for port in hosts..hosts + 11 {
                match d.peer(hosts, r, port) {
                    Some((o, p)) => {
                        assert_eq!(d.peer(hosts, o, p), Some((r, port)), "{r}:{port}");
                        if d.group(o) != d.group(r) {
                            let key = (d.group(r).min(d.group(o)), d.group(r).max(d.group(o)));
                            *pairs.entry(key).or_insert(0) += 1;
                        } else {
                            assert!(port < hosts + 7);
                        }
                    }
                    None => unconnected += 1,
                }
            }
        }
        // 6 group pairs, 10 links each, counted from both ends.
        assert_eq!(pairs.len(), 6);
        assert!(pairs.values().all(|&n| n == 20), "{pairs:?}");
        assert_eq!(unconnected, 4 * 2);
    }

    #[test]
    fn both_directions_of_a_group_pair_use_every_link() {
        let d = Dragonfly::PAPER;
        let mut used = std::collections::BTreeSet::new();
        for owner in 0..8 {
            used.insert(d.link_for(1, owner));
        }
        for owner in 8..16 {
            used.insert(d.link_for(0, owner));
        }
        assert_eq!(used.len(), 10);
    }

    #[test]
    fn bad_shapes_name_the_parameter() {
        assert!(Dragonfly::new(1, 8, 4)
            .unwrap_err()
            .to_string()
            .contains("dragonfly groups"));
        assert!(Dragonfly::new(40, 2, 2)
            .unwrap_err()
            .to_string()
            .contains("dragonfly global"));
    }
}
