//! The pipeline artifact: what `netsparse compile` writes and what the switch
//! (`netsparse-bmv2`) and the NIC (`netsparse-nic`) load.
//!
//! It lives in `externs` so that targets depend on the schema, never on the
//! compiler. It is versioned serde JSON, like BMv2's JSON but ours, and holds
//! everything a target needs to run a program and nothing source-level:
//!
//! * Every header field, metadata field, local variable and action parameter of
//!   the program is a **field slot** ([`Field`]) with a fixed width. Slots are
//!   allocated once per program (P4 has no recursion), so a target can keep the
//!   whole per-packet state in one flat array indexed by [`FieldId`]: no name
//!   lookups at run time.
//! * Control flow is structured ([`Stmt`]): `If`, `Switch`, table application.
//!   Sub-controls, sub-parsers, functions and directly-called actions are
//!   inlined by the compiler; copy-in/copy-out is explicit `Assign`s.
//! * Applying a table writes two hidden slots, [`Table::hit`] and
//!   [`Table::action_run`] (the [`ActionId`] that ran), so `t.apply().hit` and
//!   `switch (t.apply().action_run)` are ordinary `If` / `Switch` statements on
//!   those slots.
//! * Names (`"MyIngress.ipv4_lpm"`, `"hdr.ipv4.ttl"`) are kept only for the
//!   control plane (table entries name tables, actions and keys) and for logs.
//!
//! ## Values
//! A value of width `w` is held in the low `w` bits of a `u128`; the other bits
//! are zero. Signed values (`int<w>`) are two's complement in `w` bits. Every
//! operation masks its result to its `width`. `bool` is width 1 (0 or 1).
//! Widths range from 1 to [`MAX_WIDTH`]; the compiler rejects wider types.

use serde::{Deserialize, Serialize};

mod coll;
mod psa;
mod spin;
mod validate;
pub use coll::{status as coll_status, CollOp};
pub use psa::{packet_path as psa_packet_path, PsaBridge, PsaMetadata, PsaSwitch};
pub use spin::{rc as spin_rc, SpinMdSlots, SpinMsgSlots, SpinNic, SpinOp, SpinPktSlots};
pub use validate::{validate, Problem};

/// The `format` string every artifact carries.
pub const ARTIFACT_FORMAT: &str = "netsparse-pipeline";
/// The schema version this crate reads and writes. Bump on any incompatible change.
pub const ARTIFACT_VERSION: u32 = 1;
/// Widest value a field or expression may have.
pub const MAX_WIDTH: u16 = 128;
/// The names of P4's core errors, in core.p4 order: every artifact's
/// [`Artifact::errors`] starts with them (error value = index).
pub const CORE_ERRORS: [&str; 7] = [
    "NoError",
    "PacketTooShort",
    "NoMatch",
    "StackOutOfBounds",
    "HeaderTooShort",
    "ParserTimeout",
    "ParserInvalidArgument",
];

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index into the artifact's vector of this kind.
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// Index into [`Artifact::fields`].
    FieldId
);
id_type!(
    /// Index into [`Artifact::headers`].
    HeaderId
);
id_type!(
    /// Index into [`Artifact::stacks`].
    StackId
);
id_type!(
    /// Index into [`Artifact::parsers`].
    ParserId
);
id_type!(
    /// Index into a parser's [`Parser::states`].
    StateId
);
id_type!(
    /// Index into [`Artifact::controls`].
    ControlId
);
id_type!(
    /// Index into [`Artifact::actions`].
    ActionId
);
id_type!(
    /// Index into [`Artifact::tables`].
    TableId
);
id_type!(
    /// Index into [`Artifact::externs`].
    ExternId
);

/// A compiled program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// Always [`ARTIFACT_FORMAT`].
    pub format: String,
    /// Schema version, [`ARTIFACT_VERSION`] when written by this crate.
    pub version: u32,
    /// Program name (the source file's stem).
    pub program: String,
    /// Which architecture the program targets.
    pub arch: Arch,
    /// Every value slot of the per-packet state.
    pub fields: Vec<Field>,
    /// Header instances (including each element of a header stack).
    pub headers: Vec<Header>,
    /// Header stacks.
    pub stacks: Vec<HeaderStack>,
    /// Error constants: the value of `error.X` is its index here. The first
    /// seven are P4's core errors in core.p4 order (`NoError`, `PacketTooShort`,
    /// `NoMatch`, `StackOutOfBounds`, `HeaderTooShort`, `ParserTimeout`,
    /// `ParserInvalidArgument`).
    pub errors: Vec<String>,
    /// Parsers (already with sub-parsers inlined).
    pub parsers: Vec<Parser>,
    /// Controls (deparsers are controls whose bodies use [`Stmt::Emit`]).
    pub controls: Vec<Control>,
    /// Actions, shared by tables and direct calls.
    pub actions: Vec<Action>,
    /// Match-action tables.
    pub tables: Vec<Table>,
    /// Stateful extern instances (registers, counters, meters, caches...).
    pub externs: Vec<ExternInstance>,
    /// How the blocks are wired into the target's pipeline.
    pub package: Package,
}

/// The architecture a program was written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// p4c's v1model (`V1Switch`): single-pipe BMv2 simple_switch behaviour.
    V1Model,
    /// The NetSparse ToR/spine switch: ingress pipes, crossbar, middle pipes, crossbar, egress pipes.
    NetSparseSwitch,
    /// The NetSparse SmartNIC (the RIG extension): host-to-net and net-to-host per-PR paths.
    NetSparseNic,
    /// A sPIN SmartNIC: header, payload and completion handlers on HPUs.
    SpinNic,
    /// The Portable Switch Architecture (`PSA_Switch`): BMv2 psa_switch behaviour.
    Psa,
}

/// One value slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// Source-level path, for logs and the control plane (`hdr.ipv4.ttl`,
    /// `meta.nhop`, `MyIngress.set_nhop.port`, `$MyIngress.ipv4_lpm.hit`).
    pub name: String,
    /// Width in bits, 1..=[`MAX_WIDTH`].
    pub width: u16,
    /// `int<w>` rather than `bit<w>`/`bool`.
    pub signed: bool,
    /// What the slot holds; targets use it to reset per-packet state.
    pub kind: FieldKind,
}

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "header")]
pub enum FieldKind {
    /// A field of a header instance.
    Header(HeaderId),
    /// A field of a metadata struct (user metadata, standard metadata).
    Metadata,
    /// A local variable, a parameter or a compiler temporary.
    Local,
    /// A directionless action parameter (action data written by a table hit).
    ActionParam,
}

