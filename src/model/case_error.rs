//! Why a case has no verdict: the kind of error, and whose it is (its [`Owner`]). Its JSON is
//! part of the report format.

use serde::{Deserialize, Serialize};

use super::signal::SignalName;
use super::verdict::Owner;

/// Why a case could not be run as intended. Each kind has an [`Owner`]: whose it is that the
/// case has no verdict, and so whether its untested checks count against the server.
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
    /// A process above the server (its case supervisor, its stand-in client or terminal
    /// host) was killed or stopped by a signal nothing of the harness sent, while only the
    /// case's own processes were running under it: the server attacked what watches it.
    AncestorSignalled,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::SetupFailed => "setup-failed",
            ErrorKind::SpawnFailed => "spawn-failed",
            ErrorKind::ExitedBeforeHandshake => "exited-before-handshake",
            ErrorKind::HandshakeTimeout => "handshake-timeout",
            ErrorKind::HandshakeFailed => "handshake-failed",
            ErrorKind::ExitedBeforeEnd => "exited-before-end",
            ErrorKind::Harness => "harness",
            ErrorKind::AncestorSignalled => "ancestor-signalled",
        }
    }

    /// Whose it is that a case with this error has no verdict.
    ///
    /// ```
    /// use mcp_shutdown_conformance::model::{ErrorKind, Owner};
    /// assert_eq!(ErrorKind::SpawnFailed.owner(), Owner::Usage);
    /// assert!(!ErrorKind::Harness.owner().is_scored());
    /// ```
    pub fn owner(self) -> Owner {
        match self {
            ErrorKind::SetupFailed | ErrorKind::SpawnFailed => Owner::Usage,
            ErrorKind::Harness => Owner::Harness,
            ErrorKind::ExitedBeforeHandshake
            | ErrorKind::HandshakeTimeout
            | ErrorKind::HandshakeFailed
            | ErrorKind::ExitedBeforeEnd
            | ErrorKind::AncestorSignalled => Owner::Server,
        }
    }

    /// Do the rules this error leaves untested count against the server? Only for the
    /// server's own failures to start or to serve; an attack on the processes above it is
    /// judged by the rule it breaks (`process-no-signals-to-ancestors`), and the rest, which
    /// it kept from being measured, are not claimed as broken.
    pub fn scores_untested(self) -> bool {
        self.owner().is_scored() && self != ErrorKind::AncestorSignalled
    }

    /// The kind of a case whose supervisor ended without a result, from how it ended: found
    /// stopped (state `T`: SIGSTOP, which only another process sends) before the harness killed
    /// it, or killed by a signal the harness did not send (the harness kills only a
    /// supervisor it has lost) and which no fault of the supervisor's own raises.
    pub fn of_lost_supervisor(found_stopped: bool, killed_by: Option<SignalName>) -> ErrorKind {
        // What a crash of the supervisor itself dies of: abort, bad memory access, illegal
        // instruction, arithmetic, bad system call, trap.
        const OWN_FAULTS: [i32; 7] = [4, 5, 6, 7, 8, 11, 31];
        match killed_by {
            _ if found_stopped => ErrorKind::AncestorSignalled,
            Some(s) if !OWN_FAULTS.contains(&s.raw()) => ErrorKind::AncestorSignalled,
            _ => ErrorKind::Harness,
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a case could not run as intended. Its JSON also carries the kind's `owner` (derived,
/// written for readers of the report; ignored when read back).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct CaseError {
    pub kind: ErrorKind,
    pub message: String,
}

impl Serialize for CaseError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("CaseError", 3)?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("owner", &self.kind.owner())?;
        st.serialize_field("message", &self.message)?;
        st.end()
    }
}
