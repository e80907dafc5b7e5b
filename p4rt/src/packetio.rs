//! PacketIn and PacketOut: the CPU port between a running datapath and the
//! P4Runtime controller, as simple_switch_grpc's `--cpu-port`.
//!
//! [`CpuPort`] wraps any [`Datapath`]: frames the program sends to the CPU
//! port leave through a bounded channel to the server instead of a wire
//! (counted and dropped when the channel is full), and frames a controller
//! sends are queued and processed as arrivals on the CPU port at the next
//! timer call. The program itself adds the `@controller_header("packet_in")`
//! header in its deparser and parses `@controller_header("packet_out")`
//! when `ingress_port` is the CPU port; [`encode_packet_in`] and
//! [`decode_packet_out`] turn those headers into P4Runtime metadata and
//! back, by the header layout the compiler recorded. Only controller
//! traffic allocates (one buffer per CPU frame); the packet path of every
//! other frame is untouched but for one port comparison per emitted frame.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use netsparse_engine::control::commands::LineError;
use netsparse_engine::{ControlPlane, ControlPlaneError, Engine, Replica};
use netsparse_externs::artifact::{Arch, Artifact};
use netsparse_externs::datapath::{Datapath, Outputs};
use netsparse_externs::time::Time;
use serde::Serialize;

use crate::p4info::ControllerHeader;
use crate::proto::v1;
use crate::target::Target;

/// PacketOut frames waiting for the datapath; more are refused.
pub const MAX_PENDING_PACKET_OUT: usize = 4096;
/// Frames to the controller waiting for the server; more are dropped.
pub const PACKET_IN_QUEUE: usize = 4096;

/// Counters of the CPU port, shared by the datapath and the server.
#[derive(Debug, Default)]
pub struct CpuPortCounters {
    /// Frames the program sent to the CPU port.
    pub to_cpu: AtomicU64,
    /// PacketIn messages delivered to the primary controller.
    pub packet_in: AtomicU64,
    /// Frames to the CPU dropped: the server's queue was full.
    pub packet_in_queue_full: AtomicU64,
    /// Frames to the CPU dropped: no primary controller was connected.
    pub packet_in_no_controller: AtomicU64,
    /// Frames to the CPU dropped: shorter than the `packet_in` header.
    pub packet_in_too_short: AtomicU64,
    /// Frames to the CPU dropped: the primary's stream was full.
    pub packet_in_stream_full: AtomicU64,
    /// PacketOut messages injected at the CPU port.
    pub packet_out: AtomicU64,
    /// PacketOut messages refused (bad metadata, not primary, queue full).
    pub packet_out_refused: AtomicU64,
}

/// A snapshot of [`CpuPortCounters`] (for `--stats-json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CpuPortStats {
    /// The CPU port number.
    pub port: u32,
    /// See [`CpuPortCounters::to_cpu`].
    pub to_cpu: u64,
    /// See [`CpuPortCounters::packet_in`].
    pub packet_in: u64,
    /// See [`CpuPortCounters::packet_in_queue_full`].
    pub packet_in_queue_full: u64,
    /// See [`CpuPortCounters::packet_in_no_controller`].
    pub packet_in_no_controller: u64,
    /// See [`CpuPortCounters::packet_in_too_short`].
    pub packet_in_too_short: u64,
    /// See [`CpuPortCounters::packet_in_stream_full`].
    pub packet_in_stream_full: u64,
    /// See [`CpuPortCounters::packet_out`].
    pub packet_out: u64,
    /// See [`CpuPortCounters::packet_out_refused`].
    pub packet_out_refused: u64,
}

impl CpuPortCounters {
    fn add(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// A snapshot.
    pub fn snapshot(&self, port: u32) -> CpuPortStats {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CpuPortStats {
            port,
            to_cpu: g(&self.to_cpu),
            packet_in: g(&self.packet_in),
            packet_in_queue_full: g(&self.packet_in_queue_full),
            packet_in_no_controller: g(&self.packet_in_no_controller),
            packet_in_too_short: g(&self.packet_in_too_short),
            packet_in_stream_full: g(&self.packet_in_stream_full),
            packet_out: g(&self.packet_out),
            packet_out_refused: g(&self.packet_out_refused),
        }
    }
}

/// The server's end of a CPU port: frames for the controller, and the
/// counters.
pub struct PacketInQueue {
    /// Frames the program sent to the CPU port, in order.
    pub rx: tokio::sync::mpsc::Receiver<Vec<u8>>,
    /// Shared counters.
    pub counters: Arc<CpuPortCounters>,
}

/// A datapath with a CPU port (see the module documentation).
pub struct CpuPort<D> {
    /// The wrapped datapath.
    pub inner: D,
    port: u32,
    pending: VecDeque<Vec<u8>>,
    to_server: tokio::sync::mpsc::Sender<Vec<u8>>,
    counters: Arc<CpuPortCounters>,
    now: Time,
}

impl<D> CpuPort<D> {
    /// Wrap `inner` with CPU port `port`; the other end goes to the server.
    pub fn new(inner: D, port: u32) -> (CpuPort<D>, PacketInQueue) {
        let (tx, rx) = tokio::sync::mpsc::channel(PACKET_IN_QUEUE);
        let counters = Arc::new(CpuPortCounters::default());
        (
            CpuPort {
                inner,
                port,
                pending: VecDeque::new(),
                to_server: tx,
                counters: Arc::clone(&counters),
                now: Time::ZERO,
            },
            PacketInQueue { rx, counters },
        )
    }

