/* Slices, `++`, casts, conditional values and locals over 128 bits: reading
   and writing slices across the 128-bit part boundaries, concatenations
   wider than 256 bits, truncation, zero and sign extension, a wide value
   through a function and a stack element's wide field. Expected values were
   computed with arbitrary-precision integers. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<256> x; bit<64> y; bit<8> sel; }
header out_t {
    bit<64> s1; bit<64> s2; bit<320> c; bit<136> t; bit<272> z; int<272> e;
    bit<32> n; bit<300> v; bit<256> m; bit<256> f; bit<4> pad;
}
header st_t { bit<8> tag; bit<200> w; }
struct headers { in_t i; out_t o; st_t[2] st; }
struct metadata { }

bit<256> rotl(in bit<256> v, in bit<8> n) {
    return (v << n) | (v >> (9w256 - (bit<9>) n));
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        bit<256> x = hdr.i.x;
        hdr.o.s1 = x[191:128];
        hdr.o.s2 = hdr.i.x[159:96];
        hdr.o.c = x ++ hdr.i.y;
        hdr.o.t = (bit<136>) x;
        hdr.o.z = (bit<272>) x;
        hdr.o.e = (int<272>) (int<256>) x;
        hdr.o.n = (bit<32>) (x >> 100);
        bit<300> v = (bit<300>) hdr.i.y;
        v[299:236] = hdr.i.y;
        v[170:107] = ~hdr.i.y;
        hdr.o.v = v;
        hdr.o.m = hdr.i.sel[0:0] == 1 ? x : ~x;
        hdr.o.f = rotl(x, hdr.i.sel);
        hdr.st[1].setValid();
        hdr.st[1].tag = hdr.i.sel;
        hdr.st[(bit<1>) hdr.i.sel[1:1]].w = x[255:56] + (bit<200>) hdr.i.y;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
