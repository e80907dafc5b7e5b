//! The checker's type rules on small programs: what compiles, what is folded,
//! and which code each mistake gets.

mod common;

use common::{fails, ok, v1model};
use netsparse_compiler::emit_ir;

fn apply(body: &str) -> String {
    v1model("", "", body)
}

#[test]
fn int_literals_take_the_other_operands_type() {
    let c = ok(&apply(
        "meta.x = 255; meta.y = hdr.h.b + 1; bit<8> m = -1; meta.x = m;",
    ));
    let ir = emit_ir(&c.ir);
    assert!(ir.contains("meta.x = 8w255;"), "{ir}");
    assert!(ir.contains("(hdr.h.b + 16w1)"), "{ir}");
    assert!(
        ir.contains("var m: bit<8> = 8w255;"),
        "-1 wraps to all ones: {ir}"
    );
}

#[test]
fn literals_that_do_not_fit_are_rejected() {
    fails(&apply("bit<4> x = 16;"), "E0122");
    fails(&apply("meta.x = 8w256;"), "E0122");
    fails(&apply("int<4> x = 8;"), "E0122");
    fails(&apply("bit<8> x = -129;"), "E0122");
    ok(&apply("int<4> x = -8; bit<8> y = -128;"));
}

#[test]
fn no_implicit_widening_or_narrowing() {
    let r = fails(&apply("meta.y = meta.x;"), "E0121");
    assert!(r.contains("widening") && r.contains("(bit<16>)"), "{r}");
    let r = fails(&apply("meta.x = meta.y;"), "E0121");
    assert!(r.contains("narrowing"), "{r}");
    fails(&apply("meta.x = meta.x + meta.y;"), "E0121");
    fails(&apply("bool b = meta.x == meta.y;"), "E0121");
    // bit vs int of one width: a type mismatch, not a width one.
    fails(&apply("int<8> s = 1; meta.x = s;"), "E0120");
    ok(&apply(
        "meta.y = (bit<16>) meta.x; meta.x = (bit<8>) meta.z;",
    ));
}

#[test]
fn constant_folding() {
    let c = ok(&v1model(
        "const bit<8> C = 3 + 4 * 2; const int BIG = 1 << 100; const bit<8> SHR = 8w0x80 >> 7; \
         const int<8> NEG = -5; const bit<4> CAST = (bit<4>) 8w255; const bool B = !(C == 11);",
        "",
        "meta.x = C; meta.x = SHR; meta.z = (bit<32>) (BIG >> 90); int<8> n = NEG; bit<4> k = CAST;",
    ));
    let ir = emit_ir(&c.ir);
    for want in [
        "const C: bit<8> = 8w11;",
        "const BIG: int = 1267650600228229401496703205376;",
        "const SHR: bit<8> = 8w1;",
        "const NEG: int<8> = 8s-5;",
        "const CAST: bit<4> = 4w15;",
        "const B: bool = false;",
        "meta.z = 32w1024;",
    ] {
        assert!(ir.contains(want), "missing {want:?} in:\n{ir}");
    }
    fails(&v1model("const int X = 1 << 127;", "", ""), "E0128");
    fails(&v1model("const int X = 5 / 0;", "", ""), "E0128");
    fails(&v1model("const bit<8> X = 8w5 / 0;", "", ""), "E0128");
}

#[test]
fn operators_and_their_types() {
    ok(&apply(
        "meta.x = hdr.h.a |+| 8w200; meta.x = hdr.h.a |-| 1; meta.x = ~hdr.h.a; \
         meta.y = hdr.h.a ++ hdr.h.d; meta.x = hdr.h.b[11:4]; meta.z = meta.z << 3; \
         meta.flag = hdr.h.a < 3 && !meta.flag || hdr.h.isValid(); meta.x = meta.flag ? 8w1 : 2;",
    ));
    fails(&apply("meta.x = !hdr.h.a;"), "E0123");
    fails(&apply("int<8> s = 4; s = s / 2;"), "E0123");
    fails(&apply("meta.flag = meta.flag + meta.flag;"), "E0123");
    fails(&apply("meta.x = meta.flag ? 1 : 2;"), "E0132");
    fails(&apply("meta.y = 4 ++ hdr.h.a;"), "E0126");
    fails(&apply("meta.x = hdr.h.a[8:0];"), "E0125");
    fails(&apply("meta.x = hdr.h.a[2:3];"), "E0125");
    fails(&apply("meta.z = 1 << meta.z;"), "E0127");
}

#[test]
fn casts_follow_the_spec() {
    ok(&apply(
        "bit<1> b = (bit<1>) meta.flag; meta.flag = (bool) b; int<8> s = (int<8>) hdr.h.a; \
         meta.x = (bit<8>) s; int<16> w = (int<16>) s; meta.flag = (bool) 1;",
    ));
    fails(&apply("int<16> w = (int<16>) hdr.h.a;"), "E0124");
    fails(&apply("meta.flag = (bool) hdr.h.a;"), "E0124");
    fails(&apply("meta.x = (bit<8>) hdr.h;"), "E0124");
}

#[test]
fn serializable_enums_and_newtypes() {
    let decls = "enum bit<8> Op { ADD = 1, SUB = 2 }\ntype bit<16> port_t;";
    ok(&v1model(
        decls,
        "",
        "Op o = Op.ADD; if (o == Op.SUB) { meta.x = 1; } meta.x = (bit<8>) o; \
         bool same = hdr.h.a == Op.ADD; port_t p = (port_t) hdr.h.b; meta.y = (bit<16>) p;",
    ));
    fails(&v1model(decls, "", "Op o = 1;"), "E0120");
    fails(&v1model(decls, "", "port_t p = hdr.h.b;"), "E0120");
    fails(&v1model("enum bit<8> E { A = 1, A = 2 }", "", ""), "E0102");
    fails(&v1model("enum bit<2> E { A = 4 }", "", ""), "E0122");
}

