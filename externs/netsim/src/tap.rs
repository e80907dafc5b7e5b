//! Link taps: middleware between a device's output and the link it leaves
//! on. The engine shows every frame a device emits to its [`LinkTap`]
//! before putting it on the link; a tap may watch it (capture, see
//! [`crate::Capture`]) or drop it (fault injection, see
//! [`crate::FaultInjector`]). Taps compose as tuples, in order: in
//! `(FaultInjector, Capture)` the capture sees the injector's verdict.
//!
//! The engine is generic over its tap, and the default [`NoTap`] compiles
//! to nothing, so the cluster simulator pays nothing for the hook.

use netsparse_externs::Time;

use crate::engine::DeviceId;

/// A (device, port) pair.
pub type Endpoint = (DeviceId, u32);

/// A frame as it leaves a device, shown to a [`LinkTap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TapFrame<'a> {
    /// Send order over the whole network, from 0.
    pub seq: u64,
    /// When the device emitted it (before any pipeline latency).
    pub at: Time,
    /// Sending device and port.
    pub from: Endpoint,
    /// Receiving device and port (`None`: the port has no link).
    pub to: Option<Endpoint>,
    /// The bytes.
    pub bytes: &'a [u8],
}

/// Middleware on the links: sees every emitted frame and may drop it.
pub trait LinkTap {
    /// Called once per frame a device emits, in send order. `dropped` says
    /// whether an earlier tap of a composition dropped it; the return value
    /// is the verdict passed on (true: the frame never reaches the link).
    fn on_frame(&mut self, frame: &TapFrame<'_>, dropped: bool) -> bool;
}

/// No tap: every frame goes to its link untouched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoTap;

impl LinkTap for NoTap {
    #[inline(always)]
    fn on_frame(&mut self, _frame: &TapFrame<'_>, dropped: bool) -> bool {
        dropped
    }
}

/// A tap that may be absent: `None` passes every frame on untouched (one
/// branch per frame), so a simulator can turn a tap on at run time.
impl<T: LinkTap> LinkTap for Option<T> {
    #[inline]
    fn on_frame(&mut self, frame: &TapFrame<'_>, dropped: bool) -> bool {
        match self {
            Some(t) => t.on_frame(frame, dropped),
            None => dropped,
        }
    }
}

impl<A: LinkTap, B: LinkTap> LinkTap for (A, B) {
    /// `A` first, then `B` with `A`'s verdict.
    #[inline]
    fn on_frame(&mut self, frame: &TapFrame<'_>, dropped: bool) -> bool {
        let dropped = self.0.on_frame(frame, dropped);
        self.1.on_frame(frame, dropped)
    }
}

impl<T: LinkTap + ?Sized> LinkTap for Box<T> {
    #[inline]
    fn on_frame(&mut self, frame: &TapFrame<'_>, dropped: bool) -> bool {
        (**self).on_frame(frame, dropped)
    }
}
