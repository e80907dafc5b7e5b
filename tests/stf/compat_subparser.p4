/* p4c compatibility: sub-parsers. `Tag` is applied from two states (its
 * states are inlined at each site); it has in/out parameters, a local with an
 * initializer, its own select, and a reject path. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> val; }
header out_t { bit<8> n; bit<8> last; }
struct headers { eth_t eth; tag_t[3] tags; out_t o; }
struct metadata { bit<8> count; bit<8> last; }

parser Tag(packet_in pkt, inout headers hdr, in bit<8> limit, out bit<8> kind) {
    bit<8> seen = 1;
    state start {
        pkt.extract(hdr.tags.next);
        // `seen` is 1 only if the local initializer ran on entry.
        kind = hdr.tags.last.kind + seen - 1;
        transition select(hdr.tags.last.val > limit) {
            true: too_big;
            false: accept;
        }
    }
    state too_big {
        kind = 0xee + seen;
        transition reject;
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Tag() tag;
    bit<8> k;
    state start {
        pkt.extract(hdr.eth);
        meta.count = 0;
        tag.apply(pkt, hdr, 0x80, k);
        meta.count = meta.count + 1;
        meta.last = k;
        transition select(k) {
            1: more;
            default: accept;
        }
    }
    state more {
        tag.apply(pkt, hdr, 0x10, k);
        meta.count = meta.count + 1;
        meta.last = k;
        transition select(k) {
            1: more;
            default: accept;
        }
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        hdr.o.n = meta.count;
        hdr.o.last = meta.last;
        if (sm.parser_error != error.NoError) {
            hdr.o.n = 0xff;
        }
    }
}
control egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.tags); pkt.emit(hdr.o); }
}
V1Switch(P(), VC(), ingress(), egress(), CC(), D()) main;