#[test]
fn errors_and_match_kinds_are_checked() {
    ok(&v1model(
        "error { Mine }",
        "",
        "sm.parser_error = error.Mine;",
    ));
    let r = fails(&apply("sm.parser_error = error.NoMach;"), "E0104");
    assert!(r.contains("error.NoMatch"), "{r}");
    fails(&v1model("error { NoError }", "", ""), "E0102");
}

#[test]
fn directions() {
    let decls =
        "control Sub(in bit<8> i, out bit<8> o, inout bit<8> io) { apply { o = i; io = io + i; } }";
    ok(&v1model(
        decls,
        "Sub() sub;",
        "sub.apply(hdr.h.a + 1, meta.x, hdr.h.d);",
    ));
    fails(
        &v1model(decls, "Sub() sub;", "sub.apply(1, 2, hdr.h.d);"),
        "E0302",
    );
    fails(
        &v1model(decls, "Sub() sub;", "sub.apply(1, meta.x, meta.y);"),
        "E0121",
    );
    fails(
        &v1model("control S2(in h_t h) { apply { h.setValid(); } }", "", ""),
        "E0301",
    );
    // `_` discards an `out` result.
    ok(&v1model(decls, "Sub() sub;", "sub.apply(1, _, meta.x);"));
}

#[test]
fn names_scopes_and_suggestions() {
    let r = fails(&apply("meta.x = hdr.h.aa;"), "E0104");
    assert!(
        r.contains("did you mean `a`") || r.contains("its fields are"),
        "{r}"
    );
    let r = fails(&apply("meta.x = lenght;"), "E0101");
    assert!(
        !r.contains("did you mean `length`"),
        "no such declaration: {r}"
    );
    // Shadowing in a nested block is allowed; redeclaring in one block is not.
    ok(&apply(
        "bit<8> v = 1; { bit<16> v = 2; meta.y = v; } meta.x = v;",
    ));
    fails(&apply("bit<8> v = 1; bit<8> v = 2;"), "E0102");
    // Declaration before use.
    fails(
        &v1model("", "action a() { b(); } action b() { }", "a();"),
        "E0101",
    );
    // A top-level name through `.`.
    ok(&v1model(
        "const bit<8> K = 3;",
        "",
        "bit<8> K = 4; meta.x = .K + K;",
    ));
}

#[test]
fn several_errors_are_reported_at_once() {
    let Err((rendered, codes)) = common::compile(&apply(
        "meta.x = nope; meta.y = meta.x; meta.z = 1 << meta.z;",
    )) else {
        panic!("should fail");
    };
    assert_eq!(codes, vec!["E0101", "E0121", "E0127"], "{rendered}");
}

#[test]
fn functions() {
    let f = "bit<8> max(in bit<8> a, in bit<8> b) { if (a > b) { return a; } return b; }";
    let c = ok(&v1model(f, "", "meta.x = max(hdr.h.a, hdr.h.d);"));
    let body = &c.artifact.controls[1].body;
    assert!(
        body.iter().any(|s| matches!(s, netsparse_externs::artifact::Stmt::Inlined { name, .. } if name == "max")),
        "function inlined: {body:?}"
    );
    fails(
        &v1model("bit<8> f(in bit<8> a) { if (a > 1) { return a; } }", "", ""),
        "E0304",
    );
    fails(&v1model("void g() { return 1; }", "", ""), "E0304");
    fails(&v1model("void g() { exit; }", "", ""), "E0303");
}

#[test]
fn unsupported_constructs_get_a_diagnostic() {
    fails(
        &v1model(
            "header_union u { h_t a; } struct s { u[2] x; }",
            "",
            "s v; v.x.next.a.setValid();",
        ),
        "E0111",
    );
    fails(
        &v1model("header_union u { h_t a; bit<8> b; }", "", ""),
        "E0113",
    );
    fails(
        &v1model("header v { varbit<8> x; bit<8> y; }", "", ""),
        "E0110",
    );
    fails(
        &v1model("header v { bit<8> y; varbit<8> x; }", "", "varbit<8> z;"),
        "E0110",
    );
    fails(
        &v1model(
            "",
            "action_selector(HashAlgorithm.crc16, 32w16, 32w8) sel;",
            "",
        ),
        "E0404",
    );
    fails(&apply("pkt_len();"), "E0101");
    fails(
        &v1model("", "", "").replace(
            "transition accept; }",
            "bit<32> n = pkt.length(); transition accept; }",
        ),
        "E0401",
    );
}

#[test]
fn the_deepest_programs_the_front_end_accepts_compile() {
    // The front end bounds nesting at 256; check and lower at that depth.
    let sum = vec!["hdr.h.a"; 250].join(" + ");
    ok(&apply(&format!("meta.x = {sum};")));
    let parens = format!("{}hdr.h.a{}", "(".repeat(200), ")".repeat(200));
    ok(&apply(&format!("meta.x = {parens};")));
    let ifs = format!(
        "{}meta.x = 1;{}",
        "if (meta.flag) { ".repeat(60),
        " }".repeat(60)
    );
    let c = ok(&apply(&ifs));
    assert!(!c.artifact.controls.is_empty());
}
