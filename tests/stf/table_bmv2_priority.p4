/* BMv2's @priority(n) on const entries: the smallest n wins, and an entry
   without the annotation has its position (1, 2, ...) as n. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<16> k; bit<8> res; }
struct headers { eth_t eth; h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.res = v; }
    table t {
        key = { hdr.h.k : ternary; }
        actions = { set; NoAction; }
        const entries = {
            0x0001 &&& 0x000f : set(1) @priority(3);
            0x0101            : set(2);
            0x0101 &&& 0xff0f : set(3) @priority(1);
        }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
