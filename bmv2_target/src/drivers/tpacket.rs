//! The fast live driver: memory-mapped `TPACKET_V2` receive rings and
//! `sendmmsg(2)` transmit batches, all ports served by one thread.
//!
//! # Why this shape
//!
//! * **RX**: each port's socket has a `PACKET_RX_RING` of fixed-size frame
//!   slots shared with the kernel. The driver walks the slots in order and
//!   hands each frame to the core *in place* (no copy, no syscall per
//!   frame); `poll(2)` is only called when every ring is empty. `TPACKET_V2`
//!   (frame-based) is used rather than V3 (block-based) because V3 hands a
//!   partly filled block to user space only when its retire timer fires
//!   (≥ 1 ms): with the few, latency-sensitive packets of a gather, every hop
//!   would cost a millisecond. V2 frames are visible as soon as written.
//! * **TX**: the core's outputs for a batch of received frames are grouped
//!   by port and sent with one `sendmmsg` per port. (A `PACKET_TX_RING` is
//!   not used: the kernel builds TX-ring skbs whose data pages point into the
//!   ring and hands the slot back when the skb is orphaned, which a veth
//!   crossing network namespaces does before the peer has read the data.)
//! * **Slot size** follows the interface MTU (read with `SIOCGIFMTU` when
//!   the port opens): 2 KiB slots for MTU 1500, 16 KiB for the 9000-byte
//!   jumbo MTU. A frame longer than its slot is counted as truncated and
//!   dropped, like the socket driver does.
//! * Frames this host sent (`PACKET_OUTGOING`) are ignored: the socket sets
//!   `PACKET_IGNORE_OUTGOING` and the slot's `sll_pkttype` is checked too.
//!   A VLAN tag the kernel moved to the slot's metadata is put back in the
//!   frame (a preallocated scratch buffer; no allocation per frame).
//! * Kernel drops (ring full) are read with `PACKET_STATISTICS` at the end
//!   and reported per port as [`LivePortStats::rx_kernel_drops`].
//!
//! Time, timers, the stop flag, `--pcap` recording and the counters are the
//! same as in the socket driver ([`super::live`]); [`run`] has the same
//! contract as [`super::live::run_with_hook`].

use std::collections::BTreeMap;
use std::io::{self, IoSlice};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsparse_externs::{Datapath, Outputs, Time};
use rustix::event::{PollFd, PollFlags};

pub use super::ports::RingOptions;
pub use super::sys::interface_mtu;

use super::ports::{
    finish_recorders, port_book, LiveError, LiveOptions, LivePortStats, LiveReport, Recorder, Wake,
};
use super::sys::os_err;
use super::{sys, PortSpec};

// Linux UAPI constants (linux/if_packet.h), spelled out so the driver does
// not depend on how a given libc release exposes them.
const PACKET_VERSION: libc::c_int = 10;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const PACKET_OUTGOING: u8 = 4;
/// `TPACKET_ALIGN(sizeof(struct tpacket2_hdr))`: where the `sockaddr_ll` starts.
const SLL_OFFSET: usize = 32;
/// Bytes of slot taken before the frame data (header, address, alignment).
const SLOT_OVERHEAD: usize = 96;
/// Frames handed to the core per ring before the outputs are flushed.
const RX_BUDGET: usize = 64;
/// Messages per `sendmmsg` call.
const TX_BATCH: usize = sys::SEND_BATCH;

/// `struct tpacket2_hdr`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Tpacket2Hdr {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_sec: u32,
    tp_nsec: u32,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
    tp_padding: [u8; 4],
}

/// `struct tpacket_req`.
#[repr(C)]
struct TpacketReq {
    tp_block_size: u32,
    tp_block_nr: u32,
    tp_frame_size: u32,
    tp_frame_nr: u32,
}

/// A `PACKET_RX_RING` socket on one interface.
#[derive(Debug)]
pub struct RingPort {
    fd: OwnedFd,
    name: String,
    map: sys::RingMap,
    slot: usize,
    slots: usize,
    head: usize,
    mtu: usize,
}

