//! P4_16 arithmetic on the switch checked against a simple reference model
//! (u128/i128 with explicit modular arithmetic), for widths 1..=128.
//!
//! Each case builds a one-header program `r = op(a, b)`, sends a packet
//! carrying `a` and `b`, and reads `r` back from the deparsed output.

mod common;

use netsparse_bmv2::testing::{ex, ArtifactBuilder};
use netsparse_externs::artifact::*;
use proptest::prelude::*;

fn m(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

/// The value of `v` as `int<w>`.
fn sval(v: u128, w: u32) -> i128 {
    if (v >> (w - 1)) & 1 == 1 {
        -(((!v) & m(w)) as i128) - 1
    } else {
        v as i128
    }
}

fn from_i(x: i128, w: u32) -> u128 {
    (x as u128) & m(w)
}

fn bounds(w: u32) -> (i128, i128) {
    if w == 128 {
        (i128::MIN, i128::MAX)
    } else {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    }
}

/// The reference: `op(a, b)` on `w`-bit operands (`b` has width `wb` for shifts).
fn reference(op: BinaryOp, w: u32, signed: bool, a: u128, b: u128) -> u128 {
    use BinaryOp::*;
    let (sa, sb) = (sval(a, w), sval(b, w));
    let bit = |c: bool| u128::from(c);
    match op {
        Add => a.wrapping_add(b) & m(w),
        Sub => a.wrapping_sub(b) & m(w),
        Mul => a.wrapping_mul(b) & m(w),
        Div => a.checked_div(b).unwrap_or(0),
        Mod => a.checked_rem(b).unwrap_or(0),
        SatAdd if signed => {
            let (lo, hi) = bounds(w);
            from_i(
                sa.checked_add(sb)
                    .map_or(if sb > 0 { hi } else { lo }, |s| s.clamp(lo, hi)),
                w,
            )
        }
        SatSub if signed => {
            let (lo, hi) = bounds(w);
            from_i(
                sa.checked_sub(sb)
                    .map_or(if sb < 0 { hi } else { lo }, |s| s.clamp(lo, hi)),
                w,
            )
        }
        SatAdd => a.checked_add(b).map_or(m(w), |s| s.min(m(w))),
        SatSub => a.saturating_sub(b),
        Shl => {
            if b >= u128::from(w) {
                0
            } else {
                (a << b) & m(w)
            }
        }
        Shr if signed => {
            if b >= u128::from(w) {
                if sa < 0 {
                    m(w)
                } else {
                    0
                }
            } else {
                from_i(sa >> b, w)
            }
        }
        Shr => {
            if b >= u128::from(w) {
                0
            } else {
                a >> b
            }
        }
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        Eq => bit(a == b),
        Ne => bit(a != b),
        Lt => bit(if signed { sa < sb } else { a < b }),
        Le => bit(if signed { sa <= sb } else { a <= b }),
        Gt => bit(if signed { sa > sb } else { a > b }),
        Ge => bit(if signed { sa >= sb } else { a >= b }),
        LAnd => bit(a != 0 && b != 0),
        LOr => bit(a != 0 || b != 0),
    }
}

/// Pack (value, width) fields MSB first, zero-padded to whole bytes.
fn pack(fields: &[(u128, u32)]) -> Vec<u8> {
    let total: u32 = fields.iter().map(|(_, w)| *w).sum();
    let mut out = vec![0u8; total.div_ceil(8) as usize];
    let mut pos = 0u32;
    for &(v, w) in fields {
        for i in 0..w {
            if (v >> (w - 1 - i)) & 1 == 1 {
                let p = pos + i;
                out[(p / 8) as usize] |= 0x80 >> (p % 8);
            }
        }
        pos += w;
    }
    out
}

fn unpack(bytes: &[u8], off: u32, w: u32) -> u128 {
    let mut v = 0u128;
    for i in 0..w {
        let p = off + i;
        v = (v << 1) | u128::from((bytes[(p / 8) as usize] >> (7 - p % 8)) & 1);
    }
    v
}

/// Run `r = build(a, b)` with `a`: wa bits, `b`: wb bits, `r`: wr bits.
fn run(
    wa: u16,
    wb: u16,
    wr: u16,
    a: u128,
    b: u128,
    build: impl FnOnce(Expr, Expr) -> Expr,
) -> u128 {
    let total = u32::from(wa) + u32::from(wb) + u32::from(wr);
    let pad = (8 - total % 8) % 8;
    let mut fields = vec![("a", wa), ("b", wb), ("r", wr)];
    if pad > 0 {
        fields.push(("pad", pad as u16));
    }
    let mut bld = ArtifactBuilder::v1model("arith");
    let std = bld.std().clone();
    let (h, f) = bld.header("hdr.h", "h_t", &fields);
    let parser = bld.parser(
        "P",
        vec![ParserState {
            name: "start".into(),
            body: vec![ex::extract(h)],
            transition: Transition::Direct { next: Next::Accept },
        }],
        0,
    );
    let body = vec![
        ex::set(f[2], build(ex::f(f[0]), ex::f(f[1]))),
        ex::set(std.egress_spec, ex::c(1, 9)),
    ];
    let ingress = bld.control("I", body);
    let empty = bld.control("E", vec![]);
    let dep = bld.control("D", vec![ex::emit(h)]);
    bld.package(parser, empty, ingress, empty, empty, dep);
    let mut sw = common::switch(&bld.build());
    let mut frame = pack(&[
        (a, u32::from(wa)),
        (b, u32::from(wb)),
        (0, u32::from(wr)),
        (0, pad),
    ]);
    frame.resize(frame.len() + 14, 0xa5);
    let out = common::send(&mut sw, 0, &frame);
    assert_eq!(out.len(), 1);
    unpack(&out[0].1, u32::from(wa) + u32::from(wb), u32::from(wr))
}

const OPS: [BinaryOp; 20] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Mod,
    BinaryOp::SatAdd,
    BinaryOp::SatSub,
    BinaryOp::Shl,
    BinaryOp::Shr,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::Xor,
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
    BinaryOp::LAnd,
    BinaryOp::LOr,
];