/// A header instance with its layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Instance path, e.g. `hdr.ipv4` or `hdr.mpls[2]`.
    pub name: String,
    /// Declared header type, e.g. `ipv4_t`.
    pub type_name: String,
    /// Fields in declaration (= wire) order.
    pub fields: Vec<HeaderField>,
    /// Total width in bits (sum of the field widths; a varbit field counts
    /// its maximum width).
    pub bit_width: u32,
    /// For a header whose last field is a `varbit<N>` (its `width` is N):
    /// the hidden 32-bit slot holding the field's current length in bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub varbit_len: Option<FieldId>,
    /// How many trailing fields hold the varbit value when it is wider than
    /// [`MAX_WIDTH`] (most significant first, every part but the first 128
    /// bits wide); 0 (omitted) means one.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub varbit_parts: u32,
    /// The header type's `@controller_header("...")` name (`packet_in`,
    /// `packet_out`): P4Runtime's controller packet metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_header: Option<String>,
}

/// A field's place in its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderField {
    /// The slot holding the value.
    pub field: FieldId,
    /// Offset of the field's most significant bit from the start of the header.
    pub bit_offset: u32,
    /// Width in bits.
    pub width: u16,
}

/// A header stack (`ethernet_t[4] stack`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderStack {
    /// Instance path, e.g. `hdr.mpls`.
    pub name: String,
    /// The element headers, index 0 first.
    pub elements: Vec<HeaderId>,
    /// Hidden 32-bit slot holding `nextIndex` (the number of valid elements
    /// extracted or pushed so far).
    pub next_index: FieldId,
}

/// A reference to a header, possibly through a stack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "ref")]
pub enum HeaderRef {
    /// A header known at compile time.
    Static {
        /// The header.
        header: HeaderId,
    },
    /// `stack[index]` with a run-time index. Out of range: `StackOutOfBounds`
    /// in a parser, a no-op write / zero read in a control (BMv2 behaviour).
    Index {
        /// The stack.
        stack: StackId,
        /// Element index.
        index: Box<Expr>,
    },
    /// `stack.next`: element `nextIndex`; extracting it increments `nextIndex`.
    Next {
        /// The stack.
        stack: StackId,
    },
    /// `stack.last`: element `nextIndex - 1`.
    Last {
        /// The stack.
        stack: StackId,
    },
}

