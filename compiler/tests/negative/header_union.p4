// expect: E0111
// a stack of header unions is indexed with constants only
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; bit<32> c; bit<8> d; }
header a_t { bit<8> v; }
header b_t { bit<16> v; }
header_union u_t { a_t a; b_t b; }
struct headers { h_t h; u_t[2] us; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {

    apply {
        hdr.us[hdr.h.a].a.setValid();
    }
}

control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
