//! The topology file: parsing and validation.
//!
//! The shape follows the p4lang tutorials' `topology.json`:
//!
//! ```json
//! {
//!   "mtu": 1500,
//!   "static_arp": true,
//!   "hosts": {
//!     "h1": { "ip": "10.0.0.1/9", "mac": "02:4e:53:00:00:00", "commands": [] }
//!   },
//!   "switches": {
//!     "s1": { "program": "programs/ipv4_forward.p4", "entries": "s1-commands.txt" }
//!   },
//!   "links": [ ["h1", "s1-p1"], ["s1-p2", "s2-p2"] ]
//! }
//! ```
//!
//! * `hosts.NAME`: `ip` (`A.B.C.D/LEN`, optional), `mac` (optional; a
//!   locally administered one is derived otherwise), `commands` (shell
//!   lines run in the host's namespace after the links are up, with
//!   `$IFACE` set to the host's interface), `nic` (optional: the NIC
//!   endpoint `topo gather` runs there: `{"program": ..., "node": N}`).
//! * `switches.NAME`: `program` (a `.p4` source or a compiled `.json`
//!   artifact; a top-level `program` is the default), entries in
//!   `entries`, `runtime_json` or `cli_input` (runtime JSON if it ends in
//!   `.json`, else a BMv2 command file), `config` (a switch shape TOML
//!   passed as `--config`), `args` (extra `netsparse switch` arguments).
//! * `links`: `["A", "B", ...]` with endpoints `NODE-pPORT` (a switch port)
//!   or `NODE` (a host's port 0). Further elements (the tutorials' latency
//!   and bandwidth) are accepted and ignored: there is no `tc netem` here.
//!
//! Relative paths are relative to the topology file's directory. Every
//! error names the key or the link it is about.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::TopoError;

/// Largest MTU a topology may ask for (jumbo frames).
pub const MAX_MTU: u32 = 9000;
/// Longest node name.
pub const MAX_NAME: usize = 32;

/// A host: a network namespace with one interface per port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// Address and prefix length of port 0.
    pub ip: Option<(Ipv4Addr, u8)>,
    /// MAC address of port 0.
    pub mac: Option<[u8; 6]>,
    /// Shell lines run in the namespace once the links are up.
    pub commands: Vec<String>,
    /// The NIC endpoint `topo gather` runs on this host.
    pub nic: Option<NicSpec>,
}

/// The NIC endpoint of a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicSpec {
    /// The NIC program (`.p4` or artifact).
    pub program: PathBuf,
    /// The NetSparse node id of this host.
    pub node: u32,
    /// Extra `netsparse nic` arguments.
    pub args: Vec<String>,
}

/// A switch: a `netsparse switch` process in its own namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSpec {
    /// The program (`.p4` or artifact), resolved.
    pub program: PathBuf,
    /// Table entries (runtime JSON or command file), resolved.
    pub entries: Option<PathBuf>,
    /// A switch shape file passed as `--config`.
    pub config: Option<PathBuf>,
    /// Extra `netsparse switch` arguments.
    pub args: Vec<String>,
    /// `"tor"`, `"spine"` or empty (informational; the generator sets it).
    pub role: String,
}

/// A node and one of its ports.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct End {
    /// The node's name.
    pub node: String,
    /// The port.
    pub port: u32,
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-p{}", self.node, self.port)
    }
}

/// A veth cable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// One end.
    pub a: End,
    /// The other end.
    pub b: End,
}

/// A validated topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The file it was read from (absolute when read from a file).
    pub file: PathBuf,
    /// MTU of every link.
    pub mtu: u32,
    /// Add a permanent neighbour entry for every other host on each host.
    pub static_arp: bool,
    /// Hosts by name.
    pub hosts: BTreeMap<String, HostSpec>,
    /// Switches by name.
    pub switches: BTreeMap<String, SwitchSpec>,
    /// Links in file order.
    pub links: Vec<LinkSpec>,
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A host.
    Host,
    /// A switch.
    Switch,
}

impl Topology {
    /// Read and validate a topology file (files it names must exist).
    pub fn read(path: &Path) -> Result<Topology, TopoError> {
        let text = std::fs::read_to_string(path).map_err(|e| TopoError::Io {
            path: path.to_owned(),
            detail: e.to_string(),
        })?;
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let base = abs.parent().map(Path::to_owned).unwrap_or_default();
        Topology::parse(&text, &abs, &base)
    }

