/* A compound assignment whose left side calls a function (a stack index
   with a side effect): the call runs once per assignment. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header c_t { bit<8> c; }
header e_t { bit<8> x; }
struct headers { eth_t eth; c_t h; e_t[4] s; }
struct metadata { }

bit<8> next_slot(inout bit<8> c) {
    bit<8> r = c;
    c = c + 1;
    return r;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.h);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.s[next_slot(hdr.h.c) & 3].x += 5;
        hdr.s[next_slot(hdr.h.c) & 3].x ^= 0xff;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
