//! The census findings (`report render --format findings`; the book's census page holds them
//! between its `census-findings` markers): a paragraph of what a census report can defend,
//! so that nothing in it is written by hand. It states the run's machine (CPUs, load over the
//! cases) and its `--repeat`, and publishes only:
//! - a verdict that held on every run (a repeated case that is not flaky, or a single run,
//!   which the paragraph then says was run once);
//! - a flaky case, with its distribution (`eof 3/5, sigterm 2/5`);
//! - never a machine-bound case (the machine's load decided it): those are listed as
//!   "re-run", apart from the findings, as every other format shows them.

use std::collections::{BTreeMap, BTreeSet};

use super::present;
use crate::model::{
    Ending, JudgedCase, NotTestableReason, Owner, Report, RuleId, ScenarioId, Stage, Status,
};

/// The paragraph of a census report's findings (Markdown).
pub fn render(report: &Report) -> String {
    let cases = &report.results;
    let servers: BTreeSet<&str> = cases.iter().map(|r| r.server.as_str()).collect();
    let judged: Vec<&JudgedCase> = cases.iter().filter(|r| has_verdict(r)).collect();
    let ran: BTreeSet<&str> = judged.iter().map(|r| r.server.as_str()).collect();
    let mut lines = vec![format!("Census: {}.", machine_line(report)), String::new()];
    lines.push(format!(
        "- **{} of {} servers ran** and were judged.",
        ran.len(),
        servers.len()
    ));
    lines.extend(not_testable(cases));
    lines.extend(under_close(report, &judged));
    lines.extend(leaks(report, &judged));
    lines.extend(rule_counts(report, &judged));
    let bound = judged.iter().filter(|r| r.is_machine_bound()).count();
    if bound > 0 {
        lines.push(format!(
            "- {bound} of {} judged cases were machine-bound and are shown as \"{}\", never as \
             a verdict.",
            judged.len(),
            present::RE_RUN
        ));
    }
    lines.join("\n")
}

/// Ran and was judged: no error that is not the server's, not marked not testable.
fn has_verdict(r: &JudgedCase) -> bool {
    r.owner().is_none_or(Owner::is_scored)
}

/// How many times the case ran.
fn runs(r: &JudgedCase) -> usize {
    r.repeat.as_ref().map_or(1, |rep| rep.runs.len())
}

/// What may be published of one case.
enum Published {
    /// The machine's load decided it.
    ReRun,
    /// Its runs disagreed: their distribution.
    Flaky(String),
    /// Every run ended at this stage; the median exit latency.
    Held(Option<Stage>, Option<f64>),
}

fn published_as(r: &JudgedCase) -> Published {
    if r.is_machine_bound() {
        return Published::ReRun;
    }
    match r.repeat.as_ref().filter(|rep| rep.flaky) {
        Some(rep) => Published::Flaky(present::distribution(rep)),
        None => Published::Held(r.as_the_server_lived_it().stage, latency(r)),
    }
}

/// The median exit latency over the runs, or the one run's, from the session's end (where its
/// launcher left it running: the signal's step plus the server's own time on it).
fn latency(r: &JudgedCase) -> Option<f64> {
    match r.repeat.as_ref().and_then(|rep| rep.latency_ms) {
        Some(l) => Some(l.median),
        None => r.observation.exit_from_end_ms(),
    }
}

fn seconds(ms: Option<f64>) -> String {
    ms.map_or_else(|| "no exit".into(), |ms| format!("{:.1} s", ms / 1000.0))
}

/// The server as people know it: its package, else its name.
fn display<'a>(report: &'a Report, server: &'a str) -> &'a str {
    let package = report.servers.get(server).and_then(|i| i.package.as_ref());
    package.map_or(server, |p| p.identifier.as_str())
}

/// The launcher its package runs through (`npx`, `uvx`), or `direct`.
fn launcher<'a>(report: &'a Report, server: &str) -> &'a str {
    let package = report.servers.get(server).and_then(|i| i.package.as_ref());
    package.map_or("direct", |p| p.launcher.as_str())
}

