/* meter: a two-rate three-colour packet meter; rates from meter_set_rates
 * (tokens per microsecond, bursts in tokens); an unconfigured cell marks
 * everything green. Packet n of the STF arrives at n microseconds. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t { bit<8> idx; bit<8> color; }
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) m;
    apply {
        bit<2> c;
        m.execute_meter((bit<32>) hdr.r.idx, c);
        hdr.r.color = (bit<8>) c;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
