/* A v1model program that exercises most of what the compiler lowers:
 * typedefs, serializable enums, header stacks, lookahead, verify, select
 * keysets, sub-controls (copy-in/copy-out), functions, direct action calls,
 * action parameters bound in `actions`, externs (register, counter,
 * direct_counter, meter, hash, random, digest, clone, log_msg), switch on
 * action_run and on values, hit/miss, slices, concatenation, casts, const
 * entries with masks, ranges and priorities. Compiler test input. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
const bit<16> ETH_IPV4 = 0x0800;
const bit<16> ETH_MPLS = 0x8847;

enum bit<8> Proto { TCP = 6, UDP = 17 }

error { BadVersion }

header ethernet_t { mac_t dst; mac_t src; bit<16> etherType; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; Proto protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}

struct headers {
    ethernet_t ethernet;
    mpls_t[3]  mpls;
    ipv4_t     ipv4;
}

struct learn_t {
    mac_t src;
    bit<9> port;
}

struct metadata {
    @field_list(1) bit<16> flow_hash;
    bit<32> counter_index;
    bit<2>  color;
    bool    seen;
    learn_t learn;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETH_MPLS: parse_mpls;
            ETH_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: check_ipv4;
        }
    }
    state check_ipv4 {
        transition select(pkt.lookahead<bit<4>>()) {
            4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.BadVersion);
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset) {
            (5, 0): accept;
            (0x5 &&& 0xF, _): accept;
            (6 .. 15, _): accept;
            default: reject;
        }
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

/* A function with a result: inlined at each call. */
bit<8> decrement(in bit<8> ttl) {
    if (ttl == 0) {
        return 0;
    }
    return ttl - 1;
}

/* A sub-control: applied with copy-in/copy-out. */
control Rewrite(inout ethernet_t eth, in mac_t new_dst) {
    apply {
        eth.src = eth.dst;
        eth.dst = new_dst;
    }
}

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>, bit<32>>(1024) flows;
    counter(256, CounterType.packets) port_counter;
    direct_counter(CounterType.packets_and_bytes) route_counter;
    meter(64, MeterType.bytes) rate;
    Rewrite() rewrite;
    bit<32> seen_count = 0;

    action drop() {
        mark_to_drop(sm);
    }
    action rewrite_mac(mac_t dst) {
        hdr.ethernet.dst = dst;
    }
    action forward(mac_t dst, bit<9> port) {
        sm.egress_spec = port;
        rewrite_mac(dst);
    }
    action set_ttl(inout bit<8> ttl, bit<8> value) {
        ttl = value;
    }
    action count_flow(out bit<32> old) {
        flows.read(old, meta.counter_index);
        flows.write(meta.counter_index, old + 1);
    }

    @name("routing_table")
    table route {
        key = {
            hdr.ipv4.dstAddr: lpm @name("dst");
            hdr.ipv4.isValid(): exact;
        }
        actions = {
            forward;
            @defaultonly drop;
        }
        default_action = drop();
        counters = route_counter;
        size = 4096;
    }

    table classify {
        key = {
            hdr.ipv4.protocol: exact;
            hdr.ipv4.srcAddr: ternary;
            hdr.ipv4.totalLen: range;
        }
        actions = {
            set_ttl(hdr.ipv4.ttl);
            NoAction;
        }
        const entries = {
            priority = 20: (Proto.TCP, 0x0A000000 &&& 0xFF000000, 0 .. 1500): set_ttl(64);
            priority = 10: (Proto.UDP, _, _): set_ttl(32);
            (Proto.UDP, 0x0B000000 &&& 0xFF000000, 64 .. 128): NoAction();
        }
        const default_action = NoAction();
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            drop();
            exit;
        }
        hash(meta.flow_hash, HashAlgorithm.crc16, 16w0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol }, 32w65536);
        meta.counter_index = (bit<32>) meta.flow_hash[7:0];
        port_counter.count((bit<32>) sm.ingress_port);
        rate.execute_meter(meta.counter_index[5:0] ++ 26w0, meta.color);
        if (route.apply().hit) {
            switch (classify.apply().action_run) {
                set_ttl: {
                    log_msg("ttl set for {}", { hdr.ipv4.dstAddr });
                }
                default: { }
            }
        } else {
            meta.learn.src = hdr.ethernet.src;
            meta.learn.port = sm.ingress_port;
            digest(1, meta.learn);
        }
        hdr.ipv4.ttl = decrement(hdr.ipv4.ttl);
        count_flow(seen_count);
        meta.seen = seen_count > 100 ? true : false;
        switch (meta.color) {
            2: { drop(); }
            0:
            1: { rewrite.apply(hdr.ethernet, 0x00_00_5e_00_53_01); }
        }
        if (hdr.mpls[0].isValid() && hdr.mpls[0].ttl != 0) {
            hdr.mpls[0].ttl = hdr.mpls[0].ttl |-| 1;
        }
        bit<16> r;
        random(r, 0, 1023);
        if (r == 0) {
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == 0) {
            truncate(64);
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
