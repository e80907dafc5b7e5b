// expect: E0323
// Only entries that can overlap (ternary, range, optional keys) have priorities.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> t; bit<8> e; }
struct headers { h_t h; }
struct meta { }

parser P(packet_in pkt, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta m) { apply { } }
control I(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    action fwd(bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { hdr.h.t : exact; hdr.h.e : exact; }
        actions = { fwd; NoAction; }
        default_action = NoAction();
        entries = {
            priority = 10 : (0x1111, 1) : fwd(1);
                            (0x2222, 2) : fwd(2);
        }
    }
    apply { t.apply(); }
}
control E(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
