//! One client run against the recorder (`mcp-shutdown __recorder`), its log read by the
//! analyser the host measurements use (`hosts::analyze`).
//!
//! The setup is bounded and has no subreaper: the client leads a session of its own, the
//! recorder processes `_exit` after their lifetime, and whatever is still alive at the end
//! is SIGKILLed by pidfd. The window read is [close start, release]: release is when the
//! client's stdin is closed to let it exit (once close() returned and the server died, or
//! [`SETTLE`] after close() returned), or when [`BOUND`] ran out; what happens after (the
//! client's exit closing its pipes) is not the client's ladder.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp_shutdown_conformance::internals::hosts::analyze::{self, RunFacts, RunReading};
use mcp_shutdown_conformance::internals::hosts::reading::{ActionKind, Ev, RecorderLine, Role};
use mcp_shutdown_conformance::internals::{mono_ns, Pidfd, RECORDER_LOG_ENV};
use mcp_shutdown_conformance::model::SignalName;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
/// After close start, how long before close() counts as never returning.
const BOUND: Duration = Duration::from_secs(25);
/// How long to keep watching after close() returned with the server alive.
const SETTLE: Duration = Duration::from_secs(1);
/// How long a client gets to start the server and reach close start.
const STARTUP: Duration = Duration::from_secs(60);
/// How long a released client gets to exit before it is SIGKILLed.
const EXIT: Duration = Duration::from_secs(10);

/// What one client did to the server from its close start.
#[derive(Debug)]
pub struct Observed {
    /// What reached the server, `at_ms` counted from close start (its stdout's end aside:
    /// a client's ladder is what it sends and closes).
    pub reading: RunReading,
    /// close() had not returned when the bound ran out, the server alive.
    pub unbounded: bool,
}

/// A process watched by pidfd, and when it died.
struct Watched {
    fd: Pidfd,
    died: mpsc::Receiver<u64>,
    at: Option<u64>,
}

impl Watched {
    fn open(pid: i32) -> Option<Self> {
        let fd = Pidfd::open(u32::try_from(pid).ok()?).ok()?;
        let died = fd.watch().ok()?;
        Some(Self { fd, died, at: None })
    }

    fn dead(&mut self) -> bool {
        if self.at.is_none() {
            self.at = self.died.try_recv().ok();
        }
        self.at.is_some()
    }
}

/// The client and the recorder's three processes (server, child, grandchild), killed when
/// dropped.
struct Session {
    client: Child,
    client_fd: Watched,
    recorders: Vec<(Role, Option<Watched>)>,
}

impl Session {
    /// Watches the recorder's processes once its `tree` line is logged.
    fn watch_recorders(&mut self, events: &[RecorderLine]) {
        if !self.recorders.is_empty() {
            return;
        }
        if let Some(t) = events.iter().find(|e| e.ev == Ev::Tree) {
            self.recorders = [
                (Role::Server, Some(t.pid)),
                (Role::Child, t.child),
                (Role::Grandchild, t.grandchild),
            ]
            .into_iter()
            .map(|(role, pid)| (role, pid.and_then(Watched::open)))
            .collect();
        }
    }

    fn death(&mut self, role: Role) -> Option<u64> {
        let w = self.recorders.iter_mut().find(|(r, _)| *r == role)?;
        let w = w.1.as_mut()?;
        w.dead();
        w.at
    }

    fn kill_client_group(&self) {
        let pgid = nix::unistd::Pid::from_raw(self.client.id() as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for (_, w) in &self.recorders {
            if let Some(w) = w {
                let _ = w.fd.signal(SignalName::Kill);
            }
        }
        let _ = self.client_fd.fd.signal(SignalName::Kill);
        self.kill_client_group();
        let _ = self.client.wait();
    }
}

enum Said {
    CloseStart(u64),
    CloseReturned(u64),
}

/// The client's `close_start` and `close_returned` lines, as they come.
fn read_said(out: ChildStdout) -> mpsc::Receiver<Said> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            // A string where a JSON number would lose precision (Node's hrtime).
            let t = v["t_ns"]
                .as_u64()
                .or_else(|| v["t_ns"].as_str().and_then(|s| s.parse().ok()));
            let said = match (v["event"].as_str(), t) {
                (Some("close_start"), Some(t)) => Said::CloseStart(t),
                (Some("close_returned"), Some(t)) => Said::CloseReturned(t),
                _ => continue,
            };
            if tx.send(said).is_err() {
                return;
            }
        }
    });
    rx
}

fn spawn(dir: &Path, command: &[String], log: &Path, stderr: &Path) -> Result<Child, String> {
    let program = if command[0].contains('/') {
        dir.join(&command[0])
    } else {
        command[0].clone().into()
    };
    let stderr = std::fs::File::create(stderr).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&program);
    cmd.args(&command[1..])
        .arg("--")
        .arg(BIN)
        .args(["__recorder", "--log"])
        // On the command line too: several SDK clients give the server a filtered
        // environment.
        .arg(log)
        .env(RECORDER_LOG_ENV, log)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr);
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(Into::into));
    }
    cmd.spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))
}

