//! What got better or worse between a saved report and a new one, for `--diff-against` (CI)
//! and `check --watch` (only what changed since the last run): the cases whose stage or
//! verdict moved, and the checks whose status did, paired by [`diff::diff`]. Milliseconds
//! never count as a change: a run is never "worse" for being slower on a busy machine.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::diff::{self, CaseKey};
use super::present::{error_cell, judged, mark, not_testable, RE_RUN};
use crate::model::{JudgedCase, Report, RuleId, ScenarioId, Status};

/// Which way something moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// A missed rule more (or a MUST where a SHOULD was missed).
    Worse,
    /// A missed rule less.
    Better,
    /// Another stage or error with the same verdict.
    Moved,
    /// Only in the new report.
    New,
    /// Only in the saved report.
    Gone,
}

impl Direction {
    pub fn word(self) -> &'static str {
        match self {
            Direction::Worse => "worse",
            Direction::Better => "better",
            Direction::Moved => "moved",
            Direction::New => "new",
            Direction::Gone => "gone",
        }
    }
}

/// A case as a change shows it: how it ended (stage or error, no milliseconds) and its
/// verdict (`None`: no verdict that is the server's; `machine_bound`: the machine's load
/// decided it, so it shows as "re-run").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseState {
    pub ended: String,
    pub verdict: Option<Status>,
    pub machine_bound: bool,
}

impl CaseState {
    fn of(r: &JudgedCase) -> Self {
        let ended = match (not_testable(r), &r.error, r.stage) {
            (Some(n), _, _) => n,
            (None, Some(e), _) => error_cell(e.kind),
            (None, None, Some(s)) => s.to_string(),
            (None, None, None) => "?".into(),
        };
        CaseState {
            ended,
            verdict: judged(r),
            machine_bound: r.is_machine_bound(),
        }
    }

    /// `survived WARN`, `eof ok`, `spawn-failed (usage) SKIP`, `sigterm re-run`.
    pub fn cell(&self) -> String {
        let word = match (self.machine_bound, self.verdict) {
            (true, _) => RE_RUN,
            (false, v) => v.map_or("SKIP", mark),
        };
        format!("{} {word}", self.ended)
    }
}

/// One check whose status moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckChange {
    pub rule: RuleId,
    pub before: Option<Status>,
    pub after: Option<Status>,
    pub direction: Direction,
}

/// One case that changed, with its checks that did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseChange {
    pub server: String,
    pub scenario: ScenarioId,
    pub before: Option<CaseState>,
    pub after: Option<CaseState>,
    pub direction: Direction,
    pub checks: Vec<CheckChange>,
}

/// Every change between two reports, worst first, and how many cases stayed as they were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub cases: Vec<CaseChange>,
    pub unchanged: usize,
}

/// How bad a status is: a missed MUST, a missed SHOULD, or nothing missed.
fn rank(s: Option<Status>) -> u8 {
    match s {
        Some(Status::Failure) => 2,
        Some(Status::Warning) => 1,
        _ => 0,
    }
}

fn direction(before: Option<Status>, after: Option<Status>, present: (bool, bool)) -> Direction {
    match present {
        (false, _) => Direction::New,
        (_, false) => Direction::Gone,
        _ if rank(after) > rank(before) => Direction::Worse,
        _ if rank(after) < rank(before) => Direction::Better,
        _ => Direction::Moved,
    }
}

fn cases(r: &Report) -> BTreeMap<CaseKey, CaseState> {
    r.results
        .iter()
        .map(|c| ((c.server.clone(), c.scenario.clone()), CaseState::of(c)))
        .collect()
}

