// expect: E0126
// a 4104-bit concatenation (values may be up to 4096 bits)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; bit<32> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {

    apply {
        bit<4096> w = (bit<4096>) meta.z; meta.z = (bit<32>) (w ++ hdr.h.a);
    }
}

control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
