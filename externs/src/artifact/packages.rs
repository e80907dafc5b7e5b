//! How a program's blocks are wired into a target ([`Package`]): v1model's
//! `V1Switch` and its standard metadata, the NetSparse switch's ingress,
//! middle and egress pipes with their PR slots, and the NetSparse NIC's
//! paths.

use serde::{Deserialize, Serialize};

use super::*;

/// How the program's blocks are wired into the target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "package")]
pub enum Package {
    /// `V1Switch(parser, verifyChecksum, ingress, egress, computeChecksum, deparser) main;`
    V1Switch(V1Switch),
    /// `NetSparseSwitch(...) main;` (see `netsparse.p4`).
    NetSparseSwitch(NetSparseSwitch),
    /// `NetSparseNic(host_to_net, net_to_host) main;` (see `netsparse.p4`).
    NetSparseNic(NetSparseNic),
    /// `SpinNic(header_handler, payload_handler, completion_handler) main;` (see `spin.p4`).
    SpinNic(SpinNic),
    /// `PSA_Switch(...) main;` (see `psa.p4`).
    Psa(PsaSwitch),
}

/// The v1model package.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct V1Switch {
    /// The parser.
    pub parser: ParserId,
    /// `verifyChecksum` control.
    pub verify_checksum: ControlId,
    /// Ingress control.
    pub ingress: ControlId,
    /// Egress control.
    pub egress: ControlId,
    /// `computeChecksum` control.
    pub compute_checksum: ControlId,
    /// Deparser control.
    pub deparser: ControlId,
    /// Slots of `standard_metadata_t`.
    pub standard_metadata: StandardMetadata,
    /// Slots of the user metadata struct (zeroed for every new packet; kept
    /// or reset by resubmit/recirculate/clone according to field lists).
    pub user_metadata: Vec<FieldId>,
}

/// The slots of v1model's `standard_metadata_t` that targets read or write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandardMetadata {
    /// `ingress_port` (9 bits).
    pub ingress_port: FieldId,
    /// `egress_spec` (9 bits): set by ingress; 511 drops.
    pub egress_spec: FieldId,
    /// `egress_port` (9 bits): read-only in egress.
    pub egress_port: FieldId,
    /// `instance_type` (32 bits).
    pub instance_type: FieldId,
    /// `packet_length` (32 bits).
    pub packet_length: FieldId,
    /// `enq_timestamp` (32 bits, microseconds).
    pub enq_timestamp: FieldId,
    /// `enq_qdepth` (19 bits).
    pub enq_qdepth: FieldId,
    /// `deq_timedelta` (32 bits).
    pub deq_timedelta: FieldId,
    /// `deq_qdepth` (19 bits).
    pub deq_qdepth: FieldId,
    /// `ingress_global_timestamp` (48 bits, microseconds).
    pub ingress_global_timestamp: FieldId,
    /// `egress_global_timestamp` (48 bits, microseconds).
    pub egress_global_timestamp: FieldId,
    /// `mcast_grp` (16 bits).
    pub mcast_grp: FieldId,
    /// `egress_rid` (16 bits).
    pub egress_rid: FieldId,
    /// `checksum_error` (1 bit).
    pub checksum_error: FieldId,
    /// `parser_error` (error).
    pub parser_error: FieldId,
    /// `priority` (3 bits).
    pub priority: FieldId,
}

/// The NetSparse switch package (§6.2.1): per-pipe ingress and egress
/// parser/control/deparser, and the middle-pipe control that runs between the
/// two crossbars around the Deconcatenator, the Property Cache and the
/// Concatenator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetSparseSwitch {
    /// Ingress parser (every ingress pipe runs the same program).
    pub ingress_parser: ParserId,
    /// Ingress control: chooses `egress_spec` (routing).
    pub ingress: ControlId,
    /// Ingress deparser.
    pub ingress_deparser: ControlId,
    /// The middle pipe.
    pub middle: MiddlePipe,
    /// Egress parser.
    pub egress_parser: ParserId,
    /// Egress control.
    pub egress: ControlId,
    /// Egress deparser.
    pub egress_deparser: ControlId,
    /// Slots of the ingress pipe's `ns_switch_md_t`.
    pub ingress_metadata: NsSwitchMetadata,
    /// Slots of the egress pipe's `ns_switch_md_t`.
    pub egress_metadata: NsSwitchMetadata,
    /// Ingress user-metadata slots (zeroed per packet).
    pub ingress_user_metadata: Vec<FieldId>,
    /// Egress user-metadata slots (zeroed per packet).
    pub egress_user_metadata: Vec<FieldId>,
}

