/* A value over 128 bits as an item of a hash data list: the list is the
   concatenation of its items, so `{k}` (bit<200>) and `{k[199:100],
   k[99:0]}` hash the same 25 bytes (CRC-32 as zlib computes it). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<200> k; bit<32> h1; bit<32> h2; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hash(hdr.h.h1, HashAlgorithm.crc32, 32w0, { hdr.h.k }, 33w0x100000000);
        hash(hdr.h.h2, HashAlgorithm.crc32, 32w0, { hdr.h.k[199:100], hdr.h.k[99:0] },
             33w0x100000000);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
