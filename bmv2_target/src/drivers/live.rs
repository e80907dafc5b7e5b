//! Live Linux interfaces.
//!
//! One receiver thread per interface pushes frames into a channel; the core
//! stays on the calling thread and single-threaded. Time is the monotonic
//! clock since [`run`] started; timers are serviced at their deadlines (the
//! loop wakes at the next deadline or every [`LiveOptions::poll`]). The loop
//! runs until the stop flag is raised (the CLI raises it on SIGINT/SIGTERM),
//! then joins the receivers and returns the counters.
//!
//! This is the simple, portable path (one `recvfrom`/`send` per frame); the
//! fast path is [`super::tpacket`] (memory-mapped rings, batched sends).
//! [`open_best`] opens rings and falls back to this driver, with a log
//! line, when ring setup fails; [`serve_ports`] runs either ([`serve`]
//! does both). The socket layer is the [`PortIo`] trait so it
//! can be swapped. [`AfPacket`] is the default: a raw
//! `AF_PACKET` socket bound to the interface, promiscuous, ignoring the
//! frames it sees because this host sent them (`PACKET_IGNORE_OUTGOING`,
//! and `sll_pkttype == PACKET_OUTGOING` is checked as well for older
//! kernels). Receive buffers are recycled: no allocation per frame in the
//! steady state.

use std::collections::BTreeMap;
use std::io::{self};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use netsparse_externs::{Datapath, Outputs, Time};
use rustix::event::{PollFd, PollFlags};

pub use super::ports::{LiveError, LiveOptions, LivePortStats, LiveReport, Wake};
pub use super::sys::{dump_on_sigusr1, stop_on_signals};

use super::ports::{finish_recorders, port_book, Recorder};
use super::{sys, PortSpec};

/// A frame socket bound to one interface. Both methods take `&self`: the
/// receiver thread and the core's thread use the socket concurrently.
pub trait PortIo: Send + Sync {
    /// Receive one frame into `buf`, waiting at most `timeout`. `Ok(None)`
    /// on timeout. The returned length may exceed `buf.len()`: the frame was
    /// longer than the buffer and is truncated.
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>>;
    /// Send one frame.
    fn send(&self, frame: &[u8]) -> io::Result<()>;
}

/// A raw `AF_PACKET` socket on one interface.
#[derive(Debug)]
pub struct AfPacket {
    fd: OwnedFd,
    name: String,
}

fn named_err(what: &str, name: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what} on {name}: {e}"))
}

impl AfPacket {
    /// Open a promiscuous raw socket on interface `name`.
    pub fn open(name: &str) -> io::Result<AfPacket> {
        let (fd, ifindex) = sys::packet_socket(name)?;
        sys::bind_promiscuous(&fd, ifindex, name)?;
        Ok(AfPacket {
            fd,
            name: name.to_owned(),
        })
    }

    /// Open a socket on interface `name` inside the network namespace at
    /// `netns` (e.g. `/var/run/netns/blue`, as created by `ip netns add`).
    /// The socket stays in that namespace; the calling thread does not move.
    pub fn open_in_netns(name: &str, netns: &Path) -> io::Result<AfPacket> {
        let name = name.to_owned();
        sys::in_netns(netns, move || AfPacket::open(&name))
    }
}

impl PortIo for AfPacket {
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut pfd = [PollFd::new(&self.fd, PollFlags::IN)];
            let n = match rustix::event::poll(&mut pfd, Some(&sys::poll_timeout(left))) {
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                return Ok(None);
            }
            let (n, outgoing) = match sys::recv_packet(&self.fd, buf) {
                Ok(r) => r,
                Err(e) => match e.kind() {
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => continue,
                    _ => {
                        return Err(io::Error::new(
                            e.kind(),
                            format!("recv on {}: {e}", self.name),
                        ))
                    }
                },
            };
            if outgoing {
                if Instant::now() >= deadline {
                    return Ok(None);
                }
                continue;
            }
            return Ok(Some(n));
        }
    }

    fn send(&self, frame: &[u8]) -> io::Result<()> {
        rustix::net::send(&self.fd, frame, rustix::net::SendFlags::empty())
            .map_err(|e| named_err("send", &self.name, e.into()))?;
        Ok(())
    }
}

