//! The typed intermediate representation: one [`Module`] per program.
//!
//! Built by [`crate::check`] from the AST once every name is resolved and every
//! expression typed; consumed by the back ends ([`crate::back`]) which
//! instantiate it (allocate field slots, inline sub-controls and functions)
//! into the pipeline artifact. Definitions live in [`Arena`]s and refer to each
//! other by [`Handle`] (naga style). Expressions are typed trees.
//!
//! Constants are folded by the checker: a `const` name never appears here, only
//! its value. Integer literals have been given their fixed-width types.
//!
//! This file holds types, declarations, tables, blocks and the module;
//! expressions, calls (with the builtins) and statements are in `code.rs`.

mod arena;
mod code;
mod print;

pub use arena::{Arena, Handle};
pub use code::*;
pub use print::print_module;

use netsparse_externs::artifact::{
    Arch, CollOp, CounterUnit, HashAlgo, KeyMatch, MatchKind, MeterUnit, SpinOp,
};

use crate::ast::{BinOp, Direction, Span, UnOp};

/// Width of `error` values and of non-serializable enum values in field slots.
pub const TAG_WIDTH: u16 = 32;

/// A type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `void` (calls that return nothing).
    Void,
    /// `bool`.
    Bool,
    /// `bit<w>`.
    Bit(u16),
    /// `int<w>`.
    Int(u16),
    /// `int`: infinite precision, compile time only.
    InfInt,
    /// `string` (only as a `log_msg` argument).
    Str,
    /// `error`.
    Error,
    /// `match_kind`.
    MatchKind,
    /// An enum (serializable or not).
    Enum(Handle<EnumDef>),
    /// A `type T N;` declaration: a distinct type with a representation.
    NewType(Handle<NewTypeDef>),
    /// A header type.
    Header(Handle<StructDef>),
    /// A struct type.
    Struct(Handle<StructDef>),
    /// A header stack `H[n]`.
    Stack(Handle<StructDef>, u32),
    /// A list / tuple value `{a, b}`.
    List(Vec<Type>),
    /// A type parameter not bound yet (`T` of `extern void hash<T>(...)`).
    Var(String),
    /// An instance of an extern object with its type arguments.
    Extern(Handle<ExternObjectDef>, Vec<Type>),
    /// An instance of a parser declaration.
    Parser(Handle<Parser>),
    /// An instance of a control declaration.
    Control(Handle<Control>),
    /// A parser or control type (as in a package's parameters).
    BlockType(Handle<BlockTypeDef>, Vec<Type>),
    /// The result of `t.apply()`: has `.hit`, `.miss`, `.action_run`.
    TableResult(Handle<Table>),
    /// `_` in an argument position.
    DontCare,
}

impl Type {
    /// A fixed-width integer type (`bit<w>` / `int<w>`): `Some((width, signed))`.
    pub fn int_width(&self) -> Option<(u16, bool)> {
        match self {
            Type::Bit(w) => Some((*w, false)),
            Type::Int(w) => Some((*w, true)),
            _ => None,
        }
    }

    /// Whether values of this type contain a `Var` (unbound type parameter).
    pub fn has_vars(&self) -> bool {
        match self {
            Type::Var(_) => true,
            Type::List(ts) | Type::Extern(_, ts) | Type::BlockType(_, ts) => {
                ts.iter().any(Type::has_vars)
            }
            _ => false,
        }
    }
}

/// A compile-time value. Fixed-width values (`bit`, `int`, `error`, enums)
/// are held as their bit pattern in the low bits of a `u128` (two's
/// complement for `int<w>`), as in the artifact.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// `true` / `false`.
    Bool(bool),
    /// An infinite-precision integer (`int`), checked to fit an `i128`.
    Int(i128),
    /// The bits of a fixed-width value. A value of a type over 128 bits is
    /// these 128 bits sign-extended to its width (so a converted negative
    /// `int` is exact; the checker wraps a wider unsigned constant in a cast).
    Bits(u128),
    /// A string literal.
    Str(String),
}

