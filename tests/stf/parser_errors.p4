/* Parser: a select with no match (NoMatch) and an extract past the end of
 * the packet (PacketTooShort); the unparsed bytes remain the payload. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> val; }
header big_t { bit<64> x; }
struct headers { eth_t eth; tag_t tag; big_t big; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            1: accept;
            2: parse_big;
        }
    }
    state parse_big { pkt.extract(hdr.big); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (sm.parser_error == error.NoMatch) {
            hdr.tag.val = 1;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.tag.val = 2;
        } else if (sm.parser_error == error.NoError) {
            hdr.tag.val = 3;
        }
        if (hdr.big.isValid()) {
            hdr.big.x = hdr.big.x + 1;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
