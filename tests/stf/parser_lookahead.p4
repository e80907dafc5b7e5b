/* Parser: lookahead of bits and of a header, without consuming input. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header a_t { bit<8> marker; bit<8> x; }
header b_t { bit<16> y; }
header peek_t { bit<4> hi; bit<4> lo; }
struct headers { eth_t eth; a_t a; b_t b; }
struct metadata { bit<8> seen_lo; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        peek_t p = pkt.lookahead<peek_t>();
        meta.seen_lo = (bit<8>) p.lo;
        transition select(pkt.lookahead<bit<8>>()) {
            0xAA: parse_a;
            default: parse_b;
        }
    }
    state parse_a { pkt.extract(hdr.a); transition accept; }
    state parse_b { pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.a.isValid()) {
            hdr.a.x = meta.seen_lo;
            sm.egress_spec = 1;
        } else if (hdr.b.isValid()) {
            hdr.b.y = hdr.b.y + (bit<16>) meta.seen_lo;
            sm.egress_spec = 2;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
