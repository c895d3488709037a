//! Scenarios: the ways a session ends, as data. A scenario is a ladder of actions, each
//! followed by a wait; the server's stage is named after the last action it received before
//! it exited. Client profiles (`conformance/profiles.toml`) are `close:<profile>` scenarios.
//! Pure: nothing here touches a process.

use serde::{Deserialize, Serialize};

use crate::budgets::Budgets;
use crate::process::SignalName;

/// The client profiles shipped with the suite.
pub const PROFILES: &str = include_str!("../conformance/profiles.toml");

/// The stable scenario IDs a run uses by default, in report order. `close:<profile>` IDs
/// are added with `--scenario all` or by naming them.
pub const SCENARIOS: &[&str] = &[
    "close",
    "exit",
    "crash",
    "stdin-null",
    "sigterm",
    "sigint",
    "inflight",
];

/// Who receives a signal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// The server process only (what most SDK clients do).
    #[default]
    Process,
    /// The server's process group (the Python SDK client; a terminal's Ctrl-C).
    Group,
    /// The server and every descendant (the C# SDK client).
    Tree,
}

/// One thing done to end the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
pub enum Action {
    /// Nothing: the client starts closing but sends nothing yet (Java, C#).
    Nothing,
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
            Action::Nothing => "client starts closing".into(),
            Action::CloseStdin => "close stdin".into(),
            Action::Signal {
                signal,
                to: Target::Process,
            } => signal.to_string(),
            Action::Signal {
                signal,
                to: Target::Group,
            } => format!("{signal} to group"),
            Action::Signal {
                signal,
                to: Target::Tree,
            } => format!("{signal} to tree"),
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
    /// Stdin is `/dev/null` from the start: no handshake, the trigger is the launch.
    pub stdin_null: bool,
    /// A request is sent and stdin closed before its answer arrives.
    pub inflight: bool,
    /// The real client's last wait never ends (the harness caps it).
    pub unbounded: bool,
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
        Action::Nothing | Action::CloseStdin | Action::ClientExit | Action::ClientKill => {
            Stage::Eof
        }
        Action::Signal { signal, .. } => match signal {
            SignalName::Kill => Stage::Sigkill,
            SignalName::Int => Stage::Sigint,
            _ => Stage::Sigterm,
        },
    }
}

