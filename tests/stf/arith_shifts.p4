/* Shifts: by a run-time amount (>= the width gives 0, or all sign bits for
 * int), by a constant, after widening; >> on int<N> is arithmetic. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> a; bit<8> n; int<8> s; bit<8> shl; bit<8> shr; int<8> sshr; bit<8> shl4; bit<16> big; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.shl = hdr.r.a << hdr.r.n;
        hdr.r.shr = hdr.r.a >> hdr.r.n;
        hdr.r.sshr = hdr.r.s >> hdr.r.n;
        hdr.r.shl4 = hdr.r.a << 4;
        hdr.r.big = ((bit<16>) hdr.r.a) << 8;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
