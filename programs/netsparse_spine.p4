/* netsparse_spine.p4: a spine switch of a NetSparse leaf-spine network.
 *
 * As in the paper (Section 6.2, Table 5: "NetSparse extensions only in ToR
 * switches"), a spine has no Concatenator, Deconcatenator or Property Cache:
 * it is a plain v1model switch that forwards NetSparse packets by their
 * destination node (the concatenation header's `dst`) and other IPv4
 * traffic by destination address, decrements the TTL, rewrites the Ethernet
 * source and recomputes the IPv4 header checksum.
 *
 * Routing convention (see programs/netsparse_tor.p4): a spine reaches each
 * ToR through exactly one port, and `node_port` maps every node to the port
 * of its rack's ToR; with ToRs choosing the spine of a rack pair by a
 * function of the unordered pair, reads and their responses cross the same
 * links in opposite directions, which the ToRs' Property Caches rely on.
 *
 *   table_add node_port set_port 20 => 1          # node 20 is in the rack on port 1
 *   table_add ipv4_port set_port 10.0.0.16/28 => 1
 *   table_add port_mac set_smac 1 => 02:4e:57:00:00:09
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_IPV4 = 0x0800;
const bit<8>  PROTO_UDP = 17;
const bit<16> ROCEV2_UDP_PORT = 4791;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
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

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

/* InfiniBand BTH (12 bytes) and the NetSparse concatenation header (14
 * bytes, Figure 6), as declared by <netsparse.p4> for NetSparse switches. */
header bth_t {
    bit<8>  opcode;
    bit<8>  flags;
    bit<16> pkey;
    bit<8>  reserved0;
    bit<24> dst_qp;
    bit<8>  ack_req;
    bit<24> psn;
}

header concat_t {
    bit<16> pr_type;
    bit<32> dst;
    bit<32> prop_len;
    bit<32> num_prs;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    bth_t      bth;
    concat_t   concat;
}

struct metadata {
    bit<1> unused;
}

parser SpineParser(packet_in pkt, out headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            ROCEV2_UDP_PORT: parse_netsparse;
            default: accept;
        }
    }
    state parse_netsparse {
        pkt.extract(hdr.bth);
        pkt.extract(hdr.concat);
        transition accept;
    }
}

control SpineVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control SpineIngress(inout headers hdr, inout metadata meta,
                     inout standard_metadata_t standard_metadata) {
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    /* NetSparse packets: destination node -> port of its rack's ToR. */
    table node_port {
        key = { hdr.concat.dst: exact; }
        actions = { set_port; drop; }
        size = 65536;
        default_action = drop();
    }
    /* NetSparse packets by (PR type, ingress port, destination node), tried
     * before node_port: routings that spread a rack's traffic over every
     * uplink by node rather than by rack pair fill it (the simulator's
     * --routing node-pair and owner); empty, node_port decides alone. */
    table flow_port {
        key = {
            hdr.concat.pr_type: exact;
            standard_metadata.ingress_port: exact;
            hdr.concat.dst: exact;
        }
        actions = { set_port; NoAction; }
        size = 65536;
        default_action = NoAction();
    }
    /* NetSparse packets by (PR type, destination node), tried after
     * flow_port and before node_port: topologies whose responses take
     * another route than the reads fill it (the simulator's HyperX sends
     * responses in the reverse dimension order, Dragonfly picks the global
     * link from the owner's side); empty, node_port decides. */
    table pr_port {
        key = {
            hdr.concat.pr_type: exact;
            hdr.concat.dst: exact;
        }
        actions = { set_port; NoAction; }
        size = 65536;
        default_action = NoAction();
    }
    /* Other IPv4 traffic: destination address -> port. */
    table ipv4_port {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_port; drop; }
        size = 65536;
        default_action = drop();
    }
    apply {
        if (hdr.concat.isValid()) {
            if (!flow_port.apply().hit) {
                if (!pr_port.apply().hit) {
                    node_port.apply();
                }
            }
        } else if (hdr.ipv4.isValid()) {
            ipv4_port.apply();
        } else {
            drop();
        }
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            }
        }
    }
}

control SpineEgress(inout headers hdr, inout metadata meta,
                    inout standard_metadata_t standard_metadata) {
    action set_smac(bit<48> mac) {
        hdr.ethernet.srcAddr = mac;
    }
    /* Egress port -> this switch's MAC address on it (no entry: unchanged). */
    table port_mac {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_smac; NoAction; }
        size = 512;
        default_action = NoAction();
    }
    apply {
        port_mac.apply();
    }
}

control SpineComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version,
              hdr.ipv4.ihl,
              hdr.ipv4.diffserv,
              hdr.ipv4.totalLen,
              hdr.ipv4.identification,
              hdr.ipv4.flags,
              hdr.ipv4.fragOffset,
              hdr.ipv4.ttl,
              hdr.ipv4.protocol,
              hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control SpineDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.bth);
        pkt.emit(hdr.concat);
    }
}

V1Switch(
    SpineParser(),
    SpineVerifyChecksum(),
    SpineIngress(),
    SpineEgress(),
    SpineComputeChecksum(),
    SpineDeparser()
) main;
