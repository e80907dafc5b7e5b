/* resubmit_preserving_field_list: the original packet (ingress changes
 * dropped) runs ingress again with instance_type 6; only metadata fields
 * in the field list survive. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> mark; bit<8> kept; bit<8> lost; bit<8> itype; }
struct headers { eth_t eth; r_t r; }
struct metadata { @field_list(1) bit<8> kept; bit<8> lost; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (sm.instance_type == 0) {
            meta.kept = 0x5a;
            meta.lost = 0xa5;
            hdr.r.mark = 0x77;
            resubmit_preserving_field_list(1);
        } else {
            hdr.r.kept = meta.kept;
            hdr.r.lost = meta.lost;
            hdr.r.itype = (bit<8>) sm.instance_type;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
