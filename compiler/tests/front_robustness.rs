//! The front end never panics, overflows its stack or blows up on hostile
//! input: a deterministic corpus of mangled real programs plus pathological
//! inputs (deep nesting, huge lines, long operator chains, bad bytes).
//! Every input must give `Ok` or `Err(diagnostics)` without an internal
//! error; the elapsed time is printed (never asserted).

use std::path::PathBuf;
use std::time::Instant;

use netsparse_compiler::diag::Diagnostic;
use netsparse_compiler::front::{
    bundled_include, parse_file, parse_source, print_program, FrontOptions,
};
use netsparse_compiler::source::SourceMap;

/// A tiny deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Parse `text`; it may be accepted or rejected, but never crash.
fn check(label: &str, text: &str) -> Result<(), Vec<Diagnostic>> {
    let mut sm = SourceMap::new();
    let opts = FrontOptions {
        include_dirs: vec![PathBuf::from("tests/syntax/ok")],
        defines: Vec::new(),
    };
    let r = parse_source(&mut sm, "tests/syntax/ok/mangled.p4", text, &opts);
    match &r {
        Ok(p) => {
            // The printer must cope with whatever was accepted.
            let _ = print_program(p);
        }
        Err(diags) => {
            assert!(!diags.is_empty(), "{label}: Err without diagnostics");
            for d in diags {
                assert!(
                    d.code != "E0099" && d.code != "E0098",
                    "{label}: internal error {d:?}"
                );
                let sp = d.span();
                let f = sm
                    .file(sp.file)
                    .unwrap_or_else(|| panic!("{label}: span in unknown file"));
                assert!(
                    sp.start <= sp.end && sp.end as usize <= f.text.len(),
                    "{label}: span out of range"
                );
                // Rendering must work too.
                let _ = d.render(&sm);
            }
        }
    }
    r.map(|_| ())
}

fn must_fail(label: &str, text: &str, code: &str) {
    let t = Instant::now();
    match check(label, text) {
        Ok(()) => panic!("{label}: accepted"),
        Err(d) => assert_eq!(d[0].code, code, "{label}: {}", d[0].message),
    }
    println!("{label}: {:?}", t.elapsed());
}

fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in ["core.p4", "v1model.p4", "netsparse.p4"] {
        if let Some(t) = bundled_include(name) {
            out.push((name.to_owned(), t.to_owned()));
        }
    }
    let mut files: Vec<PathBuf> = ["../programs", "tests/syntax/ok", "tests/programs"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    files.sort();
    for f in files {
        if let Ok(t) = std::fs::read_to_string(&f) {
            out.push((f.display().to_string(), t));
        }
    }
    out
}

const SNIPPETS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ">>",
    ";",
    ",",
    ":",
    "=",
    "&&&",
    "..",
    "@",
    "@name(",
    "\"",
    "/*",
    "*/",
    "//",
    "#if 1\n",
    "#else\n",
    "#endif\n",
    "#define X X X\n",
    "#define F(a, b) a ## b #a\n",
    "F(",
    "F(1, (2, 3))",
    "for (",
    "for (bit<8> i in 0 .. ",
    "break;",
    "continue;",
    "+=",
    "|+|=",
    ">>=",
    "header_union",
    "varbit<8>",
    "#include \"full.p4\"\n",
    "8w",
    "0x",
    "bit<",
    "transition",
    "select(",
    "default",
    "_",
    "\0",
    "\u{FFFD}",
    "\\\n",
    "apply",
    "table",
    "key = {",
    "switch",
    "if (",
    "else",
    "++",
    "|+|",
    "?",
    "!",
    "~",
    "-",
];

