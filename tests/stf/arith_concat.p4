/* Concatenation ++: widths add, the left operand is the high part. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> a; bit<4> b; bit<4> c; bit<16> abc; bit<32> aabc; bit<8> cb; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.abc = hdr.r.a ++ hdr.r.b ++ hdr.r.c;
        hdr.r.aabc = hdr.r.a ++ hdr.r.a ++ (hdr.r.c ++ hdr.r.b ++ 4w0x9 ++ 4w0xf);
        hdr.r.cb = hdr.r.c ++ hdr.r.b;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
