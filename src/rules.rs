//! The rule catalogue (data in `conformance/rules.toml`) and the pure judge that turns an
//! observation into checks. Each rule ID has exactly one judging function here; a test keeps
//! the data and the code in step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::budgets::Budgets;
use crate::observation::CaseResult;
use crate::scenario::{Scenario, Stage};

/// The catalogue shipped with the suite.
pub const BUNDLED: &str = include_str!("../conformance/rules.toml");

/// RFC 2119 level of a rule in one revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Must,
    Should,
    /// Not a requirement of this revision: reported, never scored.
    Info,
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// The revisions whose text this is (identical in all of them).
    pub revisions: Vec<String>,
    /// `{revision}` is replaced by the judged revision.
    pub url: String,
    pub quote: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub title: String,
    pub scenarios: Vec<String>,
    /// The budget the rule's timing is judged against, if any.
    pub budget: Option<String>,
    pub basis: Basis,
    pub rationale: String,
    pub levels: BTreeMap<String, Level>,
    #[serde(default)]
    pub references: Vec<Reference>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub revisions: Vec<String>,
    pub default_revision: String,
    #[serde(rename = "rule")]
    pub rules: Vec<Rule>,
}

/// A reference as cited by one check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecReference {
    pub revision: String,
    pub url: String,
}

/// The scored verdict of one check (the official MCP conformance suite's vocabulary).
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

/// One rule judged on one case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub id: String,
    pub status: Status,
    pub level: Level,
    pub outcome: Outcome,
    pub message: String,
    pub spec_references: Vec<SpecReference>,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("rules file: {0}")]
    Parse(String),
    #[error("rule `{rule}` has no level for revision {revision}")]
    MissingLevel { rule: String, revision: String },
    #[error("rule `{0}` has no judge in this version of the suite")]
    NoJudge(String),
    #[error("unknown spec revision `{given}` (known: {known})")]
    UnknownRevision { given: String, known: String },
}

impl Catalogue {
    pub fn bundled() -> Self {
        Self::parse(BUNDLED).expect("the bundled rules.toml is valid (tested)")
    }

    pub fn parse(text: &str) -> Result<Self, CatalogueError> {
        let c: Catalogue =
            toml::from_str(text).map_err(|e| CatalogueError::Parse(e.to_string()))?;
        for r in &c.rules {
            for rev in &c.revisions {
                if !r.levels.contains_key(rev) {
                    return Err(CatalogueError::MissingLevel {
                        rule: r.id.clone(),
                        revision: rev.clone(),
                    });
                }
            }
            if !JUDGES.contains(&r.id.as_str()) {
                return Err(CatalogueError::NoJudge(r.id.clone()));
            }
        }
        Ok(c)
    }

    pub fn check_revision(&self, rev: &str) -> Result<(), CatalogueError> {
        if self.revisions.iter().any(|r| r == rev) {
            Ok(())
        } else {
            Err(CatalogueError::UnknownRevision {
                given: rev.into(),
                known: self.revisions.join(", "),
            })
        }
    }

    /// Judges one case against every rule that covers its scenario.
    pub fn judge(
        &self,
        result: &CaseResult,
        scenario: &Scenario,
        budgets: &Budgets,
        revision: &str,
    ) -> Vec<Check> {
        self.rules
            .iter()
            .filter(|r| r.scenarios.iter().any(|s| s == scenario.family()))
            .map(|r| {
                let level = r.levels.get(revision).copied().unwrap_or(Level::Info);
                let (outcome, message) = match &result.error {
                    Some(e) => (
                        Outcome::NotTestable,
                        format!("Not testable: {} ({})", e.message, e.kind),
                    ),
                    None => judge_rule(&r.id, result, scenario, budgets, revision),
                };
                Check {
                    id: r.id.clone(),
                    status: status(outcome, level),
                    level,
                    outcome,
                    message,
                    spec_references: r
                        .references
                        .iter()
                        .filter(|x| x.revisions.iter().any(|v| v == revision))
                        .map(|x| SpecReference {
                            revision: revision.to_string(),
                            url: x.url.replace("{revision}", revision),
                        })
                        .collect(),
                }
            })
            .collect()
    }
}

/// The scored status of an outcome at a level.
pub fn status(outcome: Outcome, level: Level) -> Status {
    match (outcome, level) {
        (Outcome::NotApplicable, _) => Status::Skipped,
        (_, Level::Info) => Status::Info,
        (Outcome::Pass, _) => Status::Success,
        (Outcome::Fail | Outcome::NotTestable, Level::Must) => Status::Failure,
        (Outcome::Fail | Outcome::NotTestable, Level::Should) => Status::Warning,
    }
}

