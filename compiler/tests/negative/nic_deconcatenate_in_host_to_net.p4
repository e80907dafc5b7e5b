// expect: E0440
// host_to_net already runs once per idx: no Deconcatenate
#include <core.p4>
#include <netsparse.p4>

control H2N(inout ns_pr_h pr, inout ns_pr_md_t md, inout ns_rig_md_t rig) {
    apply {
        Deconcatenate(pr, md);
        PendingInsert(pr);
        Concatenate(pr, md);
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
