//! The per-PR path runner: the one piece of code that runs a compiled
//! [`PrPath`] — the NetSparse switch's middle pipes and both paths of the
//! SmartNIC alike.
//!
//! A per-PR path is a control split by the compiler at `Deconcatenate` and
//! `Concatenate`: a per-packet part that runs once per NetSparse packet and
//! a per-PR part that runs once per PR (once per idx on the NIC's
//! host_to_net, which has no per-packet part). The runner owns what every
//! target does around those two parts:
//!
//! 1. [`PrPathRunner::begin`]: a fresh state, `md` = the packet's metadata
//!    (from the concatenation header and the arrival port), the per-packet
//!    part; `md.drop` or `exit` drops the packet.
//! 2. [`PrPathRunner::run_pr`], for each PR: `pr` = the PR's header, `md` =
//!    what the per-packet part left (with `drop` cleared), the per-PR part;
//!    the result is what it left in `pr` and `md`.
//!
//! The target supplies the primitives the parts call ([`TargetPrims`]: the
//! Property Cache in a middle pipe, the RIG externs on the NIC), writes its
//! own metadata slots (the NIC's `ns_rig_md_t`) through the runner's `extra` callbacks,
//! and decides what happens to a PR after it (concatenation, a server unit,
//! host memory).
//!
//! Every slot is resolved once, at load time, to an index into the state's
//! `u64` array (the validator fixes the widths of `pr` and `md`, all at most
//! 64 bits). When the per-PR part is the compiler's plain copy-in, apply,
//! copy-out of one control, the copies are elided and the runner reads and
//! writes the control's locals directly (`elide`).

mod elide;

use netsparse_externs::artifact::{Artifact, FieldId, FieldKind, HeaderId, PrPath, Stmt};
use netsparse_externs::wire::PrRepr;

use crate::error::LoadError;
use crate::program::{BlockId, Program, RunEnd, Slot, TargetPrims};
use crate::PacketState;

/// Indexes of a path's `pr` and `md` slots in [`PacketState::n`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrPathSlots {
    /// `pr.src` (32 bits).
    pub src: usize,
    /// `pr.tid` (16 bits).
    pub tid: usize,
    /// `pr.idx` (64 bits).
    pub idx: usize,
    /// `pr.req_id` (32 bits).
    pub req_id: usize,
    /// `md.pr_type` (16 bits).
    pub pr_type: usize,
    /// `md.dst` (32 bits).
    pub dst: usize,
    /// `md.prop_len` (32 bits).
    pub prop_len: usize,
    /// `md.ingress_port`.
    pub ingress_port: usize,
    /// `md.egress_port`.
    pub egress_port: usize,
    /// `md.drop` (1 bit).
    pub drop: usize,
}

/// The `ns_pr_md_t` values of a packet, or of a PR after the per-PR part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrMeta {
    /// PR type: 1 read, 2 response (anything else is the program's doing).
    pub pr_type: u64,
    /// Destination node.
    pub dst: u64,
    /// Property length in bytes.
    pub prop_len: u64,
    /// Port the packet arrived on.
    pub ingress_port: u64,
    /// Port the PR leaves on.
    pub egress_port: u64,
}

/// What the per-PR part left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrOutcome {
    /// `pr` after the part.
    pub pr: PrRepr,
    /// `md` after the part.
    pub md: PrMeta,
    /// `md.drop` was set, or the part ran `exit`.
    pub dropped: bool,
}

/// A per-PR path loaded into a [`Program`], with every slot resolved.
#[derive(Clone, Debug)]
pub struct PrPathRunner {
    per_packet: Option<BlockId>,
    per_pr: BlockId,
    /// The package's slots (the per-packet part's).
    pkt: PrPathSlots,
    /// The slots the per-PR part reads and writes: the package's, or the
    /// applied control's locals when its copy-in/copy-out is elided.
    pr: PrPathSlots,
    /// The package's `pr` header and its local copy (kept valid).
    headers: [Option<HeaderId>; 2],
    /// Extra target slots, as given at load: the package's (per-packet
    /// part) and the per-PR part's (the locals when copies are elided).
    pkt_extras: Vec<usize>,
    extras: Vec<usize>,
    /// `md` as the per-packet part left it.
    md: PrMeta,
    elided: bool,
}

