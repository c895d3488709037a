//! The `direct` driver: the supervisor is the server's parent and drives the ladder itself.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use super::drive::drive;
use super::ladder::LadderState;
use super::launch::{handshake, launch, settled_stdout, Running, ServerStdin, StderrTap};
use super::link::Link;
use super::protocol::CaseSpec;
use super::{behind, finish, live_tree};
use crate::mcp::handshake::{Peer, WallDeadline};
use crate::mcp::wire::WireEvent;
use crate::model::{
    Action, CaseError, ErrorKind, ExitStatus, InflightOutcome, Observation, Stage, Target,
};
use crate::os::{identify, mono_ns, procfs, sched, signals, Pidfd};

/// The id of the request the `inflight` scenario leaves in flight.
const INFLIGHT_ID: i64 = 3;

/// The supervisor's ends of the server's pipes.
struct Ends {
    stdin: Option<ServerStdin>,
    stop_reading: Option<std::os::fd::OwnedFd>,
}

/// Performs one ladder action on the server. Returns the trigger time (just before the
/// syscall that does it).
fn perform(action: Action, ends: &mut Ends, server: &Pidfd) -> u64 {
    let t = mono_ns();
    match action {
        Action::Nothing => {}
        Action::CloseStdin => drop(ends.stdin.take()),
        Action::ClosePipes => {
            drop(ends.stdin.take());
            drop(ends.stop_reading.take());
        }
        Action::Signal {
            signal,
            to: Target::Tree,
        } => {
            // The tree is read first: once the server dies its children are reparented
            // and no longer its descendants (hosts also list the tree, then kill).
            let tree = procfs::descendants(server.pid());
            let _ = server.signal(signal);
            for p in tree {
                signals::signal_pid(p.pid, signal);
            }
        }
        Action::Signal {
            signal,
            to: Target::Process,
        } => {
            let _ = server.signal(signal);
        }
        Action::Signal {
            signal,
            to: Target::Group,
        } => signals::signal_group_of(server.pid(), signal),
        Action::Signal {
            signal,
            to: Target::Children,
        } => {
            for p in procfs::children(server.pid()) {
                signals::signal_pid(p.pid, signal);
            }
        }
        // Client and terminal actions only exist in the other drivers' ladders.
        Action::ClientExit
        | Action::ClientKill
        | Action::Hangup { .. }
        | Action::Interrupt { .. } => {}
    }
    t
}

/// The response to `id` that arrived before the server ended: `Some(true)` a result,
/// `Some(false)` an error, `None` nothing. Call it once the reader has caught up with the
/// stream (every message it took in is then in `rx`).
fn response(rx: &Receiver<WireEvent>, id: i64) -> Option<bool> {
    rx.try_iter().find_map(|ev| match ev {
        WireEvent::Message(m) if m.get("id").and_then(serde_json::Value::as_i64) == Some(id) => {
            Some(m.get("error").is_none())
        }
        _ => None,
    })
}

/// Launches and confirms the server; `None` when the case could not reach its ending (the
/// observation then says why).
fn start(
    spec: &CaseSpec,
    tap: &StderrTap,
    stderr: std::process::Stdio,
    link: &Link,
    result: &mut Observation,
) -> Option<Running> {
    link.need_cpu();
    let mut run = match launch(
        &spec.launch,
        stderr,
        spec.scenario.stdin_null,
        &spec.scenario.plumbing,
    ) {
        Ok(r) => r,
        Err(e) => {
            link.free_cpu();
            result.error = Some(e);
            return None;
        }
    };
    // The token is held on through the trigger: the gap between handshake and ending must
    // not depend on load (some servers finish starting up after the handshake). A tree that
    // sat idle in the handshake gave it back, and takes one again before its trigger.
    if !spec.scenario.stdin_null {
        match handshake(&mut run, spec.protocol, &spec.budgets, &mut || {
            link.free_cpu()
        }) {
            Ok(h) => {
                result.handshake = Some(h);
                result.server_process = identify::server_process(run.child.id() as i32);
                link.handshake_done();
                link.need_cpu();
            }
            Err((e, bound)) => {
                link.free_cpu();
                result.error = Some(tap.explain(e));
                result.machine_bound = bound;
                finish(result, &run.stdout_record(), tap, &[], &[]);
                return None;
            }
        }
        if run.pidfd.has_exited() {
            link.free_cpu();
            let status = run.child.wait().ok().map(ExitStatus::from);
            result.exit_status = status;
            result.error = Some(CaseError {
                kind: ErrorKind::ExitedBeforeEnd,
                message: format!(
                    "the server exited ({}) right after the handshake, before the session was ended",
                    status.map_or_else(|| "status unknown".into(), |s| s.to_string())
                ),
            });
            finish(result, &run.stdout_record(), tap, &[], &[]);
            return None;
        }
    }
    Some(run)
}

