/* Arithmetic, bitwise operators, shifts and comparisons on bit<200> and
   int<200> values (over 128 bits: computed in 128-bit parts). `op` picks the
   operation; `flags` holds the comparisons of a and b. Expected values were
   computed with arbitrary-precision integers modulo 2^200. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> op; bit<200> a; bit<200> b; }
header out_t { bit<200> r; bit<8> flags; bit<8> sflags; }
struct headers { in_t i; out_t o; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        bit<200> a = hdr.i.a;
        bit<200> b = hdr.i.b;
        int<200> sa = (int<200>) a;
        int<200> sb = (int<200>) b;
        bit<200> r = 0;
        if (hdr.i.op == 0) { r = a + b; }
        else if (hdr.i.op == 1) { r = a - b; }
        else if (hdr.i.op == 2) { r = (a & b) | (~a ^ b); }
        else if (hdr.i.op == 3) { r = a * b; }
        else if (hdr.i.op == 4) { r = a << b[7:0]; }
        else if (hdr.i.op == 5) { r = a >> b[7:0]; }
        else if (hdr.i.op == 6) { r = (a << 70) + (a >> 131); }
        else if (hdr.i.op == 7) { r = (bit<200>) (sa >> b[7:0]); }
        else if (hdr.i.op == 8) { r = a |+| b; }
        else if (hdr.i.op == 9) { r = a |-| b; }
        else if (hdr.i.op == 10) { r = (bit<200>) (sa |+| sb); }
        else if (hdr.i.op == 11) { r = (bit<200>) (sa |-| sb); }
        else if (hdr.i.op == 12) { r = -a + 1; }
        else if (hdr.i.op == 13) { r = a + 200w0x10000000000000000000000000000000f; }
        else if (hdr.i.op == 14) { r = a; r = r * 3 - b; r = r << 1; }
        else if (hdr.i.op == 15) { r = a << b; }
        hdr.o.r = r;
        hdr.o.flags = (a == b ? 8w1 : 0) | (a != b ? 8w2 : 0) | (a < b ? 8w4 : 0)
                    | (a <= b ? 8w8 : 0) | (a > b ? 8w16 : 0) | (a >= b ? 8w32 : 0)
                    | (a == 0 ? 8w64 : 0) | (b != 200w1 ? 8w128 : 0);
        hdr.o.sflags = (sa < sb ? 8w1 : 0) | (sa <= sb ? 8w2 : 0) | (sa > sb ? 8w4 : 0)
                     | (sa >= sb ? 8w8 : 0) | (sa < 0 ? 8w16 : 0) | (sa == -1 ? 8w32 : 0);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
