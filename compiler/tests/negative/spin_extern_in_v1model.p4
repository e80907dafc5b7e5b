// expect: E0442
#include <core.p4>
#include <v1model.p4>
#include <spin.p4>
struct h_t { }
struct m_t { bit<32> n; }
parser MyP(packet_in pkt, out h_t hdr, inout m_t meta, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control MyV(inout h_t hdr, inout m_t meta) { apply { } }
control MyI(inout h_t hdr, inout m_t meta, inout standard_metadata_t sm) {
    apply { SpinCount(0, 1); }
}
control MyE(inout h_t hdr, inout m_t meta, inout standard_metadata_t sm) { apply { } }
control MyC(inout h_t hdr, inout m_t meta) { apply { } }
control MyD(packet_out pkt, in h_t hdr) { apply { } }
V1Switch(MyP(), MyV(), MyI(), MyE(), MyC(), MyD()) main;
