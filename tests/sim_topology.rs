//! Leaf-spine structure, symmetric routing (the Property Cache's
//! requirement), control-plane entries, the tutorials' JSON, bad shapes, and
//! routing end to end through the event loop.

use netsparse::sim::devices::NodeRouter;
use netsparse::sim::engine::{AnyDevice, Engine, EngineConfig, LinkParams};
use netsparse::sim::topology::{
    Device, Endpoint, PairCosts, Routing, TableTemplates, Topology, TopologyError, PR_TYPE_READ,
    PR_TYPE_RESPONSE,
};
use netsparse_externs::wire::DeviceAddr;
use netsparse_externs::{Datapath, Outputs, Time};

#[test]
fn routing_is_symmetric_for_every_pair() {
    for (n, r, s) in [
        (128, 8, None),
        (12, 3, Some(2)),
        (16, 4, Some(5)),
        (8, 1, None),
        (6, 6, Some(1)),
    ] {
        let t = Topology::new(n, r, s).unwrap();
        let h = t.hosts_per_rack();
        for a in 0..n {
            for b in 0..n {
                if a == b {
                    assert!(t.path(a, b, PR_TYPE_READ).is_empty());
                    continue;
                }
                let fwd = t.path(a, b, PR_TYPE_READ);
                let back = t.path(b, a, PR_TYPE_RESPONSE);
                let (ra, rb) = (a / h, b / h);
                assert_eq!(fwd.len(), if ra == rb { 2 } else { 4 }, "{a}->{b}");
                // The path ends at b.
                let last = *fwd.last().unwrap();
                assert_eq!(t.peer(last).unwrap().device, Device::Node(b));
                // Every cable of a->b is used by b->a, in reverse order.
                let cables = |p: &[Endpoint]| -> Vec<(Endpoint, Endpoint)> {
                    p.iter().map(|&e| (e, t.peer(e).unwrap())).collect()
                };
                let mut rev: Vec<(Endpoint, Endpoint)> =
                    cables(&back).into_iter().map(|(x, y)| (y, x)).collect();
                rev.reverse();
                assert_eq!(cables(&fwd), rev, "{a}<->{b}");
                // §6.2.1: the read's egress port at the requester's ToR is
                // the port the response arrives on there.
                let read_egress_at_tor = fwd[1];
                let response_ingress_at_tor = t.peer(back[back.len() - 2]).unwrap();
                assert_eq!(read_egress_at_tor, response_ingress_at_tor, "{a}<->{b}");
                if ra != rb {
                    // Spine (A + B) mod S in both directions.
                    let spine = Device::Spine((ra + rb) % t.spines());
                    assert_eq!(fwd[2].device, spine);
                    assert_eq!(back[2].device, spine);
                }
            }
        }
    }
}

#[test]
fn impossible_topologies_name_the_value() {
    type Shape = (u32, u32, Option<u32>);
    let cases: Vec<(Shape, &str)> = vec![
        ((128, 7, None), "nodes = 128 is not divisible by racks = 7"),
        ((128, 0, None), "racks = 0"),
        ((0, 1, None), "nodes = 0"),
        ((16, 2, Some(0)), "spines = 0"),
        (
            (1024, 2, None),
            "ToR ports (hosts per rack + spines) = 1024 exceeds the 511 ports",
        ),
        ((1024, 1024, Some(4)), "spine ports (racks) = 1024 exceeds"),
    ];
    for ((n, r, s), needle) in cases {
        let e = Topology::new(n, r, s).unwrap_err();
        assert!(e.to_string().contains(needle), "{n}/{r}/{s:?}: {e}");
    }
    assert_eq!(
        Topology::new(128, 7, None).unwrap_err(),
        TopologyError::NotDivisible {
            nodes: 128,
            racks: 7
        }
    );
}

