//! The PSA package of an artifact (`PSA_Switch` from `<psa.p4>`): the six
//! blocks of the ingress and egress pipelines, the slots of PSA's standard
//! metadata the target reads and writes, and the storage the target
//! carries between blocks (normalized, clone and resubmit/recirculate
//! metadata).

use serde::{Deserialize, Serialize};

use super::{ControlId, FieldId, ParserId};

/// `PSA_Switch(IngressPipeline(ip, ig, id), PacketReplicationEngine(),
/// EgressPipeline(ep, eg, ed), BufferingQueueingEngine()) main;`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PsaSwitch {
    /// IngressParser.
    pub ingress_parser: ParserId,
    /// Ingress control.
    pub ingress: ControlId,
    /// IngressDeparser control.
    pub ingress_deparser: ControlId,
    /// EgressParser.
    pub egress_parser: ParserId,
    /// Egress control.
    pub egress: ControlId,
    /// EgressDeparser control.
    pub egress_deparser: ControlId,
    /// PSA standard metadata.
    pub metadata: PsaMetadata,
    /// `NM`: written by the ingress deparser, read by the egress parser of
    /// normal (unicast and multicast) packets.
    pub normalized: PsaBridge,
    /// `CI2EM`: written by the ingress deparser, read by the egress parser
    /// of ingress-to-egress clones.
    pub clone_i2e: PsaBridge,
    /// `RECIRCM`: written by the egress deparser, read by the ingress parser
    /// of recirculated packets.
    pub recirculate: PsaBridge,
    /// `RESUBM` (one storage: ingress deparser out, ingress parser in);
    /// kept for resubmitted packets, zero otherwise.
    pub resubmit_meta: Vec<FieldId>,
    /// `CE2EM` (one storage: egress deparser out, egress parser in); kept
    /// for egress-to-egress clones, zero otherwise.
    pub clone_e2e_meta: Vec<FieldId>,
}

/// Storage written in one pipe and read in the other: slot `from[i]` is
/// copied to `to[i]` (the two lists have the same length and widths).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PsaBridge {
    /// Slots written.
    pub from: Vec<FieldId>,
    /// Slots read.
    pub to: Vec<FieldId>,
}

/// The slots of PSA's standard metadata structs (`ip_` ingress parser
/// input, `ig_` ingress input and output, `ep_` egress parser input, `eg_`
/// egress input and output, `ed_` egress deparser input).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct PsaMetadata {
    pub ip_ingress_port: FieldId,
    pub ip_packet_path: FieldId,
    pub ig_ingress_port: FieldId,
    pub ig_packet_path: FieldId,
    pub ig_ingress_timestamp: FieldId,
    pub ig_parser_error: FieldId,
    pub ig_class_of_service: FieldId,
    pub ig_clone: FieldId,
    pub ig_clone_session_id: FieldId,
    pub ig_drop: FieldId,
    pub ig_resubmit: FieldId,
    pub ig_multicast_group: FieldId,
    pub ig_egress_port: FieldId,
    pub ep_egress_port: FieldId,
    pub ep_packet_path: FieldId,
    pub eg_class_of_service: FieldId,
    pub eg_egress_port: FieldId,
    pub eg_packet_path: FieldId,
    pub eg_instance: FieldId,
    pub eg_egress_timestamp: FieldId,
    pub eg_parser_error: FieldId,
    pub eg_clone: FieldId,
    pub eg_clone_session_id: FieldId,
    pub eg_drop: FieldId,
    pub ed_egress_port: FieldId,
}

impl PsaMetadata {
    /// Every slot with its name (for validation and messages).
    pub fn all(&self) -> [(&'static str, FieldId); 25] {
        [
            ("ingress parser istd.ingress_port", self.ip_ingress_port),
            ("ingress parser istd.packet_path", self.ip_packet_path),
            ("ingress istd.ingress_port", self.ig_ingress_port),
            ("ingress istd.packet_path", self.ig_packet_path),
            ("ingress istd.ingress_timestamp", self.ig_ingress_timestamp),
            ("ingress istd.parser_error", self.ig_parser_error),
            ("ingress ostd.class_of_service", self.ig_class_of_service),
            ("ingress ostd.clone", self.ig_clone),
            ("ingress ostd.clone_session_id", self.ig_clone_session_id),
            ("ingress ostd.drop", self.ig_drop),
            ("ingress ostd.resubmit", self.ig_resubmit),
            ("ingress ostd.multicast_group", self.ig_multicast_group),
            ("ingress ostd.egress_port", self.ig_egress_port),
            ("egress parser istd.egress_port", self.ep_egress_port),
            ("egress parser istd.packet_path", self.ep_packet_path),
            ("egress istd.class_of_service", self.eg_class_of_service),
            ("egress istd.egress_port", self.eg_egress_port),
            ("egress istd.packet_path", self.eg_packet_path),
            ("egress istd.instance", self.eg_instance),
            ("egress istd.egress_timestamp", self.eg_egress_timestamp),
            ("egress istd.parser_error", self.eg_parser_error),
            ("egress ostd.clone", self.eg_clone),
            ("egress ostd.clone_session_id", self.eg_clone_session_id),
            ("egress ostd.drop", self.eg_drop),
            ("egress deparser edstd.egress_port", self.ed_egress_port),
        ]
    }
}

/// `PSA_PacketPath_t` values (declaration order of `<psa.p4>`).
pub mod packet_path {
    /// Arrived on a port.
    pub const NORMAL: u64 = 0;
    /// From ingress, to one port.
    pub const NORMAL_UNICAST: u64 = 1;
    /// A copy of a multicast group.
    pub const NORMAL_MULTICAST: u64 = 2;
    /// An ingress-to-egress clone.
    pub const CLONE_I2E: u64 = 3;
    /// An egress-to-egress clone.
    pub const CLONE_E2E: u64 = 4;
    /// Resubmitted.
    pub const RESUBMIT: u64 = 5;
    /// Recirculated.
    pub const RECIRCULATE: u64 = 6;
}
