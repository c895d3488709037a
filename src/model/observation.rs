//! What one case (server × scenario) observed: the record the supervisor sends back, the
//! rules judge and the report shows. Its JSON form is part of the report format, so field
//! names are stable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::case_error::{CaseError, ErrorKind};
use super::ids::{Runtime, ScenarioId};
use super::leftover::Leftover;
use super::scenario::{Action, Stage};
use super::signal::{ExitStatus, SignalName};

/// One action of the ladder as it happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub action: Action,
    /// Milliseconds after the first action (the trigger).
    pub at_ms: f64,
    /// The wait after this action (until the next one or the exit): the server's own time
    /// the ladder counted in it, and its tree's run-queue time (reports before they were
    /// recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runqueue_ms: Option<f64>,
}

impl StepRecord {
    pub fn new(action: Action, at_ms: f64) -> Self {
        Self {
            action,
            at_ms,
            own_ms: None,
            runqueue_ms: None,
        }
    }
}

/// What decided a machine-bound verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decisive {
    /// A step's wait ran out and the ladder went on to the next: had the server not waited
    /// for a CPU, it would have exited within that wait's budget of its own time.
    Escalation,
    /// The handshake's wait ended on its wall-clock backstop before the server had the
    /// handshake budget of its own time: its timeout is the machine's.
    Handshake,
}

/// How many times a case the machine's load decided runs again before it is reported so.
pub const MACHINE_BOUND_RETRIES: usize = 2;

/// The machine, not the server, decided this case: the time its tree waited for a CPU in
/// the decisive window outlasted what separated its own time from the budget. Such a
/// verdict is never published as the server's: the case runs again, and only when every
/// run was machine-bound does it go back to be re-run on a quieter machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineBound {
    pub decided_by: Decisive,
    /// The window starts at this action (`steps[step]`) and ends at the exit, or at the
    /// next action when the server did not exit; for the handshake, at the launch (no
    /// action).
    pub step: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// Wall length of the window, the server's own time in it and its tree's run-queue time.
    pub wall_ms: f64,
    pub own_ms: f64,
    pub runqueue_ms: f64,
    /// The budget the window was judged against (the step's wait, or the prompt budget).
    pub budget_ms: u64,
}

/// What is wrong with one line the server wrote to stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViolationKind {
    /// Not valid UTF-8.
    NotUtf8,
    /// Empty or whitespace only.
    Blank,
    /// Not parseable as JSON.
    NotJson,
    /// JSON, but not a JSON-RPC 2.0 message.
    NotJsonRpc,
    /// Longer than the reader's line bound (64 MiB).
    TooLong,
    /// Bytes after the last newline when stdout closed.
    Unterminated,
}

impl ViolationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ViolationKind::NotUtf8 => "not-utf8",
            ViolationKind::Blank => "blank",
            ViolationKind::NotJson => "not-json",
            ViolationKind::NotJsonRpc => "not-json-rpc",
            ViolationKind::TooLong => "too-long",
            ViolationKind::Unterminated => "unterminated",
        }
    }
}

/// The first offending line, quoted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// 1-based line number on stdout.
    pub line: u64,
    pub kind: ViolationKind,
    /// The first bytes of the line, escaped (`\xff`, `\n`).
    pub excerpt: String,
    /// The line's length in bytes (reports before it was recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// What the server wrote to stdout over the whole session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdoutRecord {
    pub bytes: u64,
    pub lines: u64,
    /// Valid JSON-RPC 2.0 messages.
    pub messages: u64,
    /// Lines that are not exactly one JSON-RPC message.
    pub violations: u64,
    pub first_violation: Option<Violation>,
    /// JSON-RPC requests the server sent (allowed before 2026-07-28).
    pub server_requests: u64,
    pub first_server_request: Option<String>,
    /// Whether the server's stdout reached end-of-file while the reader was running.
    pub closed: bool,
}

/// How the server was confirmed to be up and serving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandshakeMode {
    /// `initialize` answered, then `notifications/initialized`, then `ping` answered.
    Initialize,
    /// No `initialize` (2026-07-28, SEP-2575): `ping` answered.
    Stateless,
}

/// What became of the request the `inflight` ending left in flight when it closed stdin: what
/// SDKs do differently (TypeScript v2 aborts, Python's dispatcher cancels, rmcp drains).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InflightOutcome {
    /// Its result arrived: the handler ran to the end and the answer was written.
    Answered,
    /// An error response arrived: the server gave up on the handler and said so.
    Cancelled,
    /// No response, and the server exited on end-of-file: the request was dropped.
    Aborted,
    /// No response, and the server outlived end-of-file while the request ran: it waited for
    /// the handler until the ladder's signal (or the end of the case) came first.
    Drained,
}

