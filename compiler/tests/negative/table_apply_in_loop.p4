// expect: E0303
// a table applied inside a loop could be applied more than once per packet
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; bit<32> c; bit<8> d; }
struct headers { h_t h; h_t[2] s; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a() { meta.x = 1; }
    table t { key = { hdr.h.a : exact; } actions = { a; } }
    apply {
        for (bit<8> i = 0; i < hdr.h.a; i += 1) { t.apply(); }
    }
}

control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
