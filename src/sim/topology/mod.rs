//! The cluster's network: structure, symmetric routing, control-plane
//! entries and a p4lang-tutorials topology JSON, for the three topologies
//! of the paper (§8.5, Figure 22): leaf-spine (Table 5, the default),
//! HyperX ([`hyperx`]) and Dragonfly ([`dragonfly`]).
//!
//! Leaf-spine: R racks of H = N / R hosts; every host links to its rack's
//! ToR switch; every ToR links to each of S spines (default S = H, so a ToR
//! has H + S ports: Table 5's 16 + 16 = 32).
//!
//! HyperX and Dragonfly: every switch has hosts (N / switches each), so
//! every switch is a [`Device::Tor`] and runs the ToR program with the
//! NetSparse switch functions, as the paper's ToRs; there are no spines.
//! Their routing is minimal and deterministic, and keeps the Property
//! Cache's port condition for every read and its responses (see
//! [`Topology::hop`]): HyperX sends reads in dimension order lowest
//! dimension first and responses highest first, so a response retraces its
//! read hop by hop (the trunk of a hop is chosen by destination, and a
//! neighbour's trunk ports share one middle pipe with the default shape);
//! Dragonfly sends reads and responses between a requester group and an
//! owner switch over one global link ([`dragonfly::Dragonfly::link_for`]),
//! local–global–local, and the owner group's gateway switch recognises a
//! response by the local port it arrives on (table `flow_port`). Their
//! switches' port counts are padded to a power-of-two number of 4-port
//! pipes (unused ports stay unconnected), so the Property Cache divides
//! evenly.
//!
//! # Ports
//!
//! | device | port | peer |
//! |---|---|---|
//! | node `n` (its NIC) | 0 | ToR `n / H`, port `n mod H` |
//! | ToR `r` | `h` (0 ≤ h < H) | node `r·H + h` |
//! | ToR `r` | `H + s` (0 ≤ s < S) | spine `s`, port `r` |
//! | spine `s` | `r` (0 ≤ r < R) | ToR `r`, port `H + s` |
//!
//! # Routing (deterministic and symmetric)
//!
//! By default ([`Routing::RackPair`]) traffic between racks A ≠ B always
//! crosses spine `(A + B) mod S`, in both directions. So a read's egress port at the requester's ToR is the
//! port its responses arrive on, as the Property Cache requires (§6.2.1: a
//! response fills the cache of the middle pipe its *ingress* port belongs
//! to, and a read looks in the middle pipe of its *egress* port). Within a
//! rack the ToR delivers directly. [`Routing::NodePair`] and
//! [`Routing::Owner`] spread a rack's traffic over every uplink, by node
//! pair or by owner node, through the ToR programs' `flow_port` table
//! ([`Topology::flow_port`]); [`Routing::OwnerLoad`] does it per (rack,
//! owner) pair from the workload's loads ([`Topology::with_pair_loads`]);
//! each variant says what it keeps of the cache condition.
//!
//! # Device addresses
//!
//! Nodes use [`DeviceAddr::Node`]; ToR `r` is [`DeviceAddr::Switch`]`(r)` and
//! spine `s` is `DeviceAddr::Switch(R + s)` (the wire module's addressing
//! convention).

mod balance;
pub use balance::PairCosts;
pub mod dragonfly;
pub mod hyperx;
mod spec;
mod tables;

use thiserror::Error;

pub use dragonfly::Dragonfly;
pub use hyperx::HyperX;
pub use spec::TopologySpec;
pub use tables::TableTemplates;

use netsparse_externs::wire::{DeviceAddr, MAX_NODE_ID, MAX_SWITCH_ID};
use netsparse_externs::{Datapath, Time};
use netsparse_netsim::{DeviceId, Engine, EngineConfig, EngineError, LinkParams};

/// The spine [`Routing::Owner`] gives a (requester rack, owner node) pair
/// on a leaf-spine of `spines` spines: `(rack + owner) mod spines`, so one
/// rack's owners are spread over every spine, and so are one owner's
/// requester racks (also `owner-load`'s starting point).
fn owner_spine(rack: u32, owner: u32, spines: u32) -> u32 {
    ((u64::from(rack) + u64::from(owner)) % u64::from(spines.max(1))) as u32
}