/// An expression. Every node's result width is known without context except
/// `Field` and `StackField` (width of the slot / header field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "expr")]
pub enum Expr {
    /// A constant.
    Const {
        /// The value, already truncated to `width`.
        #[serde(with = "wide")]
        value: u128,
        /// Width in bits.
        width: u16,
        /// `int<w>` constant.
        signed: bool,
    },
    /// The value of a slot.
    Field {
        /// The slot.
        field: FieldId,
    },
    /// The varbit field of a header at its current length (only as an item
    /// of a hash or checksum data list, where it adds that many bits; its
    /// width here is the field's maximum).
    VarbitField {
        /// The header (its `varbit_len` set).
        header: HeaderId,
    },
    /// A field of a header reached through a run-time stack reference.
    StackField {
        /// The header (must be `Index`, `Next` or `Last`).
        header: HeaderRef,
        /// Position of the field in the element header's `fields`.
        field_index: u32,
    },
    /// `h.isValid()`: width 1.
    IsValid {
        /// The header.
        header: HeaderRef,
    },
    /// A unary operation.
    Unary {
        /// Operator.
        op: UnaryOp,
        /// Result (and operand) width.
        width: u16,
        /// Signed operand.
        signed: bool,
        /// Operand.
        arg: Box<Expr>,
    },
    /// A binary operation. Operands of arithmetic and bitwise operators have the
    /// result's width; comparison operands share a width and yield width 1;
    /// shift amounts may have any width (unsigned).
    Binary {
        /// Operator.
        op: BinaryOp,
        /// Result width (1 for comparisons and logical operators).
        width: u16,
        /// Signed operands (affects `Shr`, comparisons, saturation, division).
        signed: bool,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `arg[hi:lo]`, width `hi - lo + 1`, always unsigned.
    Slice {
        /// Operand.
        arg: Box<Expr>,
        /// High bit (inclusive).
        hi: u16,
        /// Low bit (inclusive).
        lo: u16,
    },
    /// `lhs ++ rhs`, width `lhs width + rhs_width`; signedness of `lhs`.
    Concat {
        /// High part.
        lhs: Box<Expr>,
        /// Low part.
        rhs: Box<Expr>,
        /// Width of `rhs` (the shift applied to `lhs`).
        rhs_width: u16,
        /// Result width.
        width: u16,
        /// Result signed (as `lhs`).
        signed: bool,
    },
    /// `(T) arg`: truncate or extend (sign-extend when `arg_signed`) from
    /// `arg_width` to `width`, then reinterpret as `signed`.
    Cast {
        /// Operand.
        arg: Box<Expr>,
        /// Operand width.
        arg_width: u16,
        /// Operand is signed.
        arg_signed: bool,
        /// Result width.
        width: u16,
        /// Result is signed.
        signed: bool,
    },
    /// `cond ? then : otherwise`.
    Mux {
        /// Condition (width 1).
        cond: Box<Expr>,
        /// Value if true.
        then: Box<Expr>,
        /// Value if false.
        otherwise: Box<Expr>,
        /// Result width.
        width: u16,
    },
    /// `packet.lookahead<bit<width>>()` at `bit_offset` bits past the parser's
    /// cursor (the compiler splits `lookahead<header_t>()` into one per field).
    /// Reading past the end of the packet is `PacketTooShort`. Parsers only.
    Lookahead {
        /// Bits past the cursor.
        bit_offset: u32,
        /// Width read.
        width: u16,
    },
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnaryOp {
    /// `!b` on bool.
    Not,
    /// `~x`.
    BitNot,
    /// `-x` (two's complement, wraps).
    Neg,
}

/// Binary operators, with P4_16 semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    /// `+`, wrapping.
    Add,
    /// `-`, wrapping.
    Sub,
    /// `*`, wrapping.
    Mul,
    /// `/` (division by zero yields 0 on these targets).
    Div,
    /// `%` (modulo by zero yields 0 on these targets).
    Mod,
    /// `|+|`, saturating.
    SatAdd,
    /// `|-|`, saturating.
    SatSub,
    /// `<<`; shifting by `width` or more yields 0.
    Shl,
    /// `>>`; arithmetic when signed; shifting by `width` or more yields 0 (or all ones for negative signed).
    Shr,
    /// `&`.
    And,
    /// `|`.
    Or,
    /// `^`.
    Xor,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `&&`, short-circuit.
    LAnd,
    /// `||`, short-circuit.
    LOr,
}

/// The target of an assignment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "lvalue")]
pub enum LValue {
    /// A whole slot.
    Field {
        /// The slot.
        field: FieldId,
    },
    /// `x[hi:lo] = ...`: only those bits change.
    Slice {
        /// The slot.
        field: FieldId,
        /// High bit (inclusive).
        hi: u16,
        /// Low bit (inclusive).
        lo: u16,
    },
    /// A field of a header reached through a run-time stack reference.
    StackField {
        /// The header.
        header: HeaderRef,
        /// Position of the field in the element header's `fields`.
        field_index: u32,
    },
}

/// A statement. Blocks are `Vec<Stmt>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "stmt")]
pub enum Stmt {
    /// `dst = src` (the compiler has already made the widths agree).
    Assign {
        /// Target.
        dst: LValue,
        /// Value.
        src: Expr,
    },
    /// `h.setValid()`.
    SetValid {
        /// The header.
        header: HeaderRef,
    },
    /// `h.setInvalid()`.
    SetInvalid {
        /// The header.
        header: HeaderRef,
    },
    /// Whole-header assignment: copies every field and the validity bit.
    CopyHeader {
        /// Destination.
        dst: HeaderRef,
        /// Source.
        src: HeaderRef,
    },
    /// `stack.push_front(count)`.
    PushFront {
        /// The stack.
        stack: StackId,
        /// Positions shifted.
        count: u32,
    },
    /// `stack.pop_front(count)`.
    PopFront {
        /// The stack.
        stack: StackId,
        /// Positions shifted.
        count: u32,
    },
    /// `if (cond) then else otherwise`.
    If {
        /// Condition, width 1.
        cond: Expr,
        /// Taken when `cond` is 1.
        then: Vec<Stmt>,
        /// Taken when `cond` is 0.
        otherwise: Vec<Stmt>,
    },
    /// `switch`: the first case listing the selector's value runs, else `default`.
    Switch {
        /// The value switched on (for `action_run`, the table's hidden slot).
        selector: Expr,
        /// Cases; fall-through labels are merged into one case's `values`.
        cases: Vec<SwitchCase>,
        /// Runs when no case matches.
        default: Vec<Stmt>,
    },
    /// Apply a table: match, run the chosen action, write `hit` / `action_run`.
    ApplyTable {
        /// The table.
        table: TableId,
    },
    /// Run an action's body directly (its parameters were assigned just before).
    CallAction {
        /// The action.
        action: ActionId,
    },
    /// An inlined control, function or action body: a `Return` inside ends the
    /// block (not the enclosing control).
    Inlined {
        /// What was inlined, for logs (`MyIngress.my_sub`).
        name: String,
        /// The body.
        body: Vec<Stmt>,
    },
    /// A loop: while `cond` (width 1) is 1, run `body`, then `updates`.
    /// `Break` in the body leaves the loop, `Continue` goes on with the
    /// updates. A target may bound the iterations of one execution (the
    /// engine stops a loop after `MAX_LOOP_ITERATIONS` and counts it).
    Loop {
        /// Tested before every iteration.
        cond: Expr,
        /// The body.
        body: Vec<Stmt>,
        /// Run after the body and after `Continue` (no `Break`/`Continue` here).
        updates: Vec<Stmt>,
    },
    /// `break`: leave the innermost `Loop`.
    Break,
    /// `continue`: go on with the innermost `Loop`'s updates.
    Continue,
    /// `return`: leave the innermost `Inlined` block, action or control.
    Return,
    /// `exit`: stop the current top-level control (the pipeline continues with
    /// the next block of the package, as in v1model).
    Exit,
    /// Parsers: `packet.extract(h)`. Too few bytes: `PacketTooShort` and reject.
    Extract {
        /// The header (a `Next` on a full stack is `StackOutOfBounds`).
        header: HeaderRef,
    },
    /// Parsers: `packet.extract(h, bits)` of a header with a varbit field:
    /// its fixed fields, then `bits` bits into the varbit field. `bits`
    /// over the field's width is `HeaderTooShort`, not a multiple of 8
    /// `ParserInvalidArgument`, past the packet's end `PacketTooShort`.
    ExtractVarbit {
        /// The header (`Header::varbit_len` set).
        header: HeaderRef,
        /// Length of the varbit part in bits (32 bits wide).
        bits: Expr,
    },
    /// Parsers: `packet.advance(bits)`.
    Advance {
        /// Bits to skip.
        bits: Expr,
    },
    /// Parsers: `verify(cond, error)`: if `cond` is 0, set the parser error and reject.
    Verify {
        /// Condition.
        cond: Expr,
        /// Index into [`Artifact::errors`].
        error: u32,
    },
    /// Deparsers: `packet.emit(h)` (nothing if the header is invalid).
    Emit {
        /// The header (`Index` etc. emit one element; the compiler expands a
        /// whole-stack emit into one `Emit` per element).
        header: HeaderRef,
    },
    /// A call to a built-in extern function or extern object method.
    Prim(Prim),
}

/// One case of a [`Stmt::Switch`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwitchCase {
    /// Values that select this case.
    #[serde(with = "wide_vec")]
    pub values: Vec<u128>,
    /// The case body.
    pub body: Vec<Stmt>,
}