/// A header or struct declaration.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// Name.
    pub name: String,
    /// `header` rather than `struct`.
    pub is_header: bool,
    /// A `header_union` (a struct of headers, at most one valid).
    pub is_union: bool,
    /// Fields in declaration order.
    pub fields: Vec<FieldDef>,
    /// `@controller_header("packet_in" | "packet_out")` on a header type:
    /// the header a P4Runtime server strips from (adds to) packets to (from)
    /// the controller.
    pub controller_header: Option<String>,
    /// Declared in a bundled include.
    pub bundled: bool,
    /// Where.
    pub span: Span,
}

/// One field of a header or struct.
#[derive(Clone, Debug)]
pub struct FieldDef {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// `@field_list(n)` indices (v1model: preserved by resubmit/recirculate/clone).
    pub field_lists: Vec<u32>,
    /// A `varbit<N>` header field (`ty` is `bit<N>`, its maximum width): the
    /// last field of its header, with a per-packet length.
    pub varbit: bool,
}

/// An enum declaration.
#[derive(Clone, Debug)]
pub struct EnumDef {
    /// Name.
    pub name: String,
    /// Underlying type of a serializable enum (`enum bit<8> E`).
    pub underlying: Option<Type>,
    /// Members and their values (the member index for plain enums).
    pub members: Vec<(String, u128)>,
    /// Declared in a bundled include.
    pub bundled: bool,
}

/// A `type T Name;` declaration.
#[derive(Clone, Debug)]
pub struct NewTypeDef {
    /// Name.
    pub name: String,
    /// Representation.
    pub underlying: Type,
}

/// A function or method signature.
#[derive(Clone, Debug)]
pub struct Signature {
    /// Name.
    pub name: String,
    /// Type parameters of the function/method itself.
    pub type_params: Vec<String>,
    /// Parameters.
    pub params: Vec<ParamDef>,
    /// Return type (`Void` for none; the extern type for constructors).
    pub ret: Type,
    /// Where.
    pub span: Span,
}

/// A parameter of a signature.
#[derive(Clone, Debug)]
pub struct ParamDef {
    /// Name.
    pub name: String,
    /// Direction (`None` = directionless).
    pub direction: Option<Direction>,
    /// Type (may contain [`Type::Var`]).
    pub ty: Type,
    /// Has a default value (may be omitted at the call).
    pub has_default: bool,
}

/// An extern object declaration.
#[derive(Clone, Debug)]
pub struct ExternObjectDef {
    /// Name.
    pub name: String,
    /// Type parameters.
    pub type_params: Vec<String>,
    /// Constructors.
    pub ctors: Vec<Signature>,
    /// Methods (overloads by arity allowed).
    pub methods: Vec<Signature>,
    /// Declared in a bundled include.
    pub bundled: bool,
}

/// An extern function declaration.
#[derive(Clone, Debug)]
pub struct ExternFnDef {
    /// Signature.
    pub sig: Signature,
    /// Declared in a bundled include.
    pub bundled: bool,
}

/// A parser type, control type (`control Ingress<H, M>(...);`) or package.
#[derive(Clone, Debug)]
pub struct BlockTypeDef {
    /// What it declares.
    pub kind: BlockKind,
    /// Name.
    pub name: String,
    /// Type parameters.
    pub type_params: Vec<String>,
    /// Parameters.
    pub params: Vec<ParamDef>,
    /// Where.
    pub span: Span,
}

/// The kinds of block types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// `parser P<...>(...);`
    Parser,
    /// `control C<...>(...);`
    Control,
    /// `package P<...>(...);`
    Package,
}

/// A variable: a parameter, a local, or a compiler temporary. Variables of
/// controls (including their actions' parameters) are instantiated once per
/// control instance; those of top-level actions and functions once.
#[derive(Clone, Debug)]
pub struct Var {
    /// Name as written (`hdr`, `port`), `$tN` for temporaries.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// Role.
    pub kind: VarKind,
    /// Where declared.
    pub span: Span,
}