/// Largest port number a switch may use (BMv2 reserves 511 as the drop port).
pub const MAX_SWITCH_PORTS: u32 = 511;

/// An impossible topology. Every variant names the offending value.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TopologyError {
    /// Too few nodes.
    #[error("nodes = {0}: a cluster needs at least 1 node")]
    NoNodes(u32),
    /// Zero racks.
    #[error("racks = 0: a cluster needs at least 1 rack")]
    NoRacks,
    /// Nodes not divisible by racks.
    #[error("nodes = {nodes} is not divisible by racks = {racks} (every rack has the same number of hosts)")]
    NotDivisible {
        /// Nodes.
        nodes: u32,
        /// Racks.
        racks: u32,
    },
    /// Zero spines.
    #[error("spines = 0: every ToR needs at least one uplink")]
    NoSpines,
    /// Too many ports on a switch.
    #[error("{what} = {ports} exceeds the {MAX_SWITCH_PORTS} ports a switch may have")]
    TooManyPorts {
        /// `"ToR ports (hosts per rack + spines)"` or `"spine ports (racks)"`.
        what: &'static str,
        /// The port count.
        ports: u32,
    },
    /// More devices than the addressing convention holds.
    #[error("{what} = {value} exceeds the addressing convention's limit {max}")]
    TooManyDevices {
        /// `"nodes"` or `"switches"`.
        what: &'static str,
        /// The count.
        value: u64,
        /// The limit.
        max: u64,
    },
    /// A topology parameter out of its range.
    #[error("{name} = {value} is out of range: {range}")]
    Parameter {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: String,
        /// What is valid.
        range: String,
    },
}

/// One device of the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Device {
    /// Compute node `n` (its NIC).
    Node(u32),
    /// Top-of-rack switch of rack `r`.
    Tor(u32),
    /// Spine switch `s`.
    Spine(u32),
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Node(n) => write!(f, "h{n}"),
            Device::Tor(r) => write!(f, "tor{r}"),
            Device::Spine(s) => write!(f, "spine{s}"),
        }
    }
}

/// A device and one of its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    /// The device.
    pub device: Device,
    /// The port.
    pub port: u32,
}

/// A full-duplex cable between two endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// One end.
    pub a: Endpoint,
    /// The other end.
    pub b: Endpoint,
}

/// How a ToR picks the uplink (spine) of traffic between racks. Every
/// choice is deterministic; which of them keep the Property Cache's port
/// condition (§6.2.1) is said per variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Routing {
    /// Spine `(A + B) mod S` for racks A and B, both directions: a read and
    /// its responses cross one port of each ToR, and so do all reads of a
    /// rack to another rack, so every node's responses can serve every
    /// other node of the rack. A ToR uses at most R − 1 of its S uplinks.
    #[default]
    RackPair,
    /// Spine `(x + y) mod S` for nodes x and y, both directions: uses every
    /// uplink, and a read and its responses still cross one port; but reads
    /// of two nodes of a rack to one owner may leave on different uplinks
    /// (different middle pipes), so a cached response serves only the reads
    /// that share its pipe.
    NodePair,
    /// Spine `(A + y) mod S` for requester rack A and owner node y: reads
    /// from rack A to y, and y's responses to rack A, cross spine (A + y) mod
    /// S. Uses every uplink and keeps the condition for the whole rack (all
    /// of A's reads to y leave on one uplink); responses of one owner rack
    /// to one requester spread over several uplinks, so they concatenate
    /// less. The ToRs tell reads from responses by the packet's PR type.
    Owner,
    /// Like [`Routing::Owner`], one spine per (requester rack, owner node)
    /// pair for its reads and their responses, but chosen by the control
    /// plane from the workload instead of the addresses
    /// ([`Topology::with_pair_loads`]: from `owner`'s spines, pairs move
    /// while that lowers the busy time they share on their two response
    /// links and their requester ToR's middle pipe, by the PRs each pair
    /// is expected to carry). Keeps the condition for the whole rack. Without
    /// loads (a topology written without its matrix) it routes as `owner`.
    OwnerLoad,
}

impl Routing {
    /// The CLI and TOML names.
    pub const NAMES: &'static str = "rack-pair, node-pair, owner, owner-load";

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Routing::RackPair => "rack-pair",
            Routing::NodePair => "node-pair",
            Routing::Owner => "owner",
            Routing::OwnerLoad => "owner-load",
        }
    }
}

