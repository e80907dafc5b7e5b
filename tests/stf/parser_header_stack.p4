/* Parser: a header stack filled with `.next` in a loop, `.last` in select,
 * StackOutOfBounds on overflow; controls index the stack and emit it. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header label_t { bit<7> val; bit<1> bos; }
struct headers { eth_t eth; label_t[3] labels; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition parse_label;
    }
    state parse_label {
        pkt.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) {
            0: parse_label;
            1: accept;
        }
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.StackOutOfBounds) {
            hdr.eth.type = 0xDEAD;
        }
        if (hdr.labels[1].isValid()) {
            /* swap the first two labels' values */
            bit<7> t = hdr.labels[0].val;
            hdr.labels[0].val = hdr.labels[1].val;
            hdr.labels[1].val = t;
        }
        if (!hdr.labels[2].isValid()) {
            hdr.eth.src = 0x1;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.labels); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
