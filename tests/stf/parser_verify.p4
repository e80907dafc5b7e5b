/* Parser: verify() failing sets parser_error (a program error); the packet
 * still reaches ingress (simple_switch), with the headers extracted so far. */
#include <core.p4>
#include <v1model.p4>

error { BadKind }
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> val; }
header more_t { bit<8> m; }
struct headers { eth_t eth; tag_t tag; more_t more; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.tag);
        verify(hdr.tag.kind != 0, error.BadKind);
        pkt.extract(hdr.more);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.BadKind) {
            hdr.tag.val = 0xEE;
        } else if (sm.parser_error == error.NoError) {
            hdr.tag.val = 0x00;
        } else {
            hdr.tag.val = 0x11;
        }
        if (!hdr.more.isValid()) {
            hdr.eth.type = 0xFFFF;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
