//! JUnit XML, for CI test tabs: one `<testsuite>` per server, one `<testcase>` per
//! server × scenario × rule, named `<scenario> <rule-id>` with the server as classname.
//! FAILURE and WARNING become `<failure type="…">` carrying the requirement, what was expected
//! and what happened (h2spec style); SKIPPED becomes `<skipped/>`; a case that could not run
//! and has no checks becomes one `<error>` testcase. No timestamps: the output depends on the
//! report only.

use std::fmt::Write as _;

use super::{actual, axes, budget_value, escape_attr, escape_xml, held_by, ms, rule_references};
use crate::observation::CaseResult;
use crate::report::Report;
use crate::rules::{Catalogue, Check, Status};

#[derive(Default)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.tests += o.tests;
        self.failures += o.failures;
        self.errors += o.errors;
        self.skipped += o.skipped;
    }

    fn attrs(&self) -> String {
        format!(
            "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"",
            self.tests, self.failures, self.errors, self.skipped
        )
    }
}

/// Renders the report as JUnit XML.
pub fn render(report: &Report) -> String {
    let catalogue = Catalogue::bundled();
    let (servers, _) = axes(report);
    let mut total = Counts::default();
    let mut suites = String::new();
    for server in servers {
        let mut counts = Counts::default();
        let mut cases = String::new();
        for r in report.results.iter().filter(|r| r.server == server) {
            if r.checks.is_empty() {
                if let Some(e) = &r.error {
                    counts.tests += 1;
                    counts.errors += 1;
                    let _ = writeln!(
                        cases,
                        "    <testcase name=\"{} (could not run)\" classname=\"{}\">\n      <error type=\"{}\" message=\"{}\">{}</error>\n    </testcase>",
                        escape_attr(&r.scenario),
                        escape_attr(&r.server),
                        escape_attr(&e.kind.to_string()),
                        escape_attr(&e.message),
                        escape_xml(&actual(r)),
                    );
                }
                continue;
            }
            for c in &r.checks {
                counts.tests += 1;
                cases.push_str(&testcase(report, &catalogue, r, c, &mut counts));
            }
        }
        total.add(&counts);
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" {}>",
            escape_attr(server),
            counts.attrs()
        );
        let _ = writeln!(suites, "    <properties>");
        for (name, value) in properties(report) {
            let _ = writeln!(
                suites,
                "      <property name=\"{name}\" value=\"{}\"/>",
                escape_attr(&value)
            );
        }
        let _ = writeln!(suites, "    </properties>");
        suites.push_str(&cases);
        let _ = writeln!(suites, "  </testsuite>");
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" {}>",
        escape_attr(&format!("MCP shutdown conformance (spec {})", report.spec)),
        total.attrs()
    );
    out.push_str(&suites);
    out.push_str("</testsuites>\n");
    out
}

