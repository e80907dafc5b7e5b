// Every construct of the front end, in one program.
#include "mini_core.p4"
#include "mini_core.p4"   // guarded: included once

#define ETHERTYPE_IPV4 16w0x0800
#define TABLE_SIZE 1024
#define BIG_TABLE TABLE_SIZE

match_kind { range, optional }

typedef bit<48> mac_t;
type bit<32> ip4_t;
typedef bit mybit;

enum Color { Red, Green, Blue }
enum bit<8> Proto { TCP = 6, UDP = 17, }

const bit<16> TYPE_IPV4 = ETHERTYPE_IPV4;
const int<8> NEG = -8s5;
const bool DEBUG = true;

header ethernet_t {
    mac_t dst;
    mac_t src;
    bit<16> etherType;
}

header ipv4_t {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3> flags;
    bit<13> fragOffset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdrChecksum;
    ip4_t srcAddr;
    ip4_t dstAddr;
}

header vlan_t { bit<3> pcp; bit<1> cfi; bit<12> vid; bit<16> etherType; }

header_union ip_u { ipv4_t v4; }

struct headers_t {
    ethernet_t ethernet;
    vlan_t[2] vlan;
    ipv4_t ipv4;
}

struct meta_t {
    @name("m.flag") bit<1> flag;
    bit<32> counter_idx;
    tuple<bit<8>, bool> pair;
}

extern register<T> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}

extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}

enum CounterType { packets, bytes }

extern void mark_to_drop<M>(inout M meta);
extern bit<16> hash16<D>(in D data);

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta) {
    bit<16> tmp;
    const bit<8> LIMIT = 8w3;

    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            0x8100 &&& 0xEFFF: parse_vlan;
            0x0600 .. 0x06FF: accept;
            default: accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        tmp = pkt.lookahead<bit<16>>();
        verify(tmp != 0, error.NoMatch);
        transition select(hdr.vlan.last.etherType, tmp[15:8]) {
            (0x0800, _): parse_ipv4;
            (_, 8w0xFF): reject;
            (default, default): accept;
        }
    }

    @name(".parse_ipv4")
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        pkt.advance(32w0);
        transition accept;
    }

    state empty_state {
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta)(bit<32> instances) {
    register<bit<32>>(16) regs;
    counter(64, CounterType.packets) pkt_counter;
    bit<32> scratch = 0;

    action drop() {
        mark_to_drop(meta);
    }

    action set_port(bit<9> port, mac_t dmac) {
        hdr.ethernet.dst = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        meta.counter_idx = (bit<32>) port + 1;
    }

    @name("ingress.route")
    table route {
        key = {
            hdr.ipv4.dstAddr: lpm @name("dst");
            hdr.ethernet.etherType: exact;
        }
        actions = {
            set_port;
            drop();
            @defaultonly NoAction;
        }
        size = BIG_TABLE;
        const default_action = NoAction();
        support_timeout = true;
    }

    table acl {
        key = {
            hdr.ipv4.srcAddr: ternary;
            hdr.ipv4.protocol: range;
        }
        actions = { drop; NoAction; }
        default_action = drop;
        const entries = {
            (0x0A000000 &&& 0xFF000000, 6 .. 17): drop();
            priority = 10: (_, _): NoAction();
            @priority(3) (32w1, default): drop;
        }
    }

    table plain {
        actions = { .NoAction; }
        entries = {
            _ : NoAction();
        }
    }

    apply {
        bit<8> x = 8w5;
        const bit<8> y = 3;
        if (hdr.ipv4.isValid() && !(meta.flag == 1)) {
            route.apply();
        } else if (hdr.vlan[0].isValid()) {
            hdr.vlan[0].setInvalid();
        } else {
            exit;
        }
        if (x > y)
            x = x |+| 1;
        else
            x = x |-| 1;
        switch (acl.apply().action_run) {
            drop:
            NoAction: {
                regs.write(0, 1);
            }
            default: {
            }
        }
        if (route.apply().hit) {
            pkt_counter.count(meta.counter_idx);
        }
        meta.pair = {8w1, true};
        hdr.ethernet = {dst = 1, src = 2, etherType = 0x800};
        hdr.ipv4.hdrChecksum = hash16({hdr.ipv4.srcAddr, hdr.ipv4.dstAddr});
        scratch = (bit<32>) hdr.ipv4.srcAddr[15:0] ++ hdr.ipv4.dstAddr[31:16];
        scratch = scratch << 2 >> 1;
        scratch = x == 1 ? 32w1 : (x == 2 ? 32w2 : 32w3);
        regs.read(scratch, index = 1);
        mark_to_drop<meta_t>(meta);
        {
            ;
        }
        return;
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
    }
}

bit<8> max8(in bit<8> a, in bit<8> b) {
    return a > b ? a : b;
}

parser P<H, M>(packet_in pkt, out H hdr, inout M meta);
control C<H, M>(inout H hdr, inout M meta);
control D<H>(packet_out pkt, in H hdr);
package Pipeline<H, M>(P<H, M> p, C<H, M> c, D<H> d);

@pragma my_pragma 1 2 3
Pipeline(MyParser(), MyIngress(4), MyDeparser()) main;
