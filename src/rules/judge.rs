//! The judge: what a rule found in one case, as a typed [`Finding`], from its judge in
//! [`super::judges`] (one pure function per rule). Wording is chosen later, from the
//! catalogue's templates of each finding ([`super::explain`]).

use serde::Serialize;

use crate::model::{
    Budgets, ErrorKind, LeftoverGroup, Observation, Outcome, Revision, RuleId, Scenario,
    SignalName, Stage, ViolationKind,
};

/// How a case ended, as the wording of a finding needs it (`{{ ending }}`, `{{ waiting }}`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct End {
    pub stage: Option<Stage>,
    pub exit_ms: Option<f64>,
    pub runqueue_ms: Option<f64>,
    /// The signal the harness sent the server itself because its launcher did not pass it
    /// on: the exit is then counted from that signal.
    pub behind_launcher: Option<SignalName>,
}

impl End {
    pub fn of(o: &Observation) -> Self {
        Self {
            stage: o.stage,
            exit_ms: o.exit_ms,
            runqueue_ms: o.runqueue_ms,
            behind_launcher: o.launcher_left.as_ref().map(|l| l.signal),
        }
    }
}

/// What a rule found in one case. Its name (`not_prompt`) keys the rule's message in
/// `conformance/rules.toml`, and its fields are the template's values (an [`End`]'s fields
/// directly: `exit_ms`, `stage`, `runqueue_ms`).
#[derive(Clone, Debug, PartialEq, Serialize, strum::VariantNames, strum::IntoStaticStr)]
#[serde(tag = "finding", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Finding {
    /// A prerequisite failed (no handshake, no launch): counts at the rule's level when the
    /// error is the server's own (see [`ErrorKind::scores_untested`]), is skipped otherwise.
    NotTestable {
        kind: ErrorKind,
        message: String,
    },
    /// Exited within the prompt budget after its trigger.
    Prompt {
        #[serde(flatten)]
        end: End,
    },
    /// Did not exit within the prompt budget after its trigger.
    NotPrompt {
        budget_ms: u64,
        #[serde(flatten)]
        end: End,
    },
    /// Still running `observe_ms` after its client died.
    Orphaned {
        observe_ms: u64,
    },
    /// This client never closes stdin: the EOF rule does not apply.
    NeverClosesStdin,
    /// This client signals the server as it closes stdin: the EOF rule cannot be judged.
    EofNotAlone,
    /// Ended before SIGKILL.
    BeforeSigkill {
        stage: Option<Stage>,
    },
    /// Needed SIGKILL, or outlived the ladder.
    Forced {
        #[serde(flatten)]
        end: End,
    },
    /// Outlived a client whose last wait has no end.
    WouldHangClient,
    /// Outlived a client that then gives up and leaves it running.
    Abandoned,
    /// Still running `observe_ms` after its terminal host went away.
    OutlivedHost {
        observe_ms: u64,
    },
    /// A client that never closes stdin signals every server: not the server's doing.
    EveryServerSignalled,
    /// A host that neither closes stdin nor signals (it walks away and something of its own,
    /// a daemon or a relaunched process, keeps the server's pipes open): no server can tell
    /// the session ended, so its survival is the host's doing.
    NeverEnded,
    /// Started with stdin at EOF and exited by itself.
    ExitedAtStart {
        exit_ms: Option<f64>,
    },
    /// Started with stdin at EOF and needed a signal (or outlived the ladder).
    IgnoredEofAtStart {
        #[serde(flatten)]
        end: End,
    },
    /// The server itself never exited: the leak rule waits for the exit rules.
    ServerNeverExited,
    NothingLeft,
    /// `count` processes outlived the server: `groups` in words, and `unlisted` more that
    /// the report only counts.
    Leaked {
        #[serde(serialize_with = "in_words")]
        groups: Vec<LeftoverGroup>,
        unlisted: u64,
        count: u64,
        prompt_ms: u64,
    },
    StdoutClean {
        messages: u64,
    },
    StdoutViolations {
        violations: u64,
        lines: u64,
        first_line: u64,
        kind: ViolationKind,
        excerpt: String,
    },
    ServerRequests {
        count: u64,
        first: Option<String>,
    },
    InflightAnswered,
    InflightDropped,
    NothingInFlight,
    /// A process above the server was killed or stopped by a signal the harness did not send.
    SignalledAncestor {
        message: String,
    },
    /// Nothing above the server was signalled.
    AncestorsUntouched,
}

/// Leftover groups as the report words them (`pid 4242 `sleep 600` (started by `x`)`).
fn in_words<S: serde::Serializer>(groups: &[LeftoverGroup], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(groups.iter().map(|g| g.to_string()))
}

impl Finding {
    /// The name that keys its message: `not_prompt`.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// How the case ended, for findings whose wording says so.
    pub fn end(&self) -> Option<&End> {
        use Finding::*;
        match self {
            Prompt { end } | NotPrompt { end, .. } | Forced { end } | IgnoredEofAtStart { end } => {
                Some(end)
            }
            _ => None,
        }
    }

    pub fn outcome(&self) -> Outcome {
        use Finding::*;
        match self {
            NotTestable { .. } => Outcome::NotTestable,
            Prompt { .. }
            | BeforeSigkill { .. }
            | ExitedAtStart { .. }
            | NothingLeft
            | StdoutClean { .. }
            | InflightAnswered
            | AncestorsUntouched => Outcome::Pass,
            NotPrompt { .. }
            | Orphaned { .. }
            | OutlivedHost { .. }
            | Forced { .. }
            | WouldHangClient
            | Abandoned
            | IgnoredEofAtStart { .. }
            | Leaked { .. }
            | StdoutViolations { .. }
            | ServerRequests { .. }
            | InflightDropped
            | SignalledAncestor { .. } => Outcome::Fail,
            NeverClosesStdin | EofNotAlone | EveryServerSignalled | NeverEnded
            | ServerNeverExited | NothingInFlight => Outcome::NotApplicable,
        }
    }
}

/// What the judge knows about a case besides its observation.
pub struct Context<'a> {
    pub scenario: &'a Scenario,
    pub budgets: &'a Budgets,
    pub revision: Revision,
}

/// A rule's judge.
pub type Judge = fn(&Observation, &Context) -> Finding;

// `fn judge_of(RuleId) -> Judge`, generated by build.rs (src/rules/codegen.rs): each rule's
// judge is the function of src/rules/judges.rs named after its id.
include!(concat!(env!("OUT_DIR"), "/rule_judges.rs"));

/// Judges one rule on one case: a case that could not run is not testable, but for a rule
/// about what only such a case does (`only_when_missed`), which judges it.
pub fn judge(rule: RuleId, only_when_missed: bool, o: &Observation, cx: &Context) -> Finding {
    match &o.error {
        Some(e) if !only_when_missed => Finding::NotTestable {
            kind: e.kind,
            message: e.message.clone(),
        },
        _ => judge_of(rule)(o, cx),
    }
}
