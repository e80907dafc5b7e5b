//! IR → pipeline artifact.
//!
//! Instantiation and lowering in one walk from the main package: every
//! variable of every instance gets field slots (headers get bit offsets),
//! sub-controls, functions and copy-in/copy-out are inlined as explicit
//! statements, calls with results are hoisted into temporaries, tables get
//! their hidden `hit`/`action_run` slots, and extern calls become artifact
//! statements or `Prim`s. Anything the artifact cannot express is a
//! diagnostic ([`codes::NOT_EXPRESSIBLE`]), never a silently wrong artifact.//!
//! The lowering is one struct, `Lower`, whose methods are grouped by
//! language element: `storage.rs` (slots and places), `package.rs` (the
//! main package and instances), `tables.rs` (actions and tables),
//! `parser.rs`, `control.rs` (controls and the NetSparse blocks), `stmt.rs`,
//! `place.rs` (l-values, copies), `expr.rs`, `call.rs` (inlining and
//! arguments), `builtin.rs` (primitives and externs) and `psa_externs.rs`
//! (PSA's hash, checksum, random and digest externs).

mod builtin;
mod call;
mod control;
mod expr;
mod package;
mod parser;
mod place;
mod psa;
mod psa_externs;
mod stmt;
mod storage;
mod tables;
mod wide;

use std::collections::HashMap;

use netsparse_externs::artifact::{
    self as a, ActionId, Arch, Artifact, ExternId, FieldId, HeaderId, HeaderRef, StackId, TableId,
    ARTIFACT_FORMAT, ARTIFACT_VERSION,
};

use crate::ast::Span;
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{self, ExprKind, Handle, Module, Type};

/// The artifact and what the graph pass needs besides it.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The artifact.
    pub artifact: Artifact,
    /// Source span of each artifact table (same order as `artifact.tables`).
    pub table_spans: Vec<Span>,
}

/// Lower a checked module to the pipeline artifact.
pub fn lower(m: &Module) -> Result<Lowered, Vec<Diagnostic>> {
    let Some(main) = &m.main else {
        return Err(vec![Diagnostic::error(
            codes::MAIN_PACKAGE,
            "the program has no `main` package instantiation",
            Span::default(),
        )]);
    };
    let mut l = Lower::new(m, main.arch);
    let package = l.package(main);
    if !l.diags.is_empty() {
        return Err(l.diags);
    }
    let Some(package) = package else {
        return Err(vec![Diagnostic::error(
            codes::NOT_EXPRESSIBLE,
            "the package could not be lowered",
            main.span,
        )]);
    };
    let artifact = Artifact {
        format: ARTIFACT_FORMAT.to_string(),
        version: ARTIFACT_VERSION,
        program: m.name.clone(),
        arch: main.arch,
        fields: l.fields,
        headers: l.headers,
        stacks: l.stacks,
        errors: m.errors.clone(),
        parsers: l.parsers,
        controls: l.controls,
        actions: l.actions,
        tables: l.tables,
        externs: l.externs,
        package,
    };
    Ok(Lowered {
        artifact,
        table_spans: l.table_spans,
    })
}

/// Storage of a value: a tree of slots shaped like its type.
#[derive(Clone, Debug)]
enum Place {
    Scalar(FieldId),
    Header(HeaderId),
    Stack(StackId),
    Struct(Vec<Place>),
    /// A value over 128 bits: its 128-bit parts, most significant first.
    Wide(Vec<FieldId>),
    /// A packet (`packet_in` / `packet_out`): no storage.
    Packet,
}

/// Where an l-value (or place-like r-value) lives.
#[derive(Clone, Debug)]
enum LPlace {
    Static(Place),
    DynHeader(HeaderRef),
    DynField(HeaderRef, u32),
    /// A field over 128 bits of a run-time stack element: its first part's index.
    DynWide(HeaderRef, u32),
    Slice(FieldId, u16, u16),
    /// `[hi:lo]` of a value over 128 bits: its parts and its width.
    WideSlice(Vec<FieldId>, u16, u16, u16),
}

/// What a call produced.
enum CallResult {
    Nothing,
    Place(Place),
    Table(TableId),
    Expr(a::Expr),
}

