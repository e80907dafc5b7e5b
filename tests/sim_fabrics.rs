//! HyperX and Dragonfly (Figure 22): the routes are minimal (at most 3
//! switch-to-switch links with the paper's shapes: one per dimension in
//! HyperX; local, global, local in Dragonfly), every response retraces its
//! read through the same middle pipes (§6.2.1's condition), the routes use
//! every cable, the control-plane tables the simulator writes reproduce the
//! routing decision exactly, and bad shapes are refused by name.

use std::collections::{BTreeSet, HashMap};

use netsparse::sim::config::SimConfig;
use netsparse::sim::topology::{
    Device, Endpoint, Shape, TableTemplates, Topology, TopologySpec, PR_TYPE_READ, PR_TYPE_RESPONSE,
};

fn paper(spec: &str) -> Topology {
    Topology::build(spec.parse().unwrap(), 128, 8, None).unwrap()
}

fn pipe(t: &Topology, port: u32) -> u32 {
    port / (t.tor_ports() / t.tor_pipes())
}

/// The switches a path visits with (ingress port, egress port) at each.
fn switch_hops(t: &Topology, p: &[Endpoint]) -> Vec<(Device, u32, u32)> {
    p.windows(2)
        .map(|w| (w[1].device, t.peer(w[0]).unwrap().port, w[1].port))
        .collect()
}

#[test]
fn figure_22_shapes() {
    let hx = paper("hyperx");
    assert_eq!((hx.racks(), hx.hosts_per_rack(), hx.spines()), (32, 4, 0));
    assert_eq!((hx.tor_ports(), hx.tor_pipes()), (32, 8));
    let df = paper("dragonfly");
    assert_eq!((df.racks(), df.hosts_per_rack(), df.spines()), (32, 4, 0));
    // 4 hosts + 7 local + 4 global = 15 ports, padded to 4 pipes of 4.
    assert_eq!((df.tor_ports(), df.tor_pipes()), (16, 4));
    // Cables: 128 host links; HyperX 32 x 28 / 2; Dragonfly 32 x 7 / 2
    // local + 6 group pairs x 10 global.
    assert_eq!(hx.links().len(), 128 + 32 * 28 / 2);
    assert_eq!(df.links().len(), 128 + 32 * 7 / 2 + 60);
    for t in [hx, df] {
        for l in t.links() {
            assert_eq!(t.peer(l.a), Some(l.b));
            assert_eq!(t.peer(l.b), Some(l.a));
        }
    }
}

#[test]
fn routes_are_minimal_and_responses_retrace_their_reads() {
    for spec in ["hyperx", "dragonfly"] {
        let t = paper(spec);
        let mut used: BTreeSet<(Endpoint, Endpoint)> = BTreeSet::new();
        for a in 0..t.nodes() {
            for b in 0..t.nodes() {
                if a == b {
                    continue;
                }
                let read = t.path(a, b, PR_TYPE_READ);
                let resp = t.path(b, a, PR_TYPE_RESPONSE);
                for (p, to) in [(&read, b), (&resp, a)] {
                    assert_eq!(
                        t.peer(*p.last().unwrap()).unwrap().device,
                        Device::Node(to),
                        "{spec}: {a}<->{b} does not arrive"
                    );
                    for &e in p.iter() {
                        let o = t.peer(e).unwrap();
                        used.insert((e.min(o), e.max(o)));
                    }
                }
                // The response visits the read's switches in reverse, and
                // at each it arrives in the middle pipe the read left by
                // (its trunk may differ; the pipe may not).
                let fwd = switch_hops(&t, &read);
                let mut back = switch_hops(&t, &resp);
                back.reverse();
                assert_eq!(fwd.len(), back.len(), "{spec}: {a}<->{b}");
                for (f, r) in fwd.iter().zip(&back) {
                    assert_eq!(f.0, r.0, "{spec}: {a}<->{b}");
                    assert_eq!(pipe(&t, f.2), pipe(&t, r.1), "{spec}: {a}<->{b} at {}", f.0);
                }
                // Minimal: at most 3 switch-to-switch links.
                let (sa, sb) = (t.rack_of(a), t.rack_of(b));
                let fabric = fwd.len() - 1;
                assert!(fabric <= 3, "{spec}: {a}->{b} crosses {fabric} links");
                let switches: Vec<u32> = fwd
                    .iter()
                    .map(|&(d, _, _)| match d {
                        Device::Tor(r) => r,
                        other => panic!("{other} on a {spec} path"),
                    })
                    .collect();
                match t.shape() {
                    Shape::HyperX(x) => {
                        let (ca, cb) = (x.coords(sa), x.coords(sb));
                        let differ: Vec<usize> =
                            (0..x.dims().len()).filter(|&d| ca[d] != cb[d]).collect();
                        assert_eq!(fabric, differ.len(), "{spec}: {a}->{b}");
                        // Reads fix the lowest differing dimension first.
                        for (w, &dim) in switches.windows(2).zip(&differ) {
                            let (c0, c1) = (x.coords(w[0]), x.coords(w[1]));
                            let changed: Vec<usize> =
                                (0..x.dims().len()).filter(|&d| c0[d] != c1[d]).collect();
                            assert_eq!(changed, vec![dim], "{spec}: {a}->{b}");
                        }
                    }
                    Shape::Dragonfly(d) => {
                        let kinds: Vec<bool> = switches
                            .windows(2)
                            .map(|w| d.group(w[0]) != d.group(w[1]))
                            .collect();
                        let globals = kinds.iter().filter(|&&g| g).count();
                        if d.group(sa) == d.group(sb) {
                            assert_eq!(fabric, usize::from(sa != sb), "{spec}: {a}->{b}");
                        } else {
                            // local?, global, local?
                            assert_eq!(globals, 1, "{spec}: {a}->{b}: {kinds:?}");
                        }
                    }
                    Shape::LeafSpine { .. } => unreachable!(),
                }
            }
        }
        // The routes use every cable of the fabric.
        let fabric_links = t
            .links()
            .iter()
            .filter(|l| !matches!(l.a.device, Device::Node(_)))
            .count();
        let used_fabric = used
            .iter()
            .filter(|(x, _)| !matches!(x.device, Device::Node(_)))
            .count();
        assert_eq!(
            used_fabric, fabric_links,
            "{spec}: some cable is never used"
        );
    }
}

