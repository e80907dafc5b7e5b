/* spin_bcast.p4: a binomial-tree broadcast forwarded by the NICs (sPIN §4.3).
 *
 * Every node runs this program. The control plane installs, per broadcast
 * (its match bits), this node's children in the binomial tree rooted at the
 * root of that broadcast (up to four: trees of up to 16 nodes) and where
 * the data lands in host memory:
 *
 *   table_add Tree.bcast_tree children <match bits> => <n> <c0> <c1> <c2> <c3> <buffer>
 *
 * e.g. for 8 nodes rooted at 0: node 0 -> 4 2 1, node 4 -> 6 5, node 2 -> 3,
 * node 6 -> 7, others -> none. Every payload handler forwards its packet to
 * the children at once (PutFromDevice, the same message id and offset), so
 * a packet moves down the tree while later packets are still arriving, and
 * stores it in host memory with a non-blocking DMA. The completion handler
 * counts broadcasts (counter 0) and fails on dropped bytes.
 */
#include <spin.p4>

struct tree_t {
    bit<8>  n;        /* number of children */
    bit<32> c0;
    bit<32> c1;
    bit<32> c2;
    bit<32> c3;
    bit<64> buffer;
}

control Tree(in spin_msg_t msg, inout tree_t st, inout spin_md_t md) {
    action children(bit<8> n, bit<32> c0, bit<32> c1, bit<32> c2, bit<32> c3, bit<64> buffer) {
        st.n = n;
        st.c0 = c0;
        st.c1 = c1;
        st.c2 = c2;
        st.c3 = c3;
        st.buffer = buffer;
    }
    action not_mine() {
        md.rc = SPIN_DROP;
    }
    table bcast_tree {
        key = { msg.match_bits: exact; }
        actions = { children; not_mine; }
        default_action = not_mine();
        size = 256;
    }
    apply {
        bcast_tree.apply();
    }
}

control Forward(in spin_msg_t msg, in spin_pkt_t pkt, inout tree_t st, inout spin_md_t md) {
    apply {
        if (st.n > 0) { PutFromDevice(st.c0, msg.match_bits); }
        if (st.n > 1) { PutFromDevice(st.c1, msg.match_bits); }
        if (st.n > 2) { PutFromDevice(st.c2, msg.match_bits); }
        if (st.n > 3) { PutFromDevice(st.c3, msg.match_bits); }
        DmaToHostNB(st.buffer + (bit<64>)pkt.offset, 0, pkt.length);
    }
}

control Delivered(in spin_msg_t msg, inout tree_t st, inout spin_md_t md) {
    apply {
        SpinCount(0, 1);
        if (md.dropped_bytes != 0) {
            md.rc = SPIN_FAIL;
        }
    }
}

SpinNic(Tree(), Forward(), Delivered()) main;
