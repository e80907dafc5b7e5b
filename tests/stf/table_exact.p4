/* Tables: an exact-match table; action parameters; miss runs the default. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action forward(bit<9> port, bit<48> new_src) {
        sm.egress_spec = port;
        hdr.eth.src = new_src;
    }
    action tag(bit<16> t) { hdr.eth.type = t; sm.egress_spec = 7; }
    table dmac {
        key = { hdr.eth.dst: exact; }
        actions = { forward; tag; NoAction; }
        default_action = NoAction();
    }
    apply { dmac.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
