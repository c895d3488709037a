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
    /// A prerequisite failed (e.g. no handshake): counts like a failure at the rule's level.
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
