/* recirculate_preserving_field_list: after egress the deparsed packet (with
 * egress's changes) enters ingress again with instance_type 4, keeping the
 * field-list metadata. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> mark; bit<8> kept; bit<8> itype; bit<8> passes; }
struct headers { eth_t eth; r_t r; }
struct metadata { @field_list(1) bit<8> kept; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.r.passes = hdr.r.passes + 1;
        if (sm.instance_type == 4) {
            hdr.r.kept = meta.kept;
            hdr.r.itype = (bit<8>) sm.instance_type;
            sm.egress_spec = 3;
        } else {
            sm.egress_spec = 1;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        /* instance_type is 0 (NORMAL) again in egress after a recirculated
         * packet's ingress (simple_switch sets it for every unicast), so
         * the packet itself tells the passes apart. */
        if (hdr.r.kept == 0 && hdr.eth.type == 0x0800) {
            hdr.r.mark = 0x33;
            meta.kept = 0x66;
            recirculate_preserving_field_list(1);
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
