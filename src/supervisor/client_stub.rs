//! `mcp-shutdown __client exit|crash`: a stand-in for a real MCP client process. It launches
//! the server (whose stderr is the client's own: the supervisor's pipe), does the handshake,
//! reports, and then exits without closing anything (`exit`) or waits to be killed (`crash`).

use std::io::BufReader;
use std::process::Stdio;
use std::time::Duration;

use super::launch::{handshake, launch};
use super::protocol::{recv, send, CaseSpec, ClientEvent, ClientMode, ToClient};
use crate::model::{SignalName, StdoutRecord};
use crate::os::{mono_ns, signals};

/// Entry point; returns the process exit code.
pub fn main(mode: ClientMode) -> i32 {
    // If the supervisor dies, so does the stand-in client (never the server: not inherited).
    let _ = signals::die_with_parent(SignalName::Kill);
    let mut input = BufReader::new(std::io::stdin());
    let Some(spec) = recv::<CaseSpec>(&mut input) else {
        return 2;
    };
    let mut out = std::io::stdout().lock();
    let mut run = match launch(&spec.launch, Stdio::inherit(), spec.scenario.stdin_null) {
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
    if mode == ClientMode::Crash {
        // Keep reading the server's output like a live client until we are killed.
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
