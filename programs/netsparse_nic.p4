/* netsparse_nic.p4: the NetSparse SmartNIC of the paper (Sections 4-5,
 * Figures 3-5), written with the RIG extension of <netsparse.p4>.
 *
 * host_to_net runs once for every idx a client RIG unit reads from the
 * host's idx array (the firmware presets pr = {src = this node, tid = unit,
 * idx, req_id = 0} and md = {NS_READ, dst = 0, prop_len = the command's
 * property size}):
 *
 *   1. Idx Filter: the property already arrived      -> NS_FILTERED, drop
 *   2. Pending PR Table: a PR for it is outstanding  -> NS_COALESCED, drop
 *   3. destination solver (table dest_solver: a range of idxs per node,
 *      installed by the control plane from the 1D partition)
 *        - no node owns the idx                      -> NS_UNROUTABLE, drop
 *        - this node owns it (local property)        -> NS_LOCAL, drop
 *   4. PendingInsert (writes pr.req_id)              -> NS_ISSUED
 *   5. Concatenate: the read PR joins the NIC's Concatenation Queue of
 *      (NS_READ, md.dst) and leaves within DelayCycles.
 *
 * net_to_host runs once per received NetSparse packet and then once per PR:
 *   - reads (we own the idx): HostRead from the local slice; the PR becomes a
 *     response to its requester (pr.src) and leaves after the DMA latency;
 *     idxs outside our slice are dropped (the firmware counts them);
 *   - responses (to our reads): PendingComplete retires the entry, HostWrite
 *     DMAs the property into the command's destination buffer, and the Idx
 *     Filter bit is set; the PR is consumed (md.drop).
 *
 * Ablations (the paper's Table 8), as preprocessor defines:
 *   -D NS_NO_FILTER    no Idx Filter check (every repeated idx is requested
 *                      again unless coalesced)
 *   -D NS_NO_COALESCE  no Pending PR Table check (repeated idxs in flight
 *                      are requested again)
 * With both, one read PR is issued per nonzero with a remote idx.
 * "No NIC concatenation" is a firmware setting (DelayCycles 0), not a
 * program change.
 */
#include <core.p4>
#include <netsparse.p4>

control HostToNet(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    /* The node that owns the idx's property. */
    action set_dst(bit<32> node) {
        md.dst = node;
    }
    action unroutable() {
        rig.outcome = NS_UNROUTABLE;
    }
    /* The destination solver (Figure 5): one entry per node,
     * `lo..hi` (inclusive) -> set_dst(node). */
    table dest_solver {
        key = { pr.idx: range; }
        actions = { set_dst; unroutable; }
        default_action = unroutable();
        size = 16384;
    }
    apply {
        rig.outcome = NS_ISSUED;
#ifndef NS_NO_FILTER
        if (IdxFilterTest(pr.idx)) {
            rig.outcome = NS_FILTERED;
        } else
#endif
#ifndef NS_NO_COALESCE
        if (PendingContains(pr.idx)) {
            rig.outcome = NS_COALESCED;
        } else
#endif
        {
            dest_solver.apply();
            if (rig.outcome == NS_ISSUED) {
                if (md.dst == rig.node) {
                    rig.outcome = NS_LOCAL;
                } else {
                    PendingInsert(pr);
                }
            }
        }
        if (rig.outcome != NS_ISSUED) {
            md.drop = true;
        }
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
        if (md.pr_type == NS_READ) {
            if (HostRead(pr, md)) {
                /* Serve it: a response back to the requester. */
                md.pr_type = NS_RESPONSE;
                md.dst = pr.src;
            } else {
                md.drop = true;
            }
        } else if (md.pr_type == NS_RESPONSE) {
            if (PendingComplete(pr, md)) {
                HostWrite(pr, md);
                IdxFilterSet(pr.idx);
            }
            /* Consumed here. */
            md.drop = true;
        } else {
            md.drop = true;
        }
        Concatenate(pr, md);
    }
}

NetSparseNic(HostToNet(), NetToHost()) main;
