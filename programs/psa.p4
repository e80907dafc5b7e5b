/* <psa.p4>: the Portable Switch Architecture (P4.org PSA specification
 * v1.2), bundled with the NetSparse compiler.
 *
 * Written for this project from the specification's definitions: the type,
 * field, enum-member and extern names are the specification's so that PSA
 * programs compile unchanged. Widths are those of BMv2's psa_switch (32-bit
 * ports, 16-bit clone sessions). A PSA program runs on the `psa_switch`
 * target:
 *
 *   IngressParser -> Ingress -> IngressDeparser -> packet replication
 *     (unicast / multicast / drop, clone I2E, resubmit)
 *   -> EgressParser -> Egress -> EgressDeparser
 *     (clone E2E, recirculate, or out on a port)
 *
 * Externs this target does not implement yet (Hash, Checksum,
 * InternetChecksum, Random, Digest, ActionProfile, ActionSelector, and the
 * colour-aware `execute(index, color)` of the meters) are declared so that a program using them gets a clear
 * "declared but not implemented" diagnostic rather than "undefined name".
 */
#ifndef _PORTABLE_SWITCH_ARCHITECTURE_P4_
#define _PORTABLE_SWITCH_ARCHITECTURE_P4_

#include <core.p4>

/* The numeric representations of the PSA types on BMv2. */
typedef bit<32> PortIdUint_t;
typedef bit<32> MulticastGroupUint_t;
typedef bit<16> CloneSessionIdUint_t;
typedef bit<8>  ClassOfServiceUint_t;
typedef bit<16> PacketLengthUint_t;
typedef bit<16> EgressInstanceUint_t;
typedef bit<64> TimestampUint_t;

type PortIdUint_t         PortId_t;
type MulticastGroupUint_t MulticastGroup_t;
type CloneSessionIdUint_t CloneSessionId_t;
type ClassOfServiceUint_t ClassOfService_t;
type PacketLengthUint_t   PacketLength_t;
type EgressInstanceUint_t EgressInstance_t;
type TimestampUint_t      Timestamp_t;
typedef error ParserError_t;

/* The same representations, as the control plane sees them. */
typedef bit<32> PortIdInHeader_t;
typedef bit<32> MulticastGroupInHeader_t;
typedef bit<16> CloneSessionIdInHeader_t;
typedef bit<8>  ClassOfServiceInHeader_t;
typedef bit<16> PacketLengthInHeader_t;
typedef bit<16> EgressInstanceInHeader_t;
typedef bit<64> TimestampInHeader_t;

/* Special ports and sessions (BMv2's values). */
const PortId_t PSA_PORT_RECIRCULATE = (PortId_t) 32w0xfffffffa;
const PortId_t PSA_PORT_CPU = (PortId_t) 32w0xfffffffd;
const CloneSessionId_t PSA_CLONE_SESSION_TO_CPU = (CloneSessionId_t) 16w0;

/* Extra match kinds of PSA. */
match_kind {
    range,     /* lo <= key <= hi */
    selector,  /* member selection of an ActionSelector */
    optional   /* exact, or wildcard */
}

/* How a packet reached the parser or control that sees it. */
enum PSA_PacketPath_t {
    NORMAL,            /* arrived on a port */
    NORMAL_UNICAST,    /* from ingress, to one port */
    NORMAL_MULTICAST,  /* a copy of a multicast group */
    CLONE_I2E,         /* an ingress-to-egress clone */
    CLONE_E2E,         /* an egress-to-egress clone */
    RESUBMIT,          /* resubmitted from the ingress deparser */
    RECIRCULATE        /* recirculated from the egress deparser */
}

struct psa_ingress_parser_input_metadata_t {
    PortId_t         ingress_port;
    PSA_PacketPath_t packet_path;
}

struct psa_egress_parser_input_metadata_t {
    PortId_t         egress_port;
    PSA_PacketPath_t packet_path;
}

struct psa_ingress_input_metadata_t {
    PortId_t         ingress_port;
    PSA_PacketPath_t packet_path;
    Timestamp_t      ingress_timestamp;
    ParserError_t    parser_error;
}

