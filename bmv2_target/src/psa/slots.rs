//! What the PSA switch resolves once, at load: the six blocks' ids, the
//! slots of PSA's standard metadata and the slot pairs of the storage
//! carried between blocks.

use netsparse_externs::artifact::{Artifact, FieldId, PsaBridge, PsaMetadata, PsaSwitch};

use netsparse_engine::code::NSlot;
use netsparse_engine::state::Loc;
use netsparse_engine::LoadError;

/// Parser and control ids of the package.
#[derive(Clone, Copy, Debug)]
pub(super) struct Blocks {
    pub ingress_parser: u32,
    pub ingress: u32,
    pub ingress_deparser: u32,
    pub egress_parser: u32,
    pub egress: u32,
    pub egress_deparser: u32,
}

impl Blocks {
    pub(super) fn resolve(
        p: &PsaSwitch,
        a: &Artifact,
        place: &dyn Fn() -> String,
    ) -> Result<Blocks, LoadError> {
        let parsers = a.parsers.len();
        let controls = a.controls.len();
        for (what, ok) in [
            ("ingress parser", p.ingress_parser.index() < parsers),
            ("egress parser", p.egress_parser.index() < parsers),
            ("ingress", p.ingress.index() < controls),
            ("ingress deparser", p.ingress_deparser.index() < controls),
            ("egress", p.egress.index() < controls),
            ("egress deparser", p.egress_deparser.index() < controls),
        ] {
            if !ok {
                return Err(LoadError::Invalid {
                    detail: format!("{what} id out of range"),
                    place: place(),
                });
            }
        }
        Ok(Blocks {
            ingress_parser: p.ingress_parser.0,
            ingress: p.ingress.0,
            ingress_deparser: p.ingress_deparser.0,
            egress_parser: p.egress_parser.0,
            egress: p.egress.0,
            egress_deparser: p.egress_deparser.0,
        })
    }
}

/// The PSA standard metadata slots (names as in [`PsaMetadata`]).
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)]
pub(super) struct Md {
    pub ip_ingress_port: NSlot,
    pub ip_packet_path: NSlot,
    pub ig_ingress_port: NSlot,
    pub ig_packet_path: NSlot,
    pub ig_ingress_timestamp: NSlot,
    pub ig_parser_error: NSlot,
    pub ig_class_of_service: NSlot,
    pub ig_clone: NSlot,
    pub ig_clone_session_id: NSlot,
    pub ig_drop: NSlot,
    pub ig_resubmit: NSlot,
    pub ig_multicast_group: NSlot,
    pub ig_egress_port: NSlot,
    pub ep_egress_port: NSlot,
    pub ep_packet_path: NSlot,
    pub eg_class_of_service: NSlot,
    pub eg_egress_port: NSlot,
    pub eg_packet_path: NSlot,
    pub eg_instance: NSlot,
    pub eg_egress_timestamp: NSlot,
    pub eg_parser_error: NSlot,
    pub eg_clone: NSlot,
    pub eg_clone_session_id: NSlot,
    pub eg_drop: NSlot,
    pub ed_egress_port: NSlot,
}

type LocOf<'a> = dyn Fn(FieldId) -> Result<(Loc, u16), LoadError> + 'a;

fn nslot(what: &str, f: FieldId, loc: &LocOf<'_>) -> Result<NSlot, LoadError> {
    match loc(f)? {
        (Loc::N(idx), width) => Ok(NSlot {
            idx,
            mask: if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            },
        }),
        (Loc::W(_), width) => Err(LoadError::Unsupported {
            what: format!("PSA metadata {what} of {width} bits (at most 64)"),
            place: "PSA standard metadata".into(),
        }),
    }
}

impl Md {
    pub(super) fn resolve(m: &PsaMetadata, loc: &LocOf<'_>) -> Result<Md, LoadError> {
        let s = |f: FieldId, what: &str| nslot(what, f, loc);
        Ok(Md {
            ip_ingress_port: s(m.ip_ingress_port, "ingress_port")?,
            ip_packet_path: s(m.ip_packet_path, "packet_path")?,
            ig_ingress_port: s(m.ig_ingress_port, "ingress_port")?,
            ig_packet_path: s(m.ig_packet_path, "packet_path")?,
            ig_ingress_timestamp: s(m.ig_ingress_timestamp, "ingress_timestamp")?,
            ig_parser_error: s(m.ig_parser_error, "parser_error")?,
            ig_class_of_service: s(m.ig_class_of_service, "class_of_service")?,
            ig_clone: s(m.ig_clone, "clone")?,
            ig_clone_session_id: s(m.ig_clone_session_id, "clone_session_id")?,
            ig_drop: s(m.ig_drop, "drop")?,
            ig_resubmit: s(m.ig_resubmit, "resubmit")?,
            ig_multicast_group: s(m.ig_multicast_group, "multicast_group")?,
            ig_egress_port: s(m.ig_egress_port, "egress_port")?,
            ep_egress_port: s(m.ep_egress_port, "egress_port")?,
            ep_packet_path: s(m.ep_packet_path, "packet_path")?,
            eg_class_of_service: s(m.eg_class_of_service, "class_of_service")?,
            eg_egress_port: s(m.eg_egress_port, "egress_port")?,
            eg_packet_path: s(m.eg_packet_path, "packet_path")?,
            eg_instance: s(m.eg_instance, "instance")?,
            eg_egress_timestamp: s(m.eg_egress_timestamp, "egress_timestamp")?,
            eg_parser_error: s(m.eg_parser_error, "parser_error")?,
            eg_clone: s(m.eg_clone, "clone")?,
            eg_clone_session_id: s(m.eg_clone_session_id, "clone_session_id")?,
            eg_drop: s(m.eg_drop, "drop")?,
            ed_egress_port: s(m.ed_egress_port, "egress_port")?,
        })
    }
}

/// Which ingress-to-egress storage a new egress packet receives.
#[derive(Clone, Copy, Debug)]
pub(super) enum Which {
    /// `NM` (unicast and multicast packets).
    Normalized,
    /// `CI2EM` (ingress-to-egress clones).
    CloneI2e,
}

/// (written, read) slot pairs of one bridged storage.
#[derive(Debug, Default)]
pub(super) struct Pairs(Box<[(Loc, Loc)]>);

impl Pairs {
    pub(super) fn resolve(
        b: &PsaBridge,
        loc: &LocOf<'_>,
        place: &dyn Fn() -> String,
    ) -> Result<Pairs, LoadError> {
        if b.from.len() != b.to.len() {
            return Err(LoadError::Invalid {
                detail: "PSA bridge lists of different lengths".into(),
                place: place(),
            });
        }
        let mut v = Vec::with_capacity(b.from.len());
        for (f, t) in b.from.iter().zip(&b.to) {
            let (fl, fw) = loc(*f)?;
            let (tl, tw) = loc(*t)?;
            if fw != tw {
                return Err(LoadError::Invalid {
                    detail: format!("PSA bridge slots {} and {} differ in width", f.0, t.0),
                    place: place(),
                });
            }
            v.push((fl, tl));
        }
        Ok(Pairs(v.into_boxed_slice()))
    }

    /// The pairs.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, (Loc, Loc)> {
        self.0.iter()
    }
}