#[test]
fn control_plane_entries() {
    let t = Topology::new(8, 2, Some(2)).unwrap();
    let cp = t.control_plane(Device::Tor(1), &TableTemplates::default());
    let lines: Vec<&str> = cp.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 16); // 8 nodes x 2 tables
                                 // Node 5 is local (port 1); node 0 is in rack 0: spine (1 + 0) mod 2 = 1,
                                 // uplink port 4 + 1 = 5.
    assert!(
        lines.contains(&"table_add node_port set_port 5 => 1"),
        "{cp}"
    );
    assert!(
        lines.contains(&"table_add node_port set_port 0 => 5"),
        "{cp}"
    );
    assert!(
        lines.contains(&"table_add ipv4_port set_port 10.0.0.1 => 5"),
        "{cp}"
    );
    let spine = t.control_plane(Device::Spine(0), &TableTemplates::default());
    assert!(
        spine.contains("table_add node_port set_port 7 => 1\n"),
        "{spine}"
    );
    assert!(t
        .control_plane(Device::Node(0), &TableTemplates::default())
        .is_empty());
    // Templates are parameters: match the real program's names.
    let custom = TableTemplates {
        node: Some("table_add MyIngress.ns_fwd MyIngress.to_port {node} => {port} {mac}".into()),
        ipv4: None,
        flow: None,
        pr: None,
    };
    let cp = t.control_plane(Device::Tor(0), &custom);
    assert!(
        cp.contains("table_add MyIngress.ns_fwd MyIngress.to_port 3 => 3 02:4e:53:00:00:03\n"),
        "{cp}"
    );
    assert!(!cp.contains("ipv4"));
}

#[test]
fn tutorial_topology_json() {
    let t = Topology::new(4, 2, Some(1)).unwrap();
    let j = t.tutorial_json("{switch}-commands.txt", 1);
    assert_eq!(j["hosts"].as_object().unwrap().len(), 4);
    assert_eq!(j["hosts"]["h2"]["ip"], "10.0.0.3/9");
    assert_eq!(j["hosts"]["h2"]["mac"], "02:4e:53:00:00:02");
    assert_eq!(j["switches"].as_object().unwrap().len(), 3);
    assert_eq!(j["switches"]["spine0"]["cli_input"], "spine0-commands.txt");
    assert_eq!(j["switches"]["tor1"]["ip"], "10.128.0.2");
    let links = j["links"].as_array().unwrap();
    assert_eq!(links.len(), 4 + 2);
    assert_eq!(links[3], serde_json::json!(["h3", "tor1-p2"]));
    assert_eq!(links[5], serde_json::json!(["tor1-p3", "spine0-p2"]));
}

/// A NIC stand-in: sends one frame to each destination at t = 0, records
/// arrival times by source node.
struct Nic {
    me: u32,
    dsts: Vec<u32>,
    sent: bool,
    got: Vec<(u32, Time)>,
}

impl Datapath for Nic {
    fn on_packet(&mut self, now: Time, _port: u32, frame: &[u8], _out: &mut Outputs) {
        let src = [frame[26], frame[27], frame[28], frame[29]];
        if let Some(DeviceAddr::Node(n)) = DeviceAddr::from_ipv4(src) {
            self.got.push((n, now));
        }
    }
    fn on_timer(&mut self, _now: Time, out: &mut Outputs) {
        self.sent = true;
        for &d in &self.dsts {
            let mut f = vec![0u8; 100];
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f[14] = 0x45;
            f[26..30].copy_from_slice(&DeviceAddr::Node(self.me).ipv4().unwrap());
            f[30..34].copy_from_slice(&DeviceAddr::Node(d).ipv4().unwrap());
            out.push(0, &f);
        }
    }
    fn next_deadline(&self) -> Option<Time> {
        (!self.sent && !self.dsts.is_empty()).then_some(Time::ZERO)
    }
}

#[test]
fn routing_through_the_event_loop() {
    // Table 5's shape; node 0 sends to a rack-mate and to a remote node.
    let t = Topology::new(128, 8, None).unwrap();
    let mut e: Engine = t
        .engine(
            EngineConfig::default(),
            LinkParams::default(),
            Time::from_ns(300),
            &mut |d| -> Box<dyn AnyDevice> {
                match d {
                    Device::Node(n) => Box::new(Nic {
                        me: n,
                        dsts: if n == 0 { vec![5, 100] } else { vec![] },
                        sent: false,
                        got: vec![],
                    }),
                    _ => Box::new(NodeRouter::for_switch(&t, d)),
                }
            },
        )
        .unwrap();
    assert_eq!(e.device_count(), t.device_count());
    assert_eq!(
        e.label(t.device_index(Device::Spine(3)) as u32),
        Some("spine3")
    );
    e.run().unwrap();
    // 100 B at 400 Gb/s: 2 ns per hop. Node 5 (same rack): two links and
    // one switch: 2 x (2 + 450) + 300 = 1204 ns. The two frames leave node 0
    // back to back: the second (to node 100) is 2 ns behind at every hop
    // until the paths split. Node 100 (rack 6): four links and three
    // switches: 4 x 452 + 3 x 300 = 2708 ns, + 2 ns queueing at the NIC.
    let got5 = &e.get::<Nic>(5).unwrap().got;
    assert_eq!(got5, &vec![(0, Time::from_ns(1204))]);
    let got100 = &e.get::<Nic>(100).unwrap().got;
    assert_eq!(got100, &vec![(0, Time::from_ns(2710))]);
    // It crossed spine (0 + 6) mod 16 = 6: uplink port 16 + 6 of ToR 0.
    let tor0 = t.device_index(Device::Tor(0)) as u32;
    assert_eq!(e.tx_counters(tor0, 22).unwrap().packets, 1);
    for s in 0..16 {
        let expect = u64::from(s == 6);
        assert_eq!(
            e.tx_counters(tor0, 16 + s).unwrap().packets,
            expect,
            "uplink {s}"
        );
    }
    let routers_dropped: u64 = (0..t.device_count())
        .filter_map(|i| e.get::<NodeRouter>(i as u32))
        .map(|r| r.unroutable)
        .sum();
    assert_eq!(routers_dropped, 0);
}

