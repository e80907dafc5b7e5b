/* Tables: several keys, an isValid() key (`h.$valid$` in p4c's STF files), a
 * key renamed with @name, a header-stack element key (`s$0.v`). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header opt_t { bit<8> v; }
struct headers { eth_t eth; opt_t opt; opt_t[2] s; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.s.next);
        transition select(hdr.eth.type) { 0x0001: parse_opt; default: accept; }
    }
    state parse_opt { pkt.extract(hdr.opt); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = {
            hdr.opt.isValid(): exact;
            hdr.eth.dst: exact @name("dmac");
            hdr.s[0].v: ternary;
        }
        actions = { fwd; }
        default_action = fwd(9);
    }
    apply { t.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.s); pkt.emit(hdr.opt); } }
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
