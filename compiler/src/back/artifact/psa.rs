//! The `PSA_Switch` package of an artifact: the six pipeline blocks, the
//! slots of PSA's standard metadata (found by field name in the bundled
//! `<psa.p4>` structs) and the storage the target carries between blocks.

use netsparse_externs::artifact::{self as a, ControlId, FieldId, ParserId};

use crate::ir;

use super::*;

impl Lower<'_> {
    /// The PSA package, or None when the metadata structs do not have
    /// `<psa.p4>`'s fields (the caller reports it).
    pub(super) fn psa_package(
        &self,
        main: &ir::MainPackage,
        pid: &dyn Fn(&str) -> Option<ParserId>,
        cid: &dyn Fn(&str) -> Option<ControlId>,
    ) -> Option<a::PsaSwitch> {
        let shared = |key: &str, pipe: usize| -> Option<usize> {
            main.shared
                .iter()
                .position(|s| s.key == key && s.pipe == pipe)
        };
        let field = |key: &str, pipe: usize, name: &str| -> Option<FieldId> {
            let k = shared(key, pipe)?;
            self.struct_field(&main.shared[k].ty, &self.shared[k], name)
        };
        let leaves = |key: &str, pipe: usize| -> Vec<FieldId> {
            let mut out = Vec::new();
            if let Some(k) = shared(key, pipe) {
                self.leaves(&self.shared[k], &mut out);
            }
            out
        };
        let bridge = |key: &str, from: usize, to: usize| a::PsaBridge {
            from: leaves(key, from),
            to: leaves(key, to),
        };
        let ipm = |n: &str| field("psa_ingress_parser_input_metadata_t", 0, n);
        let igi = |n: &str| field("psa_ingress_input_metadata_t", 0, n);
        let igo = |n: &str| field("psa_ingress_output_metadata_t", 0, n);
        let epm = |n: &str| field("psa_egress_parser_input_metadata_t", 1, n);
        let egi = |n: &str| field("psa_egress_input_metadata_t", 1, n);
        let ego = |n: &str| field("psa_egress_output_metadata_t", 1, n);
        let edm = |n: &str| field("psa_egress_deparser_input_metadata_t", 1, n);
        let metadata = a::PsaMetadata {
            ip_ingress_port: ipm("ingress_port")?,
            ip_packet_path: ipm("packet_path")?,
            ig_ingress_port: igi("ingress_port")?,
            ig_packet_path: igi("packet_path")?,
            ig_ingress_timestamp: igi("ingress_timestamp")?,
            ig_parser_error: igi("parser_error")?,
            ig_class_of_service: igo("class_of_service")?,
            ig_clone: igo("clone")?,
            ig_clone_session_id: igo("clone_session_id")?,
            ig_drop: igo("drop")?,
            ig_resubmit: igo("resubmit")?,
            ig_multicast_group: igo("multicast_group")?,
            ig_egress_port: igo("egress_port")?,
            ep_egress_port: epm("egress_port")?,
            ep_packet_path: epm("packet_path")?,
            eg_class_of_service: egi("class_of_service")?,
            eg_egress_port: egi("egress_port")?,
            eg_packet_path: egi("packet_path")?,
            eg_instance: egi("instance")?,
            eg_egress_timestamp: egi("egress_timestamp")?,
            eg_parser_error: egi("parser_error")?,
            eg_clone: ego("clone")?,
            eg_clone_session_id: ego("clone_session_id")?,
            eg_drop: ego("drop")?,
            ed_egress_port: edm("egress_port")?,
        };
        Some(a::PsaSwitch {
            ingress_parser: pid("ip")?,
            ingress: cid("ig")?,
            ingress_deparser: cid("id")?,
            egress_parser: pid("ep")?,
            egress: cid("eg")?,
            egress_deparser: cid("ed")?,
            metadata,
            normalized: bridge("NM", 0, 1),
            clone_i2e: bridge("CI2EM", 0, 1),
            recirculate: bridge("RECIRCM", 1, 0),
            resubmit_meta: leaves("RESUBM", 0),
            clone_e2e_meta: leaves("CE2EM", 1),
        })
    }
}
