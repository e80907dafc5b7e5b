// expect: E0110
// a varbit field is extracted, emitted and copied with its header, not read
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; varbit<32> v; }
struct headers { h_t h; }
struct metadata { bit<32> x; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h, 16); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        meta.x = hdr.h.v;
    }
}

control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