    /// Parse and validate `text` (from `file`, for messages); relative
    /// paths are resolved against `base`, and must exist.
    pub fn parse(text: &str, file: &Path, base: &Path) -> Result<Topology, TopoError> {
        let shown = file.display().to_string();
        let v: Value = serde_json::from_str(text).map_err(|e| TopoError::Json {
            file: shown.clone(),
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        })?;
        let bad = |key: &str, detail: String| TopoError::Schema {
            file: shown.clone(),
            key: key.to_owned(),
            detail,
        };
        let root = v
            .as_object()
            .ok_or_else(|| bad("(top level)", "expected an object".into()))?;
        for k in root.keys() {
            if !matches!(
                k.as_str(),
                "hosts" | "switches" | "links" | "mtu" | "static_arp" | "program"
            ) {
                return Err(bad(
                    k,
                    "unknown key (expected hosts, switches, links, mtu, static_arp, program)"
                        .into(),
                ));
            }
        }
        let mtu = match root.get("mtu") {
            None => 1500,
            Some(m) => m
                .as_u64()
                .filter(|m| (68..=u64::from(MAX_MTU)).contains(m))
                .ok_or_else(|| bad("mtu", format!("expected 68..={MAX_MTU}, got {m}")))?
                as u32,
        };
        let static_arp = match root.get("static_arp") {
            None => false,
            Some(b) => b
                .as_bool()
                .ok_or_else(|| bad("static_arp", "expected true or false".into()))?,
        };
        let resolve = |key: &str, p: &str| -> Result<PathBuf, TopoError> {
            let path = base.join(p);
            if path.is_file() {
                Ok(path)
            } else {
                Err(TopoError::MissingFile {
                    key: key.to_owned(),
                    path,
                })
            }
        };
        let default_program = match root.get("program") {
            None => None,
            Some(p) => Some(
                p.as_str()
                    .ok_or_else(|| bad("program", "expected a file name".into()))?,
            ),
        };
        let obj = |key: &str| -> Result<serde_json::Map<String, Value>, TopoError> {
            match root.get(key) {
                None => Ok(serde_json::Map::new()),
                Some(Value::Object(m)) => Ok(m.clone()),
                Some(_) => Err(bad(key, "expected an object of name → settings".into())),
            }
        };
        let strs = |key: &str, v: Option<&Value>| -> Result<Vec<String>, TopoError> {
            match v {
                None => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| {
                        x.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| bad(key, "expected an array of strings".into()))
                    })
                    .collect(),
                Some(_) => Err(bad(key, "expected an array of strings".into())),
            }
        };
        let mut hosts = BTreeMap::new();
        for (name, h) in obj("hosts")? {
            let key = format!("hosts.{name}");
            check_name(&name).map_err(|d| bad(&key, d))?;
            let h = h
                .as_object()
                .ok_or_else(|| bad(&key, "expected an object".into()))?;
            for k in h.keys() {
                if !matches!(k.as_str(), "ip" | "mac" | "commands" | "nic") {
                    return Err(bad(
                        &format!("{key}.{k}"),
                        "unknown key (expected ip, mac, commands, nic)".into(),
                    ));
                }
            }
            let ip = match h.get("ip") {
                None => None,
                Some(v) => {
                    let s = v
                        .as_str()
                        .ok_or_else(|| bad(&format!("{key}.ip"), "expected a string".into()))?;
                    Some(parse_cidr(s).map_err(|d| bad(&format!("{key}.ip"), d))?)
                }
            };
            let mac = match h.get("mac") {
                None => None,
                Some(v) => {
                    let s = v
                        .as_str()
                        .ok_or_else(|| bad(&format!("{key}.mac"), "expected a string".into()))?;
                    Some(parse_mac(s).map_err(|d| bad(&format!("{key}.mac"), d))?)
                }
            };
            let commands = strs(&format!("{key}.commands"), h.get("commands"))?;
            let nic = match h.get("nic") {
                None => None,
                Some(n) => {
                    let nk = format!("{key}.nic");
                    let n = n
                        .as_object()
                        .ok_or_else(|| bad(&nk, "expected an object".into()))?;
                    let program = n
                        .get("program")
                        .and_then(Value::as_str)
                        .ok_or_else(|| bad(&format!("{nk}.program"), "expected a file".into()))?;
                    let node = n
                        .get("node")
                        .and_then(Value::as_u64)
                        .and_then(|x| u32::try_from(x).ok())
                        .ok_or_else(|| bad(&format!("{nk}.node"), "expected a node id".into()))?;
                    Some(NicSpec {
                        program: resolve(&format!("{nk}.program"), program)?,
                        node,
                        args: strs(&format!("{nk}.args"), n.get("args"))?,
                    })
                }
            };
            hosts.insert(
                name,
                HostSpec {
                    ip,
                    mac,
                    commands,
                    nic,
                },
            );
        }
        let mut switches = BTreeMap::new();
        for (name, s) in obj("switches")? {
            let key = format!("switches.{name}");
            check_name(&name).map_err(|d| bad(&key, d))?;
            if hosts.contains_key(&name) {
                return Err(bad(&key, "a host has the same name".into()));
            }
            let s = s
                .as_object()
                .ok_or_else(|| bad(&key, "expected an object".into()))?;
            for k in s.keys() {
                if !matches!(
                    k.as_str(),
                    "program"
                        | "entries"
                        | "runtime_json"
                        | "cli_input"
                        | "config"
                        | "args"
                        | "role"
                        | "ip"
                        | "mac"
                ) {
                    return Err(bad(
                        &format!("{key}.{k}"),
                        "unknown key (expected program, entries, runtime_json, cli_input, config, args, role, ip, mac)".into(),
                    ));
                }
            }
            let file_key = |k: &str| -> Result<Option<PathBuf>, TopoError> {
                match s.get(k) {
                    None => Ok(None),
                    Some(v) => {
                        let p = v.as_str().ok_or_else(|| {
                            bad(&format!("{key}.{k}"), "expected a file name".into())
                        })?;
                        resolve(&format!("{key}.{k}"), p).map(Some)
                    }
                }
            };
            let program = match file_key("program")? {
                Some(p) => p,
                None => match default_program {
                    Some(p) => resolve("program", p)?,
                    None => {
                        return Err(bad(
                            &format!("{key}.program"),
                            "missing (and no top-level `program`)".into(),
                        ))
                    }
                },
            };
            let mut entries = None;
            for k in ["entries", "runtime_json", "cli_input"] {
                if let Some(p) = file_key(k)? {
                    if entries.is_some() {
                        return Err(bad(
                            &format!("{key}.{k}"),
                            "give only one of entries, runtime_json, cli_input".into(),
                        ));
                    }
                    entries = Some(p);
                }
            }
            let role = match s.get("role") {
                None => String::new(),
                Some(r) => r
                    .as_str()
                    .ok_or_else(|| bad(&format!("{key}.role"), "expected a string".into()))?
                    .to_owned(),
            };
            switches.insert(
                name,
                SwitchSpec {
                    program,
                    entries,
                    config: file_key("config")?,
                    args: strs(&format!("{key}.args"), s.get("args"))?,
                    role,
                },
            );
        }
        let links_v = match root.get("links") {
            None => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return Err(bad("links", "expected an array of pairs".into())),
        };
        let mut links = Vec::new();
        let mut used: BTreeMap<End, usize> = BTreeMap::new();
        for (i, l) in links_v.iter().enumerate() {
            let key = format!("links[{i}]");
            let arr = l
                .as_array()
                .filter(|a| a.len() >= 2)
                .ok_or_else(|| bad(&key, format!("expected [\"A\", \"B\"], got {l}")))?;
            let mut ends = Vec::with_capacity(2);
            for (j, e) in arr[..2].iter().enumerate() {
                let s = e
                    .as_str()
                    .ok_or_else(|| bad(&format!("{key}[{j}]"), "expected a string".into()))?;
                let end =
                    parse_end(s, &hosts, &switches).map_err(|detail| TopoError::UnknownNode {
                        file: shown.clone(),
                        link: i,
                        endpoint: s.to_owned(),
                        detail,
                    })?;
                if let Some(&first) = used.get(&end) {
                    return Err(TopoError::DuplicatePort {
                        file: shown.clone(),
                        endpoint: end.to_string(),
                        first,
                        second: i,
                    });
                }
                used.insert(end.clone(), i);
                ends.push(end);
            }
            let b = ends.pop().unwrap_or_else(|| End {
                node: String::new(),
                port: 0,
            });
            let a = ends.pop().unwrap_or_else(|| End {
                node: String::new(),
                port: 0,
            });
            if a.node == b.node {
                return Err(bad(&key, format!("links {a} to its own node")));
            }
            links.push(LinkSpec { a, b });
        }
        if hosts.is_empty() && switches.is_empty() {
            return Err(bad("(top level)", "no hosts and no switches".into()));
        }
        for (name, s) in &switches {
            if !links.iter().any(|l| &l.a.node == name || &l.b.node == name) {
                return Err(bad(
                    &format!("switches.{name}"),
                    format!("not linked to anything (program {})", s.program.display()),
                ));
            }
        }
        Ok(Topology {
            file: file.to_owned(),
            mtu,
            static_arp,
            hosts,
            switches,
            links,
        })
    }

    /// Whether `name` is a host or a switch.
    pub fn kind(&self, name: &str) -> Option<NodeKind> {
        if self.hosts.contains_key(name) {
            Some(NodeKind::Host)
        } else if self.switches.contains_key(name) {
            Some(NodeKind::Switch)
        } else {
            None
        }
    }

    /// Every node: hosts then switches, each in name order.
    pub fn nodes(&self) -> impl Iterator<Item = (&str, NodeKind)> + '_ {
        self.hosts
            .keys()
            .map(|h| (h.as_str(), NodeKind::Host))
            .chain(self.switches.keys().map(|s| (s.as_str(), NodeKind::Switch)))
    }

    /// The ports of node `name` that have a link, in port order, with the
    /// end at the other side.
    pub fn ports_of(&self, name: &str) -> Vec<(u32, End)> {
        let mut v: Vec<(u32, End)> = self
            .links
            .iter()
            .filter_map(|l| {
                if l.a.node == name {
                    Some((l.a.port, l.b.clone()))
                } else if l.b.node == name {
                    Some((l.b.port, l.a.clone()))
                } else {
                    None
                }
            })
            .collect();
        v.sort();
        v
    }
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!("a node name must have 1..={MAX_NAME} characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("a node name may only use letters, digits, `_` and `-`".into());
    }
    Ok(())
}

