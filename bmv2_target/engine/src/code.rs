//! The executable form of a pipeline artifact: pre-resolved trees with no
//! names on the packet path.
//!
//! * Every field slot is a [`Loc`]: an index into the packet state's `u64`
//!   array (width ≤ 64, the fast path) or its `u128` array (wider).
//! * Every expression is an [`X<W>`] evaluated in the word of its own width
//!   (`u64` or `u128`); a child of the other class is wrapped in
//!   [`X::Cross`], so each operator runs at the cheapest word that holds it.
//! * Statements are [`S`] trees; tables, actions, headers and stacks are
//!   indices into [`Code`]'s vectors.

use netsparse_externs::artifact::{BinaryOp, CloneKind, HashAlgo, Prim, UnaryOp};

use super::state::{Loc, PacketState};
use super::word::Word;

/// A field slot's static description.
#[derive(Clone, Debug)]
pub struct FieldInfo {
    /// Source-level path, for logs and the control plane.
    pub name: String,
    /// Where its value lives.
    pub loc: Loc,
    /// Width in bits.
    pub width: u16,
}

/// One field of a header layout.
#[derive(Clone, Copy, Debug)]
pub struct HField {
    /// The slot.
    pub loc: Loc,
    /// Offset of the most significant bit from the header start.
    pub bit_off: u32,
    /// Width in bits.
    pub width: u16,
}

/// A header instance.
#[derive(Clone, Debug)]
pub struct HeaderInfo {
    /// Instance path (`hdr.ipv4`).
    pub name: String,
    /// Width in bits (a multiple of 8: checked at load).
    pub bit_width: u32,
    /// Fields in wire order.
    pub fields: Box<[HField]>,
    /// The chunked layout (extract/emit fast path).
    pub plan: super::layout::Plan,
    /// The varbit field after the fixed ones, if the header has one
    /// (`bit_width`, `fields` and `plan` cover the fixed part only).
    pub varbit: Option<VarbitInfo>,
}

/// The varbit field of a header: its slots, maximum width and the `u64`
/// slot of its current length in bits.
#[derive(Clone, Debug)]
pub struct VarbitInfo {
    /// The value, right-aligned across the parts: most significant part
    /// first, every part but the first 128 bits wide (one part up to 128).
    pub parts: Box<[Loc]>,
    /// Maximum width in bits.
    pub max: u16,
    /// `u64` slot of the length in bits.
    pub len: u32,
}

/// A header stack.
#[derive(Clone, Debug)]
pub struct StackInfo {
    /// Element header ids, index 0 first.
    pub elements: Box<[u32]>,
    /// `u64` slot of `nextIndex`.
    pub next_index: u32,
}

/// Which element of a stack a run-time reference selects.
#[derive(Debug)]
pub enum Sel {
    /// `stack[e]`.
    Index(X<u64>),
    /// `stack.next`.
    Next,
    /// `stack.last`.
    Last,
}

/// A header reached through a stack at run time.
#[derive(Debug)]
pub struct DynRef {
    /// The stack.
    pub stack: u32,
    /// The element selector.
    pub sel: Sel,
}

/// A header reference.
#[derive(Debug)]
pub enum HRef {
    /// Known header id.
    Static(u32),
    /// Through a stack.
    Dyn(Box<DynRef>),
}

/// A value-producing expression evaluated in word `W`.
#[derive(Debug)]
pub enum X<W: Word> {
    /// A constant (already masked).
    Const(W),
    /// A slot of this word's class.
    Slot(u32),
    /// A header-stack field by position; 0 when the index is out of range.
    StackField(Box<(DynRef, u32)>),
    /// `isValid()` of a known header.
    Valid(u32),
    /// `isValid()` through a stack (false when out of range).
    ValidDyn(Box<DynRef>),
    /// Unary operator with the result width.
    Unary(UnaryOp, u16, Box<X<W>>),
    /// Arithmetic, bitwise or shift operator.
    Arith(Box<Arith<W>>),
    /// Comparison of two operands of this word's class: 1 or 0.
    Cmp(Box<Cmp<W>>),
    /// `a && b` (short-circuit).
    LAnd(Box<[X<W>; 2]>),
    /// `a || b` (short-circuit).
    LOr(Box<[X<W>; 2]>),
    /// `(a >> lo) & mask`.
    Slice(Box<X<W>>, u32, W),
    /// `(a << rhs_width | b) & mask`.
    Concat(Box<Concat<W>>),
    /// Width change with optional sign extension.
    Cast(Box<Cast<W>>),
    /// `cond ? a : b`.
    Mux(Box<Mux<W>>),
    /// Parser lookahead: (bits past the cursor, width).
    Lookahead(u32, u16),
    /// A child evaluated in the other word, converted (truncate/zero-extend).
    Cross(Box<X<W::Other>>),
    /// As `Cross`, saturating when narrowing (shift amounts, indices).
    CrossSat(Box<X<W::Other>>),
}

