//! The `client` driver: a separate stand-in client process launches the server, does the
//! handshake and then dies (exits, or is killed); the supervisor watches what the server does.

use std::io::BufReader;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use super::drive::drive;
use super::ladder::LadderState;
use super::launch::StderrTap;
use super::link::{spawn_guard, Link};
use super::protocol::{recv, send, CaseSpec, ClientEvent, ClientMode, ToClient};
use super::{behind, exits_unless_idle, finish, live_tree};
use crate::model::{
    Action, CaseError, ErrorKind, ExitStatus, Observation, SignalName, Stage, StdoutRecord,
};
use crate::os::procfs::{self, TreeSampler};
use crate::os::{identify, mono_ns, sched, terminal, Pidfd};

/// The stand-in client and what the supervisor learnt from it before the ending.
struct Client {
    child: Child,
    pidfd: Option<Pidfd>,
    stdin: ChildStdin,
    events: BufReader<ChildStdout>,
    /// For a terminal host: the pseudo-terminal's master (closing it hangs the terminal up)
    /// and its slave (held until the client has it as its controlling terminal).
    terminal: Option<(OwnedFd, OwnedFd)>,
    /// The client (a terminal's job) has been told to exit, or was killed.
    gone: bool,
}

/// Starts the stand-in client; its stderr is the pipe the server's stderr will be (the
/// client gives the server its own).
fn spawn(helper: &Path, stderr: Stdio, mode: ClientMode) -> std::io::Result<Client> {
    let mut cmd = Command::new(helper);
    cmd.arg("__client")
        .arg(mode.as_str())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr);
    let terminal = if mode == ClientMode::Terminal {
        let (master, slave, path) = terminal::open()?;
        cmd.arg("--tty").arg(path);
        Some((master, slave))
    } else {
        None
    };
    let spawning = spawn_guard();
    let spawned = cmd.spawn();
    drop(spawning);
    drop(cmd);
    let mut child = spawned?;
    Ok(Client {
        pidfd: Pidfd::open(child.id()).ok(),
        // Kept open: `go` on it tells an `exit` client when to exit.
        stdin: child.stdin.take().expect("piped"),
        events: BufReader::new(child.stdout.take().expect("piped")),
        terminal,
        child,
        gone: false,
    })
}

/// Reads the client's events up to the handshake: the server's pidfd once it is ready.
fn until_ready(
    client: &mut Client,
    result: &mut Observation,
    record: &mut StdoutRecord,
    link: &Link,
) -> Option<Pidfd> {
    let mut server = None;
    while let Some(ev) = recv::<ClientEvent>(&mut client.events) {
        match ev {
            ClientEvent::Spawned { pid } => server = Pidfd::open(pid).ok(),
            ClientEvent::Idle => link.free_cpu(),
            ClientEvent::Failed {
                error,
                stdout,
                machine_bound,
            } => {
                result.error = Some(error);
                result.machine_bound = machine_bound;
                *record = stdout;
                return None;
            }
            ClientEvent::Ready { handshake, stdout } => {
                result.handshake = Some(handshake);
                let root = server.as_ref().map(Pidfd::pid);
                result.server_process = root.and_then(identify::server_process);
                link.handshake_done();
                *record = stdout;
                // Taken again if the server sat idle in its handshake and gave it back.
                link.need_cpu();
                return server;
            }
            ClientEvent::Exiting { .. } => return None,
        }
    }
    None
}

/// Ends the session the client's way; returns when it happened.
fn trigger(action: Action, client: &mut Client) -> u64 {
    let t = match action {
        Action::Interrupt { .. } => {
            let (master, _) = client
                .terminal
                .as_ref()
                .expect("a terminal host has a terminal");
            let t = mono_ns();
            // What a terminal gets from Ctrl-C: the line discipline sends SIGINT to the
            // foreground job's group. The terminal stays; the job exits at the next step.
            terminal::type_into(master, b"\x03");
            return t;
        }
        Action::Hangup { .. } => {
            let t = mono_ns();
            // Dropping the master hangs the terminal up: the kernel sends SIGHUP to the
            // session leader (the shell), and to the foreground job's group as it dies.
            drop(client.terminal.take());
            client.gone = true;
            t
        }
        Action::ClientKill => {
            let t = mono_ns();
            match &client.pidfd {
                Some(fd) => {
                    let _ = fd.signal(SignalName::Kill);
                }
                None => {
                    let _ = client.child.kill();
                }
            }
            t
        }
        _ => {
            client.gone = true;
            send(&mut client.stdin, &ToClient::Go);
            let t = match recv::<ClientEvent>(&mut client.events) {
                Some(ClientEvent::Exiting { at_ns }) => at_ns,
                _ => mono_ns(),
            };
            if client.terminal.is_some() {
                // The terminal's job exited; its shell stays, as a shell does (the job's
                // orphans are ours: the supervisor is their subreaper).
                return t;
            }
            t
        }
    };
    // Once the client is reaped, its orphans are certainly ours.
    let _ = client.child.wait();
    t
}

/// A terminal's ladder has a later step (its job exits after Ctrl-C); the other clients'
/// endings are one step.
fn ladder_steps(spec: &CaseSpec, mode: ClientMode) -> Vec<crate::model::Step> {
    if mode == ClientMode::Terminal {
        spec.scenario.steps.clone()
    } else {
        spec.scenario.steps.first().copied().into_iter().collect()
    }
}

/// A case whose server never came up: its error explained by what it printed, and its stdout
/// and stderr checked all the same.
fn finish_unready(result: &mut Observation, record: &StdoutRecord, tap: &StderrTap) {
    if let Some(e) = result.error.take() {
        result.error = Some(tap.explain(e));
    }
    finish(result, record, tap, &[], &[]);
}

