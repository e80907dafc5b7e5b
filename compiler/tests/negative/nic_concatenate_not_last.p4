// expect: E0440
// Concatenate must end host_to_net
#include <core.p4>
#include <netsparse.p4>

control H2N(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    apply {
        PendingInsert(pr);
        Concatenate(pr, md);
        rig.outcome = NS_ISSUED;
    }
}

control N2H(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    apply {
        Deconcatenate(pr, md);
        if (PendingComplete(pr, md)) {
            HostWrite(pr, md);
        }
        md.drop = true;
        Concatenate(pr, md);
    }
}

NetSparseNic(H2N(), N2H()) main;
