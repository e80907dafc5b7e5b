//! The leaf-spine cluster: structure, symmetric routing, control-plane
//! entries and a p4lang-tutorials topology JSON.
//!
//! R racks of H = N / R hosts; every host links to its rack's ToR switch;
//! every ToR links to each of S spines (default S = H, so a ToR has H + S
//! ports: Table 5's 16 + 16 = 32).
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
//! ([`LeafSpine::flow_port`]); each variant says what it keeps of the
//! cache condition.
//!
//! # Device addresses
//!
//! Nodes use [`DeviceAddr::Node`]; ToR `r` is [`DeviceAddr::Switch`]`(r)` and
//! spine `s` is `DeviceAddr::Switch(R + s)` (the wire module's addressing
//! convention).

use serde_json::{json, Map, Value};
use thiserror::Error;

use netsparse_externs::wire::{DeviceAddr, MAX_NODE_ID, MAX_SWITCH_ID};
use netsparse_externs::{Datapath, Time};
use netsparse_netsim::{DeviceId, Engine, EngineConfig, EngineError, LinkParams};

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
}

impl Routing {
    /// The CLI and TOML names.
    pub const NAMES: &'static str = "rack-pair, node-pair, owner";

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Routing::RackPair => "rack-pair",
            Routing::NodePair => "node-pair",
            Routing::Owner => "owner",
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

/// A validated leaf-spine cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LeafSpine {
    nodes: u32,
    racks: u32,
    hosts_per_rack: u32,
    spines: u32,
    routing: Routing,
}

impl LeafSpine {
    /// `nodes` in `racks` racks, `spines` spines (default: hosts per rack).
    pub fn new(nodes: u32, racks: u32, spines: Option<u32>) -> Result<LeafSpine, TopologyError> {
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
        if u64::from(nodes) > u64::from(MAX_NODE_ID) + 1 {
            return Err(TopologyError::TooManyDevices {
                what: "nodes",
                value: u64::from(nodes),
                max: u64::from(MAX_NODE_ID) + 1,
            });
        }
        if u64::from(racks) + u64::from(s) > u64::from(MAX_SWITCH_ID) + 1 {
            return Err(TopologyError::TooManyDevices {
                what: "switches",
                value: u64::from(racks) + u64::from(s),
                max: u64::from(MAX_SWITCH_ID) + 1,
            });
        }
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
        Ok(LeafSpine {
            nodes,
            racks,
            hosts_per_rack: h,
            spines: s,
            routing: Routing::RackPair,
        })
    }

    /// The same cluster with `routing` between racks.
    pub fn with_routing(mut self, routing: Routing) -> LeafSpine {
        self.routing = routing;
        self
    }

    /// The routing between racks.
    pub fn routing(&self) -> Routing {
        self.routing
    }

    /// The egress port at ToR `r` of a NetSparse packet of PR type `ty`
    /// from node `src` of rack `r` to node `dst` of another rack, under
    /// this cluster's routing; `None` when `node_port` (routing by
    /// destination) decides: within a rack, traffic arriving from a spine,
    /// and every packet under [`Routing::RackPair`].
    pub fn flow_port(&self, r: u32, ty: u16, src: u32, dst: u32) -> Option<u32> {
        let h = self.hosts_per_rack;
        if src >= self.nodes || dst >= self.nodes || self.rack_of(src) != r {
            return None;
        }
        let dst_rack = self.rack_of(dst);
        if dst_rack == r {
            return None;
        }
        let s = u64::from(self.spines);
        let spine = match (self.routing, ty) {
            (Routing::RackPair, _) => return None,
            (Routing::NodePair, _) => (u64::from(src) + u64::from(dst)) % s,
            // Reads: requester rack r, owner dst; responses: requester rack
            // dst_rack, owner src.
            (Routing::Owner, PR_TYPE_READ) => (u64::from(r) + u64::from(dst)) % s,
            (Routing::Owner, PR_TYPE_RESPONSE) => (u64::from(dst_rack) + u64::from(src)) % s,
            (Routing::Owner, _) => return None,
        };
        Some(h + spine as u32)
    }

    /// Compute nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }
    /// Racks (= ToR switches).
    pub fn racks(&self) -> u32 {
        self.racks
    }
    /// Hosts per rack.
    pub fn hosts_per_rack(&self) -> u32 {
        self.hosts_per_rack
    }
    /// Spine switches.
    pub fn spines(&self) -> u32 {
        self.spines
    }
    /// Ports of a ToR (hosts + uplinks).
    pub fn tor_ports(&self) -> u32 {
        self.hosts_per_rack + self.spines
    }
    /// Pipes of a NetSparse ToR: ports are grouped 4 per pipe as in Table 5
    /// (32 ports in 8 pipes); more precisely each pipe gets the smallest
    /// divisor of the port count that is at least 4 (all ports in one pipe
    /// when there is none, e.g. 2 or 3 ports).
    pub fn tor_pipes(&self) -> u32 {
        let p = self.tor_ports();
        let per = (4..=p).find(|d| p % d == 0).unwrap_or(p).max(1);
        p / per
    }