impl RingPort {
    /// Open a promiscuous `TPACKET_V2` ring socket on interface `name`.
    pub fn open(name: &str, opts: &RingOptions) -> io::Result<RingPort> {
        let mtu = interface_mtu(name)?;
        let (fd, ifindex) = sys::packet_socket(name)?;
        if sys::setsockopt(&fd, libc::SOL_PACKET, PACKET_VERSION, &TPACKET_V2).is_err() {
            return Err(os_err("PACKET_VERSION(TPACKET_V2)", name));
        }
        // Slot: header + address + data (Ethernet + VLAN + MTU), power of two.
        let slot = (SLOT_OVERHEAD + 18 + mtu).next_power_of_two().max(2048);
        let block = slot.max(sys::page_size());
        let per_block = block / slot;
        let blocks = (opts.ring_bytes / block).max(64usize.div_ceil(per_block));
        let req = TpacketReq {
            tp_block_size: block as u32,
            tp_block_nr: blocks as u32,
            tp_frame_size: slot as u32,
            tp_frame_nr: (blocks * per_block) as u32,
        };
        if sys::setsockopt(&fd, libc::SOL_PACKET, PACKET_RX_RING, &req).is_err() {
            return Err(os_err("PACKET_RX_RING", name));
        }
        let map = sys::RingMap::map(&fd, block * blocks, name)?;
        let mut port = RingPort {
            fd,
            name: name.to_owned(),
            map,
            slot,
            slots: blocks * per_block,
            head: 0,
            mtu,
        };
        // Bind after the ring exists so no frame is queued to the socket
        // buffer instead of the ring.
        sys::bind_promiscuous(&port.fd, ifindex, name)?;
        let one: libc::c_int = 1;
        // Best effort: skip the qdisc layer on transmit.
        let _ = sys::setsockopt(&port.fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, &one);
        // Anything received between socket() and bind() would be from any
        // interface: skip what is already in the ring.
        port.discard_ready();
        Ok(port)
    }

    /// Open a ring on interface `name` inside the network namespace at
    /// `netns` (e.g. `/var/run/netns/blue`); the calling thread stays where
    /// it is.
    pub fn open_in_netns(name: &str, netns: &Path, opts: &RingOptions) -> io::Result<RingPort> {
        let name = name.to_owned();
        let opts = *opts;
        sys::in_netns(netns, move || RingPort::open(&name, &opts))
    }