/// What a variable is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// A parameter of a parser, control, function or action.
    Param(Option<Direction>),
    /// A local variable.
    Local,
}

/// An action.
#[derive(Clone, Debug)]
pub struct Action {
    /// Name as declared.
    pub name: String,
    /// `@name` annotation, if any.
    pub cp_name: Option<String>,
    /// `@id` annotation (P4Runtime id), if any.
    pub p4rt_id: Option<u32>,
    /// The control it is declared in (`None`: top level).
    pub owner: Option<Handle<Control>>,
    /// Parameters: directional first, then directionless.
    pub params: Vec<Handle<Var>>,
    /// Body.
    pub body: Block,
    /// Created by the compiler (an implicit `NoAction`).
    pub synthetic: bool,
    /// Declared in a bundled include.
    pub bundled: bool,
    /// Where.
    pub span: Span,
}

/// A function with a body (inlined at every call).
#[derive(Clone, Debug)]
pub struct Function {
    /// Name.
    pub name: String,
    /// Parameters.
    pub params: Vec<Handle<Var>>,
    /// Return type.
    pub ret: Type,
    /// Holds the return value.
    pub ret_var: Option<Handle<Var>>,
    /// Body.
    pub body: Block,
    /// Where.
    pub span: Span,
}

/// A table key.
#[derive(Clone, Debug)]
pub struct Key {
    /// Control-plane name.
    pub name: String,
    /// The value matched.
    pub expr: Expr,
    /// Width in bits.
    pub width: u16,
    /// Match kind.
    pub match_kind: MatchKind,
    /// Where.
    pub span: Span,
}

/// An action listed in a table's `actions`.
#[derive(Clone, Debug)]
pub struct TableAction {
    /// The action.
    pub action: Handle<Action>,
    /// Arguments bound to its directional parameters.
    pub bound: Vec<Arg>,
    /// `@defaultonly`.
    pub default_only: bool,
    /// `@tableonly`.
    pub table_only: bool,
    /// Added by the compiler (implicit `NoAction` default).
    pub implicit: bool,
}

/// A table entry from the program.
#[derive(Clone, Debug)]
pub struct Entry {
    /// One match per key.
    pub keys: Vec<KeyMatch>,
    /// Index into the table's `actions`.
    pub action: usize,
    /// Action data (directionless arguments).
    pub args: Vec<u128>,
    /// Explicit priority.
    pub priority: Option<u32>,
}

/// A match-action table.
#[derive(Clone, Debug)]
pub struct Table {
    /// Name as declared.
    pub name: String,
    /// `@name` annotation, if any.
    pub cp_name: Option<String>,
    /// `@id` annotation (P4Runtime id), if any.
    pub p4rt_id: Option<u32>,
    /// The control it is declared in.
    pub owner: Handle<Control>,
    /// Keys.
    pub keys: Vec<Key>,
    /// Actions.
    pub actions: Vec<TableAction>,
    /// Index into `actions` of the default action.
    pub default_action: usize,
    /// Default action data.
    pub default_args: Vec<u128>,
    /// `const default_action`.
    pub default_const: bool,
    /// Entries from the program.
    pub entries: Vec<Entry>,
    /// `const entries`.
    pub entries_const: bool,
    /// `size`.
    pub size: u32,
    /// `counters = ...`.
    pub direct_counter: Option<Handle<Instance>>,
    /// `meters = ...`.
    pub direct_meter: Option<Handle<Instance>>,
    /// Where (the table's name, which diagnostics point at).
    pub span: Span,
}

