//! JUnit XML (written by the `quick-junit` crate), for CI test tabs: one `<testsuite>` per
//! server, one `<testcase>` per server × scenario × rule, named `<scenario> <rule-id>` with the
//! server as classname. FAILURE and WARNING become `<failure type="…">` carrying the
//! requirement, what was expected and what happened (h2spec style); SKIPPED becomes
//! `<skipped/>`; a case that could not run and has no checks becomes one `<error>` testcase.
//! No timestamps: the output depends on the report only.

use std::fmt::Write as _;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::present::{actual, axes, fix_heading, fixes_of, held_by, leftovers, ms, quote_label};
use crate::model::{Check, Fix, JudgedCase, Report, Status};

/// Renders the report as JUnit XML.
pub fn render(report: &Report) -> String {
    let mut out =
        quick_junit::Report::new(format!("MCP shutdown conformance (spec {})", report.spec));
    let (servers, _) = axes(report);
    for server in servers {
        let mut suite = TestSuite::new(server);
        suite.add_properties(properties(report));
        for r in report.results.iter().filter(|r| r.server == server) {
            if r.checks.is_empty() {
                if let Some(e) = &r.error {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                    status
                        .set_type(e.kind.as_str())
                        .set_message(e.message.as_str())
                        .set_description(actual(r));
                    let mut tc = TestCase::new(format!("{} (could not run)", r.scenario), status);
                    tc.set_classname(r.server.as_str());
                    suite.add_test_case(tc);
                }
                continue;
            }
            for c in &r.checks {
                suite.add_test_case(testcase(report, r, c));
            }
        }
        out.add_test_suite(suite);
    }
    out.to_string().expect("JUnit reports serialize")
}

fn properties(report: &Report) -> Vec<Property> {
    let b = &report.budgets;
    [
        ("spec", report.spec.to_string()),
        (
            "tool",
            format!("{} {}", report.tool.name, report.tool.version),
        ),
        (
            "host",
            format!(
                "{} {} ({} cpus)",
                report.host.os, report.host.kernel, report.host.cpus
            ),
        ),
        ("prompt_ms", b.prompt_ms.to_string()),
        ("grace_ms", b.grace_ms.to_string()),
        ("observe_ms", b.observe_ms.to_string()),
        ("handshake_ms", b.handshake_ms.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| Property::new(k, v))
    .collect()
}

fn testcase(report: &Report, r: &JudgedCase, c: &Check) -> TestCase {
    let status = match c.status {
        s if s.is_miss() => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let fixes = fixes_for(report, r, c);
            let message = match fixes.first() {
                Some(f) => format!("{} Fix: {}", c.message, f.text),
                None => c.message.clone(),
            };
            st.set_type(c.status.to_string())
                .set_message(message)
                .set_description(failure_body(report, r, c));
            st
        }
        Status::Skipped => {
            let mut st = TestCaseStatus::skipped();
            st.set_message(c.message.as_str());
            st
        }
        _ => TestCaseStatus::success(),
    };
    let mut tc = TestCase::new(format!("{} {}", r.scenario, c.id), status);
    tc.set_classname(r.server.as_str());
    if let Some(t) = r.exit_ms {
        tc.set_time(Duration::from_secs_f64(t.max(0.0) / 1000.0));
    }
    let mut out = Vec::new();
    if c.status == Status::Info {
        out.push(format!(
            "INFO (not scored in {}): {}",
            report.spec, c.message
        ));
    } else if let (Some(line), false) = (ladder_of(report, r), c.status.is_miss()) {
        out.push(line);
    }
    // What the launcher did is said beside every check of the case, never as the server's.
    if let Some(line) = crate::model::launcher_line(r) {
        out.push(format!("Launcher: {line}"));
    }
    if !out.is_empty() {
        tc.set_system_out(out.join("\n"));
    }
    if c.status.is_miss() && !r.stderr_tail.is_empty() {
        tc.set_system_err(r.stderr_tail.as_str());
    }
    tc
}

/// "Ladder: <client> (source: ...)" for a case run under a profile.
fn ladder_of(report: &Report, r: &JudgedCase) -> Option<String> {
    let crate::model::ScenarioId::Profile(p) = &r.scenario else {
        return None;
    };
    let i = report.profiles.get(p)?;
    Some(format!("Ladder: {} ({})", i.client, super::hosts::from(i)))
}