    /// The interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The interface MTU when the port was opened.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Receive-ring slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    fn hdr_ptr(&self, i: usize) -> *mut Tpacket2Hdr {
        // SAFETY: i < slots, so the slot lies inside the mapping.
        unsafe { self.map.as_ptr().add(i * self.slot).cast() }
    }

    fn status(&self, i: usize) -> u32 {
        // SAFETY: the slot header is inside the mapping; the kernel writes it
        // concurrently, hence the volatile read.
        let s = unsafe { std::ptr::read_volatile(&(*self.hdr_ptr(i)).tp_status) };
        std::sync::atomic::fence(Ordering::Acquire);
        s
    }

    fn release(&mut self, i: usize) {
        std::sync::atomic::fence(Ordering::Release);
        // SAFETY: as in `status`; handing the slot back to the kernel.
        unsafe { std::ptr::write_volatile(&mut (*self.hdr_ptr(i)).tp_status, TP_STATUS_KERNEL) };
    }

    fn discard_ready(&mut self) {
        while self.status(self.head) & TP_STATUS_USER != 0 {
            let h = self.head;
            self.release(h);
            self.head = (self.head + 1) % self.slots;
        }
    }

    /// Whether the slot at the head holds a frame.
    pub fn ready(&self) -> bool {
        self.status(self.head) & TP_STATUS_USER != 0
    }

    /// Take the frame at the head, if any: `f(frame, wire_len)` sees the
    /// bytes in the ring (or, for a frame whose VLAN tag the kernel
    /// stripped, in `scratch` with the tag restored). Returns `None` when
    /// the ring is empty, `Some(None)` for a frame skipped because this
    /// host sent it, and `Some(Some(r))` otherwise.
    pub fn take<R>(
        &mut self,
        scratch: &mut Vec<u8>,
        f: impl FnOnce(&[u8], usize) -> R,
    ) -> Option<Option<R>> {
        let i = self.head;
        let status = self.status(i);
        if status & TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the slot belongs to user space until released; header,
        // address and data offsets are checked against the slot size.
        let r = unsafe {
            let base = self.map.as_ptr().add(i * self.slot);
            let h = std::ptr::read_volatile(base.cast::<Tpacket2Hdr>());
            let pkttype = *base.add(SLL_OFFSET + 10);
            let mac = usize::from(h.tp_mac);
            let snap = (h.tp_snaplen as usize).min(self.slot.saturating_sub(mac));
            if pkttype == PACKET_OUTGOING {
                None
            } else {
                let data = std::slice::from_raw_parts(base.add(mac), snap);
                let wire = h.tp_len as usize;
                if status & TP_STATUS_VLAN_VALID != 0 && data.len() >= 12 {
                    let tpid = if status & TP_STATUS_VLAN_TPID_VALID != 0 {
                        h.tp_vlan_tpid
                    } else {
                        0x8100
                    };
                    scratch.clear();
                    scratch.extend_from_slice(&data[..12]);
                    scratch.extend_from_slice(&tpid.to_be_bytes());
                    scratch.extend_from_slice(&h.tp_vlan_tci.to_be_bytes());
                    scratch.extend_from_slice(&data[12..]);
                    Some(f(scratch, wire + 4))
                } else {
                    Some(f(data, wire))
                }
            }
        };
        self.release(i);
        self.head = (i + 1) % self.slots;
        Some(r)
    }

    /// Send the frames `arena[off..off + len]` for each `(off, len)` of
    /// `ranges` with `sendmmsg`, in order. Returns the frames and bytes
    /// sent; a frame the kernel refuses is skipped (the caller counts
    /// `ranges.len() - frames` as errors).
    pub fn send_batch(&self, arena: &[u8], ranges: &[(usize, usize)]) -> (usize, usize) {
        let (mut frames, mut bytes) = (0, 0);
        for chunk in ranges.chunks(TX_BATCH) {
            // Ranges outside the arena are sent empty rather than read out
            // of bounds.
            let msgs: [IoSlice<'_>; TX_BATCH] = std::array::from_fn(|i| {
                IoSlice::new(
                    chunk
                        .get(i)
                        .and_then(|&(off, len)| arena.get(off..off.saturating_add(len)))
                        .unwrap_or(&[]),
                )
            });
            let mut done = 0;
            while done < chunk.len() {
                match sys::send_frames(&self.fd, &msgs[done..chunk.len()]) {
                    Ok(n) => {
                        bytes += chunk[done..done + n].iter().map(|r| r.1).sum::<usize>();
                        frames += n;
                        done += n;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // The frame at `done` was refused: skip it.
                    Err(_) => done += 1,
                }
            }
        }
        (frames, bytes)
    }

    /// Frames the kernel dropped because the ring was full since the last
    /// call (`PACKET_STATISTICS` resets on read).
    pub fn kernel_drops(&self) -> u64 {
        sys::packet_ring_drops(&self.fd).unwrap_or(0)
    }
}

/// Open a ring for each binding.
pub fn open_rings(
    specs: &[PortSpec],
    opts: &RingOptions,
) -> Result<Vec<(PortSpec, RingPort)>, LiveError> {
    specs
        .iter()
        .map(|s| {
            RingPort::open(&s.name, opts)
                .map(|p| (s.clone(), p))
                .map_err(|err| LiveError::Open {
                    port: s.clone(),
                    err,
                })
        })
        .collect()
}

/// Per-port transmit grouping, reused across batches.
struct TxPlan {
    /// Per port index: ranges into `Outputs::bytes()` in emission order.
    per_port: Vec<Vec<(usize, usize)>>,
}