fn machine_line(report: &Report) -> String {
    let cases = &report.results;
    let loads: Vec<f64> = cases.iter().filter_map(|r| r.load_avg).collect();
    let load = match (
        loads.iter().copied().reduce(f64::min),
        loads.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!("load average {lo:.1}–{hi:.1} during the run"),
        _ => "load not recorded (a report from before machine-bound cases were judged: re-run \
              it)"
        .into(),
    };
    let reps: BTreeSet<usize> = cases.iter().map(runs).collect();
    let (lo, hi) = (reps.first().unwrap_or(&1), reps.last().unwrap_or(&1));
    let rep = match lo == hi {
        true => format!("--repeat {lo}"),
        false => format!("--repeat {lo}–{hi}"),
    };
    let once = match reps.iter().eq([1].iter()) {
        true => " (each case ran once: a verdict is what one run showed)",
        false => "",
    };
    format!(
        "{} cases, spec {}, on Linux {} with {} CPUs, {load}, {rep}{once}",
        cases.len(),
        report.spec,
        report.host.kernel,
        report.host.cpus
    )
}

fn names(items: &[String]) -> String {
    match items.is_empty() {
        true => "none".into(),
        false => items.join(", "),
    }
}

/// The case's status for one rule, or `None` when the rule was not checked.
fn status(r: &JudgedCase, rule: RuleId) -> Option<Status> {
    r.checks.iter().find(|c| c.id == rule).map(|c| c.status)
}

fn missed(r: &JudgedCase, rule: RuleId) -> bool {
    status(r, rule).is_some_and(Status::is_miss)
}

/// The cases of a scenario that carry a verdict of the server's (not machine-bound).
fn published<'a>(judged: &[&'a JudgedCase], scenario: &ScenarioId) -> Vec<&'a JudgedCase> {
    judged
        .iter()
        .copied()
        .filter(|r| &r.scenario == scenario && r.error.is_none() && !r.is_machine_bound())
        .collect()
}

/// Servers none of whose cases could be judged, by the reason (and whose it is).
fn not_testable(cases: &[JudgedCase]) -> Vec<String> {
    let mut why: BTreeMap<&str, BTreeSet<Option<NotTestableReason>>> = BTreeMap::new();
    for r in cases {
        let reason = r.not_testable.as_ref().map(|n| n.reason);
        why.entry(r.server.as_str()).or_default().insert(reason);
    }
    let mut by: BTreeMap<(&str, NotTestableReason), usize> = BTreeMap::new();
    for reasons in why.values() {
        if let [Some(reason)] = reasons.iter().copied().collect::<Vec<_>>()[..] {
            *by.entry((reason.owner().as_str(), reason)).or_default() += 1;
        }
    }
    if by.is_empty() {
        return Vec::new();
    }
    let parts: Vec<String> = by
        .into_iter()
        .map(|((owner, reason), n)| {
            let label = match reason {
                NotTestableReason::NeedsCredentials => "refused placeholder credentials",
                NotTestableReason::LaunchNotInPackage => {
                    "the listing's launch command is not in the package"
                }
            };
            format!("{n}: {label} (owner: {owner})")
        })
        .collect();
    vec![format!("- **Not testable**: {}.", parts.join("; "))]
}

/// How the servers ended under `close`: on end of input, on SIGTERM, otherwise; the flaky
/// and the machine-bound apart.
fn under_close(report: &Report, judged: &[&JudgedCase]) -> Vec<String> {
    let close = ScenarioId::from(Ending::Close);
    let cases: Vec<&JudgedCase> = judged
        .iter()
        .copied()
        .filter(|r| r.scenario == close && r.error.is_none())
        .collect();
    if cases.is_empty() {
        return Vec::new();
    }
    let name = |r: &JudgedCase| format!("`{}`", display(report, &r.server));
    let (mut eof, mut sigterm, mut other, mut flaky, mut rerun, mut slow) =
        (0, vec![], vec![], vec![], vec![], vec![]);
    for r in &cases {
        match published_as(r) {
            Published::ReRun => rerun.push(name(r)),
            Published::Flaky(d) => flaky.push(format!("{} (FLAKY: {d})", name(r))),
            Published::Held(Some(Stage::Eof), ms) => {
                eof += 1;
                if status(r, RuleId::StdioExitOnEof) == Some(Status::Warning) {
                    slow.push(format!("{} ({})", name(r), seconds(ms)));
                }
            }
            Published::Held(Some(Stage::Sigterm), ms) => {
                sigterm.push(format!("{} ({})", name(r), seconds(ms)));
            }
            Published::Held(stage, ms) => {
                let stage = stage.map_or_else(|| "?".into(), |s| s.to_string());
                other.push(format!("{} ({stage}, {})", name(r), seconds(ms)));
            }
        }
    }
    let mut lines = vec![format!(
        "- **Under `close`**, {eof} of {} exit on end of input alone on every run ({} of them \
         later than the prompt budget: {}); {} need SIGTERM after the grace period on every \
         run: {}.",
        cases.len() - rerun.len(),
        slow.len(),
        names(&slow),
        sigterm.len(),
        names(&sigterm)
    )];
    lines.extend(apart(&other, &flaky, &rerun));
    lines
}