/* Initial values at the start of Ingress: drop true, everything else
 * false or 0. */
struct psa_ingress_output_metadata_t {
    ClassOfService_t class_of_service;
    bool             clone;
    CloneSessionId_t clone_session_id;
    bool             drop;
    bool             resubmit;
    MulticastGroup_t multicast_group;
    PortId_t         egress_port;
}

struct psa_egress_input_metadata_t {
    ClassOfService_t class_of_service;
    PortId_t         egress_port;
    PSA_PacketPath_t packet_path;
    EgressInstance_t instance;
    Timestamp_t      egress_timestamp;
    ParserError_t    parser_error;
}

struct psa_egress_deparser_input_metadata_t {
    PortId_t egress_port;
}

/* Initial values at the start of Egress: all false or 0. */
struct psa_egress_output_metadata_t {
    bool             clone;
    CloneSessionId_t clone_session_id;
    bool             drop;
}

/* What the deparsers ask for (the specification's helper functions). */
bool psa_clone_i2e(in psa_ingress_output_metadata_t istd) {
    return istd.clone;
}

bool psa_resubmit(in psa_ingress_output_metadata_t istd) {
    return !istd.drop && istd.resubmit;
}

bool psa_normal(in psa_ingress_output_metadata_t istd) {
    return !istd.drop && !istd.resubmit;
}

bool psa_clone_e2e(in psa_egress_output_metadata_t istd) {
    return istd.clone;
}

bool psa_recirculate(in psa_egress_output_metadata_t istd,
                     in psa_egress_deparser_input_metadata_t edstd) {
    return !istd.drop && edstd.egress_port == PSA_PORT_RECIRCULATE;
}

/* The specification's helper actions. */
action send_to_port(inout psa_ingress_output_metadata_t meta, in PortId_t egress_port) {
    meta.drop = false;
    meta.multicast_group = (MulticastGroup_t) 32w0;
    meta.egress_port = egress_port;
}

action multicast(inout psa_ingress_output_metadata_t meta, in MulticastGroup_t multicast_group) {
    meta.drop = false;
    meta.multicast_group = multicast_group;
}

action ingress_drop(inout psa_ingress_output_metadata_t meta) {
    meta.drop = true;
}

action egress_drop(inout psa_egress_output_metadata_t meta) {
    meta.drop = true;
}

extern void assert(in bool check);
extern void assume(in bool check);

/* The fixed-function blocks between the pipelines. */
extern PacketReplicationEngine {
    PacketReplicationEngine();
}

extern BufferingQueueingEngine {
    BufferingQueueingEngine();
}

enum PSA_HashAlgorithm_t {
    IDENTITY,
    CRC32,
    CRC32_CUSTOM,
    CRC16,
    CRC16_CUSTOM,
    ONES_COMPLEMENT16,
    TARGET_DEFAULT
}

extern Hash<O> {
    Hash(PSA_HashAlgorithm_t algo);
    O get_hash<D>(in D data);
    O get_hash<T, D>(in T base, in D data, in T max);
}

extern Checksum<W> {
    Checksum(PSA_HashAlgorithm_t hash);
    void clear();
    void update<T>(in T data);
    W    get();
}

extern InternetChecksum {
    InternetChecksum();
    void clear();
    void add<T>(in T data);
    void subtract<T>(in T data);
    bit<16> get();
    bit<16> get_state();
    void set_state(in bit<16> checksum_state);
}

enum PSA_CounterType_t {
    PACKETS,
    BYTES,
    PACKETS_AND_BYTES
}

/* Indexed counters: `count(index)` adds the packet (and/or its bytes) to
 * cell `index`; an index out of range is counted and ignored. */
extern Counter<W, S> {
    Counter(bit<32> n_counters, PSA_CounterType_t type);
    void count(in S index);
}

/* A table's per-entry counter (counts every hit of its table). */
extern DirectCounter<W> {
    DirectCounter(PSA_CounterType_t type);
    void count();
}

enum PSA_MeterType_t {
    PACKETS,
    BYTES
}

