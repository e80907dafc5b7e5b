// expect: E0328
// A table key that is not a field (or slice, index, isValid(), masked
// field) has no name for the control plane: it needs @name (E0328).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<32> a; bit<32> b; }
struct headers { h_t h; }
struct meta { }

parser P(packet_in pkt, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta m) { apply { } }
control I(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    action set(bit<9> p) { sm.egress_spec = p; }
    table named {
        key = { hdr.h.a + hdr.h.b : exact @name("sum"); hdr.h.a & 0xff : ternary; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    table unnamed {
        key = { hdr.h.a + hdr.h.b : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply { named.apply(); unnamed.apply(); }
}
control E(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