/// Built-in extern calls. The bundled `core.p4`, `v1model.p4` and
/// `netsparse.p4` declare exactly these; a program calling any other extern is
/// rejected by the compiler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "prim")]
pub enum Prim {
    /// v1model `mark_to_drop(standard_metadata)`.
    MarkToDrop,
    /// `register.read(dst, index)`.
    RegisterRead {
        /// The register.
        register: ExternId,
        /// Destination.
        dst: LValue,
        /// Cell index (out of range reads 0).
        index: Expr,
    },
    /// `register.write(index, value)`.
    RegisterWrite {
        /// The register.
        register: ExternId,
        /// Cell index (out of range is a no-op).
        index: Expr,
        /// Value.
        value: Expr,
    },
    /// `counter.count(index)`.
    Count {
        /// The counter.
        counter: ExternId,
        /// Cell index (out of range is a no-op).
        index: Expr,
    },
    /// `meter.execute_meter(index, dst)`: writes the colour (0 green, 1 yellow, 2 red).
    ExecuteMeter {
        /// The meter.
        meter: ExternId,
        /// Cell index.
        index: Expr,
        /// Colour destination.
        dst: LValue,
    },
    /// `direct_meter.read(dst)` inside an action of the meter's table.
    ReadDirectMeter {
        /// The direct meter.
        meter: ExternId,
        /// Colour destination.
        dst: LValue,
    },
    /// `direct_counter.count()` (counting also happens implicitly on every hit).
    CountDirect {
        /// The direct counter.
        counter: ExternId,
    },
    /// v1model `hash(dst, algo, base, data, max)`: `dst = base + (hash(data) % max)`
    /// (`max == 0` means no modulo).
    Hash {
        /// Destination.
        dst: LValue,
        /// Algorithm.
        algo: HashAlgo,
        /// Added to the result.
        base: Expr,
        /// Hashed fields, concatenated most-significant first.
        data: Vec<Expr>,
        /// Modulus.
        max: Expr,
    },
    /// v1model `verify_checksum[_with_payload](cond, data, checksum, algo)`:
    /// on mismatch sets `checksum_error` in standard metadata.
    VerifyChecksum {
        /// Only checked when 1.
        cond: Expr,
        /// Covered fields.
        data: Vec<Expr>,
        /// The checksum field to compare with.
        checksum: Expr,
        /// Algorithm.
        algo: HashAlgo,
        /// Also cover the packet payload (after all parsed headers).
        with_payload: bool,
    },
    /// v1model `update_checksum[_with_payload](cond, data, dst, algo)`.
    UpdateChecksum {
        /// Only updated when 1.
        cond: Expr,
        /// Covered fields.
        data: Vec<Expr>,
        /// The checksum field to write.
        dst: LValue,
        /// Algorithm.
        algo: HashAlgo,
        /// Also cover the packet payload.
        with_payload: bool,
    },
    /// v1model `random(dst, lo, hi)`: uniform in `[lo, hi]` from the target's seeded generator.
    Random {
        /// Destination.
        dst: LValue,
        /// Lower bound.
        lo: Expr,
        /// Upper bound.
        hi: Expr,
    },
    /// v1model `digest(receiver, data)`: reported to the control plane / log.
    Digest {
        /// Receiver id.
        receiver: Expr,
        /// Name of the digest struct type.
        name: String,
        /// Field names and values.
        data: Vec<(String, Expr)>,
    },
    /// `log_msg(format, {args})`: `{}` placeholders are replaced in order.
    LogMsg {
        /// The format string.
        format: String,
        /// Arguments.
        args: Vec<Expr>,
    },
    /// v1model `clone(type, session)` / `clone_preserving_field_list`.
    Clone {
        /// Ingress-to-egress or egress-to-egress.
        kind: CloneKind,
        /// Mirror session id.
        session: Expr,
        /// Metadata slots preserved in the clone (from the field list); all
        /// other metadata is reset.
        preserve: Vec<FieldId>,
    },
    /// v1model `resubmit_preserving_field_list(index)`.
    Resubmit {
        /// Metadata slots preserved.
        preserve: Vec<FieldId>,
    },
    /// v1model `recirculate_preserving_field_list(index)`.
    Recirculate {
        /// Metadata slots preserved.
        preserve: Vec<FieldId>,
    },
    /// v1model `truncate(length)`: the packet leaves with at most `length` bytes.
    Truncate {
        /// Byte length.
        length: Expr,
    },
    /// v1model `assert(cond)`: a false assertion is logged and counted; the packet is dropped.
    Assert {
        /// Condition.
        cond: Expr,
    },
    /// v1model `assume(cond)`: as `Assert` on this target.
    Assume {
        /// Condition.
        cond: Expr,
    },
    /// NetSparse `Lookup(pr, meta)` in a middle-pipe per-PR control: probes the
    /// pipe's Property Cache with the current PR's idx; on a hit the PR's
    /// payload becomes the cached property. Writes the hit bit to `dst`.
    CacheLookup {
        /// The pipe's property cache instance.
        cache: ExternId,
        /// Receives 1 on hit, 0 on miss.
        dst: LValue,
    },
    /// NetSparse `Insert(pr, meta)`: inserts the current response PR's payload
    /// under its idx (no-op if present; LRU eviction otherwise).
    CacheInsert {
        /// The pipe's property cache instance.
        cache: ExternId,
    },
    /// RIG `IdxFilterTest(idx)` (NIC only): 1 if the NIC's Idx Filter bit of
    /// `idx` is set (its property was already fetched), else 0. An idx beyond
    /// the filter's columns tests 0 (counted by the firmware).
    IdxFilterTest {
        /// The idx (64 bits).
        idx: Expr,
        /// Receives the bit (width 1).
        dst: LValue,
    },
    /// RIG `IdxFilterSet(idx)` (NIC only): mark the property of `idx` as fetched.
    IdxFilterSet {
        /// The idx (64 bits).
        idx: Expr,
    },
    /// RIG `PendingContains(idx)` (NIC only): 1 if the running RIG unit's
    /// Pending PR Table has an outstanding PR for `idx`.
    PendingContains {
        /// The idx (64 bits).
        idx: Expr,
        /// Receives the result (width 1).
        dst: LValue,
    },
    /// RIG `PendingInsert(pr)` (NIC host-to-net only): register a PR for
    /// `idx` in the running unit's Pending PR Table, on behalf of the RIG
    /// command being served, and write its request id to `req_id`. When the
    /// table is full the unit stalls: the firmware abandons this run of the
    /// control and runs it again for the same idx once an entry is free.
    /// Operands come from the argument (`pr.idx`, `pr.req_id`), so per-PR
    /// sub-controls with copy-in/copy-out see the request id.
    PendingInsert {
        /// The idx (the argument's `idx` field).
        idx: Expr,
        /// Receives the request id (the argument's `req_id` field, 32 bits).
        req_id: LValue,
    },
    /// RIG `PendingComplete(pr, md)` (NIC net-to-host only): retire the
    /// pending entry `req_id` of client unit `tid` if it is outstanding, is
    /// for `idx`, and its command's property size is `prop_len`. Writes 1 on
    /// success; 0 for unknown, stale or duplicate responses and for
    /// mismatches (counted by the firmware, nothing changes).
    PendingComplete {
        /// The client unit (the argument's `tid`, 16 bits).
        tid: Expr,
        /// The request id (the argument's `req_id`, 32 bits).
        req_id: Expr,
        /// The idx (the argument's `idx`, 64 bits).
        idx: Expr,
        /// The packet's property length (the metadata's `prop_len`, 32 bits).
        prop_len: Expr,
        /// Receives the result (width 1).
        dst: LValue,
    },
    /// RIG `HostRead(pr, md)` (NIC net-to-host only): the current PR's
    /// payload becomes the local property `idx` (`prop_len` bytes) read from
    /// host memory by DMA; its response leaves after the DMA read latency.
    /// Writes 1 on success, 0 if `idx` is not in this node's slice or the
    /// length is not the slice's property size (counted).
    HostRead {
        /// The idx (the argument's `idx`, 64 bits).
        idx: Expr,
        /// The property length (the metadata's `prop_len`, 32 bits).
        prop_len: Expr,
        /// Receives the result (width 1).
        dst: LValue,
    },
    /// RIG `HostWrite(pr, md)` (NIC net-to-host only): DMA the current PR's
    /// payload into the destination buffer of the command that issued
    /// request `req_id` of unit `tid` (retired by `PendingComplete` on this
    /// PR, or still pending), at the slot of `idx`. Refused and counted when
    /// no such command is known or the slot is outside its buffer.
    HostWrite {
        /// The client unit (the argument's `tid`, 16 bits).
        tid: Expr,
        /// The request id (the argument's `req_id`, 32 bits).
        req_id: Expr,
        /// The idx (the argument's `idx`, 64 bits).
        idx: Expr,
    },
    /// PSA `Checksum.clear()` / `InternetChecksum.clear()`: the state
    /// becomes empty (sum 0).
    ChecksumClear {
        /// The checksum instance.
        checksum: ExternId,
    },
    /// PSA `Checksum.update(data)` (appends `data` to what the instance
    /// checksums) or `InternetChecksum.add(data)` / `subtract(data)` (adds
    /// or subtracts the 16-bit words of `data` in one's complement).
    ChecksumUpdate {
        /// The checksum instance.
        checksum: ExternId,
        /// The fields, concatenated most-significant first.
        data: Vec<Expr>,
        /// `InternetChecksum.subtract`.
        subtract: bool,
    },
    /// PSA `Checksum.get()` / `InternetChecksum.get()` (the checksum) or
    /// `InternetChecksum.get_state()` (the running sum, not complemented).
    ChecksumGet {
        /// The checksum instance.
        checksum: ExternId,
        /// Receives the value.
        dst: LValue,
        /// `get_state` rather than `get`.
        state: bool,
    },
    /// PSA `InternetChecksum.set_state(value)`: the running sum becomes `value`.
    ChecksumSetState {
        /// The checksum instance.
        checksum: ExternId,
        /// The new sum (16 bits).
        value: Expr,
    },
    /// A sPIN extern (SpinNic handlers only; see [`SpinOp`]).
    Spin {
        /// Which extern.
        op: SpinOp,
        /// Its operands, of the widths [`SpinOp::operands`] gives.
        args: Vec<Expr>,
        /// Receives the result when [`SpinOp::result`] is some.
        dst: Option<LValue>,
    },
    /// A collective extern (`<collective.p4>`; per-PR parts of a NIC's
    /// net_to_host or a middle pipe; see [`CollOp`]).
    Coll {
        /// Which extern.
        op: CollOp,
        /// Its operands, of the widths [`CollOp::operands`] gives.
        args: Vec<Expr>,
        /// Receives the result when [`CollOp::result`] is some.
        dst: Option<LValue>,
    },
}

