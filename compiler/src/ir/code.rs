//! The IR's code: typed expressions, calls (builtin methods, externs,
//! actions, functions) and statements, including loops and `switch`.

use super::*;

/// A typed expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Type,
    /// Where.
    pub span: Span,
}

/// The result fields of `t.apply()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableResultField {
    /// `.hit`
    Hit,
    /// `.miss`
    Miss,
    /// `.action_run`
    ActionRun,
}

/// Expression kinds.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A constant of the expression's type.
    Const(Value),
    /// A variable.
    Var(Handle<Var>),
    /// Field `n` of a header or struct value.
    Field(Box<Expr>, u32),
    /// `stack[index]`.
    Index(Box<Expr>, Box<Expr>),
    /// `stack.next`.
    Next(Box<Expr>),
    /// `stack.last`.
    Last(Box<Expr>),
    /// `stack.lastIndex` (`bit<32>`).
    LastIndex(Box<Expr>),
    /// `h.isValid()`.
    IsValid(Box<Expr>),
    /// A unary operator (`Plus` never appears).
    Unary(UnOp, Box<Expr>),
    /// A binary operator other than `++`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e[hi:lo]`.
    Slice(Box<Expr>, u16, u16),
    /// `a ++ b`.
    Concat(Box<Expr>, Box<Expr>),
    /// `(T) e`, `T` being the expression's type.
    Cast(Box<Expr>),
    /// `c ? a : b`.
    Mux(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `{a, b}`: a list, or a struct/header initializer in field order.
    List(Vec<Expr>),
    /// A call that produces a value (or a table result).
    Call(Box<Call>),
    /// `.hit` / `.miss` / `.action_run` of a `t.apply()` call.
    TableResult(Box<Expr>, TableResultField),
}

/// A call argument after binding to its parameter.
#[derive(Clone, Debug)]
pub enum Arg {
    /// An `in` or directionless argument: a value.
    In(Expr),
    /// An `out` / `inout` argument: an l-value.
    Out(Expr, Direction),
    /// `_` for an `out` argument, or an omitted argument with a default.
    Skip(Type),
}

/// The extern operations this target implements (every one maps to an
/// artifact statement, expression or `Prim`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `packet_in.extract(h)`.
    Extract,
    /// `packet_in.extract(h, bits)`: a header with a varbit field.
    ExtractVarbit,
    /// `packet_in.lookahead<T>()`.
    Lookahead,
    /// `packet_in.advance(bits)`.
    Advance,
    /// `packet_out.emit(h)`.
    Emit,
    /// `verify(cond, error)`.
    Verify,
    /// `h.setValid()`.
    SetValid,
    /// `h.setInvalid()`.
    SetInvalid,
    /// `stack.push_front(n)`.
    PushFront,
    /// `stack.pop_front(n)`.
    PopFront,
    /// v1model `mark_to_drop`.
    MarkToDrop,
    /// v1model `hash`.
    Hash,
    /// v1model `verify_checksum` / `_with_payload`.
    VerifyChecksum(bool),
    /// v1model `update_checksum` / `_with_payload`.
    UpdateChecksum(bool),
    /// v1model `random`.
    Random,
    /// v1model `digest`.
    Digest,
    /// `log_msg`.
    LogMsg,
    /// v1model `clone`.
    Clone,
    /// v1model `clone_preserving_field_list`.
    ClonePreserving,
    /// v1model `resubmit_preserving_field_list`.
    Resubmit,
    /// v1model `recirculate_preserving_field_list`.
    Recirculate,
    /// v1model `truncate`.
    Truncate,
    /// v1model `assert`.
    Assert,
    /// v1model `assume`.
    Assume,
    /// `register.read(index)` returning the value.
    RegisterReadValue,
    /// `register.read(out result, index)`.
    RegisterRead,
    /// `register.write(index, value)`.
    RegisterWrite,
    /// `counter.count(index)`.
    Count,
    /// `direct_counter.count()`.
    CountDirect,
    /// `meter.execute_meter(index, out result)`.
    ExecuteMeter,
    /// PSA `Meter.execute(index)`: the colour as a value.
    MeterExecute,
    /// PSA `DirectMeter.execute()` in an action of the meter's table: the colour as a value.
    DirectMeterExecute,
    /// `direct_meter.read(out result)`.
    ReadDirectMeter,
    /// PSA `Hash.get_hash(data)` / `get_hash(base, data, max)`.
    HashGet,
    /// PSA `Checksum.clear()` / `InternetChecksum.clear()`.
    ChecksumClear,
    /// PSA `Checksum.update(data)` / `InternetChecksum.add(data)`.
    ChecksumAdd,
    /// PSA `InternetChecksum.subtract(data)`.
    ChecksumSubtract,
    /// PSA `Checksum.get()` / `InternetChecksum.get()`.
    ChecksumGet,
    /// PSA `InternetChecksum.get_state()`.
    ChecksumGetState,
    /// PSA `InternetChecksum.set_state(state)`.
    ChecksumSetState,
    /// PSA `Random.read()`.
    RandomRead,
    /// PSA `Digest.pack(data)`.
    DigestPack,
    /// NetSparse `Deconcatenate(pr, md)`.
    Deconcatenate,
    /// NetSparse `Concatenate(pr, md)`.
    Concatenate,
    /// NetSparse `Lookup(pr, md)`.
    Lookup,
    /// NetSparse `Insert(pr, md)`.
    Insert,
    /// RIG `IdxFilterTest(idx)` (NIC).
    IdxFilterTest,
    /// RIG `IdxFilterSet(idx)` (NIC).
    IdxFilterSet,
    /// RIG `PendingContains(idx)` (NIC).
    PendingContains,
    /// RIG `PendingInsert(pr)` (NIC host-to-net).
    PendingInsert,
    /// RIG `PendingComplete(pr, md)` (NIC net-to-host).
    PendingComplete,
    /// RIG `HostRead(pr, md)` (NIC net-to-host).
    HostRead,
    /// RIG `HostWrite(pr, md)` (NIC net-to-host).
    HostWrite,
    /// A sPIN extern of `<spin.p4>` (SpinNic handlers).
    Spin(SpinOp),
    /// A collective extern of `<collective.p4>` (NetSparse SmartNIC).
    Coll(CollOp),
}

