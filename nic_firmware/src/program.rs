//! A compiled NIC program loaded into the switch engine: the three statement
//! lists of the `NetSparseNic` package and the slots the firmware reads and
//! writes around them, resolved once at load time.

use netsparse_engine::program::{BlockId, Program, Slot};
use netsparse_engine::LoadError;
use netsparse_externs::artifact::{Arch, Artifact, FieldKind, HeaderId, NicPath, Package};

/// Slots of one path's `pr`, `md` and `rig`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PathSlots {
    pub src: Slot,
    pub tid: Slot,
    pub idx: Slot,
    pub req_id: Slot,
    pub pr_type: Slot,
    pub dst: Slot,
    pub prop_len: Slot,
    pub ingress_port: Slot,
    pub egress_port: Slot,
    pub drop: Slot,
    pub node: Slot,
    pub unit: Slot,
    pub command: Slot,
    pub outcome: Slot,
    /// The header instance holding `pr` (valid while a PR is processed).
    pub pr_header: Option<HeaderId>,
}

impl PathSlots {
    fn resolve(p: &Program, a: &Artifact, path: &NicPath) -> Result<PathSlots, LoadError> {
        let s = |f| p.slot(f);
        let pr_header = match a.fields.get(path.pr.idx.index()).map(|f| f.kind) {
            Some(FieldKind::Header(h)) => Some(h),
            _ => None,
        };
        Ok(PathSlots {
            src: s(path.pr.src)?,
            tid: s(path.pr.tid)?,
            idx: s(path.pr.idx)?,
            req_id: s(path.pr.req_id)?,
            pr_type: s(path.pr_meta.pr_type)?,
            dst: s(path.pr_meta.dst)?,
            prop_len: s(path.pr_meta.prop_len)?,
            ingress_port: s(path.pr_meta.ingress_port)?,
            egress_port: s(path.pr_meta.egress_port)?,
            drop: s(path.pr_meta.drop)?,
            node: s(path.rig.node)?,
            unit: s(path.rig.unit)?,
            command: s(path.rig.command)?,
            outcome: s(path.rig.outcome)?,
            pr_header,
        })
    }
}

/// The loaded NIC program.
#[derive(Debug)]
pub(crate) struct NicProgram {
    pub program: Program,
    /// host_to_net (per idx).
    pub h2n: BlockId,
    /// net_to_host before Deconcatenate (per packet).
    pub n2h_packet: BlockId,
    /// net_to_host per PR.
    pub n2h_pr: BlockId,
    pub h2n_slots: PathSlots,
    pub n2h_slots: PathSlots,
    pub n2h_packet_empty: bool,
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
        if !nic.host_to_net.per_packet.is_empty() {
            return Err(LoadError::Invalid {
                detail: "host_to_net has a per-packet part".into(),
                place: place(),
            });
        }
        let blocks: [(&str, &[_]); 3] = [
            (nic.host_to_net.name.as_str(), &nic.host_to_net.per_pr),
            (nic.net_to_host.name.as_str(), &nic.net_to_host.per_packet),
            (nic.net_to_host.name.as_str(), &nic.net_to_host.per_pr),
        ];
        let program = Program::load(a, &blocks, seed)?;
        let h2n_slots = PathSlots::resolve(&program, a, &nic.host_to_net)?;
        let n2h_slots = PathSlots::resolve(&program, a, &nic.net_to_host)?;
        Ok(NicProgram {
            h2n: program.block(0),
            n2h_packet: program.block(1),
            n2h_pr: program.block(2),
            program,
            h2n_slots,
            n2h_slots,
            n2h_packet_empty: nic.net_to_host.per_packet.is_empty(),
        })
    }
}
