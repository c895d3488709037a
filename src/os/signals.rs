//! Signals to pids and groups, the subreaper, and the parent-death signal.

use std::io;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use crate::model::SignalName;

pub(crate) fn to_nix(sig: SignalName) -> Signal {
    // Only named signals are ever sent; an unknown number falls back to SIGTERM.
    Signal::try_from(sig.raw()).unwrap_or(Signal::SIGTERM)
}

/// Sends a signal to a whole process group.
pub fn signal_group(pgid: i32, sig: SignalName) -> io::Result<()> {
    if pgid <= 0 {
        return Ok(());
    }
    match killpg(Pid::from_raw(pgid), to_nix(sig)) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Sends a signal to the process group `pid` is in. When that is this process's own group (a
/// server launched in its host's group), every member but this process is signalled one by
/// one: the harness must not stop itself.
pub fn signal_group_of(pid: i32, sig: SignalName) {
    let pgid = nix::unistd::getpgid(Some(Pid::from_raw(pid))).map_or(pid, |g| g.as_raw());
    let me = nix::unistd::getpgrp().as_raw();
    if pgid != me {
        let _ = signal_group(pgid, sig);
        return;
    }
    for p in super::procfs::group_members(pgid) {
        if p != super::procfs::own_pid() {
            signal_pid(p, sig);
        }
    }
}

/// Sends a signal to one pid (used for descendants found in `/proc`, which have no pidfd).
pub fn signal_pid(pid: i32, sig: SignalName) {
    if pid > 0 {
        let _ = kill(Pid::from_raw(pid), to_nix(sig));
    }
}

/// Orphaned descendants of this process are reparented to it rather than to init, so they
/// stay observable and killable. Process-wide.
pub fn become_subreaper() -> io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)?;
    Ok(())
}

/// Makes the kernel send `sig` to this process when its parent *thread* dies.
pub fn die_with_parent(sig: SignalName) -> io::Result<()> {
    nix::sys::prctl::set_pdeathsig(to_nix(sig))?;
    Ok(())
}
