/* <collective.p4>: collective externs, bundled with the compiler.
 *
 * The aggregator state of a block-sparse AllReduce (OmNICCL, Gu, Fei,
 * Canini, NAIC '24, section 2), as externs a NetSparseNic net_to_host
 * control or a NetSparseSwitch middle control calls in its per-PR part
 * (after Deconcatenate). The target keeps,
 * per round slot (a small window of rounds in flight):
 *   - the Block Merge list: the d smallest block indices voted so far
 *     (O(d) state; a worker's votes arrive in ascending order, so merging
 *     one vote message costs O(d));
 *   - d accumulators of the block size b (the round's sums);
 *   - round counters: votes, blocks and DONE markers received per round.
 * Everything a worker sends is a PR (so the NetSparse concatenation and
 * deconcatenation apply): pr.src = worker, pr.req_id = round, pr.tid = kind,
 * pr.idx = block index (or a count), payload = the block.
 *
 * The NetSparse SmartNIC (a NetSparseNic net_to_host control) and the
 * NetSparse switch's middle pipes (a NetSparseSwitch middle control, with a
 * collective configured by the control plane) provide them, in the per-PR
 * part only; the compiler refuses them in v1model, PSA and sPIN programs.
 *
 * Every extern that returns bit<8> returns COLL_OK, COLL_COMPLETE (the call
 * completed the round's phase) or COLL_REFUSED (unknown worker, round not in
 * the window, duplicate, block size mismatch, block not chosen): refused
 * calls change nothing and are counted by the target.
 */
#ifndef _COLLECTIVE_P4_
#define _COLLECTIVE_P4_

/* PR kinds (pr.tid). Worker -> aggregator: */
const bit<16> COLL_VOTE = 1;   /* NS_READ, idx = a nonzero block index (COLL_NONE: no more) */
const bit<16> COLL_BLOCK = 2;  /* NS_RESPONSE, idx = block index, payload = the block */
const bit<16> COLL_DONE = 3;   /* NS_READ, idx = blocks this worker sent in the round */
/* Aggregator -> workers: */
const bit<16> COLL_NEXT = 4;   /* NS_READ, idx = a block index chosen for the round */
const bit<16> COLL_SUM = 5;    /* NS_RESPONSE, idx = block index, payload = the sum */
/* The empty vote. */
const bit<64> COLL_NONE = 0xFFFFFFFFFFFFFFFF;

const bit<8> COLL_OK = 0;
const bit<8> COLL_COMPLETE = 1;
const bit<8> COLL_REFUSED = 2;

/* Block Merge: keep idx if it is among the d smallest voted in `round`.
 * COLL_COMPLETE once every worker's d votes are in. */
extern bit<8> VoteMerge(in bit<32> round, in bit<32> worker, in bit<64> idx);
/* Add the current PR's payload (len bytes, little-endian 32-bit words,
 * wrapping) into round's accumulator of block idx, once per worker.
 * COLL_COMPLETE when the round has every block and every worker's DONE. */
extern bit<8> BlockAccumulate(in bit<32> round, in bit<32> worker, in bit<64> idx, in bit<32> len);
/* `worker` sent `count` blocks in `round`. COLL_COMPLETE as above. */
extern bit<8> RoundDone(in bit<32> round, in bit<32> worker, in bit<64> count);
/* Send the round's chosen indices (COLL_NEXT PRs) to every worker, as soon
 * as the window has a slot for the next round's votes. */
extern void SendIndices(in bit<32> round);
/* Send the round's sums (COLL_SUM PRs) to every worker; frees the slot. */
extern void SendSums(in bit<32> round);

#endif /* _COLLECTIVE_P4_ */
