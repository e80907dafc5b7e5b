/* Compound assignments (P4_16 1.2.4): `a op= b` is `a = a op b` for
   + - * & | ^ << >> |+| |-|, on bit<8>, int<8> (arithmetic >>=) and a slice. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header r_t {
    bit<8> a; bit<8> b;
    bit<8> add; bit<8> sub; bit<8> mul; bit<8> and_; bit<8> or_; bit<8> xor_;
    bit<8> shl; bit<8> shr; bit<8> sadd; bit<8> ssub;
    int<8> sa; int<8> sshr; bit<8> sl;
}
struct headers { eth_t eth; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.r); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.add = hdr.r.a;  hdr.r.add += hdr.r.b;
        hdr.r.sub = hdr.r.a;  hdr.r.sub -= hdr.r.b;
        hdr.r.mul = hdr.r.a;  hdr.r.mul *= hdr.r.b;
        hdr.r.and_ = hdr.r.a; hdr.r.and_ &= hdr.r.b;
        hdr.r.or_ = hdr.r.a;  hdr.r.or_ |= hdr.r.b;
        hdr.r.xor_ = hdr.r.a; hdr.r.xor_ ^= hdr.r.b;
        hdr.r.shl = hdr.r.a;  hdr.r.shl <<= 3;
        hdr.r.shr = hdr.r.a;  hdr.r.shr >>= 2;
        hdr.r.sadd = hdr.r.a; hdr.r.sadd |+|= hdr.r.b;
        hdr.r.ssub = hdr.r.a; hdr.r.ssub |-|= hdr.r.b;
        hdr.r.sshr = hdr.r.sa; hdr.r.sshr >>= 1;
        hdr.r.sl[3:0] += 4w1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