/// Requirement, Expected, Actual (then why it could not run, what held it, what was left
/// behind), from what the report carries.
fn failure_body(report: &Report, r: &JudgedCase, c: &Check) -> String {
    let mut b = requirement(report, c);
    let rule = report.rules.get(&c.id);
    let budgets = report.budgets_of(r);
    let expected = match rule {
        Some(i) => match i.budget {
            Some(name) => format!(
                "{} (budget {name} = {})",
                i.title,
                ms(budgets.get(name) as f64)
            ),
            None => i.title.clone(),
        },
        None => format!("rule {} holds", c.id),
    };
    let _ = writeln!(b, "Expected: {expected}");
    let _ = writeln!(b, "Actual: {}", actual(r));
    if let Some(line) = ladder_of(report, r) {
        let _ = writeln!(b, "{line}");
    }
    if let Some(note) = &r.note {
        let _ = writeln!(b, "Note: {note}");
    }
    let fixes = fixes_for(report, r, c);
    if let Some(held) = held_by(r) {
        let _ = writeln!(b, "Held by: {held}");
        if let (Some(d), true) = (&r.diagnostics, fixes.is_empty()) {
            let _ = writeln!(b, "Hint: {}", d.hint);
        }
    }
    for line in leftovers(r) {
        let _ = writeln!(b, "Leftover: {line}");
    }
    for f in fixes {
        let _ = writeln!(b, "Fix: {}\n{}", fix_heading(f), f.text);
        if let Some(code) = &f.code {
            let _ = writeln!(b, "As in {}:\n{}", code.source, code.lines);
        }
    }
    b
}

/// The rule's requirement: its quotes, or its id and spec references where the report has
/// no quote.
fn requirement(report: &Report, c: &Check) -> String {
    let mut b = String::new();
    let rule = report.rules.get(&c.id);
    let quotes = rule.map(|i| i.quotes.as_slice()).unwrap_or_default();
    if quotes.is_empty() {
        let _ = writeln!(
            b,
            "Requirement ({}, spec {}): rule {}",
            c.level, report.spec, c.id
        );
        for x in &c.spec_references {
            let _ = writeln!(b, "  {}", x.url);
        }
    }
    let basis = rule.map_or(crate::model::Basis::Spec, |i| i.basis);
    for q in quotes {
        let _ = writeln!(
            b,
            "{}: \"{}\"",
            quote_label(c.level, basis, report.spec),
            q.quote
        );
        let _ = writeln!(b, "  {}", q.url);
    }
    b
}

