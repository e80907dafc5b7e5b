/* Controls: switch on a value, with grouped labels, default and a label
 * with an empty block. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> v; bit<8> res; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.res = 0xaa;
        switch (hdr.r.v) {
            1: { hdr.r.res = 0x01; }
            2:
            3: { hdr.r.res = 0x23; }
            4: { }
            default: { hdr.r.res = 0xdf; }
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
