//! `mcp-shutdown __client exit|crash|terminal|terminal-job`: a stand-in for a real MCP client
//! process. It launches the server (whose stderr is the client's own: the supervisor's
//! pipe), does the handshake, reports, and then exits without closing anything (`exit`) or
//! waits to be killed (`crash`). For the terminal endings, `terminal` is the terminal's shell
//! (the session leader) and runs `terminal-job`, the host in the foreground job, which
//! launches the server in its group, survives Ctrl-C and exits when told to, as `exit` does.

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::launch::{handshake, launch, Running};
use super::protocol::{recv, send, CaseSpec, ClientEvent, ClientMode, ToClient};
use crate::model::{CaseError, ErrorKind, ExitStatus, SignalName, StdoutRecord};
use crate::os::{mono_ns, signals, terminal};

/// The terminal's shell: leads a session on `tty`, starts the host as its foreground job
/// (sharing the shell's pipes to the supervisor), and stays until the terminal goes away
/// (SIGHUP) or the supervisor kills it. When the job ends it says so on the shared pipe: a
/// supervisor still waiting for the job's handshake learns that it never will (a server can
/// kill its host), instead of waiting for the case's deadline.
fn shell(tty: &Path) -> i32 {
    let Ok(terminal) = terminal::lead_session_on(tty) else {
        return 2;
    };
    let Ok(exe) = std::env::current_exe() else {
        return 2;
    };
    let mut job = Command::new(exe);
    job.args(["__client", ClientMode::TerminalJob.as_str(), "--tty"])
        .arg(tty);
    crate::os::spawn::in_group(&mut job, crate::model::GroupKind::Own);
    let job = job.spawn();
    let Ok(mut job) = job else { return 2 };
    if terminal::give_foreground(&terminal, job.id()).is_err() {
        return 2;
    }
    let status = job.wait().ok().map(ExitStatus::from);
    // Nothing of the harness signals the host before its handshake: a signal death then is
    // an attack from below it.
    let kind = match status {
        Some(ExitStatus::Signal(s)) => ErrorKind::of_lost_supervisor(false, Some(s)),
        _ => ErrorKind::Harness,
    };
    let error = CaseError {
        kind,
        message: format!(
            "the terminal's job (the host, the server's parent) ended ({}) before it reported the handshake, by none of the harness",
            status.map_or_else(|| "status unknown".into(), |s| s.to_string())
        ),
    };
    let stdout = StdoutRecord::default();
    send(
        &mut std::io::stdout().lock(),
        &ClientEvent::Failed {
            error,
            stdout,
            machine_bound: None,
        },
    );
    wait_to_be_killed()
}

/// Entry point; returns the process exit code.
pub fn main(mode: ClientMode, tty: Option<&Path>) -> i32 {
    // If the supervisor dies, so does the stand-in client (never the server: not inherited).
    let _ = signals::die_with_parent(SignalName::Kill);
    let ready = match (mode, tty) {
        (ClientMode::Terminal, Some(t)) => return shell(t),
        (ClientMode::TerminalJob, Some(t)) => become_foreground_job(t).is_ok(),
        (ClientMode::Terminal | ClientMode::TerminalJob, None) => false,
        _ => true,
    };
    if !ready {
        return 2;
    }
    let mut input = BufReader::new(std::io::stdin());
    let Some(spec) = recv::<CaseSpec>(&mut input) else {
        return 2;
    };
    let mut out = std::io::stdout().lock();
    let Some(mut run) = start_server(&spec, &mut out) else {
        return 0;
    };
    report_handshake(&mut run, &spec, &mut out);
    if mode == ClientMode::Crash {
        // Keep reading the server's output like a live client until killed.
        wait_to_be_killed();
    }
    // Wait for the supervisor's word, then exit with the server's pipes still open: the
    // kernel closes them as the process ends.
    let _ = recv::<ToClient>(&mut input);
    send(&mut out, &ClientEvent::Exiting { at_ns: mono_ns() });
    std::process::exit(0)
}

/// Waits for the terminal to hand this job the foreground. Ctrl-C reaches the job with its
/// server; a host survives it to clean up.
fn become_foreground_job(tty: &Path) -> std::io::Result<()> {
    terminal::await_foreground(tty, Duration::from_secs(10))
        .and_then(|()| terminal::survive_interrupts())
}

/// Launches the server and says so; a launch that fails is reported instead (`None`).
fn start_server(spec: &CaseSpec, out: &mut impl Write) -> Option<Running> {
    let run = launch(
        &spec.launch,
        Stdio::inherit(),
        spec.scenario.stdin_null,
        &spec.scenario.plumbing,
    );
    match run {
        Ok(run) => {
            let pid = run.child.id();
            send(out, &ClientEvent::Spawned { pid });
            Some(run)
        }
        Err(error) => {
            let stdout = StdoutRecord::default();
            send(
                out,
                &ClientEvent::Failed {
                    error,
                    stdout,
                    machine_bound: None,
                },
            );
            None
        }
    }
}

/// Does the handshake and reports it. A failed one is reported with the machine-bound mark
/// of a timeout (the supervisor judges the rest), and the stand-in exits, leaving the server
/// to the supervisor, which kills the whole tree.
fn report_handshake(run: &mut Running, spec: &CaseSpec, out: &mut impl Write) {
    let idle = &mut || send(&mut std::io::stdout().lock(), &ClientEvent::Idle);
    let handshake = handshake(run, spec.protocol, &spec.budgets, idle);
    let stdout = run.stdout_record();
    match handshake {
        Ok(handshake) => send(out, &ClientEvent::Ready { handshake, stdout }),
        Err((error, machine_bound)) => {
            send(
                out,
                &ClientEvent::Failed {
                    error,
                    stdout,
                    machine_bound,
                },
            );
            std::process::exit(0);
        }
    }
}

fn wait_to_be_killed() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
