// expect: E0442
#include <spin.p4>
struct s_t { bit<64> base; }
control H(in spin_msg_t msg, inout s_t st, inout spin_md_t md) {
    apply { DmaToHost(st.base, 0, 64); }
}
control P(in spin_msg_t msg, in spin_pkt_t pkt, inout s_t st, inout spin_md_t md) { apply { } }
control C(in spin_msg_t msg, inout s_t st, inout spin_md_t md) { apply { } }
SpinNic(H(), P(), C()) main;
