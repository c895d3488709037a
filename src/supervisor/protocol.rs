//! The typed lines the harness, the supervisor and the stand-in client exchange: one JSON
//! object per line, tagged, so neither side matches on bare strings.

use std::io::{BufRead, Write};

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::ladder::wall_cap_ms;
use crate::config::manifest::{InflightRequest, Launch, Protocol};
use crate::model::{
    Budgets, CaseError, HandshakeInfo, MachineBound, Observation, Scenario, StdoutRecord,
};

/// Everything a supervisor needs, sent by the harness as its first line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseSpec {
    pub server: String,
    pub launch: Launch,
    pub protocol: Protocol,
    pub scenario: Scenario,
    pub budgets: Budgets,
    pub inflight: InflightRequest,
    /// The case's cgroup, whose other members the supervisor kills at the end (none when
    /// the harness could not make one).
    #[serde(default)]
    pub cgroup: Option<std::path::PathBuf>,
}

impl CaseSpec {
    /// Hard deadline for the whole case: beyond it the supervisor aborts. Every wait counts
    /// the server's own time and stops at its wall-clock backstop at the latest.
    pub fn deadline_ms(&self) -> u64 {
        let waits: u64 = self
            .scenario
            .steps
            .iter()
            .map(|s| wall_cap_ms(s.until_idle.map_or(s.wait_ms, |u| u.busy_cap_ms)))
            .sum();
        // A server its launcher left running is then signalled itself: a grace period, SIGKILL
        // and another, and what it started settles for a prompt budget.
        let behind = 2 * self.budgets.grace_ms + self.budgets.prompt_ms;
        wall_cap_ms(self.budgets.handshake_ms) + waits + self.budgets.prompt_ms + behind + 30_000
    }
}

/// Harness → supervisor, after the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "kebab-case")]
pub enum ToSupervisor {
    /// A CPU token is granted.
    Go,
}

/// Supervisor → harness.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "kebab-case")]
pub enum FromSupervisor {
    /// Asks for a CPU token: start-up and the window from a trigger to the exit are CPU-heavy
    /// and timed, so the harness lets only as many run at once as there are CPUs.
    NeedCpu,
    /// Gives the token back.
    FreeCpu,
    /// Sent every second: a supervisor that stops sending (stopped, hung) is lost.
    Alive,
    /// The server completed its handshake: it can be launched (the run's other cases of
    /// this server, held back in case it could not, go).
    HandshakeDone,
    /// The case's outcome; the last line.
    Result { observation: Box<Observation> },
}

/// Supervisor → stand-in client: what the client should do once the handshake is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientMode {
    /// Exit with status 0 (pipes still open) when told to.
    Exit,
    /// Wait to be killed.
    Crash,
    /// Be the shell of a terminal: lead a session whose controlling terminal is the
    /// pseudo-terminal named on the command line, run a `terminal-job` as its foreground
    /// job, and die of what the terminal sends (SIGHUP when it is closed).
    Terminal,
    /// The terminal's foreground job: a host that launches the server in its own group,
    /// survives Ctrl-C (as hosts do, to clean up) and exits when told to.
    TerminalJob,
}

impl ClientMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientMode::Exit => "exit",
            ClientMode::Crash => "crash",
            ClientMode::Terminal => "terminal",
            ClientMode::TerminalJob => "terminal-job",
        }
    }
}

impl std::str::FromStr for ClientMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "exit" => Ok(ClientMode::Exit),
            "crash" => Ok(ClientMode::Crash),
            "terminal" => Ok(ClientMode::Terminal),
            "terminal-job" => Ok(ClientMode::TerminalJob),
            other => Err(format!(
                "unknown client mode `{other}` (known: exit, crash, terminal, terminal-job)"
            )),
        }
    }
}

/// Supervisor → stand-in client, after the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "kebab-case")]
pub enum ToClient {
    /// Exit now.
    Go,
}

/// Stand-in client → supervisor.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum ClientEvent {
    Spawned {
        pid: u32,
    },
    /// The server sat idle in the handshake: its supervisor gives the CPU token back, and
    /// takes one again when it is `Ready`.
    Idle,
    Ready {
        handshake: HandshakeInfo,
        stdout: StdoutRecord,
    },
    Failed {
        error: CaseError,
        stdout: StdoutRecord,
        /// A handshake timeout the wall-clock backstop decided, short of the budget of the
        /// server's own time: the machine's doing, as in the direct driver.
        #[serde(default)]
        machine_bound: Option<MachineBound>,
    },
    Exiting {
        at_ns: u64,
    },
}

/// Writes one line and flushes; errors are ignored (the other side may be gone, and a
/// closed pipe must never panic a supervisor).
pub fn send(out: &mut impl Write, msg: &impl Serialize) {
    if let Ok(line) = serde_json::to_string(msg) {
        let _ = writeln!(out, "{line}").and_then(|_| out.flush());
    }
}

/// Reads one line as `T`; `None` at end of input or on a line that is not one.
pub fn recv<T: DeserializeOwned>(input: &mut impl BufRead) -> Option<T> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(n) if n > 0 => serde_json::from_str(&line).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let mut buf = Vec::new();
        send(&mut buf, &FromSupervisor::NeedCpu);
        send(&mut buf, &ToSupervisor::Go);
        let text = String::from_utf8(buf.clone()).unwrap();
        assert_eq!(text, "{\"line\":\"need-cpu\"}\n{\"line\":\"go\"}\n");
        let mut r = std::io::BufReader::new(&buf[..]);
        assert!(matches!(
            recv::<FromSupervisor>(&mut r),
            Some(FromSupervisor::NeedCpu)
        ));
        assert_eq!(recv::<ToSupervisor>(&mut r), Some(ToSupervisor::Go));
        assert_eq!(recv::<ToSupervisor>(&mut r), None);
    }

    /// The stand-in client's handshake timeout keeps its machine-bound mark on the way to
    /// the supervisor, as the direct driver's does.
    #[test]
    fn a_failed_handshake_carries_its_machine_bound_mark() {
        use crate::model::{Decisive, ErrorKind};
        let bound = MachineBound {
            decided_by: Decisive::Handshake,
            step: 0,
            action: None,
            wall_ms: 90_000.0,
            own_ms: 4_000.0,
            runqueue_ms: 86_000.0,
            budget_ms: 30_000,
        };
        let mut buf = Vec::new();
        send(
            &mut buf,
            &ClientEvent::Failed {
                error: CaseError {
                    kind: ErrorKind::HandshakeTimeout,
                    message: "no answer".into(),
                },
                stdout: StdoutRecord::default(),
                machine_bound: Some(bound.clone()),
            },
        );
        let mut r = std::io::BufReader::new(&buf[..]);
        match recv::<ClientEvent>(&mut r) {
            Some(ClientEvent::Failed { machine_bound, .. }) => {
                assert_eq!(machine_bound, Some(bound))
            }
            _ => panic!("not a failure"),
        }
    }
}