fn properties(report: &Report) -> Vec<(&'static str, String)> {
    let b = &report.budgets;
    vec![
        ("spec", report.spec.clone()),
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
}

fn testcase(
    report: &Report,
    catalogue: &Catalogue,
    r: &CaseResult,
    c: &Check,
    counts: &mut Counts,
) -> String {
    let mut out = format!(
        "    <testcase name=\"{}\" classname=\"{}\"",
        escape_attr(&format!("{} {}", r.scenario, c.id)),
        escape_attr(&r.server)
    );
    if let Some(t) = r.exit_ms {
        let _ = write!(out, " time=\"{:.3}\"", t / 1000.0);
    }
    match c.status {
        Status::Failure | Status::Warning => {
            counts.failures += 1;
            let _ = writeln!(
                out,
                ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>",
                c.status,
                escape_attr(&c.message),
                escape_xml(&failure_body(report, catalogue, r, c))
            );
            if !r.stderr_tail.is_empty() {
                let _ = writeln!(
                    out,
                    "      <system-err>{}</system-err>",
                    escape_xml(&r.stderr_tail)
                );
            }
            out.push_str("    </testcase>\n");
        }
        Status::Skipped => {
            counts.skipped += 1;
            let _ = writeln!(
                out,
                ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                escape_attr(&c.message)
            );
        }
        Status::Info => {
            let _ = writeln!(
                out,
                ">\n      <system-out>{}</system-out>\n    </testcase>",
                escape_xml(&format!(
                    "INFO (not scored in {}): {}",
                    report.spec, c.message
                ))
            );
        }
        Status::Success => out.push_str("/>\n"),
    }
    out
}

/// Requirement, Expected, Actual (then why it could not run, what held it, what was left
/// behind).
fn failure_body(report: &Report, catalogue: &Catalogue, r: &CaseResult, c: &Check) -> String {
    let mut b = String::new();
    let found = rule_references(catalogue, &c.id, &report.spec);
    let quotes = found
        .as_ref()
        .map(|(_, q)| q.as_slice())
        .unwrap_or_default();
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
    for (quote, url) in quotes {
        let _ = writeln!(
            b,
            "Requirement ({}, spec {}): \"{quote}\"",
            c.level, report.spec
        );
        let _ = writeln!(b, "  {url}");
    }
    let expected = match &found {
        Some((rule, _)) => match rule.budget.as_deref() {
            Some(name) => match budget_value(&report.budgets, name) {
                Some(v) => format!("{} (budget {name} = {})", rule.title, ms(v as f64)),
                None => format!("{} (budget {name})", rule.title),
            },
            None => rule.title.clone(),
        },
        None => format!("rule {} holds", c.id),
    };
    let _ = writeln!(b, "Expected: {expected}");
    let _ = writeln!(b, "Actual: {}", actual(r));
    if let Some(note) = &r.note {
        let _ = writeln!(b, "Note: {note}");
    }
    if let Some(held) = held_by(r) {
        let _ = writeln!(b, "Held by: {held}");
        if let Some(d) = &r.diagnostics {
            let _ = writeln!(b, "Hint: {}", d.hint);
        }
    }
    for l in &r.leftovers {
        let _ = writeln!(
            b,
            "Leftover: pid {} `{}` (started by {}) was still running; the harness killed it",
            l.pid,
            l.cmdline,
            l.started_by_cmdline.as_deref().unwrap_or("?")
        );
    }
    b
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use super::*;
    use crate::observation::ErrorKind;

    #[test]
    fn one_suite_per_server_one_case_per_rule() {
        let xml = render(&fixture::report());
        assert_eq!(fixture::well_formed(&xml).unwrap(), "testsuites");
        assert_eq!(xml.matches("<testsuite ").count(), 3);
        // Three checks in each of the five cases.
        assert_eq!(xml.matches("<testcase ").count(), 15);
        assert!(xml.contains(
            "<testcase name=\"close stdio-exit-on-eof\" classname=\"timer\" time=\"2.004\">"
        ));
        assert!(xml.contains(
            "<testcase name=\"close stdio-no-forced-kill\" classname=\"fixed\" time=\"0.012\"/>"
        ));
        assert!(xml.contains("<testsuites name=\"MCP shutdown conformance (spec 2026-07-28)\" tests=\"15\" failures=\"5\" errors=\"0\" skipped=\"1\">"));
        assert!(xml.contains("<failure type=\"FAILURE\" message=\"Not testable: no answer to `initialize` within 10000 ms (handshake-timeout)\">"));
    }

    #[test]
    fn failures_carry_requirement_expected_actual() {
        let xml = render(&fixture::report());
        let start = xml
            .find("<failure type=\"WARNING\" message=\"did not exit within 1000 ms")
            .unwrap();
        let failure = &xml[start..start + xml[start..].find("</failure>").unwrap()];
        assert!(failure
            .contains("Requirement (SHOULD, spec 2026-07-28): &quot;Servers SHOULD exit promptly"));
        assert!(failure.contains(
            "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio"
        ));
        assert!(failure.contains(
            "Expected: Exits promptly when its stdin is closed (budget prompt_ms = 1000 ms)"
        ));
        assert!(failure.contains(
            "Actual: stage sigterm, exited 2004 ms after the trigger, killed by SIGTERM"
        ));
        let orphan = &xml[xml.find("message=\"orphaned").unwrap()..];
        let orphan = &orphan[..orphan.find("</failure>").unwrap()];
        assert!(orphan.contains("Leftover: pid 4242 `node timer.js`"));
        assert!(orphan.contains("Held by: pid 4242; runtime node; 7 threads (node (x7)); open fds: pipe 3, timerfd 1\nHint: Node stays alive"));
        // The case that could not run says why.
        assert!(xml.contains("message=\"Not testable: no answer to `initialize` within 10000 ms (handshake-timeout)\""));
    }

    #[test]
    fn info_and_skipped_and_error_cases() {
        let mut rep = fixture::report_for("2025-06-18", fixture::results("2025-06-18"));
        rep.results[0].checks[1].status = Status::Skipped;
        rep.results.push(CaseResult::failed(
            "ghost",
            "exit",
            ErrorKind::SpawnFailed,
            "no such file `ghost`".into(),
        ));
        let xml = render(&rep);
        fixture::well_formed(&xml).unwrap();
        assert!(xml.contains("<system-out>INFO (not scored in 2025-06-18): did not exit within"));
        assert!(xml.contains("<skipped message="));
        assert!(xml.contains("<testcase name=\"exit (could not run)\" classname=\"ghost\">"));
        assert!(xml.contains("<error type=\"spawn-failed\" message=\"no such file `ghost`\">"));
        assert!(xml.contains(
            "<testsuite name=\"ghost\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">"
        ));
    }

    #[test]
    fn hostile_text_is_escaped() {
        let xml = render(&fixture::hostile());
        fixture::well_formed(&xml).unwrap();
        assert!(!xml.contains("<i>") && !xml.contains("<b>") && !xml.contains("<script>"));
        assert!(!xml.contains('\u{1b}') && !xml.contains('\u{0}'));
        assert!(xml.contains("classname=\"t&lt;i&gt;m&amp;r &quot;x&quot; &apos;y&apos;\""));
        assert!(xml.contains("\\x1b[31m]]&gt;"));
    }

    #[test]
    fn every_quote_of_the_revision_and_the_note() {
        let mut rep = fixture::report();
        rep.results[0].checks[2] = fixture::check(
            "stdio-stdout-only-mcp",
            crate::rules::Outcome::Fail,
            "sent 1 JSON-RPC request(s)",
            fixture::SPEC,
        );
        rep.results[0].note = Some("costs the user 2 s on every shutdown".into());
        let xml = render(&rep);
        let f = &xml[xml
            .find("<failure type=\"FAILURE\" message=\"sent 1")
            .unwrap()..];
        let f = &f[..f.find("</failure>").unwrap()];
        assert_eq!(
            f.matches("Requirement (MUST, spec 2026-07-28): ").count(),
            2,
            "{f}"
        );
        assert!(f.contains("The server MUST NOT write JSON-RPC requests to stdout."));
        assert!(f.contains("Expected: Writes only MCP messages to stdout\n"));
        assert!(f.contains("Note: costs the user 2 s on every shutdown\n"));
    }

    #[test]
    fn deterministic() {
        assert_eq!(render(&fixture::report()), render(&fixture::report()));
    }
}
