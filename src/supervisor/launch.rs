//! Starting the server (its own process group, stdout to a reader thread, stderr to a pipe
//! whose tail is kept) and confirming it serves: the parts both the supervisor and the
//! stand-in client do. The exit watcher and the tree sampler start with the server, so that
//! nothing is created between the handshake and the trigger.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::exits_unless_idle;
use super::ladder::{self, wall_cap_ms};
use super::link::spawn_guard;
use crate::config::manifest::{Launch, Protocol};
use crate::mcp::handshake::{handshake as mcp_handshake, Deadline, HandshakeFailure, Peer};
use crate::mcp::wire::{read_stdout, WireEvent};
use crate::model::{
    Budgets, CaseError, Decisive, ErrorKind, ExitStatus, HandshakeInfo, MachineBound, Plumbing,
    StdoutRecord, Via,
};
use crate::os::fdio::{self, Flusher, Tail};
use crate::os::procfs::{TreeReading, TreeSampler};
use crate::os::{mono_ns, sched, spawn, Pidfd};

/// How much of the server's stderr a report keeps.
const STDERR_TAIL: usize = 4096;

/// The server's stderr: a pipe the supervisor drains, keeping its tail.
pub struct StderrTap {
    pub tail: Arc<Mutex<Tail>>,
}

impl StderrTap {
    /// A pipe for the server's stderr, and the thread that drains it. The returned `Stdio`
    /// is the write end, for the process that starts the server.
    pub fn open() -> io::Result<(Self, Stdio)> {
        let (r, w) = spawn::pipe()?;
        let tail = Arc::new(Mutex::new(Tail::default()));
        let t = tail.clone();
        std::thread::spawn(move || {
            // It wakes while the server exits: it must not preempt it.
            sched::batch_this_thread();
            fdio::tail_pipe(std::fs::File::from(r), STDERR_TAIL, &t);
        });
        Ok((Self { tail }, Stdio::from(w)))
    }

    pub fn text(&self) -> String {
        self.tail.lock().unwrap_or_else(|p| p.into_inner()).text()
    }

    pub fn bytes(&self) -> u64 {
        self.tail.lock().unwrap_or_else(|p| p.into_inner()).bytes
    }

    /// `error`, with the last lines the server wrote to stderr: launchers (npm, uv) put the
    /// cause a line or two above their last one ("a complete log … can be found in").
    pub fn explain(&self, mut error: CaseError) -> CaseError {
        let tail = self.text();
        let mut last: Vec<&str> = tail
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .rev()
            .take(STDERR_LINES_SHOWN)
            .collect();
        last.reverse();
        match last.as_slice() {
            [] => {}
            [one] => error
                .message
                .push_str(&format!("; last stderr line: {one}")),
            more => error
                .message
                .push_str(&format!("; last stderr lines: {}", more.join(" ⏎ "))),
        }
        error
    }
}

/// How many of the server's last stderr lines explain a case that could not run.
const STDERR_LINES_SHOWN: usize = 3;

/// The server's stdin (a pipe or a socket), written without ever blocking for good (see
/// [`Peer`]).
pub struct ServerStdin(File);

impl ServerStdin {
    fn new(stdin: File) -> Self {
        // A server that stops reading must not hang the harness in `write`.
        let _ = fdio::set_nonblocking(stdin.as_fd());
        Self(stdin)
    }
}