#[test]
fn mangled_programs_never_crash() {
    let start = Instant::now();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut accepted = 0usize;
    let mut rejected = 0usize;
    for (name, text) in corpus() {
        let bytes = text.as_bytes();
        let lines: Vec<&str> = text.lines().collect();
        for round in 0..30 {
            let mut b: Vec<u8> = bytes.to_vec();
            match round % 6 {
                0 => b.truncate(rng.below(b.len() + 1)),
                1 => {
                    for _ in 0..1 + rng.below(8) {
                        let i = rng.below(b.len());
                        if let Some(x) = b.get_mut(i) {
                            *x = (rng.next() & 0xFF) as u8;
                        }
                    }
                }
                2 => {
                    let mut ls = lines.clone();
                    for _ in 0..1 + rng.below(4) {
                        if !ls.is_empty() {
                            let i = rng.below(ls.len());
                            ls.remove(i);
                        }
                    }
                    b = ls.join("\n").into_bytes();
                }
                3 => {
                    let mut ls = lines.clone();
                    for _ in 0..1 + rng.below(4) {
                        if !ls.is_empty() {
                            let i = rng.below(ls.len());
                            let l = ls[i];
                            ls.insert(rng.below(ls.len() + 1), l);
                        }
                    }
                    b = ls.join("\n").into_bytes();
                }
                4 => {
                    for _ in 0..1 + rng.below(6) {
                        let s = SNIPPETS[rng.below(SNIPPETS.len())];
                        let at = rng.below(b.len() + 1);
                        b.splice(at..at, s.bytes());
                    }
                }
                _ => {
                    // Swap two random ranges of bytes.
                    let n = b.len();
                    let (i, j) = (rng.below(n), rng.below(n));
                    let (lo, hi) = (i.min(j), i.max(j));
                    b[lo..hi].reverse();
                }
            }
            let mangled = String::from_utf8_lossy(&b);
            match check(&format!("{name} round {round}"), &mangled) {
                Ok(()) => accepted += 1,
                Err(_) => rejected += 1,
            }
        }
    }
    assert!(
        rejected > accepted,
        "mutations should mostly break programs ({accepted} accepted, {rejected} rejected)"
    );
    println!(
        "mangled corpus: {accepted} accepted, {rejected} rejected in {:?}",
        start.elapsed()
    );
}

#[test]
fn deep_nesting_is_rejected_not_overflowed() {
    let n = 10_000;
    let wrap = |open: &str, close: &str| {
        format!("const bit<8> c = {}1{};", open.repeat(n), close.repeat(n))
    };
    must_fail("10k parentheses", &wrap("(", ")"), "E0003");
    must_fail("10k list braces", &wrap("{", "}"), "E0003");
    must_fail(
        "10k indexes",
        &format!("const bit<8> c = {}0{};", "a[".repeat(n), "]".repeat(n)),
        "E0003",
    );
    must_fail(
        "10k blocks",
        &format!(
            "control C() {{ apply {{ {} }} }}",
            "{".repeat(n) + &"}".repeat(n)
        ),
        "E0003",
    );
    must_fail(
        "10k if blocks",
        &format!(
            "control C() {{ apply {{ {}{} }} }}",
            "if (x) {".repeat(n),
            "}".repeat(n)
        ),
        "E0003",
    );
    must_fail(
        "10k nested ifs without braces",
        &format!(
            "control C() {{ apply {{ {}x = 1; }} }}",
            "if (x) ".repeat(n)
        ),
        "E0003",
    );
    must_fail(
        "10k else-if chain",
        &format!(
            "control C() {{ apply {{ if (x) {{ }}{} }} }}",
            " else if (x) { }".repeat(n)
        ),
        "E0003",
    );
    for op in ["!", "-", "~", "+", "- ", "!~"] {
        must_fail(
            &format!("10k unary {op:?}"),
            &format!("const bit<8> c = {}x;", op.repeat(n)),
            "E0003",
        );
    }
    must_fail(
        "10k casts",
        &format!("const bit<8> c = {}x;", "(bit<8>) ".repeat(n)),
        "E0003",
    );
    must_fail(
        "10k named casts",
        &format!("const bit<8> c = {}x;", "(T) ".repeat(n)),
        "E0003",
    );
    must_fail(
        "10k member chain",
        &format!("const bit<8> c = x{};", ".y".repeat(n)),
        "E0003",
    );
    must_fail(
        "10k call chain",
        &format!("const bit<8> c = f{};", "()".repeat(n)),
        "E0003",
    );
    must_fail(
        "10k type arguments",
        &format!("{}x{} r;", "T<".repeat(n), ">".repeat(n)),
        "E0003",
    );
    must_fail(
        "10k ternaries",
        &format!("const bit<8> c = {}x;", "a ? b : ".repeat(n)),
        "E0003",
    );
    must_fail(
        "10k #if",
        &format!("{}{}", "#if 1\n".repeat(n), "#endif\n".repeat(n - 1)),
        "E0031",
    );
    must_fail(
        "deep macro chain",
        &{
            let mut s = String::new();
            for i in 0..200 {
                s.push_str(&format!("#define M{i} M{}\n", i + 1));
            }
            s + "const bit<8> c = M0;\n"
        },
        "E0022",
    );
}

