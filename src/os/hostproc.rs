//! A real host process for `host measure`: spawned in a pseudo-terminal of its own (as a
//! terminal's shell would start it: session leader, the pty as controlling terminal), in a
//! tmux pane (a real terminal emulator, for a TUI that waits on answers a bare pty does not
//! give), or with plain pipes for its one-shot commands; typed into, hung up, signalled,
//! watched by pidfd, and every process it left behind found by an environment marker and
//! killed.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::pidfd::Pidfd;
use super::procfs;

/// The environment variable every process of one measurement inherits.
pub const MARKER_ENV: &str = "MCP_SHUTDOWN_HOST_RUN";

/// How the host is started.
pub struct HostLaunch<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, OsString>,
    pub cwd: &'a Path,
    pub marker: &'a str,
    pub terminal: Terminal,
}

/// Where the host runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// stdin closed, output kept (a one-shot command).
    None,
    /// A pseudo-terminal of its own that answers the cursor-position and device-attribute
    /// queries.
    Pty,
    /// A tmux pane: a terminal emulator that answers every query a TUI sends.
    Tmux,
}

/// A running host.
pub struct HostProc {
    /// The process spawned: the host itself, the shell that leads the terminal's session,
    /// or the tmux client that started the pane (and exited).
    child: Child,
    /// The host itself, or the shell that leads its terminal's session.
    shell: i32,
    /// The tmux server's socket name, when the host runs in a tmux pane.
    tmux: Option<String>,
    /// The tmux server's pid (the terminal, not the host's).
    tmux_pid: Option<i32>,
    host_pid: i32,
    pidfd: Option<Pidfd>,
    terminal: Option<std::sync::mpsc::Sender<TermCmd>>,
    screen: Arc<Mutex<Vec<u8>>>,
    marker: String,
    /// Processes of its marker its end leaves running: the daemons a next run adopts.
    spared: Vec<i32>,
}

/// The markers of the hosts running now: what an interrupt kills.
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<String>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Until dropped, the process's interrupt (SIGINT, SIGTERM, SIGHUP) kills every process of
/// every running host (they are in sessions of their own: a terminal's Ctrl-C never reaches
/// them) and the command exits `128 + signal` at once ([`super::interrupt`]).
pub struct InterruptGuard {
    _hook: super::interrupt::Hook,
}

pub fn kill_on_interrupt() -> InterruptGuard {
    InterruptGuard {
        _hook: super::interrupt::on_interrupt(|| {
            let markers = live().clone();
            for m in &markers {
                kill_all(m, &[]);
            }
            // At once: a measurement cut short must not be written as one.
            let sig = super::interrupt::signal().unwrap_or(libc::SIGINT);
            std::process::exit(super::interrupt::announce(sig).into());
        }),
    }
}

/// Spawns a host unless the interrupt came; one that came while it started is killed here
/// (the hook may have looked for its marker before the process existed).
fn spawn_unless_interrupted(cmd: &mut Command, marker: &str) -> std::io::Result<Child> {
    if super::interrupt::requested() {
        return Err(super::interrupt::refused());
    }
    let mut child = cmd.spawn()?;
    if super::interrupt::requested() {
        let _ = child.kill();
        kill_all(marker, &[]);
        let _ = child.wait();
        return Err(super::interrupt::refused());
    }
    Ok(child)
}

enum TermCmd {
    Write(Vec<u8>),
    Close,
}

