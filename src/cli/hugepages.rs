//! Transparent huge pages for the memory-heavy sub-commands (`sim`,
//! `paper`, `bench`, `demo`, `matrix`): before any work, the process runs
//! itself again with glibc's `glibc.malloc.hugetlb=1` tunable, which makes
//! the allocator ask the kernel for 2 MiB pages for its heap and large
//! blocks.
//!
//! The simulator is bound by memory latency: per PR it touches an Idx
//! Filter bit, a Pending PR Table slot, a Property Cache line and the
//! verification tables, each at a random place in arrays spread over
//! hundreds of per-node allocations. With 4 KiB pages nearly every such
//! touch also walks the page tables. Measured on the 2-core VM
//! (2026-11-27): full-size `paper:arabic` 32.1 → 28.3 s of event loop and
//! 12.3 → 9.7 s of generation, peak 3.39 → 3.51 GiB; R-MAT scale 20
//! 22.0–25.8 → 18.4–19.1 s, peak 0.45 → 0.63 GiB (a huge page is resident
//! as a whole once touched, which costs most where arrays are small).
//! Advising only the allocations of 4 MiB and more gained nothing: the
//! hot data is in many smaller per-node tables, which only the
//! allocator's own placement puts in huge pages.
//!
//! Nothing happens where it cannot help or is not wanted: a build for
//! another C library, transparent huge pages off
//! (`/sys/kernel/mm/transparent_hugepage/enabled` is `[never]`), a
//! `GLIBC_TUNABLES` that already names the tunable (so the second process
//! never runs a third), `NETSPARSE_HUGEPAGES=0`, or an `exec` that fails
//! (the process then goes on as it is). Results do not depend on it.

use std::ffi::{OsStr, OsString};

/// The glibc tunable that turns huge pages on for `malloc`.
const TUNABLE: &str = "glibc.malloc.hugetlb";

/// `GLIBC_TUNABLES` with the huge-page tunable added, or `None` when the
/// current value already sets it (to anything: the user's choice wins).
pub fn with_hugetlb(current: Option<&OsStr>) -> Option<OsString> {
    match current.filter(|v| !v.is_empty()) {
        None => Some(OsString::from(format!("{TUNABLE}=1"))),
        Some(v) => {
            let text = v.to_string_lossy();
            if text
                .split(':')
                .any(|t| t.split('=').next() == Some(TUNABLE))
            {
                return None;
            }
            let mut out = v.to_os_string();
            out.push(format!(":{TUNABLE}=1"));
            Some(out)
        }
    }
}

/// Whether the kernel's transparent huge pages are on (`always` or
/// `madvise`), from the contents of its `enabled` file.
pub fn thp_enabled(sysfs: &str) -> bool {
    sysfs.contains("[always]") || sysfs.contains("[madvise]")
}

/// Run this process again with huge pages on, if it can help (see the
/// module's documentation). Returns only when it does not.
pub fn reexec() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return;
    }
    if std::env::var_os("NETSPARSE_HUGEPAGES").is_some_and(|v| v == "0") {
        return;
    }
    let Some(tunables) = with_hugetlb(std::env::var_os("GLIBC_TUNABLES").as_deref()) else {
        return;
    };
    let on = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|s| thp_enabled(&s));
    if !on {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    // Only returns on failure; then this process simply goes on.
    let _ = cmd.args(args).env("GLIBC_TUNABLES", tunables).exec();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tunable_is_added_once_and_a_users_choice_is_kept() {
        assert_eq!(
            with_hugetlb(None),
            Some(OsString::from("glibc.malloc.hugetlb=1"))
        );
        assert_eq!(
            with_hugetlb(Some(OsStr::new(""))),
            Some(OsString::from("glibc.malloc.hugetlb=1"))
        );
        assert_eq!(
            with_hugetlb(Some(OsStr::new("glibc.malloc.arena_max=2"))),
            Some(OsString::from(
                "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
            ))
        );
        // Already set, on or off: nothing to do (and no loop).
        assert_eq!(
            with_hugetlb(Some(OsStr::new("glibc.malloc.hugetlb=1"))),
            None
        );
        assert_eq!(
            with_hugetlb(Some(OsStr::new(
                "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0"
            ))),
            None
        );
        // A longer name that merely starts the same is another tunable.
        assert!(with_hugetlb(Some(OsStr::new("glibc.malloc.hugetlbx=1"))).is_some());
    }

    #[test]
    fn thp_state_is_read_from_the_selected_word() {
        assert!(thp_enabled("always [madvise] never\n"));
        assert!(thp_enabled("[always] madvise never\n"));
        assert!(!thp_enabled("always madvise [never]\n"));
        assert!(!thp_enabled(""));
    }
}