/// What an extern object instance is on this target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternInstKind {
    /// `register<T>(size)` / PSA `Register<T, S>(size[, initial_value])`.
    Register {
        /// Cell width.
        width: u16,
        /// Cells.
        size: u32,
        /// Every cell's value at start (PSA's `initial_value`, else 0).
        initial: u128,
    },
    /// `counter(size, type)`.
    Counter {
        /// Cells.
        size: u32,
        /// Unit.
        unit: CounterUnit,
    },
    /// `direct_counter(type)`.
    DirectCounter {
        /// Unit.
        unit: CounterUnit,
    },
    /// `meter(size, type)`.
    Meter {
        /// Cells.
        size: u32,
        /// Unit.
        unit: MeterUnit,
    },
    /// `direct_meter<T>(type)`.
    DirectMeter {
        /// Unit.
        unit: MeterUnit,
    },
    /// PSA `Hash<O>(algo)` (stateless: each `get_hash` is a hash primitive).
    Hash {
        /// Algorithm.
        algo: HashAlgo,
    },
    /// PSA `Checksum<W>(algo)`.
    Checksum {
        /// Algorithm.
        algo: HashAlgo,
        /// Result width.
        width: u16,
    },
    /// PSA `InternetChecksum()`.
    InternetChecksum,
    /// PSA `Random<T>(min, max)` (stateless: reads draw from the target's
    /// seeded generator).
    Random {
        /// Lower bound.
        min: u128,
        /// Upper bound (at least `min`).
        max: u128,
        /// Width of `T`.
        width: u16,
    },
    /// PSA `Digest<T>()` (stateless: each `pack` sends a digest).
    Digest,
}

/// What an instance instantiates.
#[derive(Clone, Debug)]
pub enum InstanceKind {
    /// An extern object.
    Extern {
        /// The declaration.
        def: Handle<ExternObjectDef>,
        /// Type arguments (unbound ones stay `Var`).
        type_args: Vec<Type>,
        /// What the target makes of it.
        kind: ExternInstKind,
    },
    /// A control.
    Control(Handle<Control>),
    /// A parser.
    Parser(Handle<Parser>),
}

/// An instantiation (`counter(...) c;`, `MySub() sub;`).
#[derive(Clone, Debug)]
pub struct Instance {
    /// Instance name.
    pub name: String,
    /// What.
    pub kind: InstanceKind,
    /// Where.
    pub span: Span,
}

/// A control declaration.
#[derive(Clone, Debug)]
pub struct Control {
    /// Name.
    pub name: String,
    /// Apply parameters.
    pub params: Vec<Handle<Var>>,
    /// Local variables with initializers (run at the start of every apply).
    pub local_inits: Vec<Stmt>,
    /// Local instances.
    pub instances: Vec<Handle<Instance>>,
    /// Local actions in declaration order.
    pub actions: Vec<Handle<Action>>,
    /// Tables in declaration order.
    pub tables: Vec<Handle<Table>>,
    /// The apply block.
    pub apply: Block,
    /// Has an `ns_pr_h` or `ns_pr_md_t` parameter (a NetSparse per-PR control).
    pub per_pr: bool,
    /// Declared in a bundled include.
    pub bundled: bool,
    /// Where.
    pub span: Span,
}

/// A parser declaration.
#[derive(Clone, Debug)]
pub struct Parser {
    /// Name.
    pub name: String,
    /// Apply parameters.
    pub params: Vec<Handle<Var>>,
    /// Local variables with initializers (run before `start`).
    pub local_inits: Vec<Stmt>,
    /// Local instances.
    pub instances: Vec<Handle<Instance>>,
    /// States in source order.
    pub states: Vec<State>,
    /// Index of `start`.
    pub start: usize,
    /// Where.
    pub span: Span,
}

/// A parser state.
#[derive(Clone, Debug)]
pub struct State {
    /// Name.
    pub name: String,
    /// Statements.
    pub body: Block,
    /// Transition.
    pub transition: Transition,
    /// Where.
    pub span: Span,
}

/// A transition target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A state (index into the parser's states).
    State(usize),
    /// `accept`.
    Accept,
    /// `reject`.
    Reject,
}

