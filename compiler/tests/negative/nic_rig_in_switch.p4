// expect: E0417
// The NetSparse switch has no Pending PR Table
#include <core.p4>
#include <netsparse.p4>

header h_t { bit<8> a; }
struct headers { h_t h; }
struct meta_t { bit<8> x; }

parser IP(packet_in pkt, out headers hdr, inout meta_t meta, inout ns_switch_md_t md) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Ig(inout headers hdr, inout meta_t meta, inout ns_switch_md_t md) { apply { md.egress_spec = 1; } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
control Middle(inout ns_pr_h pr, inout ns_pr_md_t md) {
    apply {
        Deconcatenate(pr, md);
        if (PendingContains(pr.idx)) {
            md.drop = true;
        }
        Concatenate(pr, md);
    }
}
control Eg(inout headers hdr, inout meta_t meta, inout ns_switch_md_t md) { apply { } }

NetSparseSwitch(IP(), Ig(), Dep(), Middle(), IP(), Eg(), Dep()) main;
