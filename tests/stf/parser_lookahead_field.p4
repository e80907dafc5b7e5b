/* A field of a looked-ahead header, `pkt.lookahead<h_t>().f`, in a select
   and in the length of a varbit extract (as IPv4's ihl sizes its options). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header peek_t { bit<4> ver; bit<4> ihl; bit<8> rest; }
header ip_t { bit<4> ver; bit<4> ihl; bit<8> rest; varbit<32> opts; }
struct headers { eth_t eth; ip_t ip; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(pkt.lookahead<peek_t>().ihl) {
            0: accept;
            default: parse_ip;
        }
    }
    state parse_ip {
        pkt.extract(hdr.ip, (bit<32>) pkt.lookahead<peek_t>().ihl * 8);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.ip.isValid()) {
            hdr.eth.type = 1;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