/// A keyset of a select case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyset {
    /// `default` / `_`.
    Any,
    /// A value.
    Value(u128),
    /// `value &&& mask` (value already masked).
    Mask(u128, u128),
    /// `lo .. hi`.
    Range(u128, u128),
}

/// A parser transition.
#[derive(Clone, Debug)]
pub enum Transition {
    /// Unconditional.
    Direct(Target),
    /// `select`.
    Select {
        /// Key expressions.
        keys: Vec<Expr>,
        /// Cases: one keyset per key, and the target.
        cases: Vec<(Vec<Keyset>, Target)>,
    },
}

/// A block (parser or control) passed to the main package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockRef {
    /// A parser.
    Parser(Handle<Parser>),
    /// A control.
    Control(Handle<Control>),
}

/// One argument of the main package.
#[derive(Clone, Debug)]
pub struct PackageArg {
    /// The package parameter's name (`ig`, `middle`).
    pub param: String,
    /// The block passed.
    pub block: BlockRef,
    /// Instance name used as the prefix of the block's tables and actions.
    pub instance_name: String,
    /// For every apply parameter of the block: the key of the package-level
    /// variable it is bound to (see [`MainPackage::shared`]), or `None` for
    /// `packet_in` / `packet_out`.
    pub bindings: Vec<Option<usize>>,
    /// Where.
    pub span: Span,
}

/// A variable shared by several blocks of the package (`hdr`, `meta`,
/// `standard_metadata`): the parameters of the blocks of one pipe that have
/// the same package-level type are the same storage.
#[derive(Clone, Debug)]
pub struct SharedVar {
    /// Name of the slot tree (`hdr`, `ingress.meta`).
    pub name: String,
    /// Its type.
    pub ty: Type,
    /// The pipe it belongs to (index into the architecture's pipes).
    pub pipe: usize,
    /// What it is (`"H"`, `"M"`, `"standard_metadata_t"`): the type
    /// parameter name or concrete type name of the package parameter.
    pub key: String,
}

/// The `main` package instantiation.
#[derive(Clone, Debug)]
pub struct MainPackage {
    /// The architecture.
    pub arch: Arch,
    /// The package name (`V1Switch`).
    pub package: String,
    /// Arguments in parameter order.
    pub args: Vec<PackageArg>,
    /// Package-level shared variables.
    pub shared: Vec<SharedVar>,
    /// Where.
    pub span: Span,
}

/// A folded constant, kept for `--emit ir`.
#[derive(Clone, Debug)]
pub struct ConstDef {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// Value.
    pub value: Value,
    /// Declared in a bundled include.
    pub bundled: bool,
}

/// The typed program.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Program name (file stem).
    pub name: String,
    /// Headers and structs.
    pub structs: Arena<StructDef>,
    /// Enums.
    pub enums: Arena<EnumDef>,
    /// `type` declarations.
    pub newtypes: Arena<NewTypeDef>,
    /// Error names: the seven core errors first, then the program's.
    pub errors: Vec<String>,
    /// Match kind names.
    pub match_kinds: Vec<String>,
    /// Top-level constants.
    pub constants: Vec<ConstDef>,
    /// Extern objects.
    pub extern_objects: Arena<ExternObjectDef>,
    /// Extern functions.
    pub extern_fns: Arena<ExternFnDef>,
    /// Parser types, control types and packages.
    pub block_types: Arena<BlockTypeDef>,
    /// Every variable of the program.
    pub vars: Arena<Var>,
    /// Every action.
    pub actions: Arena<Action>,
    /// Every function.
    pub functions: Arena<Function>,
    /// Every table.
    pub tables: Arena<Table>,
    /// Every instance.
    pub instances: Arena<Instance>,
    /// Every control declaration.
    pub controls: Arena<Control>,
    /// Every parser declaration.
    pub parsers: Arena<Parser>,
    /// The main package.
    pub main: Option<MainPackage>,
    /// Analysis results attached after lowering (graphs, stages).
    pub analysis: Option<crate::graph::Analysis>,
}

