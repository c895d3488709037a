//! Spawn plumbing for a server: its stdin and stdout as pipes or socketpairs (close-on-exec,
//! so only the child's copies reach it), and the process group or session it starts in.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use nix::fcntl::OFlag;

use crate::model::{GroupKind, StdioKind};

/// A pipe whose ends are closed on exec: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(OFlag::O_CLOEXEC)?)
}

/// A server's stdin and stdout: the child's ends, for `Command`, and ours.
pub struct StdioEnds {
    pub child_in: Stdio,
    /// `None` when its stdin is `/dev/null`.
    pub ours_in: Option<File>,
    pub child_out: Stdio,
    pub ours_out: File,
}

/// The stdin and stdout ends as `kind` says; stdin is `/dev/null` when `stdin_null`.
pub fn stdio_ends(kind: StdioKind, stdin_null: bool) -> io::Result<StdioEnds> {
    match kind {
        StdioKind::Pipes => {
            let (out_r, out_w) = pipe()?;
            let (child_in, ours_in) = if stdin_null {
                (Stdio::null(), None)
            } else {
                let (r, w) = pipe()?;
                (Stdio::from(r), Some(File::from(w)))
            };
            Ok(StdioEnds {
                child_in,
                ours_in,
                child_out: Stdio::from(out_w),
                ours_out: File::from(out_r),
            })
        }
        StdioKind::Socketpair => {
            let (ours_out, theirs_out) = UnixStream::pair()?;
            let (child_in, ours_in) = if stdin_null {
                (Stdio::null(), None)
            } else {
                let (ours, theirs) = UnixStream::pair()?;
                (
                    Stdio::from(OwnedFd::from(theirs)),
                    Some(File::from(OwnedFd::from(ours))),
                )
            };
            Ok(StdioEnds {
                child_in,
                ours_in,
                child_out: Stdio::from(OwnedFd::from(theirs_out)),
                ours_out: File::from(OwnedFd::from(ours_out)),
            })
        }
    }
}

/// Starts `cmd`'s process in the group `group` says: the parent's (`Host`), a group of its
/// own (`Own`), or a session of its own (`Session`, setsid between fork and exec).
pub fn in_group(cmd: &mut Command, group: GroupKind) {
    match group {
        GroupKind::Host => {}
        GroupKind::Own => {
            cmd.process_group(0);
        }
        GroupKind::Session => {
            // SAFETY: setsid is async-signal-safe, and the closure touches nothing else
            // between fork and exec.
            unsafe {
                cmd.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(io::Error::from));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// What is written to our stdin end comes back on our stdout end through `cat`, started
    /// in a group of its own.
    #[test]
    fn both_kinds_carry_a_childs_stdio() {
        for kind in [StdioKind::Pipes, StdioKind::Socketpair] {
            let ends = stdio_ends(kind, false).unwrap();
            let mut cmd = Command::new("cat");
            cmd.stdin(ends.child_in).stdout(ends.child_out);
            in_group(&mut cmd, GroupKind::Own);
            let mut child = cmd.spawn().unwrap();
            drop(cmd);
            let pgid = nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(child.id() as i32)));
            assert_eq!(pgid.unwrap().as_raw(), child.id() as i32, "{kind:?}");
            let mut ours_in = ends.ours_in.unwrap();
            ours_in.write_all(b"hi").unwrap();
            drop(ours_in);
            let mut got = String::new();
            let mut ours_out = ends.ours_out;
            ours_out.read_to_string(&mut got).unwrap();
            assert_eq!(got, "hi", "{kind:?}");
            child.wait().unwrap();
            assert!(stdio_ends(kind, true).unwrap().ours_in.is_none());
        }
    }
}