/// The routings between racks, from their definitions (computed here):
/// rack-pair leaves everything to `node_port`; node-pair sends x → y and
/// y → x over spine (x + y) mod S; owner sends rack A's reads to y and y's
/// responses to rack A over spine (A + y) mod S; node-pair and owner use
/// every uplink of every ToR (rack-pair at most R − 1 of them); within a
/// rack, and for other PR types, `node_port` decides.
#[test]
fn routings_between_racks_keep_their_promises() {
    let (n, r) = (128u32, 8u32);
    let base = Topology::new(n, r, None).unwrap();
    let (h, s) = (base.hosts_per_rack(), base.spines());
    let rack_pair = base.clone().with_routing(Routing::RackPair);
    let node_pair = base.clone().with_routing(Routing::NodePair);
    let owner = base.with_routing(Routing::Owner);
    for rack in 0..r {
        let mut used_np = std::collections::BTreeSet::new();
        let mut used_ow = std::collections::BTreeSet::new();
        let mut used_rp = std::collections::BTreeSet::new();
        for x in rack * h..(rack + 1) * h {
            for y in 0..n {
                let ry = y / h;
                for ty in [PR_TYPE_READ, PR_TYPE_RESPONSE] {
                    assert_eq!(rack_pair.flow_port(rack, ty, x, y), None);
                    if ry == rack {
                        assert_eq!(node_pair.flow_port(rack, ty, x, y), None);
                        assert_eq!(owner.flow_port(rack, ty, x, y), None);
                        continue;
                    }
                    let np = node_pair.flow_port(rack, ty, x, y).unwrap();
                    assert_eq!(np, h + (x + y) % s);
                    // Symmetric: y's ToR sends y -> x over the same spine.
                    assert_eq!(node_pair.flow_port(ry, ty, y, x), Some(np));
                    used_np.insert(np);
                }
                if ry == rack {
                    continue;
                }
                // Owner: x reads from y over (rack + y) mod S, and y's
                // responses to x come back over that spine.
                let read = owner.flow_port(rack, PR_TYPE_READ, x, y).unwrap();
                assert_eq!(read, h + (rack + y) % s);
                assert_eq!(owner.flow_port(ry, PR_TYPE_RESPONSE, y, x), Some(read));
                used_ow.insert(read);
                used_rp.insert(rack_pair.route(Device::Tor(rack), y).unwrap());
                // Unknown PR types are left to node_port.
                assert_eq!(owner.flow_port(rack, 7, x, y), None);
            }
        }
        assert_eq!(used_np.len() as u32, s, "node-pair, ToR {rack}");
        assert_eq!(used_ow.len() as u32, s, "owner, ToR {rack}");
        assert!(
            (used_rp.len() as u32) < r,
            "rack-pair, ToR {rack}: {used_rp:?}"
        );
    }
    // The control plane fills flow_port for the spreading routings only.
    let t = TableTemplates::default();
    assert!(!rack_pair
        .control_plane(Device::Tor(0), &t)
        .contains("flow_port"));
    let cp = owner.control_plane(Device::Tor(1), &t);
    let y = 40u32;
    // Node 16 (port 0 of ToR 1) reads from node 40.
    let want = format!(
        "table_add flow_port set_port {PR_TYPE_READ} 0 {y} => {}\n",
        h + (1 + y) % s
    );
    assert!(cp.contains(&want), "{want}");
    // One entry per (PR type, host, remote node) whose spine differs from
    // the rack-pair one node_port gives (the others would repeat it).
    let differing = (16..32u32)
        .flat_map(|x| (0..n).map(move |y| (x, y)))
        .flat_map(|(x, y)| [PR_TYPE_READ, PR_TYPE_RESPONSE].map(|ty| (x, y, ty)))
        .filter(|&(x, y, ty)| {
            let p = owner.flow_port(1, ty, x, y);
            p.is_some() && p != owner.route(Device::Tor(1), y)
        })
        .count();
    assert!(differing as u32 > h * (n - h), "{differing}");
    assert_eq!(cp.matches("table_add flow_port").count(), differing);
    assert!(
        owner
            .control_plane(Device::Spine(0), &t)
            .matches("flow_port")
            .count()
            == 0
    );
    // Names parse back; unknown names are refused with the list.
    for r in [Routing::RackPair, Routing::NodePair, Routing::Owner] {
        assert_eq!(r.name().parse::<Routing>().unwrap(), r);
    }
    let e = "ecmp".parse::<Routing>().unwrap_err();
    assert!(e.contains("rack-pair, node-pair, owner"), "{e}");
}

