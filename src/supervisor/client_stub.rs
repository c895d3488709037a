//! `mcp-shutdown __client exit|crash|terminal|terminal-job`: a stand-in for a real MCP client
//! process. It launches the server (whose stderr is the client's own: the supervisor's
//! pipe), does the handshake, reports, and then exits without closing anything (`exit`) or
//! waits to be killed (`crash`). For the terminal endings, `terminal` is the terminal's shell
//! (the session leader) and runs `terminal-job`, the host in the foreground job, which
//! launches the server in its group, survives Ctrl-C and exits when told to, as `exit` does.

use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::launch::{handshake, launch};
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
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Entry point; returns the process exit code.
pub fn main(mode: ClientMode, tty: Option<&Path>) -> i32 {
    // If the supervisor dies, so does the stand-in client (never the server: not inherited).
    let _ = signals::die_with_parent(SignalName::Kill);
    match (mode, tty) {
        (ClientMode::Terminal, Some(t)) => return shell(t),
        (ClientMode::TerminalJob, Some(t)) => {
            // Ctrl-C reaches the job with its server; a host survives it to clean up.
            let ready = terminal::await_foreground(t, Duration::from_secs(10))
                .and_then(|()| terminal::survive_interrupts());
            if ready.is_err() {
                return 2;
            }
        }
        (ClientMode::Terminal | ClientMode::TerminalJob, None) => return 2,
        _ => {}
    }
    let mut input = BufReader::new(std::io::stdin());
    let Some(spec) = recv::<CaseSpec>(&mut input) else {
        return 2;
    };
    let mut out = std::io::stdout().lock();
    let mut run = match launch(
        &spec.launch,
        Stdio::inherit(),
        spec.scenario.stdin_null,
        &spec.scenario.plumbing,
    ) {
        Ok(r) => r,
        Err(error) => {
            send(
                &mut out,
                &ClientEvent::Failed {
                    error,
                    stdout: StdoutRecord::default(),
                    machine_bound: None,
                },
            );
            return 0;
        }
    };
    send(
        &mut out,
        &ClientEvent::Spawned {
            pid: run.child.id(),
        },
    );
    let idle = &mut || send(&mut std::io::stdout().lock(), &ClientEvent::Idle);
    match handshake(&mut run, spec.protocol, &spec.budgets, idle) {
        Ok(handshake) => {
            let stdout = run.stdout_record();
            send(&mut out, &ClientEvent::Ready { handshake, stdout });
        }
        // The stand-in client reports the error and the machine-bound mark of a timeout
        // (its supervisor judges the rest).
        Err((error, machine_bound)) => {
            let stdout = run.stdout_record();
            send(
                &mut out,
                &ClientEvent::Failed {
                    error,
                    stdout,
                    machine_bound,
                },
            );
            // Leave the server to the supervisor, which kills the whole tree.
            std::process::exit(0);
        }
    }
    if mode == ClientMode::Crash {
        // Keep reading the server's output like a live client until killed.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    // Wait for the supervisor's word, then exit with the server's pipes still open: the
    // kernel closes them as the process ends.
    let _ = recv::<ToClient>(&mut input);
    send(&mut out, &ClientEvent::Exiting { at_ns: mono_ns() });
    std::process::exit(0)
}
