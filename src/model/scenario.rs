//! The vocabulary of an ending: the actions of a stop ladder, who receives them, and which
//! step ended the server. A scenario is a ladder of actions, each followed by a wait; the
//! server's stage is named after the last action it received before it exited.

use serde::{Deserialize, Serialize};

use super::ids::{Ending, ScenarioId};
use super::signal::SignalName;

/// Length of one wait slice: how often a wait samples the server's tree, and so the
/// resolution of its own-time accounting.
pub const SLICE_MS: u64 = 50;

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
    /// The server's children, not the server (opencode's first SIGTERM: the TypeScript SDK
    /// ends what the server started before it ends the server).
    Children,
}

/// One thing done to end the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
pub enum Action {
    /// Nothing: the client starts closing but sends nothing yet (Java, C#).
    Nothing,
    /// Close the server's stdin (the harness is its parent and holds the pipe).
    CloseStdin,
    /// Close stdin and stop reading stdout: the server's next write gets EPIPE (a host that
    /// quits without a word).
    ClosePipes,
    /// The terminal of a terminal host goes away: the kernel sends SIGHUP to the host (the
    /// session leader), which dies, and then to its foreground process group.
    Hangup {
        /// The server is in the host's foreground group, so the SIGHUP reaches it too.
        reaches_server: bool,
    },
    /// Ctrl-C in the terminal of a terminal host: SIGINT to the foreground process group;
    /// the host dies of it.
    Interrupt { reaches_server: bool },
    /// Send a signal.
    Signal { signal: SignalName, to: Target },
    /// The client process exits with status 0 without closing anything.
    ClientExit,
    /// The client process is killed with SIGKILL.
    ClientKill,
}

impl Action {
    /// Does this action reach the server itself? Doing nothing does not, nor does a signal
    /// to its children alone.
    pub fn reaches_server(self) -> bool {
        !matches!(
            self,
            Action::Nothing
                | Action::Signal {
                    to: Target::Children,
                    ..
                }
        )
    }

    /// Does this action put the server's stdin at end-of-file?
    pub fn closes_stdin(self) -> bool {
        matches!(
            self,
            Action::CloseStdin
                | Action::ClosePipes
                | Action::ClientExit
                | Action::ClientKill
                | Action::Hangup { .. }
                | Action::Interrupt { .. }
        )
    }
}

/// An action and how long to wait for the server to exit before the next one. A wait counts
/// only the server's own time (not time its processes spent queued for a CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub action: Action,
    pub wait_ms: u64,
    /// Counts only time the server sits idle instead (for a server started with stdin at
    /// EOF: how long it starts up is not what is judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_idle: Option<UntilIdle>,
}

impl Step {
    pub fn new(action: Action, wait_ms: u64) -> Self {
        Self {
            action,
            wait_ms,
            until_idle: None,
        }
    }
}

/// A wait that ends once the server has been idle for `wait_ms` in all, or has been busy for
/// `busy_cap_ms` of its own time (it never settles: a busy loop, or a start-up longer than
/// the handshake budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntilIdle {
    pub busy_cap_ms: u64,
}

/// Who is the server's parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Driver {
    /// The harness (per-case supervisor) launches the server and drives the ladder.
    Direct,
    /// A separate client process launches it, does the handshake, then dies.
    Client,
    /// A stand-in terminal host (the session leader of a pseudo-terminal) launches it; the
    /// terminal is then closed, or Ctrl-C typed into it.
    Terminal,
}

/// How a server's stdin and stdout are connected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StdioKind {
    #[default]
    Pipes,
    /// One Unix socketpair per stream (what libuv, so every Node and Electron host, and Bun
    /// give their children).
    Socketpair,
}

/// Which process group and session the server is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupKind {
    /// The host's group and session: a terminal's signals reach it with the host.
    Host,
    /// A group of its own, in the host's session.
    #[default]
    Own,
    /// A session (and group) of its own (setsid).
    Session,
}

/// How the server's command is run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    #[default]
    Direct,
    /// Through `sh -c '<command>'`: the server may be a grandchild behind the shell.
    Shell,
}

/// How a host launches a server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plumbing {
    #[serde(default)]
    pub stdio: StdioKind,
    #[serde(default)]
    pub group: GroupKind,
    #[serde(default)]
    pub via: Via,
}

/// Launch plumbing asked for on the command line, over what a profile or ending uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlumbingOverride {
    pub stdio: Option<StdioKind>,
    pub group: Option<GroupKind>,
    pub via: Option<Via>,
}

impl PlumbingOverride {
    pub fn apply(&self, p: Plumbing) -> Plumbing {
        Plumbing {
            stdio: self.stdio.unwrap_or(p.stdio),
            group: self.group.unwrap_or(p.group),
            via: self.via.unwrap_or(p.via),
        }
    }
}

/// Which step ended the server: a stable vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Exited after end of input and nothing else.
    Eof,
    /// Exited after SIGINT.
    Sigint,
    /// Exited after SIGTERM.
    Sigterm,
    /// Exited after SIGHUP (its terminal went away).
    Sighup,
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
            Stage::Sighup => "sighup",
            Stage::Sigterm => "sigterm",
            Stage::Sigkill => "sigkill",
            Stage::Survived => "survived",
        })
    }
}

