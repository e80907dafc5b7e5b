/* <spin.p4>: the sPIN SmartNIC architecture, bundled with the compiler.
 *
 * sPIN (Hoefler et al., SC17) runs short message handlers on the NIC's
 * handler processing units (HPUs):
 *
 *   - the header handler runs once per message, before any payload handler,
 *     on the first packet of the message that arrives; it returns
 *       SPIN_PROCESS_DATA  run the payload handlers (the default),
 *       SPIN_PROCEED       no handlers: deposit the payload at the host
 *                          address in the message's user header (a plain
 *                          RDMA put),
 *       SPIN_DROP          drop the whole message (its bytes count as dropped);
 *   - the payload handler runs once per packet, on any free HPU, in any
 *     order; SPIN_DROP drops this packet's bytes;
 *   - the completion handler runs once per message, after every payload
 *     handler of the message finished (or after the message timed out),
 *     with md.dropped_bytes, md.flow_control and md.timed_out set; it
 *     returns SPIN_SUCCESS or SPIN_FAIL.
 *
 * Per-message handler state: the package's type S. The firmware keeps one
 * S per message in its message table (installed by the message's first
 * packet), zeroes it before the header handler, and hands it to every
 * handler of the message. Handlers of one message never run at the same
 * instant in the behavioural model, so plain updates of `st` are atomic;
 * state shared between messages lives in HPU memory (HpuFetchAdd,
 * HpuCompareSwap) or in P4 registers.
 *
 * The match table from match bits to handler state is an ordinary P4 table
 * the header handler applies, keyed on msg.match_bits and filled by the
 * control plane (netsparse nic --entries): its action writes `st`.
 *
 * Each handler's time on its HPU is its operation count (statements run,
 * as counted by the engine) times the configured cycles per operation,
 * plus the cost of its externs (blocking DMA waits, element-wise work), at
 * the HPU clock. A handler that exceeds the cycle budget is stopped and
 * counted; the rest of its packet counts as dropped.
 *
 * Loops are not needed for the usual handlers: the bounded element-wise
 * externs (DmaScatterStrided, DmaAccumulate) do per-element work over one
 * packet's payload.
 */
#ifndef _SPIN_P4_
#define _SPIN_P4_

#include <core.p4>

/* The message header: the same in every packet of a message. */
struct spin_msg_t {
    bit<32> src;         /* sending node */
    bit<32> msg_id;      /* message id, unique per sender */
    bit<64> match_bits;  /* what the match table is keyed on */
    bit<32> length;      /* message length in bytes */
    bit<64> user;        /* the sender's 8-byte user header */
}

/* The packet a payload handler runs on. */
struct spin_pkt_t {
    bit<32> offset;      /* offset of this payload in the message */
    bit<32> length;      /* payload bytes in this packet */
    bit<32> seq;         /* packet number in the message */
}

/* Handler metadata. */
struct spin_md_t {
    bit<8>  rc;            /* return code, SPIN_* */
    bit<32> node;          /* this NIC's node id (read-only) */
    bit<16> hpu;           /* the HPU running the handler (read-only) */
    bit<32> dropped_bytes; /* completion: payload bytes not processed */
    bit<1>  flow_control;  /* completion: packets dropped, no HPU was free */
    bit<1>  timed_out;     /* completion: not every packet arrived in time */
}

const bit<8> SPIN_SUCCESS      = 0;
const bit<8> SPIN_PROCESS_DATA = 1;
const bit<8> SPIN_PROCEED      = 2;
const bit<8> SPIN_DROP         = 3;
const bit<8> SPIN_FAIL         = 4;

/* DmaAccumulate element kinds. */
const bit<8> SPIN_ACC_U32 = 0;
const bit<8> SPIN_ACC_U64 = 1;
const bit<8> SPIN_ACC_F32 = 2;

/* Host memory by DMA. Payload handlers only (they read the packet):
 * payload bytes [pl_offset, pl_offset + len) to host_addr. The blocking
 * form waits for the write (the DMA latency is handler time); the
 * non-blocking form only issues it. */
extern void DmaToHost(in bit<64> host_addr, in bit<32> pl_offset, in bit<32> len);
extern void DmaToHostNB(in bit<64> host_addr, in bit<32> pl_offset, in bit<32> len);
/* Blocking 8-byte read of host memory (little-endian). */
extern bit<64> DmaFromHost(in bit<64> host_addr);

/* Atomics on host memory (8-byte little-endian words); return the old value. */
extern bit<64> HostFetchAdd(in bit<64> host_addr, in bit<64> v);
extern bit<64> HostCompareSwap(in bit<64> host_addr, in bit<64> expected, in bit<64> desired);
/* Atomics on HPU memory: a register array of 64-bit words shared by every
 * handler; return the old value. */
extern bit<64> HpuFetchAdd(in bit<32> word, in bit<64> v);
extern bit<64> HpuCompareSwap(in bit<32> word, in bit<64> expected, in bit<64> desired);

/* Payload handlers only: send this packet's payload to dst_node as the
 * packet at the same offset of a message of the same length (same message
 * id, this node as the source) with the given match bits. */
extern void PutFromDevice(in bit<32> dst_node, in bit<64> match_bits);
/* Read len bytes of host memory by DMA and send them to dst_node as a new
 * message with the given match bits (its user header is host_addr). */
extern void PutFromHost(in bit<32> dst_node, in bit<64> match_bits, in bit<64> host_addr, in bit<32> len);

/* Add v to NIC counter `index` (read with the NIC's statistics). */
extern void SpinCount(in bit<32> index, in bit<64> v);

/* Bounded element-wise externs, payload handlers only. The payload is
 * bytes [stream_offset, stream_offset + len) of a contiguous stream; stream
 * byte k goes to host_base + (k / block) * stride + k % block. */
extern void DmaScatterStrided(in bit<64> host_base, in bit<32> stream_offset, in bit<32> block, in bit<32> stride);
/* host[i] += payload[i] element-wise from host_addr (kind: SPIN_ACC_*). */
extern void DmaAccumulate(in bit<64> host_addr, in bit<8> kind);

control HeaderHandler<S>(in spin_msg_t msg, inout S st, inout spin_md_t md);
control PayloadHandler<S>(in spin_msg_t msg, in spin_pkt_t pkt, inout S st, inout spin_md_t md);
control CompletionHandler<S>(in spin_msg_t msg, inout S st, inout spin_md_t md);

/* A sPIN SmartNIC. */
package SpinNic<S>(HeaderHandler<S> header_handler,
                   PayloadHandler<S> payload_handler,
                   CompletionHandler<S> completion_handler);

#endif /* _SPIN_P4_ */
