//! Fault injection as a link tap: [`FaultInjector`] drops the frames a
//! user-supplied rule picks (by send sequence number and bytes), and counts
//! them. Dropped frames never reach their link: they take no link time and
//! appear in no link counter, as if lost at the sender's port.

use std::fmt;

use crate::tap::{LinkTap, TapFrame};

/// The rule: `(send sequence number, bytes) -> drop?`.
type Rule = Box<dyn FnMut(u64, &[u8]) -> bool>;

/// Drops the frames its rule picks; with no rule, drops nothing.
#[derive(Default)]
pub struct FaultInjector {
    rule: Option<Rule>,
    dropped: u64,
}

impl fmt::Debug for FaultInjector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultInjector")
            .field("rule", &self.rule.is_some())
            .field("dropped", &self.dropped)
            .finish()
    }
}

impl FaultInjector {
    /// An injector that drops nothing until [`FaultInjector::drop_when`].
    pub fn new() -> FaultInjector {
        FaultInjector::default()
    }

    /// Drop every later frame for which `rule(send sequence number, bytes)`
    /// is true (replacing any earlier rule).
    pub fn drop_when(&mut self, rule: impl FnMut(u64, &[u8]) -> bool + 'static) {
        self.rule = Some(Box::new(rule));
    }

    /// Stop dropping frames.
    pub fn clear(&mut self) {
        self.rule = None;
    }

    /// Frames dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl LinkTap for FaultInjector {
    fn on_frame(&mut self, frame: &TapFrame<'_>, dropped: bool) -> bool {
        if dropped {
            return true;
        }
        let drop = self
            .rule
            .as_mut()
            .is_some_and(|rule| rule(frame.seq, frame.bytes));
        self.dropped += u64::from(drop);
        drop
    }
}
