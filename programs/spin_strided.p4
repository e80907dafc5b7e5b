/* spin_strided.p4: a strided (vector datatype) receive into host memory
 * (sPIN §4.4, Figure 7a).
 *
 * The sender sends the data contiguously; the receiver's datatype puts
 * every `block` bytes at a `stride` in its buffer. The control plane
 * installs the layout per match bits:
 *
 *   table_add Layout.datatype vector <match bits> => <buffer> <block> <stride>
 *
 * Each payload handler scatters its packet with one bounded extern
 * (DmaScatterStrided: one non-blocking DMA command per contiguous piece),
 * wherever the packet falls in the stream, so packets may arrive in any
 * order. The completion handler counts received bytes (counter 0) and
 * fails a message with dropped bytes or one that timed out.
 */
#include <spin.p4>

struct layout_t {
    bit<64> buffer;
    bit<32> block;
    bit<32> stride;
}

control Layout(in spin_msg_t msg, inout layout_t st, inout spin_md_t md) {
    action vector(bit<64> buffer, bit<32> block, bit<32> stride) {
        st.buffer = buffer;
        st.block = block;
        st.stride = stride;
    }
    action contiguous() {
        /* No datatype: deposit at the address in the user header. */
        md.rc = SPIN_PROCEED;
    }
    table datatype {
        key = { msg.match_bits: exact; }
        actions = { vector; contiguous; }
        default_action = contiguous();
        size = 64;
    }
    apply {
        datatype.apply();
    }
}

control Scatter(in spin_msg_t msg, in spin_pkt_t pkt, inout layout_t st, inout spin_md_t md) {
    apply {
        DmaScatterStrided(st.buffer, pkt.offset, st.block, st.stride);
    }
}

control Received(in spin_msg_t msg, inout layout_t st, inout spin_md_t md) {
    apply {
        SpinCount(0, (bit<64>)(msg.length - md.dropped_bytes));
        if (md.dropped_bytes != 0 || md.timed_out == 1) {
            md.rc = SPIN_FAIL;
        }
    }
}

SpinNic(Layout(), Scatter(), Received()) main;
