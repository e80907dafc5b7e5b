//! The names one run uses.
//!
//! Every namespace and interface name starts with the run id (1–4
//! characters of `[0-9a-z]`), so runs of the same topology can coexist
//! (parallel tests), and fits Linux's `IFNAMSIZ` (15 characters):
//!
//! | what | readable form | fallback when too long |
//! |---|---|---|
//! | namespace of node `N` (index `i`) | `ns<id>-N` | `ns<id>-<i>` |
//! | interface of port `P` of node `N` | `<id>-N-pP` | `<id>-<i>pP` |
//!
//! Namespace names are not limited by `IFNAMSIZ` in the kernel, but keeping
//! them as short makes them easy to type and uniform.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::spec::{NodeKind, Topology};
use super::TopoError;

/// Longest interface (and, by choice, namespace) name: `IFNAMSIZ - 1`.
pub const MAX_IFNAME: usize = 15;

/// The names of one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeNames {
    /// `"host"` or `"switch"`.
    pub kind: String,
    /// Its network namespace.
    pub netns: String,
    /// Interface name per linked port.
    pub ifaces: BTreeMap<u32, String>,
}

/// Names for every node of a topology under one run id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The run id.
    pub run_id: String,
    /// Per node name.
    pub nodes: BTreeMap<String, NodeNames>,
}

/// Check a run id: 1–4 characters of `[0-9a-z]`.
pub fn check_run_id(id: &str) -> Result<(), TopoError> {
    if id.is_empty()
        || id.len() > 4
        || !id
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    {
        return Err(TopoError::Name {
            what: format!("run id `{id}`"),
            detail: "expected 1-4 characters of [0-9a-z]".into(),
        });
    }
    Ok(())
}

/// A run id from the clock and the pid (4 hex digits), `attempt` varying it.
pub fn fresh_run_id(attempt: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut x = nanos ^ (u64::from(std::process::id()) << 20) ^ u64::from(attempt) << 40;
    // splitmix64 finaliser: spread the bits.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    format!("{:04x}", x & 0xffff)
}

impl Plan {
    /// Names for `topo` under `run_id` (checked).
    pub fn new(topo: &Topology, run_id: &str) -> Result<Plan, TopoError> {
        check_run_id(run_id)?;
        let mut nodes = BTreeMap::new();
        for (i, (name, kind)) in topo.nodes().enumerate() {
            let mut netns = format!("ns{run_id}-{name}");
            if netns.len() > MAX_IFNAME {
                netns = format!("ns{run_id}-{i}");
            }
            let mut ifaces = BTreeMap::new();
            for (port, _) in topo.ports_of(name) {
                let mut n = format!("{run_id}-{name}-p{port}");
                if n.len() > MAX_IFNAME {
                    n = format!("{run_id}-{i}p{port}");
                }
                if n.len() > MAX_IFNAME {
                    return Err(TopoError::Name {
                        what: format!("interface of {name} port {port}"),
                        detail: format!("`{n}` is longer than {MAX_IFNAME} characters"),
                    });
                }
                ifaces.insert(port, n);
            }
            nodes.insert(
                name.to_owned(),
                NodeNames {
                    kind: match kind {
                        NodeKind::Host => "host",
                        NodeKind::Switch => "switch",
                    }
                    .into(),
                    netns,
                    ifaces,
                },
            );
        }
        Ok(Plan {
            run_id: run_id.to_owned(),
            nodes,
        })
    }

    /// The namespace of `node`.
    pub fn netns(&self, node: &str) -> Option<&str> {
        self.nodes.get(node).map(|n| n.netns.as_str())
    }

    /// The interface of `node`'s `port`.
    pub fn iface(&self, node: &str, port: u32) -> Option<&str> {
        self.nodes
            .get(node)
            .and_then(|n| n.ifaces.get(&port))
            .map(String::as_str)
    }

    /// The first name of this plan that exists already on the machine.
    pub fn first_existing(&self) -> Option<(&'static str, String)> {
        for n in self.nodes.values() {
            if super::net::netns_exists(&n.netns) {
                return Some(("network namespace", n.netns.clone()));
            }
            for i in n.ifaces.values() {
                if super::net::iface_exists(i) {
                    return Some(("interface", i.clone()));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::spec::Topology;

    #[test]
    fn names_fit_and_are_unique() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("p.p4"), "x").unwrap();
        let t = Topology::parse(
            r#"{"program": "p.p4",
                "hosts": {"h0": {}, "a_very_long_host_name": {}},
                "switches": {"spine12345": {}},
                "links": [["h0", "spine12345-p0"], ["a_very_long_host_name", "spine12345-p11"]]}"#,
            &d.path().join("t.json"),
            d.path(),
        )
        .unwrap();
        let p = Plan::new(&t, "ab12").unwrap();
        let mut all = Vec::new();
        for n in p.nodes.values() {
            assert!(n.netns.len() <= MAX_IFNAME, "{}", n.netns);
            assert!(n.netns.starts_with("nsab12-"));
            all.push(n.netns.clone());
            for i in n.ifaces.values() {
                assert!(i.len() <= MAX_IFNAME, "{i}");
                assert!(i.starts_with("ab12-"));
                all.push(i.clone());
            }
        }
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        assert_eq!(p.iface("h0", 0), Some("ab12-h0-p0"));
        assert!(Plan::new(&t, "ABCD").is_err());
        assert!(Plan::new(&t, "abcde").is_err());
        assert_ne!(fresh_run_id(0), fresh_run_id(1));
    }
}
