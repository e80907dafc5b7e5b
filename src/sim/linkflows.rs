//! Who uses a link: `netsparse sim --link-flows tor5->spine15` names link
//! directions, and this file owns the rest — parsing that list, a link tap
//! ([`FlowTap`]) that sees every frame sent on those directions and counts,
//! per flow (PR type, requester node, owner node), the PRs and bytes that
//! cross, and the report's `link_flows` (the heaviest flows by bytes, and
//! the same rolled up to the requester's rack).
//!
//! The tap only watches: it never drops a frame, so a run with
//! `--link-flows` gives the results of one without. The owner of a PR is
//! the node whose column range holds its idx (the partition), its
//! requester the PR's `src` (kept end to end); a frame's bytes are shared
//! evenly by its PRs. Frames that are not NetSparse frames are counted
//! apart.

use serde::Serialize;

use netsparse_externs::fxhash::FxHashMap;
use netsparse_externs::wire::{Frame, PrType};

use super::engine::DeviceId;
use super::engine::{LinkTap, TapFrame};
use super::partition::Ranges;
use super::topology::{Device, Topology};

/// Flows listed per link (the heaviest by bytes).
pub const TOP_FLOWS: usize = 10;

/// Parse `--link-flows`: comma-separated link directions `FROM->TO` of
/// device names (`h3`, `tor5`, `spine15`).
pub fn parse(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let Some((a, b)) = part.split_once("->") else {
            return Err(format!(
                "{part:?}: expected a link direction FROM->TO such as tor5->spine15"
            ));
        };
        let (a, b) = (a.trim(), b.trim());
        if a.is_empty() || b.is_empty() {
            return Err(format!(
                "{part:?}: a device name is missing on one side of ->"
            ));
        }
        out.push((a.to_string(), b.to_string()));
    }
    Ok(out)
}

/// Resolve the named link directions against `t`: (from, to) device
/// indices, or an error naming what is not there.
pub fn resolve(
    t: &Topology,
    links: &[(String, String)],
) -> Result<Vec<(DeviceId, DeviceId)>, String> {
    let find = |name: &str| {
        t.devices().find(|d| d.to_string() == name).ok_or_else(|| {
            format!(
                "--link-flows: no device named {name:?} (this topology has h0..h{}, tor0..tor{}{})",
                t.nodes().saturating_sub(1),
                t.racks().saturating_sub(1),
                if t.spines() > 0 {
                    format!(", spine0..spine{}", t.spines() - 1)
                } else {
                    String::new()
                }
            )
        })
    };
    let linked: Vec<(Device, Device)> = t
        .links()
        .iter()
        .flat_map(|l| [(l.a.device, l.b.device), (l.b.device, l.a.device)])
        .collect();
    links
        .iter()
        .map(|(a, b)| {
            let (da, db) = (find(a)?, find(b)?);
            if !linked.contains(&(da, db)) {
                return Err(format!("--link-flows: no link from {a} to {b}"));
            }
            Ok((
                t.device_index(da) as DeviceId,
                t.device_index(db) as DeviceId,
            ))
        })
        .collect()
}

/// A flow: (PR type, requester node or rack, owner node).
type FlowKey = (u16, u32, u32);
/// A flow's (PRs, bytes).
type Counts = (u64, u64);

/// One watched link direction while the run goes on.
#[derive(Debug)]
struct Watched {
    from: DeviceId,
    to: DeviceId,
    name: String,
    frames: u64,
    bytes: u64,
    other_frames: u64,
    other_bytes: u64,
    flows: FxHashMap<FlowKey, Counts>,
}

/// The link tap of `--link-flows`.
#[derive(Debug)]
pub struct FlowTap {
    links: Vec<Watched>,
    owners: Ranges,
}

impl FlowTap {
    /// Watch `links` ((from, to) device indices, named by `t`); `owners`:
    /// the column ranges of the nodes.
    pub fn new(t: &Topology, links: &[(DeviceId, DeviceId)], owners: Ranges) -> FlowTap {
        let name = |d: DeviceId| {
            t.device_at(d as usize)
                .map_or_else(|| format!("device {d}"), |x| x.to_string())
        };
        FlowTap {
            links: links
                .iter()
                .map(|&(from, to)| Watched {
                    from,
                    to,
                    name: format!("{} -> {}", name(from), name(to)),
                    frames: 0,
                    bytes: 0,
                    other_frames: 0,
                    other_bytes: 0,
                    flows: FxHashMap::default(),
                })
                .collect(),
            owners,
        }
    }

    /// What each watched link carried: its flows, heaviest first, and the
    /// same rolled up to the requester's rack.
    pub fn report(&self, t: &Topology) -> Vec<LinkFlows> {
        self.links
            .iter()
            .map(|w| {
                let mut flows: Vec<_> = w.flows.iter().map(|(&k, &v)| (k, v)).collect();
                let mut racks: FxHashMap<FlowKey, Counts> = FxHashMap::default();
                for &((ty, req, owner), (prs, bytes)) in &flows {
                    let e = racks.entry((ty, t.rack_of(req), owner)).or_default();
                    e.0 += prs;
                    e.1 += bytes;
                }
                let mut racks: Vec<_> = racks.into_iter().collect();
                let top = |v: &mut Vec<(FlowKey, Counts)>, rack: bool| {
                    // Heaviest first; ties in key order, so the report is stable.
                    v.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
                    v.iter()
                        .take(TOP_FLOWS)
                        .map(|&((ty, req, owner), (prs, bytes))| Flow {
                            pr_type: PrType::from_u16(ty).map_or("?", |p| match p {
                                PrType::Read => "read",
                                PrType::Response => "response",
                            }),
                            requester: if rack {
                                format!("rack {req}")
                            } else {
                                Device::Node(req).to_string()
                            },
                            owner: Device::Node(owner).to_string(),
                            prs,
                            bytes,
                            share: bytes as f64 / w.bytes.max(1) as f64,
                        })
                        .collect()
                };
                LinkFlows {
                    link: w.name.clone(),
                    frames: w.frames,
                    bytes: w.bytes,
                    flow_count: flows.len() as u64,
                    other_frames: w.other_frames,
                    other_bytes: w.other_bytes,
                    flows: top(&mut flows, false),
                    by_rack: top(&mut racks, true),
                }
            })
            .collect()
    }
}

