// expect: E0303
// `switch` belongs in a control's apply block, not in an action.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> t; }
struct headers { h_t h; }
struct meta { }

parser P(packet_in pkt, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta m) { apply { } }
control I(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    action pick() {
        switch (hdr.h.t) {
            1: { sm.egress_spec = 1; }
            default: { sm.egress_spec = 2; }
        }
    }
    apply { pick(); }
}
control E(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