/// owner-load: one spine per (requester rack, owner) pair for the reads
/// and their responses (§6.2.1's condition, as `owner`), chosen from the
/// loads: three heavy pairs that `owner` puts on one spine (stokes/8's
/// `tor5 -> spine15`: h95 to rack 0, h93 to rack 2, h92 to rack 3) get
/// three spines; without loads it routes as `owner`.
#[test]
fn owner_load_spreads_heavy_pairs_and_keeps_reads_and_responses_together() {
    let (n, r) = (128u32, 8u32);
    let base = Topology::new(n, r, None).unwrap();
    let h = base.hosts_per_rack();
    let owner = base.clone().with_routing(Routing::Owner);
    let unloaded = base.clone().with_routing(Routing::OwnerLoad);
    let heavy = |a: u32, y: u32| matches!((a, y), (0, 95) | (2, 93) | (3, 92));
    // K = 16 at 400 Gb/s; one PR per cycle at 2 GHz.
    let costs = PairCosts {
        link_ps: 1640,
        pipe_ps: 1000,
    };
    let loaded = base
        .clone()
        .with_routing(Routing::OwnerLoad)
        .with_pair_loads(costs, |a, y| if heavy(a, y) { 1000 } else { 1 });
    let resp = |t: &Topology, y: u32, a: u32| t.flow_port(y / h, PR_TYPE_RESPONSE, y, a * h);
    let read = |t: &Topology, a: u32, y: u32| t.flow_port(a, PR_TYPE_READ, a * h + 3, y);
    // `owner` puts the three on one uplink of rack 5.
    let under_owner: Vec<_> = [(95, 0), (93, 2), (92, 3)]
        .iter()
        .map(|&(y, a)| resp(&owner, y, a))
        .collect();
    assert!(
        under_owner.iter().all(|p| *p == under_owner[0]),
        "{under_owner:?}"
    );
    let spread: std::collections::BTreeSet<_> = [(95, 0), (93, 2), (92, 3)]
        .iter()
        .map(|&(y, a)| resp(&loaded, y, a))
        .collect();
    assert_eq!(spread.len(), 3, "{spread:?}");
    for a in 0..r {
        for y in (0..n).filter(|&y| y / h != a) {
            // Reads of rack a to y and y's responses to rack a: one spine,
            // from every node of the rack.
            let up = read(&loaded, a, y).unwrap();
            assert!(up >= h && up < h + base.spines(), "{a} {y} {up}");
            assert_eq!(resp(&loaded, y, a), Some(up), "pair ({a}, {y})");
            assert_eq!(loaded.flow_port(a, PR_TYPE_READ, a * h + 11, y), Some(up));
            // Without loads, `owner`'s spines.
            assert_eq!(read(&unloaded, a, y), read(&owner, a, y));
            assert_eq!(resp(&unloaded, y, a), resp(&owner, y, a));
        }
    }
    // The choice is a function of the loads alone.
    let again = base
        .clone()
        .with_routing(Routing::OwnerLoad)
        .with_pair_loads(costs, |a, y| if heavy(a, y) { 1000 } else { 1 });
    assert_eq!(again, loaded);
    assert_eq!("owner-load".parse::<Routing>(), Ok(Routing::OwnerLoad));
}