impl InflightOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            InflightOutcome::Answered => "answered",
            InflightOutcome::Cancelled => "cancelled",
            InflightOutcome::Aborted => "aborted",
            InflightOutcome::Drained => "drained",
        }
    }

    /// From what was measured: the response to the request (`Some(true)` a result,
    /// `Some(false)` an error) and the stage that ended the server.
    ///
    /// ```
    /// use mcp_shutdown_conformance::model::{InflightOutcome, Stage};
    /// assert_eq!(InflightOutcome::of(None, Stage::Eof), InflightOutcome::Aborted);
    /// assert_eq!(InflightOutcome::of(None, Stage::Sigterm), InflightOutcome::Drained);
    /// assert_eq!(InflightOutcome::of(Some(false), Stage::Eof), InflightOutcome::Cancelled);
    /// ```
    pub fn of(response: Option<bool>, stage: Stage) -> Self {
        match (response, stage) {
            (Some(true), _) => InflightOutcome::Answered,
            (Some(false), _) => InflightOutcome::Cancelled,
            (None, Stage::Eof) => InflightOutcome::Aborted,
            (None, _) => InflightOutcome::Drained,
        }
    }
}

impl std::fmt::Display for InflightOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A completed handshake.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandshakeInfo {
    pub mode: HandshakeMode,
    pub protocol_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// From launch to the answer of the last handshake request.
    pub ms: f64,
}

/// A process's scheduling state (`/proc/<pid>/stat`), as far as a diagnosis needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcState {
    Running,
    Sleeping,
    /// Uninterruptible sleep (`D`): waiting on disk or a kernel lock; signals wait too.
    DiskSleep,
    /// Stopped by SIGSTOP or SIGTSTP (`T`): it cannot run until continued.
    Stopped,
    /// Stopped by a tracer (`t`).
    Traced,
    /// Exited but not reaped (`Z`).
    Zombie,
    Idle,
    Other,
}

impl ProcState {
    pub fn from_letter(c: char) -> Self {
        match c {
            'R' => ProcState::Running,
            'S' => ProcState::Sleeping,
            'D' => ProcState::DiskSleep,
            'T' => ProcState::Stopped,
            't' => ProcState::Traced,
            'Z' | 'X' => ProcState::Zombie,
            'I' => ProcState::Idle,
            _ => ProcState::Other,
        }
    }
}

/// What keeps a process alive, read from `/proc` at the moment it should have exited.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics {
    pub pid: i32,
    /// Its state when it was read (reports before it was recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ProcState>,
    /// The runtime recognised from the executable: node, python, jvm, or null.
    pub runtime: Option<Runtime>,
    pub threads: usize,
    /// Thread names with counts, e.g. `"pool-1-thread-1"` or `"node (x7)"`.
    pub thread_names: Vec<String>,
    /// Open file descriptors by kind: pipe, socket, file, device, eventfd, timerfd, epoll, ...
    pub fds: BTreeMap<String, usize>,
    /// Command lines of its live children.
    pub children: Vec<String>,
    /// What usually holds such a process, and the fix.
    pub hint: String,
}

/// Where one case's time went, for the run's time summary and benchmarks; never judged.
/// The phases follow each other: setup, waiting for a CPU token, start-up, the ending's
/// ladder, and what comes after it. A case run `--repeat N` times carries the sum over its
/// runs (what the case cost), not one run's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CaseTiming {
    /// The fixture's setup (`npm ci`, a build), when this case ran it or waited for it.
    pub setup_ms: f64,
    /// Waiting for a CPU token: the run's queue, not the case.
    pub token_wait_ms: f64,
    /// Holding one (start-up, and the ending until the tree goes idle); overlaps the phases.
    #[serde(default)]
    pub token_held_ms: f64,
    /// From the supervisor's start to the first trigger: launch, handshake, preparation.
    pub startup_ms: f64,
    /// The ending's ladder: from the first trigger to the exit or the end of the last wait.
    pub grace_ms: f64,
    /// After the ladder: watching descendants settle, the diagnosis, the clean-up.
    pub observe_ms: f64,
    /// CPU time (user + system) of the case's supervisor and every process of the case it
    /// reaped: what the case cost the machine, for a run's floor.
    #[serde(default)]
    pub cpu_ms: f64,
}

