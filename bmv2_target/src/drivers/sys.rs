//! The operating-system layer of the live drivers and the live topologies,
//! in one place: opening and binding `AF_PACKET` sockets (the one way both
//! drivers open a port), socket options, interface index and MTU, entering
//! a network namespace (a thread, or a child process before exec), turning
//! off a veth's transmit checksum offload, the effective user, signals to
//! other processes, the page size, and the signal handlers the CLI
//! installs, and the packet path's calls: mapping a receive ring, batched
//! sends (`sendmmsg`), a packet socket's receive with its packet type and
//! its ring statistics. Namespaces, sessions, `kill`, sockets, the page
//! size, `mmap`, `sendmmsg`, `poll` and `SO_ERROR` go through rustix (the
//! drivers call its safe `poll` and `send` directly); packet sockets,
//! their options and statistics, `recvfrom` with a `sockaddr_ll`,
//! `SIOCGIFMTU`, `SIOCETHTOOL` and `sigaction` have no safe wrapper in
//! rustix or nix, so they are the only `libc` calls here, each with its
//! safety argument. No other file of the drivers or the topologies makes
//! a raw system call.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// `SOL_PACKET` option: ignore frames this host sent (linux/if_packet.h).
pub(crate) const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// An `io::Error` for `what` failing on `name`, from `errno`.
pub(crate) fn os_err(what: &str, name: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what} on {name}: {e}"))
}

/// `setsockopt(fd, level, opt, val)`; `Err` with `errno` on failure.
pub(crate) fn setsockopt<T>(
    fd: &OwnedFd,
    level: libc::c_int,
    opt: libc::c_int,
    val: &T,
) -> io::Result<()> {
    // SAFETY: `val` points to a live `T` whose size is passed along.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `SOL_PACKET` option: the ring's counters (reset on read).
const PACKET_STATISTICS: libc::c_int = 6;

/// `struct tpacket_stats`.
#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    tp_packets: u32,
    tp_drops: u32,
}

/// Frames the kernel dropped on a ringed packet socket because the ring
/// was full, since the last call (`PACKET_STATISTICS` resets on read).
pub(crate) fn packet_ring_drops(fd: &OwnedFd) -> io::Result<u64> {
    let mut st = TpacketStats::default();
    let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
    // SAFETY: `st` is a live, writable `tpacket_stats` and `len` its size.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_STATISTICS,
            (&mut st as *mut TpacketStats).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::from(st.tp_drops))
}

/// The error pending on socket `fd` (`SO_ERROR`), if any; reading it
/// clears it.
pub(crate) fn pending_error(fd: &OwnedFd) -> Option<io::Error> {
    match rustix::net::sockopt::socket_error(fd) {
        Ok(Ok(())) => None,
        Ok(Err(e)) | Err(e) => Some(e.into()),
    }
}