/// A binary arithmetic/bitwise/shift node.
#[derive(Debug)]
pub struct Arith<W: Word> {
    /// Operator.
    pub op: BinaryOp,
    /// Result width.
    pub width: u16,
    /// Signed operands.
    pub signed: bool,
    /// Left operand.
    pub lhs: X<W>,
    /// Right operand (shift amount for shifts).
    pub rhs: X<W>,
}

/// A comparison node.
#[derive(Debug)]
pub struct Cmp<W: Word> {
    /// Operator.
    pub op: BinaryOp,
    /// Operand width.
    pub width: u16,
    /// Signed operands.
    pub signed: bool,
    /// Left operand.
    pub lhs: X<W>,
    /// Right operand.
    pub rhs: X<W>,
}

/// A concatenation node.
#[derive(Debug)]
pub struct Concat<W: Word> {
    /// High part.
    pub lhs: X<W>,
    /// Low part.
    pub rhs: X<W>,
    /// Width of the low part.
    pub rhs_width: u32,
    /// Result mask.
    pub mask: W,
}

/// A cast node.
#[derive(Debug)]
pub struct Cast<W: Word> {
    /// Operand (in the result's word).
    pub arg: X<W>,
    /// Operand width.
    pub arg_width: u16,
    /// Operand signed.
    pub arg_signed: bool,
    /// Result width.
    pub width: u16,
}

/// A conditional expression.
#[derive(Debug)]
pub struct Mux<W: Word> {
    /// Condition.
    pub cond: X<u64>,
    /// Value if true.
    pub then: X<W>,
    /// Value if false.
    pub otherwise: X<W>,
}

/// An expression of either word, read as `u128`.
#[derive(Debug)]
pub enum VX {
    /// Width ≤ 64.
    N(X<u64>),
    /// Width > 64.
    W(X<u128>),
}

/// An assignment target.
#[derive(Debug)]
pub enum LV {
    /// A whole slot.
    Slot(Loc, u16),
    /// Bits `lo..lo+width` of a slot (`mask` = the slice's mask, unshifted).
    Slice(Loc, u32, u128),
    /// A stack element's field.
    Stack(Box<(DynRef, u32)>),
}

/// A block of statements.
pub type Block = Box<[S]>;

/// A statement.
#[derive(Debug)]
pub enum S {
    /// `u64` slot = `u64` slot (same width: values are always masked).
    Copy(u32, u32),
    /// `u64` slot = constant.
    SetConst(u32, u64),
    /// `u64` slot = expression.
    SetN(u32, X<u64>),
    /// `u128` slot = expression.
    SetW(u32, X<u128>),
    /// General assignment (slices, stack fields).
    Set(LV, VX),
    /// `setValid()` / `setInvalid()`.
    SetValid(HRef, bool),
    /// Whole-header copy (fields and validity).
    CopyHeader(HRef, HRef),
    /// `push_front(count)`.
    Push(u32, u32),
    /// `pop_front(count)`.
    Pop(u32, u32),
    /// `if`.
    If(Box<(X<u64>, Block, Block)>),
    /// `switch`.
    Switch(Box<SwitchS>),
    /// Apply a table.
    Apply(u32),
    /// Run an action body.
    Call(u32),
    /// An inlined block (`Return` ends it).
    Inlined(Block),
    /// A loop: (condition, body, updates).
    Loop(Box<(X<u64>, Block, Block)>),
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `return`.
    Return,
    /// `exit`.
    Exit,
    /// Parser `extract`.
    Extract(HRef),
    /// Parser `extract(h, bits)` of a header with a varbit field.
    ExtractVarbit(HRef, X<u64>),
    /// Parser `advance(bits)`.
    Advance(X<u64>),
    /// Parser `verify(cond, error)`.
    Verify(X<u64>, u32),
    /// Deparser `emit`.
    Emit(HRef),
    /// Extern call.
    Prim(Box<P>),
}

/// A compiled `switch`.
#[derive(Debug)]
pub struct SwitchS {
    /// Selector.
    pub sel: VX,
    /// (value, index into `bodies`) in case order.
    pub labels: Box<[(u128, u32)]>,
    /// Case bodies.
    pub bodies: Box<[Block]>,
    /// Default body.
    pub default: Block,
}

/// Data fed to a hash or checksum: (value, width) most significant first,
/// right-aligned in whole bytes.
#[derive(Debug)]
pub enum Data {
    /// Every item is a plain slot: a precomputed layout.
    Plan(super::layout::Plan),
    /// General expressions.
    General(Box<[DataItem]>),
}