/// Compares `new` with the saved `old`, case by case and check by check.
pub fn compare(old: &Report, new: &Report) -> Changes {
    let mut checks: BTreeMap<CaseKey, Vec<CheckChange>> = BTreeMap::new();
    for row in diff::diff(old, new) {
        let moved = row.old != row.new
            && (row.old.is_none() || row.new.is_none() || rank(row.old) != rank(row.new));
        if moved {
            checks
                .entry((row.server, row.scenario))
                .or_default()
                .push(CheckChange {
                    rule: row.rule,
                    before: row.old,
                    after: row.new,
                    direction: direction(row.old, row.new, (row.old.is_some(), row.new.is_some())),
                });
        }
    }
    let (a, b) = (cases(old), cases(new));
    let mut keys: Vec<&CaseKey> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Changes::default();
    for k in keys {
        let (before, after) = (a.get(k).cloned(), b.get(k).cloned());
        let checks = checks.remove(k).unwrap_or_default();
        if before == after && checks.is_empty() {
            out.unchanged += 1;
            continue;
        }
        let verdict = |s: &Option<CaseState>| s.as_ref().and_then(|s| s.verdict);
        let mut dir = direction(
            verdict(&before),
            verdict(&after),
            (before.is_some(), after.is_some()),
        );
        // The case's verdict held while a check's moved (a SHOULD fixed beside a MUST still
        // missed): the case moved the way its checks did, worse first.
        if dir == Direction::Moved {
            dir = checks
                .iter()
                .map(|c| c.direction)
                .min()
                .unwrap_or(Direction::Moved);
        }
        out.cases.push(CaseChange {
            server: k.0.clone(),
            scenario: k.1.clone(),
            before,
            after,
            direction: dir,
            checks,
        });
    }
    out.cases.sort_by_key(|c| c.direction);
    out
}

impl Changes {
    fn count(&self, d: Direction) -> usize {
        self.cases.iter().filter(|c| c.direction == d).count()
    }

    /// Did the new report get worse at this threshold (`Warning`: a SHOULD newly missed
    /// counts; `Failure`: only a MUST)? A new case or check that misses a rule counts too.
    pub fn regressed(&self, threshold: Status) -> bool {
        let fails = |s: Option<Status>| match threshold {
            Status::Warning => rank(s) >= 1,
            _ => rank(s) >= 2,
        };
        let worse = |before: Option<Status>, after: Option<Status>| {
            fails(after) && rank(after) > rank(before)
        };
        self.cases.iter().any(|c| {
            let v = |s: &Option<CaseState>| s.as_ref().and_then(|s| s.verdict);
            (c.after.is_some() && worse(v(&c.before), v(&c.after)))
                || c.checks.iter().any(|k| worse(k.before, k.after))
        })
    }

    /// `2 worse, 1 better, 1 moved (4 of 18 cases changed)`, or that nothing did.
    pub fn headline(&self) -> String {
        let total = self.cases.len() + self.unchanged;
        if self.cases.is_empty() {
            return format!("no change ({total} cases as before)");
        }
        let parts: Vec<String> = [
            Direction::Worse,
            Direction::Better,
            Direction::Moved,
            Direction::New,
            Direction::Gone,
        ]
        .into_iter()
        .filter(|d| self.count(*d) > 0)
        .map(|d| format!("{} {}", self.count(d), d.word()))
        .collect();
        format!(
            "{} ({} of {total} cases changed)",
            parts.join(", "),
            self.cases.len()
        )
    }

    /// For a terminal: the headline, then a line per changed case and one per moved check.
    pub fn text(&self, since: &str) -> String {
        let mut out = format!("changes since {since}: {}\n", self.headline());
        let cell = |s: &Option<CaseState>| s.as_ref().map_or("-".into(), CaseState::cell);
        let status = |s: Option<Status>| s.map_or("-".into(), |s| s.to_string());
        for c in &self.cases {
            let _ = writeln!(
                out,
                "  {:<7} {} × {}: {} → {}",
                c.direction.word().to_uppercase(),
                c.server,
                c.scenario,
                cell(&c.before),
                cell(&c.after)
            );
            for k in &c.checks {
                let _ = writeln!(
                    out,
                    "          {}: {} → {}",
                    k.rule,
                    status(k.before),
                    status(k.after)
                );
            }
        }
        out
    }

