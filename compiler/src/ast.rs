//! The abstract syntax tree of the P4_16-style language, with spans.
//!
//! Produced by the front end (`front`: preprocessor + pest grammar), consumed by
//! the checker (`check`) which resolves names and types and builds the IR.
//! Every node carries a [`Span`] into the *original* source file (spans survive
//! preprocessing), so diagnostics point at what the user wrote.
//!
//! The AST is deliberately close to the surface syntax: it keeps annotations,
//! untyped integer literals, dotted names and keyset syntax as written. All
//! meaning (what a name refers to, widths, directions) is decided by the checker.

use serde::Serialize;

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    /// Index of the file in the [`crate::source::SourceMap`].
    pub file: u32,
    /// Byte offset of the first character.
    pub start: u32,
    /// Byte offset one past the last character.
    pub end: u32,
}

impl Span {
    /// A span covering both `self` and `other` (which must be in the same file).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// An identifier with its location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ident {
    /// The name as written.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// A whole program: the top-level declarations of the preprocessed source,
/// including those of bundled includes (`core.p4`, `v1model.p4`, `netsparse.p4`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Program {
    /// Declarations in source order.
    pub decls: Vec<Decl>,
}

/// An annotation such as `@name("x")`, `@defaultonly`, `@priority(10)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Annotation {
    /// Name without the `@`.
    pub name: Ident,
    /// What follows the name.
    pub body: AnnotationBody,
    /// The whole annotation.
    pub span: Span,
}

/// The body of an annotation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum AnnotationBody {
    /// `@defaultonly`.
    Empty,
    /// `@name("x")`, `@priority(3)`: a parenthesised expression list.
    Exprs(Vec<Expr>),
    /// `@pragma ...` or anything unparsable as expressions: the raw token text.
    Tokens(String),
}

/// A top-level declaration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Decl {
    /// `const T x = e;`
    Constant(ConstDecl),
    /// `header h { ... }`
    Header(StructDecl),
    /// `header_union u { ... }`
    HeaderUnion(StructDecl),
    /// `struct s { ... }`
    Struct(StructDecl),
    /// `typedef T n;` or `type T n;`
    Typedef(TypedefDecl),
    /// `enum E { A, B }` or `enum bit<8> E { A = 1 }`
    Enum(EnumDecl),
    /// `error { A, B }`
    Error(MemberList),
    /// `match_kind { a, b }`
    MatchKind(MemberList),
    /// `extern void f(...);`
    ExternFunction(FunctionProto),
    /// `extern X<T> { X(...); T m(...); }`
    ExternObject(ExternObjectDecl),
    /// `parser P(...) { states }`
    Parser(ParserDecl),
    /// `parser P<H>(...);` — a parser type for packages.
    ParserType(BlockTypeDecl),
    /// `control C(...) { ... apply { } }`
    Control(ControlDecl),
    /// `control C<H>(...);` — a control type for packages.
    ControlType(BlockTypeDecl),
    /// `package P<H>(...);`
    Package(BlockTypeDecl),
    /// A top-level `action a(...) { }`.
    Action(ActionDecl),
    /// A function `T f(...) { }`.
    Function(FunctionDecl),
    /// `T(args) name;` — at top level, typically `V1Switch(...) main;`.
    Instantiation(Instantiation),
}

/// `const T name = value;`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConstDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Declared type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Initializer.
    pub value: Expr,
    /// Whole declaration.
    pub span: Span,
}

/// A header, header union or struct declaration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StructDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Type parameters (`struct S<T> { ... }`), usually empty.
    pub type_params: Vec<Ident>,
    /// Fields in order.
    pub fields: Vec<StructField>,
    /// Whole declaration.
    pub span: Span,
}

/// One field of a header/struct.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StructField {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Whole field.
    pub span: Span,
}

