/* Controls: `exit` (ends the control, from an action or from apply; egress
 * still runs) and `return` (ends only the current control/action). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> a; bit<8> b; bit<8> c; bit<8> e; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Sub(inout r_t r) {
    apply {
        r.b = 0xbb;
        if (r.a == 2) {
            return;
        }
        r.b = 0xb2;
    }
}
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub() sub;
    action stop() { hdr.r.c = 0xcc; exit; }
    apply {
        sm.egress_spec = 1;
        sub.apply(hdr.r);
        if (hdr.r.a == 1) {
            stop();
        }
        if (hdr.r.a == 3) {
            exit;
        }
        hdr.r.c = 0x0c;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { hdr.r.e = 0xee; }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
