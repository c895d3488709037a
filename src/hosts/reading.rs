//! The vocabulary of a measured run, typed: the recorder's log lines as read, and what the
//! host was found to do to the server. The text forms (`sigterm`, `daemon:codex`, `alive 3 s
//! after the host exited`) are the ones stored measurements carry, so each type reads and
//! writes exactly those.

use serde::{Deserialize, Serialize};

use crate::model::{GroupKind, SignalName, StdioKind, Target, Via};

/// Which recorder process logged a line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Server,
    /// The server's child, in its group.
    Child,
    /// The child's child, in a session of its own.
    Grandchild,
    #[default]
    #[serde(other)]
    Unknown,
}

/// What a recorder line records (`ev`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ev {
    Start,
    Tree,
    Message,
    Reply,
    StdinEof,
    StdoutUnwritable,
    StdoutWriteError,
    Signal,
    Reparented,
    Lifetime,
    #[default]
    #[serde(other)]
    Unknown,
}

/// What kind of file a recorder's stdin is (`start`'s `stdin`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FdKind {
    Fifo,
    Socket,
    Chr,
    File,
    Closed,
    #[default]
    #[serde(other)]
    Other,
}

/// One recorder log line: the fields the analysis reads (each event fills its own).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RecorderLine {
    pub t_ns: u64,
    pub role: Role,
    pub pid: i32,
    pub ev: Ev,
    // `signal`
    pub signo: Option<i32>,
    pub si_pid: Option<i32>,
    pub sender_comm: Option<String>,
    /// How long the logging thread waited for a CPU while it waited for this signal: a
    /// signal logged late on a busy machine was sent up to this long before its line.
    pub queued_ns: u64,
    // `start`
    pub ppid: Option<i32>,
    pub parent_comm: Option<String>,
    pub via_shell: bool,
    pub pgid: Option<i32>,
    pub sid: Option<i32>,
    pub stdin: Option<FdKind>,
    pub tty_nr: i64,
    // `tree`
    pub child: Option<i32>,
    pub grandchild: Option<i32>,
    // `reparented`
    pub to: Option<i64>,
    pub to_comm: Option<String>,
    // `message`, `reply`
    pub method: Option<String>,
}

impl RecorderLine {
    /// The line's signal, for a `signal` line.
    pub fn signal(&self) -> Option<SignalName> {
        self.signo.map(SignalName::from_raw)
    }

    pub fn queued_ms(&self) -> f64 {
        self.queued_ns as f64 / 1e6
    }

    /// Something reaching the process: a signal, or one of its pipes closing.
    pub fn is_delivery(&self) -> bool {
        matches!(self.ev, Ev::Signal | Ev::StdinEof | Ev::StdoutUnwritable)
    }
}

/// What the host did: closed a pipe, or sent a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ActionKind {
    CloseStdin,
    /// The other end of the server's stdout went away.
    StdoutClosed,
    /// Both at once (stdin's EOF and stdout's end merged).
    ClosePipes,
    Signal(SignalName),
}

impl ActionKind {
    /// The order of deliveries that happened at once. The SIGKILL comes last: it is only
    /// ever inferred from the server's death, which comes after anything the server lived
    /// to log (a SIGTERM logged 1.5 ms before the death was delivered first, however late
    /// its line was written).
    pub fn rank(self) -> u8 {
        match self {
            Self::Signal(SignalName::Term) => 1,
            Self::Signal(SignalName::Int) => 2,
            Self::Signal(SignalName::Hup) => 3,
            Self::Signal(SIGQUIT) => 4,
            Self::CloseStdin => 5,
            Self::ClosePipes => 6,
            Self::Signal(SignalName::Kill) => 8,
            _ => 7,
        }
    }
}

const SIGQUIT: SignalName = SignalName::Other(3);

/// A signal's lower-case name (`sigterm`), as profiles' `do` spells it.
fn signal_word(s: SignalName) -> String {
    match s {
        SIGQUIT => "sigquit".into(),
        SignalName::Other(n) => format!("sig{n}"),
        s => s.to_string().to_ascii_lowercase(),
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::CloseStdin => f.write_str("close-stdin"),
            Self::StdoutClosed => f.write_str("stdout-closed"),
            Self::ClosePipes => f.write_str("close-pipes"),
            Self::Signal(s) => f.write_str(&signal_word(*s)),
        }
    }
}

