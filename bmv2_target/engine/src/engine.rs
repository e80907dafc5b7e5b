//! [`Engine`]: a loaded program ([`Code`], immutable) and its run-time
//! state ([`Runtime`]: entries, externs), with the pipe operations every
//! architecture is built from — parse, run a control, deparse — over one
//! reusable [`PacketState`].
//!
//! The v1model switch strings these together the way BMv2's simple_switch
//! does; the NetSparse multi-pipe switch strings the same operations
//! together per pipe (ingress pipes → crossbar → middle pipes → crossbar →
//! egress pipes); the NIC runs blocks through [`crate::program::Program`].

use crate::code::Code;
use crate::exec::{Exec, ParseEnd};
use crate::runtime::Runtime;
use crate::state::PacketState;

/// A loaded program and its run-time state.
#[derive(Debug)]
pub struct Engine {
    /// The executable program.
    pub code: Code,
    /// Entries, externs, generator, scratch.
    pub rt: Runtime,
}

impl Engine {
    /// A fresh packet state sized for this program.
    pub fn new_state(&self) -> PacketState {
        self.code.new_state()
    }

    /// Run parser `id` over `st.frame`; leaves the cursor and the payload
    /// offset at the first unparsed byte.
    pub fn parse(&mut self, st: &mut PacketState, id: u32) -> ParseEnd {
        st.cursor = 0;
        let end = Exec {
            code: &self.code,
            rt: &mut self.rt,
            emit: None,
            hook: None,
        }
        .parser(st, id);
        st.payload_off = (st.cursor / 8).min(st.frame.len());
        end
    }

    /// Run control `id`.
    pub fn control(&mut self, st: &mut PacketState, id: u32) {
        if !self.rt.trace && self.code.controls[id as usize].body.is_empty() {
            return;
        }
        Exec {
            code: &self.code,
            rt: &mut self.rt,
            emit: None,
            hook: None,
        }
        .control(st, id);
    }

    /// Run deparser control `id`, appending the emitted headers and then the
    /// unparsed payload to `out`.
    pub fn deparse(&mut self, st: &mut PacketState, id: u32, out: &mut Vec<u8>) {
        Exec {
            code: &self.code,
            rt: &mut self.rt,
            emit: Some(out),
            hook: None,
        }
        .control(st, id);
        let off = st.payload_off.min(st.frame.len());
        out.extend_from_slice(&st.frame[off..]);
    }
}