/// The names of P4's core errors (defined once, in the artifact schema).
pub use netsparse_externs::artifact::CORE_ERRORS;

impl Module {
    /// An empty module named `name`, with the core errors.
    pub fn new(name: impl Into<String>) -> Module {
        Module {
            name: name.into(),
            errors: CORE_ERRORS.iter().map(|s| s.to_string()).collect(),
            ..Module::default()
        }
    }

    /// Bits a header field of type `ty` takes on the wire: a scalar's width,
    /// or the sum of a struct's fields (a header field may be a struct).
    pub fn field_bits(&self, ty: &Type) -> Option<u32> {
        match ty {
            Type::Struct(s) if !self.structs[*s].is_union => self.structs[*s]
                .fields
                .iter()
                .map(|f| self.field_bits(&f.ty))
                .sum(),
            _ => self.scalar_width(ty).map(u32::from),
        }
    }

    /// Width in bits of a scalar type (bool, bit, int, error, enum, newtype).
    pub fn scalar_width(&self, ty: &Type) -> Option<u16> {
        match ty {
            Type::Bool => Some(1),
            Type::Bit(w) | Type::Int(w) => Some(*w),
            Type::Error => Some(TAG_WIDTH),
            Type::Enum(e) => Some(match &self.enums[*e].underlying {
                Some(u) => self.scalar_width(u).unwrap_or(TAG_WIDTH),
                None => TAG_WIDTH,
            }),
            Type::NewType(n) => self.scalar_width(&self.newtypes[*n].underlying),
            _ => None,
        }
    }

    /// Whether a scalar type is signed (`int<w>`, or an enum/newtype over one).
    pub fn scalar_signed(&self, ty: &Type) -> bool {
        match ty {
            Type::Int(_) => true,
            Type::Enum(e) => self.enums[*e]
                .underlying
                .as_ref()
                .is_some_and(|u| self.scalar_signed(u)),
            Type::NewType(n) => self.scalar_signed(&self.newtypes[*n].underlying),
            _ => false,
        }
    }

    /// The type's name as P4 writes it.
    pub fn type_name(&self, ty: &Type) -> String {
        match ty {
            Type::Void => "void".into(),
            Type::Bool => "bool".into(),
            Type::Bit(w) => format!("bit<{w}>"),
            Type::Int(w) => format!("int<{w}>"),
            Type::InfInt => "int".into(),
            Type::Str => "string".into(),
            Type::Error => "error".into(),
            Type::MatchKind => "match_kind".into(),
            Type::Enum(e) => self.enums[*e].name.clone(),
            Type::NewType(n) => self.newtypes[*n].name.clone(),
            Type::Header(s) | Type::Struct(s) => self.structs[*s].name.clone(),
            Type::Stack(s, n) => format!("{}[{n}]", self.structs[*s].name),
            Type::List(ts) => {
                let inner: Vec<String> = ts.iter().map(|t| self.type_name(t)).collect();
                format!("tuple<{}>", inner.join(", "))
            }
            Type::Var(v) => v.clone(),
            Type::Extern(e, args) => {
                let name = &self.extern_objects[*e].name;
                if args.is_empty() {
                    name.clone()
                } else {
                    let inner: Vec<String> = args.iter().map(|t| self.type_name(t)).collect();
                    format!("{name}<{}>", inner.join(", "))
                }
            }
            Type::Parser(p) => self.parsers[*p].name.clone(),
            Type::Control(c) => self.controls[*c].name.clone(),
            Type::BlockType(b, args) => {
                let name = &self.block_types[*b].name;
                if args.is_empty() {
                    name.clone()
                } else {
                    let inner: Vec<String> = args.iter().map(|t| self.type_name(t)).collect();
                    format!("{name}<{}>", inner.join(", "))
                }
            }
            Type::TableResult(t) => format!("{}.apply_result", self.tables[*t].name),
            Type::DontCare => "_".into(),
        }
    }
}
