/* Saturating arithmetic |+| and |-| on bit<8> and int<8>. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> a; bit<8> b; bit<8> uadd; bit<8> usub; int<8> sa; int<8> sb; int<8> sadd; int<8> ssub; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.uadd = hdr.r.a |+| hdr.r.b;
        hdr.r.usub = hdr.r.a |-| hdr.r.b;
        hdr.r.sadd = hdr.r.sa |+| hdr.r.sb;
        hdr.r.ssub = hdr.r.sa |-| hdr.r.sb;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
