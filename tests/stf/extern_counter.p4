/* counter: an indexed packets-and-bytes counter, checked with check_counter. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(4, CounterType.packets_and_bytes) by_type;
    counter(512, CounterType.packets) by_port;
    apply {
        by_type.count((bit<32>) hdr.eth.type);
        by_port.count((bit<32>) sm.ingress_port);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