/// When the client began to close, whether close() ran out the bound, and when the window
/// closed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window {
    pub close_start: u64,
    pub close_returned: Option<u64>,
    pub release: u64,
    pub bound_hit: bool,
}

/// When each recorder process died, as its pidfd said.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deaths {
    pub server: Option<u64>,
    pub child: Option<u64>,
    pub grandchild: Option<u64>,
}

fn since(t: u64, from: u64) -> Duration {
    Duration::from_nanos(t.saturating_sub(from))
}

/// Watches the client close, then releases it (closes its stdin) and waits for its exit.
fn observe(s: &mut Session, log: &Path, said: &mpsc::Receiver<Said>) -> Result<Window, String> {
    let started = mono_ns();
    let (mut close_start, mut close_returned) = (None, None);
    let (mut release, mut bound_hit, mut exit_by) = (None::<u64>, false, 0);
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let t = mono_ns();
        for m in said.try_iter() {
            match m {
                Said::CloseStart(at) => close_start = Some(at),
                Said::CloseReturned(at) => close_returned = Some(at),
            }
        }
        s.watch_recorders(&read_log(log));
        let client_dead = s.client_fd.dead();
        let server_dead = s.death(Role::Server).is_some();
        let release_now = match (release, close_start, close_returned) {
            (Some(_), ..) if client_dead => break,
            (Some(_), ..) => {
                if t >= exit_by {
                    s.kill_client_group();
                    exit_by = t + EXIT.as_nanos() as u64;
                }
                false
            }
            (None, None, _) if client_dead => {
                return Err("the client exited before close start".into())
            }
            (None, None, _) if since(t, started) > STARTUP => {
                return Err(format!("no close start within {} s", STARTUP.as_secs()))
            }
            (None, None, _) => false,
            (None, Some(_), Some(r)) => server_dead || since(t, r) >= SETTLE,
            (None, Some(_), None) if client_dead => true,
            (None, Some(c), None) if since(t, c) >= BOUND => {
                bound_hit = true;
                s.kill_client_group();
                true
            }
            (None, Some(_), None) => false,
        };
        if release_now {
            release = Some(t);
            drop(s.client.stdin.take());
            exit_by = t + EXIT.as_nanos() as u64;
        }
    }
    Ok(Window {
        close_start: close_start.unwrap_or_default(),
        close_returned,
        release: release.unwrap_or_default(),
        bound_hit,
    })
}

fn read_log(log: &Path) -> Vec<RecorderLine> {
    analyze::parse_log(&std::fs::read_to_string(log).unwrap_or_default())
}

/// Runs one client (set up already) against the recorder and reads what it did.
pub fn measure(dir: &Path, command: &[String]) -> Result<Observed, String> {
    if command.is_empty() {
        return Err("client.toml has no command".into());
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = tmp.path().join("recorder.jsonl");
    let stderr = tmp.path().join("client.stderr");
    let mut client = spawn(dir, command, &log, &stderr)?;
    let said = client.stdout.take().map(read_said);
    let client_fd = Watched::open(client.id() as i32).ok_or("cannot watch the client")?;
    let mut s = Session {
        client,
        client_fd,
        recorders: Vec::new(),
    };
    let window = said
        .ok_or_else(|| "no stdout".to_string())
        .and_then(|said| observe(&mut s, &log, &said));
    let w = window.map_err(|e| {
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        let tail = &text[text.len().saturating_sub(4000)..];
        format!("{e}\n  client stderr: {tail}")
    })?;
    let deaths = Deaths {
        server: s.death(Role::Server),
        child: s.death(Role::Child),
        grandchild: s.death(Role::Grandchild),
    };
    Ok(observed(&read_log(&log), &w, deaths, s.client.id() as i32))
}

/// What the client did in the window, by the analyser's reading of the recorder's log and
/// the deaths its pidfds saw.
pub fn observed(log: &[RecorderLine], w: &Window, deaths: Deaths, client_pid: i32) -> Observed {
    let events: Vec<RecorderLine> = log
        .iter()
        .filter(|e| e.t_ns <= w.release)
        .cloned()
        .collect();
    // A process that logged its lifetime's end was not killed.
    let lifetime = |role| {
        events
            .iter()
            .any(|e| e.role == role && e.ev == Ev::Lifetime)
    };
    let died = |role, at: Option<u64>| {
        at.filter(|&d| w.close_start <= d && d <= w.release && !lifetime(role))
    };
    let facts = RunFacts {
        host_pid: client_pid,
        trigger_ns: w.close_start,
        server_death_ns: died(Role::Server, deaths.server),
        child_death_ns: died(Role::Child, deaths.child),
        grandchild_death_ns: died(Role::Grandchild, deaths.grandchild),
        events: events.clone(),
        ..Default::default()
    };
    let mut reading = analyze::read_run(&facts);
    reading
        .deliveries
        .retain(|d| d.action != ActionKind::StdoutClosed);
    Observed {
        unbounded: w.close_returned.is_none() && w.bound_hit && facts.server_death_ns.is_none(),
        reading,
    }
}
