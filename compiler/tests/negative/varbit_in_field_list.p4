// expect: E0430
// a header with a varbit field cannot be hashed whole (its length varies)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; varbit<32> v; }
struct headers { h_t h; }
struct metadata { bit<16> x; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h, 16); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(meta.x, HashAlgorithm.crc16, 16w0, { hdr.h }, 16w1024);
    }
}

control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
