//! The error codes of the checker, the graph/resource pass and the back ends.
//!
//! One constant per code, so that every code used is defined once here and
//! has an explanation file `compiler/errors/EXXXX.md` (a test checks it).
//! Ranges follow [`crate::diag`]: E0100–E0299 names and types, E0300–E0399
//! P4 semantics, E0400–E0499 architecture, NetSparse and target resources.

/// A name that is not declared (or not visible here).
pub const UNDEFINED: &str = "E0101";
/// A name declared twice in the same scope.
pub const DUPLICATE: &str = "E0102";
/// A name used as the wrong kind of thing (a value as a type, a table as a value...).
pub const WRONG_KIND: &str = "E0103";
/// A member (field, method, enum member, error) that does not exist.
pub const NO_MEMBER: &str = "E0104";
/// A type written where a value is expected.
pub const TYPE_AS_VALUE: &str = "E0105";
/// A `varbit` where this compiler does not support it (not the last header field, over 4096 bits, read outside `==`/`!=` and checksum lists).
pub const VARBIT: &str = "E0110";
/// An operation on a stack of `header_union`s other than a constant index.
pub const HEADER_UNION: &str = "E0111";
/// A width outside 1..=128 (1..=4096 for a header field), or a header field over 128 bits read in an expression.
pub const WIDTH_RANGE: &str = "E0112";
/// A type not allowed in this position (struct in a header, stack of structs...).
pub const TYPE_NOT_ALLOWED: &str = "E0113";
/// Generic (type-parameterised) user declarations are not supported.
pub const GENERIC_DECL: &str = "E0114";
/// Two types that should agree do not.
pub const TYPE_MISMATCH: &str = "E0120";
/// Implicit conversion between different widths (P4 has none).
pub const WIDTH_MISMATCH: &str = "E0121";
/// An integer literal that does not fit its type.
pub const LITERAL_RANGE: &str = "E0122";
/// An operator applied to a type it does not accept.
pub const BAD_OPERAND: &str = "E0123";
/// A cast P4 does not allow.
pub const BAD_CAST: &str = "E0124";
/// A bad slice or stack index.
pub const BAD_SLICE: &str = "E0125";
/// A bad `++` concatenation.
pub const BAD_CONCAT: &str = "E0126";
/// A bad shift.
pub const BAD_SHIFT: &str = "E0127";
/// Overflow or division by zero in compile-time arithmetic.
pub const CONST_OVERFLOW: &str = "E0128";
/// A value that must be a compile-time constant is not.
pub const NOT_CONSTANT: &str = "E0129";
/// Wrong number of arguments / no matching overload.
pub const ARG_COUNT: &str = "E0130";
/// A bad named argument.
pub const NAMED_ARG: &str = "E0131";
/// A type argument that cannot be inferred or does not unify.
pub const TYPE_INFERENCE: &str = "E0132";
/// A condition that is not `bool`.
pub const NOT_BOOL: &str = "E0133";
/// A bad switch label.
pub const SWITCH_LABEL: &str = "E0140";
/// A switch on a type that cannot be switched on.
pub const SWITCH_SELECTOR: &str = "E0141";
/// A bad struct/header/list initializer.
pub const INITIALIZER: &str = "E0150";
/// Assignment to something that cannot be written (`in` parameter, constant...).
pub const ASSIGN_READONLY: &str = "E0301";
/// An `out`/`inout` argument that is not an l-value.
pub const ARG_NOT_LVALUE: &str = "E0302";
/// A statement or call that is not allowed in this context.
pub const NOT_ALLOWED_HERE: &str = "E0303";
/// A bad `return`.
pub const BAD_RETURN: &str = "E0304";
/// A directional action parameter after a directionless one.
pub const ACTION_PARAM_ORDER: &str = "E0310";
/// Bad action arguments (unbound directional parameter, arguments for action data...).
pub const ACTION_ARGS: &str = "E0311";
/// Action data that is not a compile-time constant.
pub const ACTION_DATA_CONST: &str = "E0312";
/// An action used with a table that does not list it.
pub const ACTION_NOT_LISTED: &str = "E0313";
/// An unknown match kind.
pub const MATCH_KIND: &str = "E0320";
/// More than one `lpm` key.
pub const TWO_LPM: &str = "E0321";
/// A default action not in the table's action list.
pub const DEFAULT_NOT_LISTED: &str = "E0322";
/// A table entry that does not fit the keys.
pub const BAD_ENTRY: &str = "E0323";
/// A bad `size` (or other numeric table property).
pub const TABLE_SIZE: &str = "E0324";
/// `@defaultonly` / `@tableonly` violated.
pub const DEFAULT_ONLY: &str = "E0325";
/// `counters`/`meters` not naming a direct counter/meter.
pub const DIRECT_RESOURCE: &str = "E0326";
/// An unknown, duplicate or missing table property.
pub const TABLE_PROPERTY: &str = "E0327";
/// A key expression of a type that cannot be matched.
pub const KEY_TYPE: &str = "E0328";
/// A parser without a `start` state.
pub const NO_START: &str = "E0330";
/// A transition to a state that does not exist.
pub const UNKNOWN_STATE: &str = "E0331";
/// A parser state no transition reaches (warning).
pub const UNREACHABLE_STATE: &str = "E0332";
/// A bad `select` case.
pub const SELECT_KEYSET: &str = "E0333";
/// A bad packet operation (`extract` of a non-header...).
pub const PACKET_OP: &str = "E0334";
/// A cycle of unconditional transitions through states that call nothing:
/// the parser never ends.
pub const PARSER_LOOP: &str = "E0335";
/// An extern declared but not implemented by this target.
pub const EXTERN_NOT_IMPLEMENTED: &str = "E0401";
/// No `main`, or `main` is not an architecture package of this target.
pub const MAIN_PACKAGE: &str = "E0402";
/// A package argument that does not fit the package parameter.
pub const PACKAGE_ARG: &str = "E0403";
/// A construct this compiler does not support.
pub const UNSUPPORTED: &str = "E0404";
/// A PSA extern instantiated or called against the architecture's rules
/// (`Hash<O>` with `O` not `bit<W>`, `Random` bounds out of order,
/// `InternetChecksum` data not whole 16-bit words).
pub const PSA_EXTERN_ARG: &str = "E0405";
/// `Deconcatenate`/`Concatenate` outside the middle control.
pub const NS_OUTSIDE_MIDDLE: &str = "E0410";
/// `Deconcatenate`/`Concatenate` misplaced in the middle control.
pub const NS_STRUCTURE: &str = "E0411";
/// `Lookup`/`Insert` outside the per-PR region.
pub const NS_CACHE_REGION: &str = "E0412";
/// A per-PR control applied outside the per-PR region.
pub const NS_PER_PR_CONTROL: &str = "E0413";
/// A NetSparse construct in a v1model program.
pub const NS_IN_V1MODEL: &str = "E0414";
/// A v1model-only extern in a NetSparse program.
pub const V1MODEL_IN_NS: &str = "E0415";
/// A NetSparse switch construct (`Lookup`/`Insert`) in a NIC program.
pub const SWITCH_IN_NIC: &str = "E0416";
/// A RIG extern (NetSparse SmartNIC) in a switch or v1model program.
pub const RIG_OUTSIDE_NIC: &str = "E0417";
/// A RIG extern outside the per-PR part of a NIC path.
pub const RIG_REGION: &str = "E0418";
/// A RIG extern in the wrong NIC path (e.g. `PendingInsert` in net_to_host).
pub const RIG_PATH: &str = "E0419";
/// More pipeline stages than the target has.
pub const MAX_STAGES: &str = "E0420";
/// More tables in one stage than the target allows.
pub const MAX_TABLES_PER_STAGE: &str = "E0421";
/// More tables than the target has.
pub const MAX_TABLES: &str = "E0422";
/// Something the pipeline artifact cannot express.
pub const NOT_EXPRESSIBLE: &str = "E0430";
/// `Deconcatenate`/`Concatenate` misplaced in a NetSparse NIC program.
pub const NIC_STRUCTURE: &str = "E0440";
/// A NetSparse switch or RIG construct in a sPIN (`SpinNic`) program.
pub const NS_IN_SPIN: &str = "E0441";
/// A sPIN extern outside a `SpinNic` program, or in the wrong handler.
pub const SPIN_PLACEMENT: &str = "E0442";
/// A collective extern (`<collective.p4>`) outside the per-PR part.
pub const COLL_REGION: &str = "E0443";