/// A client profile as written in `profiles.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: String,
    pub client: String,
    /// Take every wait from this budget instead (only `grace_ms`).
    pub waits_from: Option<String>,
    #[serde(default)]
    pub unbounded: bool,
    pub steps: Vec<ProfileStep>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileAction {
    Nothing,
    CloseStdin,
    Sigterm,
    Sigint,
    Sigkill,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileStep {
    #[serde(rename = "do")]
    pub action: ProfileAction,
    #[serde(default)]
    pub to: Target,
    pub wait_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    profile: Vec<Profile>,
}

/// The bundled client profiles.
pub fn profiles() -> Vec<Profile> {
    toml::from_str::<ProfileFile>(PROFILES)
        .expect("the bundled profiles.toml is valid (tested)")
        .profile
}

/// Every scenario ID: the defaults, then one `close:<profile>` per profile.
pub fn all_ids() -> Vec<String> {
    SCENARIOS
        .iter()
        .map(|s| s.to_string())
        .chain(profiles().into_iter().map(|p| format!("close:{}", p.id)))
        .collect()
}

impl Profile {
    fn ladder(&self, b: &Budgets) -> Vec<Step> {
        self.steps
            .iter()
            .map(|s| {
                let action = match s.action {
                    ProfileAction::Nothing => Action::Nothing,
                    ProfileAction::CloseStdin => Action::CloseStdin,
                    ProfileAction::Sigterm => Action::Signal {
                        signal: SignalName::Term,
                        to: s.to,
                    },
                    ProfileAction::Sigint => Action::Signal {
                        signal: SignalName::Int,
                        to: s.to,
                    },
                    ProfileAction::Sigkill => Action::Signal {
                        signal: SignalName::Kill,
                        to: s.to,
                    },
                };
                let wait_ms = if self.waits_from.as_deref() == Some("grace_ms") {
                    b.grace_ms
                } else {
                    s.wait_ms
                };
                Step { action, wait_ms }
            })
            .collect()
    }
}

impl Scenario {
    fn new(id: &str, driver: Driver, steps: Vec<Step>) -> Self {
        Self {
            id: id.to_string(),
            driver,
            steps,
            stdin_null: false,
            inflight: false,
            unbounded: false,
        }
    }

    /// Builds a scenario by its stable ID, with waits from `budgets`.
    pub fn from_id(id: &str, b: &Budgets) -> Option<Self> {
        let sig = |signal, to| Action::Signal { signal, to };
        let spec = || {
            profiles()
                .into_iter()
                .find(|p| p.id == "spec")
                .expect("spec profile")
                .ladder(b)
        };
        let s = match id {
            // The spec's ladder: close stdin, wait, SIGTERM, wait, SIGKILL.
            "close" => Self::new(id, Driver::Direct, spec()),
            "exit" => Self::new(
                id,
                Driver::Client,
                vec![Step {
                    action: Action::ClientExit,
                    wait_ms: b.observe_ms,
                }],
            ),
            "crash" => Self::new(
                id,
                Driver::Client,
                vec![Step {
                    action: Action::ClientKill,
                    wait_ms: b.observe_ms,
                }],
            ),
            // Started with stdin at EOF: start-up is included, so it has the handshake budget
            // (at most 5 s, or slow starters that ignore EOF would cost 30 s) plus the prompt
            // budget to notice.
            "stdin-null" => {
                let mut steps = spec();
                steps[0] = Step {
                    action: Action::CloseStdin,
                    wait_ms: b.handshake_ms.min(5000) + b.prompt_ms,
                };
                Self {
                    stdin_null: true,
                    ..Self::new(id, Driver::Direct, steps)
                }
            }
            // A process manager stops it; stdin stays open.
            "sigterm" => Self::new(
                id,
                Driver::Direct,
                vec![
                    Step {
                        action: sig(SignalName::Term, Target::Process),
                        wait_ms: b.grace_ms,
                    },
                    Step {
                        action: sig(SignalName::Kill, Target::Process),
                        wait_ms: b.grace_ms,
                    },
                ],
            ),
            // Ctrl-C in a terminal: SIGINT to the whole foreground process group.
            "sigint" => Self::new(
                id,
                Driver::Direct,
                vec![
                    Step {
                        action: sig(SignalName::Int, Target::Group),
                        wait_ms: b.grace_ms,
                    },
                    Step {
                        action: sig(SignalName::Kill, Target::Group),
                        wait_ms: b.grace_ms,
                    },
                ],
            ),
            "inflight" => Self {
                inflight: true,
                ..Self::new(id, Driver::Direct, spec())
            },
            other => {
                let name = other.strip_prefix("close:")?;
                let p = profiles().into_iter().find(|p| p.id == name)?;
                Self {
                    unbounded: p.unbounded,
                    ..Self::new(id, Driver::Direct, p.ladder(b))
                }
            }
        };
        Some(s)
    }

    /// The longest this scenario can take after the handshake, for scheduling and deadlines.
    pub fn max_wait_ms(&self) -> u64 {
        self.steps.iter().map(|s| s.wait_ms).sum()
    }

    /// Does the ending start with end-of-file on the server's stdin?
    pub fn closes_stdin(&self) -> bool {
        self.steps.first().is_some_and(|s| {
            matches!(
                s.action,
                Action::CloseStdin | Action::ClientExit | Action::ClientKill
            )
        })
    }

    /// The ID of the scenario family whose rules judge this one (`close:java` → `close`).
    pub fn family(&self) -> &str {
        self.id.split(':').next().unwrap_or(&self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stable_id_builds() {
        for id in all_ids() {
            let s = Scenario::from_id(&id, &Budgets::default()).unwrap();
            assert_eq!(s.id, id);
            assert!(!s.steps.is_empty());
        }
        assert!(Scenario::from_id("nope", &Budgets::default()).is_none());
        assert!(Scenario::from_id("close:nope", &Budgets::default()).is_none());
    }

    #[test]
    fn close_is_the_spec_ladder_with_grace_from_budgets() {
        let b = Budgets {
            grace_ms: 500,
            ..Budgets::default()
        };
        let s = Scenario::from_id("close", &b).unwrap();
        let stages: Vec<Stage> = s.steps.iter().map(|st| stage_after(&st.action)).collect();
        assert_eq!(stages, [Stage::Eof, Stage::Sigterm, Stage::Sigkill]);
        assert_eq!(s.max_wait_ms(), 1500);
        // A real client's waits are its own, whatever the grace budget.
        assert_eq!(
            Scenario::from_id("close:go", &b).unwrap().steps[0].wait_ms,
            5000
        );
    }

    #[test]
    fn profiles_follow_the_reference_table() {
        let b = Budgets::default();
        let java = Scenario::from_id("close:java", &b).unwrap();
        assert!(!java.closes_stdin() && java.unbounded);
        let rust = Scenario::from_id("close:rust", &b).unwrap();
        assert_eq!(
            rust.steps
                .iter()
                .map(|s| stage_after(&s.action))
                .collect::<Vec<_>>(),
            [Stage::Eof, Stage::Sigkill]
        );
        let py = Scenario::from_id("close:python", &b).unwrap();
        assert!(matches!(
            py.steps[1].action,
            Action::Signal {
                to: Target::Group,
                ..
            }
        ));
        let cs = Scenario::from_id("close:csharp", &b).unwrap();
        assert!(matches!(
            cs.steps[1].action,
            Action::Signal {
                signal: SignalName::Kill,
                to: Target::Tree
            }
        ));
        assert_eq!(cs.family(), "close");
    }
}