/// Hash / checksum algorithms (v1model `HashAlgorithm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HashAlgo {
    /// CRC-32 (IEEE 802.3, reflected, as BMv2's `crc32`).
    Crc32,
    /// CRC-32 with a custom polynomial is not supported; this is BMv2's `crc32_custom` default.
    Crc32Custom,
    /// CRC-16 (ARC/IBM, reflected, as BMv2's `crc16`).
    Crc16,
    /// CRC-16 custom default.
    Crc16Custom,
    /// Identity: the data itself, truncated.
    Identity,
    /// 16-bit one's complement internet checksum (RFC 1071).
    Csum16,
    /// XOR of 16-bit words.
    Xor16,
    /// v1model `random` "hash": not deterministic on BMv2; here seeded.
    Random,
}

/// Clone flavours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CloneKind {
    /// Ingress to egress.
    I2E,
    /// Egress to egress.
    E2E,
}

/// A parser state machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parser {
    /// Fully-qualified name.
    pub name: String,
    /// States; `accept` and `reject` are not states but [`Next`] values.
    pub states: Vec<ParserState>,
    /// The `start` state.
    pub start: StateId,
}

/// One parser state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParserState {
    /// State name (with an inlined sub-parser's prefix where needed).
    pub name: String,
    /// Statements, run in order.
    pub body: Vec<Stmt>,
    /// Where to go next.
    pub transition: Transition,
}

/// A parser transition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Transition {
    /// Unconditional.
    Direct {
        /// Next state.
        next: Next,
    },
    /// `transition select(keys) { ... }`: the first matching case wins; no match
    /// is `NoMatch` and reject.
    Select {
        /// Key expressions.
        keys: Vec<Expr>,
        /// Cases in source order.
        cases: Vec<SelectCase>,
    },
}

/// One `select` case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelectCase {
    /// One keyset per key (a `default` / `_` case has all `Any`).
    pub keysets: Vec<KeySet>,
    /// Next state.
    pub next: Next,
}

/// A keyset in a `select` case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum KeySet {
    /// `default` or `_`.
    Any,
    /// An exact value.
    Value {
        /// The value.
        #[serde(with = "wide")]
        value: u128,
    },
    /// `value &&& mask`.
    Mask {
        /// Value (already masked).
        #[serde(with = "wide")]
        value: u128,
        /// Mask.
        #[serde(with = "wide")]
        mask: u128,
    },
    /// `lo .. hi` inclusive.
    Range {
        /// Lower bound.
        #[serde(with = "wide")]
        lo: u128,
        /// Upper bound.
        #[serde(with = "wide")]
        hi: u128,
    },
}

/// A transition target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "state")]
pub enum Next {
    /// Another state.
    State(StateId),
    /// `accept`.
    Accept,
    /// `reject`.
    Reject,
}

/// A control block (ingress, egress, checksum, deparser...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Control {
    /// Fully-qualified name.
    pub name: String,
    /// The `apply` body with sub-controls inlined.
    pub body: Vec<Stmt>,
}

/// An action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// Fully-qualified name (`MyIngress.ipv4_forward`, `NoAction`).
    pub name: String,
    /// `@id`: the P4Runtime id the program asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p4rt_id: Option<u32>,
    /// Directionless parameters (action data), in declaration order.
    pub params: Vec<ActionParam>,
    /// The body.
    pub body: Vec<Stmt>,
}

/// A directionless action parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionParam {
    /// Parameter name as written (`port`).
    pub name: String,
    /// The slot the value is written to before the body runs.
    pub field: FieldId,
    /// Width in bits.
    pub width: u16,
}

/// Match kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// Exact.
    Exact,
    /// Longest prefix.
    Lpm,
    /// Value and mask, by priority.
    Ternary,
    /// Inclusive range, by priority.
    Range,
    /// Exact or wildcard, by priority.
    Optional,
}

