// expect: E0419
// PendingInsert registers a PR issued by a client unit: host_to_net only
#include <core.p4>
#include <netsparse.p4>

control H2N(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    apply {
        if (IdxFilterTest(pr.idx)) {
            md.drop = true;
        } else {
            PendingInsert(pr);
        }
        Concatenate(pr, md);
    }
}

control N2H(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    apply {
        Deconcatenate(pr, md);
        if (md.pr_type == NS_READ) {
            PendingInsert(pr);
        }
        Concatenate(pr, md);
    }
}

NetSparseNic(H2N(), N2H()) main;