impl Builtin {
    /// The only architecture where this builtin is available, if restricted
    /// to one. `Deconcatenate`/`Concatenate` exist on both NetSparse targets
    /// (see [`Builtin::available_in`]).
    pub fn arch_only(self) -> Option<Arch> {
        use Builtin::*;
        match self {
            MarkToDrop | VerifyChecksum(_) | Digest | Clone | ClonePreserving | Resubmit
            | Recirculate | Truncate => Some(Arch::V1Model),
            Lookup | Insert => Some(Arch::NetSparseSwitch),
            _ if self.is_rig() => Some(Arch::NetSparseNic),
            Spin(_) => Some(Arch::SpinNic),
            _ => None,
        }
    }

    /// Whether a program for `arch` may use this builtin.
    pub fn available_in(self, arch: Arch) -> bool {
        match self {
            // The collective externs: the SmartNIC's aggregator firmware
            // and the NetSparse switch's middle pipes implement them.
            Builtin::Deconcatenate | Builtin::Concatenate | Builtin::Coll(_) => {
                matches!(arch, Arch::NetSparseSwitch | Arch::NetSparseNic)
            }
            _ => self.arch_only().is_none_or(|a| a == arch),
        }
    }

    /// A NetSparse switch construct (the split points and the Property Cache).
    pub fn is_netsparse(self) -> bool {
        matches!(
            self,
            Builtin::Deconcatenate | Builtin::Concatenate | Builtin::Lookup | Builtin::Insert
        )
    }

    /// A RIG extern of the NetSparse SmartNIC.
    pub fn is_rig(self) -> bool {
        matches!(
            self,
            Builtin::IdxFilterTest
                | Builtin::IdxFilterSet
                | Builtin::PendingContains
                | Builtin::PendingInsert
                | Builtin::PendingComplete
                | Builtin::HostRead
                | Builtin::HostWrite
        )
    }
}

/// What a call calls.
#[derive(Clone, Debug)]
pub enum Callee {
    /// A direct action call.
    Action(Handle<Action>),
    /// A function (inlined).
    Function(Handle<Function>),
    /// `inst.apply(...)` of a control instance (inlined).
    ApplyControl(Handle<Instance>),
    /// `inst.apply(...)` of a parser instance.
    ApplyParser(Handle<Instance>),
    /// `t.apply()`.
    ApplyTable(Handle<Table>),
    /// A built-in extern operation; `receiver` is the object (packet, header,
    /// stack, extern instance) for methods.
    Builtin {
        /// The operation.
        op: Builtin,
        /// The object the method is called on.
        receiver: Option<Box<Receiver>>,
        /// Explicit or inferred type arguments that matter (`lookahead<T>`).
        type_args: Vec<Type>,
    },
}

/// The object a builtin method is called on.
#[derive(Clone, Debug)]
pub enum Receiver {
    /// An extern instance.
    Instance(Handle<Instance>),
    /// A value (packet parameter, header, stack).
    Expr(Expr),
}

/// A call.
#[derive(Clone, Debug)]
pub struct Call {
    /// What.
    pub callee: Callee,
    /// Arguments bound to the callee's parameters, in parameter order.
    pub args: Vec<Arg>,
    /// Where.
    pub span: Span,
}

/// A `{ }` block.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// Statements.
    pub stmts: Vec<Stmt>,
}

/// A statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Statement kinds.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `lhs = rhs` (types equal).
    Assign(Expr, Expr),
    /// A call statement.
    Call(Call),
    /// `if`.
    If(Expr, Block, Block),
    /// `switch`.
    Switch(Switch),
    /// `{ }`.
    Block(Block),
    /// `return [e]`.
    Return(Option<Expr>),
    /// `exit`.
    Exit,
    /// A local variable declaration: headers start invalid; the initializer
    /// (if any) is assigned.
    VarDecl(Handle<Var>, Option<Expr>),
    /// A loop (its initialisers are the statements before it).
    Loop(Box<Loop>),
    /// `break`: leave the innermost loop.
    Break,
    /// `continue`: run the innermost loop's updates, then test its condition.
    Continue,
}

/// A loop: while `cond` holds, run `body` then `updates` (`continue` jumps
/// to the updates, `break` out of the loop).
#[derive(Clone, Debug)]
pub struct Loop {
    /// Tested before every iteration.
    pub cond: Expr,
    /// The body.
    pub body: Block,
    /// Run after the body, and after `continue`.
    pub updates: Block,
}

/// A switch statement.
#[derive(Clone, Debug)]
pub struct Switch {
    /// The selector (a `TableResult(.., ActionRun)` for action switches).
    pub selector: Expr,
    /// Cases with fall-through labels merged.
    pub cases: Vec<SwitchCase>,
    /// The `default` body.
    pub default: Option<Block>,
}

/// One case of a [`Switch`].
#[derive(Clone, Debug)]
pub struct SwitchCase {
    /// Labels selecting this case.
    pub labels: Vec<SwitchLabel>,
    /// Body.
    pub body: Block,
}

/// A switch label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwitchLabel {
    /// An action of the switched table (`switch (t.apply().action_run)`).
    Action(Handle<Action>),
    /// A constant.
    Value(u128),
}