impl std::str::FromStr for ActionKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "close-stdin" => Self::CloseStdin,
            "stdout-closed" => Self::StdoutClosed,
            "close-pipes" => Self::ClosePipes,
            _ => {
                let known = [
                    SignalName::Hup,
                    SignalName::Int,
                    SignalName::Kill,
                    SignalName::Pipe,
                    SignalName::Term,
                    SignalName::Abrt,
                    SignalName::Segv,
                    SIGQUIT,
                ];
                let n = s.strip_prefix("sig").and_then(|n| n.parse().ok());
                match known.into_iter().find(|k| signal_word(*k) == s) {
                    Some(k) => Self::Signal(k),
                    None => Self::Signal(SignalName::from_raw(
                        n.ok_or_else(|| format!("{s:?} is no action"))?,
                    )),
                }
            }
        })
    }
}

impl From<ActionKind> for String {
    fn from(a: ActionKind) -> String {
        a.to_string()
    }
}

impl TryFrom<String> for ActionKind {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// Who sent what reached the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum SentBy {
    /// The host (or a process of its tree).
    Host,
    /// The kernel (a hang-up).
    Kernel,
    /// The server's parent, not the host: its daemon, by command name.
    Daemon(String),
    /// Another process.
    Pid { pid: i32, comm: Option<String> },
    /// Nobody logged it: a death the recorder did not log is a SIGKILL.
    InferredFromDeath,
}

impl std::fmt::Display for SentBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Host => f.write_str("host"),
            Self::Kernel => f.write_str("kernel"),
            Self::Daemon(c) => write!(f, "daemon:{c}"),
            Self::Pid { pid, comm: Some(c) } => write!(f, "pid:{pid} ({c})"),
            Self::Pid { pid, comm: None } => write!(f, "pid:{pid}"),
            Self::InferredFromDeath => f.write_str("inferred from death"),
        }
    }
}

impl std::str::FromStr for SentBy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(c) = s.strip_prefix("daemon:") {
            return Ok(Self::Daemon(c.into()));
        }
        if let Some(rest) = s.strip_prefix("pid:") {
            let (pid, comm) = match rest.split_once(" (") {
                Some((p, c)) => (p, c.strip_suffix(')').map(str::to_string)),
                None => (rest, None),
            };
            let pid = pid.parse().map_err(|_| format!("{s:?}: no pid"))?;
            return Ok(Self::Pid { pid, comm });
        }
        match s {
            "host" => Ok(Self::Host),
            "kernel" => Ok(Self::Kernel),
            "inferred from death" => Ok(Self::InferredFromDeath),
            _ => Err(format!("{s:?} is no sender")),
        }
    }
}

impl From<SentBy> for String {
    fn from(s: SentBy) -> String {
        s.to_string()
    }
}

impl TryFrom<String> for SentBy {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// One thing the host did to the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostAction {
    pub action: ActionKind,
    pub to: Target,
    pub from: SentBy,
    pub at_ms: f64,
    /// The server was SIGKILLed before it could take this signal, which its descendants
    /// took: it is counted as reaching the server too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unseen_at_server: bool,
    /// The signal walked the tree one process at a time, the server last: how long before
    /// the server's the first descendant's came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_ms: Option<f64>,
}

/// What the server's stdin was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostStdio {
    Pipes,
    Socketpair,
    Pty,
    #[default]
    Other,
}

impl HostStdio {
    /// As a launch can be replayed: a socketpair, or pipes.
    pub fn replayed(self) -> StdioKind {
        match self {
            Self::Socketpair => StdioKind::Socketpair,
            _ => StdioKind::Pipes,
        }
    }
}

/// Who started the server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum HostVia {
    /// The host itself.
    #[default]
    Direct,
    /// A shell the host ran.
    Shell,
    /// The host's daemon (not the process quit), by command name.
    Daemon(String),
}

impl HostVia {
    /// As a launch can be replayed: through a shell, or directly.
    pub fn replayed(&self) -> Via {
        match self {
            Self::Shell => Via::Shell,
            _ => Via::Direct,
        }
    }

    pub fn daemon(&self) -> Option<&str> {
        match self {
            Self::Daemon(d) => Some(d),
            _ => None,
        }
    }
}

impl std::fmt::Display for HostVia {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Direct => f.write_str("direct"),
            Self::Shell => f.write_str("shell"),
            Self::Daemon(d) => write!(f, "daemon:{d}"),
        }
    }
}

impl From<HostVia> for String {
    fn from(v: HostVia) -> String {
        v.to_string()
    }
}

impl TryFrom<String> for HostVia {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "direct" => Ok(Self::Direct),
            "shell" => Ok(Self::Shell),
            _ => s
                .strip_prefix("daemon:")
                .map(|d| Self::Daemon(d.into()))
                .ok_or_else(|| format!("{s:?} is no way of starting a server")),
        }
    }
}

