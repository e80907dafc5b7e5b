// PSA Random and Digest on the psa_switch target. The ingress writes three
// draws into the frame: Random<bit<8>>(10, 20), a one-value Random<bit<16>>
// (1000, 1000) and a full-range Random<bit<32>>. The ingress deparser packs
// a digest (source address and ingress port) for frames of EtherType
// 0x0801. The draws are checked for range and determinism, and the digests
// for their fields, in bmv2_target/tests/psa_switch.rs.
#include <core.p4>
#include <psa.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

header r_t {
    bit<8>  r8;
    bit<16> r16;
    bit<32> r32;
}

struct headers_t {
    ethernet_t eth;
    r_t        r;
}

struct meta_t {
    bit<32> port;
}

struct learn_t {
    bit<48> src;
    bit<32> port;
}

struct empty_t {}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.r);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    Random<bit<8>>(8w10, 8w20) r8;
    Random<bit<16>>(16w1000, 16w1000) r16;
    Random<bit<32>>(32w0, 32w0xFFFFFFFF) r32;

    apply {
        hdr.r.r8 = r8.read();
        hdr.r.r16 = r16.read();
        hdr.r.r32 = r32.read();
        meta.port = (bit<32>) istd.ingress_port;
        send_to_port(ostd, (PortId_t) 32w1);
    }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta,
                            out empty_t resubmit_meta, out empty_t normalized_meta,
                            inout headers_t hdr, in meta_t meta,
                            in psa_ingress_output_metadata_t istd) {
    Digest<learn_t>() learn;

    apply {
        if (hdr.eth.etype == 0x0801) {
            learn.pack({hdr.eth.src, meta.port});
        }
        pkt.emit(hdr.eth);
        pkt.emit(hdr.r);
    }
}

parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                        in psa_egress_parser_input_metadata_t istd,
                        in empty_t normalized_meta, in empty_t clone_i2e_meta,
                        in empty_t clone_e2e_meta) {
    state start {
        transition accept;
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   in psa_egress_input_metadata_t istd,
                   inout psa_egress_output_metadata_t ostd) {
    apply { }
}

control EgressDeparserImpl(packet_out pkt, out empty_t clone_e2e_meta,
                           out empty_t recirculate_meta, inout headers_t hdr,
                           in meta_t meta, in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    apply { }
}

IngressPipeline(IngressParserImpl(), IngressImpl(), IngressDeparserImpl()) ip;
EgressPipeline(EgressParserImpl(), EgressImpl(), EgressDeparserImpl()) ep;
PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
