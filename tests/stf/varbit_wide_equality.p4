/* `==` and `!=` between varbit<256> fields (over 128 bits): equal when the
   extracted lengths and the values are equal. Each varbit's length in bytes
   is the byte before it. */
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> n; }
header v_t { varbit<256> v; }
header res_t { bit<8> r; }
struct headers { len_t la; v_t a; len_t lb; v_t b; res_t res; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.la);
        pkt.extract(hdr.a, (bit<32>) hdr.la.n * 8);
        pkt.extract(hdr.lb);
        pkt.extract(hdr.b, (bit<32>) hdr.lb.n * 8);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.r = (hdr.a.v == hdr.b.v ? 8w1 : 8w0) | (hdr.a.v != hdr.b.v ? 8w2 : 8w0);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
