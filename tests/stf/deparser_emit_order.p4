/* Deparser: headers are emitted in the deparser's order (not the parser's),
 * invalid headers are skipped, the unparsed payload follows. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header a_t { bit<8> a; }
header b_t { bit<16> b; }
header c_t { bit<8> c; }
struct headers { eth_t eth; a_t a; b_t b; c_t c; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.a);
        transition select(hdr.a.a) { 0xaa: with_b; default: accept; }
    }
    state with_b { pkt.extract(hdr.b); pkt.extract(hdr.c); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.c); pkt.emit(hdr.eth); pkt.emit(hdr.b); pkt.emit(hdr.a); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
