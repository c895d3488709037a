//! Per-server badges, scored against the report's spec revision (the levels its checks carry,
//! so a rule added later does not silently lower a published badge), on the default endings
//! only: one message per server whatever else the run added (the host-scoped badge is the
//! detail `--hosts` adds):
//!
//! - green: every MUST and SHOULD check holds (SUCCESS, or not scored: INFO, SKIPPED);
//!   message `<revision> · <passed>/<scored>`;
//! - yellow: only SHOULDs are missed (WARNING); red: a MUST is missed (FAILURE); the message
//!   then names the most telling problem (`orphans on client exit`, `needs SIGKILL`, ...);
//! - lightgrey: nothing was scored; `could not run: <owner>` when no case has a verdict, the
//!   owner saying whose that is (`usage`, `harness`, `listing`, `credentials`, `server`).
//!
//! Each badge renders as a shields.io endpoint JSON and as a static flat SVG (no CDN).

use std::collections::BTreeSet;

use askama::Template;
use serde::Serialize;

use super::hosts::is_host_scenario;
use super::present::{self, axes, visible};
use crate::model::{Check, Ending, JudgedCase, Outcome, Owner, Pass, Report, ScenarioId, Status};
use crate::rules::{explain, Catalogue};

/// The badge's left-hand text.
pub const LABEL: &str = "MCP shutdown";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    Green,
    Yellow,
    Red,
    Grey,
}

impl Color {
    /// The shields.io colour name.
    pub fn name(self) -> &'static str {
        match self {
            Color::Green => "green",
            Color::Yellow => "yellow",
            Color::Red => "red",
            Color::Grey => "lightgrey",
        }
    }

    /// The colour shields.io draws for that name.
    pub fn hex(self) -> &'static str {
        match self {
            Color::Green => "#97ca00",
            Color::Yellow => "#dfb317",
            Color::Red => "#e05d44",
            Color::Grey => "#9f9f9f",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Badge {
    pub server: String,
    pub label: String,
    pub message: String,
    pub color: Color,
    /// Scored checks that hold, and scored checks.
    pub passed: usize,
    pub scored: usize,
}

/// Which cases a badge scores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// The server's own conduct: its cases under the default endings, the same whatever the
    /// run added (`--hosts`, `--scenario all`, client profiles only add detail).
    #[default]
    All,
    /// Only what hosts' users cause: the host profiles and the terminal endings.
    Hosts,
}

impl Scope {
    fn admits(self, report: &Report, r: &JudgedCase) -> bool {
        match self {
            Scope::All => {
                matches!(r.scenario, ScenarioId::Ending(e) if Ending::DEFAULTS.contains(&e))
            }
            Scope::Hosts => {
                is_host_scenario(report, &r.scenario)
                    || matches!(r.scenario, ScenarioId::Ending(e) if e.in_terminal())
            }
        }
    }
}

/// One badge per server scored on `scope`, in report order.
pub fn badges_in(report: &Report, scope: Scope) -> Vec<Badge> {
    let (servers, _) = axes(report);
    servers
        .into_iter()
        .filter_map(|s| badge_in(report, s, scope))
        .collect()
}

/// The badge of one server scored on `scope`; `None` when nothing of it is in scope.
pub fn badge_in(report: &Report, server: &str, scope: Scope) -> Option<Badge> {
    let results: Vec<&JudgedCase> = report
        .results
        .iter()
        .filter(|r| r.server == server && scope.admits(report, r))
        .collect();
    if results.is_empty() {
        return None;
    }
    let scored: Vec<(&JudgedCase, &Check)> = results
        .iter()
        .flat_map(|r| r.checks.iter().map(move |c| (*r, c)))
        .filter(|(_, c)| c.level.is_scored() && c.status != Status::Skipped)
        .filter(|(r, _)| !r.is_machine_bound())
        .collect();
    let passed = scored
        .iter()
        .filter(|(_, c)| c.status == Status::Success)
        .count();
    let worst = scored
        .iter()
        .map(|(_, c)| c.status)
        .filter(|s| s.is_miss())
        .min();
    let (color, message) = match worst {
        Some(status) => (
            if status == Status::Failure {
                Color::Red
            } else {
                Color::Yellow
            },
            worst_reason(&scored, status, scope),
        ),
        None => unmissed(report, &results, &scored, passed, scope),
    };
    let (color, message) = unsettled(&results, color, message);
    Some(Badge {
        server: server.to_string(),
        label: match scope {
            Scope::All => LABEL.to_string(),
            Scope::Hosts => format!("{LABEL} · hosts"),
        },
        message,
        color,
        passed,
        scored: scored.len(),
    })
}

