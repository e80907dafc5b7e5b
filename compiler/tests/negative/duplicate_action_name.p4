// expect: E0102
// Two different actions under one absolute @name: the control plane could
// not tell them apart.
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
    @name(".fwd") action to1() { sm.egress_spec = 1; }
    @name(".fwd") action to2() { sm.egress_spec = 2; }
    table t {
        key = { hdr.h.t : exact; }
        actions = { to1; to2; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); }
}
control E(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