/// Rule IDs this version of the suite can judge.
pub const JUDGES: &[&str] = &[
    "stdio-exit-on-eof",
    "stdio-exit-on-client-death",
    "stdio-no-forced-kill",
    "stdio-exit-on-eof-at-start",
    "process-exit-on-sigterm",
    "process-exit-on-sigint",
    "process-no-leaked-descendants",
    "stdio-stdout-only-mcp",
    "stdio-inflight-response",
];

fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "?".into(), |v| format!("{v:.0} ms"))
}

/// The part of the exit latency the server itself took: the wall latency minus the time it
/// was runnable but waiting for a CPU, so that a busy machine cannot fail a server.
pub fn own_ms(r: &CaseResult) -> Option<f64> {
    r.exit_ms
        .map(|t| (t - r.runqueue_ms.unwrap_or(0.0)).max(0.0))
}

/// " (of which N ms waiting for a CPU)" when load was noticeable.
fn load_note(r: &CaseResult) -> String {
    match r.runqueue_ms {
        Some(w) if w >= 50.0 => format!(" (of which {w:.0} ms waiting for a CPU)"),
        _ => String::new(),
    }
}

/// How the case ended, in words, for failure messages.
fn ending(r: &CaseResult) -> String {
    match r.stage {
        Some(Stage::Eof) => format!(
            "it exited on end-of-file after {}{}",
            ms(r.exit_ms),
            load_note(r)
        ),
        Some(Stage::Sigterm) => format!(
            "SIGTERM ended it, {} after the session was ended",
            ms(r.exit_ms)
        ),
        Some(Stage::Sigint) => format!(
            "SIGINT ended it, {} after the session was ended",
            ms(r.exit_ms)
        ),
        Some(Stage::Sigkill) => format!(
            "only SIGKILL ended it, {} after the session was ended",
            ms(r.exit_ms)
        ),
        Some(Stage::Survived) => "still running when the harness stopped waiting".into(),
        None => "it never ran".into(),
    }
}

