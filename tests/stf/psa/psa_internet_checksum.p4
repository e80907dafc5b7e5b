// PSA InternetChecksum on the psa_switch target: the parser verifies an
// IPv4 header checksum from scratch; the ingress decrements the TTL and
// updates the checksum incrementally (set_state from the old checksum,
// subtract the old word, add the new one), recomputes it from scratch for
// comparison, and reports the running sum (get_state) and the sum left by
// subtracting a zero word from a cleared checksum.
#include <core.p4>
#include <psa.p4>

error { BadIPv4HeaderChecksum }

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header res_t {
    bit<16> state;
    bit<16> full;
    bit<16> zero;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    res_t      res;
}

struct empty_t {}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout empty_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    InternetChecksum() ck;

    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ipv4);
        ck.clear();
        ck.add({hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
                hdr.ipv4.totalLen,
                hdr.ipv4.identification,
                hdr.ipv4.flags, hdr.ipv4.fragOffset,
                hdr.ipv4.ttl, hdr.ipv4.protocol,
                hdr.ipv4.srcAddr,
                hdr.ipv4.dstAddr});
        verify(hdr.ipv4.hdrChecksum == ck.get(), error.BadIPv4HeaderChecksum);
        pkt.extract(hdr.res);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout empty_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    InternetChecksum() inc;
    InternetChecksum() full;
    InternetChecksum() zero;

    apply {
        if (istd.parser_error == error.BadIPv4HeaderChecksum) {
            send_to_port(ostd, (PortId_t) 32w2);
            return;
        }
        inc.clear();
        inc.set_state(~hdr.ipv4.hdrChecksum);
        inc.subtract({hdr.ipv4.ttl, hdr.ipv4.protocol});
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        inc.add({hdr.ipv4.ttl, hdr.ipv4.protocol});
        hdr.ipv4.hdrChecksum = inc.get();
        hdr.res.state = inc.get_state();

        full.clear();
        full.add({hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
                  hdr.ipv4.totalLen, hdr.ipv4.identification,
                  hdr.ipv4.flags, hdr.ipv4.fragOffset,
                  hdr.ipv4.ttl, hdr.ipv4.protocol,
                  hdr.ipv4.srcAddr, hdr.ipv4.dstAddr});
        hdr.res.full = full.get();

        zero.clear();
        zero.subtract({16w0});
        hdr.res.zero = zero.get_state();
        send_to_port(ostd, (PortId_t) 32w1);
    }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta,
                            out empty_t resubmit_meta, out empty_t normalized_meta,
                            inout headers_t hdr, in empty_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.res);
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
