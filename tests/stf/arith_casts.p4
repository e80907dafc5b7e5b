/* Casts: truncation, zero extension, bit<N> <-> int<N> reinterpretation,
 * sign extension through int<M>, bool -> bit<1>. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<16> w; bit<8> narrow; bit<32> widen; int<8> s8; bit<16> sext; bit<8> from_bool; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.narrow = (bit<8>) hdr.r.w;
        hdr.r.widen = (bit<32>) hdr.r.w;
        hdr.r.s8 = (int<8>) hdr.r.narrow;
        hdr.r.sext = (bit<16>) ((int<16>) hdr.r.s8);
        hdr.r.from_bool = (bit<8>) ((bit<1>) (hdr.r.w > 0x100));
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
