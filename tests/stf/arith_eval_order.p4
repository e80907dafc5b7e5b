/* Operands are evaluated left to right: in `x + f(x)` the left x is read
   before the call writes it. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> x; bit<8> sum; bit<8> diff; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

bit<8> bump(inout bit<8> v) {
    v = v + 10;
    return 1;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> v = hdr.r.x;
        hdr.r.sum = v + bump(v);
        hdr.r.diff = v - bump(v);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
