//! `check --real-host <host> -- CMD`: the user's server under the real host binary, once
//! per quit path the host can be driven through offline, judged by the same rules as any
//! case. The host launches the command as configured (the same files `host measure` writes,
//! with CMD instead of the recorder); the server is found among the run's processes, watched
//! by pidfd, its tree read from `/proc` until the quit, and then: when it exited after the
//! quit, what it left running, or whether it outlived the host.
//!
//! The signals the server receives are traced (ptrace, [`crate::os::tracer`]), so its stage
//! is the last step of the host's *measured* ladder (the bundled profile of that quit path)
//! it was seen to receive, never a time guessed from the quit: a host slow to act under load
//! must not move the server's stage. A step that cannot be seen (a closed stdin) is placed by
//! its measured wait after the last step seen. Its stdout is the host's, so the stdout and
//! in-flight rules are not judged. A one-shot command ends its servers on its own schedule,
//! so there only survival and leftovers are judged, and so where tracing is refused.
//!
//! This file drives the host; `place.rs` places an exit on the measured ladder (pure), and
//! `judge.rs` judges and words each run.

mod judge;
mod place;
#[cfg(test)]
mod tests;

pub use judge::judge;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use super::catalogue::{Drive, HostSpec, QuitPath, TuiQuit};
use super::measure::{quit_tui, wait_quiet, QUIT_LIMIT, START_LIMIT, WALK_WINDOW};
use super::standin::StandIn;
use super::start::{launch, screen_line, stalled, ConfiguredServer};
use super::HostError;
use crate::model::{CaseError, ErrorKind, HostSignal, Leftover, Sender, SignalName};
use crate::os::hostproc::{self, HostProc};

/// How long a TUI is left up with the server running before the quit: its start-up done.
const SETTLE: Duration = Duration::from_millis(3000);

/// What went wrong on a quit path, so that nothing was judged.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The host never started the server (or it exited too soon to be seen): why, from the
    /// host's screen and the stand-in model API.
    NoServer(String),
    /// The server exited on its own before the quit.
    ExitedBeforeQuit,
    /// The host did not exit after the quit.
    HostDidNotQuit(String),
}

impl Failure {
    fn did_not_quit(limit: Duration, host: &HostProc) -> Self {
        Failure::HostDidNotQuit(format!(
            "the real host did not quit within {} s: screen {:?}",
            limit.as_secs(),
            screen_line(&host.screen_text())
        ))
    }

    /// Whose it is: the server's only when it ended itself before the session did.
    fn error(&self) -> CaseError {
        let (kind, message) = match self {
            Failure::NoServer(why) => (ErrorKind::Harness, format!("under the real host: {why}")),
            Failure::ExitedBeforeQuit => (
                ErrorKind::ExitedBeforeEnd,
                "exited under the real host before it was quit".into(),
            ),
            Failure::HostDidNotQuit(why) => (ErrorKind::Harness, why.clone()),
        };
        CaseError { kind, message }
    }
}

/// What the server did on one quit path, as seen from outside it.
#[derive(Clone, Debug, PartialEq)]
pub struct RealRun {
    pub trigger: String,
    /// A one-shot command: it ends the server on its own schedule, with no quit to time.
    pub one_shot: bool,
    /// Exited this long after the quit (ms); for a one-shot command, whether it exited.
    pub exit_ms: Option<f64>,
    pub exited: bool,
    /// Still running [`WALK_WINDOW`] after the host exited.
    pub left_running: bool,
    /// Its descendants still running after it exited.
    pub leftovers: Vec<Leftover>,
    /// The signals it received after the quit, and the signal that ended it, as traced.
    pub signals: Vec<HostSignal>,
    pub killed_by: Option<SignalName>,
    /// Why its signals could not be traced here, if they could not.
    pub untraced: Option<String>,
    pub failure: Option<Failure>,
    pub wall_ms: f64,
    pub load_avg: Option<f64>,
}

impl RealRun {
    fn new(trigger: &str, one_shot: bool) -> Self {
        RealRun {
            trigger: trigger.into(),
            one_shot,
            exit_ms: None,
            exited: false,
            left_running: false,
            leftovers: Vec::new(),
            signals: Vec::new(),
            killed_by: None,
            untraced: None,
            failure: None,
            wall_ms: 0.0,
            load_avg: None,
        }
    }

    /// The server died (at `died`), or was still running when the host exited.
    fn ended(&mut self, died: Option<u64>, host_exited: bool, t0: u64) {
        self.exited = died.is_some();
        if !self.one_shot {
            self.exit_ms = died.map(|d| (d as f64 - t0 as f64).max(0.0) / 1e6);
        }
        self.left_running = died.is_none() && host_exited;
    }