/// The `close` cases that ended otherwise, whose runs disagreed, or that are not published.
fn apart(other: &[String], flaky: &[String], rerun: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    if !other.is_empty() {
        lines.push(format!(
            "- Under `close`, ended otherwise on every run: {}.",
            names(other)
        ));
    }
    if !flaky.is_empty() {
        lines.push(format!(
            "- Under `close`, the runs disagreed: {}.",
            names(flaky)
        ));
    }
    if !rerun.is_empty() {
        lines.push(format!(
            "- Not published (machine-bound: the machine's load decided them; {} on a quieter \
             machine): {}.",
            present::RE_RUN,
            names(rerun)
        ));
    }
    lines
}

/// The endings that signal only the launcher's pid, and how the paragraph names them.
const LEAK_SCENARIOS: [(&str, &str); 4] = [
    ("sigterm", "SIGTERM to the launcher's pid"),
    ("close:ts-legacy", "the `ts-legacy` ladder"),
    ("close:zed-legacy", "the `zed-legacy` ladder"),
    (
        "close:claude-code-legacy",
        "the `claude-code-legacy` ladder (SIGKILL to the direct child)",
    ),
];

/// `39 npx, 1 uvx`: the cases by their servers' launchers.
fn by_launcher(report: &Report, cases: &[&JudgedCase]) -> String {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for r in cases {
        *by.entry(launcher(report, &r.server)).or_default() += 1;
    }
    let parts: Vec<String> = by.into_iter().map(|(k, n)| format!("{n} {k}")).collect();
    parts.join(", ")
}

/// Under ladders that signal only the launcher's pid: servers that left their own
/// processes running; apart, launchers that did not pass the signal on (never the server's
/// doing: the server is judged on the signal the harness then sends it itself); and apart
/// again, in a report from before the process behind a launcher was recorded, what was left
/// running without saying whose it is.
fn leaks(report: &Report, judged: &[&JudgedCase]) -> Vec<String> {
    let (mut own, mut launchers, mut unknown) = (vec![], vec![], vec![]);
    for (scenario, what) in LEAK_SCENARIOS {
        let scenario: ScenarioId = scenario.parse().expect("a bundled scenario");
        let cases = published(judged, &scenario);
        if cases.is_empty() {
            continue;
        }
        let of = |part: &[&JudgedCase], by: bool| match by {
            true => format!(
                "under {what} {} of {} ({})",
                part.len(),
                cases.len(),
                by_launcher(report, part)
            ),
            false => format!("under {what} {} of {}", part.len(), cases.len()),
        };
        let leaked = |r: &&&JudgedCase| missed(r, RuleId::ProcessNoLeakedDescendants);
        let missed: Vec<&JudgedCase> = cases.iter().filter(leaked).copied().collect();
        let behind: Vec<&JudgedCase> = cases
            .iter()
            .copied()
            .filter(|r| r.launcher_left_it())
            .collect();
        // Not recorded which process was the server: what was left may be either's.
        let is_blind = |r: &JudgedCase| r.server_process.is_none() && r.launcher_left.is_none();
        let blind: Vec<&JudgedCase> = missed.iter().copied().filter(|r| is_blind(r)).collect();
        // The server's own: not the server itself left behind by a launcher the harness did
        // not then signal past.
        let mine = missed
            .iter()
            .filter(|r| !is_blind(r) && (r.launcher_left.is_some() || !r.launcher_left_it()))
            .count();
        if blind.len() < missed.len() || missed.is_empty() {
            own.push(format!("under {what} {mine} of {}", cases.len()));
        }
        if !behind.is_empty() {
            launchers.push(of(&behind, true));
        }
        if !blind.is_empty() {
            unknown.push(of(&blind, true));
        }
    }
    leak_lines(&own, &launchers, &unknown)
}

