// expect: E0430
// `==` of varbit fields over 128 bits is not expressible in the artifact
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; varbit<256> v; }
struct headers { h_t a; h_t b; }
struct metadata { bit<8> x; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a, 16); pkt.extract(hdr.b, 16); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.a.v == hdr.b.v) { meta.x = 1; }
    }
}
control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
