/* Arithmetic on bit<N>: +, -, * wrap modulo 2^N; unary minus; widening first. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> a; bit<8> b; bit<8> sum; bit<8> diff; bit<8> prod; bit<16> wide; bit<8> neg; }
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
        hdr.r.diff = hdr.r.a - hdr.r.b;
        hdr.r.prod = hdr.r.a * hdr.r.b;
        hdr.r.wide = (bit<16>) hdr.r.a * (bit<16>) hdr.r.b;
        hdr.r.neg = -hdr.r.a;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
