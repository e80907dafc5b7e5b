/* p4c compatibility: `==` / `!=` on headers (both invalid, or both valid with
 * equal fields), structs and header stacks. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header v_t { bit<8> x; bit<8> y; }
header out_t { bit<8> bits; }
struct pair_t { bit<8> p; bit<8> q; }
struct headers { eth_t eth; v_t a; v_t b; out_t o; }
struct metadata { pair_t m1; pair_t m2; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.a);
        transition select(hdr.eth.type) {
            0x0001: with_b;
            default: accept;
        }
    }
    state with_b { pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    v_t none1;
    v_t none2;
    v_t[2] s1;
    v_t[2] s2;
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        hdr.o.bits = 0;
        if (hdr.a == hdr.b) { hdr.o.bits = hdr.o.bits | 1; }
        if (hdr.a != hdr.b) { hdr.o.bits = hdr.o.bits | 2; }
        if (none1 == none2) { hdr.o.bits = hdr.o.bits | 4; }
        meta.m1 = { hdr.a.x, 1 };
        meta.m2 = { hdr.a.y, 1 };
        if (meta.m1 == meta.m2) { hdr.o.bits = hdr.o.bits | 8; }
        s1[0] = hdr.a;
        s2[0] = hdr.b;
        if (s1 == s2) { hdr.o.bits = hdr.o.bits | 16; }
    }
}
control egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.o); }
}
V1Switch(P(), VC(), ingress(), egress(), CC(), D()) main;
