//! `mcp-shutdown __client exit|crash|terminal`: a stand-in for a real MCP client process. It
//! launches the server (whose stderr is the client's own: the supervisor's pipe), does the
//! handshake, reports, and then exits without closing anything (`exit`), waits to be killed
//! (`crash`), or, as a terminal host leading a session on a pseudo-terminal, waits for what
//! its terminal does to it (`terminal`).

use std::io::BufReader;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::launch::{handshake, launch};
use super::protocol::{recv, send, CaseSpec, ClientEvent, ClientMode, ToClient};
use crate::model::{SignalName, StdoutRecord};
use crate::os::{mono_ns, signals};

/// Leads a new session whose controlling terminal is `tty`, as a terminal host does; the
/// returned file keeps it open.
fn become_terminal_host(tty: &Path) -> std::io::Result<std::fs::File> {
    nix::unistd::setsid()?;
    // A session leader that opens a terminal without O_NOCTTY acquires it as its controlling
    // terminal, and its group becomes the terminal's foreground group.
    std::fs::OpenOptions::new().read(true).write(true).open(tty)
}

/// Entry point; returns the process exit code.
pub fn main(mode: ClientMode, tty: Option<&Path>) -> i32 {
    // If the supervisor dies, so does the stand-in client (never the server: not inherited).
    let _ = signals::die_with_parent(SignalName::Kill);
    let _terminal = match (mode, tty) {
        (ClientMode::Terminal, Some(t)) => match become_terminal_host(t) {
            Ok(f) => Some(f),
            Err(_) => return 2,
        },
        (ClientMode::Terminal, None) => return 2,
        _ => None,
    };
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
    match handshake(&mut run, spec.protocol, &spec.budgets) {
        Ok(handshake) => {
            let stdout = run.stdout_record();
            send(&mut out, &ClientEvent::Ready { handshake, stdout });
        }
        Err(error) => {
            let stdout = run.stdout_record();
            send(&mut out, &ClientEvent::Failed { error, stdout });
            // Leave the server to the supervisor, which kills the whole tree.
            std::process::exit(0);
        }
    }
    if mode != ClientMode::Exit {
        // Keep reading the server's output like a live client until killed (a crash, or what
        // the terminal sends: SIGHUP, SIGINT).
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
