/* spin_pingpong.p4: ping-pong answered by the NIC (sPIN §4.2).
 *
 * A ping is a message whose match bits the control plane installed in
 * `ping_match` with the match bits of the pong. Every payload handler
 * stores its packet in host memory (non-blocking DMA at the address the
 * entry gives, plus the packet's offset) and sends the same bytes straight
 * back to the sender from the NIC (PutFromDevice): the pong leaves packet
 * by packet, without waiting for the host or for the whole ping. The
 * completion handler counts pongs (counter 0) and pong bytes (counter 1);
 * a message with dropped bytes fails.
 *
 *   table_add Ping.ping_match pong <ping match bits> => <pong match bits> <host buffer>
 *
 * Messages without an entry are dropped by the header handler.
 */
#include <spin.p4>

struct pp_state_t {
    bit<64> pong_bits;  /* match bits of the reply */
    bit<64> buffer;     /* where the ping lands in host memory */
}

control Ping(in spin_msg_t msg, inout pp_state_t st, inout spin_md_t md) {
    action pong(bit<64> bits, bit<64> buffer) {
        st.pong_bits = bits;
        st.buffer = buffer;
    }
    action no_match() {
        md.rc = SPIN_DROP;
    }
    table ping_match {
        key = { msg.match_bits: exact; }
        actions = { pong; no_match; }
        default_action = no_match();
        size = 64;
    }
    apply {
        ping_match.apply();
    }
}

control Echo(in spin_msg_t msg, in spin_pkt_t pkt, inout pp_state_t st, inout spin_md_t md) {
    apply {
        DmaToHostNB(st.buffer + (bit<64>)pkt.offset, 0, pkt.length);
        PutFromDevice(msg.src, st.pong_bits);
    }
}

control PongDone(in spin_msg_t msg, inout pp_state_t st, inout spin_md_t md) {
    apply {
        SpinCount(0, 1);
        SpinCount(1, (bit<64>)msg.length);
        if (md.dropped_bytes != 0) {
            md.rc = SPIN_FAIL;
        }
    }
}

SpinNic(Ping(), Echo(), PongDone()) main;
