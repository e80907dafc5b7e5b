/* Controls: nested if / else if / else chains and a function with returns. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> x; bit<8> y; bit<8> res; bit<8> f; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

bit<8> classify(in bit<8> v) {
    if (v < 10) {
        return 1;
    } else if (v < 100) {
        if (v % 2 == 0) {
            return 2;
        }
        return 3;
    }
    return 4;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.r.x > 5) {
            if (hdr.r.y > 5) {
                hdr.r.res = 0x11;
            } else if (hdr.r.y == 5) {
                hdr.r.res = 0x10;
            } else {
                hdr.r.res = 0x1f;
            }
        } else {
            if (hdr.r.y > 5) {
                hdr.r.res = 0x01;
            } else {
                hdr.r.res = 0x00;
            }
        }
        hdr.r.f = classify(hdr.r.x);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
