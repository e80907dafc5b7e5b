/* Tables on keys over 128 bits and actions with parameters over 128 bits:
   an exact key on a bit<200> header field, a ternary key on the `++` of a
   bit<160> field and a byte, a bit<160> action parameter stored into a
   header field and a bit<256> one computed on. The STF script gives wide
   values whole; the control plane splits them into the keys' parts. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<200> k; bit<160> m; bit<8> b; bit<256> acc; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_m(bit<160> v, bit<9> port) { hdr.h.m = v; sm.egress_spec = port; }
    action add_acc(bit<256> d) { hdr.h.acc = hdr.h.acc + d; sm.egress_spec = 3; }
    table exact_wide {
        key = { hdr.h.k : exact; }
        actions = { set_m; NoAction; }
        default_action = NoAction();
    }
    table ternary_wide {
        key = { hdr.h.m ++ hdr.h.b : ternary @name("mb"); }
        actions = { add_acc; NoAction; }
        default_action = add_acc(-1);
    }
    apply {
        sm.egress_spec = 1;
        exact_wide.apply();
        ternary_wide.apply();
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
