//! Process handling for installs (the SDK kits' steps, registry CLIs, the census's npx and
//! uvx installs): commands run to completion with their output captured or logged, a whole
//! process group stopped at a deadline, exclusive file locks and symlinks. The callers decide
//! what to run and what an outcome means; this file only touches the OS. Every command runs in
//! a process group of its own that the process's interrupt kills ([`super::interrupt`]).

use std::ffi::OsStr;
use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;

/// What a finished command printed, and how it ended.
#[derive(Debug)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// Empty when stderr was merged into stdout.
    pub stderr: Vec<u8>,
}

/// Where a command's stderr goes when its output is captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stderr {
    /// Into stdout, interleaved as written (one log of what the step said).
    Merged,
    /// Captured on its own.
    Separate,
}

/// Runs `program` in `dir` with `env` added, stdin empty, until it exits; its output
/// captured. A non-zero exit is a [`Captured`] too: only a failure to start is an error.
pub fn run_captured<K, V>(
    program: &OsStr,
    args: &[String],
    dir: &Path,
    env: impl IntoIterator<Item = (K, V)>,
    stderr: Stderr,
) -> std::io::Result<Captured>
where
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    match stderr {
        Stderr::Merged => {
            // One pipe for both, so the order of lines is the order they were written.
            let (reader, writer) = std::io::pipe()?;
            cmd.stdout(writer.try_clone()?).stderr(writer);
            let (mut child, _tracked) = spawn_tracked(&mut cmd)?;
            // The parent's copies of the write end must go, or the read never ends.
            drop(cmd);
            let mut stdout = Vec::new();
            std::io::Read::read_to_end(&mut { reader }, &mut stdout)?;
            let status = child.wait()?;
            Ok(Captured {
                status,
                stdout,
                stderr: Vec::new(),
            })
        }
        Stderr::Separate => {
            let (child, _tracked) = spawn_tracked(cmd.stderr(Stdio::piped()))?;
            let out = child.wait_with_output()?;
            Ok(Captured {
                status: out.status,
                stdout: out.stdout,
                stderr: out.stderr,
            })
        }
    }
}

/// Spawns `cmd` in a process group of its own, killed as a whole on the process's interrupt;
/// after the interrupt nothing starts (an `Interrupted` error).
fn spawn_tracked(cmd: &mut Command) -> std::io::Result<(Child, super::interrupt::Tracked)> {
    // Whatever process spawns it (the CLI, or the suite in-process under `cargo test`), a
    // signal to that process must take the group with it: its own group is not the
    // terminal's, so Ctrl-C or a SIGTERM to the test binary alone would leave it running.
    super::interrupt::install();
    if super::interrupt::requested() {
        return Err(super::interrupt::refused());
    }
    let child = cmd.process_group(0).spawn()?;
    let tracked = super::interrupt::track_group(child.id());
    Ok((child, tracked))
}

/// Runs `program` in its own process group with stdout and stderr appended to `log`; at
/// `timeout` the whole group (the install's sh, node-gyp, ...) is killed. `None`: timed out.
pub fn run_logged<K, V>(
    program: &str,
    args: &[String],
    dir: &Path,
    env: impl IntoIterator<Item = (K, V)>,
    log: &File,
    timeout: Duration,
) -> std::io::Result<Option<ExitStatus>>
where
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    let (mut child, _tracked) = spawn_tracked(
        Command::new(program)
            .args(args)
            .envs(env)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log.try_clone()?),
    )?;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            // The group id is the child's pid (process_group(0)); it cannot be reused while
            // the child is unreaped.
            if let Ok(pid) = i32::try_from(child.id()) {
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The bytes an unprivileged writer can still put on the filesystem holding `path` (none
/// known: the path cannot be read).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(path).ok()?;
    Some((s.blocks_available() as u64).saturating_mul(s.fragment_size() as u64))
}

/// Creates `link` pointing at `target` (copies of checkouts keep their links as links).
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_output_keeps_both_streams_and_the_status() {
        let args = vec![
            "-c".to_string(),
            "echo out; echo err >&2; exit 3".to_string(),
        ];
        let c = run_captured(
            OsStr::new("sh"),
            &args,
            Path::new("/"),
            [("A", "1")],
            Stderr::Merged,
        )
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&c.stdout), "out\nerr\n");
        assert_eq!(c.status.code(), Some(3));
        let c = run_captured(
            OsStr::new("sh"),
            &args,
            Path::new("/"),
            [("A", "1")],
            Stderr::Separate,
        )
        .unwrap();
        assert_eq!(
            (c.stdout.as_slice(), c.stderr.as_slice()),
            (&b"out\n"[..], &b"err\n"[..])
        );
        assert!(run_captured(
            OsStr::new("/no/such/program"),
            &[],
            Path::new("/"),
            [("A", "1")],
            Stderr::Merged
        )
        .is_err());
    }

    #[test]
    fn a_timeout_stops_the_whole_group() {
        let d = tempfile::tempdir().unwrap();
        let log = File::create(d.path().join("log")).unwrap();
        // The grandchild would write the marker after the deadline if it survived.
        let args = vec![
            "-c".to_string(),
            "(sleep 2; touch marker) & sleep 30".to_string(),
        ];
        let env: [(&str, &str); 0] = [];
        let out = run_logged("sh", &args, d.path(), env, &log, Duration::from_millis(200)).unwrap();
        assert!(out.is_none());
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!d.path().join("marker").exists(), "a group member survived");
    }
}