#[test]
fn long_inputs_stay_linear() {
    let n = 100_000;
    for op in ["+", "&&", "++", "<"] {
        let chain = format!("const bit<8> c = x{};", format!(" {op} x").repeat(n));
        must_fail(&format!("100k `{op}` chain"), &chain, "E0003");
    }
    // A 10 MB single line: one huge identifier (valid), a huge comment (valid),
    // a huge string in an annotation (valid), and 10 MB of declarations.
    let big = 10 << 20;
    let t = Instant::now();
    assert!(check(
        "10 MB identifier",
        &format!("const bit<8> c = {};", "a".repeat(big))
    )
    .is_ok());
    assert!(check(
        "10 MB comment",
        &format!("// {}\nconst bit<8> c = 1;", "x".repeat(big))
    )
    .is_ok());
    assert!(check(
        "10 MB string",
        &format!("@name(\"{}\") const bit<8> c = 1;", "s".repeat(big))
    )
    .is_ok());
    println!("10 MB lines: {:?}", t.elapsed());
    // Parsing time grows linearly with the number of declarations.
    for mb in [1, 2] {
        let t = Instant::now();
        let decls = "const bit<8> c = 1 + 2; ".repeat((mb << 20) / 24);
        assert!(check("declarations on one line", &decls).is_ok());
        println!("{mb} MB of declarations on one line: {:?}", t.elapsed());
    }
    let t = Instant::now();
    let junk = "a b ".repeat(big / 4);
    assert!(check("10 MB of junk", &junk).is_err());
    println!("10 MB of junk: {:?}", t.elapsed());
}

#[test]
fn bad_bytes_and_unterminated_constructs() {
    must_fail(
        "NUL byte",
        "const bit<8> c = 1;\0\nconst bit<8> d = 2;",
        "E0001",
    );
    must_fail("NUL in a name", "const bit<8> c\0d = 1;", "E0001");
    must_fail("lossy replacement", "const bit<8> c = \u{FFFD};", "E0001");
    must_fail(
        "unterminated comment",
        "const bit<8> c = 1; /* ...",
        "E0004",
    );
    must_fail(
        "unterminated string",
        "@name(\"abc) const bit<8> c = 1;",
        "E0005",
    );
    must_fail("unterminated #if", "#if 1\nconst bit<8> c = 1;\n", "E0031");
    assert!(check("directive continued at end of file", "#define X 1 \\").is_ok());
    must_fail("empty program with junk", "\u{7f}", "E0001");
    assert!(check("empty", "").is_ok());
    assert!(check("only comments", "// a\n/* b */").is_ok());

    // Invalid UTF-8 in a file is a diagnostic, not a panic.
    let dir = std::env::temp_dir().join(format!("netsparse-front-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let main = dir.join("bad.p4");
    std::fs::write(&main, b"const bit<8> c = 1;\n\xff\xfe\x00 junk\n").expect("write");
    let inc = dir.join("inc.p4");
    std::fs::write(&inc, b"#include \"bad.p4\"\n").expect("write");
    for (path, code) in [(&main, "E0012"), (&inc, "E0012")] {
        let mut sm = SourceMap::new();
        let d = parse_file(&mut sm, path, &FrontOptions::default()).expect_err("invalid UTF-8");
        assert_eq!(d[0].code, code);
    }
    // A directory is not a readable source file.
    let mut sm = SourceMap::new();
    let d = parse_file(&mut sm, &dir, &FrontOptions::default()).expect_err("directory");
    assert_eq!(d[0].code, "E0011");
    let _ = std::fs::remove_dir_all(&dir);
}
