/* <netsparse.p4>: the NetSparse architecture, bundled with the compiler.
 *
 * NetSparse (MICRO '25) extends a Tofino-like switch with "middle pipes"
 * between two crossbars (Section 6.2.1, Figure 8):
 *
 *   ingress pipe --crossbar 1--> middle pipe --crossbar 2--> egress pipe
 *
 * Every ingress pipe runs the same ingress parser/control/deparser, every
 * middle pipe the same middle control, every egress pipe the same egress
 * parser/control/deparser. Crossbar 1 sends a NetSparse *response* packet to
 * the middle pipe with the index of its ingress pipe, and a *read* packet (and
 * any other packet) to the middle pipe with the index of its egress pipe.
 *
 * A middle pipe holds a Deconcatenator, a Property Cache and a Concatenator.
 * The middle control is written as
 *
 *     apply {
 *         ...                         // once per NetSparse packet
 *         Deconcatenate(pr, md);      // the rest runs once per PR:
 *         ...                         //   per-PR statements / per-PR controls
 *         Concatenate(pr, md);        //   queue the PR for (md.pr_type, md.dst)
 *     }
 *
 * Packets that are not NetSparse pass through middle pipes unchanged. PRs are
 * re-concatenated per (type, destination): a Concatenation Queue leaves as one
 * packet when it is full (MTU) or when its first PR has waited DelayCycles.
 */
#ifndef _NETSPARSE_P4_
#define _NETSPARSE_P4_

#include <core.p4>

/* A switch port number. */
typedef bit<16> ns_port_t;

/* RoCEv2 UDP destination port: NetSparse rides on RDMA (Section 6.1.1). */
const bit<16> NS_ROCEV2_UDP_PORT = 4791;
/* Concatenation-layer PR types. */
const bit<16> NS_READ = 1;
const bit<16> NS_RESPONSE = 2;

/* InfiniBand Base Transport Header, 12 bytes. */
header ns_bth_h {
    bit<8>  opcode;
    bit<1>  solicited;
    bit<1>  mig_req;
    bit<2>  pad_count;
    bit<4>  tver;
    bit<16> pkey;
    bit<8>  reserved0;
    bit<24> dst_qp;
    bit<1>  ack_req;
    bit<7>  reserved1;
    bit<24> psn;
}

/* Concatenation layer, 14 bytes (Figure 6). */
header ns_concat_h {
    bit<16> pr_type;   /* NS_READ or NS_RESPONSE */
    bit<32> dst;       /* destination node */
    bit<32> prop_len;  /* property length in bytes, same for every PR */
    bit<32> num_prs;   /* PRs that follow */
}

/* PR layer, 18 bytes per PR (Figure 6); a response's payload (prop_len
 * bytes) follows its header. */
header ns_pr_h {
    bit<32> src;       /* source node */
    bit<16> tid;       /* source RIG unit */
    bit<64> idx;       /* property index */
    bit<32> req_id;    /* request id */
}

/* Standard metadata of the ingress and egress pipes. */
struct ns_switch_md_t {
    ns_port_t ingress_port;   /* port the packet arrived on */
    ns_port_t egress_spec;    /* set by the ingress control: where it goes */
    ns_port_t egress_port;    /* egress pipes: the port it leaves on */
    bool      drop;           /* set to drop the packet */
    bit<32>   packet_length;  /* frame length in bytes */
    error     parser_error;   /* error of the pipe's parser */
}

/* Per-PR metadata in a middle pipe. Before Deconcatenate it describes the
 * packet; after, the current PR. */
struct ns_pr_md_t {
    bit<16>   pr_type;        /* NS_READ or NS_RESPONSE */
    bit<32>   dst;            /* destination node */
    bit<32>   prop_len;       /* property length in bytes */
    ns_port_t ingress_port;   /* port the packet arrived on */
    ns_port_t egress_port;    /* initially the ingress pipe's egress_spec */
    bool      drop;           /* set to drop this PR (or, before Deconcatenate, the packet) */
}

/* Middle pipes only. Starts the per-PR part of the middle control: `pr` and
 * `md` hold each PR of the packet in turn. Must appear once, at the top level
 * of the middle control's apply block. */
extern void Deconcatenate(inout ns_pr_h pr, inout ns_pr_md_t md);

/* Middle pipes only. Ends the per-PR part: queues the PR (unless md.drop) in
 * the Concatenation Queue of (md.pr_type, md.dst), leaving on md.egress_port.
 * Must be the last statement of the middle control's apply block. */
extern void Concatenate(in ns_pr_h pr, in ns_pr_md_t md);

/* Per-PR part only. Probes the middle pipe's Property Cache with pr.idx;
 * on a hit the PR's payload becomes the cached property (md.prop_len bytes)
 * and the call returns true. */
extern bool Lookup(in ns_pr_h pr, in ns_pr_md_t md);

/* Per-PR part only. Stores the current response PR's payload in the middle
 * pipe's Property Cache under pr.idx (no change if present; LRU eviction). */
extern void Insert(in ns_pr_h pr, in ns_pr_md_t md);

parser NsIngressParser<H, M>(packet_in pkt, out H hdr, inout M meta, inout ns_switch_md_t md);
control NsIngress<H, M>(inout H hdr, inout M meta, inout ns_switch_md_t md);
control NsIngressDeparser<H>(packet_out pkt, in H hdr);
control NsMiddle(inout ns_pr_h pr, inout ns_pr_md_t md);
parser NsEgressParser<H, M>(packet_in pkt, out H hdr, inout M meta, inout ns_switch_md_t md);
control NsEgress<H, M>(inout H hdr, inout M meta, inout ns_switch_md_t md);
control NsEgressDeparser<H>(packet_out pkt, in H hdr);

