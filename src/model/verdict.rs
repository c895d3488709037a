//! Verdicts: a rule judged on one case, in the official MCP conformance suite's vocabulary.

use serde::{Deserialize, Serialize};

use super::ids::{Revision, RuleId};

/// RFC 2119 level of a rule in one revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Must,
    Should,
    /// Not a requirement of this revision: reported, never scored.
    Info,
}

impl Level {
    /// Does a check at this level count towards a verdict?
    pub fn is_scored(self) -> bool {
        matches!(self, Level::Must | Level::Should)
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::Info => "INFO",
        })
    }
}

/// Whether a rule quotes the spec or records established practice where the spec is silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    Spec,
    Practice,
}

/// Whose it is that a case has no verdict: the closed list of reasons a check could not be
/// judged, each with the party it is down to and what follows from that. Only the server's
/// own behaviour is ever scored against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// The user's: the command or its working directory does not exist, the manifest's setup
    /// failed. The run exits 2 (a usage error); nothing is scored.
    Usage,
    /// The suite's own fault (a bug, a resource it could not get, an interruption). The run
    /// exits 2 unless something else failed; nothing is scored.
    Harness,
    /// A registry listing's: the launch command it gives does not exist in its package.
    /// Reported as not testable and counted apart in a census; nothing is scored.
    Listing,
    /// The server needs real secrets it was not given. Not testable; nothing is scored.
    Credentials,
    /// The server's own behaviour (it crashed, went silent, wrote garbage, attacked the
    /// processes above it): scored.
    Server,
}

impl Owner {
    pub const ALL: &'static [Owner] = &[
        Owner::Usage,
        Owner::Harness,
        Owner::Listing,
        Owner::Credentials,
        Owner::Server,
    ];

    /// Its name in reports, cells and badges (`could not run: usage`).
    pub fn as_str(self) -> &'static str {
        match self {
            Owner::Usage => "usage",
            Owner::Harness => "harness",
            Owner::Listing => "listing",
            Owner::Credentials => "credentials",
            Owner::Server => "server",
        }
    }

    /// Do the checks it leaves untested count against the server?
    pub fn is_scored(self) -> bool {
        self == Owner::Server
    }

    /// Whose it is, in a few words, for people.
    pub fn description(self) -> &'static str {
        match self {
            Owner::Usage => "a usage error: the manifest's command, directory or setup",
            Owner::Harness => "a fault of the test harness, not of the server",
            Owner::Listing => "the registry listing's launch command does not exist in the package",
            Owner::Credentials => "the server needs real credentials",
            Owner::Server => "the server's own behaviour",
        }
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The scored verdict of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Success,
    /// A MUST was missed.
    Failure,
    /// A SHOULD was missed.
    Warning,
    /// Reported, not scored.
    Info,
    /// Does not apply to this case.
    Skipped,
}

impl Status {
    /// A missed MUST or SHOULD.
    pub fn is_miss(self) -> bool {
        matches!(self, Status::Failure | Status::Warning)
    }

    /// The scored status of an outcome at a level.
    pub fn of(outcome: Outcome, level: Level) -> Status {
        match (outcome, level) {
            (Outcome::NotApplicable, _) => Status::Skipped,
            (_, Level::Info) => Status::Info,
            (Outcome::Pass, _) => Status::Success,
            (Outcome::Fail | Outcome::NotTestable, Level::Must) => Status::Failure,
            (Outcome::Fail | Outcome::NotTestable, Level::Should) => Status::Warning,
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Success => "SUCCESS",
            Status::Failure => "FAILURE",
            Status::Warning => "WARNING",
            Status::Info => "INFO",
            Status::Skipped => "SKIPPED",
        })
    }
}

/// What the judge found, before the level turns it into a status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    Fail,
    /// A prerequisite failed (e.g. no handshake): counts like a failure at the rule's level
    /// when the server's own doing, is skipped otherwise (see [`Owner`]).
    NotTestable,
    NotApplicable,
}

/// A reference as cited by one check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecReference {
    pub revision: Revision,
    pub url: String,
}

/// One rule judged on one case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub id: RuleId,
    pub status: Status,
    pub level: Level,
    pub outcome: Outcome,
    pub message: String,
    pub spec_references: Vec<SpecReference>,
}
