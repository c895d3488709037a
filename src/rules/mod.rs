//! Rules: the catalogue (data: levels, quotes and wording), the judges (one pure function
//! per rule, returning a typed finding) and the wording of findings from the catalogue's
//! templates. Judging a case gives its checks.

#[cfg(test)]
mod book;
pub mod catalogue;
#[cfg(test)]
mod codegen;
pub mod explain;
#[cfg(test)]
mod fix_book;
pub mod fixes;
pub mod judge;
mod judges;
#[cfg(test)]
mod quotes;
pub mod repeat;
mod template;

use std::collections::BTreeMap;

use crate::model::{
    Budgets, Check, Observation, Outcome, Revision, RuleId, RuleInfo, Scenario, SpecReference,
    Stage, Status,
};

pub use catalogue::{Catalogue, CatalogueError};
use judge::Context;
pub use machine::machine_bound;

impl Catalogue {
    /// Judges one case against every rule that covers its ending.
    pub fn judge(
        &self,
        o: &Observation,
        scenario: &Scenario,
        budgets: &Budgets,
        revision: Revision,
    ) -> Vec<Check> {
        let cx = Context {
            scenario,
            budgets,
            revision,
        };
        // Where its launcher left it running, the server is judged on the signal the
        // harness then sent it itself: what the launcher did is the launcher's.
        let o = &*o.as_the_server_lived_it();
        self.rules_for(scenario.ending())
            .map(|r| (r, judge::judge(r.id, r.only_when_missed, o, &cx)))
            // A rule about what only a broken case does shows only where it was missed.
            .filter(|(r, finding)| !r.only_when_missed || finding.outcome() == Outcome::Fail)
            .map(|(r, finding)| {
                let outcome = finding.outcome();
                let level = r.level(revision);
                let status = match &finding {
                    // Not the server's failure: reported, never scored.
                    judge::Finding::NotTestable { kind, .. } if !kind.scores_untested() => {
                        Status::Skipped
                    }
                    _ => Status::of(outcome, level),
                };
                Check {
                    id: r.id,
                    status,
                    level,
                    outcome,
                    message: explain::message(&self.wording, r, &finding),
                    spec_references: r
                        .references_for(revision)
                        .map(|x| SpecReference {
                            revision,
                            url: x.url_for(revision),
                        })
                        .collect(),
                }
            })
            .collect()
    }

    /// The wording and quotes of `ids` for `revision`, for a report to carry.
    pub fn infos(
        &self,
        ids: impl IntoIterator<Item = RuleId>,
        revision: Revision,
    ) -> BTreeMap<RuleId, RuleInfo> {
        ids.into_iter()
            .map(|id| (id, self.rule(id).info(revision)))
            .collect()
    }
}