impl std::str::FromStr for Routing {
    type Err = String;
    fn from_str(s: &str) -> Result<Routing, String> {
        match s {
            "rack-pair" => Ok(Routing::RackPair),
            "node-pair" => Ok(Routing::NodePair),
            "owner" => Ok(Routing::Owner),
            "owner-load" => Ok(Routing::OwnerLoad),
            other => Err(format!(
                "unknown routing {other:?} (one of {})",
                Routing::NAMES
            )),
        }
    }
}

impl std::fmt::Display for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The PR types of the concatenation header (`NS_READ`, `NS_RESPONSE` in
/// `netsparse.p4`).
pub const PR_TYPE_READ: u16 = 1;
/// See [`PR_TYPE_READ`].
pub const PR_TYPE_RESPONSE: u16 = 2;

/// The shape of the switch fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Shape {
    /// Leaf-spine with this many spines.
    LeafSpine {
        /// Spine switches.
        spines: u32,
    },
    /// HyperX (every switch has hosts).
    HyperX(HyperX),
    /// Dragonfly (every switch has hosts).
    Dragonfly(Dragonfly),
}

/// A validated cluster: nodes, switches, cables and routing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Topology {
    nodes: u32,
    racks: u32,
    hosts_per_rack: u32,
    shape: Shape,
    routing: Routing,
    /// [`Routing::OwnerLoad`]'s spine of each (requester rack, owner)
    /// pair, `rack * nodes + owner` (`None`: not computed).
    #[serde(skip)]
    pair_spines: Option<std::sync::Arc<[u16]>>,
}

impl Topology {
    /// A leaf-spine cluster: `nodes` in `racks` racks, `spines` spines
    /// (default: hosts per rack).
    pub fn new(nodes: u32, racks: u32, spines: Option<u32>) -> Result<Topology, TopologyError> {
        if nodes == 0 {
            return Err(TopologyError::NoNodes(nodes));
        }
        if racks == 0 {
            return Err(TopologyError::NoRacks);
        }
        if nodes % racks != 0 {
            return Err(TopologyError::NotDivisible { nodes, racks });
        }
        let h = nodes / racks;
        let s = spines.unwrap_or(h);
        if s == 0 {
            return Err(TopologyError::NoSpines);
        }
        check_counts(nodes, u64::from(racks) + u64::from(s))?;
        let tor_ports = u64::from(h) + u64::from(s);
        if tor_ports > u64::from(MAX_SWITCH_PORTS) {
            return Err(TopologyError::TooManyPorts {
                what: "ToR ports (hosts per rack + spines)",
                ports: tor_ports.min(u64::from(u32::MAX)) as u32,
            });
        }
        if racks > MAX_SWITCH_PORTS {
            return Err(TopologyError::TooManyPorts {
                what: "spine ports (racks)",
                ports: racks,
            });
        }
        Ok(Topology {
            nodes,
            racks,
            hosts_per_rack: h,
            shape: Shape::LeafSpine { spines: s },
            routing: Routing::RackPair,
            pair_spines: None,
        })
    }

    /// The cluster `spec` describes with `nodes` nodes; `racks` and
    /// `spines` apply to leaf-spine only.
    pub fn build(
        spec: TopologySpec,
        nodes: u32,
        racks: u32,
        spines: Option<u32>,
    ) -> Result<Topology, TopologyError> {
        let (shape, switches, fabric) = match spec {
            TopologySpec::LeafSpine => return Topology::new(nodes, racks, spines),
            TopologySpec::HyperX(h) => (Shape::HyperX(h), h.switches(), h.fabric_ports()),
            TopologySpec::Dragonfly(d) => (Shape::Dragonfly(d), d.switches(), d.fabric_ports()),
        };
        if nodes == 0 {
            return Err(TopologyError::NoNodes(nodes));
        }
        if u64::from(nodes) % switches != 0 {
            return Err(TopologyError::Parameter {
                name: "nodes",
                value: nodes.to_string(),
                range: format!(
                    "a multiple of the {} topology's {switches} switches (every switch has the same number of hosts)",
                    spec.kind()
                ),
            });
        }
        check_counts(nodes, switches)?;
        let hosts = nodes / switches as u32;
        let ports = padded_ports(u64::from(hosts) + fabric);
        if ports > u64::from(MAX_SWITCH_PORTS) {
            return Err(TopologyError::TooManyPorts {
                what: "switch ports (hosts + fabric links, padded to whole pipes)",
                ports: ports.min(u64::from(u32::MAX)) as u32,
            });
        }
        Ok(Topology {
            nodes,
            racks: switches as u32,
            hosts_per_rack: hosts,
            shape,
            routing: Routing::RackPair,
            pair_spines: None,
        })
    }