/// The NetSparse switch's per-pipe standard metadata (`ns_switch_md_t`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NsSwitchMetadata {
    /// Port the packet arrived on.
    pub ingress_port: FieldId,
    /// Port chosen by the ingress control.
    pub egress_spec: FieldId,
    /// Port the packet leaves on (egress pipe).
    pub egress_port: FieldId,
    /// Set to drop the packet.
    pub drop: FieldId,
    /// Frame length in bytes.
    pub packet_length: FieldId,
    /// Parser error.
    pub parser_error: FieldId,
}

/// A per-PR path (§5, §6.1–6.2): the part of a control that runs once per
/// NetSparse packet before `Deconcatenate`, and the part that runs once per
/// PR between `Deconcatenate` and `Concatenate`. The switch's middle pipes
/// and both paths of the SmartNIC are this one shape, lowered once by the
/// compiler and run by one runner in the engine:
///
/// ```text
/// apply {
///     ...per_packet...          // once per packet (empty on the NIC's host_to_net)
///     Deconcatenate(pr, md);    // for each PR of a NetSparse packet:
///     ...per_pr...              //   once per PR (per idx on host_to_net)
///     Concatenate(pr, md);      //   enqueue into the CQ of (md.pr_type, md.dst) unless md.drop
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrPath {
    /// Control name, for logs.
    pub name: String,
    /// Statements before `Deconcatenate`.
    pub per_packet: Vec<Stmt>,
    /// Statements between `Deconcatenate` and `Concatenate`.
    pub per_pr: Vec<Stmt>,
    /// The current PR's `ns_pr_h` fields.
    pub pr: PrSlots,
    /// The current PR's `ns_pr_md_t` fields.
    pub pr_meta: PrMetaSlots,
}

/// The middle pipe of a NetSparse switch: its [`PrPath`] and the pipe's
/// Property Cache (`Lookup`/`Insert` in the per-PR part).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MiddlePipe {
    /// The per-packet and per-PR parts (serialized in place).
    #[serde(flatten)]
    pub path: PrPath,
    /// The pipe's Property Cache instance, if the program uses one.
    pub cache: Option<ExternId>,
}

/// Slots holding the PR-layer header of the PR being processed (Figure 6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrSlots {
    /// Source node (32 bits).
    pub src: FieldId,
    /// Source RIG unit id (16 bits).
    pub tid: FieldId,
    /// Property idx (64 bits).
    pub idx: FieldId,
    /// Request id (32 bits).
    pub req_id: FieldId,
}

/// Slots of the per-PR metadata (`ns_pr_md_t`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrMetaSlots {
    /// PR type (16 bits): 1 read, 2 response.
    pub pr_type: FieldId,
    /// Destination node (32 bits).
    pub dst: FieldId,
    /// Property length in bytes (32 bits).
    pub prop_len: FieldId,
    /// Port the PR's packet arrived on.
    pub ingress_port: FieldId,
    /// Port the PR will leave on (initially the packet's `egress_spec`).
    pub egress_port: FieldId,
    /// Set to drop this PR.
    pub drop: FieldId,
}

/// The NetSparse SmartNIC package (§4–5, Figures 3–5): the two per-PR paths
/// the firmware runs around its RIG units, Idx Filter, Pending PR Tables,
/// host-memory DMA, Concatenator and Deconcatenator.
///
/// ```text
/// host_to_net(pr, md, rig) {        // per idx read by a client RIG unit:
///     ...per_pr...                  //   everything before Concatenate
///     Concatenate(pr, md);          //   queue the read PR unless md.drop
/// }
/// net_to_host(pr, md, rig) {
///     ...per_packet...              // once per received NetSparse packet
///     Deconcatenate(pr, md);        // for each PR:
///     ...per_pr...                  //   once per PR
///     Concatenate(pr, md);          //   queue it unless md.drop
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetSparseNic {
    /// Host to network (client RIG units). `per_packet` is always empty.
    pub host_to_net: NicPath,
    /// Network to host (receive path and server RIG units).
    pub net_to_host: NicPath,
}

/// One path of the NetSparse SmartNIC: its [`PrPath`] and the RIG
/// metadata the firmware fills around it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NicPath {
    /// The per-packet (net_to_host only) and per-PR parts (serialized in place).
    #[serde(flatten)]
    pub path: PrPath,
    /// The `ns_rig_md_t` fields.
    pub rig: RigSlots,
}

/// Slots of the RIG metadata (`ns_rig_md_t`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RigSlots {
    /// This NIC's node id (32 bits), set by the firmware.
    pub node: FieldId,
    /// The RIG unit running the control (16 bits), set by the firmware.
    pub unit: FieldId,
    /// Host-to-net: the RIG command being served (32 bits), set by the firmware.
    pub command: FieldId,
    /// Host-to-net: what the control decided for the idx (8 bits, `NS_ISSUED`...).
    pub outcome: FieldId,
}