/// The NIC path being lowered (RIG externs are path-specific).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NicSide {
    HostToNet,
    NetToHost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Outside,
    PerPacket,
    PerPr,
}

#[derive(Clone, Debug)]
enum InstRef {
    Extern(ExternId),
    Control(usize),
}

/// One instance of a control (or the global pseudo-instance 0).
struct Inst {
    path: String,
    vars: HashMap<Handle<ir::Var>, Place>,
    tables: HashMap<Handle<ir::Table>, TableId>,
    actions: HashMap<Handle<ir::Action>, ActionId>,
    instances: HashMap<Handle<ir::Instance>, InstRef>,
    region: Region,
}

impl Inst {
    fn new(path: String, region: Region) -> Inst {
        Inst {
            path,
            vars: HashMap::new(),
            tables: HashMap::new(),
            actions: HashMap::new(),
            instances: HashMap::new(),
            region,
        }
    }
}

struct Lower<'m> {
    m: &'m Module,
    arch: Arch,
    fields: Vec<a::Field>,
    headers: Vec<a::Header>,
    stacks: Vec<a::HeaderStack>,
    parsers: Vec<a::Parser>,
    controls: Vec<a::Control>,
    actions: Vec<a::Action>,
    tables: Vec<a::Table>,
    externs: Vec<a::ExternInstance>,
    extern_spans: Vec<Span>,
    table_spans: Vec<Span>,
    /// The IR action each artifact action was lowered from.
    action_origins: Vec<ir::Handle<ir::Action>>,
    diags: Vec<Diagnostic>,
    insts: Vec<Inst>,
    shared: Vec<Place>,
    temps: u32,
    region: Region,
    cache: Option<ExternId>,
    middle_name: String,
    user_metadata: Option<(Type, Place)>,
    ret_place: Option<Place>,
    /// Copy-outs of the inlined action calls being lowered, innermost first:
    /// an `exit` inside them performs these before leaving (p4c semantics).
    exit_copies: Vec<a::Stmt>,
    nic_side: Option<NicSide>,
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

impl<'m> Lower<'m> {
    fn new(m: &'m Module, arch: Arch) -> Lower<'m> {
        Lower {
            m,
            arch,
            fields: Vec::new(),
            headers: Vec::new(),
            stacks: Vec::new(),
            parsers: Vec::new(),
            controls: Vec::new(),
            actions: Vec::new(),
            tables: Vec::new(),
            externs: Vec::new(),
            extern_spans: Vec::new(),
            table_spans: Vec::new(),
            action_origins: Vec::new(),
            diags: Vec::new(),
            insts: vec![Inst::new(String::new(), Region::Outside)],
            shared: Vec::new(),
            temps: 0,
            region: Region::Outside,
            cache: None,
            middle_name: String::new(),
            user_metadata: None,
            ret_place: None,
            exit_copies: Vec::new(),
            nic_side: None,
        }
    }

    fn err(&mut self, code: &'static str, msg: impl Into<String>, span: Span) {
        self.diags.push(Diagnostic::error(code, msg, span));
    }

    fn inexpressible(&mut self, what: &str, span: Span) {
        let d = Diagnostic::error(
            codes::NOT_EXPRESSIBLE,
            format!("{what}: the pipeline artifact cannot express this"),
            span,
        )
        .with_hint("rewrite it with simpler expressions (e.g. through a temporary variable)");
        self.diags.push(d);
    }
}

fn konst(value: u128, width: u16, signed: bool) -> a::Expr {
    a::Expr::Const {
        value: value & crate::check::consts::mask(width),
        width,
        signed,
    }
}

/// `hdr.ipv4.ttl`-style path of an IR expression, for names.
pub(crate) fn expr_path(m: &Module, e: &ir::Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Var(v) => Some(m.vars[*v].name.clone()),
        ExprKind::Field(b, i) => {
            let base = expr_path(m, b)?;
            let name = match &b.ty {
                Type::Header(s) | Type::Struct(s) => {
                    m.structs[*s].fields.get(*i as usize)?.name.clone()
                }
                _ => return None,
            };
            Some(format!("{base}.{name}"))
        }
        _ => None,
    }
}