impl CaseTiming {
    /// Adds `other`'s time to this one: every phase is summed, except the setup, which
    /// cases (or runs) of one fixture wait for together, so the longest wait is its cost.
    pub fn absorb(&mut self, other: &CaseTiming) {
        self.setup_ms = self.setup_ms.max(other.setup_ms);
        self.token_wait_ms += other.token_wait_ms;
        self.token_held_ms += other.token_held_ms;
        self.startup_ms += other.startup_ms;
        self.grace_ms += other.grace_ms;
        self.observe_ms += other.observe_ms;
        self.cpu_ms += other.cpu_ms;
    }
}

/// The outcome of one server × scenario case, as measured (before judging).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub server: String,
    pub scenario: ScenarioId,
    /// Which step ended the server; `null` when the case could not run (see `error`).
    pub stage: Option<Stage>,
    /// Milliseconds from the trigger (stdin closed, client died) to the server's exit;
    /// `null` when it never exited before the harness stopped waiting.
    pub exit_ms: Option<f64>,
    /// How the server process ended, when it ended before the harness killed it.
    pub exit_status: Option<ExitStatus>,
    pub steps: Vec<StepRecord>,
    pub handshake: Option<HandshakeInfo>,
    pub error: Option<CaseError>,
    pub stdout: StdoutRecord,
    /// The last few KiB the server wrote to stderr.
    pub stderr_tail: String,
    /// Descendants still running after the server's end (killed by the harness afterwards),
    /// at most [`MAX_LEFTOVERS`](super::leftover::MAX_LEFTOVERS) of them.
    pub leftovers: Vec<Leftover>,
    /// Leftovers beyond [`MAX_LEFTOVERS`](super::leftover::MAX_LEFTOVERS), counted but not listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub leftovers_omitted: u64,
    /// What held the server when it should have exited (read from `/proc` before escalating):
    /// the process behind its launchers (`server_process`) where one was found.
    #[serde(default)]
    pub diagnostics: Option<Diagnostics>,
    /// The process that speaks MCP, found behind the command's launchers (`npx`, `uv run`,
    /// `sh -c`) after the handshake, or when it should have exited (reports before it was
    /// recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_process: Option<super::identity::ServerProcess>,
    /// Set when the launchers ended on a signal sent to them alone and left the server
    /// behind them running: who they are, and what the server did when the harness then sent
    /// it that signal itself (reports before it was recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher_left: Option<super::identity::LauncherLeft>,
    /// In `inflight`: whether the request left in flight was answered before stdout closed.
    #[serde(default)]
    pub inflight_answered: Option<bool>,
    /// In `inflight`: what became of that request (reports before it was recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inflight_outcome: Option<InflightOutcome>,
    /// Of `exit_ms`, how long the server was runnable but waiting for a CPU (machine load,
    /// from the kernel's scheduler statistics). The prompt rules judge `exit_ms` minus this.
    #[serde(default)]
    pub runqueue_ms: Option<f64>,
    /// Raw `CLOCK_MONOTONIC` nanoseconds of the trigger and of the exit as the kernel
    /// reported it (pidfd readiness), for lining up with other clocks in benchmarks.
    #[serde(default)]
    pub trigger_ns: Option<u64>,
    #[serde(default)]
    pub exit_ns: Option<u64>,
    /// Wall time of the whole case (launch, handshake, ending, clean-up), for scheduling
    /// and benchmarks; never judged.
    #[serde(default)]
    pub wall_ms: f64,
    /// What this ending costs the user, when the numbers alone do not say it.
    #[serde(default)]
    pub note: Option<String>,
    /// Bytes the server wrote to stderr (of which `stderr_tail` keeps the last few KiB).
    #[serde(default)]
    pub stderr_bytes: u64,
    /// Forks the per-case process limit refused (a fork storm).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub limit_hits: u64,
    /// Set when the machine, not the server, decided the verdict (see [`MachineBound`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_bound: Option<MachineBound>,
    /// Earlier runs of this very case that the machine's load decided, in order: the case
    /// was run again (up to [`MACHINE_BOUND_RETRIES`] times) so that a busy machine makes a
    /// longer run, not a verdict sent back for a re-run. The fields above are the last run's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_bound_before: Vec<MachineBound>,
    /// The machine's 1-minute load average when the case ended (`/proc/loadavg`), so that
    /// every published cell can say how loaded the machine was; never judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_avg: Option<f64>,
    /// Where the case's time went; never judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<CaseTiming>,
    /// Set when the server ran under a real host binary (`check --real-host`), not under the
    /// harness: which host and quit path, and how the stage was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_host: Option<RealHostRun>,
    /// Not launched: the server could not start in this case (its probe, `close`), whose
    /// error this one carries, so that a report says it once, under that case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_as: Option<ScenarioId>,
}

