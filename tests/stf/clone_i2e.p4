/* clone(I2E): the copy is the packet as it arrived (ingress changes are not
 * in it), sent to the mirror session's port with instance_type 1; the
 * original continues with its ingress changes. */
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
    apply {
        sm.egress_spec = 1;
        hdr.r.mark = 0x11;
        if (hdr.eth.type == 0x0001) {
            clone(CloneType.I2E, 5);
        } else if (hdr.eth.type == 0x0002) {
            clone(CloneType.I2E, 9);   /* no such session: no copy */
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.r.itype = (bit<8>) sm.instance_type;
        hdr.r.eport = (bit<8>) sm.egress_port;
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