/// An item of a general data list.
#[derive(Debug)]
pub enum DataItem {
    /// An expression of the given width.
    Value(VX, u16),
    /// A header's varbit field at its current length (whole bytes).
    Varbit(u32),
}

/// A compiled extern call. Operand fields mirror the artifact primitive of
/// the same name, with names resolved to indices and expressions compiled.
#[allow(missing_docs)]
#[derive(Debug)]
pub enum P {
    /// `mark_to_drop`.
    MarkToDrop,
    /// `register.read`.
    RegRead { reg: u32, dst: LV, index: X<u64> },
    /// `register.write`.
    RegWrite { reg: u32, index: X<u64>, value: VX },
    /// `counter.count`.
    Count { counter: u32, index: X<u64> },
    /// `meter.execute_meter`.
    Meter { meter: u32, index: X<u64>, dst: LV },
    /// `direct_meter.read`.
    ReadDirectMeter { meter: u32, dst: LV },
    /// `direct_counter.count()` (no-op: direct counters count every hit).
    CountDirect,
    /// v1model `hash`.
    Hash {
        dst: LV,
        algo: HashAlgo,
        base: VX,
        data: Data,
        max: VX,
    },
    /// `verify_checksum[_with_payload]`.
    VerifyChecksum {
        cond: X<u64>,
        data: Data,
        checksum: VX,
        checksum_width: u16,
        algo: HashAlgo,
        with_payload: bool,
    },
    /// `update_checksum[_with_payload]`.
    UpdateChecksum {
        cond: X<u64>,
        data: Data,
        dst: LV,
        algo: HashAlgo,
        with_payload: bool,
    },
    /// `random`.
    Random { dst: LV, lo: VX, hi: VX },
    /// `digest`.
    Digest {
        receiver: VX,
        name: String,
        data: Box<[(String, VX)]>,
    },
    /// `log_msg`: the format split at `{}`; `parts.len() == args.len() + 1`
    /// unless the format has more placeholders than arguments.
    LogMsg {
        parts: Box<[String]>,
        args: Box<[VX]>,
    },
    /// `clone` / `clone_preserving_field_list`.
    Clone {
        kind: CloneKind,
        session: VX,
        list: u32,
    },
    /// `resubmit_preserving_field_list`.
    Resubmit { list: u32 },
    /// `recirculate_preserving_field_list`.
    Recirculate { list: u32 },
    /// `truncate`.
    Truncate { length: VX },
    /// `assert` / `assume`.
    Assert { cond: X<u64>, assume: bool },
    /// PSA `Checksum.clear` / `InternetChecksum.clear`.
    ChecksumClear { ext: u32 },
    /// PSA `Checksum.update` / `InternetChecksum.add` / `subtract`.
    ChecksumUpdate {
        ext: u32,
        data: Data,
        subtract: bool,
    },
    /// PSA `Checksum.get` / `InternetChecksum.get` / `get_state`.
    ChecksumGet { ext: u32, dst: LV, state: bool },
    /// PSA `InternetChecksum.set_state`.
    ChecksumSetState { ext: u32, value: X<u64> },
    /// A target-specific primitive (Property Cache, RIG externs): its
    /// operands are evaluated and handed to the target (see
    /// [`crate::program::TargetPrims`]).
    Target(Box<TargetP>),
}

/// A compiled target-specific primitive.
#[derive(Debug)]
pub struct TargetP {
    /// Index into [`Code::target_prims`].
    pub prim: u32,
    /// The primitive's `Expr` operands in declaration order (at most 4).
    pub args: Box<[VX]>,
    /// Where the target's value goes.
    pub dst: Option<LV>,
}

/// A compiled parser.
#[derive(Debug)]
pub struct CParser {
    /// Name, for logs.
    pub name: String,
    /// States.
    pub states: Box<[CState]>,
    /// Start state.
    pub start: u32,
}

/// Where a transition goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextS {
    /// A state.
    State(u32),
    /// `accept`.
    Accept,
    /// `reject`: an explicit `transition reject` keeps the current
    /// `parser_error` (`NoError` unless something set it).
    Reject,
}

/// A parser state.
#[derive(Debug)]
pub struct CState {
    /// Name.
    pub name: String,
    /// Statements.
    pub body: Block,
    /// Transition.
    pub trans: CTrans,
}

/// A compiled transition.
#[derive(Debug)]
pub enum CTrans {
    /// Unconditional.
    Direct(NextS),
    /// `select` on one key of ≤ 64 bits with value/mask cases only:
    /// (value, mask, next); no match rejects with `NoMatch`.
    Select1 {
        /// The key.
        key: X<u64>,
        /// Cases in order.
        cases: Box<[(u64, u64, NextS)]>,
    },
    /// `select`.
    Select {
        /// Key expressions.
        keys: Box<[VX]>,
        /// Cases in order.
        cases: Box<[CCase]>,
    },
}

