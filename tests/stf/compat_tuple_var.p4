/* Tuple variables: a `tuple<...>` local initialised from a list whose
 * elements call a function with a side effect (both calls happen, left to
 * right), copied to another tuple, and read back through the identity
 * hash of the copy. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  x;
    bit<16> y;
}

struct headers {
    h_t h;
}

struct metadata { }

bit<8> bump(inout bit<8> s) {
    s = s + 1;
    return s;
}

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        tuple<bit<8>, bit<8>> t = { bump(hdr.h.x), bump(hdr.h.x) };
        tuple<bit<8>, bit<8>> u = t;
        hash(hdr.h.y, HashAlgorithm.identity, 16w0, u, 32w65536);
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out packet, in headers hdr) { apply { packet.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
