/* spin_accumulate.p4: in-NIC reduction into host memory (sPIN §3, the
 * accumulate use case).
 *
 * Each message carries 32-bit unsigned integers (little-endian); the NIC
 * adds them element-wise into the host buffer the control plane installed
 * for the message's match bits, packet by packet, in any order:
 *
 *   table_add Reduce.accumulate_into into <match bits> => <buffer> <flag address>
 *
 * When the last payload handler finished, the completion handler
 * increments the 8-byte flag in host memory (HostFetchAdd) so the host
 * sees how many contributions arrived, and counts them in HPU word 0
 * (HpuFetchAdd). A message that lost bytes fails and does not raise the flag.
 */
#include <spin.p4>

struct acc_t {
    bit<64> buffer;
    bit<64> flag;
}

control Reduce(in spin_msg_t msg, inout acc_t st, inout spin_md_t md) {
    action into(bit<64> buffer, bit<64> flag) {
        st.buffer = buffer;
        st.flag = flag;
    }
    action no_match() {
        md.rc = SPIN_DROP;
    }
    table accumulate_into {
        key = { msg.match_bits: exact; }
        actions = { into; no_match; }
        default_action = no_match();
        size = 64;
    }
    apply {
        accumulate_into.apply();
    }
}

control Add(in spin_msg_t msg, in spin_pkt_t pkt, inout acc_t st, inout spin_md_t md) {
    apply {
        DmaAccumulate(st.buffer + (bit<64>)pkt.offset, SPIN_ACC_U32);
    }
}

control Contributed(in spin_msg_t msg, inout acc_t st, inout spin_md_t md) {
    apply {
        if (md.dropped_bytes != 0) {
            md.rc = SPIN_FAIL;
        } else {
            bit<64> before = HostFetchAdd(st.flag, 1);
            bit<64> seen = HpuFetchAdd(0, 1);
        }
    }
}

SpinNic(Reduce(), Add(), Contributed()) main;
