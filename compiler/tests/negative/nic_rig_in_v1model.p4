// expect: E0417
// RIG externs need the SmartNIC: not available to a v1model program
#include <core.p4>
#include <v1model.p4>
#include <netsparse.p4>

struct headers { }
struct meta_t { bit<64> idx; }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers hdr, inout meta_t meta) { apply { } }
control Ig(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (IdxFilterTest(meta.idx)) {
            mark_to_drop(sm);
        }
    }
}
control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