/// A receive ring mapped shared into this process; unmapped when dropped.
#[derive(Debug)]
pub(crate) struct RingMap {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone; moving it to another
// thread moves the only access to it.
unsafe impl Send for RingMap {}

impl RingMap {
    /// Map the `len`-byte ring the kernel set up for packet socket `fd`
    /// (`PACKET_RX_RING`), read-write and shared: locked and populated
    /// when `RLIMIT_MEMLOCK` allows, plainly otherwise. `name` is for
    /// errors.
    pub(crate) fn map(fd: &OwnedFd, len: usize, name: &str) -> io::Result<RingMap> {
        use rustix::mm::{mmap, MapFlags, ProtFlags};
        let prot = ProtFlags::READ | ProtFlags::WRITE;
        // SAFETY: a new mapping at an address the kernel chooses (so no
        // existing memory is replaced) of the ring the kernel allocated for
        // this socket; only the returned `RingMap` refers to it.
        let locked = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                prot,
                MapFlags::SHARED | MapFlags::LOCKED | MapFlags::POPULATE,
                fd,
                0,
            )
        };
        // MAP_LOCKED may exceed RLIMIT_MEMLOCK: retry without it.
        // SAFETY: as above.
        let ptr = locked
            .or_else(|_| unsafe { mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, fd, 0) })
            .map_err(|e| {
                let e = io::Error::from(e);
                io::Error::new(e.kind(), format!("mmap(rx ring) on {name}: {e}"))
            })?;
        Ok(RingMap {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The first byte of the mapping.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for RingMap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe the mapping made in `map`, and no
        // reference into it outlives its owner.
        unsafe {
            let _ = rustix::mm::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// Frames per [`send_frames`] call (one `sendmmsg(2)` batch).
pub(crate) const SEND_BATCH: usize = 64;

/// Send each of the first [`SEND_BATCH`] `frames` as its own message on
/// the bound socket `fd`, in order, with one `sendmmsg(2)`: how many the
/// kernel accepted, from the first (`Err` when it refused the first one).
/// Builds the message headers on the stack: no allocation.
pub(crate) fn send_frames(fd: &OwnedFd, frames: &[IoSlice<'_>]) -> io::Result<usize> {
    use rustix::net::{sendmmsg, MMsgHdr, SendAncillaryBuffer, SendFlags};
    let n = frames.len().min(SEND_BATCH);
    let none = [IoSlice::new(&[])];
    let mut ctrls: [SendAncillaryBuffer<'_, '_, '_>; SEND_BATCH] =
        std::array::from_fn(|_| SendAncillaryBuffer::default());
    let mut i = 0;
    let mut msgs = ctrls.each_mut().map(|c| {
        let m = MMsgHdr::new(frames.get(i..i + 1).unwrap_or(&none), c);
        i += 1;
        m
    });
    Ok(sendmmsg(fd, &mut msgs[..n], SendFlags::empty())?)
}

/// Receive one frame from packet socket `fd` into `buf` without blocking
/// (`MSG_TRUNC`: the frame's whole length is returned even when `buf` is
/// shorter) and whether this host sent it (`PACKET_OUTGOING`).
pub(crate) fn recv_packet(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<(usize, bool)> {
    // SAFETY: sockaddr_ll is plain data; zero is a valid initial value.
    let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    // SAFETY: `buf` is valid for `buf.len()` writable bytes; `from`/`len`
    // describe a writable address buffer of the right size.
    let n = unsafe {
        libc::recvfrom(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_TRUNC | libc::MSG_DONTWAIT,
            (&mut from as *mut libc::sockaddr_ll).cast(),
            &mut len,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, from.sll_pkttype == libc::PACKET_OUTGOING))
}

/// A `poll(2)` timeout of `d`, to the nanosecond (rustix uses `ppoll`,
/// so sub-millisecond deadlines are not rounded up to a millisecond).
pub(crate) fn poll_timeout(d: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as rustix::event::Secs,
        tv_nsec: rustix::event::Nsecs::from(d.subsec_nanos()),
    }
}

/// The index of interface `name`.
pub(crate) fn interface_index(name: &str) -> io::Result<u32> {
    let cname = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name with NUL"))?;
    // SAFETY: `cname` is a valid NUL-terminated string.
    let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface named {name}"),
        ));
    }
    Ok(ifindex)
}

/// `struct ifreq` for `SIOCGIFMTU`.
#[repr(C)]
struct IfreqMtu {
    name: [libc::c_char; libc::IFNAMSIZ],
    mtu: libc::c_int,
    _pad: [u8; 20],
}

/// The MTU of interface `name` (`SIOCGIFMTU`).
pub fn interface_mtu(name: &str) -> io::Result<usize> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name `{name}` is longer than IFNAMSIZ - 1"),
        ));
    }
    // SAFETY: plain socket(2); the result is checked.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(os_err("socket(AF_INET)", name));
    }
    // SAFETY: fresh owned descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut req = IfreqMtu {
        name: [0; libc::IFNAMSIZ],
        mtu: 0,
        _pad: [0; 20],
    };
    for (d, s) in req.name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: `req` is a valid ifreq-shaped buffer for SIOCGIFMTU.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFMTU as _, &mut req) };
    if rc < 0 {
        return Err(os_err("SIOCGIFMTU", name));
    }
    Ok(usize::try_from(req.mtu).unwrap_or(1500))
}

