// expect: E0405
// PSA: Random bounds out of order (min above max)
#include <core.p4>
#include <psa.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { ethernet_t eth; }
struct meta_t { bit<8> x; }
struct empty_t {}

parser IP(packet_in pkt, out headers_t hdr, inout meta_t meta,
          in psa_ingress_parser_input_metadata_t istd,
          in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control IG(inout headers_t hdr, inout meta_t meta,
           in psa_ingress_input_metadata_t istd,
           inout psa_ingress_output_metadata_t ostd) {
    Random<bit<8>>(8w200, 8w100) r;
    apply {
        meta.x = r.read();
        send_to_port(ostd, (PortId_t) 32w1);
    }
}

control ID(packet_out pkt, out empty_t clone_i2e_meta, out empty_t resubmit_meta,
           out empty_t normalized_meta, inout headers_t hdr, in meta_t meta,
           in psa_ingress_output_metadata_t istd) {
    apply { pkt.emit(hdr.eth); }
}

parser EP(packet_in pkt, out headers_t hdr, inout meta_t meta,
          in psa_egress_parser_input_metadata_t istd,
          in empty_t normalized_meta, in empty_t clone_i2e_meta, in empty_t clone_e2e_meta) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control EG(inout headers_t hdr, inout meta_t meta,
           in psa_egress_input_metadata_t istd,
           inout psa_egress_output_metadata_t ostd) {
    apply { }
}

control ED(packet_out pkt, out empty_t clone_e2e_meta, out empty_t recirculate_meta,
           inout headers_t hdr, in meta_t meta,
           in psa_egress_output_metadata_t istd,
           in psa_egress_deparser_input_metadata_t edstd) {
    apply { pkt.emit(hdr.eth); }
}

IngressPipeline(IP(), IG(), ID()) ip;
EgressPipeline(EP(), EG(), ED()) ep;
PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
