// expect: E0034
// v1model exists in versions 20180101 and 20200408 only; a program that
// asks for another one is refused by the bundled v1model.p4.
#define V1MODEL_VERSION 20240101
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
control I(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
