/* Stage snapshots of compound assignments and loops: a C-style loop with
   break and continue, for-in over a range, a stack and a list. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; bit<8> acc; }
header e_t { bit<8> v; }
struct headers { h_t h; e_t[2] s; }
struct metadata { bit<8> x; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        for (bit<8> i = 0; i < hdr.h.n; i += 1) {
            if (i == 7) { break; }
            if (i == 2) { continue; }
            hdr.h.acc |+|= i;
        }
        for (bit<8> k in 1 .. hdr.h.n) { meta.x <<= 1; }
        for (e_t e in hdr.s) { if (e.isValid()) { hdr.h.acc ^= e.v; } }
        for (bit<8> v in {8w1, hdr.h.n}) { hdr.h.acc -= v; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