/* Meter results. (The specification lists RED, GREEN, YELLOW; the enum
 * is not serializable, so its numbering is the target's: this one follows
 * the engine's meters, 0 green, 1 yellow, 2 red.) */
enum PSA_MeterColor_t { GREEN, YELLOW, RED }

extern Meter<S> {
    Meter(bit<32> n_meters, PSA_MeterType_t type);
    PSA_MeterColor_t execute(in S index, in PSA_MeterColor_t color);
    PSA_MeterColor_t execute(in S index);
}

extern DirectMeter {
    DirectMeter(PSA_MeterType_t type);
    PSA_MeterColor_t execute(in PSA_MeterColor_t color);
    PSA_MeterColor_t execute();
}

/* Register arrays: a read out of range gives 0, a write out of range does
 * nothing (both counted). */
extern Register<T, S> {
    Register(bit<32> size);
    Register(bit<32> size, T initial_value);
    T    read(in S index);
    void write(in S index, in T value);
}

extern Random<T> {
    Random(T min, T max);
    T read();
}

extern ActionProfile {
    ActionProfile(bit<32> size);
}

extern ActionSelector {
    ActionSelector(PSA_HashAlgorithm_t algo, bit<32> size, bit<32> outputWidth);
}

extern Digest<T> {
    Digest();
    void pack(in T data);
}

/* The programmable blocks. */
parser IngressParser<H, M, RESUBM, RECIRCM>(
    packet_in buffer,
    out H parsed_hdr,
    inout M user_meta,
    in psa_ingress_parser_input_metadata_t istd,
    in RESUBM resubmit_meta,
    in RECIRCM recirculate_meta);

control Ingress<H, M>(
    inout H hdr, inout M user_meta,
    in    psa_ingress_input_metadata_t  istd,
    inout psa_ingress_output_metadata_t ostd);

control IngressDeparser<H, M, CI2EM, RESUBM, NM>(
    packet_out buffer,
    out CI2EM clone_i2e_meta,
    out RESUBM resubmit_meta,
    out NM normalized_meta,
    inout H hdr,
    in M meta,
    in psa_ingress_output_metadata_t istd);

parser EgressParser<H, M, NM, CI2EM, CE2EM>(
    packet_in buffer,
    out H parsed_hdr,
    inout M user_meta,
    in psa_egress_parser_input_metadata_t istd,
    in NM normalized_meta,
    in CI2EM clone_i2e_meta,
    in CE2EM clone_e2e_meta);

control Egress<H, M>(
    inout H hdr, inout M user_meta,
    in    psa_egress_input_metadata_t  istd,
    inout psa_egress_output_metadata_t ostd);

control EgressDeparser<H, M, CE2EM, RECIRCM>(
    packet_out buffer,
    out CE2EM clone_e2e_meta,
    out RECIRCM recirculate_meta,
    inout H hdr,
    in M meta,
    in psa_egress_output_metadata_t istd,
    in psa_egress_deparser_input_metadata_t edstd);

package IngressPipeline<IH, IM, NM, CI2EM, RESUBM, RECIRCM>(
    IngressParser<IH, IM, RESUBM, RECIRCM> ip,
    Ingress<IH, IM> ig,
    IngressDeparser<IH, IM, CI2EM, RESUBM, NM> id);

package EgressPipeline<EH, EM, NM, CI2EM, CE2EM, RECIRCM>(
    EgressParser<EH, EM, NM, CI2EM, CE2EM> ep,
    Egress<EH, EM> eg,
    EgressDeparser<EH, EM, CE2EM, RECIRCM> ed);

/* `main`: IngressPipeline(...) ip; EgressPipeline(...) ep;
 *         PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main; */
package PSA_Switch<IH, IM, EH, EM, NM, CI2EM, CE2EM, RESUBM, RECIRCM>(
    IngressPipeline<IH, IM, NM, CI2EM, RESUBM, RECIRCM> ingress,
    PacketReplicationEngine pre,
    EgressPipeline<EH, EM, NM, CI2EM, CE2EM, RECIRCM> egress,
    BufferingQueueingEngine bqe);

#endif /* _PORTABLE_SWITCH_ARCHITECTURE_P4_ */
