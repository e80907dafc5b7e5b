// PSA Hash and Checksum on the psa_switch target. The input header holds
// the nine ASCII bytes "123456789", whose CRCs are the catalogue check
// values (CRC-16/ARC 0xBB3D, CRC-32/ISO-HDLC 0xCBF43926); the ingress
// writes every result into the output header.
#include <core.p4>
#include <psa.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

// "123456789" as a (16), b (16), c (32), d (8).
header in_t {
    bit<16> a;
    bit<16> b;
    bit<32> c;
    bit<8>  d;
}

header out_t {
    bit<16> crc16;
    bit<32> crc32;
    bit<16> ones;
    bit<32> ident;
    bit<8>  mod;
    bit<16> ck16;
    bit<32> ck32;
    bit<32> dflt;
    bit<16> crc16c;
    bit<8>  narrow;
}

struct headers_t {
    ethernet_t eth;
    in_t       i;
    out_t      o;
}

struct empty_t {}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout empty_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.i);
        pkt.extract(hdr.o);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout empty_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    Hash<bit<16>>(PSA_HashAlgorithm_t.CRC16) h16;
    Hash<bit<32>>(PSA_HashAlgorithm_t.CRC32) h32;
    Hash<bit<16>>(PSA_HashAlgorithm_t.ONES_COMPLEMENT16) hones;
    Hash<bit<32>>(PSA_HashAlgorithm_t.IDENTITY) hid;
    Hash<bit<8>>(PSA_HashAlgorithm_t.CRC16) hmod;
    Hash<bit<32>>(PSA_HashAlgorithm_t.TARGET_DEFAULT) hdflt;
    Hash<bit<16>>(PSA_HashAlgorithm_t.CRC16_CUSTOM) h16c;
    Hash<bit<8>>(PSA_HashAlgorithm_t.CRC32) hnarrow;
    Checksum<bit<16>>(PSA_HashAlgorithm_t.CRC16) ck16;
    Checksum<bit<32>>(PSA_HashAlgorithm_t.CRC32) ck32;

    apply {
        hdr.o.crc16 = h16.get_hash({hdr.i.a, hdr.i.b, hdr.i.c, hdr.i.d});
        hdr.o.crc32 = h32.get_hash({hdr.i.a, hdr.i.b, hdr.i.c, hdr.i.d});
        hdr.o.ones = hones.get_hash({hdr.i.a, hdr.i.b, hdr.i.c, hdr.i.d});
        hdr.o.ident = hid.get_hash({hdr.i.a, hdr.i.b});
        // base + (hash % max): 10 + 0xBB3D % 100 = 43 (0x2b).
        hdr.o.mod = hmod.get_hash(8w10, {hdr.i.a, hdr.i.b, hdr.i.c, hdr.i.d}, 8w100);
        hdr.o.dflt = hdflt.get_hash(hdr.i);
        hdr.o.crc16c = h16c.get_hash(hdr.i);
        // A result narrower than the algorithm keeps the low bits: 0x26.
        hdr.o.narrow = hnarrow.get_hash(hdr.i);

        // Two updates checksum their data as one: the same CRC as above.
        ck16.clear();
        ck16.update({hdr.i.a, hdr.i.b});
        ck16.update({hdr.i.c, hdr.i.d});
        hdr.o.ck16 = ck16.get();
        ck32.clear();
        ck32.update(hdr.i);
        hdr.o.ck32 = ck32.get();
        send_to_port(ostd, (PortId_t) 32w1);
    }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta,
                            out empty_t resubmit_meta, out empty_t normalized_meta,
                            inout headers_t hdr, in empty_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.i);
        pkt.emit(hdr.o);
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