/// Open an [`AfPacket`] socket for each binding.
pub fn open_af_packet(specs: &[PortSpec]) -> Result<Vec<(PortSpec, Arc<AfPacket>)>, LiveError> {
    specs
        .iter()
        .map(|s| {
            AfPacket::open(&s.name)
                .map(|p| (s.clone(), Arc::new(p)))
                .map_err(|err| LiveError::Open {
                    port: s.clone(),
                    err,
                })
        })
        .collect()
}

enum Msg {
    Frame {
        idx: usize,
        buf: Vec<u8>,
        len: usize,
        at: Instant,
    },
    Failed(String),
}

/// Opened live ports: rings (the fast driver) or plain sockets.
pub enum LivePorts {
    /// `TPACKET_V2` rings ([`super::tpacket`]).
    Rings(Vec<(PortSpec, super::tpacket::RingPort)>),
    /// Plain `AF_PACKET` sockets (this module's driver).
    Sockets(Vec<(PortSpec, Arc<AfPacket>)>),
}

impl LivePorts {
    /// `"tpacket"` or `"socket"`.
    pub fn driver(&self) -> &'static str {
        match self {
            LivePorts::Rings(_) => "tpacket",
            LivePorts::Sockets(_) => "socket",
        }
    }
}

/// Open `specs`' interfaces with the fast ring driver ([`super::tpacket`]);
/// if the rings cannot be set up (old kernel, no memory for the ring), log
/// why and open plain sockets instead. Frames arriving after this returns
/// are queued for [`serve`].
pub fn open_best(specs: &[PortSpec], opts: &LiveOptions) -> Result<LivePorts, LiveError> {
    match super::tpacket::open_rings(specs, &opts.ring) {
        Ok(p) => {
            tracing::info!("live driver: TPACKET_V2 rx rings + sendmmsg");
            Ok(LivePorts::Rings(p))
        }
        Err(e) => {
            tracing::warn!("TPACKET ring setup failed ({e}); using plain AF_PACKET sockets");
            eprintln!("note: TPACKET ring setup failed ({e}); using plain AF_PACKET sockets");
            open_af_packet(specs).map(LivePorts::Sockets)
        }
    }
}

/// [`open_best`] then [`serve_ports`]: run `dp` on `specs`' interfaces
/// until `stop` is raised. (A caller that announces readiness should open
/// first, announce, then call [`serve_ports`], so no frame sent after the
/// announcement is missed.)
pub fn serve<D: Datapath>(
    dp: &mut D,
    specs: &[PortSpec],
    stop: Arc<AtomicBool>,
    opts: &LiveOptions,
    hook: &mut dyn FnMut(&mut D, &[LivePortStats], Wake),
) -> Result<LiveReport, LiveError> {
    let ports = open_best(specs, opts)?;
    serve_ports(dp, ports, stop, opts, hook)
}

/// Run `dp` on ports from [`open_best`] until `stop` is raised; `hook` is
/// called whenever `opts.dump` is raised. [`LiveReport::driver`] says which
/// driver ran.
pub fn serve_ports<D: Datapath>(
    dp: &mut D,
    ports: LivePorts,
    stop: Arc<AtomicBool>,
    opts: &LiveOptions,
    hook: &mut dyn FnMut(&mut D, &[LivePortStats], Wake),
) -> Result<LiveReport, LiveError> {
    match ports {
        LivePorts::Rings(p) => {
            let mut r = super::tpacket::run(dp, p, stop, opts, hook)?;
            r.driver = "tpacket";
            Ok(r)
        }
        LivePorts::Sockets(p) => run_with_hook(dp, p, stop, opts, hook),
    }
}

/// Run `dp` on live ports until `stop` is raised.
pub fn run<D: Datapath, P: PortIo + 'static>(
    dp: &mut D,
    ports: Vec<(PortSpec, Arc<P>)>,
    stop: Arc<AtomicBool>,
    opts: &LiveOptions,
) -> Result<LiveReport, LiveError> {
    run_with_hook(dp, ports, stop, opts, &mut |_, _, _| {})
}