/// A match-action table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Fully-qualified name (`MyIngress.ipv4_lpm`).
    pub name: String,
    /// `@id`: the P4Runtime id the program asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p4rt_id: Option<u32>,
    /// Key fields in order.
    pub keys: Vec<TableKey>,
    /// Actions the table may run.
    pub actions: Vec<TableAction>,
    /// Action run on a miss.
    pub default_action: DefaultAction,
    /// Entries from the program (`const entries` / `entries`).
    pub entries: Vec<Entry>,
    /// `const entries`: the control plane may not add or remove entries.
    pub entries_const: bool,
    /// Maximum number of entries (`size`, default 1024).
    pub size: u32,
    /// Hidden width-1 slot written with 1 on hit, 0 on miss.
    pub hit: FieldId,
    /// Hidden 32-bit slot written with the [`ActionId`] that ran.
    pub action_run: FieldId,
    /// Direct counter attached with `counters = ...`.
    pub direct_counter: Option<ExternId>,
    /// Direct meter attached with `meters = ...`.
    pub direct_meter: Option<ExternId>,
}

/// A key field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableKey {
    /// Control-plane name: the `@name` annotation or the source text of the
    /// key expression (`hdr.ipv4.dstAddr`).
    pub name: String,
    /// The value matched.
    pub expr: Expr,
    /// Width of the key.
    pub width: u16,
    /// Match kind.
    pub match_kind: MatchKind,
}

/// An action listed in a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableAction {
    /// The action (a compiler-made specialisation when the table binds
    /// directional arguments).
    pub action: ActionId,
    /// Name the control plane uses (`MyIngress.ipv4_forward`).
    pub name: String,
    /// `@defaultonly`: may only be the default action.
    pub default_only: bool,
    /// `@tableonly`: may not be the default action.
    pub table_only: bool,
}

/// The default action of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefaultAction {
    /// The action.
    pub action: ActionId,
    /// Action data.
    #[serde(with = "wide_vec")]
    pub args: Vec<u128>,
    /// `const default_action`: the control plane may not change it.
    pub is_const: bool,
}

/// A table entry from the program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// One match per key.
    pub keys: Vec<KeyMatch>,
    /// Action to run.
    pub action: ActionId,
    /// Action data.
    #[serde(with = "wide_vec")]
    pub args: Vec<u128>,
    /// Explicit `priority` / `@priority`; `None` means by position (earlier wins).
    pub priority: Option<u32>,
}

/// How one key of an entry matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum KeyMatch {
    /// Exact value.
    Exact {
        /// Value.
        #[serde(with = "wide")]
        value: u128,
    },
    /// Prefix of `prefix_len` bits.
    Lpm {
        /// Value (host bits zero).
        #[serde(with = "wide")]
        value: u128,
        /// Prefix length.
        prefix_len: u16,
    },
    /// Value and mask.
    Ternary {
        /// Value (masked).
        #[serde(with = "wide")]
        value: u128,
        /// Mask.
        #[serde(with = "wide")]
        mask: u128,
    },
    /// Inclusive range.
    Range {
        /// Lower bound.
        #[serde(with = "wide")]
        lo: u128,
        /// Upper bound.
        #[serde(with = "wide")]
        hi: u128,
    },
    /// `_` / `default`: matches anything.
    Any,
}

/// A stateful extern instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternInstance {
    /// Fully-qualified instance name (`MyIngress.port_counter`).
    pub name: String,
    /// What it is.
    pub kind: ExternKind,
}

/// Extern instance kinds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ExternKind {
    /// `register<bit<width>>(size)` (PSA: `Register<T, S>(size[, initial])`).
    Register {
        /// Cell width.
        width: u16,
        /// Cells.
        size: u32,
        /// Every cell's value at load (PSA's `initial_value`; 0 otherwise).
        #[serde(default, skip_serializing_if = "is_zero", with = "wide")]
        initial: u128,
    },
    /// `counter(size, type)`.
    Counter {
        /// Cells.
        size: u32,
        /// What is counted.
        unit: CounterUnit,
    },
    /// `direct_counter(type)` attached to a table.
    DirectCounter {
        /// What is counted.
        unit: CounterUnit,
        /// The table it belongs to.
        table: TableId,
    },
    /// `meter(size, type)`: two-rate three-colour (RFC 2698).
    Meter {
        /// Cells.
        size: u32,
        /// Packets or bytes.
        unit: MeterUnit,
    },
    /// `direct_meter<T>(type)` attached to a table.
    DirectMeter {
        /// Packets or bytes.
        unit: MeterUnit,
        /// The table it belongs to.
        table: TableId,
    },
    /// The Property Cache of a NetSparse middle pipe (geometry from the switch config).
    PropertyCache,
    /// PSA `Checksum<bit<width>>(algo)`: the algorithm over every byte given
    /// to `update` since the last `clear`.
    Checksum {
        /// Algorithm.
        algo: HashAlgo,
        /// Result width.
        width: u16,
    },
    /// PSA `InternetChecksum`: a 16-bit one's-complement running sum.
    InternetChecksum,
}

/// Counter units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterUnit {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
    /// Both.
    PacketsAndBytes,
}

/// Meter units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeterUnit {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
}

/// How the program's blocks are wired into the target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "package")]
pub enum Package {
    /// `V1Switch(parser, verifyChecksum, ingress, egress, computeChecksum, deparser) main;`
    V1Switch(V1Switch),
    /// `NetSparseSwitch(...) main;` (see `netsparse.p4`).
    NetSparseSwitch(NetSparseSwitch),
    /// `NetSparseNic(host_to_net, net_to_host) main;` (see `netsparse.p4`).
    NetSparseNic(NetSparseNic),
    /// `SpinNic(header_handler, payload_handler, completion_handler) main;` (see `spin.p4`).
    SpinNic(SpinNic),
    /// `PSA_Switch(...) main;` (see `psa.p4`).
    Psa(PsaSwitch),
}

/// The v1model package.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct V1Switch {
    /// The parser.
    pub parser: ParserId,
    /// `verifyChecksum` control.
    pub verify_checksum: ControlId,
    /// Ingress control.
    pub ingress: ControlId,
    /// Egress control.
    pub egress: ControlId,
    /// `computeChecksum` control.
    pub compute_checksum: ControlId,
    /// Deparser control.
    pub deparser: ControlId,
    /// Slots of `standard_metadata_t`.
    pub standard_metadata: StandardMetadata,
    /// Slots of the user metadata struct (zeroed for every new packet; kept
    /// or reset by resubmit/recirculate/clone according to field lists).
    pub user_metadata: Vec<FieldId>,
}

