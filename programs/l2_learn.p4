/* l2_learn.p4: a learning Ethernet switch on v1model, driven over P4Runtime.
 *
 * The shape of the controller-learning exercises: a frame whose source MAC
 * is not in `smac` sends a `learn_t` digest (source MAC, ingress port) to
 * the controller, which answers by adding the MAC to `smac` and `dmac`.
 * `dmac` forwards known destinations and floods unknown ones to multicast
 * group 1. Two meters police traffic: `port_meter` (indexed by ingress
 * port) and `dmac_meter` (one per `dmac` entry); a red packet is dropped.
 *
 *   netsparse switch programs/l2_learn.p4 -i 1@veth1 -i 2@veth2 --grpc-server-addr 127.0.0.1:9559
 *   netsparse ctl 127.0.0.1:9559 mc_group_set 1 1 2
 *   netsparse ctl 127.0.0.1:9559 digest_watch learn_t 30   # print what the switch learns
 */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> macAddr_t;
typedef bit<9>  port_t;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

struct headers {
    ethernet_t ethernet;
}

/* What the controller learns from one frame. */
struct learn_t {
    macAddr_t srcAddr;
    port_t    ingress_port;
}

struct metadata {
    bit<32> port_color;
    bit<32> dmac_color;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    meter(512, MeterType.packets) port_meter;
    direct_meter<bit<32>>(MeterType.packets) dmac_meter;

    action learn() {
        digest<learn_t>(1, { hdr.ethernet.srcAddr, standard_metadata.ingress_port });
    }

    table smac {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { learn; NoAction; }
        default_action = learn();
        size = 4096;
    }

    action forward(port_t port) {
        standard_metadata.egress_spec = port;
        dmac_meter.read(meta.dmac_color);
    }

    action flood() {
        standard_metadata.mcast_grp = 1;
    }

    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; flood; }
        default_action = flood();
        meters = dmac_meter;
        size = 4096;
    }

    apply {
        smac.apply();
        dmac.apply();
        port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, meta.port_color);
        if (meta.port_color == V1MODEL_METER_COLOR_RED || meta.dmac_color == V1MODEL_METER_COLOR_RED) {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        /* Flooded copies do not go back out of the port they came in on. */
        if (standard_metadata.mcast_grp != 0 &&
            standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(
    MyParser(),
    MyVerifyChecksum(),
    MyIngress(),
    MyEgress(),
    MyComputeChecksum(),
    MyDeparser()
) main;
