/* <v1model.p4>: the v1model architecture (BMv2 simple_switch), bundled with
 * the NetSparse compiler.
 *
 * Written for this project. It declares the types, externs and package that
 * P4 programmers know from p4c's v1model, with the same names, so that the
 * usual v1model programs compile unchanged. Externs the NetSparse switch does
 * not implement (action_profile, action_selector) are declared so that a
 * program using them gets a clear diagnostic rather than "undefined name".
 *
 * A v1model program runs on the switch's single-pipe mode:
 *
 *   Parser -> VerifyChecksum -> Ingress -> (queue) -> Egress
 *          -> ComputeChecksum -> Deparser
 */
#ifndef _V1MODEL_P4_
#define _V1MODEL_P4_

#include <core.p4>

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20200408
#endif
/* A program may pick the version before including this file; only the two
 * versions of v1model that exist are meaningful. */
#if V1MODEL_VERSION != 20180101 && V1MODEL_VERSION != 20200408
#error "unsupported V1MODEL_VERSION: v1model has versions 20180101 and 20200408"
#endif

/* Extra match kinds of v1model. `selector` needs an action_selector, which
 * this target does not implement. */
match_kind {
    range,     /* lo <= key <= hi */
    optional,  /* exact, or wildcard */
    selector   /* member selection of an action_selector */
}

/* A port number: 9 bits on simple_switch. */
typedef bit<9>  PortId_t;
/* A multicast group id. */
typedef bit<16> MulticastGroup_t;
/* A clone (mirror) session id. */
typedef bit<32> CloneSessionId_t;

/* Writing 511 to egress_spec drops the packet. */
#define V1MODEL_DROP_PORT 511

/* Per-packet intrinsic metadata, shared by every block of the pipeline. */
struct standard_metadata_t {
    PortId_t ingress_port;              /* port the packet arrived on */
    PortId_t egress_spec;               /* set by ingress: the output port (511 drops) */
    PortId_t egress_port;               /* in egress: the port the packet leaves on */
    bit<32>  instance_type;             /* normal, clone, resubmit, recirculate... */
    bit<32>  packet_length;             /* bytes */
    bit<32>  enq_timestamp;             /* microseconds, when enqueued */
    bit<19>  enq_qdepth;                /* queue depth when enqueued */
    bit<32>  deq_timedelta;             /* microseconds spent in the queue */
    bit<19>  deq_qdepth;                /* queue depth when dequeued */
    bit<48>  ingress_global_timestamp;  /* microseconds, start of ingress */
    bit<48>  egress_global_timestamp;   /* microseconds, start of egress */
    bit<16>  mcast_grp;                 /* multicast group, 0 for none */
    bit<16>  egress_rid;                /* replication id of a multicast copy */
    bit<1>   checksum_error;            /* set by verify_checksum on a mismatch */
    error    parser_error;              /* the parser's error */
    bit<3>   priority;                  /* queue priority */
}

/* What a counter counts. */
enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

/* What a meter measures. */
enum MeterType {
    packets,
    bytes
}

/* Meter colours written by execute_meter and direct_meter.read. */
#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/* An array of `size` counters, indexed by I. */
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}

/* One counter per entry of the table that lists it in `counters = ...`;
 * the entry's counter counts every hit. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

/* An array of `size` two-rate three-colour meters (RFC 2698). */
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}

/* One meter per entry of the table that lists it in `meters = ...`. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An array of `size` cells of type T, indexed by I; state kept across packets. */
extern register<T, I> {
    register(bit<32> size);
    @noSideEffects
    T read(in I index);
    void read(out T result, in I index);
    void write(in I index, in T value);
}

/* Action profiles and selectors (not implemented by this target: a table
 * with `implementation = ...` is rejected). */
extern action_profile {
    action_profile(bit<32> size);
}

/* A uniformly random value in [lo, hi] (seeded: runs are reproducible). */
extern void random<T>(out T result, in T lo, in T hi);

/* Send `data` (a struct) to the control plane. */
extern void digest<T>(in bit<32> receiver, in T data);

/* Hash and checksum algorithms. */
enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

/* Drop the packet at the end of the current control. */
extern void mark_to_drop(inout standard_metadata_t standard_metadata);
/* The same, in the form of p4c's early v1model (before V1MODEL_VERSION
 * 20180101): it acts on the packet's standard metadata. */
@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/* result = base + (hash of data) % max; max == 0: no modulo. */
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

/* Clone flavours: ingress-to-egress and egress-to-egress. */
enum CloneType {
    I2E,
    E2E
}

/* In VerifyChecksum: if `condition`, check that `checksum` is the checksum of
 * `data` (a list of fields); on a mismatch set standard_metadata.checksum_error. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* In ComputeChecksum: if `condition`, write the checksum of `data` into `checksum`. */
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* As verify_checksum, also covering the payload after the parsed headers. */
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* As update_checksum, also covering the payload after the parsed headers. */
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Send the packet through the ingress parser again, keeping the user
 * metadata fields annotated @field_list(index). */
extern void resubmit_preserving_field_list(bit<8> index);

/* After the deparser, send the packet through the pipeline again, keeping the
 * user metadata fields annotated @field_list(index). */
extern void recirculate_preserving_field_list(bit<8> index);

/* Make a copy of the packet for mirror session `session`. */
extern void clone(in CloneType type, in bit<32> session);

/* As clone, keeping the user metadata fields annotated @field_list(index). */
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* The packet leaves with at most `length` bytes. */
extern void truncate(in bit<32> length);

/* A false check is logged and counted, and the packet is dropped. */
extern void assert(in bool check);

/* As assert on this target. */
extern void assume(in bool check);

/* Log a message; `{}` in `msg` is replaced by the fields of `data` in order. */
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The blocks of a v1model pipeline. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);
control VerifyChecksum<H, M>(inout H hdr, inout M meta);
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control ComputeChecksum<H, M>(inout H hdr, inout M meta);
control Deparser<H>(packet_out b, in H hdr);

/* The v1model switch: `V1Switch(MyParser(), ..., MyDeparser()) main;` */
package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif /* _V1MODEL_P4_ */