/// The reason the most telling of the `status` misses gives (under which host, in the
/// host scope).
fn worst_reason(scored: &[(&JudgedCase, &Check)], status: Status, scope: Scope) -> String {
    scored
        .iter()
        .filter(|(_, c)| c.status == status)
        .map(|(r, c)| (reason(r, c), *r))
        .min_by_key(|((priority, _), _)| *priority)
        .map(|((_, text), r)| match (scope, &r.scenario) {
            (Scope::Hosts, ScenarioId::Profile(p)) => format!("{text} under {p}"),
            _ => text,
        })
        .unwrap_or_default()
}

/// A server that missed nothing: could not run, nothing scored, or passed/scored.
fn unmissed(
    report: &Report,
    results: &[&JudgedCase],
    scored: &[(&JudgedCase, &Check)],
    passed: usize,
    scope: Scope,
) -> (Color, String) {
    if results.iter().any(|r| r.not_testable.is_some())
        || (scored.is_empty() && results.iter().all(|r| r.owner().is_some()))
    {
        let owner = present::main_owner(results.iter().copied()).unwrap_or(Owner::Server);
        (Color::Grey, present::could_not_run(owner))
    } else if scored.is_empty() {
        (Color::Grey, format!("{} · nothing scored", report.spec))
    } else {
        let server = results.first().map_or("", |r| r.server.as_str());
        let endings = match scope {
            Scope::All => results
                .iter()
                .map(|r| &r.scenario)
                .collect::<BTreeSet<_>>()
                .len(),
            Scope::Hosts => Ending::DEFAULTS.len(),
        };
        (
            Color::Green,
            green(report, server, passed, scored.len(), endings),
        )
    }
}

/// A green badge's message: `<revision> · <passed>/<scored>`, then ` (triage)` when only the
/// census's triage set judged the server (its count is of fewer endings than a full pass),
/// or ` (N of M endings)` when the run left default endings out (`--scenario`): a server
/// that passed some endings is not said to pass them all.
fn green(report: &Report, server: &str, passed: usize, scored: usize, endings: usize) -> String {
    let pass = report.servers.get(server).and_then(|i| i.judged.as_ref());
    let all = Ending::DEFAULTS.len();
    let partial = match pass.map(|j| j.pass) {
        Some(Pass::Triage) => " (triage)".to_string(),
        _ if endings < all => format!(" ({endings} of {all} endings)"),
        _ => String::new(),
    };
    format!("{} · {passed}/{scored}{partial}", report.spec)
}

/// A verdict that the next run may contradict is never shown as settled: flaky cases say so,
/// and a case the machine's load decided shows as "re-run" unless the server failed
/// elsewhere.
fn unsettled(results: &[&JudgedCase], color: Color, message: String) -> (Color, String) {
    let flaky = results
        .iter()
        .any(|r| r.repeat.as_ref().is_some_and(|x| x.flaky));
    let (color, message) = match (flaky, color) {
        (false, c) => (c, message),
        (true, Color::Green) => (Color::Yellow, "flaky".to_string()),
        (true, c) => (c, format!("flaky: {message}")),
    };
    match results.iter().any(|r| r.is_machine_bound()) {
        true if color != Color::Red => (Color::Grey, present::RE_RUN.to_string()),
        _ => (color, message),
    }
}

/// A short reason for a missed check, and its priority (lower says more).
fn reason(r: &JudgedCase, c: &Check) -> (u8, String) {
    if c.outcome == Outcome::NotTestable {
        return (
            20,
            present::could_not_run(r.owner().unwrap_or(Owner::Server)),
        );
    }
    // Each rule's label is in the catalogue (`badge` of its `[[rule]]`).
    explain::badge_label(Catalogue::shared().rule(c.id), r)
}

/// The static flat badge (shields' "flat" style).
#[derive(Template)]
#[template(path = "badge.svg", config = "src/render/askama.toml")]
struct Svg {
    total: u32,
    lw: u32,
    mw: u32,
    lx: f64,
    mx: f64,
    label: String,
    message: String,
    color: &'static str,
}

#[derive(Serialize)]
struct Endpoint<'a> {
    #[serde(rename = "schemaVersion")]
    schema_version: u8,
    label: &'a str,
    message: &'a str,
    color: &'a str,
}

impl Badge {
    /// The shields.io endpoint JSON (only the keys shields accepts).
    pub fn endpoint_json(&self) -> String {
        let e = Endpoint {
            schema_version: 1,
            label: &self.label,
            message: &self.message,
            color: self.color.name(),
        };
        serde_json::to_string_pretty(&e).expect("badges serialize")
    }