/// Run `dp` on ring ports until `stop` is raised. `hook(dp, stats)` is
/// called between batches whenever `opts.dump` is raised (the flag is then
/// lowered), e.g. to write the core's counters to a file on SIGUSR1.
pub fn run<D: Datapath>(
    dp: &mut D,
    ports: Vec<(PortSpec, RingPort)>,
    stop: Arc<AtomicBool>,
    opts: &LiveOptions,
    hook: &mut dyn FnMut(&mut D, &[LivePortStats], Wake),
) -> Result<LiveReport, LiveError> {
    let mut ports = ports;
    ports.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut recorders, by_port, mut stats) = port_book(&ports, opts)?;
    // Duplicates of the ports' sockets to wait on (the same sockets), so
    // the poll set borrows nothing from `ports`, which the loop mutates.
    let poll_fds = ports
        .iter()
        .map(|(s, p)| {
            p.fd.try_clone().map_err(|err| LiveError::Open {
                port: s.clone(),
                err,
            })
        })
        .collect::<Result<Vec<OwnedFd>, LiveError>>()?;
    let mut pfds: Vec<PollFd<'_>> = poll_fds
        .iter()
        .map(|fd| PollFd::new(fd, PollFlags::IN))
        .collect();
    let mut plan = TxPlan {
        per_port: vec![Vec::with_capacity(TX_BATCH); ports.len()],
    };
    let mut vlan_scratch: Vec<u8> = Vec::with_capacity(opts.snaplen.min(65536) + 4);
    let start = Instant::now();
    let mut report = LiveReport::default();
    let mut out = Outputs::new();
    let mut last = Time::ZERO;
    let time_of = |at: Instant| {
        Time::from_ns(u64::try_from(at.duration_since(start).as_nanos()).unwrap_or(u64::MAX))
    };
    let mut result = Ok(());
    'main: while !stop.load(Ordering::Relaxed) {
        if let Some(flag) = &opts.dump {
            if flag.swap(false, Ordering::Relaxed) {
                hook(dp, &stats, Wake::Dump);
            }
        }
        if let Some(flag) = &opts.control {
            if flag.load(Ordering::Relaxed) {
                flag.store(false, Ordering::Relaxed);
                hook(dp, &stats, Wake::Control);
            }
        }
        let now = time_of(Instant::now()).max(last);
        last = now;
        let mut steps = 0;
        while let Some(d) = dp.next_deadline() {
            if d > now || steps >= 1_000_000 {
                break;
            }
            steps += 1;
            dp.on_timer(now, &mut out);
        }
        if let Err(e) = flush(
            &mut out,
            &ports,
            &by_port,
            &mut stats,
            &mut recorders,
            &mut report,
            &mut plan,
        ) {
            result = Err(e);
            break 'main;
        }
        let mut got = 0usize;
        for i in 0..ports.len() {
            let port_no = ports[i].0.port;
            for _ in 0..RX_BUDGET {
                let snaplen = opts.snaplen;
                let (rec, st) = (&mut recorders[i].0, &mut stats[i]);
                let mut rec_err = None;
                let r = ports[i].1.take(&mut vlan_scratch, |frame, wire| {
                    if wire > frame.len() || wire > snaplen {
                        st.rx_truncated += 1;
                        return;
                    }
                    st.rx_frames += 1;
                    st.rx_bytes += frame.len() as u64;
                    if let Some(r) = rec.as_mut() {
                        if let Err(e) = r.write(frame) {
                            rec_err = Some(e);
                            return;
                        }
                    }
                    dp.on_packet(now, port_no, frame, &mut out);
                });
                if let Some(e) = rec_err {
                    result = Err(e);
                    break 'main;
                }
                match r {
                    None => break,
                    Some(_) => got += 1,
                }
            }
            if let Err(e) = flush(
                &mut out,
                &ports,
                &by_port,
                &mut stats,
                &mut recorders,
                &mut report,
                &mut plan,
            ) {
                result = Err(e);
                break 'main;
            }
        }
        if got > 0 {
            continue;
        }
        // Every ring is empty: sleep until a frame, the next deadline or
        // the next check of the stop flag.
        let now = time_of(Instant::now()).max(last);
        let wait = match dp.next_deadline() {
            Some(d) => Duration::from_nanos(d.saturating_sub(now).as_ns()).min(opts.poll),
            None => opts.poll,
        };
        if wait.is_zero() {
            continue;
        }
        if ports.iter().any(|(_, p)| p.ready()) {
            continue;
        }
        for p in pfds.iter_mut() {
            p.clear_revents();
        }
        // Nanosecond timeouts, so sub-millisecond deadlines (the NIC's DMA
        // latency, concatenation delays) are not rounded up to a
        // millisecond.
        if let Err(e) = rustix::event::poll(&mut pfds, Some(&sys::poll_timeout(wait))) {
            if e != rustix::io::Errno::INTR {
                report.receiver_error = Some(format!("poll: {}", io::Error::from(e)));
                break;
            }
        }
        for (i, p) in pfds.iter().enumerate() {
            if p.revents().intersects(PollFlags::ERR | PollFlags::NVAL) && !ports[i].1.ready() {
                // POLLERR on a packet socket reports a pending socket error
                // (e.g. the interface went away).
                if let Some(e) = sys::pending_error(&poll_fds[i]) {
                    report.receiver_error = Some(format!("{}: {e}", ports[i].1.name));
                    break 'main;
                }
            }
        }
    }
    // Deliver what the core still emitted when stopping.
    let _ = flush(
        &mut out,
        &ports,
        &by_port,
        &mut stats,
        &mut recorders,
        &mut report,
        &mut plan,
    );
    for (s, (_, p)) in stats.iter_mut().zip(&ports) {
        s.rx_kernel_drops = p.kernel_drops();
    }
    result = result.and(finish_recorders(recorders));
    result?;
    report.ports = stats;
    report.duration = start.elapsed();
    Ok(report)
}