/// `typedef T name;` / `type T name;`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypedefDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Aliased type.
    pub ty: TypeRef,
    /// New name.
    pub name: Ident,
    /// `type` (a distinct new type) rather than `typedef` (an alias).
    pub is_new_type: bool,
    /// Whole declaration.
    pub span: Span,
}

/// `enum [bit<N>] E { A [= v], ... }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnumDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Underlying type for serializable enums (`enum bit<8> E`).
    pub underlying: Option<TypeRef>,
    /// Name.
    pub name: Ident,
    /// Members with their values (serializable enums only).
    pub members: Vec<EnumMember>,
    /// Whole declaration.
    pub span: Span,
}

/// One enum member.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnumMember {
    /// Name.
    pub name: Ident,
    /// `= value` of a serializable enum.
    pub value: Option<Expr>,
}

/// A brace-enclosed list of names (`error { ... }`, `match_kind { ... }`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemberList {
    /// The names.
    pub members: Vec<Ident>,
    /// Whole declaration.
    pub span: Span,
}

/// A function or method signature.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionProto {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Return type (`None` for an extern object's constructor).
    pub ret: Option<TypeRef>,
    /// Name.
    pub name: Ident,
    /// Type parameters.
    pub type_params: Vec<Ident>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Whole signature.
    pub span: Span,
}

/// `extern Name<T> { methods }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExternObjectDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Type parameters.
    pub type_params: Vec<Ident>,
    /// Constructors (`ret == None`) and methods (`abstract` methods are rejected).
    pub methods: Vec<FunctionProto>,
    /// Whole declaration.
    pub span: Span,
}

/// A parameter direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Direction {
    /// `in`
    In,
    /// `out`
    Out,
    /// `inout`
    InOut,
}

/// A parameter of a parser, control, action, function, extern or package.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Param {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Direction; `None` for directionless (action data, constructor args).
    pub direction: Option<Direction>,
    /// Type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Default value (`= e`).
    pub default: Option<Expr>,
    /// Whole parameter.
    pub span: Span,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeRef {
    /// What kind of type.
    pub kind: TypeRefKind,
    /// Where.
    pub span: Span,
}

/// The kinds of types that can be written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum TypeRefKind {
    /// `bool`
    Bool,
    /// `bit<W>` (width an expression, usually a literal); plain `bit` is `bit<1>`.
    Bit(Box<Expr>),
    /// `int<W>`
    Int(Box<Expr>),
    /// `varbit<W>` (the checker rejects it with a diagnostic).
    Varbit(Box<Expr>),
    /// `int` — arbitrary-precision integer (compile-time only).
    InfInt,
    /// `error`
    Error,
    /// `match_kind`
    MatchKind,
    /// `string`
    String,
    /// `void`
    Void,
    /// `_` (don't care type argument)
    DontCare,
    /// A named type with optional type arguments: `headers_t`, `register<bit<32>>`.
    /// A leading `.` (top-level scope) is kept in `dot_prefix`.
    Named {
        /// The name.
        name: Ident,
        /// `.name` — resolve in the top-level scope.
        dot_prefix: bool,
        /// Type arguments.
        args: Vec<TypeRef>,
    },
    /// `T[size]` — a header stack (or array).
    Stack {
        /// Element type.
        elem: Box<TypeRef>,
        /// Number of elements.
        size: Box<Expr>,
    },
    /// `tuple<T1, T2>`
    Tuple(Vec<TypeRef>),
}

/// `parser P(...) { locals; states }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParserDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Type parameters.
    pub type_params: Vec<Ident>,
    /// Apply parameters.
    pub params: Vec<Param>,
    /// Constructor parameters (`parser P(...)(bit<8> x)`).
    pub ctor_params: Vec<Param>,
    /// Local declarations (constants, variables, instantiations, value sets).
    pub locals: Vec<Local>,
    /// States in source order.
    pub states: Vec<ParserState>,
    /// Whole declaration.
    pub span: Span,
}

