// expect: E0430
// a struct field of a header stack element reached through a run-time index is not expressible
#include <core.p4>
#include <v1model.p4>

struct s_t { bit<8> x; bit<8> y; }
header h_t { bit<8> n; s_t s; }
struct headers { h_t[2] hs; }
struct metadata { bit<8> x; bit<1> i; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.hs.next); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        meta.x = hdr.hs[meta.i].s.y;
    }
}
control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
