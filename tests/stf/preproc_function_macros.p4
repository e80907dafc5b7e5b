/* Function-like macros: nested uses, arguments over two lines, `#`
   (a @name string) and `##` (a pasted field name). */
#include <core.p4>
#include <v1model.p4>

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define FIELD(h, n) h.f ## n
#define STR(x) #x
#define IS_NORMAL(sm) (sm.instance_type == 0)

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> f1; bit<8> f2; bit<8> f3; bit<8> max; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @name(STR(set_max)) action set_max() {
        FIELD(hdr.r, 3) = FIELD(hdr.r, 1) + 1;
        hdr.r.max = MAX(FIELD(hdr.r, 1),
                        MAX(hdr.r.f2, FIELD(hdr.r, 3)));
    }
    apply {
        sm.egress_spec = 1;
        if (IS_NORMAL(sm)) {
            set_max();
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