/// A case run under a real host (`check --real-host`): the host ran the server and its own
/// ladder; the harness quit the host, traced the signals the server received and watched its
/// tree from outside.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RealHostRun {
    /// The host's id (`claude-code`), its npm package and the version that ran.
    pub host: String,
    pub package: String,
    pub version: String,
    /// The quit path (`quit-command`, `ctrl-d`, `mcp-list`, ...).
    pub trigger: String,
    /// The release the profile's ladder was measured on: the stage is the last step of that
    /// ladder whose signal the server was seen to receive (or was killed by); a step it
    /// cannot be seen to receive (a closed stdin) is placed by its measured wait after the
    /// last step seen.
    pub ladder_measured_on: String,
    /// Why the exit was not placed in the ladder, so that only survival and leftovers are
    /// judged: a one-shot command ends its servers on its own schedule (no quit to time from),
    /// the ladder did not reproduce across its measured runs, or the server's signals could
    /// not be traced here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed: Option<String>,
    /// The signals the server received after the quit, as traced, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<HostSignal>,
}

/// A signal the server received under a real host.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostSignal {
    pub signal: SignalName,
    /// When, after the quit (ms).
    pub at_ms: f64,
    /// Its sender's pid (0: the kernel, e.g. a closed terminal's SIGHUP).
    pub from_pid: i32,
    pub from: Sender,
}

/// Who sent a signal the server received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sender {
    /// The host process.
    Host,
    /// The kernel (a closed terminal's SIGHUP, a broken pipe's SIGPIPE).
    Kernel,
    /// The server itself (a runtime re-raising a signal after its handler, as Node does).
    Server,
    /// Any other process (a host's helper, the server's own children).
    Other,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Observation {
    /// An observation of a case that has not run (yet): no stage, no error.
    pub fn empty(server: &str, scenario: &ScenarioId) -> Self {
        Self {
            server: server.into(),
            scenario: scenario.clone(),
            stage: None,
            exit_ms: None,
            exit_status: None,
            steps: Vec::new(),
            handshake: None,
            error: None,
            stdout: StdoutRecord::default(),
            stderr_tail: String::new(),
            leftovers: Vec::new(),
            leftovers_omitted: 0,
            diagnostics: None,
            server_process: None,
            launcher_left: None,
            inflight_answered: None,
            inflight_outcome: None,
            runqueue_ms: None,
            trigger_ns: None,
            exit_ns: None,
            wall_ms: 0.0,
            note: None,
            stderr_bytes: 0,
            limit_hits: 0,
            machine_bound: None,
            machine_bound_before: Vec::new(),
            load_avg: None,
            timing: None,
            real_host: None,
            same_as: None,
        }
    }

    /// A case that could not run at all.
    pub fn failed(server: &str, scenario: &ScenarioId, kind: ErrorKind, message: String) -> Self {
        Self {
            error: Some(CaseError { kind, message }),
            ..Self::empty(server, scenario)
        }
    }

    /// The server's launcher ended and left the server itself running: the process behind
    /// the launcher is among what was left behind.
    pub fn left_by_launcher(&self) -> bool {
        self.server_process.as_ref().is_some_and(|p| {
            !p.launchers.is_empty() && self.leftovers.iter().any(|l| l.pid == p.pid)
        })
    }

    /// Everything left behind is the server itself and the launchers between it and its
    /// client (`npm exec`, then `sh -c`): the leak is its launchers' doing, nothing the
    /// server started.
    pub fn only_launchers_left(&self) -> bool {
        let Some(p) = self
            .server_process
            .as_ref()
            .filter(|p| !p.launchers.is_empty())
        else {
            return false;
        };
        let find = |pid: i32| self.leftovers.iter().find(|l| l.pid == pid);
        let mut chain = Vec::new();
        let mut at = find(p.pid);
        while let Some(l) = at.filter(|l| !chain.contains(&l.pid)) {
            chain.push(l.pid);
            at = l.started_by.and_then(find);
        }
        !chain.is_empty()
            && self.leftovers_omitted == 0
            && self.leftovers.iter().all(|l| chain.contains(&l.pid))
    }

    /// Every process left behind, listed or not.
    pub fn leftover_count(&self) -> u64 {
        self.leftovers.len() as u64 + self.leftovers_omitted
    }

    /// The part of the exit latency the server itself took: the wall latency minus the time
    /// it was runnable but waiting for a CPU, so that a busy machine cannot fail a server.
    pub fn own_ms(&self) -> Option<f64> {
        self.exit_ms
            .map(|t| (t - self.runqueue_ms.unwrap_or(0.0)).max(0.0))
    }
}