fn flush(
    out: &mut Outputs,
    ports: &[(PortSpec, RingPort)],
    by_port: &BTreeMap<u32, usize>,
    stats: &mut [LivePortStats],
    recorders: &mut [(Option<Recorder>, Option<Recorder>)],
    report: &mut LiveReport,
    plan: &mut TxPlan,
) -> Result<(), LiveError> {
    if out.is_empty() {
        return Ok(());
    }
    let base = out.bytes().as_ptr() as usize;
    for (port, bytes) in out.iter() {
        match by_port.get(&port) {
            Some(&i) => {
                let off = bytes.as_ptr() as usize - base;
                plan.per_port[i].push((off, bytes.len()));
                if let Some(r) = recorders[i].1.as_mut() {
                    r.write(bytes)?;
                }
            }
            None => report.unbound_port_frames += 1,
        }
    }
    let arena = out.bytes();
    for (i, ranges) in plan.per_port.iter_mut().enumerate() {
        if ranges.is_empty() {
            continue;
        }
        let (n, bytes) = ports[i].1.send_batch(arena, ranges);
        stats[i].tx_frames += n as u64;
        stats[i].tx_bytes += bytes as u64;
        stats[i].tx_errors += (ranges.len() - n) as u64;
        ranges.clear();
    }
    out.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A namespace with a veth pair `va`/`vb` (MTU 9000); removed on drop.
    struct Ns(String);

    impl Drop for Ns {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
        }
    }

    fn ip(args: &[&str]) -> bool {
        Command::new("ip")
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn setup(tag: &str) -> Option<Ns> {
        if !sys::is_root() || !ip(&["-V"]) {
            println!("skipping: needs root and iproute2");
            return None;
        }
        let ns = Ns(format!("tpk{tag}{}", std::process::id()));
        assert!(ip(&["netns", "add", &ns.0]));
        let n = ns.0.as_str();
        assert!(ip(&[
            "-n", n, "link", "add", "name", "va", "mtu", "9000", "type", "veth", "peer", "name",
            "vb", "mtu", "9000"
        ]));
        assert!(ip(&["-n", n, "link", "set", "va", "up"]));
        assert!(ip(&["-n", n, "link", "set", "vb", "up"]));
        Some(ns)
    }

    fn frame(len: usize, tag: u8) -> Vec<u8> {
        let mut f = vec![tag; len];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 0xbb]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0xaa]);
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        f
    }

    /// Take frames of EtherType 0x88b5 from `p` until `n` arrived (or
    /// `wait` passed).
    fn collect(p: &mut RingPort, n: usize, wait: Duration) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let mut scratch = Vec::new();
        let end = Instant::now() + wait;
        while got.len() < n && Instant::now() < end {
            match p.take(&mut scratch, |f, wire| (f.to_vec(), wire)) {
                Some(Some((f, wire))) if f.len() > 14 && f[12..14] == [0x88, 0xb5] => {
                    assert_eq!(wire, f.len());
                    got.push(f);
                }
                Some(_) => {}
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        got
    }

    #[test]
    fn jumbo_frames_round_trip_and_own_frames_are_ignored() {
        let Some(ns) = setup("j") else { return };
        let path = Path::new("/var/run/netns").join(&ns.0);
        let mut a = RingPort::open_in_netns("va", &path, &RingOptions::default()).unwrap();
        let mut b = RingPort::open_in_netns("vb", &path, &RingOptions::default()).unwrap();
        assert_eq!(a.mtu(), 9000);
        assert!(a.slots() >= 64);
        let frames = [frame(60, 1), frame(1514, 2), frame(9014, 3)];
        let arena: Vec<u8> = frames.concat();
        let ranges = [(0, 60), (60, 1514), (1574, 9014)];
        assert_eq!(b.send_batch(&arena, &ranges), (3, 60 + 1514 + 9014));
        let got = collect(&mut a, 3, Duration::from_secs(5));
        assert_eq!(got.len(), 3);
        for (g, f) in got.iter().zip(&frames) {
            assert_eq!(g, f);
        }
        // b sent them: b's own ring does not show them (they would be
        // there by now: a received them already).
        assert!(collect(&mut b, 1, Duration::from_millis(200)).is_empty());
        // A range outside the arena is sent empty (refused), not read out of bounds.
        let (n, _) = b.send_batch(&arena, &[(arena.len(), 10)]);
        assert_eq!(n, 0);
        assert_eq!(a.kernel_drops(), 0);
    }

    /// Echo every frame back out of the port it came in on.
    struct Echo;

    impl Datapath for Echo {
        fn on_packet(&mut self, _now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
            if frame.len() > 14 && frame[12..14] == [0x88, 0xb5] {
                let mut f = frame.to_vec();
                f[14] = 0xee;
                out.push(port, &f);
            }
        }
        fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {}
        fn next_deadline(&self) -> Option<Time> {
            None
        }
    }

    #[test]
    fn run_echoes_counts_and_stops() {
        let Some(ns) = setup("r") else { return };
        let path = Path::new("/var/run/netns").join(&ns.0);
        let a = RingPort::open_in_netns("va", &path, &RingOptions::default()).unwrap();
        let mut b = RingPort::open_in_netns("vb", &path, &RingOptions::default()).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let dump = Arc::new(AtomicBool::new(true));
        let stop2 = Arc::clone(&stop);
        let opts = LiveOptions {
            poll: Duration::from_millis(5),
            dump: Some(Arc::clone(&dump)),
            ..LiveOptions::default()
        };
        let h = std::thread::spawn(move || {
            let mut dp = Echo;
            let mut hooks = 0;
            let rep = run(
                &mut dp,
                vec![("0@a".parse().unwrap(), a)],
                stop2,
                &opts,
                &mut |_, _, _| hooks += 1,
            )
            .unwrap();
            (rep, hooks)
        });
        let n = 200usize;
        let frames: Vec<Vec<u8>> = (0..n).map(|i| frame(64 + i, i as u8)).collect();
        let arena = frames.concat();
        let mut ranges = Vec::new();
        let mut off = 0;
        for f in &frames {
            ranges.push((off, f.len()));
            off += f.len();
        }
        assert_eq!(b.send_batch(&arena, &ranges).0, n);
        let got = collect(&mut b, n, Duration::from_secs(5));
        stop.store(true, Ordering::Relaxed);
        let (rep, hooks) = h.join().unwrap();
        assert_eq!(got.len(), n);
        for (g, f) in got.iter().zip(&frames) {
            assert_eq!(g.len(), f.len());
            assert_eq!(g[14], 0xee);
            assert_eq!(g[15..], f[15..]);
        }
        let p = &rep.ports[0];
        assert!(p.rx_frames >= n as u64, "{p:?}");
        assert_eq!(p.tx_frames, n as u64);
        assert_eq!(p.tx_errors, 0);
        assert_eq!(p.rx_truncated, 0);
        assert_eq!(hooks, 1, "the dump flag calls the hook once");
        assert!(!dump.load(Ordering::Relaxed));
    }
}