/// The slots of v1model's `standard_metadata_t` that targets read or write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandardMetadata {
    /// `ingress_port` (9 bits).
    pub ingress_port: FieldId,
    /// `egress_spec` (9 bits): set by ingress; 511 drops.
    pub egress_spec: FieldId,
    /// `egress_port` (9 bits): read-only in egress.
    pub egress_port: FieldId,
    /// `instance_type` (32 bits).
    pub instance_type: FieldId,
    /// `packet_length` (32 bits).
    pub packet_length: FieldId,
    /// `enq_timestamp` (32 bits, microseconds).
    pub enq_timestamp: FieldId,
    /// `enq_qdepth` (19 bits).
    pub enq_qdepth: FieldId,
    /// `deq_timedelta` (32 bits).
    pub deq_timedelta: FieldId,
    /// `deq_qdepth` (19 bits).
    pub deq_qdepth: FieldId,
    /// `ingress_global_timestamp` (48 bits, microseconds).
    pub ingress_global_timestamp: FieldId,
    /// `egress_global_timestamp` (48 bits, microseconds).
    pub egress_global_timestamp: FieldId,
    /// `mcast_grp` (16 bits).
    pub mcast_grp: FieldId,
    /// `egress_rid` (16 bits).
    pub egress_rid: FieldId,
    /// `checksum_error` (1 bit).
    pub checksum_error: FieldId,
    /// `parser_error` (error).
    pub parser_error: FieldId,
    /// `priority` (3 bits).
    pub priority: FieldId,
}

/// The NetSparse switch package (§6.2.1): per-pipe ingress and egress
/// parser/control/deparser, and the middle-pipe control that runs between the
/// two crossbars around the Deconcatenator, the Property Cache and the
/// Concatenator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetSparseSwitch {
    /// Ingress parser (every ingress pipe runs the same program).
    pub ingress_parser: ParserId,
    /// Ingress control: chooses `egress_spec` (routing).
    pub ingress: ControlId,
    /// Ingress deparser.
    pub ingress_deparser: ControlId,
    /// The middle pipe.
    pub middle: MiddlePipe,
    /// Egress parser.
    pub egress_parser: ParserId,
    /// Egress control.
    pub egress: ControlId,
    /// Egress deparser.
    pub egress_deparser: ControlId,
    /// Slots of the ingress pipe's `ns_switch_md_t`.
    pub ingress_metadata: NsSwitchMetadata,
    /// Slots of the egress pipe's `ns_switch_md_t`.
    pub egress_metadata: NsSwitchMetadata,
    /// Ingress user-metadata slots (zeroed per packet).
    pub ingress_user_metadata: Vec<FieldId>,
    /// Egress user-metadata slots (zeroed per packet).
    pub egress_user_metadata: Vec<FieldId>,
}

/// The NetSparse switch's per-pipe standard metadata (`ns_switch_md_t`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NsSwitchMetadata {
    /// Port the packet arrived on.
    pub ingress_port: FieldId,
    /// Port chosen by the ingress control.
    pub egress_spec: FieldId,
    /// Port the packet leaves on (egress pipe).
    pub egress_port: FieldId,
    /// Set to drop the packet.
    pub drop: FieldId,
    /// Frame length in bytes.
    pub packet_length: FieldId,
    /// Parser error.
    pub parser_error: FieldId,
}

/// A per-PR path (§5, §6.1–6.2): the part of a control that runs once per
/// NetSparse packet before `Deconcatenate`, and the part that runs once per
/// PR between `Deconcatenate` and `Concatenate`. The switch's middle pipes
/// and both paths of the SmartNIC are this one shape, lowered once by the
/// compiler and run by one runner in the engine:
///
/// ```text
/// apply {
///     ...per_packet...          // once per packet (empty on the NIC's host_to_net)
///     Deconcatenate(pr, md);    // for each PR of a NetSparse packet:
///     ...per_pr...              //   once per PR (per idx on host_to_net)
///     Concatenate(pr, md);      //   enqueue into the CQ of (md.pr_type, md.dst) unless md.drop
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrPath {
    /// Control name, for logs.
    pub name: String,
    /// Statements before `Deconcatenate`.
    pub per_packet: Vec<Stmt>,
    /// Statements between `Deconcatenate` and `Concatenate`.
    pub per_pr: Vec<Stmt>,
    /// The current PR's `ns_pr_h` fields.
    pub pr: PrSlots,
    /// The current PR's `ns_pr_md_t` fields.
    pub pr_meta: PrMetaSlots,
}

/// The middle pipe of a NetSparse switch: its [`PrPath`] and the pipe's
/// Property Cache (`Lookup`/`Insert` in the per-PR part).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MiddlePipe {
    /// The per-packet and per-PR parts (serialized in place).
    #[serde(flatten)]
    pub path: PrPath,
    /// The pipe's Property Cache instance, if the program uses one.
    pub cache: Option<ExternId>,
}

/// Slots holding the PR-layer header of the PR being processed (Figure 6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrSlots {
    /// Source node (32 bits).
    pub src: FieldId,
    /// Source RIG unit id (16 bits).
    pub tid: FieldId,
    /// Property idx (64 bits).
    pub idx: FieldId,
    /// Request id (32 bits).
    pub req_id: FieldId,
}

/// Slots of the per-PR metadata (`ns_pr_md_t`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrMetaSlots {
    /// PR type (16 bits): 1 read, 2 response.
    pub pr_type: FieldId,
    /// Destination node (32 bits).
    pub dst: FieldId,
    /// Property length in bytes (32 bits).
    pub prop_len: FieldId,
    /// Port the PR's packet arrived on.
    pub ingress_port: FieldId,
    /// Port the PR will leave on (initially the packet's `egress_spec`).
    pub egress_port: FieldId,
    /// Set to drop this PR.
    pub drop: FieldId,
}

/// The NetSparse SmartNIC package (§4–5, Figures 3–5): the two per-PR paths
/// the firmware runs around its RIG units, Idx Filter, Pending PR Tables,
/// host-memory DMA, Concatenator and Deconcatenator.
///
/// ```text
/// host_to_net(pr, md, rig) {        // per idx read by a client RIG unit:
///     ...per_pr...                  //   everything before Concatenate
///     Concatenate(pr, md);          //   queue the read PR unless md.drop
/// }
/// net_to_host(pr, md, rig) {
///     ...per_packet...              // once per received NetSparse packet
///     Deconcatenate(pr, md);        // for each PR:
///     ...per_pr...                  //   once per PR
///     Concatenate(pr, md);          //   queue it unless md.drop
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetSparseNic {
    /// Host to network (client RIG units). `per_packet` is always empty.
    pub host_to_net: NicPath,
    /// Network to host (receive path and server RIG units).
    pub net_to_host: NicPath,
}

