//! The `client` driver: a separate stand-in client process launches the server, does the
//! handshake and then dies (exits, or is killed); the supervisor watches what the server does.

use std::io::BufReader;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use super::drive::drive;
use super::ladder::Ladder;
use super::link::{spawn_guard, Link};
use super::protocol::{recv, send, CaseSpec, ClientEvent, ClientMode, ToClient};
use super::{finish, live_tree, settle_descendants};
use crate::model::{Action, CaseError, ErrorKind, Observation, SignalName, Stage, StdoutRecord};
use crate::os::{mono_ns, sched, Pidfd};

/// The stand-in client and what the supervisor learnt from it before the ending.
struct Client {
    child: Child,
    pidfd: Option<Pidfd>,
    stdin: ChildStdin,
    events: BufReader<ChildStdout>,
}

fn spawn(helper: &Path, stderr_path: &Path, mode: ClientMode) -> std::io::Result<Client> {
    let spawning = spawn_guard();
    let spawned = Command::new(helper)
        .arg("__client")
        .arg(stderr_path)
        .arg(mode.as_str())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    drop(spawning);
    let mut child = spawned?;
    Ok(Client {
        pidfd: Pidfd::open(child.id()).ok(),
        // Kept open: `go` on it tells an `exit` client when to exit.
        stdin: child.stdin.take().expect("piped"),
        events: BufReader::new(child.stdout.take().expect("piped")),
        child,
    })
}

/// Reads the client's events up to the handshake: the server's pidfd once it is ready.
fn until_ready(
    client: &mut Client,
    result: &mut Observation,
    record: &mut StdoutRecord,
) -> Option<Pidfd> {
    let mut server = None;
    while let Some(ev) = recv::<ClientEvent>(&mut client.events) {
        match ev {
            ClientEvent::Spawned { pid } => server = Pidfd::open(pid).ok(),
            ClientEvent::Failed { error, stdout } => {
                result.error = Some(error);
                *record = stdout;
                return None;
            }
            ClientEvent::Ready { handshake, stdout } => {
                result.handshake = Some(handshake);
                *record = stdout;
                return server;
            }
            ClientEvent::Exiting { .. } => return None,
        }
    }
    None
}

/// Ends the session the client's way; returns when it happened.
fn trigger(action: Action, client: &mut Client) -> u64 {
    let t = if action == Action::ClientKill {
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
    } else {
        send(&mut client.stdin, &ToClient::Go);
        match recv::<ClientEvent>(&mut client.events) {
            Some(ClientEvent::Exiting { at_ns }) => at_ns,
            _ => mono_ns(),
        }
    };
    // Once the client is reaped, its orphans are certainly ours.
    let _ = client.child.wait();
    t
}

/// Runs the case through a stand-in client process.
pub fn run(spec: &CaseSpec, stderr_path: &Path, helper: &Path, link: &Link) -> Observation {
    let mut result = Observation::empty(&spec.server, &spec.scenario.id);
    let step = spec.scenario.steps.first().copied();
    let action = step.map_or(Action::ClientExit, |s| s.action);
    let mode = if action == Action::ClientKill {
        ClientMode::Crash
    } else {
        ClientMode::Exit
    };
    let mut client = match spawn(helper, stderr_path, mode) {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(CaseError {
                kind: ErrorKind::Harness,
                message: format!("cannot start the client helper {}: {e}", helper.display()),
            });
            return result;
        }
    };
    // The client launches the server as soon as it has the spec: that is the start-up phase.
    link.need_cpu();
    send(&mut client.stdin, spec);
    let mut record = StdoutRecord::default();
    let Some(server) = until_ready(&mut client, &mut result, &mut record) else {
        link.free_cpu();
        if result.error.is_none() {
            result.error = Some(CaseError {
                kind: ErrorKind::Harness,
                message: "the client helper ended without reporting a handshake".into(),
            });
        }
        let _ = client.child.kill();
        let _ = client.child.wait();
        finish(&mut result, &record, stderr_path, &[], &[]);
        return result;
    };
    let before = live_tree(&[client.child.id() as i32]);
    // As in `direct`: this thread's wake-ups must not preempt the exiting server.
    sched::batch_this_thread();
    let watcher = server.watch().ok();
    let steps = step.into_iter().collect();
    let ladder = Ladder::new(steps, spec.budgets.prompt_ms, None);
    let driven = drive(ladder, &server, watcher.as_ref(), link, |a| {
        trigger(a, &mut client)
    });
    let ended = driven.ended;
    result.steps = ended.steps;
    result.trigger_ns = ended.trigger_ns;
    result.stage = Some(ended.stage);
    if let Some(exit_ns) = ended.exit_ns {
        result.exit_ns = Some(exit_ns);
        result.runqueue_ms = Some(ended.runqueue_ns as f64 / 1e6);
        result.exit_ms = ended.exit_ms;
        result.exit_status = server.reap();
    }
    result.diagnostics = driven.diagnostics;
    let settle_ms = if ended.stage == Stage::Survived {
        0
    } else {
        spec.budgets.prompt_ms
    };
    let alive = settle_descendants(settle_ms, &[server.pid()]);
    finish(&mut result, &record, stderr_path, &alive, &before);
    result
}