fn leak_lines(own: &[String], launchers: &[String], unknown: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    if !own.is_empty() {
        lines.push(format!(
            "- **Processes the server left running** (its own, after its own end): {}.",
            own.join("; ")
        ));
    }
    if !launchers.is_empty() {
        lines.push(format!(
            "- **Launchers that did not pass the signal on** (the launcher's doing, never scored \
             against the server; the server is judged on the signal sent to it itself, and \
             where a report did not send it, not judged on that ending's exit): {}.",
            launchers.join("; ")
        ));
    }
    if !unknown.is_empty() {
        lines.push(format!(
            "- **Processes left running** (a launcher ended, the server behind it not, or the \
             server's own: this report did not record which process was the server): {}.",
            unknown.join("; ")
        ));
    }
    lines
}

/// The endings one rule judges alone, and what a server that missed it did not do.
const RULE_LINES: [(Ending, RuleId, &str); 2] = [
    (
        Ending::Sigint,
        RuleId::ProcessExitOnSigint,
        "did not exit promptly on SIGINT to their group",
    ),
    (
        Ending::CtrlC,
        RuleId::ProcessExitOnCtrlC,
        "did not exit promptly after Ctrl-C in a terminal",
    ),
];

fn rule_counts(report: &Report, judged: &[&JudgedCase]) -> Vec<String> {
    let mut lines = Vec::new();
    for (ending, rule, what) in RULE_LINES {
        let cases = published(judged, &ending.into());
        let bad = cases.iter().filter(|r| missed(r, rule)).count();
        if !cases.is_empty() {
            lines.push(format!(
                "- **`{}`**: {bad} of {} servers {what}.",
                ending.as_str(),
                cases.len()
            ));
        }
    }
    let stdout: BTreeSet<&str> = judged
        .iter()
        .filter(|r| r.error.is_none() && !r.is_machine_bound())
        .filter(|r| status(r, RuleId::StdioStdoutOnlyMcp) == Some(Status::Failure))
        .map(|r| display(report, &r.server))
        .collect();
    let quoted: Vec<String> = stdout.iter().map(|n| format!("`{n}`")).collect();
    lines.push(format!(
        "- **Stdout** (MUST: only MCP messages): {} server(s) wrote something else: {}.",
        stdout.len(),
        names(&quoted)
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{machine_bound, report_of, result};

    /// A stored census report reads as `report render --format findings` reads it.
    #[test]
    fn a_stored_census_report() {
        let path = "docs/book/data/census-close-repeat3-2026-12-02.json";
        let text = std::fs::read_to_string(path).unwrap();
        let mut report: Report = serde_json::from_str(&text).unwrap();
        report.attribute_to_launchers();
        insta::assert_snapshot!(render(&report));
    }

    #[test]
    fn a_machine_bound_case_is_re_run_never_a_verdict() {
        let report = report_of(vec![
            result("quick", "close", Stage::Eof, 30.0),
            result("slow", "close", Stage::Sigterm, 2_104.0),
            machine_bound("busy"),
        ]);
        let text = render(&report);
        assert!(
            text.contains(
                "- **Under `close`**, 1 of 2 exit on end of input alone on every run (0 of them \
                 later than the prompt budget: none); 1 need SIGTERM after the grace period on \
                 every run: `slow` (2.1 s)."
            ),
            "{text}"
        );
        assert!(text.contains("quieter machine): `busy`.\n"), "{text}");
        assert!(text.ends_with(
            "- 1 of 3 judged cases were machine-bound and are shown as \"re-run\", never as a \
             verdict."
        ));
    }
}
