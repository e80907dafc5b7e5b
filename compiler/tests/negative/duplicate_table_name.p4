// expect: E0102
// An absolute @name on a table of a control instantiated twice gives both
// instances' tables one control-plane name.
#include <v1model.p4>
struct H { }
struct M { bit<8> x; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pk, in H h) { apply { } }
control Counted(inout M m) {
    action set(bit<8> v) { m.x = v; }
    @name(".shared")
    table t {
        key = { m.x : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); }
}
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    Counted() first;
    Counted() second;
    apply {
        first.apply(m);
        second.apply(m);
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
