/* setValid / setInvalid: a new header inserted and filled, one removed, the
 * ethertype rewritten to match. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header vlan_t { bit<16> tci; bit<16> type; }
struct headers { eth_t eth; vlan_t vlan; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x8100: parse_vlan; default: accept; }
    }
    state parse_vlan { pkt.extract(hdr.vlan); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.vlan.isValid()) {
            /* pop */
            hdr.eth.type = hdr.vlan.type;
            hdr.vlan.setInvalid();
        } else {
            /* push VLAN 5 */
            hdr.vlan.setValid();
            hdr.vlan.tci = 5;
            hdr.vlan.type = hdr.eth.type;
            hdr.eth.type = 0x8100;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
