//! The control plane the simulator and `topo gen` write for a cluster:
//! BMv2 command lines per switch ([`Topology::control_plane`], from
//! [`TableTemplates`]) and the p4lang tutorials' `topology.json`
//! ([`Topology::tutorial_json`]).

use serde_json::{json, Map, Value};

use netsparse_externs::wire::DeviceAddr;

use super::{Device, Endpoint, Shape, Topology, PR_TYPE_READ, PR_TYPE_RESPONSE};

impl Topology {
    /// BMv2 CLI commands (`simple_switch_CLI` syntax) that fill switch `d`'s
    /// forwarding tables: the `flow_port` and `pr_port` entries where the
    /// decision depends on more than the destination ([`Topology::hop`]),
    /// then one line per destination node per template of `t`. Nothing
    /// for nodes.
    pub fn control_plane(&self, d: Device, t: &TableTemplates) -> String {
        let mut out = String::new();
        if matches!(d, Device::Node(_)) {
            return out;
        }
        out.push_str(&format!(
            "# {d}: forwarding by destination node ({} nodes)\n",
            self.nodes
        ));
        let line = |out: &mut String, tpl: &str, ty: u16, in_port: u32, dst: u32, port: u32| {
            out.push_str(
                &tpl.replace("{type}", &ty.to_string())
                    .replace("{in_port}", &in_port.to_string())
                    .replace("{node}", &dst.to_string())
                    .replace("{port}", &port.to_string())
                    .replace("{switch}", &d.to_string()),
            );
            out.push('\n');
        };
        let types = [PR_TYPE_READ, PR_TYPE_RESPONSE];
        if let Some(tpl) = &t.flow {
            let mut head = false;
            for in_port in 0..self.ports(d) {
                for dst in 0..self.nodes {
                    for ty in types {
                        let Some(port) = self.hop(d, ty, in_port, dst) else {
                            continue;
                        };
                        if Some(port) == self.type_route(d, ty, dst) {
                            continue;
                        }
                        if !head {
                            head = true;
                            out.push_str(&format!(
                                "# {d}: {}, by (PR type, ingress port, destination)\n",
                                self.routing_name()
                            ));
                        }
                        line(&mut out, tpl, ty, in_port, dst, port);
                    }
                }
            }
        }
        if let Some(tpl) = &t.pr {
            let mut head = false;
            for dst in 0..self.nodes {
                for ty in types {
                    let Some(port) = self.type_route(d, ty, dst) else {
                        continue;
                    };
                    if Some(port) == self.route(d, dst) {
                        continue;
                    }
                    if !head {
                        head = true;
                        out.push_str(&format!(
                            "# {d}: {}, by (PR type, destination)\n",
                            self.routing_name()
                        ));
                    }
                    line(&mut out, tpl, ty, 0, dst, port);
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

    fn routing_name(&self) -> String {
        match self.shape {
            Shape::LeafSpine { .. } => format!("{} routing between racks", self.routing),
            Shape::HyperX(_) => "HyperX dimension-order routing (responses reversed)".into(),
            Shape::Dragonfly(_) => {
                "Dragonfly minimal routing (one global link per requester group and owner switch)"
                    .into()
            }
        }
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
}

/// Templates of the control-plane lines [`Topology::control_plane`]
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
    /// Exact match on the PR type (`{type}`), the ingress port
    /// (`{in_port}`) and the destination node: where the route depends on
    /// the ingress port (leaf-spine node-pair and owner routing, a
    /// Dragonfly owner group's gateway).
    pub flow: Option<String>,
    /// Exact match on the PR type and the destination node: where
    /// responses take another route than reads (HyperX, Dragonfly).
    pub pr: Option<String>,
}

impl Default for TableTemplates {
    fn default() -> TableTemplates {
        TableTemplates {
            node: Some("table_add node_port set_port {node} => {port}".into()),
            ipv4: Some("table_add ipv4_port set_port {ip} => {port}".into()),
            flow: Some("table_add flow_port set_port {type} {in_port} {node} => {port}".into()),
            pr: Some("table_add pr_port set_port {type} {node} => {port}".into()),
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