    /// The same cluster with `routing` between racks (leaf-spine; the other
    /// topologies have their own minimal routing, see [`Topology::hop`]).
    pub fn with_routing(mut self, routing: Routing) -> Topology {
        self.routing = routing;
        self
    }

    /// Choose [`Routing::OwnerLoad`]'s spines from `prs(rack, owner)`,
    /// the PRs each pair is expected to carry, and what a PR costs on the
    /// links and the middle pipes: starting from the spines `owner`
    /// routing takes, each pair moves to the spine where its two response
    /// links and its requester ToR's middle pipe carry the least of the
    /// other pairs' load, while that lowers it (see `balance.rs`); pairs
    /// without PRs keep `owner`'s spine. A deterministic function of its
    /// arguments. Other routings and topologies are returned unchanged.
    pub fn with_pair_loads(mut self, costs: PairCosts, prs: impl Fn(u32, u32) -> u64) -> Topology {
        let Shape::LeafSpine { spines } = self.shape else {
            return self;
        };
        if self.routing != Routing::OwnerLoad {
            return self;
        }
        let shape = balance::Shape {
            racks: self.racks,
            hosts: self.hosts_per_rack,
            spines,
            ports_per_pipe: self.tor_ports() / self.tor_pipes().max(1),
        };
        let map = balance::pair_spines(&shape, costs, prs);
        self.pair_spines = Some(map.into());
        self
    }

    /// The routing between racks.
    pub fn routing(&self) -> Routing {
        self.routing
    }

    /// The fabric's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The topology's name and parameters (`leaf-spine`, `hyperx:4x4x2,width=4`, ...).
    pub fn describe(&self) -> String {
        match self.shape {
            Shape::LeafSpine { spines } => format!(
                "leaf-spine: {} racks of {} hosts, {spines} spines, {} routing",
                self.racks, self.hosts_per_rack, self.routing
            ),
            Shape::HyperX(h) => format!("{h}: {} hosts per switch", self.hosts_per_rack),
            Shape::Dragonfly(d) => format!("{d}: {} hosts per switch", self.hosts_per_rack),
        }
    }

    /// The egress port at ToR `r` of a NetSparse packet of PR type `ty`
    /// from node `src` of rack `r` to node `dst` of another rack, under
    /// this leaf-spine cluster's routing; `None` when `node_port` (routing
    /// by destination) decides: within a rack, traffic arriving from a
    /// spine, every packet under [`Routing::RackPair`], and every packet of
    /// the other topologies.
    pub fn flow_port(&self, r: u32, ty: u16, src: u32, dst: u32) -> Option<u32> {
        let h = self.hosts_per_rack;
        let Shape::LeafSpine { spines } = self.shape else {
            return None;
        };
        if src >= self.nodes || dst >= self.nodes || self.rack_of(src) != r {
            return None;
        }
        let dst_rack = self.rack_of(dst);
        if dst_rack == r {
            return None;
        }
        let s = u64::from(spines);
        let spine = match (self.routing, ty) {
            (Routing::RackPair, _) => return None,
            (Routing::NodePair, _) => (u64::from(src) + u64::from(dst)) % s,
            // Reads: requester rack r, owner dst; responses: requester rack
            // dst_rack, owner src.
            (Routing::Owner, PR_TYPE_READ) => u64::from(owner_spine(r, dst, spines)),
            (Routing::Owner, PR_TYPE_RESPONSE) => u64::from(owner_spine(dst_rack, src, spines)),
            (Routing::Owner, _) => return None,
            (Routing::OwnerLoad, PR_TYPE_READ | PR_TYPE_RESPONSE) => {
                let (rack, owner) = if ty == PR_TYPE_READ {
                    (r, dst)
                } else {
                    (dst_rack, src)
                };
                let pair = rack as usize * self.nodes as usize + owner as usize;
                match self.pair_spines.as_deref().and_then(|m| m.get(pair)) {
                    Some(&spine) => u64::from(spine),
                    None => u64::from(owner_spine(rack, owner, spines)),
                }
            }
            (Routing::OwnerLoad, _) => return None,
        };
        Some(h + spine as u32)
    }

