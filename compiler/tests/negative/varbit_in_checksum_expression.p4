// expect: E0110
// a checksum's data list may hold a varbit field itself, not an expression over it
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; bit<16> c; varbit<32> v; }
struct headers { h_t h; }
struct metadata { bit<16> x; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h, 16); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(true, { hdr.h.n, (bit<32>) hdr.h.v }, hdr.h.c, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), CC(), D()) main;
