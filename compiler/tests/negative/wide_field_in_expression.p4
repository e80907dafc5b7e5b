// expect: E0112
// a header field over 128 bits is extracted, emitted and copied whole, not computed on
#include <core.p4>
#include <v1model.p4>

header h_t { bit<256> addrs; bit<8> n; }
struct headers { h_t h; }
struct metadata { bit<8> x; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        meta.x = hdr.h.addrs[7:0];
    }
}

control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
