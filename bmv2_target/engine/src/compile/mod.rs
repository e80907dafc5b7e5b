//! Load an [`Artifact`]: validate it completely and translate it into the
//! executable [`Code`] plus the initial [`Runtime`](crate::runtime::Runtime) state.
//!
//! The schema's consistency check ([`netsparse_externs::artifact::validate`],
//! the same one the compiler's tests run on every artifact) comes first, so
//! a hand-edited artifact is refused with the JSON pointer of the bad value;
//! what follows are this target's own limits and the translation.
//!
//! Validation covers every id (in range), every width (1..=128, operands and
//! assignments agreeing, slices inside their operand, constants that fit),
//! header layouts (contiguous fields, whole bytes), statements in the right
//! kind of block (extract/verify/advance/lookahead in parsers, emit in the
//! deparser), table definitions and const entries, and the package. Anything
//! the target cannot run is [`LoadError::Unsupported`]; anything
//! inconsistent is [`LoadError::Invalid`]; both name the place.
//!
//! The loader is split along the artifact: `cx.rs` holds the loading
//! context (the place for errors, field slots) and the typed expression
//! nodes; `expr.rs` translates expressions and l-values, `stmt.rs`
//! statements and blocks, `prims.rs` primitives and extern calls;
//! `decls.rs` headers, stacks, the v1model standard metadata and extern
//! instances; `blocks.rs` actions, parsers and controls; `tables.rs` tables
//! and their const entries. This file checks the artifact's format and the
//! package, assigns field slots and runs the phases in order.

mod blocks;
mod cx;
mod decls;
mod expr;
mod prims;
mod stmt;
mod tables;

use netsparse_externs::artifact::{
    Arch, Artifact, Package, Stmt, V1Switch, ARTIFACT_FORMAT, ARTIFACT_VERSION, MAX_WIDTH,
};

use crate::code::*;
use crate::error::LoadError;
use crate::runtime::ExternRt;
use crate::state::Loc;
use crate::tables::TableRt;
use cx::{Ctx, Cx};

/// Most keys a table may have on this target.
pub const MAX_TABLE_KEYS: usize = 64;
/// Most cells a register, counter or meter array may have on this target.
pub const MAX_EXTERN_CELLS: u32 = 1 << 24;
/// Most entries a table may be declared with on this target.
pub const MAX_TABLE_SIZE: u32 = 1 << 24;

/// The names of P4's core errors (defined once, in the artifact schema).
pub use netsparse_externs::artifact::CORE_ERRORS;

/// The blocks of a v1model package.
#[derive(Clone, Copy, Debug)]
pub struct V1Blocks {
    /// The parser.
    pub parser: u32,
    /// The `VerifyChecksum` control.
    pub verify_checksum: u32,
    /// The ingress control.
    pub ingress: u32,
    /// The egress control.
    pub egress: u32,
    /// The `ComputeChecksum` control.
    pub compute_checksum: u32,
    /// The deparser control.
    pub deparser: u32,
}

/// A loaded program.
#[derive(Debug)]
pub struct Loaded {
    /// The executable program.
    pub code: Code,
    /// Every artifact field's slot, by field id.
    pub fields: Vec<FieldInfo>,
    /// The tables, empty of control-plane entries.
    pub tables: Vec<TableRt>,
    /// Extern instances, by extern id.
    pub externs: Vec<ExternRt>,
    /// Extern instances' fully-qualified names, by extern id.
    pub extern_names: Vec<String>,
    /// The v1model package's blocks (zeros for other architectures).
    pub v1: V1Blocks,
}

/// A statement list a target runs besides the artifact's controls (a NIC
/// path, a middle pipe's per-PR part): compiled as an extra control after
/// the artifact's, with target-specific primitives left to the target.
pub struct ExtraBlock<'b> {
    /// Name, for logs.
    pub name: &'b str,
    /// The statements.
    pub body: &'b [Stmt],
}

