//! Scenarios: the ways a session ends, as data. A scenario is a ladder of actions, each
//! followed by a wait; the server's stage is named after the last action it received before
//! it exited. Pure: nothing here touches a process.

use serde::{Deserialize, Serialize};

use crate::budgets::Budgets;
use crate::process::SignalName;

/// The stable scenario IDs, in report order.
pub const SCENARIOS: &[&str] = &["close", "exit", "crash"];

/// Who receives a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// The server process only (what most SDK clients do).
    Process,
    /// The server's process group (the Python SDK client).
    Group,
}

/// One thing done to end the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
pub enum Action {
    /// Close the server's stdin (the harness is its parent and holds the pipe).
    CloseStdin,
    /// Send a signal.
    Signal { signal: SignalName, to: Target },
    /// The client process exits with status 0 without closing anything.
    ClientExit,
    /// The client process is killed with SIGKILL.
    ClientKill,
}

impl Action {
    /// A short label for tables and timelines.
    pub fn label(&self) -> String {
        match self {
            Action::CloseStdin => "close stdin".into(),
            Action::Signal { signal, to: Target::Process } => signal.to_string(),
            Action::Signal { signal, to: Target::Group } => format!("{signal} to group"),
            Action::ClientExit => "client exit".into(),
            Action::ClientKill => "client SIGKILL".into(),
        }
    }
}

/// An action and how long to wait for the server to exit before the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub action: Action,
    pub wait_ms: u64,
}

/// Who is the server's parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Driver {
    /// The harness (per-case supervisor) launches the server and drives the ladder.
    Direct,
    /// A separate client process launches it, does the handshake, then dies.
    Client,
}

/// A way of ending a session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    pub id: String,
    pub driver: Driver,
    pub steps: Vec<Step>,
}

/// Which step ended the server: a stable vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Exited after end of input and nothing else.
    Eof,
    /// Exited after SIGINT.
    Sigint,
    /// Exited after SIGTERM.
    Sigterm,
    /// Needed SIGKILL.
    Sigkill,
    /// Still alive when the harness stopped waiting (then killed by the harness).
    Survived,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Eof => "eof",
            Stage::Sigint => "sigint",
            Stage::Sigterm => "sigterm",
            Stage::Sigkill => "sigkill",
            Stage::Survived => "survived",
        })
    }
}

/// The stage of a server that exited after `action` (the last one it received).
pub fn stage_after(action: &Action) -> Stage {
    match action {
        Action::CloseStdin | Action::ClientExit | Action::ClientKill => Stage::Eof,
        Action::Signal { signal, .. } => match signal {
            SignalName::Kill => Stage::Sigkill,
            SignalName::Int => Stage::Sigint,
            _ => Stage::Sigterm,
        },
    }
}

impl Scenario {
    /// Builds a scenario by its stable ID, with waits from `budgets`.
    pub fn from_id(id: &str, b: &Budgets) -> Option<Self> {
        let sig = |signal| Action::Signal {
            signal,
            to: Target::Process,
        };
        let (driver, steps) = match id {
            // The spec's ladder: close stdin, wait, SIGTERM, wait, SIGKILL.
            "close" => (
                Driver::Direct,
                vec![
                    Step { action: Action::CloseStdin, wait_ms: b.grace_ms },
                    Step { action: sig(SignalName::Term), wait_ms: b.grace_ms },
                    Step { action: sig(SignalName::Kill), wait_ms: b.grace_ms },
                ],
            ),
            "exit" => (
                Driver::Client,
                vec![Step { action: Action::ClientExit, wait_ms: b.observe_ms }],
            ),
            "crash" => (
                Driver::Client,
                vec![Step { action: Action::ClientKill, wait_ms: b.observe_ms }],
            ),
            _ => return None,
        };
        Some(Self {
            id: id.to_string(),
            driver,
            steps,
        })
    }

    /// The longest this scenario can take after the handshake, for scheduling and deadlines.
    pub fn max_wait_ms(&self) -> u64 {
        self.steps.iter().map(|s| s.wait_ms).sum()
    }

    /// Does the ladder close stdin (so the EOF rule applies)?
    pub fn closes_stdin(&self) -> bool {
        self.steps.first().is_some_and(|s| {
            matches!(s.action, Action::CloseStdin | Action::ClientExit | Action::ClientKill)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stable_id_builds() {
        for id in SCENARIOS {
            let s = Scenario::from_id(id, &Budgets::default()).unwrap();
            assert_eq!(&s.id, id);
            assert!(s.closes_stdin());
        }
        assert!(Scenario::from_id("nope", &Budgets::default()).is_none());
    }

    #[test]
    fn close_is_the_spec_ladder() {
        let s = Scenario::from_id("close", &Budgets::default()).unwrap();
        let stages: Vec<Stage> = s.steps.iter().map(|st| stage_after(&st.action)).collect();
        assert_eq!(stages, [Stage::Eof, Stage::Sigterm, Stage::Sigkill]);
        assert_eq!(s.max_wait_ms(), 6000);
    }
}
