//! [`Engine`]: a loaded program ([`Code`], immutable) and its run-time
//! state ([`Runtime`]: entries, externs), with the pipe operations every
//! architecture is built from — parse, run a control, deparse — over one
//! reusable [`PacketState`].
//!
//! The v1model switch strings these together the way BMv2's simple_switch
//! does; the NetSparse multi-pipe switch strings the same operations
//! together per pipe (ingress pipes → crossbar → middle pipes → crossbar →
//! egress pipes); the NIC runs blocks through [`crate::program::Program`].
//!
//! Each operation runs the program's native code when it has some (see
//! [`crate::native`]) and the interpreter otherwise; the results are the
//! same.

use std::sync::Arc;

use crate::code::Code;
use crate::exec::{Exec, ParseEnd};
use crate::native::abi::{FLOW_NEXT, FLOW_REJECT_BASE};
use crate::native::Native;
use crate::runtime::Runtime;
use crate::state::PacketState;

/// A loaded program and its run-time state.
#[derive(Debug)]
pub struct Engine {
    /// The executable program.
    pub code: Arc<Code>,
    /// Entries, externs, generator, scratch.
    pub rt: Runtime,
    /// Its native code, if the engine mode gave it some.
    pub(crate) native: Option<Arc<Native>>,
}

impl Engine {
    /// An engine for `code` with runtime `rt`, with native code if the
    /// process's [`crate::native::mode`] asks for it.
    pub fn new(code: Code, rt: Runtime) -> Engine {
        let code = Arc::new(code);
        let native = crate::native::attach(&code);
        Engine { code, rt, native }
    }

    /// The program's native code, if it runs natively.
    pub fn native(&self) -> Option<&Native> {
        self.native.as_deref()
    }

    /// A fresh packet state sized for this program.
    pub fn new_state(&self) -> PacketState {
        self.code.new_state()
    }

    /// Run parser `id` over `st.frame`; leaves the cursor and the payload
    /// offset at the first unparsed byte.
    pub fn parse(&mut self, st: &mut PacketState, id: u32) -> ParseEnd {
        st.cursor = 0;
        let native = pick(&self.native, &self.code, self.rt.trace, st);
        let end = match native.and_then(|n| Some((n, n.parser(id)?))) {
            Some((n, f)) => match n.call(f, &mut self.rt, st, None, None) {
                FLOW_NEXT => ParseEnd::Accept,
                e if e >= FLOW_REJECT_BASE => ParseEnd::Reject(Some(e - FLOW_REJECT_BASE)),
                _ => ParseEnd::Reject(None),
            },
            None => Exec {
                code: &self.code,
                rt: &mut self.rt,
                emit: None,
                hook: None,
            }
            .parser(st, id),
        };
        st.payload_off = (st.cursor / 8).min(st.frame.len());
        end
    }

    /// Run control `id`.
    pub fn control(&mut self, st: &mut PacketState, id: u32) {
        if !self.rt.trace && self.code.controls[id as usize].body.is_empty() {
            return;
        }
        let native = pick(&self.native, &self.code, self.rt.trace, st);
        if let Some((n, f)) = native.and_then(|n| Some((n, n.control(id)?))) {
            n.call(f, &mut self.rt, st, None, None);
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
        let native = pick(&self.native, &self.code, self.rt.trace, st);
        match native.and_then(|n| Some((n, n.control(id)?))) {
            Some((n, f)) => {
                n.call(f, &mut self.rt, st, Some(out), None);
            }
            None => Exec {
                code: &self.code,
                rt: &mut self.rt,
                emit: Some(out),
                hook: None,
            }
            .control(st, id),
        }
        let off = st.payload_off.min(st.frame.len());
        out.extend_from_slice(&st.frame[off..]);
    }
}

/// The native code to run on `st` now, if any: tracing off, the code the
/// library was generated from, a state sized for it. (A free function so
/// that callers can borrow the runtime beside it.)
#[inline]
pub(crate) fn pick<'n>(
    native: &'n Option<Arc<Native>>,
    code: &Arc<Code>,
    trace: bool,
    st: &PacketState,
) -> Option<&'n Native> {
    match native {
        Some(n) if !trace && n.fits(code, st) => Some(n),
        _ => None,
    }
}