fn winsize() -> libc::winsize {
    libc::winsize {
        ws_row: 40,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

impl HostProc {
    /// With `pty`, the host runs as a terminal's foreground job: a shell (`sh -c`) leads
    /// the session and has the terminal as its controlling terminal, and the host is its
    /// child, as when a user types the command. Closing the terminal then hangs up the
    /// shell and the foreground group; killing the host leaves the shell and terminal up.
    pub fn spawn(l: &HostLaunch) -> std::io::Result<Self> {
        // Known before it exists: an interrupt from here on kills it.
        live().push(l.marker.to_string());
        if l.terminal == Terminal::Tmux {
            return Self::spawn_tmux(l);
        }
        let pty = l.terminal == Terminal::Pty;
        let mut cmd = if pty {
            let mut c = Command::new("/bin/sh");
            // The shell stays after the host exits, as a user's shell returns to its prompt.
            c.arg("-c")
                .arg("\"$0\" \"$@\"; s=$?; sleep 30; exit $s")
                .arg(l.program);
            c
        } else {
            Command::new(l.program)
        };
        cmd.args(l.args)
            .env_clear()
            .envs(l.env)
            .env(MARKER_ENV, l.marker)
            .current_dir(l.cwd);
        if pty {
            return Self::in_pty(cmd, l);
        }
        // Its output is kept as its "screen": what a one-shot command printed says why it
        // stalled (a prompt for credentials, an error from the model API).
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe; a one-shot host gets a session of its own
        // (no controlling terminal), as under a CI runner.
        unsafe {
            cmd.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(Into::into));
        }
        let mut child = spawn_unless_interrupted(&mut cmd, l.marker)?;
        let host_pid = child.id() as i32;
        let screen = keep_output(&mut child);
        Ok(Self {
            child,
            shell: host_pid,
            tmux: None,
            tmux_pid: None,
            host_pid,
            pidfd: Pidfd::open(host_pid as u32).ok(),
            terminal: None,
            screen,
            marker: l.marker.to_string(),
            spared: Vec::new(),
        })
    }

    /// The process spawned (the terminal's shell, or the host itself).
    pub fn spawned_pid(&self) -> i32 {
        self.shell
    }

    /// The terminal's own processes (its shell, a tmux server): never the host's daemons.
    pub fn terminal_pids(&self) -> Vec<i32> {
        std::iter::once(self.shell).chain(self.tmux_pid).collect()
    }

    /// The host's pid (not the shell's).
    pub fn pid(&self) -> i32 {
        self.host_pid
    }

    /// Types into the terminal one byte at a time (a TUI that reads a burst as a paste
    /// would not run a command from it).
    pub fn type_slowly(&self, text: &[u8], gap: Duration) {
        if let Some(sock) = &self.tmux {
            for b in text {
                tmux(
                    sock,
                    &["send-keys", "-t", TMUX_SESSION, "-H", &format!("{b:02x}")],
                );
                std::thread::sleep(gap);
            }
        }
        if let Some(t) = &self.terminal {
            for b in text {
                let _ = t.send(TermCmd::Write(vec![*b]));
                std::thread::sleep(gap);
            }
        }
    }

    /// Closes the terminal (its master, the only one): the kernel hangs the session up.
    pub fn close_terminal(&mut self) {
        if let Some(sock) = self.tmux.take() {
            tmux(&sock, &["kill-server"]);
        }
        if let Some(t) = self.terminal.take() {
            let _ = t.send(TermCmd::Close);
        }
    }

    pub fn signal(&self, sig: crate::model::SignalName) {
        match &self.pidfd {
            Some(p) => {
                let _ = p.signal(sig);
            }
            None => crate::os::signals::signal_pid(self.host_pid, sig),
        }
    }

    /// The exit time (CLOCK_MONOTONIC ns) if it exits within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<u64> {
        let t = match &self.pidfd {
            Some(p) => p.wait_exit(limit).ok().flatten(),
            None => None,
        };
        let _ = self.child.try_wait();
        t
    }

    /// What the terminal showed (ANSI and all), for a one-line reason when it stalls.
    pub fn screen_text(&self) -> String {
        if let Some(sock) = &self.tmux {
            return tmux(sock, &["capture-pane", "-p", "-t", TMUX_SESSION]);
        }
        let bytes = self.screen.lock().map(|s| s.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// The tmux session the host runs in (one per server socket).
const TMUX_SESSION: &str = "host";

/// Runs one tmux command against the server at `sock`; its output.
fn tmux(sock: &str, args: &[&str]) -> String {
    Command::new("tmux")
        .args(["-L", sock])
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

impl HostProc {
    /// The host as its pseudo-terminal's foreground job: `cmd` (the shell) leads the
    /// session with the pty as its controlling terminal.
    fn in_pty(mut cmd: Command, l: &HostLaunch) -> std::io::Result<Self> {
        let ws = winsize();
        let pty = nix::pty::openpty(Some(&ws), None)?;
        let slave_fd = pty.slave.as_raw_fd();
        nix::fcntl::fcntl(
            &pty.master,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
        )?;
        let (a, b, c) = (
            pty.slave.try_clone()?,
            pty.slave.try_clone()?,
            pty.slave.try_clone()?,
        );
        cmd.stdin(Stdio::from(a))
            .stdout(Stdio::from(b))
            .stderr(Stdio::from(c));
        // SAFETY: setsid and ioctl(TIOCSCTTY) are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                nix::unistd::setsid()?;
                if libc::ioctl(slave_fd, libc::TIOCSCTTY as _, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = spawn_unless_interrupted(&mut cmd, l.marker)?;
        drop(pty.slave);
        let shell = child.id() as i32;
        let host_pid = find_child(shell, Duration::from_secs(5)).unwrap_or(shell);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let terminal = Some(run_terminal(pty.master, screen.clone()));
        Ok(Self {
            child,
            shell,
            tmux: None,
            tmux_pid: None,
            host_pid,
            pidfd: Pidfd::open(host_pid as u32).ok(),
            terminal,
            screen,
            marker: l.marker.to_string(),
            spared: Vec::new(),
        })
    }

    /// The host in a tmux pane of a server of its own (its socket named by the marker, its
    /// configuration empty but the terminal type, which stays the plain terminal's), the
    /// pane's shell as in [`HostProc::spawn`]'s pseudo-terminal.
    fn spawn_tmux(l: &HostLaunch) -> std::io::Result<Self> {
        let sock = format!("mcp-shutdown-{}", l.marker);
        let (cols, rows) = (winsize().ws_col.to_string(), winsize().ws_row.to_string());
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &sock, "-f", "/dev/null", "start-server", ";"])
            .args(["set", "-g", "default-terminal", "xterm-256color", ";"])
            .args([
                "new-session",
                "-d",
                "-s",
                TMUX_SESSION,
                "-x",
                &cols,
                "-y",
                &rows,
            ])
            .args([
                "--",
                "/bin/sh",
                "-c",
                "\"$0\" \"$@\"; s=$?; sleep 30; exit $s",
            ])
            .arg(l.program)
            .args(l.args)
            .env_clear()
            .envs(l.env)
            .env(MARKER_ENV, l.marker)
            .current_dir(l.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = spawn_unless_interrupted(&mut cmd, l.marker)?;
        let _ = child.wait();
        let pane = tmux(&sock, &["display", "-p", "-t", TMUX_SESSION, "#{pane_pid}"]);
        let shell: i32 = pane.trim().parse().map_err(|_| {
            std::io::Error::other(format!(
                "tmux started no pane (is tmux installed?): {pane:?}"
            ))
        })?;
        let host_pid = find_child(shell, Duration::from_secs(5)).unwrap_or(shell);
        let tmux_pid = tmux(&sock, &["display", "-p", "#{pid}"])
            .trim()
            .parse()
            .ok();
        Ok(Self {
            child,
            shell,
            tmux: Some(sock),
            tmux_pid,
            host_pid,
            pidfd: Pidfd::open(host_pid as u32).ok(),
            terminal: None,
            screen: Arc::new(Mutex::new(Vec::new())),
            marker: l.marker.to_string(),
            spared: Vec::new(),
        })
    }

    /// Leaves `pids` (the host's daemons) running when the host goes: the returned guard
    /// kills them, and whatever else carries the marker then, when it is dropped (or at an
    /// interrupt, until then).
    pub fn spare(&mut self, pids: &[i32]) -> Daemons {
        self.spared = pids.to_vec();
        Daemons {
            marker: self.marker.clone(),
            pids: pids.to_vec(),
        }
    }
}

impl Drop for HostProc {
    fn drop(&mut self) {
        self.signal(crate::model::SignalName::Kill);
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.tmux.is_some() {
            crate::os::signals::signal_pid(self.shell, crate::model::SignalName::Kill);
        }
        self.close_terminal();
        kill_all_but(&self.marker, &[], &self.spared);
        if self.spared.is_empty() {
            live().retain(|m| m != &self.marker);
        }
    }
}

/// A host's daemons left up for the next run: killed, with everything of their marker,
/// when dropped.
pub struct Daemons {
    marker: String,
    pids: Vec<i32>,
}

impl Drop for Daemons {
    fn drop(&mut self) {
        kill_all(&self.marker, &self.pids);
        live().retain(|m| m != &self.marker);
    }
}

/// The last 32–64 KiB a host without a terminal wrote to stdout and stderr, kept as it
/// comes (a reader thread per stream, ending when the stream does).
fn keep_output(child: &mut Child) -> Arc<Mutex<Vec<u8>>> {
    let screen = Arc::new(Mutex::new(Vec::new()));
    let streams: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|e| Box::new(e) as Box<dyn Read + Send>),
    ];
    for mut stream in streams.into_iter().flatten() {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut s) = screen.lock() {
                    s.extend_from_slice(&buf[..n]);
                    let len = s.len();
                    if len > 1 << 16 {
                        s.drain(..len - (1 << 15));
                    }
                }
            }
        });
    }
    screen
}

