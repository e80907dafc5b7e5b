// expect: E0430
// a key over 128 bits may be exact or ternary, not lpm
struct metadata { bit<8> z; }
#include <core.p4>
#include <v1model.p4>

header h_t { bit<256> x; bit<256> y; bit<8> n; }
struct headers { h_t h; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a() { }
    table t { key = { hdr.h.x : lpm; } actions = { a; } }
    apply { t.apply(); }
}
control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