/// Load an artifact of any architecture for a target that supplies the
/// package semantics itself ([`crate::program::Program`]): the artifact's
/// parsers, controls, tables and externs, plus `extra` blocks as controls
/// `a.controls.len()..`. No v1model standard metadata.
pub fn load_generic(a: &Artifact, extra: &[ExtraBlock<'_>]) -> Result<Loaded, LoadError> {
    load_inner(a, false, extra)
}

/// Load an artifact for the v1model target.
pub fn load(a: &Artifact) -> Result<Loaded, LoadError> {
    load_inner(a, true, &[])
}

fn load_inner(a: &Artifact, v1model: bool, extra: &[ExtraBlock<'_>]) -> Result<Loaded, LoadError> {
    let top = |detail: String| LoadError::Invalid {
        detail,
        place: format!("program {}", a.program),
    };
    if a.format != ARTIFACT_FORMAT {
        return Err(top(format!(
            "format is {:?}, expected {ARTIFACT_FORMAT:?}",
            a.format
        )));
    }
    if a.version != ARTIFACT_VERSION {
        return Err(top(format!(
            "version {} (this build reads version {ARTIFACT_VERSION})",
            a.version
        )));
    }
    // The schema's consistency check, the one every artifact passes
    // (problems name their JSON pointer).
    let problems = netsparse_externs::artifact::validate(a);
    if let Some(p) = problems.first() {
        let more = match problems.len() {
            1 => String::new(),
            n => format!(" (and {} more problems)", n - 1),
        };
        return Err(LoadError::Invalid {
            detail: format!("{}{more}", p.message),
            place: format!("{} ({})", p.path, p.what),
        });
    }
    let pkg: Option<&V1Switch> = match (&a.arch, &a.package) {
        _ if !v1model => None,
        (Arch::V1Model, Package::V1Switch(p)) => Some(p),
        (Arch::V1Model, _) => return Err(top("arch v1model with a non-V1Switch package".into())),
        (Arch::SpinNic, _) => {
            return Err(LoadError::Unsupported {
                what: "architecture spin_nic (sPIN programs run on netsparse-nic's sPIN NIC)".into(),
                place: format!("program {}", a.program),
            })
        }
        (Arch::NetSparseNic, _) => {
            return Err(LoadError::Unsupported {
                what: "architecture netsparse_nic (NIC programs run on netsparse-nic)".into(),
                place: format!("program {}", a.program),
            })
        }
        (Arch::Psa, _) => {
            return Err(LoadError::Unsupported {
                what: "architecture psa in the v1model switch (PSA programs run on the `PsaSwitch`)".into(),
                place: format!("program {}", a.program),
            })
        }
        (Arch::NetSparseSwitch, _) => {
            return Err(LoadError::Unsupported {
                what: "architecture netsparse_switch in the v1model switch (NetSparse switch programs run on the multi-pipe `NsSwitch`)".into(),
                place: format!("program {}", a.program),
            })
        }
    };

    // Field slots.
    let mut fields = Vec::with_capacity(a.fields.len());
    let (mut nn, mut nw) = (0u32, 0u32);
    for (i, f) in a.fields.iter().enumerate() {
        if f.width == 0 || f.width > MAX_WIDTH {
            return Err(LoadError::Invalid {
                detail: format!("field {} has width {} (must be 1..=128)", f.name, f.width),
                place: format!("field {i}"),
            });
        }
        let loc = if f.width <= 64 {
            nn += 1;
            Loc::N(nn - 1)
        } else {
            nw += 1;
            Loc::W(nw - 1)
        };
        fields.push(FieldInfo {
            name: f.name.clone(),
            loc,
            width: f.width,
        });
    }
    // A scratch slot for the standard metadata of non-v1model programs
    // (v1model primitives are rejected there, so it is never used).
    let scratch = nn;
    nn += 1;
    let mut cx = Cx {
        target: pkg.is_none(),
        target_prims: Vec::new(),
        a,
        fields,
        lists: Vec::new(),
        ctx: Ctx::Control,
        place: format!("program {}", a.program),
    };

    // Errors.
    if a.errors.len() < CORE_ERRORS.len() || a.errors.iter().zip(CORE_ERRORS).any(|(e, c)| e != c) {
        return Err(cx.invalid(format!(
            "the error list must start with P4's core errors {CORE_ERRORS:?}, found {:?}",
            a.errors.iter().take(7).collect::<Vec<_>>()
        )));
    }

    let headers = decls::headers(&mut cx)?;
    let stacks = decls::stacks(&mut cx)?;
    let v1 = decls::standard_metadata(&mut cx, pkg, scratch)?;
    let (externs, names) = decls::externs(&mut cx, pkg.is_none())?;
    let actions = blocks::actions(&mut cx)?;
    let parsers = blocks::parsers(&mut cx)?;
    let controls = blocks::controls(&mut cx, pkg, extra)?;
    let (ctables, rtables) = tables::tables(&mut cx)?;

    let non_header: Box<[Loc]> = a
        .fields
        .iter()
        .zip(cx.fields.iter())
        .filter(|(f, _)| !matches!(f.kind, netsparse_externs::artifact::FieldKind::Header(_)))
        .map(|(_, fi)| fi.loc)
        .collect();
    let n_narrow = nn as usize;
    let n_wide = nw as usize;
    let code = Code {
        n_narrow,
        n_wide,
        headers: headers.into_boxed_slice(),
        stacks: stacks.into_boxed_slice(),
        errors: a.errors.clone().into_boxed_slice(),
        parsers: parsers.into_boxed_slice(),
        controls: controls.into_boxed_slice(),
        actions: actions.into_boxed_slice(),
        tables: ctables.into_boxed_slice(),
        lists: cx.lists.into_boxed_slice(),
        v1,
        non_header,
        target_prims: std::mem::take(&mut cx.target_prims).into_boxed_slice(),
    };
    Ok(Loaded {
        fields: std::mem::take(&mut cx.fields),
        code,
        tables: rtables,
        externs,
        extern_names: names,
        v1: match pkg {
            Some(pkg) => V1Blocks {
                parser: pkg.parser.0,
                verify_checksum: pkg.verify_checksum.0,
                ingress: pkg.ingress.0,
                egress: pkg.egress.0,
                compute_checksum: pkg.compute_checksum.0,
                deparser: pkg.deparser.0,
            },
            None => V1Blocks {
                parser: 0,
                verify_checksum: 0,
                ingress: 0,
                egress: 0,
                compute_checksum: 0,
                deparser: 0,
            },
        },
    })
}