fn width() -> impl Strategy<Value = u16> {
    prop_oneof![
        1u16..=9,
        10u16..=64,
        Just(63),
        Just(64),
        Just(65),
        66u16..=127,
        Just(128)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn binary_ops(op in 0usize..OPS.len(), w in width(), signed in any::<bool>(), a in any::<u128>(), b in any::<u128>(), small in 0u32..140) {
        let op = OPS[op];
        let logical = matches!(op, BinaryOp::LAnd | BinaryOp::LOr);
        let w = if logical { 1 } else { w };
        let signed = signed && !matches!(op, BinaryOp::Div | BinaryOp::Mod) && !logical;
        let shift = matches!(op, BinaryOp::Shl | BinaryOp::Shr);
        let a = a & m(u32::from(w));
        // Shift amounts: an 8-bit operand, often around the width.
        let (wb, b) = if shift { (8u16, u128::from(small.min(255))) } else { (w, b & m(u32::from(w))) };
        let cmp = matches!(op, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge);
        let wr = if cmp || logical { 1 } else { w };
        let got = run(w, wb, wr, a, b, |x, y| Expr::Binary { op, width: wr, signed, lhs: Box::new(x), rhs: Box::new(y) });
        prop_assert_eq!(got, reference(op, u32::from(w), signed, a, b), "{:?} w={} signed={} a={:#x} b={:#x}", op, w, signed, a, b);
    }

    #[test]
    fn unary_slice_concat_cast(w in width(), w2 in width(), a in any::<u128>(), b in any::<u128>(), hi in 0u16..128, lo in 0u16..128, signed in any::<bool>()) {
        let a = a & m(u32::from(w));
        let b2 = b & m(u32::from(w2));
        let w32 = u32::from(w);
        // ~a and -a
        prop_assert_eq!(run(w, 8, w, a, 0, |x, _| Expr::Unary { op: UnaryOp::BitNot, width: w, signed: false, arg: Box::new(x) }), !a & m(w32));
        prop_assert_eq!(run(w, 8, w, a, 0, |x, _| Expr::Unary { op: UnaryOp::Neg, width: w, signed, arg: Box::new(x) }), a.wrapping_neg() & m(w32));
        // a[hi:lo]
        let (hi, lo) = (hi % w, lo % w);
        let (hi, lo) = (hi.max(lo), hi.min(lo));
        let sw = hi - lo + 1;
        prop_assert_eq!(run(w, 8, sw, a, 0, |x, _| Expr::Slice { arg: Box::new(x), hi, lo }), (a >> lo) & m(u32::from(sw)));
        // a ++ b (when it fits in 128 bits)
        if u32::from(w) + u32::from(w2) <= 128 {
            let cw = w + w2;
            let want = (a << w2) | b2;
            prop_assert_eq!(run(w, w2, cw, a, b2, |x, y| Expr::Concat { lhs: Box::new(x), rhs: Box::new(y), rhs_width: w2, width: cw, signed: false }), want);
        }
        // (bit<w2>) a, sign-extending when a is int<w>
        let want = if signed && w2 > w { from_i(sval(a, w32), u32::from(w2)) } else { a & m(u32::from(w2)) };
        prop_assert_eq!(run(w, 8, w2, a, 0, |x, _| Expr::Cast { arg: Box::new(x), arg_width: w, arg_signed: signed, width: w2, signed: false }), want);
        // !x on a bool
        prop_assert_eq!(run(1, 8, 1, a & 1, 0, |x, _| Expr::Unary { op: UnaryOp::Not, width: 1, signed: false, arg: Box::new(x) }), (a & 1) ^ 1);
        // cond ? a : b
        let c = a & 1;
        prop_assert_eq!(run(w, w, w, a, b & m(w32), |x, y| Expr::Mux { cond: Box::new(Expr::Slice { arg: Box::new(x.clone()), hi: 0, lo: 0 }), then: Box::new(x), otherwise: Box::new(y), width: w }), if c == 1 { a } else { b & m(w32) });
    }
}

#[test]
fn reference_spot_checks() {
    // int<8>: -128 |-| 1 saturates; -1 >> 100 = -1; 127 |+| 1 = 127.
    assert_eq!(reference(BinaryOp::SatSub, 8, true, 0x80, 1), 0x80);
    assert_eq!(reference(BinaryOp::Shr, 8, true, 0xff, 100), 0xff);
    assert_eq!(reference(BinaryOp::SatAdd, 8, true, 0x7f, 1), 0x7f);
    assert_eq!(reference(BinaryOp::Lt, 4, true, 0xf, 1), 1);
    assert_eq!(reference(BinaryOp::Lt, 4, false, 0xf, 1), 0);
}
