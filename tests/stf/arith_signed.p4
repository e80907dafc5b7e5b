/* Signed int<N>: wrap-around, negation, signed comparisons, widening
 * multiplication. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { int<8> a; int<8> b; int<8> sum; int<8> neg; bit<8> lt; bit<8> nonneg; int<8> min; int<16> wide; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.sum = hdr.r.a + hdr.r.b;
        hdr.r.neg = -hdr.r.a;
        hdr.r.lt = hdr.r.a < hdr.r.b ? 8w1 : 8w0;
        hdr.r.nonneg = hdr.r.a >= 0 ? 8w1 : 8w0;
        hdr.r.min = hdr.r.a < hdr.r.b ? hdr.r.a : hdr.r.b;
        hdr.r.wide = (int<16>) hdr.r.a * (int<16>) hdr.r.b;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