/// The stage of a server that exited after `action` (the last one it received).
pub fn stage_after(action: &Action) -> Stage {
    match action {
        Action::Nothing
        | Action::CloseStdin
        | Action::ClosePipes
        | Action::ClientExit
        | Action::ClientKill
        | Action::Hangup {
            reaches_server: false,
        }
        | Action::Interrupt {
            reaches_server: false,
        } => Stage::Eof,
        Action::Hangup {
            reaches_server: true,
        } => Stage::Sighup,
        Action::Interrupt {
            reaches_server: true,
        } => Stage::Sigint,
        // The server itself received nothing.
        Action::Signal {
            to: Target::Children,
            ..
        } => Stage::Eof,
        Action::Signal { signal, .. } => match signal {
            SignalName::Kill => Stage::Sigkill,
            SignalName::Int => Stage::Sigint,
            SignalName::Hup => Stage::Sighup,
            _ => Stage::Sigterm,
        },
    }
}

/// Whose doing a server's end is when its client's ladder leaves it nothing to answer: then
/// what the user lives through says nothing of the server's own conduct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostsDoing {
    /// No step reaches the server (stdin stays open, no signal comes): the host left it
    /// running, whatever the server does.
    LeftRunning,
    /// The first step that reaches the server is SIGKILL: it is killed hard, whatever it does.
    KilledHard,
}

/// Whose doing the end of a server under `steps` is, when the server has no say in it.
pub fn hosts_doing(steps: &[Step]) -> Option<HostsDoing> {
    let first = steps.iter().map(|s| s.action).find(|a| a.reaches_server());
    match first {
        None => Some(HostsDoing::LeftRunning),
        Some(Action::Signal {
            signal: SignalName::Kill,
            ..
        }) => Some(HostsDoing::KilledHard),
        Some(_) => None,
    }
}

/// The planned stop ladder of a case, as the report carries it (so that a report renders
/// its timeline from what was planned then, not from today's profiles).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ladder {
    pub steps: Vec<Step>,
    /// The real client's last wait never ends (the harness capped it).
    #[serde(default)]
    pub unbounded: bool,
    /// After its last step the real client stops waiting and leaves a survivor running.
    #[serde(default)]
    pub abandons: bool,
    #[serde(default)]
    pub plumbing: Plumbing,
}

/// A way of ending a session, ready to run: built from a [`ScenarioId`], the budgets and the
/// profiles by `config::scenarios`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    pub id: ScenarioId,
    pub driver: Driver,
    pub steps: Vec<Step>,
    /// Stdin is `/dev/null` from the start: no handshake, the trigger is the launch.
    pub stdin_null: bool,
    /// A request is sent and stdin closed before its answer arrives.
    pub inflight: bool,
    /// The real client's last wait never ends (the harness caps it).
    pub unbounded: bool,
    /// After its last step the real client stops waiting and leaves a survivor running.
    pub abandons: bool,
    pub plumbing: Plumbing,
}

impl Scenario {
    pub fn new(id: ScenarioId, driver: Driver, steps: Vec<Step>) -> Self {
        Self {
            id,
            driver,
            steps,
            stdin_null: false,
            inflight: false,
            unbounded: false,
            abandons: false,
            plumbing: Plumbing::default(),
        }
    }

    /// The longest this scenario's waits can take in the server's own time, for scheduling
    /// and deadlines.
    pub fn max_wait_ms(&self) -> u64 {
        self.steps
            .iter()
            .map(|s| {
                s.until_idle
                    .map_or(s.wait_ms, |u| u.busy_cap_ms.max(s.wait_ms))
            })
            .sum()
    }

    /// Does the ending start with end-of-file on the server's stdin?
    /// Whether the ladder's first action that reaches the server closes its stdin (a signal
    /// to its children alone comes before, and is not the server's ending).
    pub fn closes_stdin(&self) -> bool {
        self.first_reaching()
            .is_some_and(|s| s.action.closes_stdin())
    }

    /// Whether the end-of-file that starts the ending is given time of its own: `false` when
    /// the next action follows it at once (`wait_ms = 0`: a host whose exit closes the pipes
    /// and signals the server together), so the server's answer to EOF cannot be told apart.
    pub fn eof_comes_alone(&self) -> bool {
        self.closes_stdin() && self.first_reaching().is_some_and(|s| s.wait_ms > 0)
    }

    /// The ladder's first step that reaches the server (a signal to its children alone does
    /// not).
    fn first_reaching(&self) -> Option<&Step> {
        self.steps.iter().find(|s| {
            !matches!(
                s.action,
                Action::Signal {
                    to: Target::Children,
                    ..
                }
            )
        })
    }

    /// Whose doing the server's end is under this ladder, when it has no say in it.
    pub fn hosts_doing(&self) -> Option<HostsDoing> {
        hosts_doing(&self.steps)
    }

    /// The ending whose rules judge this one (`close:java` → `close`).
    pub fn ending(&self) -> Ending {
        self.id.ending()
    }

    pub fn ladder(&self) -> Ladder {
        Ladder {
            steps: self.steps.clone(),
            unbounded: self.unbounded,
            abandons: self.abandons,
            plumbing: self.plumbing,
        }
    }
}
