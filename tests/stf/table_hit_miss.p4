/* Controls: `apply().hit` and `apply().miss` in conditions. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> hit1; bit<8> miss2; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a() { }
    table t1 { key = { hdr.eth.dst: exact; } actions = { a; NoAction; } default_action = NoAction(); }
    table t2 { key = { hdr.eth.src: exact; } actions = { a; NoAction; } default_action = a(); }
    apply {
        sm.egress_spec = 2;
        if (t1.apply().hit) {
            hdr.r.hit1 = 1;
        } else {
            hdr.r.hit1 = 0;
        }
        if (t2.apply().miss) {
            hdr.r.miss2 = 1;
        } else {
            hdr.r.miss2 = 0;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
