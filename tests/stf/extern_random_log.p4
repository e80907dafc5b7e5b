/* random(): values within [lo, hi] (the switch is seeded, so runs repeat;
 * only the range is asserted); log_msg and digest run without changing the
 * packet. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> v; bit<8> in_range; bit<16> w; bit<8> w_ok; }
struct headers { eth_t eth; r_t r; }
struct learn_t { bit<48> src; bit<9> port; }
struct metadata { learn_t learn; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        random(hdr.r.v, 8w5, 8w10);
        hdr.r.in_range = (hdr.r.v >= 5 && hdr.r.v <= 10) ? 8w1 : 8w0;
        random(hdr.r.w, 16w1000, 16w1003);
        hdr.r.w_ok = (hdr.r.w >= 1000 && hdr.r.w <= 1003) ? 8w1 : 8w0;
        log_msg("packet from port {} with type {}", { sm.ingress_port, hdr.eth.type });
        log_msg("no arguments");
        meta.learn.src = hdr.eth.src;
        meta.learn.port = sm.ingress_port;
        digest(1, meta.learn);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