    /// The CPU port number.
    pub fn port(&self) -> u32 {
        self.port
    }

    /// Its counters.
    pub fn stats(&self) -> CpuPortStats {
        self.counters.snapshot(self.port)
    }

    /// Queue a frame (packet_out header included) as an arrival on the CPU
    /// port; refused when [`MAX_PENDING_PACKET_OUT`] frames wait.
    pub fn inject(&mut self, frame: Vec<u8>) -> Result<(), String> {
        if self.pending.len() >= MAX_PENDING_PACKET_OUT {
            CpuPortCounters::add(&self.counters.packet_out_refused);
            return Err(format!(
                "{MAX_PENDING_PACKET_OUT} PacketOut frames are already waiting for the datapath"
            ));
        }
        self.pending.push_back(frame);
        Ok(())
    }

    fn divert(&mut self, out: &mut Outputs, from: usize) {
        let (tx, c) = (&self.to_server, &self.counters);
        out.divert(from, self.port, |frame| {
            CpuPortCounters::add(&c.to_cpu);
            if tx.try_send(frame.to_vec()).is_err() {
                CpuPortCounters::add(&c.packet_in_queue_full);
            }
        });
    }
}

impl<D: Datapath> Datapath for CpuPort<D> {
    fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.now = self.now.max(now);
        let from = out.len();
        self.inner.on_packet(now, port, frame, out);
        self.divert(out, from);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outputs) {
        self.now = self.now.max(now);
        let from = out.len();
        while let Some(frame) = self.pending.pop_front() {
            CpuPortCounters::add(&self.counters.packet_out);
            self.inner.on_packet(now, self.port, &frame, out);
        }
        if self.inner.next_deadline().is_some_and(|d| d <= now) {
            self.inner.on_timer(now, out);
        }
        self.divert(out, from);
    }

    fn next_deadline(&self) -> Option<Time> {
        let inner = self.inner.next_deadline();
        if self.pending.is_empty() {
            return inner;
        }
        let soon = self.now + Time::from_ps(1);
        Some(inner.map_or(soon, |d| d.min(soon)))
    }
}

impl<T: ControlPlane> ControlPlane for CpuPort<T> {
    fn engine(&self) -> &Engine {
        self.inner.engine()
    }
    fn engine_mut(&mut self) -> &mut Engine {
        self.inner.engine_mut()
    }
    fn mc_group_set(&mut self, group: u16, replicas: &[Replica]) -> Result<(), ControlPlaneError> {
        self.inner.mc_group_set(group, replicas)
    }
    fn mirroring_set(
        &mut self,
        session: u32,
        replicas: &[Replica],
    ) -> Result<(), ControlPlaneError> {
        self.inner.mirroring_set(session, replicas)
    }
    fn command(&mut self, cmd: &str, args: &[&str]) -> Option<Result<bool, LineError>> {
        self.inner.command(cmd, args)
    }
    fn mc_group_remove(&mut self, group: u16) -> Result<(), ControlPlaneError> {
        self.inner.mc_group_remove(group)
    }
    fn mc_groups(&self) -> Vec<(u16, Vec<Replica>)> {
        self.inner.mc_groups()
    }
    fn mirroring_remove(&mut self, session: u32) -> Result<(), ControlPlaneError> {
        self.inner.mirroring_remove(session)
    }
    fn mirroring_sessions(&self) -> Vec<(u32, Vec<Replica>)> {
        self.inner.mirroring_sessions()
    }
}

impl<T: Target> Target for CpuPort<T> {
    fn arch(&self) -> Arch {
        self.inner.arch()
    }
    fn load(&mut self, artifact: &Artifact) -> Result<(), String> {
        self.pending.clear();
        self.inner.load(artifact)
    }
    fn stats_json(&self) -> serde_json::Value {
        self.inner.stats_json()
    }
    fn stats_key(&self) -> &'static str {
        self.inner.stats_key()
    }
    fn cpu_port_json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.stats()).ok()
    }
    fn packet_out(&mut self, frame: Vec<u8>) -> Result<(), String> {
        self.inject(frame)
    }
}