/// Emulates the switch programs' lookup order on the simulator's command
/// file: flow_port (type, ingress port, destination), pr_port (type,
/// destination), node_port (destination).
#[test]
fn the_control_plane_reproduces_every_routing_decision() {
    let tpl = TableTemplates::default();
    for (spec, nodes) in [
        ("hyperx", 128),
        ("dragonfly", 128),
        ("hyperx:3x2,width=2", 12),
        ("dragonfly:groups=3,switches=2,global=2", 12),
    ] {
        let t = Topology::build(spec.parse().unwrap(), nodes, 8, None)
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        let mut flow_entries = 0;
        let mut pr_entries = 0;
        for r in 0..t.racks() {
            let d = Device::Tor(r);
            let text = t.control_plane(d, &tpl);
            let (mut flow, mut pr, mut node) = (HashMap::new(), HashMap::new(), HashMap::new());
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                let w: Vec<&str> = line.split_whitespace().collect();
                let n = |i: usize| w[i].parse::<u32>().unwrap();
                match w[1] {
                    "flow_port" => {
                        assert!(flow.insert((n(3), n(4), n(5)), n(7)).is_none(), "{line}");
                    }
                    "pr_port" => {
                        assert!(pr.insert((n(3), n(4)), n(6)).is_none(), "{line}");
                    }
                    "node_port" => {
                        node.insert(n(3), n(5));
                    }
                    "ipv4_port" => {}
                    other => panic!("unexpected table {other}"),
                }
            }
            flow_entries += flow.len();
            pr_entries += pr.len();
            for ty in [PR_TYPE_READ, PR_TYPE_RESPONSE] {
                for in_port in 0..t.tor_ports() {
                    for dst in 0..t.nodes() {
                        let ty32 = u32::from(ty);
                        let got = flow
                            .get(&(ty32, in_port, dst))
                            .or_else(|| pr.get(&(ty32, dst)))
                            .or_else(|| node.get(&dst))
                            .copied();
                        assert_eq!(
                            got,
                            t.hop(d, ty, in_port, dst),
                            "{spec} {d} ty {ty} in {in_port} dst {dst}"
                        );
                    }
                }
            }
        }
        // HyperX needs pr_port only; Dragonfly both tables.
        assert!(pr_entries > 0, "{spec}");
        assert_eq!(flow_entries > 0, spec.starts_with("dragonfly"), "{spec}");
        let _ = nodes;
    }
}

#[test]
fn bad_shapes_and_counts_name_the_parameter() {
    for (spec, want) in [
        ("torus", "leaf-spine, hyperx"),
        ("hyperx:4x1", "2..=64"),
        ("hyperx:4x4,width=0", "hyperx width"),
        ("hyperx:4x4,depth=2", "hyperx options"),
        ("hyperx:4xq", "hyperx dimension"),
        ("dragonfly:groups=1", "dragonfly groups"),
        (
            "dragonfly:groups=40,switches=2,global=2",
            "dragonfly global",
        ),
        ("dragonfly:size=3", "dragonfly options"),
        ("leaf-spine:4", "--racks"),
    ] {
        let e = spec.parse::<TopologySpec>().unwrap_err().to_string();
        assert!(e.contains(want), "{spec}: {e}");
    }
    let e = Topology::build("hyperx".parse().unwrap(), 100, 8, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("nodes = 100") && e.contains("32 switches"),
        "{e}"
    );
    // Too many ports for one switch.
    let e = Topology::build("hyperx:64x64,width=8".parse().unwrap(), 4096, 8, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("switch ports"), "{e}");
    // Routing is a leaf-spine choice.
    let cfg = SimConfig {
        topology: "dragonfly".parse().unwrap(),
        routing: netsparse::sim::topology::Routing::Owner,
        ..SimConfig::default()
    };
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("routing") && e.contains("dragonfly"), "{e}");
}

#[test]
fn specs_round_trip_through_text_and_toml() {
    for s in [
        "leaf-spine",
        "hyperx:4x4x2,width=4",
        "hyperx:8,width=1",
        "dragonfly:groups=4,switches=8,global=4",
        "dragonfly:groups=9,switches=4,global=2",
    ] {
        let spec: TopologySpec = s.parse().unwrap();
        assert_eq!(spec.to_string(), s);
    }
    assert_eq!(
        "hyperx".parse::<TopologySpec>().unwrap().to_string(),
        "hyperx:4x4x2,width=4"
    );
    let cfg = SimConfig::from_toml_str(
        "topology = \"dragonfly:groups=2,switches=4,global=2\"\nnodes = 16\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(
        cfg.topology.to_string(),
        "dragonfly:groups=2,switches=4,global=2"
    );
    cfg.validate().unwrap();
    let e = SimConfig::from_toml_str("topology = \"mesh\"\n", "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.toml") && e.contains("mesh"), "{e}");
}
