/* A header field of struct type (nested): its fields lie on the wire in
   order; members are read, written and matched as table keys, the whole
   struct is copied out of and into a header (an initializer), and the
   header's size counts the struct's bits. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct pair_t { bit<4> a; bit<4> b; }
struct row_t { bit<8> e; pair_t p; bit<16> t; }
header rh_t { bit<8> k; row_t row; bit<8> z; }
struct headers { eth_t eth; rh_t r; rh_t r2; }
struct metadata { row_t saved; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.r);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.r.row.e : exact; hdr.r.row.p.b : exact; }
        actions = { set; NoAction; }
        default_action = NoAction;
        const entries = { (1, 2) : set(2); }
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        meta.saved = hdr.r.row;
        hdr.r.row.p.a = hdr.r.row.p.b;
        hdr.r.z = (bit<8>) hdr.r.minSizeInBytes();
        if (hdr.r.k == 0xcc) {
            hdr.r2 = { 0xdd, meta.saved, 0xee };
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
