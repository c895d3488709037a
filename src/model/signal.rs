//! Signals and exit statuses as data (never strings to parse).

use serde::{Deserialize, Serialize};

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitStatus {
    /// Exited by itself with this code.
    Code(i32),
    /// Ended by this signal (its conventional name, e.g. `SIGTERM`).
    Signal(SignalName),
}

/// Signals the suite sends or reports, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
pub enum SignalName {
    #[serde(rename = "SIGHUP")]
    Hup,
    #[serde(rename = "SIGINT")]
    Int,
    #[serde(rename = "SIGKILL")]
    Kill,
    #[serde(rename = "SIGPIPE")]
    Pipe,
    #[serde(rename = "SIGTERM")]
    Term,
    #[serde(rename = "SIGABRT")]
    Abrt,
    #[serde(rename = "SIGSEGV")]
    Segv,
    /// Any other signal, by number.
    #[serde(untagged)]
    Other(i32),
}

impl SignalName {
    pub fn from_raw(n: i32) -> Self {
        match n {
            1 => Self::Hup,
            2 => Self::Int,
            6 => Self::Abrt,
            9 => Self::Kill,
            11 => Self::Segv,
            13 => Self::Pipe,
            15 => Self::Term,
            n => Self::Other(n),
        }
    }

    pub fn raw(self) -> i32 {
        match self {
            Self::Hup => 1,
            Self::Int => 2,
            Self::Abrt => 6,
            Self::Kill => 9,
            Self::Segv => 11,
            Self::Pipe => 13,
            Self::Term => 15,
            Self::Other(n) => n,
        }
    }
}

impl std::fmt::Display for SignalName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Hup => f.write_str("SIGHUP"),
            Self::Int => f.write_str("SIGINT"),
            Self::Kill => f.write_str("SIGKILL"),
            Self::Pipe => f.write_str("SIGPIPE"),
            Self::Term => f.write_str("SIGTERM"),
            Self::Abrt => f.write_str("SIGABRT"),
            Self::Segv => f.write_str("SIGSEGV"),
            Self::Other(n) => write!(f, "signal {n}"),
        }
    }
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Code(c) => write!(f, "exit code {c}"),
            Self::Signal(s) => write!(f, "killed by {s}"),
        }
    }
}

impl From<std::process::ExitStatus> for ExitStatus {
    fn from(s: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (s.code(), s.signal()) {
            (Some(c), _) => Self::Code(c),
            (None, Some(sig)) => Self::Signal(SignalName::from_raw(sig)),
            (None, None) => Self::Code(-1),
        }
    }
}
