//! Running artifact statement lists for other targets (the NetSparse NIC,
//! the middle pipes of the NetSparse switch): the engine's hook for
//! target-specific primitives.
//!
//! A [`Program`] is an artifact loaded by the same engine as the v1model
//! switch — fields, headers, actions, tables (with the control plane),
//! registers/counters/meters — plus *blocks*: statement lists the target
//! names at load time (e.g. a NIC path's per-PR part), compiled like
//! controls. Primitives the engine does not implement itself (the Property
//! Cache's `CacheLookup`/`CacheInsert`, the RIG externs) are compiled with
//! their operands and handed, evaluated, to the target's [`TargetPrims`]
//! implementation when they run. The target reads and writes slots through
//! [`Slot`]s it resolved once, at load time.

use netsparse_externs::artifact::{Artifact, FieldId, HeaderId, Stmt};
use netsparse_externs::Time;

use crate::compile::{load_generic, ExtraBlock};
use crate::control::ControlPlane;
use crate::engine::pick;
use crate::error::LoadError;
use crate::exec::{Exec, Flow};
use crate::native::abi::FLOW_EXIT;
use crate::runtime::{EngineStats, Runtime};
use crate::state::Loc;
pub use crate::target::{NoTarget, TargetCall, TargetPrims, TargetResult};
use crate::{Engine, PacketState};

/// A statement list of a [`Program`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockId(u32);

/// A field slot resolved for fast access from the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    loc: Loc,
    width: u16,
}

impl Slot {
    /// Width in bits.
    pub fn width(self) -> u16 {
        self.width
    }

    /// The index of a slot of at most 64 bits in [`PacketState`]'s `u64`
    /// array, for targets that access narrow slots directly.
    pub fn narrow_index(self) -> Option<usize> {
        match self.loc {
            Loc::N(i) => Some(i as usize),
            Loc::W(_) => None,
        }
    }
}

impl PacketState {
    /// Read a slot.
    #[inline]
    pub fn get(&self, s: Slot) -> u128 {
        self.load(s.loc)
    }

    /// Write a slot (masked to its width).
    #[inline]
    pub fn set(&mut self, s: Slot, v: u128) {
        self.store(s.loc, s.width, v);
    }
}

/// How a block run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// It ran to its end (or `return`).
    Completed,
    /// `exit`, or a target primitive returned [`TargetResult::Exit`].
    Exited,
}

/// An artifact loaded for a target other than v1model.
#[derive(Debug)]
pub struct Program {
    engine: Engine,
    /// Every artifact field's slot, by field id.
    slots: Box<[Slot]>,
    first_block: u32,
    blocks: u32,
}

impl Program {
    /// Load `artifact` (any architecture) with `blocks` — (name, statements)
    /// — compiled as [`BlockId`]s 0, 1, ... in order. Target primitives are
    /// allowed anywhere; v1model-only primitives that need standard metadata
    /// (`mark_to_drop`, `verify_checksum`) are rejected.
    pub fn load(
        artifact: &Artifact,
        blocks: &[(&str, &[Stmt])],
        seed: u64,
    ) -> Result<Program, LoadError> {
        let extra: Vec<ExtraBlock<'_>> = blocks
            .iter()
            .map(|(name, body)| ExtraBlock { name, body })
            .collect();
        let loaded = load_generic(artifact, &extra)?;
        let first_block = u32::try_from(artifact.controls.len()).unwrap_or(u32::MAX);
        let slots = loaded
            .fields
            .iter()
            .map(|f| Slot {
                loc: f.loc,
                width: f.width,
            })
            .collect();
        let engine = Engine::new(
            loaded.code,
            Runtime::new(loaded.tables, loaded.externs, loaded.extern_names, seed),
        );
        Ok(Program {
            engine,
            slots,
            first_block,
            blocks: blocks.len() as u32,
        })
    }

    /// Block `i` of the list given to [`Program::load`] (`i` is clamped to the list).
    pub fn block(&self, i: usize) -> BlockId {
        let i = (i as u32).min(self.blocks.saturating_sub(1));
        BlockId(self.first_block + i)
    }

    /// The slot of artifact field `f`.
    pub fn slot(&self, f: FieldId) -> Result<Slot, LoadError> {
        self.slots
            .get(f.index())
            .copied()
            .ok_or_else(|| LoadError::Invalid {
                detail: format!("field id {} out of range", f.0),
                place: "target slots".into(),
            })
    }

    /// A packet state sized for this program (all slots zero).
    pub fn new_state(&self) -> PacketState {
        self.engine.new_state()
    }

    /// Mark header `h` of the artifact valid or invalid in `st` (e.g. the
    /// PR header while a PR is processed). Out-of-range ids do nothing.
    #[inline]
    pub fn set_header_valid(&self, st: &mut PacketState, h: HeaderId, valid: bool) {
        if h.index() < self.engine.code.headers.len() {
            st.valid.set(h.index(), valid);
        }
    }

    /// Zero every slot and header-validity bit of `st`.
    #[inline]
    pub fn reset(&self, st: &mut PacketState) {
        st.reset();
    }

    /// Run block `b` over `st`, calling `target` for target primitives.
    #[inline]
    pub fn run(
        &mut self,
        st: &mut PacketState,
        b: BlockId,
        target: &mut dyn TargetPrims,
    ) -> RunEnd {
        let e = &mut self.engine;
        if let Some(f) =
            pick(&e.native, &e.code, e.rt.trace, st).and_then(|n| Some((n, n.control(b.0)?)))
        {
            let (n, f) = f;
            return if n.call(f, &mut e.rt, st, None, Some(target)) == FLOW_EXIT {
                RunEnd::Exited
            } else {
                RunEnd::Completed
            };
        }
        let code = &self.engine.code;
        let Some(c) = code.controls.get(b.0 as usize) else {
            return RunEnd::Completed;
        };
        if self.engine.rt.trace {
            tracing::info!("block {}", c.name);
        }
        let flow = Exec {
            code,
            rt: &mut self.engine.rt,
            emit: None,
            hook: Some(target),
        }
        .block(st, &c.body);
        if flow == Flow::Exit {
            RunEnd::Exited
        } else {
            RunEnd::Completed
        }
    }

    /// Statements run since the last [`Program::reset_ops`] (each block
    /// entered counts its statements, loop bodies once per iteration).
    pub fn ops(&self) -> u64 {
        self.engine.rt.ops
    }

    /// Reset the operation count and set the count above which a run stops
    /// as `exit` would (`u64::MAX`: never).
    pub fn reset_ops(&mut self, limit: u64) {
        self.engine.rt.ops = 0;
        self.engine.rt.op_limit = limit;
    }

    /// The time meters see.
    pub fn set_now(&mut self, now: Time) {
        self.engine.rt.now = now;
    }

    /// Log every statement (tracing at info level).
    pub fn set_trace(&mut self, on: bool) {
        self.engine.rt.trace = on;
    }

    /// Engine counters.
    pub fn stats(&self) -> EngineStats {
        self.engine.rt.stats.clone()
    }
}

/// The entry loaders ([`crate::control::commands`],
/// [`crate::control::runtime_json`]) work on a [`Program`] as on a switch
/// (tables only: a program has no multicast or mirroring).
impl ControlPlane for Program {
    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }
}