/// A parser or control local declaration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Local {
    /// `const T x = e;`
    Const(ConstDecl),
    /// `T x [= e];`
    Var(VarDecl),
    /// `T(args) name;`
    Instantiation(Instantiation),
    /// `action a(...) { }` (controls only)
    Action(ActionDecl),
    /// `table t { }` (controls only)
    Table(TableDecl),
    /// `value_set<T>(size) name;` (parsers only; the checker may reject it)
    ValueSet(ValueSetDecl),
}

/// `T x [= e];`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VarDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Initializer.
    pub init: Option<Expr>,
    /// Whole declaration.
    pub span: Span,
}

/// `value_set<T>(size) name;`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValueSetDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Element type.
    pub ty: TypeRef,
    /// Size expression.
    pub size: Expr,
    /// Name.
    pub name: Ident,
    /// Whole declaration.
    pub span: Span,
}

/// `T<args>(ctor args) name;`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instantiation {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// The instantiated type (extern, parser, control or package), with type arguments.
    pub ty: TypeRef,
    /// Constructor arguments.
    pub args: Vec<Argument>,
    /// Instance name.
    pub name: Ident,
    /// Whole declaration.
    pub span: Span,
}

/// A parser state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParserState {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Statements.
    pub body: Vec<Stmt>,
    /// The transition; `None` means `transition reject` (P4_16 spec).
    pub transition: Option<Transition>,
    /// Whole state.
    pub span: Span,
}

/// A transition statement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Transition {
    /// `transition name;` (including `accept` / `reject`).
    Direct(Ident),
    /// `transition select(exprs) { cases }`
    Select {
        /// The selector expressions.
        exprs: Vec<Expr>,
        /// Cases in order.
        cases: Vec<SelectCase>,
        /// Whole select.
        span: Span,
    },
}

/// `keyset: next;`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SelectCase {
    /// One keyset per selector expression (a single `default` / `_` matches all).
    pub keysets: Vec<Keyset>,
    /// Target state.
    pub next: Ident,
    /// Whole case.
    pub span: Span,
}

/// A keyset expression in a `select` case or a table entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Keyset {
    /// `default`
    Default(Span),
    /// `_`
    DontCare(Span),
    /// An expression (a value, or a value-set name in `select`).
    Expr(Expr),
    /// `value &&& mask`
    Mask(Expr, Expr),
    /// `lo .. hi`
    Range(Expr, Expr),
}

/// `control C(...) { locals apply { } }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ControlDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Type parameters.
    pub type_params: Vec<Ident>,
    /// Apply parameters.
    pub params: Vec<Param>,
    /// Constructor parameters.
    pub ctor_params: Vec<Param>,
    /// Locals: constants, variables, instantiations, actions, tables.
    pub locals: Vec<Local>,
    /// The `apply` block.
    pub apply: Block,
    /// Whole declaration.
    pub span: Span,
}

/// A parser type, control type or package type declaration (no body).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockTypeDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Type parameters.
    pub type_params: Vec<Ident>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Whole declaration.
    pub span: Span,
}

/// `action a(params) { body }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActionDecl {
    /// Annotations (`@name`, `@defaultonly`...).
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Parameters: directional first, then directionless (action data).
    pub params: Vec<Param>,
    /// Body.
    pub body: Block,
    /// Whole declaration.
    pub span: Span,
}

/// A function with a body.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionDecl {
    /// Signature.
    pub proto: FunctionProto,
    /// Body.
    pub body: Block,
}

/// `table t { properties }`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Properties in source order.
    pub properties: Vec<TableProperty>,
    /// Whole declaration.
    pub span: Span,
}

