/* Tables: ternary keys; among matching entries the highest priority wins. */
#include <core.p4>
#include <v1model.p4>

header data_t { bit<32> f1; bit<32> f2; bit<16> h1; bit<8> b1; bit<8> b2; }
struct headers { data_t data; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.data); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action setb1(bit<8> val, bit<9> port) { hdr.data.b1 = val; sm.egress_spec = port; }
    action noop() { }
    table test1 {
        key = { hdr.data.f1: ternary; hdr.data.b2: ternary; }
        actions = { setb1; noop; }
        default_action = noop();
    }
    apply { test1.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
