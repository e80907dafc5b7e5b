/* Parser: an explicit `transition reject` ends parsing; on v1model (as in
 * simple_switch) the packet still goes through ingress with the headers
 * extracted before the reject, the rest being payload. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> val; }
header more_t { bit<16> m; }
struct headers { eth_t eth; tag_t tag; more_t more; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            0: reject;
            default: parse_more;
        }
    }
    state parse_more { pkt.extract(hdr.more); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.tag.val = hdr.more.isValid() ? 8w0x4d : 8w0x52;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