/// Where the server ran, relative to the host.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostPlumbing {
    pub stdio: HostStdio,
    pub group: GroupKind,
    pub via: HostVia,
    pub ctty: bool,
}

/// How the host walked away from a server that outlived it, and how long it was watched
/// alive after the host exited.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum WalkedAway {
    /// Its parent is the host's daemon, which kept it.
    KeptByDaemon {
        daemon: String,
        alive_s: f64,
    },
    /// It was reparented (to init or a subreaper).
    Reparented {
        to_pid: i64,
        to_comm: String,
        alive_s: f64,
    },
    Alive {
        alive_s: f64,
    },
}

const AFTER: &str = " s after the host exited";

impl std::fmt::Display for WalkedAway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::KeptByDaemon { daemon, alive_s } => {
                write!(
                    f,
                    "kept by the host's daemon ({daemon}): alive {alive_s:.0}{AFTER}"
                )
            }
            Self::Reparented {
                to_pid,
                to_comm,
                alive_s,
            } => write!(
                f,
                "reparented to pid {to_pid} ({to_comm}) and alive {alive_s:.0}{AFTER}"
            ),
            Self::Alive { alive_s } => write!(f, "alive {alive_s:.0}{AFTER}"),
        }
    }
}

impl TryFrom<String> for WalkedAway {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let bad = || format!("{s:?}: not how a host walks away");
        let head = s.strip_suffix(AFTER).ok_or_else(bad)?;
        let (head, secs) = head.rsplit_once("alive ").ok_or_else(bad)?;
        let alive_s: f64 = secs.parse().map_err(|_| bad())?;
        if head.is_empty() {
            return Ok(Self::Alive { alive_s });
        }
        if let Some(d) = head.strip_prefix("kept by the host's daemon (") {
            let daemon = d.strip_suffix("): ").ok_or_else(bad)?.to_string();
            return Ok(Self::KeptByDaemon { daemon, alive_s });
        }
        let r = head.strip_prefix("reparented to pid ").ok_or_else(bad)?;
        let r = r.strip_suffix(") and ").ok_or_else(bad)?;
        let (pid, comm) = r.split_once(" (").ok_or_else(bad)?;
        Ok(Self::Reparented {
            to_pid: pid.parse().map_err(|_| bad())?,
            to_comm: comm.to_string(),
            alive_s,
        })
    }
}

impl From<WalkedAway> for String {
    fn from(w: WalkedAway) -> String {
        w.to_string()
    }
}

/// One run, read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReading {
    pub started: bool,
    pub plumbing: HostPlumbing,
    pub deliveries: Vec<HostAction>,
    pub host_exit_ms: Option<f64>,
    /// The host walked away: how.
    pub walked_away: Option<WalkedAway>,
}

/// Two consecutive things the host did: the wait between them is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    pub from: ActionKind,
    pub to: ActionKind,
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} → {}", self.from, self.to)
    }
}

/// The key of a measured profile's `waits` for the time from the quit to the host's first
/// step.
pub const TRIGGER_TO_FIRST: &str = "trigger → first";

/// A unit variant's name as it is serialised (`socketpair`, `own`, `children`).
pub fn word(t: &impl Serialize) -> String {
    match serde_json::to_value(t) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The ladder's shape: what was done to whom, in order (the waits aside).
pub type LadderShape = Vec<(ActionKind, Target)>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_text_forms_read_back_as_they_were_written() {
        for a in [
            "close-stdin",
            "stdout-closed",
            "close-pipes",
            "sigterm",
            "sigquit",
            "sigkill",
        ] {
            assert_eq!(a.parse::<ActionKind>().unwrap().to_string(), a);
        }
        for s in [
            "host",
            "kernel",
            "daemon:cline",
            "pid:42 (node)",
            "pid:7",
            "inferred from death",
        ] {
            assert_eq!(s.parse::<SentBy>().unwrap().to_string(), s);
        }
        for w in [
            "kept by the host's daemon (cline): alive 3 s after the host exited",
            "reparented to pid 1 (process_api) and alive 3 s after the host exited",
            "alive 3 s after the host exited",
        ] {
            let read = WalkedAway::try_from(w.to_string()).unwrap();
            assert_eq!(read.to_string(), w);
        }
        for v in ["direct", "shell", "daemon:codex"] {
            assert_eq!(HostVia::try_from(v.to_string()).unwrap().to_string(), v);
        }
    }
}
