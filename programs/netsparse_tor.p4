/* netsparse_tor.p4: the NetSparse top-of-rack switch of the paper
 * (Section 6, Figures 6-9), for the multi-pipe NetSparse switch target.
 *
 *   ingress pipe --crossbar 1--> middle pipe --crossbar 2--> egress pipe
 *
 * Ingress (every ingress pipe): parse Ethernet / IPv4 / UDP / BTH / the
 * concatenation header and choose the egress port:
 *   - NetSparse packets (UDP 4791, concatenation header present) by their
 *     destination node, table `node_port` (exact concat.dst -> port);
 *   - other IPv4 by destination address, table `ipv4_port` (LPM, so a /32
 *     per host and one prefix per remote rack or a default route);
 *   - anything else, and misses, are dropped.
 * The PR layer stays in the payload: the middle pipe deconcatenates it.
 *
 * Middle (every middle pipe; crossbar 1 sends a response packet to the
 * middle pipe of its ingress pipe and a read packet to the middle pipe of its
 * egress pipe, so a read meets the cache its responses filled):
 *   Deconcatenate, then per PR (control PrCache):
 *     - read: Lookup in the Property Cache; on a hit the PR becomes a response
 *       to its requester: pr_type = NS_RESPONSE, dst = pr.src, and it leaves
 *       on the port it arrived on (egress_port = ingress_port);
 *     - response: Insert its property into the cache;
 *   then Concatenate per (type, destination, egress port). Reads that miss
 *   continue unchanged to their owner.
 *
 * Egress (every egress pipe), as an IPv4 router: drop packets whose TTL is 1
 * or 0, decrement the TTL (updating the header checksum incrementally,
 * RFC 1624), and rewrite the Ethernet addresses from table `port_macs`
 * (exact egress port -> switch MAC of the port, next hop's MAC; no entry:
 * addresses unchanged). NetSparse packets rebuilt by the switch from a
 * Concatenation Queue carry the switch's own addresses (see the target's
 * config), so they leave with TTL 63. In the egress pipe `md.ingress_port` of
 * such a rebuilt packet is 0xFFFF (the switch originated it).
 *
 * Routing convention (what the control plane, the simulator and topology
 * builders must follow). A read PR and the responses that answer it must
 * cross this switch on the same port (Section 6.2.1): a response fills the
 * cache of the middle pipe of its *ingress* port's pipe, and a later read
 * looks in the middle pipe of its *egress* port's pipe. Routing must
 * therefore be symmetric and deterministic:
 *   - `node_port` maps every node of this rack to its host port, and every
 *     remote node n to the uplink towards spine s = f(rack(n), this rack),
 *     where f is a function of the *unordered* rack pair (e.g.
 *     s = (min(a, b) * R + max(a, b)) % S for R racks and S spines), never
 *     of the node, the flow or a hash of the direction;
 *   - every ToR and spine uses the same f, and each spine reaches each ToR
 *     through exactly one link, so the responses of node n come back on the
 *     uplink the reads to n left on.
 * `ipv4_port` should follow the same rule for consistency (it carries no
 * NetSparse traffic, so it may also use any other policy).
 * `flow_port` (PR type, ingress port, destination node), tried first, lets a
 * control plane spread a rack's traffic over every uplink and still keep the
 * rule per read and response: e.g. reads of this rack to owner node y, and
 * y's responses to this rack, over spine (rack + y) % S (the simulator's
 * --routing owner), or node pair (x, y) over spine (x + y) % S (node-pair).
 * `pr_port` (PR type, destination node), tried next, lets responses take
 * another route than reads where the topology needs it to keep the rule:
 * in a HyperX (every switch a "ToR" with hosts) reads go in dimension order
 * lowest dimension first and responses highest first, so a response
 * retraces its read (the simulator's --topology hyperx and dragonfly).
 *
 * Control plane (BMv2 command file):
 *   table_add node_port set_port 5 => 5          # host node 5 on port 5
 *   table_add node_port set_port 20 => 16        # remote node 20: uplink 16
 *   table_add ipv4_port set_port 10.0.0.6/32 => 5
 *   table_add port_macs rewrite_macs 5 => 02:4e:57:00:00:01 02:4e:53:00:00:05
 *   cache_mode 64                                # property length (bytes)
 *   cache_invalidate                             # before every kernel
 */
#include <core.p4>
#include <netsparse.p4>

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

/* The per-PR part: the Property Cache (Section 6.2.1). */
control PrCache(inout ns_pr_h pr, inout ns_pr_md_t md) {
    apply {
        if (md.pr_type == NS_READ) {
            if (Lookup(pr, md)) {
                /* Hit: answer the requester from the cache, out of the
                 * port the read came in on. */
                md.pr_type = NS_RESPONSE;
                md.dst = pr.src;
                md.egress_port = md.ingress_port;
            }
        } else if (md.pr_type == NS_RESPONSE) {
            Insert(pr, md);
        }
    }
}

control TorMiddle(inout ns_pr_h pr, inout ns_pr_md_t md) {
    PrCache() pr_cache;
    apply {
        Deconcatenate(pr, md);
        pr_cache.apply(pr, md);
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
    TorMiddle(),
    TorEgressParser(),
    TorEgress(),
    TorEgressDeparser()
) main;
