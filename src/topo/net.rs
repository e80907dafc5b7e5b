//! The system calls and commands behind `topo up`/`down`: network
//! namespaces and veths through iproute2's `ip`, processes started inside a
//! namespace with `setns(2)`, and process identity from `/proc` (pid +
//! start time, so a recycled pid is never signalled).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::TopoError;

/// Where `ip netns add` puts namespace handles.
pub const NETNS_DIR: &str = "/var/run/netns";

/// The handle file of namespace `name`.
pub fn netns_path(name: &str) -> PathBuf {
    Path::new(NETNS_DIR).join(name)
}

/// Whether namespace `name` exists.
pub fn netns_exists(name: &str) -> bool {
    netns_path(name).exists()
}

/// Whether an interface `name` exists in this process's namespace.
pub fn iface_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

/// Run `ip ARGS`; an error carries the command and its stderr.
pub fn ip(args: &[&str]) -> Result<(), TopoError> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| TopoError::Command {
            command: format!("ip {}", args.join(" ")),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(TopoError::Command {
            command: format!("ip {}", args.join(" ")),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

/// Whether `ip` (iproute2) can be run.
pub fn have_ip() -> bool {
    Command::new("ip")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this process runs as root (needed for namespaces).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Run `sh -c SCRIPT` inside namespace `netns` with extra environment.
pub fn sh_in(netns: &str, script: &str, env: &[(&str, &str)]) -> Result<(), TopoError> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = in_netns(&mut cmd, netns)?
        .output()
        .map_err(|e| TopoError::Command {
            command: format!("(in {netns}) sh -c {script:?}"),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(TopoError::Command {
            command: format!("(in {netns}) sh -c {script:?}"),
            detail: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        })
    }
}

/// Make `cmd` enter namespace `netns` (and start a new session, so a
/// terminal's Ctrl-C does not reach it) between fork and exec.
pub fn in_netns<'c>(cmd: &'c mut Command, netns: &str) -> Result<&'c mut Command, TopoError> {
    let path = netns_path(netns);
    let f = File::open(&path).map_err(|e| TopoError::Io {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    let fd = f.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and only
    // makes async-signal-safe system calls (setns, setsid) on a descriptor
    // that stays open in the parent until the child has been spawned (the
    // `File` is moved into the closure, which the Command keeps alive).
    unsafe {
        cmd.pre_exec(move || {
            let _keep = &f;
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::setsid();
            Ok(())
        });
    }
    Ok(cmd)
}

/// Turn off transmit checksum offload on `iface` inside `netns` (what
/// `ethtool -K IFACE tx off` does, through the `SIOCETHTOOL` ioctl).
///
/// A host's kernel leaves the UDP/TCP checksum of its packets to the
/// "hardware" when the veth offers offload; a software switch reading the
/// frame from a packet socket would then forward an incomplete checksum and
/// the receiving host would drop the datagram. The p4lang tutorials do the
/// same with ethtool.
pub fn disable_tx_checksum(netns: &str, iface: &str) -> Result<(), TopoError> {
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
    let path = netns_path(netns);
    let name = iface.to_owned();
    let what = format!("(in {netns}) ethtool -K {iface} tx off");
    let r = std::thread::spawn(move || -> std::io::Result<()> {
        let f = File::open(&path)?;
        // SAFETY: setns on a valid namespace fd; only this thread moves.
        if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: plain socket(2), checked.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fresh descriptor we own.
        let fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
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
        // SAFETY: an ifreq whose ifr_data points to a live ethtool_value.
        if unsafe { libc::ioctl(fd.as_raw_fd(), SIOCETHTOOL as _, &mut req) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    })
    .join()
    .map_err(|_| TopoError::Command {
        command: what.clone(),
        detail: "the namespace thread panicked".into(),
    })?;
    r.map_err(|e| TopoError::Command {
        command: what,
        detail: e.to_string(),
    })
}

/// A process's start time (field 22 of `/proc/PID/stat`, clock ticks since
/// boot), or `None` if there is no such process.
pub fn start_time(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &s[s.rfind(')')? + 1..];
    // Fields from 3 on; the start time is field 22 → index 19 here.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `pid` is alive and still the process that started at `start`.
pub fn same_process(pid: u32, start: u64) -> bool {
    start_time(pid) == Some(start) && !is_zombie(pid)
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|st| st == "Z")
        })
        .unwrap_or(true)
}

/// Pids of the processes whose network namespace is `netns`, in order.
pub fn pids_in_netns(netns: &str) -> Vec<u32> {
    let Ok(target) = std::fs::metadata(netns_path(netns)) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return v;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(m) = std::fs::metadata(format!("/proc/{pid}/ns/net")) {
            if m.dev() == target.dev() && m.ino() == target.ino() {
                v.push(pid);
            }
        }
    }
    v.sort_unstable();
    v
}

/// Send `sig` to `pid` if it is still the process started at `start`.
pub fn signal(pid: u32, start: u64, sig: libc::c_int) -> bool {
    if !same_process(pid, start) {
        return false;
    }
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) with a checked pid.
    unsafe { libc::kill(p, sig) == 0 }
}

/// Stop a process: SIGTERM, wait up to `grace`, then SIGKILL. Returns
/// whether it is gone. `child` reaps it if we are its parent.
pub fn stop_process(pid: u32, start: u64, grace: Duration, child: Option<&mut Child>) -> bool {
    if !signal(pid, start, libc::SIGTERM) {
        if let Some(c) = child {
            let _ = c.try_wait();
        }
        return true;
    }
    let end = Instant::now() + grace;
    let mut child = child;
    loop {
        if let Some(c) = child.as_deref_mut() {
            if matches!(c.try_wait(), Ok(Some(_))) {
                return true;
            }
        }
        if !same_process(pid, start) {
            return true;
        }
        if Instant::now() >= end {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(pid, start, libc::SIGKILL);
    if let Some(c) = child {
        let _ = c.wait();
        return true;
    }
    let end = Instant::now() + Duration::from_secs(2);
    while same_process(pid, start) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    !same_process(pid, start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_start_time_is_stable() {
        let me = std::process::id();
        let a = start_time(me).unwrap();
        assert_eq!(start_time(me), Some(a));
        assert!(same_process(me, a));
        assert!(!same_process(me, a + 1));
        assert_eq!(start_time(u32::MAX), None);
    }
}
