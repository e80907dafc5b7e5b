/* hash(): crc16, crc32, identity and csum16 over field lists, and
 * base + H % max. Values computed as BMv2 does (calculations.cpp). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<16> crc16; bit<32> crc32; bit<16> ident; bit<16> csum; bit<16> modded; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(hdr.r.crc16, HashAlgorithm.crc16, 16w0, { hdr.eth.src, hdr.eth.type }, 32w65536);
        hash(hdr.r.crc32, HashAlgorithm.crc32, 32w0, { hdr.eth.src, hdr.eth.type }, 64w4294967296);
        hash(hdr.r.ident, HashAlgorithm.identity, 16w0, { hdr.eth.src }, 32w65536);
        hash(hdr.r.csum, HashAlgorithm.csum16, 16w0, { hdr.eth.dst }, 32w65536);
        hash(hdr.r.modded, HashAlgorithm.crc16, 16w100, { hdr.eth.src, hdr.eth.type }, 32w50);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
