//! Regression: an `int` literal given as an extern method argument whose
//! type is an instance type parameter left open by the declaration (the
//! index of `register<bit<32>>(16) r`, of `counter(8, ...) c`, of
//! `meter(4, ...) m`) takes `bit<32>`, as p4c infers for `r.read(x, 3)`.

mod common;

use common::{fails, ok, v1model};
use netsparse_compiler::emit_ir;

#[test]
fn literal_indices_of_open_index_types_are_bit_32() {
    let c = ok(&v1model(
        "",
        "register<bit<32>>(16) r; counter(8, CounterType.packets) c; \
         meter(4, MeterType.packets) m;",
        "bit<32> x; r.read(x, 3); r.write(5, x + 1); c.count(2); \
         bit<2> colour; m.execute_meter(1, colour); meta.z = x;",
    ));
    let ir = emit_ir(&c.ir);
    for want in ["32w3", "32w5", "32w2", "32w1"] {
        assert!(ir.contains(want), "missing {want}: {ir}");
    }
}

#[test]
fn a_typed_index_still_fixes_the_type() {
    // A bit<8> variable binds I to bit<8>: no defaulting involved.
    ok(&v1model(
        "",
        "register<bit<32>>(16) r;",
        "bit<32> x; r.read(x, meta.x); meta.z = x;",
    ));
    // A declared index type is used for the literal (and still range-checked).
    ok(&v1model(
        "",
        "register<bit<32>, bit<8>>(16) r;",
        "bit<32> x; r.read(x, 255); meta.z = x;",
    ));
    fails(
        &v1model(
            "",
            "register<bit<32>, bit<8>>(16) r;",
            "bit<32> x; r.read(x, 256); meta.z = x;",
        ),
        "E0122",
    );
}

#[test]
fn other_unbound_literals_are_still_rejected() {
    // `hash`'s `M` is a type parameter of a function, not of an instance.
    fails(
        &v1model(
            "",
            "",
            "bit<16> h; hash(h, HashAlgorithm.crc16, 16w0, { hdr.h.a }, 1024); meta.y = h;",
        ),
        "E0132",
    );
}
