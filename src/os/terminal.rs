//! Pseudo-terminals for the terminal endings: a terminal the harness can hang up or type
//! Ctrl-C into, a session that has it as its controlling terminal, and a foreground job.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::fcntl::{fcntl, FcntlArg, FdFlag};
use nix::unistd::{getpgrp, setsid, tcgetpgrp, tcsetpgrp, Pid};

/// A new pseudo-terminal: (master, slave, the slave's path). Neither end is inherited by
/// children: openpty(3) does not set close-on-exec, and a master held by the client (and so
/// by the server) would keep the terminal up after the harness drops its own.
pub fn open() -> std::io::Result<(OwnedFd, OwnedFd, PathBuf)> {
    let pty = nix::pty::openpty(None, None)?;
    for fd in [&pty.master, &pty.slave] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    }
    let path = nix::unistd::ttyname(&pty.slave)?;
    Ok((pty.master, pty.slave, path))
}

/// Types into the terminal (`\x03` is Ctrl-C: the line discipline sends SIGINT to the
/// foreground group).
pub fn type_into(master: &OwnedFd, bytes: &[u8]) {
    let _ = nix::unistd::write(master, bytes);
}

/// Leads a new session whose controlling terminal is `tty`, as a terminal's shell does;
/// the returned file keeps the terminal open.
pub fn lead_session_on(tty: &Path) -> std::io::Result<File> {
    setsid()?;
    // A session leader that opens a terminal without O_NOCTTY acquires it as its controlling
    // terminal, and its group becomes the terminal's foreground group.
    std::fs::OpenOptions::new().read(true).write(true).open(tty)
}

/// Makes `pgid` the terminal's foreground group (what a shell does for the job it starts).
pub fn give_foreground(tty: &File, pgid: u32) -> std::io::Result<()> {
    let pgid = Pid::from_raw(pgid as i32);
    // The job may not have made its group yet: make it (EACCES once it has exec'd: then
    // it made the group itself).
    let _ = nix::unistd::setpgid(pgid, pgid);
    tcsetpgrp(tty.as_fd(), pgid)?;
    Ok(())
}

/// Waits (at most `limit`) until this process's group is `tty`'s foreground group.
pub fn await_foreground(tty: &Path, limit: Duration) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(tty)?;
    let deadline = Instant::now() + limit;
    while tcgetpgrp(f.as_fd())? != getpgrp() {
        if Instant::now() >= deadline {
            return Err(std::io::Error::other("never became the foreground job"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// Survives Ctrl-C with a handler that does nothing (unlike SIG_IGN, a handler is reset
/// at exec, so the server the job launches gets the default action).
pub fn survive_interrupts() -> std::io::Result<()> {
    signal_hook::flag::register(
        signal_hook::consts::SIGINT,
        Arc::new(AtomicBool::new(false)),
    )
    .map(|_| ())
}