impl Peer for ServerStdin {
    fn send_all(&mut self, mut buf: &[u8], deadline: &mut dyn Deadline) -> io::Result<()> {
        while !buf.is_empty() {
            match self.0.write(buf) {
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match deadline.next_wait() {
                    Some(wait) => {
                        fdio::wait_writable(&self.0, wait)?;
                    }
                    None => return Err(io::ErrorKind::TimedOut.into()),
                },
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// A budget of the server's own silence: wall time minus the time its tree spent queued for
/// a CPU and minus the slices in which it was writing to stdout or its output sat unread in
/// the pipe, sampled every slice; with the ladder's wall-clock backstop. A server that is
/// talking (a big answer, a flood the harness is still reading) has not failed to answer:
/// how fast the harness's reader drains its pipe on a busy machine must not decide the
/// verdict.
///
/// It also gives the CPU token back (`on_idle`, once) when the tree has sat idle and silent
/// for [`IDLE_HANDSHAKE_MS`]: a server that does not answer while computing nothing (silent,
/// or one that stopped reading) is racing nobody for a CPU, and a token held through its
/// whole budget stalls every case queued behind it.
pub struct OwnTime<'a> {
    sampler: &'a mut TreeSampler,
    on_idle: Option<&'a mut dyn FnMut()>,
    idle_ns: u64,
    record: &'a Mutex<StdoutRecord>,
    stdout: &'a Flusher,
    budget_ms: u64,
    start_ns: u64,
    last_ns: u64,
    last: TreeReading,
    last_bytes: u64,
    own_ns: u64,
}

/// How long the tree must sit idle and silent during the handshake before its CPU token goes
/// back: ten slices, so that a start-up's short pauses (a disk read, a child being spawned)
/// keep it.
const IDLE_HANDSHAKE_MS: u64 = 500;

impl<'a> OwnTime<'a> {
    /// Counting from `start_ns` (the launch), which the sampler's tree started at.
    pub fn new(
        sampler: &'a mut TreeSampler,
        (record, stdout): (&'a Mutex<StdoutRecord>, &'a Flusher),
        start_ns: u64,
        budget_ms: u64,
        on_idle: Option<&'a mut dyn FnMut()>,
    ) -> Self {
        let last = sampler.sample();
        let now = mono_ns();
        let wall = now.saturating_sub(start_ns);
        Self {
            sampler,
            on_idle,
            idle_ns: 0,
            record,
            stdout,
            budget_ms,
            start_ns,
            last_ns: now,
            last,
            last_bytes: stdout_bytes(record),
            own_ns: ladder::own_after(0, wall, last.held_ns),
        }
    }
}

fn stdout_bytes(record: &Mutex<StdoutRecord>) -> u64 {
    record.lock().unwrap_or_else(|p| p.into_inner()).bytes
}

impl Deadline for OwnTime<'_> {
    fn next_wait(&mut self) -> Option<Duration> {
        let now = mono_ns();
        let r = self.sampler.sample();
        let bytes = stdout_bytes(self.record);
        let wall = now.saturating_sub(self.last_ns);
        let queued = r.queued_ns.saturating_sub(self.last.queued_ns);
        let held = r.held_ns.saturating_sub(self.last.held_ns);
        // A slice it spent talking is not counted; queueing reported late still gives back
        // own time counted before it (see `ladder::own_after`).
        let silent = bytes == self.last_bytes && self.stdout.unread() == 0;
        self.own_ns = ladder::own_after(self.own_ns, if silent { wall } else { 0 }, held);
        let cpu = r.cpu_ns.saturating_sub(self.last.cpu_ns);
        if silent && ladder::idle_slice(wall, cpu, queued, r.busy) {
            self.idle_ns += wall;
        } else {
            self.idle_ns = 0;
        }
        if self.idle_ns >= IDLE_HANDSHAKE_MS * 1_000_000 {
            if let Some(give_back) = self.on_idle.take() {
                give_back();
            }
        }
        (self.last_ns, self.last, self.last_bytes) = (now, r, bytes);
        let wall_ms = now.saturating_sub(self.start_ns) / 1_000_000;
        if wall_ms >= wall_cap_ms(self.budget_ms) {
            return None;
        }
        if self.own_ns / 1_000_000 >= self.budget_ms {
            // Spent only once the kernel has reported a starved thread's wait (as a ladder's
            // wait: see `ladder::CONFIRM_MS`).
            return r
                .stalled
                .then_some(Duration::from_millis(ladder::CONFIRM_MS));
        }
        Some(Duration::from_millis(50))
    }

    fn counted_ms(&self) -> u64 {
        self.own_ns / 1_000_000
    }
}

impl OwnTime<'_> {
    /// Set when the wall-clock backstop ended the wait short of the budget of own time: the
    /// machine's load, not the server, ran the budget out.
    fn machine_bound(&self) -> Option<MachineBound> {
        let own_ms = self.own_ns as f64 / 1e6;
        (own_ms < self.budget_ms as f64).then(|| MachineBound {
            decided_by: Decisive::Handshake,
            step: 0,
            action: None,
            wall_ms: self.last_ns.saturating_sub(self.start_ns) as f64 / 1e6,
            own_ms,
            runqueue_ms: self.last.held_ns as f64 / 1e6,
            budget_ms: self.budget_ms,
        })
    }
}

/// A launched server with its reader, exit watcher and tree sampler running.
pub struct Running {
    pub child: Child,
    pub pidfd: Pidfd,
    pub stdin: Option<ServerStdin>,
    /// Dropping it stops the stdout reader, which then closes its end (a host that quits).
    pub stop_reading: Option<OwnedFd>,
    pub record: Arc<Mutex<StdoutRecord>>,
    pub flusher: Flusher,
    pub rx: Receiver<WireEvent>,
    pub started_ns: u64,
    pub watcher: Option<Receiver<u64>>,
    pub sampler: TreeSampler,
}

impl Running {
    /// What the server has written so far, all of it taken in (see [`settled_stdout`]).
    pub fn stdout_record(&self) -> StdoutRecord {
        settled_stdout(&self.flusher, &self.record)
    }
}

/// The stdout record once the reader has caught up with the stream: the reading thread may
/// still be waiting for a CPU when the server has already written its last bytes and exited.
pub fn settled_stdout(flusher: &Flusher, record: &Mutex<StdoutRecord>) -> StdoutRecord {
    flusher.flush(Duration::from_secs(30));
    record.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

fn harness_error(message: String) -> CaseError {
    CaseError {
        kind: ErrorKind::Harness,
        message,
    }
}

fn spawn_failed(launch: &Launch, e: io::Error) -> CaseError {
    CaseError {
        kind: ErrorKind::SpawnFailed,
        message: if e.kind() == io::ErrorKind::NotFound {
            format!(
                "cannot launch `{}`: no such file (cwd {})",
                launch.command,
                launch.cwd.display()
            )
        } else {
            format!("cannot launch `{}`: {e}", launch.command)
        },
    }
}

/// `sh -c` quoting: every word in single quotes.
fn shell_words(words: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    words
        .into_iter()
        .map(|w| format!("'{}'", w.as_ref().replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command for a launch under `plumbing`: its own group or session, through a shell.
fn command(launch: &Launch, plumbing: &Plumbing) -> Command {
    let mut cmd = match plumbing.via {
        Via::Direct => {
            let mut c = Command::new(&launch.command);
            c.args(&launch.args);
            c
        }
        Via::Shell => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c").arg(shell_words(
                std::iter::once(&launch.command).chain(&launch.args),
            ));
            c
        }
    };
    cmd.current_dir(&launch.cwd).envs(&launch.env);
    // In the host's group a terminal's signals reach it with the host; in its own, group
    // signals reach it and its children but never the host.
    spawn::in_group(&mut cmd, plumbing.group);
    cmd
}

/// Starts the server as `plumbing` says, stdout to a reader thread, stderr to `stderr`.
pub fn launch(
    launch: &Launch,
    stderr: Stdio,
    stdin_null: bool,
    plumbing: &Plumbing,
) -> Result<Running, CaseError> {
    let spawn::StdioEnds {
        child_in,
        ours_in,
        child_out,
        ours_out,
    } = spawn::stdio_ends(plumbing.stdio, stdin_null)
        .map_err(|e| harness_error(format!("cannot make the server's stdio: {e}")))?;
    let mut cmd = command(launch, plumbing);
    cmd.stdin(child_in).stdout(child_out).stderr(stderr);
    let started_ns = mono_ns();
    let spawning = spawn_guard();
    let spawned = cmd.spawn();
    drop(spawning);
    // The child's ends are closed here, so that our ends see the server's end-of-file.
    drop(cmd);
    let child = spawned.map_err(|e| spawn_failed(launch, e))?;
    let pidfd = Pidfd::open(child.id()).map_err(|e| harness_error(format!("pidfd_open: {e}")))?;
    let watcher = pidfd.watch().ok();
    let (stdout, stop_reading, flusher) = fdio::Stoppable::new(ours_out)
        .map_err(|e| harness_error(format!("cannot make a pipe: {e}")))?;
    let record = Arc::new(Mutex::new(StdoutRecord::default()));
    let (tx, rx) = channel();
    let rec = record.clone();
    std::thread::spawn(move || {
        // It wakes on EOF in the middle of the server's exit: it must not preempt it.
        sched::batch_this_thread();
        read_stdout(stdout, rec, tx)
    });
    Ok(Running {
        stdin: ours_in.map(ServerStdin::new),
        stop_reading: Some(stop_reading),
        sampler: TreeSampler::new(child.id() as i32),
        child,
        pidfd,
        record,
        flusher,
        rx,
        started_ns,
        watcher,
    })
}

/// Runs the handshake (its budget counted in the server's own time) and, if it fails, says
/// why in terms of what the process did, with the machine-bound mark of a timeout that the
/// wall-clock backstop decided. `on_idle` gives the CPU token back (see [`OwnTime`]).
pub fn handshake(
    run: &mut Running,
    protocol: Protocol,
    budgets: &Budgets,
    on_idle: &mut dyn FnMut(),
) -> Result<HandshakeInfo, (CaseError, Option<MachineBound>)> {
    let stdin = run.stdin.as_mut().expect("stdin open during handshake");
    let mut deadline = OwnTime::new(
        &mut run.sampler,
        (&run.record, &run.flusher),
        run.started_ns,
        budgets.handshake_ms,
        Some(on_idle),
    );
    let failure = match mcp_handshake(stdin, &run.rx, protocol, &mut deadline, run.started_ns) {
        Ok(info) => return Ok(info),
        Err(f) => f,
    };
    let bound = matches!(failure, HandshakeFailure::Timeout { .. })
        .then(|| deadline.machine_bound())
        .flatten();
    // A crash shows up as closed stdout or a failed write; give the exit time to land.
    let exited = match failure {
        HandshakeFailure::Timeout { .. } => run.pidfd.has_exited(),
        _ => exits_unless_idle(&run.pidfd, 500),
    };
    let record = run.stdout_record();
    let mut message = failure.to_string();
    let kind = if exited {
        let status = run.child.try_wait().ok().flatten().map(ExitStatus::from);
        message = format!(
            "the server exited ({}) before completing the handshake",
            status.map_or_else(|| "status unknown".into(), |s| s.to_string())
        );
        ErrorKind::ExitedBeforeHandshake
    } else if matches!(failure, HandshakeFailure::Timeout { .. }) {
        ErrorKind::HandshakeTimeout
    } else {
        ErrorKind::HandshakeFailed
    };
    if let Some(v) = &record.first_violation {
        message.push_str(&format!(
            "; its stdout had {} line(s) that are not JSON-RPC, first ({}): {}",
            record.violations,
            v.kind.as_str(),
            v.excerpt
        ));
    } else if record.bytes == 0 {
        message.push_str("; it wrote nothing to stdout");
    }
    let bound = bound.filter(|_| kind == ErrorKind::HandshakeTimeout);
    Err((CaseError { kind, message }, bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that never answers and computes nothing gives its CPU token back once, and
    /// still runs its whole handshake budget out (the token changes no verdict).
    #[test]
    fn a_silent_idle_server_gives_the_token_back_once_in_the_handshake() {
        let launch = Launch {
            command: "sleep".into(),
            args: vec!["30".into()],
            cwd: std::env::temp_dir(),
            env: Default::default(),
        };
        let mut run = super::launch(&launch, Stdio::null(), false, &Plumbing::default())
            .unwrap_or_else(|e| panic!("{}", e.message));
        let budgets = Budgets {
            handshake_ms: 1500,
            ..Budgets::default()
        };
        let mut given_back = 0;
        let failed = handshake(&mut run, Protocol::Initialize, &budgets, &mut || {
            given_back += 1
        });
        let _ = run.child.kill();
        let _ = run.child.wait();
        let (error, _) = failed.expect_err("sleep never answers");
        assert_eq!(error.kind, ErrorKind::HandshakeTimeout, "{}", error.message);
        assert_eq!(given_back, 1);
    }
}