/// What the ladder found, into the observation.
fn record_ending(result: &mut Observation, ended: super::ladder::Ended, server: &Pidfd) {
    let exited = ended.exit_ns.is_some();
    ended.record(result);
    if exited {
        result.exit_status = reap_soon(server);
    }
}

/// The client never reported a handshake: ends it, and says why if the server did not.
fn no_handshake(client: &mut Client, result: &mut Observation) {
    // If it died by itself, say how: a server can kill its parent. (Its stdout closes
    // just before its exit is reported: give the exit time to land.)
    if let Some(fd) = &client.pidfd {
        exits_unless_idle(fd, 500);
    }
    let died = client.child.try_wait().ok().flatten();
    let _ = client.child.kill();
    let _ = client.child.wait();
    if result.error.is_none() {
        // Nothing of the harness signals the stand-in client before the handshake: a signal
        // death then is an attack from below it.
        result.error = Some(match died.map(ExitStatus::from) {
            Some(ExitStatus::Signal(s)) => CaseError {
                kind: ErrorKind::of_lost_supervisor(false, Some(s)),
                message: format!(
                    "the stand-in client (the server's parent) was killed by {s} before it reported the handshake, by none of the harness"
                ),
            },
            _ => CaseError {
                kind: ErrorKind::Harness,
                message: "the client helper ended without reporting a handshake".into(),
            },
        });
    }
}

/// The exit status of a server that has exited, once it is the supervisor's to reap: a
/// server whose parent (the stand-in client, a terminal's job) is still exiting is
/// reparented when that exit completes, however long a busy machine makes it take. The cap
/// only guards against a parent that never goes; `None` when the zombie is gone or its
/// parent stays.
fn reap_soon(server: &Pidfd) -> Option<ExitStatus> {
    let cap = mono_ns() + 30_000_000_000;
    loop {
        if let Some(s) = server.reap() {
            return Some(s);
        }
        let parent = procfs::proc_info(server.pid())?.ppid;
        if mono_ns() >= cap {
            return None;
        }
        match Pidfd::open(parent as u32) {
            // Its parent is gone or is this supervisor: the zombie is ours to reap now.
            _ if parent == procfs::own_pid() => {}
            Err(_) => {}
            Ok(fd) => {
                fd.wait_exit(std::time::Duration::from_millis(100)).ok();
                continue;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Runs the case through a stand-in client process.
/// The stand-in client that fits the scenario's first step, with the server's stderr tap.
fn start_client(
    spec: &CaseSpec,
    helper: &Path,
) -> Result<(StderrTap, Client, ClientMode), CaseError> {
    let harness = |message| CaseError {
        kind: ErrorKind::Harness,
        message,
    };
    let (tap, stderr) = StderrTap::open()
        .map_err(|e| harness(format!("cannot make a pipe for the server's stderr: {e}")))?;
    let action = spec
        .scenario
        .steps
        .first()
        .map_or(Action::ClientExit, |s| s.action);
    let mode = match action {
        Action::ClientKill => ClientMode::Crash,
        Action::Hangup { .. } | Action::Interrupt { .. } => ClientMode::Terminal,
        _ => ClientMode::Exit,
    };
    let client = spawn(helper, stderr, mode).map_err(|e| {
        harness(format!(
            "cannot start the client helper {}: {e}",
            helper.display()
        ))
    })?;
    Ok((tap, client, mode))
}

pub fn run(spec: &CaseSpec, helper: &Path, link: &Link) -> Observation {
    let mut result = Observation::empty(&spec.server, &spec.scenario.id);
    let (tap, mut client, mode) = match start_client(spec, helper) {
        Ok(started) => started,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    // The client launches the server as soon as it has the spec: that is the start-up phase.
    link.need_cpu();
    send(&mut client.stdin, spec);
    let mut record = StdoutRecord::default();
    let Some(server) = until_ready(&mut client, &mut result, &mut record, link) else {
        link.free_cpu();
        no_handshake(&mut client, &mut result);
        finish_unready(&mut result, &record, &tap);
        return result;
    };
    // The stand-ins that are not the server's: the client, and a terminal's job (the
    // server's parent).
    let mut ours = vec![client.child.id() as i32];
    if client.terminal.is_some() {
        ours.extend(procfs::proc_info(server.pid()).map(|p| p.ppid));
    }
    let before = live_tree(&ours);
    // As in `direct`: this thread's wake-ups must not preempt the exiting server.
    sched::batch_this_thread();
    let watcher = server.watch().ok();
    let mut sampler = TreeSampler::new(server.pid());
    let ladder = LadderState::new(ladder_steps(spec, mode), spec.budgets.prompt_ms, None);
    let driven = drive(ladder, &server, watcher.as_ref(), &mut sampler, link, |a| {
        trigger(a, &mut client)
    });
    let ended = driven.ended;
    if client.terminal.is_some() && !client.gone && ended.exit_ns.is_some() {
        // The server went on Ctrl-C; its host exits as planned (and so reaps nothing: the
        // server's exit status comes to the supervisor, its subreaper).
        trigger(Action::ClientExit, &mut client);
    }
    let survived = ended.stage == Stage::Survived;
    record_ending(&mut result, ended, &server);
    result.diagnostics = driven.diagnostics;
    result.server_process = result.server_process.take().or(driven.server_process);
    let settle_ms = if survived { 0 } else { spec.budgets.prompt_ms };
    ours.push(server.pid());
    let alive = behind::settle_for(&mut result, &spec.budgets, settle_ms, &ours);
    finish(&mut result, &record, &tap, &alive, &before);
    if client.terminal.is_some() {
        // The terminal's shell outlives its job; the terminal is done with.
        let _ = client.child.kill();
        let _ = client.child.wait();
    }
    result
}