/// The server's fixes that answer this check's rule.
fn fixes_for<'a>(report: &'a Report, r: &JudgedCase, c: &Check) -> Vec<&'a Fix> {
    fixes_of(report, &r.server)
        .iter()
        .filter(|f| f.rules.contains(&c.id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ErrorKind, JudgedCase, Observation, Outcome, RuleId};
    use crate::test_support as fixture;

    fn doc(xml: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(xml).expect("well-formed JUnit")
    }

    /// The `<testcase>` named `name` of suite `classname`.
    fn case<'a>(
        d: &'a roxmltree::Document<'a>,
        classname: &str,
        name: &str,
    ) -> roxmltree::Node<'a, 'a> {
        d.descendants()
            .find(|n| {
                n.has_tag_name("testcase")
                    && n.attribute("classname") == Some(classname)
                    && n.attribute("name") == Some(name)
            })
            .unwrap_or_else(|| panic!("no testcase {classname} / {name}"))
    }

    #[test]
    fn one_suite_per_server_one_case_per_rule() {
        let xml = render(&fixture::report());
        let d = doc(&xml);
        let root = d.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        assert_eq!(
            root.attribute("name"),
            Some("MCP shutdown conformance (spec 2026-07-28)")
        );
        assert_eq!(root.attribute("tests"), Some("15"));
        assert_eq!(root.attribute("failures"), Some("5"));
        assert_eq!(root.attribute("errors"), Some("0"));
        assert_eq!(root.attribute("skipped"), Some("1"));
        assert_eq!(
            d.descendants()
                .filter(|n| n.has_tag_name("testsuite"))
                .count(),
            3
        );
        let eof = case(&d, "timer", "close stdio-exit-on-eof");
        assert_eq!(eof.attribute("time"), Some("2.004"));
        let fixed = case(&d, "fixed", "close stdio-no-forced-kill");
        assert_eq!(fixed.attribute("time"), Some("0.012"));
        assert!(fixed.children().all(|c| !c.is_element()));
        let mute = case(&d, "mute", "close stdio-stdout-only-mcp");
        let f = mute.children().find(|c| c.has_tag_name("failure")).unwrap();
        assert_eq!(f.attribute("type"), Some("FAILURE"));
        assert_eq!(
            f.attribute("message"),
            Some("Not testable: no answer to `initialize` within 10000 ms (handshake-timeout)")
        );
    }

    #[test]
    fn failures_carry_requirement_expected_actual() {
        let xml = render(&fixture::report());
        let d = doc(&xml);
        let eof = case(&d, "timer", "close stdio-exit-on-eof");
        let f = eof.children().find(|c| c.has_tag_name("failure")).unwrap();
        assert_eq!(f.attribute("type"), Some("WARNING"));
        let body = f.text().unwrap();
        assert!(
            body.contains("Requirement (SHOULD, spec 2026-07-28): \"Servers SHOULD exit promptly")
        );
        assert!(body.contains(
            "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio"
        ));
        assert!(body.contains(
            "Expected: Exits promptly when its stdin is closed (budget prompt_ms = 1000 ms)"
        ));
        assert!(body.contains(
            "Actual: stage sigterm, exited 2004 ms after the trigger, killed by SIGTERM"
        ));
        assert_eq!(
            eof.children()
                .find(|c| c.has_tag_name("system-err"))
                .unwrap()
                .text(),
            Some("server running on stdio\n")
        );
        let orphan = case(&d, "timer", "crash stdio-exit-on-client-death");
        let body = orphan
            .children()
            .find(|c| c.has_tag_name("failure"))
            .unwrap()
            .text()
            .unwrap();
        assert!(body.contains("Leftover: pid 4242 `node timer.js`"));
        assert!(body.contains(
            "Held by: pid 4242; runtime node; 7 threads (node (x7)); open fds: pipe 3, timerfd 1\n"
        ));
        // The fix for the server's SDK (unknown here: its runtime's), with its lines.
        assert!(body.contains("Fix: Exit when stdin ends"), "{body}");
        assert!(body.contains("process.stdin.on(\"end\", () => shutdown(\"stdin-end\"));"));
        let message = orphan
            .children()
            .find(|c| c.has_tag_name("failure"))
            .unwrap();
        assert!(message
            .attribute("message")
            .unwrap()
            .contains(" Fix: The 1.x"));
    }

    /// A rule of practice quotes the spec as context, never as the server's requirement.
    #[test]
    fn a_rule_of_practice_quotes_context_not_a_requirement() {
        let mut rep = fixture::report();
        let r = &mut rep.results[0];
        r.checks[1] = fixture::check(
            crate::model::RuleId::StdioNoForcedKill,
            Outcome::Fail,
            "only SIGKILL ended it",
            fixture::SPEC,
        );
        let xml = render(&rep);
        let d = doc(&xml);
        let f = case(&d, "timer", "close stdio-no-forced-kill")
            .children()
            .find(|c| c.has_tag_name("failure"))
            .unwrap()
            .text()
            .unwrap()
            .to_string();
        assert!(
            f.contains("Context (SHOULD as practice; not a requirement of spec 2026-07-28): \"3. If the server"),
            "{f}"
        );
        assert!(!f.contains("Requirement ("), "{f}");
    }

    #[test]
    fn a_report_without_rule_wording_still_names_the_rule() {
        let mut rep = fixture::report();
        rep.rules.clear();
        let xml = render(&rep);
        let d = doc(&xml);
        let eof = case(&d, "timer", "close stdio-exit-on-eof");
        let body = eof
            .children()
            .find(|c| c.has_tag_name("failure"))
            .unwrap()
            .text()
            .unwrap();
        assert!(
            body.contains("Requirement (SHOULD, spec 2026-07-28): rule stdio-exit-on-eof"),
            "{body}"
        );
        assert!(
            body.contains("Expected: rule stdio-exit-on-eof holds"),
            "{body}"
        );
    }

    #[test]
    fn info_and_skipped_and_error_cases() {
        let mut rep = fixture::report_for("2025-06-18", fixture::results("2025-06-18"));
        rep.results[0].checks[1].status = Status::Skipped;
        rep.results.push(JudgedCase {
            observation: Observation::failed(
                "ghost",
                &"exit".parse().unwrap(),
                ErrorKind::SpawnFailed,
                "no such file `ghost`".into(),
            ),
            budgets: None,
            ladder: None,
            checks: Vec::new(),
            repeat: None,
            not_testable: None,
        });
        let xml = render(&rep);
        let d = doc(&xml);
        let info = case(&d, "timer", "close stdio-exit-on-eof");
        let out = info
            .children()
            .find(|c| c.has_tag_name("system-out"))
            .unwrap();
        assert!(out
            .text()
            .unwrap()
            .starts_with("INFO (not scored in 2025-06-18): did not exit within"));
        let skipped = case(&d, "timer", "close stdio-no-forced-kill");
        assert!(skipped.children().any(|c| c.has_tag_name("skipped")));
        let ghost = case(&d, "ghost", "exit (could not run)");
        let e = ghost.children().find(|c| c.has_tag_name("error")).unwrap();
        assert_eq!(e.attribute("type"), Some("spawn-failed"));
        assert_eq!(e.attribute("message"), Some("no such file `ghost`"));
        let suite = d
            .descendants()
            .find(|n| n.has_tag_name("testsuite") && n.attribute("name") == Some("ghost"))
            .unwrap();
        assert_eq!(
            (suite.attribute("tests"), suite.attribute("errors")),
            (Some("1"), Some("1"))
        );
    }

    #[test]
    fn what_a_launcher_did_is_said_beside_each_check_never_as_a_failure() {
        let r = fixture::left_by_npx(false);
        let server = r.server.to_string();
        let scenario = r.scenario.to_string();
        let ids: Vec<RuleId> = r.checks.iter().map(|c| c.id).collect();
        let xml = render(&fixture::report_for(fixture::SPEC, vec![r]));
        let d = doc(&xml);
        for id in ids {
            let tc = case(&d, &server, &format!("{scenario} {id}"));
            let out = tc
                .descendants()
                .find(|n| n.has_tag_name("system-out"))
                .and_then(|n| n.text())
                .unwrap_or_default();
            assert!(out.contains("Launcher: `npm exec`"), "{id}: {out}");
        }
    }

    #[test]
    fn hostile_text_is_escaped() {
        let xml = render(&fixture::hostile());
        let d = doc(&xml);
        assert!(!xml.contains("<i>") && !xml.contains("<b>") && !xml.contains("<script>"));
        assert!(!xml.contains('\u{1b}') && !xml.contains('\u{0}'));
        assert!(d
            .descendants()
            .any(|n| n.attribute("classname") == Some("t<i>m&r \"x\" 'y'")));
    }

    #[test]
    fn every_quote_of_the_revision_and_the_note() {
        let mut rep = fixture::report();
        rep.results[0].checks[2] = fixture::check(
            RuleId::StdioStdoutOnlyMcp,
            Outcome::Fail,
            "sent 1 JSON-RPC request(s)",
            fixture::SPEC,
        );
        rep.results[0].note = Some("costs the user 2 s on every shutdown".into());
        let xml = render(&rep);
        let d = doc(&xml);
        let c = case(&d, "timer", "close stdio-stdout-only-mcp");
        let f = c
            .children()
            .find(|c| c.has_tag_name("failure"))
            .unwrap()
            .text()
            .unwrap();
        assert_eq!(
            f.matches("Requirement (MUST, spec 2026-07-28): ").count(),
            2,
            "{f}"
        );
        assert!(f.contains("The server MUST NOT write JSON-RPC requests to stdout."));
        assert!(f.contains("Expected: Writes only MCP messages to stdout\n"));
        assert!(f.contains("Note: costs the user 2 s on every shutdown\n"));
    }

    /// What a saved report renders to is what the run rendered: nothing the XML says comes
    /// from outside the JSON (`report render --format junit` of a saved `report.json`).
    #[test]
    fn a_saved_report_renders_the_same_xml() {
        let rep = fixture::report();
        let back: crate::model::Report = serde_json::from_str(&rep.to_json()).unwrap();
        assert_eq!(render(&back), render(&rep));
    }

    /// A case without a verdict that is not the server's is skipped, saying whose it is.
    #[test]
    fn a_usage_error_is_skipped_and_says_whose_it_is() {
        let mut rep = fixture::report();
        let r = rep.results.iter_mut().find(|r| r.server == "mute").unwrap();
        r.error.as_mut().unwrap().kind = ErrorKind::SpawnFailed;
        let b = crate::model::Budgets::default();
        let plan = crate::config::scenarios::build(
            &r.scenario,
            &b,
            &crate::config::profiles::Profiles::bundled(),
        )
        .unwrap();
        r.checks = crate::rules::Catalogue::bundled().judge(&r.observation, &plan, &b, rep.spec);
        rep.resummarize();
        let xml = render(&rep);
        let d = doc(&xml);
        let c = case(&d, "mute", "close stdio-stdout-only-mcp");
        assert!(c.children().any(|c| c.has_tag_name("skipped")));
        assert!(c.children().all(|c| !c.has_tag_name("failure")));
        assert!(xml.contains("a usage error"), "{xml}");
    }
}