/// One select case: per key (value, mask) or range.
#[derive(Debug)]
pub struct CCase {
    /// Per key.
    pub sets: Box<[CKeySet]>,
    /// Target.
    pub next: NextS,
}

/// A compiled keyset.
#[derive(Clone, Copy, Debug)]
pub enum CKeySet {
    /// `(k & mask) == value` (`Any` is mask 0).
    Mask(u128, u128),
    /// `lo <= k <= hi`.
    Range(u128, u128),
}

impl CKeySet {
    /// Does `k` match?
    #[inline]
    pub fn matches(self, k: u128) -> bool {
        match self {
            CKeySet::Mask(v, m) => k & m == v,
            CKeySet::Range(lo, hi) => lo <= k && k <= hi,
        }
    }
}

/// A compiled control.
#[derive(Debug)]
pub struct CControl {
    /// Name.
    pub name: String,
    /// Body.
    pub body: Block,
}

/// A compiled action.
#[derive(Debug)]
pub struct CAction {
    /// Fully-qualified name.
    pub name: String,
    /// Parameter slots and widths, in order.
    pub params: Box<[(Loc, u16)]>,
    /// Parameter names.
    pub param_names: Box<[String]>,
    /// Body.
    pub body: Block,
}

/// A compiled table's static part (entries live in the runtime).
#[derive(Debug)]
pub struct CTable {
    /// Fully-qualified name.
    pub name: String,
    /// Key expressions (as `u128`).
    pub keys: Box<[VX]>,
    /// `hit` slot.
    pub hit: NSlot,
    /// `action_run` slot.
    pub action_run: NSlot,
}

/// A `u64` slot and its width's mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NSlot {
    /// Index into the `u64` slots.
    pub idx: u32,
    /// Mask of the field's width.
    pub mask: u64,
}

impl NSlot {
    /// Read the slot.
    #[inline(always)]
    pub fn get(self, st: &PacketState) -> u64 {
        st.n[self.idx as usize]
    }

    /// Write the slot (masked).
    #[inline(always)]
    pub fn set(self, st: &mut PacketState, v: u64) {
        st.n[self.idx as usize] = v & self.mask;
    }
}

/// The v1model standard metadata slots (see `StandardMetadata` in the
/// artifact). All are validated at load; the queueing fields and `priority`
/// are never written (no queue model: they stay 0).
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs, dead_code)]
pub struct V1Slots {
    pub ingress_port: NSlot,
    pub egress_spec: NSlot,
    pub egress_port: NSlot,
    pub instance_type: NSlot,
    pub packet_length: NSlot,
    pub enq_timestamp: NSlot,
    pub enq_qdepth: NSlot,
    pub deq_timedelta: NSlot,
    pub deq_qdepth: NSlot,
    pub ingress_global_timestamp: NSlot,
    pub egress_global_timestamp: NSlot,
    pub mcast_grp: NSlot,
    pub egress_rid: NSlot,
    pub checksum_error: NSlot,
    pub parser_error: NSlot,
    pub priority: NSlot,
}

/// The whole executable program (immutable after load).
#[derive(Debug)]
pub struct Code {
    /// Number of `u64` slots.
    pub n_narrow: usize,
    /// Number of `u128` slots.
    pub n_wide: usize,
    /// Headers.
    pub headers: Box<[HeaderInfo]>,
    /// Stacks.
    pub stacks: Box<[StackInfo]>,
    /// Error names (index = value).
    pub errors: Box<[String]>,
    /// Parsers.
    pub parsers: Box<[CParser]>,
    /// Controls.
    pub controls: Box<[CControl]>,
    /// Actions.
    pub actions: Box<[CAction]>,
    /// Tables.
    pub tables: Box<[CTable]>,
    /// Field lists preserved by clone/resubmit/recirculate.
    pub lists: Box<[Box<[Loc]>]>,
    /// v1model standard metadata.
    pub v1: V1Slots,
    /// Every slot that is not a header field (metadata, locals, action
    /// data): what BMv2's "reset metadata" clears for clones and
    /// recirculated/resubmitted packets.
    pub non_header: Box<[Loc]>,
    /// The artifact primitives behind [`P::Target`] calls.
    pub target_prims: Box<[Prim]>,
}

impl Code {
    /// A fresh packet state sized for this program.
    pub fn new_state(&self) -> PacketState {
        PacketState::with_sizes(self.n_narrow, self.n_wide, self.headers.len())
    }
}
