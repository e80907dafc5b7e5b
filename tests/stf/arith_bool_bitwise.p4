/* Bitwise & | ^ ~ and boolean && || ! == != with ?: . */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> a; bit<8> b; bit<8> and_; bit<8> or_; bit<8> xor_; bit<8> not_; bit<8> logic; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.and_ = hdr.r.a & hdr.r.b;
        hdr.r.or_ = hdr.r.a | hdr.r.b;
        hdr.r.xor_ = hdr.r.a ^ hdr.r.b;
        hdr.r.not_ = ~hdr.r.a;
        bool x = hdr.r.a > hdr.r.b;
        bool y = hdr.r.a == 0;
        hdr.r.logic = ((x && !y) ? 8w1 : 8w0) | ((x || y) ? 8w2 : 8w0)
                    | ((x == y) ? 8w4 : 8w0) | (!x ? 8w8 : 8w0) | ((x != y) ? 8w16 : 8w0);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
