/* clone(E2E): at the end of egress the packet (with egress's changes) is
 * copied to the mirror session's port and runs egress again with
 * instance_type 2. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> mark; bit<8> itype; bit<8> eport; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 0) {
            clone(CloneType.E2E, 6);
            hdr.r.mark = 0x22;
        } else {
            hdr.r.mark = hdr.r.mark + 1;
        }
        hdr.r.itype = (bit<8>) sm.instance_type;
        hdr.r.eport = (bit<8>) sm.egress_port;
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