    /// For a pull request or a job summary: the headline and a table of the changed cases.
    pub fn markdown(&self, since: &str) -> String {
        let mut out = format!("### Changes since `{since}`\n\n**{}**\n", self.headline());
        if self.cases.is_empty() {
            return out;
        }
        out.push_str(
            "\n| | server | ending | before | after | rules |\n|---|---|---|---|---|---|\n",
        );
        let cell = |s: &Option<CaseState>| s.as_ref().map_or("–".into(), CaseState::cell);
        let status = |s: Option<Status>| s.map_or("–".into(), |s| s.to_string());
        for c in &self.cases {
            let rules: Vec<String> = c
                .checks
                .iter()
                .map(|k| format!("`{}` {} → {}", k.rule, status(k.before), status(k.after)))
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                c.direction.word(),
                c.server,
                c.scenario,
                cell(&c.before),
                cell(&c.after),
                rules.join("<br>")
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, Level, Outcome, Stage};
    use crate::test_support::{report_of, result};

    fn case(server: &str, scenario: &str, stage: Stage, checks: &[(RuleId, Status)]) -> JudgedCase {
        let mut r = result(server, scenario, stage, 5.0);
        r.checks = checks
            .iter()
            .map(|(id, status)| Check {
                id: *id,
                status: *status,
                level: Level::Should,
                outcome: Outcome::Pass,
                message: String::new(),
                spec_references: Vec::new(),
            })
            .collect();
        r
    }

    const EOF: RuleId = RuleId::StdioExitOnEof;
    const DEATH: RuleId = RuleId::StdioExitOnClientDeath;

    #[test]
    fn better_worse_moved_new_and_gone_and_milliseconds_are_no_change() {
        let old = report_of(vec![
            case("s", "close", Stage::Sigterm, &[(EOF, Status::Warning)]),
            case("s", "exit", Stage::Eof, &[(DEATH, Status::Success)]),
            case("s", "crash", Stage::Sigterm, &[(DEATH, Status::Warning)]),
            case("s", "sigterm", Stage::Sigterm, &[]),
            case("s", "sigint", Stage::Sigint, &[]),
        ]);
        let mut same = case("s", "sigterm", Stage::Sigterm, &[]);
        same.exit_ms = Some(900.0);
        let new = report_of(vec![
            case("s", "close", Stage::Eof, &[(EOF, Status::Success)]),
            case("s", "exit", Stage::Survived, &[(DEATH, Status::Warning)]),
            case("s", "crash", Stage::Sigkill, &[(DEATH, Status::Warning)]),
            same,
            case("s", "inflight", Stage::Eof, &[]),
        ]);
        let ch = compare(&old, &new);
        let dirs: Vec<(String, Direction)> = ch
            .cases
            .iter()
            .map(|c| (c.scenario.to_string(), c.direction))
            .collect();
        assert_eq!(
            dirs,
            [
                ("exit".into(), Direction::Worse),
                ("close".into(), Direction::Better),
                ("crash".into(), Direction::Moved),
                ("inflight".into(), Direction::New),
                ("sigint".into(), Direction::Gone),
            ]
        );
        assert_eq!(ch.unchanged, 1);
        assert!(ch.regressed(Status::Warning));
        assert!(
            !ch.regressed(Status::Failure),
            "a SHOULD under --fail-on must"
        );
        let text = ch.text("old.json");
        assert!(
            text.starts_with("changes since old.json: 1 worse, 1 better, 1 moved, 1 new, 1 gone (5 of 6 cases changed)"),
            "{text}"
        );
        assert!(
            text.contains("WORSE   s × exit: eof ok → survived WARN\n          stdio-exit-on-client-death: SUCCESS → WARNING"),
            "{text}"
        );
        let md = ch.markdown("old.json");
        assert!(md.contains("| worse | s | exit | eof ok | survived WARN | `stdio-exit-on-client-death` SUCCESS → WARNING |"), "{md}");
    }

    #[test]
    fn a_machine_bound_case_shows_as_re_run() {
        let old = report_of(vec![case("busy", "close", Stage::Eof, &[])]);
        let new = report_of(vec![crate::test_support::machine_bound("busy")]);
        let text = compare(&old, &new).text("old.json");
        assert!(
            text.contains("busy × close: eof ok → sigterm re-run"),
            "{text}"
        );
    }

    #[test]
    fn a_should_turned_must_is_worse_and_the_same_report_has_no_change() {
        let old = report_of(vec![case(
            "s",
            "close",
            Stage::Sigterm,
            &[(EOF, Status::Warning)],
        )]);
        let new = report_of(vec![case(
            "s",
            "close",
            Stage::Sigterm,
            &[(EOF, Status::Failure)],
        )]);
        let ch = compare(&old, &new);
        assert_eq!(ch.cases[0].direction, Direction::Worse);
        assert!(ch.regressed(Status::Failure));
        let ch = compare(&old, &old);
        assert!(ch.cases.is_empty() && !ch.regressed(Status::Warning));
        assert_eq!(ch.headline(), "no change (1 cases as before)");
    }
}
