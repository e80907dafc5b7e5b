/* p4rt_replication.p4: multicast and cloning for the P4Runtime
 * replication-engine tests (tests/p4runtime_pre.rs).
 *
 * IPv4 to 10.0.0.255 is multicast to group 1; any other IPv4 packet goes
 * out of port 2 and is cloned (ingress to egress) to clone session 5.
 * What the groups and sessions contain is up to the controller.
 */
#include <core.p4>
#include <v1model.p4>

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

struct metadata { }

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

parser RParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control RVerify(inout headers hdr, inout metadata meta) { apply { } }

control RIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.ipv4.isValid()) {
            mark_to_drop(standard_metadata);
        } else if (hdr.ipv4.dstAddr == 0x0a0000ff) {
            standard_metadata.mcast_grp = 1;
        } else {
            standard_metadata.egress_spec = 2;
            clone(CloneType.I2E, 32w5);
        }
    }
}

control REgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        /* Tell the copies apart: the replica's rid in the TTL. */
        hdr.ipv4.ttl = (bit<8>) standard_metadata.egress_rid;
    }
}

control RCompute(inout headers hdr, inout metadata meta) { apply { } }

control RDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(RParser(), RVerify(), RIngress(), REgress(), RCompute(), RDeparser()) main;
