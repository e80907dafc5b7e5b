/* `pkt.lookahead<h_t>()` of a header with a bit<200> field (read in its
   128-bit parts) into a header, then the same bytes extracted; the copy is
   emitted after them with its wide field incremented. */
#include <core.p4>
#include <v1model.p4>

header big_t { bit<8> a; bit<200> w; int<136> s; }
struct headers { big_t peek; big_t real; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        hdr.peek = pkt.lookahead<big_t>();
        pkt.extract(hdr.real);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.peek.w = hdr.peek.w + 1;
        hdr.peek.s = hdr.peek.s - 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.real); pkt.emit(hdr.peek); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
