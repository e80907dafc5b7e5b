//! The artifact's code: expressions ([`Expr`]), assignable places
//! ([`LValue`]), structured statements ([`Stmt`]) and the primitives
//! statements call ([`Prim`]: externs, hashes, clones, NetSparse's
//! `Concatenate`/`Lookup`/`Insert`, the NIC's RIG operations).

use serde::{Deserialize, Serialize};

use super::*;

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