    /// Ports of a spine (one per rack).
    pub fn spine_ports(&self) -> u32 {
        self.racks
    }
    /// Ports of `d`.
    pub fn ports(&self, d: Device) -> u32 {
        match d {
            Device::Node(_) => 1,
            Device::Tor(_) => self.tor_ports(),
            Device::Spine(_) => self.spine_ports(),
        }
    }

    /// The rack of node `n`.
    pub fn rack_of(&self, n: u32) -> u32 {
        n / self.hosts_per_rack
    }

    /// The spine carrying traffic between racks `a` and `b` (either order).
    pub fn spine_for(&self, a: u32, b: u32) -> u32 {
        ((u64::from(a) + u64::from(b)) % u64::from(self.spines)) as u32
    }

    /// Total devices: nodes, then ToRs, then spines.
    pub fn device_count(&self) -> usize {
        (self.nodes + self.racks + self.spines) as usize
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
        } else if i < self.nodes + self.racks + self.spines {
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

    /// Every cable: host links first (node order), then uplinks (ToR-major).
    pub fn links(&self) -> Vec<Link> {
        let h = self.hosts_per_rack;
        let mut v = Vec::with_capacity((self.nodes + self.racks * self.spines) as usize);
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
            for s in 0..self.spines {
                v.push(Link {
                    a: Endpoint {
                        device: Device::Tor(r),
                        port: h + s,
                    },
                    b: Endpoint {
                        device: Device::Spine(s),
                        port: r,
                    },
                });
            }
        }
        v
    }

    /// The endpoint at the other end of `e`'s cable (`None` for a port that
    /// does not exist).
    pub fn peer(&self, e: Endpoint) -> Option<Endpoint> {
        let h = self.hosts_per_rack;
        match e.device {
            Device::Node(n) if n < self.nodes && e.port == 0 => Some(Endpoint {
                device: Device::Tor(n / h),
                port: n % h,
            }),
            Device::Tor(r) if r < self.racks && e.port < h => Some(Endpoint {
                device: Device::Node(r * h + e.port),
                port: 0,
            }),
            Device::Tor(r) if r < self.racks && e.port < h + self.spines => Some(Endpoint {
                device: Device::Spine(e.port - h),
                port: r,
            }),
            Device::Spine(s) if s < self.spines && e.port < self.racks => Some(Endpoint {
                device: Device::Tor(e.port),
                port: h + s,
            }),
            _ => None,
        }
    }

    /// The egress port `d` uses for traffic to node `dst` (`None` if `dst`
    /// is not a node of the cluster or `d` is that node).
    pub fn route(&self, d: Device, dst: u32) -> Option<u32> {
        if dst >= self.nodes {
            return None;
        }
        let h = self.hosts_per_rack;
        let dst_rack = dst / h;
        match d {
            Device::Node(n) => (n != dst && n < self.nodes).then_some(0),
            Device::Tor(r) if r < self.racks => Some(if r == dst_rack {
                dst % h
            } else {
                h + self.spine_for(r, dst_rack)
            }),
            Device::Spine(s) if s < self.spines => Some(dst_rack),
            _ => None,
        }
    }

    /// The hops from node `src` to node `dst`: every (device, egress port)
    /// along the way, starting with the source NIC. Empty if `src == dst`.
    pub fn path(&self, src: u32, dst: u32) -> Vec<Endpoint> {
        let mut hops = Vec::new();
        let mut at = Device::Node(src);
        // At most NIC, ToR, spine, ToR.
        for _ in 0..4 {
            let Some(port) = self.route(at, dst) else {
                break;
            };
            let e = Endpoint { device: at, port };
            hops.push(e);
            match self.peer(e) {
                Some(p) if p.device == Device::Node(dst) => break,
                Some(p) => at = p.device,
                None => break,
            }
        }
        hops
    }

    /// BMv2 CLI commands (`simple_switch_CLI` syntax) that fill switch `d`'s
    /// forwarding tables: one line per destination node per template of
    /// `t`. Nothing for nodes.
    pub fn control_plane(&self, d: Device, t: &TableTemplates) -> String {
        let mut out = String::new();
        if matches!(d, Device::Node(_)) {
            return out;
        }
        out.push_str(&format!(
            "# {d}: forwarding by destination node ({} nodes)\n",
            self.nodes
        ));
        if let (Device::Tor(r), Some(tpl)) = (d, &t.flow) {
            if self.routing != Routing::RackPair {
                out.push_str(&format!(
                    "# {d}: {} routing between racks, by (PR type, ingress port, destination)\n",
                    self.routing
                ));
                let h = self.hosts_per_rack;
                for src in r * h..(r + 1) * h {
                    for dst in 0..self.nodes {
                        for ty in [PR_TYPE_READ, PR_TYPE_RESPONSE] {
                            let Some(port) = self.flow_port(r, ty, src, dst) else {
                                continue;
                            };
                            out.push_str(
                                &tpl.replace("{type}", &ty.to_string())
                                    .replace("{in_port}", &(src % h).to_string())
                                    .replace("{node}", &dst.to_string())
                                    .replace("{port}", &port.to_string())
                                    .replace("{switch}", &d.to_string()),
                            );
                            out.push('\n');
                        }
                    }
                }
            }
        }
        for dst in 0..self.nodes {
            let Some(port) = self.route(d, dst) else {
                continue;
            };
            let addr = DeviceAddr::Node(dst);
            let ip = addr.ipv4().map(fmt_ip).unwrap_or_default();
            let mac = addr.mac().map(fmt_mac).unwrap_or_default();
            for tpl in [&t.node, &t.ipv4].into_iter().flatten() {
                out.push_str(
                    &tpl.replace("{node}", &dst.to_string())
                        .replace("{port}", &port.to_string())
                        .replace("{ip}", &ip)
                        .replace("{mac}", &mac)
                        .replace("{switch}", &d.to_string()),
                );
                out.push('\n');
            }
        }
        out
    }

