//! Frame capture as a link tap: [`Capture`] records every frame devices
//! emit (time, endpoints, bytes, and whether an earlier tap dropped it), in
//! send order, for pcap goldens and for tests that look at the wire. The
//! bytes of all frames share one growing buffer, so recording a frame does
//! not allocate one buffer per frame. Writing the records to a pcap file is
//! left to the caller.

use std::ops::Range;

use netsparse_externs::Time;

use crate::tap::{Endpoint, LinkTap, TapFrame};

/// One recorded frame; its bytes are in the capture's shared buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    seq: u64,
    at: Time,
    from: Endpoint,
    to: Option<Endpoint>,
    range: Range<usize>,
    dropped: bool,
}

/// A frame as a [`Capture`] recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Captured<'a> {
    /// Send order over the whole network, from 0.
    pub seq: u64,
    /// When it left its device.
    pub at: Time,
    /// Sending device and port.
    pub from: Endpoint,
    /// Receiving device and port (`None`: the port has no link).
    pub to: Option<Endpoint>,
    /// The bytes.
    pub bytes: &'a [u8],
    /// Dropped by a tap before this one (e.g. a [`crate::FaultInjector`]).
    pub dropped: bool,
}

/// Records frames while enabled (it starts enabled).
#[derive(Clone, Debug)]
pub struct Capture {
    enabled: bool,
    records: Vec<Record>,
    bytes: Vec<u8>,
}

impl Default for Capture {
    fn default() -> Capture {
        Capture::new()
    }
}

impl Capture {
    /// An empty capture that records from now on.
    pub fn new() -> Capture {
        Capture {
            enabled: true,
            records: Vec::new(),
            bytes: Vec::new(),
        }
    }

    /// Record frames from now on (`true`) or stop recording (`false`).
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
    }

    /// Whether frames are being recorded.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Frames recorded so far.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no frame was recorded.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The recorded frames, in send order.
    pub fn frames(&self) -> impl ExactSizeIterator<Item = Captured<'_>> + '_ {
        self.records.iter().map(|r| Captured {
            seq: r.seq,
            at: r.at,
            from: r.from,
            to: r.to,
            bytes: &self.bytes[r.range.clone()],
            dropped: r.dropped,
        })
    }

    /// Forget every recorded frame (keeping the buffers' capacity).
    pub fn clear(&mut self) {
        self.records.clear();
        self.bytes.clear();
    }
}

impl LinkTap for Capture {
    fn on_frame(&mut self, frame: &TapFrame<'_>, dropped: bool) -> bool {
        if self.enabled {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(frame.bytes);
            self.records.push(Record {
                seq: frame.seq,
                at: frame.at,
                from: frame.from,
                to: frame.to,
                range: start..self.bytes.len(),
                dropped,
            });
        }
        dropped
    }
}
