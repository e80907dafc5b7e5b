/* Controls: switch on `apply().action_run`, with a default case and a case
 * for the default action. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> which; bit<8> arg; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a1(bit<8> x) { hdr.r.arg = x; }
    action a2() { hdr.r.arg = 0x22; }
    action a3() { hdr.r.arg = 0x33; }
    action dflt() { hdr.r.arg = 0xdd; }
    table t {
        key = { hdr.eth.type: exact; }
        actions = { a1; a2; a3; dflt; }
        default_action = dflt();
    }
    apply {
        sm.egress_spec = 1;
        switch (t.apply().action_run) {
            a1: { hdr.r.which = 1; }
            a2: { hdr.r.which = 2; }
            dflt: { hdr.r.which = 0xd; }
            default: { hdr.r.which = 0xf; }
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
