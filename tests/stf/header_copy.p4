/* Header assignment copies fields and validity; struct assignment too. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> x; bit<8> y; }
struct pair_t { bit<8> p; bit<8> q; }
struct headers { eth_t eth; h_t a; h_t b; h_t c; }
struct metadata { pair_t m1; pair_t m2; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.a);
        transition select(hdr.eth.type) { 0x0002: two; default: accept; }
    }
    state two { pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        meta.m1 = { hdr.a.y, hdr.a.x };
        meta.m2 = meta.m1;
        /* c <- b: c becomes valid exactly when b is */
        hdr.c = hdr.b;
        hdr.b = hdr.a;
        hdr.b.x = meta.m2.p;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
