/* Stage snapshots of header_unions (and a stack of them), a varbit field
   extracted with a length, header size methods, and function-like macros. */
#include <core.p4>
#include <v1model.p4>

#define OPT_BITS(n) ((bit<32>) (n) * 8)
#define FIELD(h, f) h.f ## _v
#define IS_V4(h) (h.type == 0x0800)

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header a_t { bit<16> x_v; }
header b_t { bit<32> y_v; }
header_union U { a_t a; b_t b; }
header opt_t { bit<8> len; varbit<64> data; }
struct headers { eth_t eth; U u; U[2] us; opt_t opt; }
struct metadata { bit<8> size; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(IS_V4(hdr.eth)) {
            true: get_a;
            false: get_b;
        }
    }
    state get_a { pkt.extract(hdr.u.a); transition get_opt; }
    state get_b { pkt.extract(hdr.us[1].b); transition get_opt; }
    state get_opt {
        pkt.extract(hdr.opt, OPT_BITS(pkt.lookahead<bit<8>>()));
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.u.isValid()) {
            hdr.u.b.setValid();
            FIELD(hdr.u.b, y) = 1;
        }
        hdr.us[0].a = hdr.u.a;
        meta.size = (bit<8>) hdr.opt.minSizeInBytes();
        opt_t o = hdr.opt;
        hdr.opt = o;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
