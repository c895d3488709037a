//! A race-free handle on one process. nix has no pidfd calls, so opening one and signalling
//! through it use rustix; waiting and reaping use nix.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};

use super::clock::mono_ns;
use super::sched::realtime_this_thread;
use super::signals::to_nix;
use crate::model::{ExitStatus, SignalName};

/// It cannot be confused with a later process that reuses the pid, and it becomes readable
/// the moment the process exits.
#[derive(Debug)]
pub struct Pidfd {
    pid: i32,
    fd: OwnedFd,
}

fn poll_in(fd: &OwnedFd, timeout: Duration) -> nix::Result<bool> {
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    let ms = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
    poll(&mut fds, ms).map(|n| n > 0)
}

impl Pidfd {
    pub fn open(pid: u32) -> io::Result<Self> {
        let raw = i32::try_from(pid).map_err(|_| io::Error::other("pid out of range"))?;
        let p = rustix::process::Pid::from_raw(raw).ok_or_else(|| io::Error::other("pid 0"))?;
        let fd = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty())?;
        Ok(Self { pid: raw, fd })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Waits up to `timeout` for the process to exit. Returns the [`mono_ns`] time at which
    /// the kernel reported the exit, or `None` if it is still running.
    pub fn wait_exit(&self, timeout: Duration) -> io::Result<Option<u64>> {
        let deadline = mono_ns() + timeout.as_nanos() as u64;
        loop {
            let left = Duration::from_nanos(deadline.saturating_sub(mono_ns()));
            match poll_in(&self.fd, left) {
                Ok(true) => return Ok(Some(mono_ns())),
                Ok(false) if left.is_zero() => return Ok(None),
                Ok(false) | Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Starts a thread that does nothing but block on this pidfd and stamp the exit the
    /// moment the kernel reports it: the exit time then does not depend on what the caller
    /// is busy with. The thread runs in the real-time class and ends when the process exits.
    /// Returns once the thread is running, so start it *before* the trigger: a thread still
    /// being created when the exit lands would stamp it late, by as long as a loaded machine
    /// takes to schedule it.
    pub fn watch(&self) -> io::Result<std::sync::mpsc::Receiver<u64>> {
        let fd = self.fd.try_clone()?;
        let (tx, rx) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            realtime_this_thread();
            let _ = ready_tx.send(());
            loop {
                match poll_in(&fd, Duration::MAX) {
                    Ok(true) => {
                        let _ = tx.send(mono_ns());
                        return;
                    }
                    Ok(false) | Err(nix::errno::Errno::EINTR) => continue,
                    Err(_) => return,
                }
            }
        });
        ready_rx
            .recv()
            .map_err(|_| io::Error::other("the exit watcher thread did not start"))?;
        Ok(rx)
    }

    pub fn has_exited(&self) -> bool {
        matches!(self.wait_exit(Duration::ZERO), Ok(Some(_)))
    }

    /// Sends a signal to exactly this process (not a reused pid).
    pub fn signal(&self, sig: SignalName) -> io::Result<()> {
        let sig = rustix::process::Signal::from_named_raw(to_nix(sig) as i32)
            .unwrap_or(rustix::process::Signal::TERM);
        match rustix::process::pidfd_send_signal(self.fd.as_fd(), sig) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Reaps the process once it has exited; only works for our own children (which orphans
    /// become, since the supervisor is a subreaper). `None` if it is not ours or still running.
    pub fn reap(&self) -> Option<ExitStatus> {
        match waitid(
            Id::PIDFd(self.fd.as_fd()),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG,
        )
        .ok()?
        {
            WaitStatus::Exited(_, code) => Some(ExitStatus::Code(code)),
            WaitStatus::Signaled(_, sig, _) => {
                Some(ExitStatus::Signal(SignalName::from_raw(sig as i32)))
            }
            _ => None,
        }
    }
}