/// A table property.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum TableProperty {
    /// `key = { e : kind; ... }`
    Key(Vec<KeyElement>, Span),
    /// `actions = { a; b(x); }`
    Actions(Vec<ActionRef>, Span),
    /// `[const] default_action = a(args);`
    DefaultAction {
        /// The action call.
        action: ActionRef,
        /// `const default_action`.
        is_const: bool,
        /// Whole property.
        span: Span,
    },
    /// `[const] entries = { ... }`
    Entries {
        /// The entries.
        entries: Vec<TableEntry>,
        /// `const entries`.
        is_const: bool,
        /// Whole property.
        span: Span,
    },
    /// Any other `[const] name = expr;` (`size`, `counters`, `meters`,
    /// `implementation`, `support_timeout`, `largest_priority_wins`, ...).
    Other {
        /// Property name.
        name: Ident,
        /// Value.
        value: Expr,
        /// `const`.
        is_const: bool,
        /// Whole property.
        span: Span,
    },
}

/// `expr : match_kind @annotations;`
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyElement {
    /// Annotations (`@name("...")`).
    pub annotations: Vec<Annotation>,
    /// The key expression.
    pub expr: Expr,
    /// The match kind name.
    pub match_kind: Ident,
    /// Whole element.
    pub span: Span,
}

/// An action reference in `actions`, `default_action` or an entry: `a` or `a(args)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActionRef {
    /// Annotations (`@defaultonly`, `@tableonly`).
    pub annotations: Vec<Annotation>,
    /// The action name (possibly dotted, e.g. `.NoAction`).
    pub name: Expr,
    /// Arguments, if a parenthesised list was written.
    pub args: Option<Vec<Argument>>,
    /// Whole reference.
    pub span: Span,
}

/// One table entry: `keyset : action(args);` optionally with a priority.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableEntry {
    /// Annotations (`@priority(n)`).
    pub annotations: Vec<Annotation>,
    /// `priority = n :` (P4_16 1.2.4 syntax).
    pub priority: Option<Expr>,
    /// One keyset per key (a tuple `(a, b)` for multi-key tables).
    pub keysets: Vec<Keyset>,
    /// The action.
    pub action: ActionRef,
    /// Whole entry.
    pub span: Span,
}

/// A call argument, possibly named (`f(x = 1)`), possibly `_`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Argument {
    /// The name of a named argument.
    pub name: Option<Ident>,
    /// The value (`ExprKind::DontCare` for `_`).
    pub value: Expr,
    /// Whole argument.
    pub span: Span,
}

/// A `{ ... }` block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Block {
    /// Statements.
    pub stmts: Vec<Stmt>,
    /// Including the braces.
    pub span: Span,
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stmt {
    /// What kind.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Statement kinds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum StmtKind {
    /// `lhs = rhs;`
    Assign(Expr, Expr),
    /// A call used as a statement: `t.apply();`, `pkt.extract(h);`, `a(1);`.
    Call(Expr),
    /// `if (c) s [else s]`
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    /// `{ ... }`
    Block(Block),
    /// `switch (e) { cases }`
    Switch(Expr, Vec<SwitchCase>),
    /// `return [e];`
    Return(Option<Expr>),
    /// `exit;`
    Exit,
    /// `;`
    Empty,
    /// A local variable declaration inside a block.
    Var(VarDecl),
    /// A local constant inside a block.
    Const(ConstDecl),
    /// `for (init; cond; updates) body` (P4_16 1.2.4).
    For(Box<ForStmt>),
    /// `for ([T] x in collection) body` (P4_16 1.2.4).
    ForIn(Box<ForInStmt>),
    /// `lhs op= rhs;` whose `lhs` calls something (an index computed by a
    /// function): the checker evaluates those calls once. Other compound
    /// assignments arrive as `lhs = lhs op rhs`.
    OpAssign(BinOp, Expr, Expr),
    /// `break;` (inside a loop).
    Break,
    /// `continue;` (inside a loop).
    Continue,
}

/// A C-style `for` loop. Compound assignments in it (`i += 1`) arrive
/// desugared like everywhere else (`i = i + 1`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForStmt {
    /// Initialisers: variable declarations, assignments or calls, in order.
    pub init: Vec<Stmt>,
    /// The condition; `None` loops until `break` (or a `return`/`exit`).
    pub cond: Option<Expr>,
    /// Updates, run after the body and after `continue`.
    pub updates: Vec<Stmt>,
    /// The body.
    pub body: Stmt,
}