    /// Compute nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }
    /// Racks: switches with hosts ([`Device::Tor`]); every switch of a
    /// HyperX or Dragonfly.
    pub fn racks(&self) -> u32 {
        self.racks
    }
    /// Hosts per rack (per switch with hosts).
    pub fn hosts_per_rack(&self) -> u32 {
        self.hosts_per_rack
    }
    /// Spine switches (0 outside leaf-spine).
    pub fn spines(&self) -> u32 {
        match self.shape {
            Shape::LeafSpine { spines } => spines,
            _ => 0,
        }
    }
    /// Ports of a ToR (hosts + uplinks; for HyperX and Dragonfly hosts +
    /// fabric links, padded to a power-of-two number of 4-port pipes).
    pub fn tor_ports(&self) -> u32 {
        match self.shape {
            Shape::LeafSpine { spines } => self.hosts_per_rack + spines,
            Shape::HyperX(h) => {
                padded_ports(u64::from(self.hosts_per_rack) + h.fabric_ports()) as u32
            }
            Shape::Dragonfly(d) => {
                padded_ports(u64::from(self.hosts_per_rack) + d.fabric_ports()) as u32
            }
        }
    }
    /// Pipes of a NetSparse ToR: ports are grouped 4 per pipe as in Table 5
    /// (32 ports in 8 pipes); in a leaf-spine more precisely each pipe gets
    /// the smallest divisor of the port count that is at least 4 (all ports
    /// in one pipe when there is none, e.g. 2 or 3 ports).
    pub fn tor_pipes(&self) -> u32 {
        let p = self.tor_ports();
        if !matches!(self.shape, Shape::LeafSpine { .. }) {
            return p.div_ceil(4);
        }
        let per = (4..=p).find(|d| p % d == 0).unwrap_or(p).max(1);
        p / per
    }

    /// Ports of a spine (one per rack).
    pub fn spine_ports(&self) -> u32 {
        match self.shape {
            Shape::LeafSpine { .. } => self.racks,
            _ => 0,
        }
    }
    /// Ports of `d`.
    pub fn ports(&self, d: Device) -> u32 {
        match d {
            Device::Node(_) => 1,
            Device::Tor(_) => self.tor_ports(),
            Device::Spine(_) => self.spine_ports(),
        }
    }

    /// The rack (switch with hosts) of node `n`.
    pub fn rack_of(&self, n: u32) -> u32 {
        n / self.hosts_per_rack
    }

    /// The spine carrying traffic between racks `a` and `b` (either order)
    /// under rack-pair routing (leaf-spine).
    pub fn spine_for(&self, a: u32, b: u32) -> u32 {
        ((u64::from(a) + u64::from(b)) % u64::from(self.spines().max(1))) as u32
    }

    /// Total devices: nodes, then ToRs, then spines.
    pub fn device_count(&self) -> usize {
        (self.nodes + self.racks + self.spines()) as usize
    }

    /// Dense index of `d`: nodes `0..N`, ToRs `N..N+R`, spines after.
    pub fn device_index(&self, d: Device) -> usize {
        match d {
            Device::Node(n) => n as usize,
            Device::Tor(r) => (self.nodes + r) as usize,
            Device::Spine(s) => (self.nodes + self.racks + s) as usize,
        }
    }

    /// The device at dense index `i` (`None` past the end).
    pub fn device_at(&self, i: usize) -> Option<Device> {
        let i = u32::try_from(i).ok()?;
        if i < self.nodes {
            Some(Device::Node(i))
        } else if i < self.nodes + self.racks {
            Some(Device::Tor(i - self.nodes))
        } else if i < self.nodes + self.racks + self.spines() {
            Some(Device::Spine(i - self.nodes - self.racks))
        } else {
            None
        }
    }

