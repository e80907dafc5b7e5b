//! `topo gen leaf-spine` (alias `fabric`): a topology file for R racks × H
//! hosts, or a HyperX or Dragonfly with H hosts per switch, built from
//! the simulator's [`Topology`] (same ports, same symmetric routing, same
//! addresses), plus one BMv2 command file per switch filled from
//! [`Topology::control_plane`].

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::sim::topology::{Device, TableTemplates, Topology, TopologySpec};

use super::TopoError;

/// What to generate.
#[derive(Clone, Debug)]
pub struct LeafSpineOptions {
    /// The network: leaf-spine (with `racks` and `spines`), HyperX or
    /// Dragonfly (`hosts` on every switch).
    pub topology: TopologySpec,
    /// Racks (ToR switches; leaf-spine).
    pub racks: u32,
    /// Hosts per rack.
    pub hosts: u32,
    /// Spines (default: hosts per rack).
    pub spines: Option<u32>,
    /// ToR program.
    pub tor_program: PathBuf,
    /// Spine program.
    pub spine_program: PathBuf,
    /// NIC program for the hosts (`topo gather`), if any.
    pub nic_program: Option<PathBuf>,
    /// Control-plane line templates (see [`TableTemplates`]).
    pub templates: TableTemplates,
    /// Switch shape file (`--config`) for the ToRs, if any.
    pub tor_config: Option<PathBuf>,
    /// Link MTU.
    pub mtu: u32,
    /// Lines appended to every ToR's command file (e.g. `cache_mode 64`).
    pub tor_extra: Vec<String>,
}

/// Templates for the bundled `netsparse_tor.p4` and `netsparse_spine.p4`:
/// `node_port` by destination node, `ipv4_port` by /32 host route.
pub fn netsparse_templates() -> TableTemplates {
    TableTemplates {
        node: Some("table_add node_port set_port {node} => {port}".into()),
        ipv4: Some("table_add ipv4_port set_port {ip}/32 => {port}".into()),
        flow: Some("table_add flow_port set_port {type} {in_port} {node} => {port}".into()),
        pr: Some("table_add pr_port set_port {type} {node} => {port}".into()),
    }
}

/// Templates for the bundled `ipv4_forward.p4`: one /32 route per host.
pub fn ipv4_forward_templates() -> TableTemplates {
    TableTemplates {
        node: None,
        ipv4: Some(
            "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward {ip}/32 => {mac} {port}".into(),
        ),
        flow: None,
        pr: None,
    }
}

fn abs(key: &str, p: &Path) -> Result<PathBuf, TopoError> {
    p.canonicalize().map_err(|_| TopoError::MissingFile {
        key: key.to_owned(),
        path: p.to_owned(),
    })
}