    /// The signals the trace saw after the quit (`t0`), and the one that ended the server;
    /// a server that died gets a moment for its end to reach the tracer.
    fn read_trace(
        &mut self,
        trace: crate::os::tracer::SignalTrace,
        died: bool,
        t0: u64,
        host: i32,
        server: i32,
    ) {
        let wait = if died {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        };
        let traced = trace.finish_within(wait);
        self.signals = signals_after(&traced, t0, host, server);
        self.killed_by = match traced.exit {
            Some(crate::model::ExitStatus::Signal(s)) => Some(s),
            _ => None,
        };
    }
}

/// The server among the run's processes: the whole command line, so the host's own path
/// (`node_modules/...`) never matches.
fn find_server(marker: &str, host: &HostProc, command: &[String], limit: Duration) -> Option<i32> {
    let (host_pid, shell) = (host.pid(), host.spawned_pid());
    let name = command.join(" ");
    let end = Instant::now() + limit;
    while Instant::now() < end {
        let mut candidates: Vec<(i32, String)> = hostproc::leftovers(marker)
            .into_iter()
            .map(|l| (l.pid, l.cmdline))
            .collect();
        candidates.extend(
            crate::os::procfs::descendants(host_pid)
                .into_iter()
                .map(|p| (p.pid, p.cmdline)),
        );
        if let Some((pid, _)) = candidates
            .into_iter()
            .find(|(pid, c)| *pid != host_pid && *pid != shell && c.contains(&name))
        {
            return Some(pid);
        }
        // A one-shot command's server may live a few hundred milliseconds.
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// The server's descendants as seen while the session was live: each one's command line (the
/// latest: one first seen between its fork and its `exec` still had its parent's), parent and
/// start time.
#[derive(Default)]
struct Tree(BTreeMap<i32, (String, i32, u64)>);

impl Tree {
    fn read(&mut self, server: i32) {
        for p in crate::os::procfs::descendants(server) {
            // A reused pid (another start time) is another process.
            let seen = self
                .0
                .entry(p.pid)
                .or_insert((String::new(), p.ppid, p.start_ticks));
            if seen.2 != p.start_ticks {
                *seen = (String::new(), p.ppid, p.start_ticks);
            }
            seen.0 = p.cmdline;
        }
    }

    /// Those still running (the same processes: the same start times), with who started them.
    fn still_running(&self, server: i32, server_cmdline: &str) -> Vec<Leftover> {
        self.0
            .iter()
            .filter_map(|(pid, (cmd, ppid, start))| {
                let now = crate::os::procfs::proc_info(*pid)
                    .filter(|p| !p.is_zombie() && p.start_ticks == *start)?;
                Some(Leftover {
                    pid: *pid,
                    cmdline: if now.cmdline.is_empty() {
                        cmd.clone()
                    } else {
                        now.cmdline
                    },
                    started_by: Some(*ppid),
                    started_by_cmdline: if *ppid == server {
                        Some(server_cmdline.to_string())
                    } else {
                        self.0.get(ppid).map(|(c, _, _)| c.clone())
                    },
                })
            })
            .collect()
    }
}

/// Runs `command` under `spec` on each quit path (only those of `only`, when given). A
/// descendant still running `settle` after the server exited is a leftover (the leak rule's
/// prompt budget).
pub fn check(
    spec: &HostSpec,
    exe: &Path,
    command: &[String],
    only: &[String],
    settle: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<RealRun>, HostError> {
    let api = StandIn::start().map_err(|e| HostError::io(Path::new("127.0.0.1"), e))?;
    let mut runs = Vec::new();
    for path in spec.paths {
        if !only.is_empty() && !only.iter().any(|o| o == path.trigger) {
            continue;
        }
        let run = one_path(spec, exe, path, command, &api, settle)?;
        progress(&format!("{} {}: {}", spec.id, path.trigger, summary(&run)));
        runs.push(run);
    }
    Ok(runs)
}

fn summary(r: &RealRun) -> String {
    match (&r.failure, r.exit_ms, r.left_running) {
        (Some(f), _, _) => format!("not judged: {}", f.error().message),
        (None, _, true) => "left running".into(),
        (None, Some(ms), _) => format!("exited {ms:.0} ms after the quit"),
        (None, None, _) => "ended by the command".into(),
    }
}

fn one_path(
    spec: &HostSpec,
    exe: &Path,
    path: &QuitPath,
    command: &[String],
    api: &StandIn,
    settle: Duration,
) -> Result<RealRun, HostError> {
    let started = Instant::now();
    let mut l = launch(spec, exe, path, ConfiguredServer::Command(command), api)?;
    let one_shot = matches!(path.drive, Drive::OneShot(_));
    let mut run = RealRun::new(path.trigger, one_shot);
    let Some(server) = find_server(&l.marker, &l.host, command, START_LIMIT) else {
        run.failure = Some(Failure::NoServer(stalled(&l.host.screen_text(), api)));
        let _ = hostproc::kill_all(&l.marker, &[l.host.pid()]);
        return Ok(run);
    };
    // Read again before the quit: a launcher (a pyenv shim, `uv run`) may have exec'd since.
    let cmdline_of = |pid: i32| {
        crate::os::procfs::proc_info(pid)
            .map(|p| p.cmdline)
            .unwrap_or_else(|| command.join(" "))
    };
    let mut server_cmdline = cmdline_of(server);
    let death = hostproc::watch_death(server);
    let trace = crate::os::tracer::trace_signals(server)
        .map_err(|e| run.untraced = Some(format!("ptrace: {e}")))
        .ok();
    let mut tree = Tree::default();
    let mut t0 = crate::os::mono_ns();
    if let Drive::Tui(quit) = path.drive {
        let Some(t) = settle_and_quit(&mut l.host, quit, &mut tree, server, death.as_ref()) else {
            run.failure = Some(Failure::ExitedBeforeQuit);
            let _ = hostproc::kill_all(&l.marker, &[server, l.host.pid()]);
            return Ok(run);
        };
        t0 = t;
        server_cmdline = cmdline_of(server);
    }
    let quit_limit = if one_shot { START_LIMIT } else { QUIT_LIMIT };
    let host_exit = await_host_exit(&mut l.host, &mut tree, server, quit_limit);
    if host_exit.is_none() {
        run.failure = Some(Failure::did_not_quit(quit_limit, &l.host));
    }
    let died = death.and_then(|rx| rx.recv_timeout(WALK_WINDOW).ok());
    run.ended(died, host_exit.is_some(), t0);
    if let Some(trace) = trace {
        run.read_trace(trace, died.is_some(), t0, l.host.pid(), server);
    }
    if died.is_some() {
        std::thread::sleep(settle);
        run.leftovers = tree.still_running(server, &server_cmdline);
    }
    run.load_avg = crate::os::procfs::load_avg();
    kill_left(&l.marker, &[server, l.host.pid()], &run.leftovers);
    run.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(run)
}

/// Kills the run's processes and the server's leftovers, by pid.
fn kill_left(marker: &str, pids: &[i32], leftovers: &[Leftover]) {
    let _ = hostproc::kill_all(marker, pids);
    let left: Vec<i32> = leftovers.iter().map(|x| x.pid).collect();
    let _ = hostproc::kill_all(marker, &left);
}

/// Lets a TUI settle (reading the server's tree meanwhile), then quits it: when the quit
/// was typed; `None` when the server exited first.
fn settle_and_quit(
    host: &mut HostProc,
    quit: TuiQuit,
    tree: &mut Tree,
    server: i32,
    death: Option<&std::sync::mpsc::Receiver<u64>>,
) -> Option<u64> {
    let until = Instant::now() + SETTLE;
    while Instant::now() < until {
        tree.read(server);
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_quiet(host.pid(), Duration::ZERO, START_LIMIT);
    if death.is_some_and(|rx| rx.try_recv().is_ok()) {
        return None;
    }
    tree.read(server);
    // The server gone is the host ending it (its signals are not traced yet).
    let began = || crate::os::procfs::proc_info(server).is_none_or(|i| i.is_zombie());
    Some(quit_tui(host, quit, &began))
}

/// Waits up to `limit` for the host to exit, reading the server's tree as it grows (a
/// one-shot's too) meanwhile; when it exited, if it did.
fn await_host_exit(
    host: &mut hostproc::HostProc,
    tree: &mut Tree,
    server: i32,
    limit: Duration,
) -> Option<u64> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        tree.read(server);
        if let Some(at) = host.wait_exit(Duration::from_millis(50)) {
            return Some(at);
        }
    }
    None
}

/// The signals the trace saw the server receive from the quit (`t0`) on, and who sent each.
fn signals_after(
    traced: &crate::os::tracer::Traced,
    t0: u64,
    host_pid: i32,
    server: i32,
) -> Vec<HostSignal> {
    traced
        .deliveries
        .iter()
        .filter(|d| d.at_ns >= t0)
        .map(|d| HostSignal {
            signal: d.signal,
            at_ms: crate::os::ms_between(t0, d.at_ns),
            from_pid: d.from_pid,
            from: match d.from_pid {
                0 => Sender::Kernel,
                p if p == host_pid => Sender::Host,
                p if p == server => Sender::Server,
                _ => Sender::Other,
            },
        })
        .collect()
}
