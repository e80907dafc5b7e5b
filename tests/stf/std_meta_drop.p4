/* Dropping: mark_to_drop in ingress and in egress, egress_spec = 511, and a
 * packet that is not dropped. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (hdr.eth.type == 1) {
            mark_to_drop(sm);
        } else if (hdr.eth.type == 2) {
            sm.egress_spec = 511;
        } else if (hdr.eth.type == 4) {
            mark_to_drop(sm);
            sm.egress_spec = 3;   /* a later assignment undoes the drop */
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.eth.type == 3) {
            mark_to_drop(sm);
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