fn parse_end(
    s: &str,
    hosts: &BTreeMap<String, HostSpec>,
    switches: &BTreeMap<String, SwitchSpec>,
) -> Result<End, String> {
    let s = s.trim();
    if let Some((node, port)) = s.rsplit_once("-p") {
        if !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && (hosts.contains_key(node) || switches.contains_key(node))
        {
            let port: u32 = port
                .parse()
                .ok()
                .filter(|p| *p <= netsparse_bmv2::drivers::MAX_PORT)
                .ok_or_else(|| {
                    format!(
                        "port {port} is out of range (0..={})",
                        netsparse_bmv2::drivers::MAX_PORT
                    )
                })?;
            return Ok(End {
                node: node.to_owned(),
                port,
            });
        }
    }
    if hosts.contains_key(s) {
        return Ok(End {
            node: s.to_owned(),
            port: 0,
        });
    }
    if switches.contains_key(s) {
        return Err(format!("a switch endpoint needs a port: `{s}-pN`"));
    }
    Err("no host or switch of that name".into())
}

/// Parse `A.B.C.D/LEN` (a bare address means /32).
pub fn parse_cidr(s: &str) -> Result<(Ipv4Addr, u8), String> {
    let (a, l) = s.split_once('/').unwrap_or((s, "32"));
    let ip: Ipv4Addr = a
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not an IPv4 address"))?;
    let len: u8 = l
        .trim()
        .parse()
        .ok()
        .filter(|l| *l <= 32)
        .ok_or_else(|| format!("`{s}`: the prefix length must be 0..=32"))?;
    Ok((ip, len))
}

