/* Parser: select with value &&& mask keysets and a tuple with `_`. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> val; }
struct headers { eth_t eth; tag_t tag; }
struct metadata { bit<8> path; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.tag);
        transition select(hdr.eth.type, hdr.tag.kind) {
            (0x8100 &&& 0xEFFF, _): vlan;      /* 0x8100 and 0x9100 */
            (0x0800 &&& 0xFF00, 0xF0 &&& 0xF0): high;
            (0x0800 &&& 0xFF00, _): low;
            default: accept;
        }
    }
    state vlan { meta.path = 1; transition accept; }
    state high { meta.path = 2; transition accept; }
    state low  { meta.path = 3; transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { hdr.tag.val = meta.path; sm.egress_spec = 1; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.tag); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
