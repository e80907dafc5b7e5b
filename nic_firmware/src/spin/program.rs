//! A compiled `SpinNic` program loaded into the engine: its three handlers
//! as blocks of one [`Program`], and every slot the firmware writes before
//! and reads after a handler, resolved once at load time.

use netsparse_engine::program::{BlockId, Program, Slot};
use netsparse_engine::LoadError;
use netsparse_externs::artifact::{Arch, Artifact, Package};

/// The slots of the handlers' shared arguments.
#[derive(Clone, Debug)]
pub(crate) struct SpinSlots {
    pub src: Slot,
    pub msg_id: Slot,
    pub match_bits: Slot,
    pub length: Slot,
    pub user: Slot,
    pub offset: Slot,
    pub pkt_len: Slot,
    pub seq: Slot,
    pub rc: Slot,
    pub node: Slot,
    pub hpu: Slot,
    pub dropped_bytes: Slot,
    pub flow_control: Slot,
    pub timed_out: Slot,
    /// The per-message state's leaves.
    pub state: Vec<Slot>,
}

/// The loaded program.
#[derive(Debug)]
pub(crate) struct SpinProgram {
    pub program: Program,
    pub header: BlockId,
    pub payload: BlockId,
    pub completion: BlockId,
    pub slots: SpinSlots,
}

impl SpinProgram {
    /// Load a `SpinNic` artifact.
    pub fn load(a: &Artifact, seed: u64) -> Result<SpinProgram, LoadError> {
        let place = || format!("program {}", a.program);
        let spin = match (&a.arch, &a.package) {
            (Arch::SpinNic, Package::SpinNic(s)) => s,
            (arch, _) => {
                return Err(LoadError::Unsupported {
                    what: format!(
                        "architecture {arch:?}: the sPIN NIC runs SpinNic programs (compile one with `SpinNic(header_handler, payload_handler, completion_handler) main;` from <spin.p4>)"
                    ),
                    place: place(),
                })
            }
        };
        let body = |c: netsparse_externs::artifact::ControlId| {
            a.controls
                .get(c.index())
                .map(|c| (c.name.as_str(), c.body.as_slice()))
                .ok_or_else(|| LoadError::Invalid {
                    detail: format!("handler control {} out of range", c.0),
                    place: place(),
                })
        };
        let blocks = [
            body(spin.header_handler)?,
            body(spin.payload_handler)?,
            body(spin.completion_handler)?,
        ];
        let program = Program::load(a, &blocks, seed)?;
        let s = |f| program.slot(f);
        let (m, k, d) = (&spin.msg, &spin.pkt, &spin.md);
        let slots = SpinSlots {
            src: s(m.src)?,
            msg_id: s(m.msg_id)?,
            match_bits: s(m.match_bits)?,
            length: s(m.length)?,
            user: s(m.user)?,
            offset: s(k.offset)?,
            pkt_len: s(k.length)?,
            seq: s(k.seq)?,
            rc: s(d.rc)?,
            node: s(d.node)?,
            hpu: s(d.hpu)?,
            dropped_bytes: s(d.dropped_bytes)?,
            flow_control: s(d.flow_control)?,
            timed_out: s(d.timed_out)?,
            state: spin
                .state
                .iter()
                .map(|f| program.slot(*f))
                .collect::<Result<_, _>>()?,
        };
        Ok(SpinProgram {
            header: program.block(0),
            payload: program.block(1),
            completion: program.block(2),
            program,
            slots,
        })
    }
}
