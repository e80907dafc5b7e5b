// expect: E0441
#include <spin.p4>
#include <netsparse.p4>
struct s_t { bit<64> idx; }
control H(in spin_msg_t msg, inout s_t st, inout spin_md_t md) { apply { } }
control P(in spin_msg_t msg, in spin_pkt_t pkt, inout s_t st, inout spin_md_t md) {
    apply {
        if (IdxFilterTest(st.idx)) { md.rc = SPIN_DROP; }
    }
}
control C(in spin_msg_t msg, inout s_t st, inout spin_md_t md) { apply { } }
SpinNic(H(), P(), C()) main;
