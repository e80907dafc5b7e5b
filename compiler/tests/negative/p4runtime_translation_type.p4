// expect: E0113
// @p4runtime_translation's controller-side type is `string` or `bit<W>`.
#include <core.p4>
#include <v1model.p4>

@p4runtime_translation("example.org/Port_t", bit<32>)
type bit<9> Port_t;
@p4runtime_translation("example.org/Flag_t", bool)
type bit<1> Flag_t;

header h_t { Port_t p; Flag_t f; bit<6> pad; }
struct headers { h_t h; }
struct meta { }

parser P(packet_in pkt, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta m) { apply { } }
control I(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply { } }
control E(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
