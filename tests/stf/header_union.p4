/* header_union: at most one member valid. Extracting a member, setValid()
   on one, and copying a valid header into one invalidate the others; copying
   an invalid header invalidates only that member; isValid() on the union is
   true when a member is; emit writes the valid member. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header info_t { bit<8> any; bit<8> op; }
header a_t { bit<16> x; }
header b_t { bit<32> y; }
header_union U { a_t a; b_t b; }
struct headers { eth_t eth; info_t info; U u; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.info);
        transition select(hdr.eth.type) {
            0x0800: get_a;
            0x86dd: get_b;
            default: accept;
        }
    }
    state get_a { pkt.extract(hdr.u.a); transition accept; }
    state get_b { pkt.extract(hdr.u.b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        a_t t;
        if (hdr.info.op == 1) {
            hdr.u.b.setValid();
            hdr.u.b.y = 0x01020304;
        } else if (hdr.info.op == 2) {
            t.setValid();
            t.x = 0xabcd;
            hdr.u.a = t;
        } else if (hdr.info.op == 3) {
            hdr.u.a = t;
        } else if (hdr.info.op == 4) {
            hdr.u.b.setInvalid();
        }
        hdr.info.any = hdr.u.isValid() ? 8w1 : 8w0;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