    /// The topology in the p4lang tutorials' `topology.json` shape:
    /// `hosts` (name → ip/mac), `switches` (name → `cli_input` file named
    /// by `cli_file` with `{switch}` replaced), `links` (`["h0",
    /// "tor0-p0"]`, ports offset by `port_base`, e.g. 1 for Mininet's
    /// 1-based interface numbering).
    pub fn tutorial_json(&self, cli_file: &str, port_base: u32) -> Value {
        let mut hosts = Map::new();
        for n in 0..self.nodes {
            let a = DeviceAddr::Node(n);
            hosts.insert(
                Device::Node(n).to_string(),
                json!({
                    "ip": format!("{}/9", a.ipv4().map(fmt_ip).unwrap_or_default()),
                    "mac": a.mac().map(fmt_mac).unwrap_or_default(),
                    "commands": [],
                }),
            );
        }
        let mut switches = Map::new();
        for d in self.devices().filter(|d| !matches!(d, Device::Node(_))) {
            let name = d.to_string();
            let addr = self.addr(d);
            switches.insert(
                name.clone(),
                json!({
                    "cli_input": cli_file.replace("{switch}", &name),
                    "role": if matches!(d, Device::Tor(_)) { "tor" } else { "spine" },
                    "ip": addr.ipv4().map(fmt_ip).unwrap_or_default(),
                    "mac": addr.mac().map(fmt_mac).unwrap_or_default(),
                }),
            );
        }
        let end = |e: Endpoint| match e.device {
            Device::Node(_) => e.device.to_string(),
            _ => format!("{}-p{}", e.device, e.port + port_base),
        };
        let links: Vec<Value> = self
            .links()
            .into_iter()
            .map(|l| json!([end(l.a), end(l.b)]))
            .collect();
        json!({ "hosts": hosts, "switches": switches, "links": links })
    }

    /// The whole cluster on the event loop: one device per node, ToR and
    /// spine from `make`, added in [`LeafSpine::device_index`] order (so a
    /// device's [`DeviceId`] is its dense index), switches with pipeline
    /// latency `switch_latency` and nodes with none, and every cable of
    /// [`LeafSpine::links`] with `link`.
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

/// Templates of the control-plane lines [`LeafSpine::control_plane`]
/// writes, so the simulator can match the table and action names of the
/// real programs. Placeholders: `{node}` (destination node id), `{port}`
/// (egress port), `{ip}` and `{mac}` (the destination node's addresses),
/// `{switch}` (the switch's name). `None` skips that table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableTemplates {
    /// Exact match on the concatenation header's destination node.
    pub node: Option<String>,
    /// Match on the IPv4 destination.
    pub ipv4: Option<String>,
    /// ToRs, routings other than rack-pair: exact match on the PR type
    /// (`{type}`), the ingress port (`{in_port}`) and the destination node.
    pub flow: Option<String>,
}

impl Default for TableTemplates {
    fn default() -> TableTemplates {
        TableTemplates {
            node: Some("table_add node_port set_port {node} => {port}".into()),
            ipv4: Some("table_add ipv4_port set_port {ip} => {port}".into()),
            flow: Some("table_add flow_port set_port {type} {in_port} {node} => {port}".into()),
        }
    }
}

fn fmt_ip(ip: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3])
}

fn fmt_mac(m: [u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table5_shape() {
        let t = LeafSpine::new(128, 8, None).unwrap();
        assert_eq!(t.hosts_per_rack(), 16);
        assert_eq!(t.spines(), 16);
        assert_eq!(t.tor_ports(), 32);
        assert_eq!(t.tor_pipes(), 8);
        assert_eq!(t.spine_ports(), 8);
        assert_eq!(LeafSpine::new(32, 4, None).unwrap().tor_pipes(), 4);
        assert_eq!(LeafSpine::new(6, 2, None).unwrap().tor_pipes(), 1);
        assert_eq!(LeafSpine::new(10, 2, None).unwrap().tor_pipes(), 2);
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
        let t = LeafSpine::new(12, 3, Some(2)).unwrap();
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