    /// A static flat badge (shields' "flat" style), text width estimated at 7 px a character.
    pub fn svg(&self) -> String {
        let width = |s: &str| s.chars().count() as u32 * 7 + 10;
        let (lw, mw) = (width(&self.label), width(&self.message));
        Svg {
            total: lw + mw,
            lw,
            mw,
            lx: lw as f64 / 2.0,
            mx: lw as f64 + mw as f64 / 2.0,
            label: visible(&self.label),
            message: visible(&self.message),
            color: self.color.hex(),
        }
        .render()
        .expect("badges render")
            + "\n"
    }

    /// A file name stem for the badge: the server name with anything outside
    /// `[A-Za-z0-9._-]` replaced by `-`.
    pub fn file_stem(&self) -> String {
        let s: String = self
            .server
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        if s.is_empty() || s.starts_with('.') {
            format!("server{s}")
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Level, RuleId, Stage};
    use crate::test_support as fixture;

    fn badges(report: &Report) -> Vec<Badge> {
        badges_in(report, Scope::All)
    }

    fn badge(report: &Report, server: &str) -> Option<Badge> {
        badge_in(report, server, Scope::All)
    }

    fn by_server(report: &Report) -> Vec<(String, Color, String)> {
        badges(report)
            .into_iter()
            .map(|b| (b.server, b.color, b.message))
            .collect()
    }

    #[test]
    fn a_machine_bound_case_shows_re_run_unless_the_server_failed_elsewhere() {
        let r = fixture::report_of(vec![
            fixture::machine_bound("s"),
            fixture::result("s", "sigterm", Stage::Sigterm, 12.0),
        ]);
        let b = badge(&r, "s").unwrap();
        assert_eq!((b.color, b.message.as_str()), (Color::Grey, "re-run"));
        // A MUST missed elsewhere is the server's verdict however loaded the machine was.
        let mut failed = fixture::result("s", "sigterm", Stage::Sigterm, 12.0);
        let c = failed
            .checks
            .iter_mut()
            .find(|c| c.level == Level::Must)
            .unwrap();
        c.status = crate::model::Status::Failure;
        let r = fixture::report_of(vec![fixture::machine_bound("s"), failed]);
        assert_eq!(badge(&r, "s").unwrap().color, Color::Red);
    }

    #[test]
    fn a_flaky_server_is_never_green_and_says_so() {
        use crate::model::Stage;
        let runs = vec![
            fixture::result("s", "close", Stage::Eof, 12.0),
            fixture::result("s", "close", Stage::Sigterm, 2004.0),
        ];
        let r = fixture::report_of(vec![crate::rules::repeat::aggregate(runs)]);
        let b = badge(&r, "s").unwrap();
        assert_eq!(b.color, Color::Yellow);
        assert_eq!(b.message, "flaky: ignores stdin EOF");
        // Flaky on an unscored difference only (the stage): still not green.
        let mut fine = vec![
            fixture::result("s", "close", Stage::Eof, 12.0),
            fixture::result("s", "close", Stage::Eof, 14.0),
        ];
        fine[1].stage = Some(Stage::Sigint);
        let r = fixture::report_of(vec![crate::rules::repeat::aggregate(fine)]);
        assert_eq!(badge(&r, "s").unwrap().message, "flaky");
    }

    #[test]
    fn the_host_badge_scores_only_what_hosts_users_cause() {
        use crate::model::Stage;
        let r = fixture::report_of(vec![
            fixture::result("s", "close", Stage::Eof, 12.0),
            fixture::result("s", "close:goose", Stage::Sigkill, 3004.0),
            fixture::result("s", "sighup", Stage::Sighup, 3.0),
        ]);
        // The server's own badge is its default endings', whatever the run added.
        let own = fixture::report_of(vec![
            fixture::result("s", "close", Stage::Eof, 12.0),
            fixture::result("s", "sighup", Stage::Sighup, 3.0),
        ]);
        assert_eq!(badge(&r, "s"), badge(&own, "s"));
        assert_eq!(badge(&r, "s").unwrap().color, Color::Green);
        let h = badge_in(&r, "s", Scope::Hosts).unwrap();
        assert_eq!(h.label, "MCP shutdown · hosts");
        assert_eq!(h.message, "needs SIGKILL under goose");
        // A host that only closes the pipes sends no SIGKILL: the survivor was left running.
        let quit = fixture::report_of(vec![fixture::result(
            "s",
            "close:vscode-quit",
            Stage::Survived,
            5000.0,
        )]);
        let h = badge_in(&quit, "s", Scope::Hosts).unwrap();
        assert_eq!(h.message, "left running under vscode-quit");
        let fine = fixture::report_of(vec![fixture::result("s", "close", Stage::Eof, 12.0)]);
        assert!(badge_in(&fine, "s", Scope::Hosts).is_none());
    }

    #[test]
    fn colours_and_messages() {
        assert_eq!(
            by_server(&fixture::report()),
            [
                (
                    "timer".into(),
                    Color::Yellow,
                    "orphans on client exit".into()
                ),
                (
                    "fixed".into(),
                    Color::Green,
                    format!("2026-07-28 · 6/6 (2 of {} endings)", Ending::DEFAULTS.len())
                ),
                ("mute".into(), Color::Red, "could not run: server".into()),
            ]
        );
    }

    #[test]
    fn scored_against_the_reports_revision() {
        // Before 2026-07-28 the EOF rules are informational: the timer server passes the rest.
        let rep = fixture::report_for("2025-06-18", fixture::results("2025-06-18"));
        let b = badge(&rep, "timer").unwrap();
        let all = Ending::DEFAULTS.len();
        assert_eq!(
            (b.color, b.message, b.passed, b.scored),
            (
                Color::Green,
                format!("2025-06-18 · 3/3 (2 of {all} endings)"),
                3,
                3
            )
        );
        assert!(badge(&rep, "nobody").is_none());
    }

    #[test]
    fn a_missed_must_is_red_and_names_its_reason() {
        let mut rep = fixture::report();
        let kill = &mut rep.results[0].checks[1];
        assert_eq!(kill.id, RuleId::StdioNoForcedKill);
        kill.level = Level::Must;
        kill.status = Status::Failure;
        kill.outcome = Outcome::Fail;
        rep.results[0].stage = Some(Stage::Sigkill);
        let b = badge(&rep, "timer").unwrap();
        assert_eq!((b.color, b.message.as_str()), (Color::Red, "needs SIGKILL"));
        assert!(b.endpoint_json().contains("\"color\": \"red\""));
        assert!(b.svg().contains("fill=\"#e05d44\""));
    }

    #[test]
    fn a_must_outranks_shoulds() {
        let mut rep = fixture::report();
        let stdout = &mut rep.results[0].checks[2];
        assert_eq!(stdout.id, RuleId::StdioStdoutOnlyMcp);
        *stdout = fixture::check(
            RuleId::StdioStdoutOnlyMcp,
            Outcome::Fail,
            "1 of 3 stdout line(s) are not one JSON-RPC message",
            fixture::SPEC,
        );
        rep.results[0].stdout.violations = 1;
        let b = badge(&rep, "timer").unwrap();
        assert_eq!(
            (b.color, b.message.as_str(), b.passed, b.scored),
            (Color::Red, "non-MCP output on stdout", 2, 5)
        );
    }

    #[test]
    fn nothing_scored_is_grey() {
        let mut rep = fixture::report();
        rep.results.retain(|r| r.server == "mute");
        rep.results[0].checks.clear();
        assert_eq!(
            by_server(&rep),
            [("mute".into(), Color::Grey, "could not run: server".into())]
        );
        rep.results[0].error = None;
        assert_eq!(by_server(&rep)[0].2, "2026-07-28 · nothing scored");
    }

    #[test]
    fn only_ignored_eof_is_named() {
        let mut rep = fixture::report();
        rep.results
            .retain(|r| r.server == "timer" && r.scenario.to_string() == "close");
        assert_eq!(by_server(&rep)[0].2, "ignores stdin EOF");
    }

    #[test]
    fn endpoint_json_has_only_allowed_keys() {
        let b = badge(&fixture::report(), "fixed").unwrap();
        let v: serde_json::Value = serde_json::from_str(&b.endpoint_json()).unwrap();
        let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["color", "label", "message", "schemaVersion"]);
        assert_eq!(v["schemaVersion"], 1);
        assert_eq!(v["label"], "MCP shutdown");
        let all = Ending::DEFAULTS.len();
        assert_eq!(
            v["message"],
            format!("2026-07-28 · 6/6 (2 of {all} endings)")
        );
        assert_eq!(v["color"], "green");
    }

    #[test]
    fn svg_is_well_formed_sized_and_escaped() {
        let mut b = badge(&fixture::hostile(), "t<i>m&r \"x\" 'y'").unwrap();
        assert_eq!(b.file_stem(), "t-i-m-r--x---y-");
        let svg = b.svg();
        assert_eq!(fixture::well_formed(&svg).unwrap(), "svg");
        assert!(svg.contains("aria-label=\"MCP shutdown: orphans on client exit\""));
        b.message = "a<&>".into();
        let svg = b.svg();
        fixture::well_formed(&svg).unwrap();
        assert!(svg.contains(">a&#60;&#38;&#62;</text>"), "{svg}");
        // 12 + 4 characters at 7 px, plus 10 px padding each.
        assert!(
            svg.contains("width=\"132\" height=\"20\" role=\"img\""),
            "{svg}"
        );
    }
}