/// Read `width` bits at bit offset `off` of `bytes` (big-endian, as on the
/// wire) as a canonical P4Runtime byte string: big-endian, no leading zero
/// bytes, at least one byte.
fn read_field(bytes: &[u8], off: usize, width: usize) -> Vec<u8> {
    let mut v = vec![0u8; width.div_ceil(8)];
    let n = v.len();
    for i in 0..width {
        let src = off + i;
        let bit = (bytes[src / 8] >> (7 - src % 8)) & 1;
        // Bit i of the field (MSB first) is bit (width - 1 - i) of the value.
        let k = width - 1 - i;
        v[n - 1 - k / 8] |= bit << (k % 8);
    }
    let lead = v.iter().take_while(|b| **b == 0).count().min(n - 1);
    v.drain(..lead);
    v
}

/// Write the value `val` (big-endian bytes) into `width` bits at `off`.
/// `Err` if it does not fit.
fn write_field(bytes: &mut [u8], off: usize, width: usize, val: &[u8]) -> Result<(), String> {
    let significant = val
        .iter()
        .position(|b| *b != 0)
        .map_or(0, |p| (val.len() - p) * 8 - val[p].leading_zeros() as usize);
    if significant > width {
        return Err(format!(
            "a {significant}-bit value does not fit {width} bits"
        ));
    }
    for k in 0..width {
        // Bit k of the value (LSB = 0).
        let byte = val.len().checked_sub(1 + k / 8).map_or(0, |i| val[i]);
        let bit = (byte >> (k % 8)) & 1;
        let dst = off + (width - 1 - k);
        bytes[dst / 8] |= bit << (7 - dst % 8);
    }
    Ok(())
}

/// A frame the program sent to the CPU port as a PacketIn: the leading
/// `packet_in` header becomes metadata (`ids[i]` for field `i`), the rest
/// is the payload. `None` if the frame is shorter than the header.
pub fn encode_packet_in(h: &ControllerHeader, ids: &[u32], frame: &[u8]) -> Option<v1::PacketIn> {
    let len = h.byte_len();
    if frame.len() < len {
        return None;
    }
    let mut off = 0usize;
    let mut metadata = Vec::with_capacity(h.fields.len());
    for (i, f) in h.fields.iter().enumerate() {
        metadata.push(v1::PacketMetadata {
            metadata_id: ids.get(i).copied().unwrap_or(i as u32 + 1),
            value: read_field(frame, off, usize::from(f.width)),
        });
        off += usize::from(f.width);
    }
    Some(v1::PacketIn {
        payload: frame[len..].to_vec(),
        metadata,
    })
}