impl LinkTap for FlowTap {
    fn on_frame(&mut self, frame: &TapFrame<'_>, dropped: bool) -> bool {
        let Some((to, _)) = frame.to else {
            return dropped;
        };
        for w in self.links.iter_mut() {
            if w.from != frame.from.0 || w.to != to || dropped {
                continue;
            }
            let len = frame.bytes.len() as u64;
            w.frames += 1;
            w.bytes += len;
            let Ok(f) = Frame::parse(frame.bytes) else {
                w.other_frames += 1;
                w.other_bytes += len;
                continue;
            };
            let ty = f.concat.pr_type.as_u16();
            let n = u64::from(f.concat.num_prs).max(1);
            for (i, pr) in f.prs().enumerate() {
                let pr = pr.repr();
                // An even share of the frame; the remainder to the first PRs.
                let share = len / n + u64::from((i as u64) < len % n);
                let owner = self.owners.owner(pr.idx.min(u64::from(u32::MAX)) as u32);
                let e = w.flows.entry((ty, pr.src, owner)).or_default();
                e.0 += 1;
                e.1 += share;
            }
        }
        dropped
    }
}

/// What one link direction carried over a run (`link_flows` in the report).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkFlows {
    /// The direction, `tor5 -> spine15`.
    pub link: String,
    /// Frames sent on it.
    pub frames: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Distinct (PR type, requester, owner) flows.
    pub flow_count: u64,
    /// Frames that were not NetSparse frames.
    pub other_frames: u64,
    /// Their bytes.
    pub other_bytes: u64,
    /// The heaviest flows by bytes (at most [`TOP_FLOWS`]).
    pub flows: Vec<Flow>,
    /// The heaviest flows with the requesters rolled up to their racks.
    pub by_rack: Vec<Flow>,
}

/// One flow over a link.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flow {
    /// `read` or `response`.
    pub pr_type: &'static str,
    /// The requesting node (`h12`) or rack (`rack 3`).
    pub requester: String,
    /// The node owning the properties (`h67`).
    pub owner: String,
    /// PRs.
    pub prs: u64,
    /// Bytes (its PRs' shares of their frames).
    pub bytes: u64,
    /// Share of the link's bytes.
    pub share: f64,
}

/// The text report of `mode`'s watched links: per link a summary line and
/// its heaviest flows.
pub fn describe(mode: &str, links: &[LinkFlows]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for l in links {
        let _ = writeln!(
            s,
            "{mode}: link {}: {} frames, {} bytes, {} flows{}",
            l.link,
            l.frames,
            l.bytes,
            l.flow_count,
            if l.other_frames > 0 {
                format!(" ({} frames not NetSparse)", l.other_frames)
            } else {
                String::new()
            }
        );
        for (what, flows) in [("by rack", &l.by_rack), ("by node", &l.flows)] {
            let list: Vec<String> = flows
                .iter()
                .map(|f| {
                    format!(
                        "{} {} -> {} {:.1}%",
                        f.pr_type,
                        if f.pr_type == "read" {
                            &f.requester
                        } else {
                            &f.owner
                        },
                        if f.pr_type == "read" {
                            &f.owner
                        } else {
                            &f.requester
                        },
                        100.0 * f.share
                    )
                })
                .collect();
            if !list.is_empty() {
                let _ = writeln!(s, "{mode}:   {what}: {}", list.join(", "));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_lists_parse_and_bad_ones_say_why() {
        assert_eq!(
            parse("tor5->spine15, spine15 -> tor2").unwrap(),
            vec![
                ("tor5".to_string(), "spine15".to_string()),
                ("spine15".to_string(), "tor2".to_string())
            ]
        );
        assert!(parse("tor5").unwrap_err().contains("FROM->TO"));
        assert!(parse("tor5->").unwrap_err().contains("missing"));
    }

    #[test]
    fn names_resolve_against_the_topology() {
        let t = Topology::new(32, 2, None).unwrap();
        let ok = resolve(&t, &parse("tor1->spine3,h17->tor1").unwrap()).unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(
            ok[0],
            (
                t.device_index(Device::Tor(1)) as DeviceId,
                t.device_index(Device::Spine(3)) as DeviceId
            )
        );
        let e = resolve(&t, &parse("tor9->spine0").unwrap()).unwrap_err();
        assert!(
            e.contains("no device named \"tor9\"") && e.contains("tor0..tor1"),
            "{e}"
        );
        let e = resolve(&t, &parse("tor0->tor1").unwrap()).unwrap_err();
        assert!(e.contains("no link from tor0 to tor1"), "{e}");
        let e = resolve(&t, &parse("h3->tor1").unwrap()).unwrap_err();
        assert!(e.contains("no link from h3 to tor1"), "{e}");
    }
}
