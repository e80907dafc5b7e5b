/* A varbit<320> (IPv4 options up to 40 bytes, held in 128-bit parts) read
   at its extracted length by verify_checksum, update_checksum and hash:
   lengths of 0, 128, 160 and 320 bits. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<16> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
    varbit<320> options;
}
struct headers { eth_t eth; ipv4_t ipv4; }
struct metadata { bit<16> h; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x800: ipv4; default: accept; }
    }
    state ipv4 {
        bit<9> ihl = (bit<9>) pkt.lookahead<bit<8>>()[3:0];
        pkt.extract(hdr.ipv4, (bit<32>) (ihl * 32 - 160));
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src, hdr.ipv4.dst,
              hdr.ipv4.options },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.checksum_error == 1) {
            hdr.eth.type = 0xbad0;
        }
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        hash(meta.h, HashAlgorithm.csum16, 16w0, { hdr.ipv4.options }, 17w65536);
        hdr.eth.src = (bit<48>) meta.h;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src, hdr.ipv4.dst,
              hdr.ipv4.options },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