/// Parse `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let mut m = [0u8; 6];
    let parts: Vec<&str> = s.trim().split(':').collect();
    if parts.len() != 6 {
        return Err(format!("`{s}` is not a MAC address (aa:bb:cc:dd:ee:ff)"));
    }
    for (d, p) in m.iter_mut().zip(parts) {
        *d = u8::from_str_radix(p, 16)
            .map_err(|_| format!("`{s}` is not a MAC address (aa:bb:cc:dd:ee:ff)"))?;
    }
    Ok(m)
}

/// Format a MAC address.
pub fn fmt_mac(m: [u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, dir: &Path) -> Result<Topology, TopoError> {
        Topology::parse(text, &dir.join("t.json"), dir)
    }

    fn dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("p.p4"), "x").unwrap();
        std::fs::write(d.path().join("e.txt"), "").unwrap();
        d
    }

    #[test]
    fn parses_a_tutorial_topology() {
        let d = dir();
        let t = parse(
            r#"{"program": "p.p4",
                "hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11",
                                  "commands": ["true"]},
                          "h2": {}},
                "switches": {"s1": {"cli_input": "e.txt"}},
                "links": [["h1", "s1-p1"], ["h2", "s1-p2", "0ms", 10]]}"#,
            d.path(),
        )
        .unwrap();
        assert_eq!(t.hosts.len(), 2);
        assert_eq!(t.hosts["h1"].ip, Some(("10.0.1.1".parse().unwrap(), 24)));
        assert_eq!(t.switches["s1"].entries, Some(d.path().join("e.txt")));
        assert_eq!(
            t.links[1].b,
            End {
                node: "s1".into(),
                port: 2
            }
        );
        assert_eq!(t.ports_of("s1").len(), 2);
        assert_eq!(t.mtu, 1500);
    }

    #[test]
    fn errors_name_the_key() {
        let d = dir();
        let cases: &[(&str, &str)] = &[
            (r#"{"hosts": [}"#, "line 1"),
            (r#"{"hostz": {}}"#, "hostz"),
            (r#"{"hosts": {"h1": {"ip": "10.0.0.300"}}}"#, "hosts.h1.ip"),
            (r#"{"hosts": {"h1": {"mac": "zz"}}}"#, "hosts.h1.mac"),
            (r#"{"switches": {"s1": {}}}"#, "switches.s1.program"),
            (r#"{"switches": {"s1": {"program": "nope.p4"}}}"#, "nope.p4"),
            (
                r#"{"program": "p.p4", "switches": {"s1": {"entries": "missing.txt"}}, "links": []}"#,
                "switches.s1.entries",
            ),
            (
                r#"{"program": "p.p4", "hosts": {"h1": {}}, "switches": {"s1": {}}, "links": [["h1", "s9-p1"]]}"#,
                "s9-p1",
            ),
            (
                r#"{"program": "p.p4", "hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}}, "links": [["h1", "s1-p1"], ["h2", "s1-p1"]]}"#,
                "s1-p1",
            ),
            (
                r#"{"program": "p.p4", "hosts": {"h1": {}}, "switches": {"s1": {}}, "links": [["h1", "s1"]]}"#,
                "needs a port",
            ),
            (r#"{"mtu": 20000, "hosts": {"h1": {}}}"#, "mtu"),
            (
                r#"{"program": "p.p4", "hosts": {"h1": {}}, "switches": {"s1": {}}, "links": []}"#,
                "not linked",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text, d.path()).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: `{e}` does not mention {want}");
        }
    }

    #[test]
    fn duplicate_and_unknown_are_typed() {
        let d = dir();
        let e = parse(
            r#"{"program": "p.p4", "hosts": {"h1": {}, "h2": {}}, "switches": {"s1": {}},
                "links": [["h1", "s1-p1"], ["h2", "s1-p1"]]}"#,
            d.path(),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                TopoError::DuplicatePort {
                    first: 0,
                    second: 1,
                    ..
                }
            ),
            "{e}"
        );
        let e = parse(
            r#"{"program": "p.p4", "hosts": {"h1": {}}, "switches": {"s1": {}},
                "links": [["h1", "s1-p1"], ["h7", "s1-p2"]]}"#,
            d.path(),
        )
        .unwrap_err();
        assert!(matches!(e, TopoError::UnknownNode { link: 1, .. }), "{e}");
    }

    #[test]
    fn cidr_and_mac() {
        assert_eq!(parse_cidr("10.0.0.1").unwrap().1, 32);
        assert!(parse_cidr("10.0.0.1/33").is_err());
        assert_eq!(
            fmt_mac(parse_mac("02:4E:53:00:00:01").unwrap()),
            "02:4e:53:00:00:01"
        );
        assert!(parse_mac("02:4e:53:00:00").is_err());
    }
}
