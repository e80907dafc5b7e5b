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

mod blocks;
mod code;
mod coll;
mod packages;
mod psa;
mod spin;
mod validate;
mod validate_code;
pub use blocks::*;
pub use code::*;
pub use coll::{status as coll_status, CollOp};
pub use packages::*;
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

/// Whether a wide value is 0 (fields left out of the JSON when they are).
fn is_zero(v: &u128) -> bool {
    *v == 0
}

/// Serde helper: skip a zero count.
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Serde for `u128` values: a JSON number when the value fits in 64 bits, a
/// `"0x..."` string otherwise. (serde_json's `u128` support does not survive
/// the buffering that internally tagged enums use.)
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