/// One path of the NetSparse SmartNIC: its [`PrPath`] and the RIG
/// metadata the firmware fills around it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NicPath {
    /// The per-packet (net_to_host only) and per-PR parts (serialized in place).
    #[serde(flatten)]
    pub path: PrPath,
    /// The `ns_rig_md_t` fields.
    pub rig: RigSlots,
}

/// Slots of the RIG metadata (`ns_rig_md_t`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RigSlots {
    /// This NIC's node id (32 bits), set by the firmware.
    pub node: FieldId,
    /// The RIG unit running the control (16 bits), set by the firmware.
    pub unit: FieldId,
    /// Host-to-net: the RIG command being served (32 bits), set by the firmware.
    pub command: FieldId,
    /// Host-to-net: what the control decided for the idx (8 bits, `NS_ISSUED`...).
    pub outcome: FieldId,
}

/// Serde for `u128` values: a JSON number when the value fits in 64 bits, a
/// `"0x..."` string otherwise. (serde_json's `u128` support does not survive
/// the buffering that internally tagged enums use.)
/// Whether a wide value is 0 (fields left out of the JSON when they are).
fn is_zero(v: &u128) -> bool {
    *v == 0
}

/// Serde helper: skip a zero count.
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

mod wide {
    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};
    use std::fmt;

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        match u64::try_from(*v) {
            Ok(small) => s.serialize_u64(small),
            Err(_) => s.serialize_str(&format!("{v:#x}")),
        }
    }

    struct WideVisitor;

    impl Visitor<'_> for WideVisitor {
        type Value = u128;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a non-negative integer or a \"0x\" hex string")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u128, E> {
            Ok(v.into())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u128, E> {
            u128::try_from(v).map_err(|_| E::custom(format!("negative value {v}")))
        }
        fn visit_u128<E: de::Error>(self, v: u128) -> Result<u128, E> {
            Ok(v)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u128, E> {
            let digits = v
                .strip_prefix("0x")
                .ok_or_else(|| E::custom(format!("wide value {v:?} must start with 0x")))?;
            u128::from_str_radix(digits, 16)
                .map_err(|e| E::custom(format!("wide value {v:?}: {e}")))
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        d.deserialize_any(WideVisitor)
    }
}

/// Serde for `Vec<u128>` with the encoding of [`wide`].
mod wide_vec {
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct W(#[serde(with = "super::wide")] u128);

    pub fn serialize<S: Serializer>(v: &[u128], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for x in v {
            seq.serialize_element(&W(*x))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u128>, D::Error> {
        Ok(Vec::<W>::deserialize(d)?.into_iter().map(|w| w.0).collect())
    }
}

impl Artifact {
    /// Width of the value an expression produces.
    pub fn expr_width(&self, e: &Expr) -> u16 {
        match e {
            Expr::Const { width, .. }
            | Expr::Unary { width, .. }
            | Expr::Binary { width, .. }
            | Expr::Concat { width, .. }
            | Expr::Cast { width, .. }
            | Expr::Mux { width, .. }
            | Expr::Lookahead { width, .. } => *width,
            Expr::Field { field } => self.fields.get(field.index()).map_or(0, |f| f.width),
            Expr::VarbitField { header } => self.headers.get(header.index()).map_or(0, |h| {
                let n = h.varbit_parts.max(1) as usize;
                let k = h.fields.len().saturating_sub(n);
                h.fields[k..].iter().map(|f| f.width).sum()
            }),
            Expr::StackField {
                header,
                field_index,
            } => self
                .header_of_ref(header)
                .and_then(|h| h.fields.get(*field_index as usize))
                .map_or(0, |f| f.width),
            Expr::IsValid { .. } => 1,
            Expr::Slice { hi, lo, .. } => hi.saturating_sub(*lo) + 1,
        }
    }

    /// The header type a reference points at (for a stack, its first element).
    pub fn header_of_ref(&self, r: &HeaderRef) -> Option<&Header> {
        let id = match r {
            HeaderRef::Static { header } => *header,
            HeaderRef::Index { stack, .. }
            | HeaderRef::Next { stack }
            | HeaderRef::Last { stack } => *self.stacks.get(stack.index())?.elements.first()?,
        };
        self.headers.get(id.index())
    }

    /// Parse an artifact from JSON, checking the format tag and version.
    pub fn from_json(text: &str) -> Result<Artifact, ArtifactError> {
        #[derive(Deserialize)]
        struct Probe {
            format: Option<String>,
            version: Option<u32>,
        }
        let probe: Probe = serde_json::from_str(text).map_err(ArtifactError::Json)?;
        match probe.format.as_deref() {
            Some(ARTIFACT_FORMAT) => {}
            other => return Err(ArtifactError::Format(other.map(str::to_owned))),
        }
        match probe.version {
            Some(ARTIFACT_VERSION) => {}
            other => return Err(ArtifactError::Version(other)),
        }
        serde_json::from_str(text).map_err(ArtifactError::Json)
    }

    /// Serialize as pretty JSON (stable field order, for snapshots and diffs).
    pub fn to_json(&self) -> String {
        // Serialising plain data structures to a String cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Why an artifact could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// Not JSON, or JSON of the wrong shape.
    #[error("artifact is not valid JSON of the expected shape: {0}")]
    Json(serde_json::Error),
    /// Missing or wrong `format` tag.
    #[error(
        "not a NetSparse pipeline artifact (format is {0:?}, expected \"netsparse-pipeline\")"
    )]
    Format(Option<String>),
    /// Unsupported version.
    #[error("artifact version {0:?} is not supported (this build reads version 1); recompile the program")]
    Version(Option<u32>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_constants_round_trip() {
        let e = Stmt::If {
            cond: Expr::Binary {
                op: BinaryOp::Eq,
                width: 1,
                signed: false,
                lhs: Box::new(Expr::Field { field: FieldId(3) }),
                rhs: Box::new(Expr::Const {
                    value: u128::MAX >> 1,
                    width: 127,
                    signed: false,
                }),
            },
            then: vec![Stmt::Prim(Prim::MarkToDrop)],
            otherwise: vec![],
        };
        let text = serde_json::to_string(&e).unwrap();
        let back: Stmt = serde_json::from_str(&text).unwrap();
        assert_eq!(back, e);
        let k = KeySet::Mask {
            value: u128::MAX - 5,
            mask: u128::MAX,
        };
        let back: KeySet = serde_json::from_str(&serde_json::to_string(&k).unwrap()).unwrap();
        assert_eq!(back, k);
    }
}