/// Write the topology to `out` and the command files next to it
/// (`<out stem>-<switch>.txt`). Returns every file written.
pub fn leaf_spine(opts: &LeafSpineOptions, out: &Path) -> Result<Vec<PathBuf>, TopoError> {
    let switches = match opts.topology {
        TopologySpec::LeafSpine => u64::from(opts.racks),
        TopologySpec::HyperX(h) => h.switches(),
        TopologySpec::Dragonfly(d) => d.switches(),
    };
    let nodes = u32::try_from(switches * u64::from(opts.hosts))
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| TopoError::Schema {
            file: "(generator)".into(),
            key: "switches × hosts".into(),
            detail: format!(
                "{switches} switches × {} hosts: need at least one node and fewer than 2^32",
                opts.hosts
            ),
        })?;
    let t = Topology::build(opts.topology, nodes, opts.racks, opts.spines).map_err(|e| {
        TopoError::Schema {
            file: "(generator)".into(),
            key: opts.topology.kind().into(),
            detail: e.to_string(),
        }
    })?;
    let tor = abs("--tor-program", &opts.tor_program)?;
    let spine = abs("--spine-program", &opts.spine_program)?;
    let nic = match &opts.nic_program {
        Some(p) => Some(abs("--nic-program", p)?),
        None => None,
    };
    let tor_config = match &opts.tor_config {
        Some(p) => Some(abs("--tor-config", p)?),
        None => None,
    };
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| TopoError::Io {
        path: dir.to_owned(),
        detail: e.to_string(),
    })?;
    let stem = out
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("topo")
        .to_owned();
    let mut doc = t.tutorial_json(&format!("{stem}-{{switch}}.txt"), 0);
    let mut written = Vec::new();
    if let Some(sw) = doc.get_mut("switches").and_then(Value::as_object_mut) {
        for (name, s) in sw.iter_mut() {
            let is_tor = s.get("role").and_then(Value::as_str) == Some("tor");
            if let Some(o) = s.as_object_mut() {
                let prog = if is_tor { &tor } else { &spine };
                o.insert("program".into(), json!(prog));
                if let (true, Some(c)) = (is_tor, &tor_config) {
                    o.insert("config".into(), json!(c));
                }
            }
            let _ = name;
        }
    }
    if let (Some(n), Some(hosts)) = (&nic, doc.get_mut("hosts").and_then(Value::as_object_mut)) {
        for i in 0..nodes {
            if let Some(h) = hosts
                .get_mut(&Device::Node(i).to_string())
                .and_then(Value::as_object_mut)
            {
                h.insert("nic".into(), json!({ "program": n, "node": i }));
            }
        }
    }
    if let Some(o) = doc.as_object_mut() {
        o.insert("mtu".into(), json!(opts.mtu));
        o.insert("static_arp".into(), json!(true));
    }
    for d in t.devices().filter(|d| !matches!(d, Device::Node(_))) {
        let file = dir.join(format!("{stem}-{d}.txt"));
        let mut text = t.control_plane(d, &opts.templates);
        if matches!(d, Device::Tor(_)) {
            for l in &opts.tor_extra {
                text.push_str(l);
                text.push('\n');
            }
        }
        std::fs::write(&file, text).map_err(|e| TopoError::Io {
            path: file.clone(),
            detail: e.to_string(),
        })?;
        written.push(file);
    }
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    std::fs::write(out, text + "\n").map_err(|e| TopoError::Io {
        path: out.to_owned(),
        detail: e.to_string(),
    })?;
    written.insert(0, out.to_owned());
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::spec::Topology;

    #[test]
    fn generated_topology_validates() {
        let d = tempfile::tempdir().unwrap();
        let prog = d.path().join("p.p4");
        std::fs::write(&prog, "x").unwrap();
        let out = d.path().join("ls.json");
        let files = leaf_spine(
            &LeafSpineOptions {
                topology: TopologySpec::LeafSpine,
                racks: 2,
                hosts: 2,
                spines: None,
                tor_program: prog.clone(),
                spine_program: prog.clone(),
                nic_program: None,
                templates: ipv4_forward_templates(),
                tor_config: None,
                mtu: 9000,
                tor_extra: vec!["cache_mode 64".into()],
            },
            &out,
        )
        .unwrap();
        assert_eq!(files.len(), 1 + 2 + 2);
        let t = Topology::read(&out).unwrap();
        assert_eq!(t.hosts.len(), 4);
        assert_eq!(t.switches.len(), 4);
        assert_eq!(t.links.len(), 4 + 2 * 2);
        assert_eq!(t.mtu, 9000);
        assert!(t.static_arp);
        assert_eq!(t.ports_of("tor0").len(), 4);
        let cmds = std::fs::read_to_string(d.path().join("ls-tor0.txt")).unwrap();
        // h3 (10.0.0.4) is in rack 1: via spine (0 + 1) mod 2 = 1 → port 2 + 1.
        assert!(
            cmds.contains("10.0.0.4/32 => 02:4e:53:00:00:03 3"),
            "{cmds}"
        );
        assert!(
            cmds.contains("10.0.0.1/32 => 02:4e:53:00:00:00 0"),
            "{cmds}"
        );
        assert!(cmds.ends_with("cache_mode 64\n"), "{cmds}");
        let spine = std::fs::read_to_string(d.path().join("ls-spine0.txt")).unwrap();
        assert!(!spine.contains("cache_mode"));
        assert!(leaf_spine(
            &LeafSpineOptions {
                topology: TopologySpec::LeafSpine,
                racks: 0,
                hosts: 2,
                spines: None,
                tor_program: prog.clone(),
                spine_program: prog,
                nic_program: None,
                templates: ipv4_forward_templates(),
                tor_config: None,
                mtu: 1500,
                tor_extra: Vec::new(),
            },
            &out
        )
        .is_err());
    }

    #[test]
    fn hyperx_and_dragonfly_generate_every_switch_as_a_tor() {
        let d = tempfile::tempdir().unwrap();
        let prog = d.path().join("p.p4");
        std::fs::write(&prog, "x").unwrap();
        for (spec, switches, fabric_links) in [
            ("hyperx:2x2,width=1", 4, 4),
            ("dragonfly:groups=2,switches=2,global=1", 4, 2 + 2),
        ] {
            let out = d.path().join("f.json");
            let opts = LeafSpineOptions {
                topology: spec.parse().unwrap(),
                racks: 1,
                hosts: 1,
                spines: None,
                tor_program: prog.clone(),
                spine_program: prog.clone(),
                nic_program: None,
                templates: netsparse_templates(),
                tor_config: None,
                mtu: 1500,
                tor_extra: Vec::new(),
            };
            let files = leaf_spine(&opts, &out).unwrap();
            assert_eq!(files.len(), 1 + switches, "{spec}");
            let t = Topology::read(&out).unwrap();
            assert_eq!(t.hosts.len(), switches, "{spec}");
            assert_eq!(t.switches.len(), switches, "{spec}");
            assert!(t.switches.keys().all(|k| k.starts_with("tor")), "{spec}");
            assert_eq!(t.links.len(), switches + fabric_links, "{spec}");
            // Responses take their own route where reads and responses
            // differ (HyperX's reversed dimension order).
            let all: String = (0..switches)
                .map(|r| std::fs::read_to_string(d.path().join(format!("f-tor{r}.txt"))).unwrap())
                .collect();
            if spec.starts_with("hyperx") {
                assert!(
                    all.contains("table_add pr_port set_port 2 "),
                    "{spec}: {all}"
                );
            }
            // Too few nodes for the switches is refused by name.
            let bad = LeafSpineOptions { hosts: 0, ..opts };
            let e = leaf_spine(&bad, &out).unwrap_err().to_string();
            assert!(e.contains("switches × hosts"), "{e}");
        }
    }
}
