/* varbit: extract with a length in bits (HeaderTooShort over the maximum,
   ParserInvalidArgument when not whole bytes, PacketTooShort past the end),
   emit of the extracted length, a header copy carrying the length, and
   minSizeInBytes() / maxSizeInBits(). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header len_t { bit<8> n; }
header opt_t { bit<8> kind; varbit<32> data; }
header tail_t { bit<8> t; }
struct headers { eth_t eth; len_t len; opt_t opt; opt_t copy; tail_t tail; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.len);
        pkt.extract(hdr.opt, (bit<32>) hdr.len.n * 4);
        pkt.extract(hdr.tail);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) {
            hdr.eth.type = 1;
        } else if (sm.parser_error == error.HeaderTooShort) {
            hdr.eth.type = 4;
        } else if (sm.parser_error == error.ParserInvalidArgument) {
            hdr.eth.type = 6;
        }
        // Sizes are constants: the minimum leaves the varbit empty.
        hdr.eth.dst[15:8] = (bit<8>) hdr.opt.minSizeInBytes();
        hdr.eth.dst[7:0] = (bit<8>) hdr.opt.maxSizeInBits();
        opt_t c = hdr.opt;
        hdr.copy = c;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
