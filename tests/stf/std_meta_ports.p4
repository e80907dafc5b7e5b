/* standard_metadata: ingress_port, egress_spec, egress_port (in egress),
 * packet_length (ingress: bytes received; egress: the same), instance_type 0. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<16> in_port; bit<16> out_port; bit<32> len_in; bit<32> len_eg; bit<32> itype; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.r.in_port = (bit<16>) sm.ingress_port;
        hdr.r.len_in = sm.packet_length;
        sm.egress_spec = sm.ingress_port + 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.r.out_port = (bit<16>) sm.egress_port;
        hdr.r.len_eg = sm.packet_length;
        hdr.r.itype = sm.instance_type;
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
