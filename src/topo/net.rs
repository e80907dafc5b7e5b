//! The commands behind `topo up`/`down`: network namespaces and veths
//! through iproute2's `ip`, processes started inside a namespace, and
//! process identity from `/proc` (pid + start time, so a recycled pid is
//! never signalled). The system calls themselves are the live drivers'
//! (`netsparse_bmv2::drivers`, one place for all of them).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use netsparse_bmv2::drivers::Sig;

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
    netsparse_bmv2::drivers::is_root()
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
    netsparse_bmv2::drivers::command_in_netns(cmd, &path).map_err(|e| TopoError::Io {
        path: path.clone(),
        detail: e.to_string(),
    })
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
    netsparse_bmv2::drivers::disable_tx_checksum(&netns_path(netns), iface).map_err(|e| {
        TopoError::Command {
            command: format!("(in {netns}) ethtool -K {iface} tx off"),
            detail: e.to_string(),
        }
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
pub fn signal(pid: u32, start: u64, sig: Sig) -> bool {
    same_process(pid, start) && netsparse_bmv2::drivers::send_signal(pid, sig)
}

/// Stop a process: SIGTERM, wait up to `grace`, then SIGKILL. Returns
/// whether it is gone. `child` reaps it if we are its parent.
pub fn stop_process(pid: u32, start: u64, grace: Duration, child: Option<&mut Child>) -> bool {
    if !signal(pid, start, Sig::Term) {
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
    signal(pid, start, Sig::Kill);
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
