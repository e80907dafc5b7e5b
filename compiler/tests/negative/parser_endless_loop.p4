// expect: E0335
// Two states hand over to each other unconditionally and consume nothing:
// the parser can never finish. (A loop that extracts, or leaves through a
// select, is fine: see the accepted loop in `loop_ok` below.)
#include <v1model.p4>
header h_t { bit<8> f; }
struct H { h_t[4] s; }
struct M { bit<8> x; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { transition loop_ok; }
    state loop_ok {
        pk.extract(h.s.next);
        transition select(h.s.last.f) {
            0: spin;
            default: loop_ok;
        }
    }
    state spin { m.x = m.x + 1; transition wait; }
    state wait { transition spin; }
}
control VC(inout H h, inout M m) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