/// [`run`], calling `hook(dp, counters)` whenever `opts.dump` is raised.
pub fn run_with_hook<D: Datapath, P: PortIo + 'static>(
    dp: &mut D,
    ports: Vec<(PortSpec, Arc<P>)>,
    stop: Arc<AtomicBool>,
    opts: &LiveOptions,
    hook: &mut dyn FnMut(&mut D, &[LivePortStats], Wake),
) -> Result<LiveReport, LiveError> {
    let mut ports = ports;
    ports.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut recorders, by_port, mut stats) = port_book(&ports, opts)?;
    let truncated: Vec<Arc<AtomicU64>> =
        ports.iter().map(|_| Arc::new(AtomicU64::new(0))).collect();
    let pool: Arc<Mutex<Vec<Vec<u8>>>> = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel::<Msg>();
    let quit = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for (idx, (spec, io)) in ports.iter().enumerate() {
        let (io, tx, pool, quit, stop, trunc) = (
            Arc::clone(io),
            tx.clone(),
            Arc::clone(&pool),
            Arc::clone(&quit),
            Arc::clone(&stop),
            Arc::clone(&truncated[idx]),
        );
        let (snaplen, poll) = (opts.snaplen, opts.poll);
        let name = format!("rx-{}", spec.name);
        let h = thread::Builder::new()
            .name(name)
            .spawn(move || {
                let mut buf = Vec::new();
                while !quit.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    if buf.len() != snaplen {
                        buf = pool
                            .lock()
                            .ok()
                            .and_then(|mut p| p.pop())
                            .unwrap_or_else(|| vec![0u8; snaplen]);
                        buf.resize(snaplen, 0);
                    }
                    match io.recv(&mut buf, poll) {
                        Ok(None) => {}
                        Ok(Some(n)) if n > buf.len() => {
                            trunc.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(Some(n)) => {
                            let msg = Msg::Frame {
                                idx,
                                buf: std::mem::take(&mut buf),
                                len: n,
                                at: Instant::now(),
                            };
                            if tx.send(msg).is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Msg::Failed(e.to_string()));
                            break;
                        }
                    }
                }
            })
            .map_err(LiveError::Thread)?;
        handles.push(h);
    }
    drop(tx);
    let start = Instant::now();
    let mut report = LiveReport::default();
    let mut out = Outputs::new();
    let mut last = Time::ZERO;
    let mut result = Ok(());
    let time_of = |at: Instant| {
        Time::from_ns(u64::try_from(at.duration_since(start).as_nanos()).unwrap_or(u64::MAX))
    };
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
        // Timers due now.
        let now = time_of(Instant::now()).max(last);
        let mut steps = 0;
        while let Some(d) = dp.next_deadline() {
            if d > now || steps >= 1_000_000 {
                break;
            }
            steps += 1;
            last = now;
            dp.on_timer(now, &mut out);
            if let Err(e) = send_all(
                &mut out,
                &ports,
                &by_port,
                &mut stats,
                &mut recorders,
                &mut report,
            ) {
                result = Err(e);
                break 'main;
            }
        }
        let wait = match dp.next_deadline() {
            Some(d) => Duration::from_nanos(d.saturating_sub(now).as_ns()).min(opts.poll),
            None => opts.poll,
        };
        match rx.recv_timeout(wait) {
            Ok(Msg::Frame { idx, buf, len, at }) => {
                let t = time_of(at).max(last);
                last = t;
                let frame = &buf[..len.min(buf.len())];
                stats[idx].rx_frames += 1;
                stats[idx].rx_bytes += frame.len() as u64;
                if let Some(r) = recorders[idx].0.as_mut() {
                    if let Err(e) = r.write(frame) {
                        result = Err(e);
                        break 'main;
                    }
                }
                dp.on_packet(t, ports[idx].0.port, frame, &mut out);
                if let Ok(mut p) = pool.lock() {
                    p.push(buf);
                }
                if let Err(e) = send_all(
                    &mut out,
                    &ports,
                    &by_port,
                    &mut stats,
                    &mut recorders,
                    &mut report,
                ) {
                    result = Err(e);
                    break 'main;
                }
            }
            Ok(Msg::Failed(e)) => {
                report.receiver_error = Some(e);
                break;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    quit.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    for (s, t) in stats.iter_mut().zip(&truncated) {
        s.rx_truncated = t.load(Ordering::Relaxed);
    }
    result = result.and(finish_recorders(recorders));
    result?;
    report.driver = "socket";
    report.ports = stats;
    report.duration = start.elapsed();
    Ok(report)
}

fn send_all<P: PortIo>(
    out: &mut Outputs,
    ports: &[(PortSpec, Arc<P>)],
    by_port: &BTreeMap<u32, usize>,
    stats: &mut [LivePortStats],
    recorders: &mut [(Option<Recorder>, Option<Recorder>)],
    report: &mut LiveReport,
) -> Result<(), LiveError> {
    for (port, bytes) in out.iter() {
        match by_port.get(&port) {
            Some(&i) => {
                match ports[i].1.send(bytes) {
                    Ok(()) => {
                        stats[i].tx_frames += 1;
                        stats[i].tx_bytes += bytes.len() as u64;
                    }
                    Err(_) => stats[i].tx_errors += 1,
                }
                if let Some(r) = recorders[i].1.as_mut() {
                    r.write(bytes)?;
                }
            }
            None => report.unbound_port_frames += 1,
        }
    }
    out.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{Receiver, Sender};

    /// A port fed from a channel, recording what is sent.
    struct FakePort {
        rx: Mutex<Receiver<Vec<u8>>>,
        sent: Mutex<Vec<Vec<u8>>>,
    }

    impl PortIo for FakePort {
        fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
            let rx = self.rx.lock().map_err(|_| io::Error::other("poisoned"))?;
            match rx.recv_timeout(timeout) {
                Ok(f) => {
                    let n = f.len().min(buf.len());
                    buf[..n].copy_from_slice(&f[..n]);
                    Ok(Some(f.len()))
                }
                Err(_) => Ok(None),
            }
        }
        fn send(&self, frame: &[u8]) -> io::Result<()> {
            self.sent
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?
                .push(frame.to_vec());
            Ok(())
        }
    }

    /// Echo every frame to port `port ^ 1`, and count timer calls.
    struct Echo {
        seen: usize,
        stop_after: usize,
        stop: Arc<AtomicBool>,
        timer_at: Option<Time>,
        timers: usize,
    }

    impl Datapath for Echo {
        fn on_packet(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
            out.push(port ^ 1, frame);
            out.push(7, frame); // unbound
            self.seen += 1;
            self.timer_at = Some(now + Time::from_us(100));
            if self.seen >= self.stop_after && self.timers > 0 {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
        fn on_timer(&mut self, _now: Time, _out: &mut Outputs) {
            self.timers += 1;
            self.timer_at = None;
            if self.seen >= self.stop_after {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
        fn next_deadline(&self) -> Option<Time> {
            self.timer_at
        }
    }

    fn fake() -> (Sender<Vec<u8>>, Arc<FakePort>) {
        let (tx, rx) = mpsc::channel();
        (
            tx,
            Arc::new(FakePort {
                rx: Mutex::new(rx),
                sent: Mutex::new(Vec::new()),
            }),
        )
    }

    #[test]
    fn delivers_routes_fires_timers_and_stops() {
        let (tx0, p0) = fake();
        let (_tx1, p1) = fake();
        let stop = Arc::new(AtomicBool::new(false));
        let mut dp = Echo {
            seen: 0,
            stop_after: 3,
            stop: Arc::clone(&stop),
            timer_at: None,
            timers: 0,
        };
        tx0.send(vec![9; 100]).unwrap(); // longer than the buffer: dropped
        for i in 0..3u8 {
            tx0.send(vec![i; 60]).unwrap();
        }
        let ports = vec![
            ("0@a".parse().unwrap(), Arc::clone(&p0)),
            ("1@b".parse().unwrap(), Arc::clone(&p1)),
        ];
        let opts = LiveOptions {
            snaplen: 64,
            poll: Duration::from_millis(5),
            ..LiveOptions::default()
        };
        let rep = run(&mut dp, ports, stop, &opts).unwrap();
        assert_eq!(dp.seen, 3);
        assert!(dp.timers >= 1);
        let sent = p1.sent.lock().unwrap();
        assert_eq!(sent.len(), 3);
        assert_eq!(sent[1], vec![1u8; 60]);
        assert_eq!(rep.ports[0].rx_frames, 3);
        assert_eq!(rep.ports[1].tx_frames, 3);
        assert_eq!(rep.unbound_port_frames, 3);
        assert_eq!(rep.ports[0].rx_truncated, 1);
    }
}
