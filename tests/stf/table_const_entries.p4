/* Tables: const entries (exact, masks, ranges, `_`, explicit priorities) and
 * a const default action. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> a; bit<8> b; bit<8> res; }
struct headers { eth_t eth; tag_t tag; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.tag); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.tag.res = v; }
    table exact_t {
        key = { hdr.tag.a: exact; }
        actions = { set; }
        const entries = {
            1: set(0x11);
            2: set(0x22);
        }
        const default_action = set(0xee);
    }
    table tern_t {
        key = { hdr.tag.a: ternary; hdr.tag.b: range; }
        actions = { set; NoAction; }
        const entries = {
            (0x10 &&& 0xF0, 0 .. 9): set(0x31);
            (0x12, _): set(0x32);
            (_, 100 .. 200): set(0x33);
        }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.tag.a < 0x10) {
            exact_t.apply();
        } else {
            tern_t.apply();
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
