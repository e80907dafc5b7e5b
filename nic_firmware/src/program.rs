//! A compiled NIC program loaded into the engine: the two per-PR paths of
//! the `NetSparseNic` package (host_to_net, net_to_host), each run by the
//! engine's per-PR path runner, with the RIG metadata (`ns_rig_md_t`) as the
//! firmware's extra slots, resolved once at load time.

use netsparse_engine::program::Program;
use netsparse_engine::prpath::{load_paths, PathSpec, PrPathRunner};
use netsparse_engine::LoadError;
use netsparse_externs::artifact::{Arch, Artifact, Package};

/// Position of `rig.node` among a path's extra slots.
pub(crate) const RIG_NODE: usize = 0;
/// Position of `rig.unit`.
pub(crate) const RIG_UNIT: usize = 1;
/// Position of `rig.command`.
pub(crate) const RIG_COMMAND: usize = 2;
/// Position of `rig.outcome`.
pub(crate) const RIG_OUTCOME: usize = 3;

/// The loaded NIC program.
#[derive(Debug)]
pub(crate) struct NicProgram {
    pub program: Program,
    /// host_to_net (per idx; no per-packet part).
    pub h2n: PrPathRunner,
    /// net_to_host (per packet, then per PR).
    pub n2h: PrPathRunner,
}

impl NicProgram {
    /// Load a `NetSparseNic` artifact.
    pub fn load(a: &Artifact, seed: u64) -> Result<NicProgram, LoadError> {
        let place = || format!("program {}", a.program);
        let nic = match (&a.arch, &a.package) {
            (Arch::NetSparseNic, Package::NetSparseNic(n)) => n,
            (arch, _) => {
                return Err(LoadError::Unsupported {
                    what: format!(
                        "architecture {arch:?}: the SmartNIC runs NetSparseNic programs (compile one with `NetSparseNic(host_to_net, net_to_host) main;`)"
                    ),
                    place: place(),
                })
            }
        };
        if !nic.host_to_net.path.per_packet.is_empty() {
            return Err(LoadError::Invalid {
                detail: "host_to_net has a per-packet part".into(),
                place: place(),
            });
        }
        let rig = |p: &netsparse_externs::artifact::NicPath| {
            [p.rig.node, p.rig.unit, p.rig.command, p.rig.outcome]
        };
        let (h_rig, n_rig) = (rig(&nic.host_to_net), rig(&nic.net_to_host));
        let specs = [
            PathSpec {
                path: &nic.host_to_net.path,
                extras: &h_rig,
            },
            PathSpec {
                path: &nic.net_to_host.path,
                extras: &n_rig,
            },
        ];
        let (program, mut paths) = load_paths(a, &specs, seed)?;
        let (Some(n2h), Some(h2n)) = (paths.pop(), paths.pop()) else {
            return Err(LoadError::Invalid {
                detail: "the NIC program needs two paths".into(),
                place: place(),
            });
        };
        Ok(NicProgram { program, h2n, n2h })
    }
}