fn judge_rule(
    id: &str,
    r: &CaseResult,
    scenario: &Scenario,
    b: &Budgets,
    revision: &str,
) -> (Outcome, String) {
    let within =
        |stage: Stage| r.stage == Some(stage) && own_ms(r).is_some_and(|t| t <= b.prompt_ms as f64);
    let prompt = |_: &CaseResult| within(Stage::Eof);
    match id {
        "stdio-exit-on-eof" => {
            if !scenario.closes_stdin() {
                (
                    Outcome::NotApplicable,
                    "this client never closes stdin".into(),
                )
            } else if prompt(r) {
                (
                    Outcome::Pass,
                    format!(
                        "exited {} after stdin closed{}",
                        ms(r.exit_ms),
                        load_note(r)
                    ),
                )
            } else {
                (
                    Outcome::Fail,
                    format!(
                        "did not exit within {} ms of stdin closing: {}",
                        b.prompt_ms,
                        ending(r)
                    ),
                )
            }
        }
        "stdio-exit-on-client-death" => {
            if prompt(r) {
                (
                    Outcome::Pass,
                    format!(
                        "exited {} after its client died{}",
                        ms(r.exit_ms),
                        load_note(r)
                    ),
                )
            } else if r.stage == Some(Stage::Survived) {
                (
                    Outcome::Fail,
                    format!(
                        "orphaned: still running {} ms after its client died (reparented away from its client; the harness killed it)",
                        b.observe_ms
                    ),
                )
            } else {
                (
                    Outcome::Fail,
                    format!(
                        "did not exit within {} ms of its client's death: {}",
                        b.prompt_ms,
                        ending(r)
                    ),
                )
            }
        }
        "stdio-no-forced-kill" if !scenario.closes_stdin() => match r.stage {
            // Even its signals did not end it: a client that waits without end hangs forever.
            Some(Stage::Survived) if scenario.unbounded => (
                Outcome::Fail,
                "it outlived this client's whole ladder: the client would wait forever".into(),
            ),
            _ => (
                Outcome::NotApplicable,
                "this client never closes stdin, so every server it stops gets a signal".into(),
            ),
        },
        "stdio-no-forced-kill" => match r.stage {
            Some(Stage::Sigkill | Stage::Survived) => (Outcome::Fail, ending(r)),
            _ => (
                Outcome::Pass,
                format!(
                    "ended before SIGKILL ({})",
                    r.stage.map(|s| s.to_string()).unwrap_or_default()
                ),
            ),
        },
        "stdio-exit-on-eof-at-start" => match r.stage {
            Some(Stage::Eof) => (
                Outcome::Pass,
                format!(
                    "exited {} after it was started with stdin at end-of-file",
                    ms(r.exit_ms)
                ),
            ),
            _ => (
                Outcome::Fail,
                format!(
                    "started with stdin at end-of-file, it did not exit by itself: {}",
                    ending(r)
                ),
            ),
        },
        "process-exit-on-sigterm" => {
            if within(Stage::Sigterm) {
                (
                    Outcome::Pass,
                    format!("exited {} after SIGTERM{}", ms(r.exit_ms), load_note(r)),
                )
            } else {
                (
                    Outcome::Fail,
                    format!(
                        "did not exit within {} ms of SIGTERM (stdin still open): {}",
                        b.prompt_ms,
                        ending(r)
                    ),
                )
            }
        }
        "process-exit-on-sigint" => {
            if within(Stage::Sigint) {
                (
                    Outcome::Pass,
                    format!(
                        "exited {} after SIGINT to its process group{}",
                        ms(r.exit_ms),
                        load_note(r)
                    ),
                )
            } else {
                (
                    Outcome::Fail,
                    format!(
                        "did not exit within {} ms of SIGINT to its process group: {}",
                        b.prompt_ms,
                        ending(r)
                    ),
                )
            }
        }
        "process-no-leaked-descendants" => {
            if r.stage == Some(Stage::Survived) {
                (
                    Outcome::NotApplicable,
                    "the server itself never exited; see the exit rules".into(),
                )
            } else if r.leftovers.is_empty() {
                (Outcome::Pass, "nothing it started outlived it".into())
            } else {
                let list: Vec<String> = r
                    .leftovers
                    .iter()
                    .map(|l| {
                        format!(
                            "pid {} `{}` (started by `{}`)",
                            l.pid,
                            l.cmdline,
                            l.started_by_cmdline.as_deref().unwrap_or("?")
                        )
                    })
                    .collect();
                (
                    Outcome::Fail,
                    format!(
                        "{} process(es) it started still ran {} ms after it exited: {}",
                        list.len(),
                        b.prompt_ms,
                        list.join("; ")
                    ),
                )
            }
        }
        "stdio-stdout-only-mcp" => {
            if let Some(v) = &r.stdout.first_violation {
                let kind = serde_json::to_value(v.kind)
                    .ok()
                    .and_then(|k| k.as_str().map(String::from))
                    .unwrap_or_default();
                (
                    Outcome::Fail,
                    format!(
                        "{} of {} stdout line(s) are not one JSON-RPC message; first, line {} ({kind}): \"{}\"",
                        r.stdout.violations, r.stdout.lines, v.line, v.excerpt
                    ),
                )
            } else if revision >= "2026-07-28" && r.stdout.server_requests > 0 {
                (
                    Outcome::Fail,
                    format!(
                        "sent {} JSON-RPC request(s) on stdout; first: {}",
                        r.stdout.server_requests,
                        r.stdout.first_server_request.as_deref().unwrap_or("?")
                    ),
                )
            } else {
                (
                    Outcome::Pass,
                    format!("{} message(s), all valid JSON-RPC", r.stdout.messages),
                )
            }
        }
        "stdio-inflight-response" => match r.inflight_answered {
            Some(true) => (
                Outcome::Pass,
                "the request in flight was answered before it exited".into(),
            ),
            Some(false) => (
                Outcome::Fail,
                "it exited without answering the request in flight (the spec allows this)".into(),
            ),
            None => (Outcome::NotApplicable, "no request was in flight".into()),
        },
        other => (
            Outcome::NotApplicable,
            format!("no judge for rule `{other}`"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_catalogue_is_valid_and_complete() {
        let c = Catalogue::parse(BUNDLED).unwrap();
        assert!(c.revisions.contains(&c.default_revision));
        for j in JUDGES {
            assert!(
                c.rules.iter().any(|r| r.id == *j),
                "judge without rule: {j}"
            );
        }
        let families: Vec<String> = crate::scenario::all_ids()
            .iter()
            .map(|i| i.split(':').next().unwrap().to_string())
            .collect();
        for r in &c.rules {
            for s in &r.scenarios {
                assert!(families.contains(s), "{}: unknown scenario {s}", r.id);
            }
            assert!(r.references.iter().all(|x| x.url.starts_with("https://")));
        }
    }

    #[test]
    fn levels_map_to_statuses() {
        assert_eq!(status(Outcome::Fail, Level::Must), Status::Failure);
        assert_eq!(status(Outcome::Fail, Level::Should), Status::Warning);
        assert_eq!(status(Outcome::Fail, Level::Info), Status::Info);
        assert_eq!(status(Outcome::NotTestable, Level::Should), Status::Warning);
        assert_eq!(status(Outcome::Pass, Level::Should), Status::Success);
        assert_eq!(status(Outcome::NotApplicable, Level::Must), Status::Skipped);
    }

    fn case(scenario: &str, stage: Option<Stage>, exit_ms: Option<f64>) -> CaseResult {
        let mut r = CaseResult::failed(
            "s",
            scenario,
            crate::observation::ErrorKind::Harness,
            String::new(),
        );
        r.error = None;
        r.stage = stage;
        r.exit_ms = exit_ms;
        r
    }

    fn judge(r: &CaseResult, rev: &str) -> Vec<(String, Status)> {
        let b = Budgets::default();
        let s = Scenario::from_id(&r.scenario, &b).unwrap();
        Catalogue::bundled()
            .judge(r, &s, &b, rev)
            .into_iter()
            .map(|c| (c.id, c.status))
            .collect()
    }

    #[test]
    fn timer_server_scores_differ_by_revision() {
        let r = case("close", Some(Stage::Sigterm), Some(2004.0));
        let get =
            |v: &[(String, Status)], id: &str| v.iter().find(|(i, _)| i == id).map(|(_, s)| *s);
        let now = judge(&r, "2026-07-28");
        assert_eq!(get(&now, "stdio-exit-on-eof"), Some(Status::Warning));
        assert_eq!(get(&now, "stdio-no-forced-kill"), Some(Status::Success));
        let old = judge(&r, "2025-06-18");
        assert_eq!(get(&old, "stdio-exit-on-eof"), Some(Status::Info));
        let orphan = case("crash", Some(Stage::Survived), None);
        let j = judge(&orphan, "2026-07-28");
        assert_eq!(get(&j, "stdio-exit-on-client-death"), Some(Status::Warning));
        assert_eq!(
            get(&j, "process-no-leaked-descendants"),
            Some(Status::Skipped)
        );
    }

    #[test]
    fn slow_eof_exit_misses_the_prompt_budget() {
        let r = case("close", Some(Stage::Eof), Some(1500.0));
        assert_eq!(judge(&r, "2026-07-28")[0].1, Status::Warning);
        let r = case("close", Some(Stage::Eof), Some(12.0));
        assert!(judge(&r, "2026-07-28")
            .iter()
            .all(|(_, s)| *s == Status::Success));
    }

    #[test]
    fn time_spent_waiting_for_a_cpu_is_not_the_servers() {
        let mut r = case("exit", Some(Stage::Eof), Some(1069.0));
        assert_eq!(judge(&r, "2026-07-28")[0].1, Status::Warning);
        r.runqueue_ms = Some(620.0);
        let b = Budgets::default();
        let s = Scenario::from_id("exit", &b).unwrap();
        let c = &Catalogue::bundled().judge(&r, &s, &b, "2026-07-28")[0];
        assert_eq!(c.status, Status::Success);
        assert!(
            c.message.contains("620 ms waiting for a CPU"),
            "{}",
            c.message
        );
    }

    #[test]
    fn server_requests_on_stdout_fail_only_from_2026_07_28() {
        let mut r = case("close", Some(Stage::Eof), Some(12.0));
        r.stdout.server_requests = 1;
        let find = |v: Vec<(String, Status)>| {
            v.into_iter()
                .find(|(i, _)| i == "stdio-stdout-only-mcp")
                .unwrap()
                .1
        };
        assert_eq!(find(judge(&r, "2026-07-28")), Status::Failure);
        assert_eq!(find(judge(&r, "2025-06-18")), Status::Success);
    }

    #[test]
    fn a_server_that_would_hang_the_java_client_is_flagged() {
        let r = case("close:java", Some(Stage::Survived), None);
        let j = judge(&r, "2026-07-28");
        assert!(
            j.contains(&("stdio-no-forced-kill".into(), Status::Warning)),
            "{j:?}"
        );
    }

    #[test]
    fn clients_that_never_close_stdin_do_not_blame_the_server() {
        let r = case("close:csharp", Some(Stage::Sigkill), Some(5003.0));
        let j = judge(&r, "2026-07-28");
        assert!(
            j.iter()
                .filter(|(i, _)| i.starts_with("stdio-"))
                .all(|(i, s)| *s == Status::Skipped || i == "stdio-stdout-only-mcp"),
            "{j:?}"
        );
    }

    #[test]
    fn no_handshake_is_not_testable_at_rule_severity() {
        let r = CaseResult::failed(
            "s",
            "exit",
            crate::observation::ErrorKind::HandshakeTimeout,
            "no answer".into(),
        );
        let b = Budgets::default();
        let s = Scenario::from_id("exit", &b).unwrap();
        let checks = Catalogue::bundled().judge(&r, &s, &b, "2026-07-28");
        assert_eq!(checks[0].status, Status::Warning);
        assert!(checks
            .iter()
            .all(|c| c.message.starts_with("Not testable:")));
        // At its own severity: the stdout rule is a MUST.
        assert!(checks
            .iter()
            .any(|c| c.id == "stdio-stdout-only-mcp" && c.status == Status::Failure));
    }
}