/// An unbound raw `AF_PACKET` socket for every protocol, and the index of
/// interface `name` to bind it to with [`bind_promiscuous`] (after any
/// option that must precede the bind, such as a receive ring).
pub(crate) fn packet_socket(name: &str) -> io::Result<(OwnedFd, u32)> {
    let ifindex = interface_index(name)?;
    let proto = (libc::ETH_P_ALL as u16).to_be();
    // SAFETY: plain socket(2) call; the result is checked.
    let raw = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            i32::from(proto),
        )
    };
    if raw < 0 {
        return Err(os_err("socket(AF_PACKET)", name));
    }
    // SAFETY: `raw` is a freshly created, owned descriptor.
    Ok((unsafe { OwnedFd::from_raw_fd(raw) }, ifindex))
}

/// Bind a [`packet_socket`] to interface `ifindex` (`name` for errors),
/// make the interface promiscuous for it, and ask the kernel not to loop
/// back the frames this host sends (best effort: Linux ≥ 4.20; the drivers
/// check the packet type as well).
pub(crate) fn bind_promiscuous(fd: &OwnedFd, ifindex: u32, name: &str) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; zero is a valid initial value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll and its size is passed.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(os_err("bind", name));
    }
    // SAFETY: packet_mreq is plain data.
    let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
    mreq.mr_ifindex = ifindex as i32;
    mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
    setsockopt(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
        .map_err(|_| os_err("PACKET_ADD_MEMBERSHIP", name))?;
    let _ = setsockopt(
        fd,
        libc::SOL_PACKET,
        PACKET_IGNORE_OUTGOING,
        &1 as &libc::c_int,
    );
    Ok(())
}

/// Run `open` on a short-lived thread that has entered the network
/// namespace at `netns` (e.g. `/var/run/netns/blue`, as `ip netns add`
/// creates): a socket it opens stays in that namespace, and the calling
/// thread does not move.
pub fn in_netns<T: Send + 'static>(
    netns: &Path,
    open: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    let netns = netns.to_owned();
    thread::Builder::new()
        .name("netns-open".into())
        .spawn(move || -> io::Result<T> {
            let f = File::open(&netns)?;
            rustix::thread::move_into_link_name_space(
                std::os::fd::AsFd::as_fd(&f),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .map_err(|e| {
                let e = io::Error::from(e);
                io::Error::new(e.kind(), format!("setns on {}: {e}", netns.display()))
            })?;
            open()
        })?
        .join()
        .map_err(|_| io::Error::other("the namespace thread panicked"))?
}

/// Make `cmd` enter the network namespace at `netns` and start a new
/// session (so a terminal's Ctrl-C does not reach it), between fork and
/// exec.
pub fn command_in_netns<'c>(
    cmd: &'c mut std::process::Command,
    netns: &Path,
) -> io::Result<&'c mut std::process::Command> {
    use std::os::unix::process::CommandExt as _;
    let f = File::open(netns)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", netns.display())))?;
    // SAFETY: the closure runs in the forked child before exec and only
    // makes async-signal-safe system calls (setns, setsid) on a descriptor
    // that stays open until the child has been spawned (the `File` is moved
    // into the closure, which the Command keeps alive).
    unsafe {
        cmd.pre_exec(move || {
            rustix::thread::move_into_link_name_space(
                std::os::fd::AsFd::as_fd(&f),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )?;
            // Fails only for a process group leader, which a fresh child is not.
            let _ = rustix::process::setsid();
            Ok(())
        });
    }
    Ok(cmd)
}

/// Whether this process runs as root (needed for namespaces).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A signal [`send_signal`] sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sig {
    /// SIGTERM: stop.
    Term,
    /// SIGKILL: stop now.
    Kill,
    /// SIGUSR1: the switch rewrites its `--stats-json`.
    Usr1,
}

