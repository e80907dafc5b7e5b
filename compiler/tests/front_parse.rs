//! Front end: positive parses, AST shapes, precedence, literals, the
//! preprocessor and span mapping.

use std::path::{Path, PathBuf};

use netsparse_compiler::ast::*;
use netsparse_compiler::diag::{render_all, Diagnostic};
use netsparse_compiler::front::{
    bundled_include, parse_file, parse_source, print_program, FrontOptions,
};
use netsparse_compiler::source::SourceMap;

fn parse_with(src: &str, opts: &FrontOptions) -> (Program, SourceMap) {
    let mut sm = SourceMap::new();
    match parse_source(&mut sm, "tests/syntax/ok/test.p4", src, opts) {
        Ok(p) => (p, sm),
        Err(d) => panic!("unexpected errors:\n{}", render_all(&d, &sm)),
    }
}

fn parse(src: &str) -> Program {
    parse_with(src, &FrontOptions::default()).0
}

fn errors(src: &str) -> Vec<Diagnostic> {
    let mut sm = SourceMap::new();
    parse_source(
        &mut sm,
        "tests/syntax/ok/test.p4",
        src,
        &FrontOptions::default(),
    )
    .expect_err("must fail")
}

/// The value of `const bit<8> x = <e>;`.
fn expr(e: &str) -> Expr {
    let p = parse(&format!("const bit<8> x = {e};"));
    match p.decls.into_iter().next() {
        Some(Decl::Constant(c)) => c.value,
        other => panic!("not a constant: {other:?}"),
    }
}

/// The printed (fully parenthesised) form of an expression.
fn shape(e: &str) -> String {
    let p = parse(&format!("const bit<8> x = {e};"));
    let s = print_program(&p);
    s.trim()
        .trim_start_matches("const bit<8> x = ")
        .trim_end_matches(';')
        .to_owned()
}

fn int(e: &Expr) -> &IntLit {
    match &e.kind {
        ExprKind::Int(l) => l,
        k => panic!("not an integer: {k:?}"),
    }
}

/// The control body's statements of a one-control program.
fn apply_stmts(body: &str) -> Vec<Stmt> {
    let p = parse(&format!(
        "control C(inout bit<8> x) {{ apply {{ {body} }} }}"
    ));
    match p.decls.into_iter().next() {
        Some(Decl::Control(c)) => c.apply.stmts,
        other => panic!("not a control: {other:?}"),
    }
}

// ------------------------------------------------------------------ precedence

#[test]
fn precedence_follows_p4_16() {
    let cases = [
        ("a + b * c", "a + (b * c)"),
        ("a * b + c", "(a * b) + c"),
        ("a - b - c", "(a - b) - c"),
        // Bitwise operators bind tighter than comparisons in P4 (unlike C).
        ("a == b & c", "a == (b & c)"),
        ("a < b | c", "a < (b | c)"),
        ("a != b ^ c", "a != (b ^ c)"),
        ("a & b | c ^ d", "(a & b) | (c ^ d)"),
        // Shifts: tighter than `&`, looser than `+`.
        ("a & b << 2", "a & (b << 2)"),
        ("a << b + c", "a << (b + c)"),
        ("a >> 1 < b", "(a >> 1) < b"),
        // `++` has the precedence of `+`.
        ("x[7:0] ++ y", "x[7:0] ++ y"),
        ("a ++ b + c", "(a ++ b) + c"),
        ("a + b ++ c", "(a + b) ++ c"),
        ("a ++ b * c", "a ++ (b * c)"),
        ("a ++ b << 1", "(a ++ b) << 1"),
        ("a |+| b * c", "a |+| (b * c)"),
        ("a |-| b |+| c", "(a |-| b) |+| c"),
        // Prefix operators and casts bind tighter than binary operators.
        ("(bit<8>) a + b", "((bit<8>) a) + b"),
        ("-a * b", "(-a) * b"),
        ("!a && b || c", "((!a) && b) || c"),
        ("a || b && c", "a || (b && c)"),
        ("~a.b[1]", "~a.b[1]"),
        ("a == b && c != d", "(a == b) && (c != d)"),
        ("a <= b == c >= d", "(a <= b) == (c >= d)"),
        // The ternary is right associative and lowest.
        ("a ? b : c ? d : e", "a ? b : (c ? d : e)"),
        ("a || b ? c + 1 : d", "(a || b) ? (c + 1) : d"),
        // A parenthesised name followed by an operator is not a cast.
        ("(x) - 1", "x - 1"),
        ("(T) x", "(T) x"),
        ("(T) (x + 1)", "(T) (x + 1)"),
        ("(bit<8>) -1", "(bit<8>) (-1)"),
        // `>>` closes two type-argument lists.
        ("f<bit<16>>(x) >> 2", "f<bit<16>>(x) >> 2"),
        ("a < b", "a < b"),
        ("a > b", "a > b"),
    ];
    for (src, want) in cases {
        assert_eq!(shape(src), want, "for `{src}`");
    }
}

