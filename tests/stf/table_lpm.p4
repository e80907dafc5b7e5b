/* Tables: longest-prefix match; the longest matching prefix wins. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ip_t { bit<32> src; bit<32> dst; }
struct headers { eth_t eth; ip_t ip; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.ip); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action route(bit<9> port) { sm.egress_spec = port; hdr.eth.type = (bit<16>) port; }
    action drop() { mark_to_drop(sm); }
    table routes {
        key = { hdr.ip.dst: lpm; }
        actions = { route; drop; }
        default_action = drop();
    }
    apply { routes.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