/// Send `sig` to process `pid`; whether it was delivered.
pub fn send_signal(pid: u32, sig: Sig) -> bool {
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    let s = match sig {
        Sig::Term => rustix::process::Signal::TERM,
        Sig::Kill => rustix::process::Signal::KILL,
        Sig::Usr1 => rustix::process::Signal::USR1,
    };
    rustix::process::kill_process(p, s).is_ok()
}

/// Turn off transmit checksum offload on `iface` inside the namespace at
/// `netns` (what `ethtool -K IFACE tx off` does, through `SIOCETHTOOL`).
pub fn disable_tx_checksum(netns: &Path, iface: &str) -> io::Result<()> {
    const SIOCETHTOOL: libc::c_ulong = 0x8946;
    const ETHTOOL_STXCSUM: u32 = 0x17;
    #[repr(C)]
    struct EthtoolValue {
        cmd: u32,
        data: u32,
    }
    #[repr(C)]
    struct IfreqData {
        name: [libc::c_char; libc::IFNAMSIZ],
        data: *mut EthtoolValue,
        _pad: [u8; 16],
    }
    let name = iface.to_owned();
    in_netns(netns, move || {
        let fd = rustix::net::socket(
            rustix::net::AddressFamily::INET,
            rustix::net::SocketType::DGRAM,
            None,
        )?;
        let mut val = EthtoolValue {
            cmd: ETHTOOL_STXCSUM,
            data: 0,
        };
        let mut req = IfreqData {
            name: [0; libc::IFNAMSIZ],
            data: &mut val,
            _pad: [0; 16],
        };
        for (d, s) in req
            .name
            .iter_mut()
            .zip(name.bytes().take(libc::IFNAMSIZ - 1))
        {
            *d = s as libc::c_char;
        }
        // SAFETY: an ifreq whose ifr_data points to a live ethtool_value,
        // on a socket we own.
        if unsafe { libc::ioctl(fd.as_raw_fd(), SIOCETHTOOL as _, &mut req) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    })
}

/// The page size.
pub(crate) fn page_size() -> usize {
    rustix::param::page_size()
}

/// Set by the SIGINT/SIGTERM handler of [`stop_on_signals`].
static SIGNALLED: AtomicBool = AtomicBool::new(false);
/// Set by the SIGUSR1 handler of [`dump_on_sigusr1`].
static DUMP_SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    SIGNALLED.store(true, Ordering::SeqCst);
}

extern "C" fn on_dump_signal(_sig: libc::c_int) {
    DUMP_SIGNALLED.store(true, Ordering::SeqCst);
}

/// Raise `flag` each time the process gets SIGUSR1 (installs a handler and
/// a small watcher thread). Pass the flag as [`LiveOptions::dump`](crate::drivers::live::LiveOptions::dump) so the
/// driver calls its hook (e.g. to write counters to a file) while running.
pub fn dump_on_sigusr1(flag: Arc<AtomicBool>) -> io::Result<()> {
    // SAFETY: sigaction with a handler that only stores to an atomic
    // (async-signal-safe); `sa` is fully initialised.
    let rc = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_dump_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    thread::Builder::new()
        .name("sigusr1".into())
        .spawn(move || loop {
            if DUMP_SIGNALLED.swap(false, Ordering::SeqCst) {
                flag.store(true, Ordering::SeqCst);
            }
            thread::sleep(Duration::from_millis(10));
        })?;
    Ok(())
}

/// Raise `stop` when the process gets SIGINT or SIGTERM (installs
/// process-wide handlers and a small watcher thread). For CLIs.
pub fn stop_on_signals(stop: Arc<AtomicBool>) -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction with a handler that only stores to an atomic
        // (async-signal-safe); `sa` is fully initialised.
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            while !SIGNALLED.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(20));
            }
            stop.store(true, Ordering::SeqCst);
        })?;
    Ok(())
}
