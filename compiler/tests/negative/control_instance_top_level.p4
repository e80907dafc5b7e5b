// expect: E0103
// Controls and parsers are instantiated inside other controls and parsers
// or as package arguments, not at the top level.
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
control Inner(inout M m) { apply { m.x = 1; } }
Inner() inner;
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { inner.apply(m); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
