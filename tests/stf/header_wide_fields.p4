/* Header fields over 128 bits (a bit<200> and an int<136>, held in 128-bit
   parts): extracted and emitted whole, copied with their header, moved
   through a header stack; the narrow fields after them keep their places
   and are computed on. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header big_t { bit<8> tag; bit<200> blob; int<136> s; bit<8> tail; }
struct headers { eth_t eth; big_t big; big_t copy; big_t[2] st; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.big);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.big.tag = hdr.big.tag ^ 0xff;
        hdr.big.tail = hdr.big.tail + 1;
        if (hdr.eth.type == 1) {
            hdr.copy = hdr.big;
        } else if (hdr.eth.type == 2) {
            hdr.st.push_front(1);
            hdr.st[0] = hdr.big;
            hdr.st[0].tail = 0x77;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
