/* Tables: range keys (`lo->hi`) with priorities, and an exact key beside them. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header l4_t { bit<16> sport; bit<16> dport; bit<8> class; }
struct headers { eth_t eth; l4_t l4; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.l4); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action classify(bit<8> c) { hdr.l4.class = c; sm.egress_spec = 1; }
    table ports {
        key = { hdr.eth.type: exact; hdr.l4.dport: range; }
        actions = { classify; NoAction; }
        default_action = classify(0xff);
    }
    apply { ports.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
