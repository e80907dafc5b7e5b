// PSA meters on the psa_switch target: an indexed Meter and a table's
// DirectMeter, colour-blind, packet-rate; the colour is written into the
// frame (1 green, 2 yellow, 3 red). The table also has a DirectCounter.
#include <core.p4>
#include <psa.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

header m_t {
    bit<8> idx;
    bit<8> colour;
    bit<8> direct;
}

struct headers_t {
    ethernet_t eth;
    m_t        m;
}

struct empty_t {}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout empty_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.m);
        transition accept;
    }
}

bit<8> code(in PSA_MeterColor_t c) {
    if (c == PSA_MeterColor_t.GREEN) {
        return 1;
    } else if (c == PSA_MeterColor_t.YELLOW) {
        return 2;
    }
    return 3;
}

control IngressImpl(inout headers_t hdr, inout empty_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    Meter<bit<8>>(4, PSA_MeterType_t.PACKETS) m;
    DirectMeter(PSA_MeterType_t.PACKETS) dm;
    DirectCounter<bit<32>>(PSA_CounterType_t.PACKETS_AND_BYTES) hits;

    action metered() {
        hdr.m.direct = code(dm.execute());
    }

    table by_etype {
        key = { hdr.eth.etype: exact; }
        actions = { metered; NoAction; }
        psa_direct_meter = dm;
        psa_direct_counter = hits;
        default_action = NoAction();
    }

    apply {
        hdr.m.colour = code(m.execute(hdr.m.idx));
        by_etype.apply();
        send_to_port(ostd, (PortId_t) 32w1);
    }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta,
                            out empty_t resubmit_meta, out empty_t normalized_meta,
                            inout headers_t hdr, in empty_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.m);
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
