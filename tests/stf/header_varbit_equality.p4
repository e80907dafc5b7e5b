/* Equality of varbit fields (same length and value) and of headers that
   have one. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header n_t { bit<8> n1; bit<8> n2; bit<8> eq_field; bit<8> eq_hdr; }
header opt_t { bit<8> kind; varbit<16> data; }
struct headers { eth_t eth; n_t n; opt_t a; opt_t b; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.n);
        pkt.extract(hdr.a, (bit<32>) hdr.n.n1 * 8);
        pkt.extract(hdr.b, (bit<32>) hdr.n.n2 * 8);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.n.eq_field = hdr.a.data == hdr.b.data ? 8w1 : 8w0;
        hdr.n.eq_hdr = hdr.a == hdr.b ? 8w1 : 8w0;
        if (hdr.a.data != hdr.b.data) {
            hdr.n.eq_field = hdr.n.eq_field | 0x10;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