    /// Every device in dense-index order.
    pub fn devices(&self) -> impl Iterator<Item = Device> + '_ {
        (0..self.device_count()).filter_map(|i| self.device_at(i))
    }

    /// The switch address of a ToR or spine (`None` for nodes).
    pub fn switch_addr(&self, d: Device) -> Option<DeviceAddr> {
        match d {
            Device::Node(_) => None,
            Device::Tor(r) => Some(DeviceAddr::Switch(r)),
            Device::Spine(s) => Some(DeviceAddr::Switch(self.racks + s)),
        }
    }

    /// The wire address of any device.
    pub fn addr(&self, d: Device) -> DeviceAddr {
        match d {
            Device::Node(n) => DeviceAddr::Node(n),
            sw => self.switch_addr(sw).unwrap_or(DeviceAddr::Switch(0)),
        }
    }

    /// Every cable: host links first (node order), then the fabric
    /// (ToR-major; each switch-to-switch cable once, from its lower end).
    pub fn links(&self) -> Vec<Link> {
        let h = self.hosts_per_rack;
        let mut v = Vec::with_capacity((self.nodes + self.racks * self.tor_ports()) as usize);
        for n in 0..self.nodes {
            v.push(Link {
                a: Endpoint {
                    device: Device::Node(n),
                    port: 0,
                },
                b: Endpoint {
                    device: Device::Tor(n / h),
                    port: n % h,
                },
            });
        }
        for r in 0..self.racks {
            for port in h..self.tor_ports() {
                let a = Endpoint {
                    device: Device::Tor(r),
                    port,
                };
                match self.peer(a) {
                    Some(b) if a < b => v.push(Link { a, b }),
                    _ => {}
                }
            }
        }
        v
    }

    /// The endpoint at the other end of `e`'s cable (`None` for a port that
    /// does not exist or is not connected).
    pub fn peer(&self, e: Endpoint) -> Option<Endpoint> {
        let h = self.hosts_per_rack;
        let tor = |(r, port): (u32, u32)| Endpoint {
            device: Device::Tor(r),
            port,
        };
        match (e.device, self.shape) {
            (Device::Node(n), _) if n < self.nodes && e.port == 0 => Some(Endpoint {
                device: Device::Tor(n / h),
                port: n % h,
            }),
            (Device::Tor(r), _) if r < self.racks && e.port < h => Some(Endpoint {
                device: Device::Node(r * h + e.port),
                port: 0,
            }),
            (Device::Tor(r), Shape::LeafSpine { spines })
                if r < self.racks && e.port < h + spines =>
            {
                Some(Endpoint {
                    device: Device::Spine(e.port - h),
                    port: r,
                })
            }
            (Device::Spine(s), Shape::LeafSpine { spines })
                if s < spines && e.port < self.racks =>
            {
                Some(Endpoint {
                    device: Device::Tor(e.port),
                    port: h + s,
                })
            }
            (Device::Tor(r), Shape::HyperX(x)) if r < self.racks => x.peer(h, r, e.port).map(tor),
            (Device::Tor(r), Shape::Dragonfly(d)) if r < self.racks => {
                d.peer(h, r, e.port).map(tor)
            }
            _ => None,
        }
    }

    /// The egress port `d` uses for traffic to node `dst` by destination
    /// alone (tables `node_port` and `ipv4_port`; for NetSparse reads in
    /// every topology); `None` if `dst` is not a node of the cluster or
    /// `d` is that node.
    pub fn route(&self, d: Device, dst: u32) -> Option<u32> {
        if dst >= self.nodes {
            return None;
        }
        let h = self.hosts_per_rack;
        let dst_rack = dst / h;
        match (d, self.shape) {
            (Device::Node(n), _) => (n != dst && n < self.nodes).then_some(0),
            (Device::Tor(r), _) if r == dst_rack => Some(dst % h),
            (Device::Tor(r), _) if r >= self.racks => None,
            (Device::Tor(r), Shape::LeafSpine { .. }) => Some(h + self.spine_for(r, dst_rack)),
            (Device::Tor(r), Shape::HyperX(x)) => x.next_port(h, r, dst_rack, true, dst),
            (Device::Tor(r), Shape::Dragonfly(df)) => {
                Some(self.dragonfly_out(df, r, df.group(r), dst_rack))
            }
            (Device::Spine(s), Shape::LeafSpine { spines }) if s < spines => Some(dst_rack),
            _ => None,
        }
    }

    /// Dragonfly: the port of switch `r` towards the global link that
    /// joins requester group `req_group` and owner switch `owner` (`r` in
    /// either group): the global port itself when `r` holds it, else the
    /// local port to the switch of `r`'s group that does. When both are in
    /// `r`'s group, the local port to `owner`.
    fn dragonfly_out(&self, df: Dragonfly, r: u32, req_group: u32, owner: u32) -> u32 {
        let h = self.hosts_per_rack;
        let g = df.group(r);
        let other = if g == req_group {
            df.group(owner)
        } else {
            req_group
        };
        if other == g {
            return df.local_port(h, r, owner);
        }
        let (sw, port) = df.global_end(h, g, other, df.link_for(req_group, owner));
        if sw == r {
            port
        } else {
            df.local_port(h, r, sw)
        }
    }

    /// The port switch `d` sends a NetSparse packet of PR type `ty` to
    /// node `dst` on, knowing the type but not the ingress port (table
    /// `pr_port`, then `node_port`). HyperX: responses go in dimension
    /// order highest dimension first, the reverse of the reads. Dragonfly:
    /// a response leaving the owner's switch takes the global link of
    /// (its requester's group, this switch). Elsewhere: [`Topology::route`].
    pub fn type_route(&self, d: Device, ty: u16, dst: u32) -> Option<u32> {
        let h = self.hosts_per_rack;
        match (d, self.shape) {
            (Device::Tor(r), Shape::HyperX(x))
                if ty == PR_TYPE_RESPONSE
                    && r < self.racks
                    && dst < self.nodes
                    && self.rack_of(dst) != r =>
            {
                x.next_port(h, r, self.rack_of(dst), false, dst)
            }
            (Device::Tor(r), Shape::Dragonfly(df))
                if ty == PR_TYPE_RESPONSE
                    && r < self.racks
                    && dst < self.nodes
                    && df.group(self.rack_of(dst)) != df.group(r) =>
            {
                Some(self.dragonfly_out(df, r, df.group(self.rack_of(dst)), r))
            }
            _ => self.route(d, dst),
        }
    }

    /// The port switch `d` sends a NetSparse packet of PR type `ty`,
    /// arriving on `in_port`, to node `dst` on: the whole decision of the
    /// switch programs' tables (`flow_port` by type, ingress port and
    /// destination, then `pr_port` by type and destination, then
    /// `node_port`). Leaf-spine: node-pair and owner routing by the
    /// requester's host port. Dragonfly: a response arriving from switch S
    /// of the owner group on a local port leaves over the global link of
    /// (its requester's group, S). Every route is symmetric: a response
    /// retraces its read's switches and crosses each on the ports the read
    /// used, so it fills the middle pipe the read's later twins look in.
    pub fn hop(&self, d: Device, ty: u16, in_port: u32, dst: u32) -> Option<u32> {
        let h = self.hosts_per_rack;
        match (d, self.shape) {
            (Device::Tor(r), Shape::LeafSpine { .. }) if in_port < h => self
                .flow_port(r, ty, r * h + in_port, dst)
                .or_else(|| self.type_route(d, ty, dst)),
            (Device::Tor(r), Shape::Dragonfly(df))
                if ty == PR_TYPE_RESPONSE
                    && r < self.racks
                    && dst < self.nodes
                    && in_port >= h
                    && in_port < h + df.routers() - 1
                    && df.group(self.rack_of(dst)) != df.group(r) =>
            {
                let from = df.peer(h, r, in_port)?.0;
                let req = df.group(self.rack_of(dst));
                let (sw, port) = df.global_end(h, df.group(r), req, df.link_for(req, from));
                if sw == r {
                    Some(port)
                } else {
                    self.type_route(d, ty, dst)
                }
            }
            _ => self.type_route(d, ty, dst),
        }
    }

    /// The hops of a NetSparse packet of PR type `ty` from node `src` to
    /// node `dst` ([`Topology::hop`] at every switch): every (device,
    /// egress port) along the way, starting with the source NIC. Empty if
    /// `src == dst`; ends early if a switch has no route.
    pub fn path(&self, src: u32, dst: u32, ty: u16) -> Vec<Endpoint> {
        let mut hops = Vec::new();
        let mut at = Endpoint {
            device: Device::Node(src),
            port: 0,
        };
        // A NIC, and at most 2 × (switches) switch hops (a loop guard).
        for _ in 0..=2 * (self.racks + self.spines()) + 1 {
            let port = match at.device {
                Device::Node(_) => self.route(at.device, dst),
                sw => self.hop(sw, ty, at.port, dst),
            };
            let Some(port) = port else {
                break;
            };
            let e = Endpoint {
                device: at.device,
                port,
            };
            hops.push(e);
            match self.peer(e) {
                Some(p) if p.device == Device::Node(dst) => break,
                Some(p) => at = p,
                None => break,
            }
        }
        hops
    }

    /// The whole cluster on the event loop: one device per node, ToR and
    /// spine from `make`, added in [`Topology::device_index`] order (so a
    /// device's [`DeviceId`] is its dense index), switches with pipeline
    /// latency `switch_latency` and nodes with none, and every cable of
    /// [`Topology::links`] with `link`.
    pub fn engine<D: Datapath + ?Sized>(
        &self,
        cfg: EngineConfig,
        link: LinkParams,
        switch_latency: Time,
        make: &mut dyn FnMut(Device) -> Box<D>,
    ) -> Result<Engine<D>, EngineError> {
        let mut e = Engine::new(cfg);
        for d in self.devices() {
            let latency = match d {
                Device::Node(_) => Time::ZERO,
                Device::Tor(_) | Device::Spine(_) => switch_latency,
            };
            e.add_device(make(d), latency, d.to_string());
        }
        for l in self.links() {
            let a = self.device_index(l.a.device) as DeviceId;
            let b = self.device_index(l.b.device) as DeviceId;
            e.connect(a, l.a.port, b, l.b.port, link)?;
        }
        Ok(e)
    }
}

