/* A small NetSparse switch: exercises the middle pipe (per-packet part,
 * Deconcatenate, per-PR part with a per-PR control using the Property Cache,
 * Concatenate), both pipes' metadata and const entries. Compiler test input. */
#include <core.p4>
#include <netsparse.p4>

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
    bool is_netsparse;
}

struct eg_headers_t {
    ethernet_t ethernet;
}

struct eg_meta_t {
    bit<8> unused;
}

parser IgParser(packet_in pkt, out ig_headers_t hdr, inout ig_meta_t meta, inout ns_switch_md_t md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
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
        meta.is_netsparse = true;
        transition accept;
    }
}

control Ig(inout ig_headers_t hdr, inout ig_meta_t meta, inout ns_switch_md_t md) {
    action set_port(ns_port_t port) {
        md.egress_spec = port;
    }
    action drop() {
        md.drop = true;
    }
    /* NetSparse packets are routed by destination node. */
    table node_route {
        key = { hdr.concat.dst: exact; }
        actions = { set_port; drop; }
        default_action = drop();
        const entries = {
            1: set_port(1);
            2: set_port(2);
        }
    }
    table ipv4_route {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_port; drop; }
        default_action = drop();
    }
    apply {
        if (meta.is_netsparse) {
            node_route.apply();
        } else if (hdr.ipv4.isValid()) {
            ipv4_route.apply();
        } else {
            drop();
        }
    }
}

control IgDeparser(packet_out pkt, in ig_headers_t hdr) {
    apply {
        pkt.emit(hdr);
    }
}

/* A per-PR control: it takes the PR and its metadata. */
control CacheOps(inout ns_pr_h pr, inout ns_pr_md_t md) {
    apply {
        if (md.pr_type == NS_READ) {
            if (Lookup(pr, md)) {
                /* Hit: answer the read from the cache, back where it came from. */
                md.pr_type = NS_RESPONSE;
                md.dst = pr.src;
                md.egress_port = md.ingress_port;
            }
        } else if (md.pr_type == NS_RESPONSE) {
            Insert(pr, md);
        }
    }
}

control Middle(inout ns_pr_h pr, inout ns_pr_md_t md) {
    CacheOps() cache_ops;
    action drop_pr() {
        md.drop = true;
    }
    table pr_filter {
        key = {
            md.pr_type: exact;
            pr.idx: ternary;
        }
        actions = { NoAction; drop_pr; }
        const entries = {
            (NS_READ, 0 &&& 0xFFFF_0000_0000_0000): NoAction();
        }
    }
    apply {
        if (md.prop_len > 512) {
            md.drop = true;
        }
        Deconcatenate(pr, md);
        pr_filter.apply();
        cache_ops.apply(pr, md);
        Concatenate(pr, md);
    }
}

parser EgParser(packet_in pkt, out eg_headers_t hdr, inout eg_meta_t meta, inout ns_switch_md_t md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Eg(inout eg_headers_t hdr, inout eg_meta_t meta, inout ns_switch_md_t md) {
    apply { }
}

control EgDeparser(packet_out pkt, in eg_headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

NetSparseSwitch(
    IgParser(),
    Ig(),
    IgDeparser(),
    Middle(),
    EgParser(),
    Eg(),
    EgDeparser()
) main;
