/* Parser: select on a field's value, several cases to one state, default. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> val; }
struct headers { eth_t eth; tag_t tag; }
struct metadata { bit<8> path; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            0x1234: parse_tag;
            0x1235: parse_tag;
            0x0800: other;
            default: accept;
        }
    }
    state parse_tag { pkt.extract(hdr.tag); meta.path = 1; transition accept; }
    state other { meta.path = 2; transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.eth.dst = (bit<48>) meta.path;
        if (hdr.tag.isValid()) {
            hdr.tag.val = hdr.tag.kind + 1;
            sm.egress_spec = 1;
        } else {
            sm.egress_spec = 2;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.tag); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
