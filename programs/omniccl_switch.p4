/* omniccl_switch.p4: the OmNICCL aggregator (Gu, Fei, Canini, NAIC '24,
 * section 2) in the middle pipes of a NetSparse top-of-rack switch, with the
 * externs of <collective.p4> (the switch variant of omniccl_agg.p4; issue 15,
 * "as an option, in a switch middle pipe").
 *
 * Ingress and egress are netsparse_tor.p4's (route NetSparse packets by
 * destination node: tables flow_port, pr_port, node_port; IPv4 by
 * ipv4_port; decrement the TTL and rewrite MACs from port_macs), so the
 * control plane of a ToR applies unchanged.
 *
 * Middle (every middle pipe): Deconcatenate, then per PR (control AggPr):
 * a PR addressed to the node the switch aggregates for (table coll_node,
 * exact md.dst -> serve) is consumed here —
 *   vote    COLL_VOTE reads: VoteMerge keeps the d smallest indices (Block
 *           Merge); when every worker voted, SendIndices returns them;
 *   send    COLL_BLOCK responses: BlockAccumulate adds the block;
 *   update  COLL_DONE reads: RoundDone; once every block and DONE of the
 *           round is in, SendSums returns the sums to every worker.
 * Every other PR passes unchanged. The aggregator state is one per switch,
 * shared by the middle pipes (crossbar 1 sends a block to the middle pipe of
 * its ingress port, a vote or DONE to that of the aggregator node's port);
 * the target sends the broadcasts through the calling pipe's Concatenator,
 * to the ports the control plane configured per worker (the collective's
 * configuration, like a multicast group).
 *
 * Control plane: a ToR's tables (see netsparse_tor.p4), plus
 *   table_add coll_node serve 4 =>      # aggregate for node 4
 */
#include <core.p4>
#include <netsparse.p4>
#include <collective.p4>

const bit<16> TYPE_IPV4 = 0x0800;
const bit<8>  PROTO_UDP = 17;

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

struct ig_headers_t {
    ethernet_t  ethernet;
    ipv4_t      ipv4;
    udp_t       udp;
    ns_bth_h    bth;
    ns_concat_h concat;
}

struct ig_meta_t {
    bit<1> unused;
}

struct eg_headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

struct eg_meta_t {
    bit<1> unused;
}

/* ----- ingress ----------------------------------------------------------- */

parser TorIngressParser(packet_in pkt, out ig_headers_t hdr, inout ig_meta_t meta,
                        inout ns_switch_md_t md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        /* Options and fragments are not NetSparse: route them as IPv4. */
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            NS_ROCEV2_UDP_PORT: parse_netsparse;
            default: accept;
        }
    }
    state parse_netsparse {
        pkt.extract(hdr.bth);
        pkt.extract(hdr.concat);
        transition accept;
    }
}

control TorIngress(inout ig_headers_t hdr, inout ig_meta_t meta, inout ns_switch_md_t md) {
    action set_port(ns_port_t port) {
        md.egress_spec = port;
    }
    action drop() {
        md.drop = true;
    }
    /* NetSparse packets: destination node -> port (a host port for nodes
     * of this rack, the uplink of the rack pair for the others). */
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
            md.ingress_port: exact;
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
    }
}

control TorIngressDeparser(packet_out pkt, in ig_headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.bth);
        pkt.emit(hdr.concat);
    }
}

/* ----- middle ------------------------------------------------------------ */

/* The per-PR part: the aggregator. */
control AggPr(inout ns_pr_h pr, inout ns_pr_md_t md) {
    action serve() { }
    /* The node ids this switch aggregates for. */
    table coll_node {
        key = { md.dst: exact; }
        actions = { serve; NoAction; }
        size = 16;
        default_action = NoAction();
    }
    apply {
        if (coll_node.apply().hit) {
            bit<8> st = COLL_REFUSED;
            if (md.pr_type == NS_READ && pr.tid == COLL_VOTE) {
                st = VoteMerge(pr.req_id, pr.src, pr.idx);
                if (st == COLL_COMPLETE) {
                    SendIndices(pr.req_id);
                }
            } else if (md.pr_type == NS_RESPONSE && pr.tid == COLL_BLOCK) {
                st = BlockAccumulate(pr.req_id, pr.src, pr.idx, md.prop_len);
                if (st == COLL_COMPLETE) {
                    SendSums(pr.req_id);
                }
            } else if (md.pr_type == NS_READ && pr.tid == COLL_DONE) {
                st = RoundDone(pr.req_id, pr.src, pr.idx);
                if (st == COLL_COMPLETE) {
                    SendSums(pr.req_id);
                }
            }
            /* Consumed here (a refused call is counted by the target). */
            md.drop = true;
        }
    }
}

control AggMiddle(inout ns_pr_h pr, inout ns_pr_md_t md) {
    AggPr() agg;
    apply {
        Deconcatenate(pr, md);
        agg.apply(pr, md);
        Concatenate(pr, md);
    }
}

/* ----- egress ------------------------------------------------------------ */

parser TorEgressParser(packet_in pkt, out eg_headers_t hdr, inout eg_meta_t meta,
                       inout ns_switch_md_t md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control TorEgress(inout eg_headers_t hdr, inout eg_meta_t meta, inout ns_switch_md_t md) {
    action rewrite_macs(bit<48> switch_mac, bit<48> next_hop_mac) {
        hdr.ethernet.srcAddr = switch_mac;
        hdr.ethernet.dstAddr = next_hop_mac;
    }
    /* Egress port -> (this switch's MAC on it, the neighbour's MAC). */
    table port_macs {
        key = { md.egress_port: exact; }
        actions = { rewrite_macs; NoAction; }
        size = 512;
        default_action = NoAction();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                md.drop = true;
            } else {
                /* TTL - 1: the (ttl, protocol) word drops by 0x0100, so
                 * HC' = ~(~HC + ~m + m') = ~(~HC + 0xFEFF) (RFC 1624, eq. 3). */
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                bit<32> sum = (bit<32>)(~hdr.ipv4.hdrChecksum) + 32w0xFEFF;
                sum = (sum & 32w0xFFFF) + (sum >> 16);
                hdr.ipv4.hdrChecksum = ~(sum[15:0]);
            }
        }
        port_macs.apply();
    }
}

control TorEgressDeparser(packet_out pkt, in eg_headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

NetSparseSwitch(
    TorIngressParser(),
    TorIngress(),
    TorIngressDeparser(),
    AggMiddle(),
    TorEgressParser(),
    TorEgress(),
    TorEgressDeparser()
) main;
