// expect: E0421
// limits: max_stages=2 max_tables_per_stage=1
// three independent tables, one per stage, two stages
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; bit<32> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_x(bit<8> v) { meta.x = v; }
    action set_y(bit<16> v) { meta.y = v; }
    action set_z(bit<32> v) { meta.z = v; }
    table ta { key = { hdr.h.a: exact; } actions = { set_x; } }
    table tb { key = { hdr.h.b: exact; } actions = { set_y; } }
    table tc { key = { hdr.h.c: exact; } actions = { set_z; } }
    apply {
        ta.apply();
        tb.apply();
        tc.apply();
    }
}

control Nop(inout headers hdr, inout metadata meta) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Nop(), Ing(), Eg(), Nop(), D()) main;
