/* omniccl_agg.p4: the OmNICCL aggregator (Gu, Fei, Canini, NAIC '24,
 * section 2) on the NetSparse SmartNIC, with the externs of
 * <collective.p4>.
 *
 * Each round has three pipelined phases:
 *   vote    every worker sends the indices of its next d nonzero blocks
 *           (COLL_VOTE PRs, ascending, COLL_NONE when it has no more);
 *           VoteMerge keeps the d smallest (Block Merge); when all n
 *           workers voted, SendIndices returns them (COLL_NEXT);
 *   send    each worker sends those of the chosen blocks that are nonzero
 *           locally (COLL_BLOCK, payload = the block) and a COLL_DONE with
 *           how many it sent (the bitmap of zero blocks, as a count), and
 *           at once its vote for the next round;
 *   update  BlockAccumulate adds blocks as they arrive; once every block
 *           and every DONE of the round is in, SendSums returns the sums
 *           (COLL_SUM) to every worker and frees the round's slot.
 *
 * The aggregator posts no RIG commands: host_to_net drops everything.
 */
#include <core.p4>
#include <netsparse.p4>
#include <collective.p4>

control HostToNet(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    apply {
        md.drop = true;
        Concatenate(pr, md);
    }
}

control NetToHost(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    apply {
        /* A packet for another node was misdelivered: drop it whole. */
        if (md.dst != rig.node) {
            md.drop = true;
        }
        Deconcatenate(pr, md);
        bit<8> st = COLL_REFUSED;
        if (md.pr_type == NS_READ && pr.tid == COLL_VOTE) {
            st = VoteMerge(pr.req_id, pr.src, pr.idx);
            if (st == COLL_COMPLETE) {
                SendIndices(pr.req_id);
            }
        } else if (md.pr_type == NS_RESPONSE && pr.tid == COLL_BLOCK) {
            st = BlockAccumulate(pr.req_id, pr.src, pr.idx, md.prop_len);
            if (st == COLL_COMPLETE) {
                SendSums(pr.req_id);
            }
        } else if (md.pr_type == NS_READ && pr.tid == COLL_DONE) {
            st = RoundDone(pr.req_id, pr.src, pr.idx);
            if (st == COLL_COMPLETE) {
                SendSums(pr.req_id);
            }
        }
        /* Consumed here: the firmware sends the broadcasts. */
        md.drop = true;
        Concatenate(pr, md);
    }
}

NetSparseNic(HostToNet(), NetToHost()) main;
