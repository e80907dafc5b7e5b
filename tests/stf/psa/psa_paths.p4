// PSA packet paths on the psa_switch target: unicast, drop (ingress and
// egress), multicast, clone I2E and E2E, resubmit, recirculate, with the
// metadata the deparsers hand to the next parser (NM, CI2EM, CE2EM, RESUBM,
// RECIRCM), and an indexed Counter and Register.
//
// Frames carry a tag after Ethernet (etype 0x88b5): `op` picks the path,
// `arg` is its operand; egress writes what it saw into the tag: the packet
// path (1 unicast, 2 multicast, 3 clone I2E, 4 clone E2E), the instance,
// the egress port and the byte its parser received from the previous block.
#include <core.p4>
#include <psa.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

header tag_t {
    bit<8>  op;
    bit<8>  arg;
    bit<8>  path;
    bit<16> inst;
    bit<8>  port;
    bit<8>  got;
    bit<16> val;
}

struct headers_t {
    ethernet_t eth;
    tag_t      tag;
}

struct imeta_t {
    bit<8> resub;
    bit<8> recirc;
}

struct emeta_t {
    bit<8> nm;
    bit<8> ci2e;
    bit<8> ce2e;
}

struct carry_t {
    bit<8> v;
}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout imeta_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in carry_t resubmit_meta, in carry_t recirculate_meta) {
    state start {
        meta.resub = resubmit_meta.v;
        meta.recirc = recirculate_meta.v;
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            0x88b5: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout imeta_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    Counter<bit<32>, bit<8>>(16, PSA_CounterType_t.PACKETS) tagged;
    Register<bit<16>, bit<8>>(16) cells;

    apply {
        // Untagged frames keep ostd.drop's initial value (true): dropped.
        if (!hdr.tag.isValid()) {
            return;
        }
        bit<8> op = hdr.tag.op;
        if (op == 1) {
            send_to_port(ostd, (PortId_t) (bit<32>) hdr.tag.arg);
        } else if (op == 2) {
            send_to_port(ostd, (PortId_t) 32w1);
            ingress_drop(ostd);
        } else if (op == 3) {
            multicast(ostd, (MulticastGroup_t) (bit<32>) hdr.tag.arg);
        } else if (op == 4) {
            send_to_port(ostd, (PortId_t) 32w1);
            ostd.clone = true;
            ostd.clone_session_id = (CloneSessionId_t) (bit<16>) hdr.tag.arg;
        } else if (op == 5) {
            if (istd.packet_path == PSA_PacketPath_t.RESUBMIT) {
                hdr.tag.val = 8w0 ++ meta.resub;
                send_to_port(ostd, (PortId_t) 32w2);
            } else {
                ostd.drop = false;
                ostd.resubmit = true;
            }
        } else if (op == 6) {
            if (istd.packet_path == PSA_PacketPath_t.RECIRCULATE) {
                hdr.tag.val = 8w0 ++ meta.recirc;
                send_to_port(ostd, (PortId_t) 32w3);
            } else {
                send_to_port(ostd, PSA_PORT_RECIRCULATE);
            }
        } else if (op == 7) {
            tagged.count(hdr.tag.arg);
            bit<16> v = cells.read(hdr.tag.arg);
            v = v + 1;
            cells.write(hdr.tag.arg, v);
            hdr.tag.val = v;
            send_to_port(ostd, (PortId_t) 32w1);
        } else {
            // 8 (egress drop), 9 (clone E2E): decided in egress.
            send_to_port(ostd, (PortId_t) 32w1);
        }
    }
}

control IngressDeparserImpl(packet_out pkt, out carry_t clone_i2e_meta,
                            out carry_t resubmit_meta, out carry_t normalized_meta,
                            inout headers_t hdr, in imeta_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply {
        if (psa_clone_i2e(istd)) {
            clone_i2e_meta.v = 0x77;
        }
        if (psa_resubmit(istd)) {
            resubmit_meta.v = 0xab;
        }
        if (psa_normal(istd)) {
            normalized_meta.v = 0x5a;
        }
        pkt.emit(hdr.eth);
        pkt.emit(hdr.tag);
    }
}

parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout emeta_t meta,
                        in psa_egress_parser_input_metadata_t istd,
                        in carry_t normalized_meta, in carry_t clone_i2e_meta,
                        in carry_t clone_e2e_meta) {
    state start {
        meta.nm = normalized_meta.v;
        meta.ci2e = clone_i2e_meta.v;
        meta.ce2e = clone_e2e_meta.v;
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            0x88b5: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control EgressImpl(inout headers_t hdr, inout emeta_t meta,
                   in psa_egress_input_metadata_t istd,
                   inout psa_egress_output_metadata_t ostd) {
    apply {
        if (!hdr.tag.isValid()) {
            return;
        }
        bit<8> p = 0;
        bit<8> got = meta.nm;
        if (istd.packet_path == PSA_PacketPath_t.NORMAL_UNICAST) {
            p = 1;
        } else if (istd.packet_path == PSA_PacketPath_t.NORMAL_MULTICAST) {
            p = 2;
        } else if (istd.packet_path == PSA_PacketPath_t.CLONE_I2E) {
            p = 3;
            got = meta.ci2e;
        } else if (istd.packet_path == PSA_PacketPath_t.CLONE_E2E) {
            p = 4;
            got = meta.ce2e;
        }
        hdr.tag.path = p;
        hdr.tag.inst = (bit<16>) istd.instance;
        hdr.tag.port = (bit<8>) (bit<32>) istd.egress_port;
        hdr.tag.got = got;
        if (hdr.tag.op == 8) {
            egress_drop(ostd);
        }
        if (hdr.tag.op == 9 && p == 1) {
            ostd.clone = true;
            ostd.clone_session_id = (CloneSessionId_t) (bit<16>) hdr.tag.arg;
        }
    }
}

control EgressDeparserImpl(packet_out pkt, out carry_t clone_e2e_meta,
                           out carry_t recirculate_meta, inout headers_t hdr,
                           in emeta_t meta, in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    apply {
        if (psa_clone_e2e(istd)) {
            clone_e2e_meta.v = 0xe2;
        }
        if (psa_recirculate(istd, edstd)) {
            recirculate_meta.v = 0xcd;
        }
        pkt.emit(hdr.eth);
        pkt.emit(hdr.tag);
    }
}

IngressPipeline(IngressParserImpl(), IngressImpl(), IngressDeparserImpl()) ip;
EgressPipeline(EgressParserImpl(), EgressImpl(), EgressDeparserImpl()) ep;
PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