fn find_child(parent: i32, limit: Duration) -> Option<i32> {
    let end = std::time::Instant::now() + limit;
    while std::time::Instant::now() < end {
        if let Some(p) = procfs::all_processes()
            .into_iter()
            .find(|p| p.ppid == parent)
        {
            return Some(p.pid);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// The terminal's one owner: reads it (a TUI blocks when nobody does), answers the queries
/// TUIs send before drawing (cursor position `ESC[6n`, device attributes `ESC[c`), types
/// what it is sent, and closes the master when told.
fn run_terminal(master: OwnedFd, screen: Arc<Mutex<Vec<u8>>>) -> std::sync::mpsc::Sender<TermCmd> {
    let (tx, rx) = std::sync::mpsc::channel::<TermCmd>();
    std::thread::spawn(move || {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        // SAFETY: the fd is owned by this File from here on.
        let mut f =
            unsafe { std::fs::File::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(master)) };
        let mut buf = [0u8; 8192];
        loop {
            loop {
                match rx.try_recv() {
                    Ok(TermCmd::Write(b)) => {
                        let _ = std::io::Write::write_all(&mut f, &b);
                    }
                    Ok(TermCmd::Close) | Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        return;
                    }
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                }
            }
            let ready = {
                let mut fds = [PollFd::new(std::os::fd::AsFd::as_fd(&f), PollFlags::POLLIN)];
                poll(&mut fds, PollTimeout::from(10u8)).unwrap_or(0) > 0
            };
            if !ready {
                continue;
            }
            match f.read(&mut buf) {
                Ok(0) | Err(_) => std::thread::sleep(Duration::from_millis(10)),
                Ok(n) => {
                    let chunk = &buf[..n];
                    if contains(chunk, b"\x1b[6n") {
                        let _ = std::io::Write::write_all(&mut f, b"\x1b[1;1R");
                    }
                    if contains(chunk, b"\x1b[c") || contains(chunk, b"\x1b[0c") {
                        let _ = std::io::Write::write_all(&mut f, b"\x1b[?62;22c");
                    }
                    if let Ok(mut s) = screen.lock() {
                        s.extend_from_slice(chunk);
                        let len = s.len();
                        if len > 1 << 20 {
                            s.drain(..len - (1 << 19));
                        }
                    }
                }
            }
        }
    });
    tx
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A process that carries the measurement's marker.
#[derive(Clone, Debug)]
pub struct MarkedProcess {
    pub pid: i32,
    pub ppid: i32,
    /// Its session: one it leads (`sid == pid`) is a daemon that detached itself.
    pub sid: i32,
    pub cmdline: String,
}

/// Every live process of this measurement (the host's daemons and servers included).
pub fn leftovers(marker: &str) -> Vec<MarkedProcess> {
    procfs::with_env(MARKER_ENV, marker)
        .into_iter()
        .filter(|p| !p.is_zombie())
        .map(|p| MarkedProcess {
            pid: p.pid,
            ppid: p.ppid,
            sid: p.sid,
            cmdline: p.cmdline,
        })
        .collect()
}

/// Kills, by pid, every live process of this measurement and the recorder processes
/// (which the host may have started with a filtered environment); returns what it killed.
pub fn kill_all(marker: &str, extra: &[i32]) -> Vec<MarkedProcess> {
    kill_all_but(marker, extra, &[])
}

/// [`kill_all`], leaving the `spared` pids (a host's daemons kept for the next run) up.
pub fn kill_all_but(marker: &str, extra: &[i32], spared: &[i32]) -> Vec<MarkedProcess> {
    let mut killed = Vec::new();
    for _ in 0..20 {
        let mut found = leftovers(marker);
        found.retain(|p| !spared.contains(&p.pid));
        for &pid in extra {
            if let Some(p) = procfs::proc_info(pid).filter(|p| !p.is_zombie()) {
                found.push(MarkedProcess {
                    pid,
                    ppid: p.ppid,
                    sid: p.sid,
                    cmdline: p.cmdline,
                });
            }
        }
        // Done once nothing marked is left and what was killed is gone too: a SIGKILLed
        // process still waiting for a CPU to die is still running for anyone who looks.
        let dying = killed
            .iter()
            .any(|k: &MarkedProcess| procfs::proc_info(k.pid).is_some_and(|p| !p.is_zombie()));
        if found.is_empty() && !dying {
            break;
        }
        for p in &found {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        killed.extend(found);
        std::thread::sleep(Duration::from_millis(50));
    }
    killed.sort_by_key(|l| l.pid);
    killed.dedup_by_key(|l| l.pid);
    killed
}

/// Watches a pid by pidfd: the time it dies (CLOCK_MONOTONIC ns), on a channel.
pub fn watch_death(pid: i32) -> Option<std::sync::mpsc::Receiver<u64>> {
    Pidfd::open(pid as u32).ok()?.watch().ok()
}