/* The NetSparse switch (a ToR with middle pipes). */
package NetSparseSwitch<IH, IM, EH, EM>(
    NsIngressParser<IH, IM> ingress_parser,
    NsIngress<IH, IM> ingress,
    NsIngressDeparser<IH> ingress_deparser,
    NsMiddle middle,
    NsEgressParser<EH, EM> egress_parser,
    NsEgress<EH, EM> egress,
    NsEgressDeparser<EH> egress_deparser);

/* ------------------------------------------------------------------------
 * The RIG extension: the NetSparse SmartNIC (Sections 4 and 5, Figures 3-5).
 *
 * A host posts RIG commands {idx address, destination address, count,
 * property size}; client RIG units DMA the idxs into their Idx Buffers and
 * run the NIC program's host-to-net control once per idx; server RIG units
 * and the receive path run its net-to-host control once per received PR.
 * The program decides filtering, coalescing, the destination node and what
 * is sent; the firmware provides the units (Idx Filter, Pending PR Table,
 * host memory through DMA, Concatenator, Deconcatenator), the verbs-like host
 * API, completions and the watchdog.
 *
 *   host_to_net  (once per idx read by a client RIG unit)
 *     apply {
 *         ...                        // per idx: pr = {src = this node,
 *                                    //   tid = unit, idx, req_id = 0},
 *                                    //   md = {NS_READ, dst 0, prop_len}
 *         Concatenate(pr, md);       // queue the read PR unless md.drop
 *     }
 *   net_to_host  (once per received NetSparse packet)
 *     apply {
 *         ...                        // per packet
 *         Deconcatenate(pr, md);     // per PR:
 *         ...                        //   reads: HostRead + turn into a response
 *                                    //   responses: PendingComplete, HostWrite
 *         Concatenate(pr, md);       //   queue unless md.drop (consumed)
 *     }
 * ------------------------------------------------------------------------ */

/* The destination solver of a NIC program is an ordinary table with a
 * `range` key on pr.idx (<v1model.p4> declares the same match kind). */
match_kind {
    range      /* lo <= key <= hi */
}

/* rig.outcome values: what the host-to-net control decided for an idx. */
const bit<8> NS_ISSUED = 0;     /* a read PR was issued */
const bit<8> NS_FILTERED = 1;   /* dropped: the Idx Filter says it was fetched */
const bit<8> NS_COALESCED = 2;  /* dropped: a PR for it is outstanding in this unit */
const bit<8> NS_LOCAL = 3;      /* dropped: the property is local */
const bit<8> NS_UNROUTABLE = 4; /* dropped: no node owns the idx (destination
                                   solver miss); the command fails */

/* Per-PR metadata of the RIG extension. The firmware sets node, unit and
 * command before every run (writes to them are ignored) and reads outcome
 * after a host-to-net run (per-command statistics). In net-to-host, unit is
 * the server unit serving a read, or pr.tid for a response. */
struct ns_rig_md_t {
    bit<32> node;      /* this NIC's node id (read-only) */
    bit<16> unit;      /* the RIG unit running the control (read-only) */
    bit<32> command;   /* host-to-net: the RIG command being served (read-only) */
    bit<8>  outcome;   /* host-to-net: NS_ISSUED, NS_FILTERED, ... (statistics) */
}

/* The RIG externs take their operands from their arguments (so a per-PR
 * sub-control working on copies of pr/md is correct); a PR's payload is
 * firmware state of the PR being processed. */

/* Idx Filter (shared by the client units, in NIC DRAM): has the property of
 * `idx` already been fetched and written to host memory? */
extern bool IdxFilterTest(in bit<64> idx);
/* Mark the property of `idx` as fetched. */
extern void IdxFilterSet(in bit<64> idx);
/* This RIG unit's Pending PR Table: is a PR for `idx` outstanding? */
extern bool PendingContains(in bit<64> idx);
/* Host-to-net only: register a PR for pr.idx in this unit's Pending PR Table
 * on behalf of the command being served; writes the request id into
 * pr.req_id. The unit stalls (never drops) while its table is full: the
 * firmware abandons the run and runs the control again for the same idx
 * once an entry is free, so everything before PendingInsert must be free of
 * side effects that matter (tests, table lookups). */
extern void PendingInsert(inout ns_pr_h pr);
/* Net-to-host, responses: retire the pending entry of (pr.tid, pr.req_id) if
 * it is outstanding, is for pr.idx, and its command's property size is
 * md.prop_len. False for unknown, stale or duplicate responses and for
 * mismatches (counted by the firmware; nothing changes). */
extern bool PendingComplete(in ns_pr_h pr, in ns_pr_md_t md);
/* Net-to-host, reads: the PR's payload becomes the local property pr.idx
 * (md.prop_len bytes) read from host memory by DMA. False if idx is not in
 * this node's slice (counted; the caller should drop the PR). */
extern bool HostRead(in ns_pr_h pr, in ns_pr_md_t md);
/* Net-to-host, responses: DMA the payload into the destination buffer of
 * the command that issued request (pr.tid, pr.req_id) — retired by
 * PendingComplete on this PR, or still pending — at the slot of pr.idx
 * (dest_addr + pr.idx * property size). Refused and counted otherwise. */
extern void HostWrite(in ns_pr_h pr, in ns_pr_md_t md);

control NsNicHostToNet(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig);
control NsNicNetToHost(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig);

/* The NetSparse SmartNIC. */
package NetSparseNic(NsNicHostToNet host_to_net, NsNicNetToHost net_to_host);

#endif /* _NETSPARSE_P4_ */
