/* Lookahead of a struct of bit<N> fields, and a lookahead whose value is
 * discarded: the program peeks at the second byte through a struct, and
 * `lookahead<bit<32>>()` as a statement still rejects a packet shorter
 * than 4 bytes (PacketTooShort), as on BMv2. */
#include <core.p4>
#include <v1model.p4>

struct pair_t {
    bit<8> a;
    bit<8> b;
}

header h_t {
    bit<8> x;
    bit<8> y;
}

struct headers {
    h_t h;
}

struct metadata {
    bit<8> peek;
}

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        meta.peek = packet.lookahead<pair_t>().b;
        packet.lookahead<bit<32>>();
        packet.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
        } else {
            hdr.h.x = meta.peek;
            sm.egress_spec = 1;
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out packet, in headers hdr) { apply { packet.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
