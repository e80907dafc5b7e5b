/* A stack of header_unions indexed with constants: each element keeps the
   one-valid-member rule; emitting the stack writes each element's valid
   member in order. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header op_t { bit<8> op; }
header a_t { bit<16> x; }
header b_t { bit<32> y; }
header_union U { a_t a; b_t b; }
struct headers { eth_t eth; op_t op; U[2] us; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.op);
        transition select(hdr.eth.type) {
            0x0800: first_a;
            default: first_b;
        }
    }
    state first_a { pkt.extract(hdr.us[0].a); transition second; }
    state first_b { pkt.extract(hdr.us[0].b); transition second; }
    state second { pkt.extract(hdr.us[1].b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.op.op == 1) {
            hdr.us[1].a.setValid();
            hdr.us[1].a.x = 0x7777;
        }
        if (hdr.us[0].isValid() && hdr.us[1].b.isValid()) {
            hdr.op.op = hdr.op.op | 0x10;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
