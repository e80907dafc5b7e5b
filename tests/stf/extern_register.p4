/* register: per-flow packet counts kept across packets (read, add, write),
 * written back into the packet; the control plane can preset a cell. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> flow; bit<32> count; bit<32> total; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) per_flow;
    register<bit<32>, bit<1>>(1) total;
    apply {
        bit<32> c;
        per_flow.read(c, (bit<32>) hdr.r.flow);
        c = c + 1;
        per_flow.write((bit<32>) hdr.r.flow, c);
        hdr.r.count = c;
        bit<32> t = total.read(0);
        total.write(0, t + 1);
        hdr.r.total = t + 1;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