/// A PacketOut as the frame to inject: the `packet_out` header built from
/// its metadata (by id; a field without metadata is 0), then the payload.
/// `Err` names an unknown id, a repeated one, or a value too wide.
pub fn decode_packet_out(
    h: &ControllerHeader,
    ids: &[u32],
    msg: &v1::PacketOut,
) -> Result<Vec<u8>, String> {
    let len = h.byte_len();
    let mut frame = vec![0u8; len + msg.payload.len()];
    let mut offs = Vec::with_capacity(h.fields.len());
    let mut off = 0usize;
    for f in &h.fields {
        offs.push(off);
        off += usize::from(f.width);
    }
    let mut seen = vec![false; h.fields.len()];
    for m in &msg.metadata {
        let Some(i) = (0..h.fields.len()).find(|&i| ids.get(i).copied() == Some(m.metadata_id))
        else {
            return Err(format!(
                "metadata id {} is not a field of controller header `{}`",
                m.metadata_id, h.name
            ));
        };
        if std::mem::replace(&mut seen[i], true) {
            return Err(format!(
                "metadata id {} ({}) is given twice",
                m.metadata_id, h.fields[i].name
            ));
        }
        let f = &h.fields[i];
        write_field(&mut frame[..len], offs[i], usize::from(f.width), &m.value)
            .map_err(|e| format!("metadata {} ({}): {e}", m.metadata_id, f.name))?;
    }
    frame[len..].copy_from_slice(&msg.payload);
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p4info::ControllerField;

    fn header(widths: &[(&str, u16)]) -> ControllerHeader {
        ControllerHeader {
            name: "packet_in".into(),
            fields: widths
                .iter()
                .map(|(n, w)| ControllerField {
                    name: (*n).into(),
                    width: *w,
                })
                .collect(),
            bit_width: widths.iter().map(|(_, w)| u32::from(*w)).sum(),
        }
    }

    #[test]
    fn packet_in_metadata_is_canonical_and_payload_follows() {
        // ingress_port: bit<9> = 0x103, pad: bit<7> = 0, then a 2-byte payload.
        let h = header(&[("ingress_port", 9), ("_pad", 7)]);
        let frame = [0x81, 0x80, 0xaa, 0xbb];
        let p = encode_packet_in(&h, &[1, 2], &frame).unwrap();
        assert_eq!(p.payload, vec![0xaa, 0xbb]);
        assert_eq!(p.metadata[0].metadata_id, 1);
        assert_eq!(p.metadata[0].value, vec![0x01, 0x03]);
        assert_eq!(p.metadata[1].value, vec![0x00]);
        assert!(encode_packet_in(&h, &[1, 2], &[0x81]).is_none());
    }

    #[test]
    fn packet_out_round_trips_and_refuses_bad_metadata() {
        let h = header(&[("egress_port", 9), ("flag", 1), ("_pad", 6)]);
        let ids = [7, 8, 9];
        let msg = v1::PacketOut {
            payload: vec![1, 2, 3],
            metadata: vec![
                v1::PacketMetadata {
                    metadata_id: 7,
                    value: vec![0x01, 0x03],
                },
                v1::PacketMetadata {
                    metadata_id: 8,
                    value: vec![0, 1],
                },
            ],
        };
        let f = decode_packet_out(&h, &ids, &msg).unwrap();
        assert_eq!(f, vec![0x81, 0xc0, 1, 2, 3]);
        let back = encode_packet_in(&h, &ids, &f).unwrap();
        assert_eq!(back.metadata[0].value, vec![0x01, 0x03]);
        assert_eq!(back.metadata[1].value, vec![0x01]);
        assert_eq!(back.payload, vec![1, 2, 3]);

        let mut wide = msg.clone();
        wide.metadata[0].value = vec![0x02, 0x00];
        let e = decode_packet_out(&h, &ids, &wide).unwrap_err();
        assert!(e.contains("egress_port") && e.contains("10-bit"), "{e}");
        let mut unknown = msg.clone();
        unknown.metadata[1].metadata_id = 42;
        assert!(decode_packet_out(&h, &ids, &unknown)
            .unwrap_err()
            .contains("id 42"));
        let mut twice = msg;
        twice.metadata[1].metadata_id = 7;
        assert!(decode_packet_out(&h, &ids, &twice)
            .unwrap_err()
            .contains("twice"));
    }

    /// A datapath that echoes every frame to port 255 and to port 1.
    struct Echo;
    impl Datapath for Echo {
        fn on_packet(&mut self, _: Time, port: u32, frame: &[u8], out: &mut Outputs) {
            out.push(255, frame);
            out.push(1, &[port as u8]);
        }
        fn on_timer(&mut self, _: Time, _: &mut Outputs) {}
        fn next_deadline(&self) -> Option<Time> {
            None
        }
    }

    #[test]
    fn cpu_port_diverts_to_the_server_and_injects_on_timer() {
        let (mut cp, mut q) = CpuPort::new(Echo, 255);
        let mut out = Outputs::new();
        cp.on_packet(Time::from_ns(5), 3, &[9, 9], &mut out);
        let kept: Vec<(u32, Vec<u8>)> = out.iter().map(|(p, b)| (p, b.to_vec())).collect();
        assert_eq!(kept, vec![(1, vec![3])]);
        assert_eq!(q.rx.try_recv().unwrap(), vec![9, 9]);
        assert!(cp.next_deadline().is_none());
        cp.inject(vec![7]).unwrap();
        let d = cp.next_deadline().unwrap();
        assert!(d > Time::from_ns(5));
        out.clear();
        cp.on_timer(d, &mut out);
        // Injected as an arrival on the CPU port.
        let kept: Vec<(u32, Vec<u8>)> = out.iter().map(|(p, b)| (p, b.to_vec())).collect();
        assert_eq!(kept, vec![(1, vec![255])]);
        assert_eq!(q.rx.try_recv().unwrap(), vec![7]);
        let s = cp.stats();
        assert_eq!((s.to_cpu, s.packet_out, s.packet_in_queue_full), (2, 1, 0));
        assert!(cp.next_deadline().is_none());
    }

    #[test]
    fn a_full_server_queue_drops_and_counts() {
        let (mut cp, _q) = CpuPort::new(Echo, 255);
        let mut out = Outputs::new();
        for _ in 0..PACKET_IN_QUEUE + 3 {
            out.clear();
            cp.on_packet(Time::from_ns(1), 0, &[1], &mut out);
        }
        let s = cp.stats();
        assert_eq!(s.to_cpu, (PACKET_IN_QUEUE + 3) as u64);
        assert_eq!(s.packet_in_queue_full, 3);
        for _ in 0..MAX_PENDING_PACKET_OUT {
            cp.inject(vec![0]).unwrap();
        }
        assert!(cp.inject(vec![0]).is_err());
        assert_eq!(cp.stats().packet_out_refused, 1);
    }
}
