// expect: E0415
// v1model's mark_to_drop does not exist on the SmartNIC
#include <core.p4>
#include <netsparse.p4>

#include <v1model.p4>
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
    standard_metadata_t sm;
    apply {
        Deconcatenate(pr, md);
        mark_to_drop(sm);
        Concatenate(pr, md);
    }
}

NetSparseNic(H2N(), N2H()) main;