/// Check node and switch counts against the addressing convention.
fn check_counts(nodes: u32, switches: u64) -> Result<(), TopologyError> {
    if u64::from(nodes) > u64::from(MAX_NODE_ID) + 1 {
        return Err(TopologyError::TooManyDevices {
            what: "nodes",
            value: u64::from(nodes),
            max: u64::from(MAX_NODE_ID) + 1,
        });
    }
    if switches > u64::from(MAX_SWITCH_ID) + 1 {
        return Err(TopologyError::TooManyDevices {
            what: "switches",
            value: switches,
            max: u64::from(MAX_SWITCH_ID) + 1,
        });
    }
    Ok(())
}

/// `used` ports rounded up to a power-of-two number of 4-port pipes.
fn padded_ports(used: u64) -> u64 {
    4 * used.div_ceil(4).max(1).next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table5_shape() {
        let t = Topology::new(128, 8, None).unwrap();
        assert_eq!(t.hosts_per_rack(), 16);
        assert_eq!(t.spines(), 16);
        assert_eq!(t.tor_ports(), 32);
        assert_eq!(t.tor_pipes(), 8);
        assert_eq!(t.spine_ports(), 8);
        assert_eq!(Topology::new(32, 4, None).unwrap().tor_pipes(), 4);
        assert_eq!(Topology::new(6, 2, None).unwrap().tor_pipes(), 1);
        assert_eq!(Topology::new(10, 2, None).unwrap().tor_pipes(), 2);
        assert_eq!(t.device_count(), 128 + 8 + 16);
        assert_eq!(t.links().len(), 128 + 8 * 16);
        for i in 0..t.device_count() {
            let d = t.device_at(i).unwrap();
            assert_eq!(t.device_index(d), i);
        }
        assert_eq!(t.device_at(t.device_count()), None);
        assert_eq!(
            t.switch_addr(Device::Spine(3)),
            Some(DeviceAddr::Switch(11))
        );
    }

    #[test]
    fn peers_are_mutual() {
        let t = Topology::new(12, 3, Some(2)).unwrap();
        for l in t.links() {
            assert_eq!(t.peer(l.a), Some(l.b));
            assert_eq!(t.peer(l.b), Some(l.a));
        }
        assert_eq!(
            t.peer(Endpoint {
                device: Device::Tor(0),
                port: 6
            }),
            None
        );
    }
}