/// The note a case carries when the numbers alone do not say what the ending costs.
pub fn note(o: &Observation, scenario: &Scenario) -> Option<String> {
    let capped = scenario.steps.last().map_or(0, |s| s.wait_ms);
    let survived = o.stage == Some(Stage::Survived);
    let parts: Vec<String> = [
        (survived && scenario.unbounded).then(|| explain::would_wait_forever(capped)),
        (survived && scenario.abandons).then(|| explain::left_running(capped)),
        (o.limit_hits > 0).then(|| explain::limit_hit(o.limit_hits)),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

pub mod machine;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profiles::Profiles;
    use crate::config::scenarios;
    use crate::model::{ErrorKind, Level, Outcome, ScenarioId};

    fn rev(s: &str) -> Revision {
        s.parse().unwrap()
    }

    #[test]
    fn levels_map_to_statuses() {
        assert_eq!(Status::of(Outcome::Fail, Level::Must), Status::Failure);
        assert_eq!(Status::of(Outcome::Fail, Level::Should), Status::Warning);
        assert_eq!(Status::of(Outcome::Fail, Level::Info), Status::Info);
        assert_eq!(
            Status::of(Outcome::NotTestable, Level::Should),
            Status::Warning
        );
        assert_eq!(Status::of(Outcome::Pass, Level::Should), Status::Success);
        assert_eq!(
            Status::of(Outcome::NotApplicable, Level::Must),
            Status::Skipped
        );
    }

    fn case(scenario: &str, stage: Option<Stage>, exit_ms: Option<f64>) -> Observation {
        let mut r = Observation::empty("s", &scenario.parse::<ScenarioId>().unwrap());
        r.stage = stage;
        r.exit_ms = exit_ms;
        r
    }

    fn judge_full(r: &Observation, revision: &str) -> Vec<Check> {
        let b = Budgets::default();
        let s = scenarios::build(&r.scenario, &b, &Profiles::bundled()).unwrap();
        Catalogue::bundled().judge(r, &s, &b, rev(revision))
    }

    fn judge(r: &Observation, revision: &str) -> Vec<(RuleId, Status)> {
        judge_full(r, revision)
            .into_iter()
            .map(|c| (c.id, c.status))
            .collect()
    }

    /// The rules a case missed (a rule added to the catalogue passes a case that misses none).
    fn misses(v: &[(RuleId, Status)]) -> Vec<RuleId> {
        v.iter()
            .filter(|(_, s)| matches!(s, Status::Warning | Status::Failure))
            .map(|(i, _)| *i)
            .collect()
    }

    fn get(v: &[(RuleId, Status)], id: RuleId) -> Option<Status> {
        v.iter().find(|(i, _)| *i == id).map(|(_, s)| *s)
    }

    #[test]
    fn timer_server_scores_differ_by_revision() {
        let r = case("close", Some(Stage::Sigterm), Some(2004.0));
        let now = judge(&r, "2026-07-28");
        assert_eq!(get(&now, RuleId::StdioExitOnEof), Some(Status::Warning));
        assert_eq!(get(&now, RuleId::StdioNoForcedKill), Some(Status::Success));
        let old = judge(&r, "2025-06-18");
        assert_eq!(get(&old, RuleId::StdioExitOnEof), Some(Status::Info));
        let orphan = case("crash", Some(Stage::Survived), None);
        let j = judge(&orphan, "2026-07-28");
        assert_eq!(
            get(&j, RuleId::StdioExitOnClientDeath),
            Some(Status::Warning)
        );
        assert_eq!(
            get(&j, RuleId::ProcessNoLeakedDescendants),
            Some(Status::Skipped)
        );
    }

    #[test]
    fn slow_eof_exit_misses_the_prompt_budget() {
        let r = case("close", Some(Stage::Eof), Some(1500.0));
        assert_eq!(judge(&r, "2026-07-28")[0].1, Status::Warning);
        let r = case("close", Some(Stage::Eof), Some(12.0));
        assert!(misses(&judge(&r, "2026-07-28")).is_empty());
    }

    #[test]
    fn time_spent_waiting_for_a_cpu_is_not_the_servers() {
        let mut r = case("exit", Some(Stage::Eof), Some(1069.0));
        assert_eq!(judge(&r, "2026-07-28")[0].1, Status::Warning);
        r.runqueue_ms = Some(620.0);
        let c = &judge_full(&r, "2026-07-28")[0];
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
        let find = |v: Vec<(RuleId, Status)>| get(&v, RuleId::StdioStdoutOnlyMcp).unwrap();
        assert_eq!(find(judge(&r, "2026-07-28")), Status::Failure);
        assert_eq!(find(judge(&r, "2025-06-18")), Status::Success);
    }

    #[test]
    fn a_server_the_java_client_leaves_running_is_flagged() {
        let r = case("close:java", Some(Stage::Survived), None);
        let j = judge(&r, "2026-07-28");
        assert_eq!(
            get(&j, RuleId::StdioNoForcedKill),
            Some(Status::Warning),
            "{j:?}"
        );
        let b = Budgets::default();
        let s = scenarios::build(&r.scenario, &b, &Profiles::bundled()).unwrap();
        assert!(note(&r, &s).unwrap().contains("leaves the server running"));
    }

    #[test]
    fn clients_that_never_close_stdin_do_not_blame_the_server() {
        let r = case("close:csharp", Some(Stage::Sigkill), Some(5003.0));
        let j = judge(&r, "2026-07-28");
        assert!(misses(&j).is_empty(), "{j:?}");
        assert_eq!(get(&j, RuleId::StdioExitOnEof), Some(Status::Skipped));
        assert_eq!(get(&j, RuleId::StdioNoForcedKill), Some(Status::Skipped));
    }

    #[test]
    fn a_host_that_signals_as_it_closes_stdin_does_not_judge_eof() {
        // Goose's exit closes the pipes and sends the parent-death SIGTERM together: a
        // server that exits on EOF in 8 ms is still ended by the signal.
        let r = case("close:goose-quit", Some(Stage::Sigterm), Some(1.0));
        let checks = judge_full(&r, "2026-07-28");
        let eof = checks
            .iter()
            .find(|c| c.id == RuleId::StdioExitOnEof)
            .unwrap();
        assert_eq!(eof.status, Status::Skipped);
        assert!(eof.message.contains("end-of-file alone"), "{}", eof.message);
        // The bundled ladders that give EOF its own wait keep the rule.
        for id in [
            "close",
            "close:vscode-quit",
            "close:goose",
            "close:gemini-cli-sigkill",
        ] {
            let r = case(id, Some(Stage::Sigterm), Some(2004.0));
            let status = judge(&r, "2026-07-28")
                .into_iter()
                .find(|(i, _)| *i == RuleId::StdioExitOnEof)
                .unwrap()
                .1;
            assert_eq!(status, Status::Warning, "{id}");
        }
    }

    #[test]
    fn no_handshake_is_not_testable_at_rule_severity() {
        let r = Observation::failed(
            "s",
            &"exit".parse().unwrap(),
            ErrorKind::HandshakeTimeout,
            "no answer".into(),
        );
        let checks = judge_full(&r, "2026-07-28");
        assert_eq!(checks[0].status, Status::Warning);
        assert!(checks
            .iter()
            .all(|c| c.message.starts_with("Not testable:")));
        // At its own severity: the stdout rule is a MUST.
        assert!(checks
            .iter()
            .any(|c| c.id == RuleId::StdioStdoutOnlyMcp && c.status == Status::Failure));
    }

    #[test]
    fn a_usage_error_or_a_harness_fault_is_never_scored() {
        for (kind, says) in [
            (ErrorKind::SpawnFailed, "a usage error"),
            (ErrorKind::SetupFailed, "a usage error"),
            (ErrorKind::Harness, "a fault of the test harness"),
        ] {
            let r = Observation::failed("s", &"close".parse().unwrap(), kind, "why".into());
            let checks = judge_full(&r, "2026-07-28");
            assert!(!checks.is_empty());
            for c in &checks {
                assert_eq!(c.status, Status::Skipped, "{kind}: {c:?}");
                assert_eq!(c.outcome, Outcome::NotTestable);
                assert!(
                    c.message.starts_with("Not testable: why") && c.message.contains(says),
                    "{}",
                    c.message
                );
            }
        }
    }

    #[test]
    fn an_attack_on_the_processes_above_is_judged_by_its_own_rule_alone() {
        let r = Observation::failed(
            "s",
            &"close".parse().unwrap(),
            ErrorKind::AncestorSignalled,
            "the case supervisor ended without a result (killed by SIGKILL)".into(),
        );
        let checks = judge_full(&r, "2026-07-28");
        let attack: Vec<&Check> = checks
            .iter()
            .filter(|c| c.id == RuleId::ProcessNoSignalsToAncestors)
            .collect();
        assert_eq!(attack.len(), 1);
        assert_eq!(
            (attack[0].status, attack[0].level),
            (Status::Warning, Level::Should)
        );
        assert!(
            attack[0].message.contains("killed by SIGKILL"),
            "{}",
            attack[0].message
        );
        // What it kept from being measured is not claimed as broken.
        assert!(checks
            .iter()
            .filter(|c| c.id != RuleId::ProcessNoSignalsToAncestors)
            .all(|c| c.status == Status::Skipped
                && c.message.contains("process-no-signals-to-ancestors")));
        // Every other case, broken or not, carries no line for it.
        for o in [
            case("close", Some(Stage::Eof), Some(12.0)),
            Observation::failed(
                "s",
                &"close".parse().unwrap(),
                ErrorKind::HandshakeTimeout,
                "x".into(),
            ),
        ] {
            assert!(judge(&o, "2026-07-28")
                .iter()
                .all(|(id, _)| *id != RuleId::ProcessNoSignalsToAncestors));
        }
    }

    #[test]
    fn who_ended_a_lost_supervisor_decides_whose_the_case_is() {
        use crate::model::SignalName;
        assert_eq!(
            ErrorKind::of_lost_supervisor(true, None),
            ErrorKind::AncestorSignalled
        );
        assert_eq!(
            ErrorKind::of_lost_supervisor(false, Some(SignalName::Kill)),
            ErrorKind::AncestorSignalled
        );
        // Its own crash, or silence without a stop: the harness's.
        assert_eq!(
            ErrorKind::of_lost_supervisor(false, Some(SignalName::Segv)),
            ErrorKind::Harness
        );
        assert_eq!(
            ErrorKind::of_lost_supervisor(false, Some(SignalName::Abrt)),
            ErrorKind::Harness
        );
        assert_eq!(
            ErrorKind::of_lost_supervisor(false, None),
            ErrorKind::Harness
        );
    }

    /// Every ending is judged by some rule of its own, beyond those of every ending: how it
    /// ends is what it is there to judge.
    #[test]
    fn every_ending_has_rules() {
        use crate::model::Ending;
        let c = Catalogue::bundled();
        for e in Ending::ALL {
            assert!(
                c.rules_for(*e)
                    .any(|r| r.scenarios.len() < Ending::ALL.len()),
                "ending `{e}` (conformance/endings.toml) is judged only by the rules of every \
                 ending: name it in the `scenarios` of the [[rule]] that judges how it ends \
                 (conformance/rules.toml), or write that rule"
            );
        }
    }

    /// Cases of every scenario that end every way, could not run for every reason, write
    /// to stdout, leave processes behind and drop requests: what the judges see.
    fn grid() -> Vec<Observation> {
        use crate::model::{Leftover, Violation, ViolationKind};
        let stages = [
            None,
            Some(Stage::Eof),
            Some(Stage::Sigint),
            Some(Stage::Sigterm),
            Some(Stage::Sighup),
            Some(Stage::Sigkill),
            Some(Stage::Survived),
        ];
        let errors = [
            ErrorKind::SetupFailed,
            ErrorKind::SpawnFailed,
            ErrorKind::ExitedBeforeHandshake,
            ErrorKind::HandshakeTimeout,
            ErrorKind::HandshakeFailed,
            ErrorKind::ExitedBeforeEnd,
            ErrorKind::Harness,
            ErrorKind::AncestorSignalled,
        ];
        let mut out = Vec::new();
        for id in scenarios::all_ids(&Profiles::bundled()) {
            for stage in stages {
                for (exit_ms, runqueue_ms) in [
                    (None, None),
                    (Some(12.0), None),
                    (Some(1500.0), Some(620.0)),
                ] {
                    let mut o = case(&id.to_string(), stage, exit_ms);
                    o.runqueue_ms = runqueue_ms;
                    out.push(o);
                }
            }
            out.extend(errors.map(|k| Observation::failed("s", &id, k, "why".into())));
            let ok = case(&id.to_string(), Some(Stage::Eof), Some(12.0));
            let mut o = ok.clone();
            o.stdout.violations = 1;
            o.stdout.first_violation = Some(Violation {
                line: 1,
                kind: ViolationKind::NotJson,
                excerpt: "log".into(),
                size: None,
            });
            out.push(o);
            let mut o = ok.clone();
            o.stdout.server_requests = 1;
            out.push(o);
            for answered in [Some(true), Some(false)] {
                let mut o = ok.clone();
                o.inflight_answered = answered;
                out.push(o);
            }
            let mut o = ok.clone();
            o.leftovers = vec![Leftover {
                pid: 7,
                cmdline: "sleep 600".into(),
                started_by: None,
                started_by_cmdline: None,
            }];
            o.leftovers_omitted = 2;
            out.push(o);
        }
        out
    }

    /// A rule is its `[[rule]]` and its judge: every finding a judge gives has its message in
    /// the catalogue (naming where to write it when not), every message is given by some case,
    /// and every badge label can be evaluated.
    #[test]
    fn every_finding_a_judge_gives_has_its_message() {
        let c = Catalogue::bundled();
        let b = Budgets::default();
        let profiles = Profiles::bundled();
        let mut given: BTreeMap<RuleId, Vec<&str>> = BTreeMap::new();
        for o in grid() {
            let s = scenarios::build(&o.scenario, &b, &profiles).unwrap();
            // No bundled client waits without end: one that did.
            let mut unbounded = s.clone();
            (unbounded.unbounded, unbounded.abandons) = (true, false);
            for (s, rev) in [
                (&s, c.revisions[0]),
                (&s, c.default_revision),
                (&unbounded, c.default_revision),
            ] {
                let cx = Context {
                    scenario: s,
                    budgets: &b,
                    revision: rev,
                };
                for r in c.rules_for(s.ending()) {
                    let f = judge::judge(r.id, r.only_when_missed, &o, &cx);
                    let name = serde_json::to_value(&f).unwrap()["finding"].clone();
                    assert_eq!(name, f.name(), "{f:?}");
                    let m = explain::try_message(&c.wording, r, &f);
                    assert!(m.is_ok(), "{} on {}: {}", r.id, o.scenario, m.unwrap_err());
                    given.entry(r.id).or_default().push(f.name());
                    let label = explain::try_badge_label(r, &o);
                    assert!(label.is_ok(), "{}", label.unwrap_err());
                }
            }
        }
        for r in &c.rules {
            for name in r.messages.keys() {
                assert!(
                    given[&r.id].contains(&name.as_str()),
                    "rule `{}`: its judge never gives `{name}` here (add a case that does)",
                    r.id
                );
            }
        }
    }

    /// Without its message, a finding says where to write it.
    #[test]
    fn a_finding_without_a_message_says_where_to_write_it() {
        let mut c = Catalogue::bundled();
        let r = c
            .rules
            .iter_mut()
            .find(|r| r.id == RuleId::StdioExitOnEof)
            .unwrap();
        r.messages.remove("never_closes_stdin");
        let o = case("close:csharp", Some(Stage::Sigkill), Some(5003.0));
        let checks = {
            let b = Budgets::default();
            let s = scenarios::build(&o.scenario, &b, &Profiles::bundled()).unwrap();
            c.judge(&o, &s, &b, rev("2026-07-28"))
        };
        let m = &checks
            .iter()
            .find(|x| x.id == RuleId::StdioExitOnEof)
            .unwrap()
            .message;
        assert_eq!(
            m,
            "(rule `stdio-exit-on-eof` has no message for its finding `never_closes_stdin`: write `never_closes_stdin = \"…\"` under its [rule.messages] in conformance/rules.toml)"
        );
    }

    /// The badge's label of each rule is the catalogue's, chosen by the case.
    #[test]
    fn badge_labels_come_from_the_catalogue() {
        let c = Catalogue::bundled();
        let label = |id, o: &Observation| explain::badge_label(c.rule(id), o);
        let orphan = case("crash", Some(Stage::Survived), None);
        assert_eq!(
            label(RuleId::StdioExitOnClientDeath, &orphan),
            (0, "orphans on client exit".into())
        );
        let slow = case("crash", Some(Stage::Eof), Some(1500.0));
        assert_eq!(
            label(RuleId::StdioExitOnClientDeath, &slow),
            (9, "slow exit on client exit".into())
        );
        let mut requests = case("close", Some(Stage::Eof), Some(12.0));
        requests.stdout.server_requests = 1;
        assert_eq!(
            label(RuleId::StdioStdoutOnlyMcp, &requests),
            (2, "requests on stdout".into())
        );
        requests.stdout.violations = 1;
        assert_eq!(
            label(RuleId::StdioStdoutOnlyMcp, &requests).1,
            "non-MCP output on stdout"
        );
    }
}
