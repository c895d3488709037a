//! What one case (server × scenario) observed: the record that rules judge and reports show.
//! Its JSON form is part of the report format, so field names are stable.

use serde::{Deserialize, Serialize};

use crate::mcp::{HandshakeInfo, StdoutRecord};
use crate::process::{ExitStatus, ProcInfo};
use crate::rules::Check;
use crate::scenario::{Action, Stage};

/// Why a case could not be run as intended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The manifest's setup command failed or a required program is missing.
    SetupFailed,
    /// The server command could not be started (not found, not executable).
    SpawnFailed,
    /// The server exited (crashed) before completing the handshake.
    ExitedBeforeHandshake,
    /// The server did not answer within the handshake budget.
    HandshakeTimeout,
    /// The server answered, but not as an MCP server (rejected, closed stdout).
    HandshakeFailed,
    /// The server exited on its own after the handshake, before the session was ended.
    ExitedBeforeEnd,
    /// The harness itself failed (a bug, or it was interrupted).
    Harness,
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = serde_json::to_value(self).ok();
        f.write_str(s.as_ref().and_then(|v| v.as_str()).unwrap_or("error"))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseError {
    pub kind: ErrorKind,
    pub message: String,
}

/// One action of the ladder as it happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub action: Action,
    /// Milliseconds after the first action (the trigger).
    pub at_ms: f64,
}

/// A process the server left behind, and who started it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leftover {
    pub pid: i32,
    pub cmdline: String,
    /// Its parent while the session was live (before orphans were reparented).
    pub started_by: Option<i32>,
    pub started_by_cmdline: Option<String>,
}

/// The outcome of one server × scenario case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub server: String,
    pub scenario: String,
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
    /// Descendants still running after the server's end (killed by the harness afterwards).
    pub leftovers: Vec<Leftover>,
    /// What held the server when it should have exited (read from `/proc` before escalating).
    #[serde(default)]
    pub diagnostics: Option<crate::process::Diagnostics>,
    /// In `inflight`: whether the request left in flight was answered before stdout closed.
    #[serde(default)]
    pub inflight_answered: Option<bool>,
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
    pub checks: Vec<Check>,
}

impl CaseResult {
    /// A result for a case that could not run at all.
    pub fn failed(server: &str, scenario: &str, kind: ErrorKind, message: String) -> Self {
        Self {
            server: server.into(),
            scenario: scenario.into(),
            stage: None,
            exit_ms: None,
            exit_status: None,
            steps: Vec::new(),
            handshake: None,
            error: Some(CaseError { kind, message }),
            stdout: StdoutRecord::default(),
            stderr_tail: String::new(),
            leftovers: Vec::new(),
            diagnostics: None,
            inflight_answered: None,
            note: None,
            runqueue_ms: None,
            trigger_ns: None,
            exit_ns: None,
            wall_ms: 0.0,
            checks: Vec::new(),
        }
    }
}

/// Builds leftovers from the processes still alive and the tree seen before the trigger.
pub fn leftovers(alive: &[ProcInfo], before: &[ProcInfo]) -> Vec<Leftover> {
    alive
        .iter()
        .map(|p| {
            let parent = before
                .iter()
                .find(|b| b.pid == p.pid)
                .map(|b| b.ppid)
                .unwrap_or(p.ppid);
            Leftover {
                pid: p.pid,
                cmdline: p.cmdline.clone(),
                started_by: Some(parent),
                started_by_cmdline: before
                    .iter()
                    .find(|b| b.pid == parent)
                    .map(|b| b.cmdline.clone()),
            }
        })
        .collect()
}
