// PSA Register initial values on the psa_switch target: every cell of
// `Register(size, initial_value)` starts at the initial value (a register
// without one at 0); the ingress reads cell `idx`, writes the value plus
// one back and reports what it read.
#include <core.p4>
#include <psa.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

// "123456789" as a (16), b (16), c (32), d (8).
header r_t {
    bit<8>  idx;
    bit<16> with_init;
    bit<16> without;
}

struct headers_t {
    ethernet_t eth;
    r_t        r;
}

struct empty_t {}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout empty_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.r);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout empty_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    Register<bit<16>, bit<8>>(4, 16w0x1234) with_init;
    Register<bit<16>, bit<8>>(4) without;

    apply {
        hdr.r.with_init = with_init.read(hdr.r.idx);
        with_init.write(hdr.r.idx, hdr.r.with_init + 1);
        hdr.r.without = without.read(hdr.r.idx);
        without.write(hdr.r.idx, hdr.r.without + 1);
        send_to_port(ostd, (PortId_t) 32w1);
    }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta,
                            out empty_t resubmit_meta, out empty_t normalized_meta,
                            inout headers_t hdr, in empty_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.r);
    }
}
parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout empty_t meta,
                        in psa_egress_parser_input_metadata_t istd,
                        in empty_t normalized_meta, in empty_t clone_i2e_meta,
                        in empty_t clone_e2e_meta) {
    state start {
        transition accept;
    }
}

control EgressImpl(inout headers_t hdr, inout empty_t meta,
                   in psa_egress_input_metadata_t istd,
                   inout psa_egress_output_metadata_t ostd) {
    apply { }
}

control EgressDeparserImpl(packet_out pkt, out empty_t clone_e2e_meta,
                           out empty_t recirculate_meta, inout headers_t hdr,
                           in empty_t meta, in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    apply { }
}

IngressPipeline(IngressParserImpl(), IngressImpl(), IngressDeparserImpl()) ip;
EgressPipeline(EgressParserImpl(), EgressImpl(), EgressDeparserImpl()) ep;
PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