/// One path to load: the artifact's path and the target's own metadata
/// slots that it writes before, and reads after, each PR.
#[derive(Clone, Copy, Debug)]
pub struct PathSpec<'a> {
    /// The compiled path.
    pub path: &'a PrPath,
    /// Target metadata slots (e.g. `ns_rig_md_t`'s fields), each at most 64 bits.
    pub extras: &'a [FieldId],
}

/// Load `artifact` with the blocks of every path in `paths`: the program,
/// and one runner per path in the same order.
pub fn load_paths(
    artifact: &Artifact,
    paths: &[PathSpec<'_>],
    seed: u64,
) -> Result<(Program, Vec<PrPathRunner>), LoadError> {
    let place = || format!("program {}", artifact.program);
    let mut blocks: Vec<(&str, &[Stmt])> = Vec::with_capacity(2 * paths.len());
    let mut elided = Vec::with_capacity(paths.len());
    for p in paths {
        let m = p.path;
        let pr_header = match artifact.fields.get(m.pr.src.index()).map(|f| f.kind) {
            Some(FieldKind::Header(h)) => Some(h),
            _ => None,
        };
        let e = pr_header.and_then(|h| elide::elide(artifact, m, h, p.extras));
        let per_pr = e.as_ref().map_or(m.per_pr.as_slice(), |e| e.body);
        blocks.push((m.name.as_str(), m.per_packet.as_slice()));
        blocks.push((m.name.as_str(), per_pr));
        elided.push((pr_header, e));
    }
    let prog = Program::load(artifact, &blocks, seed)?;
    let narrow = |what: &str, f: FieldId, min: u16| -> Result<usize, LoadError> {
        let s: Slot = prog.slot(f)?;
        match s.narrow_index() {
            Some(i) if s.width() >= min => Ok(i),
            _ => Err(LoadError::Invalid {
                detail: format!("{what} is {} bits, expected {min}", s.width()),
                place: place(),
            }),
        }
    };
    let mut runners = Vec::with_capacity(paths.len());
    for (i, (p, (pr_header, e))) in paths.iter().zip(elided).enumerate() {
        let m = p.path;
        let local = |f: FieldId| e.as_ref().map_or(f, |e| e.local(f));
        let slots = |f: &dyn Fn(FieldId) -> FieldId| -> Result<PrPathSlots, LoadError> {
            Ok(PrPathSlots {
                src: narrow("pr.src", f(m.pr.src), 32)?,
                tid: narrow("pr.tid", f(m.pr.tid), 16)?,
                idx: narrow("pr.idx", f(m.pr.idx), 64)?,
                req_id: narrow("pr.req_id", f(m.pr.req_id), 32)?,
                pr_type: narrow("md.pr_type", f(m.pr_meta.pr_type), 16)?,
                dst: narrow("md.dst", f(m.pr_meta.dst), 32)?,
                prop_len: narrow("md.prop_len", f(m.pr_meta.prop_len), 32)?,
                ingress_port: narrow("md.ingress_port", f(m.pr_meta.ingress_port), 9)?,
                egress_port: narrow("md.egress_port", f(m.pr_meta.egress_port), 9)?,
                drop: narrow("md.drop", f(m.pr_meta.drop), 1)?,
            })
        };
        let extras_of = |f: &dyn Fn(FieldId) -> FieldId| -> Result<Vec<usize>, LoadError> {
            p.extras
                .iter()
                .map(|x| narrow("target metadata", f(*x), 1))
                .collect()
        };
        runners.push(PrPathRunner {
            per_packet: (!m.per_packet.is_empty()).then(|| prog.block(2 * i)),
            per_pr: prog.block(2 * i + 1),
            pkt: slots(&|f| f)?,
            pr: slots(&local)?,
            headers: [pr_header, e.as_ref().map(|e| e.header)],
            pkt_extras: extras_of(&|f| f)?,
            extras: extras_of(&local)?,
            md: PrMeta::default(),
            elided: e.is_some(),
        });
    }
    Ok((prog, runners))
}

impl PrPathRunner {
    /// Start a packet with metadata `md`: a fresh state, `md` in the
    /// package's slots, then `extra` (called with the state's `u64` slots and
    /// the indexes of the target's extra slots, in the order given at load:
    /// values written must fit their fields), then the per-packet part. False when the
    /// packet is dropped (`md.drop` or `exit`); otherwise the `md` it left
    /// is kept for [`PrPathRunner::run_pr`], and the `pr` header is valid.
    #[inline]
    pub fn begin(
        &mut self,
        prog: &mut Program,
        st: &mut PacketState,
        md: PrMeta,
        extra: impl FnOnce(&mut [u64], &[usize]),
        target: &mut dyn TargetPrims,
    ) -> bool {
        st.reset();
        let s = self.pkt;
        let n = &mut st.n;
        n[s.pr_type] = md.pr_type;
        n[s.dst] = md.dst;
        n[s.prop_len] = md.prop_len;
        n[s.ingress_port] = md.ingress_port;
        n[s.egress_port] = md.egress_port;
        n[s.drop] = 0;
        extra(n, &self.pkt_extras);
        if let Some(b) = self.per_packet {
            let end = prog.run(st, b, target);
            if end == RunEnd::Exited || st.n[s.drop] != 0 {
                return false;
            }
        }
        let n = &st.n;
        self.md = PrMeta {
            pr_type: n[s.pr_type],
            dst: n[s.dst],
            prop_len: n[s.prop_len],
            ingress_port: n[s.ingress_port],
            egress_port: n[s.egress_port],
        };
        for h in self.headers.iter().flatten() {
            prog.set_header_valid(st, *h, true);
        }
        true
    }

    /// `md` as the per-packet part of the current packet left it.
    #[inline]
    pub fn packet_md(&self) -> PrMeta {
        self.md
    }

    /// Run the per-PR part for `pr`: `pr` and the packet's `md` (with
    /// `drop` cleared) into the part's slots, the target's extra slots
    /// written by `extra` (as in [`PrPathRunner::begin`]), then the part.
    #[inline]
    pub fn run_pr(
        &self,
        prog: &mut Program,
        st: &mut PacketState,
        pr: &PrRepr,
        extra: impl FnOnce(&mut [u64], &[usize]),
        target: &mut dyn TargetPrims,
    ) -> PrOutcome {
        let s = self.pr;
        let md = self.md;
        let n = &mut st.n;
        n[s.src] = u64::from(pr.src);
        n[s.tid] = u64::from(pr.tid);
        n[s.idx] = pr.idx;
        n[s.req_id] = u64::from(pr.req_id);
        n[s.pr_type] = md.pr_type;
        n[s.dst] = md.dst;
        n[s.prop_len] = md.prop_len;
        n[s.ingress_port] = md.ingress_port;
        n[s.egress_port] = md.egress_port;
        n[s.drop] = 0;
        extra(n, &self.extras);
        let end = prog.run(st, self.per_pr, target);
        let n = &st.n;
        PrOutcome {
            pr: PrRepr {
                src: n[s.src] as u32,
                tid: n[s.tid] as u16,
                idx: n[s.idx],
                req_id: n[s.req_id] as u32,
            },
            md: PrMeta {
                pr_type: n[s.pr_type],
                dst: n[s.dst],
                prop_len: n[s.prop_len],
                ingress_port: n[s.ingress_port],
                egress_port: n[s.egress_port],
            },
            dropped: end == RunEnd::Exited || n[s.drop] != 0,
        }
    }

    /// The values of the target's extra slots after the per-PR part ran
    /// (in the order given at load).
    #[inline]
    pub fn extra_value(&self, st: &PacketState, i: usize) -> u64 {
        self.extras.get(i).map_or(0, |x| st.n[*x])
    }

    /// The slots the per-PR part reads and writes (the target's primitives
    /// read `pr.idx` there).
    #[inline]
    pub fn pr_slots(&self) -> PrPathSlots {
        self.pr
    }

    /// Whether the per-PR part runs without its copy-in/copy-out.
    pub fn copies_elided(&self) -> bool {
        self.elided
    }
}