#[test]
fn postfix_chains_and_casts_build_the_right_tree() {
    let e = expr("~a.b[1]");
    let ExprKind::Unary(UnOp::BitNot, inner) = &e.kind else {
        panic!("{e:?}")
    };
    let ExprKind::Index(base, idx) = &inner.kind else {
        panic!("{inner:?}")
    };
    assert!(matches!(&base.kind, ExprKind::Member(_, m) if m.name == "b"));
    assert_eq!(int(idx).value, 1);

    let e = expr("x[15:8]");
    let ExprKind::Slice(_, hi, lo) = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!((int(hi).value, int(lo).value), (15, 8));

    let e = expr("pkt.lookahead<bit<16>>()");
    let ExprKind::Call {
        callee,
        type_args,
        args,
    } = &e.kind
    else {
        panic!("{e:?}")
    };
    assert!(matches!(&callee.kind, ExprKind::Member(_, m) if m.name == "lookahead"));
    assert_eq!(type_args.len(), 1);
    assert!(matches!(&type_args[0].kind, TypeRefKind::Bit(w) if int(w).value == 16));
    assert!(args.is_empty());

    let e = expr("(bit<32>) y");
    let ExprKind::Cast(t, _) = &e.kind else {
        panic!("{e:?}")
    };
    assert!(matches!(&t.kind, TypeRefKind::Bit(_)));

    let e = expr("f(_, n = 3, .g)");
    let ExprKind::Call { args, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(args.len(), 3);
    assert!(matches!(args[0].value.kind, ExprKind::DontCare));
    assert_eq!(args[1].name.as_ref().map(|n| n.name.as_str()), Some("n"));
    assert!(
        matches!(&args[2].value.kind, ExprKind::Name { dot_prefix: true, name } if name.name == "g")
    );

    let e = expr("{a, {b, c}}");
    assert!(matches!(&e.kind, ExprKind::List(items) if items.len() == 2));
    let e = expr("{f = 1, g = a == b}");
    let ExprKind::StructInit(fields) = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(fields[1].0.name, "g");
    assert!(matches!(fields[1].1.kind, ExprKind::Binary(BinOp::Eq, ..)));
    let e = expr("error.NoMatch");
    assert!(
        matches!(&e.kind, ExprKind::Member(b, m) if m.name == "NoMatch" && matches!(&b.kind, ExprKind::Name { name, .. } if name.name == "error"))
    );
    assert!(matches!(expr("\"a\\\"b\"").kind, ExprKind::Str(ref s) if s == "a\"b"));
    assert!(matches!(expr("true").kind, ExprKind::Bool(true)));
}

// ------------------------------------------------------------------ literals

#[test]
fn integer_literals_keep_value_and_width() {
    type Case = (&'static str, u128, Option<(bool, u32)>);
    let cases: [Case; 11] = [
        ("42", 42, None),
        ("0x2A", 42, None),
        ("0X2a", 42, None),
        ("0o52", 42, None),
        ("0b101010", 42, None),
        ("0d42", 42, None),
        ("1_000_000", 1_000_000, None),
        ("8w5", 5, Some((false, 8))),
        ("8s5", 5, Some((true, 8))),
        ("16w0x800", 0x800, Some((false, 16))),
        (
            "128w0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF",
            u128::MAX,
            Some((false, 128)),
        ),
    ];
    for (text, value, width) in cases {
        let e = expr(text);
        let l = int(&e);
        assert_eq!(
            (l.value, l.width, l.text.as_str()),
            (value, width, text),
            "{text}"
        );
    }
    // A sign is a unary operator, never part of the literal.
    let e = expr("-8s5");
    assert!(matches!(&e.kind, ExprKind::Unary(UnOp::Neg, x) if int(x).width == Some((true, 8))));
    for bad in ["8w", "0x", "0w5", "0b2", "12abc", "0x_"] {
        let d = errors(&format!("const bit<8> x = {bad};"));
        assert_eq!(d[0].code, "E0002", "{bad}");
    }
}

// ------------------------------------------------------------------ declarations

#[test]
fn type_declarations() {
    let p = parse(
        "header h_t { bit<8> a; bit b; varbit<32> opt; }
         header_union u_t { h_t x; }
         struct s_t<T> { @name(\"f\") T f; h_t[4] stack; tuple<bit<8>, bool> t; int<8> i; int n; }
         typedef bit<48> mac_t;
         type bit<32> ip_t;
         enum Color { Red, Green }
         enum bit<8> Proto { TCP = 6, UDP = 17, }
         error { NoError, Bad }
         match_kind { exact, lpm }
         const bit<16> K = 0x800;",
    );
    assert_eq!(p.decls.len(), 10);
    let Decl::Header(h) = &p.decls[0] else {
        panic!()
    };
    assert_eq!(h.fields.len(), 3);
    // `bit` without a width is `bit<1>`.
    assert!(matches!(&h.fields[1].ty.kind, TypeRefKind::Bit(w) if int(w).value == 1));
    assert!(matches!(&h.fields[2].ty.kind, TypeRefKind::Varbit(_)));
    assert!(matches!(&p.decls[1], Decl::HeaderUnion(u) if u.fields.len() == 1));
    let Decl::Struct(s) = &p.decls[2] else {
        panic!()
    };
    assert_eq!(s.type_params[0].name, "T");
    assert_eq!(s.fields[0].annotations[0].name.name, "name");
    assert!(
        matches!(&s.fields[1].ty.kind, TypeRefKind::Stack { size, .. } if int(size).value == 4)
    );
    assert!(matches!(&s.fields[2].ty.kind, TypeRefKind::Tuple(ts) if ts.len() == 2));
    assert!(matches!(&s.fields[3].ty.kind, TypeRefKind::Int(_)));
    assert!(matches!(&s.fields[4].ty.kind, TypeRefKind::InfInt));
    assert!(matches!(&p.decls[3], Decl::Typedef(t) if !t.is_new_type && t.name.name == "mac_t"));
    assert!(matches!(&p.decls[4], Decl::Typedef(t) if t.is_new_type));
    let Decl::Enum(e) = &p.decls[5] else { panic!() };
    assert!(e.underlying.is_none() && e.members.len() == 2);
    let Decl::Enum(e) = &p.decls[6] else { panic!() };
    assert!(e.underlying.is_some());
    assert_eq!(e.members[1].name.name, "UDP");
    assert_eq!(int(e.members[1].value.as_ref().expect("value")).value, 17);
    assert!(matches!(&p.decls[7], Decl::Error(m) if m.members.len() == 2));
    assert!(matches!(&p.decls[8], Decl::MatchKind(m) if m.members[1].name == "lpm"));
    assert!(matches!(&p.decls[9], Decl::Constant(c) if c.name.name == "K"));
}

#[test]
fn externs_blocks_and_packages() {
    let p = parse(
        "extern register<T> { register(bit<32> size); @noSideEffects void read(out T r, in bit<32> i); }
         extern void mark_to_drop<M>(inout M m);
         parser P<H>(packet_in pkt, out H hdr);
         control C<H>(inout H hdr);
         package Pkg<H>(P<H> p, C<H> c);
         action a(in bit<8> x, bit<8> data) { }
         bit<8> f(in bit<8> v) { return v; }
         Pkg(MyP(), MyC(4, x = 1)) main;",
    );
    let Decl::ExternObject(x) = &p.decls[0] else {
        panic!()
    };
    assert_eq!(x.type_params[0].name, "T");
    assert!(x.methods[0].ret.is_none(), "constructor has no return type");
    assert!(x.methods[1].ret.is_some());
    assert_eq!(x.methods[1].annotations[0].name.name, "noSideEffects");
    assert_eq!(x.methods[1].params[0].direction, Some(Direction::Out));
    let Decl::ExternFunction(f) = &p.decls[1] else {
        panic!()
    };
    assert_eq!(f.type_params[0].name, "M");
    assert_eq!(f.params[0].direction, Some(Direction::InOut));
    assert!(matches!(&p.decls[2], Decl::ParserType(b) if b.params.len() == 2));
    assert!(matches!(&p.decls[3], Decl::ControlType(b) if b.type_params.len() == 1));
    assert!(matches!(&p.decls[4], Decl::Package(b) if b.params.len() == 2));
    let Decl::Action(a) = &p.decls[5] else {
        panic!()
    };
    assert_eq!(a.params[0].direction, Some(Direction::In));
    assert_eq!(a.params[1].direction, None);
    assert!(matches!(&p.decls[6], Decl::Function(f) if f.body.stmts.len() == 1));
    let Decl::Instantiation(i) = &p.decls[7] else {
        panic!()
    };
    assert_eq!(i.name.name, "main");
    assert_eq!(i.args.len(), 2);
    let ExprKind::Call { args, .. } = &i.args[1].value.kind else {
        panic!()
    };
    assert_eq!(args[1].name.as_ref().map(|n| n.name.as_str()), Some("x"));
}

#[test]
fn parsers_states_and_select() {
    let p = parse(
        "parser P(packet_in pkt, out headers_t hdr)(bit<8> k) {
            bit<16> tmp;
            const bit<8> C = 1;
            value_set<bit<16>>(4) vs;
            Checksum() ck;
            state start {
                pkt.extract(hdr.eth);
                transition select(hdr.eth.type, tmp) {
                    (0x800, _): ipv4;
                    (0x8100 &&& 0xEFFF, 1 .. 5): vlan;
                    (vs, default): accept;
                    default: reject;
                }
            }
            state ipv4 { transition accept; }
            @name(\"v\") state vlan { }
        }",
    );
    let Decl::Parser(pd) = &p.decls[0] else {
        panic!()
    };
    assert_eq!(pd.ctor_params.len(), 1);
    assert!(matches!(pd.locals[0], Local::Var(_)));
    assert!(matches!(pd.locals[1], Local::Const(_)));
    assert!(matches!(pd.locals[2], Local::ValueSet(_)));
    assert!(matches!(pd.locals[3], Local::Instantiation(_)));
    assert_eq!(pd.states.len(), 3);
    let Some(Transition::Select { exprs, cases, .. }) = &pd.states[0].transition else {
        panic!()
    };
    assert_eq!(exprs.len(), 2);
    assert_eq!(cases.len(), 4);
    assert!(matches!(
        &cases[0].keysets[..],
        [Keyset::Expr(_), Keyset::DontCare(_)]
    ));
    assert!(matches!(
        &cases[1].keysets[..],
        [Keyset::Mask(..), Keyset::Range(..)]
    ));
    assert!(matches!(
        &cases[2].keysets[..],
        [Keyset::Expr(_), Keyset::Default(_)]
    ));
    assert!(matches!(&cases[3].keysets[..], [Keyset::Default(_)]));
    assert_eq!(cases[1].next.name, "vlan");
    assert!(matches!(&pd.states[1].transition, Some(Transition::Direct(n)) if n.name == "accept"));
    assert!(
        pd.states[2].transition.is_none(),
        "no transition means reject"
    );
    assert_eq!(pd.states[2].annotations[0].name.name, "name");
}

#[test]
fn controls_tables_and_statements() {
    let p = parse(
        "control C(inout H hdr)(bit<32> n) {
            counter(64, CounterType.packets) c;
            register<bit<32>>(16) r;
            bit<8> tmp = 0;
            action a(bit<9> port) { hdr.port = port; }
            table t {
                key = { hdr.dst: lpm @name(\"d\"); hdr.ty: exact; }
                actions = { a; @defaultonly NoAction(); .b; }
                const default_action = NoAction();
                size = 1024;
                const entries = {
                    (1, _): a(1);
                    priority = 10: (2 &&& 3, 4 .. 5): NoAction();
                    @priority(3) (default, 6): a(2);
                }
                implementation = action_profile(32w128);
            }
            table u { actions = { a; } default_action = a(0); entries = { 7: a(1); } }
            apply {
                switch (t.apply().action_run) {
                    a:
                    NoAction: { exit; }
                    default: { }
                }
                if (t.apply().hit) { return; } else if (tmp == 1) tmp = 2; else { }
                ;
                { tmp = 3; }
            }
        }",
    );
    let Decl::Control(c) = &p.decls[0] else {
        panic!()
    };
    assert_eq!(c.ctor_params.len(), 1);
    assert!(
        matches!(&c.locals[1], Local::Instantiation(i) if matches!(&i.ty.kind, TypeRefKind::Named { args, .. } if args.len() == 1))
    );
    let Local::Table(t) = &c.locals[4] else {
        panic!()
    };
    assert_eq!(t.properties.len(), 6);
    let TableProperty::Key(keys, _) = &t.properties[0] else {
        panic!()
    };
    assert_eq!(keys[0].match_kind.name, "lpm");
    assert_eq!(keys[0].annotations[0].name.name, "name");
    let TableProperty::Actions(acts, _) = &t.properties[1] else {
        panic!()
    };
    assert_eq!(acts.len(), 3);
    assert!(acts[0].args.is_none());
    assert_eq!(acts[1].annotations[0].name.name, "defaultonly");
    assert!(matches!(&acts[1].args, Some(a) if a.is_empty()));
    assert!(matches!(
        &acts[2].name.kind,
        ExprKind::Name {
            dot_prefix: true,
            ..
        }
    ));
    assert!(matches!(
        &t.properties[2],
        TableProperty::DefaultAction { is_const: true, .. }
    ));
    assert!(
        matches!(&t.properties[3], TableProperty::Other { name, is_const: false, .. } if name.name == "size")
    );
    let TableProperty::Entries {
        entries,
        is_const: true,
        ..
    } = &t.properties[4]
    else {
        panic!()
    };
    assert_eq!(entries.len(), 3);
    assert!(entries[0].priority.is_none());
    assert_eq!(
        int(entries[1].priority.as_ref().expect("priority")).value,
        10
    );
    assert!(matches!(
        &entries[1].keysets[..],
        [Keyset::Mask(..), Keyset::Range(..)]
    ));
    assert_eq!(entries[2].annotations[0].name.name, "priority");
    let Local::Table(u) = &c.locals[5] else {
        panic!()
    };
    assert!(matches!(
        &u.properties[1],
        TableProperty::DefaultAction {
            is_const: false,
            ..
        }
    ));
    assert!(
        matches!(&u.properties[2], TableProperty::Entries { is_const: false, entries, .. } if entries.len() == 1)
    );

    let stmts = &c.apply.stmts;
    let StmtKind::Switch(_, cases) = &stmts[0].kind else {
        panic!()
    };
    assert!(cases[0].body.is_none(), "fall-through label");
    assert!(cases[1].body.is_some());
    assert!(matches!(cases[2].label, SwitchLabel::Default(_)));
    let StmtKind::If(_, then, Some(els)) = &stmts[1].kind else {
        panic!()
    };
    assert!(matches!(then.kind, StmtKind::Block(_)));
    assert!(
        matches!(&els.kind, StmtKind::If(_, t2, Some(_)) if matches!(t2.kind, StmtKind::Assign(..)))
    );
    assert!(matches!(stmts[2].kind, StmtKind::Empty));
    assert!(matches!(stmts[3].kind, StmtKind::Block(_)));
}

#[test]
fn statements_in_apply_blocks() {
    let s = apply_stmts(
        "bit<8> y = 1; const bit<8> z = 2; x = y; f(x); h.setValid(); return; exit; x[3:0] = 1; s.a[0].b = 2;",
    );
    assert!(matches!(&s[0].kind, StmtKind::Var(v) if v.init.is_some()));
    assert!(matches!(&s[1].kind, StmtKind::Const(_)));
    assert!(matches!(&s[2].kind, StmtKind::Assign(..)));
    assert!(matches!(&s[3].kind, StmtKind::Call(_)));
    assert!(matches!(&s[4].kind, StmtKind::Call(_)));
    assert!(matches!(&s[5].kind, StmtKind::Return(None)));
    assert!(matches!(&s[6].kind, StmtKind::Exit));
    assert!(matches!(&s[7].kind, StmtKind::Assign(l, _) if matches!(l.kind, ExprKind::Slice(..))));
    assert!(matches!(&s[8].kind, StmtKind::Assign(l, _) if matches!(l.kind, ExprKind::Member(..))));
}

#[test]
fn annotations_are_kept() {
    let p = parse(
        "@name(\"x\") @defaultonly @priority(1, 2) @a[k = v] @pragma foo bar 1
         action a() { }",
    );
    let Decl::Action(a) = &p.decls[0] else {
        panic!()
    };
    let anns = &a.annotations;
    assert_eq!(anns.len(), 5);
    assert!(
        matches!(&anns[0].body, AnnotationBody::Exprs(e) if matches!(&e[0].kind, ExprKind::Str(s) if s == "x"))
    );
    assert!(matches!(anns[1].body, AnnotationBody::Empty));
    assert!(matches!(&anns[2].body, AnnotationBody::Exprs(e) if e.len() == 2));
    assert!(matches!(&anns[3].body, AnnotationBody::Tokens(t) if t == "k = v"));
    assert_eq!(anns[4].name.name, "pragma");
    assert!(matches!(&anns[4].body, AnnotationBody::Tokens(t) if t == "foo bar 1"));
}

#[test]
fn keywords_and_contextual_names() {
    // Contextual words are ordinary names.
    let p = parse("struct s { bit<8> key; bit<8> state; bit<8> entries; bit<8> type; bit<8> actions; bit<8> apply; bit<8> size; bit<8> accept; }");
    let Decl::Struct(s) = &p.decls[0] else {
        panic!()
    };
    assert_eq!(s.fields.len(), 8);
    // Reserved words are not.
    for kw in [
        "if",
        "table",
        "bit",
        "control",
        "default",
        "in",
        "int",
        "transition",
        "true",
    ] {
        let d = errors(&format!("struct s {{ bit<8> {kw}; }}"));
        assert_eq!(d[0].code, "E0001", "{kw}");
    }
    // A keyword prefix is still a name.
    let p = parse("const bit<8> inx = 1; const bit<8> ifa = 2; const bit<8> bits = 3;");
    assert_eq!(p.decls.len(), 3);
}

// ------------------------------------------------------------------ preprocessor

#[test]
fn defines_and_conditionals() {
    let src = "#define W 8
#define V W + 1
#define SELF SELF + 1
#define A B
#define B A
const bit<W> a = V;
const bit<8> b = SELF;
const bit<8> c = A;
@name(\"W\") const bit<8> d = 0; // W in a comment
#ifdef W
const bit<8> e = 1;
#else
const bit<8> e = 2;
#endif
#undef W
#ifndef W
const bit<8> f = 1;
#endif
#if defined(V) && !defined W && (3 * 2 == 6)
const bit<8> g = 1;
#elif 1
const bit<8> g = 2;
#else
const bit<8> g = 3;
#endif
#if 0
#error not reached
#foo not reached either
#endif
#define MULTI 1 + \\
    2
const bit<8> h = MULTI;
";
    let (p, _) = parse_with(src, &FrontOptions::default());
    let printed = print_program(&p);
    let expect = "const bit<8> a = 8 + 1;

const bit<8> b = SELF + 1;

const bit<8> c = A;

@name(\"W\")
const bit<8> d = 0;

const bit<8> e = 1;

const bit<8> f = 1;

const bit<8> g = 1;

const bit<8> h = 1 + 2;
";
    assert_eq!(printed, expect);
}

#[test]
fn function_like_macros() {
    let src = "#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define _STR(x) #x
#define STR(x) _STR(x)
#define CAT(a, b) a ## b
#define TWICE(x) MAX(x, x)
#define SEVEN() 7
#define W 8
#define REC(x) REC(x + 1)
const bit<8> a = MAX(1, MAX(2, /* a comment, with a comma */
    3));
const bit<8> b = TWICE(W) + SEVEN();
const bit<8> CAT(c, W) = 1;
@name(STR(W)) @other(_STR(W)) const bit<8> d = MAX (0, (4 + 5)) ;
const bit<8> e = REC(1);
const bit<8> MAX = 3;
";
    let (p, _) = parse_with(src, &FrontOptions::default());
    let printed = print_program(&p);
    let expect = "const bit<8> a = (1 > ((2 > 3) ? 2 : 3)) ? 1 : ((2 > 3) ? 2 : 3);

const bit<8> b = ((8 > 8) ? 8 : 8) + 7;

const bit<8> cW = 1;

@name(\"8\")
@other(\"W\")
const bit<8> d = (0 > (4 + 5)) ? 0 : (4 + 5);

const bit<8> e = REC(1 + 1);

const bit<8> MAX = 3;
";
    assert_eq!(printed, expect);
}

#[test]
fn command_line_defines() {
    let opts = FrontOptions {
        include_dirs: Vec::new(),
        defines: vec![
            ("SIZE".to_owned(), "512".to_owned()),
            ("FLAG".to_owned(), String::new()),
        ],
    };
    let (p, _) = parse_with("#ifdef FLAG\nconst bit<16> s = SIZE;\n#endif\n", &opts);
    let Decl::Constant(c) = &p.decls[0] else {
        panic!()
    };
    assert_eq!(int(&c.value).value, 512);
    let opts = FrontOptions {
        include_dirs: Vec::new(),
        defines: vec![("1bad".to_owned(), String::new())],
    };
    let mut sm = SourceMap::new();
    let d = parse_source(&mut sm, "t.p4", "", &opts).expect_err("bad -D");
    assert_eq!(d[0].code, "E0021");
}

#[test]
fn includes_relative_bundled_dirs_guards_and_once() {
    // Relative includes, include guards (mini_core.p4 is included twice).
    let mut sm = SourceMap::new();
    let p = parse_file(
        &mut sm,
        Path::new("tests/syntax/ok/full.p4"),
        &FrontOptions::default(),
    )
    .unwrap_or_else(|d| panic!("{}", render_all(&d, &sm)));
    let errors = p
        .decls
        .iter()
        .filter(|d| matches!(d, Decl::Error(_)))
        .count();
    assert_eq!(errors, 1, "guarded include must be expanded once");
    assert!(sm
        .file(1)
        .is_some_and(|f| f.name == "tests/syntax/ok/mini_core.p4"));

    // `<x>` searched in include_dirs; `#pragma once`; an unguarded file twice.
    let opts = FrontOptions {
        include_dirs: vec![PathBuf::from("tests/syntax/ok")],
        defines: Vec::new(),
    };
    let mut sm = SourceMap::new();
    let p = parse_source(
        &mut sm,
        "main.p4",
        "#include <once.p4>\n#include <once.p4>\n#include \"unguarded.p4\"\n#include \"unguarded.p4\"\n\
         #include \"guard_else.p4\"\n#include \"guard_else.p4\"\n",
        &opts,
    )
    .unwrap_or_else(|d| panic!("{}", render_all(&d, &sm)));
    let names: Vec<String> = p
        .decls
        .iter()
        .map(|d| match d {
            Decl::Constant(c) => c.name.name.clone(),
            _ => String::new(),
        })
        .collect();
    // `#ifndef G ... #else ... #endif` is not a guard: the second inclusion
    // takes the `#else` branch.
    assert_eq!(names, ["ONCE", "UNGUARDED", "UNGUARDED", "FIRST", "AGAIN"]);

    // Bundled includes.
    for name in ["core.p4", "v1model.p4", "netsparse.p4"] {
        let text = bundled_include(name).expect("bundled");
        assert!(!text.is_empty());
        let mut sm = SourceMap::new();
        let p = parse_source(
            &mut sm,
            "main.p4",
            &format!("#include <{name}>\n#include <{name}>\n"),
            &FrontOptions::default(),
        )
        .unwrap_or_else(|d| panic!("{}", render_all(&d, &sm)));
        assert!(!p.decls.is_empty(), "{name} declares something");
        let file = (0..sm.len() as u32)
            .find(|&i| sm.file(i).is_some_and(|f| f.name == format!("<{name}>")));
        assert!(file.is_some(), "<{name}> registered");
    }
    assert!(bundled_include("other.p4").is_none());

    // A cycle without guards is an error, not an endless loop.
    let mut sm = SourceMap::new();
    let d = parse_file(
        &mut sm,
        Path::new("tests/syntax/include_cycle.p4"),
        &FrontOptions::default(),
    )
    .expect_err("cycle");
    assert_eq!(d[0].code, "E0013");
}

#[test]
fn preprocessor_errors() {
    let cases = [
        ("#define F(x, x) x\n", "E0020"),
        ("#define F(x, ...) x\n", "E0020"),
        ("#define F(x) x\nconst bit<8> c = F(1, 2);\n", "E0020"),
        ("#define F(x) x\nconst bit<8> c = F(1;\n", "E0020"),
        ("#endif\n", "E0030"),
        ("#if 1\n#else\n#elif 1\n#endif\n", "E0030"),
        ("#ifdef X\n", "E0031"),
        ("#if 1 +\n#endif\n", "E0032"),
        ("#if 1 / 0\n#endif\n", "E0032"),
        ("#wat\n", "E0033"),
        ("#error stop here\n", "E0034"),
        ("#include nothing\n", "E0015"),
        ("#include <nope.p4>\n", "E0010"),
        ("#define\n", "E0021"),
        ("/* open\n", "E0004"),
        ("@name(\"open\n", "E0005"),
    ];
    for (src, code) in cases {
        let d = errors(src);
        assert_eq!(d[0].code, code, "for {src:?}");
    }
    let d = errors("#error stop here\n");
    assert!(d[0].message.contains("stop here"));
    // Exponential macros are cut off.
    let mut src = String::from("#define M0 x\n");
    for i in 1..40 {
        src.push_str(&format!("#define M{i} M{} M{}\n", i - 1, i - 1));
    }
    src.push_str("const bit<8> c = M39;\n");
    assert_eq!(errors(&src)[0].code, "E0022");
}

// ------------------------------------------------------------------ spans

fn line_col(sm: &SourceMap, sp: Span) -> (String, usize, usize) {
    let f = sm.file(sp.file).expect("file");
    let (l, c) = f.line_col(sp.start as usize);
    (f.name.clone(), l, c)
}

#[test]
fn spans_point_into_original_files() {
    let src = "#include \"mini_core.p4\"
#define VAL 16w0x800
// comment
const bit<16> k = VAL;
#ifdef NOPE
const bit<8> skipped = 1;
#endif
  const bit<8>   second = 1 + 2;
";
    let (p, sm) = parse_with(src, &FrontOptions::default());
    // The first declaration comes from the included file.
    let Decl::Error(e) = &p.decls[0] else {
        panic!()
    };
    let (name, line, _) = line_col(&sm, e.span);
    assert_eq!(name, "tests/syntax/ok/mini_core.p4");
    assert_eq!(sm.snippet(e.members[0].span), "NoError");
    assert_eq!(line, 6);
    let n = p.decls.len();
    let (Decl::Constant(k), Decl::Constant(second)) = (&p.decls[n - 2], &p.decls[n - 1]) else {
        panic!()
    };
    assert_eq!(
        line_col(&sm, k.name.span),
        ("tests/syntax/ok/test.p4".to_owned(), 4, 15)
    );
    // A token from a macro expansion points at the macro use.
    assert_eq!(sm.snippet(k.value.span), "VAL");
    assert_eq!(line_col(&sm, k.value.span).1, 4);
    assert_eq!(
        line_col(&sm, second.span),
        ("tests/syntax/ok/test.p4".to_owned(), 8, 3)
    );
    assert_eq!(sm.snippet(second.span), "const bit<8>   second = 1 + 2;");
    assert_eq!(sm.snippet(second.value.span), "1 + 2");
}

#[test]
fn diagnostics_point_into_original_files() {
    // An error after an include and a multi-line directive.
    let src = "#include \"mini_core.p4\"
#define LONG 1 + \\
    2
const bit<8> a = LONG;
const bit<8> b = 3
const bit<8> c = 4;
";
    let mut sm = SourceMap::new();
    let d = parse_source(
        &mut sm,
        "tests/syntax/ok/test.p4",
        src,
        &FrontOptions::default(),
    )
    .expect_err("missing ;");
    assert_eq!(d[0].code, "E0001");
    assert_eq!(
        line_col(&sm, d[0].span()),
        ("tests/syntax/ok/test.p4".to_owned(), 6, 1)
    );
    // An error inside a macro expansion points at the macro use.
    let mut sm = SourceMap::new();
    let d = parse_source(
        &mut sm,
        "t.p4",
        "#define BAD (1 2)\n\nconst bit<8> a = BAD;\n",
        &FrontOptions::default(),
    )
    .expect_err("bad macro");
    assert_eq!(sm.snippet(d[0].span()), "BAD");
    assert_eq!(line_col(&sm, d[0].span()).1, 3);
}