/// Sends the request the `inflight` ending leaves unanswered (never blocking for long: a
/// server that does not read gets no request).
fn send_inflight(spec: &CaseSpec, run: &mut Running) {
    let mut req =
        serde_json::json!({"jsonrpc": "2.0", "id": INFLIGHT_ID, "method": spec.inflight.method});
    // A request without parameters has no `params` member: `null` is not a valid one, and an
    // SDK that rejects it (closing its transport) would be judged on our malformed request.
    if let Some(params) = &spec.inflight.params {
        req["params"] = params.clone();
    }
    if let Some(stdin) = run.stdin.as_mut() {
        let mut line = req.to_string().into_bytes();
        line.push(b'\n');
        let budget = Duration::from_millis(spec.budgets.prompt_ms);
        let _ = stdin.send_all(&line, &mut WallDeadline::new(mono_ns(), budget));
    }
}

/// Runs the case with the supervisor as the server's parent.
pub fn run(spec: &CaseSpec, link: &Link) -> Observation {
    let mut result = Observation::empty(&spec.server, &spec.scenario.id);
    let (tap, stderr) = match StderrTap::open() {
        Ok(t) => t,
        Err(e) => {
            result.error = Some(CaseError {
                kind: ErrorKind::Harness,
                message: format!("cannot make a pipe for the server's stderr: {e}"),
            });
            return result;
        }
    };
    let Some(mut run) = start(spec, &tap, stderr, link, &mut result) else {
        return result;
    };
    let before = live_tree(&[]);
    // Nothing is started from this thread any more (children would inherit the class): from
    // here on its wake-ups must not preempt the server (the watcher thread stamps the exit).
    sched::batch_this_thread();
    if spec.scenario.inflight {
        send_inflight(spec, &mut run);
    }
    let origin = spec.scenario.stdin_null.then_some(run.started_ns);
    let ladder = LadderState::new(spec.scenario.steps.clone(), spec.budgets.prompt_ms, origin);
    let Running {
        child: mut server_child,
        pidfd,
        stdin,
        stop_reading,
        record,
        flusher,
        rx,
        watcher,
        mut sampler,
        ..
    } = run;
    let mut ends = Ends {
        stdin,
        stop_reading,
    };
    let driven = drive(ladder, &pidfd, watcher.as_ref(), &mut sampler, link, |a| {
        perform(a, &mut ends, &pidfd)
    });
    let stage = driven.ended.stage;
    driven.ended.record(&mut result);
    result.diagnostics = driven.diagnostics;
    result.server_process = result.server_process.take().or(driven.server_process);
    if stage != Stage::Survived {
        result.exit_status = server_child.wait().ok().map(ExitStatus::from);
    }
    let alive = behind::settle(&mut result, &spec.budgets, &[pidfd.pid()]);
    let stdout = settled_stdout(&flusher, &record);
    if spec.scenario.inflight {
        let got = response(&rx, INFLIGHT_ID);
        result.inflight_answered = Some(got.is_some());
        result.inflight_outcome = Some(InflightOutcome::of(got, stage));
    }
    finish(&mut result, &stdout, &tap, &alive, &before);
    result
}
