/* p4c compatibility: `exit` inside an action still copies out the action's
 * `inout`/`out` arguments (p4c/BMv2 semantics), then ends the control. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> sel; bit<8> a; bit<8> b; bit<8> c; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action bump_and_exit(inout bit<8> v, out bit<8> w) {
        v = v + 1;
        w = 0x77;
        if (hdr.r.sel == 1) {
            exit;
        }
        v = v + 0x10;
    }
    action outer(inout bit<8> v) {
        bit<8> scratch;
        bump_and_exit(v, scratch);
        hdr.r.c = scratch;
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.r.sel == 2) {
            outer(hdr.r.a);
        } else {
            bump_and_exit(hdr.r.a, hdr.r.b);
        }
        hdr.r.c = 0xcc;
    }
}
control egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), ingress(), egress(), CC(), D()) main;
