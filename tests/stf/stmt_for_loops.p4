/* Loops (P4_16 1.2.4): C-style `for` with a run-time bound, no condition,
   `break`, `continue`, several initialisers and updates, nesting, `return`
   from a loop in an action; `for`-`in` over a run-time range (including
   one ending at the type's maximum), a header stack and a list. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header in_t { bit<8> n; bit<8> lo; bit<8> hi; }
header st_t { bit<8> v; }
header out_t {
    bit<8> sum_c; bit<8> brk; bit<8> cont; bit<8> range_sum; bit<8> top;
    bit<8> stack_cnt; bit<8> stack_sum; bit<8> list_sum; bit<8> mask;
    bit<8> nested; bit<8> ret;
}
struct headers { eth_t eth; in_t i; st_t[3] s; out_t o; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.i);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.o);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action early(in bit<8> n) {
        hdr.o.ret = 0;
        for (bit<8> i = 0; i < 10; i += 1) {
            if (i == n) {
                return;
            }
            hdr.o.ret += 1;
        }
    }
    apply {
        sm.egress_spec = 1;
        for (bit<8> i = 1; i <= hdr.i.n; i = i + 1) {
            hdr.o.sum_c = hdr.o.sum_c + i;
        }
        for (bit<8> i = 0; ; i += 1) {
            if (i == hdr.i.n) {
                break;
            }
            hdr.o.brk += 2;
        }
        for (bit<8> i = 0; i < hdr.i.n; i += 1) {
            if ((i & 1) == 0)
                continue;
            hdr.o.cont += 1;
        }
        for (bit<8> k in hdr.i.lo .. hdr.i.hi) {
            hdr.o.range_sum += k;
        }
        for (bit<8> k in 250 .. 255) {
            hdr.o.top += 1;
        }
        for (st_t e in hdr.s) {
            if (e.isValid()) {
                hdr.o.stack_cnt += 1;
                hdr.o.stack_sum += e.v;
            }
        }
        for (bit<8> v in {hdr.i.lo, hdr.i.hi, 8w3}) {
            hdr.o.list_sum += v;
        }
        bit<8> m = 0;
        for (bit<8> i = 0, bit<8> b = 1; i < 4; i += 1, b <<= 1) {
            m = m | b;
        }
        hdr.o.mask = m;
        for (bit<8> i = 0; i < hdr.i.n; i += 1) {
            for (bit<8> j = 0; j < i; j += 1) {
                hdr.o.nested += 1;
            }
        }
        early(hdr.i.n);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
