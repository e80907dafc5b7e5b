/* Multicast: mcast_grp selects a group of (port, rid) replicas; each copy
 * runs egress with instance_type 5 and its egress_rid; an unconfigured
 * group drops the packet. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<16> rid; bit<8> eport; bit<8> itype; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 9;
        sm.mcast_grp = hdr.eth.type;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.r.rid = sm.egress_rid;
        hdr.r.eport = (bit<8>) sm.egress_port;
        hdr.r.itype = (bit<8>) sm.instance_type;
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