/// A `for`-`in` loop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForInStmt {
    /// The loop variable's type when the loop declares it (`for (bit<8> i in ...)`);
    /// `None` when it names a variable declared before the loop.
    pub ty: Option<TypeRef>,
    /// The loop variable.
    pub var: Ident,
    /// What is iterated.
    pub collection: ForInCollection,
    /// The body.
    pub body: Stmt,
}

/// The collection of a `for`-`in` loop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ForInCollection {
    /// `lo .. hi`: both ends included, nothing when `lo > hi`.
    Range(Expr, Expr),
    /// A header stack (every element, index order) or a list expression.
    Expr(Expr),
}

/// `label: label: { body }` — labels without a body fall through to the next case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchCase {
    /// The label.
    pub label: SwitchLabel,
    /// `None` for a fall-through label (`a:` directly followed by another label).
    pub body: Option<Block>,
    /// Whole case.
    pub span: Span,
}

/// A switch label.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum SwitchLabel {
    /// `default`
    Default(Span),
    /// An action name (for `action_run`) or a constant expression.
    Expr(Expr),
}

/// An expression.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expr {
    /// What kind.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// An integer literal as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IntLit {
    /// The magnitude (literals never carry a sign; `-` is a unary operator).
    pub value: u128,
    /// `8w5` → `Some((false, 8))`; `8s5` → `Some((true, 8))`; plain `5` → `None`.
    pub width: Option<(bool, u32)>,
    /// The literal's text, for messages.
    pub text: String,
    /// A value over 128 bits: its 128-bit limbs, least significant first
    /// (`value` is then the first). Only a literal with a width may be wider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wide: Option<Vec<u128>>,
}

/// Expression kinds, with P4_16 precedence resolved by the parser.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ExprKind {
    /// An integer literal.
    Int(IntLit),
    /// `true` / `false`
    Bool(bool),
    /// `"text"`
    Str(String),
    /// A name; `dot_prefix` for `.name` (top-level scope).
    Name {
        /// The identifier.
        name: Ident,
        /// `.name`.
        dot_prefix: bool,
    },
    /// `e.member` (fields, methods, `error.X`, `Enum.X`, `stack.next`, `t.apply`).
    Member(Box<Expr>, Ident),
    /// `e[i]` — stack element.
    Index(Box<Expr>, Box<Expr>),
    /// `e[hi:lo]`
    Slice(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `callee<type args>(args)`
    Call {
        /// The callee (`Name`, or `Member` for methods).
        callee: Box<Expr>,
        /// Explicit type arguments (`lookahead<bit<16>>()`).
        type_args: Vec<TypeRef>,
        /// Arguments.
        args: Vec<Argument>,
    },
    /// A unary operator.
    Unary(UnOp, Box<Expr>),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(T) e`
    Cast(TypeRef, Box<Expr>),
    /// `{ a, b }` — list / tuple initializer.
    List(Vec<Expr>),
    /// `{ f = e, ... }` — struct/header initializer.
    StructInit(Vec<(Ident, Expr)>),
    /// `_` as an argument or keyset.
    DontCare,
    /// `T.minSizeInBits()`-style calls on types are not supported; a type
    /// used where an expression is expected (e.g. `bit<8>` in a cast-like
    /// position) is kept here for the checker to reject.
    Type(TypeRef),
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum UnOp {
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `-`
    Neg,
    /// `+` (no-op)
    Plus,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `|+|`
    SatAdd,
    /// `|-|`
    SatSub,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
    BitOr,
    /// `++`
    Concat,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::SatAdd => "|+|",
            BinOp::SatSub => "|-|",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::Concat => "++",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

impl UnOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            UnOp::Not => "!",
            UnOp::BitNot => "~",
            UnOp::Neg => "-",
            UnOp::Plus => "+",
        }
    }
}
